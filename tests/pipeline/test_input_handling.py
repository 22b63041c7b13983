"""Input handling, each defect class on every backend (issue 11).

* key dtypes: every pair of recs/truth id dtypes matches by value or is refused;
* ranks of any integer width, beyond UInt32;
* NumPy scalars wherever a Python number is accepted, booleans nowhere;
* values quoted in messages are shortened;
* a duplicated truth row is the truth's fault only;
* one tie rule (the id's value) for positions() and evaluate(), every id dtype;
* trec_eval num_q alone per query;
* ids that do not overlap: IdOverlapWarning and check_overlap;
* pandas: roles in the index, prm.sample.
"""

from __future__ import annotations

import itertools
import math
import warnings
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_rankmetrics as prm
from polars_rankmetrics import _validation
from polars_rankmetrics._pipeline import overlap
from polars_rankmetrics._pipeline.trec_eval import trec_eval
from tests.conftest import Backend

# ---------------------------------------------------------------------------
# Key dtypes
# ---------------------------------------------------------------------------

STRINGS: list[pl.DataType] = [
    pl.String(),
    pl.Categorical(),
    # categories in an order other than the text's: the physical order must not matter
    pl.Enum(["4", "3", "2", "1", "x"]),
]
INTEGERS: list[pl.DataType] = [
    pl.Int8(),
    pl.Int16(),
    pl.Int32(),
    pl.Int64(),
    pl.Int128(),
    pl.UInt8(),
    pl.UInt16(),
    pl.UInt32(),
    pl.UInt64(),
    pl.UInt128(),
]
FLOATS: list[pl.DataType] = [pl.Float32(), pl.Float64()]
KEY_DTYPES = STRINGS + INTEGERS + FLOATS
# pandas (through Arrow) holds no 128-bit integers
NOT_IN_PANDAS = (pl.Int128, pl.UInt128)


def _evaluate(
    backend: Backend, recs: Any, truth: Any, metrics: Any, **options: Any
) -> pl.DataFrame:
    """Evaluate on the backend and collect (a lazy query raises its data errors there)."""
    result = backend.frame(recs).rank.evaluate(backend.frame(truth), metrics, **options)
    return backend.polars(result)


def _ids(values: list[int], dtype: pl.DataType) -> pl.Series:
    series = pl.Series(values, dtype=pl.Int64)
    if dtype == pl.String or isinstance(dtype, (pl.Categorical, pl.Enum)):
        return series.cast(pl.String).cast(dtype)
    return series.cast(dtype)


def _family(dtype: pl.DataType) -> str:
    return "string" if dtype in STRINGS or isinstance(dtype, pl.Categorical) else "number"


def _key_frames(recs_dtype: pl.DataType, truth_dtype: pl.DataType) -> tuple[Any, Any]:
    # user 1 ranks [3, 4] and likes 4 (AP@2 = 1/2), user 2 ranks [3] and likes 3 (AP = 1)
    recs = pl.DataFrame(
        {
            "user": _ids([1, 1, 2], recs_dtype),
            "item": _ids([3, 4, 3], recs_dtype),
            "rank": [1, 2, 1],
        }
    )
    truth = pl.DataFrame({"user": _ids([1, 2], truth_dtype), "item": _ids([4, 3], truth_dtype)})
    return recs, truth


@pytest.mark.parametrize(
    ("recs_dtype", "truth_dtype"),
    list(itertools.product(KEY_DTYPES, KEY_DTYPES)),
    ids=lambda dtype: str(dtype).replace(" ", ""),
)
def test_every_pair_of_key_dtypes_matches_by_value_or_is_refused(
    backend: Backend, recs_dtype: pl.DataType, truth_dtype: pl.DataType
) -> None:
    if backend.name == "pandas" and isinstance(recs_dtype, (*NOT_IN_PANDAS, pl.Enum)):
        pytest.skip("pandas holds no 128-bit integers; an Enum comes back Categorical")
    if backend.name == "pandas" and isinstance(truth_dtype, (*NOT_IN_PANDAS, pl.Enum)):
        pytest.skip("pandas holds no 128-bit integers; an Enum comes back Categorical")
    recs, truth = _key_frames(recs_dtype, truth_dtype)
    call = lambda: backend.polars(  # noqa: E731
        backend.frame(recs).rank.evaluate(backend.frame(truth), ["map@2"], per_user=True)
    )
    if _family(recs_dtype) != _family(truth_dtype):
        with pytest.raises(TypeError, match=r"key column 'user' has dtype .* can never match"):
            call()
        return
    result = call().sort("user")
    assert result["map@2"].to_list() == [0.5, 1.0]
    # the users come back with their values (as text for strings, as numbers otherwise)
    users = result["user"].cast(pl.String).to_list()
    assert [user.removesuffix(".0") for user in users] == ["1", "2"]


