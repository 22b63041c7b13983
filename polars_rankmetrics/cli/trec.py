"""``rankmetrics trec``: a TREC run scored against qrels, printed as trec_eval prints."""

from __future__ import annotations

import argparse
import sys
from typing import Any

import polars as pl

from polars_rankmetrics.cli._common import (
    CliError,
    check_input,
    check_output,
    one_line,
    progress,
    warn_if_few_ids_match,
    write_frame,
)
from polars_rankmetrics.trec import (
    format_trec_eval,
    ndeval,
    ndeval_measures,
    parse_trec_measures,
    read_trec_diversity_qrels,
    read_trec_qrels,
    read_trec_run,
    trec_eval,
)

__all__ = ["add", "run"]


def add(subparsers: Any) -> argparse.ArgumentParser:
    """Declare ``rankmetrics trec``."""
    command: argparse.ArgumentParser = subparsers.add_parser(
        "trec",
        help="evaluate a TREC run against qrels, printed like trec_eval",
        description="Evaluate a TREC run (qid Q0 docno rank score tag) against qrels "
        "(qid iter docno rel) and print measure, query and value as trec_eval does. With "
        "--diversity, the qrels are TREC diversity qrels (topic subtopic docno judgment) and "
        "the measures ndeval's (ERR-IA@k, alpha-nDCG@k, NRBP, MAP-IA, P-IA@k, strec@k...).",
    )
    command.add_argument("qrels", help="qrels file")
    command.add_argument(
        "run", nargs="+", help="run file; several run files print one block each, in order"
    )
    command.add_argument(
        "-m",
        dest="measures",
        action="append",
        metavar="MEASURE",
        help="measure, repeatable, as trec_eval takes it: map, P.5,10, bpref, ndcg.1=3,2=9, "
        "iprec_at_recall..1,.5, official (default), all_trec, set",
    )
    command.add_argument(
        "-n", dest="no_summary", action="store_true", help="no summary (all) lines"
    )
    command.add_argument("-q", dest="per_query", action="store_true", help="also print per query")
    command.add_argument(
        "-c", dest="complete", action="store_true", help="average over every qrels query"
    )
    command.add_argument(
        "-l",
        "--relevance-level",
        dest="relevance_level",
        type=int,
        default=1,
        help="lowest grade counted relevant (default 1)",
    )
    command.add_argument(
        "--duplicates",
        choices=("error", "first"),
        default="error",
        help="a document listed twice for a query: refuse (as trec_eval) or keep the first",
    )
    command.add_argument(
        "--diversity",
        action="store_true",
        help="the qrels are diversity qrels (topic subtopic docno judgment): print ndeval's "
        "measures (-m: ndeval's names, e.g. alpha-nDCG@20, NRBP; default its 21); also implied "
        "when every -m is one of ndeval's names",
    )
    command.add_argument(
        "--alpha", type=float, default=0.5, help="with --diversity: ndeval's -alpha (0.5)"
    )
    command.add_argument(
        "--beta", type=float, default=0.5, help="with --diversity: ndeval's -beta (0.5)"
    )
    command.add_argument("--output", metavar="PATH", help="also write the table to PATH")
    command.add_argument("--progress", action="store_true", help="report progress on stderr")
    command.set_defaults(handler=run, command_parser=command)
    return command


def run(args: argparse.Namespace) -> int:
    """Read both files, compute the measures, print trec_eval's layout."""
    inputs = [args.qrels, *args.run]
    for path in inputs:
        check_input(path)
    output = check_output(args.output, inputs=inputs, option="--output") if args.output else None
    if _diversity(args):
        return _run_ndeval(args, output)
    for measure in args.measures or []:
        try:
            parse_trec_measures([measure])
        except Exception as error:  # one line naming the option, whatever the parser raised
            raise CliError(f"-m {measure}: {one_line(error)}") from None
    progress(args, "trec", f"reading {args.qrels}")
    qrels = read_trec_qrels(args.qrels, duplicates=args.duplicates)
    runs = []
    for path in args.run:
        progress(args, "trec", f"reading {path}")
        run_frame = read_trec_run(path, duplicates=args.duplicates)
        warn_if_few_ids_match(
            "trec", run_frame, qrels, ["user"], left_name=path, right_name=args.qrels
        )
        runs.append(run_frame)
    several = len(runs) > 1
    # several runs: one block each, in the order of the files (a file index keys them)
    stacked = (
        pl.concat(
            [frame.with_columns(pl.lit(f"{i}").alias("_file")) for i, frame in enumerate(runs)]
        )
        if several
        else runs[0]
    )
    table = trec_eval(
        qrels,
        stacked,
        args.measures,
        per_query=args.per_query,
        complete=args.complete,
        relevance_level=args.relevance_level,
        runs="_file" if several else None,
    )
    if args.no_summary:
        table = table.filter(pl.col("query") != "all")
    if output is not None:
        write_frame(table, output, option="--output")
    sys.stdout.write(format_trec_eval(table))
    return 0


def _diversity(args: argparse.Namespace) -> bool:
    """``--diversity``, or every ``-m`` one of ndeval's measure names."""
    if args.diversity:
        return True
    given = args.measures or []

    def known(name: str) -> bool:
        try:
            ndeval_measures([name])
        except ValueError:
            return False
        return True

    return bool(given) and all(known(name) for name in given)


def _run_ndeval(args: argparse.Namespace, output: Any) -> int:
    """Ndeval's measures of each run against diversity qrels, in trec_eval's layout."""
    try:
        ndeval_measures(args.measures, alpha=args.alpha, beta=args.beta)
    except ValueError as error:
        raise CliError(f"-m: {one_line(error)}") from None
    progress(args, "trec", f"reading {args.qrels} (diversity qrels)")
    qrels = read_trec_diversity_qrels(args.qrels, duplicates=args.duplicates)
    blocks = []
    for path in args.run:
        progress(args, "trec", f"reading {path}")
        run_frame = read_trec_run(path, duplicates=args.duplicates)
        warn_if_few_ids_match(
            "trec", run_frame, qrels, ["user"], left_name=path, right_name=args.qrels
        )
        table = ndeval(
            qrels, run_frame, args.measures, alpha=args.alpha, beta=args.beta,
            complete=args.complete, relevance_level=args.relevance_level,
        )  # fmt: skip
        if not args.per_query:
            table = table.filter(pl.col("query") == "all")
        if args.no_summary:
            table = table.filter(pl.col("query") != "all")
        blocks.append(table)
    table = pl.concat(blocks)
    if output is not None:
        write_frame(table, output, option="--output")
    sys.stdout.write(format_trec_eval(table))
    return 0
