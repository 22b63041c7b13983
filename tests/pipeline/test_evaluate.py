"""Behaviour of evaluate / positions / relevance, on every backend.

Expected values are computed by hand in the comments next to them.
"""

from __future__ import annotations

import inspect
import math
import typing

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankmetrics as prm
from polars_rankmetrics._pipeline.inputs import TruthSpec
from polars_rankmetrics._pipeline.truth import grade_levels
from tests.conftest import Backend

# two models over users 1 and 2; model "b" skipped user 2
RECS = {
    "model": ["a", "a", "a", "a", "b", "b"],
    "user": [1, 1, 2, 2, 1, 1],
    "item": ["x", "y", "x", "z", "y", "x"],
    "rank": [1, 2, 1, 2, 1, 2],
}
TRUTH = {"user": [1, 2, 3], "item": ["y", "x", "w"]}


def evaluate(
    backend: Backend, recs: dict, truth: dict, metrics: object, **options: object
) -> pl.DataFrame:
    result = backend.frame(recs).rank.evaluate(backend.frame(truth), metrics, **options)
    return backend.polars(result)


def test_models_side_by_side_are_charged_for_skipped_users(backend: Backend) -> None:
    scores = evaluate(backend, RECS, TRUTH, ["mrr", "hit_rate@1"], by="model")
    # users 1, 2, 3 are judged (3 has no recs anywhere: 0 for both models)
    # a: RR 1/2, 1, 0 -> 0.5; hits@1 0, 1, 0 -> 1/3.  b: RR 1, 0, 0 -> 1/3; hits@1 1, 0, 0
    assert scores.to_dict(as_series=False) == {
        "model": ["a", "b"],
        "mrr": pytest.approx([0.5, 1 / 3]),
        "hit_rate@1": pytest.approx([1 / 3, 1 / 3]),
    }


def test_per_user_rows_are_sorted_and_complete(backend: Backend) -> None:
    scores = evaluate(backend, RECS, TRUTH, ["mrr"], by="model", per_user=True)
    assert scores.columns == ["model", "user", "mrr"]
    assert scores.select("model", "user").rows() == [
        ("a", 1),
        ("a", 2),
        ("a", 3),
        ("b", 1),
        ("b", 2),
        ("b", 3),
    ]
    assert scores["mrr"].to_list() == pytest.approx([0.5, 1.0, 0.0, 1.0, 0.0, 0.0])


def test_output_columns_are_named_as_given_and_float(backend: Backend) -> None:
    metrics = ["MAP@2", "hits@1", "rr", "NDCG", "recall@1"]
    scores = evaluate(backend, RECS, TRUTH, metrics, by="model")
    assert scores.columns == ["model", *metrics]
    assert all(scores.schema[name] == pl.Float64 for name in metrics)


def test_by_columns_in_both_frames_join_with_the_truth(backend: Backend) -> None:
    recs = {"fold": [1, 1, 2], "user": [1, 1, 1], "item": ["x", "y", "x"], "rank": [1, 2, 1]}
    truth = {"fold": [1, 2, 2], "user": [1, 1, 2], "item": ["y", "y", "q"]}
    scores = evaluate(backend, recs, truth, ["mrr"], by="fold", per_user=True)
    # fold 1: user 1 finds y at 2.  fold 2: user 1's list [x] misses y; user 2 got nothing
    assert scores.rows() == [(1, 1, 0.5), (2, 1, 0.0), (2, 2, 0.0)]


def test_users_without_recs_policy(backend: Backend) -> None:
    recs = {"user": [1, 1], "item": ["a", "b"], "rank": [1, 2]}
    truth = {"user": [1, 2], "item": ["b", "c"]}
    assert evaluate(backend, recs, truth, "mrr")["mrr"][0] == pytest.approx(0.25)  # (0.5 + 0) / 2
    excluded = evaluate(backend, recs, truth, "mrr", users_without_recs="exclude")
    assert excluded["mrr"][0] == pytest.approx(0.5)


