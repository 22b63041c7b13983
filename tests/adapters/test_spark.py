"""``polars_rankmetrics.spark.evaluate``: the single-machine numbers, on a local Spark.

The cases are the single-machine suite's own: the worked examples of
METRICS.md (``tests/measures/test_worked_examples.py``), stacked side by side as one
``by`` group per example so that each Spark job checks them all, and the
hypothesis-generated cases of ``tests/measures/test_properties.py`` (every convention,
tied scores, graded truth, integer ids of two widths, models and folds). Each
Spark result is compared with ``polars_rankmetrics.evaluate`` on the same
input to 1e-12, and a few with the hand-worked values directly.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

pytest.importorskip("pyspark")

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import types as T  # noqa: N812

import polars_rankmetrics as prm
from polars_rankmetrics import spark as prs
from polars_rankmetrics.evaluation import parse_metrics
from tests.measures import test_lists as beyond
from tests.measures import test_lists_properties as beyond_props
from tests.measures import test_popularity_count as counted
from tests.measures import test_worked_examples as worked
from tests.measures.test_properties import NOBODY, NOTHING_RELEVANT, Case, cases

pytestmark = [
    pytest.mark.spark,
    # pyspark warns about pandas 3 when an Arrow UDF is declared; these never use pandas
    pytest.mark.filterwarnings("ignore:PySpark does not yet fully support pandas:FutureWarning"),
]

TOL = 1e-12


def to_spark(spark: SparkSession, frame: pl.DataFrame) -> DataFrame:
    return spark.createDataFrame(frame.to_arrow())


def to_polars(frame: DataFrame) -> pl.DataFrame:
    result = pl.from_arrow(frame.toArrow())
    assert isinstance(result, pl.DataFrame)
    return result


def assert_same(got: pl.DataFrame, expected: pl.DataFrame, metrics: list[str]) -> None:
    """Same columns, same key rows, metric values within 1e-12 (null where null)."""
    assert got.columns == expected.columns
    keys = [name for name in expected.columns if name not in metrics]
    if keys:
        got, expected = got.sort(keys), expected.sort(keys)
    assert got.select(keys).rows() == expected.select(keys).rows()
    for name in metrics:
        assert got.schema[name] == pl.Float64
        for g, e in zip(got[name].to_list(), expected[name].to_list(), strict=True):
            assert (g is None) == (e is None), (name, got, expected)
            if e is not None:
                assert math.isclose(g, e, rel_tol=0, abs_tol=TOL), (name, g, e)


def both(
    spark: SparkSession,
    recs: pl.DataFrame,
    truth: pl.DataFrame,
    metrics: list[str],
    **options: Any,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The Spark result and the single-machine one, per user and as means, compared."""
    labels = [part.label for part in prm.aggregation_parts(metrics)]
    results = []
    for per_user in (False, True):
        expected = prm.evaluate(recs, truth, metrics, per_user=per_user, **options)
        got = prs.evaluate(
            to_spark(spark, recs), to_spark(spark, truth), metrics, per_user=per_user, **options
        )
        assert isinstance(got, DataFrame)
        results.append(to_polars(got))
        assert_same(results[-1], expected, labels)
    return results[0], results[1]


# ---------------------------------------------------------------- worked examples


