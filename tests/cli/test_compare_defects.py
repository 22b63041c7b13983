"""``rankmetrics compare``: numeric system ids, --output, and --trec pairing every judged query."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import polars as pl
import pytest

import polars_rankmetrics as prm
from polars_rankmetrics.cli import main


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    recs = pl.DataFrame(
        {"model": [1] * 6 + [2] * 6, "user": [1, 1, 2, 2, 3, 3] * 2,
         "item": ["a", "b"] * 3 + ["b", "a"] * 3, "rank": [1, 2] * 6}
    )  # fmt: skip
    truth = pl.DataFrame({"user": [1, 2, 3], "item": ["b", "b", "b"]})
    recs_path, truth_path = tmp_path / "recs.parquet", tmp_path / "truth.parquet"
    recs.write_parquet(recs_path)
    truth.write_parquet(truth_path)
    return str(recs_path), str(truth_path)


def test_a_numeric_baseline_names_a_system_of_numbers(files: tuple[str, str]) -> None:
    status, out, err = _run(["compare", *files, "-m", "mrr", "--baseline", "1", "--format", "csv"])
    assert status == 0, err
    table = pl.read_csv(io.StringIO(out))
    assert table.get_column("system").to_list() == [1, 2]
    assert table.get_column("mean").to_list() == [0.5, 1.0]
    status, _, err = _run(["compare", *files, "-m", "mrr", "--baseline", "one"])
    assert status == 2
    assert "--baseline 'one' is not a number" in err


def test_output_writes_the_comparison_and_never_an_input(
    files: tuple[str, str], tmp_path: Path
) -> None:
    target = tmp_path / "cmp.parquet"
    status, _, err = _run(
        ["compare", *files, "-m", "mrr", "--baseline", "1", "--output", str(target)]
    )
    assert status == 0, err
    written = pl.read_parquet(target)
    assert written.get_column("metric").to_list() == ["mrr", "mrr"]
    before = Path(files[1]).read_bytes()
    status, _, err = _run(["compare", *files, "-m", "mrr", "--output", files[1]])
    assert status == 2
    assert "--output" in err
    assert Path(files[1]).read_bytes() == before


def test_trec_pairs_every_judged_query(tmp_path: Path) -> None:
    """A run that skipped a query scores 0 there (trec_eval -c), not a smaller, easier set."""
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q1 0 d1 1\nq2 0 d1 1\nq3 0 d1 1\n")
    full, partial = tmp_path / "full.txt", tmp_path / "partial.txt"
    full.write_text("q1 Q0 d2 1 2 full\nq1 Q0 d1 2 1 full\n"
                    "q2 Q0 d2 1 2 full\nq2 Q0 d1 2 1 full\n"
                    "q3 Q0 d2 1 2 full\nq3 Q0 d1 2 1 full\n")  # fmt: skip
    partial.write_text("q1 Q0 d1 1 1 partial\n")
    status, out, err = _run(
        ["compare", "--trec", str(qrels), str(full), str(partial), "-m", "mrr",
         "--baseline", "full", "--format", "csv"]
    )  # fmt: skip
    assert status == 0, err
    table = pl.read_csv(io.StringIO(out))
    rows = {row["system"]: row for row in table.iter_rows(named=True)}
    # every run paired on all three queries: partial's mean is 1/3, not 1
    assert rows["partial"]["n"] == 3
    assert rows["partial"]["mean"] == pytest.approx(1 / 3)
    assert rows["partial"]["n_paired"] == 3


@pytest.mark.parametrize(
    ("suffix", "kind"), [(".md", "markdown"), (".tex", "latex"), (".html", "html")]
)
def test_output_writes_the_report_in_the_format_of_its_extension(
    files: tuple[str, str], tmp_path: Path, suffix: str, kind: str
) -> None:
    target = tmp_path / f"report{suffix}"
    status, out, err = _run(
        ["compare", *files, "-m", "mrr", "--baseline", "1", "--output", str(target)]
    )
    assert status == 0, err
    compared = prm.compare(pl.read_parquet(files[0]), pl.read_parquet(files[1]), "mrr", baseline=1)
    expected = str(prm.report(compared, format=kind)).rstrip("\n") + "\n"
    assert target.read_text() == expected
    # stdout keeps its own format (Markdown by default)
    assert out.rstrip("\n") == str(prm.report(compared)).rstrip("\n")


def test_a_group_measure_is_refused_with_the_command_that_computes_it(
    files: tuple[str, str],
) -> None:
    status, _, err = _run(["compare", *files, "-m", "mrr", "coverage@2", "--baseline", "1"])
    assert status == 2
    recs, truth = files
    assert err.rstrip("\n").endswith(
        f"compute it per system with: rankmetrics evaluate {recs} {truth} -m coverage@2 --by model"
    ), err
    # command-line words only: no Python call, no keyword=value
    assert "evaluate(" not in err
    assert "by=" not in err
