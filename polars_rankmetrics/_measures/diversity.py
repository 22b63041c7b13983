"""The TREC diversity (intent-aware) measures, from subtopic judgements, as ndeval computes them.

A diversity truth judges each document per subtopic (intent) of the topic:
one row per (user, subtopic, item), TREC's ``topic subtopic docno judgment``,
the subtopic in ``evaluate``'s ``subtopic=`` column. ``J(d, s) = 1`` when the
row's grade is > 0 (and at least ``relevance_level``): graded judgments are
binarised, as ndeval does. ``S_q`` is the set of the user's subtopics with a
relevant document (a subtopic never judged relevant is ignored), ``C_s(r - 1)``
the number of documents above position ``r`` relevant to ``s`` and ``g_r =
sum_{s in S_q} J(d_r, s) (1 - alpha)^{C_s(r - 1)}`` the novelty-discounted gain
of position ``r`` (``alpha``: redundancy intolerance, default 0.5):

* ``alpha_dcg@k`` = ``sum_{r <= k} g_r / log2(1 + r)`` divided by ndeval's
  "ideal ideal" ``|S_q| sum_{r <= k} (1 - alpha)^{r - 1} / log2(1 + r)`` (every
  subtopic covered at every rank; collection independent). ``norm=none``: the
  raw alpha-DCG of Clarke et al. (2008).
* ``alpha_ndcg@k`` = alpha-DCG@k / the alpha-DCG@k of the ideal ranking
  (Clarke et al. 2008; collection dependent).
* ``err_ia@k`` = ``sum_{r <= k} g_r / r`` divided by ``|S_q| sum_{r <= k}
  (1 - alpha)^{r - 1} / r`` (ndeval). ``norm=none``: Chapelle et al.'s (2009)
  ERR-IA, ``(1 / |S_q|) sum_s ERR_s`` with a relevant document stopping the
  user with probability alpha: ``(alpha / |S_q|) sum_{r <= k} g_r / r``.
* ``nerr_ia@k`` = ``sum_{r <= k} g_r / r`` over the ideal ranking's.
* ``nrbp`` = ``(1 - (1 - alpha) beta) / |S_q| sum_r beta^{r - 1} g_r`` over the
  whole list (Clarke, Kolla & Vechtomova, ICTIR 2009; ``beta``: patience,
  default 0.5); ``nnrbp`` = the same sum over the ideal ranking's.
* ``p_ia@k`` = ``(1 / |S_q|) sum_s P_s@k``: ``sum_{r <= k} sum_s J(d_r, s) / (k
  |S_q|)`` (Agrawal et al. 2009, uniform subtopic weights).
* ``map_ia`` = ``(1 / |S_q|) sum_s AP_s``, ``AP_s`` the average precision of
  the list for subtopic s, over its relevant documents n_s (whole list).
* ``strec@k`` = subtopic recall (Zhai, Cohen & Lafferty 2003): the subtopics
  with a relevant document in the top k, over ``|S_q|``.

Notes
-----
The ideal ranking is ndeval's greedy one (finding the best is NP-complete, as
Clarke et al. 2008 note, who use the same greedy): at each position the
document of largest gain ``g`` given those above, equal gains to the largest
item id (ndeval's ``strcmp`` order of docnos). ndeval's conventions kept, each
checked against ``pyndeval`` (the C code): ``@1`` of ``alpha_dcg`` and
``err_ia`` is not divided by the "ideal ideal" (ndeval's normalisation loop
starts at rank 2); a normalised value is 0 when the run's sum is 0; NRBP,
nNRBP and MAP-IA read the whole list, the others the top k. Where ndeval
differs: for a topic without relevant subtopics ndeval's nNRBP is NaN (0 /
0), here 0 as its other measures (``users_without_truth`` decides whether
such a user counts at all); ndeval caps k at 20, here any k.

Users: a user counts when ``evaluate`` counts it (``conventions="ndeval"``:
users in both the run and the truth, those without relevant subtopics scoring
0, as ndeval without ``-c``). Ties: the ranks given, or from scores under
``ties`` (``"ndeval"``: ``item_desc``, ndeval ``-traditional``; pyndeval and
ir_measures order equal scores by docno ascending, ``ties="item_asc"``);
``ties="average"`` is refused. A document recommended twice is refused
(ndeval: "duplicate docno").

References
----------
Clarke, Kolla, Cormack, Vechtomova, Ashkan, Büttcher & MacKinnon, "Novelty
and diversity in information retrieval evaluation" (SIGIR 2008); Clarke,
Kolla & Vechtomova, "An effectiveness measure for ambiguous and
underspecified queries" (ICTIR 2009); Chapelle, Metzler, Zhang & Grinspan,
"Expected reciprocal rank for graded relevance" (CIKM 2009); Agrawal,
Gollapudi, Halverson & Ieong, "Diversifying search results" (WSDM 2009);
Zhai, Cohen & Lafferty, "Beyond independent relevance" (SIGIR 2003); ndeval
4.5 (TREC Web track 2009-2014), pyndeval.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import polars as pl

from polars_rankmetrics._measures._registry import (
    N_SUBTOPICS,
    SUBTOPIC_RELEVANT,
    SUBTOPIC_SEEN,
    Context,
    Input,
    Measure,
    Param,
    Partial,
    register,
)
from polars_rankmetrics._powers import power

_READS: frozenset[Input] = frozenset({"subtopics"})
_NORMS = ("ideal_ideal", "none")


def _check_alpha(alpha: float) -> float:
    if not (math.isfinite(alpha) and 0 <= alpha <= 1):
        raise ValueError(f"alpha (redundancy intolerance) must be in [0, 1], got {alpha!r}")
    return alpha


def _check_beta(beta: float) -> float:
    if not (math.isfinite(beta) and 0 <= beta < 1):
        raise ValueError(f"beta (patience) must be in [0, 1), got {beta!r}")
    return beta


ALPHA = Param("alpha", float, 0.5, "redundancy intolerance", check=_check_alpha)
BETA = Param("beta", float, 0.5, "patience (NRBP's)", check=_check_beta)
NORM = Param(
    "norm", str, "ideal_ideal",
    "ndeval's collection-independent normaliser, or none (the paper's raw value)",
    choices=_NORMS,
)  # fmt: skip


def _alpha(ctx: Context) -> float:
    return float(ctx.number("alpha") or 0.0)


def _novelty(ctx: Context) -> pl.Expr:
    """``(1 - alpha)^{C_s(r - 1)}`` of a subtopic row."""
    return power(1.0 - _alpha(ctx), pl.col(SUBTOPIC_SEEN))


def _position(ctx: Context) -> pl.Expr:
    return pl.col(ctx.rank).cast(pl.Float64)


def _within(ctx: Context, term: pl.Expr) -> pl.Expr:
    """The row's term within the cutoff, null (not summed) past it."""
    return pl.when(ctx.within()).then(term)


