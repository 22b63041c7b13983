"""Debiased accuracy: inverse-propensity (IPS) and self-normalised (SNIPS) measures.

A logged truth holds the relevant (user, item) pairs the old system let users
find: a relevant pair is observed with probability p_i, larger for popular
items, so plain accuracy rewards recommending what was already shown. Each
relevant hit is weighted by ``w_i = 1 / max(p_i, clip)``:

* ``ips_<measure>@k``: the plain measure with each relevant hit counted
  ``w_i`` times. ``ips_dcg@k = sum_{relevant i <= k} w_i gain(g_i) / log2(i + 1)``
  and ``ips_hits@k = sum_{relevant i <= k} w_i`` are unbiased: where each
  relevant pair of a full truth is observed with probability p_i (and
  ``p_i >= clip``), their expectation over the observations is the full
  truth's DCG@k and hits@k (Yang et al. 2018; Schnabel et al. 2016).
  The ratios keep the plain measure's denominator: ``ips_recall@k =
  ips_hits@k / m_u``, ``ips_precision@k = ips_hits@k / k``, ``ips_ndcg@k =
  ips_dcg@k / IDCG@k`` (the observed truth's ideal DCG, as ``ndcg``).
* ``snips_<measure>@k``: the same with the self-normalised weights
  ``w~_i = m_u w_i / W_u``, ``W_u = sum over the user's observed relevant
  items of w_i`` (Swaminathan & Joachims 2015): the weights of the user's
  relevant items average 1, so ``snips_recall@k = ips_hits@k / W_u``, and
  with every propensity equal a SNIPS measure is the plain one.

``ips_hit_rate@k`` is the weight of the best-ranked relevant hit (0 without
one); ``ips_map@k`` (average precision) is ``sum_{relevant i <= k} w_i (1 +
sum_{relevant j above i} w_j) / i``, over AP's denominator D (the
``denominator`` convention): the numerator is unbiased for the full truth's
sum of P@i when observations are independent (the hit's own indicator
squared is itself, hence its 1). Neither is unbiased as a whole (a hit rate
is a maximum, AP a ratio).

Propensities (``evaluate(..., propensity="p")``): a column of ``items=``
(one per item) or of the truth (one per relevant pair), every value in
(0, 1]; else estimated from ``interactions=`` as ``p_i =
(n_i / max_j n_j)^((gamma + 1) / 2)`` (Yang et al. 2018, eq. 15), n_i the
number of distinct users with item i (``gamma`` applies only to estimated
propensities). Parameters ``gamma`` (default 0: exponent 1/2) and ``clip``
(default 0.001: weights at most 1000), written ``ips_ndcg(gamma=1,clip=0.01)@10``.

Notes
-----
Relevance: binary measures weigh the relevant items (grade > 0, and >=
``relevance_level`` when given); DCG weighs every positive grade's gain.
Ties: ranks come given or from scores under ``ties``; ``ties="average"`` is
refused. Users: every user ``evaluate`` counts (a relevant truth item); a
counted user without recommendations scores 0, and the metric is their mean.
Peers: WarpRec's ``IPSRecall``, ``SNIPSRecall`` and ``IPSDCG`` are
``ips_recall``, ``snips_recall`` and ``ips_dcg(clip=0.1)`` (its propensities
are ours with gamma 0 and clip 0.1); its ``SNIPSDCG`` is ``snips_dcg / m_u``
(ours is the plain DCG when every propensity is equal). ``ips_ndcg`` divides
by the plain ideal DCG (a ratio estimator; WarpRec has no IPS nDCG).
Clipping: a propensity below ``clip`` (an item without interactions has
p = 0) is raised to it, which bounds the weights (and the variance) at the
cost of a downward bias on those items.

References
----------
Yang, Cui, Xuan, Wang, Belongie & Estrin, "Unbiased offline recommender
evaluation for missing-not-at-random implicit feedback" (RecSys 2018);
Swaminathan & Joachims, "The self-normalized estimator for counterfactual
learning" (NeurIPS 2015); Schnabel, Swaminathan, Singh, Chandak & Joachims,
"Recommendations as treatments: debiasing learning and evaluation" (ICML 2016);
WarpRec 1.4 ``warprec/evaluation/metrics/debiased/``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

import polars as pl

from polars_rankmetrics import _formulas as formula
from polars_rankmetrics._measures._curve import CURVE_LIST, CurveState, CurveStep
from polars_rankmetrics._measures._registry import (
    GRADE,
    HIT_INDEX,
    N_RELEVANT,
    POPULARITY_SHARE,
    PREFIX,
    PROPENSITY,
    RELEVANT,
    Context,
    Cutoff,
    Input,
    Measure,
    Param,
    Partial,
    register,
)

__all__ = ["DEBIASED", "DEFAULT_CLIP", "DEFAULT_GAMMA", "weight"]

DEFAULT_GAMMA = 0.0
DEFAULT_CLIP = 0.001


def _check_gamma(value: float) -> float:
    if not (math.isfinite(value) and value > -1):
        raise ValueError(
            f"the debiased measures' gamma must be a finite number > -1 (the exponent "
            f"(gamma + 1) / 2 must be positive), got {value!r}"
        )
    return value


def _check_clip(value: float) -> float:
    if not (math.isfinite(value) and 0 < value <= 1):
        raise ValueError(
            f"the debiased measures' clip must be in (0, 1] (weights are 1 / max(p, clip)), "
            f"got {value!r}"
        )
    return value


PARAMS = (
    Param(
        "gamma",
        float,
        DEFAULT_GAMMA,
        "estimated propensities: p_i = (n_i / max_j n_j)^((gamma + 1) / 2)",
        check=_check_gamma,
    ),
    Param("clip", float, DEFAULT_CLIP, "weights are 1 / max(p_i, clip)", check=_check_clip),
)


def _param(ctx: Context, name: str) -> float:
    value = ctx.number(name)
    if value is None:  # pragma: no cover - both parameters have a default
        raise ValueError(f"parameter {name!r} has no value")
    return float(value)


def weight(ctx: Context) -> pl.Expr:
    """``w_i = 1 / max(p_i, clip)``, p_i given or ``(n_i / max_j n_j)^((gamma + 1) / 2)``."""
    exponent = (_param(ctx, "gamma") + 1.0) / 2.0
    share = pl.col(POPULARITY_SHARE).fill_null(0.0)
    propensity = pl.coalesce(pl.col(PROPENSITY), share.pow(exponent))
    return 1.0 / pl.max_horizontal(propensity, pl.lit(_param(ctx, "clip")))


def _tag(ctx: Context) -> str:
    return f"gamma={_param(ctx, 'gamma')!r},clip={_param(ctx, 'clip')!r}"


def _norm(ctx: Context) -> str:
    """W_u, the user's sum of weights over the relevant truth (one per gamma and clip)."""
    return f"{PREFIX}ips_norm({_tag(ctx)})"


