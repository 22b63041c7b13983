"""Rank positions from scores, the top-k cut, and relevance labels from the truth.

The public functions :func:`positions` and :func:`relevance` are the first two
steps of an evaluation written by hand; :mod:`polars_rankmetrics.evaluate`
builds on the same private helpers. Everything is written once on
``LazyFrame``; a ``DataFrame`` goes ``lazy() ... collect()``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Literal, TypeVar

import polars as pl

from polars_rankmetrics import _validation as v
from polars_rankmetrics._names import PREFIX, check_no_reserved, check_roles
from polars_rankmetrics._row_order import run_cut, run_lengths_in_rank_order, run_positions

__all__ = ["positions", "relevance"]

FrameT = TypeVar("FrameT", pl.DataFrame, pl.LazyFrame)
Ties = Literal["item_desc", "item_asc", "input"]
Duplicates = Literal["error", "first"]
TIES: tuple[Ties, ...] = ("item_desc", "item_asc", "input")
DUPLICATES: tuple[Duplicates, ...] = ("error", "first")

IS_RELEVANT = "is_relevant"
IDEAL_RANK = "ideal_rank"
N_RELEVANT = "n_relevant"
DEFAULT_RELEVANCE = "rel"


def as_list(columns: str | Sequence[str] | None) -> list[str]:
    """Normalise a ``by=`` argument to a list of column names."""
    if columns is None:
        return []
    if isinstance(columns, str):
        return [columns]
    return list(columns)


def to_lazy(frame: pl.DataFrame | pl.LazyFrame, *, name: str) -> pl.LazyFrame:
    """Return ``frame`` as a LazyFrame, refusing anything that is not a Polars frame."""
    if isinstance(frame, pl.LazyFrame):
        return frame
    if isinstance(frame, pl.DataFrame):
        return frame.lazy()
    raise TypeError(
        f"{name} must be a polars DataFrame or LazyFrame, got {type(frame).__name__} "
        "(pandas frames: use df.rank.<method> after importing polars_rankmetrics)"
    )


def like(template: FrameT, result: pl.LazyFrame) -> FrameT:
    """Return ``result`` as the kind of frame ``template`` is (lazy stays lazy)."""
    if isinstance(template, pl.LazyFrame):
        return result
    return result.collect()


@dataclass(frozen=True)
class RecsSpec:
    """Column roles and conventions for a recommendations frame."""

    user: str
    item: str
    rank: str
    score: str | None
    by: tuple[str, ...]
    ties: Ties = "item_desc"
    duplicates: Duplicates = "error"

    @property
    def list_keys(self) -> list[str]:
        """The columns identifying one ranked list: the ``by`` groups and the user."""
        return [*self.by, self.user]


def check_recs_schema(schema: pl.Schema, spec: RecsSpec) -> None:
    """Schema-level checks of a recommendations frame (cheap; raise at call time)."""
    v.check_literal(spec.ties, TIES, name="ties")
    v.check_literal(spec.duplicates, DUPLICATES, name="duplicates")
    roles = {"user": spec.user, "item": spec.item}
    roles.update({f"by[{i}]": name for i, name in enumerate(spec.by)})
    if spec.score is not None:
        roles["score"] = spec.score
    else:
        roles["rank"] = spec.rank
    v.require_columns(schema, roles, frame="recs")
    if spec.score is not None:
        v.require_numeric(schema, spec.score, frame="recs", role="score")
    else:
        v.require_integer(schema, spec.rank, frame="recs", role="rank")


def recs_checks(spec: RecsSpec, schema: pl.Schema, *, in_memory: bool = False) -> list[v.DataCheck]:
    """Data checks on the whole recommendations frame (nulls, NaN, rank < 1).

    ``in_memory``: the frame is in memory, so each check gets a screen (see
    :class:`polars_rankmetrics._validation.DataCheck`).
    """
    position = spec.score if spec.score is not None else spec.rank
    columns = {"user": spec.user, "item": spec.item}
    columns.update({f"by[{i}]": name for i, name in enumerate(spec.by)})
    columns["score" if spec.score is not None else "rank"] = position
    show = tuple(dict.fromkeys([*spec.by, spec.user, spec.item, position]))
    checks = v.null_checks("recs", columns, in_memory=in_memory)
    if spec.score is not None:
        if schema[spec.score].is_float():
            checks.append(v.nan_check("recs", spec.score, "score", show, in_memory=in_memory))
    else:
        checks.append(_rank_below_one_check(spec.rank, show, in_memory=in_memory))
    return checks


def _rank_below_one_check(rank: str, show: Sequence[str], *, in_memory: bool) -> v.DataCheck:
    return v.DataCheck(
        bad=pl.col(rank) < 1,
        message=f"recs column {v.shorten(rank)} (rank) has {{n}} value(s) below 1 "
        "(positions start at 1)",
        show=tuple(show),
        screen=pl.col(rank).min() < 1 if in_memory else None,
        row_wise=True,
    )


def cut_checks(
    recs: pl.LazyFrame, cut: pl.LazyFrame, spec: RecsSpec, *, in_memory: bool = False
) -> list[tuple[pl.LazyFrame, list[v.DataCheck]]]:
    """:func:`recs_checks` for given ranks and a finite cutoff, on the rows that are read.

    With ranks given, a row ranked below the largest cutoff changes no number,
    whatever its user or item: those are checked for nulls in the top-k cut
    (the rows the main plan reads, so a lazy scan does not decode the id
    columns a second time for the checks), ranks below 1 too (they are in the
    cut). A null rank could be anywhere, and a ``by`` value of any row adds
    its group: those columns alone are read over every row, the example row
    named by the row's index in ``recs``.
    """
    show = tuple(dict.fromkeys([*spec.by, spec.user, spec.item, spec.rank]))
    in_cut = v.null_checks(
        "recs", {"user": spec.user, "item": spec.item}, in_memory=in_memory, show=show
    )
    in_cut.append(_rank_below_one_check(spec.rank, show, in_memory=in_memory))
    everywhere = {f"by[{i}]": name for i, name in enumerate(spec.by)}
    everywhere["rank"] = spec.rank
    row = next(name for name in ("row", "row_index", f"{PREFIX}row") if name not in show)
    rows = recs.select(*dict.fromkeys(everywhere.values())).with_row_index(row)
    on_every_row = v.null_checks(
        "recs", everywhere, in_memory=in_memory, show=(row, *dict.fromkeys(everywhere.values()))
    )
    return [(cut, in_cut), (rows, on_every_row)]


def list_checks(
    ranked: pl.LazyFrame,
    spec: RecsSpec,
    *,
    positions: bool = True,
    in_memory: bool = False,
    by_position: bool = False,
) -> list[tuple[pl.LazyFrame, list[v.DataCheck]]]:
    """Checks of ranked lists: each item once per list and, if asked, each position once.

    Score-derived positions are distinct by construction, so only given ranks
    are checked for repeats. ``in_memory``: ``ranked`` comes from a frame in
    memory (see :func:`polars_rankmetrics._validation.duplicate_check`).
    ``by_position``: ``ranked`` comes in no fixed row order (the top k ranked
    from scores), so a repeat's example row is the offending row of the
    first list (by its key) at its best position.
    """
    show = (*spec.list_keys, spec.item, spec.rank)
    checks = []
    if spec.duplicates == "error":
        checks.append(
            v.duplicate_check(
                "recs",
                [*spec.list_keys, spec.item],
                show,
                hint=": an item is recommended twice in one list (missing by=...? "
                "or pass duplicates='first' to keep its best position)",
                in_memory=in_memory,
            )
        )
    if positions and spec.score is None:
        checks.append(position_check(spec, in_memory=in_memory))
    if by_position:
        checks = [replace(one, example_order=(*spec.list_keys, spec.rank)) for one in checks]
    return [(ranked, checks)]


def position_check(spec: RecsSpec, *, in_memory: bool = False) -> v.DataCheck:
    """Two items at one position make P@i and AP ambiguous.

    Only distinct items at one position are bad: the hit rows of
    ``evaluate`` repeat a recommendation whose truth row is repeated, which is
    the truth's problem (its own duplicate check names it), not the recs'.
    """
    check = v.duplicate_check(
        "recs",
        [*spec.list_keys, spec.rank],
        (*spec.list_keys, spec.item, spec.rank),
        hint=": two items share one position in a list (missing by=...?)",
        in_memory=in_memory,
    )
    # a row repeated whole (same item, same position) is not two items at one position;
    # no window here: the bad rows are searched for only when the hash screen fires
    shared = pl.struct([*spec.list_keys, spec.rank]).is_duplicated()
    repeated = pl.struct([*spec.list_keys, spec.item, spec.rank]).is_duplicated()
    return replace(check, bad=shared & ~repeated)


def hit_checks(spec: RecsSpec, row: str, *, in_memory: bool = False) -> list[v.DataCheck]:
    """The list checks of ``evaluate`` on its hit rows, for given ranks and hits measures.

    The hit rows are the relevant truth items recommended within the cut,
    each with the recommendation row it came from (its index in the cut,
    column ``row``). With given ranks a measure that reads only the hits sees
    a repeated item only if the item is relevant: a repeated non-relevant item
    takes no position from anyone and is never read. So here an item repeated
    in one list is refused only when it is relevant (and within the cut), and
    two items at one position only when both are relevant (a non-relevant item
    beside a relevant one changes no count of relevant items above a position).

    A truth row repeated (the truth's own check names it) also repeats its hit
    row, from one recommendation row: that is not a repeat of the recs.

    Each error's example row is the offending hit row that comes first in the
    cut (smallest ``row``), whatever order the join returns the rows in.
    """
    keys = [*spec.list_keys, spec.item]
    check = v.duplicate_check(
        "recs",
        keys,
        (*keys, spec.rank),
        hint=": a relevant item is recommended twice in one list (missing by=...? "
        "or pass duplicates='first' to keep its best position)",
        in_memory=in_memory,
    )
    # two hit rows of one item from distinct recommendation rows
    repeated = pl.struct(keys).is_duplicated() & ~pl.struct([*keys, row]).is_duplicated()
    checks = [replace(check, bad=repeated)] if spec.duplicates == "error" else []
    checks.append(position_check(spec, in_memory=in_memory))
    # the hit rows come from a join, in no fixed order: each example is the offending
    # row that comes first in the cut, the same in every run
    return [replace(one, example_order=(row,)) for one in checks]


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
_START = f"{PREFIX}tie_start"
_INPUT_ROW = f"{PREFIX}input_row"
_KEEP = f"{PREFIX}keep"
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


def positions(
    recs: FrameT,
    k: int | None = None,
    *,
    user: str = "user",
    item: str = "item",
    rank: str = "rank",
    score: str | None = None,
    ties: Ties = "item_desc",
    duplicates: Duplicates = "error",
    by: str | Sequence[str] | None = None,
) -> FrameT:
    """Rank positions per user (1 = top), optionally cut to the top k.

    Parameters
    ----------
    recs
        Long-format recommendations, one row per (user, item).
    k
        Keep positions 1..k; ``None`` keeps every row.
    user, item, rank
        Column roles. ``rank`` is written (overwritten if present) when ``score``
        is given, else read and checked.
    score
        Column to rank by, higher is better, compared as float64.
    ties
        How equal scores are ordered: ``"item_desc"`` (default, trec_eval: item
        id descending), ``"item_asc"`` (item id ascending), ``"input"`` (the
        order of the rows). Item ids compare by value (see Notes).
    duplicates
        A (user, item) recommended twice: ``"error"`` (default) or ``"first"``
        (keep its best position; score-derived ranks are then re-numbered).
    by
        Columns that identify separate lists besides the user (model, fold...).

    Returns
    -------
    The frame with the rank column (UInt32 when derived), in the input row
    order, of the same kind as ``recs``.

    Notes
    -----
    The tie rule is the same here, in :func:`polars_rankmetrics.evaluate`
    and for every id dtype: equal scores are ordered by the item id's value,
    as text for String, Categorical and Enum ids (an Enum's category order
    is ignored; trec_eval compares docnos as strings), as a number for
    integer and float ids. Given ranks may be integers of any width (a rank
    above 2^32 stays exact); ``k`` is a Python or NumPy integer.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankmetrics as prm
    >>> recs = pl.DataFrame({
    ...     "user": [1, 1, 1, 2],
    ...     "item": ["a", "b", "c", "a"],
    ...     "score": [0.2, 0.9, 0.2, 0.5],
    ... })
    >>> recs.rank.positions(score="score", k=2).sort("user", "rank")
    shape: (3, 4)
    ┌──────┬──────┬───────┬──────┐
    │ user ┆ item ┆ score ┆ rank │
    │ ---  ┆ ---  ┆ ---   ┆ ---  │
    │ i64  ┆ str  ┆ f64   ┆ u32  │
    ╞══════╪══════╪═══════╪══════╡
    │ 1    ┆ b    ┆ 0.9   ┆ 1    │
    │ 1    ┆ c    ┆ 0.2   ┆ 2    │
    │ 2    ┆ a    ┆ 0.5   ┆ 1    │
    └──────┴──────┴───────┴──────┘
    """
    k = v.check_cutoff(k)
    lf = to_lazy(recs, name="recs")
    spec: RecsSpec = RecsSpec(user, item, rank, score, tuple(as_list(by)), ties, duplicates)
    schema = lf.collect_schema()
    # with a score, rank is the column written: it must not overwrite another role
    check_roles(user=user, item=item, by=spec.by, recs_only={"rank": rank, "score": score})
    check_no_reserved(schema.names(), frame="recs")
    check_recs_schema(schema, spec)
    run_lengths = lengths_in_rank_order(recs, spec)
    # the top-k ranking from scores hands its rows back in no particular order: number
    # the input's rows to give them back in it
    reorder = score is not None and k is not None
    ranked: pl.LazyFrame = with_positions(
        lf.with_row_index(_INPUT_ROW) if reorder else lf, spec, k, run_lengths=run_lengths
    )
    if reorder:
        ranked = ranked.sort(_INPUT_ROW).drop(_INPUT_ROW)
    in_memory = isinstance(recs, pl.DataFrame)
    lists: list[tuple[pl.LazyFrame, list[v.DataCheck]]] = list_checks(
        ranked, spec, in_memory=in_memory
    )
    checked = v.guard(ranked, [(lf, recs_checks(spec, schema, in_memory=in_memory)), *lists])
    return like(recs, checked)


@dataclass(frozen=True)
class TruthSpec:
    """Column roles and conventions for a ground-truth frame."""

    user: str
    item: str
    relevance: str | None
    relevance_level: float | None
    shared_by: tuple[str, ...]

    @property
    def grade(self) -> str:
        """Name of the graded-relevance column in labeled frames."""
        return self.relevance or DEFAULT_RELEVANCE


def check_truth_schema(schema: pl.Schema, spec: TruthSpec) -> None:
    """Schema-level checks of a truth frame."""
    roles = {"user": spec.user, "item": spec.item}
    if spec.relevance is not None:
        roles["relevance"] = spec.relevance
    v.require_columns(schema, roles, frame="truth")
    if spec.relevance is not None:
        v.require_numeric(schema, spec.relevance, frame="truth", role="relevance")
    level = spec.relevance_level
    if level is not None and not math.isfinite(level):
        # NaN compares false with every grade: every metric would silently be null
        raise ValueError(f"relevance_level must be a finite number, got {level!r}")


def truth_checks(
    lf: pl.LazyFrame, spec: TruthSpec, schema: pl.Schema, *, in_memory: bool = False
) -> list[tuple[pl.LazyFrame, list[v.DataCheck]]]:
    """Data checks on the truth: no nulls or NaN, each (user, item) judged once.

    ``in_memory``: ``lf`` reads a frame in memory (see
    :func:`polars_rankmetrics._validation.duplicate_check`).
    """
    keys = [*spec.shared_by, spec.user, spec.item]
    columns = {"user": spec.user, "item": spec.item}
    columns.update({f"by[{i}]": name for i, name in enumerate(spec.shared_by)})
    show = tuple(keys)
    if spec.relevance is not None:
        columns["relevance"] = spec.relevance
        show = (*keys, spec.relevance)
    checks = v.null_checks("truth", columns, in_memory=in_memory)
    if spec.relevance is not None and schema[spec.relevance].is_float():
        checks.append(v.nan_check("truth", spec.relevance, "relevance", show, in_memory=in_memory))
    duplicates = v.duplicate_check(
        "truth", keys, show, hint=": judge each item once", in_memory=in_memory
    )
    # on a scan the row-by-row checks stream while the duplicate check waits for its screen
    return [(lf, checks), (lf, [duplicates])]


def labeled_truth(
    lf: pl.LazyFrame,
    spec: TruthSpec,
    *,
    ideal: bool = True,
    names: tuple[str, str, str] | None = None,
) -> pl.LazyFrame:
    """The truth rows with a positive grade, with the grade and the binary label.

    Rows with relevance <= 0 can never change a metric (they gain nothing and
    are not relevant), so they are dropped here, once. ``ideal=True`` adds each
    item's position in its user's ideal list (one window over the truth).
    ``names``: the (grade, label, ideal position) columns to write, by default
    the public ones of :func:`relevance` (``evaluate`` uses private names that no
    input column can clash with).
    """
    grade_name, relevant_name, ideal_name = names or (spec.grade, IS_RELEVANT, IDEAL_RANK)
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


def expand_over_groups(
    truth: pl.LazyFrame, recs: pl.LazyFrame, recs_only_by: Sequence[str], shared_by: Sequence[str]
) -> pl.LazyFrame:
    """Repeat the truth for every group (e.g. model) that only the recommendations have.

    Every model is judged against the same truth, so a user it skipped is still
    one of its users (scored 0).
    """
    if not recs_only_by:
        return truth
    groups = recs.select(*shared_by, *recs_only_by).unique()
    if shared_by:
        return truth.join(groups, on=list(shared_by), how="inner")
    return truth.join(groups, how="cross")


def prepare(
    recs: pl.DataFrame | pl.LazyFrame,
    truth: pl.DataFrame | pl.LazyFrame,
    recs_spec: RecsSpec,
    truth_spec_args: tuple[str | None, float | None],
    *,
    recs_row_checks: bool = True,
) -> tuple[pl.LazyFrame, pl.LazyFrame, TruthSpec, list[tuple[pl.LazyFrame, list[v.DataCheck]]]]:
    """Validate both frames' schemas and return them lazy, with key dtypes unified.

    The key-dtype rule is :func:`polars_rankmetrics._validation.key_dtype`
    (documented in :func:`relevance`'s Notes and docs/DESIGN.md); the data
    checks read the frames as given, so that their example rows show the
    user's values.

    Returns the recommendations, the truth, the truth spec (``by`` columns
    present in both frames become part of the join key) and the data checks
    of both inputs for :func:`polars_rankmetrics._validation.guard`.
    ``recs_row_checks=False`` leaves out :func:`recs_checks` (the caller checks
    the rows its measures read instead: :func:`cut_checks`).
    """
    recs_lf = to_lazy(recs, name="recs")
    truth_lf = to_lazy(truth, name="truth")
    recs_schema = recs_lf.collect_schema()
    truth_schema = truth_lf.collect_schema()
    check_recs_schema(recs_schema, recs_spec)
    relevance_column, level = truth_spec_args
    if level is not None:
        level = v.as_number(level, what="relevance_level")
    shared_by = tuple(name for name in recs_spec.by if name in truth_schema)
    truth_spec = TruthSpec(recs_spec.user, recs_spec.item, relevance_column, level, shared_by)
    check_truth_schema(truth_schema, truth_spec)
    keys = [*shared_by, recs_spec.user, recs_spec.item]
    given_recs, given_truth = recs_lf, truth_lf
    recs_lf, truth_lf, recs_key_checks, truth_key_checks = v.unify_key_dtypes(
        recs_lf, truth_lf, keys, recs_schema=recs_schema, truth_schema=truth_schema
    )
    # the data checks read the frames as given: the example rows show the user's values
    recs_in_memory = isinstance(recs, pl.DataFrame)
    row_checks = recs_checks(recs_spec, recs_schema, in_memory=recs_in_memory)
    checks = [
        (given_recs, row_checks if recs_row_checks else []),
        *truth_checks(
            given_truth, truth_spec, truth_schema, in_memory=isinstance(truth, pl.DataFrame)
        ),
        (given_recs, recs_key_checks),
        (given_truth, truth_key_checks),
    ]
    return recs_lf, truth_lf, truth_spec, checks


def relevance(
    recs: FrameT,
    truth: pl.DataFrame | pl.LazyFrame,
    *,
    user: str = "user",
    item: str = "item",
    rank: str = "rank",
    relevance: str | None = None,
    relevance_level: float | None = None,
    by: str | Sequence[str] | None = None,
) -> FrameT:
    """Label ranked recommendations with the truth: the input of the metric expressions.

    Returns every recommendation row plus, for each user, one row per relevant
    truth item that was not recommended (its ``rank`` and other recommendation
    columns null), so that ``group_by(user).agg(prm.<metric>(k))`` sees each
    user's whole truth. Added columns:

    * ``rel`` (or the name given as ``relevance``): Float64 graded relevance,
      0.0 for unjudged items and relevance <= 0;
    * ``is_relevant``: Boolean, ``rel > 0`` and ``rel >= relevance_level``;
    * ``n_relevant``: UInt32, the user's number of relevant items (``m_u``);
    * ``ideal_rank``: UInt32, the item's position in the user's ideal list
      (truth grades descending; null for items with no positive grade), which
      :func:`polars_rankmetrics.ndcg` reads for the ideal DCG.

    Parameters
    ----------
    recs
        Ranked recommendations (see :func:`positions`).
    truth
        One row per judged (user, item).
    relevance
        Truth column with graded relevance; ``None``: every truth row has rel 1.
    relevance_level
        Minimum grade counted as relevant by the binary metrics (trec_eval
        ``-l``); graded NDCG still uses the raw grades.
    by
        List-identifying columns besides the user. Those also in ``truth``
        join with it (folds); those only in ``recs`` (models) share the truth.

    Notes
    -----
    Key columns (user, item and shared ``by`` columns) are compared by value,
    with one rule everywhere: String, Categorical and Enum ids as their
    text; integer ids of any width and signedness as numbers, in a dtype
    holding both sides (UInt64 against Int64: Int128, so no id overflows);
    float ids as integers (they must be whole numbers: pandas stores an
    integer column with a missing value as float64). A string id against a
    numeric id is refused with a ``TypeError``: nothing could match and every
    score would silently be 0. The key columns of the result have the
    compared dtype.

    Users of the truth without recommendations appear with null ranks and so
    score 0; users without relevant truth get ``n_relevant = 0`` and null
    metrics. Rows are sorted by (by..., user, rank, item) with unrecommended
    items last.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankmetrics as prm
    >>> ranked = pl.DataFrame({"user": [1, 1], "item": ["a", "b"], "rank": [1, 2]})
    >>> truth = pl.DataFrame({"user": [1, 1, 2], "item": ["b", "z", "y"]})
    >>> labeled = ranked.rank.relevance(truth)
    >>> labeled
    shape: (4, 7)
    ┌──────┬──────┬──────┬─────┬─────────────┬────────────┬────────────┐
    │ user ┆ item ┆ rank ┆ rel ┆ is_relevant ┆ n_relevant ┆ ideal_rank │
    │ ---  ┆ ---  ┆ ---  ┆ --- ┆ ---         ┆ ---        ┆ ---        │
    │ i64  ┆ str  ┆ i64  ┆ f64 ┆ bool        ┆ u32        ┆ u32        │
    ╞══════╪══════╪══════╪═════╪═════════════╪════════════╪════════════╡
    │ 1    ┆ a    ┆ 1    ┆ 0.0 ┆ false       ┆ 2          ┆ null       │
    │ 1    ┆ b    ┆ 2    ┆ 1.0 ┆ true        ┆ 2          ┆ 1          │
    │ 1    ┆ z    ┆ null ┆ 1.0 ┆ true        ┆ 2          ┆ 2          │
    │ 2    ┆ y    ┆ null ┆ 1.0 ┆ true        ┆ 1          ┆ 1          │
    └──────┴──────┴──────┴─────┴─────────────┴────────────┴────────────┘
    >>> labeled.group_by("user").agg(prm.average_precision(2), prm.ndcg(2)).sort("user")
    shape: (2, 3)
    ┌──────┬─────────────────────┬──────────┐
    │ user ┆ average_precision@2 ┆ ndcg@2   │
    │ ---  ┆ ---                 ┆ ---      │
    │ i64  ┆ f64                 ┆ f64      │
    ╞══════╪═════════════════════╪══════════╡
    │ 1    ┆ 0.25                ┆ 0.386853 │
    │ 2    ┆ 0.0                 ┆ 0.0      │
    └──────┴─────────────────────┴──────────┘
    """
    spec: RecsSpec = RecsSpec(user, item, rank, None, tuple(as_list(by)))
    check_roles(
        user=user,
        item=item,
        by=spec.by,
        recs_only={"rank": rank},
        truth_only={"relevance": relevance},
    )
    if relevance in (IS_RELEVANT, N_RELEVANT, IDEAL_RANK):
        raise ValueError(
            f"relevance={relevance!r} is the name of a column this step adds; "
            "rename the truth's relevance column"
        )
    recs_lf, truth_lf, truth_spec, checks = prepare(recs, truth, spec, (relevance, relevance_level))
    schema = recs_lf.collect_schema()
    check_no_reserved(schema.names(), frame="recs")
    added = [truth_spec.grade, IS_RELEVANT, N_RELEVANT, IDEAL_RANK]
    v.check_no_name_clash(schema, added, frame="recs")
    recs_only_by = [name for name in spec.by if name not in truth_spec.shared_by]
    relevant_truth = expand_over_groups(
        labeled_truth(truth_lf, truth_spec), recs_lf, recs_only_by, truth_spec.shared_by
    )
    keys = [*spec.by, user, item]
    labeled = (
        recs_lf.join(relevant_truth, on=keys, how="full", coalesce=True)
        .with_columns(
            pl.col(truth_spec.grade).fill_null(0.0),
            pl.col(IS_RELEVANT).fill_null(value=False),
        )
        .with_columns(
            pl.col(IS_RELEVANT).sum().over(spec.list_keys).cast(pl.UInt32).alias(N_RELEVANT)
        )
        .select(*schema.names(), *added)
        .sort([*spec.list_keys, rank, item], nulls_last=True)
    )
    checks.extend(list_checks(recs_lf, spec, in_memory=isinstance(recs, pl.DataFrame)))
    return like(recs, v.guard(labeled, checks))
