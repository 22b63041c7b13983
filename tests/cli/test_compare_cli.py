"""``rankmetrics compare`` through ``main``: files, TREC runs, formats, refusals."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from polars_rankmetrics import compare, evaluate
from polars_rankmetrics.cli import main
from polars_rankmetrics.sample import sample_data
from polars_rankmetrics.trec import read_trec_qrels, read_trec_run


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    sample = sample_data(n_users=80, seed=2)
    recs, truth = sample.recs, sample.truth
    recs_path, truth_path = tmp_path / "recs.parquet", tmp_path / "truth.csv"
    recs.write_parquet(recs_path)
    truth.write_csv(truth_path)
    return str(recs_path), str(truth_path)


def test_markdown_report_by_default(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    recs, truth = files
    status = main(
        ["compare", recs, truth, "-m", "map@10", "ndcg@10", "--score", "score",
         "--relevance", "rel", "--baseline", "popularity"]
    )  # fmt: skip
    out = capsys.readouterr().out
    assert status == 0
    lines = out.splitlines()
    assert lines[0] == "| system | map@10 | ndcg@10 |"
    assert any(line.startswith("| random |") and "‡" in line for line in lines)
    assert "significantly better than popularity" in out


def test_csv_and_json_print_the_comparison(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    recs, truth = files
    args = ["compare", recs, truth, "-m", "mrr@10", "--score", "score", "--baseline", "random"]
    assert main([*args, "--format", "csv", "--test", "wilcoxon"]) == 0
    frame = pl.read_csv(capsys.readouterr().out.encode())
    assert frame.columns[:4] == ["system", "metric", "direction", "n"]
    assert frame.height == 4
    assert main([*args, "--format", "json", "--correction", "bh"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["system"] == "random"
    assert main([*args, "--format", "latex"]) == 0
    assert r"\begin{tabular}" in capsys.readouterr().out


def test_trec_runs_named_by_file_when_tags_repeat(
    conformance_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qrels = conformance_dir / "qrels.test"
    runs = [conformance_dir / "results.test", conformance_dir / "results.trunc"]
    status = main(
        ["compare", "--trec", str(qrels), *map(str, runs), "-m", "map", "ndcg@10",
         "--format", "csv", "--baseline", "results.test"]
    )  # fmt: skip
    assert status == 0
    frame = pl.read_csv(capsys.readouterr().out.encode())
    assert frame.get_column("system").to_list() == ["results.test", "results.trunc"] * 2
    # the means are trec_eval's (conventions "trec"): compare with evaluate on the same files
    run = read_trec_run(runs[0])
    expected = evaluate(run, read_trec_qrels(qrels), "map", relevance="rel", conventions="trec")
    assert frame.item(0, "mean") == pytest.approx(expected.item(0, "map"), rel=1e-9)


def test_trec_runs_named_by_tag(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "qrels").write_text("q1 0 d1 1\nq1 0 d2 1\nq2 0 d3 1\nq3 0 d1 1\n")
    lines = {"bm25": ["d1", "d9", "d3"], "dense": ["d2", "d1", "d3"]}
    for tag, docs in lines.items():
        text = "".join(
            f"{q} Q0 {doc} {i + 1} {10 - i} {tag}\n"
            for q in ("q1", "q2", "q3")
            for i, doc in enumerate(docs)
        )
        (tmp_path / f"{tag}.run").write_text(text)
    status = main(
        ["compare", "--trec", str(tmp_path / "qrels"), str(tmp_path / "bm25.run"),
         str(tmp_path / "dense.run"), "-m", "mrr", "--format", "csv"]
    )  # fmt: skip
    assert status == 0
    frame = pl.read_csv(capsys.readouterr().out.encode())
    assert frame.get_column("system").to_list() == ["bm25", "dense", "bm25"]
    assert frame.get_column("baseline").to_list() == [None, None, "dense"]


def test_refusals_exit_2(files: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    recs, truth = files
    assert main(["compare", recs, "-m", "map@10"]) == 2
    assert "two files" in capsys.readouterr().err
    assert (
        main(["compare", recs, truth, "-m", "map@10", "--score", "score", "--baseline", "x"]) == 2
    )
    assert "baseline 'x' is not one of the systems" in capsys.readouterr().err
    assert main(["compare", recs, truth, "-m", "map@10", "--system", "run"]) == 2
    assert "no system column 'run'" in capsys.readouterr().err
    assert main(["compare", "--trec", truth, recs, "-m", "map"]) == 2
    assert "at least two runs" in capsys.readouterr().err


def test_list_measures_without_truth(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    sample = sample_data(n_users=60, seed=4)
    recs, train, items = (
        tmp_path / "recs.parquet",
        tmp_path / "train.csv",
        tmp_path / "items.parquet",
    )
    sample.recs.write_parquet(recs)
    sample.interactions.select("user", "item").write_csv(train)
    sample.items.select("item", "categories").write_parquet(items)
    status = main(
        ["compare", str(recs), "-m", "novelty@10", "calibration@10", "--score", "score",
         "--interactions", str(train), "--items", str(items), "--category", "categories",
         "--baseline", "popularity", "--format", "csv"]
    )  # fmt: skip
    assert status == 0
    got = pl.read_csv(capsys.readouterr().out.encode())
    # the CSV's ids are plain integers, numbers as the Parquet files' (the CLI's one id
    # rule): the numbers of compare on the frames
    expected = compare(
        sample.recs, None, ["novelty@10", "calibration@10"], score="score",
        baseline="popularity", interactions=sample.interactions, items=sample.items,
        category="categories",
    )  # fmt: skip
    assert got["system"].to_list() == expected["system"].to_list()
    for column in ("n", "mean", "diff", "p_value"):
        assert got[column].to_list() == pytest.approx(expected[column].to_list(), nan_ok=True)
    # a metric that needs the truth, with RECS alone; a group measure
    assert main(["compare", str(recs), "-m", "ndcg@10", "--score", "score"]) == 2
    assert "RECS TRUTH (two files): ['ndcg@10']" in capsys.readouterr().err
    assert (
        main(["compare", str(recs), "-m", "coverage@10", "--score", "score", "--items", str(items)])
        == 2
    )
    assert "one value per group" in capsys.readouterr().err
