"""The truth per user: its relevant rows labeled, their count m_u, and the ideal DCG.

Rows with a grade <= 0 never change a measure and are dropped once
(:func:`labeled_truth`). The ideal DCG follows from the user's item count per
grade when the grades are known up front (:func:`grade_levels`), else from a
window that ranks the truth by gain.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from polars_rankmetrics import _formulas as formula
from polars_rankmetrics._measures._registry import (
    GRADE,
    IDEAL_RANK,
    N_NONRELEVANT,
    N_RELEVANT,
    RELEVANT,
)
from polars_rankmetrics._names import PREFIX
from polars_rankmetrics._pipeline.inputs import Request, TruthSpec
from polars_rankmetrics._sums import exact_sums
from polars_rankmetrics.conventions import Conventions


def labeled_truth(
    lf: pl.LazyFrame,
    spec: TruthSpec,
    *,
    names: tuple[str, str, str],
    ideal: bool = True,
) -> pl.LazyFrame:
    """The truth rows with a positive grade, with the grade and the binary label.

    Rows with relevance <= 0 can never change a metric (they gain nothing and
    are not relevant), so they are dropped here, once. ``ideal=True`` adds each
    item's position in its user's ideal list (one window over the truth).
    ``names``: the (grade, label, ideal position) columns to write: the public
    ones of :func:`polars_rankmetrics.ranking.relevance`, or for ``evaluate``
    private names that no input column can clash with.
    """
    grade_name, relevant_name, ideal_name = names
    grade = (
        pl.lit(1.0) if spec.relevance is None else pl.col(spec.relevance).cast(pl.Float64)
    ).alias(grade_name)
    level = spec.relevance_level
    relevant = pl.col(grade_name) > 0
    if level is not None:
        # trec_eval -l: binary measures count rel >= level; gains keep the raw grades
        relevant = relevant & (pl.col(grade_name) >= level)
    # the item's position in the user's ideal list (grades descending), for IDCG
    ideal_rank = pl.col(grade_name).rank("ordinal", descending=True)
    labeled = (
        lf.select(*spec.shared_by, spec.user, spec.item, grade)
        .filter(pl.col(grade_name) > 0)
        .with_columns(relevant.alias(relevant_name))
    )
    if not ideal:
        return labeled
    return labeled.with_columns(ideal_rank.over([*spec.shared_by, spec.user]).alias(ideal_name))


# more distinct grades than this: rank the truth instead of counting per grade
MAX_GRADE_LEVELS = 16


def grade_levels(truth: pl.DataFrame | pl.LazyFrame, spec: TruthSpec) -> tuple[float, ...] | None:
    """The distinct positive grades of the truth, highest first, when known up front.

    Every grade is 1 without a relevance column. A truth already in memory is
    read for them (one column's distinct values, a small cost); a lazy truth is
    not, since that would run its query before ``collect``. ``None`` also when
    there are more than ``MAX_GRADE_LEVELS`` grades (e.g. continuous scores).
    """
    if spec.relevance is None:
        return (1.0,)
    if not isinstance(truth, pl.DataFrame):
        return None
    grades = truth.get_column(spec.relevance).cast(pl.Float64)
    positive = grades.filter(grades > 0).unique()
    # NaN (refused by the data checks when the query runs) and inf: rank instead
    if positive.len() > MAX_GRADE_LEVELS or not positive.is_finite().all():
        return None
    return tuple(sorted(positive.to_list(), reverse=True))


MAX_TABLE = 1 << 20  # most entries of the ideal DCG's table of discount prefix sums


_TOP_GAIN = f"{PREFIX}top_gain"  # the user's highest gain (ideal="k")


def _ideal_cutoffs(requests: Sequence[Request]) -> set[int | None]:
    return {request.ctx.k for request in requests if "ideal" in request.measure.inputs}


def _n_relevant(truth_spec: TruthSpec) -> pl.Expr:
    """The user's number of relevant items, m_u, over the labeled truth."""
    if truth_spec.relevance is None:
        # every row has grade 1: all rows are relevant or none (a relevance level above 1)
        level = truth_spec.relevance_level
        count = pl.len() if level is None or level <= 1.0 else pl.len() * 0
        return count.alias(N_RELEVANT)
    return pl.col(RELEVANT).sum().alias(N_RELEVANT)


def _ideal_name(k: int | None) -> str:
    return f"{PREFIX}idcg@{'all' if k is None else k}"


def _ranked_ideal(k: int | None, conv: Conventions) -> pl.Expr:
    """A truth row's term of the ideal DCG@k, from its position in its user's ideal list.

    Null past k; the plan sums the terms exactly (the same in any row order).
    """
    term = formula.gain(pl.col(GRADE), conv.gain) / formula.discount(pl.col(IDEAL_RANK))
    return term if k is None else pl.when(pl.col(IDEAL_RANK) <= k).then(term)


def _grade_counts(levels: Sequence[float], truth_spec: TruthSpec) -> list[pl.Expr]:
    """Per user, the number of truth items at each grade (``<prefix>n_grade<i>``)."""
    if truth_spec.relevance is None:
        # every grade is 1: the count is the user's number of rows
        return [pl.len().alias(f"{PREFIX}n_grade0")]
    grade = pl.col(GRADE)
    return [(grade == level).sum().alias(f"{PREFIX}n_grade{i}") for i, level in enumerate(levels)]


def truth_statistics(
    truth: pl.LazyFrame,
    truth_spec: TruthSpec,
    *,
    requests: Sequence[Request],
    conv: Conventions,
    grade_levels: tuple[float, ...] | None,
    truth_rows: int | None,
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """The relevant truth rows labeled, and per user m_u and the ideal DCGs the requests read.

    ``grade_levels``: the truth's distinct positive grades when known up front
    (:func:`grade_levels`). ``truth_rows``: the truth's row count when in
    memory, a bound on any user's number of items (the ideal DCG's table of
    discounts needs no more entries).
    """
    user_keys = [*truth_spec.shared_by, truth_spec.user]
    ideal_cutoffs = _ideal_cutoffs(requests)
    # grades known up front and every ideal cut finite: the ideal DCG follows from the
    # user's item count per grade, so the window that ranks the truth by grade is not
    # needed. A cutoff past every user's truth costs nothing: the table of discounts stops
    # at the longest possible list; beyond MAX_TABLE entries (a huge k on a truth of
    # unknown size) the window is cheaper than the table
    longest = truth_rows
    table_sizes = [k if longest is None else min(k, longest) for k in ideal_cutoffs if k]
    counted_ok = None not in ideal_cutoffs and all(n <= MAX_TABLE for n in table_sizes)
    levels = grade_levels if counted_ok else None
    top_gain = conv.ideal == "k" and bool(ideal_cutoffs)
    ideal_ranks = bool(ideal_cutoffs) and levels is None and not top_gain
    relevant_truth = labeled_truth(
        truth, truth_spec, ideal=ideal_ranks, names=(GRADE, RELEVANT, IDEAL_RANK)
    )
    if ideal_ranks and isinstance(conv.gain, tuple):
        # a gain table need not grow with the grade: the ideal list sorts by gain
        by_gain = formula.gain(pl.col(GRADE), conv.gain).rank("ordinal", descending=True)
        relevant_truth = relevant_truth.with_columns(by_gain.over(user_keys).alias(IDEAL_RANK))
    statistics = [_n_relevant(truth_spec)]
    ideal_terms = {}
    if top_gain:
        # RecTools' NDCG: the ideal list is k items of the user's highest gain
        statistics.append(formula.gain(pl.col(GRADE), conv.gain).max().alias(_TOP_GAIN))
    elif ideal_ranks:
        ideal_terms = {_ideal_name(k): _ranked_ideal(k, conv) for k in ideal_cutoffs}
    elif ideal_cutoffs and levels is not None:
        statistics += _grade_counts(levels, truth_spec)
    truth_stats = exact_sums(relevant_truth, user_keys, ideal_terms, also=statistics)
    if top_gain:
        truth_stats = truth_stats.with_columns(
            (pl.col(_TOP_GAIN) * formula.discount_sum(k)).alias(_ideal_name(k))
            for k in ideal_cutoffs
            if k is not None
        )
    elif ideal_cutoffs and levels is not None:
        index_of = {level: index for index, level in enumerate(levels)}
        counted = [
            (formula.gain(pl.lit(level), conv.gain), pl.col(f"{PREFIX}n_grade{index_of[level]}"))
            for level in formula.gain_order(conv.gain, levels)
        ]
        truth_stats = truth_stats.with_columns(
            formula.ideal_dcg(counted, k, longest).alias(_ideal_name(k))
            for k in ideal_cutoffs
            if k is not None
        )
    return relevant_truth, truth_stats


def nonrelevant_counts(
    truth: pl.LazyFrame, truth_spec: TruthSpec, user_keys: Sequence[str]
) -> pl.LazyFrame:
    """Per user, :data:`N_NONRELEVANT`: the judged non-relevant items of the whole truth.

    trec_eval's judged non-relevant: a grade >= 0 that is not relevant (0, or
    positive below the relevance level); a negative grade is pooled but
    unjudged. Without a relevance column every row is relevant: none.
    """
    if truth_spec.relevance is None:
        level = truth_spec.relevance_level
        below = level is not None and level > 1.0  # grade 1 under the level: not relevant
        count = pl.len() if below else pl.len() * 0
        return truth.group_by(user_keys).agg(count.cast(pl.UInt32).alias(N_NONRELEVANT))
    grade = pl.col(truth_spec.relevance).cast(pl.Float64)
    relevant = grade > 0
    if truth_spec.relevance_level is not None:
        relevant = relevant & (grade >= truth_spec.relevance_level)
    nonrelevant = (grade >= 0) & ~relevant
    return truth.group_by(user_keys).agg(nonrelevant.sum().cast(pl.UInt32).alias(N_NONRELEVANT))
