"""``ties="average"`` for the measures that read the first relevant item (hit rate, RR).

The first group of equal scores that holds a relevant item decides both: its
first position ``a``, its size ``n`` and its number of relevant items ``r``
(:func:`polars_rankmetrics._formulas.tied_first_hit` has the formulas).
"""

from __future__ import annotations

import polars as pl

from polars_rankmetrics import _formulas as formula
from polars_rankmetrics._measures._registry import RELEVANT, TIE_SIZE, Context, Partial


def first_tied_group(ctx: Context) -> list[Partial]:
    """``ties="average"``: the first tied group with a relevant item: start, size, relevant."""
    relevant = pl.col(RELEVANT)
    start = pl.col(ctx.rank).filter(relevant).min()
    in_group = relevant & (pl.col(ctx.rank) == start)
    return [
        Partial(ctx.name("tie_start"), start, fill=None),
        Partial(ctx.name("tie_size"), pl.col(TIE_SIZE).filter(in_group).first(), fill=None),
        Partial(ctx.name("tie_relevant"), in_group.sum(), fill=None),
    ]


def tied_first_hit(ctx: Context) -> tuple[pl.Expr, pl.Expr]:
    """The expected (hit rate, RR) at ``ctx.k`` from :func:`first_tied_group`'s partials."""
    return formula.tied_first_hit(
        pl.col(ctx.name("tie_start")),
        pl.col(ctx.name("tie_size")),
        pl.col(ctx.name("tie_relevant")),
        ctx.k,
    )
