"""Hit rate@k (``hits@k``, ``success@k``) and the count of relevant items retrieved.

Note the names: here ``hits@k`` is the HIT RATE (1 if anything relevant is in
the top k, else 0), as in most recommender papers. ranx's ``hits@k`` is a
COUNT of relevant items in the top k: that is ``n_relevant_retrieved@k``
(alias ``num_hits@k``).

``hit_rate@k = 1 if |{i <= k : rel_u(i) = 1}| > 0 else 0``;
``n_relevant_retrieved@k = |{i <= k : rel_u(i) = 1}|``.

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
Deshpande & Karypis, "Item-based top-N recommendation algorithms" (TOIS 2004:
hit rate); ranx ``hit_rate`` and ``hits`` (the count); trec_eval 10.0
``success_k`` (``m_success.c``).
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from polars_rankmetrics import _formulas as formula
from polars_rankmetrics._measures._curve import CurveStep
from polars_rankmetrics._measures._registry import (
    N_RELEVANT,
    Context,
    Measure,
    Partial,
    TrecFamily,
    register,
    register_trec,
)
from polars_rankmetrics._measures._ties import first_tied_group, tied_first_hit
from polars_rankmetrics._measures._trec_plan import (
    Plan,
    Request,
    hits_at,
)
from polars_rankmetrics._measures.precision import hit_count, hit_count_curve


def _hit_partials(ctx: Context) -> list[Partial]:
    # ties="average": the chance of a hit depends on the first tied group with one
    return first_tied_group(ctx) if ctx.tie_average else hit_count(ctx)


def _hit_rate(ctx: Context) -> Mapping[str, pl.Expr]:
    if ctx.tie_average:
        value = tied_first_hit(ctx)[0].fill_null(0.0)
    else:
        value = formula.hit_rate(pl.col(ctx.name("hits")))
    return {"": formula.defined(value, pl.col(N_RELEVANT))}


def _count(ctx: Context) -> Mapping[str, pl.Expr]:
    return {"": formula.defined(pl.col(ctx.name("hits")), pl.col(N_RELEVANT))}


def _hit_rate_curve(ctx: Context) -> CurveStep:
    return hit_count_curve(ctx, formula.hit_rate)


def _count_curve(ctx: Context) -> CurveStep:
    return hit_count_curve(ctx, lambda hits: hits)


HIT_RATE = register(
    Measure(
        name="hit_rate",
        direction="higher",
        aliases=("hits", "success"),
        tie_average=True,
        hit_partials=_hit_partials,
        finals=_hit_rate,
        curve=_hit_rate_curve,
        doc="hit_rate@k = 1 if hits@k > 0 else 0 (aliases hits, success; "
        "NOT ranx's hits@k, a count: see n_relevant_retrieved)",
    )
)

N_RELEVANT_RETRIEVED = register(
    Measure(
        name="n_relevant_retrieved",
        direction="higher",
        tie_average=True,
        aliases=("num_hits",),
        hit_partials=hit_count,
        finals=_count,
        curve=_count_curve,
        doc="n_relevant_retrieved@k = hits@k, the COUNT of relevant items in the top k "
        "(ranx's hits@k; here hits@k is the hit rate)",
    )
)


# ---------------------------------------------------------------- trec_eval's twin


def _trec_success(plan: Plan, request: Request) -> None:
    """success_k (m_success.c): 1 when a relevant document is in the top k."""
    for name, k in zip(request.names, request.cutoffs, strict=True):
        plan.value(name, formula.hit_rate(hits_at(k)))


register_trec(
    TrecFamily("success", 29, _trec_success, "cut_long", (1.0, 5.0, 10.0), metric="hit_rate@{k}")
)
