"""Ranks from scores with a cutoff: the score-only ranking and its exact tie fix.

``positions(k=...)`` and ``evaluate`` rank each list by the score alone and
apply the item tie rule only to groups of equal scores that reach the top
k+1; ``duplicates="first"`` ranks again only the lists with a repeat within
the top k. These tests aim at that plan's edge cases (many equal scores
across the cut, every score equal, -0.0 against 0.0, infinities, one-item
lists, repeats with equal scores, several ``by`` groups, lazy and streaming
queries) and check every result against the plain-Python orderings of
``tests/textbook.py``.
"""

from __future__ import annotations

import math
from typing import Any
from unittest.mock import patch

import polars as pl
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

import polars_rankmetrics as prm
from polars_rankmetrics import _validation
from polars_rankmetrics._row_order import run_lengths_in_rank_order
from tests import textbook
from tests.measures.test_properties import PROFILE, assert_rows_match
from tests.pipeline.test_duplicate_search import HASHES

TIES = ["item_desc", "item_asc", "input"]
# value sets for the scores: one value (every score equal), two (long tied runs across
# the cut), and a mix with -0.0 beside 0.0 and both infinities
SCORE_SETS = [
    [1.0],
    [0.0, 1.0],
    [-0.0, 0.0, 2.0],
    [-math.inf, -1.0, -0.0, 0.0, 0.5, 3.0, math.inf],
    [0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 4.0, 8.0],
]
SCORE_DTYPES = [pl.Float64, pl.Float32, pl.Int64]


def _score_values(values: list[float], dtype: pl.DataType) -> list[float]:
    if dtype == pl.Int64:
        # integer scores: no infinities; the float64 cast then ties equal integers
        return [float(int(value)) for value in values if math.isfinite(value)] or [1.0]
    return values


@st.composite
def scored(draw: st.DrawFn) -> dict[str, Any]:
    """Scored lists of one to a dozen rows, repeats when duplicates='first', and the call."""
    duplicates = draw(st.sampled_from(["error", "first"]))
    models = draw(st.sampled_from([[None], ["a"], ["a", "b", "c"]]))
    dtype = draw(st.sampled_from(SCORE_DTYPES))
    values = _score_values(draw(st.sampled_from(SCORE_SETS)), dtype)
    id_kind = draw(st.sampled_from(["int", "str"]))
    # a seeded Random for the shuffle (permutations drawn choice by choice use up the budget)
    shuffle = draw(st.randoms(use_true_random=False)).shuffle
    rows: list[dict[str, Any]] = []
    for model in models:
        for user in range(draw(st.integers(1, 3))):
            length = draw(st.integers(1, 12))
            # a small item pool makes repeats common under "first"
            pool = draw(st.integers(2, 14)) if duplicates == "first" else 14
            items = draw(
                st.lists(
                    st.integers(0, pool - 1),
                    min_size=1,
                    max_size=length,
                    unique=duplicates == "error",
                )
            )
            for item in items:
                row = {
                    "user": user,
                    "item": item if id_kind == "int" else f"i{item:02d}",
                    "score": draw(st.sampled_from(values)),
                }
                if model is not None:
                    row["model"] = model
                rows.append(row)
    shuffle(rows)
    schema: dict[str, pl.DataType] = {
        "user": pl.Int64(),
        "item": pl.Int64() if id_kind == "int" else pl.String(),
        # integer scores are built as floats, then cast
        "score": pl.Float64() if dtype == pl.Int64 else dtype,
    }
    if models != [None]:
        schema["model"] = pl.String()
    frame = pl.DataFrame(rows, schema=schema, orient="row").with_row_index("row")
    if dtype == pl.Int64:
        frame = frame.with_columns(pl.col("score").cast(pl.Int64))
    return {
        "recs": frame,
        "by": "model" if models != [None] else None,
        "k": draw(st.integers(1, 8)),
        "ties": draw(st.sampled_from(TIES)),
        "duplicates": duplicates,
        "lazy": draw(st.sampled_from(["eager", "lazy", "streaming"])),
    }


def _lists(recs: pl.DataFrame, by: str | None) -> dict[tuple[Any, ...], list[dict[str, Any]]]:
    lists: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for row in recs.to_dicts():
        key = (row["model"] if by else None, row["user"])
        lists.setdefault(key, []).append(row)
    return lists


def _expected_top(case: dict[str, Any]) -> dict[tuple[Any, ...], tuple[int, float]] | None:
    """(model, user, item) -> (position, score of the row kept) within k; None: refused.

    The textbook orders each list; with duplicates="error" a repeat within the
    top k is refused (a repeat below it changes nothing there), with "first"
    each item keeps its best position and the list is re-numbered.
    """
    expected: dict[tuple[Any, ...], tuple[int, float]] = {}
    for key, rows in _lists(case["recs"], case["by"]).items():
        pairs = [(row["item"], row["score"]) for row in rows]
        best = {}
        for item, score in pairs:
            best[item] = max(best.get(item, -math.inf), float(score))
        ordered = textbook.rank_items(pairs, case["ties"])
        if case["duplicates"] == "first":
            positions = textbook.positions_from_scores(pairs, case["ties"], "first")
        else:
            top = ordered[: case["k"]]
            if len(set(top)) < len(top):
                return None
            positions = {item: n for n, item in enumerate(top, start=1)}
        for item, position in positions.items():
            if position <= case["k"]:
                expected[(*key, item)] = (position, best[item])
    return expected


