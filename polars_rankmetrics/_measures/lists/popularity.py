"""Popularity of what the lists show: novelty, ARP and the long-tail share.

With k_u the length of u's list within positions 1..k, c_i the popularity of
item i in ``interactions`` and N the popularity total (METRICS.md, "Beyond
accuracy"), each is a mean over the users with a list of a per-row mean:

    novelty@k   = mean_u (1/k_u) Σ_{i in list} -log2(max(c_i, 1) / N)
    arp@k       = mean_u (1/k_u) Σ_{i in list} c_i
    long_tail@k = mean_u (1/k_u) Σ_{i in list} 1[i not in the head]

Notes
-----
Parameter ``popularity``: ``"users"`` (default) counts c_i as the distinct
users with item i and N as the distinct users (a repeated interaction counts
once); ``"interactions"`` counts interaction rows for both: RecTools'
``AvgRecPopularity`` is ``arp(popularity=interactions)`` and recommenders'
``novelty`` (``-log2(count_i / n_interactions)``) is
``novelty(popularity=interactions)`` where every list has the same length
(recommenders weighs recommendations, not users). An item absent from the
interactions has c_i = 0 (novelty counts it as seen once) and is never in
the head; novelty has no value with an empty history (N = 0).

long_tail's head (parameter ``head_share`` s, default 0.2) is the shortest
prefix of the items sorted by c_i descending (ties: item ascending) whose
Σ c_i reaches s of Σ c_i.

References
----------
Zhou et al., PNAS 2010 (novelty as self-information); Abdollahpouri et al.,
"Managing popularity bias in recommender systems with personalized
re-ranking", FLAIRS 2019 (ARP and the long-tail share).
"""

from __future__ import annotations

from typing import cast

import polars as pl

from polars_rankmetrics._measures._registry import Input, Param
from polars_rankmetrics._measures.lists._hooks import (
    Count,
    ListRequest,
    Popularity,
    PopularityColumns,
    RowMean,
)
from polars_rankmetrics._measures.lists._register import register_list

__all__ = ["ARP", "LONG_TAIL", "NOVELTY", "POPULARITY"]

POPULARITY = Param(
    "popularity",
    str,
    "users",
    "what c_i counts: distinct users (users) or interaction rows (interactions)",
    choices=("users", "interactions"),
)


def _check_head_share(value: float) -> float:
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"long_tail's head_share must be between 0 and 1, got {value!r}")
    return value


def _counted(request: ListRequest) -> Popularity:
    return Popularity(count=cast("Count", request.word("popularity")))


def _novelty(request: ListRequest, columns: PopularityColumns) -> pl.Expr:
    del request
    # log2(max(c, 1) / N): an item nobody interacted with counts as seen once
    ratio = pl.max_horizontal(columns.c, pl.lit(1)).cast(pl.Float64) / columns.n
    return pl.when(columns.n > 0).then(-ratio.log(2))


def _arp(request: ListRequest, columns: PopularityColumns) -> pl.Expr:
    del request
    return columns.c.cast(pl.Float64)


def _with_head(request: ListRequest) -> Popularity:
    return Popularity(_counted(request).count, head_share=request.number("head_share"))


def _long_tail(request: ListRequest, columns: PopularityColumns) -> pl.Expr:
    del request
    return (~columns.head).cast(pl.Float64)


_READS: frozenset[Input] = frozenset({"interactions"})

NOVELTY = register_list(
    "novelty",
    RowMean(_counted, _novelty),
    direction="none",
    doc="novelty@k = mean_u (1/k_u) sum_i -log2(max(c_i, 1) / N)",
    reads=_READS,
    params=(POPULARITY,),
)
ARP = register_list(
    "arp",
    RowMean(_counted, _arp),
    direction="none",
    doc="arp@k = mean_u (1/k_u) sum_i c_i (average recommendation popularity)",
    reads=_READS,
    params=(POPULARITY,),
)
LONG_TAIL = register_list(
    "long_tail",
    RowMean(_with_head, _long_tail),
    direction="none",
    doc="long_tail(head_share=s)@k = mean_u share of the list outside the head",
    reads=_READS,
    params=(
        Param("head_share", float, 0.2, "share of sum c_i the head reaches", _check_head_share),
        POPULARITY,
    ),
)
