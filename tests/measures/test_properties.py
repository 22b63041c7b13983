"""Property tests: ``evaluate`` against the textbook reference on generated data.

Hypothesis builds recommendation and truth frames with the awkward cases the
metrics must get right: tied scores (including -0.0 against 0.0), graded
relevance (integer or float) with 0 and negative grades, users only in the
recommendations or only in the truth, integer and string ids (and integer ids
of different widths), several models and folds, empty frames, rank gaps and
repeated items. Every convention of ``evaluate`` is drawn too.
``tests/textbook.py`` is written from METRICS.md alone, so agreement means the
package matches the spec.

Run more examples with ``PRM_HYPOTHESIS_PROFILE=thorough pytest tests/measures/test_properties.py``.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polars_rankmetrics as prm
from tests import textbook

# hypothesis-generated cases: the properties suite (python -m pytest -m properties)
pytestmark = pytest.mark.properties

# Profiles for these tests only (nothing global is loaded): "fast" keeps the
# default run of this file well under a minute, "thorough" is for a nightly run.
settings.register_profile(
    "prm-properties-fast",
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "prm-properties-thorough",
    max_examples=1500,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
PROFILE = settings.get_profile("prm-properties-" + os.environ.get("PRM_HYPOTHESIS_PROFILE", "fast"))

TOLERANCE = 1e-9
ALL_METRICS = [
    "precision@",
    "recall@",
    "recall",
    "f1@",
    "hit_rate@",
    "hits@",
    "hit_rate",
    "map@",
    "ap@",
    "map",
    "mrr@",
    "rr",
    "mrr",
    "ndcg@",
    "ndcg",
    "dcg@",
    "dcg",
    "r_precision",
    "mean_rank",
    "pooled_recall@",
]


@dataclass
class Case:
    """One generated evaluation: two frames, the call's keyword arguments."""

    recs: pl.DataFrame
    truth: pl.DataFrame
    metrics: list[str]
    kwargs: dict[str, Any] = field(default_factory=dict)

    def expected(self, *, per_user: bool) -> list[dict[str, Any]]:
        kwargs = dict(self.kwargs)
        kwargs["by"] = by_columns(self)
        return textbook.evaluate(
            self.recs.to_dicts(),
            self.truth.to_dicts(),
            self.truth.columns,
            self.metrics,
            per_user=per_user,
            **kwargs,
        )

    def __repr__(self) -> str:
        # a failing example prints as code that rebuilds it
        return (
            f"Case(\n    recs={frame_code(self.recs)},\n    truth={frame_code(self.truth)},\n"
            f"    metrics={self.metrics!r},\n    kwargs={self.kwargs!r},\n)"
        )

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # used by hypothesis
        printer.text(repr(self))


def frame_code(frame: pl.DataFrame) -> str:
    schema = ", ".join(f"{name!r}: pl.{dtype!r}" for name, dtype in frame.schema.items())
    return f"pl.DataFrame({frame.to_dict(as_series=False)!r}, schema={{{schema}}})"


SCORES = st.sampled_from([-1.0, -0.0, 0.0, 0.5, 1.0, 1.0, 2.0, 2.5, 3.0])
GRADES = st.sampled_from([-1, 0, 1, 1, 2, 3])
FLOAT_GRADES = st.sampled_from([-1.0, 0.0, 0.5, 1.0, 1.0, 2.0, 2.5])


