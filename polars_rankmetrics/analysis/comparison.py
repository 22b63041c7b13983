"""``compare``: which system is better, by how much, and how sure we are.

:func:`compare` evaluates every system per user with
:func:`polars_rankmetrics.evaluate` (``per_user=True``) and hands the scores
to :func:`compare_per_user`, which also takes per-user scores users already
have. Per group of the other ``by`` columns and per metric, each system gets
its mean with an interval, and each comparison the mean paired difference
with its interval, the effect size, a paired test and a p-value corrected for
multiple comparisons. Definitions: ``shared/METRICS.md``, "Comparing systems".
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import numpy.typing as npt
import polars as pl

from polars_rankmetrics._frames import AnyFrame, ArrowStream, Frame, caller, collected
from polars_rankmetrics._measures import lookup
from polars_rankmetrics._measures._registry import Direction
from polars_rankmetrics._progress import stage
from polars_rankmetrics._sums import exact_mean, fixed_point
from polars_rankmetrics.analysis import _risk, _stats
from polars_rankmetrics.analysis._direction import (
    Directions,
    GivenDirection,
    directions,
    require,
    sign,
)
from polars_rankmetrics.analysis._stats import CiMethod, Correction, Hypothesis, Test
from polars_rankmetrics.evaluation import evaluate as _evaluate
from polars_rankmetrics.evaluation import parse_metric, parse_metrics
from polars_rankmetrics.options import (
    CompareOptions,
    StatisticsOptions,
    Unpack,
    read,
    read_statistics,
)

__all__ = ["RESULT_COLUMNS", "compare", "compare_per_user"]

# The columns after the ``by`` columns (with ``baseline=None`` a ``baseline``
# column follows ``system``). Charts and reports read exactly these names.
RESULT_COLUMNS = (
    "system",
    "metric",
    # which way is better for the metric (null: not declared): what wins and decisions read
    "direction",
    "n",
    "mean",
    "ci_low",
    "ci_high",
    "n_paired",
    "diff",
    "diff_ci_low",
    "diff_ci_high",
    "effect_size",
    "p_value",
    "p_adjusted",
    "significant",
    "wins",
    "ties",
    "losses",
    # how it was done, the same on every row: what a report's legend states
    "test",
    "hypothesis",
    "margin",
    "correction",
    "alpha",
    "ci",
    "ci_method",
    "n_resamples",
)
_RESERVED = {*RESULT_COLUMNS, "baseline"}
_FLOATS = ("mean", "ci_low", "ci_high", "diff", "diff_ci_low", "diff_ci_high", "effect_size")
_COUNTS = ("wins", "ties", "losses")
# with risk_alpha: the risk of each comparison and each system's GeoRisk (analysis/_risk.py)
_RISKS = ("urisk", "trisk", "georisk")


@dataclass(frozen=True)
class _Options:
    test: Test
    ci: float
    ci_method: CiMethod
    correction: Correction
    alpha: float
    n_resamples: int
    seed: int | None
    hypothesis: Hypothesis = "difference"
    margin: float = 0.0
    tolerance: float = 0.0
    direction: GivenDirection = None
    risk_alpha: float | None = None


def _check_number(value: object, name: str, example: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be a number, e.g. {example}, got {value!r}")
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{name} must be a finite number >= 0, e.g. {example}, got {value}")
    return float(value)


def _check_options(
    *,
    test: object,
    ci: object,
    ci_method: object,
    correction: object,
    alpha: object,
    n_resamples: object,
    seed: object,
    hypothesis: object = "difference",
    margin: object = None,
    tolerance: object = 0.0,
    direction: object = None,
    risk_alpha: object = None,
) -> _Options:
    for value, allowed, name in (
        (test, _stats.TESTS, "test"),
        (ci_method, _stats.CI_METHODS, "ci_method"),
        (correction, _stats.CORRECTIONS, "correction"),
        (hypothesis, _stats.HYPOTHESES, "hypothesis"),
    ):
        if value not in allowed:
            raise ValueError(f"unknown {name} {value!r}: use one of {list(allowed)}")
    for value, name in ((ci, "ci"), (alpha, "alpha")):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"{name} must be a number between 0 and 1, got {value!r}")
        if not 0 < value < 1:
            raise ValueError(f"{name} must be between 0 and 1 (exclusive), e.g. 0.95, got {value}")
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int):
        raise TypeError(f"n_resamples must be an integer, got {n_resamples!r}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1 (e.g. 10_000), got {n_resamples}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise TypeError(f"seed must be an integer or None, got {seed!r}")
    needs_margin = hypothesis in ("noninferiority", "equivalence")
    if needs_margin and margin is None:
        raise ValueError(
            f"hypothesis={hypothesis!r} needs margin=, the largest loss (in the metric's units) "
            "that still counts as no worse, e.g. margin=0.005"
        )
    if not needs_margin and margin is not None:
        raise ValueError(
            f"margin={margin!r} applies only to hypothesis='noninferiority' or 'equivalence', "
            f"not {hypothesis!r}"
        )
    checked_margin = 0.0 if margin is None else _check_number(margin, "margin", "0.005")
    if needs_margin and checked_margin == 0:
        raise ValueError(f"margin must be above 0 for hypothesis={hypothesis!r}, e.g. 0.005")
    if hypothesis != "difference" and test != "t":
        raise ValueError(
            f"hypothesis={hypothesis!r} is decided by the paired t-test: use test='t', not {test!r}"
        )
    return _Options(
        cast("Test", test),
        float(cast("float", ci)),
        cast("CiMethod", ci_method),
        cast("Correction", correction),
        float(cast("float", alpha)),
        n_resamples,
        seed,
        cast("Hypothesis", hypothesis),
        checked_margin,
        _check_number(tolerance, "tolerance", "0.001"),
        cast("GivenDirection", direction),
        None if risk_alpha is None else _check_number(risk_alpha, "risk_alpha", "1.0"),
    )


def _as_list(columns: str | Sequence[str] | None) -> list[str]:
    if columns is None:
        return []
    return [columns] if isinstance(columns, str) else list(columns)


def compare_per_user(
    scores: Frame | ArrowStream,
    metrics: str | Sequence[str] | None = None,
    *,
    system: str = "model",
    user: str = "user",
    by: str | Sequence[str] | None = None,
    baseline: Any = None,
    **options: Unpack[StatisticsOptions],
) -> Frame:
    """Compare systems from per-user scores: means, intervals, paired tests.

    Parameters
    ----------
    scores
        One row per (by..., system, user) with one numeric column per metric,
        e.g. ``evaluate(..., by="model", per_user=True)``; a null marks a
        metric not defined for that user. Any frame: Polars (eager or lazy),
        pandas, or Arrow (pyarrow, DuckDB; see :func:`polars_rankmetrics.evaluate`).
    metrics
        Metric columns to compare; ``None``: every numeric column besides
        ``system``, ``user`` and ``by``.
    system
        Column naming the system (model) of each row. The result calls it
        ``system`` whatever its name here.
    user
        Column identifying the user (query); systems are paired on it.
    by
        Other grouping columns (folds, segments): each group is its own
        family of comparisons.
    baseline
        The system every other one is compared with. ``None``: every pair of
        systems (see Returns). A list of systems: each of them against every
        other system (a pair of listed baselines once, against the one listed
        first), all in one family of comparisons per metric and group.
    **options
        How the systems are tested and summarised
        (:class:`polars_rankmetrics.options.StatisticsOptions`), each below.

    Other Parameters
    ----------------
    test : {"t", "randomization", "wilcoxon", "tukey_hsd"}, default "t"
        ``"t"`` (paired t-test, as ``scipy.stats.ttest_rel``), ``"randomization"`` (paired sign
        flip, ``n_resamples`` resamples, p = (b + 1) / (B + 1)), ``"wilcoxon"``
        (``scipy.stats.wilcoxon``, zero differences dropped) or ``"tukey_hsd"`` (randomized
        Tukey HSD, Carterette 2012: within each user the system labels are permuted,
        ``n_resamples`` replicates; per pair p = (b + 1) / (B + 1), b counting replicates whose
        largest |difference of two systems' means| is >= the pair's observed |difference|). All
        two-sided. ``"tukey_hsd"`` is family-adjusted by construction: ``p_value`` and
        ``p_adjusted`` are the same number and ``correction`` is not applied; it uses the users
        with a value for every system of the group.
    ci : float, default 0.95
        Confidence level of every interval, in (0, 1).
    ci_method : {"t", "bootstrap"}, default "t"
        ``"t"``: mean +- t_{(1+ci)/2, n-1} s / sqrt(n); ``"bootstrap"``: percentile bootstrap
        over users (``n_resamples``, ``seed``).
    correction : {"holm", "bonferroni", "bh", "none"}, default "holm"
        ``"holm"``, ``"bonferroni"``, ``"bh"`` (Benjamini-Hochberg) or ``"none"``, applied
        within each family: every comparison of one metric in one ``by`` group.
    alpha : float, default 0.05
        ``significant`` is ``p_adjusted < alpha``.
    n_resamples : int, default 10000
        Resamples of the randomization test, Tukey HSD and the bootstrap.
    seed : int or None, default 0
        Seed of numpy's random generator (randomization, Tukey HSD, bootstrap): the same seed
        gives the same numbers. ``None``: fresh randomness.
    hypothesis : str, default "difference"
        The decision the paired t-test makes on the improvement g = s (system - baseline), s =
        +1 for a metric where higher is better, -1 where lower is (``direction``), df n - 1:
        ``"difference"`` (H0 mean(d) = 0, two-sided: no direction needed); ``"superiority"`` (H0
        mean(g) <= 0, one-sided); ``"noninferiority"`` (H0 mean(g) <= -margin, one-sided p of t
        = (mean(g) + margin) / (sd(g) / sqrt(n))); ``"equivalence"`` (TOST, Schuirmann 1987: p =
        max of the one-sided p-values against -margin and +margin; no direction needed).
        ``significant`` then means H0 is rejected (the system is shown superior, non-inferior or
        equivalent). Only with ``test="t"``. A one-sided hypothesis on a metric without a
        direction is refused, naming it.
    margin : float or None, default None
        The margin m > 0 of ``"noninferiority"`` and ``"equivalence"``, in the metric's units
        (e.g. 0.005 of nDCG); refused with the other hypotheses.
    tolerance : float, default 0.0
        ``wins``, ``ties``, ``losses`` count users whose improvement g_u is > tolerance (the
        system better), within it, or < -tolerance (worse); 0: exact ties.
    direction : {"higher", "lower", "none"}, mapping or None, default None
        Which way is better: the metric's declared direction by default (the ``direction``
        column; ``mean_rank``, ``fallout``, ``gini``... are lower-is-better), or ``"higher"`` /
        ``"lower"`` for every metric, or a mapping per metric (a column that is not a metric
        string, or a descriptive measure such as ``arp``, declares none). Without one,
        ``wins``/``ties``/``losses`` are null and one-sided hypotheses are refused; ``diff`` is
        always system - baseline.
    risk_alpha : float or None, default None
        Risk-sensitive comparison (ndeval's and gdeval's ``-riskAlpha``): a number alpha >= 0
        adds ``urisk`` (URisk, the mean over paired users of the improvement g_u, each loss
        weighted by 1 + alpha; Dincer, Macdonald & Ounis 2014), ``trisk`` (TRisk = URisk / (sd /
        sqrt(n)), the paired t statistic of the weighted improvements: < -2 a significant risk,
        > 2 a significant gain) and ``georisk`` (GeoRisk, Dincer et al. 2016: the system's mean
        and its risk against every system of the group, over the users with a value for all of
        them; for metrics where higher is better and scores >= 0, else null) to the result.
        URisk and TRisk read the metric's direction (null without one). ``None``: no risk
        columns.

    Returns
    -------
    A frame of the kind given (a LazyFrame is computed, since the tests need
    every user's scores, and comes back lazy; pandas in, pandas out; Arrow in,
    Polars DataFrame out), one row per (by..., system,
    metric) in this schema:

    ======================= ========= ==========================================
    column                  dtype     meaning
    ======================= ========= ==========================================
    by...                   as given  the group
    ``system``              as given  the system (values of the ``system`` column)
    ``baseline``            as given  only with ``baseline=None``: the other system
                                      of the pair, null on a system's own row
    ``metric``              String    the metric column's name
    ``n``                   Int64     the system's users: those with a value
    ``mean``                Float64   mean of the system's values on those users
                                      (``evaluate``'s number for the system)
    ``ci_low``, ``ci_high`` Float64   interval of that mean
    ``n_paired``            Int64     users paired with the baseline: both have
                                      a value; ``diff`` and the test use them
    ``diff``                Float64   mean of d_u = system_u - baseline_u
    ``diff_ci_low/high``    Float64   interval of ``diff``
    ``effect_size``         Float64   d_z = mean(d) / sd(d) (Cohen's d, paired)
    ``p_value``             Float64   two-sided p-value of ``test``
    ``p_adjusted``          Float64   after ``correction`` within the family
    ``significant``         Boolean   ``p_adjusted < alpha``
    ``wins/ties/losses``    Int64     paired users with d_u > tolerance,
                                      |d_u| <= tolerance, d_u < -tolerance
    ``test``                String    how it was done, the same on every row (what
    ``hypothesis``          String    :func:`report`'s legend states): the test,
    ``margin``              Float64   the hypothesis and its margin (null unless
    ``correction``          String    non-inferiority or equivalence), the
    ``alpha``               Float64   correction (``"none"`` for Tukey HSD), alpha,
    ``ci``, ``ci_method``   Float64,  the interval's level and method, and the
                            String    resamples (null when no resampling was
    ``n_resamples``         Int64     used)
    ``urisk``, ``trisk``    Float64   only with ``risk_alpha``: URisk and TRisk of
                                      the comparison (null on a system's own row
                                      and without a direction)
    ``georisk``             Float64   only with ``risk_alpha``: the system's
                                      GeoRisk among the group's systems
    ``risk_alpha``          Float64   only with ``risk_alpha``: its value
    ======================= ========= ==========================================

    With a ``baseline``, its rows come first in each (group, metric) (``n_paired``,
    ``diff`` and the test columns are null there); every other system's row
    states the system's own mean and the difference on the paired users. With
    ``baseline=None``, each system first gets its own row (``baseline`` null,
    its own users), then each unordered pair one row, ``system`` before
    ``baseline`` in sorted order, ``diff = system - baseline``. With a list
    of baselines the ``baseline`` column is there too: each listed baseline's
    own row, then one row per comparison (``system`` against ``baseline``).
    Rows are ordered by group, then metric (as requested), then system.

    Notes
    -----
    Populations: ``mean`` and its interval are over the system's own users
    (``n``), so ``mean`` is always ``evaluate``'s number for the system. A
    comparison pairs the users for whom both systems' values are defined
    (non-null), ``n_paired`` = their number; users present for one system
    only are left out of the difference and its test. Under the default
    conventions every truth user counts for every system, so ``n`` and
    ``n_paired`` agree; they differ for a measure that leaves users out
    (``mean_rank`` without a relevant hit, the measures of the lists) or with
    ``users_without_recs="exclude"``. ``test="tukey_hsd"`` tests every
    system of the group at once, so it (and ``n_paired``, ``diff`` and its
    interval on its rows) uses the users with a value for every system of the
    group.

    Exactness: per-user values are rationals with small denominators, so
    differences equal on paper must compare equal, yet 0.3 - 0.1 and 0.2 - 0.0
    differ in the last bit of a float. Each d_u is therefore also rounded to
    12 significant digits of the comparison's scale (the largest |value| of
    the two systems on the paired users: a grid step of 1e-11 for metrics
    whose largest value is in [1, 10), 1e-12 for [0.1, 1)), and that grid
    decides every equality: Wilcoxon's ranks and dropped zeros, the
    randomization test, the zero-variance rule and the W/T/L counts; Tukey
    HSD compares its permuted sums on the grid as whole numbers (fewer digits
    when the users are so many that a sum would pass 2^53). When the grid
    finds d the same for every user, ``diff`` is that grid value and the
    zero-variance rule applies; otherwise ``diff``, its interval, the effect
    size and the t-test read d as computed (as ``scipy.stats.ttest_rel``).

    Edge cases, never a silent NaN:

    * n = 0: ``mean`` and everything after it null; n = 1: ``mean`` and
      ``diff`` are the single value, intervals, effect size and p-values null.
      Null p-values are left out of their family's correction.
    * d the same for every user (zero variance): interval [diff, diff],
      ``effect_size`` null (undefined); p = 1 when that difference is 0
      (identical systems; scipy gives NaN). A nonzero constant difference
      gives p = 0 with the t-test (scipy: t = +-inf and a warning), and
      scipy's Wilcoxon value: every sign the same, p = 2 / 2^n for n <= 13
      (its exact permutation test), its normal approximation above
      (randomization: about 2 / 2^n). With a one-sided ``hypothesis`` the
      t statistic is +-inf by the sign of mean(d) + margin (p = 0 or 1) and
      p = 1 when that is 0.
    * Randomization counts resample sums within 1e-9 * sum(|d|) of the
      observed one as ties (rounding), so exact ties of binary metrics count.

    References: Smucker, Allan & Carterette (2007), Sakai (2014), Fuhr (2017),
    Urbano, Lima & Hanjalic (2019).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankmetrics as prm
    >>> scores = pl.DataFrame({
    ...     "model": ["bm25"] * 4 + ["neural"] * 4,
    ...     "user": [1, 2, 3, 4] * 2,
    ...     "ap": [0.2, 0.4, 0.1, 0.5, 0.3, 0.6, 0.1, 0.8],
    ... })
    >>> cmp = prm.compare_per_user(scores, baseline="bm25")
    >>> cmp.select("system", "n", "mean", "diff", "effect_size", "p_value")
    shape: (2, 6)
    ┌────────┬─────┬──────┬──────┬─────────────┬──────────┐
    │ system ┆ n   ┆ mean ┆ diff ┆ effect_size ┆ p_value  │
    │ ---    ┆ --- ┆ ---  ┆ ---  ┆ ---         ┆ ---      │
    │ str    ┆ i64 ┆ f64  ┆ f64  ┆ f64         ┆ f64      │
    ╞════════╪═════╪══════╪══════╪═════════════╪══════════╡
    │ bm25   ┆ 4   ┆ 0.3  ┆ null ┆ null        ┆ null     │
    │ neural ┆ 4   ┆ 0.45 ┆ 0.15 ┆ 1.161895    ┆ 0.102728 │
    └────────┴─────┴──────┴──────┴─────────────┴──────────┘

    By hand: d = (0.1, 0.2, 0, 0.3), mean 0.15, sd = sqrt(0.05 / 3) = 0.129099,
    d_z = 0.15 / 0.129099 = 1.161895, t = d_z * sqrt(4) = 2.323790 on 3 degrees
    of freedom: p = 0.102728 (``scipy.stats.ttest_rel`` gives the same).
    """
    statistics, unknown = read_statistics(options)
    if unknown:
        read(unknown, function="compare_per_user")  # refuses them, with a suggestion
    checked = _check_options(**statistics)
    call = caller(scores, name="scores")
    result = _compare_frame(
        collected(call.frame), metrics, system=system, user=user, by=_as_list(by),
        baseline=baseline, options=checked,
    )  # fmt: skip
    return call.back(result)


def compare(
    recs: Frame | ArrowStream,
    truth: AnyFrame | None,
    metrics: str | Sequence[str],
    *,
    system: str = "model",
    baseline: Any = None,
    **options: Unpack[CompareOptions],
) -> Frame:
    """Evaluate several systems and compare them: means, intervals, paired tests.

    The per-user scores of :func:`polars_rankmetrics.evaluate` (``by`` plus
    ``system``, ``per_user=True``) go to :func:`compare_per_user`, which
    documents the result, the statistics and the edge cases.

    Parameters
    ----------
    recs
        Long-format recommendations of every system: one row per (system,
        user, item) with a ``rank`` or a ``score``. Any frame, as for
        :func:`polars_rankmetrics.evaluate`.
    truth
        One row per judged (user, item), shared by the systems; ``None`` when
        every metric describes the lists themselves (``novelty@10``...).
    metrics
        Metric strings as for ``evaluate`` (``"map@10"``, ``"ndcg@5,10"``,
        ``"novelty@10"``...). Refused, with the reason: every measure whose
        users are not combined by a mean, since its per-user values do not
        average to its number: pooled ratios (``pooled_recall``), geometric
        means (``gm_map``, ``gm_bpref``: test their floored logs with
        :func:`compare_per_user` on ``per_user_parts``' ``label|log``
        columns) and the measures of all the lists together (``coverage``,
        ``gini``, ``personalization``).
    system
        The recommendations' column naming the system; the result calls it
        ``system``.
    baseline
        The system every other one is compared with; ``None``: every pair.
    **options
        The statistics options of :func:`compare_per_user` (``test``, ``ci``,
        ``hypothesis``, ``direction``...: a metric string's measure declares its
        direction, ``fallout@10`` is lower-is-better), then every option of
        ``evaluate`` (:class:`polars_rankmetrics.EvaluateOptions`), forwarded to
        it: the column roles and the other grouping columns (``by``), the
        conventions (they decide each user's scores and which users count,
        hence who is paired) and the inputs of the measures of the lists (the
        training history, shared by the systems; the catalog).

    Returns
    -------
    The frame described in :func:`compare_per_user`, of the kind ``recs`` is.

    Notes
    -----
    Under the default conventions every user of the truth counts for every
    system (a system that recommended nothing to a user scores 0 there), so
    every comparison pairs all of them; with ``users_without_recs="exclude"``
    a comparison pairs the users both systems recommended to. A measure of the
    lists themselves counts the users with a list within the cut (calibration:
    those of them with interactions; ILD: lists of at least two items), so it
    pairs the users both systems recommended to.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankmetrics as prm
    >>> recs = pl.DataFrame({
    ...     "model": ["pop"] * 6 + ["knn"] * 6,
    ...     "user": [1, 1, 2, 2, 3, 3] * 2,
    ...     "item": ["a", "b", "a", "b", "a", "b", "c", "a", "d", "b", "e", "c"],
    ...     "rank": [1, 2] * 6,
    ... })
    >>> truth = pl.DataFrame({"user": [1, 2, 3], "item": ["c", "d", "e"]})
    >>> cmp = prm.compare(recs, truth, "mrr", baseline="pop")
    >>> cmp.select("system", "metric", "n", "mean", "diff", "p_value", "significant")
    shape: (2, 7)
    ┌────────┬────────┬─────┬──────┬──────┬─────────┬─────────────┐
    │ system ┆ metric ┆ n   ┆ mean ┆ diff ┆ p_value ┆ significant │
    │ ---    ┆ ---    ┆ --- ┆ ---  ┆ ---  ┆ ---     ┆ ---         │
    │ str    ┆ str    ┆ i64 ┆ f64  ┆ f64  ┆ f64     ┆ bool        │
    ╞════════╪════════╪═════╪══════╪══════╪═════════╪═════════════╡
    │ pop    ┆ mrr    ┆ 3   ┆ 0.0  ┆ null ┆ null    ┆ null        │
    │ knn    ┆ mrr    ┆ 3   ┆ 1.0  ┆ 1.0  ┆ 0.0     ┆ true        │
    └────────┴────────┴─────┴──────┴──────┴─────────┴─────────────┘

    knn finds every user's item first (RR = 1), pop never (RR = 0): d = 1 for
    every user, zero variance with a nonzero difference, p = 0.
    """
    given_statistics, rest = read_statistics(options)
    statistics = _check_options(**given_statistics)
    if not isinstance(system, str):
        raise TypeError(f"system must be a column name, got {system!r}")
    given = read(rest, function="compare")
    user = given["user"]
    others = _as_list(given["by"])
    if system in others:
        raise ValueError(f"system column {system!r} is also in by={others}: name it once")
    labels = [spec.label for spec in parse_metrics(metrics)]
    for label in labels:
        reason = lookup(parse_metric(label).name).unpaired_reason(label)
        if reason is not None:
            raise ValueError(
                f"compare cannot test {label!r}: {reason}; compute it per system with "
                f"evaluate(recs, truth, [{label!r}], by={system!r}, ...) instead"
            )
    call = caller(recs, name="recs")
    _require_system(call.frame.collect_schema(), system)
    truth_frame = call.read(truth, name="truth")
    kwargs: dict[str, Any] = {
        **call.read_options(given), "by": [*others, system], "per_user": True,
    }  # fmt: skip
    per_user = _evaluate(call.frame, truth_frame, labels, **kwargs)
    result = _compare_frame(
        collected(per_user), labels, system=system, user=user, by=others, baseline=baseline,
        options=statistics,
    )  # fmt: skip
    return call.back(result)


def _require_system(schema: pl.Schema, system: str) -> None:
    if system not in schema:
        raise ValueError(
            f"recs has no system column {system!r} (system=): name the column that says which "
            f"system each row comes from; columns are {schema.names()}"
        )


def _metric_columns(
    frame: pl.DataFrame, metrics: str | Sequence[str] | None, keys: Sequence[str]
) -> list[str]:
    schema = frame.schema
    if metrics is None:
        chosen = [name for name, dtype in schema.items() if name not in keys and dtype.is_numeric()]
        if not chosen:
            raise ValueError(
                f"scores has no numeric metric column besides {list(keys)}; columns are "
                f"{schema.names()}"
            )
        return chosen
    chosen = [metrics] if isinstance(metrics, str) else list(metrics)
    if not chosen:
        raise ValueError("metrics is empty: name at least one metric column")
    missing = [name for name in chosen if name not in schema]
    if missing:
        raise ValueError(
            f"metric column(s) {missing} not in the per-user scores; columns are {schema.names()}"
        )
    for name in chosen:
        if name in keys:
            raise ValueError(f"{name!r} is a key column (system, user or by), not a metric")
        if not schema[name].is_numeric():
            raise TypeError(f"metric column {name!r} must be numeric, got {schema[name]}")
    if len(set(chosen)) < len(chosen):
        raise ValueError(f"metrics {chosen} name a column twice")
    return chosen


def _check_scores(
    frame: pl.DataFrame, metrics: list[str], *, system: str, user: str, by: list[str]
) -> None:
    keys = [*by, system, user]
    for role, name in [*(("by", name) for name in by), ("system", system), ("user", user)]:
        if name not in frame.schema:
            raise ValueError(
                f"scores has no {role} column {name!r} ({role}=); columns are "
                f"{frame.schema.names()}"
            )
    clash = sorted(_RESERVED.intersection(by))
    if clash:
        raise ValueError(f"by column(s) {clash} clash with result columns: rename them first")
    for name in keys:
        nulls = frame.get_column(name).null_count()
        if nulls:
            raise ValueError(f"scores column {name!r} has {nulls} null value(s)")
    repeated = frame.select(keys).is_duplicated()
    if repeated.any():
        example = frame.filter(repeated).select(keys).row(0, named=True)
        raise ValueError(
            f"scores has {int(repeated.sum())} rows repeating a (by..., system, user) key, e.g. "
            f"{example}: give one row per user and system"
        )
    for name in metrics:
        column = frame.get_column(name)
        if column.dtype.is_float() and column.is_nan().any():
            raise ValueError(
                f"metric column {name!r} has {int(column.is_nan().sum())} NaN value(s): mark "
                "a value that is not defined with null"
            )
        if column.dtype.is_float() and column.is_infinite().any():
            # an infinite score makes every mean, interval and test of its system NaN or inf
            example = frame.filter(column.is_infinite()).select(keys).row(0, named=True)
            raise ValueError(
                f"metric column {name!r} has {int(column.is_infinite().sum())} infinite "
                f"value(s), e.g. at {example}: per-user scores must be finite"
            )


def _compare_frame(
    frame: pl.DataFrame,
    metrics: str | Sequence[str] | None,
    *,
    system: str,
    user: str,
    by: list[str],
    baseline: Any,
    options: _Options,
) -> pl.DataFrame:
    if not isinstance(system, str) or not isinstance(user, str):
        raise TypeError("system and user must be column names (strings)")
    _check_scores(frame, [], system=system, user=user, by=by)
    chosen = _metric_columns(frame, metrics, [*by, system, user])
    _check_scores(frame, chosen, system=system, user=user, by=by)
    declared = directions(chosen, options.direction)
    if options.hypothesis in ("superiority", "noninferiority"):
        for metric in chosen:
            require(metric, declared[metric], f"hypothesis={options.hypothesis!r}")
    systems = frame.get_column(system).unique().sort().to_list()
    if len(systems) < 2:
        raise ValueError(
            f"compare needs at least two systems in column {system!r}, found {systems}"
        )
    several = isinstance(baseline, (list, tuple))
    baselines = list(baseline) if several else [] if baseline is None else [baseline]
    if several and not baselines:
        raise ValueError("baseline is an empty list: name at least one system, or pass None")
    for name in baselines:
        if name not in systems:
            raise ValueError(
                f"baseline {name!r} is not one of the systems in column {system!r}: {systems}"
            )
    if len(set(baselines)) < len(baselines):
        raise ValueError(f"baseline {baselines} names a system twice")
    pairs = baseline is None or several
    if baseline is None:
        comparisons = [(a, b) for i, a in enumerate(systems) for b in systems[i + 1 :]]
        own = list(systems)
    else:
        # each listed baseline against every other system, a pair of baselines once
        comparisons = [
            (name, base)
            for position, base in enumerate(baselines)
            for name in systems
            if name != base and name not in baselines[:position]
        ]
        own = baselines
    index = {name: position for position, name in enumerate(systems)}
    coded = frame.with_columns(
        pl.col(system).replace_strict(index, return_dtype=pl.Int64).alias("__system"),
    )
    # every system's mean to the last bit as evaluate's: the same fixed-point sum, scaled
    # over the whole frame (analysis of one group would scale it differently)
    exact = (
        coded.with_columns(fixed_point(chosen))
        .group_by([*by, "__system"])
        .agg(exact_mean(name) for name in chosen)
    )
    groups = coded.sort(by).partition_by(by, maintain_order=True) if by else [coded]
    seeds = np.random.SeedSequence(options.seed).spawn(len(groups))
    rows: list[dict[str, Any]] = []
    resampled = options.test in ("randomization", "tukey_hsd") or options.ci_method == "bootstrap"
    what = (
        f"compare: {len(chosen)} metric(s) x {len(groups)} group(s), test={options.test!r}, "
        f"{options.n_resamples:,} resamples"
    )
    with stage(what) if resampled else contextlib.nullcontext():
        _all_group_rows(
            rows, groups, seeds, exact, chosen,
            by=by, user=user, own=own, comparisons=comparisons, index=index,
            options=options, pairs=pairs, directions=declared,
        )  # fmt: skip
    schema = _result_schema(frame, by, system=system, pairs=pairs, options=options)
    return pl.DataFrame(rows, schema=schema, orient="row").with_columns(**_how_done(options))


def _result_schema(
    frame: pl.DataFrame, by: list[str], *, system: str, pairs: bool, options: _Options
) -> dict[str, pl.DataType | type[pl.DataType]]:
    """The columns of the rows in order: group, systems, metric, summaries, tests, risks."""
    schema: dict[str, pl.DataType | type[pl.DataType]] = {name: frame.schema[name] for name in by}
    schema["system"] = frame.schema[system]
    if pairs:
        schema["baseline"] = frame.schema[system]
    schema.update({"metric": pl.String, "direction": pl.String, "n": pl.Int64})
    for name in RESULT_COLUMNS[RESULT_COLUMNS.index("mean") : RESULT_COLUMNS.index("p_value")]:
        schema[name] = pl.Float64 if name in _FLOATS else pl.Int64
    schema.update({"p_value": pl.Float64, "p_adjusted": pl.Float64, "significant": pl.Boolean})
    schema.update(dict.fromkeys(_COUNTS, pl.Int64))
    if options.risk_alpha is not None:
        schema.update(dict.fromkeys(_RISKS, pl.Float64))
    return schema


def _how_done(options: _Options) -> dict[str, pl.Expr]:
    """The columns that state how the comparison was made, the same on every row."""
    resampled = options.test in ("randomization", "tukey_hsd") or options.ci_method == "bootstrap"
    how = {
        "test": pl.lit(options.test, dtype=pl.String),
        "hypothesis": pl.lit(options.hypothesis, dtype=pl.String),
        # the margin of a non-inferiority or equivalence decision, else null
        "margin": pl.lit(options.margin if options.margin else None, dtype=pl.Float64),
        # Tukey HSD is family-adjusted by construction: no correction is applied
        "correction": pl.lit("none" if options.test == "tukey_hsd" else options.correction),
        "alpha": pl.lit(options.alpha, dtype=pl.Float64),
        "ci": pl.lit(options.ci, dtype=pl.Float64),
        "ci_method": pl.lit(options.ci_method, dtype=pl.String),
        # resamples of the randomization test, Tukey HSD or the bootstrap; null when unused
        "n_resamples": pl.lit(options.n_resamples if resampled else None, dtype=pl.Int64),
    }
    if options.risk_alpha is not None:
        how["risk_alpha"] = pl.lit(options.risk_alpha, dtype=pl.Float64)
    return how


def _all_group_rows(
    rows: list[dict[str, Any]],
    groups: list[pl.DataFrame],
    seeds: list[np.random.SeedSequence],
    exact: pl.DataFrame,
    chosen: list[str],
    *,
    by: list[str],
    user: str,
    own: list[Any],
    comparisons: list[tuple[Any, Any]],
    index: dict[Any, int],
    options: _Options,
    pairs: bool,
    directions: Directions,
) -> None:
    """Each group's rows, appended to ``rows``: its own family of comparisons."""
    for group, seed in zip(groups, seeds, strict=True):
        keys = {name: group.get_column(name)[0] for name in by}
        means = exact.filter(*(pl.col(name) == value for name, value in keys.items()))
        rng = np.random.default_rng(seed)
        rows.extend(
            _group_rows(
                group,
                chosen,
                means={
                    (row["__system"], name): row[name]
                    for row in means.iter_rows(named=True)
                    for name in chosen
                },
                user=user,
                own=own,
                comparisons=comparisons,
                index=index,
                keys=keys,
                options=options,
                rng=rng,
                pairs=pairs,
                directions=directions,
            )
        )


def _group_rows(
    group: pl.DataFrame,
    metrics: list[str],
    *,
    means: dict[tuple[int, str], float | None],
    user: str,
    own: list[Any],
    comparisons: list[tuple[Any, Any]],
    index: dict[Any, int],
    keys: dict[str, Any],
    options: _Options,
    rng: np.random.Generator,
    pairs: bool,
    directions: Directions,
) -> list[dict[str, Any]]:
    """Rows of one ``by`` group: per metric, each system's own row, then each comparison."""
    user_index = group.get_column(user).rank("dense").cast(pl.Int64).to_numpy() - 1
    system_index = group.get_column("__system").to_numpy()
    n_users = int(user_index.max()) + 1 if user_index.size else 0
    per_metric: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]] = []
    differences: list[_stats.FloatArray] = []
    counts: list[int] = []
    for metric in metrics:
        values = group.get_column(metric).cast(pl.Float64).fill_null(math.nan).to_numpy()
        # users x systems, NaN where the system has no value for the user
        matrix = np.full((n_users, len(index)), math.nan)
        matrix[user_index, system_index] = values
        own_rows = []
        for name in own:
            summary = _own_summary(
                matrix, index[name], metric, means=means, options=options, rng=rng
            )
            own_rows.append(
                _row(keys, name, None, metric, summary, pairs=pairs, direction=directions[metric])
            )
        present = ~np.all(np.isnan(matrix), axis=0)
        # Tukey HSD: the users with a value for every system of the group (one family)
        complete = ~np.any(np.isnan(matrix[:, present]), axis=1)
        comparison_rows = []
        for name, other in comparisons:
            a, b = matrix[:, index[name]], matrix[:, index[other]]
            paired = ~np.isnan(a) & ~np.isnan(b)
            if options.test == "tukey_hsd":
                paired &= complete
            raw = a[paired] - b[paired]
            scale = float(np.abs(np.concatenate([a[paired], b[paired]])).max(initial=0.0))
            # differences equal on paper must be equal: compare them on the decimal grid
            d = _stats.on_grid(raw, scale)
            # the system's own mean (evaluate's number); the difference is over the pairs
            summary = _own_summary(
                matrix, index[name], metric, means=means, options=options, rng=rng
            )
            row = _row(
                keys, name, other, metric, summary, pairs=pairs, direction=directions[metric]
            )
            row.update(_difference(raw, d, options, rng, improves=sign(directions[metric])))
            if options.risk_alpha is not None:
                improvement = d if _stats.constant(d) else raw
                row.update(_risks(improvement, options.risk_alpha, sign(directions[metric])))
            comparison_rows.append(row)
            full = np.zeros(n_users)
            full[paired] = d
            differences.append(full)
            counts.append(int(d.size))
        if options.test == "tukey_hsd":
            _tukey_hsd(
                comparison_rows, matrix[complete], comparisons=comparisons, index=index,
                options=options, rng=rng,
            )  # fmt: skip
        if options.risk_alpha is not None:
            _with_georisk(
                [*own_rows, *comparison_rows], matrix[complete], present, index,
                alpha=options.risk_alpha, direction=directions[metric],
            )  # fmt: skip
        per_metric.append((own_rows, comparison_rows))
    if options.test == "randomization" and differences:
        p_values = _stats.randomization_p_values(
            np.column_stack(differences), counts, n_resamples=options.n_resamples, rng=rng
        )
        flat = [row for _, comparison_rows in per_metric for row in comparison_rows]
        for row, p in zip(flat, p_values, strict=True):
            row["p_value"] = p
    return _decided(per_metric, options)


