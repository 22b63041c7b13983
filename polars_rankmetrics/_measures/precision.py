"""Precision@k: the share of the top k positions holding a relevant item."""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from polars_rankmetrics import _formulas as formula
from polars_rankmetrics._measures._registry import N_RELEVANT, Context, Measure, Partial, register


def hit_count(ctx: Context) -> list[Partial]:
    """The number of relevant items within the cutoff, shared by the hit-count measures."""
    return [Partial(ctx.name("hits"), ctx.hits().sum())]


def _finals(ctx: Context) -> Mapping[str, pl.Expr]:
    value = formula.precision(pl.col(ctx.name("hits")), ctx.cutoff())
    return {"": formula.defined(value, pl.col(N_RELEVANT))}


PRECISION = register(
    Measure(
        name="precision",
        cutoff="required",
        hit_partials=hit_count,
        finals=_finals,
        doc="precision@k = hits@k / k (short lists: missing slots are misses)",
    )
)
