"""Parsing Kaggle-style CSV files (wide or long) into long frames, with Polars.

Private helper of :mod:`polars_rankmetrics.kaggle`. A file becomes a
:class:`Table`: every id it lists (also those with an empty prediction) and
one row per listed item with its rank. Errors name the file, the line number
and the line.
"""

from __future__ import annotations

import csv
import difflib
import io
import itertools
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, cast

import polars as pl

from polars_rankmetrics._textfiles import (
    LINENO,
    FileSource,
    direct_path,
    file_error,
    line_pieces,
    read_bytes,
    source_name,
    utf8_error,
)

__all__ = [
    "Cells",
    "Duplicates",
    "Example",
    "Layout",
    "Names",
    "Source",
    "Table",
    "item_lists",
    "read_cells",
    "read_table",
    "refuse",
    "refuse_other_encodings",
    "table_of",
]

Layout = Literal["auto", "wide", "long"]
Duplicates = Literal["first", "error"]


@dataclass(frozen=True)
class Source:
    """Where rows came from: the name in messages and how to quote line (or row) ``n``."""

    name: str
    quote: Callable[[int], str]
    unit: str = "line"

    def error(self, lineno: int, problem: str, *, more: int = 0) -> ValueError:
        """:func:`file_error` for line ``lineno``, quoting it."""
        error = file_error(self.name, lineno, self.quote(lineno), problem, more=more)
        if self.unit != "line":
            return ValueError(str(error).replace(", line ", f", {self.unit} ", 1))
        return error


def _line_quoter(source: FileSource, data: bytes) -> Callable[[int], str]:
    """Quote line ``n`` of the file: re-read from a path (no copy kept), else from the bytes."""
    keep = None if isinstance(source, (str, os.PathLike)) else data

    def quote(lineno: int) -> str:
        text = keep if keep is not None else read_bytes(source)[1]
        lines = text.split(b"\n", lineno)
        return lines[lineno - 1].decode("utf-8", "replace") if lineno <= len(lines) else ""

    return quote


