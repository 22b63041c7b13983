"""trec_eval's ranked measures without an ``evaluate`` twin: ``binG`` and ``relstring``.

    binG = (1 / R) Σ_{relevant retrieved d} 1 / log2(2 + non-relevant above d)

and ``relstring`` the judgements of the top N as a string, as trec_eval 10.0
computes them. The ranked measures that have an ``evaluate`` twin sit beside
it: ``map``/``map_cut`` in ``average_precision``, ``P``/``relative_P``/``unj``
in ``precision``, ``recall`` in ``recall``, ``success`` in ``hit_rate``,
``Rprec``/``Rprec_mult`` in ``r_precision``, ``recip_rank`` in
``reciprocal_rank``.

Notes
-----
Documents are ranked by score descending, ties by document id descending
(trec_eval's order); relevant means a grade >= the relevance level. Formulas
of every measure in ``docs/trec-measures.md``.

References
----------
trec_eval 10.0 (usnistgov/trec_eval), ``m_binG.c``, ``m_relstring.c``.
"""

from __future__ import annotations

import polars as pl

from polars_rankmetrics._measures._registry import TrecFamily, register_trec
from polars_rankmetrics._measures._trec_plan import (
    Plan,
    R,
    Request,
    code,
    cumulative,
    found,
    rank,
    rel,
)


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