@pytest.mark.parametrize(
    ("recs_ids", "recs_dtype", "truth_ids", "truth_dtype", "expected"),
    [
        # 2**64 - 1 as an Int64 would be -1: a wrapping cast would match them
        ([2**64 - 1, 5], pl.UInt64, [-1, 5], pl.Int64, [0.0, 1.0]),
        ([2**63 + 5, 5], pl.UInt64, [2**63 + 5, 5], pl.Int128, [1.0, 1.0]),
        ([2**64 + 1, 5], pl.Int128, [1, 5], pl.UInt64, [0.0, 1.0]),
        ([2**100, 5], pl.UInt128, [-1, 5], pl.Int64, [0.0, 1.0]),
        ([2**100, 5], pl.UInt128, [2**100, 5], pl.Int128, [1.0, 1.0]),
        ([200, 5], pl.UInt8, [-56, 5], pl.Int8, [0.0, 1.0]),
    ],
)
def test_large_ids_compare_by_value_without_overflow(
    recs_ids: list[int],
    recs_dtype: type[pl.DataType],
    truth_ids: list[int],
    truth_dtype: type[pl.DataType],
    expected: list[float],
) -> None:
    recs = pl.DataFrame(
        {"user": pl.Series(recs_ids, dtype=recs_dtype), "item": ["a", "a"], "rank": [1, 1]}
    )
    truth = pl.DataFrame({"user": pl.Series(truth_ids, dtype=truth_dtype), "item": ["a", "a"]})
    result = prm.evaluate(recs, truth, ["map"], per_user=True)
    by_user = {int(user): value for user, value in result.iter_rows()}
    # every truth user is evaluated; only the one with the same value scores
    assert [by_user[int(user)] for user in truth_ids] == expected


def test_key_rule_unit() -> None:
    holder = _validation.integer_holder
    assert holder(pl.UInt64(), pl.Int64()) == pl.Int128
    assert holder(pl.UInt32(), pl.Int64()) == pl.Int64
    assert holder(pl.UInt8(), pl.Int8()) == pl.Int16
    assert holder(pl.UInt16(), pl.UInt64()) == pl.UInt64
    assert holder(pl.UInt128(), pl.Int8()) == pl.String
    assert holder(pl.Float32(), pl.UInt64()) == pl.Int128
    key = _validation.key_dtype
    assert key(pl.Int64(), pl.Int64(), key="user") is None
    assert key(pl.String(), pl.String(), key="user") is None
    assert key(pl.Categorical(), pl.Categorical(), key="user") == pl.String
    assert key(pl.Float64(), pl.Float64(), key="user") == pl.Int64
    assert key(pl.Date(), pl.Date(), key="user") is None
    with pytest.raises(TypeError, match="can never match"):
        key(pl.Date(), pl.Datetime(), key="user")


@pytest.mark.parametrize("bad", [1.5, float("nan"), float("inf"), 1e30])
@pytest.mark.parametrize("side", ["recs", "truth"])
def test_float_ids_must_be_whole_numbers(backend: Backend, bad: float, side: str) -> None:
    recs = {"user": [1.0, 2.0], "item": [3, 3], "rank": [1, 1]}
    truth = {"user": [1.0, 2.0], "item": [3, 3]}
    (recs if side == "recs" else truth)["user"] = [1.0, bad]
    if backend.name == "pandas" and math.isnan(bad):
        pytest.skip("NaN in pandas is a missing value: the null check names it")
    with pytest.raises(
        ValueError,
        match=rf"{side} column 'user' holds float ids, which are compared as integers "
        r"\(Int64\), but 1 value\(s\) are not whole numbers",
    ):
        _evaluate(backend, recs, truth, ["map"])


