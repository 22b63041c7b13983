"""Curves over k of the measures of the lists themselves (beyond accuracy), in one pass.

Each per-user measure of ``METRICS.md`` ("Beyond accuracy") is, at cutoff k,
a function of the user's list prefix 1..k, and it changes only at the ranks
the list holds. So each user gets one row per rank of its list (within the
largest k) holding its value at that rank, and the sums over users at every
k are running sums of the steps of that value (and of its square, for the
intervals), exactly as :mod:`polars_rankmetrics.analysis.curves` does for the
accuracy metrics. The value at a rank comes from running sums over the list:

* novelty, ARP, long-tail share: Σ of the items' terms / k_u, with k_u the
  number of items so far;
* ILD: 1 - (Σ over pairs so far of Jaccard) / (k_u (k_u - 1) / 2), each pair
  added at the lower of its two positions (a one-category catalog counts, per
  category, the items above; a pair with an item of several categories is
  built only when the two share a category, as the measure itself does);
* calibration: KL(p ‖ q~) = -ln(alpha) Σ_c p_c + Σ over the categories seen so
  far of p_c ln(p_c / q~_c) + p_c ln(alpha) (a category not in the list yet
  adds p_c ln(1 / alpha)), with per-(user, category) running counts of q.
  This one evaluates each category of the user's history that the list
  shows at each later rank: (lists x categories x ranks) rows at most.

The group measures come from running counts of exposure: coverage counts an
item from the first k where any list shows it, personalization adds
C(x_i, 2) steps as an item's exposure x_i grows, and Gini reads the sorted
exposures at each requested k (items x requested ks rows). No pair of users
is ever built.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import polars as pl

from polars_rankmetrics import beyond as _beyond
from polars_rankmetrics._measures import beyond_accuracy as ba
from polars_rankmetrics._measures.beyond_accuracy import GROUP_MEASURES, USER_MEASURES
from polars_rankmetrics._pipeline.inputs import RecsSpec

__all__ = ["GROUP_MEASURES", "USER_MEASURES", "ListCurve", "list_curves"]

POS = "__prm_pos"
_K = "k"
# the measure module's columns: c_i, N, and the (item, category) table's
_C, _N, _CAT, _M, _W = ba._C, ba._N, ba._CAT, ba._M, ba._W
_J = "__prm_j"  # k_u: the list's items at ranks <= this one


@dataclass(frozen=True)
class ListCurve:
    """One requested curve of a beyond-accuracy measure: its label, name and parameter."""

    label: str
    name: str
    head_share: float = 0.2
    alpha: float = 0.01

    @property
    def column(self) -> str:
        return f"__prm_v_{self.label}"


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
    interactions: Any,
    items: Any,
    category: str | None,
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
    ``evaluate`` has already checked every input.
    """
    spec = RecsSpec(user, item, POS, None, tuple(by))
    names = {curve.name for curve in curves}
    frames: dict[str, tuple[pl.LazyFrame, pl.Schema]] = {"recs": (lists, lists.collect_schema())}
    shared: list[str] = []
    if names & {"novelty", "arp", "long_tail", "calibration"}:
        frames["interactions"] = _beyond._history_frame(interactions, spec)
        shared = [name for name in by if name in frames["interactions"][1]]
    if names & {"coverage", "gini", "ild", "calibration"}:
        frames["items"] = _beyond._catalog_frame(items, item, category)
    unified = _beyond._unify_keys(frames, [*shared, user, item])
    by_types = lists.collect_schema()
    lists = unified["recs"]
    history = unified.get("interactions")
    catalog = unified.get("items")
    if catalog is not None and category is not None:
        catalog = _labels_as_text(catalog, category)
    keys = _Keys(by, user, item, shared, category)
    grid = groups.join(_positions(lists, top, wanted), how="cross")
    pieces: dict[str, pl.LazyFrame] = {}
    user_curves = [curve for curve in curves if curve.name in USER_MEASURES]
    if user_curves:
        values = _user_values(lists, user_curves, keys, history=history, catalog=catalog)
        values = values.with_columns(pl.col(name).cast(by_types[name]) for name in by)
        pieces.update(
            _finish_users(values, user_curves, keys, grid, ci=ci, t_quantile=t_quantile, hold=hold)
        )
    group_curves = [curve for curve in curves if curve.name in GROUP_MEASURES]
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
    simple = [curve for curve in curves if curve.name in ("novelty", "arp", "long_tail")]
    sums: list[pl.Expr] = []
    if simple and history is not None:
        rows = _with_popularity(rows, history, simple, keys).with_columns(
            _term(curve).alias(curve.column) for curve in simple
        )
        # novelty is not defined where N = 0 (an empty history): N rides along
        sums = [*[pl.col(c.column).sum() for c in simple], pl.col(_N).first()]
    steps = (
        rows.group_by([*list_keys, POS])
        .agg(pl.len().cast(pl.Int64).alias(_J), *sums)
        .sort([*list_keys, POS])
        .with_columns(
            pl.col(_J).cum_sum().over(list_keys),
            *[pl.col(c.column).cum_sum().over(list_keys) for c in simple],
        )
    )
    j = pl.col(_J).cast(pl.Float64)
    values = []
    for curve in simple:
        value = pl.col(curve.column) / j
        if curve.name == "novelty":
            value = pl.when(pl.col(_N) > 0).then(value)
        values.append(value.alias(curve.column))
    steps = steps.with_columns(values)
    for curve in curves:
        if curve.name == "ild" and catalog is not None:
            steps = _with_ild(steps, rows, curve, keys, catalog)
        elif curve.name == "calibration" and catalog is not None and history is not None:
            steps = _with_calibration(steps, rows, curve, keys, catalog=catalog, history=history)
    return steps.select(*list_keys, POS, *[curve.column for curve in curves])