def test_users_without_truth_policy(backend: Backend) -> None:
    recs = {"user": [1, 1, 2, 3], "item": ["a", "b", "a", "a"], "rank": [1, 2, 1, 1]}
    # user 2 has only a non-relevant judgement, user 3 no truth at all
    truth = {"user": [1, 2], "item": ["b", "a"], "rel": [1, 0]}
    default = evaluate(backend, recs, truth, "mrr", relevance="rel", per_user=True)
    assert default.rows() == [(1, 0.5)]
    zero = evaluate(
        backend,
        recs,
        truth,
        ["mrr", "mean_rank"],
        relevance="rel",
        per_user=True,
        users_without_truth="zero",
    )
    assert zero.rows() == [(1, 0.5, 2.0), (2, 0.0, None), (3, 0.0, None)]
    mean = evaluate(backend, recs, truth, "mrr", relevance="rel", users_without_truth="zero")
    assert mean["mrr"][0] == pytest.approx(0.5 / 3)


@pytest.mark.parametrize(
    ("ties", "expected_rr"),
    [
        # scores tie at 0.5 for b, c, a (in that input order); the relevant item is c
        ("item_desc", 1 / 1),  # c, b, a
        ("item_asc", 1 / 3),  # a, b, c
        ("input", 1 / 2),  # b, c, a
    ],
)
def test_tie_rules(backend: Backend, ties: str, expected_rr: float) -> None:
    recs = {"user": [1, 1, 1, 1], "item": ["b", "c", "a", "d"], "score": [0.5, 0.5, 0.5, 0.1]}
    scores = evaluate(backend, recs, {"user": [1], "item": ["c"]}, "mrr", score="score", ties=ties)
    assert scores["mrr"][0] == pytest.approx(expected_rr)


def test_scores_rank_per_model(backend: Backend) -> None:
    recs = {
        "model": ["a", "a", "b", "b"],
        "user": [1, 1, 1, 1],
        "item": ["x", "y", "x", "y"],
        "score": [1, 2, 2, 1],
    }
    scores = evaluate(backend, recs, {"user": [1], "item": ["x"]}, "mrr", score="score", by="model")
    assert scores["mrr"].to_list() == pytest.approx([0.5, 1.0])


def test_relevance_level_and_raw_grades_for_ndcg(backend: Backend) -> None:
    recs = {"user": [1, 1, 1], "item": ["a", "b", "c"], "rank": [1, 2, 3]}
    truth = {"user": [1, 1], "item": ["a", "c"], "rel": [1, 3]}
    scores = evaluate(
        backend, recs, truth, ["mrr", "recall@3", "ndcg@3"], relevance="rel", relevance_level=2
    )
    # binary metrics count only c (grade 3 >= 2): RR 1/3, recall 1/1
    # ndcg keeps both grades: dcg = 1/log2(2) + 3/log2(4) = 2.5; idcg = 3 + 1/log2(3)
    assert scores.row(0) == pytest.approx((1 / 3, 1.0, 2.5 / (3 + 1 / 1.5849625007211563)))


def test_exponential_gain(backend: Backend) -> None:
    recs = {"user": [1, 1], "item": ["a", "b"], "rank": [1, 2]}
    truth = {"user": [1, 1], "item": ["a", "b"], "rel": [1, 2]}
    scores = evaluate(
        backend, recs, truth, ["dcg@2", "ndcg@2"], relevance="rel", gain="exponential"
    )
    # dcg = 1/1 + 3/log2(3); ideal = 3/1 + 1/log2(3)
    dcg = 1 + 3 / 1.5849625007211563
    assert scores.row(0) == pytest.approx((dcg, dcg / (3 + 1 / 1.5849625007211563)))


def test_negative_and_zero_grades_are_not_relevant(backend: Backend) -> None:
    recs = {"user": [1, 1, 1], "item": ["a", "b", "c"], "rank": [1, 2, 3]}
    truth = {"user": [1, 1, 1], "item": ["a", "b", "c"], "rel": [-1, 0, 2]}
    scores = evaluate(backend, recs, truth, ["mrr", "ndcg@3"], relevance="rel")
    assert scores.row(0) == pytest.approx((1 / 3, 0.5))  # ndcg: 2/log2(4) over ideal 2/log2(2)


