"""``rankmetrics demo``: four recommenders scored on the built-in synthetic sample."""

from __future__ import annotations

import argparse
import sys
from typing import Any

import polars as pl

from polars_rankmetrics.analysis.compare import compare
from polars_rankmetrics.analysis.report import report
from polars_rankmetrics.cli._common import (
    DISPLAY_FORMATS,
    check_output,
    progress,
    show,
    write_frame,
)
from polars_rankmetrics.evaluate import evaluate
from polars_rankmetrics.sample import sample_data

__all__ = ["DEMO_METRICS", "add", "run"]

DEMO_METRICS = ["map@10", "ndcg@10", "mrr@10", "precision@10", "recall@20", "hit_rate@10"]
COMPARED = ["map@10", "ndcg@10", "recall@20"]
BASELINE = "popularity"
MAX_USERS = 1_000_000
"""The largest sample offered: a million users take about 6.5 GB (benchmarks/demo_size.py).

The sample's rows alone are about 4 KB a user, and evaluate and compare hold
more beside them: five million users would not fit a 24 GB machine.
"""


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if not 1 <= value <= MAX_USERS:
        raise argparse.ArgumentTypeError(
            f"must be between 1 and {MAX_USERS:,} (a million users take about 6.5 GB of memory "
            f"and minutes; the memory grows with the users), got {value:,}"
        )
    return value


def add(subparsers: Any) -> argparse.ArgumentParser:
    """Declare ``rankmetrics demo``."""
    command: argparse.ArgumentParser = subparsers.add_parser(
        "demo",
        help="evaluate four recommenders on the built-in synthetic sample",
        description="Generate the built-in sample (one synthetic interaction log, four "
        "recommenders of different quality) and print their metrics side by side.",
    )
    command.add_argument(
        "--users", type=_count, default=2_000, help=f"number of users, 1 to {MAX_USERS:,}"
    )
    command.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    command.add_argument("--format", default="table", choices=DISPLAY_FORMATS)
    command.add_argument("--output", metavar="PATH", help="also write the table to PATH")
    command.add_argument("--progress", action="store_true", help="report progress on stderr")
    command.set_defaults(handler=run, command_parser=command)
    return command


def run(args: argparse.Namespace) -> int:
    """Generate the sample, evaluate it and print the table (and, for people, a comparison)."""
    output = check_output(args.output, inputs=[], option="--output") if args.output else None
    progress(args, "demo", f"generating the sample for {args.users:,} users")
    sample = sample_data(n_users=args.users, seed=args.seed)
    recs, truth = sample.recs, sample.truth
    progress(args, "demo", f"evaluating {recs.height:,} recommendation rows")
    scores = evaluate(recs, truth, DEMO_METRICS, score="score", relevance="rel", by="model")
    scores = scores.sort(DEMO_METRICS[0], descending=True)
    if output is not None:
        write_frame(scores, output, option="--output")
    if args.format != "table":  # machine formats print the data alone
        sys.stdout.write(show(scores, args.format) + "\n")
        return 0
    list_length = recs.group_by("model", "user").len().select(pl.col("len").max()).item()
    print(
        f"Built-in sample: {args.users:,} users ({truth['user'].n_unique():,} with purchases "
        f"after the time split), {recs['item'].n_unique():,} items recommended, "
        f"{recs['model'].n_unique()} recommenders x top {list_length} ({recs.height:,} "
        f"recommendation rows, {truth.height:,} held-out truth rows, graded 1-3).\n"
    )
    sys.stdout.write(show(scores, args.format) + "\n")
    progress(args, "demo", "comparing the recommenders with the popularity baseline")
    comparison = compare(
        recs, truth, COMPARED, score="score", relevance="rel", system="model",
        baseline=BASELINE,
    )  # fmt: skip
    print(
        f"\nEach recommender against {BASELINE!r}: mean [95% interval] over users, paired "
        "t-test, Holm-corrected over the systems of each metric.\n"
    )
    sys.stdout.write(str(report(comparison)).rstrip("\n") + "\n")
    return 0
