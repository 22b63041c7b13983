"""Pieces every ``rankmetrics`` command shares: files in, files out, messages.

* :class:`CliError`: a refusal printed as one line (exit status 2).
* :func:`check_input`, :func:`read_frame`: open a Parquet/CSV/TSV/JSON file with
  the file's name in every error.
* :func:`read_inputs`, :func:`unify_ids`: the recommendations, truth and side
  files of ``evaluate`` and ``compare``, each id column of one dtype: numbers
  where every file gives numbers, else text (:func:`ids_as_text`).
* :func:`check_output`, :func:`write_frame`: never write over an input, a
  directory or an unknown format; the format follows the extension.
* :func:`show`: a result on stdout as a table, CSV, TSV, JSON or NDJSON.
* :func:`cli_words`, :func:`file_words`: advice written for the Python API
  (``duplicates='first'``, ``recs is missing ...``) rewritten in the command's own
  words (``--duplicates first``, ``recs.parquet is missing ...``).
* :func:`warn_if_few_ids_match`: the overlap warning of
  :mod:`polars_rankmetrics._pipeline.overlap`, on stderr.
"""

from __future__ import annotations

import argparse
import inspect
import os
import re
import sys
import time
import typing
import warnings
from collections.abc import Collection, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple, NoReturn

import polars as pl

from polars_rankmetrics._measures import builtin_measures
from polars_rankmetrics._pipeline.overlap import key_overlap
from polars_rankmetrics._validation import integer_holder, shorten
from polars_rankmetrics.conventions import PRESETS, Conventions
from polars_rankmetrics.options import DEFAULTS, INPUTS, EvaluateOptions

__all__ = [
    "DISPLAY_FORMATS",
    "OUTPUT_FORMATS",
    "CliError",
    "IdTypeWarning",
    "Inputs",
    "Parser",
    "add_api_options",
    "api_options",
    "check_input",
    "check_output",
    "cli_words",
    "convention_help",
    "file_words",
    "ids_as_text",
    "input_files",
    "integers_as_written",
    "is_text_file",
    "one_line",
    "progress",
    "read_frame",
    "read_inputs",
    "show",
    "unify_ids",
    "warn",
    "warn_if_few_ids_match",
    "write_frame",
]


class CliError(Exception):
    """A refusal: the command prints ``rankmetrics CMD: error: <message>`` and exits 2."""


class Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line, like every other refusal."""

    def error(self, message: str) -> NoReturn:
        """Print one line naming the command and the problem; exit with status 2."""
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def one_line(error: BaseException | str) -> str:
    """The message of ``error`` on one line (Polars errors span several)."""
    text = str(error).strip()
    # Polars appends hints and context after a blank line: the first paragraph says it
    paragraph = re.split(r"\n\s*\n", text, maxsplit=1)[0]
    joined = " ".join(line.strip() for line in paragraph.splitlines() if line.strip())
    if joined:
        return joined
    return type(error).__name__ if isinstance(error, BaseException) else ""


def warn(command: str, message: str) -> None:
    """Print a warning line on stderr."""
    print(f"rankmetrics {command}: warning: {one_line(message)}", file=sys.stderr)


def shows_progress(args: argparse.Namespace) -> bool:
    """Progress goes to stderr only when asked (``--progress``) or attached to a terminal."""
    return bool(getattr(args, "progress", False)) or sys.stderr.isatty()


def progress(args: argparse.Namespace, command: str, message: str) -> None:
    """Tell a waiting person what runs, with the seconds since the command started."""
    if shows_progress(args):
        elapsed = time.perf_counter() - getattr(args, "started", time.perf_counter())
        print(f"rankmetrics {command} [{elapsed:5.1f} s]: {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------- advice in CLI words

_ASSIGNMENT = re.compile(
    r"\b([a-z][a-z_]*)(?:\[\d+\])?="
    r"(?:'([^']*)'|\"([^\"]*)\"|(-?[\w.]+)|(?=[\s),;]|$))"
)
# "example row: user=0, item=459, rank=1", up to the end of its problem
_EXAMPLE_ROW = re.compile(r"(example row: .*?)(?=; | - |$)")
# phrases of library advice and their command-line form
_PHRASES = {
    "with the keyword of that role": "with the option of that role",
    "(it may be None only when": "(it may be left out only when",
}


def cli_words(message: str, parser: argparse.ArgumentParser) -> str:
    """Rewrite ``name='value'`` advice as the option of ``parser`` that sets ``name``.

    Library messages speak Python (``pass duplicates='first'``); on the
    command line the same advice reads ``pass --duplicates first``. A bare
    ``name=`` becomes the option alone (``(system=)``: ``(--system)``), an
    item of a list keyword its option (``by[0]='model'``: ``--by model``),
    and a keyword the command takes as a file (``pass truth=``) says so
    (``pass a truth file``). Names the parser has no option for are left as
    they are.

    Examples
    --------
    >>> parser = Parser(prog="demo")
    >>> _ = parser.add_argument("--users-without-recs")
    >>> _ = parser.add_argument("--by", nargs="+")
    >>> _ = parser.add_argument("truth")
    >>> cli_words("pass users_without_recs='exclude' or k=3", parser)
    'pass --users-without-recs exclude or k=3'
    >>> cli_words("column 'model' for by[0]='model'; pass truth= (it may be None only when", parser)
    "column 'model' for --by model; pass a truth file (it may be left out only when"
    >>> cli_words("pass users_without_recs='exclude'; example row: users_without_recs=3", parser)
    'pass --users-without-recs exclude; example row: users_without_recs=3'
    """
    flags: dict[str, str] = {}
    files: set[str] = set()
    for action in parser._actions:
        longest = max(action.option_strings, key=len, default=None)
        if longest is not None:
            flags[action.dest] = longest
            flags.setdefault(longest.lstrip("-").replace("-", "_"), longest)
        elif action.dest != "command":
            files.add(action.dest)

    def replace(match: re.Match[str]) -> str:
        name = match[1]
        value = next((group for group in match.groups()[1:] if group is not None), None)
        flag = flags.get(name)
        if flag is None:
            return f"a {name} file" if value is None and name in files else match[0]
        return flag if value is None else f"{flag} {value}"

    # an example row quotes the data (user=0, item=459): it stays as it is
    parts = _EXAMPLE_ROW.split(message)
    message = "".join(
        part if index % 2 else _ASSIGNMENT.sub(replace, part) for index, part in enumerate(parts)
    )
    for phrase, words in _PHRASES.items():
        message = message.replace(phrase, words)
    return message


def file_words(message: str, files: Mapping[str, str]) -> str:
    """Name the files where a library message names its frames (``recs``, ``truth``...).

    ``files`` maps a frame's name in the library (``"recs"``) to the file the
    command read it from. A message (or one of its ``- `` problems) that starts
    with the frame's name, and every ``recs column ...``, then names the file.

    Examples
    --------
    >>> file_words("recs is missing column 'rank'", {"recs": "recs.parquet"})
    "recs.parquet is missing column 'rank'"
    >>> file_words("invalid input: - recs has 2 rows with a duplicated", {"recs": "r.csv"})
    'invalid input: - r.csv has 2 rows with a duplicated'
    >>> file_words("truth column 'rel' (relevance) has 2 NaN value(s)", {"truth": "t.csv"})
    "t.csv column 'rel' (relevance) has 2 NaN value(s)"
    """
    for role, path in files.items():
        name = path.replace("\\", "\\\\")  # a replacement string reads backslashes
        message = re.sub(rf"(?:^|(?<=- )){role}(?= )", name, message)
        message = re.sub(rf"\b{role} column\b", f"{name} column", message)
    return message


# ---------------------------------------------------------------- input files

INPUT_FORMATS = {
    ".parquet": "parquet",
    ".pq": "parquet",
    ".csv": "csv",
    ".txt": "csv",
    ".tsv": "tsv",
    ".ndjson": "ndjson",
    ".jsonl": "ndjson",
    ".json": "json",
}


def check_input(path: str) -> Path:
    """Refuse a path that is not a readable, non-empty file, naming it and the problem."""
    file = Path(path)
    if not file.exists():
        raise CliError(f"{path}: no such file")
    if file.is_dir():
        raise CliError(f"{path}: is a directory, not a file")
    if not file.is_file():
        raise CliError(f"{path}: is not a regular file")
    if not os.access(file, os.R_OK):
        raise CliError(f"{path}: permission denied")
    if file.stat().st_size == 0:
        raise CliError(f"{path}: the file is empty")
    return file


def _input_format(file: Path) -> tuple[str, bool]:
    suffixes = [suffix.lower() for suffix in file.suffixes]
    compressed = bool(suffixes) and suffixes[-1] == ".gz"
    suffix = suffixes[-2] if compressed and len(suffixes) > 1 else file.suffix.lower()
    if suffix not in INPUT_FORMATS:
        known = ", ".join(sorted(INPUT_FORMATS))
        raise CliError(f"{file}: unknown file type {suffix or '(none)'!r}; use one of {known}")
    kind = INPUT_FORMATS[suffix]
    if compressed and kind not in ("csv", "tsv"):
        raise CliError(f"{file}: only CSV and TSV files may be gzip-compressed")
    return kind, compressed


def read_frame(
    path: str, *, text_columns: Sequence[str] = (), integer_columns: Sequence[str] = ()
) -> pl.DataFrame:
    """Read a Parquet, CSV/TSV (optionally ``.gz``), JSON or NDJSON file.

    Columns of ``text_columns`` are read as text from CSV/TSV files, exactly
    as written (leading zeros stay); columns of ``integer_columns`` (ranks)
    that a text file gives as text are read as whole numbers. A file without
    rows is refused: it is never what an evaluation meant to read. Every
    problem is a :class:`CliError` naming the file.
    """
    file = check_input(path)
    kind, _ = _input_format(file)
    try:
        if kind == "parquet":
            frame = pl.read_parquet(file)
        elif kind == "ndjson":
            frame = pl.read_ndjson(file)
        elif kind == "json":
            frame = pl.read_json(file)
        else:
            separator = "\t" if kind == "tsv" else ","
            header = pl.read_csv(file, separator=separator, n_rows=0).columns
            if any("\ufffd" in name for name in header):
                # Polars reads a header that is not UTF-8 lossily (its rows raise)
                raise CliError(f"{path}, line 1: not UTF-8 text: {shorten(','.join(header))}")
            overrides = {name: pl.String for name in text_columns if name in header}
            frame = pl.read_csv(file, separator=separator, schema_overrides=overrides)
    except CliError:
        raise
    except Exception as error:  # every reader failure becomes one line naming the file
        raise CliError(f"{path}: cannot be read as {kind.upper()}: {one_line(error)}") from None
    if not frame.height:
        raise CliError(f"{path}: the file has no rows (columns {frame.columns[:12]})")
    return _whole_numbers(frame, [name for name in integer_columns if name in frame.columns], path)


def _whole_numbers(frame: pl.DataFrame, columns: Sequence[str], path: str) -> pl.DataFrame:
    # a text file gives a rank column as text when a value is not a number (or every
    # value is empty): name the first such value rather than the column's dtype
    for column in columns:
        if frame.schema[column] != pl.String:
            continue
        text = frame.get_column(column)
        parsed = text.str.strip_chars().cast(pl.Int64, strict=False)
        bad = parsed.is_null() & text.is_not_null()
        if bad.any():
            row = int(bad.arg_true()[0])
            raise CliError(
                f"{path}: column {column!r} must hold whole numbers (positions, 1 = top), "
                f"but {bad.sum()} value(s) are not, e.g. {shorten(text[row])} on data row "
                f"{row + 1}"
            )
        frame = frame.with_columns(parsed.alias(column))
    return frame


def ids_as_text(frame: pl.DataFrame, columns: Sequence[str], *, name: str) -> pl.DataFrame:
    """Turn id columns into text: the text rule of :func:`unify_ids`.

    * text (CSV, TSV, string columns of any file): as written, so ``00123``
      stays ``00123`` and is not ``123``;
    * integers: their decimal digits (``123``);
    * floats whose values are all whole numbers (an integer column that went
      through a float, ``1.0``): as integers (``1``); other floats are refused,
      since a rounded float is no id;
    * categoricals, enums and any other dtype: their text.
    """
    changes = []
    for column in columns:
        if column not in frame.columns or frame.schema[column] == pl.String:
            continue
        if frame.schema[column].is_float():
            frame = _whole_floats_as_integers(frame, column, name=name)
        changes.append(pl.col(column).cast(pl.String))
    return frame.with_columns(changes) if changes else frame


def _whole_floats_as_integers(frame: pl.DataFrame, column: str, *, name: str) -> pl.DataFrame:
    """A float id column as Int64: its values must be whole numbers (``1.0`` is ``1``)."""
    values = frame[column].drop_nulls()
    whole = values.is_finite() & (values == values.floor())
    in_range = values.abs() < 2.0**63
    for bad, what in ((~whole, "fractional numbers"), (whole & ~in_range, "numbers beyond Int64")):
        if bad.any():
            raise CliError(
                f"{name}: id column {column!r} holds {what} ({bad.sum()} value(s), e.g. "
                f"{values.filter(bad)[0]}); ids must be whole numbers or text"
            )
    return frame.with_columns(pl.col(column).cast(pl.Int64))


def _common_integer(dtypes: Sequence[pl.DataType]) -> pl.DataType | None:
    """The integer dtype holding every value of ``dtypes`` exactly, or ``None`` (text rule)."""
    if not all(dtype.is_integer() for dtype in dtypes):
        return None
    target = dtypes[0]
    for dtype in dtypes[1:]:
        # the API's own rule: the wider of one signedness, a signed type wide enough for
        # an unsigned one (UInt64 with Int64: Int128); String where none is (UInt128)
        target = integer_holder(target, dtype)
    return None if target == pl.String else target


# an integer as a program writes one: no leading zero, sign only for a negative, no spaces
_WRITTEN_INTEGER = r"^-?(?:0|[1-9][0-9]*)$"


def integers_as_written(frame: pl.DataFrame, column: str) -> bool:
    """Whether a text column holds integers written plainly, each within Int64.

    ``"10"``, ``"-3"`` and ``"0"`` are; ``"00123"`` (a code whose zeros
    matter), ``"+5"``, ``" 5"``, ``"1.0"`` and ``"9223372036854775808"`` are
    not. Nulls are no evidence either way.

    Examples
    --------
    >>> integers_as_written(pl.DataFrame({"item": ["2", "10", None]}), "item")
    True
    >>> integers_as_written(pl.DataFrame({"item": ["2", "00123"]}), "item")
    False
    """
    values = frame.get_column(column).drop_nulls()
    return bool(
        values.str.contains(_WRITTEN_INTEGER).all()
        and values.cast(pl.Int64, strict=False).null_count() == 0
    )


def is_text_file(path: str) -> bool:
    """A CSV or TSV file (gzip-compressed or not): its ids are read as written, as text."""
    return _input_format(Path(path))[0] in ("csv", "tsv")


class IdTypeWarning(UserWarning):
    """The files' formats decide how ids compare: some give numbers, some text."""


