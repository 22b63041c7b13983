"""surprisal@k, entropy(p)@k and rank_biased_entropy(p)@k: worked values and the peers' cases.

LensKit's ``RankBiasedEntropy`` and ``Entropy`` cases (lkpy
``tests/eval/test_entropy.py``) are checked against LensKit's formula
(``matrix_column_entropy``) on the same matrices; its cases with items that
have no category (zero rows) have no counterpart here, where every
recommended item must be in the catalog with a category. RePlay's own test values for ``Surprisal`` (its docstring example and
``tests/metrics/test_metrics.py::test_surprisal`` on the data of
``tests/metrics/conftest.py``, github.com/sb-ai-lab/RePlay) are transcribed as
facts; hypothesis-generated cases against the textbook are in
``test_lists_properties.py`` (``tests/textbook_beyond.py``).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_rankmetrics as prm

# ---------------------------------------------------------------- RePlay's Surprisal

# replay/metrics/surprisal.py's docstring: recommendations (user, item, score) and train
_DOC_RECS = [
    (1, 3, 0.6), (1, 7, 0.5), (1, 10, 0.4), (1, 11, 0.3), (1, 2, 0.2),
    (2, 5, 0.6), (2, 8, 0.5), (2, 11, 0.4), (2, 1, 0.3), (2, 3, 0.2),
    (3, 4, 1.0), (3, 9, 0.5), (3, 2, 0.1),
]  # fmt: skip
_DOC_TRAIN = [
    (1, 5), (1, 6), (1, 8), (1, 9), (1, 2), (2, 5), (2, 8), (2, 11), (2, 1), (2, 3),
    (3, 4), (3, 9), (3, 2),
]  # fmt: skip
# tests/metrics/conftest.py: recs_data is _DOC_RECS; gt_data, and the recommendations with
# cold items and with missing users
_GT = [
    (1, 5), (1, 6), (1, 7), (1, 8), (1, 9), (1, 10), (2, 6), (2, 7), (2, 4), (2, 10), (2, 11),
    (3, 1), (3, 2), (3, 3), (3, 4), (3, 5),
]  # fmt: skip
_COLD = [(1, 42, 0.5), (1, 5, 1.0), (2, 221, 0.2), (2, 7, 0.3), (3, 2, 0.4), (3, 934, 0.6)]
_MISSING = [(1, 7, 0.5), (1, 5, 1.0), (3, 2, 0.4), (3, 6, 0.6)]


def _recs(rows: list[tuple[int, int, float]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=["user", "item", "score"], orient="row")


def _train(rows: list[tuple[int, int]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=["user", "item"], orient="row")


def test_replay_docstring_example() -> None:
    # Surprisal(2)(recommendations, train) = 0.6845351232142715, per user
    # {1: 1.0, 2: 0.3690702464285426, 3: 0.6845351232142713}
    recs, train = _recs(_DOC_RECS), _train(_DOC_TRAIN)
    mean = prm.list_metrics(recs, ["surprisal@2"], interactions=train, score="score")
    assert mean.item() == pytest.approx(0.6845351232142715, rel=1e-12)
    per_user = prm.list_metrics(
        recs, ["surprisal@2"], interactions=train, score="score", per_user=True
    ).sort("user")
    expected = [1.0, 0.3690702464285426, 0.6845351232142713]
    assert per_user["surprisal@2"].to_list() == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("recs", "train", "k", "replay"),
    [
        # test_surprisal's parameters: (topk, answer, recs, train)
        (_DOC_RECS, "recs", 3, 0.78969),
        (_DOC_RECS, "recs", 5, 0.614294),
        (_DOC_RECS, "gt", 3, 0.719586),
        (_DOC_RECS, "gt", 5, 0.698418),
        (_COLD, "gt", 5, 0.315876),
        (_MISSING, "gt", 5, 0.210721),
    ],
)
def test_replays_test_values(
    recs: list[tuple[int, int, float]], train: str, k: int, replay: float
) -> None:
    history = _train([(u, i) for u, i, _ in recs] if train == "recs" else _GT)
    per_user = prm.list_metrics(
        _recs(recs), [f"surprisal@{k}"], interactions=history, score="score", per_user=True
    )
    lengths = _recs(recs).group_by("user").len()
    joined = per_user.join(lengths, on="user")
    ours = joined[f"surprisal@{k}"].to_list()
    # RePlay divides each list's sum by k, this package by k_u (the items the list holds
    # within k): the same where every list holds k items, else ours * k_u / k
    rescaled = [v * min(n, k) / k for v, n in zip(ours, joined["len"], strict=True)]
    assert sum(rescaled) / len(rescaled) == pytest.approx(replay, abs=1e-6)
    if all(length >= k for length in lengths["len"]):
        assert sum(ours) / len(ours) == pytest.approx(replay, abs=1e-6)


def test_surprisal_has_no_value_with_a_history_of_one_user() -> None:
    recs = pl.DataFrame({"user": [1, 1], "item": [1, 2], "rank": [1, 2]})
    one_user = pl.DataFrame({"user": [7, 7], "item": [1, 3]})
    result = prm.list_metrics(recs, ["surprisal"], interactions=one_user, per_user=True)
    assert result["surprisal"].to_list() == [None]


def test_surprisal_without_interactions_is_refused() -> None:
    recs = pl.DataFrame({"user": [1], "item": [1], "rank": [1]})
    with pytest.raises(ValueError, match="surprisal"):
        prm.list_metrics(recs, ["surprisal@3"])


# ---------------------------------------------------------------- entropy


def test_entropy_hand_worked() -> None:
    # top 2 of three lists: a b | a c | a  -> slots a:3 b:1 c:1 of 5
    recs = pl.DataFrame(
        {"user": [1, 1, 1, 2, 2, 3], "item": ["a", "b", "z", "a", "c", "a"],
         "rank": [1, 2, 3, 1, 2, 1]}
    )  # fmt: skip
    value = prm.list_metrics(recs, ["entropy@2", "entropy@1", "entropy"])
    expected = -(0.6 * math.log(0.6) + 2 * 0.2 * math.log(0.2))
    assert value["entropy@2"].item() == pytest.approx(expected, rel=1e-12)
    # every list shows the same single item: no spread at all
    assert value["entropy@1"].item() == 0.0
    # 6 slots: a 3, b, c, z 1 each
    full = -(0.5 * math.log(0.5) + 3 * (1 / 6) * math.log(1 / 6))
    assert value["entropy"].item() == pytest.approx(full, rel=1e-12)


def test_entropy_of_equal_shares_is_the_log_of_their_number() -> None:
    recs = pl.DataFrame({"user": [1, 1, 2, 2], "item": [1, 2, 3, 4], "rank": [1, 2, 1, 2]})
    value = prm.list_metrics(recs, ["entropy@2"], by=None)
    assert value.item() == pytest.approx(math.log(4), rel=1e-12)


def test_entropy_by_group_is_one_value_per_group() -> None:
    recs = pl.DataFrame(
        {"model": ["m", "m", "n", "n"], "user": [1, 2, 1, 2], "item": [1, 1, 1, 2],
         "rank": [1, 1, 1, 1]}
    )  # fmt: skip
    value = prm.list_metrics(recs, ["entropy@1"], by="model").sort("model")
    assert value["entropy@1"].to_list() == pytest.approx([0.0, math.log(2)], abs=1e-15)


# ---------------------------------------------------------------- rank-biased entropy


def _lenskit_entropy(matrix: list[list[float]], weights: list[float] | None = None) -> float:
    """LensKit's ``matrix_column_entropy`` (lkpy ``metrics/ranking/_entropy.py``), as written.

    Items x categories (rows normalised as distributions), each row times its
    rank weight, column sums + 1e-6, -sum q log2 q.
    """
    m = np.asarray(matrix, dtype=float)
    if weights is not None:
        m = m * np.asarray(weights)[:, np.newaxis]
    values = m.sum(axis=0) + 1e-6
    q = values / values.sum()
    return float(-np.sum(q * np.log2(q)))


def _one_list(categories: list[list[str]]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """One list of items 1..n at ranks 1..n, item i with ``categories[i - 1]``."""
    n = len(categories)
    recs = pl.DataFrame({"user": [1] * n, "item": range(1, n + 1), "rank": range(1, n + 1)})
    items = pl.DataFrame({"item": range(1, n + 1), "category": categories})
    return recs, items


def _rbe(recs: pl.DataFrame, items: pl.DataFrame, metrics: list[str]) -> dict[str, Any]:
    return prm.list_metrics(recs, metrics, items=items, category="category").row(0, named=True)


def test_rank_biased_entropy_hand_worked() -> None:
    # the catalog's categories: w, x, y, z. The list: a (x) at 1, b (x and y) at 2, d (z) at
    # 3, c (y) at 4. p = 0.5: a gives x 1; b gives x and y 0.25 each; d gives z 0.25; c gives
    # y 0.125. v = (w 0, x 1.25, y 0.375, z 0.25), each + 1e-6.
    recs = pl.DataFrame({"user": [1] * 4, "item": ["a", "b", "d", "c"], "rank": [1, 2, 3, 4]})
    items = pl.DataFrame(
        {"item": ["a", "b", "c", "d", "e"], "category": [["x"], ["x", "y"], ["y"], ["z"], ["w"]]}
    )
    got = _rbe(recs, items, ["rank_biased_entropy(p=0.5)@4", "rank_biased_entropy(p=0.5)@1"])
    v = [1e-6, 1.25 + 1e-6, 0.375 + 1e-6, 0.25 + 1e-6]
    expected = -sum(x / sum(v) * math.log2(x / sum(v)) for x in v)
    assert got["rank_biased_entropy(p=0.5)@4"] == pytest.approx(expected, rel=1e-13)
    # at 1 only x is shown: the smoothing alone spreads a little
    v1 = [1e-6, 1 + 1e-6, 1e-6, 1e-6]
    expected1 = -sum(x / sum(v1) * math.log2(x / sum(v1)) for x in v1)
    assert got["rank_biased_entropy(p=0.5)@1"] == pytest.approx(expected1, rel=1e-12)


def test_rank_biased_entropy_is_per_list_and_their_mean() -> None:
    recs = pl.DataFrame(
        {"user": [1, 1, 2, 2, 3], "item": ["a", "b", "a", "c", "c"], "rank": [1, 2, 1, 2, 3]}
    )
    items = pl.DataFrame({"item": ["a", "b", "c"], "category": ["x", "x", "y"]})
    per_user = prm.list_metrics(
        recs, ["rank_biased_entropy@2"], items=items, category="category", per_user=True
    ).sort("user")
    one = _lenskit_entropy([[1, 0], [1, 0]], [1, 0.85])
    two = _lenskit_entropy([[1, 0], [0, 1]], [1, 0.85])
    # user 3 has nothing within 2: no value (LensKit: NaN), not counted in the mean
    assert per_user.rows() == [
        (1, pytest.approx(one, rel=1e-12)), (2, pytest.approx(two, rel=1e-12))
    ]  # fmt: skip
    mean = prm.list_metrics(recs, ["rank_biased_entropy@2"], items=items, category="category")
    assert mean.item() == pytest.approx((one + two) / 2, rel=1e-12)


def test_lenskit_entropy_uniform_and_partial() -> None:
    # lkpy tests/eval/test_entropy.py test_entropy_uniform: 3 items, 3 categories -> log2(3)
    # (abs 0.02 there); LensKit's Entropy is the weight p = 1
    recs, items = _one_list([["c0"], ["c1"], ["c2"]])
    got = _rbe(recs, items, ["rank_biased_entropy(p=1)"])["rank_biased_entropy(p=1)"]
    assert got == pytest.approx(_lenskit_entropy(np.eye(3).tolist()), rel=1e-13)
    assert got == pytest.approx(math.log2(3), abs=0.02)
    # test_entropy_partial: 4 items alternating 2 categories -> 1.0
    recs, items = _one_list([["c0"], ["c1"], ["c0"], ["c1"]])
    got = _rbe(recs, items, ["rank_biased_entropy(p=1)"])["rank_biased_entropy(p=1)"]
    assert got == pytest.approx(1.0, abs=1e-12)


def test_lenskit_rank_biased_entropy_prefers_early_diversity() -> None:
    # test_rank_biased_entropy: categories spread early beat one category dominating early
    early, items1 = _one_list([["c0"], ["c1"], ["c2"], ["c0"], ["c0"]])
    late, items2 = _one_list([["c0"], ["c0"], ["c0"], ["c1"], ["c2"]])
    result1 = _rbe(early, items1, ["rank_biased_entropy"])["rank_biased_entropy"]
    result2 = _rbe(late, items2, ["rank_biased_entropy"])["rank_biased_entropy"]
    weights = [0.85**r for r in range(5)]
    onehot1 = [[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 0, 0], [1, 0, 0]]
    onehot2 = [[1, 0, 0], [1, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]]
    assert result1 == pytest.approx(_lenskit_entropy(onehot1, weights), rel=1e-13)
    assert result2 == pytest.approx(_lenskit_entropy(onehot2, weights), rel=1e-13)
    assert 0 < result2 < result1 <= math.log2(3)


def test_rank_biased_entropy_counts_every_catalog_category() -> None:
    # the smoothing goes to each category of the catalog, shown or not: more categories in
    # the catalog, a little more entropy for the same list
    recs = pl.DataFrame({"user": [1], "item": ["a"], "rank": [1]})
    small = pl.DataFrame({"item": ["a", "b"], "category": ["x", "y"]})
    large = pl.DataFrame({"item": ["a", "b", "c"], "category": ["x", "y", "z"]})
    label = "rank_biased_entropy"
    assert _rbe(recs, small, [label])[label] == pytest.approx(_lenskit_entropy([[1, 0]]), rel=1e-12)
    assert _rbe(recs, large, [label])[label] == pytest.approx(
        _lenskit_entropy([[1, 0, 0]]), rel=1e-12
    )
    # epsilon=0: the plain entropy of the shown categories (0 for one)
    assert (
        _rbe(recs, large, ["rank_biased_entropy(epsilon=0)"])["rank_biased_entropy(epsilon=0)"]
        == 0.0
    )


def test_entropy_of_exposure_takes_a_patience() -> None:
    # a b | a c at ranks 1, 2: attention a 2, b 0.85, c 0.85 (p = 0.85), S = 3.7
    recs = pl.DataFrame({"user": [1, 1, 2, 2], "item": ["a", "b", "a", "c"], "rank": [1, 2, 1, 2]})
    value = prm.list_metrics(recs, ["entropy(p=0.85)@2", "entropy(p=1)@2", "entropy@2"]).row(
        0, named=True
    )
    shares = [2 / 3.7, 0.85 / 3.7, 0.85 / 3.7]
    assert value["entropy(p=0.85)@2"] == pytest.approx(
        -sum(q * math.log(q) for q in shares), rel=1e-12
    )
    assert value["entropy(p=1)@2"] == value["entropy@2"]


def test_rank_biased_entropy_refuses_bad_parameters() -> None:
    recs = pl.DataFrame({"user": [1], "item": ["a"], "rank": [1]})
    items = pl.DataFrame({"item": ["a"], "category": ["x"]})
    for bad, word in (("p=0", "patience"), ("epsilon=-1", "epsilon"), ("epsilon=inf", "epsilon")):
        with pytest.raises(ValueError, match=word):
            _rbe(recs, items, [f"rank_biased_entropy({bad})"])
    with pytest.raises(ValueError, match="rank_biased_entropy"):
        prm.list_metrics(recs, ["rank_biased_entropy@1"])  # no catalog


def test_entropy_refuses_a_patience_outside_zero_one() -> None:
    recs = pl.DataFrame({"user": [1], "item": [1], "rank": [1]})
    with pytest.raises(ValueError, match="patience"):
        prm.list_metrics(recs, ["entropy(p=0)"])
