"""Each item's propensity, for the debiased measures (input ``"propensity"``).

The propensity p_i is the chance that a relevant (user, item) pair is
observed in the logged truth. It comes from one of two places:

* given: ``propensity=`` names a column of ``items=`` (one row per item,
  every value in (0, 1]) or of the truth (one per relevant (user, item)
  pair); written as :data:`PROPENSITY`;
* estimated from ``interactions=`` (the training history): n_i, the number
  of distinct users with item i, over the largest such count,
  ``n_i / max_j n_j``, written as :data:`POPULARITY_SHARE`; the measure
  raises it to ``(gamma + 1) / 2`` (Yang et al., RecSys 2018, eq. 15), since
  ``gamma`` is its parameter. An item without interactions has share 0 (its
  weight is then the clip's, ``1 / clip``); interactions without any row are
  refused (every weight would be the clip's).

The table has one row per item (``item, PROPENSITY, POPULARITY_SHARE``), or
per relevant truth pair for a truth column; the plan joins it to the hits and
to the relevant truth rows (on :func:`join_keys`). A plan that sees
part of the interactions at a time (a Spark bucket) must not count them
itself: :func:`counted_popularity` hands it the counts over all of them.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar

import polars as pl

from polars_rankmetrics import _validation as v
from polars_rankmetrics._measures._registry import (
    CATALOG_SIZE,
    POPULARITY_RANK,
    POPULARITY_SHARE,
    PROPENSITY,
)
from polars_rankmetrics._names import PREFIX
from polars_rankmetrics._pipeline.inputs import ListInputs, to_lazy

__all__ = [
    "POPULARITY_COUNT",
    "counted_popularity",
    "item_propensities",
    "join_keys",
    "missing_check",
]

#: n_i, the distinct users with the item, in a table of counts over all the interactions
POPULARITY_COUNT = f"{PREFIX}popularity_count"
_MISSING = f"{PREFIX}no_propensity"
_ROWS = f"{PREFIX}interactions_rows"
_TRUTH_ROWS = f"{PREFIX}truth_rows"

# (item, POPULARITY_COUNT) over every interaction, when the plan sees only some of them
_COUNTED: ContextVar[pl.DataFrame | None] = ContextVar("_COUNTED", default=None)

Checks = list[tuple[pl.LazyFrame, list[v.DataCheck]]]


@contextmanager
def counted_popularity(counts: pl.DataFrame | None) -> Iterator[None]:
    """Within this block, estimated propensities read ``counts`` instead of the interactions.

    ``counts``: one row per item with :data:`POPULARITY_COUNT`, counted over
    the whole interactions (Spark counts them once; each bucket holds only its
    users' interactions, whose counts and largest count would differ).
    """
    token = _COUNTED.set(counts)
    try:
        yield
    finally:
        _COUNTED.reset(token)


def item_propensities(
    described: ListInputs,
    *,
    truth: pl.LazyFrame,
    truth_keys: Sequence[str],
    relevance: str | None,
    item: str,
    labels: Sequence[str],
    ranked: Sequence[str] = (),
) -> tuple[pl.LazyFrame, Checks]:
    """Each item's (or truth pair's) given propensity, or its share of the largest popularity.

    ``truth``: the truth lazy, its key dtypes unified with the recommendations'
    (the table is joined with both); ``truth_keys``: its shared ``by`` columns
    and user. ``labels``: the metrics that read the table, named in the errors;
    ``ranked``: those of them that read the popularity rank and the catalog's
    size (serendipity), which need ``interactions=`` and ``items=``.
    Returns the table, keyed by item (or by the truth's keys and item for a
    truth column, see :func:`join_keys`), and its data checks.
    """
    column = described.propensity
    _check_ranked(described, ranked)
    truth_schema = truth.collect_schema()
    item_dtype = truth_schema[item]
    if column is not None:
        if not isinstance(column, str):
            raise TypeError(f"propensity must be a column name of items= or truth, got {column!r}")
        items = None if described.items is None else to_lazy(described.items, name="items")
        in_items = items is not None and column in items.collect_schema()
        if column in truth_schema:
            if in_items:
                raise ValueError(
                    f"propensity column {column!r} is in both the truth and items=: rename one "
                    "(a truth column gives each (user, item) its own propensity, an items= "
                    "column each item)"
                )
            return _truth_propensities(truth, column, [*truth_keys, item], relevance)
        if items is None:
            raise ValueError(
                f"{list(labels)} read propensity={column!r}, a column of items= or of the "
                "truth, but the truth has no such column and no items were given: pass "
                "items= (one row per item with its propensity)"
            )
        return _catalog_propensities(
            items, column, item, item_dtype, in_memory=isinstance(described.items, pl.DataFrame)
        )
    counted = _COUNTED.get()
    if counted is not None:
        counts = counted.lazy()
        given = counts
    elif described.interactions is None:
        raise ValueError(
            f"{list(labels)} weigh each hit by 1 / p_i: pass propensity= (a column of items= "
            "or of the truth) or interactions= (the training history, from which p_i is "
            "estimated as (n_i / max_j n_j)^((gamma + 1) / 2))"
        )
    else:
        history = to_lazy(described.interactions, name="interactions")
        schema = history.collect_schema()
        v.require_columns(schema, {"user": truth_keys[-1], "item": item}, frame="interactions")
        v.key_dtype(
            item_dtype,
            schema[item],
            key=item,
            frames=("recs and truth", "interactions"),
            outcome="no item would have a popularity and every hit would weigh 1 / clip",
        )
        given = history
        counts = history.group_by(item).agg(
            pl.col(truth_keys[-1]).n_unique().cast(pl.Float64).alias(POPULARITY_COUNT)
        )
    share = pl.col(POPULARITY_COUNT) / pl.col(POPULARITY_COUNT).max()
    # 1 for the largest count, equal counts one rank, the next count the next (RecTools'
    # popularity ranks of Serendipity); over the counts of every interaction (Spark's too)
    rank = pl.col(POPULARITY_COUNT).rank("dense", descending=True).cast(pl.Float64)
    table = counts.select(
        pl.col(item).cast(item_dtype, strict=False),
        pl.lit(None, pl.Float64).alias(PROPENSITY),
        share.alias(POPULARITY_SHARE),
        rank.alias(POPULARITY_RANK),
    ).filter(pl.col(item).is_not_null())
    checks = [_history_check(given, truth, labels)]
    if described.items is None:
        size = pl.LazyFrame({CATALOG_SIZE: [None]}, schema={CATALOG_SIZE: pl.Float64})
        return table.join(size, how="cross"), checks
    catalog = (
        to_lazy(described.items, name="items")
        .select(pl.col(item).cast(item_dtype, strict=False))
        .unique()
    )
    size = catalog.select(pl.len().cast(pl.Float64).alias(CATALOG_SIZE))
    # every catalog item and every truth item (a hit is a truth row, in the catalog or not, as
    # RecTools reads only the catalog's length) gets a row carrying the catalog's size
    known = pl.concat([catalog, truth.select(item)]).unique().filter(pl.col(item).is_not_null())
    table = table.join(known, on=item, how="full", coalesce=True)
    return table.join(size, how="cross"), checks


def _check_ranked(described: ListInputs, ranked: Sequence[str]) -> None:
    """The measures of popularity ranks read them from interactions= over items=' catalog."""
    if not ranked:
        return
    if described.propensity is not None:
        raise ValueError(
            f"{list(ranked)} read each item's popularity rank from interactions=, but "
            f"propensity={described.propensity!r} gives the propensities instead: evaluate "
            "them in a call without propensity="
        )
    missing = [name for name in ("interactions", "items") if getattr(described, name) is None]
    if missing:
        raise ValueError(
            f"missing input: {list(ranked)} need interactions= (the training history, whose "
            "item counts give the popularity ranks) and items= (the catalog, whose size n "
            f"gives the chances (n + 1 - rank) / n); not given: {', '.join(missing)}="
        )