def _dcg_term(ctx: Context) -> pl.Expr:
    return _within(ctx, _novelty(ctx) / (_position(ctx) + 1.0).log(2))


def _err_term(ctx: Context) -> pl.Expr:
    return _within(ctx, _novelty(ctx) / _position(ctx))


def _rbp_term(ctx: Context) -> pl.Expr:
    beta = float(ctx.number("beta") or 0.0)
    position = _position(ctx)
    return _within(ctx, _novelty(ctx) * power(beta, position - 1.0))


def _ideal_ideal(ctx: Context, discount: Callable[[int], float]) -> float:
    """Ndeval's "ideal ideal" per subtopic: ``sum_{r <= k} (1 - alpha)^{r - 1} discount(r)``.

    At k = 1 it is 1: ndeval's normalisation loop starts at rank 2.
    """
    k = ctx.cutoff()
    if k == 1:
        return 1.0
    total, weight = 0.0, 1.0
    for r in range(1, k + 1):
        if weight == 0.0:  # (1 - alpha)^(r - 1) underflowed: nothing more to add
            break
        total += weight * discount(r)
        weight *= 1.0 - _alpha(ctx)
    return total


def _defined(value: pl.Expr) -> pl.Expr:
    """Null for a user without relevant subtopics (the users conventions fill it)."""
    return pl.when(pl.col(N_SUBTOPICS) > 0).then(value)


