"""Rank-biased overlap of pairs of lists as Polars lazy plans (read by ``similarity``).

Each pair is a shorter list S (length s) and a longer list L (length l),
the items they share (with their positions in both) and L's items missing
from S (the "unseen" ones). Every item has a contribution c(i, d) to the
prefix of depth d of a list: 1 from its position on when it is not tied;
for a group of tied positions t..b (``ties="average"``) the ramp
(d - t + 1) / (b - t + 1) over t <= d < b, then 1 (Corsi & Urbano 2024). The
overlap at depth d is X_d = sum_i c_S(i, d) c_L(i, d) and the agreement
A_d = X_d / d.

Lists without ties (every pair under the strict tie rules) take closed
forms over the items: a shared item whose later position is F adds
p^d / d at every depth d >= F, so sum_{d<=l} X_d p^d / d is a sum over items
of H(l) - H(F - 1), with H(n) = sum_{d<=n} p^d / d read from one small table
(n up to the longest l + s), and G(n) = sum_{d<=n} p^d = p (1 - p^n) / (1 - p).
No row per depth is made. Pairs with a tie group sum over one row per
(pair, depth) instead (:func:`_tied`): the steps of the items are counted at
the depth they complete, and the tied positions of an item add rows of
their own.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from polars_rankmetrics._names import PREFIX

__all__ = ["ITEM", "LONG", "SHORT", "B", "Lists", "RboRequest", "T", "contribution", "rbo"]

# private columns (the reserved prefix: no input column has it)
T = f"{PREFIX}top"  # first position of the item's tie group (its position when untied)
B = f"{PREFIX}bottom"  # last position of that group
SHORT = f"{PREFIX}s"  # the shorter list's length, and prefix of its t/b columns
LONG = f"{PREFIX}l"  # the longer list's
ITEM = f"{PREFIX}item"
_D = f"{PREFIX}depth"
_N = f"{PREFIX}n"
_STEP = f"{PREFIX}step"
_RAMP = f"{PREFIX}ramp"
_J = f"{PREFIX}unseen"
_START = f"{PREFIX}start"
_END = f"{PREFIX}end"
_F = f"{PREFIX}complete"

_TS, _BS = pl.col(f"{SHORT}{T}"), pl.col(f"{SHORT}{B}")
_TL, _BL = pl.col(f"{LONG}{T}"), pl.col(f"{LONG}{B}")


@dataclass(frozen=True)
class RboRequest:
    """One RBO column: its label, form (``"ext"``, ``"min"``, ``"res"``) and persistence."""

    label: str
    form: str
    p: float


@dataclass(frozen=True)
class Lists:
    """The pairs of lists: lengths, shared items and the longer list's unseen items.

    ``lengths``: keys, s and l (``SHORT``, ``LONG``); ``common``: keys and
    t/b in S and in L; ``unseen``: keys, ``ITEM`` and t/b in L; ``tied``:
    the keys of the pairs with a group of ties (``None``: no ties anywhere).
    """

    lengths: pl.LazyFrame
    common: pl.LazyFrame
    unseen: pl.LazyFrame
    tied: pl.LazyFrame | None


def contribution(top: pl.Expr, bottom: pl.Expr, depth: pl.Expr) -> pl.Expr:
    """c(i, d): the share of the item's group of tied positions t..b within depth d."""
    share = (depth - top + 1).cast(pl.Float64) / (bottom - top + 1).cast(pl.Float64)
    return share.clip(0.0, 1.0)


def rbo(lists: Lists, keys: list[str], requests: Sequence[RboRequest]) -> pl.LazyFrame:
    """Each pair's RBO values (keys, one column per request; no row for two empty lists)."""
    values = _untied(lists, keys, requests)
    if lists.tied is None:
        return values
    lengths, common, unseen = (
        frame.join(lists.tied, on=keys, how="semi")
        for frame in (lists.lengths, lists.common, lists.unseen)
    )
    tied = _tied(Lists(lengths, common, unseen, None), keys, requests)
    labels = [one.label for one in requests]
    return (
        values.join(tied, on=keys, how="left", suffix="__tied")
        .with_columns(pl.coalesce(f"{label}__tied", label).alias(label) for label in labels)
        .select(*keys, *labels)
    )


