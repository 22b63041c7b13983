"""trec_eval's measures that make sense outside TREC, as ``evaluate`` metric strings.

- ``gm_map@k``: AP averaged with a geometric mean, ``exp(mean_u log(max(AP_u, 1e-5)))``
  (trec_eval's ``gm_map``; AP's denominator follows the ``denominator`` convention,
  ``"relevant"`` under ``conventions="trec"``);
- ``iprec(recall=x)``: interpolated precision at recall ``x`` (trec_eval's
  ``iprec_at_recall_x``);
- ``eleven_pt``: the mean interpolated precision at recall 0, 0.1, ..., 1
  (trec_eval's ``11pt_avg``);
- ``rbp(p=0.8)@k``: rank-biased precision with binary relevance,
  ``RBP = (1 - p) sum_{relevant i <= k} p^(i-1)`` (trec_eval's ``rbp`` on binary qrels).

and, from the judgements table (input ``"judgements"``: every judged
recommendation, negative grades meaning "pooled but unjudged"):

- ``bpref@k``: trec_eval's ``bpref``;
- ``infap@k``: trec_eval's ``infAP``;
- ``rbp_resid(p=0.8)@k``: trec_eval's ``rbp_resid``, the RBP weight left to
  unjudged and unseen documents.

Each is also declared here as the trec_eval measure family ``rankmetrics
trec`` computes (``gm_map``, ``iprec_at_recall``, ``11pt_avg``, ``rbp``,
``bpref``, ``gm_bpref``, ``infAP``, ``rbp_resid``: :class:`TrecFamily`), and
both read the one formula of each measure below (:func:`floored_log`,
:func:`interpolated_precision`, :func:`bpref_term`, :func:`infap_term`,
:func:`rbp_weight`, :func:`rbp_residual`). The rest of trec_eval's measures are
declared beside their ``evaluate`` twins (``average_precision``,
``precision``, ``recall``, ``hit_rate``, ``r_precision``,
``reciprocal_rank``) or in ``trec_counts``, ``trec_ranked`` and
``trec_ndcg``.

Notes
-----
Relevance is binary (grade > 0, and >= ``relevance_level``) except where
trec_eval reads judgements: bpref, infAP and rbp_resid tell judged
non-relevant items (grade 0) from unjudged ones (negative grades, or no truth
row). AP's denominator follows ``denominator`` (``"relevant"``, trec_eval's,
under ``conventions="trec"``); ``ties="average"`` is refused. The users are
those ``evaluate`` counts; the geometric means floor each value at 1e-5
before the log, as trec_eval does.

References
----------
trec_eval 10.0 (usnistgov/trec_eval): ``m_gm_map.c``, ``m_iprec_at_recall.c``,
``m_11pt_avg.c``, ``m_bpref.c``, ``m_infAP.c`` and its rbp measures; Buckley &
Voorhees, "Retrieval evaluation with incomplete information" (SIGIR 2004) for
bpref; Yilmaz & Aslam (CIKM 2006) for infAP; Moffat & Zobel, "Rank-biased
precision for measurement of retrieval effectiveness" (TOIS 2008) for RBP.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

import polars as pl

from polars_rankmetrics import _formulas as formula
from polars_rankmetrics._measures._curve import CurveState, CurveStep
from polars_rankmetrics._measures._registry import (
    GRADE,
    HIT_INDEX,
    N_NONRELEVANT,
    N_RELEVANT,
    NONRELEVANT_ABOVE,
    RELEVANT,
    RELEVANT_ABOVE,
    UNJUDGED_ABOVE,
    Context,
    Measure,
    Param,
    Partial,
    TrecFamily,
    register,
    register_trec,
)
from polars_rankmetrics._measures._trec_plan import (
    OFFICIAL,
    Plan,
    R,
    Request,
    code,
    cumulative,
    custom_gains,
    found,
    gain_expr,
    judged_flags,
    judged_rel,
    num_ret,
    persistence,
    rank,
    rel,
)
from polars_rankmetrics._measures.average_precision import (
    AVERAGE_PRECISION,
    trec_average_precision,
)
from polars_rankmetrics._powers import power

MIN_GEO_MEAN = 0.00001  # trec_eval's floor before the log
RECALL_LEVELS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)
INFAP_EPSILON = 0.00001

# ---------------------------------------------------------------- the formulas


def floored_log(value: pl.Expr) -> pl.Expr:
    """log(max(value, 0.00001)): trec_eval's per-query term of a geometric mean."""
    return pl.max_horizontal(value, MIN_GEO_MEAN).log()


