"""What a measure of the lists declares: one of three small hook records.

Every measure of the lists is one of three kinds, and its record carries the
formula and nothing else; the shared machinery (the list plan, ``curves``,
Spark) reads the kind and calls the hooks:

:class:`RowMean`
    The mean over the user's list rows within k of a per-row term of the
    item's popularity (novelty, ARP, long-tail share). It reads the
    :class:`Popularity` table its parameters ask for: c_i and N over the whole
    interactions. Curve: running sums of the term down the list. Spark: the
    table is counted once over every user and broadcast to the buckets, which
    then compute the per-user values.
:class:`PerList`
    Any other per-user value, from the user's own list (and history): ILD,
    calibration. ``value`` plans it per coded list, ``curve`` its value at
    every rank of the list. Spark: in the bucket that holds the user (the
    interactions are co-partitioned by user), nothing to merge.
:class:`OfGroup`
    One value per ``by`` group from the exposures x_i (how many lists hold
    item i) and the users with a list (:class:`Exposure`): coverage, Gini,
    personalization. ``value`` is the formula over those statistics, the same
    on one machine, at each k of a curve and on Spark (each bucket emits x_i
    per item and U per group, Spark adds them, the driver finishes).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

import polars as pl

from polars_rankmetrics._names import PREFIX

__all__ = [
    "LIST_CODE",
    "Coded",
    "Count",
    "CurveFrames",
    "Exposure",
    "ExposureStat",
    "Keys",
    "ListHook",
    "ListRequest",
    "OfGroup",
    "PerList",
    "Popularity",
    "PopularityColumns",
    "RowMean",
]

# c_i counts the distinct users with item i (METRICS.md) or its interaction rows (RecTools,
# recommenders)
Count = Literal["users", "interactions"]
ExposureStat = Literal["shown", "total", "ranked", "pairs", "users", "xlogx"]


# the list plan's integer code of a list (by..., user)
LIST_CODE = f"{PREFIX}list"


@dataclass(frozen=True)
class ListRequest:
    """One requested measure of the lists: its output column, cutoff and parameters."""

    label: str
    k: int | None
    params: Mapping[str, float | str | None]

    def number(self, name: str) -> float:
        """A numeric parameter (declared with a default, so never ``None``)."""
        value = self.params[name]
        if value is None or isinstance(value, str):
            raise TypeError(f"parameter {name!r} is not a number: {value!r}")
        return float(value)

    def word(self, name: str) -> str:
        """A parameter that takes one of a few words (``Param.choices``)."""
        value = self.params[name]
        if not isinstance(value, str):
            raise TypeError(f"parameter {name!r} is not a word: {value!r}")
        return value


@dataclass(frozen=True)
class Keys:
    """Column roles of the lists and the interactions.

    ``shared``: the ``by`` columns that ``interactions`` also has (folds,
    time splits); their histories are separate. The other ``by`` columns
    (models) share the whole history. The catalog is one for every group.
    """

    by: tuple[str, ...]
    user: str
    item: str
    rank: str
    shared: tuple[str, ...] = ()

    @property
    def list_keys(self) -> list[str]:
        """The columns identifying one list: the ``by`` groups and the user."""
        return [*self.by, self.user]


# ---------------------------------------------------------------- RowMean


@dataclass(frozen=True)
class Popularity:
    """Which popularity table a :class:`RowMean` reads: how c_i counts, and a head share.

    ``count="users"``: c_i is the number of distinct users with item i and N
    the number of distinct users; ``"interactions"``: the number of
    interaction rows of item i and of all rows. ``head_share``: the head (the
    most popular items whose c_i sum to this share) is marked, for this share.
    """

    count: Count = "users"
    head_share: float | None = None


@dataclass(frozen=True)
class PopularityColumns:
    """The columns beside every list row of a :class:`RowMean`: c_i, N and the head flag."""

    c: pl.Expr
    n: pl.Expr
    head: pl.Expr


@dataclass(frozen=True)
class RowMean:
    """A per-user mean over the list's rows within k of ``term``.

    ``popularity(request)``: the table the term reads; ``term(request,
    columns)``: the row's term (Float64; null where the measure has no value,
    as novelty without interactions: a user whose terms are all null is not
    counted).
    """

    popularity: Callable[[ListRequest], Popularity]
    term: Callable[[ListRequest, PopularityColumns], pl.Expr]


# ---------------------------------------------------------------- PerList


@dataclass(frozen=True)
class CurveFrames:
    """What a :class:`PerList` curve reads, keyed by the list (``list_keys``) and ``position``.

    ``steps``: one row per (list, position it holds) with ``j``, the list's
    rows at or above that position (k_u there), sorted by list and position;
    ``rows``: the list rows (``list_keys``, ``item``, ``position``);
    ``history_keys``: the interactions' key columns (shared ``by``, user);
    ``catalog``: the items with their categories as text (``category``);
    ``weight``: its column of the items' weights in their groups, if any.
    """

    steps: pl.LazyFrame
    rows: pl.LazyFrame
    list_keys: list[str]
    history_keys: list[str]
    item: str
    position: str
    j: str
    category: str | None
    catalog: pl.LazyFrame | None
    history: pl.LazyFrame | None
    weight: str | None = None


@dataclass(frozen=True)
class Coded:
    """The lists with an integer code per list (:data:`LIST_CODE`), for :class:`PerList`.

    ``lists``: one row per list (its key columns and code); ``rows``: the
    cut's rows with the code, within the request's k; ``labeled``: one row
    per (row, category of its item) with the codes of the item and the
    category and the item's share of each (``_shared``'s columns), within k;
    ``table``: the catalog's (item, category) table; ``multi``: some item
    has several categories; ``interactions``: the history, if given.
    """

    keys: Keys
    lists: pl.LazyFrame
    rows: pl.LazyFrame
    labeled: pl.LazyFrame
    table: pl.LazyFrame
    multi: bool
    interactions: pl.LazyFrame | None


@dataclass(frozen=True)
class PerList:
    """A per-user value from the user's own list (and history), planned by ``value``.

    ``value(request, coded)``: a frame of (:data:`LIST_CODE`, ``request.label``)
    over the :class:`Coded` lists; a list without a value has no row or a null.
    ``curve(request, frames)``: ``frames.steps`` with the column
    ``request.label``, the value at each position the list holds (null: not
    counted there). ``labels``: which column of the catalog labels the items
    (``Coded``'s category tables and ``CurveFrames.category``): ``category=``
    (ILD, calibration) or ``group=`` (the exposure-fairness measures).
    """

    value: Callable[[ListRequest, Coded], pl.LazyFrame]
    curve: Callable[[ListRequest, CurveFrames], pl.LazyFrame]
    labels: Literal["category", "group"] = "category"


# ---------------------------------------------------------------- OfGroup


@dataclass(frozen=True)
class Exposure:
    """The statistics of one ``by`` group's exposures at one cutoff, as Float64 expressions.

    With x_i the number of lists whose top k holds item i: ``shown`` the
    items with x_i > 0; ``total`` Σ x_i; ``ranked`` Σ r x_(r) over the shown
    items sorted ascending (r = 1..shown); ``pairs`` Σ x_i (x_i - 1) / 2 (the
    pairs of lists sharing an item); ``users`` U, the lists with an item
    within k; ``length`` k (without a cutoff: the longest list's length);
    ``catalog`` n, the catalog's size; ``xlogx`` Σ x_i ln x_i over the shown
    items (an entropy's).
    """

    shown: pl.Expr
    total: pl.Expr
    ranked: pl.Expr
    pairs: pl.Expr
    users: pl.Expr
    length: pl.Expr
    catalog: pl.Expr
    xlogx: pl.Expr


@dataclass(frozen=True)
class OfGroup:
    """One value per group: ``value`` over the group's :class:`Exposure` statistics.

    ``reads``: the statistics it reads (the others are not computed for it).
    ``patience``: the name of the request's parameter p when x_i is the
    attention the lists give item i, Σ over the lists holding it within k of
    p^(r - 1) at its rank r, rather than their number (``None``).
    """

    value: Callable[[Exposure], pl.Expr]
    reads: frozenset[ExposureStat]
    patience: str | None = None

    def weight(self, request: ListRequest) -> float | None:
        """The patience p of ``request``'s attention, or ``None`` when x_i counts lists.

        p = 1 weighs every slot 1: the count, computed as one (exact integers).
        """
        if self.patience is None:
            return None
        p = request.number(self.patience)
        return None if p == 1.0 else p


ListHook = RowMean | PerList | OfGroup
