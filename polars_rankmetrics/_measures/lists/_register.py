"""How a measure of the lists joins the registry: one :func:`register_list` call."""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from polars_rankmetrics._measures._registry import (
    Context,
    Direction,
    Input,
    Measure,
    Param,
    register,
)
from polars_rankmetrics._measures.lists._hooks import ListHook, OfGroup

__all__ = ["register_list"]


def register_list(
    name: str,
    hook: ListHook,
    *,
    doc: str,
    direction: Direction,
    reads: frozenset[Input] = frozenset(),
    params: tuple[Param, ...] = (),
) -> Measure:
    """Register a measure of the lists: ``reads`` the inputs besides the lists.

    ``direction``: which way is better (see
    :attr:`polars_rankmetrics._measures._registry.Measure.direction`).

    Its ``finals`` read the column ``ctx.name(name)`` the list plan
    (:mod:`polars_rankmetrics._pipeline.lists`) writes; it sees every row of
    the cut (``repeats="list"``) and a user without a value (no list within
    the cut) is not counted (``fill=None``). An :class:`OfGroup` is one
    value per group (aggregation ``"group"``), the others a mean over users.
    """

    def finals(ctx: Context) -> Mapping[str, pl.Expr]:
        return {"": pl.col(ctx.name(name))}

    return register(
        Measure(
            name=name,
            finals=finals,
            doc=doc,
            direction=direction,
            params=params,
            inputs=frozenset({"beyond_accuracy", *reads}),
            repeats="list",
            aggregation="group" if isinstance(hook, OfGroup) else "mean",
            fill=None,
            lists=hook,
        )
    )
