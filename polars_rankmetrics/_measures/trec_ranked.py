"""trec_eval's ranked binary measures, for ``rankmetrics trec``.

``map``, ``map_cut_k``, ``Rprec``, ``Rprec_mult_x``, ``recip_rank``, ``P_k``,
``recall_k``, ``relative_P_k``, ``success_k``, ``unj_k``, ``binG`` and
``relstring``, as trec_eval 10.0 computes them (``m_*.c``); formulas in
``docs/trec-measures.md``, e.g.

    map = (1 / R) Σ_{relevant retrieved d} P@rank(d),  P_k = r_k / k

with R the relevant documents of the query and r_k those within rank k.

Notes
-----
Documents are ranked by score descending, ties by document id descending
(trec_eval's order); relevant means a grade >= the relevance level. Each
names the ``evaluate`` metric string with the same value under
``conventions="trec"`` where there is one (``P_5``: ``precision@5``,
``recip_rank``: ``mrr``).

References
----------
trec_eval 10.0 (usnistgov/trec_eval), ``m_map.c``, ``m_P.c``,
``m_Rprec.c``, ``m_recip_rank.c``, ``m_success.c``, ``m_binG.c``.
"""

from __future__ import annotations

import polars as pl

from polars_rankmetrics import _formulas as formula
from polars_rankmetrics._measures._registry import TrecFamily, register_trec
from polars_rankmetrics._pipeline.trec_plan import (
    Plan,
    R,
    Request,
    average_precision,
    code,
    cumulative,
    found,
    hits_at,
    num_ret,
    rank,
    rel,
    when_positive,
)

_OFFICIAL = ("official", "all_trec")
_LONG_CUTOFFS = (5.0, 10.0, 15.0, 20.0, 30.0, 100.0, 200.0, 500.0, 1000.0)


def map_family(plan: Plan, request: Request) -> None:
    """Map (AP over all relevant) and map_cut_k (AP to rank k)."""
    if request.family == "map":
        plan.value(request.names[0], average_precision(plan))
        return
    for name, k in zip(request.names, request.cutoffs, strict=True):
        plan.value(name, when_positive(R, average_precision(plan, k)))


register_trec(TrecFamily("map", 5, map_family, sets=_OFFICIAL, metric="map"))
register_trec(TrecFamily("map_cut", 27, map_family, "cut_long", _LONG_CUTOFFS, metric="map@{k}"))


def precision_family(plan: Plan, request: Request) -> None:
    """P_k, recall_k, relative_P_k, success_k, unj_k: counts in the top k."""
    for name, k in zip(request.names, request.cutoffs, strict=True):
        hits = hits_at(k)
        if request.family == "P":
            value = formula.precision(hits, int(k))
        elif request.family == "recall":
            value = when_positive(R, formula.recall(hits, R))
        elif request.family == "relative_P":
            value = when_positive(R, hits / pl.min_horizontal(R, k))
        elif request.family == "success":
            value = formula.hit_rate(hits)
        else:  # unj: documents without a judgement in the top k
            value = ((code < 0) & (rank <= k)).sum().cast(pl.Float64) / k
        plan.value(name, value)


register_trec(
    TrecFamily(
        "P", 11, precision_family, "cut_long", _LONG_CUTOFFS, sets=_OFFICIAL,
        metric="precision@{k}",
    )
)  # fmt: skip
register_trec(
    TrecFamily("recall", 13, precision_family, "cut_long", _LONG_CUTOFFS, metric="recall@{k}")
)
register_trec(TrecFamily("relative_P", 28, precision_family, "cut_long", _LONG_CUTOFFS))
register_trec(
    TrecFamily("success", 29, precision_family, "cut_long", (1.0, 5.0, 10.0), metric="hit_rate@{k}")
)
register_trec(TrecFamily("unj", 38, precision_family, "cut_long", (5.0, 10.0, 20.0), missing=0.0))


def r_precision(plan: Plan, request: Request) -> None:
    """Rprec: precision at R (relevant in the top min(R, num_ret), over R)."""
    look = pl.min_horizontal(num_ret, R)
    plan.value(request.names[0], when_positive(look, formula.r_precision(hits_at(look), R)))


register_trec(TrecFamily("Rprec", 7, r_precision, sets=_OFFICIAL, metric="r_precision"))


def rprec_mult(plan: Plan, request: Request) -> None:
    """Rprec_mult_x: precision at floor(x * R + 0.9) documents."""
    for name, fraction in zip(request.names, request.cutoffs, strict=True):
        cutoff = (fraction * R + 0.9).floor()
        plan.value(name, when_positive(cutoff, hits_at(cutoff) / cutoff))


register_trec(
    TrecFamily(
        "Rprec_mult", 16, rprec_mult, "cut_double",
        (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0),
    )
)  # fmt: skip


def recip_rank(plan: Plan, request: Request) -> None:
    """1 / rank of the first relevant document."""
    plan.value(request.names[0], formula.reciprocal_rank(rank.filter(rel).min()))


register_trec(TrecFamily("recip_rank", 9, recip_rank, sets=_OFFICIAL, metric="mrr"))


def bin_g(plan: Plan, request: Request) -> None:
    """binG: 1 / log2(2 + non-relevant above) per relevant document, over R."""
    plan.row("_found", cumulative(rel))
    total = (1.0 / (2.0 + rank - found).log(2)).filter(rel).sum()
    plan.value(request.names[0], pl.when(rel.any()).then(total / R).otherwise(0.0))


register_trec(TrecFamily("binG", 19, bin_g))


def relstring(plan: Plan, request: Request) -> None:
    """Relstring: one character per document of the top N.

    The grade, '>' above 9, '-' not in the qrels, '.' pooled but unjudged.
    """
    length = max(int(request.values[0]), 0) if request.values else 10
    char = plan.row(
        "_char",
        pl.when(code > 9)
        .then(pl.lit(">"))
        .when(code >= 0)
        .then(code.cast(pl.String))
        .when(code == -1)
        .then(pl.lit("-"))
        .when(code == -2)
        .then(pl.lit("."))
        .otherwise(pl.lit("<")),
    )
    plan.text[request.names[0]] = plan.agg(f"={request.names[0]}", char.head(length).str.join(""))


register_trec(
    TrecFamily("relstring", 12, relstring, "p_double", (10.0,), summary="text", missing="")
)
