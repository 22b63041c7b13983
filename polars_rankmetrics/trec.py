"""TREC runs and qrels: readers, writers, and trec_eval's measures and layout.

A TREC **run** has one line per retrieved document, ``qid Q0 docno rank score
tag``; a **qrels** file one line per judged document, ``qid iter docno rel``.
Fields are separated by any whitespace, and ``#`` is an ordinary character
(document ids such as ``msmarco_doc_00#4_123`` exist). Both readers return
Polars frames with the package's column roles (``user``, ``item``, ``rank``,
``score``, ``rel``), so they plug straight into
:func:`polars_rankmetrics.evaluate`::

    run = read_trec_run("run.txt")
    qrels = read_trec_qrels("qrels.txt")
    evaluate(run, qrels, ["map", "ndcg@10"], score="score", relevance="rel",
             conventions="trec")

:func:`trec_eval` computes trec_eval's measures (``map``, ``P_5``,
``ndcg_cut_10``, ``num_rel_ret``...) per query and for ``all`` in the layout
trec_eval prints, which :func:`format_trec_eval` turns into its text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Literal

import polars as pl

from polars_rankmetrics._frames import (
    AnyFrame,
    ArrowStream,
    Eager,
    collected,
    eager_caller,
    read,
)
from polars_rankmetrics._measures.diversity import NDEVAL_CUTOFFS, NDEVAL_NAMES
from polars_rankmetrics._pipeline.trec_eval import (
    TrecMeasure,
    format_trec_eval,
    parse_trec_measures,
    trec_eval,
)
from polars_rankmetrics._textfiles import (
    LINE,
    LINENO,
    FileSource,
    check_no_whitespace,
    direct_path,
    fail_on,
    file_error,
    line_pieces,
    lines_of,
    read_bytes,
    require_frame_columns,
    single_spaced,
)
from polars_rankmetrics.options import INPUTS
from polars_rankmetrics.ranking import positions

__all__ = [
    "TrecMeasure",
    "format_trec_eval",
    "ndeval",
    "ndeval_measures",
    "parse_trec_measures",
    "read_trec_diversity_qrels",
    "read_trec_qrels",
    "read_trec_run",
    "trec_eval",
    "trec_eval_files",
    "write_trec_qrels",
    "write_trec_run",
]

# the column the diversity qrels' subtopic goes to: the one evaluate reads by default
_SUBTOPIC = next(str(option.default) for option in INPUTS if option.reads == "subtopics")

RunRanks = Literal["score", "file"]
Duplicates = Literal["error", "first"]


def _fields(
    source: FileSource, n_fields: int, layout: str, *, extra: bool = False
) -> tuple[str, pl.DataFrame]:
    """Read ``source`` into :data:`LINENO` and ``__f0`` .. ``__f{n-1}`` (String) per non-blank line.

    With ``extra``, text after the last field is allowed (and ignored). Lines
    with the wrong field count are refused with their number.
    """
    name, data = read_bytes(source)
    fields = [f"__f{i}" for i in range(n_fields)]
    if not data.strip():
        return name, pl.DataFrame(schema={LINENO: pl.UInt32, **dict.fromkeys(fields, pl.String)})
    fast = _split_on_single_spaces(data, fields)
    if fast is not None:
        return name, fast
    # tabs, runs of spaces, extra or missing fields, bad UTF-8: the general path, which
    # also finds the line to quote
    lines = lines_of(name, data)
    words = pl.col(LINE).str.replace_all(r"\s+", " ").str.strip_chars(" ")
    split = lines.with_columns(__words=words).filter(pl.col("__words") != "")
    parts = pl.col("__words").str.splitn(" ", n_fields + 1)
    split = split.with_columns(
        *[parts.struct.field(f"field_{i}").alias(field) for i, field in enumerate(fields)],
        __rest=parts.struct.field(f"field_{n_fields}"),
    )
    too_few = pl.col(fields[-1]).is_null()
    fail_on(
        split,
        too_few if extra else too_few | pl.col("__rest").is_not_null(),
        name=name,
        problem=f"expected {'at least ' if extra else ''}{n_fields} whitespace-separated "
        f"fields ({layout})",
    )
    return name, split.drop("__words", "__rest")


def _split_on_single_spaces(data: bytes, fields: list[str]) -> pl.DataFrame | None:
    """Polars' CSV reader on a file of single-space-separated fields; None if it is not one.

    The usual TREC file parses here in about the memory of the file itself;
    anything else (None) goes the general way: also a tab or another space,
    which this reader would take as part of a field.
    """
    if not single_spaced(data):
        return None
    try:
        frame = pl.read_csv(
            data,
            has_header=False,
            separator=" ",
            quote_char=None,
            schema=dict.fromkeys(fields, pl.String),
            row_index_name=LINENO,
            row_index_offset=1,
        )
    except pl.exceptions.PolarsError:
        return None
    # blank lines read as all-null rows (which keeps the line numbers); an empty field
    # (two spaces) or a missing one reads as null
    blank = pl.all_horizontal(pl.col(fields).is_null())
    frame = frame.filter(~blank)
    if frame.select(pl.any_horizontal(pl.col(fields).is_null()).any()).item():
        return None
    return frame.with_columns(pl.col(LINENO).cast(pl.UInt32))


def _quoted(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with the :data:`LINE` column errors quote (rebuilt from the fields if absent)."""
    if LINE in frame.columns:
        return frame
    return frame.with_columns(pl.concat_str(pl.col("^__f\\d+$"), separator=" ").alias(LINE))