def _decided(
    per_metric: list[tuple[list[dict[str, Any]], list[dict[str, Any]]]], options: _Options
) -> list[dict[str, Any]]:
    """The rows in order, each comparison's p-value adjusted within its family and decided."""
    rows: list[dict[str, Any]] = []
    for own_rows, comparison_rows in per_metric:
        if options.test == "tukey_hsd":
            adjusted = [row["p_value"] for row in comparison_rows]
        else:
            adjusted = _stats.adjust(
                [row["p_value"] for row in comparison_rows], options.correction
            )
        for row, p in zip(comparison_rows, adjusted, strict=True):
            row["p_adjusted"] = p
            row["significant"] = None if p is None else bool(p < options.alpha)
        rows.extend(own_rows)
        rows.extend(comparison_rows)
    return rows


def _risks(improvement: _stats.FloatArray, alpha: float, improves: float | None) -> dict[str, Any]:
    """URisk and TRisk of one comparison from d_u on the paired users (null without direction)."""
    if improves is None:
        return {"urisk": None, "trisk": None}
    gain = improves * improvement
    return {"urisk": _risk.urisk(gain, alpha), "trisk": _risk.trisk(gain, alpha)}


def _with_georisk(
    rows: list[dict[str, Any]],
    complete: _stats.FloatArray,
    present: npt.NDArray[np.bool_],
    index: dict[Any, int],
    *,
    alpha: float,
    direction: Direction | None,
) -> None:
    """Each row's ``georisk``: its system's among the systems with values in the group.

    Over the users with a value for every such system; null where the metric is
    not higher-is-better or has a negative score (GeoRisk reads effectiveness).
    """
    block = complete[:, present]
    values: dict[int, float | None] = {}
    if direction == "higher" and not (block < 0.0).any():
        values = dict(
            zip(np.flatnonzero(present).tolist(), _risk.georisk(block, alpha), strict=True)
        )
    for row in rows:
        row["georisk"] = values.get(index[row["system"]])


