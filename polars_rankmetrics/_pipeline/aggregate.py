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

import polars as pl

from polars_rankmetrics import _measures as registry
from polars_rankmetrics._measures._registry import Aggregation, part_column
from polars_rankmetrics._pipeline.parse import MetricSpec
from polars_rankmetrics._sums import exact_mean, fixed_point

__all__ = [
    "AggregationPart",
    "aggregate_lf",
    "aggregation_part",
    "check_parts",
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


def _combine(part: AggregationPart) -> pl.Expr:
    columns = [pl.col(name) for name in part.columns]
    # means the same to the last bit whatever order the users come in (pooled and summed
    # parts are counts, whose float sums are exact): the frame has fixed_point's columns
    if part.kind == "mean":
        return exact_mean(part.columns[0]).alias(part.label)
    if part.kind == "pooled":
        # OTTO: pooled over users, sum(num) / sum(den), not a mean of ratios; no
        # evaluated user: null like every other mean, not 0/0 = NaN
        num, den = columns
        return pl.when(den.sum() > 0).then(num.sum() / den.sum()).alias(part.label)
    if part.kind == "geometric_mean":
        return exact_mean(part.columns[0]).exp().alias(part.label)
    if part.kind == "sum":
        return columns[0].sum().alias(part.label)
    return columns[0].first().alias(part.label)


def per_user_values(specs: Sequence[MetricSpec]) -> list[pl.Expr]:
    """Each metric's per-user value from its part columns: ``evaluate(per_user=True)``'s columns.

    With :func:`polars_rankmetrics.evaluate.aggregate` over the same parts, one
    per-user pass gives both the per-user values and the means (the command
    line's ``--per-user``).
    """
    values = []
    for spec in specs:
        measure = registry.lookup(spec.name)
        parts = {suffix: pl.col(part_column(spec.label, suffix)) for suffix in measure.suffixes}
        values.append(measure.value(parts).alias(spec.label))
    return values


def aggregate_lf(parts: pl.LazyFrame, specs: Sequence[MetricSpec], by: list[str]) -> pl.LazyFrame:
    combos = [aggregation_part(spec) for spec in specs]
    averaged = [c.columns[0] for c in combos if c.kind in ("mean", "geometric_mean")]
    parts = parts.with_columns(fixed_point(averaged))
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
