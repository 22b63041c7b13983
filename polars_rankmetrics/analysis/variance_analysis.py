"""``anova``: two-way ANOVA without replication on the (user x system) table of one metric."""

from __future__ import annotations

import numpy as np
import polars as pl

from polars_rankmetrics._frames import ArrowStream, Frame
from polars_rankmetrics.analysis import _stats
from polars_rankmetrics.analysis._frames import complete_table, read_scores

__all__ = ["anova"]


def anova(
    scores: Frame | ArrowStream, metric: str, *, system: str = "model", user: str = "user"
) -> Frame:
    """Two-way ANOVA without replication: systems and users as the two factors.

    With x_us the score of system s for user u (n users, k systems, grand
    mean m, user means m_u, system means m_s):

    * SS_system = n sum_s (m_s - m)^2, df k - 1;
    * SS_user = k sum_u (m_u - m)^2, df n - 1;
    * SS_residual = sum_us (x_us - m_u - m_s + m)^2, df (k - 1)(n - 1);
    * MS = SS / df, F = MS_source / MS_residual, p = P(F_{df, df_res} >= F);
    * omega^2 for systems (Sakai 2014):
      (SS_system - (k - 1) MS_residual) / (SS_total + MS_residual).

    Parameters
    ----------
    scores
        One row per (system, user) with the metric's value, e.g.
        ``evaluate(..., by="model", per_user=True)``; a null marks a value that
        is not defined. Any frame (Polars, pandas, Arrow: see ``evaluate``).
    metric
        The metric column.
    system
        Column naming the system of each row.
    user
        Column identifying the user (the block).

    Returns
    -------
    A frame of the kind given (a LazyFrame comes back lazy; pandas in, pandas
    out; Arrow in, Polars DataFrame out), one row per
    source in the order ``system``, ``user``, ``residual``:

    ============ ======= ================================================
    column       dtype   meaning
    ============ ======= ================================================
    ``source``   String  ``"system"``, ``"user"`` or ``"residual"``
    ``df``       Int64   degrees of freedom
    ``sum_sq``   Float64 sum of squares
    ``mean_sq``  Float64 ``sum_sq / df``
    ``F``        Float64 ``mean_sq / MS_residual``; null on the residual row
    ``p_value``  Float64 P(F >= observed); null on the residual row
    ``omega_sq`` Float64 omega^2 on the system row; null elsewhere
    ============ ======= ================================================

    Notes
    -----
    Only the users with a value for every system count (the table must be
    complete); the others are left out. Needs at least 2 systems and 2 such
    users. A residual mean square of 0 (the scores are exactly additive,
    decided on the 12-significant-digit grid of :func:`compare_per_user`)
    makes F and its p undefined: null; so do equal system (or user) means on
    that grid make the sum of squares 0, and every value equal makes omega^2
    undefined: null. omega^2 may be negative when systems
    explain less than chance; it is reported as computed. The numbers are
    those of statsmodels' ``anova_lm(ols("value ~ C(system) + C(user)"))``.

    References: Sakai (2014), "Statistical reform in information retrieval?".

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankmetrics as prm
    >>> scores = pl.DataFrame({
    ...     "model": ["a"] * 4 + ["b"] * 4 + ["c"] * 4,
    ...     "user": [1, 2, 3, 4] * 3,
    ...     "ap": [0.2, 0.4, 0.1, 0.5, 0.3, 0.6, 0.1, 0.8, 0.2, 0.5, 0.3, 0.6],
    ... })
    >>> prm.anova(scores, "ap").with_columns(pl.col(pl.Float64).round(6))
    shape: (3, 7)
    ┌──────────┬─────┬──────────┬──────────┬────────┬──────────┬──────────┐
    │ source   ┆ df  ┆ sum_sq   ┆ mean_sq  ┆ F      ┆ p_value  ┆ omega_sq │
    │ ---      ┆ --- ┆ ---      ┆ ---      ┆ ---    ┆ ---      ┆ ---      │
    │ str      ┆ i64 ┆ f64      ┆ f64      ┆ f64    ┆ f64      ┆ f64      │
    ╞══════════╪═════╪══════════╪══════════╪════════╪══════════╪══════════╡
    │ system   ┆ 2   ┆ 0.046667 ┆ 0.023333 ┆ 2.625  ┆ 0.151704 ┆ 0.052953 │
    │ user     ┆ 3   ┆ 0.436667 ┆ 0.145556 ┆ 16.375 ┆ 0.002703 ┆ null     │
    │ residual ┆ 6   ┆ 0.053333 ┆ 0.008889 ┆ null   ┆ null     ┆ null     │
    └──────────┴─────┴──────────┴──────────┴────────┴──────────┴──────────┘

    By hand: system means 0.3, 0.45, 0.4 about the grand mean 0.383333 give
    SS_system = 4 (0.006944 + 0.004444 + 0.000278) = 0.046667; F = 0.023333 /
    0.008889 = 2.625 on (2, 6) degrees of freedom (statsmodels' ``anova_lm``
    gives the same table).
    """
    frame, back = read_scores(scores, name="scores")
    systems, table, _ = complete_table(frame, metric, system=system, block=user, role="user")
    n, k = table.shape
    if k < 2 or n < 2:
        raise ValueError(
            f"anova needs at least 2 systems and 2 users with a value for every system; "
            f"found {len(systems)} system(s) and {n} such user(s)"
        )
    (ss_system, ss_user, ss_residual), (df_system, df_user, df_residual) = _sums(table)
    ms_system, ms_user = ss_system / df_system, ss_user / df_user
    ms_residual = ss_residual / df_residual
    f_system, p_system = _f_test(ms_system, df_system, ms_residual, df_residual)
    f_user, p_user = _f_test(ms_user, df_user, ms_residual, df_residual)
    ss_total = ss_system + ss_user + ss_residual
    # every value equal: no variance to explain, omega^2 undefined (null), not 0 / 0
    spread = ss_total + ms_residual
    omega = (ss_system - df_system * ms_residual) / spread if spread > 0 else None
    result = pl.DataFrame(
        {
            "source": ["system", "user", "residual"],
            "df": [df_system, df_user, df_residual],
            "sum_sq": [ss_system, ss_user, ss_residual],
            "mean_sq": [ms_system, ms_user, ms_residual],
            "F": [f_system, f_user, None],
            "p_value": [p_system, p_user, None],
            "omega_sq": [omega, None, None],
        },
        schema={
            "source": pl.String, "df": pl.Int64, "sum_sq": pl.Float64, "mean_sq": pl.Float64,
            "F": pl.Float64, "p_value": pl.Float64, "omega_sq": pl.Float64,
        },
    )  # fmt: skip
    return back(result)


