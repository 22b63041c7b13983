"""friedman against scipy's friedmanchisquare, scikit-posthocs and Demsar (2006)."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from polars_rankmetrics.analysis import friedman

sp = pytest.importorskip("scikit_posthocs")
pd = pytest.importorskip("pandas")


def _means(table: np.ndarray) -> pl.DataFrame:
    n, k = table.shape
    return pl.DataFrame(
        {
            "dataset": [f"d{i}" for _ in range(k) for i in range(n)],
            "model": [f"s{j}" for j in range(k) for _ in range(n)],
            "ndcg": table.T.ravel(),
        }
    )


@settings(max_examples=30, deadline=None)
@given(st.integers(2, 12), st.integers(3, 6), st.integers(0, 2**32 - 1), st.booleans())
def test_friedman_equals_scipy_and_scikit_posthocs(n: int, k: int, seed: int, tied: bool) -> None:
    rng = np.random.default_rng(seed)
    # tied: values from a few levels, so ranks tie within blocks (scipy's tie correction)
    table = rng.integers(0, 3, size=(n, k)) / 4 if tied else rng.random((n, k))
    result = friedman(_means(table), "ndcg")
    if np.all(table == table[:, :1]):
        assert (result.statistic, result.p_value) == (0.0, 1.0)
        return
    oracle = stats.friedmanchisquare(*table.T)
    assert result.statistic == pytest.approx(oracle.statistic, rel=1e-9)
    assert result.p_value == pytest.approx(oracle.pvalue, rel=1e-9)
    ranks = stats.rankdata(-table, axis=1).mean(axis=0)
    frame = result.mean_ranks
    assert dict(frame.iter_rows()) == pytest.approx({f"s{j}": r for j, r in enumerate(ranks)})
    nemenyi = sp.posthoc_nemenyi_friedman(pd.DataFrame(table, columns=[f"s{j}" for j in range(k)]))
    for system, other, _, p in result.pairwise.iter_rows():
        assert p == pytest.approx(nemenyi.loc[system, other], rel=1e-6, abs=1e-12)
    assert result.n_blocks == n
    assert result.n_systems == k


def test_critical_difference_matches_demsar() -> None:
    # Demsar (2006), Table 5(a): q_0.05 for k = 2..10
    table = [1.960, 2.343, 2.569, 2.728, 2.850, 2.949, 3.031, 3.102, 3.164]
    for k, q in zip(range(2, 11), table, strict=True):
        values = np.tile(np.arange(k, dtype=float), (3, 1))
        result = friedman(_means(values), "ndcg")
        assert result.critical_difference / math.sqrt(k * (k + 1) / 18) == pytest.approx(
            q, abs=1.5e-3
        )
    # section 3.2.4: four classifiers on 14 data sets, CD = 2.569 sqrt(4 * 5 / (6 * 14)) = 1.25
    rng = np.random.default_rng(0)
    result = friedman(_means(rng.random((14, 4))), "ndcg")
    assert result.critical_difference == pytest.approx(1.25, abs=0.005)
    assert friedman(_means(rng.random((14, 4))), "ndcg", alpha=0.10).critical_difference == (
        pytest.approx(2.291 * math.sqrt(20 / 84), abs=0.002)
    )


def test_demsar_chi_square_from_mean_ranks() -> None:
    # Demsar's example: mean ranks 3.143, 2.000, 2.893, 1.964 over N = 14 give chi^2_F 9.28
    ranks = np.array([3.143, 2.000, 2.893, 1.964])
    n, k = 14, 4
    chi2 = 12 * n / (k * (k + 1)) * (np.sum(ranks**2) - k * (k + 1) ** 2 / 4)
    assert chi2 == pytest.approx(9.28, abs=0.01)
    # and the code's own path gives that formula on a table without ties
    table = np.array([[4, 1, 3, 2]] * 7 + [[3, 2, 4, 1]] * 7, dtype=float)
    result = friedman(_means(-table), "ndcg")  # rank 1 = highest, so negate
    expected = 12 * n / (k * (k + 1)) * (np.sum(table.mean(axis=0) ** 2) - k * (k + 1) ** 2 / 4)
    assert result.statistic == pytest.approx(expected, rel=1e-12)


def test_incomplete_blocks_backends_and_refusals() -> None:
    rng = np.random.default_rng(3)
    means = _means(rng.random((5, 3)))
    extra = pl.DataFrame({"dataset": ["x"], "model": ["s0"], "ndcg": [0.5]})
    with_extra, complete = friedman(pl.concat([means, extra]), "ndcg"), friedman(means, "ndcg")
    assert with_extra.statistic == complete.statistic
    assert with_extra.mean_ranks.equals(complete.mean_ranks)
    assert with_extra.n_blocks == 5
    lazy = friedman(means.lazy(), "ndcg")
    assert isinstance(lazy.mean_ranks, pl.DataFrame)
    pandas = friedman(means.to_pandas(), "ndcg")
    assert isinstance(pandas.pairwise, pd.DataFrame)
    assert pandas.statistic == lazy.statistic
    with pytest.raises(ValueError, match="at least 2 systems and 2 dataset blocks"):
        friedman(means.filter(pl.col("dataset") == "d0"), "ndcg")
    with pytest.raises(ValueError, match="alpha must be"):
        friedman(means, "ndcg", alpha=1.5)
    with pytest.raises(ValueError, match="means has no block column 'seed'"):
        friedman(means, "ndcg", block="seed")
