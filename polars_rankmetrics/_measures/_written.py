"""Measures users write: per-row terms and a per-user value, turned into registry records.

A written measure says which rows of a user's list each of its sums runs over
(:data:`Rows`), the term each row adds (a Polars expression over the columns
:class:`Row` offers) and the user's value from those sums within k (an
expression over what :class:`User` offers). From that one declaration this
module derives what a built-in measure declares by hand
(:class:`~polars_rankmetrics._measures._registry.Measure`): the tables and
columns it reads (from the attributes its expressions touch), its partial sums,
its finals and its curve step (the same terms, summed down the list). So a
written measure runs wherever a built-in one does: ``evaluate`` eager, lazy
and streaming, the namespaces, ``compare``, ``curves``, the command line and
Spark.

The declaration is checked once, when it is registered: the expressions are
built with the parameters' defaults, which finds a sum the value reads but
nobody declared, a column the rows do not have, or a value that reads k
without requiring a cutoff, before any data is read.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import polars as pl

from polars_rankmetrics._measures._curve import CurveState, CurveStep, CurveTable
from polars_rankmetrics._measures._registry import (
    GRADE,
    HIT_INDEX,
    N_NONRELEVANT,
    N_RELEVANT,
    NONRELEVANT_ABOVE,
    RELEVANT,
    RELEVANT_ABOVE,
    UNJUDGED_ABOVE,
    Context,
    Cutoff,
    Direction,
    Input,
    Measure,
    Param,
    ParamValue,
    Partial,
)
from polars_rankmetrics.conventions import resolve

__all__ = [
    "AGGREGATIONS",
    "ROWS",
    "Row",
    "Rows",
    "Sum",
    "User",
    "WrittenAggregation",
    "written_measure",
]

Rows = Literal["hits", "list", "judgements"]
ROWS: tuple[Rows, ...] = ("hits", "list", "judgements")
WrittenAggregation = Literal["mean", "pooled", "sum"]
AGGREGATIONS: tuple[WrittenAggregation, ...] = ("mean", "pooled", "sum")

# A term: an expression of one row, or a number every row adds (1 counts the rows).
Term = Callable[["Row"], pl.Expr | float | bool] | float
Value = Callable[["User"], pl.Expr | tuple[pl.Expr, pl.Expr]]

_NAME = re.compile(r"[a-z][a-z0-9_]*")

# what each table holds for a term to read, and the input a column asks of evaluate's
# plan (the curve tables hold every column already)
_COLUMNS: dict[Rows, dict[str, Input | None]] = {
    "hits": {
        "position": None,
        "grade": "grades",
        "relevant": None,
        "relevant_above": "hit_index",
        "n_relevant": "n_relevant_on_hits",
    },
    "list": {"position": None},
    "judgements": {
        "position": None,
        "grade": "grades",
        "relevant": None,
        "relevant_above": None,
        "nonrelevant_above": None,
        "unjudged_above": None,
        "n_relevant": None,
        "n_nonrelevant": None,
    },
}
# each table's own input (hits is always built) and evaluate's partials field for it
_TABLE_INPUT: dict[Rows, Input] = {"hits": "hits", "list": "list", "judgements": "judgements"}
_CURVE_TABLE: dict[Rows, CurveTable] = {"hits": "hits", "list": "list", "judgements": "judgements"}


@dataclass(frozen=True)
class Sum:
    """One per-user sum of a written measure: ``term`` added up over ``rows`` within k.

    ``rows``: ``"hits"`` (the recommended items with a positive grade in the
    truth, each at its position), ``"list"`` (every recommended row) or
    ``"judgements"`` (every recommended item with a truth row, any grade).
    ``term``: a function of a :class:`Row` giving the row's term (a Polars
    expression; a Boolean counts 1 where true), or a number every row adds
    (``1.0`` counts the rows). A null term adds nothing.
    """

    rows: Rows
    term: Term


class _Reads:
    """What one build of a measure's expressions read: row columns, user columns, k."""

    def __init__(self) -> None:
        self.columns: set[tuple[Rows, str]] = set()
        self.user: set[str] = set()
        self.sums: set[str] = set()
        self.k = False


