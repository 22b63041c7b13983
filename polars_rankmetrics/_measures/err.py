"""ERR@k, expected reciprocal rank (Chapelle, Metzler, Zhang & Grinspan 2009).

A graded cascade: the user reads down the list and stops at position i with
probability ``R(g_i) = (2^g_i - 1) / 2^g_max``, so

``ERR@k = sum_{i <= k} (1 / i) R(g_i) prod_{j < i} (1 - R(g_j))``.

``g_max`` is the parameter ``max_grade`` (``"err(max_grade=4)@20"``, as
gdeval's ``MAX_JUDGMENT``), by default the largest grade in the truth. Grades
above ``max_grade`` count as ``max_grade`` (R = 1 - 2^-g_max). Like NDCG, ERR
reads the raw grades: a relevance level does not change it. Items that are not
in the truth or have a grade <= 0 have R = 0 and never stop the cascade, so
only the hits table is read.

Notes
-----
Ties: ranks come given or from scores under ``ties`` (trec_eval's item id
descending by default); ``ties="average"`` is refused. Users: every user
``evaluate`` counts (a relevant truth item; see the ``users_without_recs`` and
``users_without_truth`` conventions); a counted user without recommendations
scores 0, and the metric is their mean.

References
----------
Chapelle, Metzler, Zhang & Grinspan, "Expected reciprocal rank for graded
relevance" (CIKM 2009); ir_measures ``ERR@k``; gdeval (TREC Web track).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

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


def _check_max_grade(value: float) -> float:
    if not (math.isfinite(value) and value > 0):
        raise ValueError(f"err's max_grade must be a finite number > 0, got {value!r}")
    return value


def stop_probability(grade: pl.Expr, max_grade: pl.Expr) -> pl.Expr:
    """``R(g) = (2^g - 1) / 2^g_max``, as ``2^(g - g_max) - 2^-g_max``.

    That form stays finite for any grade (2^g alone overflows above g = 1023).
    """
    exponent = pl.min_horizontal(grade.cast(pl.Float64), max_grade) - max_grade
    # the base as a column of 2.0s: a literal base, sorted and cumulated inside a
    # group_by, panics in Polars 2.1 ("cannot build list with different dtypes")
    two = exponent * 0.0 + 2.0
    return two.pow(exponent) - two.pow(-max_grade)


def _max_grade(ctx: Context) -> pl.Expr:
    given = ctx.number("max_grade")
    return pl.col(MAX_GRADE) if given is None else pl.lit(float(given))


def _partials(ctx: Context) -> list[Partial]:
    max_grade = _max_grade(ctx)
    position = pl.col(ctx.rank)
    # in rank order within the list: the chance to reach each hit is the product of
    # (1 - R) over the hits above it (non-relevant rows have R = 0)
    stop = stop_probability(pl.col(GRADE), max_grade).sort_by(position)
    discount = (1.0 / position.cast(pl.Float64)).sort_by(position)
    reach = (1.0 - stop).cum_prod().shift(1, fill_value=1.0)
    terms = stop * reach * discount
    within = ctx.within().sort_by(position)
    return [Partial(ctx.name("err"), terms.filter(within).sum())]


def _finals(ctx: Context) -> Mapping[str, pl.Expr]:
    return {"": pl.col(ctx.name("err"))}


def _curve(ctx: Context) -> CurveStep:
    # the cascade down the list: each hit's term, its chance to be reached a running product
    stop = stop_probability(pl.col(GRADE), _max_grade(ctx))
    reach = (1.0 - stop).cum_prod().shift(1, fill_value=1.0).over(CURVE_LIST)
    term = stop * reach * (1.0 / pl.col(ctx.rank).cast(pl.Float64))
    return CurveStep(
        (CurveState(ctx.name("err"), "hits", term),), lambda _k: {"": pl.col(ctx.name("err"))}
    )


ERR = register(
    Measure(
        name="err",
        direction="higher",
        params=(
            Param(
                "max_grade",
                float,
                None,
                "g_max of R(g) = (2^g - 1) / 2^g_max; default: the truth's largest grade",
                check=_check_max_grade,
                from_truth="max_grade",
            ),
        ),
        inputs=frozenset({"hits", "grades", "max_grade"}),
        hit_partials=_partials,
        finals=_finals,
        curve=_curve,
        doc="ERR@k = sum_{i<=k} (1/i) R(g_i) prod_{j<i} (1 - R(g_j)), "
        "R(g) = (2^g - 1) / 2^g_max (Chapelle 2009)",
    )
)
