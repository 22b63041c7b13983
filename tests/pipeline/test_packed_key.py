"""The hits join on one packed integer key gives the numbers of the join on the ids.

``evaluate`` packs integer (by..., user, item) keys into one Int64 or Int128
when their ranges allow it (the truth's own ranges when it is in memory, the
dtype's otherwise: two 64-bit ids of a lazy truth fill an Int128 exactly). Each case here is compared with the same data under
String ids, which are joined as they are: a packing that aliased two keys, or
lost one, would change a number. The first case is built so that packing
without the range mask would alias: recs user 0, item 10 packs, unmasked, to
the key of truth user 1, item 0.
"""

from __future__ import annotations

import importlib
import warnings

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polars_rankmetrics as prm

METRICS = ["map@3", "ndcg@3", "mrr@3", "recall@3", "precision@2"]


def as_text(frame: pl.DataFrame, columns: list[str]) -> pl.DataFrame:
    return frame.with_columns(pl.col(columns).cast(pl.String))


def same_as_text(recs: pl.DataFrame, truth: pl.DataFrame, *, by: list[str] | None = None) -> None:
    keys = ["user", "item", *(by or [])]
    for lazy in (False, True):
        got = prm.evaluate(
            recs.lazy() if lazy else recs,
            truth.lazy() if lazy else truth,
            METRICS,
            by=by,
            per_user=True,
        )
        if isinstance(got, pl.LazyFrame):
            got = got.collect()
        want = prm.evaluate(
            as_text(recs, keys),
            as_text(truth, [k for k in keys if k in truth.columns]),
            METRICS,
            by=by,
            per_user=True,
        )
        out = [*(by or []), "user"]
        assert_frame_equal(as_text(got, out).sort(out), want.sort(out), check_dtypes=False)


def test_ids_outside_the_truth_range_do_not_alias() -> None:
    # truth users 0..1, items 0..9: unmasked, (user 0, item 10) would pack to (1, 0)
    truth = pl.DataFrame({"user": [0, 1, 1], "item": [9, 0, 5]})
    recs = pl.DataFrame(
        {"user": [0, 0, 1, 1, 2], "item": [10, 9, 11, 5, 0], "rank": [1, 2, 1, 2, 1]}
    )
    got = prm.evaluate(recs, truth, ["mrr@2", "recall@2"], per_user=True)
    # user 0: item 9 at rank 2 (rr 1/2); user 1: item 5 at rank 2 of {0, 5} (recall 1/2)
    assert got.rows() == [(0, 0.5, 1.0), (1, 0.5, 0.5)]
    same_as_text(recs, truth)


@pytest.mark.parametrize(
    "dtype", [pl.Int8, pl.Int16, pl.Int32, pl.UInt8, pl.UInt32, pl.Int64, pl.UInt64]
)
def test_every_integer_width(dtype: pl.DataType) -> None:
    low = 0 if not dtype.is_signed_integer() else -5
    truth = pl.DataFrame(
        {"user": [low, low, 3, 3], "item": [low, 7, 7, low + 1]},
        schema={"user": dtype, "item": dtype},
    )
    recs = pl.DataFrame(
        {
            "user": [low, low, low, 3, 3, 3],
            "item": [7, 8, low, low + 1, 2, 7],
            "rank": [1, 2, 3, 1, 2, 3],
        },
        schema={"user": dtype, "item": dtype, "rank": pl.Int64},
    )
    same_as_text(recs, truth)


def test_extreme_ids_are_joined_as_they_are() -> None:
    # the widest ranges: UInt64 ids past Int64, Int64 ids at both ends (Int128 keys)
    big = (1 << 64) - 1
    truth = pl.DataFrame(
        {"user": [0, big], "item": [big, 0]}, schema={"user": pl.UInt64, "item": pl.UInt64}
    )
    recs = pl.DataFrame(
        {"user": [0, 0, big], "item": [1, big, 0], "rank": [1, 2, 1]},
        schema={"user": pl.UInt64, "item": pl.UInt64, "rank": pl.Int64},
    )
    same_as_text(recs, truth)
    lo, hi = -(1 << 63), (1 << 63) - 1
    truth = pl.DataFrame({"user": [lo, hi], "item": [hi, lo]})
    recs = pl.DataFrame({"user": [lo, lo, hi], "item": [lo, hi, lo], "rank": [1, 2, 1]})
    same_as_text(recs, truth)


def test_mixed_widths_and_folds() -> None:
    truth = pl.DataFrame(
        {"fold": [1, 1, 2], "user": [1, 2, 1], "item": [5, 6, 5]},
        schema={"fold": pl.Int16, "user": pl.Int32, "item": pl.Int64},
    )
    recs = pl.DataFrame(
        {
            "fold": [1, 1, 2, 2, 3],
            "user": [1, 2, 1, 1, 1],
            "item": [5, 5, 6, 5, 5],
            "rank": [1, 1, 1, 2, 1],
        },
        schema={"fold": pl.Int64, "user": pl.UInt16, "item": pl.Int32, "rank": pl.Int32},
    )
    same_as_text(recs, truth, by=["fold"])