def interpolated_precision(
    found: pl.Expr, position: pl.Expr, hit: pl.Expr, n_relevant: pl.Expr, recall: float
) -> pl.Expr:
    """Interpolated precision at ``recall``, over one list (null past the relevant found).

    The best precision ``found / position`` at or after the lround(recall *
    n_relevant)-th relevant hit (the first for 0); ``found`` is the running
    count of relevant hits and ``hit`` marks them.
    """
    wanted = pl.max_horizontal((recall * n_relevant).round(0, mode="half_away_from_zero"), 1.0)
    return (found / position).filter(hit & (found >= wanted)).max()


def bpref_term(nonrelevant_above: pl.Expr, n_relevant: pl.Expr, n_nonrelevant: pl.Expr) -> pl.Expr:
    """A relevant item's share of bpref: 1 - min(N_i, R) / min(N, R), 1 when N_i = 0."""
    relevant = n_relevant.cast(pl.Float64)
    above = nonrelevant_above.cast(pl.Float64)
    share = pl.min_horizontal(above, relevant) / pl.min_horizontal(
        n_nonrelevant.cast(pl.Float64), relevant
    )
    return pl.when(above > 0).then(1.0 - share).otherwise(1.0)


def infap_term(j: pl.Expr, seen: pl.Expr, nonrelevant: pl.Expr, unjudged: pl.Expr) -> pl.Expr:
    """A relevant item's share of infAP, at 0-based position ``j``.

    ``seen``, ``nonrelevant``, ``unjudged``: relevant, judged non-relevant and
    pooled-but-unjudged items above it (trec_eval's ``m_infAP.c``).
    """
    share = (seen + INFAP_EPSILON) / (seen + nonrelevant + 2 * INFAP_EPSILON)
    later = 1.0 / (j + 1.0) + (j / (j + 1.0)) * ((seen + nonrelevant + unjudged) / j) * share
    return pl.when(j == 0).then(1.0).otherwise(later)


def rbp_weight(p: float, position: pl.Expr) -> pl.Expr:
    """p^(position - 1): the chance a reader gets to ``position``."""
    return power(p, position.cast(pl.Float64) - 1.0)


def rbp_residual(
    p: float, judged_weight: pl.Expr, length: pl.Expr, judged_count: pl.Expr
) -> pl.Expr:
    """The RBP weight left to unjudged and unseen items; 0 when every item is judged.

    trec_eval's p^n + (1 - p) * (weights of the unjudged), written as 1 - (1 - p)
    * (weights of the judged) (the weights of a list of n sum to (1 - p^n) / (1 - p)).
    """
    resid = 1.0 - (1.0 - p) * judged_weight
    return pl.when(length > judged_count).then(resid).otherwise(0.0)


# ---------------------------------------------------------------- shared pieces


