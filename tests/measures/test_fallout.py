"""fallout@k: worked examples and a slow textbook under generated inputs.

The textbook follows the definition (torchmetrics' ``RetrievalFallOut`` with
``empty_target_action="skip"``, on the judged items): per user, the judged
non-relevant items (grade >= 0 and not relevant) among the top k, over all of
the user's judged non-relevant items; users without one, or without a
relevant item, are left out; a user without recommendations scores 0.
"""

from __future__ import annotations

import math
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polars_rankmetrics as prm


def test_worked_example() -> None:
    # user 1: judged non-relevant b, x (y at -1 is unjudged); the top 2 holds b -> 1/2
    # user 2: judged non-relevant e, found at 2 -> 1/1 at k >= 2
    # user 3: judged non-relevant only, no relevant item -> left out
    # user 4: relevant and non-relevant judged, nothing recommended -> 0
    recs = pl.DataFrame(
        {"user": [1, 1, 1, 1, 2, 2], "item": list("abcdae"), "rank": [1, 2, 3, 4, 1, 2]}
    )
    truth = pl.DataFrame(
        {
            "user": [1, 1, 1, 1, 2, 2, 3, 4, 4],
            "item": ["a", "b", "x", "y", "e", "z", "q", "a", "b"],
            "rel": [1, 0, 0, -1, 0, 1, 0, 2, 0],
        }
    )
    per_user = prm.evaluate(
        recs, truth, ["fallout@1", "fallout@2", "fallout"], relevance="rel", per_user=True
    )
    assert per_user.rows() == [(1, 0.0, 0.5, 0.5), (2, 0.0, 1.0, 1.0), (4, 0.0, 0.0, 0.0)]
    means = prm.evaluate(recs, truth, ["fallout@2"], relevance="rel")
    assert means.item() == pytest.approx(0.5)
    # a grade below the relevance level is judged non-relevant: user 4's a (2) stays
    # relevant at level 2, user 1's a (1) becomes non-relevant, and user 1 has no
    # relevant item left: left out
    level = prm.evaluate(
        recs, truth, ["fallout@2"], relevance="rel", relevance_level=2, per_user=True
    )
    assert level.rows() == [(4, 0.0)]


def test_without_grades_nothing_is_judged_non_relevant() -> None:
    recs = pl.DataFrame({"user": [1, 1], "item": ["a", "b"], "rank": [1, 2]})
    truth = pl.DataFrame({"user": [1], "item": ["a"]})
    assert prm.evaluate(recs, truth, ["fallout@2"]).item() is None


def _textbook(
    recs: list[tuple[int, str, int]],
    truth: list[tuple[int, str, int]],
    k: int | None,
    level: float | None,
) -> dict[int, float]:
    grades: dict[int, dict[str, int]] = {}
    for user, item, grade in truth:
        grades.setdefault(user, {})[item] = grade

    def relevant(grade: int) -> bool:
        return grade > 0 and (level is None or grade >= level)

    lists: dict[int, list[str]] = {}
    for user, item, _rank in sorted(recs, key=lambda row: (row[0], row[2])):
        lists.setdefault(user, []).append(item)
    values = {}
    for user, judged in grades.items():
        nonrelevant = {item for item, grade in judged.items() if grade >= 0 and not relevant(grade)}
        if not nonrelevant or not any(relevant(grade) for grade in judged.values()):
            continue
        top = lists.get(user, [])[: k if k is not None else None]
        values[user] = sum(item in nonrelevant for item in top) / len(nonrelevant)
    return values


@st.composite
def cases(draw: st.DrawFn) -> tuple[Any, ...]:
    items = [f"i{n}" for n in range(8)]
    recs, truth = [], []
    for user in range(draw(st.integers(1, 6))):
        shown = draw(st.lists(st.sampled_from(items), unique=True, max_size=6))
        recs += [(user, item, rank) for rank, item in enumerate(shown, start=1)]
        judged = draw(st.lists(st.sampled_from(items), unique=True, max_size=6))
        truth += [(user, item, draw(st.integers(-1, 3))) for item in judged]
    k = draw(st.one_of(st.none(), st.integers(1, 7)))
    level = draw(st.sampled_from([None, 2.0]))
    return recs, truth, k, level


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_equals_the_textbook(case: tuple[Any, ...]) -> None:
    recs_rows, truth_rows, k, level = case
    if not truth_rows:
        return
    recs = pl.DataFrame(
        recs_rows, schema={"user": pl.Int64, "item": pl.String, "rank": pl.Int64}, orient="row"
    )
    truth = pl.DataFrame(
        truth_rows, schema={"user": pl.Int64, "item": pl.String, "rel": pl.Int64}, orient="row"
    )
    label = "fallout" if k is None else f"fallout@{k}"
    got = prm.evaluate(recs, truth, [label], relevance="rel", relevance_level=level, per_user=True)
    values = {user: value for user, value in got.rows() if value is not None}
    expected = _textbook(recs_rows, truth_rows, k, level)
    assert values.keys() == expected.keys()
    for user, value in expected.items():
        assert math.isclose(values[user], value, rel_tol=0, abs_tol=1e-15), user