def unify_ids(
    files: Mapping[str, tuple[str, pl.DataFrame]],
    columns: Sequence[str],
    *,
    written: Collection[str] = (),
    ids: Collection[str] = (),
    warn_text: bool = True,
) -> dict[str, pl.DataFrame]:
    """Give each id column one dtype in every file that has it: numbers or text.

    ``files`` maps a role (``"recs"``, ``"truth"``...) to the file's name (for
    messages) and its frame; the frames come back under the same roles.
    ``written`` names the roles read from text files (CSV/TSV, their ids read
    as written); ``ids`` the columns that are ids even in one file alone (the
    user and item: their order breaks ties). A column held by two or more
    files, or one of ``ids``, is compared

    * **as numbers** when every file gives it as numbers: integers (a float
      column of whole numbers counts as Int64, ``1.0`` is ``1``) and the
      text of a CSV/TSV file that writes integers plainly (``10``, not
      ``00123``: :func:`integers_as_written`), as Polars' own CSV reader
      reads them, cast to the one integer dtype that holds them all exactly
      (Int32 and Int64: Int64; UInt64 and Int64: Int128). Equal scores then
      break on the ids' values, whatever the files' formats, exactly as
      :func:`polars_rankmetrics.evaluate` does on the same integers;
    * **as text** (:func:`ids_as_text`) in every file otherwise: a text file
      with an id that is not a plain integer (``00123`` stays ``00123``), a
      string, categorical or other column of a typed file, or integers no
      integer dtype holds together (UInt128 with a signed type). Equal scores
      then break on the text (``"9"`` above ``"10"`` under the default
      ``item_desc`` rule). Where some file gave the column as numbers, an
      :class:`IdTypeWarning` names the files (unless ``warn_text`` is off).

    A column only one file has, not one of ``ids``, is left as it is (a label
    such as a model name).
    """
    frames = {role: frame for role, (_, frame) in files.items()}
    for column in columns:
        holders = [role for role, frame in frames.items() if column in frame.columns]
        if len(holders) < 2 and not (holders and column in ids):
            continue
        for role in holders:
            if frames[role].schema[column].is_float():
                frames[role] = _whole_floats_as_integers(frames[role], column, name=files[role][0])
        plain = {
            role
            for role in holders
            if role in written
            and frames[role].schema[column] == pl.String
            and integers_as_written(frames[role], column)
        }
        dtypes = [pl.Int64() if role in plain else frames[role].schema[column] for role in holders]
        target = _common_integer(dtypes)
        if target is None and warn_text:
            _warn_text_ids(files, frames, column, holders, plain)
        for role in holders:
            if target is None:
                frames[role] = ids_as_text(frames[role], [column], name=files[role][0])
            elif frames[role].schema[column] != target:
                frames[role] = frames[role].with_columns(pl.col(column).cast(target))
    return frames