def _locate(name: str, data: bytes, header: str, n_fields: int) -> ValueError | None:
    """Find the first malformed CSV record (runs only once a file is refused).

    Python's csv module with ``strict=True`` reads records as the CSV standard
    says, which tells the line a record starts on, unlike Polars' error.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return utf8_error(name, data)
    lines = text.split("\n")
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    start = 1
    while True:
        start = reader.line_num + 1
        try:
            record = next(reader)
        except StopIteration:
            return None
        except csv.Error as error:
            return file_error(name, start, lines[start - 1], f"malformed CSV quoting ({error})")
        if reader.line_num > start > 1:
            return file_error(
                name, start, lines[start - 1], "a quoted field runs over several lines "
                "(a missing closing quote?)"
            )  # fmt: skip
        if record and len(record) != n_fields:
            return file_error(
                name, start, lines[start - 1], f"expected {n_fields} comma-separated fields "
                f"like the header {header!r}"
            )  # fmt: skip


_HEAD = 1 << 12
"""Bytes looked at for a text encoding other than UTF-8."""

_WIDE_ENCODINGS = (
    (b"\xff\xfe\x00\x00", "UTF-32"),
    (b"\x00\x00\xfe\xff", "UTF-32"),
    (b"\xff\xfe", "UTF-16"),
    (b"\xfe\xff", "UTF-16"),
)


def refuse_other_encodings(name: str, head: bytes) -> None:
    """Refuse a file whose first bytes are UTF-16 or UTF-32 text (or hold NUL bytes).

    Such a file read as UTF-8 gives a garbled header or ids full of NUL
    characters that match nothing. Decoding it would hold the whole file
    twice (bytes and text): saving it as UTF-8 is the user's one step.
    """
    if b"\x00" not in head:
        # a CSV header is ASCII: UTF-16 and UTF-32 text always holds NUL bytes there
        return
    encoding = next((e for bom, e in _WIDE_ENCODINGS if head.startswith(bom)), None)
    if encoding is None:
        # ASCII text: UTF-16 has a NUL in every other byte, UTF-32 in three of every four
        quads = head[: len(head) // 4 * 4]
        if _mostly_nul(quads[1::4]) and _mostly_nul(quads[2::4]):
            encoding = "UTF-32"
        elif _mostly_nul(head[0::2]) or _mostly_nul(head[1::2]):
            encoding = "UTF-16"
    if encoding is None:
        lineno = head.count(b"\n", 0, head.index(b"\x00")) + 1
        raise ValueError(
            f"{name}, line {lineno}: holds NUL bytes, which no CSV text has: save it as UTF-8 text"
        )
    raise ValueError(f"{name} is {encoding} encoded: save it as UTF-8")


def _mostly_nul(data: bytes) -> bool:
    return bool(data) and data.count(0) >= len(data) / 2


def _file_head(source: object) -> bytes:
    """The first bytes of a plain (not gzip) file at a path, else b"" (checked once read)."""
    if not isinstance(source, (str, os.PathLike)) or not os.path.isfile(source):
        return b""
    with open(source, "rb") as file:
        head = file.read(_HEAD)
    return b"" if head[:2] == b"\x1f\x8b" else head


def _parse_csv(source: FileSource, what: str) -> tuple[Source, pl.DataFrame]:
    """Every field as text (null read as ""), plus LINENO; quoting as the CSV standard says.

    A plain file goes to Polars' reader by its path (its bytes are never held
    beside the frame); gzip data, old Mac line endings and bytes or streams are
    read first (:func:`read_bytes`).
    """
    path = direct_path(source)
    data = b""
    name = source_name(source, what)
    if path is None:
        _, data = read_bytes(source)
        refuse_other_encodings(name, data[:_HEAD])
        if not data.strip():
            raise ValueError(f"{name}: the file is empty; expected a CSV header on line 1")
    try:
        frame = pl.read_csv(
            path if path is not None else data,
            infer_schema=False,
            has_header=True,
            quote_char='"',
            row_index_name=LINENO,
            row_index_offset=2,
        )
    except pl.exceptions.PolarsError as error:
        raise _malformed(source, data, what) or ValueError(
            f"{name}: cannot be read as CSV: {error}"
        ) from None
    columns = [c for c in frame.columns if c != LINENO]
    spans = pl.any_horizontal(pl.col(columns).str.contains("\n", literal=True))
    if frame.height and frame.select(spans.any()).item():
        # line numbers below count one record per line: refuse records over several lines
        raise _malformed(source, data, what) or ValueError(
            f"{name}: a quoted field runs over several lines"
        )
    nulls = frame.select(pl.any_horizontal(pl.col(columns).is_null()).any()).item()
    frame = frame.with_columns(
        *([pl.col(columns).fill_null("")] if nulls else []), pl.col(LINENO).cast(pl.UInt32)
    )
    return Source(name, _line_quoter(source, data)), frame


def _malformed(source: FileSource, data: bytes, what: str) -> ValueError | None:
    """The error naming the first malformed record of a refused file (read again if needed)."""
    name = source_name(source, what)
    data = data or read_bytes(source)[1]
    header = data.split(b"\n", 1)[0].decode("utf-8", "replace")
    n_fields = len(next(csv.reader([header]), []))
    return _locate(name, data, header, n_fields)


def _frame_source(frame: object, what: str) -> tuple[Source, pl.DataFrame]:
    """A Polars frame (eager or lazy) read like a file: every column as text.

    The faces read every other kind of frame into Polars first
    (:mod:`polars_rankmetrics._frames`).
    """
    if isinstance(frame, pl.LazyFrame):
        frame = frame.collect()
    if not isinstance(frame, pl.DataFrame):
        raise TypeError(
            f"{what} must be a path, bytes, an open file, or a frame; got {type(frame).__name__}"
        )
    text = frame.select(pl.all().cast(pl.String).fill_null(""))

    def quote(row: int) -> str:
        return ",".join(str(value) for value in text.row(row - 1))

    named = text.with_row_index(LINENO, offset=1).with_columns(pl.col(LINENO).cast(pl.UInt32))
    return Source(f"<{what} frame>", quote, unit="row"), named


Names = tuple[str | None, ...] | str | None
"""Accepted header names of a column, first match first; ``None`` (alone or last): by position."""


def _column(
    source: Source,
    header: list[str],
    wanted: Names,
    *,
    fallback: int,
    role: str,
    found: tuple[int, ...] = (),
) -> int:
    if wanted is None:
        return fallback
    candidates = (wanted,) if isinstance(wanted, str) else wanted
    for candidate in candidates:
        if candidate is None:
            return fallback
        if candidate in header:
            return header.index(candidate)
    names = [c for c in candidates if c is not None]
    hint = difflib.get_close_matches(names[0], header, n=1)
    accepted = " or ".join(repr(c) for c in names)
    if hint:
        suggestion = f" (did you mean {hint[0]!r}?)"
    elif found:
        # another column was found by its name: the header is there, this column is named
        # otherwise (a long H&M solution holds 'article_id', not 'prediction')
        others = [c for i, c in enumerate(header) if i not in found]
        example = others[0] if len(others) == 1 else "..."
        keyword = "user" if "id" in role.split() else "item"
        suggestion = f" (name the column with {keyword}={example!r})"
    else:
        suggestion = " (is the header line missing?)"
    raise _header_error(source, f"the header has no {role} column {accepted}{suggestion}; header")


def _header_error(source: Source, problem: str) -> ValueError:
    if source.unit == "line":
        return source.error(1, problem)
    return ValueError(f"{source.name}: {problem.removesuffix('; header')}; columns")


def _stripped(frame: pl.DataFrame, column: str) -> pl.Expr:
    """``column`` without surrounding whitespace; left as it is (no copy) when it has none."""
    value = pl.col(column)
    # the first and last characters tell, without copying every value
    edges = value.str.head(1).str.contains(r"\s") | value.str.tail(1).str.contains(r"\s")
    return value.str.strip_chars() if frame.select(edges.any()).item() else value


@dataclass(frozen=True)
class Example:
    """Something noticed in a file, worth a warning: how many ids, and the first one."""

    count: int  # ids (wide: lines) concerned
    lineno: int
    user: str
    item: str  # the cell (commas) or the repeated item (repeats)


@dataclass(frozen=True)
class Table:
    """A parsed file: where it came from, every id it lists, and one row per listed item."""

    source: Source
    ids: pl.DataFrame  # LINENO, user[, type]: every id of the file, also those without an item
    rows: pl.DataFrame  # LINENO, user, item, rank (UInt32), [rel][, type]
    columns: tuple[str, str] = ("user", "item")  # the file's names of the id and item columns
    header: tuple[str, ...] = ()
    commas: Example | None = None  # item cells holding commas (not Kaggle's separator)
    repeats: Example | None = None  # ids listing an item more than once (the first kept)

    @property
    def name(self) -> str:
        """The file's name in messages."""
        return self.source.name


