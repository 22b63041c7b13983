"""The subtopic judgements of the diversity measures: the run's rows and the greedy ideal's.

A diversity truth (TREC's ``topic subtopic docno judgment``) has one row per
(user, subtopic, item). The diversity measures (``_measures/diversity.py``)
are sums over two tables of relevant (list, subtopic, item) rows, each row
with its position, :data:`SUBTOPIC_SEEN` (``C_s(r - 1)``, the documents above
it relevant to its subtopic) and :data:`SUBTOPIC_RELEVANT` (the subtopic's
relevant documents): the run's rows (:func:`run_subtopics`) and those of the
user's ideal ranking, built greedily as ndeval builds it
(:func:`ideal_subtopics`). Every other measure of the call reads the truth
collapsed to one row per (user, item) (:func:`collapsed_truth`); the per-user
statistics only its pairs of a positive grade (:func:`positive_pairs`), or, when
every measure of the call reads only the subtopic rows, each user's count of
relevant items alone (:func:`relevant_item_counts`).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
import polars as pl

from polars_rankmetrics._measures._registry import (
    N_RELEVANT,
    N_SUBTOPICS,
    SUBTOPIC_RELEVANT,
    SUBTOPIC_SEEN,
    Partial,
)
from polars_rankmetrics._names import PREFIX
from polars_rankmetrics._pipeline.inputs import RecsSpec, Request, TruthSpec
from polars_rankmetrics._sums import exact_sums

__all__ = [
    "collapsed_truth",
    "ideal_subtopics",
    "positive_pairs",
    "relevant_item_counts",
    "relevant_subtopics",
    "run_subtopics",
    "with_run_subtopic_sums",
    "with_subtopic_statistics",
]

_SUBTOPIC = f"{PREFIX}subtopic"  # the subtopic column, under a name no input can take
# one id per (user, subtopic): the index of one of its rows
_SLOT = f"{PREFIX}subtopic_slot"
# the greedy's row ids: its user and its document (user, item), numbered 0, 1, ... in order
_USER_ID, _DOC_ID = f"{PREFIX}ideal_user", f"{PREFIX}ideal_document"
_ROW_IDS = (_USER_ID, _DOC_ID, _SLOT)


def collapsed_truth(truth: pl.LazyFrame, spec: TruthSpec) -> pl.LazyFrame:
    """One row per (user, item) of a subtopic truth: its largest grade.

    A document relevant to any subtopic is relevant to the topic (ndeval's
    non-intent-aware MAP): the other measures of the call read this truth.
    """
    keys = [*spec.shared_by, spec.user, spec.item]
    grade = [] if spec.relevance is None else [pl.col(spec.relevance).max()]
    # the truth's other columns (a propensity of the pair) kept, from one of its rows
    skipped = {*keys, spec.relevance, spec.subtopic}
    others = [pl.col(name).first() for name in truth.collect_schema() if name not in skipped]
    return truth.group_by(keys).agg(*grade, *others)


def positive_pairs(truth: pl.LazyFrame, spec: TruthSpec) -> pl.LazyFrame:
    """:func:`collapsed_truth` of the rows with a positive grade: the pairs the statistics read.

    The per-user statistics read only the (user, item) pairs of a positive
    grade (:func:`polars_rankmetrics._pipeline.truth.labeled_truth`), and a
    pair's largest grade is that of its positive rows when it has one. A
    diversity truth judges every document for each subtopic, mostly 0:
    collapsing only the positive rows groups about a third of them.
    """
    if spec.relevance is not None:
        truth = truth.filter(pl.col(spec.relevance).cast(pl.Float64) > 0)
    return collapsed_truth(truth, spec)


def relevant_item_counts(truth: pl.LazyFrame, spec: TruthSpec) -> pl.LazyFrame:
    """Per user with a row of a positive grade, :data:`N_RELEVANT`: its distinct relevant items.

    The users and counts of the statistics over :func:`positive_pairs`
    (:func:`polars_rankmetrics._pipeline.truth.truth_statistics`): an item is
    relevant when its largest grade is positive and at least
    ``relevance_level``, that is when one of its rows is. One group-by per user
    instead of one per (user, item) and then per user; a call whose measures
    read only the subtopic rows reads the users alone, and the distinct count
    is then not computed (10M-row benchmark: 0.12 s against 0.55 s).
    """
    grade = pl.lit(1.0) if spec.relevance is None else pl.col(spec.relevance).cast(pl.Float64)
    relevant = pl.col(spec.item)
    if spec.relevance_level is not None:
        relevant = relevant.filter(grade >= spec.relevance_level)
    users = [*spec.shared_by, spec.user]
    return truth.filter(grade > 0).group_by(users).agg(relevant.n_unique().alias(N_RELEVANT))


def relevant_subtopics(truth: pl.LazyFrame, spec: TruthSpec) -> pl.LazyFrame:
    """The relevant (user, subtopic, item) rows, with the subtopic's relevant documents.

    And its slot: one integer per (user, subtopic), the index of one of its
    rows (below the row count). Relevant: grade > 0 and at least
    ``relevance_level`` (ndeval counts a judgment >= 1; graded judgments are
    binarised).
    """
    if spec.subtopic is None:  # unreachable: the plan sets it for these measures
        raise ValueError("the subtopic judgements need a subtopic column")
    users = [*spec.shared_by, spec.user]
    rows = truth.select(*users, pl.col(spec.subtopic).alias(_SUBTOPIC), spec.item)
    if spec.relevance is not None:
        grade = pl.col(spec.relevance).cast(pl.Float64)
        relevant = grade > 0
        if spec.relevance_level is not None:
            relevant = relevant & (grade >= spec.relevance_level)
        rows = truth.filter(relevant).select(
            *users, pl.col(spec.subtopic).alias(_SUBTOPIC), spec.item
        )
    subtopic = [*users, _SUBTOPIC]
    # the slot: integer keys for the windows and the greedy (strings hash slower)
    return rows.with_row_index(_SLOT).with_columns(
        pl.len().over(subtopic).alias(SUBTOPIC_RELEVANT), pl.col(_SLOT).min().over(subtopic)
    )


def run_subtopics(
    ranked: pl.LazyFrame, relevant: pl.LazyFrame, spec: RecsSpec, truth_spec: TruthSpec
) -> pl.LazyFrame:
    """The run's relevant (list, subtopic, item) rows with their position and ``C_s(r - 1)``."""
    on = [*truth_spec.shared_by, spec.user, spec.item]
    rows = ranked.select(*spec.list_keys, spec.item, spec.rank).join(relevant, on=on, how="inner")
    # a list's subtopic: its slot (the user's subtopic) within the recs-only groups
    lists = [name for name in spec.list_keys if name not in (*truth_spec.shared_by, spec.user)]
    keys = [*lists, _SLOT]
    # C_s(r - 1): the row's index from its (list, subtopic)'s first row, sorted by rank
    # (a sort on integers and a running maximum cost less than a window over many groups)
    index = pl.int_range(pl.len(), dtype=pl.Int64)
    changed = pl.any_horizontal(pl.col(key) != pl.col(key).shift() for key in keys)
    first = pl.when(changed.fill_null(value=True)).then(index).otherwise(0).cum_max()
    seen = (index - first).cast(pl.Float64)
    return rows.sort([*keys, spec.rank]).with_columns(seen.alias(SUBTOPIC_SEEN))


