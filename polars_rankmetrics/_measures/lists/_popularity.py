"""The popularity table the :class:`RowMean` measures read: c_i and N, and the head.

c_i counts, per item, the distinct users with the item in ``interactions``
(``count="users"``, METRICS.md) or its interaction rows
(``count="interactions"``: RecTools' ``AvgRecPopularity``, recommenders'
``novelty``); N is the number of distinct users, or of rows. The head for a
share s is the shortest prefix of the items sorted by c_i descending (ties:
item ascending) whose Σ c_i reaches s of the total: an item is in it when
the sum before it is still below that share. ``by`` columns the
interactions also have (folds) count separately.

On Spark the counts are taken over every user once (:func:`with_head` then
runs on the driver) and the tables are broadcast to the buckets.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import polars as pl

from polars_rankmetrics._measures.lists._hooks import (
    Count,
    Keys,
    ListRequest,
    Popularity,
    PopularityColumns,
    RowMean,
)
from polars_rankmetrics._measures.lists._shared import attach
from polars_rankmetrics._names import PREFIX

__all__ = [
    "PopularityTables",
    "c_column",
    "columns",
    "counts",
    "distinct",
    "head_column",
    "n_column",
    "tables",
    "wanted",
    "with_head",
    "with_popularity",
]

# per count: (shared..., item, c_i and the head flags), (shared..., N)
PopularityTables = Mapping[Count, tuple[pl.LazyFrame, pl.LazyFrame]]


def distinct(count: Count) -> bool:
    """Whether c_i and N count each (user, item) and each user once (else every row)."""
    return count == "users"


def c_column(count: Count) -> str:
    """The column of c_i counted so."""
    return f"{PREFIX}c@{count}"


def n_column(count: Count) -> str:
    """The column of N counted so."""
    return f"{PREFIX}n@{count}"


def head_column(count: Count, head_share: float) -> str:
    """The Boolean column marking the head for this share of c_i counted so."""
    return f"{PREFIX}head@{count}@{head_share!r}"


def columns(popularity: Popularity) -> PopularityColumns:
    """The columns a term reads, for this popularity."""
    share = popularity.head_share
    head = pl.lit(value=False) if share is None else pl.col(head_column(popularity.count, share))
    return PopularityColumns(
        pl.col(c_column(popularity.count)), pl.col(n_column(popularity.count)), head
    )


def wanted(
    requests: Sequence[tuple[ListRequest, RowMean]],
) -> dict[Count, list[float]]:
    """Per count the requests read, the head shares they mark."""
    shares: dict[Count, list[float]] = {}
    for request, hook in requests:
        popularity = hook.popularity(request)
        marked = shares.setdefault(popularity.count, [])
        if popularity.head_share is not None and popularity.head_share not in marked:
            marked.append(popularity.head_share)
    return shares


def counts(interactions: pl.LazyFrame, keys: Keys, count: Count) -> pl.LazyFrame:
    """c_i per (shared ``by``..., item)."""
    # n_unique per item costs about half of finding the distinct pairs first
    value = pl.col(keys.user).n_unique() if distinct(count) else pl.len()
    return interactions.group_by([*keys.shared, keys.item]).agg(
        value.cast(pl.Int64).alias(c_column(count))
    )


def totals(interactions: pl.LazyFrame, keys: Keys, count: Count) -> pl.LazyFrame:
    """N per shared ``by`` group (one row without)."""
    value = pl.col(keys.user).n_unique() if distinct(count) else pl.len()
    shared = list(keys.shared)
    expr = value.cast(pl.Int64).alias(n_column(count))
    return interactions.group_by(shared).agg(expr) if shared else interactions.select(expr)


def with_head(
    table: pl.LazyFrame, keys: Keys, count: Count, head_shares: Sequence[float]
) -> pl.LazyFrame:
    """The counts (``shared..., item, c``) with a head flag per share."""
    shared = list(keys.shared)
    if not head_shares:
        return table
    c = c_column(count)
    ordered = table.sort([*shared, c, keys.item], descending=[False] * len(shared) + [True, False])
    before = pl.col(c).cum_sum() - pl.col(c)
    total = pl.col(c).sum()
    if shared:
        before, total = before.over(shared), total.over(shared)
    return ordered.with_columns(
        (before.cast(pl.Float64) < total.cast(pl.Float64) * share).alias(head_column(count, share))
        for share in dict.fromkeys(head_shares)
    )


def tables(
    interactions: pl.LazyFrame, keys: Keys, shares: Mapping[Count, Sequence[float]]
) -> dict[Count, tuple[pl.LazyFrame, pl.LazyFrame]]:
    """The popularity tables for each count asked for."""
    return {
        count: (
            with_head(counts(interactions, keys, count), keys, count, marked),
            totals(interactions, keys, count),
        )
        for count, marked in shares.items()
    }


def with_popularity(
    rows: pl.LazyFrame,
    keys: Keys,
    popular: PopularityTables,
    shares: Mapping[Count, Sequence[float]],
) -> pl.LazyFrame:
    """Each list row with c_i, N and the head flags (an item nobody saw: c_i = 0, not head)."""
    shared = list(keys.shared)
    for count, (items, n) in popular.items():
        heads = [head_column(count, share) for share in dict.fromkeys(shares.get(count, ()))]
        rows = rows.join(items, on=[*shared, keys.item], how="left").with_columns(
            pl.col(c_column(count)).fill_null(0),
            *[pl.col(head).fill_null(value=False) for head in heads],
        )
        rows = attach(rows, n, shared)
    return rows
