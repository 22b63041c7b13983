"""``seeds_interval``: the interval of a system's mean when it was run with several seeds.

A model trained with several random seeds and evaluated on the same users has
two sources of variation: the seed (which model you happened to train) and
the users (which test users you happened to have). An interval over users
alone, from one seed or from the seeds' average, understates it. The two-way
(crossed) bootstrap resamples both: each replicate draws S seeds with
replacement from the S run, then n users with replacement from the n users
every seed was evaluated on, and takes the mean of the values at those (seed,
user) pairs,

    mean* = (1 / (S n)) sum_i sum_j a_i b_j x[i, j],

a_i (b_j) the times seed i (user j) was drawn. The percentile interval of
mean* over the replicates is the interval; the point estimate is the mean of
every (seed, user) value. Seeds are resampled before users because the seed
is the coarser unit (the one a reader wants to generalise over); users are
crossed with seeds (the same users under every seed), so a user's draw applies
to every drawn seed, keeping the user effects shared as they are in the data.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from polars_rankmetrics._frames import ArrowStream, Frame
from polars_rankmetrics.analysis._frames import complete_table, read_scores

__all__ = ["seeds_interval"]

_BATCH = 64  # replicates per matrix product: n x 64 counts in memory at a time


def seeds_interval(
    scores: Frame | ArrowStream,
    metrics: str | Sequence[str],
    *,
    system: str = "model",
    run: str = "seed",
    user: str = "user",
    ci: float = 0.95,
    n_resamples: int = 10_000,
    seed: int | None = 0,
) -> Frame:
    """Each system's mean with an interval over seeds and users (a two-way bootstrap).

    Parameters
    ----------
    scores
        One row per (system, run, user) with one numeric column per metric,
        e.g. ``evaluate(..., by=["model", "seed"], per_user=True)``. Any frame
        (Polars, pandas, Arrow: see ``evaluate``).
    metrics
        The metric column(s).
    system
        The column naming the system (model).
    run
        The column naming the run of a system (its training seed).
    user
        The column identifying the user.
    ci
        Confidence level in (0, 1).
    n_resamples
        Bootstrap replicates B (each draws seeds, then users).
    seed
        Seed of numpy's random generator (the same seed gives the same
        interval); ``None``: fresh randomness.

    Returns
    -------
    A frame of the kind given (as for ``evaluate``), one row per (system, metric): ``system``,
    ``metric``, ``n_runs`` (S), ``n_users`` (n: users with a value in every
    run of the system), ``mean`` (over every (run, user) value), ``ci_low``,
    ``ci_high`` (percentile interval of the two-way bootstrap),
    ``run_sd`` (standard deviation of the S runs' means, ddof 1: the spread
    due to the seed alone) and ``users_left_out`` (users without a value in
    some run, not used).

    Notes
    -----
    The replicate mean is (1 / (S n)) a' X b with a and b the multinomial
    counts of the drawn runs and users (X the runs x users matrix), computed
    as a matrix product in batches of replicates. With one run it is the
    percentile bootstrap over users; with values constant over users, the
    percentile bootstrap over the runs' means. With few runs (S < 5) the
    run-level resampling has few distinct outcomes and the interval is
    rough: say so when you report it. A user without a value in some run of
    a system is left out of that system's interval (counted in
    ``users_left_out``), as in ``compare``'s Tukey HSD.

    References
    ----------
    Davison & Hinkley, "Bootstrap methods and their application", 1997,
    section 3.8 (hierarchical and crossed data); Bouthillier et al.,
    "Accounting for variance in machine learning benchmarks", MLSys 2021
    (seeds as a source of variance).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankmetrics as prm
    >>> scores = pl.DataFrame({
    ...     "model": ["a"] * 6,
    ...     "seed": [1, 1, 1, 2, 2, 2],
    ...     "user": [1, 2, 3, 1, 2, 3],
    ...     "ndcg@10": [0.2, 0.4, 0.6, 0.3, 0.5, 0.7],
    ... })
    >>> out = prm.seeds_interval(scores, "ndcg@10", n_resamples=2000)
    >>> out.select("system", "n_runs", "n_users", "mean", "run_sd")
    shape: (1, 5)
    ┌────────┬────────┬─────────┬──────┬──────────┐
    │ system ┆ n_runs ┆ n_users ┆ mean ┆ run_sd   │
    │ ---    ┆ ---    ┆ ---     ┆ ---  ┆ ---      │
    │ str    ┆ i64    ┆ i64     ┆ f64  ┆ f64      │
    ╞════════╪════════╪═════════╪══════╪══════════╡
    │ a      ┆ 2      ┆ 3       ┆ 0.45 ┆ 0.070711 │
    └────────┴────────┴─────────┴──────┴──────────┘
    >>> bool(out["ci_low"][0] < 0.45 < out["ci_high"][0])
    True
    """
    frame, back = read_scores(scores, name="scores")
    labels = [metrics] if isinstance(metrics, str) else list(metrics)
    if not labels:
        raise ValueError("metrics is empty: name at least one metric column")
    for what, column in (("system", system), ("run", run), ("user", user)):
        if not isinstance(column, str):
            raise TypeError(f"{what} must be a column name, got {column!r}")
        if column not in frame.columns:
            raise ValueError(f"scores has no {what} column {column!r}; columns are {frame.columns}")
    if isinstance(ci, bool) or not isinstance(ci, (int, float)) or not 0 < ci < 1:
        raise ValueError(f"ci must be a confidence level in (0, 1), e.g. 0.95, got {ci!r}")
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples < 1:
        raise ValueError(f"n_resamples must be a positive integer, got {n_resamples!r}")
    rng = np.random.default_rng(seed)
    rows: list[dict[str, Any]] = []
    for name in frame.get_column(system).unique().sort().to_list():
        own = frame.filter(pl.col(system) == name)
        for label in labels:
            runs, matrix, left_out = complete_table(own, label, system=run, block=user, role="user")
            values = matrix.T  # runs x users
            low, high = _interval(values, ci, n_resamples, rng)
            run_means = values.mean(axis=1) if values.size else np.array([])
            rows.append(
                {
                    "system": name,
                    "metric": label,
                    "n_runs": len(runs),
                    "n_users": int(values.shape[1]),
                    "mean": float(values.mean()) if values.size else None,
                    "ci_low": low,
                    "ci_high": high,
                    "run_sd": float(run_means.std(ddof=1)) if len(runs) > 1 else None,
                    "users_left_out": left_out,
                }
            )
    schema: dict[str, pl.DataType | type[pl.DataType]] = {
        "system": frame.schema[system],
        "metric": pl.String,
        "n_runs": pl.Int64,
        "n_users": pl.Int64,
        "mean": pl.Float64,
        "ci_low": pl.Float64,
        "ci_high": pl.Float64,
        "run_sd": pl.Float64,
        "users_left_out": pl.Int64,
    }
    return back(pl.DataFrame(rows, schema=schema, orient="row"))


def _interval(
    values: np.ndarray[Any, np.dtype[np.float64]],
    ci: float,
    n_resamples: int,
    rng: np.random.Generator,
) -> tuple[float | None, float | None]:
    """Percentile interval of the crossed bootstrap's mean (runs, then users)."""
    n_runs, n_users = values.shape
    if n_users == 0 or (n_runs == 1 and n_users == 1):
        return None, None
    replicates = np.empty(n_resamples)
    uniform_runs = np.full(n_runs, 1.0 / n_runs)
    uniform_users = np.full(n_users, 1.0 / n_users)
    for start in range(0, n_resamples, _BATCH):
        size = min(_BATCH, n_resamples - start)
        runs = rng.multinomial(n_runs, uniform_runs, size=size).astype(np.float64)  # B x S
        users = rng.multinomial(n_users, uniform_users, size=size).astype(np.float64)  # B x n
        # row b: a_b' X b_b, as (a_b' X) . b_b
        replicates[start : start + size] = ((runs @ values) * users).sum(axis=1)
    replicates /= n_runs * n_users
    tail = (1.0 - ci) / 2.0
    low, high = np.quantile(replicates, [tail, 1.0 - tail])
    return float(low), float(high)
