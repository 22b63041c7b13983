"""Precision@k: the share of the top k positions holding a relevant item.

``P@k = |{i <= k : rel_u(i) = 1}| / k``

Notes
-----
The denominator is k, also when fewer than k items were recommended: the
missing slots are misses (trec_eval ``P_k``, ranx, ir_measures); a cutoff is
required. Relevance is binary: a truth item is relevant when its grade is > 0
(and >= ``relevance_level`` when one is given); grades are not read otherwise.
Ties: ranks come given or from scores under ``ties`` (trec_eval's item id
descending by default); ``ties="average"`` gives the exact expectation over the
orders of tied items (McSherry & Najork 2008). Users: every user ``evaluate``
counts (a relevant truth item; see the ``users_without_recs`` and
``users_without_truth`` conventions); a counted user without recommendations
scores 0, and the metric is their mean.

References
----------
Manning, Raghavan & Schütze, *Introduction to Information Retrieval* (2008),
section 8.4; trec_eval 10.0 ``m_P.c``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import polars as pl

from polars_rankmetrics import _formulas as formula
from polars_rankmetrics._measures._curve import CurveState, CurveStep
from polars_rankmetrics._measures._registry import (
    N_RELEVANT,
    RELEVANT,
    Context,
    Measure,
    Partial,
    TrecFamily,
    register,
    register_trec,
)
from polars_rankmetrics._measures._trec_plan import (
    LONG_CUTOFFS,
    OFFICIAL,
    Plan,
    R,
    Request,
    code,
    hits_at,
    rank,
    when_positive,
)


def hit_count(ctx: Context) -> list[Partial]:
    """The number of relevant items within the cutoff, shared by the hit-count measures.

    With ``ties="average"`` its expectation over the orders of tied items: the
    sum of each relevant item's chance to sit within the cutoff.
    """
    if ctx.tie_average:
        expected = (pl.col(RELEVANT).cast(pl.Float64) * ctx.share_within()).sum()
        return [Partial(ctx.name("hits"), expected)]
    return [Partial(ctx.name("hits"), ctx.hits().sum())]


def hit_count_state(ctx: Context) -> CurveState:
    """The curve state of the hit-count measures: relevant items down the list."""
    return CurveState(ctx.name("hits"), "hits", pl.col(RELEVANT).cast(pl.Float64))


def hit_count_curve(ctx: Context, value: Callable[[pl.Expr], pl.Expr]) -> CurveStep:
    """A curve step whose value is ``value(hits)`` (null without a relevant item)."""
    hits = pl.col(ctx.name("hits"))
    return CurveStep(
        (hit_count_state(ctx),),
        lambda _k: {"": formula.defined(value(hits), pl.col(N_RELEVANT))},
    )


def _finals(ctx: Context) -> Mapping[str, pl.Expr]:
    value = formula.precision(pl.col(ctx.name("hits")), ctx.cutoff())
    return {"": formula.defined(value, pl.col(N_RELEVANT))}


def _curve(ctx: Context) -> CurveStep:
    # hits / k: the hits are a step of k, the k is the divisor
    step = hit_count_curve(ctx, lambda hits: hits.cast(pl.Float64))
    return CurveStep(step.states, step.value, divisor=lambda k: k)


PRECISION = register(
    Measure(
        name="precision",
        direction="higher",
        tie_average=True,
        cutoff="required",
        hit_partials=hit_count,
        finals=_finals,
        curve=_curve,
        doc="precision@k = hits@k / k (short lists: missing slots are misses)",
    )
)


# ---------------------------------------------------------------- trec_eval's twin


def _trec_precision(plan: Plan, request: Request) -> None:
    """P_k (m_P.c): relevant in the top k, over k."""
    for name, k in zip(request.names, request.cutoffs, strict=True):
        plan.value(name, formula.precision(hits_at(k), int(k)))


def _trec_relative_precision(plan: Plan, request: Request) -> None:
    """relative_P_k (m_relative_P.c): relevant in the top k, over min(R, k)."""
    for name, k in zip(request.names, request.cutoffs, strict=True):
        plan.value(name, when_positive(R, hits_at(k) / pl.min_horizontal(R, k)))


def _trec_unjudged(plan: Plan, request: Request) -> None:
    """unj_k (m_unj.c): documents without a judgement in the top k, over k."""
    for name, k in zip(request.names, request.cutoffs, strict=True):
        plan.value(
            name,
            formula.divided_by_constant(((code < 0) & (rank <= k)).sum().cast(pl.Float64), k),
        )


register_trec(
    TrecFamily(
        "P", 11, _trec_precision, "cut_long", LONG_CUTOFFS, sets=OFFICIAL,
        metric="precision@{k}",
    )
)  # fmt: skip
register_trec(TrecFamily("relative_P", 28, _trec_relative_precision, "cut_long", LONG_CUTOFFS))
register_trec(TrecFamily("unj", 38, _trec_unjudged, "cut_long", (5.0, 10.0, 20.0), missing=0.0))