def _fail(frame: pl.DataFrame, bad: pl.Expr, *, name: str, problem: str) -> None:
    offending = frame.filter(bad.fill_null(value=True))
    if offending.height:
        fail_on(_quoted(offending), pl.lit(value=True), name=name, problem=problem)


def _all_distinct(frame: pl.DataFrame, keys: list[str]) -> bool:
    """Whether no two rows share ``keys``; hashes first (a fraction of the memory of the keys)."""
    mixed = pl.col(keys[0]).hash()
    for key in keys[1:]:
        mixed = mixed ^ (pl.col(key).hash() * 0x9E3779B97F4A7C15)
    hashes = frame.select(mixed.n_unique()).item()
    # distinct hashes prove distinct rows; equal hashes may be a collision: look again
    return bool(hashes == frame.height or frame.select(keys).n_unique() == frame.height)


def _check_duplicates(frame: pl.DataFrame, keys: list[str], *, name: str, what: str) -> None:
    if _all_distinct(frame, keys):
        return
    first = pl.col(LINENO).min().over(keys)
    repeats = frame.with_columns(__first=first).filter(pl.col(LINENO) != pl.col("__first"))
    if repeats.height:
        row = _quoted(repeats.head(1)).row(0, named=True)
        raise file_error(
            name,
            row[LINENO],
            row[LINE],
            f"{what} again (first on line {row['__first']}); pass duplicates='first' "
            "to keep the first line",
            more=repeats.height - 1,
        )


_KEY = "__key"
"""A hash of each line's (qid, docno), computed piece by piece for the repeat check."""


def _key(user: pl.Expr, item: pl.Expr) -> pl.Expr:
    return user.hash() ^ (item.hash() * 0x9E3779B97F4A7C15)


def _piece_fields(
    source: FileSource,
    n_fields: int,
    columns: dict[str, pl.Expr],
    bad: pl.Expr,
    *,
    constant: str | None = None,
) -> tuple[pl.DataFrame, str | None] | None:
    """``columns`` computed from a plain file of single-space-separated fields, or None.

    The file is parsed a piece at a time (:func:`line_pieces`): each piece's
    fields as text exist only while its ``columns`` are computed, so the
    file's bytes and its unused fields are never held whole. Returns the
    frame in file order, blank lines dropped, with :data:`_KEY` (the hash of
    ``user`` and ``item``), and the value of the ``constant`` column when it
    holds one value on every line (the frame then lacks it: no copy of it per
    line is kept). None (the
    general path reads the file and names the line) for anything else: not a
    plain file (:func:`direct_path`), a tab or other space, a line with a
    field too many or too few, or a row where ``bad`` holds.
    """
    path = direct_path(source)
    if path is None:
        return None
    fields = [f"__f{i}" for i in range(n_fields)]
    # blank lines read as all-null rows; an empty field (two spaces) or a missing one as null
    blank = pl.all_horizontal(pl.col(fields).is_null())
    refused = pl.any_horizontal(pl.col(fields).is_null()) | bad
    key = _key(columns["user"], columns["item"])
    frames: list[pl.DataFrame] = []
    values: list[str | None] = []  # the constant's value in each piece (None: it varies)
    for piece in line_pieces(path):
        if not single_spaced(piece):
            return None
        try:
            split = pl.read_csv(
                piece,
                has_header=False,
                separator=" ",
                quote_char=None,
                schema=dict.fromkeys(fields, pl.String),
                missing_columns="insert",
            )
        except pl.exceptions.PolarsError:
            return None
        del piece
        # one pass computes the columns and both checks
        frame = split.select(**columns, **{_KEY: key}, __blank=blank, __refused=~blank & refused)
        del split
        if frame["__refused"].any():
            return None
        if frame["__blank"].any():
            frame = frame.filter(~pl.col("__blank"))
        frame = frame.drop("__blank", "__refused")
        if not frame.height:
            continue  # a piece of blank lines
        if constant is not None:
            unique = frame.get_column(constant).unique().head(2)
            values.append(unique[0] if unique.len() == 1 else None)
            if unique.len() == 1:
                frame = frame.drop(constant)
        frames.append(frame)
    if not frames:
        return None
    return _joined(frames, values, constant, [*columns, _KEY])