def _truth_partials(ctx: Context) -> list[Partial]:
    # the row's term: the plan sums it per user, exactly
    return [Partial(_norm(ctx), pl.when(pl.col(RELEVANT)).then(weight(ctx)))]


def _scale(ctx: Context, *, normalised: bool) -> pl.Expr:
    """1 (IPS) or ``m_u / W_u`` (SNIPS: the user's relevant weights then average 1)."""
    if not normalised:
        return pl.lit(1.0)
    norm = pl.col(_norm(ctx))
    return pl.when(norm > 0).then(pl.col(N_RELEVANT) / norm).otherwise(0.0)


# ---------------------------------------------------------------- the partials


def _ips_hits(ctx: Context) -> list[Partial]:
    return [Partial.sum_of(ctx.name("ips_hits"), weight(ctx), ctx.hits())]


def _ips_first(ctx: Context) -> list[Partial]:
    position = pl.col(ctx.rank)
    first = weight(ctx).sort_by(position).filter(ctx.hits().sort_by(position)).first()
    return [Partial(ctx.name("ips_first"), first)]


def _ips_dcg(ctx: Context) -> list[Partial]:
    gain = formula.gain(pl.col(GRADE), ctx.conventions.gain)
    terms = weight(ctx) * gain / formula.discount(pl.col(ctx.rank))
    return [Partial.sum_of(ctx.name("ips_dcg"), terms, ctx.within())]


def _ips_ap(ctx: Context) -> list[Partial]:
    """AP's two sums: ``sum w_i / i`` and ``sum w_i (sum_{j above i} w_j) / i`` over hits."""
    position = pl.col(ctx.rank)
    hit_weight = (weight(ctx) * ctx.hits().cast(pl.Float64)).sort_by(position)
    at = position.cast(pl.Float64).sort_by(position)
    above = hit_weight.cum_sum() - hit_weight
    return [
        Partial(ctx.name("hits"), ctx.hits().sum()),
        Partial(ctx.name("ips_ap_self"), (hit_weight / at).sum()),
        Partial(ctx.name("ips_ap_pairs"), (hit_weight * above / at).sum()),
    ]


# ---------------------------------------------------------------- the finals

Finals = Callable[[Context], Mapping[str, pl.Expr]]


def _defined(value: pl.Expr) -> Mapping[str, pl.Expr]:
    return {"": formula.defined(value, pl.col(N_RELEVANT))}


