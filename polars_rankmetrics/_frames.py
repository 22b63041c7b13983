"""The frame boundary: the one module that knows which kinds of frames come in.

Polars frames pass as they are; a pandas frame is converted through Arrow
(:mod:`polars_rankmetrics._arrow`).
"""

from __future__ import annotations

import polars as pl

__all__ = ["is_pandas", "to_polars_input"]


def is_pandas(frame: object) -> bool:
    """Whether ``frame`` is a pandas object (checked without importing pandas)."""
    return type(frame).__module__.partition(".")[0] == "pandas"


def to_polars_input(frame: object, name: str) -> pl.DataFrame | pl.LazyFrame:
    """``frame`` as a Polars frame: Polars as it is, pandas converted; anything else refused."""
    if isinstance(frame, (pl.DataFrame, pl.LazyFrame)):
        return frame
    if is_pandas(frame):
        from polars_rankmetrics import _arrow  # noqa: PLC0415 - pandas is optional

        return _arrow.to_polars(frame, name=name)
    raise TypeError(
        f"{name} must be a polars DataFrame or LazyFrame (or a pandas DataFrame), "
        f"got {type(frame).__name__}"
    )