def ideal_subtopics(
    relevant: pl.LazyFrame,
    user_keys: Sequence[str],
    item: str,
    *,
    alpha: float,
    depth: int | None,
    rank: str,
) -> pl.LazyFrame:
    """The greedy ideal ranking's relevant rows, to ``depth`` (``None``: every document).

    As ndeval's ``idealResult``: at each position the document of largest
    gain ``sum_s (1 - alpha)^{C_s}`` over its subtopics, ties to the largest
    item id (ndeval compares docnos with ``strcmp``), then each of its
    subtopics' counts goes up by one. Each row: the user keys,
    :data:`SUBTOPIC_RELEVANT`, its position and :data:`SUBTOPIC_SEEN`.
    """
    schema = relevant.collect_schema()
    names = [*user_keys, SUBTOPIC_RELEVANT]
    out = pl.Schema([*((name, schema[name]) for name in names), (rank, pl.Int64())])
    out = pl.Schema([*out.items(), (SUBTOPIC_SEEN, pl.Float64())])
    users = pl.struct(user_keys) if len(user_keys) > 1 else pl.col(user_keys[0])
    # a document's rows by subtopic: its gain is summed in that order, the same in every
    # call (with three subtopics or more the float sum depends on it, and a tie on it).
    # Sorted and numbered in the plan: inside the Python step Polars runs on one thread
    ordered = relevant.sort(
        [*user_keys, item, _SUBTOPIC], descending=[*(False for _ in user_keys), True, False]
    ).select(
        *names,
        users.rle_id().alias(_USER_ID),
        pl.struct(users.alias("u"), pl.col(item)).rle_id().alias(_DOC_ID),
        _SLOT,
    )

    def greedy(frame: pl.DataFrame) -> pl.DataFrame:
        rows = _Rows(*(frame[name].to_numpy().astype(np.int64) for name in _ROW_IDS))
        position, seen = _greedy_positions(rows, alpha=alpha, depth=depth)
        placed = frame.select(*names).with_columns(
            pl.Series(rank, position, dtype=pl.Int64),
            pl.Series(SUBTOPIC_SEEN, seen, dtype=pl.Float64),
        )
        return placed if bool(np.all(position > 0)) else placed.filter(pl.col(rank) > 0)

    return ordered.map_batches(greedy, schema=out)