def _joined(
    frames: list[pl.DataFrame], values: list[str | None], constant: str | None, names: list[str]
) -> tuple[pl.DataFrame, str | None]:
    """The pieces as one frame, and the ``constant``'s one value (None: it varies)."""
    if constant is None or (len(set(values)) == 1 and values[0] is not None):
        return pl.concat(frames, rechunk=False), values[0] if values else None
    # the value varies: each piece that held one value gets its column back
    for index, (frame, value) in enumerate(zip(frames, values, strict=True)):
        if value is not None:
            column = pl.repeat(value, frame.height, dtype=pl.String, eager=True)
            frames[index] = frame.with_columns(column.alias(constant)).select(names)
    return pl.concat(frames, rechunk=False), None


def _distinct_keys(frame: pl.DataFrame) -> bool:
    """:func:`_all_distinct` of (user, item), from the hashes :func:`_piece_fields` made."""
    if frame.get_column(_KEY).n_unique() == frame.height:
        return True
    return bool(frame.select("user", "item").n_unique() == frame.height)


def _sorted_by_columns(frame: pl.DataFrame, order: pl.Series) -> pl.DataFrame:
    """``frame`` gathered by ``order`` one column at a time (one column's copy at a time)."""
    gathered = {}
    for column in frame.columns:
        gathered[column] = frame.get_column(column).gather(order)
        frame = frame.drop(column)
    return pl.DataFrame(gathered)


def _query_blocks(frame: pl.DataFrame) -> pl.DataFrame | None:
    """Each query's ``start`` and ``len`` sorted by qid, when the file is in trec_eval's order.

    That is: each query's lines together, in score order (descending), a tie
    broken by docno (descending). None otherwise (the frame is then sorted).
    """
    runs = frame.select(pl.col("user").rle()).unnest("user")
    if runs["value"].n_unique() != runs.height:
        return None
    starts = runs["len"].cum_sum().shift(1, fill_value=0).cast(pl.UInt32)
    step = pl.col("score").diff()
    # the score may rise only where a query starts
    if not frame.select(pl.arg_where(step > 0)).to_series().is_in(starts.implode()).all():
        return None
    ties = frame.select(pl.arg_where(step == 0)).to_series()
    ties = ties.filter(~ties.is_in(starts.implode()))
    if ties.len():
        item = frame.get_column("item")
        if not (item.gather(ties) < item.gather(ties - 1)).all():
            return None
    blocks = runs.select(start=starts, len=pl.col("len").cast(pl.UInt32), user="value")
    return blocks.sort("user")


_MAX_SLICES = 4096
"""Most slices a run's queries are put in order by (zero copy); more: a gather (a copy)."""


def _file_rank(field: pl.Expr) -> pl.Expr:
    """The rank field as written, for ``ranks="file"`` (null: not an integer of at most 64 bits)."""
    return field.str.to_integer(dtype=pl.UInt64, strict=False)


def _kept_rank(frame: pl.DataFrame) -> pl.Expr:
    """The file's ranks as the ``rank`` column: UInt32, or UInt64 when one is beyond UInt32.

    Ranks are only an order (the measures read given ranks of any width exactly), so a
    rank such as 4294967297 is kept as written rather than refused or wrapped.
    """
    beyond = frame.select(pl.col("__file_rank").max() > (1 << 32) - 1).item()
    return pl.col("__file_rank").cast(pl.UInt64 if beyond else pl.UInt32).alias("rank")


