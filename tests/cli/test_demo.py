"""``rankmetrics demo``: its progress covers the sample's generation; ``--write DIR`` files.

A large demo spends most of its time generating the sample (two minutes for
100,000 users): ``--progress`` reports each stage of it and, every few seconds,
how far it is. ``--write DIR`` writes the sample as the files every
command-line example of the documentation reads, and never replaces a file
unless told.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from polars_rankmetrics import _progress
from polars_rankmetrics import sample as sample_module
from polars_rankmetrics.cli import main
from polars_rankmetrics.cli.demo import FILES
from polars_rankmetrics.kaggle import score_submission
from polars_rankmetrics.sample import sample_data
from polars_rankmetrics.trec import read_trec_qrels, read_trec_run


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue(), err.getvalue()


def test_progress_covers_the_generation(monkeypatch: pytest.MonkeyPatch) -> None:
    # small chunks and no wait between lines: the stages and their progress show at once
    monkeypatch.setattr(sample_module, "_CHUNK_CELLS", 40_000)
    monkeypatch.setattr(_progress, "EVERY", 0.0)
    status, _, err = _run(["demo", "--users", "300", "--progress", "--format", "csv"])
    assert status == 0, err
    lines = [line.split("]: ", 1)[1] for line in err.splitlines()]
    generating = lines.index("generating the sample for 300 users")
    evaluating = next(i for i, line in enumerate(lines) if line.startswith("evaluating"))
    during = lines[generating + 1 : evaluating]
    assert during[0] == "the sample's events of 300 users ..."
    assert "the sample's events of 300 users: 40%" in during
    assert "the four recommenders' lists ..." in during
    assert any(line.startswith("the four recommenders' lists: done in") for line in during)
    assert sum(line.startswith("the four recommenders' lists: ") for line in during) > 3


def test_the_chunks_change_no_number(monkeypatch: pytest.MonkeyPatch) -> None:
    whole = sample_data(n_users=200, n_items=100)
    monkeypatch.setattr(sample_module, "_CHUNK_CELLS", 3_000)
    monkeypatch.setattr(_progress, "EVERY", 0.0)
    chunked = sample_data(n_users=200, n_items=100)
    assert_frame_equal(whole.recs, chunked.recs)
    assert_frame_equal(whole.truth, chunked.truth)


def test_write_gives_the_files_the_examples_read(tmp_path: Path) -> None:
    folder = tmp_path / "sample"
    status, out, err = _run(["demo", "--write", str(folder), "--users", "300"])
    assert status == 0, err
    assert sorted(path.name for path in folder.iterdir()) == sorted(FILES)
    assert all(name in out for name in FILES)
    sample = sample_data(n_users=300)
    assert_frame_equal(pl.read_parquet(folder / "recs.parquet"), sample.recs)
    assert_frame_equal(pl.read_parquet(folder / "truth.parquet"), sample.truth)
    assert_frame_equal(pl.read_parquet(folder / "interactions.parquet"), sample.interactions)
    assert_frame_equal(pl.read_parquet(folder / "items.parquet"), sample.items)
    assert_frame_equal(pl.read_parquet(folder / "users.parquet"), sample.users)
    # the TREC pair is two_tower and item_knn, the qrels the truth
    run = read_trec_run(folder / "run_a.txt")
    assert run["tag"].unique().to_list() == ["two_tower"]
    assert run.height == sample.recs.filter(pl.col("model") == "two_tower").height
    assert read_trec_qrels(folder / "qrels.txt").height == sample.truth.height
    # the Kaggle pair scores every customer's purchases, wide or long
    score = score_submission(folder / "submission.csv", folder / "solution.csv", preset="hm")
    with pytest.warns(UserWarning, match="are not in the solution"):
        long = score_submission(folder / "submission.csv", folder / "transactions.csv", preset="hm")
    assert 0 < score == long


def test_write_never_replaces_a_file_unless_told(tmp_path: Path) -> None:
    folder = tmp_path / "sample"
    folder.mkdir()
    mine = folder / "truth.parquet"
    mine.write_bytes(b"my own truth")
    status, _, err = _run(["demo", "--write", str(folder), "--users", "50"])
    assert status == 2
    assert err.startswith(f"rankmetrics demo: error: --write {folder}: truth.parquet already there")
    assert "--overwrite" in err
    assert mine.read_bytes() == b"my own truth"
    assert [path.name for path in folder.iterdir()] == ["truth.parquet"]  # nothing written
    status, _, err = _run(["demo", "--write", str(folder), "--users", "50", "--overwrite"])
    assert status == 0, err
    assert pl.read_parquet(mine).height > 0


def test_write_refuses_a_file_for_a_folder(tmp_path: Path) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("keep")
    status, _, err = _run(["demo", "--write", str(target)])
    assert status == 2
    assert "is a file, not a folder" in err
    assert target.read_text() == "keep"