class _Rows(NamedTuple):
    """The relevant rows sorted by user, then item descending: each one's ids (:data:`_ROW_IDS`)."""

    user: npt.NDArray[np.int64]  # 0, 1, ... in row order
    doc: npt.NDArray[np.int64]  # the (user, item) pair, 0, 1, ... in row order
    slot: npt.NDArray[np.int64]  # the (user, subtopic) pair, any id below the row count


# the cells of one grid at most (and its users at least one): a grid's arrays stay in the
# processor's cache while its steps run (10M rows: 8,192 cells 1.3x faster than 262,144), and
# a step's NumPy calls still do more work than their own cost (1,024 cells: 1.5x slower)
_GRID_CELLS = 1 << 13


class _Grid(NamedTuple):
    """Users with the same number of documents, one document per cell of a users x width grid.

    A user's cells run in its rows' order (items descending: its first cell of
    largest gain is ndeval's choice). ``slots[l]``: the slot of each document's
    (l + 1)-th subtopic row (subtopics in ascending order), the empty slot where
    it has fewer; ``first_row``: the row of its first subtopic (its l-th is l
    rows further).
    """

    slots: npt.NDArray[np.int64]  # layers x users x width
    first_row: npt.NDArray[np.int64]  # users x width


def _grids(rows: _Rows, empty: int) -> Iterator[_Grid]:
    """The rows laid out in grids (:class:`_Grid`); ``empty``: the slot of a missing layer.

    One grid at a time: its arrays are still in the cache when its steps run.
    """
    doc_row = np.flatnonzero(np.r_[True, rows.doc[1:] != rows.doc[:-1]])
    layers = np.diff(np.r_[doc_row, len(rows.doc)])
    doc_user = rows.user[doc_row]
    user_doc = np.flatnonzero(np.r_[True, doc_user[1:] != doc_user[:-1]])
    width = np.diff(np.r_[user_doc, len(doc_row)])
    # users ordered by their number of documents: those of equal width are contiguous
    order = np.argsort(width, kind="stable")
    sizes = width[order]
    starts = np.cumsum(sizes) - sizes
    cell_doc = np.arange(len(doc_row)) + np.repeat(user_doc[order] - starts, sizes)
    widths, counts = np.unique(sizes, return_counts=True)
    begin = 0
    for size, users in zip(widths.tolist(), counts.tolist(), strict=True):
        grid = cell_doc[begin : begin + size * users].reshape(users, size)
        begin += size * users
        # a few users at a time: a grid has a layer per subtopic of its deepest document
        for docs in np.array_split(grid, min(users, -(-grid.size // _GRID_CELLS))):
            first_row, depth = doc_row[docs], layers[docs]
            slots = np.stack(
                [
                    np.where(
                        depth > layer,
                        rows.slot[np.minimum(first_row + layer, len(rows.slot) - 1)],
                        empty,
                    )
                    for layer in range(int(depth.max()))
                ]
            )
            yield _Grid(slots, first_row)


def _greedy_positions(
    rows: _Rows, *, alpha: float, depth: int | None
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Each row's ideal position (0: past ``depth``) and ``C_s`` above it, grid by grid."""
    empty = int(rows.slot.max(initial=-1)) + 1  # a slot of weight 0: a missing layer adds 0
    weight = np.ones(empty + 1)
    weight[empty] = 0.0
    state = _State(
        position=np.zeros(len(rows.doc), dtype=np.int64),
        row_seen=np.zeros(len(rows.doc), dtype=np.int64),
        weight=weight,
        seen=np.zeros(empty + 1, dtype=np.int64),
    )
    for grid in _grids(rows, empty) if len(rows.doc) else []:
        width = grid.first_row.shape[1]
        steps = width if depth is None else min(depth, width)
        _place_grid(grid, state, steps=steps, discount=1.0 - alpha, empty=empty)
    return state.position, state.row_seen


class _State(NamedTuple):
    """The greedy's arrays, updated in place: per row and per (user, subtopic) slot."""

    position: npt.NDArray[np.int64]
    row_seen: npt.NDArray[np.int64]
    weight: npt.NDArray[np.float64]  # (1 - alpha)^(documents placed on the slot)
    seen: npt.NDArray[np.int64]  # documents placed on the slot


def _place_grid(grid: _Grid, state: _State, *, steps: int, discount: float, empty: int) -> None:
    """The first ``steps`` positions of one grid's users, one greedy step for all at once."""
    slots, first_row = grid.slots, grid.first_row
    users, width = first_row.shape
    # the grid's cells as flat arrays: a user's chosen cell is user * width + its column
    flat_slots, flat_rows = slots.reshape(len(slots), -1), first_row.ravel()
    offsets = np.arange(users) * width
    # -inf on the cells placed already: no gain reaches them
    closed = np.zeros(first_row.shape)
    for step in range(1, steps + 1):
        # the gain summed over the document's subtopics in their order (+0.0 where none)
        gain = state.weight[slots[0]]
        for layer in slots[1:]:
            gain += state.weight[layer]
        gain += closed
        # each user's first cell of largest gain: the largest item of equal gains
        chosen = gain.argmax(axis=1) + offsets
        closed.ravel()[chosen] = -np.inf
        row = flat_rows[chosen]
        for layer, layer_slots in enumerate(flat_slots):
            slot = layer_slots[chosen]
            at = row + layer
            if layer:  # a document's first subtopic row is always there, a later one not
                real = slot != empty
                at, slot = at[real], slot[real]
            seen = state.seen[slot]
            state.position[at], state.row_seen[at] = step, seen
            state.seen[slot] = seen + 1
            state.weight[slot] *= discount


def with_subtopic_statistics(
    truth_stats: pl.LazyFrame,
    relevant: pl.LazyFrame,
    *,
    requests: Sequence[Request],
    user_keys: Sequence[str],
    item: str,
    rank: str,
) -> pl.LazyFrame:
    """The per-user statistics with |S_q| and the ideal ranking's sums the measures declare.

    One greedy ideal per redundancy penalty alpha the requests read, to the
    depth the largest of their cutoffs needs (every document for a measure
    without a cutoff).
    """
    counts = relevant.group_by(user_keys).agg(pl.col(_SLOT).n_unique().alias(N_SUBTOPICS))
    stats = truth_stats.join(counts, on=list(user_keys), how="left").with_columns(
        pl.col(N_SUBTOPICS).fill_null(0).cast(pl.Float64)
    )
    by_alpha: dict[float, list[tuple[Request, list[Partial]]]] = {}
    for request in requests:
        partials = request.measure.ideal_subtopic_partials(request.ctx)
        if partials and request.measure.ideal_alpha is not None:
            alpha = request.measure.ideal_alpha(request.ctx)
            by_alpha.setdefault(alpha, []).append((request, partials))
    for alpha, wanted in by_alpha.items():
        cutoffs = [request.ctx.k for request, _ in wanted]
        depth = None if None in cutoffs else max(k for k in cutoffs if k is not None)
        ideal = ideal_subtopics(relevant, user_keys, item, alpha=alpha, depth=depth, rank=rank)
        named = {p.name: p for _, found in wanted for p in found}
        # exact sums: the greedy's rows come in no fixed order
        sums = exact_sums(ideal, list(user_keys), {n: p.expr for n, p in named.items()})
        stats = stats.join(sums, on=list(user_keys), how="left").with_columns(
            pl.col(name).fill_null(partial.fill)
            for name, partial in named.items()
            if partial.fill is not None
        )
    return stats


def with_run_subtopic_sums(
    per_user: pl.LazyFrame,
    run: pl.LazyFrame,
    *,
    requests: Sequence[Request],
    list_keys: Sequence[str],
) -> pl.LazyFrame:
    """The per-user frame with the sums over the run's subtopic rows the measures declare."""
    partials = {
        partial.name: partial
        for request in requests
        for partial in request.measure.subtopic_partials(request.ctx)
    }
    if not partials:
        return per_user
    # exact sums: the joined rows come in no fixed order
    sums = exact_sums(run, list(list_keys), {n: p.expr for n, p in partials.items()})
    return per_user.join(sums, on=list(list_keys), how="left").with_columns(
        pl.col(name).fill_null(partial.fill)
        for name, partial in partials.items()
        if partial.fill is not None
    )
