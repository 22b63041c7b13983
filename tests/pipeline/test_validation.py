"""Bad input gets a clear error naming the column, the count and an example row."""

from __future__ import annotations

import math

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

import polars_rankmetrics as prm
from polars_rankmetrics import _validation
from polars_rankmetrics._pipeline.checks import recs_checks
from polars_rankmetrics._pipeline.inputs import RecsSpec
from tests.conftest import Backend

RECS = {"user": [1, 1, 2], "item": ["a", "b", "a"], "rank": [1, 2, 1]}
TRUTH = {"user": [1, 2], "item": ["b", "a"]}


def run(
    backend: Backend, recs: dict, truth: dict, metrics: object = "map@2", **options: object
) -> pl.DataFrame:
    """Evaluate and collect (lazy data errors surface on collect)."""
    result = backend.frame(recs).rank.evaluate(backend.frame(truth), metrics, **options)
    return backend.polars(result)


def test_valid_input_passes(backend: Backend) -> None:
    assert run(backend, RECS, TRUTH)["map@2"][0] == pytest.approx(0.75)


def test_missing_recs_column_is_named_with_the_existing_ones(backend: Backend) -> None:
    recs = {"user": [1], "product": ["a"], "rank": [1]}
    with pytest.raises(
        ValueError, match=r"recs is missing column 'item'.*'user', 'product', 'rank'"
    ):
        run(backend, recs, TRUTH)


def test_missing_column_suggests_the_closest_name(backend: Backend) -> None:
    with pytest.raises(ValueError, match=r"'scor'.*did you mean 'score'"):
        run(backend, {**RECS, "score": [0.3, 0.2, 0.1]}, TRUTH, score="scor")


@pytest.mark.parametrize(
    ("scores", "advised"),
    [
        ({"score": [0.3, 0.2, 0.1]}, "score='score'"),
        ({"prediction": [0.3, 0.2, 0.1], "count": [4, 5, 6]}, "score='prediction'"),
        ({"count": [4, 5, 6], "value": [0.3, 0.2, 0.1]}, "score='value'"),
    ],
)
def test_a_score_column_without_score_is_told_to_pass_score(
    backend: Backend, scores: dict, advised: str
) -> None:
    # the commonest first mistake: scores and no ranks, without score= (not "pass rank=...")
    recs = {"user": RECS["user"], "item": RECS["item"], **scores}
    with pytest.raises(ValueError, match=r"recs is missing column 'rank'") as refused:
        run(backend, recs, TRUTH)
    message = str(refused.value)
    assert f"looks like a score: pass {advised} to rank each user's items by it" in message
    assert "e.g. rank=..." not in message


def test_no_score_is_advised_without_a_column_like_one(backend: Backend) -> None:
    recs = {"user": RECS["user"], "item": RECS["item"], "count": [4, 5, 6]}
    with pytest.raises(ValueError, match=r"with the keyword of that role, e.g. rank=\.\.\.$"):
        run(backend, recs, TRUTH)


def test_missing_truth_relevance_column(backend: Backend) -> None:
    with pytest.raises(ValueError, match=r"truth is missing column 'grade' for relevance="):
        run(backend, RECS, TRUTH, relevance="grade")


def test_missing_by_column(backend: Backend) -> None:
    with pytest.raises(ValueError, match=r"recs is missing column 'model'"):
        run(backend, RECS, TRUTH, by="model")


@pytest.mark.parametrize("column", ["user", "item", "rank"])
def test_nulls_in_recs_are_counted_with_an_example(backend: Backend, column: str) -> None:
    recs = {**RECS, column: [*RECS[column][:2], None]}
    with pytest.raises(
        ValueError,
        match=rf"recs column '{column}' \({column}\) has 1 null value\(s\); example row: .*{column}=None",
    ):
        run(backend, recs, TRUTH)


def test_nulls_in_truth(backend: Backend) -> None:
    with pytest.raises(ValueError, match=r"truth column 'item' \(item\) has 1 null"):
        run(backend, RECS, {"user": [1, 2], "item": ["b", None]})


def test_float_ranks_are_refused(backend: Backend) -> None:
    with pytest.raises(
        TypeError, match=r"recs column 'rank' \(rank\) must hold integer positions.*Float64"
    ):
        run(backend, {**RECS, "rank": [1.0, 2.0, 1.0]}, TRUTH)


def test_ranks_below_one_are_refused(backend: Backend) -> None:
    with pytest.raises(
        ValueError,
        match=r"recs column 'rank' \(rank\) has 2 value\(s\) below 1.*example row: user=1, item='a', rank=0",
    ):
        run(backend, {**RECS, "rank": [0, 2, -1]}, TRUTH)


