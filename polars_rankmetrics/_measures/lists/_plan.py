"""The plans of the measures of the lists, from their hooks: per list and per group.

Every function here takes the ranked lists, already cut to the largest
cutoff asked for (columns ``by..., user, item, rank``), plus the
interactions and the catalog as LazyFrames with key dtypes already unified
and checked, and returns a LazyFrame: one row per list (:func:`per_user`)
or one row per ``by`` group (:func:`per_group`). Nothing is collected, and
no step holds all pairs of users.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import polars as pl

from polars_rankmetrics._measures.lists import _popularity as popularity
from polars_rankmetrics._measures.lists._exposure import per_group
from polars_rankmetrics._measures.lists._hooks import (
    LIST_CODE,
    Coded,
    Keys,
    ListHook,
    ListRequest,
    OfGroup,
    PerList,
    RowMean,
)
from polars_rankmetrics._measures.lists._shared import KU, coded_lists, cut, relabel, within
from polars_rankmetrics._names import PREFIX
from polars_rankmetrics._sums import exact_sums

__all__ = ["per_group", "per_user"]


def per_user(
    lists: pl.LazyFrame,
    requests: Sequence[tuple[ListRequest, ListHook]],
    keys: Keys,
    *,
    interactions: pl.LazyFrame | None = None,
    items: pl.LazyFrame | None = None,
    category: str | None = None,
    group: str | None = None,
    group_weight: str | None = None,
    popular: popularity.PopularityTables | None = None,
) -> pl.LazyFrame:
    """One row per list (``by..., user``) in ``lists``, a Float64 column per request.

    ``requests`` are per-user ones (:class:`RowMean`, :class:`PerList`). A
    user whose list is empty within a request's cutoff (ranks given, all
    above k) gets null there, and so does a user a measure does not count.
    The :class:`PerList` measures, at any cutoffs, share one coding of the
    lists and one table of the items' categories (or groups: ``group``,
    for the measures whose hook labels items by group). ``popular``: the
    popularity tables computed elsewhere (Spark: over every bucket's users).
    """
    list_keys = keys.list_keys
    means = [(r, hook) for r, hook in requests if isinstance(hook, RowMean)]
    others = [(r, hook) for r, hook in requests if isinstance(hook, PerList)]
    columns = {"category": category, "group": group}
    wanted = sorted({hook.labels for _, hook in others})
    for label in wanted:
        if items is None or columns[label] is None:
            asked = [r.label for r, hook in others if hook.labels == label]
            raise ValueError(f"{asked} need items with a {label} column")
    coded: Coded | None = None
    labeled: dict[str, Coded] = {}
    for label in wanted:
        column = columns[label]
        if items is None or column is None:  # pragma: no cover - refused above
            raise ValueError("no catalog")
        weight = group_weight if label == "group" else None
        # the lists are coded once; each label column gets its own table
        coded = (
            coded_lists(
                lists, keys, items=items, category=column, interactions=interactions, weight=weight
            )
            if coded is None
            else relabel(coded, items=items, category=column, weight=weight)
        )
        labeled[label] = coded
    rows = lists if coded is None else coded.rows
    result_keys = list_keys if coded is None else [LIST_CODE]
    if means:
        shares = popularity.wanted(means)
        if popular is None:
            if interactions is None:
                raise ValueError(f"{[r.label for r, _ in means]} need interactions")
            popular = popularity.tables(interactions, keys, shares)
        rows = popularity.with_popularity(rows, keys, popular, shares)
    # coded: the list's key columns ride along (one value per code)
    key_columns = [] if coded is None else [pl.col(key).first() for key in list_keys]
    # each row's term within the cut (null outside, and where the measure has none); the
    # rows arrive from a join in no fixed order, so the sums over a list's rows are exact
    # (fixed point): the same bits on every call
    terms = {
        r.label: pl.when(within(r.k, keys.rank)).then(
            hook.term(r, popularity.columns(hook.popularity(r)))
        )
        for r, hook in means
    }
    counts = [pl.col(label).count().alias(_count(label)) for label in terms]
    result = exact_sums(rows, result_keys, terms, also=[*key_columns, pl.len().alias(KU), *counts])
    # the mean over the list's rows within the cut is (1 / k_u) sum; no row gives null
    result = result.with_columns(
        pl.when(pl.col(_count(label)) > 0).then(pl.col(label) / pl.col(_count(label)))
        for label in terms
    ).drop(_count(label) for label in terms)
    for request, hook in others:
        mine = labeled[hook.labels]
        # each cutoff filters the cached coded rows: every cutoff shares them
        within_k = replace(
            mine,
            rows=cut(mine.rows, request.k, keys.rank),
            labeled=cut(mine.labeled, request.k, keys.rank),
        )
        result = result.join(hook.value(request, within_k), on=LIST_CODE, how="left")
    labels = [pl.col(r.label).cast(pl.Float64) for r, _ in requests]
    return result.select(*list_keys, *labels)


def _count(label: str) -> str:
    return f"{PREFIX}count|{label}"


def group_requests(
    requests: Sequence[tuple[ListRequest, ListHook]],
) -> list[tuple[ListRequest, OfGroup]]:
    """The requests of measures with one value per group."""
    return [(r, hook) for r, hook in requests if isinstance(hook, OfGroup)]


def user_requests(
    requests: Sequence[tuple[ListRequest, ListHook]],
) -> list[tuple[ListRequest, ListHook]]:
    """The requests of measures with a value per user."""
    return [(r, hook) for r, hook in requests if not isinstance(hook, OfGroup)]
