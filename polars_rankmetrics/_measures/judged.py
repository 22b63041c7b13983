"""Judged@k: the share of the top k recommendations that have a truth row (any grade).

``judged@k = |{i <= k : item i is judged}| / min(k, |list|)``, as ir_measures'
``Judged@k`` (OpenNIR): a list shorter than k is divided by its length. It
shows how far a run's scores rest on judgments, so it counts items judged
non-relevant (grade <= 0) too: it reads the hits table (positive grades, with
or without a relevance level) and the judged non-relevant table.

Users without a relevant item are not counted (null), like every user the
evaluation does not score; a user without recommendations has no value (null).

Notes
-----
Ties: ranks come given or from scores under ``ties`` (trec_eval's item id
descending by default); ``ties="average"`` is refused.

References
----------
MacAvaney et al., OpenNIR and ir_measures' ``Judged@k`` (Sakai 2007 on
condensed lists for what to do with unjudged items: ``unjudged="remove"``).
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from polars_rankmetrics._measures._curve import CurveState, CurveStep
from polars_rankmetrics._measures._registry import GRADE, Context, Measure, Partial, register


def _judged_positive(ctx: Context) -> list[Partial]:
    # every hits-table row is judged (a positive grade, relevant or below the level)
    return [Partial(ctx.name("judged_pos"), ctx.within().sum())]


def _judged_non_relevant(ctx: Context) -> list[Partial]:
    return [Partial(ctx.name("judged_nonrel"), ctx.within().sum())]


def _shown(ctx: Context) -> list[Partial]:
    return [Partial(ctx.name("shown"), ctx.within().sum())]


def _finals(ctx: Context) -> Mapping[str, pl.Expr]:
    judged = pl.col(ctx.name("judged_pos")) + pl.col(ctx.name("judged_nonrel"))
    shown = pl.col(ctx.name("shown"))
    return {"": pl.when(shown > 0).then(judged.cast(pl.Float64) / shown)}


def _curve(ctx: Context) -> CurveStep:
    # every row of the list is shown; those with a truth row (any grade) are judged
    states = (
        CurveState(ctx.name("judged"), "list", pl.col(GRADE).is_not_null().cast(pl.Float64)),
        CurveState(ctx.name("shown"), "list", pl.lit(1.0)),
    )
    judged, shown = pl.col(ctx.name("judged")), pl.col(ctx.name("shown"))
    return CurveStep(states, lambda _k: {"": pl.when(shown > 0).then(judged / shown)})


JUDGED = register(
    Measure(
        name="judged",
        direction="none",
        inputs=frozenset({"hits", "judged", "list"}),
        repeats="list",
        hit_partials=_judged_positive,
        judged_partials=_judged_non_relevant,
        list_partials=_shown,
        finals=_finals,
        curve=_curve,
        fill=None,
        doc="judged@k = judged items in the top k / min(k, list length) (ir_measures Judged@k)",
    )
)
