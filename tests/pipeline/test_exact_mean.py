"""Means over users that do not depend on the order the users come in.

``_pipeline.aggregate`` sums in fixed point (Int128: ``fixed_point`` scales and rounds
over the whole frame, ``exact_mean`` sums), so the mean of the same values is
the same to the last bit in any order; it is held to ``math.fsum`` (the
correctly rounded sum) and to ``mean()``'s handling of nulls, NaN,
infinities and empty groups, per group too. ``evaluate`` then gives the same
numbers for the same rows in any order and over repeated runs.
"""

from __future__ import annotations

import math
import random

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_rankmetrics as prm
from polars_rankmetrics._sums import exact_mean, fixed_point

VALUES = st.lists(
    st.one_of(
        st.floats(0.0, 1.0),
        st.floats(-50.0, 50.0),
        st.sampled_from([0.0, 1.0, 1 / 3, 2.0**-40, 1e-9]),
    ),
    min_size=1,
    max_size=300,
)


def _mean(values: list[float | None], *, order_seed: int = 0) -> float | None:
    shuffled = list(values)
    random.Random(order_seed).shuffle(shuffled)
    frame = pl.DataFrame({"x": shuffled}, schema={"x": pl.Float64})
    result: float | None = frame.with_columns(fixed_point(["x"])).select(exact_mean("x")).item()
    return result


@settings(max_examples=300, deadline=None)
@given(VALUES, st.integers(0, 2**32))
def test_the_mean_is_fsums_and_the_same_in_any_order(values: list[float], seed: int) -> None:
    got = _mean(values)
    assert got == _mean(values, order_seed=seed)
    expected = math.fsum(values) / len(values)
    largest = max(abs(value) for value in values)
    # one rounding of the exact sum and one of the division, plus the fixed point's
    # grain (2^-61 of the largest magnitude): within a few ulps of the largest value
    assert got is not None
    assert abs(got - expected) <= 4 * math.ulp(largest) + 4 * math.ulp(expected)


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([0.5, None, 0.25], 0.375),
        ([None, None], None),
        ([0.0, 0.0, 0.0], 0.0),
        ([0.5, math.nan], math.nan),
        ([0.5, math.inf], math.inf),
        ([-math.inf, 0.5], -math.inf),
        ([1e-300, 3e-300], 2e-300),  # below the fixed point's range: mean()
    ],
)
def test_nulls_nan_infinities_and_tiny_values_as_mean_has_them(
    values: list[float | None], expected: float | None
) -> None:
    got = _mean(values)
    if expected is None:
        assert got is None
    elif math.isnan(expected):
        assert got is not None
        assert math.isnan(got)
    else:
        assert got == pytest.approx(expected, rel=1e-15)


def test_groups_share_one_scale_and_keep_their_precision() -> None:
    # one scale for the whole column (from its largest value): a group of small values
    # still gets its mean to the float's precision; a group of nulls gets null
    small = [1e-9 * (1 + i / 7) for i in range(50)]
    frame = pl.DataFrame(
        {"g": [1, 1] + [2] * 50 + [3, 4, 4], "x": [0.1, 0.2, *small, None, 3e6, 1e6]}
    )
    got = (
        frame.with_columns(fixed_point(["x"]))
        .group_by("g", maintain_order=True)
        .agg(exact_mean("x"))
        .get_column("x")
        .to_list()
    )
    assert got[0] == pytest.approx(0.15, rel=1e-15)
    assert got[1] == pytest.approx(math.fsum(small) / 50, rel=2e-16)
    assert got[2] is None
    assert got[3] == 2e6


def test_evaluate_gives_the_same_numbers_for_rows_in_any_order() -> None:
    sample = prm.sample_data()
    recs = sample.recs.filter(pl.col("model") == "two_tower").drop("model")
    metrics = ["map@10", "ndcg@10", "mrr@10", "recall@20", "gm_map@10"]
    results = {
        prm.evaluate(
            recs.sample(fraction=1.0, shuffle=True, seed=seed),
            sample.truth.sample(fraction=1.0, shuffle=True, seed=seed + 1),
            metrics,
            score="score",
            relevance="rel",
        ).row(0)
        for seed in range(6)
    }
    assert len(results) == 1


def test_evaluate_by_model_gives_the_same_numbers_for_rows_in_any_order() -> None:
    sample = prm.sample_data()
    results = {
        tuple(
            prm.evaluate(
                sample.recs.sample(fraction=1.0, shuffle=True, seed=seed),
                sample.truth,
                ["map@10", "ndcg@10", "recall@20"],
                score="score",
                relevance="rel",
                by="model",
            ).rows()
        )
        for seed in range(5)
    }
    assert len(results) == 1