@st.composite
def cases(draw: st.DrawFn) -> Case:
    id_kind = draw(st.sampled_from(["int", "str"]))
    by = draw(st.sampled_from([(), ("model",), ("fold",), ("fold", "model")]))
    names = draw(
        st.sampled_from(
            [
                {"user": "user", "item": "item", "rank": "rank", "score": "score", "rel": "rel"},
                {"user": "uid", "item": "iid", "rank": "pos", "score": "s", "rel": "grade"},
            ]
        )
    )
    use_score = draw(st.booleans())
    integer_scores = use_score and draw(st.booleans())
    graded = draw(st.booleans())
    float_grades = graded and draw(st.booleans())
    duplicates = draw(st.sampled_from(["error", "error", "first"]))
    gaps = not use_score and draw(st.booleans())

    def ident(n: int) -> Any:
        return n if id_kind == "int" else f"i{n:02d}" if n % 3 else f"x{n}"

    # one seeded Random for the shuffles: drawing permutations choice by choice
    # uses up hypothesis' data budget, and later draws then come out empty
    shuffle = draw(st.randoms(use_true_random=False)).shuffle
    folds = [0, 1] if "fold" in by else [None]
    models = ["a", "b"] if "model" in by else [None]
    # hypothesis leans to small draws; bias towards non-empty data so most
    # examples evaluate several users, while empty frames still come up
    some = st.integers(0, 5) | st.integers(2, 5)
    users = range(draw(some))
    truth_users = range(draw(some))

    # truth: one judged set per (fold, user); users may be in only one of the frames
    truth_rows: list[dict[str, Any]] = []
    for fold in folds:
        for u in truth_users:
            present = draw(st.integers(0, 4)) > 0
            judged = draw(
                st.dictionaries(
                    st.integers(0, 9),
                    FLOAT_GRADES if float_grades else GRADES,
                    min_size=int(present),
                    max_size=5 * present,
                )
            )
            for i, grade in judged.items():
                row = {names["user"]: ident(u), names["item"]: ident(i)}
                if graded:
                    row[names["rel"]] = grade
                if fold is not None:
                    row["fold"] = fold
                truth_rows.append(row)
    shuffle(truth_rows)

    # recommendations: one list per (fold, model, user), maybe empty (user absent)
    recs_rows: list[dict[str, Any]] = []
    for fold in folds:
        for model in models:
            for u in users:
                present = draw(st.integers(0, 3)) > 0  # else this user has no list here
                items = draw(
                    st.lists(
                        st.integers(0, 7),
                        min_size=int(present),
                        max_size=6 * present,
                        unique=duplicates == "error",
                    )
                )
                if use_score:
                    values: list[Any] = [draw(SCORES) for _ in items]
                    if integer_scores:
                        values = [int(value) for value in values]
                else:
                    # distinct positions: 1..n, or with gaps (position 2 empty, ...)
                    values = list(range(1, 16) if gaps else range(1, len(items) + 1))
                    shuffle(values)
                    values = values[: len(items)]
                for i, value in zip(items, values, strict=True):
                    row = {names["user"]: ident(u), names["item"]: ident(i)}
                    row[names["score"] if use_score else names["rank"]] = value
                    if fold is not None:
                        row["fold"] = fold
                    if model is not None:
                        row["model"] = model
                    recs_rows.append(row)
    shuffle(recs_rows)

    id_dtype = pl.Int64 if id_kind == "int" else pl.String
    # integer ids of another width in the truth must still match
    truth_id_dtype = draw(st.sampled_from([pl.Int64, pl.Int32])) if id_kind == "int" else pl.String
    recs_schema: dict[str, Any] = {names["user"]: id_dtype, names["item"]: id_dtype}
    if use_score:
        recs_schema[names["score"]] = pl.Int64 if integer_scores else pl.Float64
    else:
        recs_schema[names["rank"]] = pl.Int64
    if "fold" in by:
        recs_schema["fold"] = pl.Int64
    if "model" in by:
        recs_schema["model"] = pl.String
    truth_schema: dict[str, Any] = {names["user"]: truth_id_dtype, names["item"]: truth_id_dtype}
    if graded:
        truth_schema[names["rel"]] = pl.Float64 if float_grades else pl.Int64
    if "fold" in by:
        truth_schema["fold"] = pl.Int64
    recs = pl.DataFrame(recs_rows, schema=recs_schema)
    truth = pl.DataFrame(truth_rows, schema=truth_schema)

    metrics = draw(
        st.lists(
            st.tuples(st.sampled_from(ALL_METRICS), st.sampled_from([1, 2, 3, 5, 10])).map(
                lambda pair: pair[0] + str(pair[1]) if pair[0].endswith("@") else pair[0]
            ),
            min_size=1,
            max_size=8,
            unique=True,
        )
    )
    conventions = draw(st.sampled_from(["default", "default", "trec"]))
    # the trec preset fixes the AP denominator, the gain and the tie rule
    trec = conventions == "trec"
    kwargs: dict[str, Any] = {
        "user": names["user"],
        "item": names["item"],
        "denominator": draw(
            st.sampled_from(["relevant"] if trec else ["min_k", "relevant", "hits"])
        ),
        "gain": draw(st.sampled_from(["linear"] if trec else ["linear", "exponential"])),
        "ties": draw(
            st.sampled_from(["item_desc"] if trec else ["item_desc", "item_asc", "input"])
        ),
        "relevance_level": draw(st.sampled_from([None, None, 1, 2, 1.5])),
        "users_without_recs": draw(st.sampled_from([None, "zero", "exclude"])),
        "users_without_truth": draw(st.sampled_from(["exclude", "judged", "zero"])),
        "duplicates": duplicates,
        "conventions": conventions,
    }
    if use_score:
        kwargs["score"] = names["score"]
    else:
        kwargs["rank"] = names["rank"]
    if graded:
        kwargs["relevance"] = names["rel"]
    if by:
        kwargs["by"] = list(by) if len(by) > 1 or draw(st.booleans()) else by[0]
    return Case(recs, truth, metrics, kwargs)


