"""Reading text files line by line with Polars, and errors that point at a line.

Shared by :mod:`polars_rankmetrics.trec` and :mod:`polars_rankmetrics.kaggle`:
both formats are parsed with Polars string expressions on a frame of
``(line number, line)`` rows, so no Python loop runs per row, and every
complaint names the file, the line number and the offending line.
"""

from __future__ import annotations

import io
import os
from collections.abc import Sequence
from pathlib import Path
from typing import IO, TypeAlias

import polars as pl

__all__ = [
    "LINE",
    "LINENO",
    "FileSource",
    "check_no_whitespace",
    "fail_on",
    "file_error",
    "read_lines",
    "require_frame_columns",
    "source_name",
]

FileSource: TypeAlias = "str | os.PathLike[str] | bytes | IO[bytes] | IO[str]"
"""A path, the file's bytes, or an open binary or text stream."""

LINENO = "lineno"
LINE = "line"


def source_name(source: FileSource) -> str:
    """How error messages name ``source``: its path, or a placeholder for in-memory data."""
    if isinstance(source, (str, os.PathLike)):
        return str(Path(source))
    name = getattr(source, "name", None)
    if isinstance(name, str):
        return name
    return "<bytes>" if isinstance(source, bytes) else "<stream>"


def file_error(name: str, lineno: int, line: str, problem: str, *, more: int = 0) -> ValueError:
    """Build a ``ValueError`` that says where: ``"run.txt, line 7: <problem>: '<line>'"``."""
    shown = line if len(line) <= 200 else line[:200] + "..."
    tail = f" ({more} more line(s) with the same problem)" if more else ""
    return ValueError(f"{name}, line {lineno}: {problem}: {shown!r}{tail}")


def fail_on(lines: pl.DataFrame, bad: pl.Expr, *, name: str, problem: str) -> None:
    """Raise :func:`file_error` for the first row of ``lines`` where ``bad`` holds.

    ``lines`` has the :data:`LINENO` and :data:`LINE` columns; the message also
    counts the other offending lines.
    """
    offending = lines.filter(bad.fill_null(value=True))
    if offending.height:
        first = offending.row(0, named=True)
        raise file_error(name, first[LINENO], first[LINE], problem, more=offending.height - 1)


def read_lines(source: FileSource) -> tuple[str, pl.DataFrame]:
    r"""Read ``source`` into a frame of ``lineno`` (UInt32, from 1) and ``line`` (String).

    Line endings (``\n`` or ``\r\n``) and a UTF-8 byte-order mark are removed;
    blank lines are kept so that line numbers stay those an editor shows.

    Returns
    -------
    The name used in messages and the frame.

    Examples
    --------
    >>> name, lines = read_lines(b"a b\r\n\nc\n")
    >>> name, lines.rows()
    ('<bytes>', [(1, 'a b'), (2, ''), (3, 'c')])
    """
    name = source_name(source)
    data: str | Path | IO[bytes] | bytes
    if isinstance(source, (str, os.PathLike)):
        data = Path(source)
        if not data.is_file():
            raise FileNotFoundError(f"{name}: no such file")
    elif isinstance(source, io.TextIOBase):
        data = source.read().encode()
    else:
        data = source  # type: ignore[assignment]
    try:
        lines = pl.read_lines(data, name=LINE, row_index_name=LINENO, row_index_offset=1)
    except pl.exceptions.ComputeError as error:
        raise ValueError(f"{name}: cannot be read as UTF-8 text ({error})") from None
    if lines.height:
        lines = lines.with_columns(
            pl.when(pl.col(LINENO) == 1)
            .then(pl.col(LINE).str.strip_prefix("\ufeff"))
            .otherwise(pl.col(LINE))
        )
    return name, lines


def check_no_whitespace(frame: pl.DataFrame, columns: Sequence[str], *, what: str) -> None:
    """Refuse ids that a whitespace-separated format could not read back."""
    for column in columns:
        bad = frame.filter(pl.col(column).cast(pl.String).str.contains(r"\s"))
        if bad.height:
            raise ValueError(
                f"cannot write {what}: column {column!r} has {bad.height} value(s) "
                f"containing whitespace, e.g. {bad[column][0]!r}; the format separates "
                "fields by whitespace"
            )


def require_frame_columns(frame: pl.DataFrame, columns: dict[str, str], what: str) -> None:
    """Refuse a frame that lacks a column for one of the roles in ``columns``."""
    missing = [f"{role}={name!r}" for role, name in columns.items() if name not in frame.columns]
    if missing:
        raise ValueError(
            f"cannot write {what}: the frame has no column for {', '.join(missing)}; "
            f"it has columns {frame.columns}"
        )
