"""F1@k: the harmonic mean of precision@k and recall@k."""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from polars_rankmetrics import _formulas as formula
from polars_rankmetrics._measures._curve import CurveStep
from polars_rankmetrics._measures._registry import N_RELEVANT, Context, Measure, register
from polars_rankmetrics._measures.fbeta import fbeta_curve
from polars_rankmetrics._measures.precision import hit_count


def _finals(ctx: Context) -> Mapping[str, pl.Expr]:
    n_relevant = pl.col(N_RELEVANT)
    value = formula.f1(pl.col(ctx.name("hits")), n_relevant, ctx.cutoff())
    return {"": formula.defined(value, n_relevant)}


def _curve(ctx: Context) -> CurveStep:
    return fbeta_curve(ctx, 1.0)


F1 = register(
    Measure(
        name="f1",
        tie_average=True,
        cutoff="required",
        hit_partials=hit_count,
        finals=_finals,
        curve=_curve,
        doc="f1@k = 2 P R / (P + R) = 2 hits@k / (k + m_u) (0 without a hit)",
    )
)