@pytest.mark.parametrize(
    ("recs", "options", "column", "example"),
    [
        # two items of one list that are no whole numbers: both were a null id after the
        # key's cast, and the repeated (user, item=None) was reported as a duplicate too
        (
            {"user": [1, 1, 2], "item": [1.5, 2.5, 5.0], "score": [0.9, 0.8, 0.7]},
            {"score": "score"},
            "item",
            "user=1, item=1.5",
        ),
        # two users that are no whole numbers, each recommended item 3: both were user
        # None, and "item 3 recommended twice in one list" was reported too
        (
            {"user": [1.5, 2.5, 2.0], "item": [3, 3, 5], "score": [0.9, 0.8, 0.7]},
            {"score": "score"},
            "user",
            "user=1.5, item=3",
        ),
    ],
)
def test_float_ids_that_are_no_whole_numbers_get_one_error(
    backend: Backend, recs: dict[str, list[Any]], options: dict[str, str], column: str, example: str
) -> None:
    truth = {"user": [1, 2], "item": [3, 5]}
    with pytest.raises(ValueError, match="not whole numbers") as refused:
        _evaluate(backend, recs, truth, ["map"], **options)
    assert str(refused.value) == (
        "invalid input:\n"
        f"- recs column {column!r} holds float ids, which are compared as integers (Int64), "
        f"but 2 value(s) are not whole numbers in its range; example row: {example}"
    )


@pytest.mark.parametrize("metrics", [["judged@2"], ["precision@2"], ["mrr@2", "judged@2"]])
def test_fractional_float_ids_with_ranks_and_a_cutoff_report_only_what_the_input_holds(
    backend: Backend, metrics: list[str]
) -> None:
    # ranks given and a cutoff: the rows are checked in the top-k cut, after the ids' cast,
    # where a fractional id is null; "2 null value(s); example row: item=None" was invented
    recs = {"user": [1, 1, 2], "item": [1.5, 2.0, 2.5], "rank": [1, 2, 1]}
    truth = {"user": [1, 2], "item": [2.0, 3.0]}
    with pytest.raises(ValueError, match="not whole numbers") as refused:
        _evaluate(backend, recs, truth, metrics)
    assert str(refused.value) == (
        "invalid input:\n"
        "- recs column 'item' holds float ids, which are compared as integers (Int64), "
        "but 2 value(s) are not whole numbers in its range; example row: user=1, item=1.5"
    )
    if backend.name == "pandas":
        return  # pandas holds a missing float as NaN: refused as such
    # a null the input does hold is still named
    recs["item"] = [None, 2.0, 2.5]
    with pytest.raises(ValueError, match="not whole numbers") as refused:
        _evaluate(backend, recs, truth, metrics)
    assert "- recs column 'item' (item) has 1 null value(s); example row: user=1, item=None" in (
        str(refused.value)
    )


def test_float_ids_with_whole_values_match_integer_ids(backend: Backend) -> None:
    # pandas makes an integer column with a missing value float64
    recs = {"user": [1.0, 2.0, 3.0], "item": [10.0, 20.0, 30.0], "rank": [1, 1, 1]}
    truth = {"user": [1, 2], "item": [10, 21]}
    result = backend.frame(recs).rank.evaluate(backend.frame(truth), ["map"])
    assert backend.polars(result)["map"].to_list() == [0.5]


@pytest.mark.parametrize(
    "rank_dtype", [pl.Int64, pl.UInt64, pl.Int128, pl.UInt128, pl.UInt32, pl.Int32]
)
def test_ranks_of_any_integer_width_are_exact(backend: Backend, rank_dtype: Any) -> None:
    if backend.name == "pandas" and rank_dtype in NOT_IN_PANDAS:
        pytest.skip("pandas holds no 128-bit integers")
    # a TREC rank of 4294967297 is above UInt32: it must stay that, not wrap to 1
    big = 4_294_967_297 if rank_dtype not in (pl.UInt32, pl.Int32) else 2_000_000_000
    recs = pl.DataFrame(
        {
            "user": [1, 1, 2],
            "item": ["a", "b", "a"],
            "rank": pl.Series([1, big, 1], dtype=rank_dtype),
        }
    )
    truth = pl.DataFrame({"user": [1, 2], "item": ["b", "z"]})
    result = backend.polars(
        backend.frame(recs).rank.evaluate(
            backend.frame(truth), ["mean_rank", "map", "hit_rate@5"], per_user=True
        )
    ).sort("user")
    assert result["mean_rank"].to_list() == [float(big), None]
    assert result["map"].to_list() == pytest.approx([1 / big, 0.0])
    assert result["hit_rate@5"].to_list() == [0.0, 0.0]
    kept = backend.polars(backend.frame(recs).rank.positions(5))
    assert sorted(kept["item"].to_list()) == ["a", "a"]


