"""The README's set-up commands stay true, and the command line behaves."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

import polars_rankmetrics as prm
from polars_rankmetrics.cli import main
from polars_rankmetrics.sample import sample_data

ROOT = Path(__file__).resolve().parents[2]


def readme_commands() -> list[str]:
    return re.findall(r"```bash\n(.+?)\n```", (ROOT / "README.md").read_text(), flags=re.S)


def test_readme_opens_with_the_demo_and_the_test_command() -> None:
    demo, tests = readme_commands()[:2]
    assert demo.endswith("pip install . && rankmetrics demo")
    assert "pytest" in tests


def test_ci_runs_exactly_the_readme_test_command() -> None:
    test_command = readme_commands()[1]
    ci_lines = (ROOT / ".ci" / "run").read_text().splitlines()
    assert test_command in ci_lines


def test_demo_prints_every_model(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--users", "300", "--format", "csv"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("model,map@10,ndcg@10")  # machine formats: no banner
    rows = [line.split(",") for line in lines[1:]]
    assert sorted(row[0] for row in rows) == [
        "item_knn",
        "popularity",
        "random",
        "two_tower",
    ]
    # sorted by MAP, and the random recommender is the worst
    maps = [float(row[1]) for row in rows]
    assert maps == sorted(maps, reverse=True)
    assert rows[-1][0] == "random"


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path, pl.DataFrame, pl.DataFrame]:
    sample = sample_data(n_users=150, n_items=100)
    # integer ids in Parquet and in CSV are the same numbers (the sample's scores tie, and
    # the tie rule would order text ids differently)
    recs, truth = sample.recs, sample.truth
    recs_path, truth_path = tmp_path / "recs.parquet", tmp_path / "truth.csv"
    recs.write_parquet(recs_path)
    truth.write_csv(truth_path)
    return recs_path, truth_path, recs, truth


def test_evaluate_files_matches_the_function(
    files, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:

    recs_path, truth_path, recs, truth = files
    per_user_path = tmp_path / "per_user.csv"
    status = main([
        "evaluate", str(recs_path), str(truth_path), "-m", "map@10", "ndcg@10", "--score", "score",
        "--relevance", "rel", "--by", "model", "--per-user", str(per_user_path), "--format", "csv",
    ])  # fmt: skip
    assert status == 0
    printed = pl.read_csv(capsys.readouterr().out.encode())
    expected = prm.evaluate(
        recs, truth, ["map@10", "ndcg@10"], score="score", relevance="rel", by="model"
    )
    assert printed["model"].to_list() == expected["model"].to_list()
    assert printed["map@10"].to_list() == pytest.approx(expected["map@10"].to_list())
    per_user = pl.read_csv(per_user_path)
    assert per_user.columns == ["model", "user", "map@10", "ndcg@10"]
    assert per_user.height == 4 * truth["user"].n_unique()


def test_bad_input_is_one_clear_line(files, capsys: pytest.CaptureFixture[str]) -> None:
    recs_path, truth_path, _, _ = files
    assert (
        main(["evaluate", str(recs_path), str(truth_path), "-m", "map@10", "--score", "scor"]) == 2
    )
    error = capsys.readouterr().err
    assert error.startswith(f"rankmetrics evaluate: error: {recs_path} is missing column 'scor'")
    assert "Traceback" not in error


def test_data_errors_from_the_plan_are_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recs = tmp_path / "recs.csv"
    recs.write_text("user,item,rank\n1,a,1\n1,a,2\n")
    truth = tmp_path / "truth.csv"
    truth.write_text("user,item\n1,a\n")
    assert main(["evaluate", str(recs), str(truth), "-m", "mrr"]) == 2
    assert "duplicated (user, item)" in capsys.readouterr().err


def test_missing_file(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", "nope.parquet", "nope.csv", "-m", "mrr"]) == 2
    assert "nope.parquet: no such file" in capsys.readouterr().err