def _run_from_path(
    source: FileSource, ranks: RunRanks, duplicates: Duplicates
) -> pl.DataFrame | None:
    """:func:`read_trec_run` of a plain file in about the memory of its result, or None.

    None for any line the general path must report (a missing field, a score
    that is not a number, a repeat with ``duplicates="error"``, a bad rank
    with ``ranks="file"``): it reads the file again and names the line.
    """
    score = pl.col("__f4").cast(pl.Float64, strict=False)
    columns = {"user": pl.col("__f0"), "item": pl.col("__f2"), "score": score,
               "tag": pl.col("__f5")}  # fmt: skip
    bad = score.is_null() | score.is_nan()
    if ranks == "file":
        file_rank = _file_rank(pl.col("__f3"))
        columns["__file_rank"] = file_rank
        bad = bad | file_rank.is_null() | (file_rank < 1)
    fields = _piece_fields(source, 6, columns, bad, constant="tag")
    if fields is None:
        return None
    frame, tag = fields
    del fields
    if not _distinct_keys(frame):
        if duplicates == "error":
            return None
        frame = frame.filter(pl.struct("user", "item").is_first_distinct())
    frame = frame.drop(_KEY)
    # the usual run has one tag: then a constant column (not a copy per line)
    tag_column = pl.col("tag") if tag is None else pl.lit(tag, dtype=pl.String).alias("tag")
    if ranks == "file":
        if not _all_distinct(frame, ["user", "__file_rank"]):
            return None
        frame = frame.with_columns(_kept_rank(frame))
        order = frame.select(pl.arg_sort_by("user", "rank")).to_series()
        frame = _sorted_by_columns(frame.drop("__file_rank"), order)
        return frame.select("user", "item", "rank", "score", tag_column)
    blocks = _query_blocks(frame)
    if blocks is None:
        order = frame.select(
            pl.arg_sort_by(["user", "score", "item"], descending=[False, True, True])
        ).to_series()
        frame = _sorted_by_columns(frame, order)
        del order
        index = pl.int_range(pl.len(), dtype=pl.UInt32)
        starts = (pl.col("user") != pl.col("user").shift(1)).fill_null(value=True)
        rank = index - pl.when(starts).then(index).forward_fill() + 1
        return frame.select("user", "item", rank.alias("rank"), "score", tag_column)
    # each query is in trec_eval's order already: its ranks are its line order, and only
    # the queries are put in order (no sort of the lines)
    ranks_in_order = blocks.select(
        pl.int_ranges(1, pl.col("len") + 1, dtype=pl.UInt32).explode().alias("rank")
    ).to_series()
    if not blocks["start"].is_sorted():
        # the queries in qid order, as slices of the frame (no copy); queries that follow
        # each other in the file too make one slice
        ends = pl.col("start") + pl.col("len")
        follows = (pl.col("start") == ends.shift(1)).fill_null(value=False)
        runs = blocks.group_by((~follows).cum_sum().alias("__slice"), maintain_order=True).agg(
            pl.col("start").first(), pl.col("len").sum()
        )
        if runs.height <= _MAX_SLICES:
            frame = pl.concat(
                [
                    frame.slice(start, length)
                    for start, length in runs.select("start", "len").rows()
                ],
                rechunk=False,
            )
        else:
            in_order = blocks.select(pl.int_ranges("start", ends, dtype=pl.UInt32).explode())
            frame = _sorted_by_columns(frame, in_order.to_series())
    return frame.select("user", "item", ranks_in_order, "score", tag_column)


