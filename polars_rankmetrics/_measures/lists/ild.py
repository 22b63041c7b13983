"""Intra-list diversity (ILD): how different the items of one list are, by category.

    ild@k = mean over users with k_u >= 2 of
            (1 / C(k_u, 2)) Σ_{pairs a < b in the list} 1 - Jaccard(cats(a), cats(b))

Notes
-----
Users with fewer than two items in their list are not counted. cats(i)
is the item's set of categories (``items=``, ``category=``; one category
is a set of one). No pair is built where it need not be: with one
category per item, 1 - Jaccard is 1 for two categories and 0 for one, so the
pairs sharing a category are Σ_c n_c (n_c - 1) / 2 over the list's count
n_c per category. With several categories per item only pairs sharing one
have Jaccard > 0: a one-category item of category c and an item b of m_b
categories including c have Jaccard 1 / m_b (summed over b's categories,
n_c / m_b); two items of several categories are joined on their categories,
which gives |A ∩ B|, and Jaccard = |A ∩ B| / (|A| + |B| - |A ∩ B|).

References
----------
Ziegler et al., "Improving recommendation lists through topic
diversification", WWW 2005.
"""

from __future__ import annotations

import polars as pl

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
    M,
    high,
    is_multi,
    item_categories,
    pack,
)
from polars_rankmetrics._names import PREFIX
from polars_rankmetrics._sums import exact_sums

__all__ = ["ILD"]

_X = f"{PREFIX}x"  # items of one category in the list
_I_B = f"{PREFIX}i_b"
_M_B = f"{PREFIX}m_b"
_INTER = f"{PREFIX}inter"
_SIMILAR = f"{PREFIX}similar"


def _value(request: ListRequest, coded: Coded) -> pl.LazyFrame:
    """ILD per list code."""
    labeled, rows, label = coded.labeled, coded.rows, request.label
    pairs = (pl.col(KU) * (pl.col(KU) - 1)).cast(pl.Float64) / 2.0
    shared_pairs = (pl.col(_X) * (pl.col(_X) - 1)).cast(pl.Float64) / 2.0
    if not coded.multi:
        per_category = labeled.group_by(pack(LIST_CODE, CAT_CODE).alias(KEY)).agg(
            pl.len().cast(pl.Int64).alias(_X)
        )
        per_list = per_category.group_by(high(KEY).alias(LIST_CODE)).agg(
            pl.col(_X).sum().alias(KU), shared_pairs.sum().alias(_SIMILAR)
        )
    else:
        single = (
            labeled.filter(pl.col(M) == 1)
            .group_by(pack(LIST_CODE, CAT_CODE).alias(KEY))
            .agg(pl.len().cast(pl.Int64).alias(_X))
        )
        same = single.select(high(KEY).alias(LIST_CODE), shared_pairs.alias(_SIMILAR))
        several = labeled.filter(pl.col(M) > 1).select(
            pack(LIST_CODE, CAT_CODE).alias(KEY), LIST_CODE, ITEM_CODE, M
        )
        # a one-category item and an item b of m_b categories, one of them its own:
        # Jaccard 1 / m_b; summed over b's categories, n_c / m_b
        mixed = several.join(single, on=KEY, how="inner").select(
            LIST_CODE, (pl.col(_X).cast(pl.Float64) / pl.col(M).cast(pl.Float64)).alias(_SIMILAR)
        )
        # two items of several categories meet once per category they share
        other = several.select(KEY, pl.col(ITEM_CODE).alias(_I_B), pl.col(M).alias(_M_B))
        intersections = (
            several.join(other, on=KEY, how="inner")
            .filter(pl.col(ITEM_CODE) < pl.col(_I_B))
            .group_by(LIST_CODE, pack(ITEM_CODE, _I_B).alias(KEY))
            .agg(pl.len().alias(_INTER), pl.col(M).first(), pl.col(_M_B).first())
        )
        inter = pl.col(_INTER).cast(pl.Float64)
        jaccard = inter / (pl.col(M).cast(pl.Float64) + pl.col(_M_B).cast(pl.Float64) - inter)
        both = intersections.select(LIST_CODE, jaccard.alias(_SIMILAR))
        # fractions from joins, in no fixed order: summed exactly (the same bits every call)
        similar = exact_sums(
            pl.concat([same, mixed, both]), [LIST_CODE], {_SIMILAR: pl.col(_SIMILAR)}
        )
        lengths = rows.group_by(LIST_CODE).agg(pl.len().cast(pl.Int64).alias(KU))
        per_list = lengths.join(similar, on=LIST_CODE, how="left").with_columns(
            pl.col(_SIMILAR).fill_null(0.0)
        )
    value = pl.when(pl.col(KU) >= 2).then(1.0 - pl.col(_SIMILAR) / pairs)
    return per_list.select(LIST_CODE, value.alias(label))