def _recall(*, normalised: bool) -> Finals:
    def finals(ctx: Context) -> Mapping[str, pl.Expr]:
        hits = pl.col(ctx.name("ips_hits")) * _scale(ctx, normalised=normalised)
        return _defined(formula.recall(hits, pl.col(N_RELEVANT)))

    return finals


def _precision(*, normalised: bool) -> Finals:
    def finals(ctx: Context) -> Mapping[str, pl.Expr]:
        hits = pl.col(ctx.name("ips_hits")) * _scale(ctx, normalised=normalised)
        return _defined(formula.divided_by_constant(hits, ctx.cutoff()))

    return finals


def _hit_rate(*, normalised: bool) -> Finals:
    def finals(ctx: Context) -> Mapping[str, pl.Expr]:
        first = pl.col(ctx.name("ips_first")) * _scale(ctx, normalised=normalised)
        return _defined(first)

    return finals


def _dcg(*, normalised: bool) -> Finals:
    def finals(ctx: Context) -> Mapping[str, pl.Expr]:
        return {"": pl.col(ctx.name("ips_dcg")) * _scale(ctx, normalised=normalised)}

    return finals


def _ndcg(*, normalised: bool) -> Finals:
    def finals(ctx: Context) -> Mapping[str, pl.Expr]:
        dcg = pl.col(ctx.name("ips_dcg")) * _scale(ctx, normalised=normalised)
        return {"": formula.ndcg(dcg, pl.col(ctx.ideal_dcg))}

    return finals


def _ap(*, normalised: bool) -> Finals:
    def finals(ctx: Context) -> Mapping[str, pl.Expr]:
        scale = _scale(ctx, normalised=normalised)
        precision_sum = scale * pl.col(ctx.name("ips_ap_self")) + scale * scale * pl.col(
            ctx.name("ips_ap_pairs")
        )
        value = formula.average_precision(
            precision_sum,
            pl.col(ctx.name("hits")),
            pl.col(N_RELEVANT),
            ctx.k,
            ctx.conventions.denominator,
        )
        return _defined(value)

    return finals


# ---------------------------------------------------------------- the curve steps
# (prm.curves: the same sums as the partials above, as running states down the list)

CurveOf = Callable[[Context], CurveStep]


def _relevant_weight(ctx: Context) -> pl.Expr:
    return pl.when(pl.col(RELEVANT)).then(weight(ctx)).otherwise(0.0)


def _states(ctx: Context, *states: CurveState, normalised: bool) -> tuple[CurveState, ...]:
    """The measure's states, and W_u's over the user's relevant truth for SNIPS."""
    if not normalised:
        return states
    return (*states, CurveState(_norm(ctx), "truth", _relevant_weight(ctx)))


def _hits_curve(
    value: Callable[[pl.Expr], pl.Expr], *, divided: bool = False
) -> Callable[..., CurveOf]:
    def curve_of(*, normalised: bool) -> CurveOf:
        def curve(ctx: Context) -> CurveStep:
            state = CurveState(ctx.name("ips_hits"), "hits", _relevant_weight(ctx))
            hits = pl.col(ctx.name("ips_hits")) * _scale(ctx, normalised=normalised)
            return CurveStep(
                _states(ctx, state, normalised=normalised),
                lambda _k: _defined(value(hits)),
                divisor=(lambda k: k) if divided else None,
            )

        return curve

    return curve_of


def _hit_rate_curve(*, normalised: bool) -> CurveOf:
    def curve(ctx: Context) -> CurveStep:
        first = pl.when(pl.col(RELEVANT) & (pl.col(HIT_INDEX) == 1)).then(weight(ctx))
        state = CurveState(ctx.name("ips_first"), "hits", first.otherwise(0.0))
        value = pl.col(ctx.name("ips_first")) * _scale(ctx, normalised=normalised)
        return CurveStep(_states(ctx, state, normalised=normalised), lambda _k: _defined(value))

    return curve


def _dcg_state(
    ctx: Context, name: str, table: Literal["hits", "ideal"], *, weighted: bool
) -> CurveState:
    gain = formula.gain(pl.col(GRADE), ctx.conventions.gain)
    term = gain / formula.discount(pl.col(ctx.rank))
    return CurveState(ctx.name(name), table, weight(ctx) * term if weighted else term)


def _dcg_curve(*, normalised: bool) -> CurveOf:
    def curve(ctx: Context) -> CurveStep:
        state = _dcg_state(ctx, "ips_dcg", "hits", weighted=True)
        value = pl.col(ctx.name("ips_dcg")) * _scale(ctx, normalised=normalised)
        return CurveStep(_states(ctx, state, normalised=normalised), lambda _k: {"": value})

    return curve


