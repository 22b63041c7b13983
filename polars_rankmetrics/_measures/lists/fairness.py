"""Group fairness of exposure within one list: AWRF and NDKL, against the catalog's group shares.

Items belong to groups (``items=``, ``group=``: a label, or a list of
labels, an item of m groups giving 1/m to each). The target distribution
t_g is each group's share of the catalog, Σ_i w_ig / n over its n items.

    awrf(p=0.5)@k = 1 - JS(d ‖ t),  d_g = Σ_{r<=k} p^(r-1) w_(r)g / Σ_{r<=k} p^(r-1)

Notes
-----
The attention at rank r is p^(r - 1) (RBP patience p, Moffat & Zobel 2008);
an item of several groups splits its attention. JS is the Jensen-Shannon
*distance* with base-2 logarithms (the square root of the divergence, in
[0, 1]), so AWRF is in [0, 1], 1 when the list's attention is spread as the
catalog is. The Jensen-Shannon form is TREC Fair Ranking 2022's (whose
script uses another attention model: :func:`~polars_rankmetrics.trec_fair_score`).

    ndkl@k = (1 / Z) Σ_{i=1..k_u} KL(D_i ‖ t) / log2(i + 1),  Z = Σ_{i=1..k_u} 1 / log2(i + 1)

D_i: the group shares of the list's top i items (each item 1, split over its
groups), natural logarithm, k_u the list's length within k. A group the top
i lacks adds 0 (0 ln 0 = 0), and so does a membership of weight 0; every
group shown with a positive weight has t_g > 0 (its items are in the
catalog), so no smoothing is needed and NDKL is finite, 0 when every prefix
has the catalog's shares.

Only the groups of the list are visited: with the groups it lacks adding
t_g to the divergence's half-sum, JS^2 = (1/2) Σ_{g in list} [d log2(2d /
(d + t)) + t log2(2t / (d + t))] + (1/2) (1 - Σ_{g in list} t_g), with
0 log 0 = 0: a share d too small for a float (a group first shown at rank 80
of p = 0.5) or a group of weight 0 keeps AWRF finite. A JS^2
below 1e-15 (rounding: the catalog's shares sum to 1 within a few ulps)
counts as 0, since the square root magnifies it (1e-17 -> 3e-9): a list
spread exactly as the catalog gets AWRF 1 on every surface.

References
----------
Sapiezynski et al., "Quantifying the impact of user attention on fair group
representation in ranked lists", WWW 2019 Companion (AWRF); Geyik, Ambler &
Kenthapadi, "Fairness-aware ranking in search & recommendation systems with
application to LinkedIn talent search", KDD 2019 (NDKL); Moffat & Zobel, TOIS
2008 (the patience p).
"""

from __future__ import annotations

import math

import polars as pl

from polars_rankmetrics._measures._registry import Param
from polars_rankmetrics._measures.lists._exposure import x_log_x
from polars_rankmetrics._measures.lists._hooks import (
    LIST_CODE,
    Coded,
    CurveFrames,
    ListRequest,
    PerList,
)
from polars_rankmetrics._measures.lists._register import register_list
from polars_rankmetrics._measures.lists._shared import (
    CAT,
    CAT_CODE,
    KEY,
    W,
    attention,
    check_patience,
    high,
    item_categories,
    low,
    pack,
)
from polars_rankmetrics._names import PREFIX
from polars_rankmetrics._sums import exact_sums

__all__ = ["AWRF", "NDKL"]

_A = f"{PREFIX}attention"  # attention of a row, p^(r - 1)
_D = f"{PREFIX}d"  # the list's share of a group (its running count in a prefix)
_T = f"{PREFIX}t"  # the catalog's share of a group
_TOTAL = f"{PREFIX}total"  # the list's attention (its rows, in a prefix)
_J = f"{PREFIX}j"  # rows in the prefix
_FIRST = f"{PREFIX}first"  # the first position a group appears at


