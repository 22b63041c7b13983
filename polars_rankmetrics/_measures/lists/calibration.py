"""Calibration (miscalibration): how far a list's categories are from the user's history's.

    calibration(alpha=a)@k = mean over users with interactions of
        KL(p ‖ q~) = Σ_c p(c) ln(p(c) / q~(c)),  q~ = (1 - a) q + a p

Notes
-----
p: the category distribution of the user's distinct interacted items, q:
that of the user's top-k list; an item with m categories gives 1/m to each
(``items=``, ``category=``, ``interactions=``). Only categories with
p(c) > 0 add to the sum; ``alpha`` (default 0.01, in (0, 1]) keeps it
finite where the list misses a category of the history. Users without
interactions are not counted.

The history's and the list's weights go into one table and one
``group_by(list, category)`` sums both (P_c, Q_c); the user's totals are
then the number of distinct items (H = Σ P_c) and k_u (K = Σ Q_c), since
each item's weights sum to 1, so p = P/H and q = Q/K.

References
----------
Steck, "Calibrated recommendations", RecSys 2018.
"""

from __future__ import annotations

import math

import polars as pl

from polars_rankmetrics._measures._registry import Param
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
    ITEM_CODE,
    KEY,
    KU,
    W,
    high,
    item_categories,
    low,
    pack,
)
from polars_rankmetrics._names import PREFIX
from polars_rankmetrics._sums import exact_sums

__all__ = ["CALIBRATION"]

_P = f"{PREFIX}p"
_Q = f"{PREFIX}q"
_H = f"{PREFIX}h"


def _check_alpha(value: float) -> float:
    if not 0.0 < value <= 1.0:
        raise ValueError(
            f"calibration's alpha must be in (0, 1] (0 makes the divergence infinite), "
            f"got {value!r}"
        )
    return value


def _history(coded: Coded) -> pl.LazyFrame:
    """The distinct (list code, item code) pairs of the lists' histories.

    p is needed only for users with a list: the inner join with the lists
    drops the rest before the distinct pairs are found. Groups the history
    does not have (models) share it: one copy per list.
    """
    if coded.interactions is None:
        raise ValueError("calibration needs interactions and items with a category")
    keys = coded.keys
    history_keys = [*keys.shared, keys.user]
    catalog = coded.table.select(keys.item, ITEM_CODE).unique()
    return (
        coded.interactions.join(
            coded.lists.select(*history_keys, LIST_CODE),
            on=history_keys,
            how="inner",
            nulls_equal=True,
        )
        .join(catalog, on=keys.item, how="inner")
        .select(pack(LIST_CODE, ITEM_CODE).alias(KEY))
        .unique()
        .select(high(KEY).alias(LIST_CODE), low(KEY).alias(ITEM_CODE))
    )


def _value(request: ListRequest, coded: Coded) -> pl.LazyFrame:
    """Calibration per list code."""
    label, alpha = request.label, request.number("alpha")
    taste = (
        _history(coded)
        .join(coded.table.select(ITEM_CODE, CAT_CODE, W), on=ITEM_CODE, how="inner")
        .select(pack(LIST_CODE, CAT_CODE).alias(KEY), pl.col(W).alias(_P), pl.lit(0.0).alias(_Q))
    )
    shown = coded.labeled.select(
        pack(LIST_CODE, CAT_CODE).alias(KEY), pl.lit(0.0).alias(_P), pl.col(W).alias(_Q)
    )
    # the weights come from a concatenation of joins, in no fixed order: every sum here is
    # exact (fixed point), so the value is the same to the last bit on every call
    both = pl.concat([taste, shown])
    sums = exact_sums(both, [KEY], {_P: pl.col(_P), _Q: pl.col(_Q)}).with_columns(
        high(KEY).alias(LIST_CODE)
    )
    big_p, big_q = pl.col(_P), pl.col(_Q)
    # the totals per list joined back: the normalisation written inside the
    # aggregation ran per group, about 4x slower. A list with nothing within the
    # cut (K = 0) has no value
    totals = exact_sums(sums, [LIST_CODE], {_H: big_p, KU: big_q}).filter(pl.col(KU) > 0)
    p, q = big_p / pl.col(_H), big_q / pl.col(KU)
    mixed = (1.0 - alpha) * q + alpha * p
    # only p(c) > 0 adds to the sum; a user without interactions has no such row and
    # gets no value (not counted)
    terms = sums.filter(big_p > 0).join(totals, on=LIST_CODE, how="inner")
    return exact_sums(terms, [LIST_CODE], {label: p * (p / mixed).log()}).select(LIST_CODE, label)


