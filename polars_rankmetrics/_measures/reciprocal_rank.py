"""Reciprocal rank (``mrr@k``, ``rr@k``) and the first relevant position (``mean_rank``).

``RR@k = 1 / min{i <= k : rel_u(i) = 1}``, 0 when nothing relevant is in the
top k; MRR@k is its mean over users. ``mean_rank`` reads the same position
(:mod:`polars_rankmetrics._measures.mean_rank`).

Notes
-----
Relevance is binary: a truth item is relevant when its grade is > 0 (and >=
``relevance_level`` when one is given); grades are not read otherwise. Ties:
ranks come given or from scores under ``ties`` (trec_eval's item id descending
by default); ``ties="average"`` gives the exact expectation over the orders of
tied items (McSherry & Najork 2008). Users: every user ``evaluate`` counts (a
relevant truth item; see the ``users_without_recs`` and ``users_without_truth``
conventions); a counted user without recommendations scores 0, and the metric
is their mean.

References
----------
Voorhees, "The TREC-8 Question Answering Track Report" (1999); trec_eval 10.0
``m_recip_rank.c``; ranx ``mrr``.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from polars_rankmetrics import _formulas as formula
from polars_rankmetrics._measures._curve import CurveState, CurveStep
from polars_rankmetrics._measures._registry import (
    HIT_INDEX,
    N_RELEVANT,
    RELEVANT,
    Context,
    Measure,
    Partial,
    TrecFamily,
    register,
    register_trec,
)
from polars_rankmetrics._measures._ties import first_tied_group, tied_first_hit
from polars_rankmetrics._measures._trec_plan import (
    OFFICIAL,
    Plan,
    Request,
    rank,
    rel,
)


def first_hit(ctx: Context) -> list[Partial]:
    """The position of the first relevant item within the cutoff (null: none).

    With ``ties="average"``: the first group of equal scores holding a
    relevant item instead (:func:`first_tied_group`).
    """
    if ctx.tie_average:
        return first_tied_group(ctx)
    return [Partial(ctx.name("first"), pl.col(ctx.rank).filter(ctx.hits()).min(), fill=None)]


def _reciprocal_rank(ctx: Context) -> Mapping[str, pl.Expr]:
    if ctx.tie_average:
        value = tied_first_hit(ctx)[1].fill_null(0.0)
    else:
        value = formula.reciprocal_rank(pl.col(ctx.name("first")))
    return {"": formula.defined(value, pl.col(N_RELEVANT))}


def _curve(ctx: Context) -> CurveStep:
    # 1 / position of the first relevant row (the one whose running count is 1)
    first = pl.col(RELEVANT) & (pl.col(HIT_INDEX) == 1)
    term = pl.when(first).then(formula.reciprocal_rank(pl.col(ctx.rank))).otherwise(0.0)
    rr = pl.col(ctx.name("rr"))
    return CurveStep(
        (CurveState(ctx.name("rr"), "hits", term),),
        lambda _k: {"": formula.defined(rr, pl.col(N_RELEVANT))},
    )


RECIPROCAL_RANK = register(
    Measure(
        name="mrr",
        direction="higher",
        tie_average=True,
        aliases=("rr",),
        hit_partials=first_hit,
        finals=_reciprocal_rank,
        curve=_curve,
        doc="RR@k = 1 / position of the first relevant item within k (0 if none); MRR its mean",
    )
)


# ---------------------------------------------------------------- trec_eval's twin


def _trec_recip_rank(plan: Plan, request: Request) -> None:
    """1 / rank of the first relevant document."""
    plan.value(request.names[0], formula.reciprocal_rank(rank.filter(rel).min()))


register_trec(TrecFamily("recip_rank", 9, _trec_recip_rank, sets=OFFICIAL, metric="mrr"))
