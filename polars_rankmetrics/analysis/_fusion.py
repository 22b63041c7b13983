"""The plan of rank fusion, one record per method: what each reads, sums and gives.

:mod:`polars_rankmetrics.analysis.fusion` is the face (its inputs, checks and
the grid search); this module is its engine. A method is one :class:`Method`
record in :data:`METHODS`: whether it reads positions or scores, the term each
run adds for an item, the other aggregations of an item's rows, the fused
score from them and the parameter it reads (``weights``, ``k``). Adding a
method is one record here and its formula in ``fuse``'s docstring. Definitions:
ranx 0.3 (Bassani 2022), ``ranx/fusion`` and ``ranx/normalization``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal

import polars as pl

from polars_rankmetrics import _validation as v
from polars_rankmetrics._sums import exact_sums
from polars_rankmetrics.conventions import FusionMethod, FusionNorm

__all__ = [
    "METHODS",
    "NORMS",
    "RRF_K",
    "WEIGHT",
    "K",
    "Method",
    "contributions",
    "fused",
    "tie_order",
]

NORMS: Final[tuple[FusionNorm, ...]] = ("min-max", "max", "sum", "zmuv", "rank")
"""The normalisations (besides ``None``), spelt as ranx's ``fuse(norm=...)`` spells them."""

RRF_K: Final = 60.0
"""RRF's k when none is given (Cormack, Clarke & Buettcher 2009)."""

# ranx's floor of every normaliser's denominator: a list whose scores are all equal
# normalises to 0 (min-max, sum, zmuv) instead of 0 / 0
_FLOOR: Final = 1e-9

# the columns the plan adds (the reserved prefix: no user column can be one of them)
_POS, _LEN, _VALUE, _FUSED, _RUNS = (
    "__prm_pos",
    "__prm_len",
    "__prm_value",
    "__prm_fused",
    "__prm_runs",
)
WEIGHT, K = "__prm_weight", "__prm_k"  # a row's wsum weight, RRF's k (set by the face)
_CANDIDATES, _ROWS = "__prm_candidates", "__prm_rows"
_TERM, _RETRIEVED, _EVERYONE = "__prm_term", "__prm_retrieved", "__prm_everyone"
# a list's sum, mean, population deviation and rows (the norms sum and zmuv)
_LIST_SUM, _LIST_MEAN, _LIST_STD, _LIST_ROWS = (
    "__prm_list_sum",
    "__prm_list_mean",
    "__prm_list_std",
    "__prm_list_rows",
)


@dataclass(frozen=True)
class Method:
    """One fusion method, as ranx defines it.

    Attributes
    ----------
    name
        As ranx's ``fuse(method=...)`` spells it.
    by_position
        It reads each run's positions (1 = top), not its scores: a
        normalisation keeps a list's order, so none changes it.
    term
        The term a run adds for an item it lists; the terms of an item's rows
        are summed exactly (``None``: no sum, ``picked`` gives the value).
    picked
        The value taken from an item's rows instead of a sum (max, min, median).
    counts_runs
        It reads how many runs list the item (:func:`retrieved`).
    share
        A per-user amount added to every item (bordafuse's points for the
        candidates a run does not list); the plan then counts each user's
        candidates and runs.
    score
        The fused score from the item's sum (:func:`total`), its run count and share.
    parameter
        The keyword the method reads (``"weights"``: wsum; ``"k"``: rrf).
    """

    name: FusionMethod
    score: Callable[[], pl.Expr]
    by_position: bool = False
    term: Callable[[], pl.Expr] | None = None
    picked: Callable[[pl.Expr], pl.Expr] | None = None
    counts_runs: bool = False
    share: Callable[[], pl.Expr] | None = None
    parameter: Literal["weights", "k"] | None = None


def total() -> pl.Expr:
    """The exact sum of the item's terms (or the value picked from its rows)."""
    return pl.col(_TERM)


def retrieved() -> pl.Expr:
    """How many runs list the item, |R_d|."""
    return pl.col(_RETRIEVED).cast(pl.Float64)


def _value() -> pl.Expr:
    return pl.col(_VALUE)


def _inverse_square() -> pl.Expr:
    return 1.0 / pl.col(_POS) ** 2


def _borda_points() -> pl.Expr:
    # a run gives c - p + 1 points at position p of c candidates, and (c - n + 1) / 2 to
    # each candidate missing from its list of n; summed over the runs as: every run's share
    # for the missing (the share, added per user) plus, where a run lists the item, its
    # points less that share
    candidates = pl.col(_CANDIDATES)
    return (candidates - pl.col(_POS) + 1.0) - (candidates - pl.col(_LEN) + 1.0) / 2.0


def _borda_share() -> pl.Expr:
    # R (c + 1) / 2 - rows / 2: every run's points for the candidates it misses
    return (
        pl.col(_RUNS).first() * (pl.col(_CANDIDATES).first() + 1.0) / 2.0
        - pl.col(_ROWS).first() / 2.0
    )


_RECORDS = (
    Method("rrf", total, by_position=True, term=lambda: 1.0 / (pl.col(K) + pl.col(_POS)),
           parameter="k"),
    Method("sum", total, term=_value),
    Method("mnz", lambda: total() * retrieved(), term=_value, counts_runs=True),
    Method("anz", lambda: total() / retrieved(), term=_value, counts_runs=True),
    Method("max", total, picked=pl.Expr.max),
    Method("min", total, picked=pl.Expr.min),
    Method("med", total, picked=pl.Expr.median),
    Method("wsum", total, term=lambda: pl.col(WEIGHT) * pl.col(_VALUE), parameter="weights"),
    Method("bordafuse", lambda: total() + pl.col(_EVERYONE), by_position=True,
           term=_borda_points, share=_borda_share),
    Method("isr", lambda: total() * retrieved(), by_position=True, term=_inverse_square,
           counts_runs=True),
    Method("log_isr", lambda: total() * retrieved().log(), by_position=True,
           term=_inverse_square, counts_runs=True),
)  # fmt: skip

