"""The measures of the lists themselves (coverage, novelty, ...) beside the per-user parts."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from polars_rankmetrics import _validation as v
from polars_rankmetrics._measures._registry import part_column
from polars_rankmetrics._measures.lists import ListRequest
from polars_rankmetrics._pipeline.inputs import ListInputs, RecsSpec, Request


def list_parts(
    parts: pl.LazyFrame | None,
    ranked: pl.LazyFrame,
    spec: RecsSpec,
    requests: Sequence[Request],
    described: ListInputs,
) -> tuple[pl.LazyFrame, list[tuple[pl.LazyFrame, list[v.DataCheck]]]]:
    """Add the measures of the lists themselves to the per-user parts.

    Their users are the users with a list in the cut, whatever the truth: the
    rows of ``parts`` (users judged on the truth) and those users are joined
    in full, each metric null on the rows of users it does not count, which
    every aggregation skips. A group measure's value is written on every row
    of its group.
    """
    from polars_rankmetrics import beyond  # noqa: PLC0415 - beyond imports this module's peers

    # each measure's plan column is ctx.name(<its name>), which its finals read
    measures = {
        request.ctx.name(request.measure.name): (
            ListRequest(request.ctx.name(request.measure.name), request.ctx.k, request.ctx.params),
            request.measure,
        )
        for request in requests
    }
    plan = beyond.plan_lists(
        ranked,
        list(measures.values()),
        by=spec.by,
        user=spec.user,
        item=spec.item,
        rank=spec.rank,
        interactions=described.interactions,
        items=described.items,
        category=described.category,
        group=described.group,
        group_weight=described.group_weight,
    )
    list_keys = spec.list_keys
    key_types = ranked.collect_schema()
    users = plan.users if plan.users is not None else ranked.select(list_keys).unique()
    # the list plan may widen id dtypes to match the interactions; give them back
    users = users.with_columns(pl.col(key).cast(key_types[key]) for key in list_keys)
    if parts is not None:
        users = parts.join(users, on=list_keys, how="full", coalesce=True)
    if plan.groups is not None:
        groups = plan.groups.with_columns(pl.col(key).cast(key_types[key]) for key in spec.by)
        users = (
            users.join(groups, on=list(spec.by), how="left")
            if spec.by
            else users.join(groups, how="cross")
        )
    finals = [
        expression.alias(part_column(request.spec.label, suffix))
        for request in requests
        for suffix, expression in request.measure.finals(request.ctx).items()
    ]
    return users.with_columns(finals), plan.checks