def refuse(source: Source, data: pl.DataFrame, bad: pl.Expr, problem: str) -> None:
    """Raise for the first line of ``data`` where ``bad`` holds, counting the others."""
    offending = data.filter(bad.fill_null(value=True)).select(LINENO).unique().sort(LINENO)
    if offending.height:
        raise source.error(offending[LINENO][0], problem, more=offending.height - 1)


@dataclass
class Cells:
    """A parsed file before its cells are split: one row per record, the layout decided.

    :func:`table_of` consumes it (it releases ``data`` piece by piece).
    """

    source: Source
    data: pl.DataFrame  # LINENO, user, __cell[, rel]: ids checked, blank records dropped
    wide: bool
    what: str
    duplicates: Duplicates
    graded: bool
    columns: tuple[str, str] = ("user", "item")
    header: tuple[str, ...] = ()
    commas: Example | None = None


def read_table(
    source: FileSource | pl.DataFrame | pl.LazyFrame | object,
    *,
    what: str,
    user: Names,
    item: Names,
    layout: Layout,
    duplicates: Duplicates,
    relevance: str | None = None,
    relevance_from: tuple[tuple[str, float], ...] = (),
    line_numbers: bool = True,
) -> Table:
    """Parse a CSV file or a frame (wide or long) into a :class:`Table`.

    ``line_numbers=False``: the rows of a wide file lose :data:`LINENO` once
    checked (the readers that return them save its memory).
    """
    cells = read_cells(
        source,
        what=what,
        user=user,
        item=item,
        layout=layout,
        duplicates=duplicates,
        relevance=relevance,
        relevance_from=relevance_from,
    )
    return table_of(cells, line_numbers=line_numbers)


