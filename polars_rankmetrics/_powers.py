"""Powers of a constant whose bits do not depend on how many rows Polars computes at once.

Polars raises a Float64 to a one-element exponent of 2 to 9 by repeated
multiplication, and to a longer exponent with the C library's ``pow``; the
two differ in the last bit (``0.8 ** 4``: ``0x1.a36e2eb1c432fp-2`` against
``pow``'s ``...2ep-2``). Which one runs depends on the array the expression
meets: the streaming engine may hand a row over alone, a group of one row
is one element inside an aggregation, and a user evaluated alone has a
one-row hits table. RBP's weight ``p^(r - 1)`` of one user then changed in the
last bit between identical calls, and between a call on that user alone and
one on every user. :func:`power` takes whole exponents 0 to 9 from a table
of ``math.pow`` (the same C ``pow``) and leaves the others to Polars, whose
``pow`` then runs whatever the length.
"""

from __future__ import annotations

import math

import polars as pl

__all__ = ["power"]

# whole exponents below this: a table (Polars' repeated multiplication covers 2 to 9)
_TABLED = 10


def power(base: float, exponent: pl.Expr) -> pl.Expr:
    """``base ** exponent`` as Float64, the C library's ``pow`` on any number of rows.

    A power of two is exact both ways and is left to Polars alone.

    Examples
    --------
    >>> one_row = pl.DataFrame({"r": [4.0]})
    >>> one_row.select(power(0.8, pl.col("r"))).item() == math.pow(0.8, 4)
    True
    >>> one_row.select(pl.lit(0.8).pow(pl.col("r"))).item() == math.pow(0.8, 4)
    False
    >>> pl.DataFrame({"r": [0, 4, 12, None]}).select(power(0.5, pl.col("r"))).to_series().to_list()
    [1.0, 0.0625, 0.000244140625, None]
    """
    value = exponent.cast(pl.Float64)
    computed = pl.lit(base, pl.Float64).pow(value)
    if math.frexp(base)[0] == 0.5:  # the mantissa of a power of two
        return computed
    table = pl.Series([math.pow(base, n) for n in range(_TABLED)], dtype=pl.Float64)
    tabled = (value >= 0) & (value < _TABLED) & (value == value.floor())
    # an index for every row (the other branch's rows too): NaN and out-of-range clipped
    index = value.fill_nan(0.0).clip(0, _TABLED - 1).cast(pl.UInt32)
    return pl.when(tabled).then(pl.lit(table).gather(index)).otherwise(computed)