def test_trec_preset_fills_defaults_and_refuses_conflicts(backend: Backend) -> None:
    recs = {"user": [1, 1], "item": ["a", "b"], "rank": [1, 2]}
    truth = {"user": [1, 1, 1, 2], "item": ["a", "y", "z", "q"]}
    # default: AP@2 = 1 / min(3, 2); user 2 counts as 0 -> 0.25
    assert evaluate(backend, recs, truth, "map@2")["map@2"][0] == pytest.approx(0.25)
    # trec: AP@2 = 1/3 and user 2 (no run) is not averaged
    assert evaluate(backend, recs, truth, "map@2", conventions="trec")["map@2"][0] == pytest.approx(
        1 / 3
    )
    # trec -c: user 2 counts
    counted = evaluate(backend, recs, truth, "map@2", conventions="trec", users_without_recs="zero")
    assert counted["map@2"][0] == pytest.approx(1 / 6)
    # the trec preset fixes the AP denominator: another one contradicts it
    with pytest.raises(ValueError, match="fixes denominator='relevant'"):
        evaluate(backend, recs, truth, "map@2", conventions="trec", denominator="hits")
    hits = evaluate(backend, recs, truth, "map@2", denominator="hits", users_without_recs="exclude")
    assert hits["map@2"][0] == pytest.approx(1.0)


def test_pooled_recall_is_not_a_mean_of_ratios(backend: Backend) -> None:
    recs = {"user": [1, 1, 2, 2], "item": ["a", "b", "a", "b"], "rank": [1, 2, 1, 2]}
    truth = {"user": [1, 2, 2, 2, 2], "item": ["a", "a", "x", "y", "z"]}
    scores = evaluate(backend, recs, truth, ["pooled_recall@2", "recall@2"])
    # pooled: (1 + 1) / (min(2, 1) + min(2, 4)) = 2/3; mean of recalls: (1 + 1/4) / 2
    assert scores.row(0) == pytest.approx((2 / 3, 0.625))
    per_user = evaluate(backend, recs, truth, ["pooled_recall@2"], per_user=True)
    assert per_user["pooled_recall@2"].to_list() == pytest.approx([1.0, 0.5])


def test_unlimited_cutoffs_read_the_whole_list(backend: Backend) -> None:
    recs = {"user": [1] * 4, "item": ["a", "b", "c", "d"], "rank": [1, 2, 3, 4]}
    truth = {"user": [1, 1], "item": ["d", "q"]}
    scores = evaluate(backend, recs, truth, ["map", "mrr", "recall", "r_precision", "ndcg"])
    # AP = (1/4) / 2; RR 1/4; recall 1/2; R-prec: top 2 hold nothing
    ndcg = (1 / 2.321928094887362) / (1 + 1 / 1.5849625007211563)
    assert scores.row(0) == pytest.approx((0.125, 0.25, 0.5, 0.0, ndcg))


def test_empty_recs_score_zero(backend: Backend) -> None:
    recs = {"user": [], "item": [], "rank": []}
    scores = evaluate(
        backend,
        {k: pl.Series(v, dtype=pl.Int64 if k != "item" else pl.String) for k, v in recs.items()},
        TRUTH,
        ["map@5", "ndcg@5"],
    )
    assert scores.row(0) == (0.0, 0.0)


def test_no_relevant_truth_gives_null_means(backend: Backend) -> None:
    truth = {"user": [1], "item": ["x"], "rel": [0]}
    scores = evaluate(backend, RECS, truth, ["map@5"], relevance="rel", by="model")
    assert scores.height == 0
    single = evaluate(
        backend,
        {k: v[:2] for k, v in RECS.items() if k != "model"},
        truth,
        "map@5",
        relevance="rel",
    )
    assert single.rows() == [(None,)]


