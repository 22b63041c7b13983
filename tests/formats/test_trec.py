"""TREC run/qrels readers and writers, trec_eval measures, and the ``trec`` command."""

from __future__ import annotations

import io
import random
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankmetrics as prm
from polars_rankmetrics import cli
from polars_rankmetrics.trec import (
    TrecMeasure,
    format_trec_eval,
    parse_trec_measures,
    read_trec_qrels,
    read_trec_run,
    trec_eval,
    trec_eval_files,
    write_trec_qrels,
    write_trec_run,
)

RUN = b"""\
q1 Q0 d1 1 0.5 tag
q1\tQ0\td3   2\t  0.5 tag
q1 Q0 d2 3 0.9 tag
q2 Q0 x#1 1 -1.5 tag extra words are ignored
"""

QRELS = b"""\
q1 0 d1 2
q1 0 d2 0
q1 0 d4 1
q2 0 x#1 -1
q3 0 z 1
"""


def write(tmp_path: Path, text: str, name: str = "file.txt") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


# ---------------------------------------------------------------- reading runs


def test_run_ranks_come_from_the_score_with_trec_evals_tie_rule() -> None:
    run = read_trec_run(RUN)
    expected = pl.DataFrame(
        {
            "user": ["q1", "q1", "q1", "q2"],
            # 0.9 first; the 0.5 tie goes to the larger docno first (d3 > d1)
            "item": ["d2", "d3", "d1", "x#1"],
            "rank": pl.Series([1, 2, 3, 1], dtype=pl.UInt32),
            "score": [0.9, 0.5, 0.5, -1.5],
            "tag": ["tag"] * 4,
        }
    )
    assert_frame_equal(run, expected)


def test_run_ranks_as_written_on_request() -> None:
    run = read_trec_run(RUN, ranks="file")
    assert run.filter(pl.col("user") == "q1")["item"].to_list() == ["d1", "d3", "d2"]


@pytest.mark.parametrize("given_as", ["path", "bytes"])
def test_run_ranks_beyond_uint32_are_read(tmp_path: Path, given_as: str) -> None:
    # trec_eval reads the rank field and ignores it (the score decides); kept as
    # written on request, exactly, as the measures read given ranks of any width
    text = b"q1 Q0 d1 1 2.0 r\nq1 Q0 d2 4294967297 1.0 r\nq2 Q0 d1 7 0.5 r\n"
    source = write(tmp_path, text.decode()) if given_as == "path" else text
    by_score = read_trec_run(source)
    assert by_score.schema["rank"] == pl.UInt32
    assert by_score.select("user", "item", "rank").rows() == [
        ("q1", "d1", 1), ("q1", "d2", 2), ("q2", "d1", 1),
    ]  # fmt: skip
    as_written = read_trec_run(source, ranks="file")
    assert as_written.schema["rank"] == pl.UInt64
    assert as_written.select("user", "item", "rank").rows() == [
        ("q1", "d1", 1), ("q1", "d2", 4294967297), ("q2", "d1", 7),
    ]  # fmt: skip
    scores = prm.evaluate(as_written, pl.DataFrame({"user": ["q1"], "item": ["d2"]}), ["map"])
    assert scores["map"].to_list() == [1 / 4294967297]
    # the last rank that fits a UInt32 keeps the UInt32; past 64 bits it is refused
    assert read_trec_run(b"q Q0 d 4294967295 1 r\n", ranks="file").schema["rank"] == pl.UInt32
    too_big = source_of(tmp_path, given_as, b"q Q0 d 1 1 r\nq Q0 e 18446744073709551616 0 r\n")
    with pytest.raises(
        ValueError,
        match=r"line 2: the rank \(field 4\) is not a positive integer of at most 64 bits: "
        r"'q Q0 e 18446744073709551616 0 r'",
    ):
        read_trec_run(too_big, ranks="file")


def source_of(tmp_path: Path, given_as: str, text: bytes) -> Path | bytes:
    return write(tmp_path, text.decode(), "other.txt") if given_as == "path" else text


def test_run_ids_stay_strings_with_leading_zeros(tmp_path: Path) -> None:
    path = write(tmp_path, "007 Q0 0012 1 1.0 r\n")
    run = read_trec_run(path)
    assert run.row(0)[:2] == ("007", "0012")


