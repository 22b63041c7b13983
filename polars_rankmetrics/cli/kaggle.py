"""``rankmetrics kaggle``: a submission scored against a solution, as the leaderboard would."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from polars_rankmetrics.cli._common import (
    CliError,
    check_input,
    check_output,
    progress,
    write_frame,
)
from polars_rankmetrics.kaggle import PRESETS, _scored

__all__ = ["add", "run"]

_LAYOUTS = ("auto", "wide", "long")


def add(subparsers: Any) -> argparse.ArgumentParser:
    """Declare ``rankmetrics kaggle``."""
    command: argparse.ArgumentParser = subparsers.add_parser(
        "kaggle",
        help="score a Kaggle-style submission CSV against a solution CSV",
        description="Score a submission against a solution and print the score. "
        "Give a metric (with the files' first two columns as id and items) or a "
        f"competition preset: {', '.join(sorted(PRESETS))}. The OTTO solution may also be "
        "its official test_labels JSONL file.",
    )
    command.add_argument("submission", help="submission CSV (wide: 'id,items'; long: one row each)")
    command.add_argument("solution", help="solution CSV (wide or long) or OTTO labels .jsonl")
    choice = command.add_mutually_exclusive_group(required=True)
    # -m/--metrics as every other command names it; --metric as this one always did (unlisted)
    choice.add_argument(
        "-m",
        "--metrics",
        dest="metric",
        nargs="+",
        metavar="METRIC",
        help="the metric string, e.g. map@12, ndcg@5, recall@20 (one: a leaderboard's score)",
    )
    choice.add_argument("--metric", dest="metric", nargs=1, help=argparse.SUPPRESS)
    choice.add_argument("--preset", choices=sorted(PRESETS), help="competition rules")
    command.add_argument("--layout", choices=_LAYOUTS, default="auto", help="submission layout")
    command.add_argument(
        "--solution-layout",
        choices=_LAYOUTS,
        default="auto",
        help="solution layout: wide (one row per id, items space-separated) or long (one row "
        "per id and item, e.g. customer_id,article_id from H&M's transactions); every preset "
        "reads both",
    )
    # dest user/item: the library's advice (item='article') reads --item-column article
    command.add_argument(
        "--user-column",
        dest="user",
        metavar="NAME",
        help="id column, looked for first in each file (default: the preset's names, else "
        "the first column)",
    )
    command.add_argument(
        "--item-column",
        dest="item",
        metavar="NAME",
        help="item column, looked for first in each file, e.g. article_id in a long solution "
        "(default: the preset's names, else the second column)",
    )
    command.add_argument("--relevance", help="graded relevance column of a long solution")
    command.add_argument(
        "--users",
        choices=("with_truth", "solution"),
        help="ids averaged: with a relevant item or every solution id (default: the "
        "preset's rule, else with_truth)",
    )
    command.add_argument(
        "--duplicates",
        choices=("first", "error"),
        default="first",
        help="an item predicted twice: keep the first (its repeat wastes a slot) or refuse",
    )
    command.add_argument(
        "--unknown-ids",
        choices=("warn", "ignore", "error"),
        default="warn",
        help="ids only one file has: warn (default), say nothing, or refuse the files",
    )
    command.add_argument(
        "--per-user",
        metavar="PATH",
        help="write each id's score to PATH (columns: the submission's id column, the metric)",
    )
    command.add_argument("--progress", action="store_true", help="report progress on stderr")
    command.set_defaults(handler=run, command_parser=command)
    return command


def run(args: argparse.Namespace) -> int:
    """Score the submission; print the score with six decimals."""
    if args.metric is not None and len(args.metric) > 1:
        raise CliError(
            f"-m: a submission gets one score, as on a leaderboard; got {len(args.metric)} "
            f"metrics {args.metric}: run the command once per metric"
        )
    metric = None if args.metric is None else args.metric[0]
    inputs = [args.submission, args.solution]
    for path in inputs:
        check_input(path)
    per_user = (
        check_output(args.per_user, inputs=inputs, option="--per-user") if args.per_user else None
    )
    options: dict[str, Any] = {
        "preset": args.preset,
        "layout": args.layout,
        "solution_layout": args.solution_layout,
        "user": args.user,
        "item": args.item,
        "relevance": args.relevance,
        "users": args.users,
        "duplicates": args.duplicates,
        "unknown_ids": args.unknown_ids,
    }
    progress(args, "kaggle", f"scoring {args.submission}")
    # one evaluation gives the per-id values and the score derived from them
    scored = _scored(args.submission, args.solution, metric, **options)
    if per_user is not None:
        # the file's own name of its ids (customer_id), as the submission wrote it
        table = scored.table
        if scored.user_column not in table.columns:
            table = table.rename({"user": scored.user_column})
        write_frame(table, per_user, option="--per-user")
    sys.stdout.write(f"{scored.score:.6f}\n")
    return 0
