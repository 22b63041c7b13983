r"""Reading text files with the Polars engine, and errors that point at a line.

Shared by :mod:`polars_rankmetrics.trec` and :mod:`polars_rankmetrics.kaggle`.
Every reader starts with :func:`read_bytes`: the file's bytes, gzip
decompressed, the UTF-8 byte-order mark dropped and every line ending
(``\n``, ``\r\n``, a lone ``\r``) made ``\n``. Parsing then runs in Polars'
CSV reader or string kernels (no Python loop per line), and every complaint
names the file, the line number and the line.
"""

from __future__ import annotations

import gzip
import io
import os
import re
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, TypeAlias

import polars as pl

__all__ = [
    "LINE",
    "LINENO",
    "PIECE",
    "FileSource",
    "check_no_whitespace",
    "direct_path",
    "fail_on",
    "file_error",
    "line_pieces",
    "lines_of",
    "read_bytes",
    "read_lines",
    "require_frame_columns",
    "single_spaced",
    "source_name",
    "utf8_error",
]

FileSource: TypeAlias = "str | os.PathLike[str] | bytes | IO[bytes] | IO[str]"
"""A path, the file's bytes, or an open binary or text stream."""

LINENO = "lineno"
LINE = "line"


def source_name(source: FileSource, what: str | None = None) -> str:
    r"""How error messages name ``source``: its path, or a placeholder for in-memory data.

    ``what`` says what the data is (``"submission"``), so that two in-memory
    sources are told apart: ``<submission bytes>``, ``<solution stream>``.

    Examples
    --------
    >>> source_name(b"a,b\n"), source_name(b"a,b\n", "solution")
    ('<bytes>', '<solution bytes>')
    """
    if isinstance(source, (str, os.PathLike)):
        return str(Path(source))
    name = getattr(source, "name", None)
    if isinstance(name, str):
        return name
    kind = "bytes" if isinstance(source, bytes) else "stream"
    return f"<{what} {kind}>" if what else f"<{kind}>"


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


