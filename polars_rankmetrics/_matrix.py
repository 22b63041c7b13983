"""The top k of each row of a score matrix, row chunk by row chunk, ties in evaluate's order.

A model's output for n users and m items is an (n, m) matrix. Its long frame
holds n x m rows, most of which no metric at a cutoff k ever reads: the rows
are cut to their k best here, in NumPy, a chunk of rows at a time, so the
memory held is one chunk's working copies plus the n x k rows kept.

Each chunk is selected in one pass of ``np.partition`` (the k-th best key per
row), then compared with that threshold: the items strictly better all stay,
and of the items equal to it, those first in the tie order fill the rows up to
k. The tie order is evaluate's (``ties``): the item ids descending
(trec_eval), ascending, or the column order (``"input"``). The rows kept are
then sorted by score and tie order, and numbered 1..k.

Excluded (user, item) pairs (items the user has already seen) are never kept:
their keys are set to NaN in the chunk's working copy, which NumPy's
partition sorts last; a row with fewer than k other items keeps them all.
NaN scores are refused: NumPy would sort them last, evaluate refuses them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import polars as pl

from polars_rankmetrics.conventions import Ties

__all__ = ["Ids", "Matrix", "as_matrix", "exclusions", "ids", "top_k_rows"]

# the working copies of one chunk stay near this many cells (a float64 key, its
# partitioned copy and the masks: about 20 bytes a cell, some 320 MB)
_CELLS_PER_CHUNK = 1 << 24

# DLPack's device type of main memory (the DLPack C header's kDLCPU)
_DLPACK_CPU = 1


@dataclass(frozen=True)
class Matrix:
    """A 2-D score matrix read a row chunk at a time (a NumPy array or a DLPack tensor)."""

    source: Any
    rows: int
    columns: int

    def chunk(self, start: int, stop: int) -> np.ndarray[Any, Any]:
        """Rows ``start:stop`` as a NumPy array (a view where the source allows it)."""
        block = self.source[start:stop]
        if isinstance(block, np.ndarray):
            return block
        return _from_dlpack(block)


def _from_dlpack(block: Any) -> np.ndarray[Any, Any]:
    device = block.__dlpack_device__()[0] if hasattr(block, "__dlpack_device__") else _DLPACK_CPU
    if device == _DLPACK_CPU:
        try:
            return np.from_dlpack(block)
        except (BufferError, TypeError, ValueError, RuntimeError) as exc:
            # e.g. PyTorch refuses to export a tensor that requires grad
            raise TypeError(
                f"scores could not be read through DLPack: {exc} (a PyTorch tensor in a "
                "training step: scores.detach())"
            ) from exc
    try:
        # DLPack 1.0: ask the producer for a copy in main memory, one chunk at a time
        return np.from_dlpack(block, device="cpu", copy=True)
    except (BufferError, TypeError, ValueError, RuntimeError) as exc:
        raise TypeError(
            f"scores live on a device (DLPack device type {device}) whose library cannot copy "
            f"them to main memory through DLPack ({exc}); move them first, e.g. "
            "scores.cpu() (PyTorch), cupy.asnumpy(scores), or jax.device_get(scores)"
        ) from exc


def as_matrix(scores: object) -> Matrix:
    """``scores`` as a :class:`Matrix`, or the TypeError/ValueError saying what it is instead."""
    if isinstance(scores, (pl.DataFrame, pl.LazyFrame, pl.Series)):
        raise TypeError(
            f"scores must be a 2-D matrix (a NumPy array or a DLPack tensor); got a Polars "
            f"{type(scores).__name__}: a long frame of scores goes to evaluate directly"
        )
    if not isinstance(scores, np.ndarray) and not hasattr(scores, "__dlpack__"):
        raise TypeError(
            "scores must be a 2-D NumPy array or a tensor with __dlpack__ (PyTorch, JAX, CuPy); "
            f"got {type(scores).__name__}: np.asarray(scores) first"
        )
    shape = tuple(getattr(scores, "shape", ()))
    if len(shape) != 2:
        raise ValueError(
            f"scores must be 2-D (one row per user, one column per item); got shape {shape}"
        )
    probe = Matrix(scores, int(shape[0]), int(shape[1])).chunk(0, 1)
    if not (np.issubdtype(probe.dtype, np.floating) or np.issubdtype(probe.dtype, np.integer)):
        raise TypeError(f"scores must be real numbers (floats or integers); got {probe.dtype}")
    return Matrix(scores, int(shape[0]), int(shape[1]))


@dataclass(frozen=True)
class Ids:
    """The ids of the rows (users) or columns (items), in matrix order."""

    values: pl.Series

    def index(self, role: str) -> pl.DataFrame:
        """Each id with its position, for joins (column ``role`` and ``__position``)."""
        return pl.DataFrame({role: self.values, "__position": np.arange(len(self.values))})


def ids(given: object, size: int, *, name: str, axis: str) -> Ids:
    """The ids along one axis: 0..size-1 when not given; unique, non-null and ``size`` long."""
    if given is None:
        return Ids(pl.Series(name, np.arange(size, dtype=np.int64)))
    series = given.rename(name) if isinstance(given, pl.Series) else _series(given, name)
    if len(series) != size:
        raise ValueError(
            f"{name}s holds {len(series):,} ids but scores has {size:,} {axis}: "
            f"one id per {axis[:-1]}"
        )
    if series.null_count():
        at = series.is_null().arg_max()
        raise ValueError(f"{name}s holds {series.null_count():,} missing ids, the first at {at}")
    repeated = series.is_duplicated()
    if repeated.any():
        first = series.filter(repeated)[0]
        where = repeated.arg_true().to_list()[:2]
        raise ValueError(
            f"{name}s holds {int(repeated.sum()):,} repeated ids, e.g. {first!r} at {axis} {where}"
        )
    return Ids(series)


def _series(given: object, name: str) -> pl.Series:
    try:
        return pl.Series(name, cast("Iterable[object]", given))
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name}s must be a sequence of ids; could not read it: {exc}") from exc


def tie_positions(items: Ids, ties: Ties) -> np.ndarray[Any, Any]:
    """Each column's place in the tie order (0 first), evaluate's order of equal scores."""
    if ties == "input":
        return np.arange(len(items.values))
    order = items.values.arg_sort(descending=ties == "item_desc").to_numpy()
    places = np.empty(len(order), dtype=np.int64)
    places[order] = np.arange(len(order))
    return places


def exclusions(
    exclude: pl.DataFrame, users: Ids, items: Ids, *, user: str, item: str
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """The (row, column) of each excluded pair present in the matrix, sorted by row."""
    pairs = exclude.select(
        _like(exclude, user, users.values.dtype), _like(exclude, item, items.values.dtype)
    )
    located = (
        pairs.join(users.index(user), on=user)
        .rename({"__position": "__row"})
        .join(items.index(item), on=item)
        .sort("__row")
    )
    return located["__row"].to_numpy(), located["__position"].to_numpy()


def _like(frame: pl.DataFrame, column: str, dtype: pl.DataType) -> pl.Expr:
    given = frame.schema[column]
    if given == dtype:
        return pl.col(column)
    if given.is_numeric() and dtype.is_numeric():
        # an id beyond the other type's range matches nothing: null, then no join
        return pl.col(column).cast(dtype, strict=False)
    if given.is_numeric() != dtype.is_numeric():
        raise TypeError(
            f"exclude's {column!r} column is {given} but the matrix's {column} ids are {dtype}: "
            "give both as numbers or both as strings"
        )
    return pl.col(column).cast(pl.String)


def _chunks(rows: int, columns: int, chunk_rows: int | None) -> Iterator[tuple[int, int]]:
    step = chunk_rows or max(1, _CELLS_PER_CHUNK // max(columns, 1))
    for start in range(0, rows, step):
        yield start, min(rows, start + step)


def _refuse_nan(block: np.ndarray[Any, Any], start: int, users: Ids, items: Ids) -> None:
    if np.issubdtype(block.dtype, np.floating) and np.isnan(block).any():
        row, column = (int(at) for at in np.argwhere(np.isnan(block))[0])
        count = int(np.isnan(block).sum())
        raise ValueError(
            f"scores holds NaN ({count:,} in rows {start}..{start + len(block) - 1}), e.g. at row "
            f"{start + row}, column {column} (user {users.values[start + row]!r}, item "
            f"{items.values[column]!r}): give those items a score, or exclude them"
        )


def _kept(
    key: np.ndarray[Any, Any], k: int, places: np.ndarray[Any, Any]
) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """The (row, column) of each row's k smallest keys, ties at the k-th in tie order.

    ``np.argpartition`` gives k columns per row; they are the answer unless a
    column left out ties with the k-th key (counted in one pass), and only
    those rows are redone, the tie order picking among the tied columns. NaN
    keys (excluded items) sort last: a row with fewer than k others keeps them all.
    """
    best = np.argpartition(key, k - 1, axis=1)[:, :k]
    values = np.take_along_axis(key, best, axis=1)
    valid = ~np.isnan(values)
    threshold = np.where(valid, values, -np.inf).max(axis=1)
    crowded = np.flatnonzero(
        np.count_nonzero(key <= threshold[:, None], axis=1) > valid.sum(axis=1)
    )
    for row in crowded:  # more items tie at the k-th than places left: the tie order picks
        better = np.flatnonzero(key[row] < threshold[row])
        tied = np.flatnonzero(key[row] == threshold[row])
        tied = tied[np.argsort(places[tied], kind="stable")[: k - len(better)]]
        best[row] = np.concatenate([better, tied])
        valid[row] = True
    rows = np.repeat(np.arange(len(key)), k).reshape(len(key), k)
    return rows[valid], best[valid]


def top_k_rows(
    matrix: Matrix,
    k: int,
    users: Ids,
    items: Ids,
    *,
    ties: Ties,
    excluded: tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]] | None,
    names: tuple[str, str, str, str],
    chunk_rows: int | None = None,
) -> pl.DataFrame:
    """The long frame (user, item, score, rank) of each row's k best columns."""
    places = tie_positions(items, ties)
    kept = min(k, matrix.columns)
    frames = []
    for start, stop in _chunks(matrix.rows, matrix.columns, chunk_rows):
        block = matrix.chunk(start, stop)
        _refuse_nan(block, start, users, items)
        key = -block.astype(np.float64) if block.dtype.kind in "iub" else np.negative(block)
        if excluded is not None:
            lo, hi = np.searchsorted(excluded[0], [start, stop])
            key[excluded[0][lo:hi] - start, excluded[1][lo:hi]] = np.nan
        if kept:
            frames.append(
                _rows_of(
                    block, key, start=start, k=kept, places=places, ids=(users, items), names=names
                )
            )
    user, item, score, rank = names
    schema = {user: users.values.dtype, item: items.values.dtype, score: _dtype(matrix)}
    empty = pl.DataFrame(schema={**schema, rank: pl.UInt32})
    return pl.concat(frames) if frames else empty


def _dtype(matrix: Matrix) -> pl.DataType:
    return pl.Series(matrix.chunk(0, 0).reshape(-1)).dtype if matrix.rows else pl.Float64()


def _rows_of(
    block: np.ndarray[Any, Any],
    key: np.ndarray[Any, Any],
    *,
    start: int,
    k: int,
    places: np.ndarray[Any, Any],
    ids: tuple[Ids, Ids],
    names: tuple[str, str, str, str],
) -> pl.DataFrame:
    """One chunk's kept cells as rows, sorted by row, then score, then tie order."""
    users, items = ids
    rows, columns = _kept(key, k, places)
    order = np.lexsort((places[columns], key[rows, columns], rows))
    rows, columns = rows[order], columns[order]
    first_of_row = np.searchsorted(rows, rows, side="left")
    user, item, score, rank = names
    return pl.DataFrame(
        {
            user: users.values.gather(start + rows),
            item: items.values.gather(columns),
            score: block[rows, columns],
            rank: (np.arange(len(rows)) - first_of_row + 1).astype(np.uint32),
        }
    )
