"""``users_needed``: how many users a paired t-test needs to detect a difference."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, TypeVar, cast

import numpy as np
import polars as pl

from polars_rankmetrics.analysis import _stats
from polars_rankmetrics.analysis._frames import complete_table, read_scores

__all__ = ["users_needed"]

FrameT = TypeVar("FrameT")


def _power(n: int, effect_size: float, alpha: float) -> float:
    """Power of the two-sided paired t-test with n pairs (as statsmodels' ``TTestPower``)."""
    from scipy import stats  # noqa: PLC0415 - loaded on use: the import stays light

    df = n - 1
    critical = float(stats.t.isf(alpha / 2, df))
    noncentrality = effect_size * math.sqrt(n)
    return float(
        stats.nct.sf(critical, df, noncentrality) + stats.nct.cdf(-critical, df, noncentrality)
    )


def _smallest_n(effect_size: float, alpha: float, power: float) -> int:
    """The smallest n >= 2 whose power reaches ``power``: from the normal guess, step by one."""
    from scipy import stats  # noqa: PLC0415 - loaded on use: the import stays light

    guess = ((stats.norm.isf(alpha / 2) + stats.norm.ppf(power)) / effect_size) ** 2
    n = max(2, math.ceil(float(guess)))
    while _power(n, effect_size, alpha) < power:
        n += 1
    while n > 2 and _power(n - 1, effect_size, alpha) >= power:
        n -= 1
    return n


def _fraction(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number between 0 and 1, got {value!r}")
    if not 0 < value < 1:
        raise ValueError(f"{name} must be between 0 and 1 (exclusive), got {value}")
    return float(value)


def users_needed(
    scores: FrameT,
    metrics: str | Sequence[str],
    *,
    system: str = "model",
    user: str = "user",
    baseline: Any,
    effect: float,
    alpha: float = 0.05,
    power: float = 0.8,
) -> FrameT:
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
        (``evaluate(..., by="model", per_user=True)``). Polars (eager or
        lazy) or pandas.
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
    ``users_needed`` null (no effect size can be formed).

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
            both, table, _ = complete_table(pair, metric, system=system, block=user, role="user")
            raw = table[:, both.index(name)] - table[:, both.index(baseline)]
            grid = _stats.on_grid(raw, float(np.abs(table).max(initial=0.0)))
            if raw.size < 2 or _stats.constant(grid):
                rows.append((name, metric, int(raw.size), None, None))
                continue
            sd = float(np.std(raw, ddof=1))
            needed = _smallest_n(effect / sd, checked_alpha, checked_power)
            rows.append((name, metric, int(raw.size), sd, needed))
    result = pl.DataFrame(
        rows,
        schema={
            "system": frame.schema[system], "metric": pl.String, "n_paired": pl.Int64,
            "sd_diff": pl.Float64, "users_needed": pl.Int64,
        },
        orient="row",
    )  # fmt: skip
    return cast("FrameT", back(result))
