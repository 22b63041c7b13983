"""The statistics of ``compare`` against scipy and statsmodels, and by hand."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.multitest import multipletests

from polars_rankmetrics.analysis import _stats

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# per-user metric values: in [0, 1], often repeated (binary metrics, short lists)
values = st.one_of(
    st.sampled_from([0.0, 0.25, 0.5, 1.0]),
    st.floats(0, 1, allow_nan=False, allow_subnormal=False),
)


@st.composite
def paired_vectors(draw: st.DrawFn, min_size: int = 2, max_size: int = 40) -> tuple:
    n = draw(st.integers(min_size, max_size))
    a = np.array(draw(st.lists(values, min_size=n, max_size=n)))
    b = np.array(draw(st.lists(values, min_size=n, max_size=n)))
    return a, b


def _not_constant(d: np.ndarray) -> bool:
    return not np.all(d == d[0])


@SETTINGS
@given(paired_vectors())
def test_t_test_equals_scipy_ttest_rel(pair: tuple) -> None:
    a, b = pair
    d = a - b
    p = _stats.paired_p_value(d, "t")
    if _not_constant(d):
        expected = stats.ttest_rel(a, b).pvalue
        assert p == pytest.approx(expected, rel=1e-12, abs=1e-300)
    else:
        assert p == (1.0 if d[0] == 0 else 0.0)


@SETTINGS
@given(paired_vectors(), st.sampled_from([0.5, 0.9, 0.95, 0.99]))
def test_t_interval_equals_scipy(pair: tuple, ci: float) -> None:
    a, _ = pair
    low, high = _stats.t_interval(a, ci)
    if _not_constant(a):
        # scipy's own interval fails on a spread that underflows (a = [0, 2.4e-266]: its
        # scale times an infinite quantile): the oracle gives no value to check there
        with np.errstate(invalid="ignore", over="ignore"):
            expected = stats.t.interval(ci, a.size - 1, loc=a.mean(), scale=stats.sem(a))
        assume(bool(np.isfinite(expected).all()))
        assert low == pytest.approx(expected[0], rel=1e-12, abs=1e-14)
        assert high == pytest.approx(expected[1], rel=1e-12, abs=1e-14)
    else:
        assert low == high == a.mean()


@SETTINGS
@given(paired_vectors())
def test_effect_size_is_mean_over_sd(pair: tuple) -> None:
    a, b = pair
    d = a - b
    size = _stats.effect_size(d)
    # values that differ but whose squared deviations underflow (d = [3e-252, 0]) have
    # sd 0 too: d_z is then infinite, reported as None
    sd = d.std(ddof=1)
    if _not_constant(d) and sd > 0.0:
        assert size == pytest.approx(d.mean() / sd, rel=1e-12)
    else:
        assert size is None


@settings(max_examples=15, deadline=None)
@given(paired_vectors(max_size=20))
def test_wilcoxon_equals_scipy_default(pair: tuple) -> None:
    a, b = pair
    d = a - b
    p = _stats.paired_p_value(d, "wilcoxon")
    if _not_constant(d):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = stats.wilcoxon(d).pvalue
        assert p == pytest.approx(expected, rel=1e-12)
    else:
        assert p == (1.0 if d[0] == 0 else stats.wilcoxon(d).pvalue)


@SETTINGS
@given(
    st.lists(st.one_of(st.none(), st.floats(0, 1, allow_nan=False)), min_size=1, max_size=12),
    st.sampled_from([("holm", "holm"), ("bonferroni", "bonferroni"), ("bh", "fdr_bh")]),
)
def test_corrections_equal_statsmodels(p_values: list, methods: tuple) -> None:
    ours, theirs = methods
    adjusted = _stats.adjust(p_values, ours)
    present = [p for p in p_values if p is not None]
    assert [a is None for a in adjusted] == [p is None for p in p_values]
    if present:
        expected = multipletests(present, method=theirs)[1]
        got = [a for a in adjusted if a is not None]
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=0)


def test_correction_none_keeps_p_values() -> None:
    assert _stats.adjust([0.01, None, 0.5], "none") == [0.01, None, 0.5]


def test_holm_by_hand() -> None:
    # p = (0.01, 0.04, 0.03), m = 3: sorted 0.01, 0.03, 0.04 -> 3*0.01 = 0.03,
    # 2*0.03 = 0.06, max(0.06, 1*0.04) = 0.06
    assert _stats.adjust([0.01, 0.04, 0.03], "holm") == pytest.approx([0.03, 0.06, 0.06])
    # BH: 0.04*3/3 = 0.04, 0.03*3/2 = 0.045 -> min(0.045, 0.04) = 0.04, 0.01*3 = 0.03
    assert _stats.adjust([0.01, 0.04, 0.03], "bh") == pytest.approx([0.03, 0.04, 0.04])


def _exact_sign_flip(d: np.ndarray) -> float:
    """Textbook: every one of the 2^n sign patterns, |sum| >= |observed| (within rounding).

    Rounding as the documented rule: sums within 1e-9 * sum(|d|) of the observed one
    are ties (a difference of 7.5e-13 beside one of 0.25 is rounding, hypothesis found).
    """
    observed = abs(sum(d))
    slack = 1e-9 * float(np.abs(d).sum())
    count = 0
    for signs in itertools.product((1.0, -1.0), repeat=d.size):
        if abs(sum(s * x for s, x in zip(signs, d, strict=True))) >= observed - slack:
            count += 1
    return count / 2**d.size


@settings(max_examples=15, deadline=None)
@given(paired_vectors(min_size=3, max_size=9))
@example((np.array([0.0, 0.0, 0.0]), np.array([0.0, 0.25, 7.51976389e-13])))
def test_randomization_agrees_with_exact_enumeration(pair: tuple) -> None:
    a, b = pair
    d = a - b
    resamples = 4_000
    (p,) = _stats.randomization_p_values(
        d[:, None], [d.size], n_resamples=resamples, rng=np.random.default_rng(1)
    )
    if np.all(d == 0):
        assert p == 1.0
        return
    exact = _exact_sign_flip(d)
    # Monte Carlo error of a proportion: 5 standard errors, plus the +1 of (b+1)/(B+1)
    tolerance = 5 * math.sqrt(exact * (1 - exact) / resamples) + 2 / resamples
    assert p == pytest.approx(exact, abs=tolerance)


def test_wilcoxon_large_sample_equals_scipy() -> None:
    # above 50 pairs scipy uses the normal approximation (with ties and zeros)
    rng = np.random.default_rng(4)
    d = np.round(rng.normal(0.05, 0.3, 500), 1)
    assert _stats.paired_p_value(d, "wilcoxon") == pytest.approx(
        stats.wilcoxon(d).pvalue, rel=1e-12
    )


def test_randomization_agrees_with_scipy_permutation_test() -> None:
    rng = np.random.default_rng(7)
    a = rng.random(30)
    b = a - 0.08 + rng.normal(0, 0.2, 30)
    d = a - b
    expected = stats.permutation_test(
        (a, b),
        lambda x, y, axis: np.mean(x - y, axis=axis),
        permutation_type="samples",
        n_resamples=20_000,
        vectorized=True,
        rng=np.random.default_rng(3),
    ).pvalue
    (p,) = _stats.randomization_p_values(
        d[:, None], [30], n_resamples=20_000, rng=np.random.default_rng(5)
    )
    assert p is not None
    assert p == pytest.approx(expected, abs=5 * math.sqrt(expected * (1 - expected) / 20_000))


def test_randomization_is_reproducible_and_handles_columns_apart() -> None:
    rng = np.random.default_rng(0)
    d = rng.normal(0.05, 0.3, size=(200, 3))
    d[:50, 2] = 0.0  # users not paired in the third comparison
    first = _stats.randomization_p_values(
        d, [200, 200, 150], n_resamples=999, rng=np.random.default_rng(42)
    )
    again = _stats.randomization_p_values(
        d, [200, 200, 150], n_resamples=999, rng=np.random.default_rng(42)
    )
    other = _stats.randomization_p_values(
        d, [200, 200, 150], n_resamples=999, rng=np.random.default_rng(43)
    )
    assert first == again
    assert first != other
    # p = (b + 1) / (B + 1): a multiple of 1/1000, at least 1/1000
    for p in first:
        assert p is not None
        assert p >= 1 / 1000
        assert round(p * 1000) == pytest.approx(p * 1000)


def test_randomization_edge_cases() -> None:
    d = np.array([[0.0, 0.5], [0.0, 0.5], [0.0, 0.5]])
    p_zero, p_constant = _stats.randomization_p_values(
        d, [3, 3], n_resamples=500, rng=np.random.default_rng(0)
    )
    assert p_zero == 1.0
    # a constant nonzero d: only the all-plus and all-minus patterns reach it (2 of 8)
    assert p_constant == pytest.approx(0.25, abs=0.08)
    assert _stats.randomization_p_values(
        np.array([[0.3]]), [1], n_resamples=10, rng=np.random.default_rng(0)
    ) == [None]


def test_bootstrap_interval_agrees_with_scipy() -> None:
    x = np.random.default_rng(11).random(80)
    low, high = _stats.bootstrap_interval(x, 0.95, n_resamples=20_000, rng=np.random.default_rng(1))
    expected = stats.bootstrap(
        (x,), np.mean, method="percentile", n_resamples=20_000, rng=np.random.default_rng(2)
    ).confidence_interval
    # both are Monte Carlo estimates of the same quantiles: a small share of the sd of the mean
    se = x.std(ddof=1) / math.sqrt(x.size)
    assert low == pytest.approx(expected.low, abs=0.12 * se)
    assert high == pytest.approx(expected.high, abs=0.12 * se)


def test_edge_cases_by_hand() -> None:
    assert _stats.paired_p_value(np.array([0.3]), "t") is None
    assert _stats.paired_p_value(np.array([]), "t") is None
    assert _stats.paired_p_value(np.zeros(5), "t") == 1.0
    assert _stats.paired_p_value(np.zeros(5), "wilcoxon") == 1.0
    assert _stats.paired_p_value(np.full(5, 0.2), "t") == 0.0
    assert (
        _stats.paired_p_value(np.full(5, 0.25), "wilcoxon")
        == stats.wilcoxon(np.full(5, 0.25)).pvalue
    )
    assert _stats.t_interval(np.array([0.4]), 0.95) == (None, None)
    low, high = _stats.t_interval(np.full(3, 0.4), 0.95)
    assert low == high == pytest.approx(0.4)
    summary = _stats.summarize(
        np.array([]), 0.95, method="t", n_resamples=10, rng=np.random.default_rng(0)
    )
    assert summary == _stats.Summary(0, None, None, None)


def test_worked_t_test() -> None:
    # d = (0.1, 0.2, 0, 0.3): mean 0.15, sd = sqrt(0.05 / 3) = 0.1290994,
    # t = 0.15 / (0.1290994 / 2) = 2.3237900, two-sided p on 3 df = 0.1027281
    d = np.array([0.1, 0.2, 0.0, 0.3])
    assert _stats.paired_p_value(d, "t") == pytest.approx(0.1027281, abs=1e-7)
    assert _stats.effect_size(d) == pytest.approx(1.1618950, abs=1e-7)
    # interval: 0.15 +- t_{0.975, 3} (3.1824463) * 0.0645497 = 0.15 +- 0.2054260
    low, high = _stats.t_interval(d, 0.95)
    assert low == pytest.approx(-0.0554260, abs=1e-6)
    assert high == pytest.approx(0.3554260, abs=1e-6)


@pytest.mark.parametrize("scale", [2.2250738585072014e-308, 5e-324, 1e-300, 1e300, 1.7e308])
def test_the_grid_holds_at_the_ends_of_the_float_range(scale: float) -> None:
    # 10^(11 - floor(log10(scale))) overflowed for the smallest normal float (a
    # hypothesis case of compare_per_user); values stay on their 12-digit grid
    values = np.array([0.0, scale, -scale, scale / 2])
    snapped = _stats.on_grid(values, scale)
    assert snapped[0] == 0.0
    assert snapped[1] == pytest.approx(scale, rel=1e-11)
    assert snapped[2] == -snapped[1]
    assert math.isfinite(snapped[3])
    assert abs(snapped[3] - scale / 2) <= scale * 1e-11
    # a difference below the grid step of the scale is zero
    assert _stats.on_grid(np.array([scale * 1e-13]), scale)[0] == 0.0
