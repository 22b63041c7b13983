"""INST and INSQ: the C/W/L user models' expected rate of gain, as ``cwl_eval`` computes them.

A C/W/L user (Moffat et al.) reads down the list: after position i they go on
with probability C(i). The chance to look at position i is proportional to
``prod_{j<i} C(j)``; normalised over the ranking's depth N, it is the weight

``W(i) = prod_{j<i} C(j) / sum_{m=1..N} prod_{j<m} C(j)``,

and the measure is the expected rate of gain per document read,
``sum_{i<=N} W(i) g_i`` (cwl_eval's ``EU`` column, "expected utility per item";
what ``ir_measures``' ``INST(T=...)`` and ``INSQ(T=...)`` report). Costs are 1
per document (cwl_eval's default, no cost file), so the rate is per document.

``inst(T=3)@k``, INST (Moffat, Bailey, Scholer & Thomas, ADCS 2015): the user
wants T units of gain, and the more is still missing the more patient they are,

``C(i) = ((i + T + T_i - 1) / (i + T + T_i))^2``, ``T_i = T - sum_{j<=i} g_j``.

``insq(T=3)@k``, INSQ (Moffat, Scholer & Thomas, ADCS 2012): the same with the
target fixed, ``C(i) = ((i + 2T - 1) / (i + 2T))^2``.

T is 3 by default (the largest target of cwl_eval's default measure set,
which reports T = 1, 2 and 3); cwl_eval's classes and ``ir_measures``
default to T = 1: ``inst(T=1)`` is theirs.

Gains: ``g = min(grade, g_max) / g_max`` for a truth row with a positive grade,
0 for any other document (non-relevant, unjudged, or a position past the end
of the list): cwl_eval reads gains in [0, 1] and scores an unjudged document
as gain 0 (its lower bound). ``g_max`` is the parameter ``max_grade``, by
default the truth's largest grade, so ``inst(T=1)`` is ``ir_measures``'
``INST(T=1, max_rel=g_max)`` (``min_rel=0``; its ``(rel - min_rel) / (max_rel -
min_rel)`` clipped to [0, 1]); ``inst(T=1, max_grade=1)`` makes every relevant
document gain 1 (``max_rel=1``). Like ERR and NDCG the measure reads the raw
grades: a relevance level does not change it.

Depth: cwl_eval pads (or cuts) every ranking to ``max_depth`` = 1000 documents
(parameter ``depth``, its ``--max_depth``), the padding at gain 0, and W is
normalised over all of them: so a short list is a long one whose tail is not
relevant, and the value depends only on where the relevant documents are.
The cutoff ``@k`` scores the ranking cut at k: documents past k gain nothing,
and W is still normalised over the whole depth (cwl_eval on a run file that
holds only the top k). Without a cutoff the whole ranking up to the depth is read.

Notes
-----
How it is computed (exactly, without padding anything): with
``D_i = i + 2T - G_i`` (G_i the gain at or above i; INSQ: G = 0), ``C(i) =
((D_{i-1} - g_i) / D_i)^2``, so the product telescopes between relevant
documents: ``prod_{j<i} C(j) = (2T / D_{i-1})^2 prod_{h<i relevant} (1 - g_h /
D_{h-1})^2``. The numerator is then a sum over the relevant documents, and the
normaliser a sum of ``1 / (m + c)^2`` over runs of non-relevant positions, a
difference of trigamma values ``psi'(a + c) - psi'(b + 1 + c)``: each relevant
document changes it by one term, and the empty ranking gives ``psi'(2T) -
psi'(N + 2T)``. So only the relevant hits are read (and drawn over k), whatever
the lists' lengths. Positions are the ranks (given, or from scores under
``ties``); a position the list skips counts as a non-relevant document.
cwl_eval itself reads the run file in its line order (ignoring its rank and
score columns) and ``ir_measures`` sorts by score, ties in file order: give
``rank=`` to reproduce either order exactly. ``ties="average"`` is refused.
Users: every user ``evaluate`` counts; a user without a relevant document in
the cut scores 0. T must be > 0.

References
----------
Moffat, Bailey, Scholer & Thomas, "INST: an adaptive metric for information
retrieval evaluation", ADCS 2015; Moffat, Scholer & Thomas, "Models and
metrics: IR evaluation as a user process", ADCS 2012; Azzopardi, Thomas &
Moffat, "cwl_eval: an evaluation tool for information retrieval", SIGIR 2019
(github.com/ireval/cwl, ``cwl_inst.py``, ``cwl_insq.py``, ``cwl_metrics.py``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TypeVar

import polars as pl

from polars_rankmetrics._measures._curve import CURVE_LIST, CurveState, CurveStep
from polars_rankmetrics._measures._registry import (
    GRADE,
    MAX_GRADE,
    Context,
    Measure,
    Param,
    Partial,
    register,
)

__all__ = ["INSQ", "INST", "trigamma"]

Number = TypeVar("Number", pl.Expr, float)

# the Bernoulli numbers B_2, B_4, ..., B_14 of trigamma's asymptotic series
_BERNOULLI = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6)
_SHIFT = 10  # psi'(x) = sum_{j < 10} 1 / (x + j)^2 + psi'(x + 10): the series at >= 10


def trigamma(x: Number) -> Number:
    """``psi'(x) = sum_{m >= 0} 1 / (x + m)^2`` for x > 0, to a few units in the last place.

    The recurrence moves x past 10, where the asymptotic series
    ``1/y + 1/(2 y^2) + sum_j B_2j / y^(2j+1)`` (seven terms) is exact to
    double precision. Works on a Polars expression or a float alike.
    """
    head = 1.0 / (x * x)
    for step in range(1, _SHIFT):
        head = head + 1.0 / ((x + float(step)) * (x + float(step)))
    inverse = 1.0 / (x + float(_SHIFT))
    squared = inverse * inverse
    series = inverse * 0.0 + _BERNOULLI[-1]
    for coefficient in reversed(_BERNOULLI[:-1]):
        series = series * squared + coefficient
    return head + inverse + squared / 2.0 + inverse * squared * series


def _run(start: Number, offset: Number, depth: float) -> Number:
    """``sum_{m = start .. depth - 1} 1 / (m + offset)^2``: a run of non-relevant positions."""
    return trigamma(start + offset) - trigamma(offset + depth)


def _check_target(value: float) -> float:
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"the target gain T must be a finite number > 0, got {value!r}")
    return value


def _check_max_grade(value: float) -> float:
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"max_grade must be a finite number > 0, got {value!r}")
    return value


def _check_depth(value: float) -> float:
    if value < 1:
        raise ValueError(f"depth (cwl_eval's max_depth) must be an integer >= 1, got {value!r}")
    return value


_PARAMS = (
    # T = 3: the largest target of cwl_eval's default set (INST-T=1, 2, 3); cwl_eval's class
    # and ir_measures default to T = 1: give T=1 for theirs
    Param("T", float, 3.0, "target gain: the gain the user wants (cwl_eval's T)", _check_target),
    Param(
        "max_grade",
        float,
        None,
        "grade of gain 1 (g = min(grade, g_max) / g_max); default: the truth's largest grade",
        check=_check_max_grade,
        from_truth="max_grade",
    ),
    Param(
        "depth", int, 1000, "documents the user model spans (cwl_eval's max_depth)", _check_depth
    ),
)


def _numbers(ctx: Context) -> tuple[float, float]:
    target, depth = ctx.number("T"), ctx.number("depth")
    if target is None or depth is None:  # pragma: no cover - both have defaults
        raise ValueError("T and depth have defaults")
    return float(target), float(depth)


def _gain(ctx: Context) -> pl.Expr:
    """``min(grade, g_max) / g_max`` on a hit row (its grade is > 0)."""
    given = ctx.number("max_grade")
    top = pl.col(MAX_GRADE) if given is None else pl.lit(float(given))
    return pl.min_horizontal(pl.col(GRADE).cast(pl.Float64), top) / top


def _shown(ctx: Context) -> pl.Expr:
    """A hit within the cutoff and the user model's depth."""
    _, depth = _numbers(ctx)
    return ctx.within() & (pl.col(ctx.rank) <= depth)