def test_inputs_are_not_mutated(backend: Backend) -> None:
    recs, truth = backend.frame(RECS), backend.frame(TRUTH)
    before = backend.polars(recs).clone(), backend.polars(truth).clone()
    recs.rank.evaluate(truth, ["map@2", "ndcg@2"], by="model")
    assert_frame_equal(backend.polars(recs), before[0])
    assert_frame_equal(backend.polars(truth), before[1])


def test_kind_of_frame_is_kept() -> None:
    recs, truth = pl.DataFrame(RECS), pl.DataFrame(TRUTH)
    assert isinstance(prm.evaluate(recs, truth, "mrr", by="model"), pl.DataFrame)
    lazy = prm.evaluate(recs.lazy(), truth.lazy(), "mrr", by="model")
    assert isinstance(lazy, pl.LazyFrame)
    assert isinstance(recs.lazy().rank.positions(), pl.LazyFrame)
    assert isinstance(recs.lazy().rank.relevance(truth, by="model"), pl.LazyFrame)


def test_eager_lazy_and_streaming_agree() -> None:
    recs, truth = pl.DataFrame(RECS), pl.DataFrame(TRUTH)
    metrics = ["map@2", "ndcg@2", "mrr", "recall@1", "pooled_recall@2"]
    eager = prm.evaluate(recs, truth, metrics, by="model", per_user=True)
    lazy = prm.evaluate(recs.lazy(), truth.lazy(), metrics, by="model", per_user=True)
    assert_frame_equal(lazy.collect(engine="in-memory"), eager)
    assert_frame_equal(lazy.collect(engine="streaming"), eager)


def test_positions_from_scores_cut_and_kept_in_input_order(backend: Backend) -> None:
    recs = backend.frame(
        {"user": [1, 1, 1, 2], "item": ["a", "b", "c", "a"], "score": [0.1, 0.3, 0.2, 0.5]}
    )
    ranked = backend.polars(recs.rank.positions(2, score="score"))
    assert ranked.select("user", "item", "rank").rows() == [(1, "b", 1), (1, "c", 2), (2, "a", 1)]


def test_positions_overwrite_an_existing_rank_and_rank_per_group(backend: Backend) -> None:
    recs = backend.frame(
        {
            "model": ["a", "a", "b", "b"],
            "user": [1, 1, 1, 1],
            "item": ["x", "y", "x", "y"],
            "score": [1.0, 2.0, 2.0, 1.0],
            "rank": [9, 9, 9, 9],
        }
    )
    ranked = backend.polars(recs.rank.positions(score="score", by="model"))
    assert ranked.columns == ["model", "user", "item", "score", "rank"]
    assert ranked["rank"].to_list() == [2, 1, 1, 2]


def test_relevance_labels_every_row_and_adds_unrecommended_truth(backend: Backend) -> None:
    ranked = backend.frame({"user": [1, 1], "item": ["a", "b"], "rank": [1, 2]})
    truth = backend.frame({"user": [1, 1, 2], "item": ["b", "z", "y"], "grade": [2, 1, 3]})
    labeled = backend.polars(ranked.rank.relevance(truth, relevance="grade", relevance_level=2))
    assert labeled.columns == [
        "user",
        "item",
        "rank",
        "grade",
        "is_relevant",
        "n_relevant",
        "ideal_rank",
    ]
    assert labeled.rows() == [
        (1, "a", 1, 0.0, False, 1, None),
        (1, "b", 2, 2.0, True, 1, 1),
        (1, "z", None, 1.0, False, 1, 2),
        (2, "y", None, 3.0, True, 1, 1),
    ]


def test_relevance_repeats_the_truth_per_model() -> None:
    ranked = pl.DataFrame({"model": ["a", "b"], "user": [1, 1], "item": ["x", "y"], "rank": [1, 1]})
    labeled = ranked.rank.relevance(pl.DataFrame({"user": [1], "item": ["y"]}), by="model")
    assert labeled.select("model", "item", "rank", "is_relevant").rows() == [
        ("a", "x", 1, False),
        ("a", "y", None, True),
        ("b", "y", 1, True),
    ]