METHODS: Final[Mapping[FusionMethod, Method]] = {record.name: record for record in _RECORDS}
"""Every fusion method's record, by name, in ranx's order of its docs."""


def tie_order(frame: pl.LazyFrame, item: str) -> pl.Expr:
    return v.tie_key(item, frame.collect_schema()[item])


def _position(value: pl.Expr, tie: pl.Expr, group: Sequence[str]) -> pl.Expr:
    """1..n by ``value`` descending, equal values by the item id descending (trec_eval's rule)."""
    return pl.struct(value, tie).rank("ordinal", descending=True).over(group).cast(pl.Float64)


def _normalised(norm: FusionNorm | None, lists: Sequence[str], score: str) -> pl.Expr:
    """Each score normalised within its (run, user) list, as ranx's ``norm`` of that name."""
    s = pl.col(score)
    if norm is None:
        return s
    if norm == "rank":
        # ranx rank_norm: 1 - (position - 1) / length
        return 1.0 - (pl.col(_POS) - 1.0) / pl.col(_LEN)
    low, high = s.min().over(lists), s.max().over(lists)
    if norm == "min-max":
        return (s - low) / pl.max_horizontal(high - low, pl.lit(_FLOOR))
    if norm == "max":
        return s / pl.max_horizontal(high, pl.lit(_FLOOR))
    if norm == "sum":
        spread = pl.col(_LIST_SUM) - low * pl.len().over(lists)
        return (s - low) / pl.max_horizontal(spread, pl.lit(_FLOOR))
    # zmuv: zero mean, unit variance (population deviation, numpy's std)
    return (s - pl.col(_LIST_MEAN)) / pl.max_horizontal(pl.col(_LIST_STD), pl.lit(_FLOOR))


def _with_list_sums(
    frame: pl.LazyFrame, norm: FusionNorm | None, lists: Sequence[str], score: str
) -> pl.LazyFrame:
    """The rows with the sums over their list that ``norm`` reads (``sum``, ``zmuv``).

    Exact sums (fixed point), joined back: a float sum over a list's rows would
    change its last bit with their order, which a lazy input need not keep.
    """
    s = pl.col(score)
    if norm == "sum":
        return frame.join(exact_sums(frame, lists, {_LIST_SUM: s}), on=lists, how="left")
    if norm != "zmuv":
        return frame
    count = pl.len().alias(_LIST_ROWS)
    means = exact_sums(frame, lists, {_LIST_MEAN: s}, also=[count])
    centred = frame.join(
        means.select(*lists, pl.col(_LIST_MEAN) / pl.col(_LIST_ROWS)), on=lists, how="left"
    )
    squares = exact_sums(centred, lists, {_LIST_STD: (s - pl.col(_LIST_MEAN)) ** 2}, also=[count])
    deviation = (pl.col(_LIST_STD) / pl.col(_LIST_ROWS)).sqrt()
    return centred.join(squares.select(*lists, deviation), on=lists, how="left")


def contributions(
    long: pl.LazyFrame, *, method: Method, norm: FusionNorm | None, run: str,
    groups: Sequence[str], item: str, score: str,
) -> pl.LazyFrame:  # fmt: skip
    """Per row: the normalised score, and what the methods by position read."""
    lists = [run, *groups]
    frame = long
    if method.by_position or norm == "rank":
        tie = tie_order(long, item)
        frame = frame.with_columns(
            _position(pl.col(score), tie, lists).alias(_POS), pl.len().over(lists).alias(_LEN)
        )
    if method.share is not None:
        frame = frame.with_columns(
            pl.col(run).n_unique().alias(_RUNS),
            pl.col(item).n_unique().over(groups).alias(_CANDIDATES),
            pl.len().over(groups).alias(_ROWS),
        )
    if not method.by_position:
        frame = _with_list_sums(frame, norm, lists, score)
        frame = frame.with_columns(_normalised(norm, lists, score).alias(_VALUE))
    return frame


def fused(
    frame: pl.LazyFrame, *, method: Method, groups: Sequence[str], item: str,
    score: str, tie: pl.Expr,
) -> pl.LazyFrame:  # fmt: skip
    """One row per (groups..., item): the fused ``score`` and its ``rank`` (1 = top).

    The terms are summed exactly (the rows come from several runs, met in no
    fixed order), so the fused score, and the order of near ties, is the same
    from call to call.
    """
    others = []
    if method.picked is not None:
        others.append(method.picked(pl.col(_VALUE)).alias(_TERM))
    if method.counts_runs:
        others.append(pl.len().alias(_RETRIEVED))
    if method.share is not None:
        others.append(method.share().alias(_EVERYONE))
    keys = [*groups, item]
    terms = {} if method.term is None else {_TERM: method.term()}
    summed = exact_sums(frame, keys, terms, also=others)
    rank = pl.struct(pl.col(_FUSED), tie).rank("ordinal", descending=True).over(groups)
    return (
        summed.with_columns(method.score().alias(_FUSED))
        .select(*keys, pl.col(_FUSED).alias(score), rank.cast(pl.UInt32).alias("rank"))
        .sort([*groups, "rank"])
    )
