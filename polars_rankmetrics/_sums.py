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

import polars as pl

__all__ = ["ordered_mean", "ordered_sum"]


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
