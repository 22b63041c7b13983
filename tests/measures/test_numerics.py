"""Numeric edge cases: grades whose gain overflows, and cutoffs beyond any list."""

from __future__ import annotations

import math
import time

import polars as pl
import pytest

import polars_rankmetrics as prm

RECS = pl.DataFrame({"user": [1, 1, 2], "item": ["a", "b", "a"], "rank": [1, 2, 1]})
TRUTH = pl.DataFrame({"user": [1, 1, 2], "item": ["b", "c", "a"], "rel": [1.0, 2.0, 1.0]})


def _graded(*grades: float) -> pl.DataFrame:
    return TRUTH.with_columns(pl.Series("rel", grades, dtype=pl.Float64))


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize(
    ("grades", "gain", "count"),
    [
        ((math.inf, 2.0, 1.0), "linear", 1),  # NDCG was inf / inf = NaN
        ((1e308, 1e308, 1.0), "linear", 2),  # the DCG sum overflowed
        ((1024.0, 2.0, 1.0), "exponential", 1),  # 2^1024 - 1 is inf
        ((997.0, 2.0, 1.0), "exponential", 1),
    ],
)
def test_gains_that_overflow_are_refused(
    grades: tuple[float, ...], gain: str, count: int, lazy: bool
) -> None:
    truth = _graded(*grades)
    recs = RECS.lazy() if lazy else RECS

    def run() -> pl.DataFrame:
        result = prm.evaluate(
            recs,
            truth.lazy() if lazy else truth,
            "ndcg@2",
            relevance="rel",
            gain="linear" if gain == "linear" else "exponential",
        )
        return result.collect() if isinstance(result, pl.LazyFrame) else result

    with pytest.raises(
        ValueError, match=rf"truth column 'rel' \(relevance\) has {count} grade"
    ) as info:
        run()
    assert "example row: user=1" in str(info.value)
    # binary measures do not read the gain: an infinite grade is just relevant
    assert prm.evaluate(RECS, truth, "map", relevance="rel")["map"][0] is not None


def test_large_gains_within_the_limit_are_exact() -> None:
    # user 1: b (grade 996) at 2, c (grade 1) unseen. DCG = G / log2(3), IDCG = G + 1 / log2(3)
    # with G = 2^996 - 1, so NDCG = 1 / log2(3) to float precision
    truth = _graded(996.0, 1.0, 1.0)
    per_user = prm.evaluate(
        RECS, truth, "ndcg@2", relevance="rel", gain="exponential", per_user=True
    )
    assert per_user["ndcg@2"].to_list() == pytest.approx([1 / math.log2(3), 1.0])
    linear = prm.evaluate(
        RECS, _graded(1e300, 1e300, 1.0), "ndcg@2", relevance="rel", per_user=True
    )
    # b at 2 (1e300), c unseen (1e300): DCG = 1e300 / log2 3, IDCG = 1e300 (1 + 1 / log2 3)
    expected = (1 / math.log2(3)) / (1 + 1 / math.log2(3))
    assert linear["ndcg@2"].to_list() == pytest.approx([expected, 1.0])


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("relevance", [None, "rel"])
def test_cutoffs_past_every_list_cost_nothing(lazy: bool, relevance: str | None) -> None:
    recs, truth = (RECS.lazy(), TRUTH.lazy()) if lazy else (RECS, TRUTH)
    huge = ["ndcg@2147483648", "ndcg@18446744073709551616", "map@2147483648", "dcg@4294967296"]
    start = time.perf_counter()
    result = prm.evaluate(recs, truth, [*huge, "ndcg", "map", "dcg"], relevance=relevance)
    result = result.collect() if isinstance(result, pl.LazyFrame) else result
    # a table of 2^31 discounts took minutes (or a MemoryError); now it is bounded
    assert time.perf_counter() - start < 30
    row = result.row(0)
    assert row[:4] == pytest.approx((row[4], row[4], row[5], row[6]))


@pytest.mark.parametrize("k", [2**63, 2**64, 2**70])
def test_set_measures_with_cutoffs_beyond_64_bits(k: int) -> None:
    scores = prm.evaluate(
        RECS, TRUTH, [f"f1@{k}", f"precision@{k}", f"fbeta(beta=2)@{k}", f"pooled_recall@{k}"],
        per_user=True,
    )  # fmt: skip
    # user 1: one hit (b) of two relevant: f1 = 2 / (k + 2), P = 1 / k, F2 = 5 / (4 * 2 + k)
    assert scores.row(0)[1:] == pytest.approx((2 / (k + 2), 1 / k, 5 / (8 + k), 0.5))
    assert all(value is not None for value in scores.row(1))
