"""``rankmetrics fuse``: several run files fused into one (:func:`polars_rankmetrics.fuse`).

* ``rankmetrics fuse RUN RUN [RUN ...] --method rrf -o fused.parquet``: each
  file one run (Parquet, CSV/TSV, JSON: user, item, score), named by its file
  name; ids by the rule ``evaluate`` reads files with (numbers where every file
  gives numbers, else text).
* ``--trec``: the files are TREC runs (``qid Q0 docno rank score tag``).
* ``--run COLUMN``: the files hold several runs each, named by that column.

The fused run is written to ``--output`` (never one of the inputs) or printed.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import polars as pl

from polars_rankmetrics.analysis.fusion import METHODS, NORMS, fuse
from polars_rankmetrics.cli._common import (
    DISPLAY_FORMATS,
    CliError,
    check_input,
    check_output,
    is_text_file,
    progress,
    read_frame,
    show,
    unify_ids,
    write_frame,
)

__all__ = ["add", "run"]


def add(subparsers: Any) -> argparse.ArgumentParser:
    """Declare ``rankmetrics fuse``."""
    command: argparse.ArgumentParser = subparsers.add_parser(
        "fuse",
        help="fuse several run files into one (RRF, CombSUM, CombMNZ, Borda, ...)",
        description="Fuse runs (user, item, score per row) into one ranked run, as "
        "polars_rankmetrics.fuse does: each run's scores normalised per user (--norm), "
        "combined per (user, item) (--method), ranked 1..n by the fused score (equal "
        "scores: item id descending). Each file is one run, named by its file name, unless "
        "--run names a column that tells the runs apart.",
    )
    command.add_argument("runs", nargs="+", metavar="RUN", help="run files")
    command.add_argument(
        "--method", default="rrf", choices=METHODS, help="fusion method (default: rrf)"
    )
    command.add_argument(
        "--norm",
        default="min-max",
        choices=[*NORMS, "none"],
        help="per-user normalisation before combining (default: min-max, as ranx)",
    )
    command.add_argument(
        "--weights", nargs="+", type=float, help="wsum: one weight per run, in the order given"
    )
    command.add_argument("--k", type=float, help="rrf: the k of 1 / (k + rank) (default: 60)")
    command.add_argument("--trec", action="store_true", help="the files are TREC runs")
    command.add_argument("--run", help="column naming the run of each row (files of several runs)")
    command.add_argument("--user", default="user", help="user column (default: user)")
    command.add_argument("--item", default="item", help="item column (default: item)")
    command.add_argument("--score", default="score", help="score column (default: score)")
    output = command.add_argument_group("output")
    output.add_argument(
        "--output", "-o", metavar="PATH", help="write the fused run to PATH (.parquet, .csv...)"
    )
    output.add_argument("--format", default="table", choices=DISPLAY_FORMATS)
    output.add_argument("--progress", action="store_true", help="report progress on stderr")
    command.set_defaults(handler=run, command_parser=command)
    return command


def _names(paths: list[str]) -> list[str]:
    """Each file's run name: its file name, or its path where two file names are equal."""
    names = [Path(path).name for path in paths]
    if len(set(names)) < len(names):
        names = [str(Path(path)) for path in paths]
    if len(set(names)) < len(names):
        raise CliError(f"a run file is given twice: {paths}")
    return names


def _read(args: argparse.Namespace) -> dict[str, pl.DataFrame] | pl.DataFrame:
    """The runs: a dict name -> frame, or (``--run``) one long frame."""
    keys = [args.user, args.item]
    if args.trec:
        from polars_rankmetrics.trec import read_trec_run  # noqa: PLC0415

        frames = {}
        for name, path in zip(_names(args.runs), args.runs, strict=True):
            check_input(path)
            progress(args, "fuse", f"reading {path}")
            frames[name] = read_trec_run(path).select(
                pl.col("user").alias(args.user),
                pl.col("item").alias(args.item),
                pl.col("score").alias(args.score),
            )
    else:
        files = {}
        for name, path in zip(_names(args.runs), args.runs, strict=True):
            progress(args, "fuse", f"reading {path}")
            files[name] = (path, read_frame(path, text_columns=keys))
        written = [name for name, (path, _) in files.items() if is_text_file(path)]
        frames = unify_ids(files, keys, written=written, ids=keys)
    if args.run is None:
        return frames
    for name, frame in frames.items():
        if args.run not in frame.columns:
            raise CliError(f"{name}: no run column {args.run!r} (--run); columns {frame.columns}")
    return pl.concat(list(frames.values()), how="diagonal_relaxed")


def run(args: argparse.Namespace) -> int:
    """Read the runs, fuse them, write or print the fused run."""
    output = None
    if args.output is not None:
        output = check_output(args.output, inputs=args.runs, option="--output")
    if args.weights is not None and args.method != "wsum":
        raise CliError(f"--weights is read by --method wsum only, not by --method {args.method}")
    if args.k is not None and args.method != "rrf":
        raise CliError(f"--k is read by --method rrf only, not by --method {args.method}")
    if args.method == "wsum" and args.weights is None:
        raise CliError("--method wsum needs --weights, one per run")
    runs = _read(args)
    options: dict[str, Any] = {
        "user": args.user,
        "item": args.item,
        "score": args.score,
        "method": args.method,
        "norm": None if args.norm == "none" else args.norm,
        "k": args.k,
    }
    if args.run is not None:
        options["run"] = args.run
    if args.weights is not None:
        if isinstance(runs, pl.DataFrame):
            raise CliError("--weights with --run: the runs of a column have no order to follow")
        if len(args.weights) != len(runs):
            raise CliError(f"--weights has {len(args.weights)} value(s) for {len(runs)} runs")
        options["weights"] = args.weights
    progress(args, "fuse", f"fusing with {args.method}")
    fused: pl.DataFrame = fuse(runs, **options)
    if output is not None:
        write_frame(fused, output, option="--output")
        progress(args, "fuse", f"wrote {fused.height:,} rows to {output}")
        return 0
    sys.stdout.write(show(fused, args.format) + "\n")
    return 0