# ---------------------------------------------------------------------------
# NumPy scalars and booleans
# ---------------------------------------------------------------------------

LABELED = pl.DataFrame(
    {
        "user": [1, 1, 1],
        "rank": [1, 2, 3],
        "is_relevant": [False, True, True],
        "rel": [0.0, 1.0, 2.0],
        "ideal_rank": [None, 2, 1],
        "n_relevant": [2, 2, 2],
    }
)
METRIC_FUNCTIONS = [
    prm.precision,
    prm.recall,
    prm.f1,
    prm.hit_rate,
    prm.average_precision,
    prm.reciprocal_rank,
    prm.ndcg,
    prm.dcg,
]


@pytest.mark.parametrize("k", [np.int64(2), np.int32(2), np.uint8(2), 2])
@pytest.mark.parametrize("metric", METRIC_FUNCTIONS, ids=lambda f: f.__name__)
def test_metric_functions_take_numpy_integers(metric: Any, k: Any) -> None:
    got = LABELED.group_by("user").agg(metric(k))
    assert got.equals(LABELED.group_by("user").agg(metric(2)))


@pytest.mark.parametrize("k", [True, False, np.True_, 2.0, np.float64(2.0), "2"])
@pytest.mark.parametrize("metric", METRIC_FUNCTIONS, ids=lambda f: f.__name__)
def test_metric_functions_refuse_booleans_and_floats(metric: Any, k: Any) -> None:
    with pytest.raises(TypeError, match="k must be a positive integer or None"):
        metric(k)


@pytest.mark.parametrize("k", [np.int64(1), np.uint16(1)])
def test_positions_takes_numpy_cutoffs(backend: Backend, k: Any) -> None:
    recs = backend.frame({"user": [1, 1], "item": ["a", "b"], "rank": [1, 2]})
    assert backend.polars(recs.rank.positions(k))["item"].to_list() == ["a"]


@pytest.mark.parametrize("k", [True, np.True_, np.float32(1)])
def test_positions_refuses_booleans(backend: Backend, k: Any) -> None:
    recs = backend.frame({"user": [1], "item": ["a"], "rank": [1]})
    with pytest.raises(TypeError, match="k must be a positive integer"):
        recs.rank.positions(k)


@pytest.mark.parametrize("level", [np.float64(2.0), np.float32(2.0), np.int64(2), 2])
def test_relevance_level_takes_numpy_numbers(backend: Backend, level: Any) -> None:
    recs = backend.frame({"user": [1, 1], "item": ["a", "b"], "rank": [1, 2]})
    truth = backend.frame({"user": [1, 1], "item": ["a", "b"], "rel": [1, 2]})
    result = recs.rank.evaluate(truth, ["mrr"], relevance="rel", relevance_level=level)
    # only b (grade 2) is relevant at level 2: RR = 1/2
    assert backend.polars(result)["mrr"].to_list() == [0.5]


@pytest.mark.parametrize("level", [True, np.True_, "2", [2]])
def test_relevance_level_refuses_booleans_and_others(backend: Backend, level: Any) -> None:
    recs = backend.frame({"user": [1], "item": ["a"], "rank": [1]})
    truth = backend.frame({"user": [1], "item": ["a"], "rel": [1]})
    with pytest.raises(TypeError, match="relevance_level must be a number"):
        recs.rank.evaluate(truth, ["mrr"], relevance="rel", relevance_level=level)


def test_number_helpers() -> None:
    assert _validation.as_int(np.int8(-3), what="n") == -3
    assert type(_validation.as_int(np.uint64(2**64 - 1), what="n")) is int
    assert _validation.as_number(np.float32(0.25), what="x") == 0.25
    assert type(_validation.as_number(np.int16(3), what="x")) is float
    for bad in (True, np.bool_(False), 1.5, "1", None):
        with pytest.raises(TypeError, match="n must be an integer"):
            _validation.as_int(bad, what="n")
    for bad in (False, np.True_, "1.0", None, 1j):
        with pytest.raises(TypeError, match="x must be a number"):
            _validation.as_number(bad, what="x")


# ---------------------------------------------------------------------------
# Shortened values in messages
# ---------------------------------------------------------------------------

