"""Reciprocal rank (``mrr@k``, ``rr@k``) and the first relevant position (``mean_rank``)."""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from polars_rankmetrics import _formulas as formula
from polars_rankmetrics._measures._registry import N_RELEVANT, Context, Measure, Partial, register


def first_hit(ctx: Context) -> list[Partial]:
    """The position of the first relevant item within the cutoff (null: none)."""
    return [Partial(ctx.name("first"), pl.col(ctx.rank).filter(ctx.hits()).min(), fill=None)]


def _reciprocal_rank(ctx: Context) -> Mapping[str, pl.Expr]:
    value = formula.reciprocal_rank(pl.col(ctx.name("first")))
    return {"": formula.defined(value, pl.col(N_RELEVANT))}


RECIPROCAL_RANK = register(
    Measure(
        name="mrr",
        aliases=("rr",),
        hit_partials=first_hit,
        finals=_reciprocal_rank,
        doc="RR@k = 1 / position of the first relevant item within k (0 if none); MRR its mean",
    )
)
