"""Every public name, called with every kind of frame: the same numbers, in the caller's kind.

The kinds (:mod:`polars_rankmetrics._frames`): a Polars DataFrame and
LazyFrame, a pandas DataFrame, a pyarrow Table, a pyarrow RecordBatchReader
and a DuckDB relation (both read through ``__arrow_c_stream__``). Each name
of ``polars_rankmetrics.__all__`` (and of ``trec.__all__``, ``kaggle.__all__``)
is either a frame-taking function, called here on small real inputs with
every frame of the call (truth, interactions, items...) of one kind, or
listed in :data:`NO_FRAME` with what it takes instead; a new public name must
be put in one of them. The result must be of the caller's kind (pandas in,
pandas out; lazy in, lazy out where the function is lazy; Arrow in, a Polars
DataFrame out) and equal the Polars-eager result.
"""

from __future__ import annotations

import copy
import io
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankmetrics as prm
from polars_rankmetrics import kaggle, trec

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")
duckdb = pytest.importorskip("duckdb")

Make = Callable[[pl.DataFrame], Any]
"""Turns a Polars frame into the kind under test."""

KINDS: dict[str, Make] = {
    "polars-eager": lambda frame: frame,
    "polars-lazy": lambda frame: frame.lazy(),
    "pandas": lambda frame: frame.to_pandas(),
    "arrow-table": lambda frame: frame.to_arrow(),
    # a reader can be read once: each call of the function gets a fresh one
    "arrow-reader": lambda frame: pa.RecordBatchReader.from_batches(
        frame.to_arrow().schema, frame.to_arrow().to_batches()
    ),
    "duckdb": lambda frame: duckdb.from_arrow(frame.to_arrow()),
}

RECS = pl.DataFrame({
    "model": ["a"] * 6 + ["b"] * 6,
    "user": [1, 1, 2, 2, 3, 3] * 2,
    "item": ["x", "y", "x", "z", "y", "w", "y", "x", "z", "x", "w", "y"],
    "rank": [1, 2] * 6,
})  # fmt: skip
TRUTH = pl.DataFrame({"user": [1, 2, 2, 3], "item": ["y", "z", "w", "w"], "rel": [1, 2, 1, 3]})
INTERACTIONS = pl.DataFrame({"user": [1, 1, 2, 3, 3], "item": ["x", "y", "x", "z", "w"]})
ITEMS = pl.DataFrame({"item": ["w", "x", "y", "z"], "side": ["p", "p", "q", "q"]})
SCORED = pl.DataFrame(
    {"user": [1, 1, 1, 2], "item": ["a", "b", "c", "a"], "score": [0.2, 0.9, 0.4, 0.5]}
)
PER_USER = prm.evaluate(RECS, TRUTH, ["mrr", "ndcg@2"], by="model", per_user=True)
PARTS = prm.per_user_parts(RECS, TRUTH, ["mrr", "pooled_recall@2"], by="model")
MEANS = pl.DataFrame({
    "dataset": ["d1"] * 3 + ["d2"] * 3 + ["d3"] * 3,
    "model": ["a", "b", "c"] * 3,
    "ndcg": [0.3, 0.35, 0.1, 0.2, 0.25, 0.05, 0.15, 0.12, 0.02],
})  # fmt: skip
SEEDS = pl.DataFrame({
    "model": ["a"] * 6, "seed": [1, 1, 1, 2, 2, 2], "user": [1, 2, 3] * 2,
    "mrr": [0.2, 0.4, 0.6, 0.3, 0.5, 0.7],
})  # fmt: skip
RUNS = pl.DataFrame({
    "run": ["bm25"] * 3 + ["dense"] * 3,
    "user": [1, 1, 2, 1, 2, 2],
    "item": ["x", "y", "z", "y", "z", "w"],
    "score": [3.0, 2.0, 1.0, 0.9, 0.8, 0.7],
})  # fmt: skip
CANDIDATES = pl.DataFrame({
    "user": [1, 1, 1, 2, 2, 2], "item": ["y", "a", "b", "z", "a", "c"], "rank": [2, 1, 3, 1, 2, 3],
})  # fmt: skip
ONE_RELEVANT = pl.DataFrame({"user": [1, 2], "item": ["y", "z"]})
SAMPLES = pl.DataFrame({
    "sample": [1, 1, 2, 2, 1, 1], "user": [1, 1, 1, 1, 2, 2],
    "item": ["y", "x", "x", "y", "z", "w"], "rank": [1, 2, 1, 2, 1, 2],
})  # fmt: skip
REFERENCE = RECS.filter(pl.col("model") == "a").drop("model")
COMPARISON = prm.compare_per_user(PER_USER, "mrr", baseline="a")
BOARD = pl.DataFrame({"model": ["a", "b", "c"], "map": [0.3, 0.2, 0.1], "ndcg": [0.5, 0.6, 0.4]})
QRELS = pl.DataFrame({"user": ["q1", "q1", "q2"], "item": ["d1", "d2", "d1"], "rel": [1, 0, 2]})
RUN = pl.DataFrame({
    "user": ["q1", "q1", "q2", "q2"], "item": ["d1", "d3", "d2", "d1"],
    "score": [2.0, 1.0, 2.0, 1.0], "tag": ["t"] * 4,
})  # fmt: skip
SEGMENTS = pl.DataFrame({"user": [1, 2, 3], "segment": ["new", "new", "old"]})
SUBMISSION = pl.DataFrame({"customer_id": ["01", "02"], "prediction": ["A B C", "C A"]})
SOLUTION = pl.DataFrame({"customer_id": ["01", "02"], "prediction": ["B Z", "A"]})


