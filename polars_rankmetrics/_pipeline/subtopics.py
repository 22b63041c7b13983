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

import numpy as np
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
_IDEAL_RANK = f"{PREFIX}ideal_position"


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

    Relevant: grade > 0 and at least ``relevance_level`` (ndeval counts a
    judgment >= 1; graded judgments are binarised).
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
    return rows.with_columns(pl.len().over([*users, _SUBTOPIC]).alias(SUBTOPIC_RELEVANT))


def run_subtopics(
    ranked: pl.LazyFrame, relevant: pl.LazyFrame, spec: RecsSpec, truth_spec: TruthSpec
) -> pl.LazyFrame:
    """The run's relevant (list, subtopic, item) rows with their position and ``C_s(r - 1)``."""
    on = [*truth_spec.shared_by, spec.user, spec.item]
    rows = ranked.select(*spec.list_keys, spec.item, spec.rank).join(relevant, on=on, how="inner")
    seen = pl.int_range(pl.len()).over([*spec.list_keys, _SUBTOPIC], order_by=spec.rank)
    return rows.with_columns(seen.cast(pl.Float64).alias(SUBTOPIC_SEEN))


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
    subtopics' counts goes up by one.
    """
    schema = relevant.collect_schema()
    names = [*user_keys, _SUBTOPIC, item, SUBTOPIC_RELEVANT]
    out = pl.Schema([*((name, schema[name]) for name in names), (rank, pl.Int64())])
    out = pl.Schema([*out.items(), (SUBTOPIC_SEEN, pl.Float64())])

    def greedy(frame: pl.DataFrame) -> pl.DataFrame:
        return _greedy(frame, list(user_keys), item, alpha=alpha, depth=depth, rank=rank)

    return relevant.select(names).map_batches(greedy, schema=out)


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
    frame = frame.sort([*user_keys, item], descending=[*(False for _ in user_keys), True])
    users = pl.struct(user_keys) if len(user_keys) > 1 else pl.col(user_keys[0])
    ids = frame.select(
        users.rle_id().alias("user"),
        pl.struct(users.alias("u"), pl.col(item)).rle_id().alias("doc"),
        pl.col(_SUBTOPIC).rank("dense").cast(pl.Int64).alias("subtopic"),
    )
    row_doc = ids["doc"].to_numpy().astype(np.int64)
    row_user = ids["user"].to_numpy().astype(np.int64)
    # one slot per (user, subtopic): its weight (1 - alpha)^(documents placed on it)
    subtopic = ids["subtopic"].to_numpy().astype(np.int64)
    codes = row_user * (int(subtopic.max(initial=0)) + 1) + subtopic
    _, row_slot = np.unique(codes, return_inverse=True)
    n_docs = int(row_doc.max()) + 1 if len(row_doc) else 0
    doc_user = np.zeros(n_docs, dtype=np.int64)
    doc_user[row_doc] = row_user
    starts = np.flatnonzero(np.r_[True, doc_user[1:] != doc_user[:-1]]) if n_docs else row_doc
    weight = np.ones(int(row_slot.max()) + 1 if len(row_slot) else 0)
    seen = np.zeros_like(weight)
    position = np.zeros(n_docs, dtype=np.int64)
    row_seen = np.zeros(len(row_doc))
    steps = n_docs if depth is None else min(depth, n_docs)
    for step in range(1, steps + 1):
        gain = np.bincount(row_doc, weights=weight[row_slot], minlength=n_docs)
        gain[position > 0] = -1.0  # placed already
        best = np.maximum.reduceat(gain, starts)
        # the first document of its user's largest gain: items are sorted descending
        ties = np.flatnonzero((gain == best[doc_user]) & (gain >= 0))
        if len(ties) == 0:
            break
        _, first = np.unique(doc_user[ties], return_index=True)
        chosen = ties[first]
        position[chosen] = step
        placed = np.zeros(n_docs, dtype=bool)
        placed[chosen] = True
        rows = np.flatnonzero(placed[row_doc])
        row_seen[rows] = seen[row_slot[rows]]
        seen[row_slot[rows]] += 1.0
        weight[row_slot[rows]] *= 1.0 - alpha
    return frame.with_columns(
        pl.Series(rank, position[row_doc], dtype=pl.Int64),
        pl.Series(SUBTOPIC_SEEN, row_seen, dtype=pl.Float64),
    ).filter(pl.col(rank) > 0)


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
    counts = relevant.group_by(user_keys).agg(pl.col(_SUBTOPIC).n_unique().alias(N_SUBTOPICS))
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