def read_trec_run(
    source: FileSource, *, ranks: RunRanks = "score", duplicates: Duplicates = "error"
) -> pl.DataFrame:
    r"""Read a TREC run (``qid Q0 docno rank score tag``) into a frame.

    Parameters
    ----------
    source
        Path, bytes or open file.
    ranks
        ``"score"`` (default): re-derive each query's ranks from the score,
        descending, ties broken by document id descending - trec_eval's rule;
        trec_eval ignores the rank column, and so does this. ``"file"``: keep
        the rank column as written (positive integers, once per query).
    duplicates
        A document listed twice for one query: ``"error"`` (default; trec_eval
        refuses such runs) or ``"first"`` (keep the first line).

    Returns
    -------
    Columns ``user`` (qid), ``item`` (docno), ``rank`` (UInt32, 1 = top;
    with ``ranks="file"``, UInt64 when a rank in the file is beyond UInt32's
    4294967295), ``score`` (Float64) and ``tag`` (String), sorted by user and
    rank. Ids stay strings.

    Raises
    ------
    ValueError
        Naming the file, the line number and the line: a line with fewer than
        six fields (text after the sixth is ignored, as trec_eval does), a
        score that is not a number (or NaN), a repeated document; with
        ``ranks="file"``, a rank that is not a positive integer of at most 64
        bits, a repeated rank.

    Examples
    --------
    >>> from polars_rankmetrics.trec import read_trec_run
    >>> run = read_trec_run(
    ...     b"q1 Q0 d1 1 0.5 bm25\nq1 Q0 d2 2 0.5 bm25\nq1 Q0 d3 3 0.9 bm25\n"
    ... )
    >>> run
    shape: (3, 5)
    ┌──────┬──────┬──────┬───────┬──────┐
    │ user ┆ item ┆ rank ┆ score ┆ tag  │
    │ ---  ┆ ---  ┆ ---  ┆ ---   ┆ ---  │
    │ str  ┆ str  ┆ u32  ┆ f64   ┆ str  │
    ╞══════╪══════╪══════╪═══════╪══════╡
    │ q1   ┆ d3   ┆ 1    ┆ 0.9   ┆ bm25 │
    │ q1   ┆ d2   ┆ 2    ┆ 0.5   ┆ bm25 │
    │ q1   ┆ d1   ┆ 3    ┆ 0.5   ┆ bm25 │
    └──────┴──────┴──────┴───────┴──────┘
    """
    _check_choice(ranks, ("score", "file"), "ranks")
    _check_choice(duplicates, ("error", "first"), "duplicates")
    fast = _run_from_path(source, ranks, duplicates)
    if fast is not None:
        return fast
    # trec_eval ignores text after the sixth field ("reserved for future expansion")
    name, split = _fields(source, 6, "qid Q0 docno rank score tag", extra=True)
    # aliases share the fields' memory; the __f columns stay to quote a refused line
    frame = split.with_columns(
        pl.col("__f0").alias("user"),
        pl.col("__f2").alias("item"),
        pl.col("__f5").alias("tag"),
        pl.col("__f4").cast(pl.Float64, strict=False).alias("score"),
        _file_rank(pl.col("__f3")).alias("__file_rank"),
    )
    del split
    _fail(
        frame,
        pl.col("score").is_null() | pl.col("score").is_nan(),
        name=name,
        problem="the score (field 5) is not a number",
    )
    if duplicates == "error":
        _check_duplicates(frame, ["user", "item"], name=name, what="the same docno for this qid")
    elif not _all_distinct(frame, ["user", "item"]):
        frame = frame.filter(pl.col(LINENO) == pl.col(LINENO).min().over("user", "item"))
    if ranks == "file":
        _fail(
            frame,
            pl.col("__file_rank") < 1,
            name=name,
            problem="the rank (field 4) is not a positive integer of at most 64 bits",
        )
        _check_duplicates(frame, ["user", "__file_rank"], name=name, what="the same rank")
        frame = frame.with_columns(_kept_rank(frame))
        return frame.select("user", "item", "rank", "score", "tag").sort("user", "rank")
    # trec_eval ignores the rank column: score descending, then docno descending (strcmp);
    # one sort gives both the ranks and the output order
    frame = frame.select("user", "item", "score", "tag").sort(
        ["user", "score", "item"], descending=[False, True, True]
    )
    index = pl.int_range(pl.len(), dtype=pl.UInt32)
    starts = (pl.col("user") != pl.col("user").shift(1)).fill_null(value=True)
    rank = index - pl.when(starts).then(index).forward_fill() + 1
    return frame.select("user", "item", rank.alias("rank"), "score", "tag")


def read_trec_qrels(source: FileSource, *, duplicates: Duplicates = "error") -> pl.DataFrame:
    r"""Read TREC relevance judgements (``qid iter docno rel``) into a frame.

    Parameters
    ----------
    source
        Path, bytes or open file.
    duplicates
        A document judged twice for one query: ``"error"`` (default) or
        ``"first"`` (keep the first judgement).

    Returns
    -------
    Columns ``user`` (qid), ``item`` (docno) and ``rel`` (Int64; graded, may be
    negative), in file order. The ``iter`` field is not used by trec_eval and
    is dropped. Pass ``relevance="rel"`` to :func:`polars_rankmetrics.evaluate`.

    Raises
    ------
    ValueError
        Naming the file, the line number and the line: a line without exactly
        four fields, a relevance that is not an integer, a repeated judgement.

    Examples
    --------
    >>> from polars_rankmetrics.trec import read_trec_qrels
    >>> read_trec_qrels(b"q1 0 d1 2\nq1 0 d2 0\nq1 0 d9#3 -1\n")
    shape: (3, 3)
    ┌──────┬──────┬─────┐
    │ user ┆ item ┆ rel │
    │ ---  ┆ ---  ┆ --- │
    │ str  ┆ str  ┆ i64 │
    ╞══════╪══════╪═════╡
    │ q1   ┆ d1   ┆ 2   │
    │ q1   ┆ d2   ┆ 0   │
    │ q1   ┆ d9#3 ┆ -1  │
    └──────┴──────┴─────┘
    """
    _check_choice(duplicates, ("error", "first"), "duplicates")
    rel = pl.col("__f3").str.to_integer(strict=False)
    fields = _piece_fields(
        source, 4, {"user": pl.col("__f0"), "item": pl.col("__f2"), "rel": rel}, rel.is_null()
    )
    if fields is not None:
        fast = fields[0]
        del fields
        if _distinct_keys(fast):
            return fast.drop(_KEY)
        if duplicates == "first":
            return fast.filter(pl.struct("user", "item").is_first_distinct()).drop(_KEY)
        del fast
    name, split = _fields(source, 4, "qid iter docno rel")
    frame = split.with_columns(
        pl.col("__f0").alias("user"),
        pl.col("__f2").alias("item"),
        pl.col("__f3").str.to_integer(strict=False).alias("rel"),
    )
    del split
    _fail(
        frame,
        pl.col("rel").is_null(),
        name=name,
        problem="the relevance (field 4) is not an integer",
    )
    if duplicates == "error":
        _check_duplicates(frame, ["user", "item"], name=name, what="the same docno for this qid")
    elif not _all_distinct(frame, ["user", "item"]):
        frame = frame.filter(pl.col(LINENO) == pl.col(LINENO).min().over("user", "item"))
    return frame.select("user", "item", "rel")