def _curve(request: ListRequest, frames: CurveFrames) -> pl.LazyFrame:
    """KL(p ‖ q~) at each position, for the lists whose user has interactions.

    KL = -ln(alpha) Σ_c p_c + Σ over the categories seen so far of
    p_c ln(p_c / q~_c) + p_c ln(alpha) (a category not in the list yet adds
    p_c ln(1 / alpha)), with per-(list, category) running counts of q. This
    evaluates each category of the user's history that the list shows at
    each later position: (lists x categories x positions) rows at most.
    """
    if frames.catalog is None or frames.category is None or frames.history is None:
        raise ValueError("calibration needs interactions and items with a category")
    list_keys, history_keys = frames.list_keys, frames.history_keys
    position, item = frames.position, frames.item
    weights = item_categories(frames.catalog, item, frames.category).select(item, CAT, W)
    users = frames.rows.select(list_keys).unique()
    seen = (
        frames.history.join(users.select(history_keys).unique(), on=history_keys, how="semi")
        .select(*history_keys, item)
        .unique()
    )
    if set(history_keys) != set(list_keys):
        # groups the history does not have (models) share it: one copy per list
        seen = users.join(seen, on=history_keys, how="inner")
    # the rows come out of joins and group-bys in no fixed order: each sum is exact (fixed
    # point), so the curve is the same to the last bit on every call
    counts = exact_sums(
        seen.join(weights, on=item, how="inner"), [*list_keys, CAT], {_P: pl.col(W)}
    )
    taste = counts.join(
        exact_sums(counts, list_keys, {_H: pl.col(_P)}), on=list_keys, how="inner"
    ).select(*list_keys, CAT, (pl.col(_P) / pl.col(_H)).alias("__prm_p"))
    alpha = request.number("alpha")
    log_alpha = math.log(alpha)
    # every category of p starts missing from the list: p_c ln(1 / alpha) each
    base = exact_sums(taste, list_keys, {"__prm_b": -log_alpha * pl.col("__prm_p")})
    # q's running count per (list, category of p), at the positions where it grows
    shown = (
        exact_sums(
            frames.rows.join(weights, on=item, how="inner"),
            [*list_keys, CAT, position],
            {"__prm_q": pl.col(W)},
        )
        .join(taste, on=[*list_keys, CAT], how="inner")
        .sort([*list_keys, CAT, position])
        .with_columns(pl.col("__prm_q").cum_sum().over([*list_keys, CAT]))
    )
    first = shown.group_by([*list_keys, CAT]).agg(
        pl.col(position).min().alias("__prm_first"), pl.col("__prm_p").first()
    )
    ranks = frames.steps.select(*list_keys, position, frames.j)
    p, q = pl.col("__prm_p"), pl.col("__prm_q") / pl.col(frames.j).cast(pl.Float64)
    mixed = (1.0 - alpha) * q + alpha * p
    # each category of p the list shows, at every position from its first appearance on,
    # with its running count there (the last step at or before that position)
    candidates = (
        first.join(ranks, on=list_keys, how="inner")
        .filter(pl.col(position) >= pl.col("__prm_first"))
        .sort(position)
        .join_asof(
            shown.select(*list_keys, CAT, position, "__prm_q").sort(position),
            on=position,
            by=[*list_keys, CAT],
            strategy="backward",
            # both sides are sorted by the key above; with by groups Polars cannot check it
            check_sortedness=False,
        )
    )
    adjustment = p * (p / mixed).log() + p * log_alpha
    adjustments = exact_sums(candidates, [*list_keys, position], {"__prm_adj": adjustment})
    return (
        frames.steps.join(base, on=list_keys, how="left", maintain_order="left")
        .join(adjustments, on=[*list_keys, position], how="left", maintain_order="left")
        .with_columns((pl.col("__prm_b") + pl.col("__prm_adj").fill_null(0.0)).alias(request.label))
        .drop("__prm_b", "__prm_adj")
    )


CALIBRATION = register_list(
    "calibration",
    PerList(_value, _curve),
    direction="lower",
    doc="calibration(alpha=a)@k = mean_u KL(p_u || (1 - a) q_u + a p_u) (Steck 2018)",
    reads=frozenset({"interactions", "catalog", "category"}),
    params=(Param("alpha", float, 0.01, "share of p mixed into q", _check_alpha),),
)
