"""trec_eval's own test suite: reproduce what trec_eval 10.0 printed, from the same files.

The inputs and expected outputs are in ``tests/data/trec_eval/`` (see its README).
Every measure there that the package supports is compared, per query and for
``all``, to the 4 printed decimals.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
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

DATA = Path(__file__).resolve().parent / "data" / "trec_eval"

# the measures of the expected files that the package computes
SUPPORTED = re.compile(
    r"(runid|num_q|num_ret|num_rel|num_rel_ret|map|map_cut_\d+|P_\d+|recall_\d+|recip_rank"
    r"|ndcg|ndcg_cut_\d+|Rprec|success_\d+)"
)
COUNTS = {"num_q", "num_ret", "num_rel", "num_rel_ret"}


@dataclass(frozen=True)
class Case:
    expected: str
    qrels: str
    run: str
    measures: list[str] | None = None
    per_query: bool = False
    complete: bool = False
    level: int = 1
    cli: list[str] = field(default_factory=list)


CASES = {
    # trec_eval qrels.test results.test (official measures)
    "official": Case("out.test", "qrels.test", "results.test"),
    # -m all_trec -q
    "all_trec": Case(
        "out.test.aq",
        "qrels.test",
        "results.test",
        ["all_trec"],
        per_query=True,
        cli=["-m", "all_trec", "-q"],
    ),
    # -m all_trec -q -c, topic 302 missing from the run
    "complete": Case(
        "out.test.aqc",
        "qrels.test",
        "results.trunc",
        ["all_trec"],
        per_query=True,
        complete=True,
        cli=["-m", "all_trec", "-q", "-c"],
    ),
    # -m all_trec -q -l2 on graded qrels (-1..4)
    "level2": Case(
        "out.test.aql",
        "qrels.rel_level",
        "results.test",
        ["all_trec"],
        per_query=True,
        level=2,
        cli=["-m", "all_trec", "-q", "-l", "2"],
    ),
    # custom cutoffs (the unsupported measures of that command are left out)
    "cutoffs": Case(
        "out.test.meas_params",
        "qrels.test",
        "results.test",
        ["P.5,7,3", "recall.20,2000", "ndcg_cut.10,20,23.4", "success.2,5,20"],
        per_query=True,
        cli=[
            "-q",
            "-mP.5,7,3",
            "-m",
            "recall.20,2000",
            "-mndcg_cut.10,20,23.4",
            "-m",
            "success.2,5,20",
        ],
    ),
    # doc ids containing '#', 301 run topics of which 31 judged, one without relevant docs
    "comment": Case("out.comment.test", "qrels.comment.test", "results.comment.test"),
}


def expected_lines(case: Case) -> list[str]:
    """The lines trec_eval printed for the measures the package supports."""
    text = (DATA / "expected" / case.expected).read_text()
    return [line for line in text.splitlines() if SUPPORTED.fullmatch(line.split("\t")[0].strip())]


def expected_table(case: Case) -> pl.DataFrame:
    rows = [line.split("\t") for line in expected_lines(case)]
    return pl.DataFrame(
        [(m.strip(), q, v) for m, q, v in rows if m.strip() != "runid"],
        schema=["measure", "query", "printed"],
        orient="row",
    )


def compute(case: Case) -> pl.DataFrame:
    return trec_eval(
        read_trec_qrels(DATA / case.qrels),
        read_trec_run(DATA / case.run),
        case.measures,
        per_query=case.per_query,
        complete=case.complete,
        relevance_level=case.level,
    )


@pytest.mark.parametrize("name", list(CASES))
def test_every_supported_measure_matches(name: str) -> None:
    case = CASES[name]
    expected = expected_table(case)
    got = compute(case)
    assert got.height == expected.height > 0
    joined = expected.join(got, on=["measure", "query"], how="left")
    assert joined["value"].null_count() == 0, joined.filter(pl.col("value").is_null())
    for measure, query, printed, value in joined.iter_rows():
        if measure in COUNTS:
            assert value == int(printed), (measure, query)
        else:
            assert value == pytest.approx(float(printed), abs=5e-5), (measure, query)


@pytest.mark.parametrize("name", list(CASES))
def test_printed_layout_is_trec_evals(name: str) -> None:
    case = CASES[name]
    run = read_trec_run(DATA / case.run)
    wants_runid = any(m.family == "runid" for m in parse_trec_measures(case.measures))
    text = format_trec_eval(compute(case), run_id=run["tag"][0] if wants_runid else None)
    assert text.splitlines() == expected_lines(case)


@pytest.mark.parametrize("name", list(CASES))
def test_cli_prints_what_trec_eval_printed(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    case = CASES[name]
    status = cli.main(["trec", *case.cli, str(DATA / case.qrels), str(DATA / case.run)])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert captured.out.splitlines() == expected_lines(case)


def test_per_query_cases_cover_every_query() -> None:
    # -q prints each judged topic with a run; -c adds the missing topic 302 with zeros
    table = expected_table(CASES["complete"])
    assert sorted(set(table["query"])) == ["301", "302", "303", "all"]
    assert table.filter((pl.col("query") == "302") & (pl.col("measure") == "num_ret"))[
        "printed"
    ].to_list() == ["0"]


# ------------------------------------------------ evaluate(conventions="trec") directly

RANKED = {
    "map": "map",
    "Rprec": "r_precision",
    "recip_rank": "mrr",
    "P_5": "precision@5",
    "P_100": "precision@100",
    "recall_1000": "recall@1000",
    "ndcg": "ndcg",
    "ndcg_cut_10": "ndcg@10",
    "map_cut_30": "map@30",
    "success_5": "hit_rate@5",
}

DIRECT = {
    "all_trec": {},
    "level2": {"relevance_level": 2},
    "complete": {"users_without_recs": "zero"},
    "comment": {},
}


@pytest.mark.parametrize("name", list(DIRECT))
def test_evaluate_trec_conventions_give_trec_evals_means(name: str) -> None:
    case = CASES[name]
    expected = {
        measure: float(printed)
        for measure, query, printed in expected_table(case).iter_rows()
        if query == "all" and measure in RANKED
    }
    assert expected
    got = prm.evaluate(
        read_trec_run(DATA / case.run),
        read_trec_qrels(DATA / case.qrels),
        [RANKED[measure] for measure in expected],
        score="score",
        relevance="rel",
        conventions="trec",
        **DIRECT[name],  # type: ignore[arg-type]
    )
    for measure, printed in expected.items():
        assert got[RANKED[measure]][0] == pytest.approx(printed, abs=5e-5), measure
