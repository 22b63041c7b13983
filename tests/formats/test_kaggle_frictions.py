"""What newcomers met scoring Kaggle files: long solutions, silent zeros, odd files, pipes.

Each test pins one report: a long H&M solution refused by ``--preset hm``;
submissions that score 0 without a word (item ids that lost their leading
zeros, comma-separated predictions) or with three warnings for one cause;
repeated predictions changing the score silently; a header-only submission
scored 0; a UTF-16 file read as ids full of NUL characters; ``| head``
printing "Broken pipe".
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import warnings
from pathlib import Path

import polars as pl
import pytest

from polars_rankmetrics import cli
from polars_rankmetrics.kaggle import (
    read_solution,
    read_submission,
    score_submission,
)
from tests._subprocess import ROOT


def csv(*lines: str) -> bytes:
    return ("\n".join(lines) + "\n").encode()


def apk(actual: list[str], predicted: list[str], k: int = 12) -> float:
    """Kaggle's ``apk`` (ml_metrics), as H&M's MAP@12 was scored."""
    predicted = predicted[:k]
    score, hits = 0.0, 0
    for i, p in enumerate(predicted):
        if p in actual and p not in predicted[:i]:
            hits += 1
            score += hits / (i + 1)
    return score / min(len(actual), k) if actual else 0.0


def scored_with_warnings(*args: object, **kwargs: object) -> tuple[float, list[str]]:
    """The score and every warning's text (of any category)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        score = score_submission(*args, **kwargs)  # type: ignore[call-overload]
    return float(score), [f"{w.category.__name__}: {w.message}" for w in caught]


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, list[str]]:
    """Exit status, stdout and the stderr lines of ``rankmetrics``."""
    status = cli.main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err.splitlines()


# ten customers, three purchases each: articles are 10-digit ids with a leading 0
CUSTOMERS = [f"c{n:02d}" for n in range(10)]
BOUGHT = {c: [f"0{700000000 + 10 * n + a}" for a in range(3)] for n, c in enumerate(CUSTOMERS)}
# each customer: one miss, then their first and third purchase
PREDICTED = {c: ["0111111111", items[0], items[2]] for c, items in BOUGHT.items()}
EXPECTED = sum(apk(BOUGHT[c], PREDICTED[c]) for c in CUSTOMERS) / len(CUSTOMERS)


def wide(rows: dict[str, list[str]], *, column: str = "prediction", sep: str = " ") -> bytes:
    quote = '"' if sep == "," else ""
    return csv(
        f"customer_id,{column}", *(f"{c},{quote}{sep.join(v)}{quote}" for c, v in rows.items())
    )


def long_solution(column: str = "article_id") -> bytes:
    """One row per purchase, as built from H&M's transactions (a purchase may repeat)."""
    rows = [f"{c},{item}" for c, items in BOUGHT.items() for item in items]
    rows.insert(1, rows[0])  # c00 bought its first article twice
    return csv(f"customer_id,{column}", *rows)


# ---------------------------------------------------------------- 1. long solutions, named columns


@pytest.mark.parametrize("layout", ["auto", "long"])
def test_hm_preset_reads_a_long_solution_as_the_wide_one(layout: str) -> None:
    from_wide = score_submission(wide(PREDICTED), wide(BOUGHT), preset="hm")
    from_long = score_submission(
        wide(PREDICTED),
        long_solution(),
        preset="hm",
        solution_layout=layout,  # type: ignore[arg-type]
    )
    assert from_long == from_wide == pytest.approx(EXPECTED)


def test_cli_hm_long_solution_and_item_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "submission.csv").write_bytes(wide(PREDICTED))
    (tmp_path / "transactions.csv").write_bytes(long_solution())
    (tmp_path / "bought.csv").write_bytes(long_solution("article"))
    sub = str(tmp_path / "submission.csv")
    argv = ["kaggle", sub, str(tmp_path / "transactions.csv"), "--preset", "hm"]
    assert run_cli([*argv, "--solution-layout", "long"], capsys) == (0, f"{EXPECTED:.6f}\n", [])
    # a column name no preset knows: named, for either file
    argv = ["kaggle", sub, str(tmp_path / "bought.csv"), "--preset", "hm"]
    assert run_cli([*argv, "--item-column", "article"], capsys) == (0, f"{EXPECTED:.6f}\n", [])
    # unnamed, the hint names the option and the column, not a missing header
    status, _, err = run_cli(argv, capsys)
    assert status == 2
    assert err == [
        f"rankmetrics kaggle: error: {tmp_path / 'bought.csv'}, line 1: the header has no "
        "solution item column 'prediction' or 'article_id' (name the column with "
        "--item-column article); header: 'customer_id,article'"
    ]