def _targets(pairs: pl.LazyFrame, item: str, label: str) -> pl.LazyFrame:
    """Each group's share of the catalog: (label, _T) from one row per (item, group, W)."""
    n = pl.col(item).n_unique().cast(pl.Float64)
    return (
        exact_sums(pairs, [label], {_T: pl.col(W)})
        .join(pairs.select(n.alias("__prm_n")), how="cross")
        .select(label, (pl.col(_T) / pl.col("__prm_n")).alias(_T))
    )


def js_awrf(d: pl.Expr, t: pl.Expr) -> tuple[pl.Expr, pl.Expr]:
    """The per-group term of JS^2 (base 2) over the groups of a list, and t (to sum).

    d log2(2d / (d + t)) + t log2(2t / (d + t)), written with u = (d - t) / (d + t)
    as (d + t) / 2 [(1 + u) log1p(u) + (1 - u) log1p(-u)] / ln 2: exactly 0
    where d = t and accurate near it, where the two logarithms cancel. Where a
    share is tiny or 0 (1 + u or 1 - u below 1/2), its half is x ln x of
    x = 2d / (d + t) (or 2t / (d + t)) itself, 0 at x = 0 (0 log 0 = 0): u
    rounds to -1 when d is below 1e-16 t, and 0 x log1p(-1) would be NaN.
    A group with d = t = 0 (membership weights 0) adds 0.
    """
    total = d + t
    u = (d - t) / total
    term = 0.5 * total * (_half(2.0 * d / total, u) + _half(2.0 * t / total, -u)) / math.log(2.0)
    return pl.when(total > 0).then(term).otherwise(0.0), t


def _half(x: pl.Expr, v: pl.Expr) -> pl.Expr:
    """X ln x for x = 1 + v: by log1p(v) near 1, from x itself below 1/2, 0 at 0."""
    return (
        pl.when(x >= 0.5).then((1.0 + v) * v.log1p()).when(x > 0).then(x * x.log()).otherwise(0.0)
    )


# JS^2 below this is rounding (Σ t of the list's groups is 1 to within a few ulps): 0
_NOISE = 1e-15


def awrf_from_sums(terms: pl.Expr, shown_target: pl.Expr) -> pl.Expr:
    """1 - sqrt(JS^2) from Σ_{g in list} of the two parts of :func:`js_awrf`."""
    divergence = 0.5 * terms + 0.5 * (1.0 - shown_target)
    # the square root magnifies rounding near 0 (1e-17 -> 3e-9): snap it to 0 there
    return 1.0 - pl.when(divergence > _NOISE).then(divergence).otherwise(0.0).sqrt()


def _awrf_value(request: ListRequest, coded: Coded) -> pl.LazyFrame:
    """AWRF per list code."""
    p, label, rank = request.number("p"), request.label, coded.keys.rank
    targets = _targets(coded.table, coded.keys.item, CAT_CODE)
    # one integer key per (list, group): hashed about twice as fast as the two codes. The
    # rows come out of joins in no fixed order: every float sum here is exact (fixed
    # point), the same bits on every call
    keyed = coded.labeled.with_columns(pack(LIST_CODE, CAT_CODE).alias(KEY))
    sums = exact_sums(keyed, [KEY], {_D: attention(pl.col(rank), p) * pl.col(W)}).select(
        high(KEY).alias(LIST_CODE), low(KEY).alias(CAT_CODE), _D
    )
    # the list's attention: Σ over its groups (each item's shares W sum to 1)
    totals = exact_sums(sums, [LIST_CODE], {_TOTAL: pl.col(_D)})
    shares = (
        sums.join(targets, on=CAT_CODE)
        .join(totals, on=LIST_CODE)
        .with_columns(pl.col(_D) / pl.col(_TOTAL))
    )
    term, t = js_awrf(pl.col(_D), pl.col(_T))
    return _awrf_of_sums(shares, [LIST_CODE], term, t, label)


