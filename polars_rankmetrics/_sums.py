"""Float sums whose value does not depend on the order the engine meets the rows.

Polars 2 collects with its streaming engine, which adds a group's rows in the
order its threads meet them, and its joins do not keep row order. Float
addition is not associative, so ``pl.col(x).sum()`` over rows that come from
several places (a join, a concatenation, a group spread over many morsels)
can differ in the last bit from one call to the next, and a tie broken on
that value can flip (a plain ``mean()`` of the same per-user values gave four
different last digits in eight runs of one call). Evaluation gives the same
number twice, in one of two ways.

**Exact sums in fixed point** (sums over many rows): :func:`fixed_point`,
over the whole frame (``with_columns``), scales each column by one power of
two, chosen from its largest magnitude so that every value fits 90 bits, and
rounds it to an Int128; :func:`exact_mean`, in ``select`` or
``group_by(...).agg``, and :func:`exact_sums`, per group of a frame, sum the
integers, which is exact in any order, round the sum to float once and divide
once. Scaling in a step of its own keeps the aggregation a plain integer sum:
over 3M rows in 300k groups, :func:`exact_sums` takes 3.5x a bare float sum,
the sorted sum 7x (reading the scale inside ``group_by(...).agg`` cost more
still); inside a whole plan the share is smaller (``fuse``: 1.4x). Rounding
to 2^-90 of the largest magnitude leaves every group whose sum is above 2^-37
of it as close to the exact sum as the float's precision allows, and a sum of
up to 2^37 values fits Int128. A group with NaN or infinities, and a column
with no non-zero value or with magnitudes beyond ``2^±60``, take the plain
float sum.
:func:`fixed_point_column` is the variant for running sums and differences
(curves): always an integer, its scale optionally per group.

**Sorted sums** (a few rows inside an aggregation that reads other columns,
where no column can be scaled first): :func:`ordered_sum` sorts the group's
terms by value, an order fixed by the data alone, and adds them one after
another. Polars then runs the aggregation group by group: over many small
groups it costs several times a plain sum.

Integer sums are exact in any order and need none of this.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import polars as pl

from polars_rankmetrics._names import PREFIX

__all__ = [
    "exact_mean",
    "exact_sum",
    "exact_sums",
    "fixed_point",
    "fixed_point_column",
    "ordered_sum",
]

# the scaled values stay below 2^90: a sum of up to 2^37 of them fits Int128
_BITS = 90
# the magnitudes summed in fixed point; anything else (0, subnormal, huge): the float sum
_SMALLEST, _LARGEST = 2.0**-60, 2.0**60


def _fixed(name: str) -> str:
    return f"{PREFIX}fixed|{name}"


def _scale(name: str) -> str:
    return f"{PREFIX}scale|{name}"


def _float(name: str) -> str:
    return f"{PREFIX}float|{name}"


def _lost(name: str) -> str:
    return f"{PREFIX}lost|{name}"


def fixed_point(names: Sequence[str]) -> list[pl.Expr]:
    """The columns :func:`exact_mean` sums, for ``with_columns``.

    Over the whole frame, per column: the scale (a power of two, null where the
    column is left to the float sum) and the values times the scale, rounded,
    as Int128 (null for NaN and infinities).
    """
    columns = []
    for name in dict.fromkeys(names):
        scale = _scale_of(pl.col(name))
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
    """The sum of the non-null values of ``name``, independent of their order.

    For a frame with :func:`fixed_point`'s columns of ``name``; the integers
    are summed exactly and divided by the scale once (as :func:`exact_mean`,
    which is this divided by the count). A NaN or an infinity leaves it to
    the float sum. Named ``name``.

    Examples
    --------
    >>> frame = pl.DataFrame({"x": [1e16, 1.0, -1e16, None]}).with_columns(fixed_point(["x"]))
    >>> frame.select(exact_sum("x")).item(), frame.select(pl.col("x").sum()).item()
    (1.0, 0.0)
    """
    column, fixed, scale = pl.col(name), pl.col(_fixed(name)), pl.col(_scale(name)).first()
    count = column.count()
    exact = fixed.sum().cast(pl.Float64) / scale
    summable = scale.is_not_null() & (count > 0) & (fixed.count() == count)
    return pl.when(summable).then(exact).otherwise(column.sum()).alias(name)


def _scale_of(column: pl.Expr) -> pl.Expr:
    """:func:`fixed_point`'s scale of ``column`` (null: left to the float sum).

    From the finite values only: a NaN or an infinity sends its own group to the
    float sum (it becomes no integer) and leaves the other groups exact.
    """
    magnitude = column.filter(column.is_finite()).abs().max()
    return pl.when(magnitude.is_between(_SMALLEST, _LARGEST)).then(
        pl.lit(2.0).pow(_BITS - magnitude.log(2).ceil())
    )


def exact_sums(
    frame: pl.LazyFrame,
    by: Sequence[str],
    terms: Mapping[str, pl.Expr],
    *,
    also: Sequence[pl.Expr] = (),
) -> pl.LazyFrame:
    """Per ``by`` group (one row without): ``also``'s aggregations, then each term's exact sum.

    ``terms`` maps each output column to a row-wise expression of ``frame``;
    its sum over the group's non-null values (0 without) is exact, so the same
    in any row order. ``also``: other aggregations of the group, computed
    beside. The integers and their scale come from :func:`fixed_point`; the
    scale is divided out after the group-by, which stays a plain integer sum
    (see the module's figures). A group with NaN or infinities,
    and a column without a non-zero value, take the float sum.

    Examples
    --------
    >>> frame = pl.LazyFrame(
    ...     {"g": [1, 1, 1, 2, 3, 3], "x": [1e16, 1.0, -1e16, None, 2.0, float("nan")]}
    ... )
    >>> sums = exact_sums(frame, ["g"], {"total": pl.col("x")}, also=[pl.len().alias("n")])
    >>> sums.sort("g").collect().rows()
    [(1, 3, 1.0), (2, 1, 0.0), (3, 2, nan)]
    """
    names = list(terms)
    if not names:
        return frame.group_by(by).agg(also) if by else frame.select(also)
    fixed = frame.with_columns(**terms).with_columns(fixed_point(names))
    sums = [
        expr
        for name in names
        for expr in (
            pl.col(_fixed(name)).sum(),
            pl.col(name).sum().alias(_float(name)),
            # a NaN or an infinity did not become an integer: more nulls than the term
            (pl.col(_fixed(name)).null_count() - pl.col(name).null_count()).alias(_lost(name)),
            pl.col(_scale(name)).first(),
        )
    ]
    grouped = fixed.group_by(by).agg(*sums, *also) if by else fixed.select(*sums, *also)
    exact = [
        pl.when(pl.col(_scale(name)).is_not_null() & (pl.col(_lost(name)) == 0))
        .then(pl.col(_fixed(name)).cast(pl.Float64) / pl.col(_scale(name)))
        .otherwise(pl.col(_float(name)))
        .alias(name)
        for name in names
    ]
    helpers = [f(name) for name in names for f in (_fixed, _float, _lost, _scale)]
    return grouped.with_columns(exact).drop(helpers)


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
    # cum_sum adds in the order given; the optimiser drops a sort before sum()
    return term.drop_nulls().sort().cum_sum().last().fill_null(0.0)


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