def _with_popularity(
    rows: pl.LazyFrame, history: pl.LazyFrame, simple: Sequence[ListCurve], keys: _Keys
) -> pl.LazyFrame:
    """Each list row with c_i, N and, per head share, whether the item is in the head.

    The popularity table and N are the measures' own (:func:`ba.popularity`,
    :func:`ba.user_counts`), so a curve at k reads the same c_i as ``evaluate``.
    """
    measure_keys = ba.Keys(tuple(keys.by), keys.user, keys.item, POS, shared=tuple(keys.shared))
    shares = [curve.head_share for curve in simple if curve.name == "long_tail"]
    heads = [ba.head_column(share) for share in dict.fromkeys(shares)]
    rows = rows.join(
        ba.popularity(history, measure_keys, shares), on=[*keys.shared, keys.item], how="left"
    ).with_columns(
        pl.col(_C).fill_null(0), *[pl.col(head).fill_null(value=False) for head in heads]
    )
    return ba._attach(rows, ba.user_counts(history, measure_keys), keys.shared)


def _term(curve: ListCurve) -> pl.Expr:
    if curve.name == "novelty":
        ratio = pl.max_horizontal(pl.col(_C), pl.lit(1)).cast(pl.Float64) / pl.col(_N)
        return pl.when(pl.col(_N) > 0).then(-ratio.log(2)).otherwise(0.0)
    if curve.name == "arp":
        return pl.col(_C).cast(pl.Float64)
    return (~pl.col(ba.head_column(curve.head_share))).cast(pl.Float64)