def _drawn(chart: Any) -> list[list[dict[str, Any]]]:
    """A chart's data rows, numbers as floats: pandas holds an integer column with nulls as
    floats, which draws the same chart (3.0 and 3 are one position on an axis)."""
    return [
        [{key: float(v) if isinstance(v, int) and not isinstance(v, bool) else v
          for key, v in row.items()} for row in rows]
        for rows in chart.to_dict()["datasets"].values()
    ]  # fmt: skip


def _written(write: Callable[[io.StringIO], None]) -> str:
    out = io.StringIO()
    write(out)
    return out.getvalue()


Out = Literal["frame", "eager", "polars", "value"]


@dataclass(frozen=True)
class Case:
    """A call of one public function, every frame made by ``make``.

    ``out``: ``"frame"`` a frame of the caller's kind (lazy stays lazy);
    ``"eager"`` the same, but a LazyFrame gives a Polars DataFrame;
    ``"polars"`` always a Polars DataFrame (the Kaggle readers read frames as
    files); ``"value"`` no frame (compared as it is, after ``part``).
    ``part`` picks what to compare from the result.
    """

    call: Callable[[Make], Any]
    out: Out = "frame"
    part: Callable[[Any], Any] = lambda result: result


def _accumulated(k: Make) -> pl.DataFrame:
    evaluator = prm.Evaluator(
        ["mrr", "ndcg@2", "novelty@2"], by="model", relevance="rel", interactions=k(INTERACTIONS)
    )
    for users in ([1, 2], [3]):
        batch = pl.col("user").is_in(users)
        evaluator.update(k(RECS.filter(batch)), k(TRUTH.filter(batch)))
    return evaluator.compute()


# subtopic judgements of RUN's queries and documents (trec.ndeval)
DIVERSITY_QRELS = QRELS.with_columns(subtopic=pl.col("item").str.len_chars() % 2)

