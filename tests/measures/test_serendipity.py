"""serendipity@k (``_measures/serendipity.py``) against RecTools' own test and a textbook.

RecTools' ``tests/metrics/test_serendipity.py`` (and its docstring example, the
same data; github.com/MobileTeleSystems/RecTools) is transcribed as facts:
per-user values at k = 1 and 2, and their mean over the users with
recommendations. Hypothesis-generated cases are checked against the plain
textbook of ``tests/textbook_models.py``.
"""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polars_rankmetrics as prm
from tests import textbook_models as tm

# RecTools' fixtures: recommendations (user, item, rank), test interactions (the truth),
# train interactions (the history) and the catalog i1..i4
RECS = pl.DataFrame(
    [("u1", "i1", 1), ("u1", "i2", 2), ("u2", "i2", 1), ("u2", "i3", 2), ("u3", "i3", 1),
     ("u4", "i2", 1), ("u4", "i3", 2)],
    schema={"user": pl.String, "item": pl.String, "rank": pl.Int64}, orient="row",
)  # fmt: skip
TRUTH = pl.DataFrame(
    [("u1", "i1"), ("u1", "i2"), ("u2", "i2"), ("u2", "i3"), ("u3", "i2"), ("u4", "i2")],
    schema={"user": pl.String, "item": pl.String}, orient="row",
)  # fmt: skip
TRAIN = pl.DataFrame(
    [("u1", "i1"), ("u1", "i2"), ("u2", "i1"), ("u2", "i2"), ("u3", "i1")],
    schema={"user": pl.String, "item": pl.String}, orient="row",
)  # fmt: skip
CATALOG = pl.DataFrame({"item": ["i1", "i2", "i3", "i4"]})
# RecTools averages over the users with recommendations
RECTOOLS_USERS: dict[str, Any] = {"users_without_truth": "zero", "users_without_recs": "exclude"}


@pytest.mark.parametrize(
    ("k", "expected"), [(1, [0.0, 0.25, 0.0, 0.25]), (2, [0.0, 0.5, 0.0, 0.125])]
)
def test_rectools_own_values(k: int, expected: list[float]) -> None:
    label = f"serendipity@{k}"
    per_user = prm.evaluate(
        RECS, TRUTH, [label], interactions=TRAIN, items=CATALOG, per_user=True, **RECTOOLS_USERS
    ).sort("user")
    assert per_user["user"].to_list() == ["u1", "u2", "u3", "u4"]
    assert per_user[label].to_list() == expected
    mean = prm.evaluate(RECS, TRUTH, [label], interactions=TRAIN, items=CATALOG, **RECTOOLS_USERS)
    assert mean.item() == sum(expected) / 4


def test_hand_worked_by_the_formula() -> None:
    # u2 at k = 2: i2 at rank 1 (popularity rank 2: i1 has 3 users, i2 2) gives
    # (4 + 1 - 1)/4 - (4 + 1 - 2)/4 = 1/4; i3 at rank 2, never interacted with, gives
    # (4 + 1 - 2)/4 - 0 = 3/4; mean over its 2 rows: 1/2
    value = prm.evaluate(
        RECS.filter(pl.col("user") == "u2"), TRUTH.filter(pl.col("user") == "u2"),
        ["serendipity@2"], interactions=TRAIN, items=CATALOG,
    )  # fmt: skip
    assert value.item() == 0.5


def test_curves_read_the_same_numbers() -> None:
    curve = prm.curves(RECS, TRUTH, ["serendipity"], k=[1, 2], interactions=TRAIN, items=CATALOG)
    wide = prm.evaluate(
        RECS, TRUTH, ["serendipity@1", "serendipity@2"], interactions=TRAIN, items=CATALOG
    )
    assert curve["value"].to_list() == list(wide.row(0))


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"interactions": TRAIN}, "need interactions= .* not given: items="),
        ({"items": CATALOG}, "need interactions="),
    ],
)
def test_missing_inputs_are_refused_by_name(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        prm.evaluate(RECS, TRUTH, ["serendipity@2"], **options)


def test_an_item_outside_the_catalog_reads_only_its_size() -> None:
    # RecTools reads len(catalog) alone: with catalog i1, i2 (n = 2), u2's i2 at rank 1
    # (popularity rank 2) adds (2 + 1 - 1)/2 - (2 + 1 - 2)/2 = 1/2 and i3,
    # outside the catalog and never interacted with, at rank 2: (2 + 1 - 2)/2 = 1/2
    value = prm.evaluate(
        RECS.filter(pl.col("user") == "u2"), TRUTH.filter(pl.col("user") == "u2"),
        ["serendipity@2"], interactions=TRAIN, items=CATALOG.head(2),
    )  # fmt: skip
    assert value.item() == 0.5


def test_a_given_propensity_is_refused() -> None:
    items = CATALOG.with_columns(p=pl.lit(0.5))
    with pytest.raises(ValueError, match=r"\['serendipity@2'\] read each item's popularity"):
        prm.evaluate(
            RECS, TRUTH, ["serendipity@2"], interactions=TRAIN, items=items, propensity="p"
        )


@st.composite
def cases(draw: st.DrawFn) -> dict[str, Any]:
    recs = []
    for user in draw(st.sets(st.integers(0, 5), min_size=1, max_size=5)):
        items = draw(st.lists(st.integers(0, 9), unique=True, min_size=1, max_size=6))
        ranks = sorted(draw(st.sets(st.integers(1, 9), min_size=len(items), max_size=len(items))))
        recs += [(user, item, rank) for item, rank in zip(items, ranks, strict=True)]
    truth = draw(st.sets(st.tuples(st.integers(0, 6), st.integers(0, 11)), max_size=20))
    history = draw(
        st.lists(st.tuples(st.integers(0, 7), st.integers(0, 11)), min_size=1, max_size=30)
    )
    return {
        "recs": recs,
        "truth": sorted(truth),
        "history": history,
        "catalog": draw(st.integers(12, 20)),
        "k": draw(st.sampled_from([None, 1, 2, 3, 5])),
    }


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_generated_cases_match_the_textbook(case: dict[str, Any]) -> None:
    ints = {"user": pl.Int64, "item": pl.Int64}
    recs = pl.DataFrame(case["recs"], schema={**ints, "rank": pl.Int64}, orient="row")
    truth = pl.DataFrame(case["truth"], schema=ints, orient="row")
    history = pl.DataFrame(case["history"], schema=ints, orient="row")
    catalog = pl.DataFrame({"item": list(range(case["catalog"]))})
    label = "serendipity" if case["k"] is None else f"serendipity@{case['k']}"
    result = prm.evaluate(
        recs, truth, [label], interactions=history, items=catalog, per_user=True,
        **RECTOOLS_USERS,
    )  # fmt: skip
    values = {u: v for u, v in zip(result["user"], result[label], strict=True) if v is not None}
    expected = {}
    for user in {u for u, _, _ in case["recs"]}:
        ranked = [(item, rank) for u, item, rank in case["recs"] if u == user]
        relevant = {item for u, item in case["truth"] if u == user}
        value = tm.serendipity(ranked, relevant, case["history"], case["catalog"], case["k"])
        # nothing within k: RecTools leaves the user out (NaN), here it scores 0 (documented)
        expected[user] = 0.0 if value is None else value
    assert set(values) == set(expected)
    for user, value in expected.items():
        assert values[user] == pytest.approx(value, rel=1e-12, abs=1e-15), user
