"""Fall-out@k: the share of the user's judged non-relevant items that were recommended in the top k.

``fallout@k = |{i <= k : item i is judged non-relevant}| / n_u``, n_u the
user's judged non-relevant items in the whole truth: the false-positive rate
of the top k (torchmetrics' ``RetrievalFallOut``, scikit-learn's FPR at a
cut; Wikipedia, "Evaluation measures (information retrieval)": fall-out).
Lower is better.

Notes
-----
* judged non-relevant is trec_eval's: a truth row with grade >= 0 that is not
  relevant (grade 0, or a positive grade below ``relevance_level``); a
  negative grade is pooled but unjudged, an item without a truth row is not
  judged: neither counts, in the top k or in n_u. Without a relevance column
  every truth row is relevant, so no user has a judged non-relevant item and
  fall-out is undefined everywhere (null).
* users averaged: those the conventions count that have at least one judged
  non-relevant item (n_u = 0: undefined, null, left out of the mean:
  torchmetrics' ``empty_target_action="skip"``; its default, ``"pos"``,
  would count them as 1) and at least one relevant item (like every measure
  of the truth: a user without one is left out under every
  ``users_without_truth`` policy); a user without recommendations scores 0
  (``users_without_recs="zero"``, the default).
* a short list is not padded: missing slots recommend nothing.

References
----------
Manning, Raghavan & Schütze, *Introduction to Information Retrieval* (2008),
section 8.3 (fallout, the false-positive rate); torchmetrics
``RetrievalFallOut``.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from polars_rankmetrics._measures._curve import CurveState, CurveStep
from polars_rankmetrics._measures._registry import (
    GRADE,
    N_NONRELEVANT,
    N_RELEVANT,
    RELEVANT,
    Context,
    Measure,
    Partial,
    register,
)


def _judged_nonrelevant() -> pl.Expr:
    """True on a judgements-table row judged non-relevant (grade >= 0, not relevant)."""
    return (pl.col(GRADE) >= 0) & ~pl.col(RELEVANT)


def _partials(ctx: Context) -> list[Partial]:
    within = _judged_nonrelevant() & ctx.within()
    return [Partial(ctx.name("false_positives"), within.sum())]


def _value(false_positives: pl.Expr) -> pl.Expr:
    n_nonrelevant = pl.col(N_NONRELEVANT)
    defined = (pl.col(N_RELEVANT) > 0) & (n_nonrelevant > 0)
    return pl.when(defined).then(false_positives.cast(pl.Float64) / n_nonrelevant)


def _finals(ctx: Context) -> Mapping[str, pl.Expr]:
    return {"": _value(pl.col(ctx.name("false_positives")))}


def _curve(ctx: Context) -> CurveStep:
    # each judged non-relevant row adds 1 / n_u (n_u is on every judgements row); a
    # user with n_u = 0 has no such row, and evaluate leaves them out at every k
    share = _judged_nonrelevant().cast(pl.Float64) / pl.col(N_NONRELEVANT).cast(pl.Float64)
    state = CurveState(ctx.name("fallout"), "judgements", share)
    value = pl.when(pl.col(N_RELEVANT) > 0).then(pl.col(ctx.name("fallout")))
    return CurveStep((state,), lambda _k: {"": value})


FALLOUT = register(
    Measure(
        name="fallout",
        direction="lower",
        aliases=("fall_out",),
        cutoff="optional",
        inputs=frozenset({"hits", "judgements", "n_nonrelevant"}),
        repeats="list",
        judgement_partials=_partials,
        finals=_finals,
        fill=None,
        curve=_curve,
        doc="fallout@k = judged non-relevant items in the top k / the user's judged "
        "non-relevant items (torchmetrics RetrievalFallOut); lower is better",
    )
)
