"""Each metric combined over the users of a group, the means the same to the last bit.

How a metric's per-user parts combine is its measure's aggregation
(:class:`AggregationPart`: a mean, a pooled ratio, a geometric mean, a sum or
the group's one value); :func:`aggregate_lf` combines them per ``by`` group.

The mean over users is the same to the last bit in every run.

A float sum depends on the order of its terms, and the per-user values come
out of parallel joins and group-bys in an order that changes from run to
run: a plain ``mean()`` of the same values gave four different last digits
in eight runs of one call. Here the values are summed in fixed point
instead, in two steps:

1. :func:`fixed_point`, over the whole frame (``with_columns``): each column
   is scaled by one power of two, chosen from its largest magnitude so that
   every value fits 90 bits, and rounded to an Int128;
2. :func:`exact_mean`, in ``select`` or ``group_by(...).agg``: the Int128
   values are summed, which is exact, so the order of the terms no longer
   matters; the sum is rounded to float once and divided by the count once.

Scaling in a step of its own keeps the aggregation a plain integer sum: a
scale computed inside ``group_by(...).agg`` costs about ten times more.
Rounding to 2^-90 of the largest magnitude leaves every group whose mean is
above 2^-37 of it (any metric's) as close to the exact mean as the float's
precision allows, and a sum of up to 2^37 values fits Int128. Columns with
NaN or infinities, with no non-zero value, or with magnitudes beyond
``2^±60`` (no metric's) take the plain ``mean()``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from polars_rankmetrics import _measures as registry
from polars_rankmetrics._measures._registry import Aggregation, part_column
from polars_rankmetrics._names import PREFIX
from polars_rankmetrics._pipeline.parse import MetricSpec

__all__ = [
    "AggregationPart",
    "aggregate_lf",
    "aggregation_part",
    "check_parts",
    "exact_mean",
    "exact_sum",
    "fixed_point",
    "per_user_values",
]

# the scaled values stay below 2^90: a sum of up to 2^37 of them fits Int128
_BITS = 90
# the magnitudes summed in fixed point; anything else (0, subnormal, huge) is left to mean()
_SMALLEST, _LARGEST = 2.0**-60, 2.0**60


def _fixed(name: str) -> str:
    return f"{PREFIX}fixed|{name}"


def _scale(name: str) -> str:
    return f"{PREFIX}scale|{name}"


def fixed_point(names: Sequence[str]) -> list[pl.Expr]:
    """The columns :func:`exact_mean` sums, for ``with_columns`` over the whole frame.

    Per column: the scale (a power of two, null where the column is left to
    ``mean()``) and the values times the scale, rounded, as Int128 (null
    for NaN and infinities).
    """
    columns = []
    for name in dict.fromkeys(names):
        magnitude = pl.col(name).abs().max()
        scale = pl.when(magnitude.is_between(_SMALLEST, _LARGEST)).then(
            pl.lit(2.0).pow(_BITS - magnitude.log(2).ceil())
        )
        columns.append(scale.alias(_scale(name)))
        fixed = (pl.col(name) * scale).round().cast(pl.Int128, strict=False)
        columns.append(fixed.alias(_fixed(name)))
    return columns


def exact_mean(name: str) -> pl.Expr:
    """The mean of the non-null values of ``name``, independent of their order.

    For a frame with :func:`fixed_point`'s columns of ``name``; works in
    ``select`` and in ``group_by(...).agg``. Named ``name``.

    Examples
    --------
    >>> values = [0.1, 0.2, 0.3, 0.4, None, 1e-9]
    >>> frame = pl.DataFrame({"x": values}).with_columns(fixed_point(["x"]))
    >>> forward = frame.select(exact_mean("x")).item()
    >>> backward = frame.reverse().select(exact_mean("x")).item()
    >>> forward == backward, abs(forward - sum(v for v in values if v) / 5) < 1e-17
    (True, True)
    >>> nan = pl.DataFrame({"x": [0.5, float("nan")]}).with_columns(fixed_point(["x"]))
    >>> nan.select(exact_mean("x")).item()
    nan
    """
    column, fixed, scale = pl.col(name), pl.col(_fixed(name)), pl.col(_scale(name)).first()
    count = column.count()
    exact = fixed.sum().cast(pl.Float64) / scale / count
    # a NaN or an infinity did not become an integer: its count falls short. No value
    # at all: mean()'s null
    summable = scale.is_not_null() & (count > 0) & (fixed.count() == count)
    return pl.when(summable).then(exact).otherwise(column.mean()).alias(name)


def exact_sum(name: str) -> pl.Expr:
    """The sum of the non-null values of ``name``, independent of their order (0 without).

    As :func:`exact_mean`, for a frame with :func:`fixed_point`'s columns of ``name``.

    Examples
    --------
    >>> values = [1e16, 1.0, -1e16, None]
    >>> frame = pl.DataFrame({"x": values}).with_columns(fixed_point(["x"]))
    >>> frame.select(exact_sum("x")).item(), frame.reverse().select(exact_sum("x")).item()
    (1.0, 1.0)
    """
    column, fixed, scale = pl.col(name), pl.col(_fixed(name)), pl.col(_scale(name)).first()
    exact = fixed.sum().cast(pl.Float64) / scale
    summable = scale.is_not_null() & (fixed.count() == column.count())
    return pl.when(summable).then(exact).otherwise(column.sum()).alias(name)


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
