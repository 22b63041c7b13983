"""``rankmetrics gate``: pass a release only when no system is worse than the baseline.

``rankmetrics gate RECS TRUTH --baseline prod -m ndcg@10 recall@20 --margin 0.005``
evaluates every system of RECS per user, and for each other system and
metric tests non-inferiority against the baseline (paired t on the
improvement g = s (system - baseline), s = +1 where higher is better and -1
where lower is, by the measure's declared direction or ``--direction``; H0
mean(g) <= -margin; :func:`polars_rankmetrics.compare` with
``hypothesis="noninferiority"``). A metric with no better side (``arp@10``)
is refused unless ``--direction`` gives one. It prints the decision rule in
words and one line per (system, metric), and exits 0 when every system is
shown non-inferior on every metric, 1 when one is not, 2 on bad input.

Every comparison must pass, so the gate is an intersection-union test
(Berger 1982): its level is alpha without any multiple-comparison correction.
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

import polars as pl

from polars_rankmetrics.analysis.comparison import compare
from polars_rankmetrics.cli._common import CliError, add_api_options, api_options, read_inputs
from polars_rankmetrics.cli._measures import (
    add_direction_option,
    add_measures_option,
    direction_option,
)
from polars_rankmetrics.cli.evaluate import CONVENTIONS

__all__ = ["FAILED", "add", "run"]

FAILED = 1
"""The exit status when a system is not shown non-inferior on a metric."""


def add(subparsers: Any) -> argparse.ArgumentParser:
    """Declare ``rankmetrics gate``."""
    command: argparse.ArgumentParser = subparsers.add_parser(
        "gate",
        help="release gate: exit 1 unless every system is non-inferior to the baseline",
        description="Test every system against the baseline for non-inferiority on every "
        "metric (one-sided paired t-test, H0: mean(system - baseline) <= -margin). Exit "
        "status 0 when every system is shown non-inferior on every metric, 1 when one is "
        "not, 2 on bad input. Ids are read as rankmetrics evaluate reads them.",
    )
    command.add_argument("recs", help="recommendations of every system (Parquet, CSV, ...)")
    command.add_argument("truth", help="ground-truth file")
    command.add_argument(
        "--metrics", "-m", nargs="+", action="extend", required=True,
        help="metric strings, e.g. -m ndcg@10 recall@20 (repeatable)",
    )  # fmt: skip
    add_measures_option(command)
    add_direction_option(command)
    command.add_argument("--baseline", required=True, help="the system in production")
    command.add_argument(
        "--margin", type=float, required=True,
        help="largest loss that still counts as no worse, in the metric's units (e.g. 0.005)",
    )  # fmt: skip
    command.add_argument("--alpha", type=float, default=0.05, help="level of each test (0.05)")
    command.add_argument("--system", default="model", help="system column (default: model)")
    command.add_argument("--user", default="user", help="user column (default: user)")
    command.add_argument("--item", default="item", help="item column (default: item)")
    command.add_argument("--rank", default="rank", help="rank column (default: rank)")
    command.add_argument("--score", help="derive ranks from this score column")
    command.add_argument("--relevance", help="graded relevance column of the truth")
    add_api_options(command, CONVENTIONS, title="conventions (as in evaluate())")
    command.add_argument("--progress", action="store_true", help="report progress on stderr")
    command.set_defaults(handler=run, command_parser=command, by=[])
    return command


def _rule(args: argparse.Namespace, result: pl.DataFrame) -> str:
    """The decision rule in words, with each metric's direction."""
    level = f"{100 * (1 - args.alpha):g}%"
    m = f"{args.margin:g}"
    ways = result.select("metric", "direction").unique(maintain_order=True)
    higher = [row[0] for row in ways.iter_rows() if row[1] == "higher"]
    lower = [row[0] for row in ways.iter_rows() if row[1] == "lower"]
    sides = "; ".join(
        part
        for part in (
            f"higher is better: {', '.join(higher)}" if higher else "",
            f"lower is better: {', '.join(lower)}" if lower else "",
        )
        if part
    )
    return (
        f"decision rule: a system passes a metric when it is shown non-inferior to "
        f"{args.baseline}, no worse by more than {m} in the metric's better direction ({sides}): "
        f"the one-sided paired t-test rejects H0 mean(system - {args.baseline}) <= -{m} where "
        f"higher is better, >= +{m} where lower is, at alpha = {args.alpha:g} (equivalently, "
        f"the {level} confidence bound of the mean difference on the worse side is within the "
        f"margin); the gate passes when every system passes every metric (no correction is "
        f"needed when all must pass)."
    )


def _number(value: float | None, digits: int = 6) -> str:
    return "n/a" if value is None or not math.isfinite(value) else f"{value:+.{digits}f}"


def run(args: argparse.Namespace) -> int:
    """Evaluate, test every (system, metric) and exit 0 (pass) or 1 (fail)."""
    if not math.isfinite(args.margin) or args.margin <= 0:
        raise CliError(f"--margin must be a number above 0, e.g. 0.005, got {args.margin}")
    if not 0 < args.alpha < 0.5:
        raise CliError(f"--alpha must be between 0 and 0.5, e.g. 0.05, got {args.alpha}")
    recs, truth, _ = read_inputs(args, "gate", args.recs, args.truth)
    if args.system not in recs.columns:
        raise CliError(
            f"{args.recs}: no system column {args.system!r} (--system); columns are {recs.columns}"
        )
    # baselines read from text files are text: match the command line's string to the column
    baseline: Any = args.baseline
    values = recs.get_column(args.system).unique().to_list()
    if baseline not in values:
        matches = [value for value in values if str(value) == args.baseline]
        if not matches:
            raise CliError(
                f"--baseline {args.baseline}: no such system in column {args.system!r} "
                f"(systems: {sorted(map(str, values))})"
            )
        baseline = matches[0]
    # the (1 - 2 alpha) two-sided interval's lower end is the one-sided (1 - alpha) bound
    result = compare(
        recs, truth, args.metrics, system=args.system, baseline=baseline,
        hypothesis="noninferiority", margin=args.margin, alpha=args.alpha,
        ci=1 - 2 * args.alpha, correction="none", user=args.user, item=args.item,
        rank=args.rank, score=args.score, relevance=args.relevance,
        direction=direction_option(args.direction), **api_options(args, CONVENTIONS),
    )  # fmt: skip
    tested = result.filter(pl.col("n_paired").is_not_null())
    sys.stdout.write(_rule(args, result) + "\n")
    failed = 0
    for row in tested.iter_rows(named=True):
        passed = bool(row["significant"])
        failed += not passed
        verdict = "PASS non-inferior" if passed else "FAIL not shown non-inferior"
        # the bound on the worse side: the lower end where higher is better, the upper end
        # where lower is
        lower = row["direction"] == "lower"
        bound = row["diff_ci_high"] if lower else row["diff_ci_low"]
        sys.stdout.write(
            f"{row['system']}\t{row['metric']}\t{row['direction']} is better\t"
            f"diff {_number(row['diff'])}\t{'upper' if lower else 'lower'} bound "
            f"{_number(bound)}\tp {_fmt_p(row['p_value'])}\tn {row['n_paired']}\t{verdict}\n"
        )
    total = tested.height
    overall = "PASS" if not failed else "FAIL"
    sys.stdout.write(f"gate: {overall} ({total - failed} of {total} comparisons pass)\n")
    return FAILED if failed else 0


def _fmt_p(p: float | None) -> str:
    return "n/a" if p is None else f"{p:.4g}"