def _with_ild(
    steps: pl.LazyFrame, rows: pl.LazyFrame, curve: ListCurve, keys: _Keys, catalog: pl.LazyFrame
) -> pl.LazyFrame:
    """ILD at each rank: 1 - (running Σ of Jaccard over pairs) / (k_u (k_u - 1) / 2)."""
    list_keys = keys.lists
    category = cast("str", keys.category)
    labeled = rows.select(*list_keys, keys.item, POS).join(
        ba.item_categories(catalog, keys.item, category), on=keys.item, how="inner"
    )
    # pairs of one-category items share theirs (Jaccard 1) or not (0): an item shares it
    # with the items of its category above it (its ordinal among them); each pair is
    # counted once, at the later of its two positions
    single = (
        labeled.filter(pl.col(_M) == 1)
        .sort([*list_keys, POS])
        .select(
            *list_keys,
            POS,
            pl.int_range(pl.len()).over([*list_keys, _CAT]).cast(pl.Float64).alias("__prm_s"),
        )
    )
    parts = [single]
    if ba._is_multi(catalog, category):
        several = labeled.filter(pl.col(_M) > 1).select(
            *list_keys,
            _CAT,
            pl.col(keys.item).alias("__prm_item_b"),
            pl.col(POS).alias("__prm_pos_b"),
            pl.col(_M).alias("__prm_m_b"),
        )
        # a one-category item meets each item of several categories once; two of several
        # meet in both orders: keep a < b. Only pairs sharing a category are built
        meetings = (
            labeled.join(several, on=[*list_keys, _CAT], how="inner")
            .filter((pl.col(_M) == 1) | (pl.col(keys.item) < pl.col("__prm_item_b")))
            .group_by([*list_keys, keys.item, "__prm_item_b"])
            .agg(
                pl.len().cast(pl.Float64).alias("__prm_inter"),
                pl.col(_M).first().cast(pl.Float64),
                pl.col("__prm_m_b").first().cast(pl.Float64),
                pl.max_horizontal(POS, "__prm_pos_b").first().alias(POS),
            )
        )
        inter = pl.col("__prm_inter")
        jaccard = inter / (pl.col(_M) + pl.col("__prm_m_b") - inter)
        parts.append(meetings.select(*list_keys, POS, jaccard.alias("__prm_s")))
    similar = (
        pl.concat(parts).group_by([*list_keys, POS]).agg(pl.col("__prm_s").sum().alias("__prm_sim"))
    )
    pairs = (pl.col(_J) * (pl.col(_J) - 1)).cast(pl.Float64) / 2.0
    return (
        steps.join(similar, on=[*list_keys, POS], how="left", maintain_order="left")
        .with_columns(pl.col("__prm_sim").fill_null(0.0).cum_sum().over(list_keys))
        .with_columns(
            pl.when(pl.col(_J) >= 2).then(1.0 - pl.col("__prm_sim") / pairs).alias(curve.column)
        )
        .drop("__prm_sim")
    )


