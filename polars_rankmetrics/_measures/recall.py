"""Recall@k: the share of the user's relevant items found within the cutoff."""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from polars_rankmetrics import _formulas as formula
from polars_rankmetrics._measures._curve import CurveStep
from polars_rankmetrics._measures._registry import N_RELEVANT, Context, Measure, register
from polars_rankmetrics._measures.precision import hit_count, hit_count_curve


def _finals(ctx: Context) -> Mapping[str, pl.Expr]:
    n_relevant = pl.col(N_RELEVANT)
    value = formula.recall(pl.col(ctx.name("hits")), n_relevant)
    return {"": formula.defined(value, n_relevant)}


def _curve(ctx: Context) -> CurveStep:
    return hit_count_curve(ctx, lambda hits: formula.recall(hits, pl.col(N_RELEVANT)))


RECALL = register(
    Measure(
        name="recall",
        tie_average=True,
        hit_partials=hit_count,
        finals=_finals,
        curve=_curve,
        doc="recall@k = hits@k / m_u (m_u: the user's number of relevant items)",
    )
)