def test_duplicate_items_in_a_list_are_refused(backend: Backend) -> None:
    # 'b' is relevant for user 1: its repeat changes AP
    recs = {"user": [1, 1, 1], "item": ["b", "a", "b"], "rank": [1, 2, 3]}
    with pytest.raises(
        ValueError,
        match=r"recs has 2 rows with a duplicated \(user, item\).*duplicates='first'.*example row: user=1, item='b'",
    ):
        run(backend, recs, TRUTH, "map@3")


def test_a_repeated_non_relevant_item_is_accepted_with_given_ranks(backend: Backend) -> None:
    # documented: with given ranks, 'a' (not relevant for user 1) repeated changes no
    # measure that reads the hits; user 1: b at 2, AP 0.5; user 2 has no list: 0
    recs = {"user": [1, 1, 1], "item": ["a", "b", "a"], "rank": [1, 2, 3]}
    assert run(backend, recs, TRUTH, "map@3")["map@3"][0] == pytest.approx(0.25)
    # with scores the repeat takes a slot: refused
    scored = {"user": [1, 1, 1], "item": ["a", "b", "a"], "score": [0.9, 0.5, 0.1]}
    with pytest.raises(ValueError, match=r"recs has 2 rows with a duplicated \(user, item\)"):
        run(backend, scored, TRUTH, "map@3", score="score")


def test_duplicates_beyond_every_cutoff_cannot_change_a_metric(backend: Backend) -> None:
    # documented: lists are checked up to the largest cutoff asked for
    recs = {"user": [1, 1, 1], "item": ["b", "a", "b"], "rank": [1, 2, 3]}
    # user 1 finds b at position 1 (AP 1); user 2 got no list and scores 0
    assert run(backend, recs, TRUTH, "map@2")["map@2"][0] == pytest.approx(0.5)
    with pytest.raises(ValueError, match=r"duplicated \(user, item\)"):
        run(backend, recs, TRUTH, ["map@2", "mrr"])  # mrr reads the whole list


def test_duplicates_first_keeps_the_best_position(backend: Backend) -> None:
    # Kaggle convention: the repeat wastes its slot, so 'b' stays at position 3
    recs = {"user": [1, 1, 1], "item": ["a", "a", "b"], "rank": [1, 2, 3]}
    scores = run(
        backend, recs, {"user": [1], "item": ["b"]}, ["mrr", "precision@3"], duplicates="first"
    )
    assert scores.row(0) == pytest.approx((1 / 3, 1 / 3))


def test_duplicates_first_with_scores_renumbers(backend: Backend) -> None:
    recs = {"user": [1, 1, 1], "item": ["a", "a", "b"], "score": [0.9, 0.8, 0.7]}
    scores = run(
        backend, recs, {"user": [1], "item": ["b"]}, "mrr", score="score", duplicates="first"
    )
    assert scores["mrr"][0] == pytest.approx(0.5)


def test_two_relevant_items_at_one_position_are_refused(backend: Backend) -> None:
    recs = {"user": [1, 1], "item": ["a", "b"], "rank": [1, 1]}
    with pytest.raises(
        ValueError, match=r"duplicated \(user, rank\): two items share one position"
    ):
        run(backend, recs, {"user": [1, 1], "item": ["a", "b"]})


def test_duplicate_truth_rows_are_refused(backend: Backend) -> None:
    with pytest.raises(
        ValueError,
        match=r"truth has 2 rows with a duplicated \(user, item\).*example row: user=1, item='b'",
    ):
        run(backend, RECS, {"user": [1, 1], "item": ["b", "b"]})


def test_string_against_integer_ids_is_refused(backend: Backend) -> None:
    truth = {"user": ["1", "2"], "item": ["b", "a"]}
    with pytest.raises(
        TypeError,
        match=r"key column 'user' has dtype Int64 in recs but String in truth.*silently be 0",
    ):
        run(backend, RECS, truth)


def test_integer_widths_and_categoricals_still_match(backend: Backend) -> None:
    if backend.name == "pandas":
        pytest.skip("pandas frames carry their own dtypes; covered in the pandas suite")
    recs = backend.frame(RECS, user=pl.Int32, item=pl.Categorical)
    truth = backend.frame(TRUTH, user=pl.UInt8)
    scores = backend.polars(recs.rank.evaluate(truth, "map@2"))
    assert scores["map@2"][0] == pytest.approx(0.75)


def missing(backend: Backend) -> str:
    """How a NaN is reported: pandas treats NaN as a missing value, so it arrives as null."""
    return "null" if backend.name == "pandas" else "NaN"


def test_nan_scores_are_refused(backend: Backend) -> None:
    recs = {"user": [1, 1], "item": ["a", "b"], "score": [0.5, math.nan]}
    with pytest.raises(
        ValueError,
        match=rf"recs column 'score' \(score\) has 1 {missing(backend)} value\(s\); example row: user=1, item='b'",
    ):
        run(backend, recs, TRUTH, score="score")


