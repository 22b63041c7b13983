"""pandas <-> Polars conversion for the pandas adapter, through Arrow.

Only the frame boundary (:mod:`polars_rankmetrics._frames`) and the pandas
adapter (:mod:`polars_rankmetrics.pandas`) import this module. Columns cross in
both directions as Arrow buffers (zero-copy for numeric and pyarrow-backed
columns); on the way back, every column that came from an input frame gets
that frame's pandas dtype again, so ids keep their dtype (``str``,
``object``, ``string[pyarrow]``, ``int32``, categorical...) even where Arrow
or Polars store them differently.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
import polars as pl

from polars_rankmetrics._validation import shorten

__all__ = ["Source", "to_pandas", "to_polars", "unused_name"]

# An input frame and the schema it had once converted, used to give result columns
# their pandas dtype back.
Source = tuple[pd.DataFrame, pl.Schema]

# Polars dtypes whose plain numpy counterpart cannot hold a missing value.
_NULLABLE: dict[pl.DataType, Any] = {
    pl.Int8(): pd.Int8Dtype(),
    pl.Int16(): pd.Int16Dtype(),
    pl.Int32(): pd.Int32Dtype(),
    pl.Int64(): pd.Int64Dtype(),
    pl.UInt8(): pd.UInt8Dtype(),
    pl.UInt16(): pd.UInt16Dtype(),
    pl.UInt32(): pd.UInt32Dtype(),
    pl.UInt64(): pd.UInt64Dtype(),
    pl.Boolean(): pd.BooleanDtype(),
}


def _require_pyarrow(name: str) -> None:
    try:
        import pyarrow  # noqa: F401, PLC0415 - optional dependency, needed only here
    except ImportError as exc:
        raise ImportError(
            f"{name} is a pandas frame: polars_rankmetrics needs pyarrow to hand it to Polars "
            "(and the result back); install it with: pip install pyarrow (the package's "
            "pandas extra)"
        ) from exc


def _check_labels(frame: pd.DataFrame, name: str) -> None:
    not_str = [label for label in frame.columns if not isinstance(label, str)]
    if not_str:
        raise TypeError(
            f"{name} has {len(not_str)} column label(s) that are not strings, e.g. "
            f"{shorten(not_str[0])} ({type(not_str[0]).__name__}); Polars needs string column "
            f"names: rename them first, e.g. {name}.rename(columns=str)"
        )
    duplicated = frame.columns[frame.columns.duplicated()]
    if len(duplicated):
        raise ValueError(
            f"{name} has {len(duplicated)} duplicated column label(s), e.g. "
            f"{shorten(duplicated[0])}; Polars needs unique column names"
        )


def to_polars(frame: object, *, name: str) -> pl.DataFrame:
    """Convert a pandas frame to Polars, naming the column when that is impossible.

    The index is not converted (the adapter documents how it treats it); a
    missing value (``NaN``, ``None``, ``pd.NA``, ``NaT``) becomes a null.
    """
    if not isinstance(frame, pd.DataFrame):
        raise TypeError(f"{name} must be a pandas DataFrame, got {type(frame).__name__}")
    _check_labels(frame, name)
    _require_pyarrow(name)
    try:
        return pl.from_pandas(frame, include_index=False)
    except Exception as exc:
        for column in frame.columns:
            try:
                pl.from_pandas(frame[[column]], include_index=False)
            except Exception as column_exc:  # only on the failure path
                raise TypeError(
                    f"{name} column {shorten(column)} (dtype {frame[column].dtype}) cannot "
                    f"be converted to a Polars column: {_cut(column_exc)}. Give it one type "
                    f"first, e.g. {name}[{shorten(column)}].astype(str)"
                ) from None  # the message quotes Arrow's; its traceback says nothing more
        raise TypeError(f"{name} cannot be converted to a Polars frame: {_cut(exc)}") from None


def _cut(error: Exception) -> str:
    # Arrow's message quotes the offending value, which can be any size
    text = str(error)
    limit = 200
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def unused_name(columns: Sequence[str], stem: str) -> str:
    """A column name starting with ``stem`` that is not in ``columns``."""
    name = stem
    while name in columns:
        name += "_"
    return name


_STRINGS = (pl.String, pl.Categorical, pl.Enum)


def _same_family(result: pl.DataType, source: pl.DataType) -> bool:
    # Keys of a string family are joined as String by the core, whatever they were.
    if isinstance(result, _STRINGS) and isinstance(source, _STRINGS):
        return True
    return result == source


def _nullable(column: pl.Series, index: pd.Index) -> pd.Series:
    array = _NULLABLE[column.dtype].__from_arrow__(column.to_arrow())
    return pd.Series(array, index=index, name=column.name, copy=False)


def _restore(values: pd.Series, column: pl.Series, original: Any) -> pd.Series | None:
    """``values`` (the default conversion of ``column``) in the input's dtype ``original``.

    ``None`` when ``values`` already has that dtype or none can hold the values.
    """
    if values.dtype == original:
        return None
    if isinstance(original, pd.CategoricalDtype):
        present = column.drop_nulls().unique(maintain_order=True)
        if isinstance(present.dtype, (pl.Categorical, pl.Enum)):
            present = present.cast(pl.String)
        labels = pd.Index(present.to_list())
        extra = labels[~labels.isin(original.categories)]
        if len(extra):
            # Values the input's categories lack (e.g. truth users absent from recs)
            # are appended, never turned into NaN.
            original = pd.CategoricalDtype(
                original.categories.append(extra), ordered=original.ordered
            )
        return values.astype(original)
    try:
        return values.astype(original)
    except (TypeError, ValueError):
        # Typically an integer or boolean column that gained nulls (the truth rows of
        # relevance()): its nullable pandas dtype keeps the values exact.
        if column.dtype in _NULLABLE:
            return _nullable(column, values.index)
        return None


def _arrow_backed(frame: pd.DataFrame) -> bool:
    dtypes = list(frame.dtypes)
    return bool(dtypes) and all(isinstance(dtype, pd.ArrowDtype) for dtype in dtypes)


_WIDE = (pl.Int128, pl.UInt128)


def _narrow_wide_integers(
    result: pl.DataFrame, sources: Sequence[Source]
) -> tuple[pl.DataFrame, dict[str, list[Any]]]:
    """Ids the core compared as 128-bit integers, in a dtype pandas holds.

    Keys of two widths (UInt64 against Int64) are joined as Int128, which
    neither Arrow's pandas conversion nor numpy holds. Such a column goes back
    to an input's dtype, else Int64 or UInt64, whichever holds every value;
    failing all of them, to Python ints (an object column), exact.
    """
    wide: dict[str, list[Any]] = {}
    for name, dtype in result.schema.items():
        if not isinstance(dtype, _WIDE):
            continue
        candidates = [schema[name] for _, schema in sources if name in schema]
        for target in [*candidates, pl.Int64(), pl.UInt64()]:
            if not target.is_integer() or isinstance(target, _WIDE):
                continue
            try:
                result = result.with_columns(pl.col(name).cast(target))
                break
            except pl.exceptions.InvalidOperationError:
                continue
        else:
            wide[name] = result.get_column(name).to_list()
    return result, wide


def to_pandas(
    result: pl.DataFrame, sources: Sequence[Source], *, index: pd.Index | None = None
) -> pd.DataFrame:
    """Convert a result back to pandas, with the dtypes of its input frames.

    A column also present in a source (first source first) whose Polars dtype
    still matches gets that source's pandas dtype. Any other column: when the
    first source is entirely pyarrow-backed, a ``pd.ArrowDtype``; otherwise
    the numpy dtype, or the nullable pandas dtype (``UInt32``, ``boolean``...)
    for an integer or boolean column with missing values. Floats keep NaN.
    128-bit integer ids (keys of two integer widths) come back as
    :func:`_narrow_wide_integers` says.
    """
    arrow = _arrow_backed(sources[0][0])
    result, wide = _narrow_wide_integers(result, sources)
    out = result.drop(list(wide)).to_pandas(use_pyarrow_extension_array=arrow)
    for name, values in wide.items():
        out.insert(result.columns.index(name), name, pd.Series(values, dtype=object))
    for name, dtype in result.schema.items():
        if name in wide:
            continue  # Python ints already: no pandas integer dtype holds them
        column = result.get_column(name)
        original = next(
            (
                frame.dtypes[name]
                for frame, schema in sources
                if name in schema and _same_family(dtype, schema[name])
            ),
            None,
        )
        restored = None
        if original is not None:
            restored = _restore(out[name], column, original)
        elif not arrow and dtype in _NULLABLE and column.null_count():
            restored = _nullable(column, out.index)
        if restored is not None:
            out[name] = restored
    if index is not None:
        out.index = index
    return out
