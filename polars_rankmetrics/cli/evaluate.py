"""``rankmetrics evaluate``: a recommendations file scored against a truth file.

Every convention parameter of :func:`polars_rankmetrics.evaluate` is an
option, declared from the function's own signature, so the two cannot drift.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import polars as pl

from polars_rankmetrics._pipeline.aggregate import per_user_values
from polars_rankmetrics.cli._common import (
    DISPLAY_FORMATS,
    add_api_options,
    add_list_inputs,
    api_options,
    check_output,
    input_files,
    list_inputs,
    progress,
    read_inputs,
    show,
    warn,
    write_frame,
)
from polars_rankmetrics.cli._measures import add_measures_option
from polars_rankmetrics.conventions import CONVENTION_KEYWORDS
from polars_rankmetrics.evaluation import aggregate, evaluate, parse_metrics, per_user_parts

__all__ = ["CONVENTIONS", "add", "run"]

CONVENTIONS = (*CONVENTION_KEYWORDS, "conventions")
"""The parameters of :func:`polars_rankmetrics.evaluate` that are options here."""

GRADE_NAMES = ("rel", "relevance", "grade", "label", "score")
"""Truth columns taken for grades first when ``--relevance`` is missing (for the warning)."""


def add(subparsers: Any) -> argparse.ArgumentParser:
    """Declare ``rankmetrics evaluate``."""
    command: argparse.ArgumentParser = subparsers.add_parser(
        "evaluate",
        help="evaluate a recommendations file against a truth file (Parquet, CSV, ...)",
        description="Evaluate long-format recommendations (user, item, rank or score) against "
        "a truth file (user, item[, rel]) and print the mean of each metric. Files: .parquet, "
        ".csv, .tsv (optionally .gz), .json, .ndjson. Ids are compared as numbers when every "
        "file gives them as numbers (Parquet or JSON integers, 1.0 is 1; CSV/TSV integers "
        "written plainly, 10 but not 00123), so a file's format changes no number; else as "
        "text in every file (as written, leading zeros kept), with a warning naming the files "
        "that gave numbers. Equal scores break on the ids the same way: by value for numbers "
        "(10 above 9 under the default --ties item_desc), by text for text ('9' above '10').",
    )
    command.add_argument("recs", help="recommendations file")
    command.add_argument(
        "truth",
        nargs="?",
        help="ground-truth file (leave out when only list measures such as coverage@10 are asked)",
    )
    command.add_argument(
        "--metrics", "-m", nargs="+", required=True, help="metric strings, e.g. map@12 ndcg@10 mrr"
    )
    add_measures_option(command)
    command.add_argument("--by", nargs="+", default=[], help="columns evaluated side by side")
    command.add_argument("--user", default="user", help="user column (default: user)")
    command.add_argument("--item", default="item", help="item column (default: item)")
    command.add_argument("--rank", default="rank", help="rank column (default: rank)")
    command.add_argument("--score", help="derive ranks from this score column")
    add_list_inputs(command)
    command.add_argument("--relevance", help="graded relevance column of the truth")
    add_api_options(command, CONVENTIONS, title="conventions (as in evaluate())")
    output = command.add_argument_group("output")
    output.add_argument("--format", default="table", choices=DISPLAY_FORMATS)
    output.add_argument(
        "--per-user", metavar="PATH", help="also write per-user scores to PATH (.csv, .parquet...)"
    )
    output.add_argument("--output", metavar="PATH", help="also write the means to PATH")
    output.add_argument("--progress", action="store_true", help="report progress on stderr")
    command.set_defaults(handler=run, command_parser=command)
    return command


def _outputs(args: argparse.Namespace) -> dict[str, Path]:
    inputs = _inputs(args)
    chosen = {"--per-user": args.per_user, "--output": args.output}
    given = {option: path for option, path in chosen.items() if path}
    if len(given) == 2 and Path(args.per_user).resolve() == Path(args.output).resolve():
        raise ValueError(f"--per-user and --output name the same file {args.output}")
    return {
        option: check_output(path, inputs=inputs, option=option) for option, path in given.items()
    }


def _inputs(args: argparse.Namespace) -> list[str]:
    files = (args.recs, args.truth, *input_files(args).values())
    return [path for path in files if path is not None]


def grades_left_unused(truth: pl.DataFrame, args: argparse.Namespace) -> str | None:
    """The warning for a truth with a numeric column that could be grades and no ``--relevance``.

    Without ``--relevance`` every truth row is relevant with grade 1, so a
    file's ``rel`` column would silently leave NDCG binary and count grade-0
    rows as relevant. Only the command line guesses: a Python caller names
    every column it means (``relevance=``). ``None``: ``--relevance`` given,
    or no numeric column besides the ids and the ``--by`` columns.
    """
    if args.relevance is not None:
        return None
    ids = {args.user, args.item, *args.by}
    numeric = [
        name for name, dtype in truth.schema.items() if name not in ids and dtype.is_numeric()
    ]
    if not numeric:
        return None
    named = [name for name in GRADE_NAMES if name in numeric]
    column = named[0] if named else numeric[0]
    others = ", ".join(repr(name) for name in GRADE_NAMES if name != column)
    what = (
        f"a column {column!r} (also {others} are recognised names)"
        if named
        else f"a numeric column {column!r} besides the ids"
    )
    return (
        f"{args.truth} has {what} but --relevance was not given: every truth row counts "
        f"as relevant with grade 1; pass --relevance {column} to use the grades"
    )


def run(args: argparse.Namespace) -> int:
    """Read the files, evaluate, print the means and write the requested files."""
    outputs = _outputs(args)
    recs, truth, side = read_inputs(args, "evaluate", args.recs, args.truth)
    options: dict[str, Any] = {
        "user": args.user,
        "item": args.item,
        "rank": args.rank,
        "score": args.score,
        "relevance": args.relevance,
        "by": args.by or None,
        **list_inputs(args, side),
        **api_options(args, CONVENTIONS),
    }
    progress(args, "evaluate", f"evaluating {recs.height:,} recommendation rows")
    if "--per-user" in outputs:
        # one per-user pass: the values written and the means shown both come from its parts
        parts = per_user_parts(recs, truth, args.metrics, **options)
        keys = [*args.by, args.user]
        per_user = parts.select(*keys, *per_user_values(parse_metrics(args.metrics)))
        write_frame(per_user, outputs["--per-user"], option="--per-user")
        summary = aggregate(parts, args.metrics, by=args.by or None)
    else:
        summary = evaluate(recs, truth, args.metrics, **options)
    if "--output" in outputs:
        write_frame(summary, outputs["--output"], option="--output")
    # after the evaluation: a refusal stays the one line on stderr
    unused = None if truth is None else grades_left_unused(truth, args)
    if unused is not None:
        warn("evaluate", unused)
    sys.stdout.write(show(summary, args.format) + "\n")
    return 0
