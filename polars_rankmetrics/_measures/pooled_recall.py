"""Pooled recall@k (``micro_recall@k``): recall pooled over users (OTTO).

``pooled_recall@k = sum_u hits_u / sum_u min(k, m_u)``, not a mean of per-user
ratios; per user it is ``hits / min(k, m_u)``.

Notes
-----
Users combine by pooling, ``sum(num) / sum(den)`` over the counted users, not
by a mean of ratios, so ``compare`` cannot test it per user. A cutoff is
required. Relevance is binary: a truth item is relevant when its grade is > 0
(and >= ``relevance_level`` when one is given); grades are not read otherwise.
Ties: ranks come given or from scores under ``ties`` (trec_eval's item id
descending by default); ``ties="average"`` gives the exact expectation over the
orders of tied items (McSherry & Najork 2008).

References
----------
The OTTO multi-objective recommender system competition (Kaggle 2022), its
evaluation: recall@20 of each event type pooled over sessions, the hits
summed over the sum of ``min(20, |truth|)``.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from polars_rankmetrics import _formulas as formula
from polars_rankmetrics._measures._curve import CurveStep
from polars_rankmetrics._measures._registry import N_RELEVANT, Context, Measure, register
from polars_rankmetrics._measures.precision import hit_count, hit_count_state


def _finals(ctx: Context) -> Mapping[str, pl.Expr]:
    n_relevant = pl.col(N_RELEVANT)
    capped = pl.min_horizontal(n_relevant, pl.lit(ctx.cutoff())).cast(pl.Float64)
    return {"num": formula.defined(pl.col(ctx.name("hits")), n_relevant), "den": capped}


def _per_user(parts: Mapping[str, pl.Expr]) -> pl.Expr:
    return pl.when(parts["den"] > 0).then(parts["num"] / parts["den"]).otherwise(0.0)


def _curve(ctx: Context) -> CurveStep:
    n_relevant = pl.col(N_RELEVANT)

    def value(k: pl.Expr) -> Mapping[str, pl.Expr]:
        capped = pl.min_horizontal(n_relevant, k).cast(pl.Float64)
        return {"num": formula.defined(pl.col(ctx.name("hits")), n_relevant), "den": capped}

    # min(k, m_u) reads k up to m_u
    return CurveStep((hit_count_state(ctx),), value, horizon=n_relevant)


POOLED_RECALL = register(
    Measure(
        name="pooled_recall",
        direction="higher",
        tie_average=True,
        aliases=("micro_recall",),
        cutoff="required",
        hit_partials=hit_count,
        finals=_finals,
        curve=_curve,
        aggregation="pooled",
        per_user_value=_per_user,
        doc="pooled_recall@k = sum(hits@k) / sum(min(k, m_u)) over users (OTTO)",
    )
)
