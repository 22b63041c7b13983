"""A repeated item in lists that come in rank order, counted as on any other layout.

Lists that arrive one block each, best first, take the rank-order path
(positions from the row order, no ranking window); a repeat within a list's
top k still takes a slot and must be refused with the whole count. These
tests hold that path to the plain count of repeated (list, item) rows within
each list's top k, at every distance inside a list, and to the general path
on the same rows shuffled; the same item in neighbouring lists or below the
cut is not a repeat.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_rankmetrics as prm
from polars_rankmetrics._row_order import run_lengths_in_rank_order


@st.composite
def ranked_lists(draw: st.DrawFn) -> tuple[pl.DataFrame, int]:
    """Lists one block each in strictly falling scores, items from a small set, and k."""
    rows: list[dict[str, Any]] = []
    for user in draw(st.lists(st.integers(0, 50), min_size=1, max_size=6, unique=True)):
        items = draw(st.lists(st.integers(0, 6), min_size=1, max_size=20))
        rows += [
            {"user": user, "item": item, "score": float(len(items) - place)}
            for place, item in enumerate(items)
        ]
    return pl.DataFrame(rows), draw(st.sampled_from([1, 2, 3, 5, 10, 16, 17, 20]))


def _repeated_rows_in_top(recs: pl.DataFrame, k: int) -> int:
    """Rows within a list's top k whose item occurs more than once in that top k."""
    count = 0
    for (_,), rows in recs.group_by(["user"], maintain_order=True):
        top = Counter(rows.get_column("item").to_list()[:k])
        count += sum(n for n in top.values() if n > 1)
    return count


def _refused_count(call: Any) -> int:
    try:
        call()
    except ValueError as error:
        message = str(error)
    else:
        return 0
    found = re.search(r"recs has (\d+) rows with a duplicated \(user, item\)", message)
    assert found is not None, message
    return int(found.group(1))


@pytest.mark.properties
@settings(max_examples=150, deadline=None)
@given(ranked_lists())
def test_repeats_within_the_top_k_are_counted_exactly(case: tuple[pl.DataFrame, int]) -> None:
    recs, k = case
    assert (
        run_lengths_in_rank_order(recs, keys=["user"], item="item", score="score", ties="item_desc")
        is not None
    ), "the lists must take the rank-order path"
    truth = recs.select("user", "item").unique().head(3)
    expected = _repeated_rows_in_top(recs, k)
    metrics = [f"precision@{k}", f"ndcg@{k}"]
    in_order = _refused_count(lambda: prm.evaluate(recs, truth, metrics, score="score"))
    shuffled = recs.sample(fraction=1.0, shuffle=True, seed=k)
    general = _refused_count(lambda: prm.evaluate(shuffled, truth, metrics, score="score"))
    by_positions = _refused_count(lambda: prm.positions(recs, k, score="score"))
    assert in_order == general == by_positions == expected


@pytest.mark.parametrize("distance", range(1, 10))
def test_a_repeat_at_each_distance_within_the_cut(distance: int) -> None:
    items = list(range(10))
    items[distance] = items[0]  # the top item again, `distance` rows below it
    recs = pl.DataFrame(
        {
            "user": [7] * 10 + [8] * 10,
            "item": items + list(range(10)),
            "score": [10.0 - i for i in range(10)] * 2,
        }
    )
    truth = pl.DataFrame({"user": [7], "item": [3]})
    with pytest.raises(ValueError, match="recs has 2 rows with a duplicated"):
        prm.evaluate(recs, truth, ["ndcg@10"], score="score")


def test_the_same_item_in_neighbouring_lists_or_below_the_cut_is_not_a_repeat() -> None:
    recs = pl.DataFrame(
        {
            # user 1 ends with item 5, user 2 starts with it; user 2 repeats item 9 at 4
            "user": [1, 1, 1, 2, 2, 2, 2],
            "item": [3, 4, 5, 5, 6, 9, 9],
            "score": [3.0, 2.0, 1.0, 4.0, 3.0, 2.0, 1.0],
        }
    )
    truth = pl.DataFrame({"user": [1, 2], "item": [4, 6]})
    got = prm.evaluate(recs, truth, ["precision@3"], score="score")
    assert got.item() == pytest.approx(1 / 3)