def assert_rows_match(got: pl.DataFrame, expected: list[dict[str, Any]], labels: list[str]) -> None:
    """Same rows in the same order, keys equal, metric values within TOLERANCE (null = null)."""
    for label in labels:
        assert got.schema[label] == pl.Float64, (label, got.schema)
    rows = got.to_dicts()
    keys = [name for name in got.columns if name not in labels]
    assert [[row[name] for name in keys] for row in rows] == [
        [row[name] for name in keys] for row in expected
    ], f"\ngot keys {rows}\nexpected {expected}"
    for got_row, expected_row in zip(rows, expected, strict=True):
        for label in labels:
            g, e = got_row[label], expected_row[label]
            if e is None:
                assert g is None, f"{label}: got {g}, expected null in row {expected_row}"
            else:
                assert g is not None, f"{label}: got null, expected {e} in row {expected_row}"
                assert math.isclose(g, e, rel_tol=0, abs_tol=TOLERANCE), (
                    f"{label}: got {g}, expected {e}\nin row {expected_row}\ngot row {got_row}"
                )


def by_columns(case: Case) -> list[str]:
    by = case.kwargs.get("by") or []
    return [by] if isinstance(by, str) else list(by)


# Edge cases pinned so that every run tries them: no user at all, and a group whose
# only users are counted by a policy although nothing is relevant for them
NO_RECS = pl.DataFrame(schema={"user": pl.Int64, "item": pl.Int64, "rank": pl.Int64})
NO_TRUTH = pl.DataFrame(schema={"user": pl.Int64, "item": pl.Int64})
EVERY_KIND = ["pooled_recall@5", "map@5", "ndcg", "mean_rank", "precision@2"]
NOBODY = Case(NO_RECS, NO_TRUTH, EVERY_KIND)
NOTHING_RELEVANT = Case(
    pl.DataFrame({"user": [1, 1], "item": [1, 2], "rank": [1, 2]}),
    NO_TRUTH,
    EVERY_KIND,
    {"users_without_truth": "zero"},
)


@PROFILE
@given(cases())
@example(NOBODY)
@example(NOTHING_RELEVANT)
def test_per_user_scores_match_the_textbook(case: Case) -> None:
    got = prm.evaluate(case.recs, case.truth, case.metrics, per_user=True, **case.kwargs)
    assert got.columns == [*by_columns(case), case.kwargs.get("user", "user"), *case.metrics]
    assert_rows_match(got, case.expected(per_user=True), case.metrics)


@PROFILE
@given(cases())
@example(NOBODY)
@example(NOTHING_RELEVANT)
def test_means_match_the_textbook(case: Case) -> None:
    got = prm.evaluate(case.recs, case.truth, case.metrics, **case.kwargs)
    assert got.columns == [*by_columns(case), *case.metrics]
    assert_rows_match(got, case.expected(per_user=False), case.metrics)


@PROFILE
@given(cases())
def test_eager_and_lazy_agree_and_inputs_are_untouched(case: Case) -> None:
    recs, truth = case.recs.clone(), case.truth.clone()
    for per_user in (False, True):
        eager = prm.evaluate(case.recs, case.truth, case.metrics, per_user=per_user, **case.kwargs)
        lazy = prm.evaluate(
            case.recs.lazy(), case.truth.lazy(), case.metrics, per_user=per_user, **case.kwargs
        )
        assert isinstance(lazy, pl.LazyFrame)
        assert_frame_equal(lazy.collect(), eager)
        # a lazy truth with eager recs gives the eager answer
        mixed = prm.evaluate(
            case.recs, case.truth.lazy(), case.metrics, per_user=per_user, **case.kwargs
        )
        assert_frame_equal(mixed, eager)
    assert_frame_equal(case.recs, recs)
    assert_frame_equal(case.truth, truth)


