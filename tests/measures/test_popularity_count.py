"""``popularity=users|interactions``: what c_i and N count for novelty, arp and long_tail.

RecTools' ``AvgRecPopularity`` counts interaction rows per item (``arp`` with
``popularity=interactions``); recommenders' ``novelty`` divides an item's
rows by all rows (``novelty(popularity=interactions)``). The default,
distinct users, is METRICS.md's definition.
"""

from __future__ import annotations

import math

import polars as pl
import pytest

import polars_rankmetrics as prm

# RecTools' own test case (tests/metrics/test_popularity.py, TestAvgRecPopularity)
RECTOOLS_HISTORY = {
    "user": ["u1", "u1", "u2", "u2", "u3", "u3"],
    "item": ["i1", "i2", "i1", "i3", "i1", "i2"],
}
RECTOOLS_RECS = {
    "user": ["u1", "u1", "u2", "u2", "u2", "u3", "u3"],
    "item": ["i1", "i2", "i3", "i1", "i2", "i3", "i2"],
    "rank": [1, 2, 1, 2, 3, 1, 2],
}


@pytest.mark.parametrize(
    ("k", "per_user"), [(1, [3.0, 1.0, 1.0]), (3, [2.5, 2.0, 1.5])], ids=["k1", "k3"]
)
def test_rectools_pinned_values(k: int, per_user: list[float]) -> None:
    # RecTools' expected values for its own case; its history has no repeated row, so
    # distinct users and interaction rows agree here
    recs, history = pl.DataFrame(RECTOOLS_RECS), pl.DataFrame(RECTOOLS_HISTORY)
    for count in ("users", "interactions"):
        label = f"arp(popularity={count})@{k}"
        rows = prm.evaluate(recs, None, [label], interactions=history, per_user=True)
        assert rows.sort("user")[label].to_list() == per_user
        mean = prm.evaluate(recs, None, [label], interactions=history)
        assert mean.item() == pytest.approx(sum(per_user) / 3, abs=1e-15)


def test_rectools_new_item_counts_zero() -> None:
    # RecTools' test_when_new_item_in_reco: i4 has no interaction, c = 0
    recs = pl.DataFrame(RECTOOLS_RECS).with_columns(
        pl.when((pl.col("user") == "u2") & (pl.col("rank") == 3))
        .then(pl.lit("i4"))
        .otherwise(pl.col("item"))
        .alias("item")
    )
    label = "arp(popularity=interactions)@3"
    result = prm.evaluate(
        recs, None, [label], interactions=pl.DataFrame(RECTOOLS_HISTORY), per_user=True
    )
    assert result.sort("user")[label].to_list() == pytest.approx([2.5, 4 / 3, 1.5], abs=1e-15)


# repeated interaction rows: c_i by distinct users (a: 2, b: 2, c: 1, d: 2) and by rows
# (a: 3, b: 3, c: 1, d: 3). Four lists of two: Σ over their 8 rows of c_i is 15 (users)
# or 22 (rows), so the mean over users of the per-list means is 15/8 or 22/8
HISTORY = {
    "user": ["h1", "h1", "h2", "h1", "h2", "h2", "h3", "h1", "h3", "h3"],
    "item": ["a", "a", "a", "b", "b", "b", "c", "d", "d", "d"],
}
RECS = {
    "user": ["u1", "u1", "u2", "u2", "u3", "u3", "u4", "u4"],
    "item": ["a", "b", "a", "c", "b", "d", "a", "d"],
    "rank": [1, 2] * 4,
}


def _rows_per_item_mean(recs: dict[str, list[object]], history: dict[str, list[str]]) -> float:
    """AvgRecPopularity as RecTools defines it: mean over users of the mean of rows per item."""
    rows: dict[str, int] = {}
    for item in history["item"]:
        rows[item] = rows.get(item, 0) + 1
    lists: dict[object, list[int]] = {}
    for user, item in zip(recs["user"], recs["item"], strict=True):
        lists.setdefault(user, []).append(rows.get(str(item), 0))
    return sum(sum(values) / len(values) for values in lists.values()) / len(lists)


def test_arp_counts_users_by_default_and_rows_on_request() -> None:
    recs, history = pl.DataFrame(RECS), pl.DataFrame(HISTORY)
    result = prm.evaluate(
        recs,
        None,
        ["arp@2", "arp(popularity=users)@2", "arp(popularity=interactions)@2"],
        interactions=history,
    )
    assert result.row(0) == (1.875, 1.875, 2.75)
    assert _rows_per_item_mean(RECS, HISTORY) == 2.75
    # the same through list_metrics and curves
    listed = prm.list_metrics(recs, ["arp(popularity=interactions)@2"], interactions=history)
    assert listed.item() == 2.75
    drawn = prm.curves(
        recs, None, ["arp(popularity=interactions)", "arp"], k=[1, 2], interactions=history
    )
    at_two = drawn.filter(pl.col("k") == 2).sort("metric")["value"].to_list()
    assert at_two == [1.875, 2.75]


def test_novelty_counts_rows_as_recommenders_does() -> None:
    # recommenders: -log2(count_i / n_records), weighted by recommendations; equal list
    # lengths make that the mean over users of the per-list means
    recs, history = pl.DataFrame(RECS), pl.DataFrame(HISTORY)
    rows = {"a": 3, "b": 3, "c": 1, "d": 3}
    total = len(HISTORY["item"])
    expected = sum(-math.log2(rows[str(item)] / total) for item in RECS["item"]) / 8
    label = "novelty(popularity=interactions)@2"
    result = prm.evaluate(recs, None, [label, "novelty@2"], interactions=history)
    assert result[label].item() == pytest.approx(expected, rel=1e-12)
    users = {"a": 2, "b": 2, "c": 1, "d": 2}
    by_users = sum(-math.log2(users[str(item)] / 3) for item in RECS["item"]) / 8
    assert result["novelty@2"].item() == pytest.approx(by_users, rel=1e-12)


def test_long_tail_head_by_rows() -> None:
    # by rows (a 3, b 3, d 3, c 1; 10 in all) the head at share 0.5 is a, b (the sum before
    # b is 3 < 5, before d 6 >= 5); by users (a 2, b 2, d 2, c 1; 7) it is a, b too (2 < 3.5,
    # 4 >= 3.5). At share 0.3: rows a alone (before b: 3 >= 3); users a, b (2 < 2.1)
    recs, history = pl.DataFrame(RECS), pl.DataFrame(HISTORY)
    result = prm.evaluate(
        recs,
        None,
        ["long_tail(head_share=0.3)@2", "long_tail(head_share=0.3, popularity=interactions)@2"],
        interactions=history,
    )
    # outside the head: by users c, d (lists 2, 3, 4: 1/2 each; list 1: 0) = 3/8;
    # by rows b, c, d: list 1 1/2, list 2 1/2, list 3 1, list 4 1/2 = 5/8
    assert result.row(0) == (0.375, 0.625)


def test_an_unknown_choice_is_refused() -> None:
    with pytest.raises(ValueError, match=r"must be one of \['users', 'interactions'\], got 'rows'"):
        prm.evaluate(pl.DataFrame(RECS), None, ["novelty(popularity=rows)@2"])
