"""Curves over k of the measures of the lists themselves (beyond accuracy), in one pass.

One loop over the measures' hooks (:mod:`polars_rankmetrics._measures.lists`);
no measure is named here. Each per-user measure is, at cutoff k, a function
of the user's list prefix 1..k, and it changes only at the ranks the list
holds. So each user gets one row per rank of its list (within the largest
k) holding its value at that rank, and the sums over users at every k are
running sums of the steps of that value (and of its square, for the
intervals), exactly as :mod:`polars_rankmetrics.analysis.cutoff_curves` does for
the accuracy metrics. The value at a rank:

* a :class:`RowMean` (novelty, ARP, long-tail share): the running Σ of its
  term over the list's rows so far / their number (the rows with a term);
* a :class:`PerList` (ILD, calibration): its own ``curve`` hook.

An :class:`OfGroup` (coverage, Gini, personalization, entropy) asks its
kind for its exposure statistics at every k of the grid
(:func:`polars_rankmetrics._measures.lists._exposure.statistics_on_grid`,
running counts down the ks: no pair of users is ever built) and finishes
with the kind's :func:`~polars_rankmetrics._measures.lists._exposure.values`,
as ``evaluate`` does at one cutoff.

The float sums add rows that come out of joins and group-bys in no fixed
order, so each is made independent of it (a curve is the same to the last
bit on every call): over users (the steps at each k) and over the rows of
one rank of a list (tied ranks), exact sums in fixed point
(:func:`polars_rankmetrics._sums.exact_sums`). Counts are integer sums,
exact in any order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from polars_rankmetrics._measures._registry import Measure
from polars_rankmetrics._measures.lists import _exposure as exposure
from polars_rankmetrics._measures.lists import _popularity as popularity
from polars_rankmetrics._measures.lists._hooks import (
    CurveFrames,
    Keys,
    ListHook,
    ListRequest,
    OfGroup,
    PerList,
    RowMean,
)
from polars_rankmetrics._pipeline.inputs import ListInputs, RecsSpec
from polars_rankmetrics._pipeline.lists import catalog_frame, history_frame, unify_keys
from polars_rankmetrics._sums import exact_sums, fixed_point_column

__all__ = ["ListCurve", "list_curves"]

POS = "__prm_pos"
_K = "k"
_J = "__prm_j"  # k_u: the list's items at ranks <= this one


@dataclass(frozen=True)
class ListCurve:
    """One requested curve of a measure of the lists: its label, measure and parameters."""

    label: str
    measure: Measure
    params: dict[str, float | str | None]

    @property
    def column(self) -> str:
        return f"__prm_v_{self.label}"

    @property
    def counted(self) -> str:
        return f"__prm_c_{self.label}"

    @property
    def hook(self) -> ListHook:
        if self.measure.lists is None:  # pragma: no cover - chosen for its hook
            raise ValueError(f"{self.label} is not a measure of the lists")
        return self.measure.lists

    @property
    def request(self) -> ListRequest:
        """The measure's request, writing its value at each rank in :attr:`column`."""
        return ListRequest(self.column, None, self.params)