def test_a_named_column_neither_file_has_is_refused() -> None:
    with pytest.raises(ValueError, match=r"the header has no solution item column 'artcle'"):
        score_submission(wide(PREDICTED), long_solution("article"), preset="hm", item="artcle")
    # metric mode: a file without the named column keeps its second column
    score = score_submission(wide(PREDICTED), long_solution("article"), "map@12", item="article")
    assert score == pytest.approx(EXPECTED)
    with pytest.raises(
        ValueError,
        match=r"neither <submission bytes> .* nor <solution bytes> .* has a column 'artcle' \(item=",
    ):
        score_submission(wide(PREDICTED), long_solution("article"), "map@12", item="artcle")


# ---------------------------------------------------------------- 2. silent zeros, one warning


def test_items_without_their_leading_zeros_warn_once_on_a_small_file() -> None:
    # two customers, three distinct articles: below every size threshold
    bought = {"c1": ["0706016001", "0706016002"], "c2": ["0372860002"]}
    predicted = {"c1": ["706016001", "706016002"], "c2": ["372860002"]}
    score, said = scored_with_warnings(wide(predicted), wide(bought), preset="hm")
    assert score == 0.0
    assert len(said) == 1
    assert said[0].startswith(
        "SubmissionWarning: <submission bytes> and <solution bytes> share few ids: 0 of 3 "
    )
    assert "'prediction'" not in said[0]
    assert "prediction item(s)" in said[0]
    assert "3 would match without leading zeros" in said[0]


def test_items_without_their_leading_zeros_on_a_larger_file_speak_of_the_files(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "sub.csv").write_bytes(
        wide({c: [i.lstrip("0") for i in items] for c, items in PREDICTED.items()})
    )
    (tmp_path / "sol.csv").write_bytes(wide(BOUGHT))
    status, out, err = run_cli(
        ["kaggle", str(tmp_path / "sub.csv"), str(tmp_path / "sol.csv"), "--preset", "hm"], capsys
    )
    assert (status, out) == (0, "0.000000\n")
    assert len(err) == 1, err
    line = err[0]
    assert line.startswith(f"rankmetrics kaggle: warning: {tmp_path / 'sub.csv'} and ")
    assert "prediction item(s)" in line
    # 0111111111 is no purchase: the 20 others would match
    assert "20 would match without leading zeros" in line
    for python_words in ("recs", "truth", "check_overlap", "prm."):
        assert python_words not in line


def test_customers_without_their_leading_zeros_are_one_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = {c: f"{n:08d}" for n, c in enumerate(CUSTOMERS, start=1)}
    (tmp_path / "sub.csv").write_bytes(wide({ids[c].lstrip("0"): v for c, v in PREDICTED.items()}))
    (tmp_path / "sol.csv").write_bytes(wide({ids[c]: v for c, v in BOUGHT.items()}))
    status, out, err = run_cli(
        ["kaggle", str(tmp_path / "sub.csv"), str(tmp_path / "sol.csv"), "--preset", "hm"], capsys
    )
    assert (status, out) == (0, "0.000000\n")
    assert len(err) == 1, err
    assert "0 of 10 customer_id id(s)" in err[0]
    assert "10 would match without leading zeros" in err[0]
    assert f"the 10 only in {tmp_path / 'sub.csv'} are ignored" in err[0]
    assert f"the 10 scored of {tmp_path / 'sol.csv'} score 0" in err[0]


def test_comma_separated_predictions_are_one_warning() -> None:
    bought = {"c1": ["A", "B"], "c2": ["C"]}
    predicted = {"c1": ["A", "B"], "c2": ["C", "D"]}
    score, said = scored_with_warnings(wide(predicted, sep=","), wide(bought), preset="hm")
    assert score == 0.0
    assert said == [
        "SubmissionWarning: <submission bytes>: 2 customer_id value(s) have 'prediction' items separated "
        "by commas (e.g. line 2: 'A,B'); Kaggle separates them by spaces, so each such list "
        "is read as one item that matches nothing"
    ]


def test_repeated_predictions_are_scored_as_kaggles_apk_and_said_once() -> None:
    repeated = {c: [v[0], v[1], v[1], v[2]] for c, v in PREDICTED.items()}
    score, said = scored_with_warnings(wide(repeated), wide(BOUGHT), preset="hm")
    # the repeat uses up its slot: the third purchase is at 4, not 3
    assert score == pytest.approx(sum(apk(BOUGHT[c], repeated[c]) for c in CUSTOMERS) / 10)
    assert score < EXPECTED
    assert said == [
        "SubmissionWarning: <submission bytes>: 10 customer_id value(s) list an item more than once in "
        "'prediction' (e.g. line 2: '0700000000' again for 'c00'): the first copy counts at "
        "its position and each repeat scores nothing but uses up its slot, as Kaggle's apk "
        "scores MAP@K; duplicates='error' refuses them"
    ]
    with pytest.raises(ValueError, match=r"line 2: submission item '0700000000' listed twice"):
        score_submission(wide(repeated), wide(BOUGHT), preset="hm", duplicates="error")