def stacked(examples: dict[str, tuple[dict, dict]]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The examples side by side, one ``case`` each (a ``by`` column of both frames)."""
    recs, truth = [], []
    for name, (case_recs, case_truth) in examples.items():
        recs.append(pl.DataFrame(case_recs).with_columns(case=pl.lit(name)))
        graded = pl.DataFrame(case_truth)
        if "rel" not in graded.columns:
            graded = graded.with_columns(rel=pl.lit(1))
        truth.append(graded.with_columns(pl.col("rel").cast(pl.Int64), case=pl.lit(name)))
    return pl.concat(recs), pl.concat(truth)


WORKED = {
    "1": (worked.EXAMPLE_1_RECS, worked.EXAMPLE_1_TRUTH),
    "2a": worked.from_pattern([1, 0, 1, 0, 0, 1, 0, 0, 1, 1], 5),
    "2b": worked.from_pattern([0, 1, 0, 0, 1, 0, 1, 0, 0, 0], 3),
    "3": worked.from_pattern(worked.EXAMPLE_3_PATTERN),
    "4": (worked.EXAMPLE_4_RECS, worked.EXAMPLE_4_TRUTH),
    "5": worked.first_relevant_at([3, 2, 1]),
    "5b": worked.first_relevant_at([1, 3, 3, 5, 2]),
    "6": worked.from_pattern([1, 0, 1, 0, 1], n_relevant=6),
    "7": (
        worked.ranked_lists({"u": ["g1", "g2", "g3"]}),
        {"user": ["u", "u", "u"], "item": ["g3", "g2", "g1"], "rel": [3, 2, 1]},
    ),
}
WORKED_METRICS = [
    "map@3",
    "map@5",
    "map@10",
    "ndcg@3",
    "ndcg@5",
    "mrr",
    "precision@5",
    "recall@5",
    "hits@3",
    "hit_rate@1",
    "mean_rank",
    "r_precision",
    "pooled_recall@5",
]


@pytest.mark.parametrize(
    ("options", "hand"),
    [
        # METRICS.md: example 1 MAP@5 0.275, NDCG@5 0.440919, MRR 0.375; example 5 MRR
        # 0.611111 and mean rank 2.8 (5b); example 7 graded NDCG@3 0.789998 (linear)
        (
            {},
            {
                ("1", "map@5"): 0.275,
                ("1", "ndcg@5"): 0.440919,
                ("1", "mrr"): 0.375,
                ("5", "mrr"): 0.611111,
                ("5b", "mean_rank"): 2.8,
                ("7", "ndcg@3"): 0.789998,
            },
        ),
        # AP over hits (example 4: MAP@3 0.791667) and the exponential gain (example 7:
        # 0.680606); trec_eval's conventions run in the models test below
        (
            {"denominator": "hits", "gain": "exponential"},
            {("4", "map@3"): 0.791667, ("7", "ndcg@3"): 0.680606},
        ),
    ],
    ids=["default", "hits-exponential"],
)
def test_worked_examples_in_one_job(
    spark: SparkSession, options: dict[str, Any], hand: dict[tuple[str, str], float]
) -> None:
    recs, truth = stacked(WORKED)
    means, _ = both(spark, recs, truth, WORKED_METRICS, by="case", relevance="rel", **options)
    rows = {row["case"]: row for row in means.rows(named=True)}
    for (case, metric), value in hand.items():
        assert rows[case][metric] == pytest.approx(value, abs=5e-7), (case, metric)


# ---------------------------------------------------------------- models across buckets


def models_and_folds() -> tuple[pl.DataFrame, pl.DataFrame]:
    """60 users in two folds; model "a" serves most users, "b" five of them, "c" fold 1 only.

    With 8 buckets most buckets have no list of "b" at all, and fold 0 none of
    "c": each model must still be charged for every truth user of its folds.
    Scores tie often (ranks from scores with ties), grades are 0-3, users
    50-59 get nothing from anyone, users 60-64 only recommendations.
    """
    recs_rows, truth_rows = [], []
    for fold in (0, 1):
        for user in range(60):
            for item in range(user % 5):
                truth_rows.append(
                    (fold, user, (user * 7 + item * 3 + fold) % 13, (user + item) % 4)
                )
        for model, users in (("a", range(0, 50)), ("b", range(0, 5)), ("c", range(10, 65))):
            if model == "c" and fold == 0:
                continue
            for user in users:
                for item in range(6):
                    score = float((user + 2 * item + fold) % 4)
                    recs_rows.append((fold, model, user, (user + item * 5) % 13, score))
    recs = pl.DataFrame(
        recs_rows,
        schema={
            "fold": pl.Int64,
            "model": pl.String,
            "user": pl.Int32,
            "item": pl.Int64,
            "score": pl.Float64,
        },
        orient="row",
    )
    truth = pl.DataFrame(
        truth_rows,
        schema={"fold": pl.Int64, "user": pl.Int64, "item": pl.Int64, "rel": pl.Int64},
        orient="row",
    )
    return recs, truth


MODEL_METRICS = [
    "map@5",
    "ndcg@5",
    "ndcg@2",
    "mrr@5",
    "mean_rank",
    "recall@3",
    "precision@2",
    "pooled_recall@3",
    # measures of the registry and multi-cutoff strings: nothing Spark-specific about them
    "ndcg@3,10",
    "fbeta(beta=2)@5",
    "num_hits@3",
]


@pytest.mark.parametrize(
    "options",
    [
        {"by": ["fold", "model"], "relevance": "rel", "conventions": "trec", "n_buckets": 8},
        {
            "by": "model",
            "relevance": "rel",
            "ties": "input",
            "users_without_truth": "zero",
            "gain": "exponential",
            "relevance_level": 2,
        },
    ],
    ids=["trec-folds-8-buckets", "input-ties-zero-exponential"],
)
def test_models_missing_from_buckets_are_still_charged(
    spark: SparkSession, options: dict[str, Any]
) -> None:
    recs, truth = models_and_folds()
    if options["by"] == "model":
        recs, truth = (
            recs.filter(pl.col("fold") == 1).drop("fold"),
            truth.filter(pl.col("fold") == 1).drop("fold"),
        )
    n_buckets = options.pop("n_buckets", None)
    labels = [part.label for part in prm.aggregation_parts(MODEL_METRICS)]
    results = []
    for per_user in (False, True):
        expected = prm.evaluate(
            recs, truth, MODEL_METRICS, score="score", per_user=per_user, **options
        )
        got = prs.evaluate(
            to_spark(spark, recs),
            to_spark(spark, truth),
            MODEL_METRICS,
            score="score",
            per_user=per_user,
            n_buckets=n_buckets,
            **options,
        )
        results.append(to_polars(got))
        assert_same(results[-1], expected, labels)
    # model b served users 0-4 only: its other truth users count at 0, except under
    # trec_eval's conventions (users without a run are left out)
    users_of_b = results[1].filter(model="b")["user"]
    if options.get("conventions") == "trec":
        assert users_of_b.max() < 5
    else:
        assert users_of_b.len() > 40


def test_output_types_follow_evaluate(spark: SparkSession) -> None:
    recs, truth = models_and_folds()
    got = prs.evaluate(
        to_spark(spark, recs.with_columns(pl.col("fold").cast(pl.Int32))),
        to_spark(spark, truth.with_columns(pl.col("fold").cast(pl.Int32))),
        ["mrr", "ndcg@3"],
        by=["fold", "model"],
        score="score",
        per_user=True,
    )
    # Int32 folds stay int; Int32 users against Int64 users join (and come back) as Int64
    assert got.schema == T.StructType(
        [
            T.StructField("fold", T.IntegerType()),
            T.StructField("model", T.StringType()),
            T.StructField("user", T.LongType()),
            T.StructField("mrr", T.DoubleType()),
            T.StructField("ndcg@3", T.DoubleType()),
        ]
    )


# ---------------------------------------------------------------- generated cases


@settings(
    max_examples=2,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(case=cases())
@example(case=NOBODY)
@example(case=NOTHING_RELEVANT)
def test_generated_cases_match_polars(spark: SparkSession, case: Case) -> None:
    """Every convention and metric drawn by the property suite: Spark equals Polars."""
    both(spark, case.recs, case.truth, case.metrics, **case.kwargs)


# ---------------------------------------------------------------- bad input


def polars_error(call: Callable[[], object]) -> BaseException:
    with pytest.raises((ValueError, TypeError)) as info:
        call()
    return info.value


RECS = pl.DataFrame({"user": [1, 1, 2], "item": ["a", "b", "a"], "rank": [1, 2, 1]})
TRUTH = pl.DataFrame({"user": [1, 2], "item": ["b", "a"]})


@pytest.mark.parametrize(
    ("recs", "truth", "metrics", "options"),
    [
        (RECS.rename({"item": "iid"}), TRUTH, ["map@5"], {}),
        (RECS, TRUTH.with_columns(pl.col("user").cast(pl.String)), ["map@5"], {}),
        (RECS, TRUTH, ["mpa@5"], {}),
        (RECS, TRUTH, ["ndcg@0"], {}),
        (RECS.with_columns(pl.col("rank").cast(pl.Float64)), TRUTH, ["mrr"], {}),
        (RECS, TRUTH, ["mrr"], {"ties": "random"}),
    ],
    ids=["missing-column", "string-vs-int", "unknown-metric", "k-0", "float-rank", "bad-ties"],
)
def test_schema_errors_before_any_job(
    spark: SparkSession, recs: pl.DataFrame, truth: pl.DataFrame, metrics: list[str], options: dict
) -> None:
    expected = polars_error(lambda: prm.evaluate(recs, truth, metrics, **options))
    recs_s, truth_s = to_spark(spark, recs), to_spark(spark, truth)
    tracker = spark.sparkContext.statusTracker()
    spark.sparkContext.setJobGroup("schema-errors", "nothing may run")
    try:
        with pytest.raises(type(expected)) as info:
            prs.evaluate(recs_s, truth_s, metrics, **options)
        assert tracker.getJobIdsForGroup("schema-errors") == []
    finally:
        spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)  # type: ignore[arg-type]
    assert str(info.value) == str(expected)


@pytest.mark.parametrize(
    ("recs", "truth", "options"),
    [
        (RECS.with_columns(item=pl.Series(["a", None, "a"])), TRUTH, {}),
        (RECS, pl.concat([TRUTH, TRUTH.head(1)]), {"per_user": True}),
        (RECS.with_columns(score=pl.Series([0.5, float("nan"), 1.0])), TRUTH, {"score": "score"}),
        (RECS.with_columns(rank=pl.Series([1, 1, 0])), TRUTH, {"per_user": True}),
    ],
    ids=["null-item", "duplicated-truth-per-user", "nan-score", "rank-0-per-user"],
)
def test_data_errors_reach_the_driver_as_the_same_message(
    spark: SparkSession, recs: pl.DataFrame, truth: pl.DataFrame, options: dict
) -> None:
    expected = polars_error(lambda: prm.evaluate(recs, truth, ["map@2"], **options))
    with pytest.raises(ValueError, match="invalid input") as info:
        prs.evaluate(
            to_spark(spark, recs),
            to_spark(spark, truth),
            ["map@2"],
            n_buckets=1,  # one bucket: the counts in the message are the whole data's
            **options,
        )
    assert str(info.value).startswith(str(expected))
    assert "PythonException" not in str(info.value)
    assert "counted in one bucket" in str(info.value)


def test_arguments_only_spark_has(spark: SparkSession) -> None:
    with pytest.raises(TypeError, match=r"recs must be a pyspark\.sql\.DataFrame, got DataFrame"):
        prs.evaluate(RECS, to_spark(spark, TRUTH), ["mrr"])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="n_buckets must be a positive integer"):
        prs.evaluate(to_spark(spark, RECS), to_spark(spark, TRUTH), ["mrr"], n_buckets=0)


def test_default_bucket_count_follows_cores_and_size(spark: SparkSession) -> None:
    recs, truth = to_spark(spark, RECS), to_spark(spark, TRUTH)
    # tiny data: three buckets per core of local[2]
    assert prs._default_buckets(spark, recs, truth) == 6
    # Spark's size estimate of a large range: one bucket per 64 MiB
    big = spark.range(200_000_000).selectExpr("id as user", "id as item", "1 as rank")
    estimate = prs._size_estimate(big)
    assert estimate is not None
    assert prs._default_buckets(spark, big) == math.ceil(estimate / (64 * 2**20)) > 6


def test_unknown_group_measures_are_refused() -> None:
    # coverage, gini and personalization combine from exposures; a measure of whole
    # groups added to the registry later cannot be put together from buckets by itself
    known = prm.AggregationPart("coverage@10", "group", ("coverage@10",))
    prs._refuse_group_measures([known], parse_metrics(["coverage@10"]))
    part = prm.AggregationPart("spread@10", "group", ("spread@10",))
    with pytest.raises(ValueError, match=r"\['spread@10'\] take one value per group"):
        prs._refuse_group_measures([part], [])


# ---------------------------------------------------------------- measures of the lists


def list_case_frames(
    case: dict[str, Any],
) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, pl.DataFrame, list[str], list[str]]:
    """A case of the list-measure property suite, with a truth and every measure's string.

    The truth is the interactions (folds their own): users with a history and
    no list are judged at 0, models absent from a bucket still judged there.
    """
    recs, history, items, by = beyond_props._frames(case)
    truth = history.unique()
    metrics = [
        beyond_props._label(
            {"long_tail": f"long_tail(head_share={case['head_share']})"}.get(
                name, f"calibration(alpha={case['alpha']})" if name == "calibration" else name
            ),
            k,
        )
        for name, k in case["cutoffs"].items()
    ]
    return recs, truth, history, items, by, metrics


# two folds with their own history, two models (m2 only in fold f2, for users 0 and 5),
# several categories per item, a list with gaps (user 3: ranks 2 and 6), items 10 and 11
# never shown, item 9 shown but never interacted with, ties in popularity
FOLDS_AND_MODELS = {
    "layout": "fold_model",
    "recs": [
        {"fold": fold, "model": model, "user": user, "item": item, "rank": rank}
        for fold, model, user, items, ranks in [
            ("f1", "m1", 0, [1, 2, 3], [1, 2, 3]),
            ("f1", "m1", 1, [2, 9], [1, 2]),
            ("f1", "m1", 3, [4, 1], [2, 6]),
            ("f2", "m1", 0, [5, 6, 7, 8], [1, 2, 3, 4]),
            ("f2", "m1", 2, [1], [1]),
            ("f2", "m2", 0, [1, 2], [1, 2]),
            ("f2", "m2", 5, [3, 2, 1], [1, 2, 3]),
        ]
        for item, rank in zip(items, ranks, strict=True)
    ],
    "history": [
        {"fold": fold, "user": user, "item": item}
        for fold, user, item in [
            ("f1", 0, 1),
            ("f1", 0, 2),
            ("f1", 1, 2),
            ("f1", 1, 2),
            ("f1", 4, 3),
            ("f1", 3, 11),
            ("f2", 0, 5),
            ("f2", 2, 1),
            ("f2", 5, 6),
            ("f2", 6, 7),
            ("f2", 7, 10),
        ]
    ],
    "categories": [["w", "x"], ["x"], ["y", "z", "w"], ["y"], ["z"], ["w", "y"]] * 2,
    "cutoffs": {
        "coverage": 2,
        "novelty": 3,
        "arp": None,
        "long_tail": 2,
        "gini": 3,
        "personalization": None,
        "ild": 3,
        "calibration": 5,
    },
    "head_share": 0.35,
    "alpha": 0.5,
}


@settings(
    max_examples=1,  # each case is one Spark call: the property suite has the breadth
    deadline=None,
    derandomize=True,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.function_scoped_fixture,
        HealthCheck.data_too_large,
    ],
)
@given(case=beyond_props.cases(), with_truth=st.booleans(), per_user=st.booleans())
@example(case=FOLDS_AND_MODELS, with_truth=True, per_user=False)
@example(case=FOLDS_AND_MODELS, with_truth=True, per_user=True)
def test_list_measures_match_polars(
    spark: SparkSession, case: dict[str, Any], *, with_truth: bool, per_user: bool
) -> None:
    """All eight measures of the lists, by groups, short lists, unseen items, categories."""
    recs, truth, history, items, by, metrics = list_case_frames(case)
    if with_truth:
        metrics = [*metrics, "map@3", "mrr"]
    # the catalog as a Polars frame here, as a Spark one in the hand-values test
    inputs: dict[str, Any] = {
        "items": items,
        "category": "category",
        "by": by or None,
        "per_user": per_user,
    }
    expected = prm.evaluate(
        recs, truth if with_truth else None, metrics, interactions=history, **inputs
    )
    got = prs.evaluate(
        to_spark(spark, recs),
        to_spark(spark, truth) if with_truth else None,
        metrics,
        interactions=to_spark(spark, history),
        n_buckets=3,
        **inputs,
    )
    assert_same(to_polars(got), expected, [part.label for part in prm.aggregation_parts(metrics)])


@pytest.mark.parametrize("per_user", [False, True])
def test_popularity_by_interaction_rows_matches_polars(spark: SparkSession, per_user: bool) -> None:
    """popularity=interactions: Spark counts rows (not distinct users) over every bucket."""
    recs, history = pl.DataFrame(counted.RECS), pl.DataFrame(counted.HISTORY)
    metrics = [
        "arp@2",
        "arp(popularity=interactions)@2",
        "novelty(popularity=interactions)@2",
        "long_tail(head_share=0.3, popularity=interactions)@2",
    ]
    expected = prm.evaluate(recs, None, metrics, interactions=history, per_user=per_user)
    got = prs.evaluate(
        to_spark(spark, recs),
        None,
        metrics,
        interactions=to_spark(spark, history),
        per_user=per_user,
        n_buckets=3,
    )
    assert_same(to_polars(got), expected, metrics)
    if not per_user:
        assert to_polars(got).row(0)[:2] == (1.875, 2.75)


# METRICS.md's beyond-accuracy example (tests/measures/test_lists.py): coverage@2 0.5, novelty@2
# 1.655261, gini@2 0.575, personalization 8/9, ild@3 5/6 (one category per item)
LIST_HAND = {
    "coverage@2": 0.5,
    "novelty@2": 1.6552614282206957,
    "gini@2": 0.575,
    "personalization": 8 / 9,
    "ild@3": 5 / 6,
}


def test_list_measures_hand_values(spark: SparkSession) -> None:
    recs, history = pl.DataFrame(beyond.RECS), pl.DataFrame(beyond.HISTORY)
    items = pl.DataFrame(beyond.CATALOG)
    metrics = [*LIST_HAND, "arp", "long_tail@2", "calibration@3"]
    got = to_polars(
        prs.evaluate(
            to_spark(spark, recs),
            None,
            metrics,
            interactions=to_spark(spark, history),
            items=to_spark(spark, items),
            category="genre",
        )
    )
    for label, value in LIST_HAND.items():
        assert got[label][0] == pytest.approx(value, abs=1e-12), label
    expected = prm.evaluate(
        recs, None, metrics, interactions=history, items=items, category="genre"
    )
    assert_same(got, expected, metrics)


@pytest.mark.parametrize(
    ("recs", "items", "driver"),
    [
        (beyond.RECS, {"item": ["a", "b", "c", "d"], "genre": ["x"] * 4}, False),
        (beyond.RECS, {"item": [*"abcdea"], "genre": ["x"] * 6}, True),
    ],
    ids=["item-missing-from-catalog", "catalog-item-twice"],
)
def test_catalog_errors_are_the_same(
    spark: SparkSession, recs: dict[str, Any], items: dict[str, Any], *, driver: bool
) -> None:
    frames = pl.DataFrame(recs), pl.DataFrame(items)
    expected = polars_error(lambda: prm.list_metrics(frames[0], ["coverage@2"], items=frames[1]))
    with pytest.raises(ValueError, match="invalid input") as info:
        prs.evaluate(
            to_spark(spark, frames[0]), None, ["coverage@2"], items=to_spark(spark, frames[1])
        )
    # the catalog is checked whole on the driver; a bucket reports its own missing items
    assert str(info.value).startswith(str(expected))
    assert ("counted in one bucket" in str(info.value)) is not driver


def test_condensed_lists_with_list_measures_are_refused(spark: SparkSession) -> None:
    recs = to_spark(spark, RECS.with_columns(score=pl.lit(1.0)))
    with pytest.raises(ValueError, match=r"\['coverage@2'\] describe the lists left by"):
        prs.evaluate(
            recs,
            to_spark(spark, TRUTH),
            ["coverage@2", "mrr"],
            score="score",
            unjudged="remove",
            items=pl.DataFrame({"item": ["a", "b"]}),
        )
