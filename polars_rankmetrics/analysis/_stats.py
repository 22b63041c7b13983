"""Paired tests, intervals and multiple-comparison corrections on per-user vectors.

Everything here works on numpy arrays of per-user values: one vector per
system (or per difference between two systems). The number of vectors is the
number of comparisons (systems x metrics x groups), small; the work per vector
is vectorised, and the randomization test draws one sign matrix for every
comparison of a group at once.

Conventions (``shared/METRICS.md``, "Comparing systems"):

- t-interval of a mean: mean +- t_{1-a/2, n-1} s / sqrt(n), s with ddof = 1;
- paired t-test on d_u = A_u - B_u, two-sided, as ``scipy.stats.ttest_rel``;
- randomization (sign flip): p = (b + 1) / (B + 1), b = number of resamples
  with |mean(d*)| >= |mean(d)|;
- Wilcoxon signed-rank: ``scipy.stats.wilcoxon`` with its defaults (zero
  differences dropped);
- exactness: per-user differences are compared on a decimal grid of 12
  significant digits of the largest magnitude of the values they come from
  (:func:`on_grid`) before any test, ranking, zero-variance check or W/T/L
  count, so that differences equal on paper (0.3 - 0.1 and 0.2 - 0.0) are
  equal;
- a difference that is the same for every user (zero variance): p = 1 when it
  is 0 (identical systems); otherwise the t-test gives p = 0 (scipy's
  t = +-inf, without its warning) while Wilcoxon and randomization keep their
  own value (every sign the same: 2 / 2^n; scipy's Wilcoxon uses its normal
  approximation for n > 13, all differences being tied); fewer than 2 users: no
  test (None).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from polars_rankmetrics.conventions import (
    CI_METHODS,
    CORRECTIONS,
    HYPOTHESES,
    TESTS,
    CiMethod,
    Correction,
    Hypothesis,
    Test,
)

__all__ = [
    "CI_METHODS",
    "CORRECTIONS",
    "HYPOTHESES",
    "SIGNIFICANT_DIGITS",
    "TESTS",
    "CiMethod",
    "Correction",
    "Hypothesis",
    "Summary",
    "Test",
    "adjust",
    "bootstrap_interval",
    "constant",
    "decision_p_value",
    "on_grid",
    "paired_p_value",
    "randomization_p_values",
    "summarize",
    "t_interval",
    "tukey_hsd_p_values",
    "wins_ties_losses",
]


FloatArray = npt.NDArray[np.float64]

# Cells of one random sign matrix (resamples x users): 2**22 float64 = 32 MiB.
_SIGN_CELLS = 1 << 22

SIGNIFICANT_DIGITS = 12
"""Per-user differences are compared to this many significant digits of their scale."""

# below this scale the grid factor 10^(11 - floor(log10(scale))) passes float64's largest
_TINY_SCALE = 1e-290

# sums of integers held in float64 are exact below 2**53
_EXACT_INTEGERS = 2.0**53


def _grid_factor(scale: float, digits: int = SIGNIFICANT_DIGITS) -> float:
    """10^(digits - 1 - floor(log10(scale))): one grid step is 1 / factor."""
    return 10.0 ** (digits - 1 - math.floor(math.log10(scale)))


def on_grid(values: FloatArray, scale: float) -> FloatArray:
    """``values`` rounded to ``SIGNIFICANT_DIGITS`` (12) significant digits of ``scale``.

    The grid step is 10^(floor(log10(scale)) - 11): ``scale`` is the largest
    magnitude of the per-user values the differences come from, so 0.3 - 0.1
    (0.19999999999999998 in floats) and 0.2 - 0.0 both become 0.2, and
    0.3 - (0.1 + 0.2) becomes 0. Each value is the float nearest to its grid
    point (an integer divided or multiplied by a power of ten, both exact), so
    values equal on the grid are equal floats. Per-user metrics are rationals
    with small denominators: two that differ do so far above 1e-11 of their
    scale. ``scale`` 0 (every value 0) leaves ``values`` as they are.
    """
    if values.size == 0 or not scale > 0 or not math.isfinite(scale):
        return values
    if scale < _TINY_SCALE:
        # 10^(11 - floor(log10(scale))) overflows: snap the values scaled by a power of
        # two (exact) into [0.5, 1) of the scale, and scale the result back
        mantissa, exponent = math.frexp(scale)
        return np.ldexp(on_grid(np.ldexp(values, -exponent), mantissa), exponent) + 0.0
    factor = _grid_factor(scale)
    if factor >= 1:
        snapped = np.round(values * factor) / factor
    else:
        snapped = np.round(values / (1 / factor)) * (1 / factor)
    return snapped + 0.0  # -0.0 -> 0.0


def wins_ties_losses(d: FloatArray, tolerance: float) -> tuple[int, int, int]:
    """Counts of d_u > tolerance, |d_u| <= tolerance and d_u < -tolerance (d on the grid)."""
    wins = int(np.count_nonzero(d > tolerance))
    losses = int(np.count_nonzero(d < -tolerance))
    return wins, int(d.size) - wins - losses, losses


@dataclass(frozen=True)
class Summary:
    """Mean of one vector with its interval; ``None`` where it is not defined."""

    n: int
    mean: float | None
    low: float | None
    high: float | None


def constant(x: FloatArray) -> bool:
    """Every value equal: exact test (a computed variance may be 1e-33, not 0)."""
    return bool(x.size == 0 or np.all(x == x[0]))


def _sd(x: FloatArray) -> float:
    # as scipy's ttest_1samp: mean of squared deviations times n / (n - 1)
    n = x.size
    deviations = x - x.mean()
    return math.sqrt(float(np.mean(deviations * deviations)) * n / (n - 1))


def t_interval(x: FloatArray, ci: float) -> tuple[float | None, float | None]:
    """``scipy.stats.t.interval(ci, n - 1, loc=mean, scale=sd / sqrt(n))``.

    A constant vector gives the point [mean, mean] (scipy: NaN for scale 0);
    fewer than 2 values give (None, None).
    """
    from scipy import stats  # noqa: PLC0415 - loaded on use: the import stays light

    n = x.size
    if n < 2:
        return None, None
    mean = float(x.mean())
    if constant(x):
        return mean, mean
    # the arithmetic of scipy's t.interval (loc + ppf(q) * scale), without its support
    # bounds, which warn on a tiny scale
    scale = _sd(x) / math.sqrt(n)
    low = mean + float(stats.t.ppf((1 - ci) / 2, n - 1)) * scale
    high = mean + float(stats.t.ppf((1 + ci) / 2, n - 1)) * scale
    return low, high


def bootstrap_interval(
    x: FloatArray, ci: float, *, n_resamples: int, rng: np.random.Generator
) -> tuple[float | None, float | None]:
    """Percentile bootstrap interval of the mean: users drawn with replacement.

    The means of ``n_resamples`` resamples are computed in chunks (at most
    ``2**22`` drawn indices at once); the interval is their ``(1 - ci) / 2``
    and ``(1 + ci) / 2`` quantiles (linear interpolation, as
    ``scipy.stats.bootstrap(method="percentile")``).
    """
    n = x.size
    if n < 2:
        return None, None
    chunk = max(1, _SIGN_CELLS // n)
    means = np.empty(n_resamples)
    for start in range(0, n_resamples, chunk):
        stop = min(start + chunk, n_resamples)
        index = rng.integers(0, n, size=(stop - start, n))
        means[start:stop] = x[index].mean(axis=1)
    low, high = np.quantile(means, [(1 - ci) / 2, (1 + ci) / 2])
    return float(low), float(high)


def summarize(
    x: FloatArray,
    ci: float,
    *,
    method: CiMethod,
    n_resamples: int,
    rng: np.random.Generator,
) -> Summary:
    """n, mean and interval of one vector (t or percentile bootstrap)."""
    if x.size == 0:
        return Summary(0, None, None, None)
    mean = float(x.mean())
    if method == "t":
        low, high = t_interval(x, ci)
    else:
        low, high = bootstrap_interval(x, ci, n_resamples=n_resamples, rng=rng)
    return Summary(int(x.size), mean, low, high)


def effect_size(d: FloatArray) -> float | None:
    """Cohen's d for paired samples, d_z = mean(d) / sd(d); None if sd = 0 or n < 2.

    The sd is 0 also for values that differ but whose squared deviations
    underflow (e.g. d = [3e-252, 0]): d_z is then infinite, reported as None.
    """
    if d.size < 2 or constant(d):
        return None
    sd = _sd(d)
    return None if sd == 0.0 else float(d.mean()) / sd


def decision_p_value(d: FloatArray, hypothesis: Hypothesis, margin: float) -> float | None:
    """p-value of the paired t-test of ``hypothesis`` on d (df n - 1), margin m >= 0.

    * ``"difference"``: H0 mean(d) = 0, two-sided (:func:`paired_p_value`);
    * ``"superiority"``: H0 mean(d) <= 0, p = P(T >= mean(d) / se);
    * ``"noninferiority"``: H0 mean(d) <= -m, p = P(T >= (mean(d) + m) / se);
    * ``"equivalence"``: TOST (Schuirmann 1987), H0 mean(d) <= -m or
      mean(d) >= m, p = max(P(T >= (mean(d) + m) / se), P(T <= (mean(d) - m) / se)),

    se = sd(d) / sqrt(n), as ``scipy.stats.ttest_rel(alternative="greater")``
    and ``statsmodels.stats.weightstats.ttost_paired``. Zero variance (d the
    same for every user, on the grid): t = +-inf by the sign of its numerator,
    and a numerator of 0 gives p = 1 (the boundary of H0 is not rejected).
    None for fewer than 2 pairs.
    """
    if hypothesis == "difference":
        return paired_p_value(d, "t")
    from scipy import stats  # noqa: PLC0415 - loaded on use: the import stays light

    n = d.size
    if n < 2:
        return None
    mean = float(d.mean())
    sd = 0.0 if constant(d) else _sd(d)
    se = sd / math.sqrt(n)

    def above(shift: float) -> float:
        # P(T >= (mean + shift) / se): H0 mean(d) <= -shift
        numerator = mean + shift
        if se == 0.0:
            return 0.0 if numerator > 0 else 1.0
        return float(stats.t.sf(numerator / se, n - 1))

    def below(shift: float) -> float:
        # P(T <= (mean - shift) / se): H0 mean(d) >= shift
        numerator = mean - shift
        if se == 0.0:
            return 0.0 if numerator < 0 else 1.0
        return float(stats.t.cdf(numerator / se, n - 1))

    if hypothesis == "superiority":
        return above(0.0)
    if hypothesis == "noninferiority":
        return above(margin)
    return max(above(margin), below(margin))


def paired_p_value(d: FloatArray, test: Literal["t", "wilcoxon"]) -> float | None:
    """Two-sided p-value of the paired t-test or the Wilcoxon signed-rank test on d.

    None for fewer than 2 pairs. Every d = 0: p = 1 (scipy: NaN). Another
    constant d: the t-test gives p = 0 (scipy: t = +-inf, with a warning);
    Wilcoxon keeps scipy's value (all ranks on one side: 2 / 2^n exactly for n <= 13,
    scipy's normal approximation above, every difference being tied).
    """
    from scipy import stats  # noqa: PLC0415 - loaded on use: the import stays light

    n = d.size
    if n < 2:
        return None
    if constant(d) and (d[0] == 0 or test == "t"):
        return 1.0 if d[0] == 0 else 0.0
    if test == "t":
        sd = _sd(d)
        if sd == 0.0:
            # squared deviations underflowed (d = [3e-252, 0]): scipy's t = +-inf, p = 0
            return 1.0 if float(d.mean()) == 0.0 else 0.0
        t = float(d.mean()) / (sd / math.sqrt(n))
        return float(2.0 * stats.t.sf(abs(t), n - 1))
    with warnings.catch_warnings():
        # scipy warns when it falls back to the normal approximation (ties, zeros): the
        # p-value is still the one scipy returns, which is what we promise
        warnings.simplefilter("ignore", UserWarning)
        result = stats.wilcoxon(d)
    return float(result.pvalue)


def randomization_p_values(
    differences: FloatArray,
    counts: Sequence[int],
    *,
    n_resamples: int,
    rng: np.random.Generator,
) -> list[float | None]:
    """Paired randomization (sign flip) p-values of several comparisons at once.

    ``differences`` is users x comparisons, with 0 where a user is not paired
    in a comparison (flipping the sign of 0 changes nothing, so one sign matrix
    serves every comparison of a group); ``counts`` gives each comparison's n.
    Per comparison, p = (b + 1) / (B + 1), b = number of resamples with
    |sum(s * d)| >= |sum(d)| (the same as comparing means, n being fixed).

    Sums are compared with a tolerance of 1e-9 * sum(|d|) so that a resample
    whose sum equals the observed one up to rounding counts (as scipy's
    ``permutation_test`` does); e.g. binary metrics often tie exactly.
    """
    n_users, n_comparisons = differences.shape
    observed = np.abs(differences.sum(axis=0))
    tolerance = 1e-9 * np.abs(differences).sum(axis=0)
    exceed = np.zeros(n_comparisons, dtype=np.int64)
    chunk = max(1, _SIGN_CELLS // max(n_users, 1))
    for start in range(0, n_resamples, chunk):
        rows = min(chunk, n_resamples - start)
        # random bits as signs: s = 2b - 1, so sum(s * d) = 2 (b @ d) - sum(d)
        bits = rng.integers(0, 2, size=(rows, n_users), dtype=np.int8)
        flipped = 2.0 * (bits.astype(np.float64) @ differences) - differences.sum(axis=0)
        exceed += (np.abs(flipped) >= observed - tolerance).sum(axis=0)
    p_values: list[float | None] = []
    for column, n in enumerate(counts):
        if n < 2:
            p_values.append(None)
        elif observed[column] == 0 and tolerance[column] == 0:
            p_values.append(1.0)  # identical systems: every resample ties
        else:
            p_values.append(float((exceed[column] + 1) / (n_resamples + 1)))
    return p_values


def adjust(p_values: Sequence[float | None], method: Correction) -> list[float | None]:
    """Adjusted p-values of one family, as ``statsmodels.stats.multitest.multipletests``.

    ``"holm"`` (Holm-Bonferroni step-down), ``"bonferroni"``, ``"bh"``
    (Benjamini-Hochberg, statsmodels' ``"fdr_bh"``) or ``"none"``. ``None``
    entries (comparisons without a test) are not part of the family and stay
    ``None``.
    """
    present = [index for index, p in enumerate(p_values) if p is not None]
    adjusted: list[float | None] = [None] * len(p_values)
    if not present:
        return adjusted
    p = np.array([p_values[index] for index in present], dtype=np.float64)
    m = p.size
    if method == "none":
        result = p
    elif method == "bonferroni":
        result = np.minimum(p * m, 1.0)
    else:
        order = np.argsort(p, kind="stable")
        ranked = p[order]
        if method == "holm":
            stepped = np.maximum.accumulate((m - np.arange(m)) * ranked)
        else:
            stepped = np.minimum.accumulate((ranked * m / np.arange(1, m + 1))[::-1])[::-1]
        result = np.empty(m)
        result[order] = np.minimum(stepped, 1.0)
    for index, value in zip(present, result, strict=True):
        adjusted[index] = float(value)
    return adjusted


def _integer_units(matrix: FloatArray) -> FloatArray:
    """``matrix`` on the grid of :func:`on_grid`, in grid steps (whole numbers as float64).

    The digits drop below 12 when needed so that any column sum stays below
    2^53, where float64 sums of whole numbers are exact: sums of permuted
    columns then compare exactly, whatever the order of their terms.
    """
    scale = float(np.abs(matrix).max()) if matrix.size else 0.0
    if not scale > 0:
        return np.zeros_like(matrix)
    digits = SIGNIFICANT_DIGITS
    while True:
        units = np.round(matrix * _grid_factor(scale, digits))
        if digits == 1 or float(np.abs(units).max()) * matrix.shape[0] < _EXACT_INTEGERS:
            return units
        digits -= 1


def tukey_hsd_p_values(
    matrix: FloatArray,
    pairs: Sequence[tuple[int, int]],
    *,
    n_resamples: int,
    rng: np.random.Generator,
) -> list[float]:
    """Randomized Tukey HSD p-values (Carterette 2012; Sakai 2014) of the pairs of columns.

    ``matrix`` is users x systems with a value in every cell. Each replicate
    permutes the system labels within every user (each row independently)
    and records the largest absolute difference between two systems' means,
    which is the range of the means. Per pair, p = (b + 1) / (B + 1), b the
    number of replicates whose range is >= the pair's observed absolute
    difference. The maximum over every pair makes p family-adjusted.

    Values are compared on the grid of :func:`on_grid` as whole numbers of
    grid steps, so a replicate equal to the observed data ties it exactly.
    Replicates are drawn in batches of at most 2^22 cells (users x systems x
    replicates), so memory stays bounded whatever ``n_resamples``.
    """
    n_users, n_systems = matrix.shape
    units = _integer_units(matrix)
    sums = units.sum(axis=0)
    observed = np.array([abs(sums[i] - sums[j]) for i, j in pairs], dtype=np.float64)
    ranges = np.empty(n_resamples)
    batch = max(1, _SIGN_CELLS // max(n_users * n_systems, 1))
    for start in range(0, n_resamples, batch):
        rows = min(batch, n_resamples - start)
        shuffled = rng.permuted(np.broadcast_to(units, (rows, n_users, n_systems)), axis=2)
        replicate = shuffled.sum(axis=1)
        ranges[start : start + rows] = replicate.max(axis=1) - replicate.min(axis=1)
    ranges.sort()
    # b = number of ranges >= observed: everything from the first such one on
    exceed = n_resamples - np.searchsorted(ranges, observed, side="left")
    return [float((b + 1) / (n_resamples + 1)) for b in exceed]