def read_trec_diversity_qrels(
    source: FileSource, *, duplicates: Duplicates = "error"
) -> pl.DataFrame:
    r"""Read TREC diversity judgements (``topic subtopic docno judgment``) into a frame.

    The subtopic qrels of the TREC Web track's diversity task (2009-2014), as
    ndeval reads them: one line per (topic, subtopic, document).

    Parameters
    ----------
    source
        Path, bytes or open file.
    duplicates
        A document judged twice for one subtopic: ``"error"`` (default) or
        ``"first"`` (keep the first judgement).

    Returns
    -------
    Columns ``user`` (topic), ``subtopic``, ``item`` (docno) and ``rel``
    (Int64), in file order: the long frame the diversity measures read (pass
    ``relevance="rel"``; the subtopic column is ``evaluate``'s default).

    Raises
    ------
    ValueError
        Naming the file, the line number and the line: a line without exactly
        four fields, a judgment that is not an integer, a repeated judgement.

    Examples
    --------
    >>> from polars_rankmetrics.trec import read_trec_diversity_qrels
    >>> read_trec_diversity_qrels(b"1 1 d1 1\n1 2 d1 0\n1 2 d7 1\n")
    shape: (3, 4)
    ┌──────┬──────────┬──────┬─────┐
    │ user ┆ subtopic ┆ item ┆ rel │
    │ ---  ┆ ---      ┆ ---  ┆ --- │
    │ str  ┆ str      ┆ str  ┆ i64 │
    ╞══════╪══════════╪══════╪═════╡
    │ 1    ┆ 1        ┆ d1   ┆ 1   │
    │ 1    ┆ 2        ┆ d1   ┆ 0   │
    │ 1    ┆ 2        ┆ d7   ┆ 1   │
    └──────┴──────────┴──────┴─────┘
    """
    _check_choice(duplicates, ("error", "first"), "duplicates")
    name, split = _fields(source, 4, "topic subtopic docno judgment")
    frame = split.with_columns(
        pl.col("__f0").alias("user"),
        pl.col("__f1").alias(_SUBTOPIC),
        pl.col("__f2").alias("item"),
        pl.col("__f3").str.to_integer(strict=False).alias("rel"),
    )
    del split
    _fail(frame, pl.col("rel").is_null(), name=name, problem="the judgment (field 4) is not "
          "an integer")  # fmt: skip
    keys = ["user", _SUBTOPIC, "item"]
    if duplicates == "error":
        _check_duplicates(frame, keys, name=name, what="the same docno for this subtopic")
    elif not _all_distinct(frame, keys):
        frame = frame.filter(pl.col(LINENO) == pl.col(LINENO).min().over(keys))
    return frame.select(*keys, "rel")


def ndeval_measures(
    measures: Sequence[str] | None = None, *, alpha: float = 0.5, beta: float = 0.5
) -> dict[str, str]:
    """The measure names of ndeval (``alpha-nDCG@20``, ``NRBP``...) with their metric strings.

    ``measures``: ndeval's names, with a cutoff (``"ERR-IA@10"``) or without
    (a cutoff measure then at ndeval's 5, 10 and 20); ``None``: ndeval's 21
    (its CSV columns, in its order).

    Examples
    --------
    >>> from polars_rankmetrics.trec import ndeval_measures
    >>> ndeval_measures(["alpha-nDCG@20", "NRBP"])
    {'alpha-nDCG@20': 'alpha_ndcg(alpha=0.5)@20', 'NRBP': 'nrbp(alpha=0.5,beta=0.5)'}
    """
    names = list(NDEVAL_NAMES) if measures is None else list(measures)
    table: dict[str, str] = {}
    for given in names:
        family, _, cut = given.partition("@")
        if family not in NDEVAL_NAMES:
            raise ValueError(f"unknown ndeval measure {given!r} (ndeval's: {list(NDEVAL_NAMES)})")
        template = NDEVAL_NAMES[family]
        cuts = [cut] if cut else [str(k) for k in NDEVAL_CUTOFFS] if "{k}" in template else [""]
        for k in cuts:
            label = f"{family}@{k}" if k else family
            table[label] = template.format(alpha=alpha, beta=beta, k=k)
    return table


