"""The mean over users, the same to the last bit in every run.

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

import polars as pl

from polars_rankmetrics._names import PREFIX

__all__ = ["exact_mean", "fixed_point"]

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