def _run(case: dict[str, Any], call: Any) -> pl.DataFrame:
    recs = case["recs"]
    if case["lazy"] == "eager":
        result = call(recs)
        assert isinstance(result, pl.DataFrame)
        return result
    query = call(recs.lazy())
    assert isinstance(query, pl.LazyFrame)
    engine = "streaming" if case["lazy"] == "streaming" else "auto"
    return query.collect(engine=engine)


@PROFILE
@given(scored())
@example(  # every score equal, a list longer than the cut, several models
    {
        "recs": pl.DataFrame(
            {
                "model": ["a"] * 5 + ["b"] * 2,
                "user": [1] * 7,
                "item": [3, 1, 4, 5, 2, 1, 2],
                "score": [1.0] * 7,
            }
        ).with_row_index("row"),
        "by": "model",
        "k": 2,
        "ties": "item_desc",
        "duplicates": "error",
        "lazy": "eager",
    }
)
def test_positions_within_k_match_the_textbook(case: dict[str, Any]) -> None:
    _assert_positions_match_the_textbook(case)


@PROFILE
@given(scored(), st.sampled_from(["colliding", "constant"]))
def test_positions_within_k_match_the_textbook_when_hashes_collide(
    case: dict[str, Any], hashing: str
) -> None:
    # the tie groups within k+1 are marked by a hash of (list, score): a row marked by a
    # collision alone is a group of its own and keeps its position
    with patch.object(_validation, "_key_hash", HASHES[hashing]):
        _assert_positions_match_the_textbook(case)


def _assert_positions_match_the_textbook(case: dict[str, Any]) -> None:
    def call(frame: Any) -> Any:
        return prm.positions(
            frame,
            case["k"],
            score="score",
            ties=case["ties"],
            duplicates=case["duplicates"],
            by=case["by"],
        )

    expected = _expected_top(case)
    if expected is None:
        with pytest.raises(ValueError, match="duplicated"):
            _run(case, call)
        return
    got = _run(case, call)
    by = case["by"]
    found = {
        (row["model"] if by else None, row["user"], row["item"]): (row["rank"], row["score"])
        for row in got.to_dicts()
    }
    assert len(found) == got.height, "an item twice in one list's top k"
    assert {key: (position, float(score)) for key, (position, score) in found.items()} == expected
    # the rows are the input's, in the input's order
    assert got.get_column("row").to_list() == sorted(got.get_column("row").to_list())
    assert got.schema["rank"] == pl.UInt32


@st.composite
def judged(draw: st.DrawFn) -> dict[str, Any]:
    case = draw(scored())
    users = case["recs"].get_column("user").unique().to_list()
    items = case["recs"].get_column("item").unique().to_list()
    truth = [
        {"user": user, "item": item}
        for user in users
        for item in draw(st.lists(st.sampled_from(items), max_size=4, unique=True))
    ]
    case["truth"] = pl.DataFrame(
        truth, schema={"user": pl.Int64, "item": case["recs"].schema["item"]}, orient="row"
    )
    return case


@PROFILE
@given(judged())
def test_evaluate_matches_the_textbook(case: dict[str, Any]) -> None:
    k = case["k"]
    metrics = [f"map@{k}", f"ndcg@{k}", f"mrr@{k}", f"precision@{k}", f"recall@{k}"]
    recs = case["recs"].drop("row")
    expected_top = _expected_top(case)

    def call(frame: Any) -> Any:
        truth = case["truth"].lazy() if isinstance(frame, pl.LazyFrame) else case["truth"]
        return prm.evaluate(
            frame.drop("row"),
            truth,
            metrics,
            score="score",
            ties=case["ties"],
            duplicates=case["duplicates"],
            by=case["by"],
            per_user=True,
        )

    if expected_top is None:
        with pytest.raises(ValueError, match="duplicated"):
            _run(case, call)
        return
    got = _run(case, call)
    # "error" lists hold no repeat here; "first": the textbook drops repeats itself
    expected = textbook.evaluate(
        recs.to_dicts(),
        case["truth"].to_dicts(),
        case["truth"].columns,
        metrics,
        score="score",
        ties=case["ties"],
        duplicates=case["duplicates"],
        by=[case["by"]] if case["by"] else [],
        per_user=True,
    )
    assert_rows_match(got, expected, metrics)


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("where", [0, 5])
def test_nan_is_refused_inside_and_below_the_cut(*, lazy: bool, where: int) -> None:
    scores = [6.0, 5.0, 4.0, 3.0, 2.0, 1.0]
    scores[where] = math.nan
    recs = pl.DataFrame({"user": [1] * 6, "item": [1, 2, 3, 4, 5, 6], "score": scores})
    truth = pl.DataFrame({"user": [1], "item": [2]})
    frame: Any = recs.lazy() if lazy else recs

    def positions() -> Any:
        result = prm.positions(frame, 2, score="score")
        return result.collect() if lazy else result

    def evaluate() -> Any:
        result = prm.evaluate(frame, truth.lazy() if lazy else truth, ["map@2"], score="score")
        return result.collect() if lazy else result

    with pytest.raises(ValueError, match="NaN"):
        positions()
    with pytest.raises(ValueError, match="NaN"):
        evaluate()