def _history_check(
    history: pl.LazyFrame, truth: pl.LazyFrame, labels: Sequence[str]
) -> tuple[pl.LazyFrame, list[v.DataCheck]]:
    """Estimated propensities need some interactions: none would weigh every hit 1 / clip.

    The rows are counted on the interactions as given (a scan's metadata, a
    frame's length), not on the counts per item, which would be a second pass.
    An empty truth weighs no hit: then nothing is refused (Spark's schema run
    on empty frames of the inputs' schemas passes, as on one machine).
    """
    rows = pl.concat(
        [history.select(pl.len().alias(_ROWS)), truth.select(pl.len().alias(_TRUTH_ROWS))],
        how="horizontal",
    )
    check = v.DataCheck(
        bad=(pl.col(_ROWS) == 0) & (pl.col(_TRUTH_ROWS) > 0),
        message=f"interactions has no rows, so {list(labels)} would "
        "estimate every propensity as 0 and weigh every hit 1 / clip: pass the training "
        "history (one row per (user, item)) or propensity=",
        show=(),
    )
    return rows, [check]


def _estimated_only() -> list[pl.Expr]:
    """The columns only estimated from the interactions: null beside a given propensity."""
    return [
        pl.lit(None, pl.Float64).alias(name)
        for name in (POPULARITY_SHARE, POPULARITY_RANK, CATALOG_SIZE)
    ]


