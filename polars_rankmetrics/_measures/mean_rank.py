"""Mean rank: the position of the first relevant item, averaged over users who have one."""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from polars_rankmetrics._measures._registry import Context, Measure, register
from polars_rankmetrics._measures.reciprocal_rank import first_hit


def _finals(ctx: Context) -> Mapping[str, pl.Expr]:
    # null where nothing relevant was recommended: such users are not averaged
    return {"": pl.col(ctx.name("first")).cast(pl.Float64)}


MEAN_RANK = register(
    Measure(
        name="mean_rank",
        cutoff="none",
        hit_partials=first_hit,
        finals=_finals,
        fill=None,
        doc="position of the first relevant item; the mean runs over users who have one",
    )
)