def test_nan_relevance_is_refused(backend: Backend) -> None:
    truth = {"user": [1, 2], "item": ["b", "a"], "rel": [1.0, math.nan]}
    with pytest.raises(
        ValueError, match=rf"truth column 'rel' \(relevance\) has 1 {missing(backend)}"
    ):
        run(backend, RECS, truth, relevance="rel")


def test_non_numeric_relevance_is_refused(backend: Backend) -> None:
    truth = {"user": [1, 2], "item": ["b", "a"], "rel": ["high", "low"]}
    with pytest.raises(TypeError, match=r"truth column 'rel' \(relevance\) must be numeric"):
        run(backend, RECS, truth, relevance="rel")


@pytest.mark.parametrize("metric", ["map@0", "ndcg@-1"])
def test_cutoff_below_one(backend: Backend, metric: str) -> None:
    with pytest.raises(ValueError, match=r"map@0|ndcg@-1"):
        run(backend, RECS, TRUTH, metric)


def test_unknown_metric_suggests_the_closest(backend: Backend) -> None:
    with pytest.raises(
        ValueError, match=r"unknown metric 'ndgc' in 'ndgc@10'; did you mean 'ndcg'"
    ):
        run(backend, RECS, TRUTH, "ndgc@10")


def test_metric_needing_a_cutoff(backend: Backend) -> None:
    with pytest.raises(ValueError, match=r"'precision' needs a cutoff, e.g. 'precision@10'"):
        run(backend, RECS, TRUTH, "precision")


def test_metric_taking_no_cutoff(backend: Backend) -> None:
    with pytest.raises(ValueError, match=r"'r_precision' takes no cutoff"):
        run(backend, RECS, TRUTH, "r_precision@5")


def test_repeated_metric(backend: Backend) -> None:
    with pytest.raises(ValueError, match=r"requested twice"):
        run(backend, RECS, TRUTH, ["map@2", "map@2"])


def test_empty_metric_list(backend: Backend) -> None:
    with pytest.raises(ValueError, match=r"metrics is empty"):
        run(backend, RECS, TRUTH, [])


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("denominator", "min-k", r"denominator must be one of .*did you mean 'min_k'"),
        ("gain", "exp", r"gain must be one of"),
        ("ties", "random", r"ties must be one of"),
        ("users_without_recs", "drop", r"users_without_recs must be one of"),
        ("users_without_truth", "keep", r"users_without_truth must be one of"),
        ("duplicates", "last", r"duplicates must be one of"),
        ("conventions", "kaggle", r"conventions must be one of"),
    ],
)
def test_unknown_convention_values(backend: Backend, option: str, value: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        run(backend, RECS, TRUTH, **{option: value})


def test_several_problems_are_reported_together(backend: Backend) -> None:
    recs = {"user": [1, 1, None], "item": ["b", "b", "c"], "rank": [1, 2, 0]}
    with pytest.raises(ValueError, match=r"(?s)null value.*below 1.*duplicated \(user, item\)"):
        run(backend, recs, TRUTH)


def test_lazy_data_errors_wait_for_collect() -> None:
    recs = pl.LazyFrame({"user": [1, None], "item": ["a", "b"], "rank": [1, 2]})
    query = recs.rank.evaluate(pl.LazyFrame(TRUTH), "map@2")  # nothing is collected here
    with pytest.raises(ValueError, match=r"has 1 null value"):
        query.collect()
    with pytest.raises(ValueError, match=r"has 1 null value"):
        query.collect(engine="streaming")


def test_non_frames_are_refused() -> None:
    with pytest.raises(
        TypeError,
        match=r"recs must be a Polars DataFrame or LazyFrame, .*; got dict "
        r"\(a dict of columns: pl\.DataFrame\(recs\) first\)",
    ):
        prm.evaluate(RECS, pl.DataFrame(TRUTH), "map@2")  # type: ignore[arg-type]


@pytest.mark.parametrize("k", [0, -3, 1.5, True])
def test_positions_cutoff_is_checked(k: object) -> None:
    with pytest.raises((ValueError, TypeError), match=r"k must be"):
        prm.positions(pl.DataFrame(RECS), k)  # type: ignore[arg-type]


def test_metric_functions_check_their_arguments() -> None:
    with pytest.raises(ValueError, match=r"k must be >= 1"):
        prm.ndcg(0)
    with pytest.raises(ValueError, match=r"denominator must be one of"):
        prm.average_precision(5, denominator="all")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"precision needs a cutoff"):
        prm.precision(None)  # type: ignore[arg-type]


def test_relevance_refuses_to_overwrite_columns() -> None:
    ranked = pl.DataFrame({**RECS, "is_relevant": [True, False, True]})
    with pytest.raises(ValueError, match=r"already has column\(s\) \['is_relevant'\]"):
        ranked.rank.relevance(pl.DataFrame(TRUTH))


