"""Every refusal of the command line is one line naming the file (or option), exit status 2.

One test per member of the class: each case builds its files, runs ``main([...])``
and checks the status, that stderr is exactly one line, that it names the
file, and that no traceback leaked.
"""

from __future__ import annotations

import gzip
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

from polars_rankmetrics.cli import main

RUN = b"q1 Q0 d1 1 0.9 r\nq1 Q0 d2 2 0.8 r\n"
QRELS = b"q1 0 d1 1\n"
SUB = b"customer_id,prediction\nc1,A B\n"
RECS = b"user,item,rank\n1,a,1\n"
TRUTH = b"user,item\n1,a\n"


def write(path: Path, data: bytes) -> str:
    path.write_bytes(data)
    return str(path)


def gz_truncated(data: bytes) -> bytes:
    packed = gzip.compress(data * 200)
    return packed[: len(packed) // 2]


# each case: (what it is, builds the argv from tmp_path and returns (argv, name expected in the line))
Case = Callable[[Path], tuple[list[str], str]]


def _dir_as(position: str) -> Case:
    def build(tmp: Path) -> tuple[list[str], str]:
        folder = tmp / "folder"
        folder.mkdir()
        recs, truth = write(tmp / "r.csv", RECS), write(tmp / "t.csv", TRUTH)
        qrels, run = write(tmp / "q.txt", QRELS), write(tmp / "run.txt", RUN)
        sub = write(tmp / "s.csv", SUB)
        argv = {
            "evaluate-recs": ["evaluate", str(folder), truth, "-m", "mrr"],
            "evaluate-truth": ["evaluate", recs, str(folder), "-m", "mrr"],
            "kaggle-submission": ["kaggle", str(folder), sub, "--metric", "map@12"],
            "kaggle-solution": ["kaggle", sub, str(folder), "--metric", "map@12"],
            "trec-qrels": ["trec", str(folder), run, "-m", "map"],
            "trec-run": ["trec", qrels, str(folder), "-m", "map"],
        }[position]
        return argv, str(folder)

    return build


def _file_case(command: str, suffix: str, data: bytes, *, role: str = "first") -> Case:
    """A bad file as the first (or second) input of ``command``; the other input is fine."""

    def build(tmp: Path) -> tuple[list[str], str]:
        bad = write(tmp / f"bad{suffix}", data)
        if command == "evaluate":
            good = write(tmp / "good.csv", TRUTH if role == "first" else RECS)
            pair = [bad, good] if role == "first" else [good, bad]
            return ["evaluate", *pair, "-m", "mrr"], bad
        if command == "kaggle":
            good = write(tmp / "good.csv", SUB)
            pair = [bad, good] if role == "first" else [good, bad]
            return ["kaggle", *pair, "--metric", "map@12"], bad
        if role == "first":  # trec: qrels first
            return ["trec", bad, write(tmp / "run.txt", RUN), "-m", "map"], bad
        return ["trec", write(tmp / "q.txt", QRELS), bad, "-m", "map"], bad

    return build


def _missing(command: str) -> Case:
    def build(tmp: Path) -> tuple[list[str], str]:
        nowhere = str(tmp / "nowhere.csv")
        argv = {
            "evaluate": ["evaluate", nowhere, write(tmp / "t.csv", TRUTH), "-m", "mrr"],
            "kaggle": ["kaggle", nowhere, write(tmp / "s.csv", SUB), "--preset", "hm"],
            "trec": ["trec", nowhere, write(tmp / "run.txt", RUN)],
        }[command]
        return argv, nowhere

    return build


def _not_parquet(tmp: Path) -> tuple[list[str], str]:
    bad = write(tmp / "recs.parquet", b"user,item\n1,a\n")
    return ["evaluate", bad, write(tmp / "t.csv", TRUTH), "-m", "mrr"], bad


def _truncated_parquet(tmp: Path) -> tuple[list[str], str]:
    path = tmp / "recs.parquet"
    pl.DataFrame({"user": range(1000), "item": range(1000), "rank": [1] * 1000}).write_parquet(path)
    path.write_bytes(path.read_bytes()[:300])
    return ["evaluate", str(path), write(tmp / "t.csv", TRUTH), "-m", "mrr"], str(path)


def _bad_output(command: str, option: str, target: str) -> Case:
    def build(tmp: Path) -> tuple[list[str], str]:
        folder = tmp / "out"
        folder.mkdir()
        path = {
            "directory": str(folder),
            "missing-dir": str(tmp / "no" / "x.csv"),
            "unknown-type": str(tmp / "x.xlsx"),
        }[target]
        inputs = {
            "evaluate": ["evaluate", write(tmp / "r.csv", RECS), write(tmp / "t.csv", TRUTH),
                         "-m", "mrr"],
            "kaggle": ["kaggle", write(tmp / "s.csv", SUB), write(tmp / "s2.csv", SUB),
                       "--metric", "map@12"],
            "trec": ["trec", write(tmp / "q.txt", QRELS), write(tmp / "run.txt", RUN)],
            "demo": ["demo", "--users", "20"],
        }[command]  # fmt: skip
        return [*inputs, option, path], path

    return build


def _option(argv: list[str], shown: str) -> Case:
    def build(tmp: Path) -> tuple[list[str], str]:
        files = (
            [write(tmp / "q.txt", QRELS), write(tmp / "run.txt", RUN)] if argv[0] == "trec" else []
        )
        return [argv[0], *files, *argv[1:]], shown

    return build


CASES: dict[str, Case] = {
    **{
        f"directory-{where}": _dir_as(where)
        for where in (
            "evaluate-recs",
            "evaluate-truth",
            "kaggle-submission",
            "kaggle-solution",
            "trec-qrels",
            "trec-run",
        )
    },
    **{f"missing-{command}": _missing(command) for command in ("evaluate", "kaggle", "trec")},
    "empty-csv-evaluate": _file_case("evaluate", ".csv", b""),
    "empty-parquet-evaluate": _file_case("evaluate", ".parquet", b""),
    "empty-kaggle": _file_case("kaggle", ".csv", b""),
    "empty-trec-run": _file_case("trec", ".txt", b"", role="second"),
    "truncated-gzip-evaluate": _file_case("evaluate", ".csv.gz", gz_truncated(RECS)),
    "truncated-gzip-trec-run": _file_case("trec", ".gz", gz_truncated(RUN), role="second"),
    "truncated-gzip-kaggle": _file_case("kaggle", ".csv", gz_truncated(SUB)),
    "not-parquet": _not_parquet,
    "truncated-parquet": _truncated_parquet,
    "bad-utf8-evaluate": _file_case("evaluate", ".csv", b"user,item,rank\n1,\xff\xfe,1\n"),
    "bad-utf8-kaggle": _file_case("kaggle", ".csv", b"customer_id,prediction\nc1,\xff A\n"),
    "bad-utf8-trec-run": _file_case("trec", ".txt", b"q1 Q0 d\xff 1 0.5 r\n", role="second"),
    "bad-utf8-trec-qrels": _file_case("trec", ".txt", b"q1 0 d\xff 1\n"),
    "ragged-csv-evaluate": _file_case("evaluate", ".csv", b"user,item,rank\n1,a,1\n2,b,1,9\n"),
    "ragged-csv-kaggle": _file_case("kaggle", ".csv", b"customer_id,prediction\nc1,A\nc2,A,B\n"),
    "unterminated-quote-kaggle": _file_case(
        "kaggle", ".csv", b'customer_id,prediction\n00123,"0002 0001\n'
    ),
    "ragged-trec-qrels": _file_case("trec", ".txt", b"q1 0 d1\n"),
    "unknown-input-type": _file_case("evaluate", ".xlsx", b"user,item\n"),
    "trec-P.inf": _option(["trec", "-m", "P.inf"], "P.inf"),
    "trec-unknown-measure": _option(["trec", "-m", "nonsense"], "nonsense"),
    "demo-users-negative": _option(["demo", "--users", "-5"], "--users"),
    "demo-users-zero": _option(["demo", "--users", "0"], "--users"),
    "demo-users-absurd": _option(["demo", "--users", "10000000000"], "--users"),
    "demo-users-not-a-number": _option(["demo", "--users", "many"], "--users"),
    **{
        f"{command}-{option}-{target}": _bad_output(command, option, target)
        for command, option in (
            ("evaluate", "--per-user"),
            ("evaluate", "--output"),
            ("kaggle", "--per-user"),
            ("trec", "--output"),
            ("demo", "--output"),
        )
        for target in ("directory", "missing-dir", "unknown-type")
    },
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_refusal_is_one_line_naming_the_file(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv, shown = CASES[case](tmp_path)
    status = main(argv)
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert status == 2, captured
    assert len(lines) == 1, lines
    assert "Traceback" not in captured.err
    assert lines[0].startswith(f"rankmetrics {argv[0]}: error: ")
    assert shown in lines[0]


@pytest.mark.parametrize(
    "where", ["kaggle-submission", "kaggle-solution", "trec-qrels", "trec-run"]
)
def test_kaggle_and_trec_call_a_directory_a_directory(
    where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv, _ = _dir_as(where)(tmp_path)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "is a directory" in err
    assert "no such file" not in err