def test_expressions_on_labeled_frames_match_evaluate() -> None:
    recs, truth = pl.DataFrame(RECS), pl.DataFrame(TRUTH)
    labeled = recs.rank.relevance(truth, by="model")
    by_hand = (
        labeled.group_by("model", "user")
        .agg(prm.average_precision(2), prm.ndcg(2), prm.reciprocal_rank(2), prm.recall(1))
        .group_by("model")
        .agg(pl.exclude("user").mean())
        .sort("model")
    )
    evaluated = prm.evaluate(recs, truth, ["map@2", "ndcg@2", "mrr@2", "recall@1"], by="model")
    assert by_hand["model"].to_list() == evaluated["model"].to_list()
    for column in ("map@2", "ndcg@2", "mrr@2", "recall@1"):
        name = {"map@2": "average_precision@2", "mrr@2": "reciprocal_rank@2"}.get(column, column)
        assert by_hand[name].to_list() == pytest.approx(evaluated[column].to_list())


@pytest.mark.parametrize("name", ["positions", "relevance"])
def test_namespace_methods_mirror_the_functions(name: str) -> None:
    """evaluate, compare and curves: tests/adapters/test_signatures.py, annotations included."""
    function = getattr(prm, name)
    method = getattr(pl.DataFrame({"a": [1]}).rank, name)
    own = list(inspect.signature(method).parameters.values())
    theirs = list(inspect.signature(function).parameters.values())[1:]
    assert [(p.name, p.kind, p.default) for p in own] == [
        (p.name, p.kind, p.default) for p in theirs
    ]
    own_hints = typing.get_type_hints(method.__func__)
    their_hints = typing.get_type_hints(function)
    assert [own_hints[p.name] for p in own] == [their_hints[p.name] for p in theirs]
    assert method.__doc__ == function.__doc__


def test_judged_users_without_relevant_items(backend: Backend) -> None:
    # user 1: one relevant hit; user 2: judged, nothing relevant, has recs;
    # user 3: judged, nothing relevant, no recs; user 4: recs but no truth rows
    recs = {"user": [1, 2, 4], "item": ["a", "a", "a"], "rank": [1, 1, 1]}
    truth = {"user": [1, 2, 3], "item": ["a", "a", "b"], "rel": [1, 0, 0]}
    judged = evaluate(
        backend, recs, truth, "mrr", relevance="rel", per_user=True, users_without_truth="judged"
    )
    assert judged.rows() == [(1, 1.0), (2, 0.0), (3, 0.0)]
    # trec_eval without -c: only judged users that have a run
    trec = evaluate(backend, recs, truth, "mrr", relevance="rel", per_user=True, conventions="trec")
    assert trec.rows() == [(1, 1.0), (2, 0.0)]
    # "zero" also counts users with recommendations and no truth rows at all
    zero = evaluate(
        backend, recs, truth, "mrr", relevance="rel", per_user=True, users_without_truth="zero"
    )
    assert zero.rows() == [(1, 1.0), (2, 0.0), (3, 0.0), (4, 0.0)]


def test_explicit_user_policies_win_over_the_trec_preset(backend: Backend) -> None:
    recs = {"user": [1, 2], "item": ["a", "a"], "rank": [1, 1]}
    truth = {"user": [1, 2, 3], "item": ["a", "a", "b"], "rel": [1, 0, 1]}
    # preset: user 2 (judged, nothing relevant) counts, user 3 (no run) does not
    preset = evaluate(
        backend, recs, truth, "mrr", relevance="rel", per_user=True, conventions="trec"
    )
    assert preset.rows() == [(1, 1.0), (2, 0.0)]
    explicit = evaluate(
        backend, recs, truth, "mrr", relevance="rel", per_user=True, conventions="trec",
        users_without_truth="exclude", users_without_recs="zero",
    )  # fmt: skip
    assert explicit.rows() == [(1, 1.0), (3, 0.0)]