def _with_calibration(
    steps: pl.LazyFrame,
    rows: pl.LazyFrame,
    curve: ListCurve,
    keys: _Keys,
    *,
    catalog: pl.LazyFrame,
    history: pl.LazyFrame,
) -> pl.LazyFrame:
    """KL(p ‖ q~) at each rank of the lists whose user has interactions (Steck 2018)."""
    list_keys = keys.lists
    history_keys = [*keys.shared, keys.user]
    category = cast("str", keys.category)
    weights = ba.item_categories(catalog, keys.item, category).select(keys.item, _CAT, _W)
    users = rows.select(list_keys).unique()
    seen = (
        history.join(users.select(history_keys).unique(), on=history_keys, how="semi")
        .select(*history_keys, keys.item)
        .unique()
    )
    if set(history_keys) != set(list_keys):
        # groups the history does not have (models) share it: one copy per list
        seen = users.join(seen, on=history_keys, how="inner")
    taste = (
        seen.join(weights, on=keys.item, how="inner")
        .group_by([*list_keys, _CAT])
        .agg(pl.col(_W).sum().alias("__prm_p"))
        .with_columns(pl.col("__prm_p") / pl.col("__prm_p").sum().over(list_keys))
    )
    alpha = curve.alpha
    log_alpha = math.log(alpha)
    # every category of p starts missing from the list: p_c ln(1 / alpha) each
    base = taste.group_by(list_keys).agg((-log_alpha * pl.col("__prm_p").sum()).alias("__prm_b"))
    # q's running count per (list, category of p), at the ranks where it grows
    shown = (
        rows.join(weights, on=keys.item, how="inner")
        .group_by([*list_keys, _CAT, POS])
        .agg(pl.col(_W).sum().alias("__prm_q"))
        .join(taste, on=[*list_keys, _CAT], how="inner")
        .sort([*list_keys, _CAT, POS])
        .with_columns(pl.col("__prm_q").cum_sum().over([*list_keys, _CAT]))
    )
    first = shown.group_by([*list_keys, _CAT]).agg(
        pl.col(POS).min().alias("__prm_first"), pl.col("__prm_p").first()
    )
    ranks = steps.select(*list_keys, POS, _J)
    p, q = pl.col("__prm_p"), pl.col("__prm_q") / pl.col(_J).cast(pl.Float64)
    mixed = (1.0 - alpha) * q + alpha * p
    # each category of p the list shows, at every rank from its first appearance on, with
    # its running count there (the last step at or before that rank)
    adjustments = (
        first.join(ranks, on=list_keys, how="inner")
        .filter(pl.col(POS) >= pl.col("__prm_first"))
        .sort(POS)
        .join_asof(
            shown.select(*list_keys, _CAT, POS, "__prm_q").sort(POS),
            on=POS,
            by=[*list_keys, _CAT],
            strategy="backward",
            # both sides are sorted by the key above; with by groups Polars cannot check it
            check_sortedness=False,
        )
        .group_by([*list_keys, POS])
        .agg((p * (p / mixed).log() + p * log_alpha).sum().alias("__prm_adj"))
    )
    return (
        steps.join(base, on=list_keys, how="left", maintain_order="left")
        .join(adjustments, on=[*list_keys, POS], how="left", maintain_order="left")
        .with_columns((pl.col("__prm_b") + pl.col("__prm_adj").fill_null(0.0)).alias(curve.column))
        .drop("__prm_b", "__prm_adj")
    )


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
    steps: list[pl.Expr] = []
    for index, curve in enumerate(curves):
        value = pl.col(curve.column)
        before = value.shift(1).over(list_keys)
        steps += [
            (value.fill_null(0.0) - before.fill_null(0.0)).alias(f"__prm_d{index}"),
            (value.fill_null(0.0) ** 2 - before.fill_null(0.0) ** 2).alias(f"__prm_q{index}"),
            # a user counts from the first rank where its value is defined (and stays so)
            (value.is_not_null() & before.is_null()).cast(pl.Int64).alias(f"__prm_n{index}"),
        ]
    columns = [f"__prm_{part}{index}" for index in range(len(curves)) for part in "dqn"]
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
    )
    # every curve reads these running sums: compute them once (in memory: collect them,
    # as the few rows they are; lazy: a cache, so the plan is not repeated per curve)
    running = running.collect().lazy() if hold else running.cache()
    pieces = {}
    for index, curve in enumerate(curves):
        count = pl.col(f"__prm_n{index}")
        n = count.cast(pl.Float64)
        mean = pl.col(f"__prm_d{index}") / n
        selected: list[pl.Expr] = [
            *[pl.col(name) for name in by],
            pl.lit(curve.label).alias("metric"),
            pl.col(_K),
            pl.when(count > 0).then(mean).alias("value"),
        ]
        if ci is not None:
            squares = pl.col(f"__prm_q{index}")
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
# Group measures: running counts of exposure
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
    by, item = keys.by, keys.item
    names = {curve.name for curve in curves}
    # x_i grows by the number of lists holding item i at each position
    events = (
        lists.group_by([*by, item, POS])
        .agg(pl.len().cast(pl.Int64).alias("__prm_x"))
        .sort([*by, item, POS])
        .with_columns(pl.col("__prm_x").cum_sum().over([*by, item]).alias("__prm_after"))
    )
    starts = lists.group_by(keys.lists).agg(pl.col(POS).min().alias(_K))
    counts: list[pl.Expr] = [pl.len().cast(pl.Int64).alias("__prm_u")]
    per_k = [starts.group_by([*by, _K]).agg(counts)]
    after = pl.col("__prm_after")
    previous = after - pl.col("__prm_x")
    if "coverage" in names:
        firsts = events.group_by([*by, item]).agg(pl.col(POS).min().alias(_K))
        per_k.append(firsts.group_by([*by, _K]).agg(pl.len().cast(pl.Int64).alias("__prm_shown")))
    if "personalization" in names:
        # C(x, 2) pairs of lists share item i: each step of x_i adds C(after, 2) - C(before, 2)
        shared_pairs = (after * (after - 1) - previous * (previous - 1)) // 2
        per_k.append(
            events.group_by([*by, POS])
            .agg(shared_pairs.sum().alias("__prm_pairs"))
            .rename({POS: _K})
        )
    running = grid
    for frame in per_k:
        running = running.join(
            frame.with_columns(pl.col(_K).cast(pl.Int64)), on=[*by, _K], how="left"
        )
    counters = [
        name
        for name in ("__prm_u", "__prm_shown", "__prm_pairs")
        if name in running.collect_schema().names()
    ]
    running = (
        running.with_columns(pl.col(counters).fill_null(0))
        .sort([*by, _K])
        .with_columns(pl.col(counters).cum_sum().over(by or pl.lit(1)))
    )
    n_catalog = (
        catalog.select(pl.len().cast(pl.Float64).alias("__prm_catalog"))
        if catalog is not None
        else pl.LazyFrame({"__prm_catalog": [None]}, schema={"__prm_catalog": pl.Float64})
    )
    running = running.join(n_catalog, how="cross")
    # coverage, personalization and Gini read the same counts: compute them once
    running = running.collect().lazy() if hold else running.cache()
    users = pl.col("__prm_u").cast(pl.Float64)
    catalog_n = pl.col("__prm_catalog")
    pieces: dict[str, pl.LazyFrame] = {}
    for curve in curves:
        if curve.name == "coverage":
            value = pl.when(users > 0).then(pl.col("__prm_shown").cast(pl.Float64) / catalog_n)
            frame = running.with_columns(value.alias("value"))
        elif curve.name == "personalization":
            all_pairs = users * (users - 1.0) / 2.0 * pl.col(_K).cast(pl.Float64)
            value = pl.when(users >= 2).then(
                1.0 - pl.col("__prm_pairs").cast(pl.Float64) / all_pairs
            )
            frame = running.with_columns(value.alias("value"))
        else:
            gini = _gini(events, keys, grid, catalog_n=n_catalog, wanted=wanted)
            frame = running.join(gini, on=[*by, _K], how="left")
        columns: list[pl.Expr] = [
            *[pl.col(name) for name in by],
            pl.lit(curve.label).alias("metric"),
            pl.col(_K),
            pl.col("value").cast(pl.Float64),
        ]
        if ci is not None:
            # one value per group of lists, not a mean over users: no interval
            columns += [pl.lit(None, pl.Float64).alias(name) for name in ("ci_low", "ci_high")]
        pieces[curve.label] = frame.select(columns)
    return pieces