@settings(max_examples=15, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(-3, 3), st.integers(-4, 4)), min_size=1, max_size=12, unique=True
    ),
    st.lists(
        st.tuples(st.integers(-4, 4), st.integers(-5, 5)), min_size=1, max_size=20, unique=True
    ),
)
def test_random_ids_match_the_join_on_text(
    truth_pairs: list[tuple[int, int]], recs_pairs: list[tuple[int, int]]
) -> None:
    truth = pl.DataFrame(truth_pairs, schema=["user", "item"], orient="row")
    recs = pl.DataFrame(recs_pairs, schema=["user", "item"], orient="row").with_columns(
        pl.int_range(1, pl.len() + 1).over("user").alias("rank")
    )
    same_as_text(recs, truth)


# the overlap warning, settled by the hit users the query counts (cutoffs: hits held)


@pytest.mark.parametrize(("matched", "warns"), [(0, True), (1, True), (2, False), (50, False)])
def test_overlap_warning_with_cutoffs(matched: int, warns: bool) -> None:
    # 200 truth users, one row each; `matched` of them have their item at rank 1
    truth = pl.DataFrame({"user": range(200), "item": 7})
    recs = pl.DataFrame({"user": [*range(matched), *range(1000, 1010)], "item": 7, "rank": 1})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        prm.evaluate(recs, truth, ["map@5", "ndcg@5"])
    # 1 of 200 = 0.5% < 1%: warned; 2 of 200 = 1%: not
    assert [w.category for w in caught] == ([prm.IdOverlapWarning] if warns else [])


def test_hit_users_settle_the_overlap_without_the_screen(monkeypatch: pytest.MonkeyPatch) -> None:
    plan_module = importlib.import_module("polars_rankmetrics._pipeline.plan")

    def screen(*args: object, **kwargs: object) -> None:
        raise AssertionError("the overlap screen ran")

    monkeypatch.setattr(plan_module, "warn_if_disjoint_frames", screen)
    truth = pl.DataFrame({"user": range(100), "item": 7})
    recs = pl.DataFrame({"user": range(100), "item": 7, "rank": 1})
    assert prm.evaluate(recs, truth, ["mrr@3"]).item() == 1.0
    with pytest.raises(AssertionError, match="screen ran"):
        prm.evaluate(recs.with_columns(pl.col("item") + 1), truth, ["mrr@3"])


@pytest.mark.parametrize(
    "users",
    [
        pytest.param([(1 << 64) - 1, 1 << 63], id="2^64-1 and 2^63"),
        # a shift that fits an Int64 while one id does not: that id's key was null
        pytest.param([(1 << 63) - 2, 1 << 63], id="2^63-2 and 2^63"),
    ],
)
@pytest.mark.parametrize("lazy", [False, True])
def test_uint64_ids_past_int64_give_the_numbers_of_small_ids(users: list[int], lazy: bool) -> None:
    # a narrow range of UInt64 ids from 2^63 up (items 2..3) packs into an Int64's
    # bound, but its ids and its range's ends are no Int64s
    def frames(ids: list[int]) -> tuple[pl.DataFrame, pl.DataFrame]:
        recs = pl.DataFrame(
            {"user": [ids[0]] * 3 + [ids[1]] * 3, "item": [1, 2, 3] * 2, "rank": [1, 2, 3] * 2},
            schema={"user": pl.UInt64, "item": pl.UInt64, "rank": pl.Int64},
        )
        truth = pl.DataFrame(
            {"user": [ids[0], ids[0], ids[1]], "item": [2, 3, 3], "rel": [1, 2, 3]},
            schema={"user": pl.UInt64, "item": pl.UInt64, "rel": pl.Int64},
        )
        return recs, truth

    def scores(ids: list[int], relevance: str | None) -> pl.DataFrame:
        recs, truth = frames(ids)
        got = prm.evaluate(
            recs.lazy() if lazy else recs,
            truth.lazy() if lazy else truth,
            METRICS,
            relevance=relevance,
            per_user=True,
        )
        got = got.collect() if isinstance(got, pl.LazyFrame) else got
        # each user's row in the order of ids, whatever their values
        order = pl.col("user").replace_strict(ids, [0, 1], return_dtype=pl.Int64)
        return got.sort(order).drop("user")

    for relevance in (None, "rel"):
        small = scores([1, 2], relevance)
        assert small["map@3"].to_list() == [pytest.approx((1 / 2 + 2 / 3) / 2), 1 / 3]
        assert_frame_equal(scores(users, relevance), small)
