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
from typing import IO, Literal

import polars as pl

from polars_rankmetrics._textfiles import (
    LINE,
    LINENO,
    FileSource,
    check_no_whitespace,
    fail_on,
    file_error,
    read_lines,
    require_frame_columns,
)
from polars_rankmetrics._trec_eval import (
    TrecMeasure,
    format_trec_eval,
    parse_trec_measures,
    trec_eval,
)
from polars_rankmetrics.ranking import positions

__all__ = [
    "TrecMeasure",
    "format_trec_eval",
    "parse_trec_measures",
    "read_trec_qrels",
    "read_trec_run",
    "trec_eval",
    "write_trec_qrels",
    "write_trec_run",
]

RunRanks = Literal["score", "file"]
Duplicates = Literal["error", "first"]


def _fields(
    name: str, lines: pl.DataFrame, n_fields: int, layout: str, *, extra: bool = False
) -> pl.DataFrame:
    """Split non-blank lines on whitespace runs; refuse lines with the wrong field count.

    With ``extra``, text after the last field is allowed (and ignored).
    """
    # literal splits and a filter are several times faster than a regex split on \s+
    words = (
        pl.col(LINE)
        .str.replace_all("\t", " ", literal=True)
        .str.split(" ")
        .list.eval(pl.element().filter(pl.element() != ""))
    )
    split = lines.with_columns(__fields=words).filter(pl.col("__fields").list.len() > 0)
    count = pl.col("__fields").list.len()
    fail_on(
        split,
        count < n_fields if extra else count != n_fields,
        name=name,
        problem=f"expected {'at least ' if extra else ''}{n_fields} whitespace-separated "
        f"fields ({layout})",
    )
    return split


def _check_duplicates(frame: pl.DataFrame, keys: list[str], *, name: str, what: str) -> None:
    if frame.select(keys).n_unique() == frame.height:
        return
    first = pl.col(LINENO).min().over(keys)
    repeats = frame.with_columns(__first=first).filter(pl.col(LINENO) != pl.col("__first"))
    if repeats.height:
        row = repeats.row(0, named=True)
        raise file_error(
            name,
            row[LINENO],
            row[LINE],
            f"{what} again (first on line {row['__first']}); pass duplicates='first' "
            "to keep the first line",
            more=repeats.height - 1,
        )


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
    Columns ``user`` (qid), ``item`` (docno), ``rank`` (UInt32, 1 = top),
    ``score`` (Float64) and ``tag`` (String), sorted by user and rank. Ids stay
    strings.

    Raises
    ------
    ValueError
        Naming the file, the line number and the line: a line with fewer than
        six fields (text after the sixth is ignored, as trec_eval does), a
        score that is not a number (or NaN), a repeated document.

    Examples
    --------
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
    name, lines = read_lines(source)
    # trec_eval ignores text after the sixth field ("reserved for future expansion")
    split = _fields(name, lines, 6, "qid Q0 docno rank score tag", extra=True)
    parts = pl.col("__fields").list
    frame = split.select(
        LINENO,
        LINE,
        parts.get(0).alias("user"),
        parts.get(2).alias("item"),
        parts.get(3).alias("__rank_text"),
        parts.get(4).alias("__score_text"),
        parts.get(5).alias("tag"),
    ).with_columns(
        pl.col("__score_text").cast(pl.Float64, strict=False).alias("score"),
        pl.col("__rank_text").str.to_integer(strict=False).alias("__file_rank"),
    )
    fail_on(
        frame,
        pl.col("score").is_null() | pl.col("score").is_nan(),
        name=name,
        problem="the score (field 5) is not a number",
    )
    if duplicates == "error":
        _check_duplicates(frame, ["user", "item"], name=name, what="the same docno for this qid")
    elif frame.select("user", "item").n_unique() < frame.height:
        frame = frame.filter(pl.col(LINENO) == pl.col(LINENO).min().over("user", "item"))
    if ranks == "file":
        fail_on(
            frame,
            pl.col("__file_rank") < 1,
            name=name,
            problem="the rank (field 4) is not a positive integer",
        )
        _check_duplicates(frame, ["user", "__file_rank"], name=name, what="the same rank")
        frame = frame.with_columns(pl.col("__file_rank").cast(pl.UInt32).alias("rank"))
    else:
        # trec_eval ignores the rank column: score descending, then docno descending
        frame = positions(frame, score="score", ties="item_desc")
    return frame.select("user", "item", "rank", "score", "tag").sort("user", "rank")


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
    name, lines = read_lines(source)
    split = _fields(name, lines, 4, "qid iter docno rel")
    parts = pl.col("__fields").list
    frame = split.select(
        LINENO,
        LINE,
        parts.get(0).alias("user"),
        parts.get(2).alias("item"),
        parts.get(3).str.to_integer(strict=False).alias("rel"),
    )
    fail_on(
        frame,
        pl.col("rel").is_null(),
        name=name,
        problem="the relevance (field 4) is not an integer",
    )
    if duplicates == "error":
        _check_duplicates(frame, ["user", "item"], name=name, what="the same docno for this qid")
    elif frame.select("user", "item").n_unique() < frame.height:
        frame = frame.filter(pl.col(LINENO) == pl.col(LINENO).min().over("user", "item"))
    return frame.select("user", "item", "rel")


def _check_choice(value: object, allowed: Sequence[str], what: str) -> None:
    if value not in allowed:
        raise ValueError(f"{what} must be one of {list(allowed)}, got {value!r}")


def write_trec_run(
    recs: pl.DataFrame | pl.LazyFrame,
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
        One row per (user, item) with a ``rank`` column, a ``score`` column, or both.
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
    >>> out = io.StringIO()
    >>> recs = pl.DataFrame({"user": ["q1", "q1"], "item": ["d7", "d2"], "rank": [1, 2]})
    >>> write_trec_run(recs, out, tag="demo")
    >>> print(out.getvalue(), end="")
    q1 Q0 d7 1 2 demo
    q1 Q0 d2 2 1 demo
    """
    frame = recs.collect() if isinstance(recs, pl.LazyFrame) else recs
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
    truth: pl.DataFrame | pl.LazyFrame,
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
        One row per judged (user, item).
    file
        Path or open file.
    relevance
        Integer graded relevance column; ``None`` writes 1 for every row.

    Examples
    --------
    >>> import io
    >>> import polars as pl
    >>> out = io.StringIO()
    >>> truth = pl.DataFrame({"user": ["q1", "q1"], "item": ["d7", "d3"], "rel": [2, 0]})
    >>> write_trec_qrels(truth, out, relevance="rel")
    >>> print(out.getvalue(), end="")
    q1 0 d7 2
    q1 0 d3 0
    """
    frame = truth.collect() if isinstance(truth, pl.LazyFrame) else truth
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