def _h_table(lengths: pl.LazyFrame, ps: Sequence[float]) -> pl.LazyFrame:
    """H_p(n) = sum_{d=1}^{n} p^d / d for n = 0 .. max(l + s), one column per p."""
    n = pl.col(_N)
    return lengths.select(
        pl.int_range(
            0, (pl.col(LONG) + pl.col(SHORT)).max().fill_null(0) + 1, dtype=pl.Int64
        ).alias(_N)
    ).with_columns(
        pl.when(n > 0).then(pl.lit(p, pl.Float64).pow(n) / n).otherwise(0.0).cum_sum().alias(_h(p))
        for p in ps
    )


def _h(p: float) -> str:
    return f"{PREFIX}h_{p!r}"


def _at(table: pl.LazyFrame, frame: pl.LazyFrame, at: pl.Expr, name: str) -> pl.LazyFrame:
    """``frame`` with H_p(at) of every p, the columns suffixed ``name``."""
    renamed = table.rename({c: f"{c}{name}" for c in table.collect_schema().names() if c != _N})
    return frame.with_columns(at.alias(_N)).join(renamed, on=_N, how="left").drop(_N)


def _untied(lists: Lists, keys: list[str], requests: Sequence[RboRequest]) -> pl.LazyFrame:
    """RBO of lists without ties, in closed form over their items (see the module)."""
    ps = sorted({one.p for one in requests})
    s, l = pl.col(SHORT), pl.col(LONG)  # noqa: E741 - Webber et al.'s names
    table = _h_table(lists.lengths, ps).cache()
    # a shared item counts in X_d from F = its later position on
    common = (
        lists.common.join(lists.lengths, on=keys, how="left")
        .with_columns(pl.max_horizontal(_TS, _TL).alias(_F))
        .pipe(lambda frame: _at(table, frame, pl.col(_F) - 1, "_f"))
        .group_by(keys)
        .agg(
            pl.len().alias("x_l"),
            (pl.col(_F) <= pl.col(SHORT)).sum().alias("x_s"),
            *(pl.col(f"{_h(p)}_f").sum().alias(f"sum_{p!r}") for p in ps),
        )
    )
    # the maximum: S continues with L's unseen items in L's order, the j-th at depth s + j,
    # each counted from max(its position in L, s + j) on
    best = (
        lists.unseen.join(lists.lengths, on=keys, how="left")
        .with_columns(
            pl.max_horizontal(_TL, pl.struct(_TL, ITEM).rank("ordinal").over(keys) + s).alias(_F)
        )
        .filter(pl.col(_F) <= l)
        .pipe(lambda frame: _at(table, frame, pl.col(_F) - 1, "_f"))
        .group_by(keys)
        .agg(
            pl.len().alias("m_n"),
            *(pl.col(f"{_h(p)}_f").sum().alias(f"m_{p!r}") for p in ps),
        )
    )
    pairs = lists.lengths.filter(l > 0).join(common, on=keys, how="left")
    if any(one.form == "res" for one in requests):
        pairs = pairs.join(best, on=keys, how="left")
    else:
        pairs = pairs.with_columns(pl.lit(0).alias("m_n"))
    pairs = pairs.with_columns(
        pl.col("x_l", "x_s", "m_n").fill_null(0).cast(pl.Int64)
    ).with_columns((l + s - pl.col("x_l")).alias("f"))
    for at, name in ((l, "_l"), (s, "_s"), (pl.col("f"), "_ff")):
        pairs = _at(table, pairs, at, name)
    return pairs.select(*keys, *(_closed_form(one).alias(one.label) for one in requests))