HUGE = "x" * 5_000_000
LIMIT = 600  # a message of a few lines, whatever the size of the values


def _message(action: Any) -> str:
    with pytest.raises((ValueError, TypeError)) as info:
        action()
    return str(info.value)


@pytest.mark.parametrize(
    "case",
    ["null_example", "truth_duplicate", "recs_duplicate", "float_key", "nan_score"],
)
def test_messages_quote_at_most_a_few_dozen_characters_of_a_row(
    backend: Backend, case: str
) -> None:
    recs: dict[str, list[Any]] = {"user": [HUGE, HUGE], "item": ["a", "b"], "rank": [1, 2]}
    truth: dict[str, list[Any]] = {"user": [HUGE], "item": [HUGE]}
    options: dict[str, Any] = {}
    if case == "null_example":
        recs["item"] = ["a", None]
    elif case == "truth_duplicate":
        truth = {"user": [HUGE, HUGE], "item": [HUGE, HUGE]}
    elif case == "recs_duplicate":
        recs["item"] = [HUGE, HUGE]
    elif case == "float_key":
        recs = {"user": [0.5], "item": [HUGE], "rank": [1]}
        truth = {"user": [1], "item": [HUGE]}
    else:
        recs = {"user": [HUGE], "item": [HUGE], "score": [float("nan")]}
        options["score"] = "score"

    def action() -> None:
        result = backend.frame(recs).rank.evaluate(backend.frame(truth), ["map"], **options)
        backend.polars(result)

    message = _message(action)
    assert len(message) < LIMIT, message[:LIMIT]
    assert "(5000002 characters)" in message


def test_parameter_and_column_messages_are_short_too(backend: Backend) -> None:
    recs = backend.frame({"user": [1], "item": ["a"], "rank": [1]})
    truth = backend.frame({"user": [1], "item": ["a"]})
    for action in (
        lambda: recs.rank.evaluate(truth, ["map"], ties=HUGE),
        lambda: recs.rank.evaluate(truth, ["map"], user=HUGE),
        lambda: recs.rank.positions(HUGE),
        lambda: recs.rank.evaluate(truth, ["map"], relevance_level=HUGE),
    ):
        message = _message(action)
        assert len(message) < LIMIT, message[:LIMIT]


def test_shorten() -> None:
    assert _validation.shorten(12) == "12"
    assert _validation.shorten("a" * 38) == repr("a" * 38)
    shortened = _validation.shorten("a" * 100)
    assert shortened.startswith("'aaa")
    assert shortened.endswith("... (102 characters)")
    assert len(shortened) < 70


# ---------------------------------------------------------------------------
# A duplicated truth row blames the truth only
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("position", ["rank", "score"])
def test_a_duplicated_truth_row_is_not_blamed_on_the_recs(backend: Backend, position: str) -> None:
    recs = {"user": [1, 1], "item": ["a", "b"], position: [1, 2] if position == "rank" else [2, 1]}
    truth = {"user": [1, 1, 1], "item": ["a", "a", "b"]}
    options = {"score": "score"} if position == "score" else {}
    message = _message(
        lambda: backend.polars(
            backend.frame(recs).rank.evaluate(backend.frame(truth), ["map"], **options)
        )
    )
    assert message.count("\n- ") == 1, message
    assert "truth has 2 rows with a duplicated (user, item)" in message
    assert "recs" not in message


def test_two_items_at_one_position_are_still_found_beside_a_duplicated_truth(
    backend: Backend,
) -> None:
    recs = {"user": [1, 1], "item": ["a", "b"], "rank": [1, 1]}
    truth = {"user": [1, 1, 1], "item": ["a", "a", "b"]}
    message = _message(
        lambda: backend.polars(backend.frame(recs).rank.evaluate(backend.frame(truth), ["map"]))
    )
    assert "truth has 2 rows with a duplicated (user, item)" in message
    assert "recs has" in message
    assert "two items share one position" in message


def test_duplicates_first_keeps_one_row_of_a_row_repeated_whole(backend: Backend) -> None:
    recs = {"user": [1, 1, 1], "item": ["a", "a", "b"], "rank": [1, 1, 2]}
    truth = {"user": [1], "item": ["a"]}
    result = backend.frame(recs).rank.evaluate(
        backend.frame(truth), ["precision@2", "map"], duplicates="first"
    )
    # a counted once: P@2 = 1/2, not 2/2
    assert backend.polars(result).row(0) == (0.5, 1.0)


