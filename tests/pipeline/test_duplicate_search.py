"""The exact duplicate search runs only on the rows whose key hash repeats.

A duplicate check screens a frame with 64-bit hashes of its keys; when the
screen fires, the exact search (a struct of the keys, repeated) runs on the
rows whose hash repeats, not on every row (``DataCheck.search``; frames in
memory: one sort of the hashes screens and finds the repeated ones). These
tests hold it to the whole-frame search: the same count and the same example
row, in memory and, for comparison, on a lazy frame (whose search still runs
over every row behind the screen), also when the hash is replaced by one
under which distinct keys collide: a collision must never be reported.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any
from unittest.mock import patch

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polars_rankmetrics as prm
from polars_rankmetrics import _validation
from polars_rankmetrics._row_order import run_cut, run_positions

REAL_HASH = _validation._key_hash


def _colliding_hash(keys: Sequence[str]) -> pl.Expr:
    # 2 values for every key: distinct keys share a hash all the time
    return REAL_HASH(keys) % 2


def _constant_hash(keys: Sequence[str]) -> pl.Expr:
    return REAL_HASH(keys) * 0


HASHES: dict[str, Callable[[Sequence[str]], pl.Expr]] = {
    "real": REAL_HASH,
    "colliding": _colliding_hash,
    "constant": _constant_hash,
}
SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _exact(
    frame: pl.DataFrame, keys: list[str], show: list[str]
) -> tuple[int, dict[str, Any] | None]:
    """The whole-frame search: the number of repeated rows and the first of them."""
    repeated = frame.filter(pl.struct(keys).is_duplicated())
    return repeated.height, (repeated.select(show).row(0, named=True) if repeated.height else None)


def _summarised(
    frame: pl.DataFrame, check: _validation.DataCheck, *, lazy: bool, engine: str
) -> tuple[int, dict[str, Any] | None]:
    source = frame.lazy()
    if lazy:
        # a lazy query rather than a frame in memory: the plan the streaming screen gets
        source = source.select(pl.all())
    row = _validation.summary(source, [check]).collect(engine=engine)  # type: ignore[call-overload]
    count = row["__prm_check_0_n"].item() if row.height else 0
    example = row["__prm_check_0_row"].item() if count else None
    return count, example


@SETTINGS
@given(
    st.lists(st.tuples(st.integers(0, 3), st.integers(0, 4), st.integers(0, 99)), max_size=30),
    st.sampled_from(list(HASHES)),
    st.booleans(),
    st.sampled_from(["in-memory", "streaming"]),
)
def test_the_narrowed_search_finds_what_the_whole_frame_search_finds(
    rows: list[tuple[int, int, int]], hashing: str, in_memory: bool, engine: str
) -> None:
    frame = pl.DataFrame(rows, schema=["user", "item", "payload"], orient="row")
    keys, show = ["user", "item"], ["user", "item", "payload"]
    with patch.object(_validation, "_key_hash", HASHES[hashing]):
        check = _validation.duplicate_check("recs", keys, show, hint="", in_memory=in_memory)
    got = _summarised(frame, check, lazy=not in_memory, engine=engine)
    assert got == _exact(frame, keys, show)


def test_a_collision_alone_is_never_reported() -> None:
    # every key distinct, every hash equal: the screen fires, the exact search clears it
    frame = pl.DataFrame({"user": [1, 1, 2, 2], "item": [1, 2, 1, 2]})
    for in_memory in (True, False):
        with patch.object(_validation, "_key_hash", _constant_hash):
            check = _validation.duplicate_check(
                "recs", ["user", "item"], ("user", "item"), hint="", in_memory=in_memory
            )
        assert frame.select(check.screen).item() is True
        assert _summarised(frame, check, lazy=not in_memory, engine="streaming") == (0, None)


def test_a_repeat_far_down_a_large_frame_is_found_with_its_first_row() -> None:
    # one repeat among 20,000 rows: the count and the example are the whole frame's
    n = 20_000
    frame = pl.DataFrame(
        {"user": pl.int_range(n, eager=True) // 10, "item": pl.int_range(n, eager=True)}
    )
    frame = pl.concat([frame, frame.slice(12_345, 1)])
    for in_memory in (True, False):
        check = _validation.duplicate_check(
            "recs", ["user", "item"], ("user", "item"), hint="", in_memory=in_memory
        )
        assert _summarised(frame, check, lazy=not in_memory, engine="streaming") == (
            2,
            {"user": 1234, "item": 12_345},
        )


@pytest.mark.parametrize("engine", ["streaming", "in-memory"])
def test_the_search_sees_every_row_of_a_frame_in_many_chunks(engine: str) -> None:
    # the repeat's two rows lie in the first and the last of 40 chunks (many morsels):
    # the search must look at the whole hash column at once, as the screen does
    n = 400_000
    rows = pl.DataFrame({"user": pl.int_range(n, eager=True), "item": pl.int_range(n, eager=True)})
    rows = pl.concat([rows, rows.head(1)], rechunk=False)
    chunked = pl.concat(
        [rows.slice(at, 10_000) for at in range(0, rows.height, 10_000)], rechunk=False
    )
    assert chunked.n_chunks() > 40
    check = _validation.duplicate_check(
        "recs", ["user", "item"], ("user", "item"), hint="", in_memory=True
    )
    assert _summarised(chunked, check, lazy=False, engine=engine) == (2, {"user": 0, "item": 0})


def _message(call: Callable[[], object]) -> str | None:
    try:
        call()
    except ValueError as error:
        return str(error)
    return None


RECS = pl.DataFrame(
    {
        "user": [1, 1, 1, 1, 2, 2, 2],
        "item": [10, 11, 12, 13, 10, 14, 15],
        "rank": [1, 2, 3, 4, 1, 2, 3],
        "score": [0.9, 0.8, 0.7, 0.6, 0.9, 0.5, 0.4],
    }
)
TRUTH = pl.DataFrame({"user": [1, 1, 2, 2], "item": [11, 13, 14, 10]})


@pytest.mark.parametrize(
    ("case", "recs", "truth", "options"),
    [
        ("clean, scores", RECS, TRUTH, {"score": "score"}),
        ("clean, ranks", RECS, TRUTH, {}),
        ("clean, judged", RECS, TRUTH, {"metrics": ["map@3", "judged@3"]}),
        # a repeated item within the cut, ranks from scores
        ("repeat, scores", RECS.with_columns(item=pl.Series([10, 11, 11, 13, 10, 14, 15])), TRUTH,
         {"score": "score"}),
        # a relevant item twice within the cut, ranks given (checked on the hit rows)
        ("relevant repeat, ranks", RECS.with_columns(item=pl.Series([10, 11, 11, 13, 10, 14, 15])),
         TRUTH, {}),
        # two relevant items at one position (the hit rows' position check)
        ("shared position, ranks", RECS.with_columns(rank=pl.Series([1, 2, 3, 2, 1, 2, 3])),
         TRUTH, {}),
        # two items at one position, a measure of whole lists (the cut's position check)
        ("shared position, judged", RECS.with_columns(rank=pl.Series([1, 2, 2, 4, 1, 2, 3])),
         TRUTH, {"metrics": ["map@3", "judged@3"]}),
        ("repeated truth row", RECS, pl.concat([TRUTH, TRUTH.slice(2, 1)]), {}),
    ],
)  # fmt: skip
@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
def test_evaluate_reports_the_same_with_a_colliding_hash(
    case: str, recs: pl.DataFrame, truth: pl.DataFrame, options: dict[str, Any], lazy: bool
) -> None:
    options = dict(options)
    metrics = options.pop("metrics", ["map@3", "ndcg@3", "mrr@3"])
    if "score" in options:
        recs = recs.drop("rank")

    def call() -> pl.DataFrame:
        if lazy:
            return prm.evaluate(recs.lazy(), truth.lazy(), metrics, **options).collect()
        return prm.evaluate(recs, truth, metrics, **options)

    def message() -> str | None:
        text = _message(call)
        if text is not None and case.endswith(", ranks"):
            # here only the count is compared; the example of the hit-row checks (the
            # offending row first in the cut) is held by test_hit_row_examples.py
            text = re.sub(r"; example row: .*", "", text)
        return text

    expected = message()
    assert (expected is None) is case.startswith("clean")
    for hashing in ("colliding", "constant"):
        with patch.object(_validation, "_key_hash", HASHES[hashing]):
            assert message() == expected
            if expected is None:
                assert call().equals(prm.evaluate(recs, truth, metrics, **options))


def test_eager_and_lazy_calls_report_alike() -> None:
    # eager: lists in rank order (one sort of the cut's hashes); lazy: hashes grouped
    recs = RECS.drop("rank").with_columns(item=pl.Series([10, 11, 11, 13, 10, 14, 10]))
    eager = _message(lambda: prm.evaluate(recs, TRUTH, "map@3", score="score"))
    lazy = _message(
        lambda: prm.evaluate(recs.lazy(), TRUTH.lazy(), "map@3", score="score").collect()
    )
    assert eager is not None
    assert eager == lazy
    assert "recs has 4 rows with a duplicated (user, item)" in eager
    assert "example row: user=1, item=11, rank=2" in eager


@SETTINGS
@given(
    st.lists(st.lists(st.integers(0, 6), min_size=1, max_size=6), max_size=4),
    st.integers(1, 5),
)
def test_lists_in_rank_order_are_refused_as_lazy_frames_are(lists: list[list[int]], k: int) -> None:
    # eager: lists in rank order, their cut screened by a sort of hashes; lazy: a hash count
    recs = pl.DataFrame(
        [
            (user, item, float(len(items) - place))
            for user, items in enumerate(lists)
            for place, item in enumerate(items)
        ],
        schema={"user": pl.Int64, "item": pl.Int64, "score": pl.Float64},
        orient="row",
    )
    truth = pl.DataFrame({"user": [0, 1], "item": [1, 2]})
    metrics = [f"map@{k}", "ndcg@2"]
    eager = _message(lambda: prm.evaluate(recs, truth, metrics, score="score"))
    lazy = _message(
        lambda: prm.evaluate(recs.lazy(), truth.lazy(), metrics, score="score").collect()
    )
    assert eager == lazy
    top = [items[: max(k, 2)] for items in lists]  # the largest cutoff asked for
    assert (eager is not None) is any(len(set(items)) < len(items) for items in top)


@SETTINGS
@given(st.lists(st.integers(1, 7), max_size=12), st.integers(1, 8))
def test_the_cut_of_lists_in_rank_order_is_their_positions_up_to_k(
    lengths: list[int], k: int
) -> None:
    series = pl.Series(lengths, dtype=pl.UInt32)
    keep, positions = run_cut(series, k)
    every = run_positions(series) if lengths else pl.Series([], dtype=pl.UInt32)
    assert keep.to_list() == (every <= k).to_list()
    assert positions.to_list() == every.filter(every <= k).to_list()
