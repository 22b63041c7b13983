"""Each metric combined over the users of a group, the means the same to the last bit.

How a metric's per-user parts combine is its measure's aggregation
(:class:`AggregationPart`: a mean, a pooled ratio, a geometric mean, a sum or
the group's one value); :func:`aggregate_lf` combines them per ``by`` group.

The mean over users is the same to the last bit in every run: the values
are summed in fixed point (:func:`polars_rankmetrics._sums.fixed_point` and
:func:`polars_rankmetrics._sums.exact_mean`, where the reasons are).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

import polars as pl

from polars_rankmetrics import _measures as registry
from polars_rankmetrics._measures._registry import Aggregation, part_column
from polars_rankmetrics._pipeline.parse import MetricSpec
from polars_rankmetrics._sums import exact_sum, fixed_point

__all__ = [
    "FINISH",
    "POLARS",
    "AggregationPart",
    "Arithmetic",
    "Finish",
    "PolarsArithmetic",
    "Totals",
    "aggregate_lf",
    "aggregation_part",
    "check_parts",
    "decided_by_the_whole_truth",
    "of_all_lists",
    "per_user_values",
]


@dataclass(frozen=True)
class AggregationPart:
    """How one metric's per-user parts combine into its value for a group of users.

    ``kind`` ``"mean"``: mean of the non-null ``columns[0]``; ``"pooled"``:
    ``sum(num) / sum(den)`` (``columns`` = (num, den); null when ``sum(den) = 0``);
    ``"geometric_mean"``: ``exp(mean(log))``; ``"sum"``: sum; ``"group"``: the
    group's one value (the first). Only sums and counts are needed, so another
    engine can combine partial results.
    """

    label: str
    kind: Aggregation
    columns: tuple[str, ...]


def aggregation_part(spec: MetricSpec) -> AggregationPart:
    measure = registry.lookup(spec.name)
    columns = tuple(part_column(spec.label, suffix) for suffix in measure.suffixes)
    return AggregationPart(spec.label, measure.aggregation, columns)


# ---------------------------------------------------------------- the aggregation kinds


class _Divisible(Protocol):
    def __truediv__(self, other: Any) -> Any: ...


T = TypeVar("T", bound=_Divisible)


class Arithmetic(Protocol[T]):
    """The few operations a kind's finish needs, in one engine's column expressions."""

    def where_positive(self, guard: T, value: T) -> T:
        """``value`` where ``guard > 0``, else null."""
        ...

    def exp(self, value: T) -> T:
        """E to the ``value``."""
        ...


@dataclass(frozen=True)
class Totals(Generic[T]):
    """A metric's parts over the users of a group: per part column, its sum and its count.

    The partial of every kind is the same two numbers per part column (the sum
    and the number of users with a value); partials of several partitions of
    the users (Spark's buckets) merge by adding them up.
    """

    sums: tuple[T, ...]
    counts: tuple[T, ...]


def _mean(ops: Arithmetic[T], totals: Totals[T]) -> T:
    return ops.where_positive(totals.counts[0], totals.sums[0] / totals.counts[0])


def _pooled(ops: Arithmetic[T], totals: Totals[T]) -> T:
    # OTTO: pooled over users, sum(num) / sum(den), not a mean of ratios; no evaluated
    # user: null like every other mean, not 0/0 = NaN
    return ops.where_positive(totals.sums[1], totals.sums[0] / totals.sums[1])


def _geometric_mean(ops: Arithmetic[T], totals: Totals[T]) -> T:
    return ops.where_positive(totals.counts[0], ops.exp(totals.sums[0] / totals.counts[0]))


def _sum(ops: Arithmetic[T], totals: Totals[T]) -> T:
    del ops
    return totals.sums[0]


class Finish(Protocol):
    """A kind's finish: its value from the totals, in any engine's arithmetic."""

    def __call__(self, ops: Arithmetic[T], totals: Totals[T]) -> T: ...


FINISH: dict[Aggregation, Finish] = {
    "mean": _mean,
    "pooled": _pooled,
    "geometric_mean": _geometric_mean,
    "sum": _sum,
}
"""Each aggregation kind's value from its :class:`Totals`, for any engine's :class:`Arithmetic`.

One table for every engine: the Polars plan here and Spark's combine of its
buckets' partials call the same formulas. ``"group"`` (one value per group
of lists) is no function of per-user sums: its measures' kind says how they
combine.
"""


class PolarsArithmetic:
    """:class:`Arithmetic` in Polars expressions."""

    def where_positive(self, guard: pl.Expr, value: pl.Expr) -> pl.Expr:
        return pl.when(guard > 0).then(value)

    def exp(self, value: pl.Expr) -> pl.Expr:
        return value.exp()


POLARS = PolarsArithmetic()
"""The Polars arithmetic of :data:`FINISH` (the plan's, and ``curves``')."""


def _combine(part: AggregationPart) -> pl.Expr:
    if part.kind == "group":
        # its group's one value, on every row of the group
        return pl.col(part.columns[0]).first().alias(part.label)
    # sums the same to the last bit whatever order the users come in: the frame has
    # fixed_point's columns of the averaged and pooled parts (summed parts are counts,
    # whose float sums are exact)
    sums = tuple(
        exact_sum(name) if part.kind in _EXACT else pl.col(name).sum() for name in part.columns
    )
    counts = tuple(pl.col(name).count() for name in part.columns)
    return FINISH[part.kind](POLARS, Totals(sums, counts)).alias(part.label)


# the kinds whose value divides a sum of floats: summed exactly (fixed point); a pooled
# part may be a weighted value, not a count (gauc's num: a user's weight times its AUC)
_EXACT: frozenset[Aggregation] = frozenset({"mean", "geometric_mean", "pooled"})


def per_user_values(specs: Sequence[MetricSpec]) -> list[pl.Expr]:
    """Each metric's per-user value from its part columns: ``evaluate(per_user=True)``'s columns.

    With :func:`polars_rankmetrics.evaluation.aggregate` over the same parts, one
    per-user pass gives both the per-user values and the means (the command
    line's ``--per-user``).
    """
    values = []
    for spec in specs:
        measure = registry.lookup(spec.name)
        parts = {suffix: pl.col(part_column(spec.label, suffix)) for suffix in measure.suffixes}
        values.append(measure.value(parts).alias(spec.label))
    return values


def of_all_lists(specs: Sequence[MetricSpec]) -> list[str]:
    """The labels of the metrics that are one number of all the lists together.

    Aggregation ``"group"`` (coverage, Gini, personalization): no user's parts
    hold them, so they cannot be combined from parts computed apart.
    """
    return [spec.label for spec in specs if registry.lookup(spec.name).aggregation == "group"]


def decided_by_the_whole_truth(specs: Sequence[MetricSpec]) -> dict[str, list[str]]:
    """Each metric with parameters that the whole truth decides when not given, and their names.

    :attr:`Param.from_truth` (ERR's ``max_grade``, the largest grade): a plan
    that sees part of the truth at a time cannot decide them alone.
    """
    decided = {
        spec.label: [
            param.name
            for param in registry.lookup(spec.name).params
            if param.from_truth is not None and dict(spec.params).get(param.name) is None
        ]
        for spec in specs
    }
    return {label: names for label, names in decided.items() if names}


def aggregate_lf(parts: pl.LazyFrame, specs: Sequence[MetricSpec], by: list[str]) -> pl.LazyFrame:
    combos = [aggregation_part(spec) for spec in specs]
    exact = [name for c in combos if c.kind in _EXACT for name in c.columns]
    parts = parts.with_columns(fixed_point(exact))
    combined = [_combine(combo) for combo in combos]
    if by:
        return parts.group_by(by).agg(combined).sort(by)
    return parts.select(combined)


def check_parts(schema: pl.Schema, specs: Sequence[MetricSpec], groups: list[str]) -> None:
    """The parts frame has the ``by`` columns and each metric's numeric part columns."""
    needed = {"by": groups, "parts": [c for s in specs for c in aggregation_part(s).columns]}
    missing = [name for names in needed.values() for name in names if name not in schema]
    if missing:
        raise ValueError(
            f"parts is missing column(s) {missing}; it has {list(schema.names())} "
            "(compute it with per_user_parts for the same metrics)"
        )
    not_numbers = {name: schema[name] for name in needed["parts"] if not schema[name].is_numeric()}
    if not_numbers:
        raise TypeError(
            f"parts column(s) {list(not_numbers)} must be numeric, got dtype(s) "
            f"{[str(dtype) for dtype in not_numbers.values()]} (per_user_parts gives Float64)"
        )
