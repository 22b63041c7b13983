"""R-precision: precision at the user's own number of relevant items, m_u."""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from polars_rankmetrics import _formulas as formula
from polars_rankmetrics._measures._registry import (
    N_RELEVANT,
    RELEVANT,
    Context,
    Measure,
    Partial,
    register,
)


def _partials(ctx: Context) -> list[Partial]:
    within_m = pl.col(RELEVANT) & (pl.col(ctx.rank) <= pl.col(N_RELEVANT))
    return [Partial(ctx.name("rprec"), within_m.sum())]


def _finals(ctx: Context) -> Mapping[str, pl.Expr]:
    n_relevant = pl.col(N_RELEVANT)
    value = formula.r_precision(pl.col(ctx.name("rprec")), n_relevant)
    return {"": formula.defined(value, n_relevant)}


R_PRECISION = register(
    Measure(
        name="r_precision",
        cutoff="none",
        inputs=frozenset({"hits", "n_relevant_on_hits"}),
        hit_partials=_partials,
        finals=_finals,
        doc="R-precision = relevant items within positions 1..m_u, / m_u",
    )
)