def _geometric_mean(of: Measure, *, name: str, label: str) -> Measure:
    """``of`` (written ``label`` in the doc) averaged with trec_eval's geometric mean."""
    doc = (
        f"{name}@k = exp(mean over users of log(max({label}@k, {MIN_GEO_MEAN:.5f}))), "
        f"trec_eval's {name}"
    )

    def finals(ctx: Context) -> Mapping[str, pl.Expr]:
        return {"log": floored_log(of.finals(ctx)[""])}

    def curve(ctx: Context) -> CurveStep:
        # the log of a step of k is a step of k; a divisor of k inside the log is not
        step = of.curve(ctx) if of.curve is not None else None
        if step is None or step.divisor is not None:
            raise ValueError(
                f"curves cannot draw {name!r} under these conventions: the log of {label}@k "
                f"changes at every k; call evaluate with one metric string per cutoff instead"
            )
        return CurveStep(
            step.states, lambda k: {"log": floored_log(step.value(k)[""])}, horizon=step.horizon
        )

    return Measure(
        name=name,
        direction=of.direction,
        cutoff=of.cutoff,
        inputs=of.inputs,
        repeats=of.repeats,
        hit_partials=of.hit_partials,
        judged_partials=of.judged_partials,
        list_partials=of.list_partials,
        judgement_partials=of.judgement_partials,
        finals=finals,
        aggregation="geometric_mean",
        fill=math.log(MIN_GEO_MEAN),
        per_user_value=lambda parts: parts["log"].exp(),
        doc=doc,
        curve=None if of.curve is None else curve,
    )


def _sum_over_hits(ctx: Context, part: str, term: pl.Expr) -> list[Partial]:
    """One partial: ``term`` summed over the user's relevant items within the cutoff."""
    return [Partial.sum_of(ctx.name(part), term, ctx.hits())]


def _per_relevant(ctx: Context, name: str) -> Mapping[str, pl.Expr]:
    n_relevant = pl.col(N_RELEVANT)
    return {"": formula.defined(pl.col(ctx.name(name)) / n_relevant, n_relevant)}


def _judged_mean(
    name: str, term: Callable[[Context], pl.Expr], *, doc: str, aliases: tuple[str, ...] = ()
) -> Measure:
    """A measure of the judgements table: ``term`` summed over the hits, divided by m_u."""

    def finals(ctx: Context) -> Mapping[str, pl.Expr]:
        return _per_relevant(ctx, name)

    def curve(ctx: Context) -> CurveStep:
        # each relevant row's term depends on the rows above it only: a running sum
        summed = pl.when(pl.col(RELEVANT)).then(term(ctx)).otherwise(0.0)
        state = CurveState(ctx.name(name), "judgements", summed)
        return CurveStep((state,), lambda _k: _per_relevant(ctx, name))

    return Measure(
        name=name,
        direction="higher",
        aliases=aliases,
        inputs=frozenset({"judgements"}),
        judgement_partials=lambda ctx: _sum_over_hits(ctx, name, term(ctx)),
        finals=finals,
        doc=doc,
        curve=curve,
    )


# ---------------------------------------------------------------- gm_map


GM_MAP = register(_geometric_mean(AVERAGE_PRECISION, name="gm_map", label="AP"))


def _number(ctx: Context, name: str) -> float:
    # every parameter here has a default, so the registry always fills it in
    return float(ctx.number(name) or 0.0)


def _interpolated(ctx: Context, recall: float) -> pl.Expr:
    # over the hits table: HIT_INDEX is the running count of relevant hits
    hit_index = pl.col(HIT_INDEX)
    return interpolated_precision(
        hit_index, pl.col(ctx.rank), ctx.hits(), pl.col(N_RELEVANT), recall
    )


def _check_recall(recall: float) -> float:
    if not 0 <= recall <= 1:
        raise ValueError(f"iprec's recall must be between 0 and 1, got {recall!r}")
    return recall


def _iprec_partials(ctx: Context) -> list[Partial]:
    recall = _number(ctx, "recall")
    return [Partial(ctx.name("iprec"), _interpolated(ctx, recall))]


def _iprec_finals(ctx: Context) -> Mapping[str, pl.Expr]:
    return {"": formula.defined(pl.col(ctx.name("iprec")), pl.col(N_RELEVANT))}


def _interpolated_state(ctx: Context, name: str, recall: float) -> CurveState:
    """Interpolated precision at ``recall`` down the list: a running maximum."""
    found, n_relevant = pl.col(HIT_INDEX), pl.col(N_RELEVANT)
    wanted = pl.max_horizontal((recall * n_relevant).round(0, mode="half_away_from_zero"), 1.0)
    counts = pl.col(RELEVANT) & (found >= wanted)
    return CurveState(name, "hits", pl.when(counts).then(found / pl.col(ctx.rank)), how="max")


