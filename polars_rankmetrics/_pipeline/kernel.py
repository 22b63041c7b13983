"""Per-user partial sums: one ``group_by(by..., user).agg`` per table the measures read.

The truth statistics per user (:mod:`polars_rankmetrics._pipeline.truth`)
joined with what each requested measure declares it reads of the hits, the
judged rows, the lists or the judgements, and filled where a user has none.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import polars as pl

from polars_rankmetrics._measures._registry import (
    GRADE,
    LIST_LENGTH,
    MAX_GRADE,
    N_NONRELEVANT,
    N_RELEVANT,
    RELEVANT,
    TIE_RELEVANT,
    TIE_RELEVANT_ABOVE,
    TIE_SIZE,
    TIE_START,
)
from polars_rankmetrics._pipeline.hits import (
    binary_hit_columns,
    hits_table,
    judged_table,
    judgements_table,
    list_order,
)
from polars_rankmetrics._pipeline.inputs import RecsSpec, Request, TruthSpec
from polars_rankmetrics._pipeline.population import expand_over_groups
from polars_rankmetrics._pipeline.propensity import join_keys
from polars_rankmetrics._pipeline.subtopics import (
    positive_pairs,
    relevant_item_counts,
    relevant_subtopics,
    run_subtopics,
    with_run_subtopic_sums,
    with_subtopic_statistics,
)
from polars_rankmetrics._pipeline.truth import nonrelevant_counts, truth_statistics
from polars_rankmetrics._sums import exact_sums
from polars_rankmetrics.conventions import Conventions


def partial_tables(
    hits: pl.LazyFrame,
    ranked: pl.LazyFrame,
    truth: pl.LazyFrame,
    truth_stats: pl.LazyFrame,
    *,
    spec: RecsSpec,
    truth_spec: TruthSpec,
    inputs: Collection[str],
) -> list[tuple[pl.LazyFrame, str]]:
    """Each table the requested measures read, with the ``Measure`` field of its partials.

    The hits table always; the others only when a requested measure declares them.
    """
    tables = [(hits, "hit_partials")]
    if "judged" in inputs:
        tables.append((judged_table(ranked, truth, spec, truth_spec), "judged_partials"))
    if "list" in inputs:
        tables.append((ranked, "list_partials"))
    if "judgements" in inputs:
        user_keys = [*truth_spec.shared_by, spec.user]
        judgements = judgements_table(
            ranked, truth, truth_stats, spec=spec, truth_spec=truth_spec, user_keys=user_keys
        )
        tables.append((judgements, "judgement_partials"))
    return tables


def per_user_partials(
    recs: pl.LazyFrame,
    ranked: pl.LazyFrame,
    truth: pl.LazyFrame,
    *,
    spec: RecsSpec,
    truth_spec: TruthSpec,
    requests: Sequence[Request],
    conv: Conventions,
    grade_levels: tuple[float, ...] | None,
    truth_rows: int | None,
    hit_row: str | None = None,
    hold: bool = False,
    join_key: tuple[pl.Expr, pl.Expr] | None = None,
    cut: int | None = None,
    propensities: pl.LazyFrame | None = None,
    subtopic_truth: pl.LazyFrame | None = None,
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """Per-user partial sums: truth statistics joined with hit statistics.

    Returns the per-user frame (one row per evaluated user and ``by`` group,
    with :data:`N_RELEVANT`, the partials and ideal DCGs the requests read)
    and the hits table (where no measure reads the hits, and ``hit_row`` is not
    asked for, the run's subtopic rows: recommended truth rows as well, for
    counting users with a hit). ``grade_levels``, ``truth_rows``: as in
    :func:`polars_rankmetrics._pipeline.truth.truth_statistics`.
    ``hit_row``: give each hit row the index of its row in the cut, in this column.
    ``hold``: the hits table is computed once (cached): the main plan and the hit-row
    checks both read it (a few percent of the cut, also for a lazy scan).
    ``join_key``: the truth's and the recs' packed join key
    (:func:`polars_rankmetrics._pipeline.hits.packed_key`).
    ``cut``: the cut's largest position (``None``: the whole lists).
    ``propensities``: one row per item with its propensity columns (input
    ``"propensity"``, :func:`polars_rankmetrics._pipeline.propensity.item_propensities`),
    joined to the hits and to the relevant truth rows that ``truth_partials`` read.
    ``subtopic_truth``: the truth with its subtopic rows (input ``"subtopics"``;
    ``truth`` is then collapsed to one row per (user, item),
    :mod:`polars_rankmetrics._pipeline.subtopics`).
    """
    user_keys = [*truth_spec.shared_by, spec.user]
    inputs = {name for request in requests for name in request.measure.inputs}
    relevant_truth, truth_stats = truth_statistics(
        # a subtopic truth: its positive rows collapsed (the collapse of all its rows is
        # computed only where a measure reads the judged non-relevant pairs)
        truth if subtopic_truth is None else positive_pairs(subtopic_truth, truth_spec),
        truth_spec,
        requests=requests,
        conv=conv,
        grade_levels=grade_levels,
        truth_rows=truth_rows,
    )
    if subtopic_truth is not None and hit_row is None and not _reads_pairs(requests):
        # only subtopic rows are read: the users and their counts, without the pairs' collapse
        truth_stats = relevant_item_counts(subtopic_truth, truth_spec)
    labeled = relevant_truth
    if "max_grade" in inputs:
        # one scalar over the whole truth, set beside each of its rows
        labeled = labeled.with_columns(pl.col(GRADE).max().alias(MAX_GRADE))
    binary = binary_hit_columns(truth_spec, inputs)
    hits = hits_table(
        ranked if hit_row is None else ranked.with_row_index(hit_row),
        # binary: the keys of every truth row, read from the truth itself (a plan shared
        # with the labeling would be held in a cache: a copy of every truth row)
        labeled if binary is None else truth,
        spec,
        truth_spec,
        hit_index="hit_index" in inputs,
        tie_groups=conv.ties == "average",
        first_on_hits=hit_row is not None and spec.duplicates == "first",
        join_key=join_key,
        binary=binary,
        order=list_order(ranked, spec, cut),
    )
    if hold:
        # the main plan and the checks on the hit rows both read the hits: join once
        # (the optimiser does not share it by itself; a few percent of the cut's rows)
        hits = hits.cache()
    if "n_relevant_on_hits" in inputs:
        hits = hits.join(truth_stats.select(*user_keys, N_RELEVANT), on=user_keys, how="left")
    if "score_ties" in inputs:
        hits = with_relevant_in_tie_groups(hits, spec)
    if "list_length" in inputs:
        hits = hits.join(
            list_lengths(ranked, spec, tie_groups=conv.ties == "average"),
            on=spec.list_keys,
            how="left",
        )
    truth_stats = _with_truth_partials(
        truth_stats,
        relevant_truth,
        requests=requests,
        user_keys=user_keys,
        propensities=propensities,
    )
    relevant = None
    if subtopic_truth is not None:
        # read by the subtopic counts, the greedy ideal and the run's join: computed once (not
        # held, its windows ran three times; the peak memory stays below the three's)
        relevant = relevant_subtopics(subtopic_truth, truth_spec).cache()
        truth_stats = with_subtopic_statistics(
            truth_stats, relevant, requests=requests, user_keys=user_keys,
            item=truth_spec.item, rank=spec.rank,
        )  # fmt: skip
    read_hits = hits
    if propensities is not None:
        # after the cache: the checks on the hit rows read the hits without them
        read_hits = hits.join(propensities, on=join_keys(propensities), how="left")
    recs_only_by = [name for name in spec.by if name not in truth_spec.shared_by]
    per_user = expand_over_groups(truth_stats, recs, recs_only_by, truth_spec.shared_by)
    if "n_nonrelevant" in inputs:
        counts = nonrelevant_counts(truth, truth_spec, user_keys)
        per_user = per_user.join(counts, on=user_keys, how="left").with_columns(
            pl.col(N_NONRELEVANT).fill_null(0)
        )
    tables = partial_tables(
        read_hits, ranked, truth, truth_stats, spec=spec, truth_spec=truth_spec, inputs=inputs
    )
    per_user = _join_partials(per_user, tables, requests, spec)
    if relevant is not None:
        run = run_subtopics(ranked, relevant, spec, truth_spec)
        # no measure reads the hits: the run's subtopic rows are recommended truth rows too
        # (the caller counts their users), and the hits' join is not run for that
        witness = hit_row is None and not any(q.measure.hit_partials(q.ctx) for q in requests)
        if witness and hold:
            run = run.cache()  # held as the hits would be: the sums and the count read it
        per_user = with_run_subtopic_sums(
            per_user, run, requests=requests, list_keys=spec.list_keys
        )
        hits = run if witness else hits
    return per_user, hits


def _reads_pairs(requests: Sequence[Request]) -> bool:
    """Whether a request reads the truth's (user, item) pairs, not only the subtopic rows.

    A measure that reads the subtopic rows alone (input ``"subtopics"``, no
    partials over the truth or the hits) reads of the other statistics only
    each user's :data:`N_RELEVANT`.
    """
    return any(
        request.measure.inputs - {"subtopics"}
        or request.measure.truth_partials(request.ctx)
        or request.measure.hit_partials(request.ctx)
        for request in requests
    )


def with_relevant_in_tie_groups(hits: pl.LazyFrame, spec: RecsSpec) -> pl.LazyFrame:
    """The relevant rows in each hit's tie group and above it (input ``"score_ties"``).

    :data:`TIE_RELEVANT` and :data:`TIE_RELEVANT_ABOVE`: windows over the hits
    (a few percent of the rows), cheaper than a rank per list in the measures'
    aggregation.
    """
    relevant = pl.col(RELEVANT).fill_null(value=False)
    start = pl.when(relevant).then(pl.col(TIE_START))
    return hits.with_columns(
        relevant.cast(pl.UInt32).sum().over([*spec.list_keys, TIE_START]).alias(TIE_RELEVANT),
        (start.rank("min").over(spec.list_keys) - 1).alias(TIE_RELEVANT_ABOVE),
    )


def list_lengths(ranked: pl.LazyFrame, spec: RecsSpec, *, tie_groups: bool) -> pl.LazyFrame:
    """Each list's last position, :data:`LIST_LENGTH` (input ``"list_length"``).

    Positions from scores are 1..n, so it is the number of candidates; a given
    rank past an empty slot counts the slot (as every measure reads positions).
    With tie groups the position column holds each group's first position.
    """
    last = pl.col(spec.rank).cast(pl.Int64)
    if tie_groups:
        last = last + pl.col(TIE_SIZE).cast(pl.Int64) - 1
    return ranked.group_by(spec.list_keys).agg(last.max().alias(LIST_LENGTH))


def _with_truth_partials(
    truth_stats: pl.LazyFrame,
    relevant_truth: pl.LazyFrame,
    *,
    requests: Sequence[Request],
    user_keys: Sequence[str],
    propensities: pl.LazyFrame | None,
) -> pl.LazyFrame:
    """The per-user statistics with the sums of the terms the measures declare over the truth."""
    partials = {
        partial.name: partial
        for request in requests
        for partial in request.measure.truth_partials(request.ctx)
    }
    if not partials:
        return truth_stats
    rows = relevant_truth
    if propensities is not None:
        rows = rows.join(propensities, on=join_keys(propensities), how="left")
    # the terms' sums per user, exact: the rows come out of joins in no fixed order
    sums = exact_sums(rows, user_keys, {name: partial.expr for name, partial in partials.items()})
    fills = [
        pl.col(name).fill_null(partial.fill)
        for name, partial in partials.items()
        if partial.fill is not None
    ]
    return truth_stats.join(sums, on=user_keys, how="left").with_columns(fills)


def _join_partials(
    per_user: pl.LazyFrame,
    tables: Sequence[tuple[pl.LazyFrame, str]],
    requests: Sequence[Request],
    spec: RecsSpec,
) -> pl.LazyFrame:
    """Each table's partials per list, joined with the per-user frame and filled."""
    for table, kind in tables:
        partials = {
            partial.name: partial
            for request in requests
            for partial in getattr(request.measure, kind)(request.ctx)
        }
        if not partials:
            continue
        # float sums of row terms exactly (the same in any row order), the rest as aggregations
        terms = {name: p.expr for name, p in partials.items() if p.summed}
        other = [p.expr.alias(name) for name, p in partials.items() if not p.summed]
        stats = exact_sums(table, spec.list_keys, terms, also=other)
        fills = [
            pl.col(name).fill_null(partial.fill)
            for name, partial in partials.items()
            if partial.fill is not None
        ]
        per_user = per_user.join(stats, on=spec.list_keys, how="left").with_columns(fills)
    return per_user