def _ratio(run: str, ideal: str) -> pl.Expr:
    """The run's sum over the ideal's; 0 when the run's is 0 (ndeval's renormalize)."""
    return _defined(pl.when(pl.col(run) > 0).then(pl.col(run) / pl.col(ideal)).otherwise(0.0))


def _sum(base: str, term: Callable[[Context], pl.Expr]) -> Callable[[Context], list[Partial]]:
    def partials(ctx: Context) -> list[Partial]:
        return [Partial(ctx.name(base), term(ctx))]

    return partials


def _scaled(
    base: str, discount: Callable[[int], float], paper: Callable[[Context], pl.Expr]
) -> Callable[[Context], Mapping[str, pl.Expr]]:
    """The run's sum over |S_q| times ndeval's ideal ideal, or times ``paper(ctx)``."""

    def finals(ctx: Context) -> Mapping[str, pl.Expr]:
        subtopics = pl.col(N_SUBTOPICS) if ctx.cutoff() > 1 else pl.lit(1.0)
        scale = (
            paper(ctx)
            if ctx.params["norm"] == "none"
            else 1.0 / subtopics / _ideal_ideal(ctx, discount)
        )
        return {"": _defined(pl.col(ctx.name(base)) * scale)}

    return finals


def _normalised(base: str) -> Callable[[Context], Mapping[str, pl.Expr]]:
    def finals(ctx: Context) -> Mapping[str, pl.Expr]:
        return {"": _ratio(ctx.name(base), ctx.name(f"ideal_{base}"))}

    return finals


def _diversity(
    name: str,
    doc: str,
    *,
    finals: Callable[[Context], Mapping[str, pl.Expr]],
    run: Callable[[Context], list[Partial]],
    ideal: Callable[[Context], list[Partial]] | None = None,
    params: tuple[Param, ...] = (),
    cutoff: str = "required",
) -> Measure:
    return register(
        Measure(
            name=name,
            direction="higher",
            cutoff="required" if cutoff == "required" else "none",
            params=params,
            inputs=_READS,
            repeats="list",  # ndeval refuses a docno twice in a topic's run
            subtopic_partials=run,
            ideal_subtopic_partials=ideal or _no_ideal,
            ideal_alpha=_alpha if ideal is not None else None,
            finals=finals,
            doc=doc,
        )
    )


def _no_ideal(ctx: Context) -> list[Partial]:
    del ctx
    return []


def _ideal_sum(base: str, term: Callable[[Context], pl.Expr]) -> Callable[[Context], list[Partial]]:
    return _sum(f"ideal_{base}", term)


def _log_discount(r: int) -> float:
    return 1.0 / math.log2(1 + r)


def _reciprocal(r: int) -> float:
    return 1.0 / r


ALPHA_DCG = _diversity(
    "alpha_dcg",
    "sum_{r<=k} g_r / log2(1+r), g_r = sum_s J(d_r,s)(1-alpha)^{C_s(r-1)}, over ndeval's "
    "ideal ideal |S_q| sum_{r<=k} (1-alpha)^{r-1}/log2(1+r) (norm=none: raw)",
    params=(ALPHA, NORM),
    run=_sum("adcg", _dcg_term),
    finals=_scaled("adcg", _log_discount, lambda _: pl.lit(1.0)),
)
ALPHA_NDCG = _diversity(
    "alpha_ndcg",
    "alpha-DCG@k over the alpha-DCG@k of ndeval's greedy ideal ranking (Clarke et al. 2008)",
    params=(ALPHA,),
    run=_sum("adcg", _dcg_term),
    ideal=_ideal_sum("adcg", _dcg_term),
    finals=_normalised("adcg"),
)
ERR_IA = _diversity(
    "err_ia",
    "sum_{r<=k} g_r / r over ndeval's ideal ideal |S_q| sum_{r<=k} (1-alpha)^{r-1}/r "
    "(norm=none: Chapelle et al.'s (alpha/|S_q|) sum_{r<=k} g_r / r)",
    params=(ALPHA, NORM),
    run=_sum("aerr", _err_term),
    finals=_scaled("aerr", _reciprocal, lambda ctx: _alpha(ctx) / pl.col(N_SUBTOPICS)),
)
NERR_IA = _diversity(
    "nerr_ia",
    "sum_{r<=k} g_r / r over the same sum of ndeval's greedy ideal ranking",
    params=(ALPHA,),
    run=_sum("aerr", _err_term),
    ideal=_ideal_sum("aerr", _err_term),
    finals=_normalised("aerr"),
)


