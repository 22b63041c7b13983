"""The command line's refusals speak its own words: options and file names, not Python.

The library's messages name frames (``recs``) and keywords (``score='score'``,
``by[0]='model'``, ``pass truth=``); on the command line each becomes the file
read and the option to give (``recs.parquet``, ``--score score``, ``--by model``,
``a truth file``).
"""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

from polars_rankmetrics.cli import main


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    recs = pl.DataFrame({"user": [1, 1, 2], "item": [1, 2, 1], "score": [0.3, 0.2, 0.9]})
    truth = pl.DataFrame({"user": [1, 2], "item": [2, 1]})
    recs_path, truth_path = tmp_path / "recs.parquet", tmp_path / "truth.parquet"
    recs.write_parquet(recs_path)
    truth.write_parquet(truth_path)
    return str(recs_path), str(truth_path)


def _error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


# Python's words that must not reach the command line
PYTHON = re.compile(r"\b\w+(?:\[\d+\])?=|\bkeyword\b|\bNone\b|^rankmetrics \w+: error: recs\b")


def test_a_score_column_without_score_is_told_to_pass_score(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    recs, truth = files
    err = _error(["evaluate", recs, truth, "-m", "mrr"], capsys)
    assert f"{recs} is missing column 'rank'" in err
    assert "pass --score score to rank each user's items by it" in err
    assert not PYTHON.search(err), err


def test_a_missing_by_column_is_named_as_its_option(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    recs, truth = files
    err = _error(
        ["evaluate", recs, truth, "-m", "mrr", "--score", "score", "--by", "model"], capsys
    )
    assert f"{recs} is missing column 'model' for --by model;" in err
    assert "with the option of that role, e.g. --by ..." in err
    assert not PYTHON.search(err), err


def test_a_missing_truth_file_is_asked_for_as_a_file(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    recs, _ = files
    err = _error(["evaluate", recs, "-m", "mrr", "--score", "score"], capsys)
    assert "pass a truth file (it may be left out only when every metric describes" in err
    assert not PYTHON.search(err), err


def test_compare_names_the_system_option_and_the_file(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    recs, truth = files
    err = _error(["compare", recs, truth, "-m", "mrr", "--score", "score"], capsys)
    assert f"{recs} has no system column 'model' (--system)" in err
    assert not PYTHON.search(err), err


def test_a_truth_column_is_named_by_its_file(
    files: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    recs, truth = files
    err = _error(["evaluate", recs, truth, "-m", "ndcg", "--score", "score", "--relevance", "rel"],
                 capsys)  # fmt: skip
    assert f"{truth} is missing column 'rel' for --relevance rel;" in err
    assert not PYTHON.search(err), err


def test_an_example_row_quotes_the_data_and_each_problem_names_its_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recs = pl.DataFrame({"user": [1, 1], "item": [5, 5], "rank": [1, 2]})
    truth = pl.DataFrame({"user": [1], "item": [5]})
    recs.write_parquet(tmp_path / "recs.parquet")
    truth.write_parquet(tmp_path / "truth.parquet")
    err = _error(["evaluate", str(tmp_path / "recs.parquet"), str(tmp_path / "truth.parquet"),
                  "-m", "mrr"], capsys)  # fmt: skip
    assert f"- {tmp_path / 'recs.parquet'} has 2 rows with a duplicated (user, item)" in err
    # the row as the data has it, not rewritten as options (was "--user 1, --item 5")
    assert err.rstrip("\n").endswith("example row: user=1, item=5, rank=1")
