"""Float sums whose value does not depend on the order the engine meets the rows.

Polars 2 collects with its streaming engine, which adds a group's rows in the
order its threads meet them, and its joins do not keep row order. Float
addition is not associative, so ``pl.col(x).sum()`` over rows that come from
several places (a join, a concatenation, a group spread over many morsels)
can differ in the last bit from one call to the next, and a tie broken on
that value can flip. Evaluation must give the same number twice:
:func:`ordered_sum` first sorts the group's terms by value, an order fixed by
the data alone, then adds them one after another. (Means over users are exact sums in
fixed point: :func:`polars_rankmetrics._pipeline.aggregate.exact_mean`.)

Integer sums are exact in any order and need none of this.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

__all__ = ["fixed_point_column", "ordered_mean", "ordered_sum"]

# the scaled values stay below 2^90: a sum of up to 2^37 of them fits Int128
_BITS = 90


def ordered_sum(term: pl.Expr) -> pl.Expr:
    """The sum of the non-null values of ``term``, added in ascending order.

    An aggregation, as ``term.sum()``: 0 without values, NaN with one. Equal
    terms are interchangeable, so sorting by value fixes the order for any data.

    Examples
    --------
    >>> frame = pl.DataFrame({"g": [1, 1, 1, 2], "x": [1e16, 1.0, -1e16, None]})
    >>> forward = frame.group_by("g").agg(ordered_sum(pl.col("x"))).sort("g")
    >>> backward = frame.reverse().group_by("g").agg(ordered_sum(pl.col("x"))).sort("g")
    >>> forward.equals(backward), forward["x"].to_list()
    (True, [0.0, 0.0])
    """
    # cum_sum adds in the order given; the optimiser may drop a sort before sum()
    return term.drop_nulls().sort().cum_sum().last().fill_null(0.0)


def ordered_mean(term: pl.Expr) -> pl.Expr:
    """The mean of the non-null values of ``term`` (null without), summed as :func:`ordered_sum`.

    Examples
    --------
    >>> frame = pl.DataFrame({"g": [1, 1, 1, 2], "x": [0.1, 0.2, 0.7, None]})
    >>> frame.group_by("g").agg(ordered_mean(pl.col("x"))).sort("g")["x"].to_list()
    [0.3333333333333333, None]
    """
    count = term.count()
    return pl.when(count > 0).then(ordered_sum(term) / count)


def fixed_point_column(value: pl.Expr, name: str, over: Sequence[str] = ()) -> list[pl.Expr]:
    """``value`` in fixed point (an Int128, in ``name``) and its scale (``name|scale``).

    One power of two over the whole column (or per ``over`` group), from its
    largest magnitude, so that every value fits 90 bits: sums (and running
    sums, and differences) of the integers are exact, in any order; divided by
    the scale they are the values' sum to about 2^-90 of the largest. A null
    value is 0.

    Examples
    --------
    >>> frame = pl.DataFrame({"x": [0.1, 0.2, 0.3, None]})
    >>> fixed = frame.select(fixed_point_column(pl.col("x"), "f"))
    >>> total = fixed["f"].sum() / fixed["f|scale"][0]
    >>> total == fixed.reverse()["f"].sum() / fixed["f|scale"][0], abs(total - 0.6) < 1e-16
    (True, True)
    """
    magnitude = value.abs().max()
    if over:
        magnitude = magnitude.over(over)
    exponent = magnitude.log(2).ceil().clip(-900.0, 900.0)
    usable = magnitude.is_finite() & (magnitude > 0)
    scale = pl.when(usable).then(pl.lit(2.0).pow(_BITS - exponent)).otherwise(1.0)
    return [
        scale.alias(f"{name}|scale"),
        (value * scale).round().cast(pl.Int128, strict=False).fill_null(0).alias(name),
    ]
