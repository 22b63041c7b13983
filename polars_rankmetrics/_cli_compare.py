"""The ``rankmetrics compare`` command: several systems, one truth, tests and a report.

Two ways in:

* ``rankmetrics compare RECS TRUTH -m map@10 ndcg@10 --baseline bm25``: a
  Parquet or CSV file of every system's recommendations (``--system`` names
  the column, ``model`` by default) and a truth file;
* ``rankmetrics compare --trec QRELS RUN [RUN ...] -m map ndcg@10``: TREC run
  files against one qrels file; each run's tag is its system (its file name
  when the tags are not one per file and distinct), under trec_eval's
  conventions unless ``--conventions default``.

It prints :func:`polars_rankmetrics.report` of :func:`polars_rankmetrics.compare`
(Markdown by default; ``--format latex``, ``html``, or the comparison frame
itself as ``csv`` or ``json``). ``add_parser`` registers it; ``run`` returns
the exit status (2 with one message on stderr for input it refuses).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, cast

import polars as pl

from polars_rankmetrics.analysis.compare import compare
from polars_rankmetrics.analysis.report import report
from polars_rankmetrics.conventions import Preset

__all__ = ["add_parser", "run"]


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``compare`` to the ``rankmetrics`` sub-commands."""
    command = subparsers.add_parser(
        "compare",
        help="compare systems: means with intervals, paired tests, a report",
        description="Compare several systems on the same truth: each system's mean with its "
        "interval, the paired difference from the baseline (or between every pair) with a "
        "paired test corrected for multiple comparisons, printed as a table.",
    )
    command.add_argument(
        "files",
        nargs="+",
        help="RECS TRUTH (Parquet or CSV), or with --trec: QRELS RUN [RUN ...]",
    )
    command.add_argument("--trec", action="store_true", help="read a qrels file and TREC runs")
    command.add_argument(
        "--metrics", "-m", nargs="+", required=True, help="metric strings, e.g. map@10 ndcg@10"
    )
    command.add_argument("--system", default="model", help="system column (default: model)")
    command.add_argument("--baseline", help="the system others are compared with (default: pairs)")
    command.add_argument("--by", nargs="+", default=[], help="other grouping columns (folds)")
    command.add_argument("--test", default="t", choices=["t", "randomization", "wilcoxon"])
    command.add_argument(
        "--correction", default="holm", choices=["holm", "bonferroni", "bh", "none"]
    )
    command.add_argument("--ci", type=float, default=0.95, help="confidence level (0.95)")
    command.add_argument("--ci-method", default="t", choices=["t", "bootstrap"])
    command.add_argument("--alpha", type=float, default=0.05, help="significance level (0.05)")
    command.add_argument("--n-resamples", type=int, default=10_000, help="resamples (10000)")
    command.add_argument("--seed", type=int, default=0, help="random seed (0)")
    command.add_argument("--user", default="user", help="user column (default: user)")
    command.add_argument("--item", default="item", help="item column (default: item)")
    command.add_argument("--rank", default="rank", help="rank column (default: rank)")
    command.add_argument("--score", help="derive ranks from this score column")
    command.add_argument("--relevance", help="graded relevance column of the truth")
    command.add_argument("--relevance-level", type=float, help="minimum grade counted relevant")
    command.add_argument("--denominator", choices=["min_k", "relevant", "hits"])
    command.add_argument("--gain", choices=["linear", "exponential"])
    command.add_argument("--users-without-recs", choices=["zero", "exclude"])
    command.add_argument("--users-without-truth", choices=["exclude", "judged", "zero"])
    command.add_argument(
        "--conventions", choices=["default", "trec"], help="default: trec with --trec"
    )
    command.add_argument(
        "--format",
        default="markdown",
        choices=["markdown", "latex", "html", "csv", "json"],
        help="report format (markdown); csv and json print the comparison frame",
    )
    command.add_argument("--digits", type=int, default=3, help="decimals in the report (3)")
    command.set_defaults(func=run)


