"""What a newcomer types first: --version, -m on every command, option help that says something."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import polars as pl
import pytest

import polars_rankmetrics as prm
from polars_rankmetrics.cli import build_parser, main
from polars_rankmetrics.conventions import CONVENTION_KEYWORDS


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue(), err.getvalue()


def test_version() -> None:
    status, out, _ = _run(["--version"])
    assert status == 0
    assert out.startswith(f"rankmetrics {prm.__version__} (polars {pl.__version__}, Python 3.")


@pytest.fixture
def kaggle_files(tmp_path: Path) -> tuple[str, str]:
    submission, solution = tmp_path / "submission.csv", tmp_path / "solution.csv"
    submission.write_text("customer_id,prediction\nc1,A B C\nc2,B A\n")
    solution.write_text("customer_id,prediction\nc1,C\nc2,A\n")
    return str(submission), str(solution)


@pytest.mark.parametrize("flag", ["-m", "--metrics", "--metric"])
def test_kaggle_takes_the_metric_as_every_command_does(
    kaggle_files: tuple[str, str], flag: str
) -> None:
    status, out, err = _run(["kaggle", *kaggle_files, flag, "map@12"])
    assert status == 0, err
    assert out == "0.416667\n"  # (1/3 + 1/2) / 2


def test_kaggle_refuses_two_metrics_in_words(kaggle_files: tuple[str, str]) -> None:
    status, _, err = _run(["kaggle", *kaggle_files, "-m", "map@12", "ndcg@12"])
    assert status == 2
    assert "a submission gets one score, as on a leaderboard; got 2 metrics" in err


@pytest.mark.parametrize("command", ["evaluate", "compare", "gate"])
def test_every_convention_option_says_what_it_does(command: str) -> None:
    parser = build_parser()
    subparsers = next(a for a in parser._actions if a.dest == "command")
    sub = subparsers.choices[command]  # type: ignore[attr-defined]
    helps = {
        action.dest: action.help or ""
        for action in sub._actions
        if action.dest in (*CONVENTION_KEYWORDS, "conventions")
    }
    assert set(helps) == {*CONVENTION_KEYWORDS, "conventions"}
    for name, text in helps.items():
        assert "see evaluate()" not in text, name
        assert "``" not in text, (name, text)  # plain words, not reST
        assert "(default: " in text, name
    assert helps["denominator"].startswith("AP denominator: min_k (Kaggle min(m_u, k))")
    assert helps["denominator"].endswith("(default: min_k; trec: relevant; ndeval: relevant)")
    assert "None" not in helps["relevance_level"]