def test_run_line_numbers_count_blank_lines_crlf_and_bom(tmp_path: Path) -> None:
    path = tmp_path / "run.txt"
    path.write_bytes(b"\xef\xbb\xbfq1 Q0 d1 1 0.5 r\r\n\r\nq1 Q0 d2 2 oops r\r\n")
    with pytest.raises(ValueError, match=r"run\.txt, line 3: the score .* 'q1 Q0 d2 2 oops r'"):
        read_trec_run(path)


def test_run_reads_text_streams() -> None:
    assert read_trec_run(io.StringIO("q Q0 d 1 2 r\n")).height == 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b"q1 Q0 d1 1 0.5\n", r"<bytes>, line 1: expected at least 6 .* 'q1 Q0 d1 1 0.5'"),
        (b"q1 Q0 d1 1 0.5 r\nq1 Q0 d2 2 nan r\n", r"line 2: the score \(field 5\) is not a number"),
        (
            b"q1 Q0 d1 1 0.5 r\nq1 Q0 d2 2 0.4 r\nq1 Q0 d1 3 0.3 r\n",
            r"line 3: the same docno for this qid again \(first on line 1\)",
        ),
        (b"q Q0 d 1 1 r\nq Q0 e 1 2 r\n", None),
    ],
)
def test_run_refuses_bad_lines(text: bytes, message: str | None) -> None:
    if message is None:  # repeated file ranks only matter with ranks="file"
        read_trec_run(text)
        with pytest.raises(ValueError, match=r"line 2: the same rank again"):
            read_trec_run(text, ranks="file")
        return
    with pytest.raises(ValueError, match=message):
        read_trec_run(text)


def test_run_counts_the_other_bad_lines() -> None:
    with pytest.raises(ValueError, match=r"line 1: .* \(2 more line\(s\) with the same problem\)"):
        read_trec_run(b"a\nb\nc\n")


def test_run_duplicates_first_keeps_the_first_line() -> None:
    run = read_trec_run(b"q Q0 d 1 0.1 r\nq Q0 d 2 0.9 r\nq Q0 e 3 0.5 r\n", duplicates="first")
    assert run.select("item", "score").rows() == [("e", 0.5), ("d", 0.1)]


def test_missing_file_and_bad_encoding(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"nope\.txt"):
        read_trec_run(tmp_path / "nope.txt")
    with pytest.raises(ValueError, match="UTF-8"):
        read_trec_qrels(b"q 0 \xff 1\n")


def test_bad_choices_are_refused() -> None:
    with pytest.raises(ValueError, match="ranks must be one of"):
        read_trec_run(RUN, ranks="rank")  # type: ignore[arg-type]


# ---------------------------------------------------------------- reading qrels


