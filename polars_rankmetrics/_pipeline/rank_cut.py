"""Ranking and the cut: positions from scores or given ranks, ties, repeats, the top k.

A list is the rows of one (by..., user). Ranks from scores follow the tie
rule (:data:`polars_rankmetrics._pipeline.inputs.Ties`), compared as float64;
``duplicates="first"`` keeps each item's best position; the cut keeps the
positions the largest cutoff requested reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import polars as pl

from polars_rankmetrics import _validation as v
from polars_rankmetrics._measures._registry import TIE_SIZE, TIE_START, lookup
from polars_rankmetrics._names import PREFIX
from polars_rankmetrics._pipeline.inputs import RecsSpec, TruthSpec
from polars_rankmetrics._pipeline.parse import MetricSpec
from polars_rankmetrics._row_order import (
    run_cut,
    run_lengths_in_rank_order,
    run_positions,
    run_tie_groups,
)
from polars_rankmetrics.conventions import Conventions


def score_value(score: str) -> pl.Expr:
    """The score as the ranking compares it: float64.

    -0.0 and 0.0 tie: Polars compares, hashes and ranks them as equal (and
    :func:`score_order` maps both to 0). Adding 0.0 folds -0.0 into 0.0 in
    IEEE arithmetic, though Polars 2.1 returns -0.0 for it; nothing here
    depends on the fold.
    """
    return pl.col(score).cast(pl.Float64) + 0.0


def score_order(score: str) -> pl.Expr:
    """An Int64 in the order of :func:`score_value`, equal exactly where the scores tie.

    A float's bits read as an Int64 are its sign bit and its magnitude: a
    non-negative float keeps them (the magnitude orders it), a negative one
    becomes minus its magnitude, so -0.0 and 0.0 both become 0 (Polars
    compares, hashes and ranks them as equal, and so does this key). Polars
    ranks an Int64 column faster than a Float64 one (10M shuffled rows ranked
    per user: 0.44 s against 0.48 s, the bits included). NaN, refused by the
    data checks, is not ordered meaningfully.

    Examples
    --------
    >>> frame = pl.DataFrame({"s": [-float("inf"), -2.0, -0.5, -0.0, 0.0, 0.5, 3.0]})
    >>> keys = frame.select(score_order("s")).to_series().to_list()
    >>> keys == sorted(keys), len(set(keys)), keys[3] == keys[4] == 0
    (True, 6, True)
    """
    bits = score_value(score).reinterpret(dtype=pl.Int64)
    # a negative float's bits are the sign bit (Int64's minimum) plus its magnitude
    return pl.when(bits < 0).then(pl.lit(_SIGN_BIT, pl.Int64) - bits).otherwise(bits)


# the sign bit alone, as an Int64: the bits of -0.0
_SIGN_BIT = -(2**63)


def _score_rank(spec: RecsSpec, score: str, item_dtype: pl.DataType) -> pl.Expr:
    value = score_value(score)
    # equal scores: by the item id's value (text for Categorical/Enum), in every dtype
    item = v.tie_key(spec.item, item_dtype)
    if spec.ties == "item_desc":
        # trec_eval: score descending, then item id descending
        ordinal = pl.struct(value, item).rank("ordinal", descending=True)
    elif spec.ties == "item_asc":
        ordinal = pl.struct(-value + 0.0, item).rank("ordinal")
    else:
        # "ordinal" ranks equal values in the order they occur: stable input order
        ordinal = value.rank("ordinal", descending=True)
    return ordinal.over(spec.list_keys)


# private columns of the top-k ranking (the reserved prefix: no input column has it)
_VALUE = f"{PREFIX}score_value"


_START = f"{PREFIX}top_tie_start"


_KEEP = f"{PREFIX}keep"


_TIE_END = f"{PREFIX}tie_end"  # the last position of the row's tie group


_TIED = f"{PREFIX}tied"


def top_by_score(lf: pl.LazyFrame, spec: RecsSpec, k: int) -> pl.LazyFrame:
    """Positions 1..k of each list from the scores, every tie rule exact, repeats kept.

    One window ranks the rows by the score alone (``"ordinal"``: equal scores
    take consecutive positions in the order the rows come, which is the
    ``"input"`` rule). Under an item rule only a group of equal scores in one
    list can be out of order, and only a group that starts within 1..k
    matters; such a group has two rows within 1..k+1. So the rows within
    k+1 whose (list, score) repeats are marked (usually none), every row
    of their groups is fetched from ``lf`` (a group may run past k+1), and
    each group's rows take its positions in the tie rule's item order. The
    rows come out in no particular order.

    The mark (:func:`polars_rankmetrics._validation.may_repeat`) may also
    fall on a row whose (list, score) does not repeat (a hash collision):
    such a row forms a group of its own and keeps its position.
    """
    assert spec.score is not None
    keys = spec.list_keys
    value = score_value(spec.score)
    ordinal = score_order(spec.score).rank("ordinal", descending=True).over(keys).alias(spec.rank)
    if spec.ties == "input":
        return lf.with_columns(ordinal).filter(pl.col(spec.rank) <= k)
    group = [*keys, _VALUE]
    near = (
        lf.with_columns(ordinal)
        .filter(pl.col(spec.rank) <= k + 1)
        .with_columns(value.alias(_VALUE))
        # the rows of tie groups, marked once: the rows outside them are kept by a filter
        # on the mark (the anti join with the groups it replaced took ~40 ms more at 10M)
        .with_columns(v.may_repeat(group).alias(_TIED))
        # read twice below: rank once (the optimiser may not share it when the two
        # reads keep different columns). About k+1 rows per list, held in memory
        .cache()
    )
    # a group with two rows within k+1 starts within k
    groups = (
        near.filter(pl.col(_TIED))
        .group_by(group)
        .agg(pl.col(spec.rank).min().alias(_START))
        .filter(pl.col(_START) <= k)
        .cache()
    )
    item = v.tie_key(spec.item, lf.collect_schema()[spec.item])
    in_order = item.rank("ordinal", descending=spec.ties == "item_desc").over(group)
    names = [*lf.collect_schema().names(), spec.rank]
    members = (
        lf.with_columns(value.alias(_VALUE))
        .join(groups, on=group, how="inner")
        .with_columns((pl.col(_START) + in_order - 1).cast(pl.get_index_type()).alias(spec.rank))
        .select(names)
    )
    alone = near.filter(~pl.col(_TIED)).select(names)
    return pl.concat([alone, members]).filter(pl.col(spec.rank) <= k)


def _first_in_top(lf: pl.LazyFrame, top: pl.LazyFrame, spec: RecsSpec, k: int) -> pl.LazyFrame:
    """``duplicates="first"`` on the top k of each list, ranks from scores.

    A list whose top k holds no item twice keeps it as is: those k distinct
    items come first in the list with its repeats removed too. The few lists
    with a repeat within k (usually none; found by
    :func:`polars_rankmetrics._validation.may_repeat`, a collision only adds
    a list ranked again) are ranked again from all their rows, each item's
    best-scored row only.
    """
    keys = spec.list_keys
    # read twice below (about k rows per list): computed once
    top = top.cache()
    lists = top.filter(v.may_repeat([*keys, spec.item])).select(keys).unique().cache()
    kept = top.join(lists, on=keys, how="anti")
    schema = lf.collect_schema()
    redone = (
        # the rows' order is the "input" tie rule's: keep it through the join
        lf.join(lists, on=keys, how="semi", maintain_order="left")
        .filter(_best_scored(spec))
        .with_columns(_score_rank(spec, spec.score or "", schema[spec.item]).alias(spec.rank))
        .filter(pl.col(spec.rank) <= k)
    )
    return pl.concat([kept, redone.select(kept.collect_schema().names())])


def lengths_in_rank_order(recs: pl.DataFrame | pl.LazyFrame, spec: RecsSpec) -> pl.Series | None:
    """The lists' lengths, if ``recs`` is in memory with every list one block in rank order.

    Then a row's position is its place in its list, and the ranking window is
    not needed (see :mod:`polars_rankmetrics._row_order`). ``None`` otherwise.
    """
    if spec.score is None or not isinstance(recs, pl.DataFrame):
        return None
    return run_lengths_in_rank_order(
        recs, keys=spec.list_keys, item=spec.item, score=spec.score, ties=spec.ties
    )


def with_positions(
    lf: pl.LazyFrame,
    spec: RecsSpec,
    k: int | None = None,
    *,
    run_lengths: pl.Series | None = None,
    drop_repeats: bool = True,
) -> pl.LazyFrame:
    """The positions 1..k of each list (every row when ``k`` is None), duplicates applied.

    Adds the rank column when a score is given. ``run_lengths``: the rows of
    ``lf`` come list by list in rank order, with these lengths
    (:func:`lengths_in_rank_order`).

    ``duplicates="first"`` keeps each (list, item) once, at its best position:

    * given ranks: the positions stay as given (Kaggle: a repeat wastes its
      slot). An item's best position is within 1..k exactly when one of its
      rows is, so the repeats are dropped after the cut, on the cut's rows;
    * ranks from scores: each item keeps its best-scored row (the first in
      the tie rule's order among equal scores) and the remaining rows are
      ranked: a dropped repeat frees its slot, so later items move up. This
      is ranking the list with its repeats removed.

    ``drop_repeats=False``: leave given ranks' repeats in (the caller drops
    them on a smaller table, :func:`keep_best_position`).
    """
    first = spec.duplicates == "first"
    if spec.score is not None and k is None:
        if first:
            lf = lf.filter(_best_scored(spec))
        position = (
            _score_rank(spec, spec.score, lf.collect_schema()[spec.item])
            if run_lengths is None or first
            else pl.lit(run_positions(run_lengths))
        )
        return lf.with_columns(position.alias(spec.rank))
    if spec.score is not None and k is not None:
        top = (
            top_by_score(lf, spec, k) if run_lengths is None else _run_top(lf, spec, k, run_lengths)
        )
        return _first_in_top(lf, top, spec, k) if first else top
    lf = cut(lf, k, spec.rank)
    return keep_best_position(lf, spec) if first and drop_repeats else lf


def _run_top(lf: pl.LazyFrame, spec: RecsSpec, k: int, run_lengths: pl.Series) -> pl.LazyFrame:
    """The first k rows of each list of ``lf`` (lists in rank order), with their positions."""
    keep, top_positions = run_cut(run_lengths, k)
    return (
        lf.with_columns(pl.lit(keep).alias(_KEEP))
        .filter(pl.col(_KEEP))
        .drop(_KEEP)
        .with_columns(pl.lit(top_positions).alias(spec.rank))
    )


def keep_best_position(lf: pl.LazyFrame, spec: RecsSpec) -> pl.LazyFrame:
    """One row per (list, item), at its best given position, even for a row repeated whole."""
    return lf.filter(pl.col(spec.rank).rank("ordinal").over([*spec.list_keys, spec.item]) == 1)


def _best_scored(spec: RecsSpec) -> pl.Expr:
    """True on the one row per (list, item) that the ranking places first."""
    assert spec.score is not None
    value = pl.col(spec.score).cast(pl.Float64) + 0.0
    # equal scores of one item: the first row (ordinal ranks are stable), which is the
    # row the "input" rule places first; the item rules see one item, any row will do
    return value.rank("ordinal", descending=True).over([*spec.list_keys, spec.item]) == 1


def cut(lf: pl.LazyFrame, k: int | None, rank: str) -> pl.LazyFrame:
    """Keep positions 1..k (everything when k is None)."""
    return lf if k is None else lf.filter(pl.col(rank) <= k)


def _with_tie_groups(
    lf: pl.LazyFrame,
    spec: RecsSpec,
    score: str | None,
    *,
    positions: Literal["start", "end"] | None,
) -> pl.LazyFrame:
    """Each row's group of equal scores in its list: its first position and its size.

    :data:`TIE_START` and :data:`TIE_SIZE` (with given ranks, which never tie,
    the row's position and 1). ``positions``: also set the rank column to the
    group's first (``ties="average"``) or last position (every position of a
    group is then its last: the list's last position is still its length);
    ``None`` keeps the positions ``lf`` has.
    """
    if score is None:
        return lf.with_columns(
            pl.col(spec.rank).alias(TIE_START), pl.lit(1, dtype=pl.UInt32).alias(TIE_SIZE)
        )
    value = score_value(score)  # -0.0 ties with 0.0
    # two ranks of one window, each computed once (the partition is built once: cheaper
    # than a second window over (list, score) for the group's size)
    ranked = lf.with_columns(
        value.rank("min", descending=True).over(spec.list_keys).alias(TIE_START),
        value.rank("max", descending=True).over(spec.list_keys).alias(_TIE_END),
    )
    first, last = pl.col(TIE_START), pl.col(_TIE_END)
    columns = [(last - first + 1).alias(TIE_SIZE)]
    if positions == "start":
        columns.append(first.alias(spec.rank))
    elif positions == "end":
        columns.append(last.alias(spec.rank))
    return ranked.with_columns(columns).drop(_TIE_END)


def largest_cutoff(specs: Sequence[MetricSpec]) -> int | None:
    """The cut that keeps every position some metric reads (None: the whole list)."""
    # a measure whose cutoff counts something else than positions reads the whole list
    cutoffs = [None if lookup(spec.name).reads_past_cutoff else spec.k for spec in specs]
    if any(k is None for k in cutoffs):
        return None
    return max(k for k in cutoffs if k is not None)


def retrieved_recs(
    recs: pl.LazyFrame,
    truth: pl.LazyFrame,
    spec: RecsSpec,
    truth_spec: TruthSpec,
    conv: Conventions,
) -> pl.LazyFrame | None:
    """The recommendations left once ``unjudged``/``nonpositive_scores`` removed some (or None).

    Both remove rows before positions are assigned, so the rows below move up
    (condensed lists, Sakai 2007; trec_eval ``-J``).
    """
    kept = None
    if conv.nonpositive_scores == "drop":
        if spec.score is None:
            raise ValueError(
                "nonpositive_scores='drop' reads the scores: pass score=<column> (with given "
                "ranks there is no score to compare with 0)"
            )
        # NaN has its own data check; a null score is refused there too
        kept = recs.filter(pl.col(spec.score).cast(pl.Float64) > 0)
    if conv.unjudged == "remove":
        on = [*truth_spec.shared_by, spec.user, spec.item]
        judged = truth
        if truth_spec.relevance is not None:
            # trec_eval (form_res_rels.c): a negative grade is "in the pool but unjudged"
            judged = truth.filter(pl.col(truth_spec.relevance).cast(pl.Float64) >= 0)
        judged = judged.select(on).unique()
        kept = (recs if kept is None else kept).join(judged, on=on, how="semi")
    return kept


def reads_score_ties(specs: Sequence[MetricSpec]) -> bool:
    """Some requested measure reads the groups of equal scores (input ``"score_ties"``)."""
    return any("score_ties" in lookup(spec.name).inputs for spec in specs)


def _only_score_ties(specs: Sequence[MetricSpec]) -> bool:
    # every measure reads the tie groups and no position inside them (the AUC family)
    return bool(specs) and all("score_ties" in lookup(spec.name).inputs for spec in specs)


def ranked_cut(
    recs: pl.LazyFrame,
    spec: RecsSpec,
    specs: Sequence[MetricSpec],
    *,
    hold: bool,
    run_lengths: pl.Series | None,
    run_scores: pl.Series | None = None,
    renumber: bool = False,
    tie_groups: bool = False,
    drop_repeats: bool = True,
) -> pl.LazyFrame:
    """The ranked rows that the measures read: positions, tie groups, the cut.

    ``run_lengths``: the lists' lengths when ``recs`` comes list by list in
    rank order (:func:`lengths_in_rank_order`), ``run_scores`` then its
    scores in row order (the tie groups read them, when a measure does).
    """
    columns = [*spec.list_keys, spec.item, spec.score or spec.rank]
    selected = recs.select(list(dict.fromkeys(columns)))
    k = largest_cutoff(specs)
    # renumbered ranks and tie groups read the whole list, so they cut afterwards
    regroup = tie_groups and spec.score is not None
    score_ties = reads_score_ties(specs)
    if spec.score is not None and (regroup or (_only_score_ties(specs) and run_lengths is None)):
        # no measure reads a position inside a tie group: the groups' windows alone, not the
        # tie rule's ranking as well (the duplicate policy still runs on a strict order)
        grouped = selected.filter(_best_scored(spec)) if spec.duplicates == "first" else selected
        ranked = _with_tie_groups(
            grouped, spec, spec.score, positions="start" if regroup else "end"
        )
        extra = [TIE_START, TIE_SIZE] if score_ties else [TIE_SIZE]
        early = False
    else:
        early = not renumber
        ranked = with_positions(
            selected, spec, k if early else None, run_lengths=run_lengths, drop_repeats=drop_repeats
        )
        extra = []
        if renumber:
            # given ranks of a list some rows left: 1, 2, ... in their order. "min" keeps a
            # repeated rank repeated, so the position check still sees it
            ranked = ranked.with_columns(pl.col(spec.rank).rank("min").over(spec.list_keys))
        if (
            score_ties
            and run_scores is not None
            and run_lengths is not None
            and spec.duplicates != "first"
        ):
            # lists in rank order, every row kept: each run of equal scores is a group
            first, size = run_tie_groups(run_scores, run_lengths)
            ranked = ranked.with_columns(
                pl.lit(first).alias(TIE_START), pl.lit(size).alias(TIE_SIZE)
            )
            extra = [TIE_START, TIE_SIZE]
        elif score_ties:
            ranked = _with_tie_groups(ranked, spec, spec.score, positions=None)
            extra = [TIE_START, TIE_SIZE]
    top = (ranked if early else cut(ranked, k, spec.rank)).select(
        *spec.list_keys, spec.item, spec.rank, *extra
    )
    # the main plan and the checks on the cut all read it: with ``hold``, rank and cut
    # once (the optimiser does not share it by itself). Only for frames already in
    # memory, and only a top-k cut (a small share of their rows): the streaming engine
    # holds a lazy scan's whole cut while the join waits for its build side (1 billion
    # rows: peak 9.1 -> 15.8 GiB)
    return top.cache() if hold and k is not None else top