def _curve(request: ListRequest, frames: CurveFrames) -> pl.LazyFrame:
    """ILD at each position: 1 - (running Σ of Jaccard over pairs) / (k_u (k_u - 1) / 2).

    Each pair is added at the later of its two positions.
    """
    if frames.catalog is None or frames.category is None:
        raise ValueError("ild needs items with a category column")
    list_keys, position, item = frames.list_keys, frames.position, frames.item
    labeled = frames.rows.select(*list_keys, item, position).join(
        item_categories(frames.catalog, item, frames.category), on=item, how="inner"
    )
    # pairs of one-category items share theirs (Jaccard 1) or not (0): an item shares it
    # with the items of its category above it (its ordinal among them)
    single = (
        labeled.filter(pl.col(M) == 1)
        .sort([*list_keys, position])
        .select(
            *list_keys,
            position,
            pl.int_range(pl.len()).over([*list_keys, CAT]).cast(pl.Float64).alias("__prm_s"),
        )
    )
    parts = [single]
    if is_multi(frames.catalog, frames.category):
        several = labeled.filter(pl.col(M) > 1).select(
            *list_keys,
            CAT,
            pl.col(item).alias("__prm_item_b"),
            pl.col(position).alias("__prm_pos_b"),
            pl.col(M).alias("__prm_m_b"),
        )
        # a one-category item meets each item of several categories once; two of several
        # meet in both orders: keep a < b. Only pairs sharing a category are built
        meetings = (
            labeled.join(several, on=[*list_keys, CAT], how="inner")
            .filter((pl.col(M) == 1) | (pl.col(item) < pl.col("__prm_item_b")))
            .group_by([*list_keys, item, "__prm_item_b"])
            .agg(
                pl.len().cast(pl.Float64).alias("__prm_inter"),
                pl.col(M).first().cast(pl.Float64),
                pl.col("__prm_m_b").first().cast(pl.Float64),
                pl.max_horizontal(position, "__prm_pos_b").first().alias(position),
            )
        )
        inter = pl.col("__prm_inter")
        jaccard = inter / (pl.col(M) + pl.col("__prm_m_b") - inter)
        parts.append(meetings.select(*list_keys, position, jaccard.alias("__prm_s")))
    # fractions from joins, in no fixed order: summed exactly (the same bits every call)
    similar = exact_sums(pl.concat(parts), [*list_keys, position], {"__prm_sim": pl.col("__prm_s")})
    j = pl.col(frames.j)
    pairs = (j * (j - 1)).cast(pl.Float64) / 2.0
    return (
        frames.steps.join(similar, on=[*list_keys, position], how="left", maintain_order="left")
        .with_columns(pl.col("__prm_sim").fill_null(0.0).cum_sum().over(list_keys))
        .with_columns(pl.when(j >= 2).then(1.0 - pl.col("__prm_sim") / pairs).alias(request.label))
        .drop("__prm_sim")
    )


ILD = register_list(
    "ild",
    PerList(_value, _curve),
    direction="higher",
    doc="ild@k = mean_u mean over item pairs of 1 - Jaccard(categories)",
    reads=frozenset({"catalog", "category"}),
)
