"""Every worked example of shared/METRICS.md, with its exact values, on every backend."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl
import pytest

import polars_rankmetrics as prm
from tests.conftest import Backend

TOL = 5e-7  # METRICS.md prints 6 decimals


def ranked_lists(lists: dict[str, Sequence[str]]) -> dict[str, list[object]]:
    """Long-format recs from {user: [item at rank 1, item at rank 2, ...]}."""
    rows: dict[str, list[object]] = {"user": [], "item": [], "rank": []}
    for user, items in lists.items():
        for position, item in enumerate(items, start=1):
            rows["user"].append(user)
            rows["item"].append(item)
            rows["rank"].append(position)
    return rows


def truth_sets(truth: dict[str, Sequence[str]]) -> dict[str, list[object]]:
    rows: dict[str, list[object]] = {"user": [], "item": []}
    for user, items in truth.items():
        for item in items:
            rows["user"].append(user)
            rows["item"].append(item)
    return rows


def from_pattern(pattern: Sequence[int], n_relevant: int | None = None) -> tuple[dict, dict]:
    """One user whose list has relevant items where ``pattern`` is 1.

    Relevant items that were not recommended are added to the truth until it
    holds ``n_relevant`` items.
    """
    items = [f"i{position}" for position in range(1, len(pattern) + 1)]
    relevant = [item for item, flag in zip(items, pattern, strict=True) if flag]
    extra = [f"missing{j}" for j in range((n_relevant or len(relevant)) - len(relevant))]
    return ranked_lists({"u": items}), truth_sets({"u": relevant + extra})


def per_user(
    backend: Backend, recs: dict, truth: dict, metrics: list[str], **options
) -> pl.DataFrame:
    result = backend.frame(recs).rank.evaluate(
        backend.frame(truth), metrics, per_user=True, **options
    )
    return backend.polars(result).sort("user")


def means(
    backend: Backend, recs: dict, truth: dict, metrics: list[str], **options
) -> dict[str, float]:
    result = backend.frame(recs).rank.evaluate(backend.frame(truth), metrics, **options)
    return backend.polars(result).row(0, named=True)


EXAMPLE_1_RECS = ranked_lists({"u1": list("ABCDE"), "u2": list("ACEBD")})
EXAMPLE_1_TRUTH = truth_sets({"u1": list("BDZ"), "u2": list("BDZ")})


@pytest.mark.parametrize("denominator", ["min_k", "relevant"])
def test_example_1_average_precision(backend: Backend, denominator: str) -> None:
    scores = per_user(backend, EXAMPLE_1_RECS, EXAMPLE_1_TRUTH, ["map@5"], denominator=denominator)
    assert scores["map@5"].to_list() == pytest.approx([1 / 3, 0.216667], abs=TOL)
    mean = means(backend, EXAMPLE_1_RECS, EXAMPLE_1_TRUTH, ["map@5"], denominator=denominator)
    assert mean["map@5"] == pytest.approx(0.275, abs=TOL)


def test_example_1_other_means(backend: Backend) -> None:
    metrics = ["ndcg@5", "mrr", "precision@5", "recall@5"]
    mean = means(backend, EXAMPLE_1_RECS, EXAMPLE_1_TRUTH, metrics)
    assert mean == pytest.approx(
        {"ndcg@5": 0.440919, "mrr": 0.375, "precision@5": 0.4, "recall@5": 0.666667}, abs=TOL
    )


def test_example_1_hits_denominator(backend: Backend) -> None:
    scores = per_user(backend, EXAMPLE_1_RECS, EXAMPLE_1_TRUTH, ["map@5"], denominator="hits")
    assert scores["map@5"].to_list() == pytest.approx([0.5, 0.325], abs=TOL)


@pytest.mark.parametrize(
    ("pattern", "n_relevant", "expected"),
    [
        ([1, 0, 1, 0, 0, 1, 0, 0, 1, 1], 5, 0.622222),
        ([0, 1, 0, 0, 1, 0, 1, 0, 0, 0], 3, 0.442857),
    ],
)
def test_example_2(backend: Backend, pattern: list[int], n_relevant: int, expected: float) -> None:
    recs, truth = from_pattern(pattern, n_relevant)
    for denominator in ("min_k", "relevant"):
        scores = per_user(backend, recs, truth, ["map@10"], denominator=denominator)
        assert scores["map@10"][0] == pytest.approx(expected, abs=TOL)


EXAMPLE_3_PATTERN = [1, 1, 1, 0, 1, 0, 1, 0, 0, 1]


def test_example_3_hits_ap_and_precision(backend: Backend) -> None:
    recs, truth = from_pattern(EXAMPLE_3_PATTERN)
    metrics = [
        "map@5",
        "map@7",
        "map@9",
        "map@10",
        "precision@3",
        "precision@5",
        "precision@7",
        "precision@10",
    ]
    scores = per_user(backend, recs, truth, metrics, denominator="hits").row(0, named=True)
    assert scores == pytest.approx(
        {
            "user": "u",
            "map@5": 0.95,
            "map@7": 0.902857,
            "map@9": 0.902857,
            "map@10": 0.852381,
            "precision@3": 1.0,
            "precision@5": 0.8,
            "precision@7": 0.714286,
            "precision@10": 0.6,
        },
        abs=TOL,
    )


@pytest.mark.parametrize(
    ("pattern", "expected"), [([1, 0, 1, 0, 1], 0.755556), ([0, 1, 0, 1, 1], 0.533333)]
)
def test_example_3_short_patterns(backend: Backend, pattern: list[int], expected: float) -> None:
    recs, truth = from_pattern(pattern)
    scores = per_user(backend, recs, truth, ["map@5"], denominator="hits")
    assert scores["map@5"][0] == pytest.approx(expected, abs=TOL)


EXAMPLE_4_RECS = ranked_lists({"q1": ["9", "2", "1"], "q2": ["1", "7", "8"]})
EXAMPLE_4_TRUTH = truth_sets({"q1": list("12345"), "q2": list("12345")})


def test_example_4_precision_and_recall(backend: Backend) -> None:
    metrics = ["precision@1", "precision@2", "precision@3", "recall@1", "recall@2", "recall@3"]
    scores = per_user(backend, EXAMPLE_4_RECS, EXAMPLE_4_TRUTH, metrics)
    q1, q2 = scores.rows(named=True)
    assert [q1[m] for m in metrics] == pytest.approx([0, 0.5, 0.666667, 0, 0.2, 0.4], abs=TOL)
    assert [q2[m] for m in metrics] == pytest.approx([1, 0.5, 0.333333, 0.2, 0.2, 0.2], abs=TOL)


@pytest.mark.parametrize(
    ("denominator", "q1", "q2"),
    [("hits", 0.583333, 1.0), ("relevant", 0.233333, 0.2), ("min_k", 0.388889, 0.333333)],
)
def test_example_4_average_precision(
    backend: Backend, denominator: str, q1: float, q2: float
) -> None:
    scores = per_user(backend, EXAMPLE_4_RECS, EXAMPLE_4_TRUTH, ["map@3"], denominator=denominator)
    assert scores["map@3"].to_list() == pytest.approx([q1, q2], abs=TOL)
    if denominator == "hits":
        mean = means(backend, EXAMPLE_4_RECS, EXAMPLE_4_TRUTH, ["map@3"], denominator=denominator)
        assert mean["map@3"] == pytest.approx(0.791667, abs=TOL)


def first_relevant_at(positions: Sequence[int]) -> tuple[dict, dict]:
    """One user per position, whose only relevant item sits at that position of a 5-item list."""
    lists = {f"u{i}": [f"x{j}" for j in range(1, 6)] for i in range(len(positions))}
    truth = {f"u{i}": [f"x{position}"] for i, position in enumerate(positions)}
    return ranked_lists(lists), truth_sets(truth)


def test_example_5_mrr_and_hits(backend: Backend) -> None:
    recs, truth = first_relevant_at([3, 2, 1])
    mean = means(backend, recs, truth, ["mrr", "hit_rate@1", "hits@3"])
    assert mean == pytest.approx({"mrr": 0.611111, "hit_rate@1": 1 / 3, "hits@3": 1.0}, abs=TOL)


def test_example_5_mean_rank(backend: Backend) -> None:
    recs, truth = first_relevant_at([1, 3, 3, 5, 2])
    assert means(backend, recs, truth, ["mean_rank"])["mean_rank"] == pytest.approx(2.8, abs=TOL)


@pytest.mark.parametrize(
    ("denominator", "expected"), [("relevant", 0.377778), ("min_k", 0.453333), ("hits", 0.755556)]
)
def test_example_6(backend: Backend, denominator: str, expected: float) -> None:
    recs, truth = from_pattern([1, 0, 1, 0, 1], n_relevant=6)
    scores = per_user(backend, recs, truth, ["map@5"], denominator=denominator)
    assert scores["map@5"][0] == pytest.approx(expected, abs=TOL)


@pytest.mark.parametrize(("gain", "expected"), [("linear", 0.789998), ("exponential", 0.680606)])
def test_example_7_graded_ndcg(backend: Backend, gain: str, expected: float) -> None:
    recs = ranked_lists({"u": ["g1", "g2", "g3"]})
    truth = {"user": ["u", "u", "u"], "item": ["g3", "g2", "g1"], "rel": [3, 2, 1]}
    scores = per_user(backend, recs, truth, ["ndcg@3"], relevance="rel", gain=gain)
    assert scores["ndcg@3"][0] == pytest.approx(expected, abs=TOL)


def test_worked_examples_through_expressions() -> None:
    """The same numbers from the public expressions on a labeled frame."""
    labeled = pl.DataFrame(EXAMPLE_1_RECS).rank.relevance(pl.DataFrame(EXAMPLE_1_TRUTH))
    scores = labeled.group_by("user").agg(
        prm.average_precision(5),
        prm.average_precision(5, denominator="hits").alias("ap_hits"),
        prm.ndcg(5),
        prm.reciprocal_rank(),
        prm.precision(5),
        prm.recall(5),
    )
    assert scores.sort("user").to_dict(as_series=False) == {
        "user": ["u1", "u2"],
        "average_precision@5": pytest.approx([1 / 3, 0.216667], abs=TOL),
        "ap_hits": pytest.approx([0.5, 0.325], abs=TOL),
        "ndcg@5": pytest.approx([0.498189, 0.383649], abs=TOL),
        "reciprocal_rank": pytest.approx([0.5, 0.25], abs=TOL),
        "precision@5": pytest.approx([0.4, 0.4], abs=TOL),
        "recall@5": pytest.approx([2 / 3, 2 / 3], abs=TOL),
    }
    assert scores["ndcg@5"].mean() == pytest.approx(0.440919, abs=TOL)
