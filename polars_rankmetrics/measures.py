"""Measures you write: declare a per-row term and a per-user value, then use the name anywhere.

A measure is a few Polars expressions: each :class:`Sum` adds up a term over
some rows of the user's list within the cutoff k (the relevant recommended
items, every recommended item, or every judged one), and ``value`` turns the
user's sums into their score. :func:`register_measure` adds it to the same
registry the built-in measures live in, so its name works in every metric
string: :func:`polars_rankmetrics.evaluate` (eager, lazy, streaming), the
``.rank`` namespaces, pandas, :func:`polars_rankmetrics.compare`,
:func:`polars_rankmetrics.curves` (every k in one pass, from the same sums
running down the list), ``rankmetrics`` commands (``--measures my_module.py``)
and :func:`polars_rankmetrics.spark.evaluate`. The users it averages, the
conventions (ties, duplicates, ``relevance_level``...), the checks of the input
and the statistics of ``compare`` are the built-in measures' own.

Examples
--------
Discounted hits: each relevant item in the top k counts 1 / position, over the
user's relevant items (a reciprocal-rank cousin that credits every hit).

>>> import polars as pl
>>> import polars_rankmetrics as prm
>>> from polars_rankmetrics.measures import Measure, Sum, register_measure, unregister_measure
>>> dhits = register_measure(
...     Measure(
...         "dhits",
...         sums={"credit": Sum("hits", lambda row: pl.when(row.relevant).then(1 / row.position))},
...         value=lambda user: user.sum("credit") / user.n_relevant,
...         direction="higher",
...         doc="dhits@k = (1/m_u) sum over relevant i <= k of 1 / i",
...     )
... )
>>> recs = pl.DataFrame({"user": [1, 1, 1, 2, 2], "item": list("abcab"), "rank": [1, 2, 3, 1, 2]})
>>> truth = pl.DataFrame({"user": [1, 1, 2], "item": ["a", "c", "b"]})
>>> prm.evaluate(recs, truth, ["dhits@3", "mrr@3"], per_user=True)
shape: (2, 3)
┌──────┬──────────┬───────┐
│ user ┆ dhits@3  ┆ mrr@3 │
│ ---  ┆ ---      ┆ ---   │
│ i64  ┆ f64      ┆ f64   │
╞══════╪══════════╪═══════╡
│ 1    ┆ 0.666667 ┆ 1.0   │
│ 2    ┆ 0.5      ┆ 0.5   │
└──────┴──────────┴───────┘

User 1: (1/1 + 1/3) / 2 = 0.666667; user 2: (1/2) / 1 = 0.5.

>>> unregister_measure("dhits")
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import polars as pl

from polars_rankmetrics import _powers
from polars_rankmetrics._measures import _registry as registry
from polars_rankmetrics._measures._registry import Cutoff, Direction
from polars_rankmetrics._measures._written import (
    Row,
    Rows,
    Sum,
    User,
    WrittenAggregation,
    written_measure,
)

# documented and pickled under this module, where users import them from
for _class in (Row, Sum, User):
    _class.__module__ = __name__

__all__ = [
    "Direction",
    "Measure",
    "Param",
    "Row",
    "Rows",
    "Sum",
    "User",
    "power",
    "register_measure",
    "registered_measures",
    "unregister_measure",
]


@dataclass(frozen=True)
class Param:
    """A parameter of a measure, written ``name(param=value)`` in a metric string.

    Parameters
    ----------
    name
        Its name in metric strings (``"h"`` in ``"half_life(h=5)@10"``).
    default
        Its value when the metric string does not give one: a number (an
        ``int`` default makes it an integer parameter) or, with ``choices``,
        one of the words.
    doc
        One line for the docs: what it means.
    choices
        The words it takes (a ``str`` default among them); empty: a number.
    check
        Called with each number written in a metric string; returns it (or a
        normalised value) or raises ``ValueError`` naming the parameter.

    Examples
    --------
    >>> from polars_rankmetrics.measures import Param
    >>> Param("h", 5.0, doc="half-life in positions").name
    'h'
    """

    name: str
    default: float | int | str
    doc: str = ""
    choices: tuple[str, ...] = ()
    check: Callable[[float], float] | None = None

    def _declared(self) -> registry.Param:
        if isinstance(self.default, bool) or not isinstance(self.default, (int, float, str)):
            raise TypeError(
                f"parameter {self.name!r}: the default must be a number or a word, "
                f"got {self.default!r}"
            )
        if isinstance(self.default, float) and not math.isfinite(self.default):
            raise ValueError(f"parameter {self.name!r}: the default must be finite")
        kind: type[int] | type[float] | type[str] = float
        if isinstance(self.default, (str, int)):
            kind = type(self.default)
        return registry.Param(
            self.name, kind, self.default, self.doc, check=self.check, choices=tuple(self.choices)
        )


@dataclass(frozen=True)
class Measure:
    """A measure you write: its sums over the rows of each user's list, and its value.

    Parameters
    ----------
    name
        Its name in metric strings (lower case letters, digits, ``_``):
        ``"name@k"``, ``"name(param=v)@k"``. A built-in measure's name is refused.
    sums
        Each sum by name: a :class:`Sum` of a per-row term over ``"hits"``
        (the recommended items with a positive grade, at their positions),
        ``"list"`` (every recommended item) or ``"judgements"`` (every
        recommended item the truth judges, any grade), within the cutoff k.
        Each term reads the row's columns from a :class:`Row`:
        ``position``, ``grade``, ``relevant``, ``relevant_above``,
        ``n_relevant`` (and on judgements ``nonrelevant_above``,
        ``unjudged_above``, ``n_nonrelevant``).
    value
        The user's value from a :class:`User`: ``user.sum(name)``,
        ``user.n_relevant`` (m_u), ``user.n_nonrelevant``, ``user.k`` (the
        cutoff; reading it needs ``cutoff="required"``) and
        ``user.param(name)``. With ``aggregation="pooled"``: a pair
        ``(numerator, denominator)``.
    direction
        Which way is better: ``"higher"``, ``"lower"`` or ``"none"`` (a
        descriptive measure). Gates, one-sided tests and rankings of systems
        read it.
    doc
        One line: what it is and its formula.
    cutoff
        ``"optional"`` (``name@k`` or ``name`` for the whole list),
        ``"required"`` or ``"none"`` (``name`` only).
    params
        Its :class:`Param` s.
    aggregation
        How users combine: ``"mean"`` of the values (users whose value is
        null are left out), ``"pooled"`` (sum of numerators / sum of
        denominators) or ``"sum"``.
    fill
        The value of a user counted without any relevant item (the
        ``users_without_truth`` convention decides who is): their value is not
        computed (it would divide by m_u = 0); ``None`` leaves them out.
    aliases
        Other names for it in metric strings.

    Notes
    -----
    The measure counts the users every measure of the truth counts (see
    :func:`polars_rankmetrics.evaluate`): a user without recommendations has
    every sum 0. Rows are the ranked cut of ``evaluate``: positions from the
    ``rank`` column or from ``score`` under ``ties``, repeats refused (or the
    first kept) as the conventions say. ``ties="average"`` is refused: a
    written measure has no tie-averaged form.
    """

    name: str
    sums: Mapping[str, Sum]
    value: Callable[[User], pl.Expr | tuple[pl.Expr, pl.Expr]]
    direction: Direction
    doc: str = ""
    cutoff: Cutoff = "optional"
    params: Sequence[Param] = ()
    aggregation: WrittenAggregation = "mean"
    fill: float | None = 0.0
    aliases: Sequence[str] = field(default=())


def power(base: float, exponent: pl.Expr) -> pl.Expr:
    """``base ** exponent`` for a term: the same bits on one row as on many.

    Write a constant raised to a column (RBP's ``p^(position - 1)``) with it
    rather than ``p ** (row.position - 1)``: Polars multiplies out a
    one-element exponent of 2 to 9, which differs from its ``pow`` in the last
    bit, so a user evaluated alone (or a row the streaming engine hands over
    alone) would get another last digit than among many users. Whole
    exponents 0 to 9 come from a table of ``math.pow``, the others from
    Polars' ``pow``.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_rankmetrics.measures import power
    >>> def weight(row):  # graded RBP's term: grade times p^(position - 1)
    ...     return row.grade * power(0.8, row.position - 1)
    >>> one_row = pl.DataFrame({"position": [5]})
    >>> one_row.select(power(0.8, pl.col("position") - 1)).item() == 0.8**4
    True
    >>> one_row.select(0.8 ** (pl.col("position") - 1)).item() == 0.8**4
    False
    """
    return _powers.power(base, exponent)


def register_measure(measure: Measure) -> Measure:
    """Add ``measure`` to the registry: its name then works in every metric string.

    The declaration is checked now, by building its expressions once with
    the parameters' defaults: a sum the value reads but does not declare, a
    column its rows lack, a value reading k without a required cutoff, a
    name already taken by a built-in measure. Registering a measure of a name
    you registered before replaces it (a notebook cell run twice).

    Returns the measure, so that it can be kept in a variable where it is
    declared.
    """
    if not isinstance(measure, Measure):
        raise TypeError(
            f"register_measure takes a polars_rankmetrics.measures.Measure, "
            f"got {type(measure).__name__}"
        )
    record = written_measure(
        measure.name,
        sums=measure.sums,
        value=measure.value,
        direction=measure.direction,
        doc=measure.doc or f"{measure.name}: a measure you registered",
        cutoff=measure.cutoff,
        params=[param._declared() for param in measure.params],
        aggregation=measure.aggregation,
        fill=measure.fill,
        aliases=tuple(measure.aliases),
        modules=_modules(measure),
    )
    registry.register_written(record)
    return measure


def unregister_measure(name: str) -> None:
    """Remove the measure you registered as ``name`` (a built-in one is refused)."""
    registry.unregister_written(name)


def registered_measures() -> list[str]:
    """The names of the measures you registered, in the order they were registered."""
    return [measure.name for measure in registry.written_measures()]


def _modules(measure: Measure) -> tuple[str, ...]:
    """The modules the measure's functions come from (Spark ships them to its workers)."""
    functions: list[object] = [measure.value, *(s.term for s in measure.sums.values())]
    functions += [p.check for p in measure.params if p.check is not None]
    modules = {inspect.getmodule(f) for f in functions if callable(f)}
    return tuple(sorted(m.__name__ for m in modules if m is not None))
