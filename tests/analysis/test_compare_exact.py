"""compare decides equalities on a decimal grid: differences equal on paper are equal.

Regression tests of the issue "Statistics you can publish and gate a release
on", item 1: before the grid, 0.3 - 0.1 and 0.2 - 0.0 were two different
floats, so Wilcoxon ranked them apart (p 0.047 instead of 0.078) and a
difference the same for every user got an effect size of about 1e16.
"""

from __future__ import annotations

import warnings

import numpy as np
import polars as pl
import pytest
from scipy import stats

import polars_rankmetrics as prm
from polars_rankmetrics.analysis import _stats


def _scores(a: list[float], b: list[float]) -> pl.DataFrame:
    n = len(a)
    return pl.DataFrame(
        {"model": ["new"] * n + ["old"] * n, "user": [*range(n), *range(n)], "p": [*a, *b]}
    )


# precision@10 of two systems on 7 users: d = (0.2, 0.2, 0.1, -0.2, 0.3, 0.6, 0.3) on paper
NEW = [0.3, 0.2, 0.7, 0.4, 0.7, 0.9, 0.7]
OLD = [0.1, 0.0, 0.6, 0.6, 0.4, 0.3, 0.4]


def test_wilcoxon_ranks_differences_equal_on_paper_as_ties() -> None:
    floats = np.array(NEW) - np.array(OLD)
    assert floats[0] != floats[1]  # 0.19999999999999998 and 0.2: the defect's cause
    on_paper = [0.2, 0.2, 0.1, -0.2, 0.3, 0.6, 0.3]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        expected = stats.wilcoxon(on_paper).pvalue
        broken = stats.wilcoxon(floats).pvalue
    assert broken == pytest.approx(0.046875)  # what ranking the raw floats gives
    assert expected == pytest.approx(0.078125)
    row = prm.compare_per_user(
        _scores(NEW, OLD), baseline="old", direction="higher", test="wilcoxon"
    ).row(1, named=True)
    assert row["p_value"] == pytest.approx(expected, rel=1e-12)
    assert row["significant"] is False
    assert (row["wins"], row["ties"], row["losses"]) == (6, 0, 1)


def test_a_difference_the_same_for_every_user_has_no_effect_size() -> None:
    # d = 0.3 - 0.1 (0.19999999999999998) or 0.2 - 0.0 (0.2): 0.2 for every user on paper
    new, old = [0.3, 0.2, 0.3, 0.2, 0.3], [0.1, 0.0, 0.1, 0.0, 0.1]
    for test in ("t", "wilcoxon", "randomization"):
        row = prm.compare_per_user(
            _scores(new, old), baseline="old", direction="higher", test=test
        ).row(1, named=True)
        assert row["effect_size"] is None, test
        assert row["diff"] == row["diff_ci_low"] == row["diff_ci_high"] == 0.2, test
        assert (row["wins"], row["ties"], row["losses"]) == (5, 0, 0)
    t = prm.compare_per_user(_scores(new, old), baseline="old", direction="higher").row(
        1, named=True
    )
    assert t["p_value"] == 0.0  # the documented zero-variance rule of the t-test
    wilcoxon = prm.compare_per_user(
        _scores(new, old), baseline="old", direction="higher", test="wilcoxon"
    )
    assert wilcoxon.item(1, "p_value") == pytest.approx(2 / 2**5)  # every sign the same


def test_systems_equal_on_paper_are_identical() -> None:
    # 0.3 against 0.1 + 0.2 (0.30000000000000004): d = 0 on paper for every user
    new, old = [0.3, 0.6, 0.3], [0.1 + 0.2, 0.2 + 0.4, 0.1 + 0.2]
    for test in ("t", "wilcoxon", "randomization"):
        row = prm.compare_per_user(
            _scores(new, old), baseline="old", direction="higher", test=test
        ).row(1, named=True)
        assert row["p_value"] == 1.0, test
        assert row["diff"] == 0.0
        assert row["effect_size"] is None
        assert (row["wins"], row["ties"], row["losses"]) == (0, 3, 0)


def test_tolerance_counts_on_the_grid() -> None:
    # 0.4 - 0.3 = 0.10000000000000003 in floats: a tie at tolerance 0.1 on paper
    row = prm.compare_per_user(
        _scores([0.4, 0.9, 0.0], [0.3, 0.5, 0.25]),
        baseline="old",
        direction="higher",
        tolerance=0.1,
    ).row(1, named=True)
    assert (row["wins"], row["ties"], row["losses"]) == (1, 1, 1)


def test_on_grid_rounds_to_12_significant_digits_of_the_scale() -> None:
    grid = _stats.on_grid(np.array([0.3 - 0.1, 0.2, 0.3 - (0.1 + 0.2), -1e-13]), 0.3)
    assert grid.tolist() == [0.2, 0.2, 0.0, 0.0]
    assert _stats.on_grid(np.array([123456789.0123456]), 2e8).tolist() == [123456789.012]
    assert _stats.on_grid(np.array([0.0, 0.0]), 0.0).tolist() == [0.0, 0.0]
