"""The built-in sample: deterministic, the documented shapes, the documented model order."""

from __future__ import annotations

import logging
import time
import tracemalloc

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankmetrics as prm
from polars_rankmetrics import sample as sample_module
from polars_rankmetrics.sample import Sample, sample_data

MODELS = ["item_knn", "popularity", "random", "two_tower"]
MAIN_METRICS = ["map@10", "ndcg@10", "recall@20"]
# the order the module docstring promises, best first
DOCUMENTED_ORDER = ["two_tower", "item_knn", "popularity", "random"]


@pytest.fixture(scope="module")
def sample() -> Sample:
    start = time.perf_counter()
    generated = sample_data()
    logging.getLogger(__name__).warning(
        "sample_data() with the defaults took %.2f s", time.perf_counter() - start
    )
    return generated


def frames(sample: Sample) -> dict[str, pl.DataFrame]:
    return {
        name: getattr(sample, name) for name in ("recs", "truth", "interactions", "items", "users")
    }


def test_exposed_at_the_top_level() -> None:
    assert prm.sample_data is sample_data
    assert "sample_data" in prm.__all__


def test_same_seed_same_frames_other_seed_other_frames(sample: Sample) -> None:
    again = sample_data()
    for name, frame in frames(sample).items():
        assert_frame_equal(frame, frames(again)[name])
    other = sample_data(seed=1)
    assert not other.truth.equals(sample.truth)
    assert not other.recs.equals(sample.recs)


def test_schemas(sample: Sample) -> None:
    assert sample.recs.schema == pl.Schema(
        {"model": pl.String, "user": pl.Int64, "item": pl.Int64, "score": pl.Float64}
    )
    assert sample.truth.schema == pl.Schema({"user": pl.Int64, "item": pl.Int64, "rel": pl.Int64})
    assert sample.interactions.schema == pl.Schema(
        {"user": pl.Int64, "item": pl.Int64, "timestamp": pl.Datetime("us"), "event": pl.String}
    )
    assert sample.items.schema == pl.Schema(
        {"item": pl.Int64, "categories": pl.List(pl.String), "popularity": pl.UInt32}
    )
    assert sample.users.schema == pl.Schema(
        {
            "user": pl.Int64,
            "signup": pl.Datetime("us"),
            "n_history": pl.UInt32,
            "segment": pl.String,
        }
    )


def test_sizes_and_contents(sample: Sample) -> None:
    assert sample.users.height == 2_000
    assert sample.items.height == 1_000
    assert sorted(sample.recs["model"].unique()) == MODELS
    # every model gives every user a full list of 20 distinct unseen items
    lists = sample.recs.group_by("model", "user").agg(pl.len(), pl.col("item").n_unique())
    assert lists.height == 4 * 2_000
    assert (lists["len"] == 20).all()
    assert (lists["item"] == 20).all()
    assert sample.recs.join(sample.interactions, on=["user", "item"], how="semi").is_empty()
    # the documented rough sizes
    assert 20_000 < sample.interactions.height < 40_000
    assert 1_500 < sample.truth["user"].n_unique() < 2_000
    assert sorted(sample.truth["rel"].unique()) == [1, 2, 3]
    assert set(sample.interactions["event"].unique()) == {"view", "cart", "purchase"}
    # the time split holds
    assert (sample.interactions["timestamp"] < sample.split_time).all()
    assert sample.truth.join(sample.interactions, on=["user", "item"], how="semi").is_empty()
    # the segments follow the history length and each has a few hundred users
    counts = dict(sample.users["segment"].value_counts().iter_rows())
    assert set(counts) == {"new", "casual", "active"}
    assert min(counts.values()) >= 100
    history = sample.interactions.group_by("user").len()
    users = sample.users.join(history, on="user", how="left").with_columns(
        pl.col("len").fill_null(0)
    )
    assert (users["n_history"] == users["len"]).all()
    assert (users.filter(pl.col("segment") == "new")["n_history"] <= 2).all()
    assert (users.filter(pl.col("segment") == "active")["n_history"] >= 20).all()
    # some items have two categories, item popularity is the training count
    n_categories = sample.items["categories"].list.len()
    assert 0.1 < (n_categories == 2).mean() < 0.3
    assert n_categories.min() == 1
    item_counts = sample.interactions.group_by("item").len()
    items = sample.items.join(item_counts, on="item", how="left").with_columns(
        pl.col("len").fill_null(0)
    )
    assert (items["popularity"] == items["len"]).all()


def test_skewed_popularity_and_activity(sample: Sample) -> None:
    popularity = sample.items["popularity"].sort(descending=True)
    # the top 10% of items get a large share of the events (Zipf-like)
    assert popularity.head(100).sum() / popularity.sum() > 0.4
    activity = sample.users["n_history"]
    assert activity.max() > 10 * activity.median()