class Row:
    """The columns one row offers its term, as Polars expressions.

    Which columns exist depends on the rows the sum runs over: ``position``
    everywhere; on ``"hits"`` and ``"judgements"`` also ``grade``,
    ``relevant``, ``relevant_above`` and ``n_relevant``; on ``"judgements"``
    also ``nonrelevant_above``, ``unjudged_above`` and ``n_nonrelevant``.
    Reading another one is refused when the measure is registered.
    """

    def __init__(self, rows: Rows, ctx: Context, reads: _Reads) -> None:
        self._rows, self._ctx, self._reads = rows, ctx, reads

    def _column(self, name: str, expression: pl.Expr) -> pl.Expr:
        if name not in _COLUMNS[self._rows]:
            offered = ", ".join(_COLUMNS[self._rows])
            raise AttributeError(
                f"rows {self._rows!r} have no column {name!r} (they offer: {offered})"
            )
        self._reads.columns.add((self._rows, name))
        return expression

    @property
    def position(self) -> pl.Expr:
        """The row's position in the list, 1 at the top (Int64)."""
        return self._column("position", pl.col(self._ctx.rank).cast(pl.Int64))

    @property
    def grade(self) -> pl.Expr:
        """The item's grade in the truth (Float64; 1.0 for every row without ``relevance``)."""
        return self._column("grade", pl.col(GRADE))

    @property
    def relevant(self) -> pl.Expr:
        """Whether the item is relevant: grade > 0 and >= ``relevance_level`` (Boolean)."""
        return self._column("relevant", pl.col(RELEVANT))

    @property
    def relevant_above(self) -> pl.Expr:
        """The relevant rows at or above this one in the list, this one included (Int64)."""
        column = HIT_INDEX if self._rows == "hits" else RELEVANT_ABOVE
        return self._column("relevant_above", pl.col(column).cast(pl.Int64))

    @property
    def nonrelevant_above(self) -> pl.Expr:
        """Judged non-relevant rows (grade >= 0, not relevant) at or above this one (Int64)."""
        return self._column("nonrelevant_above", pl.col(NONRELEVANT_ABOVE).cast(pl.Int64))

    @property
    def unjudged_above(self) -> pl.Expr:
        """Rows with a negative grade (pooled, unjudged) at or above this one (Int64)."""
        return self._column("unjudged_above", pl.col(UNJUDGED_ABOVE).cast(pl.Int64))

    @property
    def n_relevant(self) -> pl.Expr:
        """m_u, the user's relevant items in the whole truth (Int64)."""
        return self._column("n_relevant", pl.col(N_RELEVANT).cast(pl.Int64))

    @property
    def n_nonrelevant(self) -> pl.Expr:
        """The user's judged non-relevant items in the whole truth (Int64)."""
        return self._column("n_nonrelevant", pl.col(N_NONRELEVANT).fill_null(0).cast(pl.Int64))

    def param(self, name: str) -> ParamValue:
        """The value of parameter ``name`` in this metric string (its default if not written)."""
        return _param(self._ctx, name)

    def number(self, name: str) -> float:
        """The numeric parameter ``name``, as a float (a word parameter is refused)."""
        return _number(self._ctx, name)


class User:
    """What the per-user value may read: the sums, the user's truth counts, k, parameters."""

    def __init__(
        self, ctx: Context, measure: str, sums: Mapping[str, Sum], reads: _Reads, k: pl.Expr
    ) -> None:
        self._ctx, self._measure, self._sums, self._reads, self._k = ctx, measure, sums, reads, k

    def sum(self, name: str) -> pl.Expr:
        """The sum called ``name`` over the user's rows within k (Float64; 0 without rows)."""
        if name not in self._sums:
            raise KeyError(
                f"measure {self._measure!r} reads the sum {name!r}, which it does not declare "
                f"(its sums: {', '.join(self._sums) or 'none'})"
            )
        self._reads.sums.add(name)
        return pl.col(_sum_column(self._ctx, self._measure, name))

    @property
    def n_relevant(self) -> pl.Expr:
        """m_u, the user's relevant items in the whole truth (Int64)."""
        self._reads.user.add("n_relevant")
        return pl.col(N_RELEVANT).cast(pl.Int64)

    @property
    def n_nonrelevant(self) -> pl.Expr:
        """The user's judged non-relevant items (grade >= 0, not relevant) in the truth (Int64)."""
        self._reads.user.add("n_nonrelevant")
        return pl.col(N_NONRELEVANT).fill_null(0).cast(pl.Int64)

    @property
    def k(self) -> pl.Expr:
        """The cutoff k (Float64); a measure that reads it declares ``cutoff="required"``."""
        self._reads.k = True
        return self._k

    def param(self, name: str) -> ParamValue:
        """The value of parameter ``name`` in this metric string (its default if not written)."""
        return _param(self._ctx, name)

    def number(self, name: str) -> float:
        """The numeric parameter ``name``, as a float (a word parameter is refused)."""
        return _number(self._ctx, name)


