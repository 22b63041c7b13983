"""surprisal@k and entropy@k (``_measures/lists/surprisal.py``, ``entropy.py``): worked values.

RePlay's own test values for ``Surprisal`` (its docstring example and
``tests/metrics/test_metrics.py::test_surprisal`` on the data of
``tests/metrics/conftest.py``, github.com/sb-ai-lab/RePlay) are transcribed as
facts; hypothesis-generated cases against the textbook are in
``test_lists_properties.py`` (``tests/textbook_beyond.py``).
"""

from __future__ import annotations

import math

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


def test_rank_biased_entropy_hand_worked() -> None:
    # a b | a c at ranks 1, 2: attention a 2, b 0.85, c 0.85 (p = 0.85), S = 3.7
    recs = pl.DataFrame({"user": [1, 1, 2, 2], "item": ["a", "b", "a", "c"], "rank": [1, 2, 1, 2]})
    value = prm.list_metrics(
        recs, ["rank_biased_entropy@2", "rank_biased_entropy(p=1)@2", "entropy@2"]
    ).row(0, named=True)
    shares = [2 / 3.7, 0.85 / 3.7, 0.85 / 3.7]
    expected = -sum(q * math.log(q) for q in shares)
    assert value["rank_biased_entropy@2"] == pytest.approx(expected, rel=1e-12)
    assert value["rank_biased_entropy(p=1)@2"] == pytest.approx(value["entropy@2"], rel=1e-12)


def test_lenskit_uniform_cases_in_bits() -> None:
    # lenskit tests/eval/test_entropy.py: three items of one category each -> log2(3)
    # (test_entropy_uniform, abs 0.02); here one list of three items, each its own slot
    recs = pl.DataFrame({"user": [1, 1, 1], "item": [1, 2, 3], "rank": [1, 2, 3]})
    value = prm.list_metrics(recs, ["rank_biased_entropy(p=1)", "entropy"])
    assert value["entropy"].item() / math.log(2) == pytest.approx(math.log2(3), rel=1e-12)
    assert value["rank_biased_entropy(p=1)"].item() == value["entropy"].item()


def test_rank_biased_entropy_refuses_a_patience_outside_zero_one() -> None:
    recs = pl.DataFrame({"user": [1], "item": [1], "rank": [1]})
    with pytest.raises(ValueError, match="patience"):
        prm.list_metrics(recs, ["rank_biased_entropy(p=0)"])