def list_curves(
    lists: pl.LazyFrame,
    curves: Sequence[ListCurve],
    *,
    groups: pl.LazyFrame,
    by: list[str],
    user: str,
    item: str,
    top: int,
    ci: float | None,
    described: ListInputs,
    wanted: list[int],
    t_quantile: Any,
    hold: bool,
) -> dict[str, pl.LazyFrame]:
    """Per curve label, the frame ``by..., metric, k, value[, ci_low, ci_high]`` (every wanted k).

    ``lists`` is the ranked cut (``by..., user, item`` and the position
    ``POS``) exactly as :func:`polars_rankmetrics.evaluate` builds it, and
    ``groups`` the ``by`` groups to report (one row without ``by``);
    ``hold``: the inputs are in memory, so the running sums (a few rows per
    group and k) are collected once for every curve.
    ``evaluate`` has already checked every input (``described``).
    """
    interactions, items, category = described.interactions, described.items, described.category
    group, group_weight = described.group, described.group_weight
    spec = RecsSpec(user, item, POS, None, tuple(by))
    frames: dict[str, tuple[pl.LazyFrame, pl.Schema]] = {"recs": (lists, lists.collect_schema())}
    shared: list[str] = []
    if any("interactions" in curve.measure.inputs for curve in curves):
        frames["interactions"] = history_frame(interactions, spec)
        shared = [name for name in by if name in frames["interactions"][1]]
    if any("catalog" in curve.measure.inputs for curve in curves):
        frames["items"] = catalog_frame(items, item, category, group, group_weight)
    unified = unify_keys(frames, [*shared, user, item])
    by_types = lists.collect_schema()
    lists = unified["recs"]
    history = unified.get("interactions")
    catalog = unified.get("items")
    for column in (category, group):
        if catalog is not None and column is not None:
            catalog = _labels_as_text(catalog, column)
    keys = _Keys(by, user, item, shared, category, group, group_weight)
    grid = groups.join(_positions(lists, top, wanted), how="cross")
    pieces: dict[str, pl.LazyFrame] = {}
    user_curves = [curve for curve in curves if not isinstance(curve.hook, OfGroup)]
    if user_curves:
        values = _user_values(lists, user_curves, keys, history=history, catalog=catalog)
        values = values.with_columns(pl.col(name).cast(by_types[name]) for name in by)
        pieces.update(
            _finish_users(values, user_curves, keys, grid, ci=ci, t_quantile=t_quantile, hold=hold)
        )
    group_curves = [curve for curve in curves if isinstance(curve.hook, OfGroup)]
    if group_curves:
        lists = lists.with_columns(pl.col(name).cast(by_types[name]) for name in by)
        pieces.update(
            _group_curves(
                lists, group_curves, keys, grid, catalog=catalog, ci=ci, wanted=wanted, hold=hold
            )
        )
    return pieces


def _positions(lists: pl.LazyFrame, top: int, wanted: list[int]) -> pl.LazyFrame:
    """The ks the running sums visit: every position up to the longest list, then the wanted.

    Past the longest list nothing changes but k itself (personalization
    divides by it), so a k beyond it needs no position in between: the grid
    is bounded by the longest list and the requested ks, not by the largest k.
    """
    longest = lists.select(pl.col(POS).max().cast(pl.Int64).fill_null(0).alias("__prm_last"))
    last = pl.min_horizontal(pl.col("__prm_last"), pl.lit(top, pl.Int64))
    inside = longest.select(pl.int_ranges(1, last + 1, dtype=pl.Int64).alias(_K)).explode(_K)
    beyond = (
        pl.LazyFrame({_K: wanted}, schema={_K: pl.Int64})
        .join(longest, how="cross")
        .filter(pl.col(_K) > pl.col("__prm_last"))
        .select(_K)
    )
    return pl.concat([inside, beyond]).filter(pl.col(_K).is_not_null()).unique().sort(_K)


@dataclass(frozen=True)
class _Keys:
    by: list[str]
    user: str
    item: str
    shared: list[str]
    category: str | None
    group: str | None
    group_weight: str | None

    @property
    def lists(self) -> list[str]:
        return [*self.by, self.user]


def _labels_as_text(catalog: pl.LazyFrame, category: str) -> pl.LazyFrame:
    dtype = catalog.collect_schema()[category]
    inner = dtype.inner if isinstance(dtype, pl.List) else dtype
    if isinstance(inner, (pl.Categorical, pl.Enum)):
        # labels compare as text (as list_metrics does)
        target = pl.List(pl.String) if isinstance(dtype, pl.List) else pl.String
        return catalog.with_columns(pl.col(category).cast(target))
    return catalog


# ---------------------------------------------------------------------------
# Per-user measures: each list's value at each of its ranks
# ---------------------------------------------------------------------------