def _warn_text_ids(
    files: Mapping[str, tuple[str, pl.DataFrame]],
    frames: Mapping[str, pl.DataFrame],
    column: str,
    holders: Sequence[str],
    plain: Collection[str],
) -> None:
    """Warn that ids some files give as numbers are compared as text, naming the files."""
    numbers = [
        role for role in holders if role in plain or frames[role].schema[column].is_integer()
    ]
    text = [role for role in holders if role not in numbers]
    if not numbers or not text:
        return  # text in every file: no format decided it
    values = frames[text[0]].get_column(column).drop_nulls()
    shown = values.cast(pl.String)
    odd = shown.filter(~shown.str.contains(_WRITTEN_INTEGER))
    example = f", e.g. {shorten(odd[0])}" if len(odd) else ""
    dtype = frames[text[0]].schema[column]
    held = "text" if dtype == pl.String else f"{dtype} values"
    warnings.warn(
        f"{' and '.join(files[r][0] for r in numbers)} "
        f"give{'s' if len(numbers) == 1 else ''} column {column!r} as numbers, "
        f"{' and '.join(files[r][0] for r in text)} as {held}{example}: its ids are compared "
        "as text in every file, so equal scores break by text order ('9' after '10' under "
        "--ties item_desc), not by value; write them as integers in every file (in CSV "
        "without leading zeros) to compare them as numbers",
        IdTypeWarning,
        stacklevel=2,
    )