def table_of(cells: Cells, *, line_numbers: bool = True) -> Table:
    """One row per listed item of ``cells``, with its rank; ``cells`` is consumed.

    Wide cells are split a piece of the file at a time and each piece's text
    released once listed, so the file's text and the long frame are never
    held whole at once.
    """
    origin, data, what = cells.source, cells.data, cells.what
    cells.data = data.clear()
    ids = data.select(LINENO, "user")
    if cells.wide:
        pieces = _pieces(_single_spaced(data))
        del data
        rows, repeats = _explode_wide(
            origin, pieces, what=what, duplicates=cells.duplicates, line_numbers=line_numbers
        )
    else:
        refuse(origin, data, pl.col("__cell") == "", f"empty {what} item")
        rows, repeats = _number_long(origin, data, what=what, duplicates=cells.duplicates)
    keep = [LINENO, "user", "item", "rank", *(["rel"] if cells.graded else [])]
    keep = [column for column in keep if column in rows.columns]
    return Table(origin, ids, rows.select(keep), cells.columns, cells.header, cells.commas, repeats)


def _pieces(data: pl.DataFrame, rows: int = 1 << 16) -> list[pl.DataFrame]:
    """``data`` cut into row ranges along the chunks of its cells (as the CSV reader made them).

    A piece that is a whole chunk holds the only reference to that chunk's
    text, which is freed once the piece is listed.
    """
    lengths = [len(chunk) for chunk in data["__cell"].get_chunks()]
    if len(lengths) == 1:
        lengths = [rows] * (data.height // rows + 1)
    pieces, start = [], 0
    for length in lengths:
        if length and start < data.height:
            pieces.append(data.slice(start, length))
        start += length
    return pieces or [data]


PIECE = 16 << 20
"""Bytes parsed at a time from a plain CSV file (smaller pieces read slower: 1 MiB ones 1.5-2x)."""

Grades = list[tuple[int, float]]
"""The grade columns: each one's position in the header and its weight."""

Wanted = tuple[Names, Names, str | None, tuple[tuple[str, float], ...]]
"""The columns asked for: user, item, relevance and relevance_from, as in :func:`read_cells`."""


def _header_columns(
    origin: Source, header: list[str], what: str, wanted: Wanted
) -> tuple[int, int, Grades]:
    """The positions of the id, item and grade columns in ``header``; raises for a bad header."""
    user, item, relevance, relevance_from = wanted
    if len(header) < 2 or any(not column for column in header):
        raise _header_error(
            origin, "expected a CSV header naming at least two columns, e.g. 'id,prediction'"
        )
    user_at = _column(origin, header, user, fallback=0, role=f"{what} id")
    user_names = (user,) if isinstance(user, str) else (user or ())
    # the columns found by their names: then the header is there, whatever else is missing
    named = (user_at,) if header[user_at] in user_names else ()
    item_at = _column(origin, header, item, fallback=1, role=f"{what} item", found=named)
    if relevance is not None:
        grades = [(_column(origin, header, relevance, fallback=-1, role="relevance"), 1.0)]
    else:
        grades = [(header.index(c), grade) for c, grade in relevance_from if c in header]
        if relevance_from and not grades:
            names = ", ".join(repr(c) for c, _ in relevance_from)
            raise _header_error(origin, f"the header has none of {names} (the grades) and "
                                "no relevance column was given; header")  # fmt: skip
    return user_at, item_at, grades


def _selected(
    frame: pl.DataFrame, header: list[str], user_at: int, item_at: int, grades: Grades
) -> pl.DataFrame:
    """LINENO, ``user``, ``__cell`` (both stripped) and each grade as a number (null if not)."""
    return frame.select(
        LINENO,
        _stripped(frame, header[user_at]).alias("user"),
        _stripped(frame, header[item_at]).alias("__cell"),
        *[
            pl.col(header[i]).str.strip_chars().cast(pl.Float64, strict=False).alias(f"__g{i}")
            for i, _ in grades
        ],
    )


def _piece_cells(
    source: object, what: str, wanted: Wanted
) -> tuple[Source, list[str], tuple[int, int, Grades], pl.DataFrame] | None:
    """The source, header, column positions and :func:`_selected` columns of a plain file, or None.

    The file is parsed a piece of whole lines at a time (:func:`line_pieces`),
    as :func:`_parse_csv` parses it whole, and each piece keeps only the
    columns read: the file's bytes and its fields as text are never held
    whole. None (:func:`_parse_csv` reads the file and reports what it must)
    for anything a piece cannot read exactly as the whole file is read: not a
    plain file (:func:`direct_path`), a ``"`` (quoted fields may hold a line
    end), a header the checks refuse, a line Polars refuses (too many fields,
    not UTF-8), or a piece whose rows are not its lines.
    """
    path = (
        direct_path(cast("FileSource", source)) if isinstance(source, (str, os.PathLike)) else None
    )
    if path is None:
        return None
    file = cast("FileSource", source)
    origin = Source(source_name(file), _line_quoter(file, b""))
    frames: list[pl.DataFrame] = []
    header: list[str] = []
    rows = 0
    for piece in line_pieces(path, PIECE):
        if b'"' in piece:
            return None
        lines = piece.count(b"\n") + (not piece.endswith(b"\n")) - (not header)
        try:
            frame = pl.read_csv(
                piece,
                infer_schema=False,
                has_header=not header,
                schema=dict.fromkeys(header, pl.String) if header else None,
                quote_char='"',
                row_index_name=LINENO,
                row_index_offset=2 + rows,
            )
        except pl.exceptions.PolarsError:
            return None
        del piece
        if frame.height != lines:
            return None
        if not header:
            header = [c for c in frame.columns if c != LINENO]
            try:
                user_at, item_at, grades = _header_columns(origin, header, what, wanted)
            except ValueError:
                return None
            read = [header[user_at], header[item_at], *(header[i] for i, _ in grades)]
        frame = frame.with_columns(pl.col(read).fill_null(""), pl.col(LINENO).cast(pl.UInt32))
        frames.append(_selected(frame, header, user_at, item_at, grades))
        rows += frame.height
        del frame
    if not frames:
        return None
    return origin, header, (user_at, item_at, grades), pl.concat(frames, rechunk=False)


def _parsed(
    source: object, what: str, columns: Wanted
) -> tuple[Source, list[str], tuple[int, int, Grades], pl.DataFrame]:
    """The source, header, column positions and :func:`_selected` columns of any input."""
    if isinstance(source, (str, os.PathLike, bytes, io.IOBase)):
        origin, frame = _parse_csv(cast("FileSource", source), what)
    else:
        origin, frame = _frame_source(source, what)
    header = [c for c in frame.columns if c != LINENO]
    positions = _header_columns(origin, header, what, columns)
    return origin, header, positions, _selected(frame, header, *positions)


def read_cells(
    source: FileSource | pl.DataFrame | pl.LazyFrame | object,
    *,
    what: str,
    user: Names,
    item: Names,
    layout: Layout,
    duplicates: Duplicates,
    relevance: str | None = None,
    relevance_from: tuple[tuple[str, float], ...] = (),
) -> Cells:
    """Parse a CSV file or a frame into :class:`Cells`: header, ids and layout checked."""
    if layout not in ("auto", "wide", "long"):
        raise ValueError(f"layout must be 'auto', 'wide' or 'long', got {layout!r}")
    if duplicates not in ("first", "error"):
        raise ValueError(f"duplicates must be 'first' or 'error', got {duplicates!r}")
    columns: Wanted = (user, item, relevance, relevance_from)
    head = _file_head(source)
    if head:
        refuse_other_encodings(source_name(cast("FileSource", source), what), head)
    pieces = _piece_cells(source, what, columns)
    origin, header, (user_at, item_at, grades), data = pieces or _parsed(source, what, columns)
    # a line with nothing in it (a blank line) is no record
    record = (pl.col("user") != "") | (pl.col("__cell") != "")
    # Kaggle separates items by spaces: a comma in a cell is a list written the wrong way
    comma = pl.col("__cell").str.contains(",", literal=True)
    # a cell holds a comma only when quoted: the pieces (files without quotes) hold none
    test = comma.any() if pieces is None else pl.lit(value=False)
    all_records, any_comma = data.select(record.all(), test).row(0)
    if not all_records:
        data = data.filter(record)
    if not data.height:
        # as evaluate refuses a file without rows: a header alone is never a submission
        unit = "file" if origin.unit == "line" else "frame"
        raise ValueError(f"{origin.name}: the {unit} has a header but no rows (columns {header})")
    commas = _example(data, comma, "__cell") if any_comma else None
    refuse(origin, data, pl.col("user") == "", f"empty {what} id")
    for index, _ in grades:
        number = pl.col(f"__g{index}")
        refuse(origin, data, number.is_null() | number.is_nan(),
               f"column {header[index]!r} is not a number")  # fmt: skip
    if grades:
        # Expedia: booked (5) beats clicked (1); a single relevance column is its own grade
        graded = [pl.when(pl.col(f"__g{i}") != 0).then(g * pl.col(f"__g{i}")) for i, g in grades]
        data = data.with_columns(pl.max_horizontal(*graded).fill_null(0.0).alias("rel"))
    ids_repeat = data["user"].n_unique() != data.height
    wide = layout == "wide" or (layout == "auto" and not ids_repeat and not grades)
    if layout == "auto" and ids_repeat and data["__cell"].str.contains(r"\S\s+\S").any():
        raise ValueError(
            f"{origin.name}: ids repeat (long layout) but some cells hold several "
            "space-separated items (wide layout); pass layout='wide' or layout='long'"
        )
    if wide and ids_repeat:
        refuse_repeats(origin, data, ["user"], f"{what} id listed again")
    keep = [LINENO, "user", "__cell", *(["rel"] if grades else [])]
    names = (header[user_at], header[item_at])
    return Cells(
        origin, data.select(keep), wide, what, duplicates, bool(grades), names, tuple(header),
        commas,
    )  # fmt: skip


def _example(rows: pl.DataFrame, bad: pl.Expr, item: str) -> Example:
    """How many ids of ``rows`` ``bad`` holds for, and the first such row (its ``item``)."""
    found = rows.filter(bad)
    first = found.sort(LINENO).row(0, named=True)
    return Example(found["user"].n_unique(), first[LINENO], first["user"], first[item])


def _explode_wide(
    source: Source,
    pieces: list[pl.DataFrame],
    *,
    what: str,
    duplicates: Duplicates,
    line_numbers: bool = True,
) -> tuple[pl.DataFrame, Example | None]:
    """One row per item of each space-separated cell; rank = position in the cell.

    ``pieces`` (single-spaced cells, in file order) are listed one at a time
    and dropped: the text of a piece is freed as soon as its rows exist. A
    line never spans two pieces, so the ranks and the repeats within a line
    are found piece by piece. Returns the rows and the repeats dropped (with
    ``duplicates="first"``): how many lines had one, and the first.
    """
    listed, offending, repeated = [], [], []
    while pieces:
        piece = pieces.pop(0)
        cell = pl.col("__cell")
        rows = (
            piece.select(
                LINENO,
                "user",
                *(["rel"] if "rel" in piece.columns else []),
                cell.str.split(" ").alias("item"),
            )
            .explode("item", empty_as_null=False)
            .filter(pl.col("item") != "")
        )
        del piece
        # the rows of one line are contiguous: number each run, no hashing
        index = pl.int_range(pl.len(), dtype=pl.UInt32)
        starts = (pl.col(LINENO) != pl.col(LINENO).shift(1)).fill_null(value=True)
        rank = index - pl.when(starts).then(index).forward_fill() + 1
        rows = rows.with_columns(rank.alias("rank"))
        if not _all_distinct(rows, [LINENO, "item"]):
            first = pl.col("rank") == pl.col("rank").min().over(LINENO, "item")
            again = rows.filter(~first).select(LINENO, "user", "item", "rank")
            if duplicates == "error":
                offending.append(again.sort(LINENO, "rank"))
            repeated.append(again)
            # Kaggle's apk and OTTO's evaluator: the first copy counts, a repeat wastes its slot
            rows = rows.filter(first)
        listed.append(rows if line_numbers else rows.drop(LINENO))
    if offending:
        repeats = pl.concat(offending)
        problem = f"{what} item {repeats['item'][0]!r} listed twice for this id"
        refuse(source, repeats, pl.lit(value=True), problem)
    found = _repeats(pl.concat(repeated)) if repeated else None
    return pl.concat(listed, rechunk=False), found


def _repeats(again: pl.DataFrame) -> Example:
    """The :class:`Example` of the repeated rows ``again``: ids concerned, the first repeat."""
    first = again.sort(LINENO, "rank").row(0, named=True)
    return Example(again["user"].n_unique(), first[LINENO], first["user"], first["item"])


def _single_spaced(data: pl.DataFrame) -> pl.DataFrame:
    """``data`` with each cell's items separated by single spaces (cells are already stripped)."""
    cell = pl.col("__cell")
    odd = cell.str.contains("  ", literal=True) | cell.str.contains("\t", literal=True)
    if data.select(odd.any()).item():
        # only odd files pay for the regex: the usual cell has single spaces
        return data.with_columns(cell.str.replace_all(r"\s+", " ").str.strip_chars(" "))
    return data


def item_lists(cells: Cells, k: int | None = None) -> pl.DataFrame:
    """Each id of ``cells`` with its first ``k`` listed items (all with ``None``) as a list.

    Columns :data:`LINENO` (the id's first line), ``user`` and ``items``
    (``List(String)``; null for an empty wide cell). A repeated item keeps its
    first position and its repeat still takes a slot, as in :func:`table_of`;
    the list may hold the repeat (compare lists as sets). With
    ``duplicates="error"`` a repeat is refused as :func:`table_of` refuses it.
    Wide cells are split by ``str.split`` and never exploded.
    """
    if not cells.wide:
        rows = table_of(cells).rows
        if k is not None:
            rows = rows.filter(pl.col("rank") <= k)
        # an id's first line holds its rank-1 item, which the cut keeps
        return (
            rows.group_by("user", maintain_order=True)
            .agg(pl.col(LINENO).first(), pl.col("item").alias("items"))
            .select(LINENO, "user", "items")
        )
    data = _single_spaced(cells.data)
    cell = pl.col("__cell")
    # after stripping and single-spacing, only an empty cell splits into an empty item
    items = pl.when(cell != "").then(cell.str.split(" ")).alias("items")
    lists = data.select(LINENO, "user", items)
    if cells.duplicates == "error":
        listed = pl.col("items")
        repeated = lists.filter(listed.list.n_unique() < listed.list.len())
        if repeated.height:
            lineno, listed_items = repeated.select(LINENO, "items").row(0)
            twice = next(i for n, i in enumerate(listed_items) if i in listed_items[:n])
            problem = f"{cells.what} item {twice!r} listed twice for this id"
            raise cells.source.error(lineno, problem, more=repeated.height - 1)
    if k is not None:
        lists = lists.with_columns(pl.col("items").list.head(k))
    return lists


def _all_distinct(frame: pl.DataFrame, keys: list[str]) -> bool:
    """Whether no two rows share ``keys``; hashes first (a fraction of the keys' memory)."""
    mixed = pl.col(keys[0]).hash()
    for key in keys[1:]:
        mixed = mixed ^ (pl.col(key).hash() * 0x9E3779B97F4A7C15)
    # hashed a slice at a time: the whole column's intermediate hashes are never held at once
    # (slices of the frame, not iter_slices: that aligns the chunks of all columns, a copy)
    step = 1 << 16
    parts = [frame.slice(at, step).select(mixed).to_series() for at in range(0, frame.height, step)]
    hashes = pl.concat(parts).n_unique() if parts else 0
    del parts
    # distinct hashes prove distinct rows; equal hashes may be a collision: look again
    return bool(hashes == frame.height or frame.select(keys).n_unique() == frame.height)


def _run_starts(users: pl.Series) -> pl.Series:
    """Whether each value differs from the one before it (the first: True); no nulls.

    Compared chunk by chunk: shifting a column of many chunks (a file read in
    pieces) copies its text, while shifting one chunk does not.
    """
    parts, previous = [], None
    for chunk in users.get_chunks():
        if not chunk.len():
            continue
        starts = (chunk != chunk.shift(1)).fill_null(value=previous is None or chunk[0] != previous)
        parts.append(starts)
        previous = chunk[-1]
    return pl.concat(parts) if parts else pl.Series(dtype=pl.Boolean)


def _number_long(
    source: Source, data: pl.DataFrame, *, what: str, duplicates: Duplicates
) -> tuple[pl.DataFrame, Example | None]:
    """One row per line; rank = order of the id's lines (a repeat keeps using its slot).

    Returns the rows and the repeats dropped (an item on a later line of its id).
    """
    data = data.rename({"__cell": "item"})
    starts = _run_starts(data.get_column("user"))
    if starts.sum() == data["user"].n_unique():
        # each id's lines are contiguous (the usual case): number the runs, no hashing
        index = pl.int_range(pl.len(), dtype=pl.UInt32)
        start = pl.when(pl.lit(starts)).then(index).forward_fill()
        rank = index - start + 1
    else:
        rank = pl.int_range(1, pl.len() + 1, dtype=pl.UInt32).over("user")
    ranks = data.select(rank.cast(pl.UInt32).alias("rank")).to_series()
    # cut along the chunks of the text (a file read in pieces): a frame whose columns are
    # chunked alike is selected from without copying its text (slices are no copy)
    lengths = [len(chunk) for chunk in data.get_column("user").get_chunks()]
    if len(lengths) > 1 and ranks.n_chunks() == 1:
        offsets = itertools.accumulate(lengths, initial=0)
        ranks = pl.concat(
            [ranks.slice(at, n) for at, n in zip(offsets, lengths, strict=False)], rechunk=False
        )
    data = data.with_columns(ranks)
    if _all_distinct(data, ["user", "item"]):
        return data, None
    if duplicates == "error":
        refuse_repeats(source, data, ["user", "item"], f"{what} item listed again for this id")
    first = pl.col("rank") == pl.col("rank").min().over("user", "item")
    data = data.with_columns(first.alias("__first"))
    again = _repeats(data.filter(~pl.col("__first")))
    return data.filter(pl.col("__first")).drop("__first"), again


def refuse_repeats(source: Source, data: pl.DataFrame, keys: list[str], problem: str) -> None:
    """Raise for the first line whose ``keys`` an earlier line already had."""
    first = pl.col(LINENO).min().over(keys)
    repeats = data.with_columns(__first=first).filter(pl.col(LINENO) != pl.col("__first"))
    if repeats.height:
        repeats = repeats.sort(LINENO)
        lineno, earlier = repeats[LINENO][0], repeats["__first"][0]
        raise source.error(
            lineno, f"{problem} (first on {source.unit} {earlier})", more=repeats.height - 1
        )