# ---------------------------------------------------------------------------
# One tie rule
# ---------------------------------------------------------------------------

TIE_DTYPES = ["String", "Categorical", "Enum", "Int64", "UInt32", "Int8"]


def _tie_dtype(name: str, ids: list[int]) -> pl.DataType:
    if name == "Enum":
        # categories in an order unlike the text's: reversed numeric order
        return pl.Enum([str(i) for i in sorted(set(ids), reverse=True)])
    return {
        "String": pl.String(),
        "Categorical": pl.Categorical(),
        "Int64": pl.Int64(),
        "UInt32": pl.UInt32(),
        "Int8": pl.Int8(),
    }[name]


def _expected_ranks(items: list[Any], scores: list[float], *, descending: bool) -> list[int]:
    """Textbook: score descending, then the id's value (text or number) by ``ties``."""
    order = sorted(range(len(items)), key=lambda i: items[i], reverse=descending)
    order = sorted(order, key=lambda i: -scores[i])  # stable: keeps the id order in ties
    ranks = [0] * len(items)
    for place, index in enumerate(order, start=1):
        ranks[index] = place
    return ranks


@settings(max_examples=60, deadline=None)
@given(
    dtype_name=st.sampled_from(TIE_DTYPES),
    ties=st.sampled_from(["item_desc", "item_asc"]),
    data=st.data(),
)
def test_positions_and_evaluate_break_ties_alike(dtype_name: str, ties: str, data: Any) -> None:
    # ids 1..12 as text sort 1, 10, 11, 12, 2...: unlike numbers, so the rule is visible
    items = data.draw(st.lists(st.integers(1, 12), min_size=1, max_size=8, unique=True))
    scores = data.draw(
        st.lists(st.sampled_from([0.0, 1.0]), min_size=len(items), max_size=len(items))
    )
    liked = data.draw(st.sampled_from(items))
    dtype = _tie_dtype(dtype_name, items)
    text = dtype_name in ("String", "Categorical", "Enum")
    values: list[Any] = [str(i) for i in items] if text else items
    expected = _expected_ranks(values, scores, descending=ties == "item_desc")
    recs = pl.DataFrame({"user": [1] * len(items), "item": _ids(items, dtype), "score": scores})
    truth = pl.DataFrame({"user": [1], "item": _ids([liked], dtype)})
    want = expected[items.index(liked)]
    # in memory in any order, in memory already in rank order (the row-order probe), lazy
    in_order = recs.with_columns(pl.Series("__r", expected)).sort("__r").drop("__r")
    for frame in (recs, in_order, recs.lazy()):
        ranked = prm.positions(frame, score="score", ties=ties)  # type: ignore[arg-type]
        ranked = ranked.collect() if isinstance(ranked, pl.LazyFrame) else ranked
        got = dict(zip(ranked["item"].cast(pl.String), ranked["rank"], strict=True))
        assert [got[str(i)] for i in items] == expected
        result = prm.evaluate(frame, truth, ["mean_rank"], score="score", ties=ties)  # type: ignore[arg-type]
        result = result.collect() if isinstance(result, pl.LazyFrame) else result
        assert result["mean_rank"].to_list() == [float(want)]


def test_enum_ties_follow_the_text_not_the_category_order(backend: Backend) -> None:
    if backend.name == "pandas":
        pytest.skip("an Enum reaches pandas as a Categorical; covered by the Categorical case")
    recs = pl.DataFrame(
        {
            "user": [1, 1, 1],
            "item": pl.Series(["b", "a", "c"], dtype=pl.Enum(["c", "b", "a"])),
            "score": [1.0, 1.0, 1.0],
        }
    )
    ranked = backend.polars(backend.frame(recs).rank.positions(score="score"))
    # item_desc: c, b, a by their text (the Enum's own order would give a, b, c)
    assert dict(zip(ranked["item"].cast(pl.String), ranked["rank"], strict=True)) == {
        "c": 1,
        "b": 2,
        "a": 3,
    }