def utf8_error(name: str, data: bytes) -> ValueError:
    """The error for bytes that are not UTF-8, naming the first bad line."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as error:
        lineno = data.count(b"\n", 0, error.start) + 1
        start = data.rfind(b"\n", 0, error.start) + 1
        end = data.find(b"\n", error.start)
        line = data[start : end if end >= 0 else len(data)].decode("utf-8", "replace")
        return file_error(
            name, lineno, line, "not UTF-8 text (byte " + hex(data[error.start]) + ")"
        )
    return ValueError(f"{name}: cannot be read as UTF-8 text")


def read_bytes(source: FileSource) -> tuple[str, bytes]:
    r"""The name used in messages and the bytes of ``source``, ready for a line parser.

    Gzip data is decompressed; a UTF-8 byte-order mark is dropped; ``\r\n``
    and lone ``\r`` line endings become ``\n`` (a file saved with old Mac
    line endings is otherwise one long line).

    Raises
    ------
    FileNotFoundError
        For a missing path.
    ValueError
        For a directory or truncated gzip data, naming the file.

    Examples
    --------
    >>> read_bytes(b"\xef\xbb\xbfa b\rc d\r\n")
    ('<bytes>', b'a b\nc d\n')
    """
    name = source_name(source)
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if path.is_dir():
            raise ValueError(f"{name}: is a directory, not a file")
        if not path.exists():
            raise FileNotFoundError(f"{name}: no such file")
        data = path.read_bytes()
    elif isinstance(source, bytes):
        data = source
    elif isinstance(source, io.TextIOBase):
        data = source.read().encode()
    else:
        raw = source.read()
        data = raw.encode() if isinstance(raw, str) else raw
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (EOFError, OSError, zlib.error) as error:
            raise ValueError(f"{name}: truncated or corrupt gzip data ({error})") from None
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if b"\r" in data:
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    return name, data


_SCAN = 1 << 24
"""Bytes read at a time by :func:`direct_path` (the file is never held whole)."""


def direct_path(source: FileSource) -> Path | None:
    r"""The path of ``source`` when Polars' reader can read the file as it is, else None.

    That is a path to a file that is not gzip data, does not start blank, and
    ends its lines with ``\n`` or ``\r\n`` only (Polars' CSV reader reads
    both, and a UTF-8 byte-order mark); a lone ``\r`` (old Mac line endings)
    needs :func:`read_bytes`. The file is scanned in pieces, so a reader given
    the path holds the parsed frame without the file's bytes beside it.
    """
    if not isinstance(source, (str, os.PathLike)):
        return None
    path = Path(source)
    if not path.is_file():
        return None
    with path.open("rb") as file:
        chunk = file.read(_SCAN)
        if chunk[:2] == b"\x1f\x8b" or not chunk.removeprefix(b"\xef\xbb\xbf").strip():
            return None
        while chunk:
            if b"\r" in chunk:
                if chunk.endswith(b"\r"):
                    chunk += file.read(1)
                if chunk.count(b"\r") != chunk.count(b"\r\n"):
                    return None
            chunk = file.read(_SCAN)
    return path


PIECE = 1 << 20
"""Bytes parsed at a time by the readers that take a file piece by piece."""

# every character the general readers' ``\s`` splits on, except the space and the line end
_OTHER_SPACE = re.compile(
    rb"[\t\x0b\x0c]|\xc2[\x85\xa0]|\xe1\x9a\x80|\xe2\x80[\x80-\x8a\xa8\xa9\xaf]"
    rb"|\xe2\x81\x9f|\xe3\x80\x80"
)


def line_pieces(path: Path, size: int | None = None) -> Iterator[bytes]:
    r"""The file at ``path`` (from :func:`direct_path`) in pieces of whole lines.

    Each piece is about ``size`` bytes (default :data:`PIECE`) and ends at a
    line end (or the file's end); a UTF-8 byte-order mark is dropped. Only one
    piece is held at a time, so a reader that parses each piece and keeps only
    what it needs never holds the file's bytes or all its fields as text.
    """
    with path.open("rb") as file:
        # the mark is looked for alone: a first piece of 3 bytes or fewer would end the file
        if file.read(3) != b"\xef\xbb\xbf":
            file.seek(0)
        piece = file.read(size or PIECE)
        while piece:
            if not piece.endswith(b"\n"):
                piece += file.readline()
            yield piece
            piece = file.read(size or PIECE)


def single_spaced(piece: bytes) -> bool:
    r"""Whether the only whitespace in ``piece`` is the space and the line end.

    A tab or another Unicode space (which the general readers split on, as
    ``\s`` does) sends the file to the general path.
    """
    if b"\t" in piece or b"\x0b" in piece or b"\x0c" in piece:
        return False
    return piece.isascii() or _OTHER_SPACE.search(piece) is None


def read_lines(source: FileSource) -> tuple[str, pl.DataFrame]:
    r"""Read ``source`` into a frame of ``lineno`` (UInt32, from 1) and ``line`` (String).

    Line endings (``\n``, ``\r\n``, ``\r``) and a UTF-8 byte-order mark are
    removed; blank lines are kept so that line numbers stay those an editor
    shows.

    Returns
    -------
    The name used in messages and the frame.

    Examples
    --------
    >>> name, lines = read_lines(b"a b\r\n\nc\rd\n")
    >>> name, lines.rows()
    ('<bytes>', [(1, 'a b'), (2, ''), (3, 'c'), (4, 'd')])
    """
    name, data = read_bytes(source)
    return name, lines_of(name, data)


def lines_of(name: str, data: bytes) -> pl.DataFrame:
    """The ``lineno``/``line`` frame of bytes from :func:`read_bytes` (``name`` for errors)."""
    if data.endswith(b"\n"):
        data = data[:-1]
    try:
        text = pl.Series(LINE, [data], dtype=pl.Binary).cast(pl.String)
    except pl.exceptions.PolarsError:
        raise utf8_error(name, data) from None
    del data
    lines = (
        text.str.split("\n")
        .explode(empty_as_null=True)
        .to_frame()
        .with_row_index(LINENO, offset=1)
        .with_columns(pl.col(LINENO).cast(pl.UInt32), pl.col(LINE).fill_null(""))
    )
    if lines.height == 1 and lines[LINE][0] == "":
        return lines.clear()
    return lines


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
