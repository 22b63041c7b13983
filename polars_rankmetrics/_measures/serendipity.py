"""Serendipity: relevant items this user was more likely to be shown than anyone (RecTools').

    serendipity@k = (1/k_u) Σ_{relevant i in u's top k} max(p_u(r_i) - p(i), 0)

    p_u(r) = (n + 1 - r) / n,   p(i) = (n + 1 - pop_i) / n  (0 for an item no one interacted with)

Notes
-----
RecTools' ``Serendipity`` (Kotkov et al.'s unexpectedness times relevance):
n is the catalog's size (the items of ``items=``), r_i the rank of item i in
u's list, pop_i its popularity rank in ``interactions=`` (the training
history): 1 for the most popular item, equal counts share a rank and the next
count takes the next rank (a dense rank), so p(i) is the chance that the
item is shown to any user and p_u(r) the chance this list gives its rank. An
item without interactions has p(i) = 0. k_u is the number of the list's rows
within positions 1..k (RecTools' mean over them); the relevant items are the
truth rows with a positive grade (RecTools: any interaction in its
``interactions``, the test period). A user's value is 0 without a relevant
item in its top k; the mean is over the users ``evaluate`` counts: RecTools
averages over the users with recommendations, ``users_without_truth="zero",
users_without_recs="exclude"``. A counted user with no row within positions
1..k (ranks with gaps) scores 0, where RecTools leaves it out (NaN).

Popularity counts the distinct users with each item (as ``interactions=``
does for every measure; RecTools counts interaction rows, the same where no
(user, item) repeats). Needs ``interactions=`` and ``items=`` (only the
catalog's size is read: a recommended item outside it counts as any other, as
in RecTools), and refuses ``propensity=`` (which replaces the popularity by
given propensities).

References
----------
Kotkov, Wang & Veijalainen, "A survey of serendipity in recommender
systems", Knowledge-Based Systems 2016; RecTools,
``rectools/metrics/serendipity.py`` (github.com/MobileTeleSystems/RecTools),
after Lab41's "Recommender systems: it's not all about the accuracy" (2016).
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from polars_rankmetrics._measures._curve import CurveState, CurveStep
from polars_rankmetrics._measures._registry import (
    CATALOG_SIZE,
    POPULARITY_RANK,
    Context,
    Measure,
    Partial,
    register,
)

__all__ = ["SERENDIPITY"]


def _term(position: pl.Expr) -> pl.Expr:
    """max(p_u(r) - p(i), 0) on a hit row, in RecTools' order of operations."""
    n = pl.col(CATALOG_SIZE)
    rank = position.cast(pl.Float64)
    for_user = (n + 1.0 - rank) / n
    # an item no one interacted with: zero chance for any user
    for_anyone = pl.when(pl.col(POPULARITY_RANK).is_not_null()).then(
        (n + 1.0 - pl.col(POPULARITY_RANK)) / n
    )
    return pl.max_horizontal(for_user - for_anyone.fill_null(0.0), pl.lit(0.0))


def _hits(ctx: Context) -> list[Partial]:
    return [Partial(ctx.name("serendipity"), _term(pl.col(ctx.rank)).filter(ctx.hits()).sum())]


def _shown(ctx: Context) -> list[Partial]:
    return [Partial(ctx.name("shown"), ctx.within().sum())]


def _value(ctx: Context) -> Mapping[str, pl.Expr]:
    shown = pl.col(ctx.name("shown"))
    # a counted user with no row within k scores 0, as one without recommendations (the
    # fill): the same whichever other cutoffs the call asks for (RecTools leaves it out)
    return {"": pl.when(shown > 0).then(pl.col(ctx.name("serendipity")) / shown).otherwise(0.0)}


def _curve(ctx: Context) -> CurveStep:
    states = (
        CurveState(ctx.name("serendipity"), "hits", _term(pl.col(ctx.rank))),
        CurveState(ctx.name("shown"), "list", pl.lit(1.0)),
    )
    return CurveStep(states, lambda _k: _value(ctx))


SERENDIPITY = register(
    Measure(
        name="serendipity",
        direction="higher",
        # "propensity": the popularity table (ranks and the catalog's size) on the hit rows;
        # "catalog": items= reaches every Spark bucket
        inputs=frozenset({"hits", "list", "propensity", "catalog"}),
        repeats="list",
        hit_partials=_hits,
        list_partials=_shown,
        finals=_value,
        curve=_curve,
        fill=0.0,
        doc="serendipity@k = (1/k_u) sum over relevant i in the top k of "
        "max((n + 1 - r_i) / n - (n + 1 - pop_i) / n, 0) (RecTools' Serendipity)",
    )
)