def warn_if_few_ids_match(
    command: str,
    left: pl.DataFrame | pl.LazyFrame,
    right: pl.DataFrame | pl.LazyFrame,
    keys: Sequence[str],
    *,
    left_name: str,
    right_name: str,
) -> None:
    """Warn on stderr when the two files share (almost) none of their ids."""
    found = key_overlap(left, right, keys, left_name=left_name, right_name=right_name)
    if found.poor:
        warn(command, found.message)


class Inputs(NamedTuple):
    """The files a command evaluates, each id column of one dtype (:func:`unify_ids`).

    ``side``: the frames of the declared inputs of the measures that were
    given (``interactions``, ``items``...), by option name.
    """

    recs: pl.DataFrame
    truth: pl.DataFrame | None
    side: dict[str, pl.DataFrame]


def input_files(args: argparse.Namespace) -> dict[str, str]:
    """The files given for the declared frame inputs (``--interactions``...), by option name."""
    given = {option.name: getattr(args, option.name, None) for option in INPUTS if option.frame}
    return {name: path for name, path in given.items() if path is not None}


def read_inputs(
    args: argparse.Namespace, command: str, recs_path: str, truth_path: str | None
) -> Inputs:
    """Read the recommendations, the truth and the side files by the one id rule.

    ``args`` holds the roles (``user``, ``item``, ``by``, ``rank``, ``score``)
    and the side files (``interactions``, ``items``; ``None`` when not given).
    The key columns are ids of one dtype in every file that has them
    (:func:`unify_ids`: numbers where every such file gives numbers, a CSV
    file's plainly written integers included, else text); ``by`` columns only
    in the recommendations (models) are labels and
    keep their type; the rank column, unless ``--score`` derives the ranks, is
    read as whole numbers. Warns when the recommendations and the truth share
    (almost) no ids.
    """
    keys = [args.user, args.item, *args.by]
    ranks = [args.rank] if args.score is None else []
    progress(args, command, f"reading {recs_path}")
    files = {"recs": (recs_path, read_frame(recs_path, text_columns=keys, integer_columns=ranks))}
    if truth_path is not None:
        progress(args, command, f"reading {truth_path}")
        files["truth"] = (truth_path, read_frame(truth_path, text_columns=keys))
    for role, path in input_files(args).items():
        progress(args, command, f"reading {path}")
        files[role] = (path, read_frame(path, text_columns=keys))
    written = [role for role, (path, _) in files.items() if is_text_file(path)]
    frames = unify_ids(files, keys, written=written, ids=[args.user, args.item])
    recs, truth = frames["recs"], frames.get("truth")
    if truth_path is not None and truth is not None:
        ids = [key for key in (args.user, args.item) if key in recs.columns and key in truth]
        warn_if_few_ids_match(command, recs, truth, ids, left_name=recs_path, right_name=truth_path)
    return Inputs(recs, truth, {role: frames[role] for role in input_files(args)})