FRAMES: dict[str, Case] = {
    "Evaluator": Case(_accumulated, "polars"),
    "aggregate": Case(lambda k: prm.aggregate(k(PARTS), ["mrr", "pooled_recall@2"], by="model")),
    "anova": Case(lambda k: prm.anova(k(PER_USER), "mrr")),
    "check_overlap": Case(lambda k: prm.check_overlap(k(RECS), k(TRUTH)), "value"),
    "compare": Case(lambda k: prm.compare(k(RECS), k(TRUTH), "mrr", baseline="a")),
    "compare_per_user": Case(lambda k: prm.compare_per_user(k(PER_USER), baseline="a")),
    "curves": Case(lambda k: prm.curves(k(RECS), k(TRUTH), ["ndcg", "novelty"], k=[1, 2],
                                        by="model", interactions=k(INTERACTIONS))),
    "evaluate": Case(lambda k: prm.evaluate(
        k(RECS), k(TRUTH), ["map@2", "ndcg@2", "novelty@2", "coverage@2"], by="model",
        relevance="rel", interactions=k(INTERACTIONS), items=k(ITEMS),
    )),
    "expected_exposure": Case(lambda k: prm.expected_exposure(k(SAMPLES), k(TRUTH)), "eager"),
    "friedman": Case(lambda k: prm.friedman(k(MEANS), "ndcg"), "eager",
                     lambda result: result.mean_ranks),
    "fuse": Case(lambda k: prm.fuse(k(RUNS), method="rrf")),
    "group_exposure": Case(lambda k: prm.group_exposure(k(RECS), k(ITEMS), group="side",
                                                        by="model"), "eager"),
    "list_metrics": Case(lambda k: prm.list_metrics(
        k(RECS), ["novelty@2", "coverage@2"], by="model", interactions=k(INTERACTIONS),
        items=k(ITEMS),
    )),
    "optimize_fusion": Case(
        lambda k: prm.optimize_fusion(k(RUNS), k(TRUTH), metric="mrr", step=0.5), "value",
        lambda found: (found.best, found.best_score, found.grid.to_dicts()),
    ),
    "per_user_parts": Case(lambda k: prm.per_user_parts(k(RECS), k(TRUTH), ["mrr", "ndcg@2"],
                                                        by="model")),
    "plot_critical_difference": Case(
        lambda k: prm.plot_critical_difference(prm.friedman(k(MEANS), "ndcg")), "value",
        lambda chart: chart.to_dict(),
    ),
    "plot_comparison": Case(lambda k: prm.plot_comparison(k(COMPARISON)), "value", _drawn),
    "plot_curves": Case(
        lambda k: prm.plot_curves(k(prm.curves(RECS, TRUTH, ["ndcg"], k=[1, 2], by="model"))),
        "value", _drawn,
    ),
    "plot_distribution": Case(lambda k: prm.plot_distribution(k(PER_USER), "mrr"), "value",
                              _drawn),
    "plot_long_tail": Case(lambda k: prm.plot_long_tail(k(RECS), k(INTERACTIONS), score=None),
                           "value", _drawn),
    "plot_segments": Case(lambda k: prm.plot_segments(k(PER_USER), "mrr", k(SEGMENTS)), "value",
                          _drawn),
    "positions": Case(lambda k: prm.positions(k(SCORED), 2, score="score")),
    "rank_correlation": Case(lambda k: prm.rank_correlation(k(BOARD), metric=("map", "ndcg")),
                             "value"),
    "relevance": Case(lambda k: prm.relevance(k(RECS), k(TRUTH), relevance="rel", by="model")),
    "report": Case(lambda k: prm.report(k(COMPARISON), format="markdown"), "value"),
    "sampled_metrics": Case(lambda k: prm.sampled_metrics(
        k(CANDIDATES), k(ONE_RELEVANT), "recall@1", n_items=10, correction="cls",
    )),
    "seeds_interval": Case(lambda k: prm.seeds_interval(k(SEEDS), "mrr", n_resamples=200)),
    "similarity": Case(lambda k: prm.similarity(k(RECS), k(REFERENCE), ["rbo", "jaccard@2"],
                                                by="model")),
    "trec_fair_score": Case(lambda k: prm.trec_fair_score(k(RECS), k(TRUTH), k(ITEMS),
                                                          group="side", by="model"), "eager"),
    "users_needed": Case(lambda k: prm.users_needed(k(PER_USER), "ndcg@2", baseline="a",
                                                    effect=0.05)),
    "top_k": Case(lambda k: prm.top_k(
        np.array([[0.3, 0.1, 0.2], [0.5, 0.5, 0.0]]), 2, users=[1, 2], items=["x", "y", "z"],
        exclude=k(TRUTH),
    ), "polars"),
    "trec.trec_eval": Case(lambda k: trec.trec_eval(k(QRELS), k(RUN), ["map", "P_2"]), "eager"),
    "trec.format_trec_eval": Case(
        lambda k: trec.format_trec_eval(k(trec.trec_eval(QRELS, RUN, "map"))), "value"
    ),
    "trec.ndeval": Case(
        lambda k: trec.ndeval(k(DIVERSITY_QRELS), k(RUN), ["alpha-nDCG@2", "strec@1"]), "eager"
    ),
    "trec.write_trec_run": Case(
        lambda k: _written(lambda out: trec.write_trec_run(k(RUN), out, score="score")), "value"
    ),
    "trec.write_trec_qrels": Case(
        lambda k: _written(lambda out: trec.write_trec_qrels(k(QRELS), out, relevance="rel")),
        "value",
    ),
    "kaggle.read_submission": Case(lambda k: kaggle.read_submission(k(SUBMISSION)), "polars"),
    "kaggle.read_solution": Case(lambda k: kaggle.read_solution(k(SOLUTION)), "polars"),
    "kaggle.score_submission": Case(
        lambda k: kaggle.score_submission(k(SUBMISSION), k(SOLUTION), preset="hm"), "value"
    ),
}  # fmt: skip