def _iprec_curve(ctx: Context) -> CurveStep:
    state = _interpolated_state(ctx, ctx.name("iprec"), _number(ctx, "recall"))
    return CurveStep((state,), lambda _k: _iprec_finals(ctx))


IPREC = register(
    Measure(
        name="iprec",
        direction="higher",
        aliases=("iprec_at_recall",),
        params=(Param("recall", float, 0.0, "recall level in [0, 1]", check=_check_recall),),
        inputs=frozenset({"hits", "hit_index", "n_relevant_on_hits"}),
        hit_partials=_iprec_partials,
        finals=_iprec_finals,
        curve=_iprec_curve,
        doc="iprec(recall=x)@k = max precision at or after the lround(x m_u)-th relevant "
        "item (0 past the relevant items found), trec_eval's iprec_at_recall_x",
    )
)


def _eleven_partials(ctx: Context) -> list[Partial]:
    return [
        Partial(ctx.name(f"iprec{level}"), _interpolated(ctx, level)) for level in RECALL_LEVELS
    ]


def _eleven_finals(ctx: Context) -> Mapping[str, pl.Expr]:
    total = pl.sum_horizontal(pl.col(ctx.name(f"iprec{level}")) for level in RECALL_LEVELS)
    return {"": formula.defined(total / len(RECALL_LEVELS), pl.col(N_RELEVANT))}


def _eleven_curve(ctx: Context) -> CurveStep:
    states = tuple(
        _interpolated_state(ctx, ctx.name(f"iprec{level}"), level) for level in RECALL_LEVELS
    )
    return CurveStep(states, lambda _k: _eleven_finals(ctx))


ELEVEN_PT = register(
    Measure(
        name="eleven_pt",
        direction="higher",
        aliases=("eleven_point",),
        inputs=frozenset({"hits", "hit_index", "n_relevant_on_hits"}),
        hit_partials=_eleven_partials,
        finals=_eleven_finals,
        curve=_eleven_curve,
        doc="eleven_pt@k = mean of iprec at recall 0, 0.1, ..., 1, trec_eval's 11pt_avg",
    )
)


def _check_persistence(p: float) -> float:
    if not 0 < p < 1:
        raise ValueError(f"rbp's persistence p must be between 0 and 1 (exclusive), got {p!r}")
    return p


_PERSISTENCE = Param("p", float, 0.8, "persistence: the chance to look further", _check_persistence)


def _rbp_partials(ctx: Context) -> list[Partial]:
    return _sum_over_hits(ctx, "rbp", rbp_weight(_number(ctx, "p"), pl.col(ctx.rank)))


def _rbp_finals(ctx: Context) -> Mapping[str, pl.Expr]:
    p = _number(ctx, "p")
    return {"": formula.defined((1.0 - p) * pl.col(ctx.name("rbp")), pl.col(N_RELEVANT))}


def _rbp_curve(ctx: Context) -> CurveStep:
    weight = rbp_weight(_number(ctx, "p"), pl.col(ctx.rank))
    state = CurveState(ctx.name("rbp"), "hits", pl.when(pl.col(RELEVANT)).then(weight))
    return CurveStep((state,), lambda _k: _rbp_finals(ctx))


RBP = register(
    Measure(
        name="rbp",
        direction="higher",
        params=(_PERSISTENCE,),
        hit_partials=_rbp_partials,
        finals=_rbp_finals,
        curve=_rbp_curve,
        doc="rbp(p=0.8)@k = (1 - p) sum over relevant i <= k of p^(i-1) (Moffat & Zobel)",
    )
)


def _bpref_term(_ctx: Context) -> pl.Expr:  # the columns are fixed; infAP reads ctx.rank
    return bpref_term(pl.col(NONRELEVANT_ABOVE), pl.col(N_RELEVANT), pl.col(N_NONRELEVANT))


BPREF = register(
    _judged_mean(
        "bpref",
        _bpref_term,
        doc="bpref@k = (1/m_u) sum over relevant i <= k of 1 - min(N_i, m_u) / min(N, m_u) "
        "(1 when N_i = 0); N_i judged non-relevant above i, N judged non-relevant items",
    )
)


