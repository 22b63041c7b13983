"""Checks on rows in no fixed order name the same example row in every run.

With given ranks, repeated relevant items and two relevant items at one
position are searched on the hit rows, a join's output in no fixed order; the
example shown is the offending row that comes first in the recommendations'
cut (``_pipeline.checks.hit_checks``). With ranks from scores, the top k of a ranking
comes in no fixed order either: a repeated item's example is the offending
row of the first list by key at its best position, in every layout of the
rows (``_pipeline.checks.list_checks(by_position=True)``).
"""

from __future__ import annotations

import re

import polars as pl
import pytest

import polars_rankmetrics as prm

N_USERS = 20_000


def _frames(*, position: bool) -> tuple[pl.DataFrame, pl.DataFrame]:
    users = list(range(N_USERS))
    recs = pl.DataFrame(
        {
            "user": [u for u in users for _ in range(3)],
            "item": [u * 10 + j for u in users for j in range(3)],
            "rank": [j + 1 for _ in users for j in range(3)],
        }
    )
    truth = pl.DataFrame({"user": users, "item": [u * 10 for u in users]})
    # two offending lists; user 15000's comes first in the frame, user 17's later
    late, early = 17, 15000
    if position:
        # a second relevant item at position 1 (its rank-2 row, made relevant)
        recs = recs.with_columns(
            pl.when(pl.col("user").is_in([late, early]) & (pl.col("rank") == 2))
            .then(1)
            .otherwise(pl.col("rank"))
            .alias("rank")
        )
        extra = pl.DataFrame({"user": [late, early], "item": [late * 10 + 1, early * 10 + 1]})
        truth = pl.concat([truth, extra])
    else:
        # the relevant item again at rank 3
        recs = recs.with_columns(
            pl.when(pl.col("user").is_in([late, early]) & (pl.col("rank") == 3))
            .then(pl.col("user") * 10)
            .otherwise(pl.col("item"))
            .alias("item")
        )
    order = pl.when(pl.col("user") == early).then(-1).otherwise(pl.col("user"))
    return recs.sort(order, "rank", maintain_order=True), truth


def _message(recs: pl.DataFrame | pl.LazyFrame, truth: pl.DataFrame | pl.LazyFrame) -> str:
    def run() -> None:
        result = prm.evaluate(recs, truth, ["map@3", "ndcg@3"])
        if isinstance(result, pl.LazyFrame):  # lazy in, lazy out: the checks run on collect
            result.collect()

    with pytest.raises(ValueError, match="recs has 4 rows") as caught:
        run()
    return str(caught.value)


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize(
    "position", [False, True], ids=["repeated relevant item", "two relevant at one position"]
)
def test_example_is_the_offending_row_first_in_the_cut(lazy: bool, position: bool) -> None:
    recs, truth = _frames(position=position)
    messages = {
        _message(recs.lazy() if lazy else recs, truth.lazy() if lazy else truth) for _ in range(8)
    }
    assert len(messages) == 1
    (text,) = messages
    assert re.search(r"example row: user=15000, item=150000, rank=1\b", text), text


def test_a_repeat_ranked_from_scores_names_one_example_in_every_layout() -> None:
    # ranks from scores: lists in rank order take positions from the row order, other
    # layouts a ranking whose top k comes in no fixed order; each names the offending row
    # of the first list by key (user 3, not user 8 that comes first) at its best position
    recs = pl.DataFrame(
        {
            "user": [8, 8, 8, 3, 3, 3],
            "item": [5, 6, 6, 7, 7, 9],
            "score": [0.9, 0.8, 0.7, 0.6, 0.5, 0.4],
        }
    )
    truth = pl.DataFrame({"user": [8, 3], "item": [5, 9]})
    layouts = [
        lambda: prm.evaluate(recs, truth, ["ndcg@3"], score="score"),
        lambda: prm.evaluate(recs.reverse(), truth, ["ndcg@3"], score="score"),
        lambda: prm.evaluate(recs.lazy(), truth, ["ndcg@3"], score="score").collect(),
        lambda: prm.evaluate(
            recs.sample(fraction=1.0, shuffle=True, seed=4), truth, ["ndcg@3"], score="score"
        ),
    ]
    messages = set()
    for call in layouts:
        with pytest.raises(ValueError, match="duplicated") as refused:
            call()
        messages.add(re.sub(r"\s+", " ", str(refused.value)))
    assert len(messages) == 1
    assert "example row: user=3, item=7, rank=1" in messages.pop()
