"""``rankmetrics evaluate``: a recommendations file scored against a truth file.

Every convention parameter of :func:`polars_rankmetrics.evaluate` is an
option, declared from the function's own signature, so the two cannot drift.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from polars_rankmetrics.cli._common import (
    DISPLAY_FORMATS,
    add_api_options,
    api_options,
    check_output,
    ids_as_text,
    progress,
    read_frame,
    show,
    warn_if_few_ids_match,
    write_frame,
)
from polars_rankmetrics.evaluate import evaluate

__all__ = ["CONVENTIONS", "add", "run"]

CONVENTIONS = (
    "denominator",
    "gain",
    "ties",
    "relevance_level",
    "users_without_recs",
    "users_without_truth",
    "duplicates",
    "conventions",
)
"""The parameters of :func:`polars_rankmetrics.evaluate` that are options here."""


def add(subparsers: Any) -> argparse.ArgumentParser:
    """Declare ``rankmetrics evaluate``."""
    command: argparse.ArgumentParser = subparsers.add_parser(
        "evaluate",
        help="evaluate a recommendations file against a truth file (Parquet, CSV, ...)",
        description="Evaluate long-format recommendations (user, item, rank or score) against "
        "a truth file (user, item[, rel]) and print the mean of each metric. Files: .parquet, "
        ".csv, .tsv (optionally .gz), .json, .ndjson. Ids are compared as text: text files "
        "as written (leading zeros kept), numbers as integers (1.0 is 1).",
    )
    command.add_argument("recs", help="recommendations file")
    command.add_argument("truth", help="ground-truth file")
    command.add_argument(
        "--metrics", "-m", nargs="+", required=True, help="metric strings, e.g. map@12 ndcg@10 mrr"
    )
    command.add_argument("--by", nargs="+", default=[], help="columns evaluated side by side")
    command.add_argument("--user", default="user", help="user column (default: user)")
    command.add_argument("--item", default="item", help="item column (default: item)")
    command.add_argument("--rank", default="rank", help="rank column (default: rank)")
    command.add_argument("--score", help="derive ranks from this score column")
    command.add_argument("--relevance", help="graded relevance column of the truth")
    add_api_options(command, evaluate, CONVENTIONS, group="conventions (as in evaluate())")
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
    inputs = [args.recs, args.truth]
    chosen = {"--per-user": args.per_user, "--output": args.output}
    given = {option: path for option, path in chosen.items() if path}
    if len(given) == 2 and Path(args.per_user).resolve() == Path(args.output).resolve():
        raise ValueError(f"--per-user and --output name the same file {args.output}")
    return {
        option: check_output(path, inputs=inputs, option=option) for option, path in given.items()
    }


def run(args: argparse.Namespace) -> int:
    """Read both files, evaluate, print the means and write the requested files."""
    outputs = _outputs(args)
    keys = [args.user, args.item, *args.by]
    progress(args, "evaluate", f"reading {args.recs}")
    recs = read_frame(args.recs, text_columns=keys)
    progress(args, "evaluate", f"reading {args.truth}")
    truth = read_frame(args.truth, text_columns=keys)
    # one id rule whatever the formats: ids as text (see ids_as_text); by columns only
    # in the recs (models) are labels, not ids, and keep their type
    shared = [key for key in keys if key in recs.columns and key in truth.columns]
    recs = ids_as_text(recs, shared, name=args.recs)
    truth = ids_as_text(truth, shared, name=args.truth)
    ids = [key for key in (args.user, args.item) if key in shared]
    warn_if_few_ids_match("evaluate", recs, truth, ids, left_name=args.recs, right_name=args.truth)
    options: dict[str, Any] = {
        "user": args.user,
        "item": args.item,
        "rank": args.rank,
        "score": args.score,
        "relevance": args.relevance,
        "by": args.by or None,
        **api_options(args, CONVENTIONS),
    }
    progress(args, "evaluate", f"evaluating {recs.height:,} recommendation rows")
    if "--per-user" in outputs:
        per_user = evaluate(recs, truth, args.metrics, per_user=True, **options)
        write_frame(per_user, outputs["--per-user"], option="--per-user")
    summary = evaluate(recs, truth, args.metrics, **options)
    if "--output" in outputs:
        write_frame(summary, outputs["--output"], option="--output")
    sys.stdout.write(show(summary, args.format) + "\n")
    return 0
