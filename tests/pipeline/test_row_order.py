"""Positions from the row order: the fast path for lists that come in rank order.

The probe is checked against a plain Python reading of its definition, and the
positions it allows against the general ranking window (a lazy frame always
takes the window), on layouts that are in rank order, nearly so, or shuffled.
"""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polars_rankmetrics as prm
from polars_rankmetrics._row_order import run_lengths_in_rank_order
from tests.measures.test_properties import PROFILE

TIES = ["item_desc", "item_asc", "input"]


def in_order(above: dict[str, Any], below: dict[str, Any], ties: str) -> bool:
    """Whether ``below`` may follow ``above`` in one list: METRICS.md's tie rules."""
    if above["score"] != below["score"]:
        return float(above["score"]) > float(below["score"])
    if ties == "input":
        return True
    return above["item"] > below["item"] if ties == "item_desc" else above["item"] < below["item"]


def reference(rows: list[dict[str, Any]], keys: list[str], ties: str) -> bool:
    seen: set[tuple[Any, ...]] = set()
    previous: dict[str, Any] | None = None
    for row in rows:
        key = tuple(row[name] for name in keys)
        if previous is not None and key == tuple(previous[name] for name in keys):
            if not in_order(previous, row, ties):
                return False
        elif key in seen:
            return False  # the list started before: it is not one block
        seen.add(key)
        previous = row
    return True


def sort_key(row: dict[str, Any], ties: str) -> tuple[Any, ...]:
    # descending score; then the tie rule (input: a stable sort keeps the row order)
    if ties == "input" or isinstance(row["item"], str):
        return (-float(row["score"]),)
    return (-float(row["score"]), -row["item"] if ties == "item_desc" else row["item"])


@st.composite
def layouts(draw: st.DrawFn) -> tuple[pl.DataFrame, list[str], str]:
    ties = draw(st.sampled_from(TIES))
    keys = draw(st.sampled_from([["user"], ["model", "user"]]))
    string_items = draw(st.booleans())
    rows: list[dict[str, Any]] = []
    for model in ["a", "b"] if "model" in keys else ["a"]:
        for user in range(draw(st.integers(0, 4))):
            items = draw(st.lists(st.integers(0, 9), min_size=1, max_size=7, unique=True))
            lst = [
                {
                    "model": model,
                    "user": user,
                    "item": f"i{item}" if string_items else item,
                    "score": draw(st.sampled_from([-1.0, -0.0, 0.0, 0.5, 1.0, 2.0])),
                }
                for item in items
            ]
            lst.sort(key=lambda row: sort_key(row, ties))
            if string_items and ties != "input":
                # strings: order the ties by item with a second stable sort
                lst.sort(key=lambda row: row["item"], reverse=ties == "item_desc")
                lst.sort(key=lambda row: -float(row["score"]))
            rows.extend(lst)
    shuffle = draw(st.randoms(use_true_random=False))
    layout = draw(st.sampled_from(["in rank order", "two rows swapped", "shuffled"]))
    if layout == "two rows swapped" and len(rows) > 1:
        i = shuffle.randrange(len(rows) - 1)
        rows[i], rows[i + 1] = rows[i + 1], rows[i]
    elif layout == "shuffled":
        shuffle.shuffle(rows)
    schema = {
        "model": pl.String,
        "user": pl.Int64,
        "item": pl.String if string_items else pl.Int64,
        "score": pl.Float64,
    }
    frame = pl.DataFrame(rows, schema=schema).select(*keys, "item", "score")
    return frame, keys, ties


@PROFILE
@given(layouts())
def test_probe_matches_its_definition(case: tuple[pl.DataFrame, list[str], str]) -> None:
    frame, keys, ties = case
    expected = reference(frame.to_dicts(), keys, ties)
    got = run_lengths_in_rank_order(frame, keys=keys, item="item", score="score", ties=ties)  # type: ignore[arg-type]
    assert (got is not None) is expected
    if got is not None:
        # the lengths of the lists, in the order they come
        runs = frame.with_row_index().group_by(keys, maintain_order=True).len()
        assert got.to_list() == runs["len"].to_list()