# ---------------------------------------------------------------- output files

OUTPUT_FORMATS = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".json": "json",
    ".ndjson": "ndjson",
    ".jsonl": "ndjson",
}
DISPLAY_FORMATS = ("table", "csv", "tsv", "json", "ndjson")


def _same_file(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve() or (a.exists() and b.exists() and a.samefile(b))
    except OSError:
        return False


def check_output(
    path: str,
    *,
    inputs: Sequence[str],
    option: str,
    formats: Mapping[str, str] = OUTPUT_FORMATS,
) -> Path:
    """Refuse an output path before any work: an input, a directory, unwritable, unknown type.

    ``inputs`` are the command's input files (compared after resolving links
    and relative parts, so ``./truth.csv`` is ``truth.csv``); ``option`` names
    the option in messages; ``formats`` maps the extensions the option writes
    to their formats (by default those of :func:`write_frame`).
    """
    file = Path(path)
    for source in inputs:
        if _same_file(file, Path(source)):
            raise CliError(f"{option} {path}: is the input file {source}; refusing to overwrite it")
    if file.is_dir():
        raise CliError(f"{option} {path}: is a directory; give a file name")
    suffix = file.suffix.lower()
    if suffix not in formats:
        known = ", ".join(sorted(formats))
        raise CliError(f"{option} {path}: unknown output type {suffix or '(none)'!r}; use {known}")
    parent = file.parent
    if not parent.is_dir():
        raise CliError(f"{option} {path}: directory {str(parent)!r} does not exist")
    if file.exists() and not os.access(file, os.W_OK):
        raise CliError(f"{option} {path}: the file is not writable")
    if not file.exists() and not os.access(parent, os.W_OK):
        raise CliError(f"{option} {path}: directory {str(parent)!r} is not writable")
    return file


def _json_safe(frame: pl.DataFrame) -> pl.DataFrame:
    # NaN and infinities are not JSON: write them as null
    floats = [name for name, dtype in frame.schema.items() if dtype.is_float()]
    return frame.with_columns(pl.when(pl.col(floats).is_finite()).then(pl.col(floats)).name.keep())


def write_frame(frame: pl.DataFrame, file: Path, *, option: str) -> None:
    """Write ``frame`` in the format of ``file``'s extension (checked by :func:`check_output`)."""
    kind = OUTPUT_FORMATS[file.suffix.lower()]
    try:
        if kind == "parquet":
            frame.write_parquet(file)
        elif kind in ("csv", "tsv"):
            frame.write_csv(file, separator="\t" if kind == "tsv" else ",")
        elif kind == "json":
            file.write_text(_json_safe(frame).write_json() + "\n")
        else:
            _json_safe(frame).write_ndjson(file)
    except OSError as error:
        raise CliError(f"{option} {file}: cannot write: {error.strerror or error}") from None


def show(frame: pl.DataFrame, output_format: str) -> str:
    """``frame`` as text for stdout: an aligned table, CSV, TSV, JSON or NDJSON."""
    if output_format in ("csv", "tsv"):
        return frame.write_csv(separator="\t" if output_format == "tsv" else ",").rstrip("\n")
    if output_format == "json":
        return _json_safe(frame).write_json()
    if output_format == "ndjson":
        return _json_safe(frame).write_ndjson().rstrip("\n")
    with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_width_chars=200, tbl_hide_dataframe_shape=True):
        return str(frame)