def _sums(table: np.ndarray) -> tuple[tuple[float, float, float], tuple[int, int, int]]:
    """The sums of squares (systems, users, residual) of the (user x system) table, and their df.

    Effects and residuals equal on paper (on the 12-digit grid of the table's
    scale) are exactly 0: every value 0.1 differs from its means by 1e-17, which
    would give omega^2 = 0.5 from rounding alone.
    """
    n, k = table.shape
    grand = float(table.mean())
    system_means = table.mean(axis=0)
    user_means = table.mean(axis=1)
    residuals = table - user_means[:, None] - system_means[None, :] + grand
    scale = float(np.abs(table).max())
    if not _stats.on_grid(residuals.ravel(), scale).any():
        residuals = np.zeros_like(residuals)  # additive on paper: no residual at all
    system_effects, user_effects = system_means - grand, user_means - grand
    if not _stats.on_grid(system_effects, scale).any():
        system_effects = np.zeros_like(system_effects)
    if not _stats.on_grid(user_effects, scale).any():
        user_effects = np.zeros_like(user_effects)
    squares = (
        float(n * np.sum(system_effects**2)),
        float(k * np.sum(user_effects**2)),
        float(np.sum(residuals**2)),
    )
    return squares, (k - 1, n - 1, (k - 1) * (n - 1))


def _f_test(
    ms: float, df: int, ms_residual: float, df_residual: int
) -> tuple[float | None, float | None]:
    """F = ms / ms_residual and its p-value; none without residual variance."""
    from scipy import stats  # noqa: PLC0415 - loaded on use: the import stays light

    if ms_residual == 0:
        return None, None
    f = ms / ms_residual
    return f, float(stats.f.sf(f, df, df_residual))