def _awrf_of_sums(
    frame: pl.LazyFrame, keys: list[str], term: pl.Expr, t: pl.Expr, label: str
) -> pl.LazyFrame:
    """AWRF per ``keys`` from the exact sums of :func:`js_awrf`'s two parts over its groups."""
    sums = exact_sums(frame, keys, {"__prm_term": term, "__prm_shown": t})
    value = awrf_from_sums(pl.col("__prm_term"), pl.col("__prm_shown"))
    return sums.select(*keys, value.alias(label))


def _prefixes(rows: pl.LazyFrame, keys: list[str], position: str, weight: pl.Expr) -> pl.LazyFrame:
    """Per (list, position it holds, group seen so far): the running Σ weight of the group.

    ``rows``: one row per (list row, group of its item) with ``W``. Each
    group of a list is carried from its first position to the list's end,
    so the frame has (groups of the list x positions from there) rows.
    """
    steps = exact_sums(rows, [*keys, CAT, position], {_D: weight})
    firsts = steps.group_by([*keys, CAT]).agg(pl.col(position).min().alias(_FIRST))
    positions = rows.select(*keys, position).unique()
    grid = firsts.join(positions, on=keys).filter(pl.col(position) >= pl.col(_FIRST))
    return (
        grid.join(steps, on=[*keys, CAT, position], how="left")
        .with_columns(pl.col(_D).fill_null(0.0))
        .sort([*keys, CAT, position])
        .with_columns(pl.col(_D).cum_sum().over([*keys, CAT]))
        .drop(_FIRST)
    )


def _labeled_rows(frames: CurveFrames) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """The curve's rows with their groups' shares W, and the catalog's group shares."""
    if frames.catalog is None or frames.category is None:
        raise ValueError("awrf and ndkl need items with a group column")
    pairs = item_categories(frames.catalog, frames.item, frames.category, frames.weight).select(
        frames.item, CAT, W
    )
    rows = frames.rows.join(pairs, on=frames.item, how="inner")
    return rows, _targets(pairs, frames.item, CAT)


def _awrf_curve(request: ListRequest, frames: CurveFrames) -> pl.LazyFrame:
    """AWRF at each position the list holds, from the running attention per group."""
    keys, position, p = frames.list_keys, frames.position, request.number("p")
    rows, targets = _labeled_rows(frames)
    rows = rows.with_columns(attention(pl.col(position), p).alias(_A))
    running = _prefixes(rows, keys, position, pl.col(_A) * pl.col(W))
    totals = (
        exact_sums(rows, [*keys, position], {_TOTAL: pl.col(_A) * pl.col(W)})
        .sort([*keys, position])
        .with_columns(pl.col(_TOTAL).cum_sum().over(keys))
    )
    term, t = js_awrf(pl.col(_D) / pl.col(_TOTAL), pl.col(_T))
    shares = running.join(totals, on=[*keys, position]).join(targets, on=CAT)
    values = _awrf_of_sums(shares, [*keys, position], term, t, request.label)
    return frames.steps.join(values, on=[*keys, position], how="left", maintain_order="left")