def _gini(
    events: pl.LazyFrame,
    keys: _Keys,
    grid: pl.LazyFrame,
    *,
    catalog_n: pl.LazyFrame,
    wanted: list[int],
) -> pl.LazyFrame:
    """Gini of exposure per (by..., k): the exposures x_i(k) read at every k, sorted."""
    by, item = keys.by, keys.item
    per_item = events.group_by([*by, item]).agg(pl.col(POS).min().alias("__prm_first"))
    # each shown item at every requested k from its first appearance: its exposure there
    grid = grid.join(pl.LazyFrame({_K: wanted}, schema={_K: pl.Int64}), on=_K, how="semi")
    exposures = (
        per_item.join(grid.select(*by, _K), on=by, how="inner")
        if by
        else per_item.join(grid.select(_K), how="cross")
    ).filter(pl.col(_K) >= pl.col("__prm_first"))
    exposures = exposures.sort(_K).join_asof(
        events.select(*by, item, pl.col(POS).cast(pl.Int64), "__prm_after").sort(POS),
        left_on=_K,
        right_on=POS,
        by=[*by, item],
        strategy="backward",
        # both sides are sorted by the key above; with by groups Polars cannot check it
        check_sortedness=False,
    )
    x = pl.col("__prm_after")
    ordered = x.sort()
    sums = exposures.group_by([*by, _K]).agg(
        x.len().cast(pl.Float64).alias("__prm_s"),
        x.sum().cast(pl.Float64).alias("__prm_sx"),
        # Σ r x_(r) over the shown items sorted ascending (r = 1..s)
        ((ordered.cum_count()) * ordered).sum().cast(pl.Float64).alias("__prm_rx"),
    )
    n = pl.col("__prm_catalog")
    zeros = n - pl.col("__prm_s")
    sx = pl.col("__prm_sx")
    # zeros (catalog items not shown) sort first:
    # Σ (2j - n - 1) x_(j) = 2 Σ r x_(r) + (2z - n - 1) Σ x
    value = pl.when(sx > 0).then(
        (2.0 * pl.col("__prm_rx") + (2.0 * zeros - n - 1.0) * sx) / (n * sx)
    )
    return sums.join(catalog_n, how="cross").select(*by, _K, value.alias("value"))
