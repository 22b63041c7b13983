"""The hits table: relevant truth items recommended within the cut, with their positions.

Also the tables of judged recommendations that trec_eval's measures read,
and the (by..., user, item) join key packed into one integer when the key
values allow it.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence

import polars as pl

from polars_rankmetrics._measures._registry import (
    GRADE,
    HIT_INDEX,
    MAX_GRADE,
    N_RELEVANT,
    NONRELEVANT_ABOVE,
    RELEVANT,
    RELEVANT_ABOVE,
    TIE_RELEVANT,
    UNJUDGED_ABOVE,
)
from polars_rankmetrics._names import PREFIX
from polars_rankmetrics._pipeline.inputs import RecsSpec, TruthSpec
from polars_rankmetrics._pipeline.rank_cut import keep_best_position
from polars_rankmetrics._pipeline.truth import nonrelevant_counts

_KEY = f"{PREFIX}key"  # the (by..., user, item) join key packed into one integer


def hits_table(
    ranked: pl.LazyFrame,
    truth: pl.LazyFrame,
    spec: RecsSpec,
    truth_spec: TruthSpec,
    *,
    hit_index: bool,
    tie_groups: bool = False,
    first_on_hits: bool = False,
    join_key: tuple[pl.Expr, pl.Expr] | None = None,
    binary: list[pl.Expr] | None = None,
    order: pl.Expr | None = None,
) -> pl.LazyFrame:
    """Relevant truth items that were recommended within the cut, with their positions.

    ``join_key``: (truth side, recs side) of one integer standing for the
    (by..., user, item) key (:func:`packed_key`); the join then reads one
    column instead of several, and every key column comes from the recs.

    ``binary``: the truth has no relevance column, so the columns a hit would take
    from its truth row are these constants (grade 1, its label, ...): the
    recommendations in the truth are found by a semi join, about half the cost
    of the inner join that pairs them with their truth rows.

    ``first_on_hits``: the cut still holds given ranks' repeats, which
    ``duplicates="first"`` drops here.

    With ``hit_index``, sorted by list and position, so that the index of each
    relevant hit within its list (for AP) is a running count rather than a
    sort per user; with ``tie_groups`` too (``ties="average"``), each row also
    gets its tie group's number of relevant items (AP's expectation reads it).
    ``order``: one column that sorts the rows as (list, position) do
    (:func:`list_order`); a sort on one column is cheaper than on several.
    """
    on = [*truth_spec.shared_by, spec.user, spec.item]
    if binary is not None:
        # every truth row has grade 1 (no relevance column): a hit takes nothing from its
        # truth row, so the recommendations are kept where their key is in the truth, a
        # semi join (no pairs to build; a repeated truth row is refused by its own check)
        if join_key is None:
            hits = ranked.join(truth.select(on), on=on, how="semi")
        else:
            truth_key, recs_key = join_key
            hits = (
                ranked.with_columns(recs_key.alias(_KEY))
                .join(truth.select(truth_key.alias(_KEY)), on=_KEY, how="semi")
                .drop(_KEY)
            )
        hits = hits.with_columns(binary)
    elif join_key is None:
        hits = truth.join(ranked, on=on, how="inner")
    else:
        truth_key, recs_key = join_key
        hits = (
            truth.select(pl.exclude(on), truth_key.alias(_KEY))
            .join(ranked.with_columns(recs_key.alias(_KEY)), on=_KEY, how="inner")
            .drop(_KEY)
        )
    if first_on_hits:
        # duplicates="first" with given ranks: a hits measure reads only the relevant
        # rows, so each relevant item's best position is kept here, on about 5% of the
        # cut, rather than by a window over every (list, item) of the cut
        hits = keep_best_position(hits, spec)
    if not hit_index:
        return hits
    if tie_groups:
        in_group = pl.col(RELEVANT).cast(pl.UInt32).sum().over([*spec.list_keys, spec.rank])
        hits = hits.with_columns(in_group.alias(TIE_RELEVANT))
    hits = hits.sort([*spec.list_keys, spec.rank] if order is None else order)
    relevant = pl.col(RELEVANT).cast(pl.UInt32)
    running = relevant.cum_sum()
    # sorted by list: a list starts where any of its keys differs from the row above
    first_of_list = pl.any_horizontal(
        pl.col(key).ne_missing(pl.col(key).shift(1)) for key in spec.list_keys
    )
    before_list = pl.when(first_of_list).then(running - relevant).forward_fill()
    return hits.with_columns((running - before_list).alias(HIT_INDEX))


def packed_key(
    truth: pl.DataFrame | pl.LazyFrame,
    recs: pl.LazyFrame,
    truth_lf: pl.LazyFrame,
    keys: Sequence[str],
) -> tuple[pl.Expr, pl.Expr] | None:
    """The join key columns packed into one integer, exactly, when their values allow it.

    A join on several integer columns hashes each row's values together; on one
    integer column it is about twice as fast (10 million recommendations: the
    join is most of the work). Each key's values lie in a range ``lo..hi``:
    the truth's own (an in-memory truth, read once) or else the dtype's. With
    ``span_j = hi_j - lo_j + 1``, ``R_j`` the product of the spans after key
    ``j`` and ``c = span_0 // 2``, the number
    ``(x_0 - lo_0 - c) R_0 + sum_{j > 0} (x_j - lo_j) R_j`` is one-to-one on the
    ranges and lies in ``[-c R_0, ceil(span_0 / 2) R_0)``: an Int64 when that
    bound is at most 2^63, else an Int128 when at most 2^127 (two 64-bit ids of
    a lazy truth: exactly 2^127). A recommendation outside a range cannot match
    any truth row: its key is null, which joins nothing. ``None``: the keys are
    joined as they are (string ids, a key beyond 64 bits).

    Returns the truth's key and the recommendations' key (both expressions on
    the frames with unified key dtypes, :func:`polars_rankmetrics._pipeline.checks.prepare`).
    """
    recs_schema, truth_schema = recs.collect_schema(), truth_lf.collect_schema()
    if not all(recs_schema[key].is_integer() and truth_schema[key].is_integer() for key in keys):
        return None
    if any(truth_schema[key].base_type() in (pl.Int128, pl.UInt128) for key in keys):
        return None
    if isinstance(truth, pl.DataFrame) and all(truth.schema[key].is_integer() for key in keys):
        if truth.height == 0:
            return None
        low = truth.select(pl.col(key).min() for key in keys).row(0)
        high = truth.select(pl.col(key).max() for key in keys).row(0)
        if any(value is None for value in (*low, *high)):
            return None  # a key that is all null: the null checks report it
        ranges = list(zip(low, high, strict=True))
    else:
        ranges = [_dtype_range(truth_schema[key]) for key in keys]
    spans = [hi - lo + 1 for lo, hi in ranges]
    after = math.prod(spans[1:])
    bound = (spans[0] - spans[0] // 2) * after
    target: pl.DataType
    if bound <= 1 << 63:
        target = pl.Int64()
    elif bound <= 1 << 127:
        target = pl.Int128()
    else:
        return None

    def packed(*, masked: bool) -> pl.Expr:
        total: pl.Expr = pl.lit(0, target)
        radix = after
        for index, (key, (lo, hi)) in enumerate(zip(keys, ranges, strict=True)):
            value = pl.col(key).cast(target, strict=False)
            if masked:
                # outside the truth's range: no truth row to match, a null key
                inside = value.is_between(pl.lit(lo, target), pl.lit(hi, target))
                value = pl.when(inside).then(value)
            shift = lo + (spans[0] // 2 if index == 0 else 0)
            term = (value - pl.lit(shift, target)) * pl.lit(radix, target)
            total = total + term
            radix = radix // spans[index + 1] if index + 1 < len(spans) else 1
        return total

    return packed(masked=False), packed(masked=True)


def _dtype_range(dtype: pl.DataType) -> tuple[int, int]:
    """The smallest and largest value of an integer dtype of at most 64 bits."""
    bits: dict[type[pl.DataType], int] = {
        pl.Int8: 8,
        pl.UInt8: 8,
        pl.Int16: 16,
        pl.UInt16: 16,
        pl.Int32: 32,
        pl.UInt32: 32,
    }
    width = bits.get(dtype.base_type(), 64)
    if dtype.is_signed_integer():
        return -(1 << (width - 1)), (1 << (width - 1)) - 1
    return 0, (1 << width) - 1


def list_order(ranked: pl.LazyFrame, spec: RecsSpec, cut: int | None) -> pl.Expr | None:
    """One Int128 that orders the cut's rows as (user, position) do, or ``None``.

    ``user * (cut + 1) + position`` is strictly increasing in (user, position)
    for positions ``1..cut``, which every position in the cut is (ranks below 1
    are refused by the position checks of the same query). Only for lists
    keyed by one integer user (no ``by``) and integer positions of a finite cut.
    """
    if cut is None or spec.by:
        return None
    schema = ranked.collect_schema()
    user, position = schema[spec.user], schema[spec.rank]
    if not (user.is_integer() and position.is_integer()):
        return None
    if user.base_type() in (pl.Int128, pl.UInt128):
        return None
    return pl.col(spec.user).cast(pl.Int128) * pl.lit(cut + 1, pl.Int128) + pl.col(spec.rank).cast(
        pl.Int128
    )


def binary_hit_columns(truth_spec: TruthSpec, inputs: Collection[str]) -> list[pl.Expr] | None:
    """What a hit reads of its truth row, when every truth row has grade 1 (else ``None``).

    No relevance column: the grade is 1, its label the one
    :func:`polars_rankmetrics._pipeline.truth.labeled_truth` gives grade 1 (relevant
    unless the relevance level is above 1), and the largest grade of a truth
    with a hit is 1.
    """
    if truth_spec.relevance is not None:
        return None
    level = truth_spec.relevance_level
    columns = [
        pl.lit(1.0, pl.Float64).alias(GRADE),
        pl.lit(level is None or level <= 1.0).alias(RELEVANT),
    ]
    if "max_grade" in inputs:
        columns.append(pl.lit(1.0, pl.Float64).alias(MAX_GRADE))
    return columns


def judged_table(
    ranked: pl.LazyFrame, truth: pl.LazyFrame, spec: RecsSpec, truth_spec: TruthSpec
) -> pl.LazyFrame:
    """Judged non-relevant items (truth grade <= 0) recommended within the cut, with positions."""
    if truth_spec.relevance is None:
        # every truth row has grade 1: nothing is judged non-relevant
        return ranked.filter(pl.lit(value=False))
    on = [*truth_spec.shared_by, spec.user, spec.item]
    non_relevant = truth.filter(pl.col(truth_spec.relevance).cast(pl.Float64) <= 0).select(on)
    return non_relevant.join(ranked, on=on, how="inner")


def judgements_table(
    ranked: pl.LazyFrame,
    truth: pl.LazyFrame,
    truth_stats: pl.LazyFrame,
    *,
    spec: RecsSpec,
    truth_spec: TruthSpec,
    user_keys: Sequence[str],
) -> pl.LazyFrame:
    """Every judged recommendation (any grade), with running judgement counts down its list.

    Built only for trec_eval's judgement-based measures (input ``"judgements"``:
    bpref, infAP): trec_eval tells judged non-relevant documents (grade >= 0,
    not relevant) from pooled-but-unjudged ones (negative grade).
    """
    grade = (
        pl.lit(1.0)
        if truth_spec.relevance is None
        else pl.col(truth_spec.relevance).cast(pl.Float64)
    )
    relevant = pl.col(GRADE) > 0
    if truth_spec.relevance_level is not None:
        relevant = relevant & (pl.col(GRADE) >= truth_spec.relevance_level)
    labeled = truth.select(*user_keys, spec.item, grade.alias(GRADE)).with_columns(
        relevant.alias(RELEVANT)
    )
    nonrelevant = (pl.col(GRADE) >= 0) & ~pl.col(RELEVANT)
    counts = nonrelevant_counts(truth, truth_spec, user_keys)
    rows = (
        labeled.join(ranked, on=[*user_keys, spec.item], how="inner")
        .join(truth_stats.select(*user_keys, N_RELEVANT), on=user_keys, how="left")
        .join(counts, on=user_keys, how="left")
        # the running counts go down each list
        .sort([*spec.list_keys, spec.rank])
    )

    def running(flag: pl.Expr) -> pl.Expr:
        return flag.cast(pl.UInt32).cum_sum().over(spec.list_keys)

    return rows.with_columns(
        running(pl.col(RELEVANT)).alias(RELEVANT_ABOVE),
        running(nonrelevant).alias(NONRELEVANT_ABOVE),
        running(pl.col(GRADE) < 0).alias(UNJUDGED_ABOVE),
        pl.col(N_RELEVANT).fill_null(0),
    )
