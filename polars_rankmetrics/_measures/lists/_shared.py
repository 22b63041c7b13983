"""The pieces the measures of the lists share: integer codes, the category tables, joins.

An item with m categories gives 1/m to each (:data:`W`); ILD compares
category sets (one category is a set of one). ILD and calibration group by
(list, category) and join on it, ~1M groups at 10M rows: on integer codes
packed into one column they hash one integer, about twice as fast as the two
key columns (more with string ids).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import polars as pl

from polars_rankmetrics._measures.lists._hooks import LIST_CODE, Coded, Keys
from polars_rankmetrics._names import PREFIX
from polars_rankmetrics._powers import power

__all__ = [
    "CAT",
    "CAT_CODE",
    "ITEM_CODE",
    "KEY",
    "KU",
    "M",
    "W",
    "agg",
    "attach",
    "attention",
    "category_table",
    "check_patience",
    "code",
    "coded_lists",
    "cut",
    "high",
    "is_multi",
    "item_categories",
    "low",
    "pack",
    "relabel",
]

KU = f"{PREFIX}ku"  # k_u: the list's rows within the cut
CAT = f"{PREFIX}cat"  # a category label
M = f"{PREFIX}m"  # number of categories of an item
W = f"{PREFIX}w"  # 1 / m: the share of each of the item's categories
ITEM_CODE = f"{PREFIX}i"  # an item's code: the dense rank of its id in the catalog
CAT_CODE = f"{PREFIX}cc"  # a category's code
KEY = f"{PREFIX}key"  # two codes packed into one integer


def within(k: int | None, rank: str) -> pl.Expr:
    """True on rows within the cutoff ``k`` (``None``: every row)."""
    return pl.lit(value=True) if k is None else pl.col(rank) <= k


def cut(frame: pl.LazyFrame, k: int | None, rank: str) -> pl.LazyFrame:
    """The rows of ``frame`` within the cutoff ``k``."""
    return frame if k is None else frame.filter(pl.col(rank) <= k)


def agg(frame: pl.LazyFrame, keys: Sequence[str], exprs: Sequence[pl.Expr]) -> pl.LazyFrame:
    """``group_by(keys).agg(exprs)``, or one row over everything when there are no keys."""
    return frame.group_by(list(keys)).agg(exprs) if keys else frame.select(exprs)


def attach(
    left: pl.LazyFrame, right: pl.LazyFrame, on: Sequence[str], how: str = "left"
) -> pl.LazyFrame:
    """Join on ``on``, or set a one-row ``right`` beside every row when there are no keys."""
    if on:
        return left.join(right, on=list(on), how=how)  # type: ignore[arg-type]
    return left.join(right, how="cross")


def _shift() -> int:
    # codes are of the index dtype (at most the number of rows): two 32-bit ones fit
    # one UInt64
    return 2**32 if pl.get_index_type() == pl.UInt32() else 2**64


def pack(first: str | pl.Expr, second: str | pl.Expr) -> pl.Expr:
    """Two codes (below the index dtype's maximum) as one integer: ``high * shift + low``."""
    wide = pl.UInt64 if _shift() == 2**32 else pl.Int128
    a, b = (pl.col(c) if isinstance(c, str) else c for c in (first, second))
    return a.cast(wide) * _shift() + b.cast(wide)


def high(key: str) -> pl.Expr:
    """The first code of a :func:`pack` ed key."""
    return (pl.col(key) // _shift()).cast(pl.get_index_type())


def low(key: str) -> pl.Expr:
    """The second code of a :func:`pack` ed key."""
    return (pl.col(key) % _shift()).cast(pl.get_index_type())


def code(columns: Sequence[str]) -> pl.Expr:
    """A dense integer code of the values of ``columns`` (1, 2, ... in sorted order).

    A code is a function of the values alone, not of the order rows arrive in:
    every branch of the plan that computes it again gets the same codes.
    Several columns: each is coded, then the codes are packed pairwise and
    coded again.
    """
    result = pl.col(columns[0]).rank("dense")
    for column in columns[1:]:
        result = pack(result, pl.col(column).rank("dense")).rank("dense")
    return result.cast(pl.get_index_type())


def is_multi(items: pl.LazyFrame, category: str) -> bool:
    """Whether the catalog's category column holds lists (several categories per item)."""
    return isinstance(items.collect_schema()[category], pl.List)


def item_categories(
    items: pl.LazyFrame, item: str, category: str, weight: str | None = None
) -> pl.LazyFrame:
    """One row per (item, category) with :data:`M` (the item's number of categories) and :data:`W`.

    A list of categories counts each distinct category once. ``weight``: a
    List column of weights beside a List of categories (already checked:
    one per category, >= 0, a positive sum), normalised to sum to 1 per
    item, a repeated category's weights added; without it W = 1/m.
    """
    if weight is not None and is_multi(items, category):
        pairs = (
            items.select(pl.col(item), pl.col(category).alias(CAT), pl.col(weight).alias(W))
            # a row whose lengths differ is the catalog check's to report, not explode's
            .filter(pl.col(CAT).list.len() == pl.col(W).list.len())
            .explode(CAT, W)
            .group_by(item, CAT)
            .agg(pl.col(W).cast(pl.Float64).sum())
        )
        return pairs.select(
            item,
            CAT,
            pl.len().over(item).cast(pl.UInt32).alias(M),
            (pl.col(W) / pl.col(W).sum().over(item)).alias(W),
        )
    if not is_multi(items, category):
        return items.select(
            pl.col(item),
            pl.col(category).alias(CAT),
            pl.lit(1, pl.UInt32).alias(M),
            pl.lit(1.0).alias(W),
        )
    distinct = pl.col(category).list.unique()
    return (
        items.select(pl.col(item), distinct.alias(CAT))
        .with_columns(pl.col(CAT).list.len().cast(pl.UInt32).alias(M))
        .with_columns((1.0 / pl.col(M).cast(pl.Float64)).alias(W))
        .explode(CAT)
    )


def category_table(
    items: pl.LazyFrame, item: str, category: str, weight: str | None = None
) -> pl.LazyFrame:
    """:func:`item_categories` with integer codes: ``item, ITEM_CODE, CAT_CODE, M, W``.

    The catalog is small, so coding it costs little.
    """
    pairs = item_categories(items, item, category, weight)
    return pairs.select(item, code([item]).alias(ITEM_CODE), code([CAT]).alias(CAT_CODE), M, W)


def coded_lists(
    lists: pl.LazyFrame,
    keys: Keys,
    *,
    items: pl.LazyFrame,
    category: str,
    interactions: pl.LazyFrame | None,
    weight: str | None = None,
) -> Coded:
    """The lists coded (:data:`LIST_CODE`) and labeled with their items' categories, uncut."""
    rows = lists.with_columns(code(keys.list_keys).alias(LIST_CODE)).cache()
    table = category_table(items, keys.item, category, weight)
    labeled = (
        rows.select(LIST_CODE, keys.rank, keys.item)
        .join(table.select(keys.item, ITEM_CODE, CAT_CODE, M, W), on=keys.item, how="inner")
        .cache()
    )
    return Coded(
        keys,
        rows.select(*keys.list_keys, LIST_CODE).unique(),
        rows,
        labeled,
        table,
        is_multi(items, category),
        interactions,
    )


def relabel(
    coded: Coded, *, items: pl.LazyFrame, category: str, weight: str | None = None
) -> Coded:
    """The same coded lists labeled by another column of the catalog (``group=``, weighted)."""
    table = category_table(items, coded.keys.item, category, weight)
    labeled = (
        coded.rows.select(LIST_CODE, coded.keys.rank, coded.keys.item)
        .join(table.select(coded.keys.item, ITEM_CODE, CAT_CODE, M, W), on=coded.keys.item)
        .cache()
    )
    return replace(coded, labeled=labeled, table=table, multi=is_multi(items, category))


def check_patience(value: float) -> float:
    """The RBP patience p of the attention p^(r - 1): in (0, 1]."""
    if not 0.0 < value <= 1.0:
        raise ValueError(
            f"the patience p (attention p^(r - 1) at rank r) must be in (0, 1], got {value!r}"
        )
    return value


def attention(rank: pl.Expr, p: float) -> pl.Expr:
    """p^(r - 1) at rank r (Float64)."""
    return power(p, rank.cast(pl.Float64) - 1.0)