def _user_values(
    lists: pl.LazyFrame,
    curves: Sequence[ListCurve],
    keys: _Keys,
    *,
    history: pl.LazyFrame | None,
    catalog: pl.LazyFrame | None,
) -> pl.LazyFrame:
    """One row per (list, rank held): k_u there and each curve's value (null: not counted)."""
    list_keys = keys.lists
    rows = lists.select(*list_keys, keys.item, POS)
    means = [(curve, curve.hook) for curve in curves if isinstance(curve.hook, RowMean)]
    exact: dict[str, pl.Expr] = {}
    counts: list[pl.Expr] = []
    if means and history is not None:
        # the measures' own popularity tables, so a curve at k reads the same c_i as evaluate
        measure_keys = Keys(tuple(keys.by), keys.user, keys.item, POS, shared=tuple(keys.shared))
        asked = [(curve.request, hook) for curve, hook in means]
        shares = popularity.wanted(asked)
        tables = popularity.tables(history, measure_keys, shares)
        terms = [
            (curve, hook.term(curve.request, popularity.columns(hook.popularity(curve.request))))
            for curve, hook in means
        ]
        rows = popularity.with_popularity(rows, measure_keys, tables, shares).with_columns(
            expr
            for curve, term in terms
            for expr in (
                term.fill_null(0.0).alias(curve.column),
                term.is_not_null().cast(pl.Int64).alias(curve.counted),
            )
        )
        # a (list, rank) may hold several rows (tied ranks), in no fixed order: exact sums
        exact = {curve.column: pl.col(curve.column) for curve, _ in means}
        counts = [pl.col(curve.counted).sum() for curve, _ in means]
    summed = [name for curve, _ in means for name in (curve.column, curve.counted)]
    steps = (
        exact_sums(
            rows, [*list_keys, POS], exact, also=[pl.len().cast(pl.Int64).alias(_J), *counts]
        )
        .sort([*list_keys, POS])
        .with_columns(pl.col([_J, *summed]).cum_sum().over(list_keys))
    )
    # the mean over the rows with a term so far (a measure without value has none)
    steps = steps.with_columns(
        pl.when(pl.col(curve.counted) > 0)
        .then(pl.col(curve.column) / pl.col(curve.counted).cast(pl.Float64))
        .alias(curve.column)
        for curve, _ in means
    )
    for curve in curves:
        hook = curve.hook
        if isinstance(hook, PerList):
            frames = CurveFrames(
                steps=steps,
                rows=rows,
                list_keys=list_keys,
                history_keys=[*keys.shared, keys.user],
                item=keys.item,
                position=POS,
                j=_J,
                category=keys.category if hook.labels == "category" else keys.group,
                weight=keys.group_weight if hook.labels == "group" else None,
                catalog=catalog,
                history=history,
            )
            steps = hook.curve(curve.request, frames)
    return steps.select(*list_keys, POS, *[curve.column for curve in curves])


