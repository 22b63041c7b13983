"""``curves``: metric@k for every k in one pass over the ranked lists.

A metric@k of one user changes with k only where something happens in the
list: a relevant item is found (hits, the AP sum, the first hit), a graded item
adds to the DCG, the ideal list adds to the ideal DCG; the rest is a divisor
that depends on k alone (precision: k) or on k and m_u (F1: k + m_u, AP:
min(m_u, k)). So every metric is X_u(k) / divisor(k, m_u) with X_u a step
function of k, and its sum over users at every k is a running sum over
positions of the steps of X (and of X^2, for intervals), per group of users
with the same m_u where the divisor needs it. The work is one sort of the
events (found items and ideal positions) and a few cumulative sums; no
metric is evaluated once per k.

Which users count, and whether a metric is defined for them, comes from
:func:`polars_rankmetrics.evaluate` at the largest k (the same for every k:
it depends on the users' truth and recommendations, not on the cutoff).

The measures of the lists themselves (novelty, ILD, coverage, ...) are drawn
by :mod:`polars_rankmetrics.analysis._list_curves`, by the same running sums
over positions; evaluate at the largest k checks their inputs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any, TypeVar, cast

import numpy as np
import polars as pl

from polars_rankmetrics._pipeline.inputs import RecsSpec
from polars_rankmetrics._pipeline.rank_cut import lengths_in_rank_order, with_positions
from polars_rankmetrics.analysis._list_curves import (
    GROUP_MEASURES,
    POS,
    USER_MEASURES,
    ListCurve,
    list_curves,
)
from polars_rankmetrics.conventions import (
    Conventions,
    Preset,
    UsersWithoutRecs,
    UsersWithoutTruth,
)
from polars_rankmetrics.conventions import resolve as resolve_conventions
from polars_rankmetrics.evaluate import evaluate as _evaluate
from polars_rankmetrics.evaluate import parse_metric
from polars_rankmetrics.metrics import Denominator, Gain
from polars_rankmetrics.ranking import Duplicates, Ties, positions

__all__ = ["CURVE_METRICS", "curves"]

FrameT = TypeVar("FrameT")

#: Metric names ``curves`` draws (aliases of ``evaluate`` such as ``"ap"`` work too).
CURVE_METRICS = (
    "precision",
    "recall",
    "f1",
    "hit_rate",
    "map",
    "mrr",
    "ndcg",
    "dcg",
    "pooled_recall",
    # the measures of the lists themselves (interactions=, items=, category=)
    "novelty",
    "arp",
    "long_tail",
    "ild",
    "calibration",
    "coverage",
    "gini",
    "personalization",
)
_LISTS = frozenset(USER_MEASURES) | frozenset(GROUP_MEASURES)

# The conventions a preset sets that the formulas below read (the rest decide which
# users count, and come from evaluate itself); tests compare with evaluate per preset.

_POS = "__pos"
# the metric of evaluate whose nulls say who counts ("" = every evaluated user)
_PATTERN = {"ndcg": "ndcg", "dcg": "", "pooled_recall": ""}
_M = "__m"
_K = "k"


def _check_ks(k: int | Iterable[int]) -> list[int]:
    values = [k] if isinstance(k, int) else list(k)
    if not values:
        raise ValueError("k is empty: give the cutoffs, e.g. k=range(1, 101)")
    for value in values:
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"every k must be an integer, got {value!r}")
        if value < 1:
            raise ValueError(f"every k must be at least 1, got {value}")
    return sorted(set(values))


def _check_metrics(metrics: str | Sequence[str]) -> list[tuple[str, str]]:
    """(label as given, canonical name) per requested curve."""
    labels = [metrics] if isinstance(metrics, str) else list(metrics)
    if not labels:
        raise ValueError(f"metrics is empty: ask for at least one of {list(CURVE_METRICS)}")
    chosen = []
    for label in labels:
        if not isinstance(label, str):
            raise TypeError(f"a metric must be a name like 'ndcg', got {label!r}")
        if "@" in label:
            raise ValueError(
                f"curves takes metric names without a cutoff ({label!r}): the cutoffs are "
                f"k=..., e.g. curves(recs, truth, ['ndcg'], k=range(1, 101))"
            )
        try:
            spec = parse_metric(f"{label}@1")
        except ValueError:
            parse_metric(label)  # an unknown name: evaluate's message, with a suggestion
            spec = None
        if spec is None or spec.name not in CURVE_METRICS:
            raise ValueError(
                f"curves cannot draw {label!r}: it has no cutoff to vary; "
                f"curves supports {list(CURVE_METRICS)}"
            )
        chosen.append((label, spec.name))
    names = [label for label, _ in chosen]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"metric(s) {repeated} requested twice")
    return chosen


def curves(
    recs: FrameT,
    truth: Any,
    metrics: str | Sequence[str],
    *,
    k: int | Iterable[int] = range(1, 101),
    user: str = "user",
    item: str = "item",
    rank: str = "rank",
    score: str | None = None,
    relevance: str | None = None,
    by: str | Sequence[str] | None = None,
    ci: float | None = None,
    denominator: Denominator | None = None,
    gain: Gain | None = None,
    ties: Ties | None = None,
    relevance_level: float | None = None,
    users_without_recs: UsersWithoutRecs | None = None,
    users_without_truth: UsersWithoutTruth | None = None,
    duplicates: Duplicates | None = None,
    conventions: Preset | Conventions = "default",
    interactions: Any = None,
    items: Any = None,
    category: str | None = None,
) -> FrameT:
    """Metric@k curves: the mean of each metric at every cutoff k, in one pass.

    Parameters
    ----------
    recs, truth
        As for :func:`polars_rankmetrics.evaluate` (Polars eager or lazy, or
        pandas). ``truth`` may be ``None`` when every metric describes the
        lists themselves (novelty, ...).
    metrics
        Names without a cutoff: ``precision``, ``recall``, ``f1``,
        ``hit_rate`` (``hits``), ``map`` (``ap``), ``mrr`` (``rr``), ``ndcg``,
        ``dcg``, ``pooled_recall``, and the measures of the lists themselves
        ``novelty``, ``arp``, ``long_tail``, ``ild``, ``calibration``,
        ``coverage``, ``gini``, ``personalization`` (parameters in the name:
        ``"long_tail(head_share=0.1)"``). Metrics without a cutoff to vary
        (``r_precision``, ``mean_rank``) are refused.
    k
        The cutoffs, e.g. ``range(1, 101)`` (the default) or ``[5, 10, 20]``.
    user, item, rank, score, relevance, by
        Column roles and groups, as for ``evaluate``.
    ci
        ``None`` (default) or a confidence level in (0, 1): adds ``ci_low``
        and ``ci_high``, the t-interval of the mean over users
        (mean +- t_{(1+ci)/2, n-1} s / sqrt(n)); null for ``pooled_recall``,
        ``coverage``, ``gini`` and ``personalization`` (not means over
        users) and where fewer than 2 users count.
    denominator, gain, ties, relevance_level, users_without_recs, \