# ---------------------------------------------------------------- 3. a header alone, per-user names


def test_a_header_only_submission_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "sub.csv").write_text("customer_id,prediction\n")
    (tmp_path / "sol.csv").write_bytes(wide(BOUGHT))
    message = "the file has a header but no rows (columns ['customer_id', 'prediction'])"
    refusal = f"{tmp_path / 'sub.csv'}: {message}"
    with pytest.raises(ValueError, match=f"^{re.escape(refusal)}$"):
        score_submission(tmp_path / "sub.csv", tmp_path / "sol.csv", preset="hm")
    with pytest.raises(ValueError, match=r"^<submission bytes>: the file has a header but no rows"):
        read_submission(b"customer_id,prediction\n\n")
    argv = ["kaggle", str(tmp_path / "sub.csv"), str(tmp_path / "sol.csv"), "--preset", "hm"]
    assert run_cli(argv, capsys) == (
        2, "", [f"rankmetrics kaggle: error: {refusal}"]
    )  # fmt: skip


def test_cli_per_user_keeps_the_files_id_column(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "sub.csv").write_bytes(wide(PREDICTED))
    (tmp_path / "sol.csv").write_bytes(wide(BOUGHT))
    out = tmp_path / "per_user.csv"
    argv = ["kaggle", str(tmp_path / "sub.csv"), str(tmp_path / "sol.csv"), "--preset", "hm",
            "--per-user", str(out)]  # fmt: skip
    assert run_cli(argv, capsys)[0] == 0
    table = pl.read_csv(out, infer_schema=False)
    assert table.columns == ["customer_id", "map@12"]
    assert table["customer_id"].to_list() == CUSTOMERS


# ---------------------------------------------------------------- 4. UTF-16 and UTF-32


@pytest.mark.parametrize(
    ("encoding", "named"),
    [("utf-16", "UTF-16"), ("utf-16-le", "UTF-16"), ("utf-16-be", "UTF-16"), ("utf-32", "UTF-32")],
)
def test_utf16_and_utf32_files_are_refused_clearly(
    encoding: str, named: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = wide(PREDICTED).decode().replace("\n", "\r\n")  # as Windows tools save it
    path = tmp_path / "sub.csv"
    path.write_bytes(text.encode(encoding))
    message = f"{path} is {named} encoded: save it as UTF-8"
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        read_submission(path)
    with pytest.raises(ValueError, match=rf"^<solution bytes> is {named} encoded"):
        read_solution(text.encode(encoding))
    (tmp_path / "sol.csv").write_bytes(wide(BOUGHT))
    argv = ["kaggle", str(path), str(tmp_path / "sol.csv"), "--preset", "hm"]
    assert run_cli(argv, capsys) == (2, "", [f"rankmetrics kaggle: error: {message}"])


def test_nul_bytes_are_refused_with_their_line() -> None:
    with pytest.raises(ValueError, match=r"<submission bytes>, line 2: holds NUL bytes"):
        read_submission(b"customer_id,prediction\nc1,A\x00B C D E F G H I J K L M N O P\n")


# ---------------------------------------------------------------- 5. a closed stdout


@pytest.mark.parametrize("command", ["kaggle", "demo"])
def test_a_closed_stdout_ends_quietly(command: str, tmp_path: Path) -> None:
    (tmp_path / "sub.csv").write_bytes(wide(PREDICTED))
    (tmp_path / "sol.csv").write_bytes(wide(BOUGHT))
    argv = {
        "kaggle": ["kaggle", str(tmp_path / "sub.csv"), str(tmp_path / "sol.csv"), "--preset",
                   "hm"],
        "demo": ["demo"],
    }[command]  # fmt: skip
    # the reader is gone before the command writes: `rankmetrics ... | head -0`
    reader, writer = os.pipe()
    os.close(reader)
    try:
        done = subprocess.run(
            [sys.executable, "-m", "polars_rankmetrics.cli", *argv],
            stdout=writer, stderr=subprocess.PIPE, text=True, cwd=ROOT, check=False, timeout=120,
            env={**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT),
                                                               os.environ.get("PYTHONPATH", "")])},
        )  # fmt: skip
    finally:
        os.close(writer)
    # 128 + SIGPIPE, what a shell shows for `cat | head`; nothing said about it
    assert (done.returncode, done.stderr) == (141, "")
    assert cli.STDOUT_CLOSED == 141


def test_bytes_are_named_submission_and_solution() -> None:
    # both sides in memory: the warning tells them apart ('1' only in <bytes>, ... before)
    score, said = scored_with_warnings(
        b"customer_id,prediction\n1,A\n", b"customer_id,prediction\n2,A\n", "map@12"
    )
    assert score == 0.0
    assert len(said) == 1
    assert "'1' only in <submission bytes>, '2' only in <solution bytes>" in said[0]
    assert "<bytes>" not in said[0]
