"""How a measure's per-user value evolves with the cutoff k: its curve step.

``prm.curves`` draws metric@k for many k in one pass. A measure that has a
cutoff says, in :class:`CurveStep`, how its per-user value follows from the
rows of the user's list down to position k; ``curves`` reads only these
records (no measure's name), so a new measure is drawn by declaring its step.

The model: each user has a few **state** columns (:class:`CurveState`), each a
running reduction (a sum, or a maximum) of per-row terms of one table down the
list: the state at k reduces the rows at positions 1..k. The per-user value at
k is :attr:`CurveStep.value` of the states, of k and of the user's
:data:`~polars_rankmetrics._measures._registry.N_RELEVANT` (m_u). So the value
changes only at the positions of the user's rows, and where its formula reads
k: a formula that reads k must either stop changing past a per-user position
(:attr:`CurveStep.horizon`: ``min(m_u, k)`` stops at m_u) or put its k in
:attr:`CurveStep.divisor` (precision's ``hits / k``), a formula of k and m_u
that ``curves`` evaluates at each requested k directly. The work is then
bounded by the rows and the longest list, never by the value of k.

The tables a state reads (``table``), each sorted by list and position, with
the list keys, the position (``ctx.rank``), :data:`CURVE_LIST` (an integer per
list, for windows down the list: ``expr.cum_prod().over(CURVE_LIST)``) and
:data:`N_RELEVANT` on every row:

``"hits"``
    The recommended truth rows with a positive grade (as evaluate's hits
    table): :data:`GRADE`, :data:`RELEVANT`, :data:`HIT_INDEX` (the running
    count of relevant rows, this one included) and :data:`MAX_GRADE` (the
    truth's largest grade).
``"judgements"``
    Every recommended truth row, any grade, with :data:`GRADE`,
    :data:`RELEVANT`, :data:`N_NONRELEVANT`, :data:`RELEVANT_ABOVE`,
    :data:`NONRELEVANT_ABOVE` and :data:`UNJUDGED_ABOVE` (as evaluate's
    judgements table).
``"list"``
    Every row of the ranked cut, with :data:`GRADE` (null where the item has
    no truth row) and :data:`RELEVANT` (false there).
``"ideal"``
    The user's ideal list: its positive-grade truth items by gain descending,
    the position being the place in that list (its :data:`GRADE`).
``"truth"``
    Every positive-grade truth row of the user (:data:`GRADE`,
    :data:`RELEVANT`), all at position 1: a state over it is a per-user
    constant from k = 1 on (the SNIPS normaliser, a sum over the user's
    relevant items).

When a measure reads the ``"propensity"`` input, the ``"hits"`` and
``"truth"`` rows also carry its :data:`PROPENSITY` and
:data:`POPULARITY_SHARE` columns, and :data:`POPULARITY_RANK` and
:data:`CATALOG_SIZE` (serendipity's), joined as ``evaluate`` joins them.

Before its first row a user's states are 0 (a maximum's terms are >= 0).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Literal

import polars as pl

from polars_rankmetrics._names import PREFIX

__all__ = ["CURVE_LIST", "CURVE_TABLES", "CurveState", "CurveStep", "CurveTable"]

CURVE_LIST = f"{PREFIX}curve_list"  # an integer per list (by..., user) of a curve table

CurveTable = Literal["hits", "judgements", "list", "ideal", "truth"]
CURVE_TABLES: tuple[CurveTable, ...] = ("hits", "judgements", "list", "ideal", "truth")


@dataclass(frozen=True)
class CurveState:
    """One per-user state column: a running reduction of per-row terms down the list.

    ``name``: the column the value reads (``ctx.name(...)`` keeps it apart from
    another measure's); ``table``: the rows it reads; ``term``: each row's
    contribution, an expression over that table (null counts as 0); ``how``:
    ``"sum"`` or ``"max"`` (terms >= 0).
    """

    name: str
    table: CurveTable
    term: pl.Expr
    how: Literal["sum", "max"] = "sum"


@dataclass(frozen=True)
class CurveStep:
    """How a measure's per-user value evolves with k, from per-position states.

    Attributes
    ----------
    states
        The per-user state columns (:class:`CurveState`).
    value
        ``value(k)``: the per-user parts by suffix (as :attr:`Measure.finals`:
        ``""``, ``"num"``/``"den"``, ``"log"``) from the state columns, k (an
        Int64 expression) and :data:`N_RELEVANT`; null where the user is not
        counted at k. Without :attr:`divisor`, this is the part itself; with
        it, the part times the divisor.
    horizon
        A per-user expression (of :data:`N_RELEVANT`): the value reads k at
        every k up to it (``min(m_u, k)``) and not past it. ``None``: the value
        does not read k (beyond :attr:`divisor`).
    divisor
        ``divisor(k)``: a formula of k and :data:`N_RELEVANT` (k a Float64
        expression) that divides every part at k (``hits / k``); ``None``: 1.
        It may grow with k for ever: ``curves`` evaluates it at each requested
        k, once per distinct m_u.
    """

    states: tuple[CurveState, ...]
    value: Callable[[pl.Expr], Mapping[str, pl.Expr]]
    horizon: pl.Expr | None = None
    divisor: Callable[[pl.Expr], pl.Expr] | None = None

    @property
    def tables(self) -> tuple[CurveTable, ...]:
        """The tables the states read, in :data:`CURVE_TABLES` order."""
        wanted = {state.table for state in self.states}
        return tuple(table for table in CURVE_TABLES if table in wanted)
