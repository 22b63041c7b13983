"""Surprisal: the self-information of the recommended items, normalised (RePlay's ``Surprisal``).

    surprisal@k = mean_u (1/k_u) Σ_{i in u's top k} -log2(max(c_i, 1) / N) / log2 N

Notes
-----
c_i is the number of distinct users with item i in ``interactions`` (the
training history) and N the number of distinct users there; an item nobody
interacted with counts as seen by one user, so its surprisal is 1, the
largest (RePlay: "cold items are treated as if they were rated by 1 user").
Each item's term lies in [0, 1]: 0 for an item every user has seen. k_u is
the number of the list's items within positions 1..k (the mean over the
rows the list holds there), and the value is a mean over the users with a
list. It is ``novelty@k / log2 N``.

Where RePlay differs: it divides each list's sum by k, not by k_u, so a list
shorter than k (fewer than k items, or ranks with gaps) gets a smaller value
there; the two agree whenever every list holds k items within the cut (as in
RePlay's own examples). RePlay needs k; without a cutoff the whole list is
read. With N = 1 (one user in the history) log2 N = 0 and the measure has no
value (null; RePlay's is NaN), and with an empty history neither has one.

References
----------
Zhou et al., "Solving the apparent diversity-accuracy dilemma of recommender
systems", PNAS 2010 (self-information); RePlay, ``replay/metrics/surprisal.py``
(github.com/sb-ai-lab/RePlay).
"""

from __future__ import annotations

import polars as pl

from polars_rankmetrics._measures.lists._hooks import (
    ListRequest,
    Popularity,
    PopularityColumns,
    RowMean,
)
from polars_rankmetrics._measures.lists._register import register_list

__all__ = ["SURPRISAL"]


def _users(request: ListRequest) -> Popularity:
    del request
    # RePlay counts distinct users per item and in all (n_unique of the query column)
    return Popularity(count="users")


def _surprisal(request: ListRequest, columns: PopularityColumns) -> pl.Expr:
    del request
    n = columns.n.cast(pl.Float64)
    # a cold item counts as seen once: log2(N / 1) / log2(N) = 1
    seen = pl.max_horizontal(columns.c, pl.lit(1)).cast(pl.Float64)
    return pl.when(n > 1).then((n / seen).log(2) / n.log(2))


SURPRISAL = register_list(
    "surprisal",
    RowMean(_users, _surprisal),
    # as novelty: more surprise is not better by itself (accuracy pays for it)
    direction="none",
    doc="surprisal@k = mean_u (1/k_u) sum_i -log2(max(c_i, 1) / N) / log2 N "
    "(RePlay's Surprisal: self-information normalised to [0, 1])",
    reads=frozenset({"interactions"}),
)