#: Public names that take no frame, with what they take instead.
NO_FRAME = {
    "AggregationPart": "a class (aggregation_parts' result)",
    "ConventionOptions": "a TypedDict of keyword options",
    "Conventions": "a class of conventions",
    "EvaluateOptions": "a TypedDict of keyword options",
    "FriedmanResult": "a class (friedman's result)",
    "FusionOptimum": "a class (optimize_fusion's result)",
    "IdOverlap": "a class (check_overlap's result)",
    "IdOverlapWarning": "a warning class",
    "ListInputs": "a TypedDict of keyword options",
    "Measure": "a class: a measure you write (polars_rankmetrics.measures)",
    "MetricSpec": "a class (parse_metric's result)",
    "Roles": "a TypedDict of keyword options",
    "SampledMetricsWarning": "a warning class",
    "Sum": "a class: a sum of a measure you write",
    "__version__": "a string",
    "aggregation_parts": "metric strings",
    "average_precision": "column names: a Polars expression",
    "correction_coefficients": "a metric string and sizes",
    "dcg": "column names: a Polars expression",
    "f1": "column names: a Polars expression",
    "first_relevant_rank": "column names: a Polars expression",
    "hit_rate": "column names: a Polars expression",
    "ndcg": "column names: a Polars expression",
    "parse_metric": "a metric string",
    "parse_metrics": "metric strings",
    "precision": "column names: a Polars expression",
    "r_precision": "column names: a Polars expression",
    # the typed twin of the .rank namespace Polars registers; pandas has its own df.rank
    "rank": "a Polars frame only: the namespace registered on Polars frames",
    "recall": "column names: a Polars expression",
    "reciprocal_rank": "column names: a Polars expression",
    "register_measure": "a Measure",
    "sample": "a module",
    "sample_data": "sizes and a seed",
    "unregister_measure": "a measure's name",
    "trec.TrecMeasure": "a class",
    "trec.parse_trec_measures": "measure strings",
    "trec.read_trec_qrels": "a file",
    "trec.read_trec_diversity_qrels": "a file",
    "trec.ndeval_measures": "measure names",
    "trec.read_trec_run": "a file",
    "trec.trec_eval_files": "nothing: the folder of trec_eval's own test files",
    "kaggle.PRESETS": "a mapping of presets",
    "kaggle.KagglePreset": "a class",
    "kaggle.SubmissionWarning": "a warning class",
}