# --- the screens: cheap scalar tests that decide whether rows are searched at all


# both forms of the duplicate screen: a sort of the whole hash column (frames in
# memory) and a streaming count of distinct hashes (lazy scans)
IN_MEMORY = pytest.mark.parametrize("in_memory", [True, False], ids=["sorted", "counted"])


@IN_MEMORY
@given(st.lists(st.tuples(st.integers(-3, 3), st.sampled_from(["a", "b", "", "ab"])), max_size=12))
def test_duplicate_screen_fires_exactly_when_keys_repeat(
    in_memory: bool, rows: list[tuple[int, str]]
) -> None:
    # the screen may only err towards firing (a hash collision); on these tiny key sets
    # a collision of 64-bit hashes would be a defect of the hash mixing, e.g. (a, b) ~ (b, a)
    frame = pl.DataFrame(rows, schema={"user": pl.Int64, "item": pl.String}, orient="row")
    check = _validation.duplicate_check(
        "recs", ["user", "item"], ("user", "item"), hint="", in_memory=in_memory
    )
    expected = len(set(rows)) < len(rows)
    assert frame.select(check.screen).item() is expected
    # the same through the streaming engine, morsel by morsel
    streamed = frame.lazy().select(check.screen).collect(engine="streaming")
    assert streamed.item() is expected


@IN_MEMORY
def test_duplicate_screen_tells_swapped_keys_apart(in_memory: bool) -> None:
    frame = pl.DataFrame({"user": [1, 2], "item": [2, 1]})
    check = _validation.duplicate_check(
        "recs", ["user", "item"], ("user", "item"), hint="", in_memory=in_memory
    )
    assert frame.select(check.screen).item() is False


def test_a_screen_that_fires_without_bad_rows_passes_the_result_through() -> None:
    # what a hash collision looks like: the rows are searched and nothing is found
    collision = _validation.DataCheck(
        bad=pl.lit(value=False), message="never {n}", show=("user",), screen=pl.lit(value=True)
    )
    result = pl.LazyFrame({"x": [1.0, 2.0]})
    checked = _validation.guard(result, [(pl.LazyFrame({"user": [1, 1]}), [collision])])
    assert checked.collect().equals(result.collect())


def test_rows_are_searched_only_when_a_screen_fires() -> None:
    # a bad row behind a screen that stays quiet is not looked for: the screen is the gate
    quiet = _validation.DataCheck(
        bad=pl.col("user") > 0, message="{n} bad", show=("user",), screen=pl.lit(value=False)
    )
    loud = _validation.DataCheck(
        bad=pl.col("user") > 0, message="{n} bad", show=("user",), screen=pl.lit(value=True)
    )
    frame = pl.LazyFrame({"user": [1, 2]})
    assert _validation.summary(frame, [quiet]).collect()["__prm_check_0_n"].to_list() == [0]
    assert _validation.summary(frame, [loud]).collect()["__prm_check_0_n"].to_list() == [2]


@pytest.mark.parametrize("position", ["rank", "score"])
def test_row_checks_are_screened_only_for_frames_in_memory(position: str) -> None:
    # in memory the null counts are known and a minimum is one fast pass; on a scan the
    # rows must not wait for a screen (they stream through the counts instead)
    schema = pl.Schema({"user": pl.Int64, "item": pl.Int64, "rank": pl.Int64, "score": pl.Float64})
    spec = RecsSpec("user", "item", "rank", "score" if position == "score" else None, ())
    screened = recs_checks(spec, schema, in_memory=True)
    streamed = recs_checks(spec, schema, in_memory=False)
    assert len(screened) == len(streamed) == 4
    assert all(check.screen is not None for check in screened)
    assert all(check.screen is None for check in streamed)


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("user", None, "'user' \\(user\\) has 1 null"),
        ("rank", 0, "'rank' \\(rank\\) has 1 value\\(s\\) below 1"),
        ("rank", None, "'rank' \\(rank\\) has 1 null"),
    ],
)
def test_screened_row_checks_find_a_bad_row_among_many(
    column: str, value: int | None, message: str
) -> None:
    # one bad row in the middle of a frame in memory: its screen fires and the row is shown
    n = 50_000
    rows = pl.int_range(n, eager=True)
    recs = pl.DataFrame({"user": rows // 10, "item": rows, "rank": rows % 10 + 1})
    bad = recs.with_columns(
        pl.when(pl.int_range(n) == n // 2).then(value).otherwise(pl.col(column)).alias(column)
    )
    truth = pl.DataFrame({"user": [0], "item": [0]})
    with pytest.raises(ValueError, match=message):
        prm.evaluate(bad, truth, "map@10")
    assert prm.evaluate(recs, truth, "map@10")["map@10"].item() == 1.0
