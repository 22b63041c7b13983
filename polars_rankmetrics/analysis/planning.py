"""``users_needed``: how many users a paired t-test needs to detect a difference."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from polars_rankmetrics._frames import ArrowStream, Frame
from polars_rankmetrics.analysis import _stats
from polars_rankmetrics.analysis._frames import complete_table, read_scores

__all__ = ["users_needed"]


def _power(n: int, effect_size: float, alpha: float) -> float:
    """Power of the two-sided paired t-test with n pairs (as statsmodels' ``TTestPower``).

    The lower tail P(T < -c) is P(T' > c) for the noncentrality negated:
    scipy's ``nct.cdf`` gives NaN there for a large noncentrality (effect
    size 10, n = 3), where the tail is 0.
    """
    from scipy import stats  # noqa: PLC0415 - loaded on use: the import stays light

    df = n - 1
    critical = float(stats.t.isf(alpha / 2, df))
    noncentrality = effect_size * math.sqrt(n)
    return float(
        stats.nct.sf(critical, df, noncentrality) + stats.nct.sf(critical, df, -noncentrality)
    )


# the most users an answer may give: an Int64 column holds it, and the t law's df too
MOST_USERS = 2**62


def _smallest_n(effect_size: float, alpha: float, power: float) -> int | None:
    """The smallest n >= 2 whose power reaches ``power``, by bisection; ``None`` past MOST_USERS.

    The power grows with n: a bracket (lo, hi] with power(lo) < ``power`` <=
    power(hi) is found from the normal approximation ((z_{alpha/2} + z_power)
    / effect size)^2 by doubling (or halving), then halved to one user: about
    2 log2(n) evaluations, where a step of one user at a time took minutes
    for an effect size of 7e-7 (n about 1.6e13).
    """
    from scipy import stats  # noqa: PLC0415 - loaded on use: the import stays light

    z = float(stats.norm.isf(alpha / 2) + stats.norm.ppf(power))
    guess = (z / effect_size) ** 2
    if not guess <= MOST_USERS:
        return None

    def reaches(n: int) -> bool:
        return n >= 2 and _power(n, effect_size, alpha) >= power

    hi = max(2, math.ceil(guess))
    while not reaches(hi):
        if hi > MOST_USERS // 2:
            return None
        hi *= 2
    lo = hi // 2
    while lo > 1 and reaches(lo):
        hi, lo = lo, lo // 2
    # power(lo) < power <= power(hi), or lo = 1 (df 0: no test)
    while hi - lo > 1:
        middle = (lo + hi) // 2
        if reaches(middle):
            hi = middle
        else:
            lo = middle
    return hi


def _fraction(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number between 0 and 1, got {value!r}")
    if not 0 < value < 1:
        raise ValueError(f"{name} must be between 0 and 1 (exclusive), got {value}")
    return float(value)


def users_needed(
    scores: Frame | ArrowStream,
    metrics: str | Sequence[str],
    *,
    system: str = "model",
    user: str = "user",
    baseline: Any,
    effect: float,
    alpha: float = 0.05,
    power: float = 0.8,
) -> Frame:
    """Users a paired t-test needs to detect a difference ``effect`` from the baseline.

    For each system other than the baseline and each metric, the standard
    deviation s_d of the paired differences d_u = system_u - baseline_u
    observed in ``scores`` gives the effect size delta / s_d (delta =
    ``effect``); ``users_needed`` is the smallest n with power >= ``power``
    for the two-sided paired t-test at level ``alpha`` (df n - 1, noncentral
    t), i.e. statsmodels' ``TTestPower().solve_power`` rounded up.

    Parameters
    ----------
    scores
        Per-user scores: one row per (system, user), one column per metric
        (``evaluate(..., by="model", per_user=True)``). Any frame (Polars,
        pandas, Arrow: see ``evaluate``); the result has its kind.
    metrics
        The metric column(s).
    system, user
        The columns naming the system and the user.
    baseline
        The system the others are compared with.
    effect
        The difference to detect, in the metric's units (e.g. 0.01 of nDCG), > 0.
    alpha
        Significance level of the planned test (two-sided).
    power
        The chance of detecting ``effect`` when it is there, 1 - beta.

    Returns
    -------
    A frame of the kind given, one row per (system, metric): ``system``,
    ``metric`` (String), ``n_paired`` (Int64: users with both values, from
    which s_d comes), ``sd_diff`` (Float64: s_d, ddof = 1) and
    ``users_needed`` (Int64). Rows are ordered by system, then metric.

    Notes
    -----
    s_d is an estimate from the users at hand; more users make it firmer.
    A difference the same for every user (s_d = 0 on the 12-significant-digit
    grid of :func:`compare_per_user`) or fewer than 2 paired users: s_d and
    ``users_needed`` null (no effect size can be formed). n is found by
    bisection on the power (a few dozen evaluations, even for an effect
    size of 1e-6 and n in the trillions); an effect so small that n would
    exceed 2^62 users is refused with the effect size it forms.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankmetrics as prm
    >>> scores = pl.DataFrame({
    ...     "model": ["bm25"] * 4 + ["neural"] * 4,
    ...     "user": [1, 2, 3, 4] * 2,
    ...     "ap": [0.2, 0.4, 0.1, 0.5, 0.3, 0.6, 0.1, 0.8],
    ... })
    >>> prm.users_needed(scores, "ap", baseline="bm25", effect=0.05)
    shape: (1, 5)
    ┌────────┬────────┬──────────┬──────────┬──────────────┐
    │ system ┆ metric ┆ n_paired ┆ sd_diff  ┆ users_needed │
    │ ---    ┆ ---    ┆ ---      ┆ ---      ┆ ---          │
    │ str    ┆ str    ┆ i64      ┆ f64      ┆ i64          │
    ╞════════╪════════╪══════════╪══════════╪══════════════╡
    │ neural ┆ ap     ┆ 4        ┆ 0.129099 ┆ 55           │
    └────────┴────────┴──────────┴──────────┴──────────────┘

    s_d = 0.129099 (d = 0.1, 0.2, 0, 0.3), effect size 0.05 / 0.129099 =
    0.387298: 55 users give power 0.8 at alpha 0.05 (54 give less).
    """
    for value, name in ((effect, "effect"),):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"{name} must be a number, e.g. 0.01, got {value!r}")
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"{name} must be a finite number above 0, e.g. 0.01, got {value}")
    checked_alpha, checked_power = _fraction(alpha, "alpha"), _fraction(power, "power")
    frame, back = read_scores(scores, name="scores")
    names = [metrics] if isinstance(metrics, str) else list(metrics)
    if not names:
        raise ValueError("metrics is empty: name at least one metric column")
    rows: list[tuple[Any, str, int, float | None, int | None]] = []
    systems: list[Any] = []
    for metric in names:
        systems, _, _ = complete_table(frame, metric, system=system, block=user, role="user")
    if baseline not in systems:
        raise ValueError(
            f"baseline {baseline!r} is not one of the systems in column {system!r}: {systems}"
        )
    for name in systems:
        if name == baseline:
            continue
        pair = frame.filter(pl.col(system).is_in([name, baseline]))
        for metric in names:
            rows.append(
                _needed(pair, metric, name, baseline, system=system, user=user, effect=effect,
                        alpha=checked_alpha, power=checked_power)
            )  # fmt: skip
    result = pl.DataFrame(
        rows,
        schema={
            "system": frame.schema[system], "metric": pl.String, "n_paired": pl.Int64,
            "sd_diff": pl.Float64, "users_needed": pl.Int64,
        },
        orient="row",
    )  # fmt: skip
    return back(result)


def _needed(
    pair: pl.DataFrame,
    metric: str,
    name: Any,
    baseline: Any,
    *,
    system: str,
    user: str,
    effect: float,
    alpha: float,
    power: float,
) -> tuple[Any, str, int, float | None, int | None]:
    """One row of the result: the system's paired users, s_d and the users it needs."""
    both, table, _ = complete_table(pair, metric, system=system, block=user, role="user")
    raw = table[:, both.index(name)] - table[:, both.index(baseline)]
    grid = _stats.on_grid(raw, float(np.abs(table).max(initial=0.0)))
    if raw.size < 2 or _stats.constant(grid):
        return name, metric, int(raw.size), None, None
    sd = float(np.std(raw, ddof=1))
    needed = _smallest_n(effect / sd, alpha, power)
    if needed is None:
        raise ValueError(
            f"effect={effect} is {effect / sd:.3g} standard deviations of the paired "
            f"differences of {metric!r} between {name!r} and {baseline!r} (s_d = "
            f"{sd:.3g}): a paired t-test would need more than {MOST_USERS:.3g} users. "
            "Is the effect in the metric's units (e.g. 0.01 of nDCG)?"
        )
    return name, metric, int(raw.size), sd, needed