# ideal DCG: from counts per grade when the truth's grades are known up front (a truth
# in memory with few grades), from a window that ranks the truth otherwise
GRADED_RECS = {"user": [1, 1, 1], "item": ["a", "b", "c"], "rank": [1, 2, 3]}
GRADED_TRUTH = {
    "user": [1, 1, 1, 1, 1, 1],
    "item": ["a", "b", "c", "d", "e", "f"],
    "rel": [1.0, 2.0, 3.0, 2.0, 0.5, -1.0],
}
LOG2_3 = 1.5849625007211563


@pytest.mark.parametrize(
    ("gain", "expected"),
    [
        # gains 1, 2, 3 shown; the ideal list is 3, 2, 2 (d ties b), then 1, 0.5
        ("linear", (1 + 2 / LOG2_3 + 3 / 2) / (3 + 2 / LOG2_3 + 2 / 2)),
        ("exponential", (1 + 3 / LOG2_3 + 7 / 2) / (7 + 3 / LOG2_3 + 3 / 2)),
    ],
)
@pytest.mark.parametrize("truth_kind", ["eager", "lazy"])
def test_ideal_dcg_by_hand_from_either_truth(gain: str, expected: float, truth_kind: str) -> None:
    truth = pl.DataFrame(GRADED_TRUTH)
    got = prm.evaluate(
        pl.DataFrame(GRADED_RECS),
        truth if truth_kind == "eager" else truth.lazy(),
        ["ndcg@3", "ndcg@10"],
        relevance="rel",
        gain=gain,  # type: ignore[arg-type]
    )
    assert got["ndcg@3"].item() == pytest.approx(expected, rel=1e-12)
    # @10: the whole ideal list 3, 2, 2, 1, 0.5 fits; the items past position 3 count too
    ideal = [3, 2, 2, 1, 0.5]
    gains = ideal if gain == "linear" else [2**g - 1 for g in ideal]
    idcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains))
    shown = [1, 2, 3] if gain == "linear" else [1, 3, 7]
    dcg = sum(g / math.log2(i + 2) for i, g in enumerate(shown))
    assert got["ndcg@10"].item() == pytest.approx(dcg / idcg, rel=1e-12)


def _ranks_the_truth(truth: pl.DataFrame | pl.LazyFrame, metrics: list[str]) -> bool:
    plan = prm.evaluate(pl.LazyFrame(GRADED_RECS), truth, metrics, relevance="rel").explain()
    return ".over(" in plan


def test_ideal_dcg_skips_the_ranking_window_only_when_grades_are_known() -> None:
    truth = pl.DataFrame(GRADED_TRUTH)
    assert not _ranks_the_truth(truth, ["ndcg@3"])
    # a lazy truth is not read early; a whole-list ideal DCG has no cutoff to count to
    assert _ranks_the_truth(truth.lazy(), ["ndcg@3"])
    assert _ranks_the_truth(truth, ["ndcg"])
    # more grades than are worth a count each (continuous grades, say)
    too_many = pl.DataFrame(
        {"user": 1, "item": [f"i{n}" for n in range(18)], "rel": [n / 7 for n in range(1, 19)]}
    )
    assert _ranks_the_truth(too_many, ["ndcg@3"])


def test_grade_levels() -> None:
    spec = TruthSpec("user", "item", "rel", None, ())
    truth = pl.DataFrame(GRADED_TRUTH)
    assert grade_levels(truth, spec) == (3.0, 2.0, 1.0, 0.5)
    assert grade_levels(truth.lazy(), spec) is None
    without = TruthSpec("user", "item", None, None, ())
    assert grade_levels(truth.lazy(), without) == (1.0,)
    # grades 1..17 (and 0, -1, which add nothing)
    assert grade_levels(pl.DataFrame({"rel": list(range(-1, 18))}), spec) is None
    sixteen = pl.DataFrame({"rel": [*range(-1, 17), 16]})
    assert grade_levels(sixteen, spec) == tuple(float(g) for g in range(16, 0, -1))
    for odd in (float("nan"), float("inf")):
        assert grade_levels(pl.DataFrame({"rel": [1.0, odd]}), spec) is None