def _scan(path: str, *, keys: list[str]) -> pl.LazyFrame:
    file = Path(path)
    if not file.exists():
        raise FileNotFoundError(f"no such file: {path}")
    suffix = file.suffix.lower()
    if suffix in (".parquet", ".pq"):
        return pl.scan_parquet(file)
    if suffix in (".csv", ".tsv", ".txt"):
        separator = "\t" if suffix == ".tsv" else ","
        header = pl.scan_csv(file, separator=separator, n_rows=0).collect_schema()
        # ids as text: leading zeros matter, and both files then compare as text
        overrides = {name: pl.String for name in keys if name in header}
        return pl.scan_csv(file, separator=separator, schema_overrides=overrides)
    raise ValueError(f"cannot read {path}: use a .parquet or .csv file (or --trec)")


def _trec_inputs(files: list[str]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The runs stacked with a ``model`` column, and the qrels."""
    from polars_rankmetrics.trec import read_trec_qrels, read_trec_run  # noqa: PLC0415

    if len(files) < 3:
        raise ValueError(
            f"--trec needs a qrels file and at least two runs, got {len(files)} file(s)"
        )
    for path in files:
        if not Path(path).exists():
            raise FileNotFoundError(f"no such file: {path}")
    qrels = read_trec_qrels(files[0])
    runs = [read_trec_run(path) for path in files[1:]]
    tags = [run.get_column("tag").unique().to_list() for run in runs]
    one_tag_each = all(len(tag) == 1 for tag in tags)
    names = [tag[0] for tag in tags] if one_tag_each else []
    if not one_tag_each or len(set(names)) < len(names):
        # tags shared between files (e.g. "STANDARD") or several per file: the file names
        names = [Path(path).name for path in files[1:]]
        if len(set(names)) < len(names):
            names = [str(Path(path)) for path in files[1:]]
    stacked = pl.concat(
        [
            run.select("user", "item", "rank").with_columns(pl.lit(name).alias("model"))
            for run, name in zip(runs, names, strict=True)
        ]
    )
    return stacked, qrels


def run(args: argparse.Namespace) -> int:
    """Compare the systems the arguments name and print the report."""
    options: dict[str, Any] = {
        "baseline": args.baseline,
        "test": args.test,
        "ci": args.ci,
        "ci_method": args.ci_method,
        "correction": args.correction,
        "alpha": args.alpha,
        "n_resamples": args.n_resamples,
        "seed": args.seed,
        "relevance_level": args.relevance_level,
        "denominator": args.denominator,
        "gain": args.gain,
        "users_without_recs": args.users_without_recs,
        "users_without_truth": args.users_without_truth,
    }
    recs: pl.DataFrame | pl.LazyFrame
    truth: pl.DataFrame | pl.LazyFrame
    if args.trec:
        recs, truth = _trec_inputs(args.files)
        result = compare(
            recs, truth, args.metrics, system="model", relevance="rel",
            conventions=cast("Preset", args.conventions or "trec"), **options,
        )  # fmt: skip
    else:
        if len(args.files) != 2:
            raise ValueError(
                f"compare takes RECS TRUTH (two files), got {len(args.files)}; "
                "for TREC runs add --trec: QRELS RUN [RUN ...]"
            )
        keys = [args.user, args.item, *args.by]
        recs = _scan(args.files[0], keys=keys)
        truth = _scan(args.files[1], keys=keys)
        if any(Path(path).suffix.lower() not in (".parquet", ".pq") for path in args.files):
            recs, truth = (_ids_as_text(frame, keys) for frame in (recs, truth))
        result = compare(
            recs, truth, args.metrics, system=args.system, user=args.user, item=args.item,
            rank=args.rank, score=args.score, relevance=args.relevance, by=args.by or None,
            conventions=cast("Preset", args.conventions or "default"), **options,
        ).collect()  # fmt: skip
    print(str(report(result, format=args.format, digits=args.digits)).rstrip("\n"))
    return 0


def _ids_as_text(frame: pl.LazyFrame, keys: list[str]) -> pl.LazyFrame:
    present = [name for name in keys if name in frame.collect_schema()]
    return frame.with_columns(pl.col(present).cast(pl.String))