users_without_truth, duplicates, conventions
        The conventions of ``evaluate`` (``None``: the preset's value).
    interactions, items, category
        The inputs of the measures of the lists themselves, as for
        ``evaluate``: the training history (novelty, arp, long_tail,
        calibration), the item catalog (coverage, gini, ild, calibration)
        and its category column (ild, calibration).

    Returns
    -------
    A long frame of the kind ``recs`` is (lazy stays lazy): the ``by``
    columns, ``metric`` (String, the name as given), ``k`` (Int64) and
    ``value`` (Float64, equal to ``evaluate(..., [f"{metric}@{k}"])``), plus
    ``ci_low`` and ``ci_high`` (Float64) with ``ci``; sorted by group, metric
    (as requested) and k.

    Notes
    -----
    Every convention of ``evaluate`` applies unchanged (AP denominator,
    gains, ties from scores, graded relevance and its level, which users
    count). Each metric is a step function X_u(k) over a divisor (precision:
    k; F1: k + m_u with X = 2 hits; AP with ``"min_k"``: min(m_u, k) with X the
    sum of P@i over found items); the sums over users at every k are running
    sums of the steps of X, grouped by m_u where the divisor reads it, and the
    ideal DCG is a running sum over the ideal positions.

    The per-user measures of the lists (novelty, arp, long_tail, ild,
    calibration) change only at the ranks a list holds: each list gets its
    value at each of its ranks from running sums over the list (the items'
    terms over k_u; ILD's pair similarities over k_u (k_u - 1) / 2, null
    below two items; calibration's per-category counts of q), and the sums
    over users are running sums of that value's steps; a user counts from
    the first k where its value is defined, as in ``evaluate`` at that k.
    Coverage counts an item from the first k a list shows it,
    personalization follows the exposure counts as they grow, Gini sorts
    the exposures at each requested k; these three have no interval. No
    pair of users is ever built.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankmetrics as prm
    >>> recs = pl.DataFrame({
    ...     "user": [1, 1, 1, 2, 2, 2],
    ...     "item": ["a", "b", "c", "a", "b", "c"],
    ...     "rank": [1, 2, 3] * 2,
    ... })
    >>> truth = pl.DataFrame({"user": [1, 2, 2], "item": ["b", "a", "c"]})
    >>> prm.curves(recs, truth, ["recall", "mrr"], k=[1, 2, 3])
    shape: (6, 3)
    ┌────────┬─────┬───────┐
    │ metric ┆ k   ┆ value │
    │ ---    ┆ --- ┆ ---   │
    │ str    ┆ i64 ┆ f64   │
    ╞════════╪═════╪═══════╡
    │ recall ┆ 1   ┆ 0.25  │
    │ recall ┆ 2   ┆ 0.75  │
    │ recall ┆ 3   ┆ 1.0   │
    │ mrr    ┆ 1   ┆ 0.5   │
    │ mrr    ┆ 2   ┆ 0.75  │
    │ mrr    ┆ 3   ┆ 0.75  │
    └────────┴─────┴───────┘

    User 1 finds its one item at 2, user 2 its two items at 1 and 3: recall@1
    = (0 + 1/2) / 2, recall@2 = (1 + 1/2) / 2, recall@3 = 1; RR is 0 then 1/2
    for user 1 and 1 for user 2: mrr@1 = 1/2, mrr@2 = (1/2 + 1) / 2.

    The measures of the lists themselves need no truth:

    >>> train = pl.DataFrame({"user": [1, 2, 3, 3], "item": ["a", "a", "a", "c"]})
    >>> catalog = pl.DataFrame({"item": ["a", "b", "c"], "genre": ["x", "x", "y"]})
    >>> prm.curves(
    ...     recs, None, ["ild", "coverage"], k=[1, 2, 3], interactions=train,
    ...     items=catalog, category="genre",
    ... )
    shape: (6, 3)
    ┌──────────┬─────┬──────────┐
    │ metric   ┆ k   ┆ value    │
    │ ---      ┆ --- ┆ ---      │
    │ str      ┆ i64 ┆ f64      │
    ╞══════════╪═════╪══════════╡
    │ ild      ┆ 1   ┆ null     │
    │ ild      ┆ 2   ┆ 0.0      │
    │ ild      ┆ 3   ┆ 0.666667 │
    │ coverage ┆ 1   ┆ 0.333333 │
    │ coverage ┆ 2   ┆ 0.666667 │
    │ coverage ┆ 3   ┆ 1.0      │
    └──────────┴─────┴──────────┘

    Both lists are a, b, c (genres x, x, y): ILD needs two items; at k = 2
    a and b share their genre (distance 0), at k = 3 two of the three pairs
    differ: 2/3. Coverage: one, two, then all three catalog items.
    """
    chosen = _check_metrics(metrics)
    ks = _check_ks(k)
    judged = [label for label, name in chosen if name not in _LISTS]
    if truth is None and judged:
        raise ValueError(
            f"curves cannot draw {judged} without truth: pass truth= (it may be None only "
            f"when every metric describes the lists themselves: {sorted(_LISTS)})"
        )
    if ci is not None and (
        isinstance(ci, bool) or not isinstance(ci, (int, float)) or not 0 < ci < 1
    ):
        raise ValueError(f"ci must be None or a number between 0 and 1, e.g. 0.95, got {ci!r}")
    resolved = resolve_conventions(
        conventions,
        denominator=denominator,
        gain=gain,
        ties=ties,
        relevance_level=relevance_level,
        users_without_recs=users_without_recs,
        users_without_truth=users_without_truth,
        duplicates=duplicates,
    )
    _check_supported(resolved)
    roles: dict[str, Any] = {
        "user": user, "item": item, "by": by,
        "interactions": interactions, "items": items, "category": category,
    }  # fmt: skip
    # the counted users come from evaluate, under exactly these resolved conventions
    conv: dict[str, Any] = {
        "conventions": resolved,
        "relevance_level": resolved.relevance_level,
        "duplicates": resolved.duplicates,
        "ties": resolved.ties,
    }
    resolved_denominator: str = resolved.denominator
    resolved_gain = cast("str", resolved.gain)  # a gain table is refused by _check_supported
    if type(recs).__module__.split(".")[0] == "pandas":
        from polars_rankmetrics import _arrow  # noqa: PLC0415 - pandas is optional

        frame = _arrow.to_polars(recs, name="recs")
        truth_frame = truth
        if truth is not None and not isinstance(truth, (pl.DataFrame, pl.LazyFrame)):
            truth_frame = _arrow.to_polars(truth, name="truth")
        result = _curves(
            frame, truth_frame, chosen, ks=ks, roles=roles, rank=rank, score=score,
            relevance_column=relevance, conv=conv, denominator=resolved_denominator,
            gain=resolved_gain, ci=ci,
        ).collect()  # fmt: skip
        return cast("FrameT", _arrow.to_pandas(result, [(cast("Any", recs), frame.schema)]))
    if not isinstance(recs, (pl.DataFrame, pl.LazyFrame)):
        raise TypeError(
            f"recs must be a Polars or pandas DataFrame (or a LazyFrame), got {type(recs).__name__}"
        )
    plan = _curves(
        recs, truth, chosen, ks=ks, roles=roles, rank=rank, score=score,
        relevance_column=relevance, conv=conv, denominator=resolved_denominator,
        gain=resolved_gain, ci=ci,
    )  # fmt: skip
    return cast("FrameT", plan if isinstance(recs, pl.LazyFrame) else plan.collect())


def _check_supported(conventions: Conventions) -> None:
    """Refuse the conventions whose running sums the curves do not implement (never a guess)."""
    unsupported = {
        "ties": ("average",),
        "denominator": ("k",),
        "ideal": ("k",),
        "unjudged": ("remove",),
        "nonpositive_scores": ("drop",),
        "user_sets": ("strict",),
    }
    for name, values in unsupported.items():
        if getattr(conventions, name) in values:
            raise ValueError(
                f"curves does not implement {name}={getattr(conventions, name)!r}: call "
                "evaluate with one metric string per cutoff instead (e.g. 'ndcg@5,10,20')"
            )
    if not isinstance(conventions.gain, str):
        raise ValueError(
            "curves does not implement a gain table (gain={grade: gain}): call evaluate with "
            "one metric string per cutoff instead (e.g. 'ndcg@5,10,20')"
        )


def _counted(label: str) -> pl.Expr:
    return pl.col(label).is_not_null() if label else pl.lit(value=True)


def _gain(grade: pl.Expr, kind: str) -> pl.Expr:
    grade = grade.cast(pl.Float64).clip(lower_bound=0.0)
    return grade if kind == "linear" else pl.lit(2.0).pow(grade) - 1.0


def _discount(position: pl.Expr) -> pl.Expr:
    return (position.cast(pl.Float64) + 1.0).log(2)


def _safe_ratio(numerator: pl.Expr, denominator: pl.Expr) -> pl.Expr:
    return pl.when(denominator > 0).then(numerator / denominator).otherwise(0.0)


def _step(name: str, denominator: str) -> tuple[pl.Expr, bool]:
    """X_u after each event of one user, and whether the divisor reads m_u (bucketed)."""
    hits, ap_sum = pl.col("__H"), pl.col("__S")
    m = pl.col(_M).cast(pl.Float64)
    if name in ("precision", "pooled_recall"):
        return hits, False
    if name == "recall":
        return _safe_ratio(hits, m), False
    if name == "f1":
        return 2.0 * hits, True
    if name == "hit_rate":
        return (hits > 0).cast(pl.Float64), False
    if name == "mrr":
        return _safe_ratio(pl.lit(1.0), pl.col("__first").cast(pl.Float64)), False
    if name == "dcg":
        return pl.col("__D"), False
    if name == "ndcg":
        return _safe_ratio(pl.col("__D"), pl.col("__I")), False
    # map
    if denominator == "relevant":
        return _safe_ratio(ap_sum, m), False
    if denominator == "hits":
        return _safe_ratio(ap_sum, hits), False
    return ap_sum, True


def _divisor(name: str, k: pl.Expr, m: pl.Expr) -> pl.Expr:
    if name == "precision":
        return k.cast(pl.Float64)
    if name == "f1":
        return (k + m).cast(pl.Float64)
    if name == "map":
        return pl.min_horizontal(k, m).cast(pl.Float64)
    return pl.lit(1.0)


def _curves(
    recs: pl.DataFrame | pl.LazyFrame,
    truth: Any,
    chosen: list[tuple[str, str]],
    *,
    ks: list[int],
    roles: dict[str, Any],
    rank: str,
    score: str | None,
    relevance_column: str | None,
    conv: dict[str, Any],
    denominator: str,
    gain: str,
    ci: float | None,
) -> pl.LazyFrame:
    user, item = roles["user"], roles["item"]
    by = (
        []
        if roles["by"] is None
        else [roles["by"]]
        if isinstance(roles["by"], str)
        else list(roles["by"])
    )
    top = max(ks)
    accuracy = [(label, name) for label, name in chosen if name not in _LISTS]
    described = [
        ListCurve(label, name, **_list_params(label)) for label, name in chosen if name in _LISTS
    ]
    # who counts, per metric: evaluate's per-user rows where the metric is defined. The
    # binary metrics share one pattern (defined where m_u > 0, then the user policies),
    # NDCG its own (some positive grade); DCG and pooled recall count every row. One
    # metric per pattern, at the largest k so that evaluate checks the lists that far.
    # The measures of the lists go along at the largest k, so that evaluate checks
    # their inputs (interactions, catalog) too
    labels = {name: _PATTERN.get(name, "hit_rate") for _, name in accuracy}
    requested = sorted(
        {f"{label}@{top}" for label in labels.values() if label}
        | ({f"hit_rate@{top}"} if accuracy else set())
        | {f"{curve.label}@{top}" for curve in described}
    )
    labels = {name: f"{label}@{top}" if label else "" for name, label in labels.items()}
    # evaluate and positions return the kind of frame they get; both kinds are read lazily
    frame = cast("pl.DataFrame", recs)
    evaluated = _evaluate(
        frame, truth, requested, user=user, item=item, rank=rank,
        score=score, relevance=relevance_column, by=by or None, per_user=True,
        interactions=roles["interactions"], items=roles["items"], category=roles["category"],
        **conv,
    )  # fmt: skip
    population = evaluated.lazy()
    pieces: dict[str, pl.LazyFrame] = {}
    if accuracy:
        pieces.update(
            _accuracy_curves(
                frame, truth, population, accuracy, labels=labels, by=by, user=user, item=item,
                rank=rank, score=score, relevance_column=relevance_column, conv=conv,
                denominator=denominator, gain=gain, top=top, ci=ci,
            )
        )  # fmt: skip
    if described:
        groups = (
            population.select(by).unique()
            if by
            else pl.LazyFrame({"__prm_one": [1]}, schema={"__prm_one": pl.Int32})
        )
        pieces.update(
            list_curves(
                _ranked_lists(frame, by=by, user=user, item=item, rank=rank, score=score,
                              conv=conv, top=top),
                described, groups=groups, by=by, user=user, item=item, top=top, ci=ci,
                interactions=roles["interactions"], items=roles["items"],
                category=roles["category"], wanted=ks, t_quantile=_t_quantile,
                hold=isinstance(recs, pl.DataFrame),
            )
        )  # fmt: skip
    result = pl.concat([pieces[label] for label, _ in chosen], how="vertical")
    wanted = pl.LazyFrame({_K: ks}, schema={_K: pl.Int64})
    order = {label: index for index, (label, _) in enumerate(chosen)}
    result = result.join(wanted, on=_K, how="semi").with_columns(
        pl.col("metric").replace_strict(order, return_dtype=pl.Int64).alias("__order")
    )
    return result.sort([*by, "__order", _K]).drop("__order")


def _list_params(label: str) -> dict[str, float]:
    """The parameters written in a list measure's name, e.g. ``long_tail(head_share=0.1)``."""
    params = dict(parse_metric(f"{label}@1").params)
    return {
        name: float(value)
        for name, value in params.items()
        if name in ("head_share", "alpha") and value is not None
    }


def _ranked_lists(
    frame: pl.DataFrame,
    *,
    by: list[str],
    user: str,
    item: str,
    rank: str,
    score: str | None,
    conv: dict[str, Any],
    top: int,
) -> pl.LazyFrame:
    """The lists cut to ``top``, ranked as evaluate ranks them (by..., user, item, POS)."""
    spec = RecsSpec(user, item, rank if score is None else POS, score, tuple(by),
                    conv["ties"], conv["duplicates"])  # fmt: skip
    keep = list(dict.fromkeys([*by, user, item, score or rank]))
    ranked = with_positions(
        frame.lazy().select(keep), spec, top, run_lengths=lengths_in_rank_order(frame, spec)
    )
    return ranked.select(*by, user, item, pl.col(spec.rank).cast(pl.Int64).alias(POS))


def _accuracy_curves(
    frame: pl.DataFrame,
    truth: Any,
    population: pl.LazyFrame,
    chosen: list[tuple[str, str]],
    *,
    labels: dict[str, str],
    by: list[str],
    user: str,
    item: str,
    rank: str,
    score: str | None,
    relevance_column: str | None,
    conv: dict[str, Any],
    denominator: str,
    gain: str,
    top: int,
    ci: float | None,
) -> dict[str, pl.LazyFrame]:
    """The curves of the metrics that read the truth, per label."""
    keys = [*by, user]
    events, m_per_user = _events(
        frame, truth, population, chosen, by=by, user=user, item=item, rank=rank,
        score=score, relevance_column=relevance_column, conv=conv, gain=gain, top=top,
    )  # fmt: skip
    if isinstance(frame, pl.DataFrame):
        # in memory: the events are few (found items and ideal positions); hold them once
        # for every metric's sums rather than re-running the join per metric
        events = events.collect().lazy()
    flags = population.select(
        *keys,
        *(_counted(label).alias(f"__in_{name}") for name, label in labels.items()),
    )
    steps = []
    bucketed: dict[str, bool] = {}
    for _, name in chosen:
        x, bucketed[name] = _step(name, denominator)
        steps.append(x.alias(f"__x_{name}"))
    # the steps of X need each user's events in position order: take them before any join
    events = events.with_columns(steps).with_columns(
        pl.col(f"__x_{name}").shift(1).over(keys).fill_null(0.0).alias(f"__before_{name}")
        for _, name in chosen
    )
    events = events.join(flags, on=keys, how="inner")
    deltas = []
    for _, name in chosen:
        x, before = pl.col(f"__x_{name}"), pl.col(f"__before_{name}")
        inside = pl.col(f"__in_{name}").cast(pl.Float64)
        deltas += [
            ((x - before) * inside).alias(f"__dx_{name}"),
            ((x * x - before * before) * inside).alias(f"__dx2_{name}"),
        ]
    events = events.with_columns(deltas)
    grid_k = pl.LazyFrame({_K: list(range(1, top + 1))}, schema={_K: pl.Int64})
    counts = (
        population.group_by(by).agg(
            (_counted(label).sum() if label else pl.len()).cast(pl.Int64).alias(f"__n_{name}")
            for name, label in labels.items()
        )
        if by
        else population.select(
            (_counted(label).sum() if label else pl.len()).cast(pl.Int64).alias(f"__n_{name}")
            for name, label in labels.items()
        )
    )
    pieces = {}
    for label, name in chosen:
        sums = _running_sums(
            events, name, by=by, bucketed=bucketed[name], grid_k=grid_k,
            population=population, labels=labels, keys=keys, m_per_user=m_per_user,
        )  # fmt: skip
        pieces[label] = _finish(sums, counts, name=name, label=label, by=by, grid_k=grid_k, ci=ci)
    return pieces


def _events(
    frame: pl.DataFrame,
    truth: Any,
    population: pl.LazyFrame,
    chosen: list[tuple[str, str]],
    *,
    by: list[str],
    user: str,
    item: str,
    rank: str,
    score: str | None,
    relevance_column: str | None,
    conv: dict[str, Any],
    gain: str,
    top: int,
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """Per (by..., user, position) with something happening: the running sums there.

    Found items (hits, their DCG terms) and ideal positions (IDCG terms) are the
    events; returns them with each user's running hits ``__H``, AP sum ``__S``,
    DCG ``__D``, ideal DCG ``__I``, first hit and m_u, and m_u per counted user.
    """
    keys = [*by, user]
    recs_lf = frame.lazy()
    truth_lf = truth.lazy() if isinstance(truth, pl.DataFrame) else cast("pl.LazyFrame", truth)
    recs_schema, truth_schema = recs_lf.collect_schema(), truth_lf.collect_schema()
    shared = [name for name in by if name in truth_schema]
    truth_keys = [*shared, user]
    # evaluate (called above) has checked the key dtypes: join them in the recs' dtypes
    truth_lf = truth_lf.with_columns(
        pl.col(name).cast(recs_schema[name])
        for name in [*truth_keys, item]
        if truth_schema[name] != recs_schema[name]
    )
    if score is not None:
        ranked_frame = positions(
            frame, top, user=user, item=item, rank=rank, score=score,
            ties=conv.get("ties", "item_desc"), duplicates=conv["duplicates"], by=by or None,
        )  # fmt: skip
        ranked = ranked_frame.lazy().select(*by, user, item, pl.col(rank).alias(_POS))
    else:
        ranked = recs_lf.select(*by, user, item, pl.col(rank).alias(_POS)).filter(
            pl.col(_POS) <= top
        )
        if conv["duplicates"] == "first":
            ranked = ranked.group_by([*keys, item]).agg(pl.col(_POS).min())
    grade = pl.lit(1.0) if relevance_column is None else pl.col(relevance_column).cast(pl.Float64)
    level = conv["relevance_level"]
    relevant = pl.col("__g") > 0
    if level is not None:
        # trec_eval -l: binary measures count grades >= level; gains keep every grade
        relevant = relevant & (pl.col("__g") >= level)
    graded = (
        truth_lf.select(*truth_keys, item, grade.alias("__g"))
        .filter(pl.col("__g") > 0)
        .with_columns(relevant.alias("__rel"))
    )
    found = graded.join(ranked, on=[*truth_keys, item], how="inner").select(
        *keys,
        pl.col(_POS).cast(pl.Int64),
        pl.col("__rel").cast(pl.Float64).alias("__hit"),
        (_gain(pl.col("__g"), gain) / _discount(pl.col(_POS))).alias("__dterm"),
        pl.lit(0.0).alias("__iterm"),
    )
    users = population.select(keys)
    m_truth = graded.group_by(truth_keys).agg(pl.col("__rel").sum().cast(pl.Int64).alias(_M))
    m_per_user = users.join(m_truth, on=truth_keys, how="left").with_columns(
        pl.col(_M).fill_null(0)
    )
    parts = [found]
    if any(name == "ndcg" for _, name in chosen):
        # the ideal list: the user's grades descending, as positions 1..top
        ideal_rank = pl.col("__g").rank("ordinal", descending=True).over(truth_keys)
        ideal_truth = (
            graded.with_columns(ideal_rank.cast(pl.Int64).alias(_POS))
            .filter(pl.col(_POS) <= top)
            .select(
                *truth_keys,
                _POS,
                pl.lit(0.0).alias("__hit"),
                pl.lit(0.0).alias("__dterm"),
                (_gain(pl.col("__g"), gain) / _discount(pl.col(_POS))).alias("__iterm"),
            )
        )
        # one copy per group only the recs have (model), as evaluate judges each on it
        parts.append(
            users.join(ideal_truth, on=truth_keys, how="inner").select(
                found.collect_schema().names()
            )
        )
    events = (
        pl.concat(parts)
        .group_by([*keys, _POS])
        .agg(pl.col("__hit").sum(), pl.col("__dterm").sum(), pl.col("__iterm").sum())
        .sort([*keys, _POS])
        .with_columns(
            pl.col("__hit").cum_sum().over(keys).alias("__H"),
            pl.col("__dterm").cum_sum().over(keys).alias("__D"),
            pl.col("__iterm").cum_sum().over(keys).alias("__I"),
            pl.col(_POS).filter(pl.col("__hit") > 0).min().over(keys).alias("__first_hit"),
        )
        .with_columns(
            # the j-th found item at position i adds P@i = j / i to the AP sum
            (pl.col("__hit") * pl.col("__H") / pl.col(_POS)).cum_sum().over(keys).alias("__S"),
            pl.when(pl.col("__H") > 0).then(pl.col("__first_hit")).alias("__first"),
        )
        .join(m_per_user, on=keys, how="left", maintain_order="left")
    )
    return events, m_per_user


def _running_sums(
    events: pl.LazyFrame,
    name: str,
    *,
    by: list[str],
    bucketed: bool,
    grid_k: pl.LazyFrame,
    population: pl.LazyFrame,
    labels: dict[str, str],
    keys: list[str],
    m_per_user: pl.LazyFrame,
) -> pl.LazyFrame:
    """Per (by..., k): the sums over users of the metric and of its square."""
    bucket = [_M] if bucketed else []
    group = [*by, *bucket]
    steps = events.group_by([*group, _POS]).agg(
        pl.col(f"__dx_{name}").sum().alias("__c"), pl.col(f"__dx2_{name}").sum().alias("__c2")
    )
    cells = steps.select(group).unique() if group else pl.LazyFrame({"__one": [1]})
    grid = cells.join(grid_k, how="cross")
    cumulative = (
        grid.join(steps.rename({_POS: _K}), on=[*group, _K], how="left")
        .with_columns(pl.col("__c", "__c2").fill_null(0.0))
        .sort([*group, _K])
        .with_columns(
            pl.col("__c").cum_sum().over(group or pl.lit(1)).alias("__sum"),
            pl.col("__c2").cum_sum().over(group or pl.lit(1)).alias("__sum2"),
        )
    )
    divisor = (
        _divisor(name, pl.col(_K), pl.col(_M)) if bucketed or name == "precision" else pl.lit(1.0)
    )
    terms = cumulative.select(
        *by,
        _K,
        _safe_ratio(pl.col("__sum"), divisor).alias("__sum"),
        _safe_ratio(pl.col("__sum2"), divisor * divisor).alias("__sum2"),
    )
    if name == "pooled_recall":
        # the pooled denominator: sum over counted users of min(k, m_u)
        counted = population.filter(_counted(labels[name])).select(keys)
        users = counted.join(m_per_user, on=keys, how="left").with_columns(pl.col(_M).fill_null(0))
        per_m = users.group_by([*by, _M]).len()
        capped = (
            per_m.join(grid_k, how="cross")
            .group_by([*by, _K])
            .agg((pl.min_horizontal(pl.col(_M), pl.col(_K)) * pl.col("len")).sum().alias("__cap"))
        )
        summed = terms.group_by([*by, _K]).agg(pl.col("__sum").sum())
        return capped.join(summed, on=[*by, _K], how="left").with_columns(
            pl.col("__sum").fill_null(0.0), pl.lit(None, pl.Float64).alias("__sum2")
        )
    return terms.group_by([*by, _K]).agg(pl.col("__sum").sum(), pl.col("__sum2").sum())


def _finish(
    sums: pl.LazyFrame,
    counts: pl.LazyFrame,
    *,
    name: str,
    label: str,
    by: list[str],
    grid_k: pl.LazyFrame,
    ci: float | None,
) -> pl.LazyFrame:
    """Means and intervals per (by..., k), for every group with counted users."""
    n = pl.col(f"__n_{name}")
    frame = counts.select(*by, n.alias("__n")).join(grid_k, how="cross")
    frame = (
        frame.join(sums, on=[*by, _K], how="left") if by else frame.join(sums, on=_K, how="left")
    )
    total = pl.col("__sum").fill_null(0.0)
    if name == "pooled_recall":
        value = _safe_null_ratio(total, pl.col("__cap").fill_null(0))
    else:
        value = pl.when(pl.col("__n") > 0).then(total / pl.col("__n"))
    columns: list[str | pl.Expr] = [
        *by,
        pl.lit(label).alias("metric"),
        pl.col(_K),
        value.alias("value"),
    ]
    if ci is None:
        return frame.select(columns)
    n_float = pl.col("__n").cast(pl.Float64)
    mean = total / n_float
    variance = ((pl.col("__sum2").fill_null(0.0) - n_float * mean * mean) / (n_float - 1)).clip(
        lower_bound=0.0
    )
    half = _t_quantile(pl.col("__n"), ci) * variance.sqrt() / n_float.sqrt()
    defined = (pl.col("__n") >= 2) & pl.lit(name != "pooled_recall")
    return frame.select(
        *columns,
        pl.when(defined).then(mean - half).alias("ci_low"),
        pl.when(defined).then(mean + half).alias("ci_high"),
    )


def _safe_null_ratio(numerator: pl.Expr, denominator: pl.Expr) -> pl.Expr:
    return pl.when(denominator > 0).then(numerator / denominator)


def _t_quantile(n: pl.Expr, ci: float) -> pl.Expr:
    """t_{(1+ci)/2, n-1} per row (null below 2 users), from scipy on the few distinct n."""

    def quantiles(counts: pl.Series) -> pl.Series:
        from scipy import stats  # noqa: PLC0415 - only the interval needs it

        values = counts.cast(pl.Float64).to_numpy()
        quantile = stats.t.ppf((1 + ci) / 2, np.maximum(values - 1, 1))
        return pl.Series(np.where(values >= 2, quantile, math.nan)).fill_nan(None)

    return n.map_batches(quantiles, return_dtype=pl.Float64)
