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

The rows summed per pair come out of joins, in an order the streaming engine
does not fix: every float sum is exact, in fixed point
(:func:`polars_rankmetrics._sums.exact_sums`), so a call gives the same bits
every time.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from polars_rankmetrics._names import PREFIX
from polars_rankmetrics._powers import power
from polars_rankmetrics._sums import exact_sums

__all__ = ["ITEM", "LONG", "SHORT", "B", "Lists", "RboRequest", "T", "contribution", "rbo"]

# private columns (the reserved prefix: no input column has it)
T = f"{PREFIX}top"  # first position of the item's tie group (its position when untied)
B = f"{PREFIX}bottom"  # last position of that group
SHORT = f"{PREFIX}s"  # the shorter list's length, and prefix of its t/b columns
LONG = f"{PREFIX}l"  # the longer list's
ITEM = f"{PREFIX}item"
_D = f"{PREFIX}depth"
_N = f"{PREFIX}n"
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
        pl.when(n > 0).then(power(p, n) / n).otherwise(0.0).cum_sum().alias(_h(p)) for p in ps
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
    common = exact_sums(
        lists.common.join(lists.lengths, on=keys, how="left")
        .with_columns(pl.max_horizontal(_TS, _TL).alias(_F))
        .pipe(lambda frame: _at(table, frame, pl.col(_F) - 1, "_f")),
        keys,
        {f"sum_{p!r}": pl.col(f"{_h(p)}_f") for p in ps},
        also=[pl.len().alias("x_l"), (pl.col(_F) <= pl.col(SHORT)).sum().alias("x_s")],
    )
    # the maximum: S continues with L's unseen items in L's order, the j-th at depth s + j,
    # each counted from max(its position in L, s + j) on
    best = exact_sums(
        lists.unseen.join(lists.lengths, on=keys, how="left")
        .with_columns(
            pl.max_horizontal(_TL, pl.struct(_TL, ITEM).rank("ordinal").over(keys) + s).alias(_F)
        )
        .filter(pl.col(_F) <= l)
        .pipe(lambda frame: _at(table, frame, pl.col(_F) - 1, "_f")),
        keys,
        {f"m_{p!r}": pl.col(f"{_h(p)}_f") for p in ps},
        also=[pl.len().alias("m_n")],
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
        return p * (1 - power(p, n)) / (1 - p)

    # sum_{d=1}^{l} X_d p^d / d: each shared item adds H(l) - H(F - 1)
    head = x_l * h_l - pl.col(f"sum_{p!r}").fill_null(0.0)
    low = scale * (head + x_l * (math.log(1 / (1 - p)) - h_l))
    if form == "min":
        return low
    if form == "ext":
        a_s = pl.when(s > 0).then(x_s / s).otherwise(0.0)
        # depths s < d <= l: the unseen part of S agrees as at depth s, A_s (d - s) / d
        grown = a_s * ((g(l) - g(s)) - s * (h_l - h_s))
        tail = (x_l + (l - s) * a_s) / l * power(p, l)
        return pl.when(s > 0).then(scale * (head + grown) + tail).otherwise(0.0)
    f = pl.col("f")
    best = pl.col("m_n") * h_l - pl.col(f"m_{p!r}").fill_null(0.0)
    # depths l < d <= f: overlap 2d - l - s + X_l; beyond f both lists are the same
    far = 2 * (g(f) - g(l)) - f * (h_f - h_l)
    high = scale * (head + best + far) + power(p, f)
    return high - low


def _events(
    items: pl.LazyFrame,
    keys: list[str],
    start: pl.Expr,
    end: pl.Expr,
    value: pl.Expr,
    *,
    name: str,
) -> list[pl.LazyFrame]:
    """An item's contribution: a step of 1 at depth ``end``, its values on [start, end).

    Columns ``step_<name>`` and ``ramp_<name>``; ``value`` is evaluated at
    depth ``_D`` on the rows of the ramp (tied positions only).
    """
    steps = items.select(*keys, end.alias(_D), pl.lit(1, pl.Int64).alias(f"step_{name}"))
    ramps = (
        items.with_columns(start.alias(_START), end.alias(_END))
        .filter(pl.col(_START) < pl.col(_END))
        .with_columns(pl.int_ranges(pl.col(_START), pl.col(_END), dtype=pl.Int64).alias(_D))
        .explode(_D)
        .select(*keys, _D, value.alias(f"ramp_{name}"))
    )
    return [steps, ramps]


def _depth_table(lists: Lists, keys: list[str], *, need_max: bool) -> pl.LazyFrame:
    """One row per (pair, depth d): s, l, X_d, U_d (the unseen items' mean contribution), M_d.

    Every item's steps and ramps are one table of events, summed per (pair,
    depth) once and accumulated down the depths of each pair.
    """
    short, long, depth = pl.col(SHORT), pl.col(LONG), pl.col(_D)
    # the depths read: 1..l, and with the maximum up to l + s (where its overlap completes)
    last = (long + short) if need_max else long
    depths = (
        lists.lengths.filter(long > 0)
        .with_columns(pl.int_ranges(1, last + 1, dtype=pl.Int64).alias(_D))
        .explode(_D)
    )
    both = contribution(_TS, _BS, depth) * contribution(_TL, _BL, depth)
    alone = contribution(_TL, _BL, depth)
    common_end = pl.max_horizontal(_BS, _BL)
    events = [
        *_events(lists.common, keys, pl.max_horizontal(_TS, _TL), common_end, both, name="x"),
        # the mean contribution of the longer list's unseen items, over those already started
        *_events(lists.unseen, keys, _TL, _BL, alone, name="u"),
        lists.unseen.select(*keys, _TL.alias(_D), pl.lit(1, pl.Int64).alias("step_n")),
    ]
    names = ["x", "u", "n"]
    if need_max:
        # the maximum: S continues with L's unseen items in their order, the j-th at depth
        # s + j
        ranked = lists.unseen.join(lists.lengths, on=keys, how="left").with_columns(
            (pl.struct(_TL, ITEM).rank("ordinal").over(keys) + short).alias(_J)
        )
        j = pl.col(_J)
        events += _events(
            ranked, keys, pl.max_horizontal(_TL, j), pl.max_horizontal(_BL, j), alone, name="m"
        )
        names.append("m")
    every = pl.concat(events, how="diagonal")
    columns = every.collect_schema().names()
    # the steps are integers (exact in any order); the ramps' fractions exact sums
    ramps = {f"ramp_{name}": pl.col(f"ramp_{name}") for name in names if f"ramp_{name}" in columns}
    summed = exact_sums(
        every, [*keys, _D], ramps, also=[pl.col(f"step_{name}").sum() for name in names]
    )
    level = [
        (
            pl.col(f"step_{name}").fill_null(0).cum_sum().over(keys).cast(pl.Float64)
            + (pl.col(f"ramp_{name}").fill_null(0.0) if f"ramp_{name}" in columns else 0.0)
        ).alias(name)
        for name in names
    ]
    return (
        depths.join(summed, on=[*keys, _D], how="left")
        .sort([*keys, _D])
        .with_columns(level)
        .select(*keys, _D, short, long, *names)
    )


def _sum(name: str, p: float | None = None) -> str:
    """The column of one sum of :func:`_depth_sums` (of persistence ``p``)."""
    return f"{PREFIX}{name}" if p is None else f"{PREFIX}{name}_{p!r}"


def _depth_sums(requests: Sequence[RboRequest]) -> tuple[dict[str, pl.Expr], list[pl.Expr]]:
    """The sums over one pair's rows of :func:`_depth_table` that RBO reads.

    Each sum once per persistence p (the forms of one p share them), named as
    :func:`_from_sums` reads them: the row terms :func:`exact_sums` adds (null
    off the depths summed), and the other aggregations (s, l, X_s, X_l).
    """
    short, long, depth = pl.col(SHORT), pl.col(LONG), pl.col(_D)
    x = pl.col("x")
    seen = depth <= short
    between = (depth > short) & (depth <= long)
    others = [
        short.first(),
        long.first(),
        x.filter(depth == short).first().fill_null(0.0).alias(_sum("x_s")),
        # all of the longer list's items have completed by depth l: X_d = X_l from there on
        x.filter(depth == long).first().alias(_sum("x_l")),
    ]
    terms: dict[str, pl.Expr] = {}
    for p in sorted({one.p for one in requests}):
        forms = {one.form for one in requests if one.p == p}
        over_d = power(p, depth) / depth
        terms[_sum("head", p)] = pl.when(seen).then(x * over_d)
        terms[_sum("low_mid", p)] = pl.when(between).then(x * over_d)
        terms[_sum("harmonic", p)] = pl.when(depth <= long).then(over_d)
        if "ext" in forms:
            unseen = pl.col("u") / pl.col("n")
            terms[_sum("grown", p)] = pl.when(between).then((depth - short) * unseen * over_d)
        if "res" in forms:
            # depths l < d < f + 1, f = l + s - X_l: overlap 2d - l - s + X_l (x is X_l there)
            beyond = (depth > long) & (depth < long + short - x + 1)
            terms[_sum("far", p)] = pl.when(beyond).then((2 * depth - long - short + x) * over_d)
            terms[_sum("best", p)] = pl.when(between).then(pl.col("m") * over_d)
    return terms, others


def _from_sums(request: RboRequest) -> pl.Expr:
    """RBO of one pair from the columns of :func:`_depth_sums`."""
    p, form = request.p, request.form
    s, l = pl.col(SHORT), pl.col(LONG)  # noqa: E741 - Webber et al.'s names
    x_s, x_l = pl.col(_sum("x_s")), pl.col(_sum("x_l"))
    head, low_mid = pl.col(_sum("head", p)), pl.col(_sum("low_mid", p))
    low = head + low_mid + x_l * (math.log(1 / (1 - p)) - pl.col(_sum("harmonic", p)))
    scale = (1 - p) / p
    if form == "ext":
        a_s = pl.when(s > 0).then(x_s / s).otherwise(0.0)
        tail = (x_l + (l - s) * a_s) / l * power(p, l)
        value = pl.when(s > 0).then(
            scale * (head + low_mid + a_s * pl.col(_sum("grown", p))) + tail
        )
        return value.otherwise(0.0)
    if form == "min":
        return scale * low
    f = l + s - x_l
    high = scale * (head + low_mid + pl.col(_sum("best", p)) + pl.col(_sum("far", p)))
    return high + power(p, f) - scale * low


def _tied(lists: Lists, keys: list[str], requests: Sequence[RboRequest]) -> pl.LazyFrame:
    """RBO of pairs with ties, summed over one row per (pair, depth)."""
    need_max = any(one.form == "res" for one in requests)
    frame = _depth_table(lists, keys, need_max=need_max)
    terms, others = _depth_sums(requests)
    sums = exact_sums(frame, keys, terms, also=others)
    return sums.select(*keys, *(_from_sums(one).alias(one.label) for one in requests))
