"""The ``rankmetrics compare`` command: several systems, one truth, tests and a report.

Two ways in:

* ``rankmetrics compare RECS TRUTH -m map@10 ndcg@10 --baseline bm25``: a
  Parquet or CSV file of every system's recommendations (``--system`` names
  the column, ``model`` by default) and a truth file;
* ``rankmetrics compare RECS -m novelty@10 ild@10 --interactions TRAIN --items
  ITEMS --category genre``: measures of the lists themselves need no truth
  file; ``--interactions``, ``--items`` and ``--category`` are those of
  ``rankmetrics evaluate`` (and may go with a truth file too);
* ``rankmetrics compare --trec QRELS RUN [RUN ...] -m map ndcg@10``: TREC run
  files against one qrels file; each run's tag is its system (its file name
  when the tags are not one per file and distinct), under trec_eval's
  conventions unless ``--conventions default``.

It prints :func:`polars_rankmetrics.report` of :func:`polars_rankmetrics.compare`
(Markdown by default; ``--format latex``, ``html``, or the comparison frame
itself as ``csv`` or ``json``). Files are read with the id rule of
``rankmetrics evaluate`` (:func:`polars_rankmetrics.cli._common.read_inputs`):
ids are numbers where every file gives numbers (a CSV's plainly written
integers included), else text in every file.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, cast

import polars as pl

from polars_rankmetrics._measures import all_measures, lookup
from polars_rankmetrics.analysis import _stats
from polars_rankmetrics.analysis.comparison import compare
from polars_rankmetrics.analysis.reporting import Format, report
from polars_rankmetrics.cli._common import (
    OUTPUT_FORMATS,
    CliError,
    add_api_options,
    add_list_inputs,
    api_options,
    check_input,
    check_output,
    input_files,
    is_text_file,
    list_inputs,
    read_frame,
    read_inputs,
    unify_ids,
    write_frame,
)
from polars_rankmetrics.cli._measures import (
    add_direction_option,
    add_measures_option,
    direction_option,
)
from polars_rankmetrics.cli.evaluate import CONVENTIONS
from polars_rankmetrics.conventions import Preset
from polars_rankmetrics.evaluation import parse_metric
from polars_rankmetrics.options import DEFAULTS, ListInputs, names

__all__ = ["REPORT_FORMATS", "add", "run"]

REPORT_FORMATS: dict[str, Format] = {".md": "markdown", ".tex": "latex", ".html": "html"}
"""The extensions of ``--output`` that write the report (``prm.report``'s formats)."""


def add(subparsers: Any) -> argparse.ArgumentParser:
    """Declare ``rankmetrics compare``."""
    command: argparse.ArgumentParser = subparsers.add_parser(
        "compare",
        help="compare systems: means with intervals, paired tests, a report",
        description="Compare several systems on the same truth: each system's mean with its "
        "interval, the paired difference from the baseline (or between every pair) with a "
        "paired test corrected for multiple comparisons, printed as a table. Ids are read "
        "as rankmetrics evaluate reads them: numbers where every file gives numbers, a "
        "CSV's plain integers included (ties then break by value), else text in every file "
        "(ties break by text).",
    )
    command.add_argument(
        "files",
        nargs="+",
        help="RECS TRUTH (Parquet or CSV; RECS alone when every metric describes the lists, "
        "e.g. novelty@10), or with --trec: QRELS RUN [RUN ...]",
    )
    command.add_argument(
        "--trec",
        action="store_true",
        help="read a qrels file and TREC runs, compared under trec_eval's conventions with "
        "-c: a query a run skipped scores 0 there (every run is paired on every judged "
        "query; --users-without-recs exclude pairs only the queries both runs answered)",
    )
    command.add_argument(
        "--metrics", "-m", nargs="+", required=True, help="metric strings, e.g. map@10 ndcg@10"
    )
    add_measures_option(command)
    add_direction_option(command)
    command.add_argument("--system", default="model", help="system column (default: model)")
    command.add_argument(
        "--baseline",
        help="the system others are compared with (default: every pair); read as a number "
        "when the system column holds numbers",
    )
    command.add_argument("--by", nargs="+", default=[], help="other grouping columns (folds)")
    command.add_argument("--test", default="t", choices=list(_stats.TESTS))
    command.add_argument("--correction", default="holm", choices=list(_stats.CORRECTIONS))
    command.add_argument("--ci", type=float, default=0.95, help="confidence level (0.95)")
    command.add_argument("--ci-method", default="t", choices=list(_stats.CI_METHODS))
    command.add_argument("--alpha", type=float, default=0.05, help="significance level (0.05)")
    command.add_argument("--n-resamples", type=int, default=10_000, help="resamples (10000)")
    command.add_argument("--seed", type=int, default=0, help="random seed (0)")
    command.add_argument(
        "--risk-alpha",
        type=float,
        metavar="ALPHA",
        help="risk-sensitive comparison, as ndeval's -riskAlpha: adds URisk (the mean "
        "improvement, each loss weighted by 1 + ALPHA), TRisk (its t statistic: < -2 a "
        "significant risk) and GeoRisk, printed after the report",
    )
    command.add_argument("--user", default="user", help="user column (default: user)")
    command.add_argument("--item", default="item", help="item column (default: item)")
    command.add_argument("--rank", default="rank", help="rank column (default: rank)")
    command.add_argument("--score", help="derive ranks from this score column")
    command.add_argument("--relevance", help="graded relevance column of the truth")
    add_list_inputs(command)
    add_api_options(command, CONVENTIONS, title="conventions (as in evaluate())")
    command.add_argument(
        "--format",
        default="markdown",
        choices=["markdown", "latex", "html", "csv", "json"],
        help="report format (markdown); csv and json print the comparison frame",
    )
    command.add_argument("--digits", type=int, default=3, help="decimals in the report (3)")
    command.add_argument(
        "--output",
        metavar="PATH",
        help="also write the comparison to PATH: the frame (.parquet, .csv, .tsv, .json, "
        ".ndjson) or the report (.md, .tex, .html, as --format markdown, latex, html); never "
        "over an input file",
    )
    command.add_argument("--progress", action="store_true", help="report progress on stderr")
    command.set_defaults(handler=run, command_parser=command)
    return command


def _trec_inputs(files: list[str]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The runs stacked with a ``model`` column, and the qrels."""
    from polars_rankmetrics.trec import read_trec_qrels, read_trec_run  # noqa: PLC0415

    if len(files) < 3:
        raise ValueError(
            f"--trec needs a qrels file and at least two runs, got {len(files)} file(s)"
        )
    for path in files:
        check_input(path)
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


def _with_side_files(
    args: argparse.Namespace, runs: pl.DataFrame, qrels: pl.DataFrame
) -> tuple[pl.DataFrame, dict[str, pl.DataFrame]]:
    """The runs and the side files, ids by the one rule (TREC ids are text: so are theirs)."""
    files = {"runs": (args.files[1], runs), "qrels": (args.files[0], qrels)}
    side = input_files(args)
    for role, path in side.items():
        files[role] = (path, read_frame(path, text_columns=["user", "item"]))
    # TREC ids are text (trec_eval compares docnos as strings): the side files' follow
    written = [role for role, (path, _) in list(files.items())[2:] if is_text_file(path)]
    frames = unify_ids(files, ["user", "item"], written=written, warn_text=False)
    return frames["runs"], {role: frames[role] for role in side}


def _check_truthless(metrics: list[str]) -> None:
    """RECS alone: every metric must describe the lists themselves (no truth to compare)."""
    wanting = [label for label in metrics if lookup(parse_metric(label).name).lists is None]
    if wanting:
        per_user = [m.name for m in all_measures() if m.lists and m.aggregation == "mean"]
        raise ValueError(
            f"compare takes RECS TRUTH (two files): {wanting} compare the lists with a truth "
            f"file; RECS alone works only when every metric describes the lists "
            f"({', '.join(per_user)})"
        )


def _check_pairable(args: argparse.Namespace) -> None:
    """Refuse a measure with no per-user values, advising the command that computes it."""
    for label in args.metrics:
        reason = lookup(parse_metric(label).name).unpaired_reason(label)
        if reason is None:
            continue
        if args.trec:
            instead = (
                "rankmetrics evaluate on the runs written as one Parquet or CSV file with a "
                f"model column: -m {label} --by model"
            )
        else:
            instead = " ".join(_evaluate_words(args, label))
        raise CliError(
            f"compare cannot test {label!r}: {reason}; compute it per system with: {instead}"
        )


def _evaluate_words(args: argparse.Namespace, label: str) -> list[str]:
    """``rankmetrics evaluate`` of one metric per system, with the options given here."""
    words = ["rankmetrics", "evaluate", *args.files[:2], "-m", label, "--by", args.system]
    words += args.by
    for option in ("user", "item", "rank", "score", "relevance", *names(ListInputs)):
        value = getattr(args, option, None)
        if value is not None and value != DEFAULTS.get(option):
            words += [f"--{option.replace('_', '-')}", str(value)]
    return words


def run(args: argparse.Namespace) -> int:
    """Compare the systems the arguments name and print the report."""
    _check_pairable(args)
    options: dict[str, Any] = {
        "baseline": args.baseline,
        "test": args.test,
        "ci": args.ci,
        "ci_method": args.ci_method,
        "correction": args.correction,
        "alpha": args.alpha,
        "n_resamples": args.n_resamples,
        "seed": args.seed,
        "direction": direction_option(args.direction),
        "risk_alpha": args.risk_alpha,
        **api_options(args, CONVENTIONS),
    }
    # TREC runs are compared under trec_eval's conventions unless told otherwise, with -c:
    # a paired test needs every run on every judged query (a skipped query scores 0)
    preset = cast(
        "Preset", options.pop("conventions", None) or ("trec" if args.trec else "default")
    )
    if args.trec:
        options.setdefault("users_without_recs", "zero")
    inputs = [*args.files, *input_files(args).values()]
    output = None
    if args.output is not None:
        formats = {**OUTPUT_FORMATS, **REPORT_FORMATS}
        output = check_output(args.output, inputs=inputs, option="--output", formats=formats)
    for path in input_files(args).values():
        check_input(path)
    result = _compared(args, options, preset)
    if output is not None:
        _write(result, output, digits=args.digits)
    print(str(report(result, format=args.format, digits=args.digits)).rstrip("\n"))
    if args.risk_alpha is not None and args.format not in ("csv", "json"):
        print(_risk_table(result, digits=args.digits))
    return 0


def _risk_table(result: pl.DataFrame, *, digits: int) -> str:
    """The risk of each comparison (URisk, TRisk) and each system's GeoRisk, as a table."""
    rows = result.filter(pl.col("urisk").is_not_null() | pl.col("georisk").is_not_null())
    pairs = "baseline" in result.columns
    header = ["system", *(["baseline"] if pairs else []), "metric", "URisk", "TRisk", "GeoRisk"]
    lines = ["", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows.iter_rows(named=True):
        numbers = (
            "-" if row[name] is None else f"{row[name]:.{digits}f}"
            for name in ("urisk", "trisk", "georisk")
        )
        keys = [row["system"], *([row["baseline"] or "-"] if pairs else []), row["metric"]]
        lines.append("| " + " | ".join([*map(str, keys), *numbers]) + " |")
    alpha = result.get_column("risk_alpha")[0] if result.height else None
    lines += [
        "",
        f"Risk against the baseline, losses weighted by 1 + alpha = {1 + (alpha or 0):g}: "
        "URisk the weighted mean improvement, TRisk its t statistic (< -2: a significant "
        "risk; > 2: a significant gain); GeoRisk each system's mean and risk among all.",
    ]
    return "\n".join(lines)


def _compared(args: argparse.Namespace, options: dict[str, Any], preset: Preset) -> pl.DataFrame:
    """The comparison of the files: TREC runs against qrels, or recommendations and truth."""
    if args.trec:
        runs, qrels = _trec_inputs(args.files)
        recs, side = _with_side_files(args, runs, qrels)
        return compare(
            recs, qrels, args.metrics, system="model", relevance="rel",
            conventions=preset, **options,
            **list_inputs(args, side),
        )  # fmt: skip
    if len(args.files) > 2:
        raise ValueError(
            f"compare takes RECS TRUTH (two files), got {len(args.files)}; "
            "for TREC runs add --trec: QRELS RUN [RUN ...]"
        )
    if len(args.files) == 1:
        _check_truthless(args.metrics)
    for path in args.files:
        check_input(path)
    truth_path = args.files[1] if len(args.files) == 2 else None
    recs, truth, side = read_inputs(args, "compare", args.files[0], truth_path)
    options["baseline"] = _baseline(args.baseline, recs, args.system)
    return compare(
        recs, truth, args.metrics, system=args.system, user=args.user, item=args.item,
        rank=args.rank, score=args.score, relevance=args.relevance, by=args.by or None,
        conventions=preset, **options,
        **list_inputs(args, side),
    )  # fmt: skip


def _write(result: pl.DataFrame, output: Path, *, digits: int) -> None:
    """``--output``: the report where the extension names one of its formats, else the frame."""
    kind = REPORT_FORMATS.get(output.suffix.lower())
    if kind is None:
        write_frame(result, output, option="--output")
        return
    text = str(report(result, format=kind, digits=digits)).rstrip("\n") + "\n"
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as error:
        raise CliError(f"--output {output}: cannot write: {error.strerror or error}") from None


def _baseline(given: str | None, recs: pl.DataFrame, system: str) -> Any:
    """``--baseline`` as a value of the system column: a number where it holds numbers."""
    if given is None or system not in recs.columns:
        return given
    dtype = recs.schema[system]
    if not dtype.is_numeric():
        return given
    try:
        value: float = float(given)
    except ValueError:
        raise ValueError(
            f"--baseline {given!r} is not a number, but system column {system!r} holds "
            f"numbers ({dtype}): name one of {sorted(recs.get_column(system).unique())[:10]}"
        ) from None
    return int(value) if dtype.is_integer() and value.is_integer() else value