# ---------------------------------------------------------------------------
# trec_eval: num_q per query
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("measures", [["num_q"], ["num_q", "runid"], ["runid", "num_q"]])
def test_num_q_alone_per_query(measures: list[str]) -> None:
    qrels = pl.DataFrame({"user": ["1", "2"], "item": ["a", "b"], "rel": [1, 1]})
    run = pl.DataFrame({"user": ["1", "2"], "item": ["a", "c"], "score": [1.0, 1.0]})
    table = trec_eval(qrels, run, measures, per_query=True)
    # trec_eval -q prints num_q under "all" only (and runid, when asked, under "all" too)
    assert table.filter(pl.col("measure") == "num_q").select("query", "value").rows() == [
        ("all", 2.0)
    ]
    assert set(table["query"]) == {"all"}


# ---------------------------------------------------------------------------
# Ids that do not overlap
# ---------------------------------------------------------------------------


def _overlap_frames(
    n_truth_users: int, n_matched_users: int, *, n_items: int = 12, items_match: bool = True
) -> tuple[pl.DataFrame, pl.DataFrame]:
    truth_users = [f"{n:03d}" for n in range(n_truth_users)]
    # the recs know the first n_matched users under the truth's ids, the others
    # without their leading zeros
    recs_users = truth_users[:n_matched_users] + [str(n) for n in range(1000, 1000 + n_truth_users)]
    items = [f"i{n}" for n in range(n_items)]
    recs_items = items if items_match else [f"other{n}" for n in range(n_items)]
    recs = pl.DataFrame(
        {
            "user": [user for user in recs_users for _ in recs_items],
            "item": recs_items * len(recs_users),
            "rank": list(range(1, len(recs_items) + 1)) * len(recs_users),
        }
    )
    truth = pl.DataFrame(
        {"user": truth_users, "item": [items[n % n_items] for n in range(n_truth_users)]}
    )
    return recs, truth


def _warnings_of(backend: Backend, recs: pl.DataFrame, truth: pl.DataFrame) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        backend.polars(backend.frame(recs).rank.evaluate(backend.frame(truth), ["map"]))
    return [str(w.message) for w in caught if issubclass(w.category, prm.IdOverlapWarning)]


@pytest.mark.parametrize(
    ("n_truth", "n_matched", "warns"),
    [
        (12, 0, True),  # leading zeros lost: no truth user has a recommendation
        (200, 1, True),  # 0.5% < 1%
        (100, 1, False),  # 1%: at the threshold, no warning
        (200, 2, False),  # 1%
        (9, 0, False),  # fewer than 10 truth users: too few to tell
        (10, 0, True),
        (50, 20, False),  # normal: many users without a list or a hit
    ],
)
def test_overlap_warning_threshold_on_users(
    backend: Backend, n_truth: int, n_matched: int, warns: bool
) -> None:
    recs, truth = _overlap_frames(n_truth, n_matched)
    caught = _warnings_of(backend, recs, truth)
    if backend.name == "polars-lazy":
        assert caught == []  # a lazy query is not run early: check_overlap is the check
        assert prm.check_overlap(recs.lazy(), truth.lazy()).suspicious is warns
        return
    assert len(caught) == int(warns), caught
    if warns:
        assert f"{n_matched} of {n_truth} truth users" in caught[0]
        assert "truth user '000'" in caught[0] or n_matched
        assert "recs user '1000'" in caught[0]


@pytest.mark.parametrize(("n_items", "warns"), [(10, True), (9, False), (12, True)])
def test_overlap_warning_threshold_on_items(backend: Backend, n_items: int, warns: bool) -> None:
    recs, truth = _overlap_frames(12, 12, n_items=n_items, items_match=False)
    caught = _warnings_of(backend, recs, truth)
    expected = warns and backend.name != "polars-lazy"
    assert len(caught) == int(expected), caught
    if expected:
        assert f"0 of {n_items} truth items are recommended" in caught[0]
        assert "truth item 'i0'" in caught[0]
        assert "recs item 'other0'" in caught[0]


def test_normal_data_with_few_hits_does_not_warn(backend: Backend) -> None:
    # every user has a list, only one item of the truth is ever recommended
    users = [str(n) for n in range(300)]
    recs = pl.DataFrame({"user": users, "item": "popular", "rank": 1})
    truth = pl.DataFrame({"user": users, "item": ["popular"] + [f"rare{n}" for n in range(299)]})
    assert _warnings_of(backend, recs, truth) == []