def test_a_tied_group_across_the_cut_by_hand() -> None:
    # scores 3, 2, 2, 2, 2, 1: the group of 2s takes positions 2..5. With k = 2 the
    # cut at k+1 = 3 holds two of its rows; the item rule picks the group's first from
    # all four, here the largest id 9, which the score-only order put at position 5
    recs = pl.DataFrame(
        {"user": [1] * 6, "item": [5, 7, 4, 2, 9, 1], "score": [3.0, 2.0, 2.0, 2.0, 2.0, 1.0]}
    )
    got = prm.positions(recs, 2, score="score")
    assert got.select("item", "rank").rows() == [(5, 1), (9, 2)]
    # item ascending: 2 then 4 (rows in the input's order)
    got = prm.positions(recs, 3, score="score", ties="item_asc")
    assert got.select("item", "rank").rows() == [(5, 1), (4, 3), (2, 2)]
    # the input's order: 7 then 4
    got = prm.positions(recs, 3, score="score", ties="input")
    assert got.select("item", "rank").rows() == [(5, 1), (7, 2), (4, 3)]


@pytest.mark.parametrize("ties", TIES)
def test_negative_zero_ties_with_zero(ties: str) -> None:
    # -0.0 and 0.0 are one score: under "input" the row that comes first takes the better
    # position, under the item rules the item decides; the reversed rows take the ranking path
    recs = pl.DataFrame({"user": [1] * 4, "item": [3, 8, 5, 1], "score": [-0.0, 0.0, -0.0, -1.0]})
    expected = {"input": [3, 8, 5], "item_desc": [8, 5, 3], "item_asc": [3, 5, 8]}[ties]
    for frame in (recs, recs.reverse()):
        got = prm.positions(frame, 3, score="score", ties=ties).sort("rank")
        order = expected if ties != "input" or frame is recs else [5, 8, 3]
        assert got.get_column("item").to_list() == order


def test_repeats_first_with_equal_scores_by_hand() -> None:
    # item 4 twice at score 2 and once at 1; item 8 at 2. "first": 8, 4 (one row) at
    # 1 and 2 under item_desc, then 3 moves up from position 5 to 3
    recs = pl.DataFrame(
        {"user": [1] * 5, "item": [4, 8, 4, 4, 3], "score": [2.0, 2.0, 2.0, 1.0, 0.5]}
    )
    got = prm.positions(recs, 3, score="score", duplicates="first")
    assert got.select("item", "rank").rows() == [(4, 2), (8, 1), (3, 3)]
    with pytest.raises(ValueError, match="duplicated"):
        prm.positions(recs, 3, score="score")
    # a repeat below the cut changes nothing within it: accepted
    got = prm.positions(recs.filter(pl.col("score") != 1.0).head(3), 1, score="score")
    assert got.select("item", "rank").rows() == [(8, 1)]


def test_rank_order_probe_beyond_its_first_rows() -> None:
    # the probe looks at the first 4096 rows first: lists in rank order past them are
    # still found, and a list out of order or split after them still sends the frame
    # down the general ranking
    n = 6000
    ordered = pl.DataFrame(
        {"user": [u // 3 for u in range(n)], "item": [u % 3 for u in range(n)]}
    ).with_columns(score=3.0 - pl.col("item"))
    lengths = run_lengths_in_rank_order(
        ordered, keys=["user"], item="item", score="score", ties="item_desc"
    )
    assert lengths is not None
    assert lengths.to_list() == [3] * (n // 3)
    late_swap = ordered.with_columns(
        pl.when(pl.int_range(pl.len()) == n - 1).then(9.0).otherwise(pl.col("score")).alias("score")
    )
    split = pl.concat([ordered, ordered.head(1)])
    many_users = ordered.sample(fraction=1.0, shuffle=True, seed=0)
    for frame in (late_swap, split, many_users):
        assert (
            run_lengths_in_rank_order(
                frame, keys=["user"], item="item", score="score", ties="input"
            )
            is None
        )
    # the same positions either way
    expected = prm.positions(ordered.lazy(), 2, score="score").collect().sort("user", "rank")
    got = prm.positions(late_swap, 2, score="score").sort("user", "rank")
    assert got.head(got.height - 2).equals(expected.head(got.height - 2))
