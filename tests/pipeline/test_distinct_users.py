"""n_i, the distinct users per item that estimated propensities read: packed or not, the same."""

from __future__ import annotations

import polars as pl
from hypothesis import given, settings
from hypothesis import strategies as st

from polars_rankmetrics._pipeline.propensity import POPULARITY_COUNT, distinct_users

DTYPES = [pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt32, pl.UInt64]


def _textbook(history: pl.DataFrame) -> dict[object, float]:
    seen: dict[object, set[object]] = {}
    for user, item in history.iter_rows():
        seen.setdefault(item, set()).add(user)
    return {item: float(len(users)) for item, users in seen.items()}


def _counted(history: pl.DataFrame, *, in_memory: bool) -> dict[object, float]:
    counts = distinct_users(
        history.lazy(), user="user", item="item", in_memory=history if in_memory else None
    ).collect()
    assert counts.schema[POPULARITY_COUNT] == pl.Float64
    assert counts.schema["item"] == history.schema["item"]
    return dict(counts.select("item", POPULARITY_COUNT).iter_rows())


@settings(max_examples=150, deadline=None)
@given(
    pairs=st.lists(st.tuples(st.integers(-5, 300), st.integers(-3, 120)), max_size=60),
    user_dtype=st.sampled_from(DTYPES),
    item_dtype=st.sampled_from(DTYPES),
    with_null=st.booleans(),
)
def test_packed_counts_equal_the_textbook(
    pairs: list[tuple[int, int]], user_dtype: pl.DataType, item_dtype: pl.DataType, with_null: bool
) -> None:
    rows = [
        (u, i)
        for u, i in pairs
        if not (user_dtype.is_unsigned_integer() and u < 0)
        and not (item_dtype.is_unsigned_integer() and i < 0)
        and not (user_dtype == pl.UInt8 and u > 255)
        and not (item_dtype == pl.UInt8 and i > 255)
        and not (user_dtype == pl.Int8 and u > 127)
        and not (item_dtype == pl.Int8 and i > 127)
    ]
    if with_null and rows:
        rows.append((None, rows[0][1]))  # type: ignore[arg-type]
    history = pl.DataFrame(rows, schema={"user": user_dtype, "item": item_dtype}, orient="row")
    want = _textbook(history)
    assert _counted(history, in_memory=True) == want
    assert _counted(history, in_memory=False) == want


def test_extreme_ids_are_counted_without_packing_overflow() -> None:
    big = 2**62
    history = pl.DataFrame(
        {"user": [-big, big, 0, 0], "item": [-big, big, 5, 5]},
        schema={"user": pl.Int64, "item": pl.Int64},
    )
    assert _counted(history, in_memory=True) == {-big: 1.0, big: 1.0, 5: 1.0}
