"""trec_eval's own test suite: print what trec_eval 10.0 printed, from the same files.

The inputs and expected outputs are in ``tests/data/trec_eval/`` (see its README,
which gives trec_eval's command line for each expected file). Every line of
every expected file is compared: same measures, queries and order, counts,
``runid`` and ``relstring`` exactly, numbers to trec_eval's 4 printed decimals.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pytest

import polars_rankmetrics as prm
from polars_rankmetrics import cli
from polars_rankmetrics.trec import (
    format_trec_eval,
    parse_trec_measures,
    read_trec_qrels,
    read_trec_run,
    trec_eval,
)
from tests import trec_textbook

DATA = Path(__file__).resolve().parents[1] / "data" / "trec_eval"


@dataclass(frozen=True)
class Case:
    expected: str
    qrels: str
    run: str
    args: tuple[str, ...] = ()  # trec_eval's options, as the README gives them


MEAS_PARAMS = (
    "-q",
    "-miprec_at_recall..10,.20,.25,.75,.50",
    "-m",
    "P.5,7,3",
    "-m",
    "recall.20,2000",
    "-m",
    "Rprec_mult.5.0,0.2,0.35",
    "-mutility.2,-1,0,0",
    "-m",
    "11pt_avg..25,.5,.75",
    "-mndcg.1=3,2=9,4=4.5",
    "-mndcg_cut.10,20,23.4",
    "-msuccess.2,5,20",
)
CASES = {
    "official": Case("out.test", "qrels.test", "results.test"),
    "all_trec": Case("out.test.aq", "qrels.test", "results.test", ("-m", "all_trec", "-q")),
    # topic 302 is missing from the run
    "complete": Case("out.test.aqc", "qrels.test", "results.trunc", ("-m", "all_trec", "-q", "-c")),
    # graded qrels (-1..4), relevance level 2
    "level2": Case(
        "out.test.aql",
        "qrels.rel_level",
        "results.test",
        ("-m", "all_trec", "-mrelstring.20", "-q", "-l2"),
    ),
    "params": Case("out.test.meas_params", "qrels.test", "results.test", MEAS_PARAMS),
    # doc ids containing '#', 301 run topics of which 31 judged
    "comment": Case("out.comment.test", "qrels.comment.test", "results.comment.test"),
}
COUNTS = {"num_q", "num_ret", "num_rel", "num_rel_ret", "num_nonrel_judged_ret"}


def expected_lines(case: Case) -> list[str]:
    return (DATA / "expected" / case.expected).read_text().splitlines()


def assert_same_lines(got: list[str], expected: list[str]) -> None:
    """Line for line: same names and queries; numbers to the printed 4 decimals."""
    assert len(got) == len(expected)
    for line, wanted in zip(got, expected, strict=True):
        name, query, value = line.split("\t")
        want_name, want_query, want_value = wanted.split("\t")
        assert (name, query) == (want_name, want_query), line
        measure = name.strip()
        if measure in COUNTS or measure == "runid" or measure.startswith("relstring"):
            assert value == want_value, line
        else:
            assert "." in value, line
            assert float(value) == pytest.approx(float(want_value), abs=5e-5), line


def test_expected_files_hold_1309_lines() -> None:
    assert sum(len(expected_lines(case)) for case in CASES.values()) == 1309


@pytest.mark.parametrize("name", list(CASES))
def test_cli_prints_every_line_trec_eval_printed(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    case = CASES[name]
    status = cli.main(["trec", *case.args, str(DATA / case.qrels), str(DATA / case.run)])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert_same_lines(captured.out.splitlines(), expected_lines(case))


def python_call(case: Case) -> pl.DataFrame:
    """The same evaluation through the Python function, options spelled out."""
    args = list(case.args)
    measures = [(arg[2:] or args[i + 1]) for i, arg in enumerate(args) if arg.startswith("-m")]
    level = next((int(arg[2:]) for arg in args if arg.startswith("-l")), 1)
    return trec_eval(
        read_trec_qrels(DATA / case.qrels),
        read_trec_run(DATA / case.run),
        measures or None,
        per_query="-q" in args,
        complete="-c" in args,
        relevance_level=level,
    )


@pytest.mark.parametrize("name", list(CASES))
def test_python_function_gives_every_value(name: str) -> None:
    case = CASES[name]
    table = python_call(case)
    assert_same_lines(format_trec_eval(table).splitlines(), expected_lines(case))


@pytest.mark.parametrize("name", list(CASES))
def test_textbook_prints_every_line_trec_eval_printed(name: str) -> None:
    # the oracle of the property tests is itself checked against trec_eval's output
    case = CASES[name]
    args = list(case.args)
    measures = [(arg[2:] or args[i + 1]) for i, arg in enumerate(args) if arg.startswith("-m")]
    run, run_id = trec_textbook.read_run((DATA / case.run).read_text())
    lines = trec_textbook.trec_eval_lines(
        trec_textbook.read_qrels((DATA / case.qrels).read_text()),
        run,
        run_id,
        measures or None,
        per_query="-q" in args,
        complete="-c" in args,
        level=next((int(arg[2:]) for arg in args if arg.startswith("-l")), 1),
    )
    assert_same_lines(lines, expected_lines(case))


def test_per_query_cases_cover_every_query() -> None:
    # -q prints each judged topic with a run; -c adds the missing topic 302
    table = python_call(CASES["complete"])
    assert sorted(set(table["query"])) == ["301", "302", "303", "all"]
    missing = table.filter(pl.col("query") == "302")
    assert missing.filter(pl.col("measure") == "num_ret")["value"].to_list() == [0.0]
    assert missing.filter(pl.col("measure") == "relstring")["text"].to_list() == [""]


def test_several_runs_print_one_block_each(capsys: pytest.CaptureFixture[str]) -> None:
    case = CASES["all_trec"]
    files = [str(DATA / case.qrels), str(DATA / "results.test"), str(DATA / "results.trunc")]
    assert cli.main(["trec", "-m", "all_trec", "-q", *files]) == 0
    out = capsys.readouterr().out.splitlines()
    first = expected_lines(case)
    assert_same_lines(out[: len(first)], first)
    second = out[len(first) :]
    # results.trunc lacks topic 302: its block has 301 and 303 only
    assert {line.split("\t")[1] for line in second} == {"301", "303", "all"}
    assert "num_q                 \tall\t2" in second


# ------------------------------------------------ evaluate(conventions="trec") directly

# the evaluate() options that give trec_eval's -c and -l
DIRECT = {
    "official": {},
    "all_trec": {},
    "level2": {"relevance_level": 2},
    "complete": {"users_without_recs": "zero"},
    "comment": {},
}


@pytest.mark.parametrize("name", list(DIRECT))
def test_metric_strings_of_trec_measures_give_trec_evals_means(name: str) -> None:
    # every printed measure with an evaluate() twin (TrecMeasure.metric) gives its mean
    case = CASES[name]
    args = list(case.args)
    given = [(arg[2:] or args[i + 1]) for i, arg in enumerate(args) if arg.startswith("-m")]
    twins = {m.name: m.metric for m in parse_trec_measures(given or None) if m.metric}
    expected = {
        line.split("\t")[0].strip(): float(line.split("\t")[2])
        for line in expected_lines(case)
        if line.split("\t")[1] == "all" and line.split("\t")[0].strip() in twins
    }
    assert len(expected) == len(twins) >= 25
    got = prm.evaluate(
        read_trec_run(DATA / case.run),
        read_trec_qrels(DATA / case.qrels),
        list(twins.values()),
        score="score",
        relevance="rel",
        conventions="trec",
        **DIRECT[name],  # type: ignore[arg-type]
    )
    for measure, printed in expected.items():
        assert got[twins[measure]][0] == pytest.approx(printed, abs=5e-5), measure