def _kl_steps(
    rows: pl.LazyFrame, targets: pl.LazyFrame, keys: list[str], position: str
) -> pl.LazyFrame:
    """Per (list, position): i (rows so far) and KL(D_i ‖ t), natural log.

    With c_g the running count of group g in the top i (Σ_g c_g = i),
    KL(D_i ‖ t) = (1/i) Σ_g c_g ln c_g - ln i - (1/i) Σ_g c_g ln t_g. Both sums
    grow row by row (a row adding w to group g adds (c + w) ln(c + w) - c ln c
    and w ln t_g), so each is a running sum over the list's rows: no
    (group x position) grid is built.
    """
    c = pl.col(W).cum_sum().over([*keys, CAT])
    grown = (
        rows.join(targets, on=CAT)
        .sort([*keys, CAT, position])
        .with_columns(
            (x_log_x(c) - x_log_x(c - pl.col(W))).alias("__prm_s1"),
            # a membership of weight 0 adds 0, also to a group of share t_g = 0 (0 ln 0 = 0)
            pl.when(pl.col(W) > 0)
            .then(pl.col(W) * pl.col(_T).log())
            .otherwise(0.0)
            .alias("__prm_s2"),
        )
    )
    # a position's rows (an item's groups) come out of the join in no fixed order: exact sums
    sums = {_J: pl.col(W), "__prm_s1": pl.col("__prm_s1"), "__prm_s2": pl.col("__prm_s2")}
    steps = (
        exact_sums(grown, [*keys, position], sums)
        .sort([*keys, position])
        .with_columns(pl.col(_J, "__prm_s1", "__prm_s2").cum_sum().over(keys))
        # i, the rows so far: a sum of shares, an integer up to rounding
        .with_columns(pl.col(_J).round(0))
    )
    i = pl.col(_J)
    kl = (pl.col("__prm_s1") - pl.col("__prm_s2")) / i - i.log()
    # rounding can leave -1e-16 where a prefix matches the catalog
    return steps.select(*keys, position, _J, kl.clip(lower_bound=0.0).alias(_D))


def _ndkl_sums(steps: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
    """Σ KL_i / log2(i + 1) and Z = Σ 1 / log2(i + 1), running down each list."""
    discount = 1.0 / (pl.col(_J).cast(pl.Float64) + 1.0).log(2)
    return steps.sort([*keys, pl.col(_J)]).with_columns(
        (pl.col(_D) * discount).cum_sum().over(keys).alias("__prm_num"),
        discount.cum_sum().over(keys).alias("__prm_z"),
    )


def _ndkl_value(request: ListRequest, coded: Coded) -> pl.LazyFrame:
    """NDKL per list code."""
    rank = coded.keys.rank
    targets = _targets(coded.table, coded.keys.item, CAT_CODE).rename({CAT_CODE: CAT})
    rows = coded.labeled.select(LIST_CODE, rank, pl.col(CAT_CODE).alias(CAT), W)
    # i: the rows at or above the position (each item's shares W sum to 1)
    steps = _ndkl_sums(_kl_steps(rows, targets, [LIST_CODE], rank), [LIST_CODE])
    return steps.group_by(LIST_CODE).agg(
        (pl.col("__prm_num").last() / pl.col("__prm_z").last()).alias(request.label)
    )


def _ndkl_curve(request: ListRequest, frames: CurveFrames) -> pl.LazyFrame:
    """NDKL at each position the list holds."""
    keys, position = frames.list_keys, frames.position
    rows, targets = _labeled_rows(frames)
    steps = _ndkl_sums(_kl_steps(rows, targets, keys, position), keys)
    values = steps.select(
        *keys, position, (pl.col("__prm_num") / pl.col("__prm_z")).alias(request.label)
    )
    return frames.steps.join(values, on=[*keys, position], how="left", maintain_order="left")


_PATIENCE = Param("p", float, 0.5, "RBP patience: attention p^(r - 1) at rank r", check_patience)

AWRF = register_list(
    "awrf",
    PerList(_awrf_value, _awrf_curve, labels="group"),
    direction="higher",
    doc="awrf(p=0.5)@k = 1 - JS distance (base 2) between the p^(r-1)-attention-weighted "
    "group shares of the list and the catalog's (Sapiezynski et al. 2019)",
    reads=frozenset({"catalog", "group"}),
    params=(_PATIENCE,),
)

NDKL = register_list(
    "ndkl",
    PerList(_ndkl_value, _ndkl_curve, labels="group"),
    direction="lower",
    doc="ndkl@k = (1/Z) sum_i KL(top-i group shares || catalog's) / log2(i + 1) "
    "(Geyik et al. 2019)",
    reads=frozenset({"catalog", "group"}),
)
