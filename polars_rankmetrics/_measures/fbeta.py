"""F-beta@k: the weighted harmonic mean of precision@k and recall@k.

``F_beta = (1 + beta^2) P R / (beta^2 P + R)``; with ``P = h / k`` and
``R = h / m_u`` this is ``(1 + beta^2) h / (beta^2 m_u + k)`` (0 when h = 0).
``beta > 1`` weighs recall more, ``beta < 1`` precision; ``fbeta(beta=1)@k``
is ``f1@k``. Written ``"fbeta(beta=0.5)@10"``; ``beta`` defaults to 1.

Notes
-----
Its precision divides by k (missing slots are misses): a cutoff is required.
Relevance is binary: a truth item is relevant when its grade is > 0 (and >=
``relevance_level`` when one is given); grades are not read otherwise. Ties:
ranks come given or from scores under ``ties`` (trec_eval's item id descending
by default); ``ties="average"`` gives the exact expectation over the orders of
tied items (McSherry & Najork 2008). Users: every user ``evaluate`` counts (a
relevant truth item; see the ``users_without_recs`` and ``users_without_truth``
conventions); a counted user without recommendations scores 0, and the metric
is their mean.

References
----------
van Rijsbergen, *Information Retrieval* (1979), chapter 7; Chinchor, "MUC-4
evaluation metrics" (1992) for F-beta.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import polars as pl

from polars_rankmetrics import _formulas as formula
from polars_rankmetrics._measures._curve import CurveStep
from polars_rankmetrics._measures._registry import N_RELEVANT, Context, Measure, Param, register
from polars_rankmetrics._measures.precision import hit_count, hit_count_curve


def _check_beta(beta: float) -> float:
    if not (math.isfinite(beta) and beta > 0):
        raise ValueError(f"fbeta's beta must be a finite number > 0, got {beta!r}")
    return beta


def _finals(ctx: Context) -> Mapping[str, pl.Expr]:
    beta = ctx.number("beta")
    if beta is None:  # declared with a default: never None
        raise ValueError("fbeta needs beta")
    n_relevant = pl.col(N_RELEVANT)
    value = formula.fbeta(pl.col(ctx.name("hits")), n_relevant, ctx.cutoff(), beta)
    return {"": formula.defined(value, n_relevant)}


def fbeta_curve(ctx: Context, beta: float) -> CurveStep:
    """``(1 + b^2) hits`` over the divisor ``b^2 m_u + k`` (formula.fbeta's, at every k)."""
    weight = beta * beta
    step = hit_count_curve(ctx, lambda hits: (1.0 + weight) * hits.cast(pl.Float64))
    return CurveStep(
        step.states,
        step.value,
        divisor=lambda k: weight * pl.col(N_RELEVANT).cast(pl.Float64) + k,
    )


def _curve(ctx: Context) -> CurveStep:
    return fbeta_curve(ctx, float(ctx.number("beta") or 1.0))


FBETA = register(
    Measure(
        name="fbeta",
        direction="higher",
        tie_average=True,
        cutoff="required",
        params=(
            Param("beta", float, 1.0, "weight of recall against precision", check=_check_beta),
        ),
        hit_partials=hit_count,
        finals=_finals,
        curve=_curve,
        doc="fbeta(beta=b)@k = (1 + b^2) hits@k / (b^2 m_u + k), the F-beta of P@k and R@k",
    )
)