def ndeval(
    qrels: AnyFrame,
    run: Eager | pl.LazyFrame | ArrowStream,
    measures: Sequence[str] | None = None,
    *,
    alpha: float = 0.5,
    beta: float = 0.5,
    complete: bool = False,
    relevance_level: float = 1,
) -> Eager:
    r"""The measures of ndeval for a run against diversity qrels: ``measure, query, value`` rows.

    ``qrels``: :func:`read_trec_diversity_qrels`'s frame (``user``,
    ``subtopic``, ``item``, ``rel``); ``run``: :func:`read_trec_run`'s
    (``user``, ``item``, ``score``), ranked by score, equal scores by docno
    descending (ndeval ``-traditional``, trec_eval's order). Per query (topic) in ndeval's order of
    measures, then ``all``, the mean over the topics of both files (ndeval's
    ``amean``; ``complete``: every qrels topic, ndeval ``-c``). The values
    equal ndeval's (``conventions="ndeval"``; see
    :mod:`polars_rankmetrics._measures.diversity`). In the run's frame kind
    (a LazyFrame gives a DataFrame; pandas gives pandas).

    Examples
    --------
    >>> from polars_rankmetrics.trec import ndeval, read_trec_diversity_qrels, read_trec_run
    >>> qrels = read_trec_diversity_qrels(b"1 1 a 1\n1 2 b 1\n1 2 a 0\n")
    >>> run = read_trec_run(b"1 Q0 b 1 2.0 r\n1 Q0 a 2 1.0 r\n")
    >>> ndeval(qrels, run, ["alpha-nDCG@2", "strec@1"]).rows()  # doctest: +NORMALIZE_WHITESPACE
    [('alpha-nDCG@2', '1', 1.0), ('strec@1', '1', 0.5),
     ('alpha-nDCG@2', 'all', 1.0), ('strec@1', 'all', 0.5)]
    """
    from polars_rankmetrics.evaluation import evaluate  # noqa: PLC0415 - the face below

    table = ndeval_measures(measures, alpha=alpha, beta=beta)
    options = {
        "score": "score", "relevance": "rel", "conventions": "ndeval",
        "relevance_level": relevance_level,
        "users_without_recs": "zero" if complete else "exclude",
    }  # fmt: skip
    metrics = list(table.values())
    call = eager_caller(run, name="run")
    lists, judged = collected(call.frame), collected(call.read(qrels, name="qrels"))
    per_query = evaluate(lists, judged, metrics, per_user=True, **options)  # type: ignore[arg-type]
    means = evaluate(lists, judged, metrics, **options)  # type: ignore[arg-type]
    means = means.with_columns(user=pl.lit("all"))
    wide = pl.concat([per_query.sort("user"), means.select(per_query.columns)])
    long = wide.unpivot(index="user", variable_name="metric", value_name="value")
    names = pl.col("metric").replace_strict({m: n for n, m in table.items()})
    order = pl.col("metric").replace_strict({m: i for i, m in enumerate(metrics)})
    rows = long.with_columns(
        names.alias("measure"), pl.col("user").cast(pl.String).alias("query"), order.alias("__o")
    )
    # per query (its measures in ndeval's order), then all
    ordered = rows.sort(pl.col("query") == "all", "query", "__o")
    return call.back(ordered.select("measure", "query", "value"))


def _check_choice(value: object, allowed: Sequence[str], what: str) -> None:
    if value not in allowed:
        raise ValueError(f"{what} must be one of {list(allowed)}, got {value!r}")