def _infap_term(ctx: Context) -> pl.Expr:
    return infap_term(
        pl.col(ctx.rank).cast(pl.Float64) - 1.0,
        pl.col(RELEVANT_ABOVE).cast(pl.Float64) - 1.0,  # relevant above this one
        pl.col(NONRELEVANT_ABOVE).cast(pl.Float64),
        pl.col(UNJUDGED_ABOVE).cast(pl.Float64),
    )


INFAP = register(
    _judged_mean(
        "infap",
        _infap_term,
        aliases=("inf_ap",),
        doc="infAP@k (Yilmaz & Aslam): AP estimated from a judged sample, unjudged "
        "(negative grade) and unpooled items as trec_eval's infAP",
    )
)


def _resid_partials(ctx: Context) -> list[Partial]:
    p = _number(ctx, "p")
    judged = (pl.col(GRADE) >= 0) & ctx.within()
    weight = rbp_weight(p, pl.col(ctx.rank))
    return [
        Partial.sum_of(ctx.name("judged_weight"), weight, judged),
        Partial(ctx.name("judged_count"), judged.sum()),
    ]


def _shown(ctx: Context) -> list[Partial]:
    # the list's length within the cutoff (input "list")
    return [Partial(ctx.name("shown"), ctx.within().sum())]


def _resid_finals(ctx: Context) -> Mapping[str, pl.Expr]:
    value = rbp_residual(
        _number(ctx, "p"),
        pl.col(ctx.name("judged_weight")),
        pl.col(ctx.name("shown")),
        pl.col(ctx.name("judged_count")),
    )
    return {"": formula.defined(value, pl.col(N_RELEVANT))}


def _resid_curve(ctx: Context) -> CurveStep:
    judged = pl.col(GRADE) >= 0
    weight = rbp_weight(_number(ctx, "p"), pl.col(ctx.rank))
    states = (
        CurveState(ctx.name("judged_weight"), "judgements", pl.when(judged).then(weight)),
        CurveState(ctx.name("judged_count"), "judgements", judged.cast(pl.Float64)),
        CurveState(ctx.name("shown"), "list", pl.lit(1.0)),
    )
    return CurveStep(states, lambda _k: _resid_finals(ctx))


RBP_RESIDUAL = register(
    Measure(
        name="rbp_resid",
        direction="lower",
        aliases=("rbp_residual",),
        params=(_PERSISTENCE,),
        inputs=frozenset({"judgements", "list"}),
        judgement_partials=_resid_partials,
        list_partials=_shown,
        finals=_resid_finals,
        curve=_resid_curve,
        repeats="list",
        doc="rbp_resid(p=0.8)@k = p^n + (1 - p) sum over unjudged i <= k of p^(i-1), "
        "0 when every item is judged (trec_eval's rbp_resid)",
    )
)


GM_BPREF = register(_geometric_mean(BPREF, name="gm_bpref", label="bpref"))


# ---------------------------------------------------------------- as trec_eval's measures


def _trec_gm_map(plan: Plan, request: Request) -> None:
    plan.value(request.names[0], floored_log(trec_average_precision(plan)))


def _trec_interpolated(plan: Plan, fraction: float) -> pl.Expr:
    plan.row("_found", cumulative(rel))
    return interpolated_precision(found, rank, rel, R, fraction).fill_null(0.0)


def _trec_iprec(plan: Plan, request: Request) -> None:
    """iprec_at_recall_x and 11pt_avg (mean over the recall levels)."""
    if request.family == "iprec_at_recall":
        for name, fraction in zip(request.names, request.cutoffs, strict=True):
            plan.value(name, _trec_interpolated(plan, fraction))
        return
    if not request.values:
        raise ValueError("11pt_avg needs at least one recall level")
    # trec_eval walks the levels in ascending order (they are given that way)
    levels = sorted(request.values)
    total = pl.sum_horizontal([_trec_interpolated(plan, x) for x in levels])
    plan.value(request.names[0], total / len(levels))


