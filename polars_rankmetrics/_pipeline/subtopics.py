"""The subtopic judgements of the diversity measures: the run's rows and the greedy ideal's.

A diversity truth (TREC's ``topic subtopic docno judgment``) has one row per
(user, subtopic, item). The diversity measures (``_measures/diversity.py``)
are sums over two tables of relevant (list, subtopic, item) rows, each row
with its position, :data:`SUBTOPIC_SEEN` (``C_s(r - 1)``, the documents above
it relevant to its subtopic) and :data:`SUBTOPIC_RELEVANT` (the subtopic's
relevant documents): the run's rows (:func:`run_subtopics`) and those of the
user's ideal ranking, built greedily as ndeval builds it
(:func:`ideal_subtopics`). Every other measure of the call reads the truth
collapsed to one row per (user, item) (:func:`collapsed_truth`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
import polars as pl

from polars_rankmetrics._measures._registry import (
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
    "relevant_subtopics",
    "run_subtopics",
    "with_run_subtopic_sums",
    "with_subtopic_statistics",
]

_SUBTOPIC = f"{PREFIX}subtopic"  # the subtopic column, under a name no input can take
# one id per (user, subtopic): the index of one of its rows
_SLOT = f"{PREFIX}subtopic_slot"


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

    def greedy(frame: pl.DataFrame) -> pl.DataFrame:
        return _greedy(frame, list(user_keys), item, alpha=alpha, depth=depth, rank=rank)

    return relevant.select(*names, _SUBTOPIC, item, _SLOT).map_batches(greedy, schema=out)


def _greedy(
    frame: pl.DataFrame,
    user_keys: list[str],
    item: str,
    *,
    alpha: float,
    depth: int | None,
    rank: str,
) -> pl.DataFrame:
    """:func:`ideal_subtopics` on a frame: one greedy step per position, every user at once."""
    # a document's rows by subtopic: its gain is summed in that order, the same in every
    # call (with three subtopics or more the float sum depends on it, and a tie on it)
    frame = frame.sort(
        [*user_keys, item, _SUBTOPIC], descending=[*(False for _ in user_keys), True, False]
    )
    users = pl.struct(user_keys) if len(user_keys) > 1 else pl.col(user_keys[0])
    ids = frame.select(
        users.rle_id().alias("user"),
        pl.struct(users.alias("u"), pl.col(item)).rle_id().alias("doc"),
    )
    rows = _Rows(
        ids["user"].to_numpy().astype(np.int64),
        ids["doc"].to_numpy().astype(np.int64),
        frame[_SLOT].to_numpy().astype(np.int64),
    )
    position, seen = _greedy_positions(rows, alpha=alpha, depth=depth)
    placed = frame.select(*user_keys, SUBTOPIC_RELEVANT).with_columns(
        pl.Series(rank, position, dtype=pl.Int64),
        pl.Series(SUBTOPIC_SEEN, seen, dtype=pl.Float64),
    )
    return placed if bool(np.all(position > 0)) else placed.filter(pl.col(rank) > 0)


class _Rows(NamedTuple):
    """The relevant rows sorted by user, then item descending: each one's ids (numbered 0..)."""

    user: npt.NDArray[np.int64]  # 0, 1, ... in row order
    doc: npt.NDArray[np.int64]  # the (user, item) pair, 0, 1, ... in row order
    slot: npt.NDArray[np.int64]  # the (user, subtopic) pair, any id below the row count


class _Cells(NamedTuple):
    """One cell per document, the users with n documents side by side in an n-wide block.

    A user's cells run in its rows' order (items descending: its first cell of
    largest gain is ndeval's choice). A document's first subtopic row in
    ``slot``/``row`` (per cell); its later rows, layer by layer, in ``later``
    (the cells that have one, their slots, sorted by cell) and ``later_row``
    (per cell, -1 where none).
    """

    slot: npt.NDArray[np.int64]
    row: npt.NDArray[np.int64]
    later: list[tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]]
    later_row: list[npt.NDArray[np.int64]]
    blocks: list[tuple[int, int, int]]  # (first cell, users, width) of each block