Running = Callable[[pl.Expr], pl.Expr]


def _terms(
    ctx: Context, gain: pl.Expr, position: pl.Expr, running: Running, *, adaptive: bool
) -> tuple[pl.Expr, pl.Expr | None]:
    """Each hit's numerator term and its change to the normaliser, in rank order.

    ``running`` makes a cumulative expression run down each list (identity
    inside a sorted aggregation, ``.over(list)`` on a curve table). INSQ's
    continuation does not read the gains: its normaliser is a constant.
    """
    target, depth = _numbers(ctx)
    two_t = 2.0 * target
    position = position.cast(pl.Float64)
    if not adaptive:
        return gain / ((position - 1.0 + two_t) * (position - 1.0 + two_t)), None
    before = running(gain.cum_sum()) - gain  # G_{h-1}: the gain above this hit
    reach = position - 1.0 + two_t - before  # D_{h-1}
    factor = (1.0 - gain / reach) * (1.0 - gain / reach)
    # prod over the hits above of (1 - g / D)^2: the other factors of prod C telescope
    kept = running(factor.cum_prod().shift(1, fill_value=1.0))
    numerator = gain * kept / (reach * reach)
    offset_before = two_t - before
    offset_after = offset_before - gain
    # the positions after this hit, to the depth: (1 - g/D)^2 kept and the offset lowered by g
    change = kept * (
        factor * _run(position, offset_after, depth) - _run(position, offset_before, depth)
    )
    return numerator, change