def _param(ctx: Context, name: str) -> ParamValue:
    if name not in ctx.params:
        known = ", ".join(ctx.params) or "none"
        raise KeyError(f"no parameter {name!r} (the measure's parameters: {known})")
    return ctx.params[name]


def _number(ctx: Context, name: str) -> float:
    value = _param(ctx, name)
    if not isinstance(value, (int, float)):
        raise TypeError(f"parameter {name!r} is the word {value!r}, not a number: use param()")
    return float(value)


def _sum_column(ctx: Context, measure: str, name: str) -> str:
    return ctx.name(f"{measure}.{name}")


@dataclass(frozen=True)
class _Written:
    """The declaration, and what its expressions read (found when it was registered)."""

    name: str
    sums: Mapping[str, Sum]
    value: Value
    aggregation: WrittenAggregation
    reads: _Reads = field(compare=False)

    def term(self, row: Row, sum_: Sum) -> pl.Expr:
        term = sum_.term(row) if callable(sum_.term) else sum_.term
        if isinstance(term, pl.Expr):
            return term.cast(pl.Float64)
        if isinstance(term, (bool, int, float)):
            return pl.lit(float(term), pl.Float64)
        raise TypeError(
            f"measure {self.name!r}: a term must be a Polars expression or a number, "
            f"got {type(term).__name__}"
        )

    def parts(self, user: User) -> dict[str, pl.Expr]:
        """The value's parts by suffix, defined for users with a relevant item only.

        A user without one (counted by ``users_without_truth``) gets the
        measure's ``fill`` instead, as every built-in measure of the truth:
        its formula would divide by m_u = 0.
        """
        value = self.value(user)
        defined = pl.col(N_RELEVANT) > 0
        if self.aggregation == "pooled":
            if not (isinstance(value, tuple) and len(value) == 2):
                raise TypeError(
                    f"measure {self.name!r} is pooled: its value gives (numerator, denominator)"
                )
            numerator, denominator = (_float(self.name, part) for part in value)
            return {
                "num": pl.when(defined).then(numerator),
                "den": pl.when(defined).then(denominator),
            }
        if isinstance(value, tuple):
            raise TypeError(
                f"measure {self.name!r}: its value gives one expression (a pair only when "
                "aggregation='pooled')"
            )
        return {"": pl.when(defined).then(_float(self.name, value))}


def _float(name: str, value: object) -> pl.Expr:
    if not isinstance(value, pl.Expr):
        raise TypeError(
            f"measure {name!r}: its value must be a Polars expression, got {type(value).__name__}"
        )
    return value.cast(pl.Float64)


def _partials(written: _Written, rows: Rows) -> Callable[[Context], list[Partial]]:
    def partials(ctx: Context) -> list[Partial]:
        return [
            Partial.sum_of(
                _sum_column(ctx, written.name, name),
                written.term(Row(rows, ctx, _Reads()), sum_),
                ctx.within(),
            )
            for name, sum_ in written.sums.items()
            if sum_.rows == rows
        ]

    return partials


def _finals(written: _Written) -> Callable[[Context], Mapping[str, pl.Expr]]:
    def finals(ctx: Context) -> Mapping[str, pl.Expr]:
        k = pl.lit(None, pl.Float64) if ctx.k is None else pl.lit(float(ctx.k), pl.Float64)
        return written.parts(User(ctx, written.name, written.sums, _Reads(), k))

    return finals


# a horizon past every list: the value reads k, so it changes at every position
_EVERY_POSITION = pl.lit(2**62, pl.Int64)


def _curve(written: _Written) -> Callable[[Context], CurveStep]:
    def curve(ctx: Context) -> CurveStep:
        states = tuple(
            CurveState(
                _sum_column(ctx, written.name, name),
                _CURVE_TABLE[sum_.rows],
                written.term(Row(sum_.rows, ctx, _Reads()), sum_),
            )
            for name, sum_ in written.sums.items()
        )

        def value(k: pl.Expr) -> Mapping[str, pl.Expr]:
            user = User(ctx, written.name, written.sums, _Reads(), k.cast(pl.Float64))
            return written.parts(user)

        return CurveStep(states, value, horizon=_EVERY_POSITION if written.reads.k else None)

    return curve


def _per_user_value(aggregation: WrittenAggregation) -> Callable[[Mapping[str, pl.Expr]], pl.Expr]:
    def value(parts: Mapping[str, pl.Expr]) -> pl.Expr:
        if aggregation == "pooled":
            # a counted user with nothing to pool (denominator 0) scores 0, as pooled_recall
            den = parts["den"]
            return pl.when(den > 0).then(parts["num"] / den).when(den.is_not_null()).then(0.0)
        return parts[""]

    return value


