"""trec_eval's measures that make sense outside TREC, as ``evaluate`` metric strings.

- ``gm_map@k``: AP averaged with a geometric mean, ``exp(mean(log(max(AP, 1e-5))))``
  (trec_eval's ``gm_map``; AP's denominator follows the ``denominator`` convention,
  ``"relevant"`` under ``conventions="trec"``);
- ``iprec(recall=x)``: interpolated precision at recall ``x`` (trec_eval's
  ``iprec_at_recall_x``);
- ``eleven_pt``: the mean interpolated precision at recall 0, 0.1, ..., 1
  (trec_eval's ``11pt_avg``);
- ``rbp(p=0.8)@k``: rank-biased precision with binary relevance,
  ``(1 - p) sum_{relevant i <= k} p^(i-1)`` (trec_eval's ``rbp`` on binary qrels).

and, from the judgements table (input ``"judgements"``: every judged
recommendation, negative grades meaning "pooled but unjudged"):

- ``bpref@k``: trec_eval's ``bpref``;
- ``infap@k``: trec_eval's ``infAP``;
- ``rbp_resid(p=0.8)@k``: trec_eval's ``rbp_resid``, the RBP weight left to
  unjudged and unseen documents.

The rest of trec_eval's measures are computed by
:func:`polars_rankmetrics.trec.trec_eval`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import polars as pl

from polars_rankmetrics import _formulas as formula
from polars_rankmetrics._measures._registry import (
    GRADE,
    HIT_INDEX,
    N_NONRELEVANT,
    N_RELEVANT,
    NONRELEVANT_ABOVE,
    RELEVANT_ABOVE,
    UNJUDGED_ABOVE,
    Context,
    Measure,
    Param,
    Partial,
    register,
)
from polars_rankmetrics._measures.average_precision import AVERAGE_PRECISION

MIN_GEO_MEAN = 0.00001  # trec_eval's floor before the log
RECALL_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def _gm_map_finals(ctx: Context) -> Mapping[str, pl.Expr]:
    ap = AVERAGE_PRECISION.finals(ctx)[""]
    return {"log": pl.max_horizontal(ap, MIN_GEO_MEAN).log()}


GM_MAP = register(
    Measure(
        name="gm_map",
        inputs=AVERAGE_PRECISION.inputs,
        hit_partials=AVERAGE_PRECISION.hit_partials,
        finals=_gm_map_finals,
        aggregation="geometric_mean",
        fill=math.log(MIN_GEO_MEAN),
        per_user_value=lambda parts: parts["log"].exp(),
        doc="gm_map@k = exp(mean over users of log(max(AP@k, 0.00001))), trec_eval's gm_map",
    )
)


def _number(ctx: Context, name: str) -> float:
    # every parameter here has a default, so the registry always fills it in
    return float(ctx.params[name] or 0.0)


def interpolated_precision(ctx: Context, recall: float) -> pl.Expr:
    """Interpolated precision at ``recall``, for one list.

    The best precision at or after the lround(recall * m_u)-th relevant hit (the
    first for 0); no value (filled with 0) past the relevant items found.
    """
    wanted = pl.max_horizontal(
        (recall * pl.col(N_RELEVANT)).round(0, mode="half_away_from_zero"), 1.0
    )
    precision = pl.col(HIT_INDEX) / pl.col(ctx.rank)
    return precision.filter(ctx.hits() & (pl.col(HIT_INDEX) >= wanted)).max()


def _check_recall(recall: float) -> float:
    if not 0 <= recall <= 1:
        raise ValueError(f"iprec's recall must be between 0 and 1, got {recall!r}")
    return recall


def _iprec_partials(ctx: Context) -> list[Partial]:
    recall = _number(ctx, "recall")
    return [Partial(ctx.name("iprec"), interpolated_precision(ctx, recall))]


def _iprec_finals(ctx: Context) -> Mapping[str, pl.Expr]:
    return {"": formula.defined(pl.col(ctx.name("iprec")), pl.col(N_RELEVANT))}


IPREC = register(
    Measure(
        name="iprec",
        aliases=("iprec_at_recall",),
        params=(Param("recall", float, 0.0, "recall level in [0, 1]", check=_check_recall),),
        inputs=frozenset({"hits", "hit_index", "n_relevant_on_hits"}),
        hit_partials=_iprec_partials,
        finals=_iprec_finals,
        doc="iprec(recall=x)@k = max precision at or after the lround(x m_u)-th relevant "
        "item (0 past the relevant items found), trec_eval's iprec_at_recall_x",
    )
)


def _eleven_partials(ctx: Context) -> list[Partial]:
    return [
        Partial(ctx.name(f"iprec{level}"), interpolated_precision(ctx, level))
        for level in RECALL_LEVELS
    ]


def _eleven_finals(ctx: Context) -> Mapping[str, pl.Expr]:
    total = pl.sum_horizontal(pl.col(ctx.name(f"iprec{level}")) for level in RECALL_LEVELS)
    return {"": formula.defined(total / len(RECALL_LEVELS), pl.col(N_RELEVANT))}


ELEVEN_PT = register(
    Measure(
        name="eleven_pt",
        aliases=("eleven_point",),
        inputs=frozenset({"hits", "hit_index", "n_relevant_on_hits"}),
        hit_partials=_eleven_partials,
        finals=_eleven_finals,
        doc="eleven_pt@k = mean of iprec at recall 0, 0.1, ..., 1, trec_eval's 11pt_avg",
    )
)


def _check_persistence(p: float) -> float:
    if not 0 < p < 1:
        raise ValueError(f"rbp's persistence p must be between 0 and 1 (exclusive), got {p!r}")
    return p


def _rbp_partials(ctx: Context) -> list[Partial]:
    p = _number(ctx, "p")
    weight = pl.lit(p).pow(pl.col(ctx.rank).cast(pl.Float64) - 1.0)
    return [Partial(ctx.name("rbp"), weight.filter(ctx.hits()).sum())]


def _rbp_finals(ctx: Context) -> Mapping[str, pl.Expr]:
    p = _number(ctx, "p")
    return {"": formula.defined((1.0 - p) * pl.col(ctx.name("rbp")), pl.col(N_RELEVANT))}


RBP = register(
    Measure(
        name="rbp",
        params=(
            Param("p", float, 0.8, "persistence: the chance to look further", _check_persistence),
        ),
        hit_partials=_rbp_partials,
        finals=_rbp_finals,
        doc="rbp(p=0.8)@k = (1 - p) sum over relevant i <= k of p^(i-1) (Moffat & Zobel)",
    )
)


def _bpref_partials(ctx: Context) -> list[Partial]:
    relevant = pl.col(N_RELEVANT).cast(pl.Float64)
    above = pl.col(NONRELEVANT_ABOVE).cast(pl.Float64)
    share = pl.min_horizontal(above, relevant) / pl.min_horizontal(
        pl.col(N_NONRELEVANT).cast(pl.Float64), relevant
    )
    term = pl.when(above > 0).then(1.0 - share).otherwise(1.0)
    return [Partial(ctx.name("bpref"), term.filter(ctx.hits()).sum())]


def _bpref_finals(ctx: Context) -> Mapping[str, pl.Expr]:
    n_relevant = pl.col(N_RELEVANT)
    return {"": formula.defined(pl.col(ctx.name("bpref")) / n_relevant, n_relevant)}


BPREF = register(
    Measure(
        name="bpref",
        inputs=frozenset({"judgements"}),
        judgement_partials=_bpref_partials,
        finals=_bpref_finals,
        doc="bpref@k = (1/m_u) sum over relevant i <= k of 1 - min(N_i, m_u) / min(N, m_u) "
        "(1 when N_i = 0); N_i judged non-relevant above i, N judged non-relevant items",
    )
)

INFAP_EPSILON = 0.00001


def _infap_partials(ctx: Context) -> list[Partial]:
    j = pl.col(ctx.rank).cast(pl.Float64) - 1.0
    seen = pl.col(RELEVANT_ABOVE).cast(pl.Float64) - 1.0  # relevant above this one
    nonrelevant = pl.col(NONRELEVANT_ABOVE).cast(pl.Float64)
    unjudged = pl.col(UNJUDGED_ABOVE).cast(pl.Float64)
    share = (seen + INFAP_EPSILON) / (seen + nonrelevant + 2 * INFAP_EPSILON)
    later = 1.0 / (j + 1.0) + (j / (j + 1.0)) * ((seen + nonrelevant + unjudged) / j) * share
    term = pl.when(j == 0).then(1.0).otherwise(later)
    return [Partial(ctx.name("infap"), term.filter(ctx.hits()).sum())]


def _infap_finals(ctx: Context) -> Mapping[str, pl.Expr]:
    n_relevant = pl.col(N_RELEVANT)
    return {"": formula.defined(pl.col(ctx.name("infap")) / n_relevant, n_relevant)}


INFAP = register(
    Measure(
        name="infap",
        aliases=("inf_ap",),
        inputs=frozenset({"judgements"}),
        judgement_partials=_infap_partials,
        finals=_infap_finals,
        doc="infAP@k (Yilmaz & Aslam): AP estimated from a judged sample, unjudged "
        "(negative grade) and unpooled items as trec_eval's infAP",
    )
)


def _resid_partials(ctx: Context) -> list[Partial]:
    p = _number(ctx, "p")
    judged = (pl.col(GRADE) >= 0) & ctx.within()
    weight = pl.lit(p).pow(pl.col(ctx.rank).cast(pl.Float64) - 1.0)
    return [
        Partial(ctx.name("judged_weight"), weight.filter(judged).sum()),
        Partial(ctx.name("judged_count"), judged.sum()),
    ]


def _shown(ctx: Context) -> list[Partial]:
    # the list's length within the cutoff (input "list")
    return [Partial(ctx.name("shown"), ctx.within().sum())]


def _resid_finals(ctx: Context) -> Mapping[str, pl.Expr]:
    p = _number(ctx, "p")
    length = pl.col(ctx.name("shown"))
    # trec_eval: p^n + (1 - p) * (weights of the unjudged) = 1 - (1 - p) * (weights of
    # the judged); 0 when every document is judged
    resid = 1.0 - (1.0 - p) * pl.col(ctx.name("judged_weight"))
    value = pl.when(length > pl.col(ctx.name("judged_count"))).then(resid).otherwise(0.0)
    return {"": formula.defined(value, pl.col(N_RELEVANT))}


RBP_RESIDUAL = register(
    Measure(
        name="rbp_resid",
        aliases=("rbp_residual",),
        params=(
            Param("p", float, 0.8, "persistence: the chance to look further", _check_persistence),
        ),
        inputs=frozenset({"judgements", "list"}),
        judgement_partials=_resid_partials,
        list_partials=_shown,
        finals=_resid_finals,
        repeats="list",
        doc="rbp_resid(p=0.8)@k = p^n + (1 - p) sum over unjudged i <= k of p^(i-1), "
        "0 when every item is judged (trec_eval's rbp_resid)",
    )
)


def _gm_bpref_finals(ctx: Context) -> Mapping[str, pl.Expr]:
    bpref = _bpref_finals(ctx)[""]
    return {"log": pl.max_horizontal(bpref, MIN_GEO_MEAN).log()}


GM_BPREF = register(
    Measure(
        name="gm_bpref",
        inputs=frozenset({"judgements"}),
        judgement_partials=_bpref_partials,
        finals=_gm_bpref_finals,
        aggregation="geometric_mean",
        fill=math.log(MIN_GEO_MEAN),
        per_user_value=lambda parts: parts["log"].exp(),
        doc="gm_bpref@k = exp(mean over users of log(max(bpref@k, 0.00001))), trec_eval's gm_bpref",
    )
)