def _closed_form(request: RboRequest) -> pl.Expr:
    p, form = request.p, request.form
    s, l = pl.col(SHORT), pl.col(LONG)  # noqa: E741 - Webber et al.'s names
    x_l, x_s = pl.col("x_l"), pl.col("x_s")
    h_l, h_s, h_f = (pl.col(f"{_h(p)}{name}") for name in ("_l", "_s", "_ff"))
    scale = (1 - p) / p

    def g(n: pl.Expr) -> pl.Expr:
        return p * (1 - pl.lit(p, pl.Float64).pow(n)) / (1 - p)

    # sum_{d=1}^{l} X_d p^d / d: each shared item adds H(l) - H(F - 1)
    head = x_l * h_l - pl.col(f"sum_{p!r}").fill_null(0.0)
    low = scale * (head + x_l * (math.log(1 / (1 - p)) - h_l))
    if form == "min":
        return low
    if form == "ext":
        a_s = pl.when(s > 0).then(x_s / s).otherwise(0.0)
        # depths s < d <= l: the unseen part of S agrees as at depth s, A_s (d - s) / d
        grown = a_s * ((g(l) - g(s)) - s * (h_l - h_s))
        tail = (x_l + (l - s) * a_s) / l * pl.lit(p, pl.Float64).pow(l)
        return pl.when(s > 0).then(scale * (head + grown) + tail).otherwise(0.0)
    f = pl.col("f")
    best = pl.col("m_n") * h_l - pl.col(f"m_{p!r}").fill_null(0.0)
    # depths l < d <= f: overlap 2d - l - s + X_l; beyond f both lists are the same
    far = 2 * (g(f) - g(l)) - f * (h_f - h_l)
    high = scale * (head + best + far) + pl.lit(p, pl.Float64).pow(f)
    return high - low