# ---------------------------------------------------------------- API parameters as options


def add_list_inputs(parser: argparse.ArgumentParser) -> None:
    """The ``--interactions``, ``--items``, ... options: one per declared input of the measures.

    From the declarations (:data:`polars_rankmetrics.options.INPUTS`): a frame
    is a file (``PATH``), a column a name; the help names the measures that
    read it, from the registry.
    """
    lists = parser.add_argument_group("inputs of the measures beside the lists and the truth")
    for option in INPUTS:
        readers = sorted(
            {m.name for m in builtin_measures() if option.reads and option.reads in m.inputs}
        )
        what = option.what + (f": {', '.join(readers)}" if readers else "")
        if option.needs:
            what += " (with " + ", ".join(f"--{name.replace('_', '-')}" for name in option.needs)
            what += ")"
        lists.add_argument(
            "--" + option.name.replace("_", "-"),
            metavar="PATH" if option.frame else "COLUMN",
            help=what.replace("%", "%%"),
        )


def list_inputs(args: argparse.Namespace, frames: Mapping[str, Any]) -> dict[str, Any]:
    """The list inputs as ``evaluate`` takes them: the frames read, the column names given."""
    return {
        option.name: frames.get(option.name) if option.frame else getattr(args, option.name)
        for option in INPUTS
    }