def _ndcg_curve(*, normalised: bool) -> CurveOf:
    def curve(ctx: Context) -> CurveStep:
        # the ideal DCG at k: the plain running sum down the user's ideal list, as ndcg's
        dcg = _dcg_state(ctx, "ips_dcg", "hits", weighted=True)
        ideal = _dcg_state(ctx, "idcg", "ideal", weighted=False)
        value = pl.col(ctx.name("ips_dcg")) * _scale(ctx, normalised=normalised)
        ratio = formula.ndcg(value, pl.col(ctx.name("idcg")))
        return CurveStep(_states(ctx, dcg, ideal, normalised=normalised), lambda _k: {"": ratio})

    return curve


def _ap_curve(*, normalised: bool) -> CurveOf:
    def curve(ctx: Context) -> CurveStep:
        w = _relevant_weight(ctx)
        above = w.cum_sum().over(CURVE_LIST) - w  # the relevant hits' weights above this row
        position = pl.col(ctx.rank).cast(pl.Float64)
        states = _states(
            ctx,
            CurveState(ctx.name("hits"), "hits", pl.col(RELEVANT).cast(pl.Float64)),
            CurveState(ctx.name("ips_ap_self"), "hits", w / position),
            CurveState(ctx.name("ips_ap_pairs"), "hits", w * above / position),
            normalised=normalised,
        )
        scale = _scale(ctx, normalised=normalised)
        precision_sum = scale * pl.col(ctx.name("ips_ap_self")) + scale * scale * pl.col(
            ctx.name("ips_ap_pairs")
        )
        hits, n_relevant = pl.col(ctx.name("hits")), pl.col(N_RELEVANT)
        denominator = ctx.conventions.denominator
        if denominator == "k":
            return CurveStep(states, lambda _k: _defined(precision_sum), divisor=lambda k: k)

        def value(k: pl.Expr) -> Mapping[str, pl.Expr]:
            return _defined(
                formula.average_precision(precision_sum, hits, n_relevant, k, denominator)
            )

        return CurveStep(states, value, horizon=n_relevant if denominator == "min_k" else None)

    return curve


# ---------------------------------------------------------------- the registry


@dataclass(frozen=True)
class _Plain:
    """A plain measure and how its weighted versions are computed."""

    doc: str
    partials: Callable[[Context], list[Partial]]
    finals: Callable[..., Finals]
    curve: Callable[..., CurveOf]
    cutoff: Cutoff = "optional"
    reads: tuple[Input, ...] = ()


_PLAIN = {
    "recall": _Plain(
        "recall@k = hits@k / m_u", _ips_hits, _recall,
        _hits_curve(lambda hits: formula.recall(hits, pl.col(N_RELEVANT))),
    ),
    "precision": _Plain(
        "precision@k = hits@k / k", _ips_hits, _precision,
        _hits_curve(lambda hits: hits, divided=True), cutoff="required",
    ),
    "hit_rate": _Plain(
        "hit_rate@k: the best-ranked relevant hit's weight", _ips_first, _hit_rate,
        _hit_rate_curve,
    ),
    "dcg": _Plain(
        "DCG@k = sum w_i gain(g_i) / log2(i + 1)", _ips_dcg, _dcg, _dcg_curve,
        reads=("grades", "gain"),
    ),
    "ndcg": _Plain(
        "NDCG@k = weighted DCG@k / IDCG@k", _ips_dcg, _ndcg, _ndcg_curve,
        reads=("grades", "gain", "ideal"),
    ),
    "map": _Plain(
        "AP@k = sum w_i (1 + sum_{j above i} w_j) / i over relevant i <= k, / D", _ips_ap, _ap,
        _ap_curve,
    ),
}  # fmt: skip

_WEIGHTS = {
    "ips": "each relevant hit weighted by w_i = 1 / max(p_i, clip)",
    "snips": "weights self-normalised per user, w_i m_u / sum of the user's relevant w",
}


def _register() -> list[Measure]:
    """``ips_<measure>`` and ``snips_<measure>`` for each plain measure above."""
    measures = []
    for family, weights in _WEIGHTS.items():
        normalised = family == "snips"
        for name, plain in _PLAIN.items():
            measure = Measure(
                name=f"{family}_{name}",
                direction="higher",
                aliases=(f"{family}_ap",) if name == "map" else (),
                cutoff=plain.cutoff,
                params=PARAMS,
                inputs=frozenset({"hits", "propensity", *plain.reads}),
                hit_partials=plain.partials,
                truth_partials=_truth_partials if normalised else _no_partials,
                finals=plain.finals(normalised=normalised),
                curve=plain.curve(normalised=normalised),
                doc=f"{family}_{plain.doc}; {weights}",
            )
            measures.append(register(measure))
    return measures


def _no_partials(ctx: Context) -> list[Partial]:
    del ctx
    return []


DEBIASED = _register()