def _probe(written: _Written, cutoff: Cutoff, params: Sequence[Param]) -> _Reads:
    """Build every expression once with the defaults, recording what they read."""
    reads = written.reads
    defaults = {param.name: param.default for param in params}
    ctx = Context(None if cutoff == "none" else 10, defaults, resolve(), rank="__prm_rank")
    try:
        for sum_ in written.sums.values():
            written.term(Row(sum_.rows, ctx, reads), sum_)
        written.parts(User(ctx, written.name, written.sums, reads, pl.lit(10.0)))
    except (AttributeError, KeyError) as error:
        message = error.args[0] if error.args else str(error)
        raise ValueError(f"measure {written.name!r}: {message}") from None
    unread = [name for name in written.sums if name not in reads.sums]
    if unread:
        raise ValueError(f"measure {written.name!r}: its value reads none of the sums {unread}")
    if reads.k and cutoff != "required":
        raise ValueError(
            f"measure {written.name!r}: its value reads k, so it needs a cutoff: declare "
            "cutoff='required'"
        )
    return reads


def _inputs(reads: _Reads, sums: Mapping[str, Sum]) -> frozenset[Input]:
    inputs: set[Input] = {"hits"}
    inputs.update(_TABLE_INPUT[sum_.rows] for sum_ in sums.values())
    for rows, column in reads.columns:
        needed = _COLUMNS[rows][column]
        if needed is not None:
            inputs.add(needed)
    if "n_nonrelevant" in reads.user:
        inputs.add("n_nonrelevant")
    return frozenset(inputs)


def written_measure(
    name: str,
    *,
    sums: Mapping[str, Sum],
    value: Value,
    direction: Direction,
    doc: str,
    cutoff: Cutoff,
    params: Sequence[Param],
    aggregation: WrittenAggregation,
    fill: float | None,
    aliases: Sequence[str],
    modules: Sequence[str],
) -> Measure:
    """The registry record of a measure a user wrote (see :mod:`polars_rankmetrics.measures`).

    ``modules``: the modules its functions come from (Spark ships them to
    its workers by value).
    """
    _check_declaration(name, sums, aggregation, fill, aliases)
    written = _Written(name, dict(sums), value, aggregation, _Reads())
    reads = _probe(written, cutoff, params)
    tables = {sum_.rows for sum_ in sums.values()}
    return Measure(
        name=name,
        direction=direction,
        doc=doc,
        aliases=tuple(aliases),
        cutoff=cutoff,
        params=tuple(params),
        inputs=_inputs(reads, sums),
        # a sum over every row of the list (or every judged row) sees a repeated item
        repeats="hits" if tables == {"hits"} else "list",
        hit_partials=_partials(written, "hits"),
        list_partials=_partials(written, "list"),
        judgement_partials=_partials(written, "judgements"),
        finals=_finals(written),
        aggregation=aggregation,
        fill=fill,
        per_user_value=_per_user_value(aggregation),
        curve=None if cutoff == "none" else _curve(written),
        written_in=tuple(modules),
    )


def _check_declaration(
    name: str,
    sums: Mapping[str, Sum],
    aggregation: str,
    fill: float | None,
    aliases: Sequence[str],
) -> None:
    for label in (name, *aliases):
        if not isinstance(label, str) or not _NAME.fullmatch(label):
            raise ValueError(
                f"a measure's name must be lower case letters, digits and '_', starting with a "
                f"letter (it is written in metric strings: 'name@k'), got {label!r}"
            )
    if not isinstance(sums, Mapping) or not sums:
        raise ValueError(
            f"measure {name!r} declares no sums: give at least one, e.g. "
            "{'hits': Sum('hits', lambda row: row.relevant)}"
        )
    for sum_name, sum_ in sums.items():
        if not isinstance(sum_, Sum):
            raise TypeError(f"measure {name!r}: sum {sum_name!r} must be a Sum, got {sum_!r}")
        if sum_.rows not in ROWS:
            raise ValueError(
                f"measure {name!r}: sum {sum_name!r} runs over rows {sum_.rows!r}; "
                f"rows are one of {ROWS}"
            )
        if not _NAME.fullmatch(sum_name):
            raise ValueError(
                f"measure {name!r}: a sum's name is lower case letters, digits and '_', "
                f"got {sum_name!r}"
            )
    if aggregation not in AGGREGATIONS:
        raise ValueError(
            f"measure {name!r}: aggregation must be one of {AGGREGATIONS}, got {aggregation!r}"
        )
    if fill is not None and not (isinstance(fill, (int, float)) and math.isfinite(fill)):
        raise ValueError(f"measure {name!r}: fill must be a finite number or None, got {fill!r}")
