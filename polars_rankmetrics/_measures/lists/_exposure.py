"""The exposure statistics the :class:`OfGroup` measures read, and their per-group plan.

x_i is the number of lists whose top k holds item i (each (user, item) is
once in a list). From the x_i of a ``by`` group at one cutoff: the items
shown, Σ x, Σ r x_(r) over the shown items sorted ascending, Σ x (x - 1) / 2
(pairs of lists sharing an item: no pair of users is built), and from the
lists' lengths U (users with an item within k) and the longest list. Every
one of them adds up across Spark's buckets of users (each user is in one):
a bucket emits x_i per item and U per group, Spark adds them (the longest
list: the maximum), and :func:`values` finishes each measure from the totals.
A hook with a patience (:attr:`OfGroup.patience`, exposure_gini) reads x_i
as the attention Σ p^(r - 1) instead; its statistics are columns of their
own per (cutoff, patience), and Spark adds its x_i as reals.
``curves`` reads the same statistics at every k of a grid
(:func:`statistics_on_grid`) and finishes each measure with :func:`values`.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from polars_rankmetrics._measures.lists._hooks import (
    Exposure,
    ExposureStat,
    Keys,
    ListRequest,
    OfGroup,
)
from polars_rankmetrics._measures.lists._shared import agg, attach, attention
from polars_rankmetrics._names import PREFIX
from polars_rankmetrics._sums import exact_sums, ordered_sum

__all__ = [
    "ANY_LIST",
    "CATALOG_N",
    "Weighting",
    "attention_within",
    "exposure",
    "item_stats",
    "merged_values",
    "per_group",
    "stat_column",
    "statistics_on_grid",
    "values",
    "x_log_x",
]

ANY_LIST = f"{PREFIX}any_list"  # rows of exposure: 0 where a group has no list at all
CATALOG_N = f"{PREFIX}catalog_n"

StatName = ExposureStat | str  # "longest" besides the measures' statistics


# which exposures x_i: the cutoff k and the patience p (None: x_i counts the lists)
Weighting = tuple[int | None, float | None]


def stat_column(stat: StatName, k: int | None, p: float | None = None) -> str:
    """The column of one statistic at cutoff ``k`` (``"longest"``: the longest list).

    ``p``: of the attention-weighted exposures with patience p.
    """
    return f"{PREFIX}{stat}@{k}" if p is None else f"{PREFIX}{stat}@{k}/p={p!r}"


def exposure(k: int | None, *, p: float | None = None, length: pl.Expr | None = None) -> Exposure:
    """The statistics at cutoff ``k`` (patience ``p``) as the columns :func:`stat_column` names.

    ``length``: the list length personalization compares (default: k, or the
    longest list without a cutoff; a curve gives its k). U and the longest
    list do not depend on p: they are read from the counted columns.
    """
    if length is None:
        length = pl.col(stat_column("longest", k)) if k is None else pl.lit(float(k))
    return Exposure(
        shown=pl.col(stat_column("shown", k, p)),
        total=pl.col(stat_column("total", k, p)),
        ranked=pl.col(stat_column("ranked", k, p)),
        pairs=pl.col(stat_column("pairs", k, p)),
        users=pl.col(stat_column("users", k)),
        length=length,
        catalog=pl.col(CATALOG_N),
        xlogx=pl.col(stat_column("xlogx", k, p)),
    )


def values(
    requests: Sequence[tuple[ListRequest, OfGroup]], *, length: pl.Expr | None = None
) -> list[pl.Expr]:
    """Each measure's value from the statistics' columns (null where a group has no list).

    ``length``: :func:`exposure`'s (a curve's row: its own k).
    """
    return [
        pl.when(pl.col(ANY_LIST) > 0)
        .then(hook.value(exposure(request.k, p=hook.weight(request), length=length)))
        .cast(pl.Float64)
        .alias(request.label)
        for request, hook in requests
    ]


def reads(requests: Sequence[tuple[ListRequest, OfGroup]]) -> dict[Weighting, set[ExposureStat]]:
    """Per cutoff and patience, the statistics the requests read."""
    wanted: dict[Weighting, set[ExposureStat]] = {}
    for request, hook in requests:
        wanted.setdefault((request.k, hook.weight(request)), set()).update(hook.reads)
    return wanted


def attention_within(rank: pl.Expr, k: int | None, p: float) -> pl.Expr:
    """p^(r - 1) on a row within the cutoff, 0 past it (Float64)."""
    weight = attention(rank, p)
    return weight if k is None else pl.when(rank <= k).then(weight).otherwise(0.0)


def x_log_x(x: pl.Expr) -> pl.Expr:
    """``x ln x`` of an exposure x >= 0 (Float64), 0 at x = 0.

    An attention p^(r - 1) below the smallest float is 0: such an item adds
    nothing (as an item not shown), not 0 ln 0 = NaN.
    """
    exposure = x.cast(pl.Float64)
    return pl.when(exposure > 0).then(exposure * exposure.log()).otherwise(0.0)


def item_stats(
    x: pl.Expr,
    k: int | None,
    p: float | None,
    stats: set[ExposureStat],
    *,
    all_shown: bool = False,
) -> list[pl.Expr]:
    """The statistics of a group's exposures ``x`` (one per item), an aggregation.

    ``all_shown``: every x given is of an item some list holds (a curve's, at
    the ks from the item's first position): none to leave out.
    """
    shown = x if all_shown else x.filter(x > 0)
    exprs: dict[ExposureStat, pl.Expr] = {
        "shown": shown.len().cast(pl.Float64),
        # over the items in no fixed order: attention sums added in an order of their own
        "total": (shown.sum() if p is None else ordered_sum(shown)).cast(pl.Float64),
        # Σ r x_(r) over the shown items sorted ascending (r = 1..s)
        "ranked": (shown.sort().cum_count() * shown.sort()).sum().cast(pl.Float64),
        "pairs": (x * (x - 1)).sum().cast(pl.Float64) / 2.0,
        # over the items in no fixed order: the float terms added in an order of their own
        "xlogx": ordered_sum(x_log_x(shown)),
    }
    return [exprs[stat].alias(stat_column(stat, k, p)) for stat in exprs if stat in stats]


def per_group(
    lists: pl.LazyFrame,
    requests: Sequence[tuple[ListRequest, OfGroup]],
    keys: Keys,
    *,
    items: pl.LazyFrame | None,
) -> pl.LazyFrame:
    """One row per ``by`` group (one row without ``by``), a Float64 column per request."""
    by = list(keys.by)
    wanted = reads(requests)
    exposure_names = {weighting: stat_column("x", *weighting) for weighting in wanted}

    def count_within(k: int | None) -> pl.Expr:
        return (pl.len() if k is None else (pl.col(keys.rank) <= k).sum()).cast(pl.Int64)

    # x_i per group, cutoff and patience: each (user, item) appears once in a list. The
    # attention p^(r - 1) summed over the lists is a float sum over rows in no fixed
    # order: exact (fixed point), the same bits on every call; counts are integers
    attention = {
        name: attention_within(pl.col(keys.rank), k, p)
        for (k, p), name in exposure_names.items()
        if p is not None
    }
    counts = [count_within(k).alias(name) for (k, p), name in exposure_names.items() if p is None]
    exposures = exact_sums(lists, [*by, keys.item], attention, also=counts)
    columns = [
        expr
        for (k, p), stats in wanted.items()
        for expr in item_stats(pl.col(exposure_names[k, p]), k, p, stats)
    ]
    # no list at all (possible only without by): no group of lists to describe
    columns.append(pl.len().alias(ANY_LIST))
    groups = agg(exposures, by, columns)
    counted = list(dict.fromkeys(k for (k, _), stats in wanted.items() if "users" in stats))
    if counted:
        lengths = lists.group_by(keys.list_keys).agg(
            (pl.len() if k is None else (pl.col(keys.rank) <= k).sum())
            .cast(pl.Int64)
            .alias(f"{PREFIX}ku@{k}")
            for k in counted
        )
        users = agg(
            lengths,
            by,
            [
                expr
                for k in counted
                for expr in (
                    (pl.col(f"{PREFIX}ku@{k}") > 0)
                    .sum()
                    .cast(pl.Float64)
                    .alias(stat_column("users", k)),
                    pl.col(f"{PREFIX}ku@{k}")
                    .max()
                    .cast(pl.Float64)
                    .alias(stat_column("longest", k)),
                )
            ],
        )
        groups = attach(groups, users, by)
    groups = attach(groups, _catalog_size(items), [])
    return groups.select(*by, *values(requests))


def _catalog_size(items: pl.LazyFrame | None) -> pl.LazyFrame:
    """One row: :data:`CATALOG_N`, the catalog's size (null without a catalog)."""
    if items is not None:
        return items.select(pl.len().cast(pl.Float64).alias(CATALOG_N))
    return pl.LazyFrame({CATALOG_N: [None]}, schema={CATALOG_N: pl.Float64})


# ---------------------------------------------------------------- at every k of a grid

# the running counts down the ks (the lists with an item, the items shown, the pairs of
# lists sharing one), and x_i's step at a position and x_i after it
_USERS, _SHOWN, _PAIRS = f"{PREFIX}u", f"{PREFIX}shown", f"{PREFIX}pairs"
_X, _AFTER = f"{PREFIX}x", f"{PREFIX}after"
# the statistics of the sorted exposures, at the wanted ks only
_SORTED: frozenset[ExposureStat] = frozenset({"total", "ranked", "xlogx"})


def statistics_on_grid(
    lists: pl.LazyFrame,
    requests: Sequence[tuple[ListRequest, OfGroup]],
    keys: Keys,
    grid: pl.LazyFrame,
    *,
    cutoff: str,
    wanted: Sequence[int],
    items: pl.LazyFrame | None,
) -> pl.LazyFrame:
    """Per row (by..., k) of ``grid``: the statistics the requests read at that row's k.

    ``grid``: per ``by`` group, every k (column ``cutoff``, Int64) from 1 up
    to the longest list, and the ``wanted`` ks beyond it; ``lists``: the
    ranked cut, ``keys.rank`` the position. The columns are :func:`exposure`'s
    without a cutoff (the row holds its k), with :data:`ANY_LIST` (the lists
    with an item within k) and :data:`CATALOG_N`: :func:`values` with
    ``length`` the row's k finishes each measure as at one cutoff.

    Running counts down the ks: the users with a list (from its first
    position), the items shown (from the first k where any list shows it)
    and the pairs of lists sharing an item (C(x_i, 2) steps as x_i grows); no
    pair of users is built. Σ x, Σ r x_(r) and Σ x ln x read the sorted
    exposures, at each wanted k only (items x wanted ks rows), with
    :func:`item_stats`. With a patience p, x_i grows by p^(r - 1) for each
    list holding item i at rank r (its shown and pairs count the lists).
    """
    by = list(keys.by)
    patience: dict[float | None, set[ExposureStat]] = {}
    counted: set[ExposureStat] = set()
    for request, hook in requests:
        patience.setdefault(hook.weight(request), set()).update(hook.reads)
        counted |= hook.reads
    # x_i grows by the number of lists holding item i at each position
    events = _growth(lists, keys, None)
    table = _running_counts(lists, events, keys, grid, cutoff=cutoff, counted=counted)
    table = attach(table, _catalog_size(items), [])
    at_wanted = grid.join(
        pl.LazyFrame({cutoff: wanted}, schema={cutoff: pl.Int64}), on=cutoff, how="semi"
    )
    for p, stats in patience.items():
        sorted_stats = stats & _SORTED
        if sorted_stats:
            growth = events if p is None else _growth(lists, keys, p)
            sums = _sorted_exposures(
                growth, keys, at_wanted, cutoff=cutoff, p=p, stats=sorted_stats
            )
            table = table.join(sums, on=[*by, cutoff], how="left")
    # every p reads the counted statistics (shown, pairs, users) of the lists
    running = {"shown": _SHOWN, "pairs": _PAIRS}
    return table.select(
        *by,
        cutoff,
        pl.col(_USERS).alias(ANY_LIST),
        pl.col(CATALOG_N),
        pl.col(_USERS).cast(pl.Float64).alias(stat_column("users", None)),
        *[
            pl.col(column).cast(pl.Float64).alias(stat_column(stat, None, p))
            for p, stats in patience.items()
            for stat, column in running.items()
            if stat in stats
        ],
        *[
            pl.col(stat_column(stat, None, p))
            for p, stats in patience.items()
            for stat in sorted(stats & _SORTED)
        ],
    )


def _growth(lists: pl.LazyFrame, keys: Keys, p: float | None) -> pl.LazyFrame:
    """Per (by..., item, position held): x_i's step there and x_i after it, by position.

    The lists holding item i at rank r add 1 each (p ``None``), or p^(r - 1)
    each: their number times it, the same in any order.
    """
    by, item, position = list(keys.by), keys.item, keys.rank
    if p is None:
        steps = lists.group_by([*by, item, position]).agg(pl.len().cast(pl.Int64).alias(_X))
    else:
        steps = (
            lists.group_by([*by, item, position])
            .agg(pl.len().alias(_X))
            .with_columns((attention_within(pl.col(position), None, p) * pl.col(_X)).alias(_X))
        )
    return steps.sort([*by, item, position]).with_columns(
        pl.col(_X).cum_sum().over([*by, item]).alias(_AFTER)
    )


def _running_counts(
    lists: pl.LazyFrame,
    events: pl.LazyFrame,
    keys: Keys,
    grid: pl.LazyFrame,
    *,
    cutoff: str,
    counted: set[ExposureStat],
) -> pl.LazyFrame:
    """``grid`` with the users, the items shown and the pairs sharing one, at each k (Int64)."""
    by, item, position = list(keys.by), keys.item, keys.rank
    starts = lists.group_by(keys.list_keys).agg(pl.col(position).min().alias(cutoff))
    per_k = [starts.group_by([*by, cutoff]).agg(pl.len().cast(pl.Int64).alias(_USERS))]
    after = pl.col(_AFTER)
    before = after - pl.col(_X)
    if "shown" in counted:
        firsts = events.group_by([*by, item]).agg(pl.col(position).min().alias(cutoff))
        per_k.append(firsts.group_by([*by, cutoff]).agg(pl.len().cast(pl.Int64).alias(_SHOWN)))
    if "pairs" in counted:
        # C(x, 2) pairs of lists share item i: each step of x_i adds C(after, 2) - C(before, 2)
        shared_pairs = (after * (after - 1) - before * (before - 1)) // 2
        per_k.append(
            events.group_by([*by, position])
            .agg(shared_pairs.sum().alias(_PAIRS))
            .rename({position: cutoff})
        )
    running = grid
    for frame in per_k:
        running = running.join(
            frame.with_columns(pl.col(cutoff).cast(pl.Int64)), on=[*by, cutoff], how="left"
        )
    counters = [name for name in (_USERS, _SHOWN, _PAIRS) if name in running.collect_schema()]
    return (
        running.with_columns(pl.col(counters).fill_null(0))
        .sort([*by, cutoff])
        .with_columns(pl.col(counters).cum_sum().over(by or pl.lit(1)))
    )


def _sorted_exposures(
    events: pl.LazyFrame,
    keys: Keys,
    grid: pl.LazyFrame,
    *,
    cutoff: str,
    p: float | None,
    stats: set[ExposureStat],
) -> pl.LazyFrame:
    """:func:`item_stats` per (by..., k) of ``grid``: of the shown items' exposures x_i(k)."""
    by, item, position = list(keys.by), keys.item, keys.rank
    per_item = events.group_by([*by, item]).agg(pl.col(position).min().alias(f"{PREFIX}first"))
    # each shown item at every k of the grid from its first appearance: its exposure there
    exposures = (
        per_item.join(grid.select(*by, cutoff), on=by, how="inner")
        if by
        else per_item.join(grid.select(cutoff), how="cross")
    ).filter(pl.col(cutoff) >= pl.col(f"{PREFIX}first"))
    exposures = exposures.sort(cutoff).join_asof(
        events.select(*by, item, pl.col(position).cast(pl.Int64), _AFTER).sort(position),
        left_on=cutoff,
        right_on=position,
        by=[*by, item],
        strategy="backward",
        # both sides are sorted by the key above; with by groups Polars cannot check it
        check_sortedness=False,
    )
    # an item whose attention p^(r - 1) is below the smallest float is still shown here (its
    # x ln x is 0, its place in the ranking as in per_group's: Gini and entropy unchanged)
    stats_exprs = item_stats(pl.col(_AFTER), None, p, stats, all_shown=True)
    return exposures.group_by([*by, cutoff]).agg(stats_exprs)


# ---------------------------------------------------------------- merged across partitions


def merged_values(
    histogram: pl.DataFrame,
    users: pl.DataFrame,
    attended: pl.DataFrame | None,
    *,
    by: Sequence[str],
    cutoffs: Sequence[int | None],
    attention: Sequence[tuple[int | None, float]],
    requests: Sequence[tuple[ListRequest, OfGroup]],
    catalog_n: float | None,
) -> pl.DataFrame:
    """Each :class:`OfGroup` measure per ``by`` group, from exposures merged across partitions.

    The kind's partial is, per partition of the users (a Spark bucket), each
    item's exposure x_i at each cutoff and each list's length; it merges by
    adding x_i per item (each user is in one partition) and U per group (the
    longest list: the maximum). From the merged exposures this finishes as
    :func:`per_group` does on one machine, with the same columns and
    formulas (:func:`values`):

    ``histogram``: per (by..., ``cut``, ``x``) the number ``m`` of items with
    that exposure at the cutoff of index ``cut`` of ``cutoffs`` (a histogram
    as long as the distinct exposures, whatever the catalog's size);
    ``users``: per ``by`` group, ``u{i}`` the lists with an item within the
    i-th cutoff and ``l{i}`` the longest of them; ``attended``: per (by...,
    item shown) its attention x_i ``__a{j}`` for the j-th (cutoff, patience)
    of ``attention`` (reals: no short histogram); ``catalog_n``: the
    catalog's size.
    """
    table = _histogram_totals(histogram, users, by, len(cutoffs))
    extra: list[str] = []
    if attended is not None:
        stats = [
            expr
            for index, (k, p) in enumerate(attention)
            for expr in item_stats(
                pl.col(f"__a{index}"), k, p, {"shown", "total", "ranked", "xlogx"}
            )
        ]
        sums = attended.group_by(list(by)).agg(stats) if by else attended.select(stats)
        extra = [name for name in sums.columns if name not in by]
        table = (
            table.join(sums, on=list(by), how="left", nulls_equal=True)
            if by
            # a cross join: no lists at all leave the totals without a row, the sums with one
            else table.join(sums, how="cross")
        )
    columns: list[pl.Expr] = [
        pl.col("any").alias(ANY_LIST),
        pl.lit(catalog_n, pl.Float64).alias(CATALOG_N),
    ]
    for index, k in enumerate(cutoffs):
        columns += [
            pl.col(f"shown{index}").cast(pl.Float64).alias(stat_column("shown", k)),
            pl.col(f"sum{index}").cast(pl.Float64).alias(stat_column("total", k)),
            pl.col(f"ranked{index}").cast(pl.Float64).alias(stat_column("ranked", k)),
            (pl.col(f"pairs{index}").cast(pl.Float64) / 2.0).alias(stat_column("pairs", k)),
            pl.col(f"u{index}").cast(pl.Float64).alias(stat_column("users", k)),
            pl.col(f"l{index}").cast(pl.Float64).alias(stat_column("longest", k)),
            pl.col(f"xlogx{index}").alias(stat_column("xlogx", k)),
        ]
    named = table.select(*by, *columns, *extra)
    return named.select(*by, *values(requests))


def _histogram_totals(
    counts: pl.DataFrame, users: pl.DataFrame, by: Sequence[str], cuts: int
) -> pl.DataFrame:
    """Per ``by`` group, from the histogram (by..., cut, x, m), the sums of each cut.

    Integer sums, as :func:`per_group` takes them: the same numbers, then the
    same floating-point steps (Σ x ln x, a real, to rounding: m items of one
    exposure add m x ln x at once).
    """
    x, m = pl.col("x").cast(pl.Int64), pl.col("m").cast(pl.Int64)
    keys = [*by, "cut"]
    shown = pl.when(x > 0).then(m).otherwise(0)
    # the shown items with a smaller x come first: a block of m equal x takes the places
    # before + 1 .. before + m, whose sum is m * before + m (m + 1) / 2
    before = shown.cum_sum().over(keys) - shown
    places = pl.when(x > 0).then(m * before + m * (m + 1) // 2).otherwise(0)
    per_cut = (
        counts.sort([*keys, "x"])
        .with_columns(places.alias("places"))
        .group_by(keys)
        .agg(
            m.sum().alias("any"),
            shown.sum().alias("shown"),
            (x * m).sum().alias("sum"),
            (x * (x - 1) * m).sum().alias("pairs"),
            (x * pl.col("places")).sum().alias("ranked"),
            # Σ x ln x: m items of exposure x add m x ln x (reals, added in a fixed order)
            ordered_sum(pl.when(x > 0).then(m.cast(pl.Float64) * x_log_x(x))).alias("xlogx"),
        )
    )
    wide: pl.DataFrame | None = None
    for cut in range(cuts):
        # every shown item has a row for every cut, so every group has every cut
        part = per_cut.filter(pl.col("cut") == cut).select(
            *by,
            *([pl.col("any")] if cut == 0 else []),
            *(
                pl.col(name).alias(f"{name}{cut}")
                for name in ("shown", "sum", "pairs", "ranked", "xlogx")
            ),
        )
        if wide is None:
            wide = part
        else:
            wide = (
                wide.join(part, on=list(by), nulls_equal=True)
                if by
                else pl.concat([wide, part], how="horizontal")
            )
    if wide is None:  # pragma: no cover - group measures have at least one cutoff
        raise ValueError("no cutoff")
    if by:
        return wide.join(users, on=list(by), how="left", nulls_equal=True)
    return wide.join(users, how="cross")
