"""Randomized Tukey HSD against the exact enumeration of every within-user permutation."""

from __future__ import annotations

import itertools

import numpy as np
import polars as pl
import pytest

import polars_rankmetrics as prm
from polars_rankmetrics.analysis import _stats


def _exact_p_values(matrix: np.ndarray, pairs: list[tuple[int, int]]) -> list[float]:
    """Share of all (k!)^n relabellings whose range of means is >= each pair's |diff|."""
    n_users, k = matrix.shape
    observed = matrix.sum(axis=0)
    counts = np.zeros(len(pairs))
    permutations = list(itertools.permutations(range(k)))
    total = 0
    for choice in itertools.product(permutations, repeat=n_users):
        sums = sum(matrix[u, list(p)] for u, p in enumerate(choice))
        spread = sums.max() - sums.min()
        counts += [spread >= abs(observed[i] - observed[j]) - 1e-12 for i, j in pairs]
        total += 1
    assert total == len(permutations) ** n_users
    return list(counts / total)


def _frame(matrix: np.ndarray) -> pl.DataFrame:
    n_users, k = matrix.shape
    return pl.DataFrame(
        {
            "model": [f"s{j}" for j in range(k) for _ in range(n_users)],
            "user": list(range(n_users)) * k,
            "m": matrix.T.ravel(),
        }
    )


# 3 systems x 4 users, values of precision@4: (3!)^4 = 1296 relabellings
MATRIX = np.array([[0.25, 0.5, 1.0], [0.0, 0.5, 0.75], [0.25, 0.25, 1.0], [0.5, 0.75, 0.5]])
PAIRS = [(0, 1), (0, 2), (1, 2)]


def test_randomized_p_values_approach_the_exact_ones() -> None:
    exact = _exact_p_values(MATRIX, PAIRS)
    # pinned: 840, 96 and 624 of the 1296 relabellings reach each pair's |difference|
    assert [round(p * 1296) for p in exact] == [840, 96, 624]
    result = prm.compare_per_user(_frame(MATRIX), test="tukey_hsd", n_resamples=40_000, seed=1)
    tested = result.filter(pl.col("baseline").is_not_null())
    assert tested.select("system", "baseline").rows() == [("s0", "s1"), ("s0", "s2"), ("s1", "s2")]
    # B = 40,000: the standard error of a p near 1/2 is 0.0025; 0.01 is 4 of them
    assert tested.get_column("p_value").to_list() == pytest.approx(exact, abs=0.01)
    assert tested.get_column("p_adjusted").equals(tested.get_column("p_value"))


def test_several_tiny_cases_against_enumeration() -> None:
    rng = np.random.default_rng(7)
    for _ in range(4):
        matrix = rng.integers(0, 5, size=(4, 3)) / 4
        exact = _exact_p_values(matrix, PAIRS)
        randomized = _stats.tukey_hsd_p_values(
            matrix, PAIRS, n_resamples=20_000, rng=np.random.default_rng(3)
        )
        # the standard error at B = 20,000 is at most 0.0036
        assert randomized == pytest.approx(exact, abs=0.015)


def test_same_seed_same_p_and_bounded_batches() -> None:
    rng = np.random.default_rng(0)
    matrix = rng.random((3_000, 5))
    pairs = [(i, j) for i in range(5) for j in range(i + 1, 5)]
    # 3,000 x 5 cells: 279 replicates per batch, so 1,000 replicates take 4 batches
    first = _stats.tukey_hsd_p_values(
        matrix, pairs, n_resamples=1_000, rng=np.random.default_rng(9)
    )
    again = _stats.tukey_hsd_p_values(
        matrix, pairs, n_resamples=1_000, rng=np.random.default_rng(9)
    )
    assert first == again
    frame = _frame(MATRIX)
    a = prm.compare_per_user(frame, test="tukey_hsd", n_resamples=500, seed=3)
    b = prm.compare_per_user(frame, test="tukey_hsd", n_resamples=500, seed=3)
    assert a.equals(b)
    # p = (b + 1) / (B + 1): a multiple of 1 / 501
    p = a.get_column("p_value").drop_nulls().to_numpy() * 501
    assert np.allclose(p, np.round(p))


def test_users_missing_a_system_are_left_out() -> None:
    frame = _frame(MATRIX)
    extra = pl.DataFrame({"model": ["s0", "s1"], "user": [9, 9], "m": [1.0, 0.0]})
    with_gap = pl.concat([frame, extra])
    full = prm.compare_per_user(with_gap, test="tukey_hsd", n_resamples=300, seed=2)
    complete = prm.compare_per_user(frame, test="tukey_hsd", n_resamples=300, seed=2)
    # the own rows keep each system's own users; the comparisons use the complete users
    tested = full.filter(pl.col("baseline").is_not_null())
    assert tested.get_column("n_paired").to_list() == [4, 4, 4]
    assert tested.select("p_value", "diff").equals(
        complete.filter(pl.col("baseline").is_not_null()).select("p_value", "diff")
    )
    assert full.filter(pl.col("baseline").is_null()).get_column("n").to_list() == [5, 5, 4]


def test_against_a_baseline_the_family_is_every_system() -> None:
    frame = _frame(MATRIX)
    pairs = prm.compare_per_user(frame, test="tukey_hsd", n_resamples=2_000, seed=4)
    against = prm.compare_per_user(
        frame, test="tukey_hsd", n_resamples=2_000, seed=4, baseline="s0"
    )
    # the same replicates: s1 and s2 against s0 read the same maxima as the pairs do
    expected = pairs.filter(pl.col("system") == "s0", pl.col("baseline").is_not_null())
    assert sorted(against.get_column("p_value").drop_nulls().to_list()) == sorted(
        expected.get_column("p_value").to_list()
    )
