"""``rankmetrics trec``: a TREC run scored against qrels, printed as trec_eval prints."""

from __future__ import annotations

import argparse
import sys
from typing import Any

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
    parse_trec_measures,
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
        "(qid iter docno rel) and print measure, query and value as trec_eval does.",
    )
    command.add_argument("qrels", help="qrels file")
    command.add_argument("run", help="run file")
    command.add_argument(
        "-m",
        dest="measures",
        action="append",
        metavar="MEASURE",
        help="measure, repeatable: map, P.5,10, ndcg_cut.10, recip_rank, official, all_trec",
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
    command.add_argument("--output", metavar="PATH", help="also write the table to PATH")
    command.add_argument("--progress", action="store_true", help="report progress on stderr")
    command.set_defaults(handler=run, command_parser=command)
    return command


def run(args: argparse.Namespace) -> int:
    """Read both files, compute the measures, print trec_eval's layout."""
    inputs = [args.qrels, args.run]
    for path in inputs:
        check_input(path)
    output = check_output(args.output, inputs=inputs, option="--output") if args.output else None
    for measure in args.measures or []:
        try:
            parse_trec_measures([measure])
        except Exception as error:  # one line naming the option, whatever the parser raised
            raise CliError(f"-m {measure}: {one_line(error)}") from None
    measures = parse_trec_measures(args.measures)
    progress(args, "trec", f"reading {args.qrels}")
    qrels = read_trec_qrels(args.qrels, duplicates=args.duplicates)
    progress(args, "trec", f"reading {args.run}")
    run_frame = read_trec_run(args.run, duplicates=args.duplicates)
    warn_if_few_ids_match(
        "trec", run_frame, qrels, ["user"], left_name=args.run, right_name=args.qrels
    )
    table = trec_eval(
        qrels,
        run_frame,
        args.measures,
        per_query=args.per_query,
        complete=args.complete,
        relevance_level=args.relevance_level,
    )
    if output is not None:
        write_frame(table, output, option="--output")
    wants_runid = any(measure.family == "runid" for measure in measures)
    run_id = str(run_frame["tag"][0]) if wants_runid and run_frame.height else None
    sys.stdout.write(format_trec_eval(table, run_id=run_id))
    return 0