def _nrbp_finals(ctx: Context) -> Mapping[str, pl.Expr]:
    alpha, beta = _alpha(ctx), float(ctx.number("beta") or 0.0)
    scale = (1.0 - (1.0 - alpha) * beta) / pl.col(N_SUBTOPICS)
    return {"": _defined(pl.col(ctx.name("anrbp")) * scale)}


NRBP = _diversity(
    "nrbp",
    "(1 - (1-alpha) beta) / |S_q| sum_r beta^{r-1} g_r over the whole list (Clarke et al. 2009)",
    params=(ALPHA, BETA),
    run=_sum("anrbp", _rbp_term),
    finals=_nrbp_finals,
    cutoff="none",
)
NNRBP = _diversity(
    "nnrbp",
    "sum_r beta^{r-1} g_r over the same sum of ndeval's greedy ideal ranking",
    params=(ALPHA, BETA),
    run=_sum("anrbp", _rbp_term),
    ideal=_ideal_sum("anrbp", _rbp_term),
    finals=_normalised("anrbp"),
    cutoff="none",
)


def _count_term(ctx: Context) -> pl.Expr:
    return _within(ctx, pl.lit(1.0))


def _first_term(ctx: Context) -> pl.Expr:
    return _within(ctx, (pl.col(SUBTOPIC_SEEN) == 0).cast(pl.Float64))


def _ap_term(ctx: Context) -> pl.Expr:
    precision = (pl.col(SUBTOPIC_SEEN) + 1.0) / _position(ctx)
    return _within(ctx, precision / pl.col(SUBTOPIC_RELEVANT).cast(pl.Float64))


def _per_subtopic(base: str, per_k: bool) -> Callable[[Context], Mapping[str, pl.Expr]]:
    def finals(ctx: Context) -> Mapping[str, pl.Expr]:
        scale = pl.col(N_SUBTOPICS) * (float(ctx.cutoff()) if per_k else 1.0)
        return {"": _defined(pl.col(ctx.name(base)) / scale)}

    return finals


P_IA = _diversity(
    "p_ia",
    "sum_{r<=k} sum_s J(d_r,s) / (k |S_q|): precision per subtopic, averaged (Agrawal 2009)",
    run=_sum("pia", _count_term),
    finals=_per_subtopic("pia", per_k=True),
)
MAP_IA = _diversity(
    "map_ia",
    "(1/|S_q|) sum_s AP_s, AP_s over the subtopic's relevant documents (whole list)",
    run=_sum("apia", _ap_term),
    finals=_per_subtopic("apia", per_k=False),
    cutoff="none",
)
STREC = _diversity(
    "strec",
    "subtopics with a relevant document in the top k / |S_q| (S-recall, Zhai et al. 2003)",
    run=_sum("strec", _first_term),
    finals=_per_subtopic("strec", per_k=False),
)


# ndeval's measure names (its CSV header, pyndeval's names) and the metric string of each:
# ``{k}`` stands for the cutoff; ndeval prints the cutoff measures at 5, 10 and 20
NDEVAL_NAMES: dict[str, str] = {
    "ERR-IA": "err_ia(alpha={alpha})@{k}",
    "nERR-IA": "nerr_ia(alpha={alpha})@{k}",
    "alpha-DCG": "alpha_dcg(alpha={alpha})@{k}",
    "alpha-nDCG": "alpha_ndcg(alpha={alpha})@{k}",
    "NRBP": "nrbp(alpha={alpha},beta={beta})",
    "nNRBP": "nnrbp(alpha={alpha},beta={beta})",
    "MAP-IA": "map_ia",
    "P-IA": "p_ia@{k}",
    "strec": "strec@{k}",
}
NDEVAL_CUTOFFS = (5, 10, 20)