def _trec_per_relevant(term: pl.Expr, relevant: pl.Expr) -> pl.Expr:
    """``term`` summed over the query's relevant documents, divided by R (when R > 0)."""
    total = term.filter(relevant).sum()
    return pl.when(R > 0).then(total / R).otherwise(total)


def _trec_bpref(plan: Plan, request: Request) -> None:
    """Bpref, and gm_bpref (its floored log, for the geometric mean)."""
    relevant, nonrel_seen, _ = judged_flags(plan)
    value = _trec_per_relevant(bpref_term(nonrel_seen, R, pl.col("_NN").first()), relevant)
    plan.value(request.names[0], floored_log(value) if request.family == "gm_bpref" else value)


def _trec_infap(plan: Plan, request: Request) -> None:
    relevant, nonrel_seen, unjudged_seen = judged_flags(plan)
    rel_seen = plan.row("_jrel_seen", cumulative(judged_rel))
    term = infap_term(rank - 1.0, rel_seen - 1.0, nonrel_seen, unjudged_seen)
    plan.value(request.names[0], _trec_per_relevant(term, relevant))


def _trec_rbp(plan: Plan, request: Request) -> None:
    """Rank-biased precision and its residual.

    rbp: (1 - p) * sum of gain * p^(rank - 1), gains rescaled to [0, 1] per
    query; rbp_resid: the weight of the unjudged documents plus that of the
    rest of the list.
    """
    p = persistence(request.pairs)
    weight = rbp_weight(p, rank)
    name = request.names[0]
    if request.family == "rbp_resid":
        judged = code >= 0
        value = rbp_residual(p, weight.filter(judged).sum(), num_ret, judged.sum())
        plan.value(name, value)
        return
    custom = custom_gains(request.pairs)
    levels = pl.col("_L").first()
    # trec_eval's gain table: every grade below _L (gain = grade unless set) and the
    # grades given; rescaled when a gain lies outside [0, 1]
    if custom:
        free = (
            pl.int_ranges(0, levels)
            .list.eval(pl.element().filter(~pl.element().is_in(list(custom))))
            .list.max()
        )
        high = pl.max_horizontal(free.cast(pl.Float64).fill_null(0.0), max(custom.values()), 0.0)
        low = pl.lit(min(0.0, *custom.values()))
    else:
        high = pl.max_horizontal((levels - 1).cast(pl.Float64), 0.0)
        low = pl.lit(0.0)
    gain = gain_expr(request.pairs, code)
    scaled = pl.when((low < 0) | (high > 1)).then((gain - low) / (high - low)).otherwise(gain)
    scaled = pl.when(code < 0).then(0.0).otherwise(scaled)
    plan.value(name, (1.0 - p) * (scaled * weight).sum())


register_trec(
    TrecFamily(
        "gm_map", 6, _trec_gm_map, summary="geometric_mean", per_query=False,
        sets=OFFICIAL, metric="gm_map",
    )
)  # fmt: skip
register_trec(TrecFamily("bpref", 8, _trec_bpref, sets=OFFICIAL, metric="bpref"))
register_trec(
    TrecFamily(
        "iprec_at_recall", 10, _trec_iprec, "cut_double", RECALL_LEVELS, sets=OFFICIAL,
        metric="iprec(recall={k:g})",
    )
)  # fmt: skip
register_trec(TrecFamily("infAP", 14, _trec_infap, metric="infap"))
register_trec(
    TrecFamily(
        "gm_bpref", 15, _trec_bpref, summary="geometric_mean", per_query=False,
        metric="gm_bpref",
    )
)  # fmt: skip
register_trec(
    TrecFamily("11pt_avg", 18, _trec_iprec, "p_double", RECALL_LEVELS, metric="eleven_pt")
)
register_trec(TrecFamily("rbp", 36, _trec_rbp, "p_pair"))
# trec_eval's default persistence is 0.9
register_trec(
    TrecFamily("rbp_resid", 37, _trec_rbp, "p_pair", metric="rbp_resid(p=0.9)", missing=0.0)
)