@st.composite
def scored_lists(draw: st.DrawFn) -> tuple[pl.DataFrame, str, int | None]:
    """Scored recommendations with many ties, and a tie rule and cutoff."""
    id_kind = draw(st.sampled_from(["int", "str"]))
    rows = []
    for u in range(draw(st.integers(0, 4))):
        for i in draw(st.lists(st.integers(0, 12), max_size=8, unique=True)):
            rows.append(
                {"user": u, "item": i if id_kind == "int" else f"d{i}", "score": draw(SCORES)}
            )
    rows = draw(st.permutations(rows))
    schema = {
        "user": pl.Int64,
        "item": pl.Int64 if id_kind == "int" else pl.String,
        "score": pl.Float64,
    }
    ties = draw(st.sampled_from(["item_desc", "item_asc", "input"]))
    k = draw(st.sampled_from([None, 1, 2, 4]))
    return pl.DataFrame(rows, schema=schema), ties, k


@PROFILE
@given(scored_lists())
def test_positions_follow_the_tie_rules(data: tuple[pl.DataFrame, str, int | None]) -> None:
    recs, ties, k = data
    got = prm.positions(recs, k, score="score", ties=ties)
    expected: dict[tuple[Any, Any], int] = {}
    lists: dict[Any, list[tuple[Any, float]]] = {}
    for row in recs.to_dicts():
        lists.setdefault(row["user"], []).append((row["item"], row["score"]))
    for u, rows in lists.items():
        for i, position in textbook.positions_from_scores(rows, ties, "error").items():
            if k is None or position <= k:
                expected[(u, i)] = position
    assert {(row["user"], row["item"]): row["rank"] for row in got.to_dicts()} == expected
    # the input row order is kept
    kept = [row for row in recs.to_dicts() if (row["user"], row["item"]) in expected]
    assert got.drop("rank").to_dicts() == kept


def test_textbook_ties_by_hand() -> None:
    # guards the reference itself: the three rules on one list with a three-way tie
    rows = [("b", 1.0), ("c", 2.0), ("a", 1.0), ("d", 1), ("e", -0.0), ("f", 0.0)]
    assert textbook.rank_items(rows, "item_desc") == ["c", "d", "b", "a", "f", "e"]
    assert textbook.rank_items(rows, "item_asc") == ["c", "a", "b", "d", "e", "f"]
    assert textbook.rank_items(rows, "input") == ["c", "b", "a", "d", "e", "f"]


def test_textbook_user_policies_by_hand() -> None:
    # guards the reference: u1 has recs and truth, u2 only truth, u3 only recs,
    # u4 recs and a non-relevant judgement, u5 only a non-relevant judgement
    recs = [
        {"user": "u1", "item": "a", "rank": 1},
        {"user": "u1", "item": "b", "rank": 2},
        {"user": "u3", "item": "a", "rank": 1},
        {"user": "u4", "item": "a", "rank": 1},
    ]
    truth = [
        {"user": "u1", "item": "b", "rel": 1},
        {"user": "u2", "item": "a", "rel": 2},
        {"user": "u4", "item": "a", "rel": 0},
        {"user": "u5", "item": "a", "rel": -1},
    ]
    columns = ["user", "item", "rel"]

    def users(**kwargs: Any) -> dict[str, float]:
        rows = textbook.evaluate(
            recs, truth, columns, ["mrr"], relevance="rel", per_user=True, **kwargs
        )
        return {row["user"]: row["mrr"] for row in rows}

    assert users() == {"u1": 0.5, "u2": 0.0}
    assert users(users_without_recs="exclude") == {"u1": 0.5}
    assert users(users_without_truth="judged") == {"u1": 0.5, "u2": 0.0, "u4": 0.0, "u5": 0.0}
    assert users(users_without_truth="zero") == {
        "u1": 0.5,
        "u2": 0.0,
        "u3": 0.0,
        "u4": 0.0,
        "u5": 0.0,
    }
    assert users(users_without_truth="zero", users_without_recs="exclude") == {
        "u1": 0.5,
        "u3": 0.0,
        "u4": 0.0,
    }
    assert users(conventions="trec") == {"u1": 0.5, "u4": 0.0}
    assert users(conventions="trec", users_without_recs="zero") == {
        "u1": 0.5,
        "u2": 0.0,
        "u4": 0.0,
        "u5": 0.0,
    }
    recs, truth, columns = recs[:3], truth[:2], columns[:2]
    # a model that skipped u1 is charged 0 for it
    by_model = [{**row, "model": "m1"} for row in recs] + [
        {"user": "u2", "item": "a", "rank": 1, "model": "m2"}
    ]
    means = textbook.evaluate(by_model, truth, columns, ["mrr"], by=["model"])
    assert means == [{"model": "m1", "mrr": 0.25}, {"model": "m2", "mrr": 0.5}]
    # a pooled recall over no relevant item at all is undefined, not 0/0
    assert textbook.evaluate([], [], columns, ["pooled_recall@2"]) == [{"pooled_recall@2": None}]