def _steps_and_ramps(
    items: pl.LazyFrame, keys: list[str], start: pl.Expr, end: pl.Expr, value: pl.Expr
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """An item's contribution as a step of 1 at depth ``end`` and its values on [start, end).

    ``value`` is evaluated at depth ``_D`` on the rows of the ramp (ties only).
    """
    steps = items.select(*keys, end.alias(_D)).group_by([*keys, _D]).agg(pl.len().alias(_STEP))
    ramps = (
        items.with_columns(start.alias(_START), end.alias(_END))
        .filter(pl.col(_START) < pl.col(_END))
        .with_columns(pl.int_ranges(pl.col(_START), pl.col(_END)).alias(_D))
        .explode(_D)
        .group_by([*keys, _D])
        .agg(value.sum().alias(_RAMP))
    )
    return steps, ramps


def _per_depth(
    depths: pl.LazyFrame, keys: list[str], parts: tuple[pl.LazyFrame, pl.LazyFrame], name: str
) -> pl.LazyFrame:
    """Add column ``name``: the steps completed by each depth plus the ramps at that depth."""
    steps, ramps = parts
    return (
        depths.join(steps, on=[*keys, _D], how="left")
        .join(ramps, on=[*keys, _D], how="left")
        .sort([*keys, _D])
        .with_columns(
            (
                pl.col(_STEP).fill_null(0).cum_sum().over(keys).cast(pl.Float64)
                + pl.col(_RAMP).fill_null(0.0)
            ).alias(name)
        )
        .drop(_STEP, _RAMP)
    )


def _depth_table(lists: Lists, keys: list[str], *, need_max: bool) -> pl.LazyFrame:
    """One row per (pair, depth d): X_d, the unseen items' sum and count, M_d, s and l."""
    short, long = pl.col(SHORT), pl.col(LONG)
    depth = pl.col(_D)
    # the depths read: 1..l, and with the maximum up to l + s (where its overlap completes)
    last = (long + short) if need_max else long
    depths = (
        lists.lengths.filter(long > 0)
        .with_columns(pl.int_ranges(1, last + 1, dtype=pl.Int64).alias(_D))
        .explode(_D)
        .select(*keys, _D)
    )
    both = contribution(_TS, _BS, depth) * contribution(_TL, _BL, depth)
    frame = _per_depth(
        depths,
        keys,
        _steps_and_ramps(
            lists.common, keys, pl.max_horizontal(_TS, _TL), pl.max_horizontal(_BS, _BL), both
        ),
        "x",
    )
    unseen = lists.unseen
    # the mean contribution of the longer list's unseen items, over those already started
    alone = contribution(_TL, _BL, depth)
    frame = _per_depth(frame, keys, _steps_and_ramps(unseen, keys, _TL, _BL, alone), "u_sum")
    started = unseen.select(*keys, _TL.alias(_D)).group_by([*keys, _D]).agg(pl.len().alias(_STEP))
    frame = _per_depth(frame, keys, (started, started.head(0).rename({_STEP: _RAMP})), "u_n")
    frame = frame.join(lists.lengths, on=keys, how="left")
    if need_max:
        # the maximum: S continues with L's unseen items in their order, the j-th at depth
        # s + j
        ranked = unseen.join(lists.lengths.select(*keys, short), on=keys, how="left").with_columns(
            (pl.struct(_TL, ITEM).rank("ordinal").over(keys) + short).alias(_J)
        )
        j = pl.col(_J)
        parts = _steps_and_ramps(
            ranked, keys, pl.max_horizontal(_TL, j), pl.max_horizontal(_BL, j), alone
        )
        frame = _per_depth(frame, keys, parts, "m")
    x = pl.col("x")
    x_s = x.filter(depth == short).first().over(keys).fill_null(0.0)
    return frame.with_columns(
        x_s.alias("x_s"),
        x.filter(depth == long).first().over(keys).alias("x_l"),
        pl.when(short > 0).then(x_s / short).otherwise(0.0).alias("a_s"),
    )


def _depth_sum(form: str, p: float) -> pl.Expr:
    """RBO of one pair from its rows of :func:`_depth_table` (an aggregation)."""
    short, long, depth = pl.col(SHORT), pl.col(LONG), pl.col(_D)
    x, x_l, a_s = pl.col("x"), pl.col("x_l"), pl.col("a_s")
    weight = pl.lit(p, pl.Float64).pow(depth)
    seen = depth <= short
    between = (depth > short) & (depth <= long)
    head = pl.when(seen).then(x / depth * weight).otherwise(0.0).sum()
    if form == "ext":
        unseen = pl.col("u_sum") / pl.col("u_n")
        grown = x + (depth - short) * a_s * unseen
        mid = pl.when(between).then(grown / depth * weight).otherwise(0.0).sum()
        tail = (x_l + (long - short) * a_s) / long * pl.lit(p).pow(long + 1) / (1 - p)
        return (head + mid + tail.first()) * (1 - p) / p
    harmonic = pl.when(depth <= long).then(weight / depth).otherwise(0.0).sum()
    low = head + pl.when(between).then(x / depth * weight).otherwise(0.0).sum()
    low = low + x_l.first() * (math.log(1 / (1 - p)) - harmonic)
    if form == "min":
        return low * (1 - p) / p
    # the residual: RBO_max - RBO_min, the maximum's overlap completing at depth f
    f = long + short - x_l
    mid = pl.when(between).then((x + pl.col("m")) / depth * weight).otherwise(0.0).sum()
    beyond = (depth > long) & (depth < f + 1)
    far = pl.when(beyond).then((2 * depth - long - short + x_l) / depth * weight).otherwise(0.0)
    high = head + mid + far.sum() + (pl.lit(p).pow(f + 1) / (1 - p)).first()
    return (high - low) * (1 - p) / p


def _tied(lists: Lists, keys: list[str], requests: Sequence[RboRequest]) -> pl.LazyFrame:
    """RBO of pairs with ties, summed over one row per (pair, depth)."""
    need_max = any(one.form == "res" for one in requests)
    frame = _depth_table(lists, keys, need_max=need_max)
    sums = [_depth_sum(one.form, one.p).alias(one.label) for one in requests]
    values = frame.group_by(keys).agg(*sums, pl.col(SHORT).first())
    # one list empty and the other not: nothing in common, and no extrapolation from it
    empty_ext = [
        pl.when(pl.col(SHORT) == 0).then(0.0).otherwise(pl.col(one.label)).alias(one.label)
        for one in requests
        if one.form == "ext"
    ]
    return values.with_columns(empty_ext).drop(SHORT)
