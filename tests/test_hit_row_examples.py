"""The hit-row checks name the same example row in every run.

With given ranks, repeated relevant items and two relevant items at one
position are searched on the hit rows, a join's output in no fixed order; the
example shown is the offending row that comes first in the recommendations'
cut (``ranking.hit_checks``).
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