@PROFILE
@given(layouts(), st.sampled_from([None, 1, 3]))
def test_positions_from_the_row_order_match_the_ranking_window(
    case: tuple[pl.DataFrame, list[str], str], k: int | None
) -> None:
    frame, keys, ties = case
    by = [key for key in keys if key != "user"] or None
    kwargs: dict[str, Any] = {"score": "score", "ties": ties, "by": by}
    eager = frame.rank.positions(k, **kwargs)  # the row order where it allows
    window = frame.lazy().rank.positions(k, **kwargs).collect()  # always the window
    assert_frame_equal(eager, window)
    truth = frame.select("user", "item").unique(maintain_order=True).head(5)
    metrics = ["map@3", "ndcg@2", "mrr", "precision@1"]
    assert_frame_equal(
        prm.evaluate(frame, truth, metrics, per_user=True, **kwargs),
        prm.evaluate(frame.lazy(), truth, metrics, per_user=True, **kwargs).collect(),
    )


def test_lists_in_rank_order_are_recognised_by_hand() -> None:
    recs = pl.DataFrame(
        {
            "user": [1, 1, 1, 2, 2],
            "item": [4, 9, 2, 7, 1],
            "score": [0.9, 0.5, 0.5, 3.0, -0.0],
        }
    )

    def probe(frame: pl.DataFrame, ties: str = "item_desc") -> bool:
        found = run_lengths_in_rank_order(
            frame,
            keys=["user"],
            item="item",
            score="score",
            ties=ties,  # type: ignore[arg-type]
        )
        return found is not None

    assert probe(recs)  # the tie 0.5 has item 9 before item 2: item_desc
    assert not probe(recs, "item_asc")
    assert probe(recs, "input")
    # user 1 again after user 2: not one block
    assert not probe(pl.concat([recs, recs.head(1).with_columns(item=pl.lit(5, dtype=pl.Int64))]))
    # a score that rises within a list
    assert not probe(recs.with_columns(score=pl.Series([0.9, 0.5, 0.6, 3.0, 0.0])))
    # -0.0 and 0.0 tie (as in the ranking), so the item order decides
    tied_zeros = pl.DataFrame({"user": [1, 1], "item": [1, 2], "score": [0.0, -0.0]})
    assert not probe(tied_zeros)
    assert probe(tied_zeros, "item_asc")
    # null and NaN scores: the general ranking runs (and the data checks refuse them)
    for odd in (None, float("nan")):
        assert not probe(recs.with_columns(score=pl.Series([0.9, odd, 0.5, 3.0, 0.0])))
    assert probe(recs.head(0))


@pytest.mark.parametrize("engine", ["in-memory", "streaming"])
def test_positions_from_the_row_order_across_chunks(engine: str) -> None:
    # a frame of many chunks whose lists straddle chunk borders: positions count on
    rows = pl.DataFrame(
        {
            "user": [u for u in range(300) for _ in range(7)],
            "item": [i for _ in range(300) for i in range(7)],
            "score": [7.0 - i for _ in range(300) for i in range(7)],
        }
    )
    chunked = pl.concat(
        [rows.slice(start, 101) for start in range(0, rows.height, 101)], rechunk=False
    )
    assert chunked.n_chunks() > 1
    window = chunked.lazy().rank.positions(score="score").collect(engine=engine)  # type: ignore[call-overload]
    assert_frame_equal(chunked.rank.positions(score="score"), window)
    assert window["rank"].to_list() == [i + 1 for _ in range(300) for i in range(7)]


@pytest.mark.parametrize(
    "dtype", [pl.String(), pl.Categorical(), pl.Enum(["a", "b", "c"]), pl.Enum(["c", "b", "a"])]
)
def test_probe_orders_text_ids_by_their_text_whatever_the_dtype(dtype: pl.DataType) -> None:
    # tied scores, items c, b, a: the item_desc order of their text, for every text dtype
    recs = pl.DataFrame(
        {"user": [1, 1, 1], "item": pl.Series(["c", "b", "a"]).cast(dtype), "score": 1.0}
    )
    lengths = run_lengths_in_rank_order(
        recs, keys=["user"], item="item", score="score", ties="item_desc"
    )
    assert lengths is not None
    assert lengths.to_list() == [3]
    reverse = run_lengths_in_rank_order(
        recs, keys=["user"], item="item", score="score", ties="item_asc"
    )
    assert reverse is None