def test_overlap_warning_can_be_an_error() -> None:
    recs, truth = _overlap_frames(12, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", prm.IdOverlapWarning)
        with pytest.raises(prm.IdOverlapWarning, match="share almost no ids"):
            prm.evaluate(recs, truth, ["map"])
    assert issubclass(prm.IdOverlapWarning, UserWarning)


def test_check_overlap_counts(backend: Backend) -> None:
    recs = {"user": [1, 1, 2, 3], "item": [10, 11, 10, 12], "rank": [1, 2, 1, 1]}
    truth = {"user": [2, 4, 5], "item": [10, 13, 13]}
    overlap = prm.check_overlap(backend.frame(recs), backend.frame(truth))
    assert (overlap.recs_users, overlap.truth_users, overlap.matched_users) == (3, 3, 1)
    assert (overlap.recs_items, overlap.truth_items, overlap.matched_items) == (3, 2, 1)
    assert overlap.truth_user_example == 4
    assert overlap.recs_user_example == 1
    assert overlap.truth_item_example == 13
    assert overlap.recs_item_example == 11
    assert not overlap.suspicious  # fewer than 10 ids of each kind


def test_check_overlap_uses_the_key_rule() -> None:
    recs = pl.DataFrame({"user": pl.Series([2**64 - 1], dtype=pl.UInt64), "item": ["a"]})
    truth = pl.DataFrame({"user": pl.Series([-1], dtype=pl.Int64), "item": ["a"]})
    assert prm.check_overlap(recs, truth).matched_users == 0
    with pytest.raises(TypeError, match="can never match"):
        prm.check_overlap(recs, truth.with_columns(pl.col("user").cast(pl.String)))
    with pytest.raises(ValueError, match="recs is missing column 'product'"):
        prm.check_overlap(recs, truth, item="product")
    with pytest.raises(TypeError, match="recs must be a Polars DataFrame or LazyFrame, a pandas"):
        prm.check_overlap([1], truth)  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# pandas: roles in the index; prm.sample
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("side", ["recs", "truth"])
@pytest.mark.parametrize("role", ["user", "item", "fold"])
@pytest.mark.parametrize("method", ["evaluate", "relevance"])
def test_pandas_role_in_the_index_says_reset_index(side: str, role: str, method: str) -> None:
    pd = pytest.importorskip("pandas")
    recs = pd.DataFrame({"fold": [0], "user": [1], "item": ["a"], "rank": [1]})
    truth = pd.DataFrame({"fold": [0], "user": [1], "item": ["a"]})
    if side == "recs":
        recs = recs.set_index(role)
    else:
        truth = truth.set_index(role)
    call = getattr(recs.rank, method)
    args = (truth, ["map"]) if method == "evaluate" else (truth,)
    with pytest.raises(
        ValueError,
        match=rf"{side} has no column '{role}': it is an index level.*"
        rf"{side}\.reset_index\(\)",
    ):
        call(*args, by="fold")


def test_pandas_positions_role_in_the_index() -> None:
    pd = pytest.importorskip("pandas")
    recs = pd.DataFrame({"user": [1], "item": ["a"], "score": [1.0]}).set_index(["user", "item"])
    with pytest.raises(ValueError, match=r"recs has no column 'user': it is an index level"):
        recs.rank.positions(score="score")


def test_sample_is_reachable_as_documented() -> None:
    sample = prm.sample.sample_data(n_users=20, n_items=30)
    assert prm.sample_data is prm.sample.sample_data
    assert {"user", "item"} <= set(sample.recs.columns)
    assert {"user", "item"} <= set(sample.truth.columns)
    assert "sample" in prm.__all__
    assert "sample_data" in prm.__all__


@pytest.mark.parametrize(
    ("matched", "warns"), [(0, True), (300, True), (600, False), (30_000, False)]
)
def test_overlap_screen_on_a_truth_larger_than_its_sample(matched: int, warns: bool) -> None:
    # 60,000 truth users, one row each: the screen samples every 3rd row
    n = 60_000
    truth = pl.DataFrame({"user": range(n), "item": 7})
    recs_users = [*range(matched), *range(n, 2 * n - matched)]
    recs = pl.DataFrame({"user": recs_users, "item": 7, "rank": 1})
    screen = overlap.clearly_overlapping(recs.lazy(), truth.lazy(), user="user", item="item")
    # 300 of 60,000 = 0.5% < 1%; 600 = 1%; the screen settles only clear cases
    assert screen is (matched == 30_000)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        prm.evaluate(recs, truth, ["map"])
    assert [w.category for w in caught] == ([prm.IdOverlapWarning] if warns else [])