def _empty_normaliser(ctx: Context) -> float:
    """``sum_{m=0}^{N-1} 1 / (m + 2T)^2``: the normaliser (over (2T)^2) with no gain."""
    target, depth = _numbers(ctx)
    return _run(0.0, 2.0 * target, depth)


def _parts(ctx: Context, *, adaptive: bool) -> tuple[str, str]:
    """The columns of the numerator and the normaliser's change (INST's and INSQ's apart)."""
    measure = "inst" if adaptive else "insq"
    return ctx.name(f"{measure}_num"), ctx.name(f"{measure}_den")


def _partials(ctx: Context, *, adaptive: bool) -> list[Partial]:
    position = pl.col(ctx.rank)
    # in rank order within the list: the running gain and product read the hits above
    numerator, change = _terms(
        ctx,
        _gain(ctx).sort_by(position),
        position.sort(),
        lambda expr: expr,
        adaptive=adaptive,
    )
    shown = _shown(ctx).sort_by(position)
    num, den = _parts(ctx, adaptive=adaptive)
    partials = [Partial(num, numerator.filter(shown).sum())]
    if change is not None:
        partials.append(Partial(den, change.filter(shown).sum()))
    return partials


def _value(ctx: Context, *, adaptive: bool) -> Mapping[str, pl.Expr]:
    num, den = _parts(ctx, adaptive=adaptive)
    normaliser = pl.lit(_empty_normaliser(ctx))
    if adaptive:
        normaliser = normaliser + pl.col(den)
    return {"": pl.col(num) / normaliser}


def _curve(ctx: Context, *, adaptive: bool) -> CurveStep:
    numerator, change = _terms(
        ctx, _gain(ctx), pl.col(ctx.rank), lambda expr: expr.over(CURVE_LIST), adaptive=adaptive
    )
    shown = _shown(ctx)
    num, den = _parts(ctx, adaptive=adaptive)
    states = [CurveState(num, "hits", pl.when(shown).then(numerator))]
    if change is not None:
        states.append(CurveState(den, "hits", pl.when(shown).then(change)))
    return CurveStep(tuple(states), lambda _k: _value(ctx, adaptive=adaptive))


def _measure(name: str, *, adaptive: bool, doc: str) -> Measure:
    return register(
        Measure(
            name=name,
            direction="higher",
            params=_PARAMS,
            inputs=frozenset({"hits", "grades", "max_grade"}),
            hit_partials=lambda ctx: _partials(ctx, adaptive=adaptive),
            finals=lambda ctx: _value(ctx, adaptive=adaptive),
            curve=lambda ctx: _curve(ctx, adaptive=adaptive),
            doc=doc,
        )
    )


INST = _measure(
    "inst",
    adaptive=True,
    doc="inst(T=3)@k = sum_i W(i) g_i, C(i) = ((i + T + T_i - 1) / (i + T + T_i))^2, "
    "T_i = T - sum_{j<=i} g_j (Moffat et al. 2015; cwl_eval's expected rate of gain)",
)
INSQ = _measure(
    "insq",
    adaptive=False,
    doc="insq(T=3)@k = sum_i W(i) g_i, C(i) = ((i + 2T - 1) / (i + 2T))^2 "
    "(Moffat et al. 2012; cwl_eval's expected rate of gain)",
)
