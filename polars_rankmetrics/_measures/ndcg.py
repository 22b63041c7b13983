"""DCG@k and NDCG@k: discounted cumulative gain, raw and over the ideal list's.

``DCG@k = sum_{i <= k} gain(g_i) / log2(i + 1)``, gain ``g`` (linear) or
``2^g - 1`` (exponential, the ``gain`` convention); ``NDCG@k = DCG@k / IDCG@k``
with IDCG the DCG of the user's truth sorted by grade. Both read the raw
grades, so they are defined whenever some grade is positive.

Notes
-----
Gain (``gain``): ``"linear"`` (default, trec_eval, scikit-learn, ranx
``ndcg``), ``"exponential"`` (``2^g - 1``, Burges et al. 2005, ranx
``ndcg_burges``) or a table ``{grade: gain}``; a grade <= 0 gains 0. Ideal
(``ideal``): ``"truth"`` (the user's truth sorted by gain, cut at k, not what
was recommended) or ``"k"`` (RecTools). NDCG is 0 when the ideal DCG is 0.
Ties: ranks come given or from scores under ``ties`` (trec_eval's item id
descending by default); ``ties="average"`` gives the exact expectation over the
orders of tied items (McSherry & Najork 2008). Users: every user ``evaluate``
counts (a relevant truth item; see the ``users_without_recs`` and
``users_without_truth`` conventions); a counted user without recommendations
scores 0, and the metric is their mean.

References
----------
Järvelin & Kekäläinen, "Cumulated gain-based evaluation of IR techniques"
(TOIS 2002); Burges et al., "Learning to rank using gradient descent" (ICML
2005) for the exponential gain; trec_eval 10.0 ``m_ndcg_cut.c``.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from polars_rankmetrics import _formulas as formula
from polars_rankmetrics._measures._curve import CurveState, CurveStep, CurveTable
from polars_rankmetrics._measures._registry import GRADE, Context, Measure, Partial, register


def _dcg_partial(ctx: Context) -> list[Partial]:
    gain = formula.gain(pl.col(GRADE), ctx.conventions.gain)
    if ctx.tie_average:
        # McSherry & Najork 2008: a tied item's expected discount is its group's mean one
        expected = gain * ctx.mean_discount()
        return [Partial.sum_of(ctx.name("dcg"), expected, ctx.within())]
    terms = gain / formula.discount(pl.col(ctx.rank))
    return [Partial.sum_of(ctx.name("dcg"), terms, ctx.within())]


def _ndcg(ctx: Context) -> Mapping[str, pl.Expr]:
    return {"": formula.ndcg(pl.col(ctx.name("dcg")), pl.col(ctx.ideal_dcg))}


def _dcg(ctx: Context) -> Mapping[str, pl.Expr]:
    return {"": pl.col(ctx.name("dcg"))}


def _dcg_state(ctx: Context, name: str, table: CurveTable) -> CurveState:
    gain = formula.gain(pl.col(GRADE), ctx.conventions.gain)
    return CurveState(ctx.name(name), table, gain / formula.discount(pl.col(ctx.rank)))


def _ndcg_curve(ctx: Context) -> CurveStep:
    # the ideal DCG at k is the same running sum down the user's ideal list
    states = (_dcg_state(ctx, "dcg", "hits"), _dcg_state(ctx, "idcg", "ideal"))
    ratio = formula.ndcg(pl.col(ctx.name("dcg")), pl.col(ctx.name("idcg")))
    return CurveStep(states, lambda _k: {"": ratio})


def _dcg_curve(ctx: Context) -> CurveStep:
    return CurveStep((_dcg_state(ctx, "dcg", "hits"),), lambda _k: {"": pl.col(ctx.name("dcg"))})


NDCG = register(
    Measure(
        name="ndcg",
        direction="higher",
        tie_average=True,
        inputs=frozenset({"hits", "grades", "gain", "ideal"}),
        hit_partials=_dcg_partial,
        finals=_ndcg,
        curve=_ndcg_curve,
        doc="NDCG@k = DCG@k / IDCG@k (gain convention: linear or 2^g - 1)",
    )
)

DCG = register(
    Measure(
        name="dcg",
        direction="higher",
        tie_average=True,
        inputs=frozenset({"hits", "grades", "gain"}),
        hit_partials=_dcg_partial,
        finals=_dcg,
        curve=_dcg_curve,
        doc="DCG@k = sum over i <= k of gain(g_i) / log2(i + 1)",
    )
)