def add_api_options(
    parser: argparse.ArgumentParser, names: Sequence[str], *, title: str
) -> list[str]:
    """Add one ``--option`` per keyword option ``names`` of ``evaluate``, from their declaration.

    The types and defaults are those of
    :class:`polars_rankmetrics.options.EvaluateOptions`, the one
    place every surface reads them from: a ``Literal`` option becomes an
    option with those choices, a number a typed option. The default is left
    out so that the API's own default (or its ``conventions`` preset)
    applies. Returns the ``dest`` names, to pass back with :func:`api_options`.
    """
    hints = typing.get_type_hints(EvaluateOptions)
    described = convention_help()
    options = parser.add_argument_group(title)
    for name in names:
        hint = hints[name]
        flag = "--" + name.replace("_", "-")
        # argparse formats help with %: a literal one is doubled
        text = described.get(name, f"see evaluate() (default: {DEFAULTS[name]})")
        text = text.replace("%", "%%")
        kinds = _flatten(hint)
        choices = [kind for kind in kinds if isinstance(kind, str)]
        if choices:
            options.add_argument(flag, choices=choices, help=text)
        elif float in kinds or int in kinds:
            numeric = float if float in kinds else int
            options.add_argument(flag, type=numeric, help=text)
        else:  # pragma: no cover - a new kind of option needs a rule here
            raise TypeError(f"no command-line rule for option {name!r} of type {hint}")
        # the API's default applies unless the option is given
        parser.set_defaults(**{name: None})
    return list(names)


def convention_help() -> dict[str, str]:
    """One help text per convention option, from :class:`Conventions`' own attribute docs.

    Each is the attribute's description in plain words (no reST quoting),
    with the value of each preset: the docstring stays the one place a
    convention is described.

    Examples
    --------
    >>> print(convention_help()["duplicates"])  # doctest: +NORMALIZE_WHITESPACE
    An item recommended twice in a list: error or first.
    (default: error; trec: error; ndeval: error)
    """
    doc = inspect.getdoc(Conventions) or ""
    section = doc.split("Attributes\n----------\n", 1)[1].split("\n\n", 1)[0]
    described: dict[str, list[str]] = {}
    for line in section.splitlines():
        if line and not line[0].isspace():
            described[line.strip()] = []
        elif described:
            described[next(reversed(described))].append(line.strip())
    helps = {}
    for name, lines in described.items():
        if name not in PRESETS["default"].__dataclass_fields__ or name == "preset":
            continue
        words = re.sub(r"``\"?([^`\"]*)\"?``", r"\1", " ".join(lines))
        words = words.replace("None", "not given")  # an option left out is the API's None
        values = "; ".join(
            f"{preset}: {getattr(PRESETS[preset], name) or 'not given'}" for preset in PRESETS
        )
        helps[name] = f"{words} (default: {values.removeprefix('default: ')})"
    helps["conventions"] = (
        "the preset the conventions left out take their values from: default, or trec for "
        "trec_eval's numbers (default: default)"
    )
    return helps


def _flatten(hint: Any) -> list[Any]:
    """``Literal["a", "b"] | None`` -> ``["a", "b", NoneType]``; a plain type -> ``[type]``."""
    args = typing.get_args(hint)
    if not args:
        return [hint]
    if typing.get_origin(hint) is typing.Literal:
        return list(args)
    return [kind for arg in args for kind in _flatten(arg)]


def api_options(args: argparse.Namespace, names: Sequence[str]) -> dict[str, Any]:
    """The options of :func:`add_api_options` that were given, as keyword arguments."""
    return {name: getattr(args, name) for name in names if getattr(args, name) is not None}
