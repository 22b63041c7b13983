"""Average precision (``map@k``, ``ap@k``): the mean of P@i over the relevant hits.

``AP@k = sum_{relevant i <= k} P@i / D`` with D set by the ``denominator``
convention: ``min(m_u, k)`` (Kaggle), ``m_u`` (trec_eval) or the hits.

Notes
-----
Denominator (``denominator``): ``"min_k"`` (default, Kaggle's truncated AP@K:
H&M, Santander), ``"relevant"`` (m_u: trec_eval ``map``, ranx, ir_measures),
``"hits"`` (the relevant items retrieved, torchmetrics) or ``"k"`` (RecTools
``divide_by_k=True``). Relevance is binary: a truth item is relevant when its
grade is > 0 (and >= ``relevance_level`` when one is given); grades are not
read otherwise. Ties: ranks come given or from scores under ``ties``
(trec_eval's item id descending by default); ``ties="average"`` gives the exact
expectation over the orders of tied items (McSherry & Najork 2008). Users:
every user ``evaluate`` counts (a relevant truth item; see the
``users_without_recs`` and ``users_without_truth`` conventions); a counted user
without recommendations scores 0, and the metric is their mean.

References
----------
Buckley & Voorhees, "Retrieval System Evaluation" in *TREC: Experiment and
Evaluation in Information Retrieval* (2005); trec_eval 10.0 ``m_map.c``;
Kaggle's ``apk`` (Hamner, ``ml_metrics``) for ``"min_k"``.
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
    TIE_RELEVANT,
    TIE_SIZE,
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
    cumulative,
    found,
    rank,
    rel,
    when_positive,
)
from polars_rankmetrics._measures.precision import hit_count, hit_count_state


def _partials(ctx: Context) -> list[Partial]:
    if ctx.tie_average:
        expected = _expected_precision_term(ctx)
        relevant = pl.col(RELEVANT) & ctx.within()
        return [*hit_count(ctx), Partial.sum_of(ctx.name("ap"), expected, relevant)]
    # the j-th relevant hit (in rank order) at position i contributes P@i = j / i
    term = formula.precision_at_hit(pl.col(HIT_INDEX), pl.col(ctx.rank))
    return [*hit_count(ctx), Partial.sum_of(ctx.name("ap"), term, ctx.hits())]


def _expected_precision_term(ctx: Context) -> pl.Expr:
    """``ties="average"``: a relevant row's term of the expected sum of P@p over positions p <= k.

    A tie group fills positions a..a+n-1 and holds r relevant items, R of them
    before it. Position p of the group is relevant with chance r/n and, given
    that, holds on average ``1 + R + (p - a)(r - 1)/(n - 1)`` relevant items in
    1..p, so the group adds ``(r/n) sum_p (1/p) [1 + R + (p - a)(r - 1)/(n - 1)]``
    over its positions within k. Each of its relevant rows, whose running hit
    index h (in any order within the group) sums to ``r R + r(r + 1)/2``, adds
    ``1/n`` of the sum with ``h - (r + 1)/2`` for R: the group total is exact.
    """
    if ctx.conventions.denominator == "hits":
        raise ValueError(
            "ties='average' with denominator='hits' is not implemented: AP would divide by "
            "the hits, themselves averaged over the orders (not a linear expectation); use "
            "denominator='min_k', 'relevant' or 'k'"
        )
    a = pl.col(ctx.rank).cast(pl.Int64)
    n = pl.col(TIE_SIZE).cast(pl.Int64)
    end = a + n if ctx.k is None else pl.min_horizontal(a + n, pl.lit(ctx.k + 1, pl.Int64))
    end = pl.max_horizontal(end, a)
    harmonic = pl.int_ranges(a, end).list.eval(pl.element().cast(pl.Float64).pow(-1.0)).list.sum()
    count = (end - a).cast(pl.Float64)
    nf, r = n.cast(pl.Float64), pl.col(TIE_RELEVANT).cast(pl.Float64)
    before = pl.col(HIT_INDEX).cast(pl.Float64) - (r + 1.0) / 2.0
    spread = pl.when(nf > 1).then((r - 1.0) / (nf - 1.0)).otherwise(0.0)
    total = (1.0 + before) * harmonic + spread * (count - a.cast(pl.Float64) * harmonic)
    return total / nf


def _finals(ctx: Context) -> Mapping[str, pl.Expr]:
    n_relevant = pl.col(N_RELEVANT)
    value = formula.average_precision(
        pl.col(ctx.name("ap")),
        pl.col(ctx.name("hits")),
        n_relevant,
        ctx.k,
        ctx.conventions.denominator,
    )
    return {"": formula.defined(value, n_relevant)}


def _curve(ctx: Context) -> CurveStep:
    """The sum of P@i over the relevant rows down the list, over AP's denominator at k.

    ``min(m_u, k)`` reads k up to m_u (the horizon); ``"k"`` divides by k at
    every k (the divisor).
    """
    n_relevant = pl.col(N_RELEVANT)
    at_hit = formula.precision_at_hit(pl.col(HIT_INDEX), pl.col(ctx.rank))
    term = pl.when(pl.col(RELEVANT)).then(at_hit).otherwise(0.0)
    states = (hit_count_state(ctx), CurveState(ctx.name("ap"), "hits", term))
    precision_sum, hits = pl.col(ctx.name("ap")), pl.col(ctx.name("hits"))
    denominator = ctx.conventions.denominator
    if denominator == "k":
        return CurveStep(
            states,
            lambda _k: {"": formula.defined(precision_sum, n_relevant)},
            divisor=lambda k: k,
        )

    def value(k: pl.Expr) -> Mapping[str, pl.Expr]:
        ap = formula.average_precision(precision_sum, hits, n_relevant, k, denominator)
        return {"": formula.defined(ap, n_relevant)}

    return CurveStep(states, value, horizon=n_relevant if denominator == "min_k" else None)


AVERAGE_PRECISION = register(
    Measure(
        name="map",
        direction="higher",
        tie_average=True,
        aliases=("ap",),
        inputs=frozenset({"hits", "hit_index"}),
        hit_partials=_partials,
        finals=_finals,
        curve=_curve,
        doc="AP@k = sum of P@i over relevant i <= k, / min(m_u, k), m_u or hits "
        "(denominator convention); MAP is its mean",
    )
)


# ---------------------------------------------------------------- trec_eval's twin (m_map.c)


def trec_average_precision(plan: Plan, cutoff: float | None = None) -> pl.Expr:
    """AP of one query in trec_eval's plan: the same terms, over R (0 when R = 0)."""
    plan.row("_found", cumulative(rel))
    take = rel if cutoff is None else rel & (rank <= cutoff)
    total = formula.precision_at_hit(found, rank).filter(take).sum()
    return formula.average_precision(total, take.sum(), R, None, "relevant")


def _trec_map(plan: Plan, request: Request) -> None:
    """Map (AP over all relevant) and map_cut_k (AP to rank k)."""
    if request.family == "map":
        plan.value(request.names[0], trec_average_precision(plan))
        return
    for name, k in zip(request.names, request.cutoffs, strict=True):
        plan.value(name, when_positive(R, trec_average_precision(plan, k)))


register_trec(TrecFamily("map", 5, _trec_map, sets=OFFICIAL, metric="map"))
register_trec(TrecFamily("map_cut", 27, _trec_map, "cut_long", LONG_CUTOFFS, metric="map@{k}"))
