"""The table of per-user (or per-block) scores the analyses read, as numbers.

:func:`read_scores` reads the scores through the frame boundary
(:mod:`polars_rankmetrics._frames`) and gives the eager Polars frame plus the
function that turns a result back into the kind given; :func:`complete_table`
is the (block x system) matrix of one metric over the blocks (users,
datasets) where every system has a value.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl

from polars_rankmetrics._frames import ArrowStream, Frame, caller, collected
from polars_rankmetrics.analysis._stats import FloatArray

__all__ = ["complete_table", "read_scores"]


def read_scores(
    scores: Frame | ArrowStream, *, name: str
) -> tuple[pl.DataFrame, Callable[[pl.DataFrame], Frame]]:
    """The scores as an eager Polars frame, and how to give a result back in their kind.

    A LazyFrame is collected (the statistics need every value) and its result
    comes back lazy.
    """
    call = caller(scores, name=name)
    return collected(call.frame), call.back


def complete_table(
    frame: pl.DataFrame, metric: str, *, system: str, block: str, role: str, name: str = "scores"
) -> tuple[list[Any], FloatArray, int]:
    """The systems, their (block x system) matrix of ``metric`` and the blocks left out.

    Systems are sorted; the matrix holds the blocks where every system has a
    value; the count is of the other blocks.

    Refuses a missing column, a non-numeric metric, nulls in the keys, NaN or
    infinite values and a repeated (block, system) pair, naming one row.
    """
    for what, column in (("metric", metric), ("system", system), (role, block)):
        if not isinstance(column, str):
            raise TypeError(f"{what} must be a column name, got {column!r}")
        if column not in frame.columns:
            raise ValueError(f"{name} has no {what} column {column!r}; columns are {frame.columns}")
    if len({metric, system, block}) < 3:
        raise ValueError(f"metric, system and {role} must be three different columns")
    dtype = frame.schema[metric]
    if not dtype.is_numeric():
        raise TypeError(f"metric column {metric!r} must be numeric, got {dtype}")
    for column in (system, block):
        nulls = frame.get_column(column).null_count()
        if nulls:
            raise ValueError(f"{name} column {column!r} has {nulls} null value(s)")
    repeated = frame.select(block, system).is_duplicated()
    if repeated.any():
        example = frame.filter(repeated).select(block, system).row(0, named=True)
        raise ValueError(
            f"{name} has {int(repeated.sum())} rows repeating a ({role}, system) pair, e.g. "
            f"{example}: give one row per {role} and system"
        )
    values = frame.get_column(metric).cast(pl.Float64)
    bad = values.is_nan() | values.is_infinite()
    if bad.any():
        example = frame.filter(bad).select(block, system).row(0, named=True)
        raise ValueError(
            f"metric column {metric!r} has {int(bad.sum())} NaN or infinite value(s), e.g. at "
            f"{example}: mark a value that is not defined with null"
        )
    systems = frame.get_column(system).unique().sort().to_list()
    blocks = frame.get_column(block).rank("dense").cast(pl.Int64).to_numpy() - 1
    columns = frame.get_column(system).rank("dense").cast(pl.Int64).to_numpy() - 1
    n_blocks = int(blocks.max()) + 1 if blocks.size else 0
    matrix = np.full((n_blocks, len(systems)), math.nan)
    matrix[blocks, columns] = values.fill_null(math.nan).to_numpy()
    complete = ~np.isnan(matrix).any(axis=1)
    return systems, matrix[complete], int(n_blocks - complete.sum())