def test_qrels_graded_and_negative() -> None:
    qrels = read_trec_qrels(QRELS)
    assert qrels.schema == pl.Schema({"user": pl.String, "item": pl.String, "rel": pl.Int64})
    assert qrels["rel"].to_list() == [2, 0, 1, -1, 1]
    assert qrels["item"][3] == "x#1"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b"q 0 d 1 extra\n", r"line 1: expected 4 whitespace-separated fields"),
        (b"q 0 d 1\nq 0 e 1.5\n", r"line 2: the relevance \(field 4\) is not an integer"),
        (b"q 0 d 1\nq 0 d 0\n", r"line 2: the same docno for this qid again \(first on line 1\)"),
    ],
)
def test_qrels_refuses_bad_lines(text: bytes, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        read_trec_qrels(text)


# ---------------------------------------------------------------- writing


def test_run_round_trip_from_ranks(tmp_path: Path) -> None:
    recs = pl.DataFrame({"user": [2, 1, 1], "item": ["b", "z", "a"], "rank": [1, 2, 1]})
    path = tmp_path / "run.txt"
    write_trec_run(recs, str(path), tag="mine")
    assert path.read_text() == "1 Q0 a 1 2 mine\n1 Q0 z 2 1 mine\n2 Q0 b 1 1 mine\n"
    back = read_trec_run(path)
    assert back.select("user", "item", "rank").rows() == [
        ("1", "a", 1),
        ("1", "z", 2),
        ("2", "b", 1),
    ]


def test_run_write_with_scores_derives_ranks() -> None:
    out = io.StringIO()
    recs = pl.LazyFrame({"user": ["q", "q", "q"], "item": ["a", "b", "c"], "s": [0.25, 0.5, 0.5]})
    write_trec_run(recs, out, score="s")
    assert out.getvalue().splitlines() == [
        "q Q0 c 1 0.5 polars_rankmetrics",
        "q Q0 b 2 0.5 polars_rankmetrics",
        "q Q0 a 3 0.25 polars_rankmetrics",
    ]
    assert_frame_equal(
        read_trec_run(out.getvalue().encode()).select("item", "rank"),
        read_trec_run(out.getvalue().encode(), ranks="file").select("item", "rank"),
    )


def test_qrels_round_trip() -> None:
    out = io.BytesIO()
    write_trec_qrels(read_trec_qrels(QRELS), out, relevance="rel")
    assert_frame_equal(read_trec_qrels(out.getvalue()), read_trec_qrels(QRELS))
    binary = io.StringIO()
    write_trec_qrels(pl.DataFrame({"user": ["q"], "item": ["d"]}), binary)
    assert binary.getvalue() == "q 0 d 1\n"


def test_writers_refuse_what_cannot_be_read_back() -> None:
    with pytest.raises(ValueError, match=r"column 'docno' has 1 value\(s\) containing whitespace"):
        write_trec_run(pl.DataFrame({"user": ["q"], "item": ["a b"], "rank": [1]}), io.StringIO())
    with pytest.raises(ValueError, match=r"no column for rank='rank'; it has columns"):
        write_trec_run(pl.DataFrame({"user": ["q"], "item": ["a"]}), io.StringIO())
    with pytest.raises(ValueError, match="tag must be"):
        write_trec_run(
            pl.DataFrame({"user": ["q"], "item": ["a"], "rank": [1]}), io.StringIO(), tag="a b"
        )
    with pytest.raises(TypeError, match="must hold integers"):
        write_trec_qrels(
            pl.DataFrame({"user": ["q"], "item": ["a"], "g": [0.5]}), io.StringIO(), relevance="g"
        )


# ---------------------------------------------------------------- measures


def test_measure_names_map_onto_package_metrics() -> None:
    names = [
        "P_5",
        "map_cut_10",
        "ndcg_cut_10",
        "recip_rank",
        "success_5",
        "Rprec",
        "recall_5",
        "map",
        "ndcg",
        "num_rel_ret",
    ]
    metrics = {m.name: m.metric for m in parse_trec_measures(names)}
    assert metrics == {
        "P_5": "precision@5",
        "map_cut_10": "map@10",
        "ndcg_cut_10": "ndcg@10",
        "recip_rank": "mrr",
        "success_5": "hit_rate@5",
        "Rprec": "r_precision",
        "recall_5": "recall@5",
        "map": "map",
        "ndcg": "ndcg",
        "num_rel_ret": None,
    }


def test_measures_print_in_trec_evals_order_with_sorted_cutoffs() -> None:
    measures = parse_trec_measures(["success.20,2", "P.5,7,3", "ndcg_cut.23.4", "map", "P.5"])
    assert [m.name for m in measures] == [
        "map",
        "P_3",
        "P_5",
        "P_7",
        "ndcg_cut_23",
        "success_2",
        "success_20",
    ]
    assert measures[4] == TrecMeasure("ndcg_cut_23", "ndcg_cut", 23, "ndcg@23")


def test_measure_sets() -> None:
    official = [m.name for m in parse_trec_measures(None)]
    assert official[:6] == ["runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map"]
    assert official[-9:] == [f"P_{k}" for k in (5, 10, 15, 20, 30, 100, 200, 500, 1000)]
    every = [m.name for m in parse_trec_measures("all_trec")]
    assert every[-3:] == ["unj_5", "unj_10", "unj_20"]
    # 28 single values, 5 families x 9 cutoffs, 11 + 10 recall levels and R multiples,
    # success and unj x 3
    assert len(every) == 28 + 5 * 9 + 11 + 10 + 3 + 3


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("foo", "unknown trec_eval measure 'foo'; known measures: runid, num_q, "),
        ("prefs_simp", "unknown trec_eval measure 'prefs_simp'"),
        ("P.x", "cannot read cutoff 'x'"),
        ("P.0", "cutoffs must be >= 1"),
        ("P.", "empty parameter list"),
        ("P.5,5", "duplicate cutoffs"),
        ("map.5", "'map' takes no parameters"),
        ("ndcg.1:3", "malformed name=value"),
    ],
)
def test_unsupported_measures_are_refused(spec: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_trec_measures(spec)


# ---------------------------------------------------------------- evaluation


def hand_case() -> tuple[pl.DataFrame, pl.DataFrame]:
    qrels = read_trec_qrels(QRELS)
    run = read_trec_run(RUN)
    return qrels, run


def test_trec_eval_by_hand() -> None:
    qrels, run = hand_case()
    table = trec_eval(
        qrels,
        run,
        ["num_q", "num_ret", "num_rel", "num_rel_ret", "map", "P.2", "recip_rank", "ndcg"],
        per_query=True,
    )
    values = {(m, q): v for m, q, v in table.select("measure", "query", "value").iter_rows()}
    # q1 ranked [d2 (rel 0), d3 (unjudged), d1 (rel 2)]; d4 (rel 1) not retrieved
    assert values["map", "q1"] == pytest.approx((1 / 3) / 2)
    assert values["P_2", "q1"] == 0.0
    assert values["recip_rank", "q1"] == pytest.approx(1 / 3)
    assert values["ndcg", "q1"] == pytest.approx((2 / 2) / (2 + 1 / 1.5849625007211563))
    # q2 is judged (rel -1 only) and retrieved: it counts, with zeros; q3 has no run
    assert values["map", "q2"] == 0.0
    assert ("map", "q3") not in values
    assert values["num_q", "all"] == 2
    assert values["num_rel", "all"] == 2  # d1, d4
    assert values["num_rel_ret", "all"] == 1
    assert values["num_ret", "all"] == 4
    assert values["map", "all"] == pytest.approx((1 / 6) / 2)


def test_trec_eval_complete_and_level() -> None:
    qrels, run = hand_case()
    complete = trec_eval(qrels, run, ["num_q", "map"], complete=True)
    assert complete["value"].to_list() == pytest.approx([3, (1 / 6) / 3])
    level2 = trec_eval(qrels, run, ["num_rel", "map", "ndcg"], relevance_level=2)
    # only d1 (rel 2) is relevant for map; ndcg keeps the grade-1 document d4 in its ideal
    assert level2["value"].to_list() == pytest.approx(
        [1, (1 / 3) / 2, (2 / 2) / (2 + 1 / 1.5849625007211563) / 2]
    )


def test_trec_eval_per_query_layout_and_format() -> None:
    qrels, run = hand_case()
    table = trec_eval(qrels, run, ["P.1", "num_q", "runid"], per_query=True)
    assert table.rows() == [
        ("P_1", "q1", 0.0, None),
        ("P_1", "q2", 0.0, None),
        ("runid", "all", None, "tag"),
        ("num_q", "all", 2.0, None),
        ("P_1", "all", 0.0, None),
    ]
    text = format_trec_eval(table)
    assert text.splitlines()[2:4] == [
        "runid                 \tall\ttag",
        "num_q                 \tall\t2",
    ]


def test_trec_eval_ranks_by_the_rank_column_without_scores() -> None:
    qrels, _ = hand_case()
    by_file = read_trec_run(RUN, ranks="file").drop("score")
    table = trec_eval(qrels, by_file, "recip_rank", per_query=True, score=None)
    assert table.filter(pl.col("query") == "q1")["value"].to_list() == [1.0]


def test_readers_plug_into_evaluate() -> None:
    qrels, run = hand_case()
    result = prm.evaluate(
        run, qrels, ["map", "mrr"], score="score", relevance="rel", conventions="trec"
    )
    # q2 is judged but has no relevant document: trec_eval, and so the preset, count it as 0
    assert result.row(0) == pytest.approx((1 / 12, 1 / 6))


@pytest.mark.parametrize("level", [1, 2])
def test_agrees_with_pytrec_eval_on_random_runs(level: int) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = random.Random(level)
    qrel_rows, run_rows = [], []
    for q in range(30):
        docs = [f"d{rng.randrange(60):02d}" for _ in range(40)]
        for doc in dict.fromkeys(docs[:25]):
            qrel_rows.append((f"q{q}", doc, rng.choice([-1, 0, 0, 1, 1, 2, 3])))
        for doc in dict.fromkeys(docs[10:]):
            # small integer scores: many ties, all exact in pytrec_eval's float32
            run_rows.append((f"q{q}", doc, float(rng.randrange(8))))
    qrels = pl.DataFrame(qrel_rows, schema=["user", "item", "rel"], orient="row")
    run = pl.DataFrame(run_rows, schema=["user", "item", "score"], orient="row")
    measures = [
        "map",
        "map_cut.5,10",
        "P.3,10,30",
        "recall.5,20",
        "ndcg",
        "ndcg_cut.5,10",
        "recip_rank",
        "Rprec",
        "success.1,5",
        "num_ret",
        "num_rel",
        "num_rel_ret",
    ]
    ours = trec_eval(qrels, run, measures, per_query=True, relevance_level=level)
    evaluator = pytrec_eval.RelevanceEvaluator(
        {q: {} for q in qrels["user"].unique()}
        | {
            q: dict(zip(group["item"], group["rel"], strict=True))
            for (q,), group in qrels.group_by("user")
        },
        set(measures),
        relevance_level=level,
    )
    theirs = evaluator.evaluate(
        {q: dict(zip(g["item"], g["score"], strict=True)) for (q,), g in run.group_by("user")}
    )
    per_query = ours.filter(pl.col("query") != "all")
    assert per_query["query"].n_unique() == len(theirs) > 20
    for measure, query, value in per_query.select("measure", "query", "value").iter_rows():
        assert value == pytest.approx(theirs[query][measure], abs=1e-9), (measure, query)


# ---------------------------------------------------------------- command line


def test_cli_trec_prints_trec_eval_layout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qrels = tmp_path / "qrels"
    qrels.write_bytes(QRELS)
    run = tmp_path / "run"
    run.write_bytes(RUN)
    assert cli.main(["trec", "-q", "-c", "-m", "map", "-mnum_q", str(qrels), str(run)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "map                   \tq1\t0.1667",
        "map                   \tq2\t0.0000",
        "map                   \tq3\t0.0000",
        "num_q                 \tall\t3",
        "map                   \tall\t0.0556",
    ]


def test_cli_trec_default_measures_and_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qrels = tmp_path / "qrels"
    qrels.write_bytes(QRELS)
    run = tmp_path / "run"
    run.write_bytes(RUN)
    assert cli.main(["trec", str(qrels), str(run)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "runid                 \tall\ttag"
    assert out[5] == "map                   \tall\t0.0833"
    run.write_text("q1 Q0 d1\n")
    assert cli.main(["trec", str(qrels), str(run)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rankmetrics trec: error: ")
    assert "line 1" in err
    # an unknown measure is refused before the files are read
    assert cli.main(["trec", "-m", "bpref", "-m", "foo", str(qrels), str(run)]) == 2
    assert "unknown trec_eval measure 'foo'; known measures: " in capsys.readouterr().err


def test_rankmetrics_script_runs_trec(tmp_path: Path) -> None:
    qrels = tmp_path / "qrels"
    qrels.write_bytes(QRELS)
    run = tmp_path / "run"
    run.write_bytes(RUN)
    done = subprocess.run(
        [sys.executable, "-m", "polars_rankmetrics.cli", "trec", "-m", "map", str(qrels), str(run)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout == "map                   \tall\t0.0833\n"


def test_the_shipped_trec_eval_files_are_the_test_suites_copies() -> None:
    # trec_eval_files() ships the files the TREC notebook reads; they must stay trec_eval's
    shipped = trec_eval_files()
    tests = Path(__file__).resolve().parents[1] / "data" / "trec_eval"
    files = [p for p in shipped.rglob("*") if p.is_file() and p.name != "README.md"]
    assert len(files) == 8
    for path in files:
        assert path.read_bytes() == (tests / path.relative_to(shipped)).read_bytes(), path.name