def join_keys(table: pl.LazyFrame) -> list[str]:
    """The columns the propensity table is joined on: the item, or the truth's keys and item."""
    values = (PROPENSITY, POPULARITY_SHARE, POPULARITY_RANK, CATALOG_SIZE)
    return [name for name in table.collect_schema() if name not in values]


def _range_check(frame: str, column: str, show: Sequence[str]) -> v.DataCheck:
    value = pl.col(column).cast(pl.Float64)
    return v.DataCheck(
        bad=value.is_nan() | (value <= 0) | (value > 1),
        message=f"{frame} column {v.shorten(column)} (propensity) has {{n}} value(s) outside "
        "(0, 1]: a propensity is a probability of being observed, and 0 would weigh a hit "
        "infinitely",
        show=tuple(show),
        row_wise=True,
    )


def _catalog_propensities(
    items: pl.LazyFrame, column: str, item: str, item_dtype: pl.DataType, *, in_memory: bool
) -> tuple[pl.LazyFrame, Checks]:
    """One row per item of ``items=``, its propensity from ``column``."""
    schema = items.collect_schema()
    v.require_columns(schema, {"item": item, "propensity": column}, frame="items")
    v.require_numeric(schema, column, frame="items", role="propensity")
    if column == item:
        raise ValueError("propensity must be a column other than the item column")
    v.key_dtype(
        item_dtype,
        schema[item],
        key=item,
        frames=("recs and truth", "items"),
        outcome="no relevant item would find its propensity",
    )
    table = items.select(
        pl.col(item).cast(item_dtype, strict=False),
        pl.col(column).cast(pl.Float64).alias(PROPENSITY),
        *_estimated_only(),
    )
    show = (item, column)
    checks = [
        *v.null_checks("items", {"propensity": column}, in_memory=in_memory, show=show),
        _range_check("items", column, show),
        v.duplicate_check(
            "items", [item], show, hint=": one propensity per item", in_memory=in_memory
        ),
    ]
    return table, [(items, checks)]


def _truth_propensities(
    truth: pl.LazyFrame, column: str, keys: Sequence[str], relevance: str | None
) -> tuple[pl.LazyFrame, Checks]:
    """Each relevant truth pair's own propensity, from the truth's ``column``.

    Only the rows with a positive grade are read (and checked): the others
    are never weighted. A repeated truth pair is refused by the truth's checks.
    """
    schema = truth.collect_schema()
    v.require_numeric(schema, column, frame="truth", role="propensity")
    if column in (*keys, relevance):
        raise ValueError(f"propensity must be a column other than the truth's keys, got {column!r}")
    rows = truth if relevance is None else truth.filter(pl.col(relevance).cast(pl.Float64) > 0)
    table = rows.select(
        *keys,
        pl.col(column).cast(pl.Float64).alias(PROPENSITY),
        *_estimated_only(),
    )
    show = (*keys, column)
    checks = [
        *v.null_checks("truth", {"propensity": column}, show=show),
        _range_check("truth", column, show),
    ]
    return table, [(rows, checks)]


def missing_check(
    relevant: pl.LazyFrame, table: pl.LazyFrame, *, item: str, column: str
) -> tuple[pl.LazyFrame, list[v.DataCheck]]:
    """Relevant truth items that the ``items=`` frame gives no propensity for."""
    missing = (
        relevant.select(item)
        .unique()
        .join(table.select(item), on=item, how="anti")
        .with_columns(pl.lit(value=True).alias(_MISSING))
    )
    check = v.DataCheck(
        bad=pl.col(_MISSING),
        message=f"{{n}} relevant truth item(s) have no row in items=, so no propensity "
        f"(column {v.shorten(column)}); give every relevant item one",
        show=(item,),
    )
    return missing, [check]