def test_ties_present_in_some_models(sample: Sample) -> None:
    ties = (
        sample.recs.group_by("model", "user")
        .agg(tied=pl.col("score").n_unique() < pl.len())
        .group_by("model")
        .agg(pl.col("tied").mean())
    )
    share = dict(ties.iter_rows())
    assert share["popularity"] > 0.3
    assert share["random"] > 0.3
    assert share["two_tower"] < share["popularity"]


def test_model_order_is_as_documented(sample: Sample) -> None:
    scores = prm.evaluate(
        sample.recs, sample.truth, MAIN_METRICS, score="score", relevance="rel", by="model"
    )
    for metric in MAIN_METRICS:
        order = scores.sort(metric, descending=True)["model"].to_list()
        assert order == DOCUMENTED_ORDER, (metric, scores)
    # and the differences are visible, not noise
    by_model = {row["model"]: row for row in scores.iter_rows(named=True)}
    assert by_model["two_tower"]["ndcg@10"] > 1.2 * by_model["item_knn"]["ndcg@10"]
    assert by_model["item_knn"]["ndcg@10"] > 1.1 * by_model["popularity"]["ndcg@10"]
    assert by_model["popularity"]["ndcg@10"] > 10 * by_model["random"]["ndcg@10"]


def test_new_users_prefer_popularity_to_item_knn(sample: Sample) -> None:
    # documented: item_knn has little to go on for users with 0-2 history items
    per_user = prm.evaluate(
        sample.recs, sample.truth, MAIN_METRICS, score="score", relevance="rel", by="model",
        per_user=True,
    ).join(sample.users, on="user")  # fmt: skip
    means = per_user.group_by("segment", "model").agg(pl.col(MAIN_METRICS).mean())
    for metric in MAIN_METRICS:
        by_segment = {
            (row["segment"], row["model"]): row[metric] for row in means.iter_rows(named=True)
        }
        assert by_segment["new", "popularity"] > by_segment["new", "item_knn"], metric
        assert by_segment["active", "item_knn"] > by_segment["active", "popularity"], metric
        assert by_segment["casual", "item_knn"] > by_segment["casual", "popularity"], metric


def test_smaller_sample_and_bad_sizes() -> None:
    small = sample_data(n_users=50, n_items=60, n_recs=5, n_categories=3, seed=7)
    assert small.users.height == 50
    assert small.recs.group_by("model", "user").len()["len"].max() == 5
    assert small.items["categories"].explode().n_unique() <= 3
    with pytest.raises(ValueError, match="n_items >= n_recs"):
        sample_data(n_items=10, n_recs=20)
    with pytest.raises(ValueError, match="n_categories must be between 1 and 16"):
        sample_data(n_categories=0)


def test_chunks_of_users_change_no_number(monkeypatch: pytest.MonkeyPatch) -> None:
    # the default-size sample is one chunk: 37-user chunks (the last one short) must
    # consume the random stream as one draw for every user does
    whole = sample_data(n_users=300, n_items=200, seed=3)
    monkeypatch.setattr(sample_module, "_CHUNK_CELLS", 37 * 200, raising=False)
    chunked = sample_data(n_users=300, n_items=200, seed=3)
    for name, frame in frames(whole).items():
        if name != "recs":
            assert_frame_equal(frames(chunked)[name], frame)
    # item_knn's scores come from a float32 matrix product, whose last bits depend on how
    # the BLAS blocks the rows (seen on one OpenBLAS): rounded to 4 decimals, a score may
    # move by one unit there. Everything else, and every list, is the same
    got, want = chunked.recs, whole.recs
    assert_frame_equal(got.drop("score"), want.drop("score"))
    moved = (got["score"] - want["score"]).abs()
    assert moved.max() <= 1.0001e-4
    assert got.filter(moved > 0)["model"].unique().to_list() in ([], ["item_knn"])


def test_memory_grows_with_the_rows_not_with_users_times_items(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # 4,000 users x 250 items are 8 MB a float64 matrix, and the generator held about
    # twenty of them (a million users x 1,000 items: 8 GB each); in chunks of 200 users
    # the NumPy arrays at their peak are about the rows returned (4,000 users x 80
    # recommendations x 16 bytes = 5 MB, and the events) and a chunk's matrices
    monkeypatch.setattr(sample_module, "_CHUNK_CELLS", 200 * 250, raising=False)
    tracemalloc.start()
    try:
        sample_data(n_users=4_000, n_items=250)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 32 * 2**20  # about 12 MB; today's generator: 136 MB