def _finish_users(
    values: pl.LazyFrame,
    curves: Sequence[ListCurve],
    keys: _Keys,
    grid: pl.LazyFrame,
    *,
    ci: float | None,
    t_quantile: Any,
    hold: bool,
) -> dict[str, pl.LazyFrame]:
    """Means (and intervals) over the counted users at every k, from the values' steps."""
    by, list_keys = keys.by, keys.lists
    # each user's value and its square in fixed point: the sums over users, and their
    # running sums down the ks, are then exact in any order (a float sum over users
    # added in the engine's thread order could end in another bit from call to call)
    fixed: list[pl.Expr] = []
    steps: list[pl.Expr] = []
    scales: list[str] = []

    def step(name: str) -> pl.Expr:
        return pl.col(name) - pl.col(name).shift(1).over(list_keys).fill_null(0)

    for index, curve in enumerate(curves):
        value = pl.col(curve.column)
        fixed += fixed_point_column(value, f"__prm_v{index}")
        fixed += fixed_point_column(value * value, f"__prm_w{index}")
        scales += [f"__prm_v{index}|scale", f"__prm_w{index}|scale"]
        before = value.shift(1).over(list_keys)
        steps += [
            step(f"__prm_v{index}").alias(f"__prm_d{index}"),
            step(f"__prm_w{index}").alias(f"__prm_q{index}"),
            # a user counts from the first rank where its value is defined (and stays so)
            (value.is_not_null() & before.is_null()).cast(pl.Int64).alias(f"__prm_n{index}"),
        ]
    columns = [f"__prm_{part}{index}" for index in range(len(curves)) for part in "dqn"]
    values = values.with_columns(fixed)
    sums = (
        values.select(*by, pl.col(POS).cast(pl.Int64).alias(_K), *steps)
        .group_by([*by, _K])
        .agg(pl.col(columns).sum())
    )
    running = (
        grid.join(sums, on=[*by, _K], how="left")
        .with_columns(pl.col(columns).fill_null(0))
        .sort([*by, _K])
        .with_columns(pl.col(columns).cum_sum().over(by or pl.lit(1)))
        .join(values.select(pl.col(scales).first()), how="cross")
    )
    # every curve reads these running sums: compute them once (in memory: collect them,
    # as the few rows they are; lazy: a cache, so the plan is not repeated per curve)
    running = running.collect().lazy() if hold else running.cache()
    pieces = {}
    for index, curve in enumerate(curves):
        count = pl.col(f"__prm_n{index}")
        n = count.cast(pl.Float64)
        total = pl.col(f"__prm_d{index}").cast(pl.Float64) / pl.col(f"__prm_v{index}|scale")
        mean = total / n
        selected: list[pl.Expr] = [
            *[pl.col(name) for name in by],
            pl.lit(curve.label).alias("metric"),
            pl.col(_K),
            pl.when(count > 0).then(mean).alias("value"),
        ]
        if ci is not None:
            squares = pl.col(f"__prm_q{index}").cast(pl.Float64) / pl.col(f"__prm_w{index}|scale")
            variance = ((squares - n * mean * mean) / (n - 1.0)).clip(lower_bound=0.0)
            half = t_quantile(count, ci) * variance.sqrt() / n.sqrt()
            defined = count >= 2
            selected += [
                pl.when(defined).then(mean - half).alias("ci_low"),
                pl.when(defined).then(mean + half).alias("ci_high"),
            ]
        pieces[curve.label] = running.select(selected)
    return pieces


# ---------------------------------------------------------------------------
# Group measures: their kind's statistics at every k
# ---------------------------------------------------------------------------


def _group_curves(
    lists: pl.LazyFrame,
    curves: Sequence[ListCurve],
    keys: _Keys,
    grid: pl.LazyFrame,
    *,
    catalog: pl.LazyFrame | None,
    ci: float | None,
    wanted: list[int],
    hold: bool,
) -> dict[str, pl.LazyFrame]:
    """Each group measure at every k of ``grid``, from its kind's statistics there."""
    by = keys.by
    asked = [(curve, curve.hook) for curve in curves if isinstance(curve.hook, OfGroup)]
    requests = [(curve.request, hook) for curve, hook in asked]
    measure_keys = Keys(tuple(by), keys.user, keys.item, POS)
    statistics = exposure.statistics_on_grid(
        lists, requests, measure_keys, grid, cutoff=_K, wanted=wanted, items=catalog
    )
    # every curve reads the same statistics: compute them once
    statistics = statistics.collect().lazy() if hold else statistics.cache()
    # a curve's lists are compared at its k (personalization)
    values = exposure.values(requests, length=pl.col(_K).cast(pl.Float64))
    pieces: dict[str, pl.LazyFrame] = {}
    for (curve, _), value in zip(asked, values, strict=True):
        columns: list[pl.Expr] = [
            *[pl.col(name) for name in by],
            pl.lit(curve.label).alias("metric"),
            pl.col(_K),
            value.alias("value"),
        ]
        if ci is not None:
            # one value per group of lists, not a mean over users: no interval
            columns += [pl.lit(None, pl.Float64).alias(name) for name in ("ci_low", "ci_high")]
        pieces[curve.label] = statistics.select(columns)
    return pieces
