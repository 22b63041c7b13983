"""Risk-sensitive comparison: how much a system loses where it does worse than a baseline.

A mean improvement can hide users (queries) where the new system does much
worse. The risk measures weigh those losses more:

* **URisk** (Wang, Bennett & Collins-Thompson, SIGIR 2012; Dinçer, Macdonald &
  Ounis, SIGIR 2014): with g_u the improvement of the system over the baseline
  on user u (``s (system_u - baseline_u)``, s = +1 where higher is better, -1
  where lower is), each user's risk-weighted improvement is
  ``r_u = g_u`` when ``g_u >= 0`` and ``(1 + alpha) g_u`` when it is a loss, and
  ``URisk_alpha = mean_u r_u``. alpha = 0 gives the mean improvement; ndeval's
  and gdeval's ``-baseline -riskAlpha`` output is this mean.
* **TRisk** (Dinçer, Macdonald & Ounis, SIGIR 2014): ``URisk / SE``, SE =
  ``sd(r) / sqrt(n)`` with the sample standard deviation (n - 1): the paired
  t statistic of the r_u, so that with alpha = 0 it is the paired t-test's
  statistic (``scipy.stats.ttest_rel``); |TRisk| > 2 is the usual reading of a
  significant gain (> 2) or risk (< -2).
* **GeoRisk** (Dinçer, Macdonald & Ounis, SIGIR 2016): over a matrix x of the
  scores of every system (columns i) on the same c users (rows j), with
  S_i = sum_j x_ij, T_j = sum_i x_ij, N = sum x, the expected score
  ``e_ij = S_i T_j / N`` and ``z_ij = (x_ij - e_ij) / sqrt(e_ij)``;
  ``ZRisk_i = sum_j z_ij (1 + alpha [z_ij < 0])`` and
  ``GeoRisk_i = sqrt((S_i / c) Phi(ZRisk_i / c))``, Phi the standard normal
  distribution function. It reads effectiveness scores (non-negative, higher is
  better). A cell with e_ij = 0 (a user every system scores 0, or a system
  that scores 0 everywhere) holds x_ij = 0 as well: its z is 0 (nothing
  expected, nothing lost).
"""

from __future__ import annotations

import math

import numpy as np

from polars_rankmetrics.analysis import _stats


def risk_weighted(gain: _stats.FloatArray, alpha: float) -> _stats.FloatArray:
    """r_u: each improvement as is, each loss (g_u < 0) weighted by 1 + alpha."""
    return np.where(gain < 0.0, (1.0 + alpha) * gain, gain)


def urisk(gain: _stats.FloatArray, alpha: float) -> float | None:
    """URisk_alpha, the mean risk-weighted improvement; None without users."""
    if gain.size == 0:
        return None
    return float(risk_weighted(gain, alpha).mean())


def trisk(gain: _stats.FloatArray, alpha: float) -> float | None:
    """TRisk_alpha = URisk / (sd(r) / sqrt(n)); None for n < 2 or r the same for every user.

    >>> import numpy as np
    >>> round(trisk(np.array([0.1, 0.2, 0.0, 0.3]), 0.0), 6)  # the paired t statistic
    2.32379
    """
    if gain.size < 2:
        return None
    weighted = risk_weighted(gain, alpha)
    sd = float(weighted.std(ddof=1))
    if sd == 0.0 or not math.isfinite(sd):
        return None  # no spread: the statistic is undefined (or infinite)
    return float(weighted.mean()) / (sd / math.sqrt(weighted.size))


def georisk(scores: _stats.FloatArray, alpha: float) -> list[float | None]:
    """GeoRisk_alpha of each column (system) of a users x systems matrix of scores >= 0.

    None for every system when there are no users.

    >>> import numpy as np
    >>> values = georisk(np.array([[0.5, 0.5], [0.5, 0.5]]), 1.0)  # identical systems
    >>> [round(v, 6) for v in values]  # sqrt(0.5 * Phi(0))
    [0.5, 0.5]
    """
    users = scores.shape[0]
    if users == 0:
        return [None] * scores.shape[1]
    per_system = scores.sum(axis=0)
    per_user = scores.sum(axis=1)
    total = float(per_system.sum())
    expected = np.outer(per_user, per_system) / total if total > 0 else np.zeros_like(scores)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = np.where(expected > 0.0, (scores - expected) / np.sqrt(expected), 0.0)
    zrisk = (z * np.where(z < 0.0, 1.0 + alpha, 1.0)).sum(axis=0)
    return [
        math.sqrt(float(system_total) / users * _normal_cdf(float(z_total) / users))
        for system_total, z_total in zip(per_system, zrisk, strict=True)
    ]


def _normal_cdf(x: float) -> float:
    """Phi(x), through erfc: accurate in the lower tail, where 1 + erf(x) would cancel."""
    return 0.5 * math.erfc(-x / math.sqrt(2.0))