PUBLIC = [
    *prm.__all__,
    *(f"trec.{name}" for name in trec.__all__),
    *(f"kaggle.{name}" for name in kaggle.__all__),
]


def test_every_public_name_is_classified() -> None:
    unclassified = sorted(set(PUBLIC) - set(FRAMES) - set(NO_FRAME))
    assert not unclassified, f"say whether these take a frame (FRAMES or NO_FRAME): {unclassified}"
    assert not set(FRAMES) & set(NO_FRAME)
    assert not (set(FRAMES) | set(NO_FRAME)) - set(PUBLIC), "a classified name is not public"


def _as_polars(result: Any) -> pl.DataFrame:
    if isinstance(result, pl.LazyFrame):
        return result.collect()
    if isinstance(result, pl.DataFrame):
        return result
    converted = pl.from_pandas(result)
    assert isinstance(converted, pl.DataFrame)
    return converted


def _expected_type(kind: str, out: Out) -> type:
    if out == "polars" or kind in ("polars-eager", "arrow-table", "arrow-reader", "duckdb"):
        return pl.DataFrame
    if kind == "polars-lazy":
        return pl.LazyFrame if out == "frame" else pl.DataFrame
    return pd.DataFrame


@pytest.mark.parametrize("kind", list(KINDS))
@pytest.mark.parametrize("name", list(FRAMES))
def test_each_kind_gives_the_same_numbers_in_its_own_kind(name: str, kind: str) -> None:
    case = FRAMES[name]
    expected = case.part(case.call(KINDS["polars-eager"]))
    got = case.part(case.call(KINDS[kind]))
    if case.out == "value":
        assert got == expected
        return
    assert type(got) is _expected_type(kind, case.out), type(got)
    # the numbers exactly; dtypes may differ where a backend has its own (pandas' int64 ranks).
    # A LazyFrame's grades are not known up front: its ideal DCG sums the ideal list's terms,
    # where an eager truth's follows from its counts per grade (graded ndcg@2 here): the two
    # roundings differ in the last bit, so close, not equal
    exact = kind != "polars-lazy"
    assert_frame_equal(
        _as_polars(got), _as_polars(expected), check_dtypes=False, check_exact=exact,
        rel_tol=0.0, abs_tol=1e-15,
    )  # fmt: skip


@pytest.mark.parametrize("name", list(FRAMES))
def test_pandas_inputs_are_left_as_they_were(name: str) -> None:
    given: list[tuple[Any, Any]] = []

    def make(frame: pl.DataFrame) -> Any:
        converted = frame.to_pandas()
        given.append((converted, copy.deepcopy(converted)))
        return converted

    FRAMES[name].call(make)
    assert given
    for frame, before in given:
        pd.testing.assert_frame_equal(frame, before)


def test_arrow_in_gives_polars_out_for_typed_code() -> None:
    # an Arrow object has no frame kind to give back: a Polars DataFrame, documented
    result = prm.evaluate(RECS.to_arrow(), TRUTH.to_arrow(), "mrr", by="model")
    assert isinstance(result, pl.DataFrame)


def test_unknown_objects_are_refused_naming_the_argument_and_the_kinds() -> None:
    with pytest.raises(TypeError, match=r"^truth must be a Polars DataFrame or LazyFrame, a pandas "
                       r"DataFrame, a pyarrow Table, or another object with __arrow_c_stream__ "
                       r"\(a pyarrow RecordBatchReader, a DuckDB relation\); got list$"):  # fmt: skip
        prm.evaluate(RECS, [1, 2], "mrr")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"recs must be .*; got Series \(one column: "):
        prm.evaluate(RECS["user"], TRUTH, "mrr")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"items must be .*; got Series"):
        prm.list_metrics(RECS, "coverage@2", items=ITEMS.to_pandas()["item"])
    with pytest.raises(TypeError, match=r"runs must be a dict of frames \(run name -> frame\) or "):
        prm.fuse(42)
    with pytest.raises(TypeError, match=r"runs\['a'\] must be a Polars DataFrame"):
        prm.fuse({"a": "not a frame", "b": RUNS})
