"""The analysis functions give the same bits on every call.

Polars 2 collects with its streaming engine: a group's float values are added
in the order its threads meet them, and joins do not keep row order, so a
plain ``sum()`` or ``mean()`` over rows that come out of a join can change in
the last bit from one call to the next. Each function below is called twice
on the same mid-size data (thousands of lists, ties, graded truth, items in
several groups) and once more on the same data with its rows shuffled and
its users renamed (an order of the rows the engine could have met), and
every result must equal the first one exactly (``DataFrame.equals``: the
same rows in the same order, the same bits).
Before the analysis layer summed independently of the order
(:mod:`polars_rankmetrics._sums`: exact sums in fixed point, or sorted), each
case here failed on most runs, by 1e-16 to 1e-11. The measures of the
registry, called twice on the same data, are :mod:`tests.test_same_number_twice`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_rankmetrics as prm

USERS, LENGTH, CATALOG = 1500, 20, 1000
SYSTEMS = ("a", "b", "c")
SAMPLED, CANDIDATES = 1000, 41  # the sampled evaluation's users and candidates per user
# the users' new names in the renamed data (a permutation of the ids) and back
NAMES = np.random.default_rng(4).permutation(USERS)


def _lists(rng: np.random.Generator, users: int, length: int, *, candidates: int) -> pl.DataFrame:
    """One list of ``length`` distinct items per (system, user), scores with many ties."""
    frames = []
    for system in SYSTEMS:
        items = rng.permuted(np.tile(np.arange(candidates), (users, 1)), axis=1)[:, :length]
        frames.append(
            pl.DataFrame(
                {
                    "model": system,
                    "user": np.repeat(np.arange(users), length),
                    "item": items.ravel(),
                    # eight distinct scores: tie groups in every list
                    "score": np.round(rng.random(users * length) * 8) / 8,
                    "rank": np.tile(np.arange(1, length + 1), users),
                }
            )
        )
    return pl.concat(frames)


@pytest.fixture(scope="module")
def data() -> dict[str, pl.DataFrame]:
    rng = np.random.default_rng(20261126)
    recs = _lists(rng, USERS, LENGTH, candidates=CATALOG)
    judged = recs.filter(pl.col("model") == "a").group_by("user").head(4).select("user", "item")
    extra = pl.DataFrame(
        {
            "user": np.repeat(np.arange(USERS), 4),
            "item": rng.integers(0, CATALOG, USERS * 4),
        }
    )
    truth = pl.concat([judged, extra]).unique(["user", "item"], keep="first").sort("user", "item")
    # graded 1..3
    truth = truth.with_columns(pl.Series("rel", rng.integers(1, 4, truth.height)))
    labels = np.array(["g1", "g2", "g3", "g4", "g5"])
    items = pl.DataFrame(
        {
            "item": np.arange(CATALOG),
            "side": rng.choice(labels[:4], CATALOG),
            "groups": [
                list(rng.choice(labels, rng.integers(1, 4), replace=False)) for _ in range(CATALOG)
            ],
        }
    )
    long = items.select("item", "groups").explode("groups")
    long = long.with_columns(pl.Series("weight", rng.random(long.height) + 0.01))
    interactions = pl.DataFrame(
        {
            "user": rng.integers(0, USERS, 30_000),
            "item": rng.zipf(1.3, 30_000) % CATALOG,
        }
    )
    # sampled evaluation: the relevant item is item 0 (its own generator: these lists showed
    # the difference most often)
    lists = _lists(np.random.default_rng(1), SAMPLED, CANDIDATES, candidates=CANDIDATES)
    sampled = lists.drop("rank")
    return {
        "recs": recs,
        "ranks": recs.select("model", "user", "item", "rank"),
        "truth": truth,
        "items": items,
        "long": long,
        "interactions": interactions,
        "sampled": sampled,
        "sampled_truth": pl.DataFrame({"user": np.arange(SAMPLED), "item": np.zeros(SAMPLED, int)}),
    }


def _group_exposure(d: dict[str, pl.DataFrame]) -> pl.DataFrame:
    return prm.group_exposure(d["ranks"], d["items"], group="side", by="model", p=0.8)


def _group_exposure_weighted(d: dict[str, pl.DataFrame]) -> pl.DataFrame:
    return prm.group_exposure(
        d["ranks"], d["long"], group="groups", weight="weight", by="model", k=10
    )


def _expected_exposure(d: dict[str, pl.DataFrame]) -> pl.DataFrame:
    samples = d["ranks"].rename({"model": "sample"})
    return prm.expected_exposure(samples, d["truth"], relevance="rel", p=0.8)


def _expected_exposure_per_user(d: dict[str, pl.DataFrame]) -> pl.DataFrame:
    samples = d["ranks"].rename({"model": "sample"})
    return prm.expected_exposure(samples, d["truth"], relevance="rel", p=0.8, per_user=True)


def _trec_fair_score(d: dict[str, pl.DataFrame]) -> pl.DataFrame:
    return prm.trec_fair_score(
        d["ranks"], d["truth"], d["long"], group="groups", weight="weight", by="model"
    )


def _trec_fair_score_per_user(d: dict[str, pl.DataFrame]) -> pl.DataFrame:
    return prm.trec_fair_score(
        d["ranks"], d["truth"], d["items"], group="groups", by="model", per_user=True
    )


def _similarity(d: dict[str, pl.DataFrame]) -> pl.DataFrame:
    recs = d["recs"]
    return prm.similarity(
        recs.filter(pl.col("model") != "a"),
        recs.filter(pl.col("model") == "a").drop("model"),
        ["rbo(p=0.9)", "rbo_min(p=0.8)", "rbo_res(p=0.95)", "jaccard@10", "intersection@5"],
        by="model",
        score="score",
    )


def _similarity_ties(d: dict[str, pl.DataFrame]) -> pl.DataFrame:
    recs = d["recs"]
    return prm.similarity(
        recs.filter(pl.col("model") != "a"),
        recs.filter(pl.col("model") == "a").drop("model"),
        ["rbo(p=0.9)", "rbo_min(p=0.8)", "rbo_res(p=0.95)", "intersection@10"],
        by="model",
        score="score",
        ties="average",
    )


def _sampled_metrics(d: dict[str, pl.DataFrame]) -> pl.DataFrame:
    return prm.sampled_metrics(
        d["sampled"], d["sampled_truth"], ["ndcg@10", "recall@5"], n_items=1000, by="model",
        score="score",
    )  # fmt: skip


def _curves_debiased(d: dict[str, pl.DataFrame]) -> pl.DataFrame:
    return prm.curves(
        d["recs"], d["truth"], ["snips_ndcg", "snips_map"], k=[1, 5, 10, 20], by="model",
        score="score", relevance="rel", interactions=d["interactions"],
    )  # fmt: skip


def _curves_lists(d: dict[str, pl.DataFrame]) -> pl.DataFrame:
    return prm.curves(
        d["recs"], None, ["novelty", "arp", "calibration"], k=[1, 5, 10, 20], by="model",
        score="score", interactions=d["interactions"], items=d["items"], category="groups",
        ci=0.95,
    )  # fmt: skip


def _fuse(method: str, norm: str | None) -> Callable[[dict[str, pl.DataFrame]], pl.DataFrame]:
    def call(d: dict[str, pl.DataFrame]) -> pl.DataFrame:
        runs = d["recs"].select("model", "user", "item", "score")
        fused = prm.fuse(runs, run="model", method=method, norm=norm)  # type: ignore[call-overload]
        # by user and item, the order _named_back gives the renamed data's rows
        return fused.sort("user", "item")  # type: ignore[no-any-return]

    return call


def _lists_per_user(d: dict[str, pl.DataFrame]) -> pl.DataFrame:
    return prm.evaluate(
        d["recs"], None, ["ild@10", "awrf(p=0.8)@10", "ndkl@10", "calibration@10"],
        by="model", score="score", items=d["items"], category="groups", group="groups",
        interactions=d["interactions"], per_user=True,
    )  # fmt: skip


CASES: dict[str, Callable[[dict[str, pl.DataFrame]], Any]] = {
    "fuse_rrf": _fuse("rrf", None),
    "fuse_sum_zmuv": _fuse("sum", "zmuv"),
    "fuse_mnz_sum": _fuse("mnz", "sum"),
    "fuse_anz_min_max": _fuse("anz", "min-max"),
    "lists_per_user": _lists_per_user,
    "group_exposure": _group_exposure,
    "group_exposure_weighted": _group_exposure_weighted,
    "expected_exposure": _expected_exposure,
    "expected_exposure_per_user": _expected_exposure_per_user,
    "trec_fair_score": _trec_fair_score,
    "trec_fair_score_per_user": _trec_fair_score_per_user,
    "similarity": _similarity,
    "similarity_ties": _similarity_ties,
    "sampled_metrics": _sampled_metrics,
    "curves_debiased": _curves_debiased,
    "curves_lists": _curves_lists,
}


@pytest.fixture(scope="module")
def shuffled(data: dict[str, pl.DataFrame]) -> dict[str, pl.DataFrame]:
    """The same frames, their rows in another order and their users renamed.

    A sum over users must not depend on which user comes first: renamed users
    come first in another order wherever the plan sorts or hashes them.
    """
    renamed = pl.col("user").replace_strict(np.arange(USERS), NAMES)
    frames = {
        name: frame.sample(fraction=1.0, shuffle=True, seed=3) for name, frame in data.items()
    }
    return {
        name: frame.with_columns(renamed) if "user" in frame.columns else frame
        for name, frame in frames.items()
    }


def _named_back(result: pl.DataFrame, like: pl.DataFrame) -> pl.DataFrame:
    """A per-user result of the renamed data with the users' first names, in ``like``'s order."""
    if "user" not in result.columns:
        return result
    keys = [name for name, dtype in like.schema.items() if not dtype.is_float()]
    back = pl.col("user").replace_strict(NAMES, np.arange(USERS), return_dtype=like["user"].dtype)
    return result.with_columns(back).sort(keys)


@pytest.mark.parametrize("name", list(CASES))
def test_same_bits_on_every_call(
    name: str, data: dict[str, pl.DataFrame], shuffled: dict[str, pl.DataFrame]
) -> None:
    call = CASES[name]
    first = call(data)
    assert first.height > 0
    for what, again in (
        ("a second call", call(data)),
        ("shuffled rows and renamed users", _named_back(call(shuffled), first)),
    ):
        if not again.equals(first):
            keys = [c for c, t in first.schema.items() if not t.is_float()]
            same_rows = again.sort(keys).equals(first.sort(keys))
            changed = "the row order" if same_rows else "the values"
            pytest.fail(f"{name}: {what} changed {changed}:\n{first}\n{again}")