def _tukey_hsd(
    rows: list[dict[str, Any]],
    complete: _stats.FloatArray,
    *,
    comparisons: list[tuple[Any, Any]],
    index: dict[Any, int],
    options: _Options,
    rng: np.random.Generator,
) -> None:
    """Fill each comparison row's p-value with its randomized Tukey HSD p (one family)."""
    present = [
        column for column in range(complete.shape[1]) if not np.isnan(complete[:, column]).all()
    ]
    if complete.shape[0] < 2 or len(present) < 2:
        for row in rows:
            row["p_value"] = None
        return
    position = {column: place for place, column in enumerate(present)}
    tested = [
        (row, (position[index[name]], position[index[other]]))
        for row, (name, other) in zip(rows, comparisons, strict=True)
        if index[name] in position and index[other] in position
    ]
    for row in rows:
        row["p_value"] = None  # a system without values in this group: no test
    p_values = _stats.tukey_hsd_p_values(
        complete[:, present], [pair for _, pair in tested], n_resamples=options.n_resamples,
        rng=rng,
    )  # fmt: skip
    for (row, _), p in zip(tested, p_values, strict=True):
        row["p_value"] = p


def _own_summary(
    matrix: _stats.FloatArray,
    column: int,
    metric: str,
    *,
    means: dict[tuple[int, str], float | None],
    options: _Options,
    rng: np.random.Generator,
) -> _stats.Summary:
    """A system's own users: their number, their exact mean (as evaluate's) and its interval."""
    values = matrix[:, column]
    summary = _stats.summarize(
        values[~np.isnan(values)], options.ci, method=options.ci_method,
        n_resamples=options.n_resamples, rng=rng,
    )  # fmt: skip
    if summary.mean is None:
        return summary
    return dataclasses.replace(summary, mean=means[column, metric])


