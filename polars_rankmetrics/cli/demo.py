"""``rankmetrics demo``: four recommenders scored on the built-in synthetic sample.

``rankmetrics demo --write DIR`` writes the sample instead, as the files the
documentation's command-line examples read (:data:`FILES`), so that every
example runs as pasted in that folder.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

from polars_rankmetrics.analysis.comparison import compare
from polars_rankmetrics.analysis.reporting import report
from polars_rankmetrics.cli._common import (
    DISPLAY_FORMATS,
    CliError,
    check_output,
    progress,
    show,
    write_frame,
)
from polars_rankmetrics.evaluation import evaluate
from polars_rankmetrics.sample import Sample, sample_data

__all__ = ["DEMO_METRICS", "FILES", "add", "run"]

DEMO_METRICS = ["map@10", "ndcg@10", "mrr@10", "precision@10", "recall@20", "hit_rate@10"]
COMPARED = ["map@10", "ndcg@10", "recall@20"]
BASELINE = "popularity"
MAX_USERS = 1_000_000
"""The largest sample offered: a million users take about 6.5 GB (benchmarks/demo_size.py).

The sample's rows alone are about 4 KB a user, and evaluate and compare hold
more beside them: five million users would not fit a 24 GB machine.
"""


FILES = {
    "recs.parquet": "the four recommenders' top 20 per user: model, user, item, score",
    "truth.parquet": "what the users did after the time split: user, item, rel (1-3)",
    "interactions.parquet": "the training history: user, item, timestamp, event",
    "items.parquet": "the catalog: item, categories, popularity",
    "users.parquet": "user, signup, n_history, segment",
    "submission.csv": "a Kaggle submission (H&M's layout): two_tower's top 12 per customer_id",
    "solution.csv": "its solution: each customer_id's purchases after the split (or none)",
    "transactions.csv": "the purchases one row each (a long solution): customer_id, article_id",
    "qrels.txt": "the truth as TREC qrels",
    "run_a.txt": "two_tower's lists as a TREC run",
    "run_b.txt": "item_knn's lists as a TREC run",
}
"""The files of ``rankmetrics demo --write DIR``, with what each holds."""

TRIES = (
    "rankmetrics evaluate recs.parquet truth.parquet -m map@12 ndcg@10 --score score "
    "--relevance rel --by model",
    "rankmetrics compare recs.parquet truth.parquet -m ndcg@10 --score score --relevance rel "
    "--baseline popularity",
    "rankmetrics kaggle submission.csv solution.csv --preset hm",
    "rankmetrics trec qrels.txt run_a.txt -m map -m ndcg_cut.10",
)
"""Commands to try on the files written, printed after them."""


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
    command.add_argument(
        "--write",
        metavar="DIR",
        help="write the sample to DIR (made if missing) as the files the documentation's "
        f"examples read ({', '.join(FILES)}) instead of evaluating it",
    )
    command.add_argument(
        "--overwrite",
        action="store_true",
        help="with --write: replace those files where DIR already has them (refused otherwise)",
    )
    command.set_defaults(handler=run, command_parser=command)
    return command


def _folder(path: str, *, overwrite: bool) -> Path:
    """The folder of ``--write``: refused before any work if it would replace a file."""
    folder = Path(path)
    if folder.exists() and not folder.is_dir():
        raise CliError(f"--write {path}: is a file, not a folder")
    present = [name for name in FILES if (folder / name).exists()]
    if present and not overwrite:
        raise CliError(
            f"--write {path}: {', '.join(present)} already there; nothing was written "
            "(pass --overwrite to replace them, or name another folder)"
        )
    if not folder.exists() and not folder.parent.is_dir():
        raise CliError(f"--write {path}: folder {str(folder.parent)!r} does not exist")
    return folder


def _writers(sample: Sample) -> dict[str, Callable[[Path], None]]:
    """How each of :data:`FILES` is written from the sample."""
    from polars_rankmetrics.trec import write_trec_qrels, write_trec_run  # noqa: PLC0415

    def run_of(model: str) -> Callable[[Path], None]:
        lists = sample.recs.filter(pl.col("model") == model).drop("model")
        return lambda path: write_trec_run(lists, str(path), score="score", tag=model)

    # the lists are best first: a Kaggle submission is the first 12, space-separated
    submission = (
        sample.recs.filter(pl.col("model") == "two_tower")
        .group_by("user", maintain_order=True)
        .agg(pl.col("item").head(12).cast(pl.String).str.join(" ").alias("prediction"))
        .rename({"user": "customer_id"})
    )
    bought = sample.truth.filter(pl.col("rel") == 3).select(customer_id="user", article_id="item")
    # every customer, as H&M's solution: those who bought nothing have an empty list
    solution = submission.select("customer_id").join(
        bought.group_by("customer_id").agg(
            pl.col("article_id").sort().cast(pl.String).str.join(" ").alias("prediction")
        ),
        on="customer_id",
        how="left",
        maintain_order="left",
    )
    return {
        "recs.parquet": sample.recs.write_parquet,
        "truth.parquet": sample.truth.write_parquet,
        "interactions.parquet": sample.interactions.write_parquet,
        "items.parquet": sample.items.write_parquet,
        "users.parquet": sample.users.write_parquet,
        "submission.csv": submission.write_csv,
        "solution.csv": solution.write_csv,
        "transactions.csv": bought.write_csv,
        "qrels.txt": lambda path: write_trec_qrels(sample.truth, str(path), relevance="rel"),
        "run_a.txt": run_of("two_tower"),
        "run_b.txt": run_of("item_knn"),
    }


def _write(args: argparse.Namespace) -> int:
    """``--write DIR``: the sample as files, and the commands to try on them."""
    folder = _folder(args.write, overwrite=args.overwrite)
    progress(args, "demo", f"generating the sample for {args.users:,} users")
    sample = sample_data(n_users=args.users, seed=args.seed)
    folder.mkdir(exist_ok=True)
    width = max(map(len, FILES))
    print(f"Built-in sample ({args.users:,} users, seed {args.seed}) written to {folder}:")
    for name, write in _writers(sample).items():
        progress(args, "demo", f"writing {folder / name}")
        try:
            write(folder / name)
        except OSError as error:
            raise CliError(f"--write {folder / name}: cannot write: {error.strerror}") from None
        print(f"  {name:<{width}}  {FILES[name]}")
    print(f"\nTry, in {folder}:")
    for command in TRIES:
        print(f"  {command}")
    return 0


def run(args: argparse.Namespace) -> int:
    """Generate the sample, evaluate it and print the table (and, for people, a comparison)."""
    if args.write is not None:
        return _write(args)
    if args.overwrite:
        raise CliError("--overwrite goes with --write DIR")
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
