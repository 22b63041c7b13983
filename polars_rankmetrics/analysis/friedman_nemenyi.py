"""``friedman``: systems ranked over many datasets or seeds (Demsar 2006)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from polars_rankmetrics._frames import AnyFrame, collected, eager_caller
from polars_rankmetrics._measures._registry import Direction
from polars_rankmetrics.analysis import _stats
from polars_rankmetrics.analysis._direction import directions, require
from polars_rankmetrics.analysis._frames import complete_table

__all__ = ["FriedmanResult", "friedman"]


@dataclass(frozen=True)
class FriedmanResult:
    """The Friedman test with its Nemenyi post-hoc analysis, in the manner of scipy.stats.

    Attributes
    ----------
    statistic
        Friedman's chi-square (with scipy's correction for tied ranks).
    p_value
        P(chi^2_{k-1} >= statistic).
    mean_ranks
        Frame ``system``, ``mean_rank`` (rank 1 = the best value in a block:
        the highest, or the lowest for a lower-is-better metric), sorted by
        mean rank, then system.
    critical_difference
        Nemenyi's critical difference at ``alpha``: two systems whose mean
        ranks differ by more are significantly different.
    pairwise
        Frame ``system``, ``other``, ``rank_diff`` (mean rank of ``system``
        minus that of ``other``), ``p_value`` (Nemenyi), one row per unordered
        pair in sorted order.
    alpha
        The level of ``critical_difference``.
    n_blocks
        N, the blocks (datasets, seeds) with a value for every system.
    n_systems
        k.
    direction
        Which way was better when the systems were ranked: ``"higher"`` or
        ``"lower"``.
    metric
        The value column the systems were ranked by.
    """

    statistic: float
    p_value: float
    mean_ranks: Any
    critical_difference: float
    pairwise: Any
    alpha: float
    n_blocks: int
    n_systems: int
    direction: Direction = "higher"
    metric: str = ""


def friedman(
    means: AnyFrame,
    metric: str,
    *,
    system: str = "model",
    block: str = "dataset",
    alpha: float = 0.05,
    direction: Direction | None = None,
) -> FriedmanResult:
    """Friedman's test of k systems over N blocks, mean ranks and Nemenyi's post-hoc test.

    Within each block (dataset, seed, fold) the systems are ranked by their
    value, rank 1 for the best (the highest, or the lowest for a metric
    where lower is better), tied values sharing their average rank.
    With R_j the mean rank of system j:

    * chi^2_F = 12 N / (k (k + 1)) (sum_j R_j^2 - k (k + 1)^2 / 4), divided
      by 1 - sum(t^3 - t) / (N k (k^2 - 1)) over the groups of t tied values
      (as ``scipy.stats.friedmanchisquare``), p from chi^2 with k - 1 df;
    * Nemenyi: CD = q_alpha sqrt(k (k + 1) / (6 N)), q_alpha the (1 - alpha)
      quantile of the studentized range of k means with infinite df divided
      by sqrt(2) (Demsar's table: 2.569 for k = 4 at alpha = 0.05); the
      pairwise p of systems i, j is P(Q_k >= sqrt(2) |R_i - R_j| /
      sqrt(k (k + 1) / (6 N))), as scikit-posthocs' ``posthoc_nemenyi_friedman``.

    Parameters
    ----------
    means
        One row per (block, system) with the metric's value (e.g. each
        system's mean on each dataset). Any frame (Polars, pandas, Arrow: see
        :func:`polars_rankmetrics.evaluate`).
    metric
        The value column; which way is better is its ``direction``.
    system
        Column naming the system.
    block
        Column naming the block (dataset, seed).
    alpha
        Level of the critical difference.
    direction
        ``"higher"`` or ``"lower"``: which value is better. Default: the
        direction the measure declares when ``metric`` is a metric string
        (``"ndcg@10"``, ``"mean_rank"``); a column of another name, or a
        descriptive measure (``arp@10``), is refused without it.

    Returns
    -------
    :class:`FriedmanResult`; its frames are pandas for pandas input, Polars
    DataFrames otherwise (for a LazyFrame or an Arrow object too).

    Notes
    -----
    Blocks without a value for every system are left out (N counts the
    others). Needs k >= 2 systems and N >= 2 blocks. Values are compared on
    the 12-significant-digit grid of :func:`compare_per_user`, so values equal
    on paper tie. Every block ranking the systems the same way but all tied
    leaves the statistic undefined: 0 with p = 1 is reported.

    References: Friedman (1937); Nemenyi (1963); Demsar (2006), "Statistical
    comparisons of classifiers over multiple data sets", JMLR 7.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankmetrics as prm
    >>> means = pl.DataFrame({
    ...     "dataset": ["ml1m"] * 3 + ["lastfm"] * 3 + ["amazon"] * 3 + ["yelp"] * 3,
    ...     "model": ["bpr", "ease", "pop"] * 4,
    ...     "ndcg": [0.30, 0.35, 0.10, 0.20, 0.25, 0.05, 0.15, 0.12, 0.02, 0.40, 0.42, 0.20],
    ... })
    >>> result = prm.friedman(means, "ndcg")
    >>> round(result.statistic, 4), round(result.p_value, 4)
    (6.5, 0.0388)
    >>> result.mean_ranks
    shape: (3, 2)
    ┌────────┬───────────┐
    │ system ┆ mean_rank │
    │ ---    ┆ ---       │
    │ str    ┆ f64       │
    ╞════════╪═══════════╡
    │ ease   ┆ 1.25      │
    │ bpr    ┆ 1.75      │
    │ pop    ┆ 3.0       │
    └────────┴───────────┘
    >>> round(result.critical_difference, 4)
    1.6572
    """
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise ValueError(f"alpha must be a number between 0 and 1 (exclusive), got {alpha!r}")
    better = require(metric, directions([metric], direction)[metric], "friedman", per_metric=False)
    call = eager_caller(means, name="means")
    frame = collected(call.frame)
    systems, table, _ = complete_table(
        frame, metric, system=system, block=block, role="block", name="means"
    )
    n, k = table.shape
    if k < 2 or n < 2:
        raise ValueError(
            f"friedman needs at least 2 systems and 2 {block} blocks with a value for every "
            f"system; found {len(systems)} system(s) and {n} such block(s)"
        )
    chi2, p_value, mean_ranks = _test(table, better)
    scale = math.sqrt(k * (k + 1) / (6 * n))
    q_alpha = _studentized(alpha, k) / math.sqrt(2)
    order = sorted(range(k), key=lambda j: (mean_ranks[j], j))
    ranked = pl.DataFrame(
        {
            "system": [systems[j] for j in order],
            "mean_rank": [float(mean_ranks[j]) for j in order],
        },
        schema={"system": frame.schema[system], "mean_rank": pl.Float64},
    )
    pairwise = _nemenyi(systems, mean_ranks, scale, frame.schema[system])
    return FriedmanResult(
        statistic=chi2,
        p_value=p_value,
        mean_ranks=call.back(ranked),
        critical_difference=q_alpha * scale,
        pairwise=call.back(pairwise),
        alpha=float(alpha),
        n_blocks=n,
        n_systems=k,
        direction="higher" if better > 0 else "lower",
        metric=metric,
    )


def _test(table: np.ndarray, better: float) -> tuple[float, float, np.ndarray]:
    """Friedman's chi-square (scipy's tie correction), its p-value and the mean ranks.

    Rank 1 is the best value of a block (the highest, or the lowest where lower
    is better), ties averaged; values are compared on the 12-digit grid.
    """
    from scipy import stats  # noqa: PLC0415 - loaded on use: the import stays light

    n, k = table.shape
    grid = np.vstack([_stats.on_grid(row, float(np.abs(row).max())) for row in table])
    ranks = stats.rankdata(-better * grid, axis=1)
    mean_ranks = ranks.mean(axis=0)
    statistic = 12 * n / (k * (k + 1)) * (np.sum(mean_ranks**2) - k * (k + 1) ** 2 / 4)
    ties = 0.0
    for row in grid:
        _, counts = np.unique(row, return_counts=True)
        ties += float(np.sum(counts**3 - counts))
    correction = 1 - ties / (n * k * (k * k - 1))
    chi2 = float(statistic / correction) if correction > 0 else 0.0
    p_value = float(stats.chi2.sf(chi2, k - 1)) if correction > 0 else 1.0
    return chi2, p_value, mean_ranks


def _studentized(alpha: float, k: int) -> float:
    """The (1 - alpha) quantile of the studentized range of k means, infinite df."""
    from scipy import stats  # noqa: PLC0415 - loaded on use: the import stays light

    return float(stats.studentized_range.ppf(1 - alpha, k, np.inf))


def _nemenyi(
    systems: list[Any], mean_ranks: np.ndarray, scale: float, dtype: pl.DataType
) -> pl.DataFrame:
    """Nemenyi's p-value of every unordered pair of systems, in sorted order."""
    from scipy import stats  # noqa: PLC0415 - loaded on use: the import stays light

    k = len(systems)
    rows = []
    for i in range(k):
        for j in range(i + 1, k):
            difference = float(mean_ranks[i] - mean_ranks[j])
            q = math.sqrt(2) * abs(difference) / scale
            p = float(stats.studentized_range.sf(q, k, np.inf)) if q > 0 else 1.0
            rows.append((systems[i], systems[j], difference, min(p, 1.0)))
    return pl.DataFrame(
        rows,
        schema={"system": dtype, "other": dtype, "rank_diff": pl.Float64, "p_value": pl.Float64},
        orient="row",
    )
