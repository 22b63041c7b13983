"""``rankmetrics gate`` run as a shell runs it: its lines and its exit status."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from scipy import stats

from polars_rankmetrics import evaluate
from polars_rankmetrics.sample import sample_data

ROOT = Path(__file__).resolve().parents[2]


def _gate(*args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, "-W", "error", "-m", "polars_rankmetrics.cli", "gate", *args],
        capture_output=True, text=True, env=env, check=False, timeout=120,
    )  # fmt: skip


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str, pl.DataFrame, pl.DataFrame]:
    folder = tmp_path_factory.mktemp("gate")
    sample = sample_data(n_users=80, seed=2)
    recs_path, truth_path = folder / "recs.parquet", folder / "truth.parquet"
    sample.recs.write_parquet(recs_path)
    sample.truth.write_parquet(truth_path)
    return str(recs_path), str(truth_path), sample.recs, sample.truth


def test_fails_with_status_1_and_says_why(files: tuple) -> None:
    recs, truth, frame, truth_frame = files
    done = _gate(recs, truth, "--baseline", "popularity", "-m", "ndcg@10", "-m", "recall@20",
                 "--margin", "0.005", "--score", "score", "--relevance", "rel")  # fmt: skip
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("decision rule: a system passes a metric when it is shown")
    assert "<= -0.005 where higher is better, >= +0.005 where lower is, at alpha = 0.05" in lines[0]
    rows = [line.split("\t") for line in lines[1:-1]]
    assert [(row[0], row[1]) for row in rows] == [
        ("item_knn", "ndcg@10"), ("random", "ndcg@10"), ("two_tower", "ndcg@10"),
        ("item_knn", "recall@20"), ("random", "recall@20"), ("two_tower", "recall@20"),
    ]  # fmt: skip
    assert lines[-1] == "gate: FAIL (2 of 6 comparisons pass)"
    # the numbers: one-sided p of t = (mean(d) + m) / se and the one-sided 95% lower bound
    per_user = evaluate(frame, truth_frame, "ndcg@10", score="score", relevance="rel",
                        by="model", per_user=True)  # fmt: skip
    wide = per_user.pivot(on="model", index="user", values="ndcg@10")
    wide = wide.select("two_tower", "popularity").drop_nulls()
    d = (wide.get_column("two_tower") - wide.get_column("popularity")).to_numpy()
    se = d.std(ddof=1) / np.sqrt(d.size)
    lower = d.mean() - stats.t.ppf(0.95, d.size - 1) * se
    p = stats.ttest_1samp(d, -0.005, alternative="greater").pvalue
    row = rows[2]
    assert row[2] == "higher is better"
    assert float(row[3].split()[1]) == pytest.approx(d.mean(), abs=1e-6)
    assert float(row[4].split()[2]) == pytest.approx(lower, abs=1e-6)
    assert float(row[5].split()[1]) == pytest.approx(p, rel=1e-3)
    assert row[-1] == "PASS non-inferior"


def test_passes_with_status_0(files: tuple, tmp_path: Path) -> None:
    _, truth, frame, _ = files
    recs = tmp_path / "two.parquet"
    frame.filter(pl.col("model").is_in(["popularity", "two_tower"])).write_parquet(recs)
    done = _gate(str(recs), truth, "--baseline", "popularity", "-m", "ndcg@10", "recall@20",
                 "--margin", "0.005", "--score", "score", "--relevance", "rel")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "gate: PASS (2 of 2 comparisons pass)"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--baseline", "bm25", "--margin", "0.005"], "--baseline bm25: no such system"),
        (["--baseline", "popularity", "--margin", "0"], "--margin must be a number above 0"),
        (["--baseline", "popularity", "--margin", "0.01", "--system", "run"], "no system column"),
        (["--baseline", "popularity"], "the following arguments are required: --margin"),
    ],
)
def test_bad_input_exits_2(files: tuple, extra: list[str], message: str) -> None:
    recs, truth, _, _ = files
    done = _gate(recs, truth, "-m", "ndcg@10", "--score", "score", "--relevance", "rel", *extra)
    assert done.returncode == 2
    assert message in done.stderr
    assert "Traceback" not in done.stderr


def test_missing_file_exits_2(files: tuple) -> None:
    _, truth, _, _ = files
    done = _gate("nope.parquet", truth, "--baseline", "a", "-m", "ndcg@10", "--margin", "0.01")
    assert done.returncode == 2
    assert "nope.parquet: no such file" in done.stderr
