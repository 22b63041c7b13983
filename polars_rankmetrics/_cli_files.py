"""The ``rankmetrics kaggle`` and ``rankmetrics trec`` commands: scoring files.

``register(subparsers)`` adds both commands to the ``rankmetrics`` parser; each
sets ``func`` to a handler taking the parsed arguments and returning the exit
status (0 on success, 2 when a file or an argument is refused, with the
message on stderr).
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable
from typing import Any

import polars as pl

from polars_rankmetrics.kaggle import PRESETS, score_submission
from polars_rankmetrics.trec import (
    format_trec_eval,
    parse_trec_measures,
    read_trec_qrels,
    read_trec_run,
    trec_eval,
)

__all__ = ["register"]

_LAYOUTS = ("auto", "wide", "long")


def _fail(command: str, error: Exception) -> int:
    print(f"rankmetrics {command}: error: {error}", file=sys.stderr)
    return 2


def _guarded(command: str, work: Callable[[], str]) -> int:
    """Run ``work``, print what it returns, report refusals and warnings on stderr."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            output = work()
        except (ValueError, TypeError, FileNotFoundError) as error:
            return _fail(command, error)
    for warning in caught:
        print(f"rankmetrics {command}: warning: {warning.message}", file=sys.stderr)
    sys.stdout.write(output)
    return 0


def _run_kaggle(args: argparse.Namespace) -> int:
    def work() -> str:
        score = score_submission(
            args.submission,
            args.solution,
            args.metric,
            preset=args.preset,
            layout=args.layout,
            solution_layout=args.solution_layout,
            relevance=args.relevance,
            users=args.users,
            duplicates=args.duplicates,
        )
        return f"{score:.6f}\n"

    return _guarded("kaggle", work)


def _run_trec(args: argparse.Namespace) -> int:
    def work() -> str:
        parse_trec_measures(args.measures)  # an unknown measure before reading the files
        qrels = read_trec_qrels(args.qrels)
        runs = [read_trec_run(path) for path in args.run]
        several = len(runs) > 1
        run = (
            pl.concat([frame.with_columns(_file=pl.lit(f"{i}")) for i, frame in enumerate(runs)])
            if several
            else runs[0]
        )
        table = trec_eval(
            qrels,
            run,
            args.measures,
            per_query=args.per_query,
            complete=args.complete,
            relevance_level=args.level,
            runs="_file" if several else None,
        )
        if args.no_summary:
            table = table.filter(pl.col("query") != "all")
        return format_trec_eval(table)

    return _guarded("trec", work)


def register(subparsers: Any) -> None:
    """Add the ``kaggle`` and ``trec`` commands to an argparse ``add_subparsers()`` object."""
    kaggle = subparsers.add_parser(
        "kaggle",
        help="score a Kaggle-style submission CSV against a solution CSV",
        description="Score a submission against a solution and print the score. "
        "Give a metric (with the files' first two columns as id and items) or a "
        f"competition preset: {', '.join(sorted(PRESETS))}.",
    )
    kaggle.add_argument("submission", help="submission CSV (wide: 'id,items'; long: one row each)")
    kaggle.add_argument("solution", help="solution CSV, wide like the submission or long")
    choice = kaggle.add_mutually_exclusive_group(required=True)
    choice.add_argument("--metric", help="metric string, e.g. map@12, ndcg@5, recall@20")
    choice.add_argument("--preset", choices=sorted(PRESETS), help="competition rules")
    kaggle.add_argument("--layout", choices=_LAYOUTS, default="auto", help="submission layout")
    kaggle.add_argument(
        "--solution-layout", choices=_LAYOUTS, default="auto", help="solution layout"
    )
    kaggle.add_argument("--relevance", help="graded relevance column of a long solution")
    kaggle.add_argument(
        "--users",
        choices=("with_truth", "solution"),
        help="ids averaged: with a relevant item or every solution id (default: the "
        "preset's rule, else with_truth)",
    )
    kaggle.add_argument(
        "--duplicates",
        choices=("first", "error"),
        default="first",
        help="an item predicted twice: keep the first (its repeat wastes a slot) or refuse",
    )
    kaggle.set_defaults(func=_run_kaggle)

    trec = subparsers.add_parser(
        "trec",
        help="evaluate a TREC run against qrels, printed like trec_eval",
        description="Evaluate a TREC run (qid Q0 docno rank score tag) against qrels "
        "(qid iter docno rel) and print measure, query and value as trec_eval does.",
    )
    trec.add_argument("qrels", help="qrels file")
    trec.add_argument(
        "run", nargs="+", help="run file; several run files print one block each, in order"
    )
    trec.add_argument(
        "-m",
        dest="measures",
        action="append",
        metavar="MEASURE",
        help="measure, repeatable, as trec_eval takes it: map, P.5,10, bpref, ndcg.1=3,2=9, "
        "iprec_at_recall..1,.5, official (default), all_trec, set",
    )
    trec.add_argument("-n", dest="no_summary", action="store_true", help="no summary (all) lines")
    trec.add_argument("-q", dest="per_query", action="store_true", help="also print per query")
    trec.add_argument(
        "-c", dest="complete", action="store_true", help="average over every qrels query"
    )
    trec.add_argument(
        "-l", dest="level", type=int, default=1, help="lowest grade counted relevant (default 1)"
    )
    trec.set_defaults(func=_run_trec)
