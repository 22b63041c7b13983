"""The ``rankmetrics`` command line: ``demo``, ``evaluate``, ``kaggle`` and ``trec``.

``rankmetrics demo`` evaluates the built-in sample; ``rankmetrics evaluate RECS
TRUTH --metrics map@12 ndcg@10`` evaluates Parquet or CSV files. Errors in the
input are printed as one clear message (exit status 2), never as a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import polars as pl

from polars_rankmetrics import _cli_compare, _cli_files
from polars_rankmetrics.evaluate import aggregation_parts, evaluate
from polars_rankmetrics.sample import sample_data

__all__ = ["main"]

DEMO_METRICS = ["map@10", "ndcg@10", "mrr@10", "precision@10", "recall@20", "hit_rate@10"]


def _read(path: str, *, key_columns: Sequence[str]) -> pl.LazyFrame:
    """Scan a Parquet or CSV file lazily; CSV id columns are read as strings (leading zeros)."""
    file = Path(path)
    if not file.exists():
        raise FileNotFoundError(f"no such file: {path}")
    suffix = file.suffix.lower()
    if suffix in (".parquet", ".pq"):
        return pl.scan_parquet(file)
    if suffix in (".csv", ".tsv", ".txt"):
        separator = "\t" if suffix == ".tsv" else ","
        header = pl.scan_csv(file, separator=separator, n_rows=0).collect_schema()
        overrides = {name: pl.String for name in key_columns if name in header}
        return pl.scan_csv(file, separator=separator, schema_overrides=overrides)
    raise ValueError(f"cannot read {path}: use a .parquet or .csv file")


def _ids_as_text(frame: pl.LazyFrame, keys: Sequence[str]) -> pl.LazyFrame:
    present = [name for name in keys if name in frame.collect_schema()]
    return frame.with_columns(pl.col(present).cast(pl.String))


def _write(frame: pl.DataFrame, path: str) -> None:
    if Path(path).suffix.lower() in (".parquet", ".pq"):
        frame.write_parquet(path)
    else:
        frame.write_csv(path)


def _show(frame: pl.DataFrame, output_format: str) -> str:
    if output_format == "csv":
        return frame.write_csv().rstrip("\n")
    if output_format == "json":
        return frame.write_json()
    with pl.Config(tbl_rows=-1, tbl_cols=-1, tbl_width_chars=200, tbl_hide_dataframe_shape=True):
        return str(frame)


def _run_demo(args: argparse.Namespace) -> int:
    sample = sample_data(n_users=args.users, seed=args.seed)
    recs, truth = sample.recs, sample.truth
    scores = evaluate(recs, truth, DEMO_METRICS, score="score", relevance="rel", by="model").sort(
        DEMO_METRICS[0], descending=True
    )
    list_length = recs.group_by("model", "user").len().select(pl.col("len").max()).item()
    print(
        f"Built-in sample: {truth['user'].n_unique()} users, {recs['item'].n_unique()} items, "
        f"{recs['model'].n_unique()} recommenders x top {list_length} "
        f"({recs.height} recommendation rows, {truth.height} held-out truth rows, graded 1-3)."
    )
    print(_show(scores, args.format))
    return 0


def _run_evaluate(args: argparse.Namespace) -> int:
    keys = [args.user, args.item, *args.by]
    recs = _read(args.recs, key_columns=keys)
    truth = _read(args.truth, key_columns=keys)
    if any(Path(path).suffix.lower() != ".parquet" for path in (args.recs, args.truth)):
        # CSV ids are read as text (leading zeros matter), so compare every file's ids as text
        recs, truth = (_ids_as_text(frame, keys) for frame in (recs, truth))
    options = {
        "user": args.user,
        "item": args.item,
        "rank": args.rank,
        "score": args.score,
        "relevance": args.relevance,
        "by": args.by or None,
        "denominator": args.denominator,
        "gain": args.gain,
        "ties": args.ties,
        "relevance_level": args.relevance_level,
        "users_without_recs": args.users_without_recs,
        "users_without_truth": args.users_without_truth,
        "duplicates": args.duplicates,
        "conventions": args.conventions,
    }
    if args.per_user:
        per_user = evaluate(recs, truth, args.metrics, per_user=True, **options).collect()
        _write(per_user, args.per_user)
        parts = aggregation_parts(args.metrics)
        means = [pl.col(part.label).mean() for part in parts]
        if any(part.kind != "mean" for part in parts):
            # pooled recall is not a mean of per-user values: evaluate it again
            summary = evaluate(recs, truth, args.metrics, **options).collect()
        elif args.by:
            summary = per_user.group_by(args.by).agg(means).sort(args.by)
        else:
            summary = per_user.select(means)
    else:
        summary = evaluate(recs, truth, args.metrics, **options).collect()
    print(_show(summary, args.format))
    return 0


def _add_evaluate(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    command = subparsers.add_parser(
        "evaluate",
        help="evaluate a recommendations file against a truth file (Parquet or CSV)",
        description="Evaluate long-format recommendations (user, item, rank or score) against "
        "a truth file (user, item[, rel]) and print the mean of each metric.",
    )
    command.add_argument("recs", help="recommendations file (.parquet or .csv)")
    command.add_argument("truth", help="ground-truth file (.parquet or .csv)")
    command.add_argument(
        "--metrics", "-m", nargs="+", required=True, help="metric strings, e.g. map@12 ndcg@10 mrr"
    )
    command.add_argument("--by", nargs="+", default=[], help="columns evaluated side by side")
    command.add_argument("--per-user", metavar="OUT", help="also write per-user scores to OUT")
    command.add_argument("--user", default="user", help="user column (default: user)")
    command.add_argument("--item", default="item", help="item column (default: item)")
    command.add_argument("--rank", default="rank", help="rank column (default: rank)")
    command.add_argument("--score", help="derive ranks from this score column")
    command.add_argument("--relevance", help="graded relevance column of the truth")
    command.add_argument("--relevance-level", type=float, help="minimum grade counted relevant")
    command.add_argument(
        "--denominator",
        choices=["min_k", "relevant", "hits"],
        help="default: min_k (trec: relevant)",
    )
    command.add_argument("--gain", choices=["linear", "exponential"], help="default: linear")
    command.add_argument(
        "--ties", choices=["item_desc", "item_asc", "input"], help="default: item_desc"
    )
    command.add_argument(
        "--users-without-recs", choices=["zero", "exclude"], help="default: zero (trec: exclude)"
    )
    command.add_argument(
        "--users-without-truth",
        choices=["exclude", "judged", "zero"],
        help="default: exclude (trec: judged)",
    )
    command.add_argument("--duplicates", choices=["error", "first"], help="default: error")
    command.add_argument("--conventions", default="default", choices=["default", "trec"])
    command.add_argument("--format", default="table", choices=["table", "csv", "json"])
    command.set_defaults(func=_run_evaluate)


def _add_demo(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    command = subparsers.add_parser(
        "demo",
        help="evaluate four recommenders on the built-in synthetic sample",
        description="Generate the built-in sample (one synthetic interaction log, four "
        "recommenders of different quality) and print their metrics side by side.",
    )
    command.add_argument("--users", type=int, default=2_000, help="number of users (default 2000)")
    command.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    command.add_argument("--format", default="table", choices=["table", "csv", "json"])
    command.set_defaults(func=_run_demo)


def build_parser() -> argparse.ArgumentParser:
    """The ``rankmetrics`` argument parser with all its commands."""
    parser = argparse.ArgumentParser(
        prog="rankmetrics", description="Ranking metrics for recommendation and search results."
    )
    subparsers = parser.add_subparsers(dest="command", required=True)
    _add_demo(subparsers)
    _add_evaluate(subparsers)
    _cli_files.register(subparsers)
    _cli_compare.add_parser(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``rankmetrics``; returns the exit status (2 for bad input)."""
    args = build_parser().parse_args(argv)
    try:
        status: int = args.func(args)
    except (ValueError, TypeError, FileNotFoundError, pl.exceptions.PolarsError) as error:
        print(f"rankmetrics {args.command}: error: {error}", file=sys.stderr)
        return 2
    return status


if __name__ == "__main__":
    sys.exit(main())
