"""Recall@k: the share of the user's relevant items found within the cutoff.

``R@k = |{i <= k : rel_u(i) = 1}| / m_u``, ``m_u`` the user's number of
relevant truth items; without ``@k`` the whole list counts.

Notes
-----
The denominator is ``m_u``, every relevant item of the truth (recommended or
not, trec_eval ``recall_k``, ranx); for ``min(k, m_u)`` see ``pooled_recall``.
Relevance is binary: a truth item is relevant when its grade is > 0 (and >=
``relevance_level`` when one is given); grades are not read otherwise. Ties:
ranks come given or from scores under ``ties`` (trec_eval's item id descending
by default); ``ties="average"`` gives the exact expectation over the orders of
tied items (McSherry & Najork 2008). Users: every user ``evaluate`` counts (a
relevant truth item; see the ``users_without_recs`` and ``users_without_truth``
conventions); a counted user without recommendations scores 0, and the metric
is their mean. A user without a relevant item has no recall (excluded, or 0
under ``users_without_truth="zero"``).

References
----------
Manning, Raghavan & Schütze, *Introduction to Information Retrieval* (2008),
section 8.3; trec_eval 10.0 ``m_recall.c``.
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
    TrecFamily,
    register,
    register_trec,
)
from polars_rankmetrics._measures._trec_plan import (
    LONG_CUTOFFS,
    Plan,
    R,
    Request,
    hits_at,
    when_positive,
)
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
        direction="higher",
        tie_average=True,
        hit_partials=hit_count,
        finals=_finals,
        curve=_curve,
        doc="recall@k = hits@k / m_u (m_u: the user's number of relevant items)",
    )
)


# ---------------------------------------------------------------- trec_eval's twin


def _trec_recall(plan: Plan, request: Request) -> None:
    """recall_k (m_recall.c): relevant in the top k, over R (0 when R = 0)."""
    for name, k in zip(request.names, request.cutoffs, strict=True):
        plan.value(name, when_positive(R, formula.recall(hits_at(k), R)))


register_trec(TrecFamily("recall", 13, _trec_recall, "cut_long", LONG_CUTOFFS, metric="recall@{k}"))
