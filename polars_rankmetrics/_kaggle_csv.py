"""Parsing Kaggle-style CSV files (wide or long) into long frames, with Polars.

Private helper of :mod:`polars_rankmetrics.kaggle`. A file becomes a
:class:`Table`: every id it lists (also those with an empty prediction) and
one row per listed item with its rank. Errors name the file, the line number
and the line.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Literal

import polars as pl

from polars_rankmetrics._textfiles import LINE, LINENO, FileSource, fail_on, file_error, read_lines

__all__ = ["Duplicates", "Layout", "Table", "read_table", "refuse"]

Layout = Literal["auto", "wide", "long"]
Duplicates = Literal["first", "error"]


def _unquote(field: pl.Expr) -> pl.Expr:
    """Strip spaces and one pair of surrounding double quotes (``""`` inside is ``"``)."""
    text = field.str.strip_chars()
    quoted = text.str.starts_with('"') & text.str.ends_with('"') & (text.str.len_chars() >= 2)
    inner = text.str.slice(1, text.str.len_chars() - 2).str.replace_all('""', '"', literal=True)
    return pl.when(quoted).then(inner).otherwise(text)


def _header(name: str, lines: pl.DataFrame) -> list[str]:
    if lines.height == 0:
        raise ValueError(f"{name}: the file is empty; expected a CSV header on line 1")
    line = lines[LINE][0]
    header = pl.Series([line]).str.split(",").explode()
    columns = pl.select(_unquote(pl.lit(header))).to_series().to_list()
    if len(columns) < 2 or any(not column for column in columns):
        raise file_error(
            name, 1, line, "expected a CSV header naming at least two columns, e.g. 'id,prediction'"
        )
    return columns


def _column(
    name: str,
    header: list[str],
    line: str,
    wanted: tuple[str, ...] | str | None,
    *,
    fallback: int,
    role: str,
) -> int:
    if wanted is None:
        return fallback
    candidates = (wanted,) if isinstance(wanted, str) else wanted
    for candidate in candidates:
        if candidate in header:
            return header.index(candidate)
    hint = difflib.get_close_matches(candidates[0], header, n=1)
    suggestion = f" (did you mean {hint[0]!r}?)" if hint else " (is the header line missing?)"
    accepted = " or ".join(repr(c) for c in candidates)
    raise file_error(
        name, 1, line, f"the header has no {role} column {accepted}{suggestion}; header"
    )


@dataclass(frozen=True)
class Table:
    """A parsed file: its name, every id it lists, and one row per listed item."""

    name: str
    lines: pl.DataFrame  # LINENO, LINE: to quote a line in an error
    ids: pl.DataFrame  # LINENO, user: every id of the file, also those listed without an item
    rows: pl.DataFrame  # LINENO, user, item, rank (UInt32), [rel]


def refuse(name: str, lines: pl.DataFrame, data: pl.DataFrame, bad: pl.Expr, problem: str) -> None:
    """Raise for the first line of ``data`` where ``bad`` holds, quoting it from ``lines``."""
    offending = data.filter(bad.fill_null(value=True)).select(LINENO).unique()
    if offending.height:
        quoted = lines.join(offending, on=LINENO, how="semi")
        fail_on(quoted, pl.lit(value=True), name=name, problem=problem)


def read_table(
    source: FileSource,
    *,
    what: str,
    user: tuple[str, ...] | str | None,
    item: tuple[str, ...] | str | None,
    layout: Layout,
    duplicates: Duplicates,
    relevance: str | None = None,
    relevance_from: tuple[tuple[str, float], ...] = (),
) -> Table:
    if layout not in ("auto", "wide", "long"):
        raise ValueError(f"layout must be 'auto', 'wide' or 'long', got {layout!r}")
    if duplicates not in ("first", "error"):
        raise ValueError(f"duplicates must be 'first' or 'error', got {duplicates!r}")
    name, lines = read_lines(source)
    header = _header(name, lines)
    header_line = lines[LINE][0]
    user_at = _column(name, header, header_line, user, fallback=0, role=f"{what} id")
    item_at = _column(name, header, header_line, item, fallback=1, role=f"{what} item")
    if relevance is not None:
        grades = [
            (_column(name, header, header_line, relevance, fallback=-1, role="relevance"), 1.0)
        ]
    else:
        grades = [(header.index(c), grade) for c, grade in relevance_from if c in header]
        if relevance_from and not grades:
            wanted = ", ".join(repr(c) for c, _ in relevance_from)
            raise file_error(name, 1, header_line, f"the header has none of {wanted} (the "
                             "grades) and no relevance column was given; header")  # fmt: skip
    lines = lines.filter(pl.col(LINE).str.strip_chars() != "")
    data = lines.filter(pl.col(LINENO) > 1).with_columns(__fields=pl.col(LINE).str.split(","))
    fail_on(
        data,
        pl.col("__fields").list.len() != len(header),
        name=name,
        problem=f"expected {len(header)} comma-separated fields like the header "
        f"{header_line!r} (quoted commas are not supported)",
    )
    field = pl.col("__fields").list
    data = data.select(
        LINENO,
        _unquote(field.get(user_at)).alias("user"),
        _unquote(field.get(item_at)).alias("__cell"),
        *[
            _unquote(field.get(i)).cast(pl.Float64, strict=False).alias(f"__g{i}")
            for i, _ in grades
        ],
    )
    refuse(name, lines, data, pl.col("user") == "", f"empty {what} id")
    for index, _ in grades:
        number = pl.col(f"__g{index}")
        refuse(name, lines, data, number.is_null() | number.is_nan(),
                f"column {header[index]!r} is not a number")  # fmt: skip
    if grades:
        # Expedia: booked (5) beats clicked (1); a single relevance column is its own grade
        graded = [pl.when(pl.col(f"__g{i}") != 0).then(g * pl.col(f"__g{i}")) for i, g in grades]
        data = data.with_columns(pl.max_horizontal(*graded).fill_null(0.0).alias("rel"))
    ids_repeat = data["user"].n_unique() != data.height
    wide = layout == "wide" or (layout == "auto" and not ids_repeat and not grades)
    if layout == "auto" and ids_repeat and data["__cell"].str.contains(r"\S\s+\S").any():
        raise ValueError(
            f"{name}: ids repeat (long layout) but some cells hold several space-separated "
            "items (wide layout); pass layout='wide' or layout='long'"
        )
    if wide:
        if ids_repeat:
            refuse_repeats(name, lines, data, ["user"], f"{what} id listed again")
        rows = _explode_wide(name, lines, data, what=what, duplicates=duplicates)
    else:
        refuse(name, lines, data, pl.col("__cell") == "", f"empty {what} item")
        rows = _number_long(name, lines, data, what=what, duplicates=duplicates)
    keep = [LINENO, "user", "item", "rank", *(["rel"] if grades else [])]
    return Table(name, lines, data.select(LINENO, "user"), rows.select(keep))


def _explode_wide(
    name: str, lines: pl.DataFrame, data: pl.DataFrame, *, what: str, duplicates: Duplicates
) -> pl.DataFrame:
    """One row per item of each space-separated cell; rank = position in the cell."""
    tokens = (
        pl.col("__cell")
        .str.replace_all("\t", " ", literal=True)
        .str.split(" ")
        .list.eval(pl.element().filter(pl.element() != ""))
    )
    data = data.with_columns(tokens.alias("item")).drop("__cell")
    repeated = pl.col("item").list.n_unique() < pl.col("item").list.len()
    if duplicates == "error":
        offending = data.filter(repeated)
        if offending.height:
            items = offending["item"][0]
            twice = next(item for i, item in enumerate(items) if item in items[:i])
            problem = f"{what} item {twice!r} listed twice for this id"
            refuse(name, lines, offending, pl.lit(value=True), problem)
    fixed = data.filter(repeated)
    if fixed.height:
        # Kaggle's apk and OTTO's evaluator: the first copy counts, a repeat wastes its slot
        first_copies = pl.when(pl.element().is_first_distinct()).then(pl.element())
        fixed = fixed.with_columns(pl.col("item").list.eval(first_copies))
        data = pl.concat([data.filter(~repeated), fixed]).sort(LINENO)
    rows = data.with_columns(pl.int_ranges(1, pl.col("item").list.len() + 1).alias("rank"))
    rows = rows.explode("item", "rank").with_columns(pl.col("rank").cast(pl.UInt32))
    return rows.filter(pl.col("item").is_not_null()) if fixed.height else rows


def _number_long(
    name: str, lines: pl.DataFrame, data: pl.DataFrame, *, what: str, duplicates: Duplicates
) -> pl.DataFrame:
    """One row per line; rank = order of the id's lines (a repeat keeps using its slot)."""
    data = data.rename({"__cell": "item"})
    starts = pl.col("user") != pl.col("user").shift(1)
    if data.select(starts.fill_null(value=True).sum()).item() == data["user"].n_unique():
        # each id's lines are contiguous (the usual case): number the runs, no hashing
        index = pl.int_range(pl.len(), dtype=pl.UInt32)
        start = pl.when(starts.fill_null(value=True)).then(index).forward_fill()
        rank = index - start + 1
    else:
        rank = pl.int_range(1, pl.len() + 1, dtype=pl.UInt32).over("user")
    data = data.with_columns(rank.cast(pl.UInt32).alias("rank"))
    if data.select("user", "item").n_unique() == data.height:
        return data
    if duplicates == "error":
        refuse_repeats(name, lines, data, ["user", "item"], f"{what} item listed again for this id")
    return data.filter(pl.col("rank") == pl.col("rank").min().over("user", "item"))


def refuse_repeats(
    name: str, lines: pl.DataFrame, data: pl.DataFrame, keys: list[str], problem: str
) -> None:
    """Raise for the first line whose ``keys`` an earlier line already had."""
    first = pl.col(LINENO).min().over(keys)
    repeats = data.with_columns(__first=first).filter(pl.col(LINENO) != pl.col("__first"))
    if repeats.height:
        lineno, earlier = repeats.row(0)[0], repeats["__first"][0]
        text = lines.filter(pl.col(LINENO) == lineno)[LINE][0]
        raise file_error(
            name, lineno, text, f"{problem} (first on line {earlier})", more=repeats.height - 1
        )