def write_trec_run(
    recs: AnyFrame,
    file: str | IO[str] | IO[bytes],
    *,
    user: str = "user",
    item: str = "item",
    rank: str = "rank",
    score: str | None = None,
    tag: str = "polars_rankmetrics",
) -> None:
    """Write recommendations as a TREC run, ``qid Q0 docno rank score tag``.

    Parameters
    ----------
    recs
        One row per (user, item) with a ``rank`` column, a ``score`` column, or
        both; any frame (Polars, pandas, Arrow: see :func:`polars_rankmetrics.evaluate`).
    file
        Path or open file.
    score
        Column written as the score. ``None``: the score is derived from the rank
        (``max rank of the query - rank + 1``) so that trec_eval, which sorts by
        score, reads the same order back.
    tag
        The run name in the last field.

    Notes
    -----
    When only ``score`` is present, ranks are derived with trec_eval's rule
    (score descending, docno descending). Lines are sorted by qid and rank.

    Examples
    --------
    >>> import io
    >>> import polars as pl
    >>> from polars_rankmetrics.trec import write_trec_run
    >>> out = io.StringIO()
    >>> recs = pl.DataFrame({"user": ["q1", "q1"], "item": ["d7", "d2"], "rank": [1, 2]})
    >>> write_trec_run(recs, out, tag="demo")
    >>> print(out.getvalue(), end="")
    q1 Q0 d7 1 2 demo
    q1 Q0 d2 2 1 demo
    """
    frame = collected(read(recs, name="recs"))
    roles = {"user": user, "item": item}
    roles.update({"score": score} if score is not None else {"rank": rank})
    require_frame_columns(frame, roles, "a TREC run")
    if not tag or re.search(r"\s", tag):
        raise ValueError(f"tag must be a non-empty word without whitespace, got {tag!r}")
    if score is not None and rank not in frame.columns:
        frame = positions(frame, user=user, item=item, rank=rank, score=score)
    score_expr = (
        pl.col(score).cast(pl.Float64)
        if score is not None
        else pl.col(rank).max().over(user) - pl.col(rank) + 1
    )
    out = frame.select(
        pl.col(user).cast(pl.String).alias("qid"),
        pl.lit("Q0").alias("q0"),
        pl.col(item).cast(pl.String).alias("docno"),
        pl.col(rank).alias("rank"),
        score_expr.alias("score"),
        pl.lit(tag).alias("tag"),
    ).sort("qid", "rank")
    check_no_whitespace(out, ["qid", "docno"], what="a TREC run")
    out.write_csv(file, include_header=False, separator=" ", quote_style="never")


def write_trec_qrels(
    truth: AnyFrame,
    file: str | IO[str] | IO[bytes],
    *,
    user: str = "user",
    item: str = "item",
    relevance: str | None = None,
) -> None:
    """Write judgements as TREC qrels, ``qid 0 docno rel``.

    Parameters
    ----------
    truth
        One row per judged (user, item); any frame (Polars, pandas, Arrow).
    file
        Path or open file.
    relevance
        Integer graded relevance column; ``None`` writes 1 for every row.

    Examples
    --------
    >>> import io
    >>> import polars as pl
    >>> from polars_rankmetrics.trec import write_trec_qrels
    >>> out = io.StringIO()
    >>> truth = pl.DataFrame({"user": ["q1", "q1"], "item": ["d7", "d3"], "rel": [2, 0]})
    >>> write_trec_qrels(truth, out, relevance="rel")
    >>> print(out.getvalue(), end="")
    q1 0 d7 2
    q1 0 d3 0
    """
    frame = collected(read(truth, name="truth"))
    roles = {"user": user, "item": item}
    if relevance is not None:
        roles["relevance"] = relevance
        if not frame.schema.get(relevance, pl.Int64).is_integer():
            raise TypeError(
                f"cannot write TREC qrels: relevance column {relevance!r} must hold "
                f"integers, its dtype is {frame.schema[relevance]}"
            )
    require_frame_columns(frame, roles, "TREC qrels")
    out = frame.select(
        pl.col(user).cast(pl.String).alias("qid"),
        pl.lit(0).alias("iter"),
        pl.col(item).cast(pl.String).alias("docno"),
        (pl.col(relevance) if relevance is not None else pl.lit(1)).alias("rel"),
    )
    check_no_whitespace(out, ["qid", "docno"], what="TREC qrels")
    out.write_csv(file, include_header=False, separator=" ", quote_style="never")


def trec_eval_files() -> Path:
    """The folder of trec_eval 10.0's own test files, shipped with the package.

    ``qrels.test`` and ``results.test`` (3 topics, a run of 500 documents
    each), ``results.trunc`` (topic 302 left out), ``qrels.rel_level`` (graded
    -1 to 4), and in ``expected/`` what trec_eval 10.0 printed for them:
    ``out.test``, ``out.test.aqc`` (``-q -c`` on the truncated run) and
    ``out.test.aql`` (``-q -l2`` on the graded qrels); its ``README.md`` says
    which command printed each. The TREC notebook reproduces those numbers from them.

    Examples
    --------
    >>> from polars_rankmetrics.trec import (
    ...     format_trec_eval, read_trec_qrels, read_trec_run, trec_eval, trec_eval_files
    ... )
    >>> data = trec_eval_files()
    >>> run = read_trec_run(data / "results.test")
    >>> qrels = read_trec_qrels(data / "qrels.test")
    >>> print(format_trec_eval(trec_eval(qrels, run, ["map", "P.5"])))
    map                     all  0.1785
    P_5                     all  0.2667
    """
    return Path(__file__).resolve().parent / "data" / "trec_eval"
