"""Parquet scans evaluated by the streaming engine give the in-memory numbers."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankmetrics as prm
from polars_rankmetrics.sample import sample_data

METRICS = [
    "map@10",
    "ndcg@10",
    "mrr@10",
    "recall@20",
    "precision@5",
    "pooled_recall@20",
    "mean_rank",
]


@pytest.fixture(scope="module")
def parquet_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    sample = sample_data(n_users=400, n_items=150)
    recs, truth = sample.recs, sample.truth
    folder = tmp_path_factory.mktemp("scan")
    # several files, as a partitioned dataset would be
    for model in recs["model"].unique():
        recs.filter(pl.col("model") == model).write_parquet(folder / f"recs-{model}.parquet")
    truth.write_parquet(folder / "truth.parquet")
    return folder, folder / "truth.parquet"


@pytest.mark.parametrize("per_user", [False, True])
def test_streaming_matches_in_memory(parquet_files: tuple[Path, Path], per_user: bool) -> None:
    folder, truth_path = parquet_files
    recs, truth = pl.scan_parquet(folder / "recs-*.parquet"), pl.scan_parquet(truth_path)
    query = recs.rank.evaluate(
        truth, METRICS, score="score", relevance="rel", by="model", per_user=per_user
    )
    streamed = query.collect(engine="streaming")
    in_memory = prm.evaluate(
        recs.collect(), truth.collect(), METRICS, score="score", relevance="rel", by="model",
        per_user=per_user,
    )  # fmt: skip
    assert_frame_equal(streamed, in_memory)


def test_streaming_raises_data_errors(tmp_path: Path) -> None:
    pl.DataFrame({"user": [1, 1], "item": ["a", "a"], "rank": [1, 2]}).write_parquet(
        tmp_path / "r.parquet"
    )
    pl.DataFrame({"user": [1], "item": ["a"]}).write_parquet(tmp_path / "t.parquet")
    query = pl.scan_parquet(tmp_path / "r.parquet").rank.evaluate(
        pl.scan_parquet(tmp_path / "t.parquet"), "mrr"
    )
    with pytest.raises(ValueError, match=r"duplicated \(user, item\)"):
        query.collect(engine="streaming")


@pytest.mark.parametrize("frame", ["recs", "truth"])
def test_streaming_finds_duplicates_far_apart(tmp_path: Path, frame: str) -> None:
    # the repeat sits at both ends of a multi-row-group file, so a screen that looked at
    # one morsel at a time would miss it: the screen must see every row's hash
    n = 300_000
    users = pl.int_range(n, eager=True).alias("user")
    recs = pl.DataFrame({"user": users, "item": "a", "rank": 1})
    truth = pl.DataFrame({"user": users, "item": "a"})
    repeated = {"recs": recs, "truth": truth}[frame]
    repeated = pl.concat([repeated, repeated.head(1)])
    frames = {"recs": recs, "truth": truth, frame: repeated}
    for name, data in frames.items():
        data.write_parquet(tmp_path / f"{name}.parquet", row_group_size=10_000)
    query = pl.scan_parquet(tmp_path / "recs.parquet").rank.evaluate(
        pl.scan_parquet(tmp_path / "truth.parquet"), "mrr"
    )
    with pytest.raises(ValueError, match=rf"{frame} has 2 rows with a duplicated \(user, item\)"):
        query.collect(engine="streaming")