def _cells(rows: _Rows) -> _Cells:
    """The rows laid out in :class:`_Cells`."""
    doc_row = np.flatnonzero(np.r_[True, rows.doc[1:] != rows.doc[:-1]])
    doc_user = rows.user[doc_row]
    user_doc = np.flatnonzero(np.r_[True, doc_user[1:] != doc_user[:-1]])
    width = np.diff(np.r_[user_doc, len(doc_row)])
    # users ordered by their number of documents: each block of equal width is contiguous
    order = np.argsort(width, kind="stable")
    first_cell = np.empty_like(width)
    first_cell[order] = np.cumsum(width[order]) - width[order]
    doc_cell = first_cell[doc_user] + np.arange(len(doc_row)) - user_doc[doc_user]
    row_cell = doc_cell[rows.doc]
    layer = np.arange(len(rows.doc)) - doc_row[rows.doc]
    first = np.flatnonzero(layer == 0)
    slot, row = np.empty(len(doc_row), np.int64), np.empty(len(doc_row), np.int64)
    slot[row_cell[first]], row[row_cell[first]] = rows.slot[first], first
    later, later_row = [], []
    for depth in range(1, int(layer.max(initial=0)) + 1):
        at = np.flatnonzero(layer == depth)
        at = at[np.argsort(row_cell[at], kind="stable")]
        later.append((row_cell[at], rows.slot[at]))
        cell_row = np.full(len(doc_row), -1, dtype=np.int64)
        cell_row[row_cell[at]] = at
        later_row.append(cell_row)
    widths, counts = np.unique(width, return_counts=True)
    starts = np.cumsum(widths * counts) - widths * counts
    blocks = [(int(a), int(b), int(c)) for a, b, c in zip(starts, counts, widths, strict=True)]
    return _Cells(slot, row, later, later_row, blocks)


def _greedy_positions(
    rows: _Rows, *, alpha: float, depth: int | None
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Each row's ideal position (0: past ``depth``) and ``C_s`` above it, block by block."""
    state = _State(
        position=np.zeros(len(rows.doc), dtype=np.int64),
        row_seen=np.zeros(len(rows.doc), dtype=np.int64),
        # one slot per (user, subtopic): its weight (1 - alpha)^(documents placed on it)
        weight=np.ones(int(rows.slot.max(initial=-1)) + 1),
        seen=np.zeros(int(rows.slot.max(initial=-1)) + 1, dtype=np.int64),
    )
    if len(rows.doc) == 0:
        return state.position, state.row_seen
    cells = _cells(rows)
    for start, users, width in cells.blocks:
        steps = width if depth is None else min(depth, width)
        _place_block(cells, rows.slot, state, (start, users, width), steps=steps, alpha=alpha)
    return state.position, state.row_seen


class _State(NamedTuple):
    """The greedy's arrays, updated in place: per row and per (user, subtopic) slot."""

    position: npt.NDArray[np.int64]
    row_seen: npt.NDArray[np.int64]
    weight: npt.NDArray[np.float64]
    seen: npt.NDArray[np.int64]


def _place_block(
    cells: _Cells,
    row_slot: npt.NDArray[np.int64],
    state: _State,
    block: tuple[int, int, int],
    *,
    steps: int,
    alpha: float,
) -> None:
    """The first ``steps`` positions of the users of one block (each with ``width`` documents)."""
    start, users, width = block
    end = start + users * width
    later = []
    for cell, slot in cells.later:
        low, high = np.searchsorted(cell, [start, end])
        later.append((cell[low:high] - start, slot[low:high]))
    open_cells = np.ones(users * width, dtype=bool)
    offsets = np.arange(users) * width + start
    for step in range(1, steps + 1):
        # the gain summed over the document's rows in their order (as a bincount would)
        gain = state.weight[cells.slot[start:end]]
        for cell, slot in later:
            gain[cell] += state.weight[slot]
        gain[~open_cells] = -1.0  # placed already
        # argmax: each user's first cell of largest gain, the largest item of equal gains
        chosen = gain.reshape(users, width).argmax(axis=1) + offsets
        open_cells[chosen - start] = False
        for found in [cells.row[chosen], *(rows_at[chosen] for rows_at in cells.later_row)]:
            at = found[found >= 0]
            placed = row_slot[at]
            state.position[at], state.row_seen[at] = step, state.seen[placed]
            state.seen[placed] += 1
            state.weight[placed] *= 1.0 - alpha


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