def _row(
    keys: dict[str, Any],
    name: Any,
    other: Any,
    metric: str,
    summary: _stats.Summary,
    *,
    pairs: bool,
    direction: Direction | None,
) -> dict[str, Any]:
    row: dict[str, Any] = dict(keys)
    row["system"] = name
    if pairs:
        row["baseline"] = other
    row.update(
        {
            "metric": metric,
            "direction": direction,
            "n": summary.n,
            "mean": summary.mean,
            "ci_low": summary.low,
            "ci_high": summary.high,
        }
    )
    row.update(
        dict.fromkeys(
            (
                "n_paired",
                "diff",
                "diff_ci_low",
                "diff_ci_high",
                "effect_size",
                "p_value",
                "p_adjusted",
                "significant",
                *_COUNTS,
            )
        )
    )
    return row


def _difference(
    raw: _stats.FloatArray,
    grid: _stats.FloatArray,
    options: _Options,
    rng: np.random.Generator,
    *,
    improves: float | None,
) -> dict[str, Any]:
    """diff, its interval, the effect size and (t, Wilcoxon) the p-value of one comparison.

    ``grid`` is ``raw`` on the decimal grid: it decides ties (Wilcoxon's ranks, W/T/L)
    and zero variance; the moments read ``raw`` unless the grid finds d constant.
    ``improves``: +1 where higher is better, -1 where lower is (the one-sided
    decisions and W/T/L read the improvement ``improves * d``), ``None``
    where no direction is declared (W/T/L null; one-sided hypotheses were
    refused before).
    """
    d = grid if _stats.constant(grid) else raw
    summary = _stats.summarize(
        d, options.ci, method=options.ci_method, n_resamples=options.n_resamples, rng=rng
    )
    p_value = None
    if options.test == "t":
        # two-sided and equivalence decisions are symmetric: no direction needed there
        gain = d if improves is None else improves * d
        p_value = _stats.decision_p_value(gain, options.hypothesis, options.margin)
    elif options.test == "wilcoxon":
        p_value = _stats.paired_p_value(grid, options.test)
    wins: int | None = None
    ties: int | None = None
    losses: int | None = None
    if improves is not None:
        wins, ties, losses = _stats.wins_ties_losses(improves * grid, options.tolerance)
    return {
        "n_paired": int(d.size),
        "diff": summary.mean,
        "diff_ci_low": summary.low,
        "diff_ci_high": summary.high,
        "effect_size": _stats.effect_size(d),
        "p_value": p_value,
        "wins": wins,
        "ties": ties,
        "losses": losses,
    }
