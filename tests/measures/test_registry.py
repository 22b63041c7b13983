"""The measure registry, metric-string parsing and the per-user/aggregation seam."""

from __future__ import annotations

import warnings
from collections.abc import Hashable
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_rankmetrics as prm
from polars_rankmetrics import _measures as registry
from polars_rankmetrics._measures._registry import AGGREGATIONS, INPUTS, PART_SUFFIXES
from tests import textbook
from tests.measures.test_properties import Case, by_columns, cases

RECS = {
    "model": ["a"] * 5 + ["b"] * 5 + ["a"] * 2,
    "user": [1] * 10 + [2] * 2,
    "item": ["A", "B", "C", "D", "E", "A", "C", "E", "B", "D", "A", "Q"],
    "rank": [1, 2, 3, 4, 5] * 2 + [1, 2],
}
TRUTH = {"user": [1, 1, 1, 2, 3], "item": ["B", "D", "Z", "Q", "A"]}


# --- the registry -----------------------------------------------------------------------


def test_every_measure_is_well_formed() -> None:
    measures = registry.all_measures()
    assert {m.name for m in measures} >= {
        "precision", "recall", "f1", "fbeta", "hit_rate", "n_relevant_retrieved", "map",
        "mrr", "ndcg", "dcg", "r_precision", "mean_rank", "pooled_recall",
    }  # fmt: skip
    for measure in measures:
        assert measure.name == measure.name.lower()
        assert measure.aggregation in AGGREGATIONS
        assert set(measure.inputs) <= set(INPUTS)
        assert measure.suffixes == PART_SUFFIXES[measure.aggregation]
        assert measure.doc
        for name in (measure.name, *measure.aliases):
            assert registry.lookup(name.upper()) is measure


def test_register_refuses_a_taken_name() -> None:
    taken = registry.lookup("ndcg")
    with pytest.raises(ValueError, match="'ndcg' is taken"):
        registry.register(taken)


@pytest.mark.parametrize(
    ("alias", "canonical"),
    [("hits", "hit_rate"), ("success", "hit_rate"), ("ap", "map"), ("rr", "mrr"),
     ("micro_recall", "pooled_recall"), ("num_hits", "n_relevant_retrieved")],
)  # fmt: skip
def test_aliases(alias: str, canonical: str) -> None:
    assert prm.parse_metric(f"{alias}@3") == prm.MetricSpec(f"{alias}@3", canonical, 3)


# --- parsing ----------------------------------------------------------------------------


def test_multi_cutoff_shorthand() -> None:
    specs = prm.parse_metrics(["NDCG@5, 10,20", "mrr"])
    assert [(s.label, s.name, s.k) for s in specs] == [
        ("NDCG@5", "ndcg", 5), ("NDCG@10", "ndcg", 10), ("NDCG@20", "ndcg", 20),
        ("mrr", "mrr", None),
    ]  # fmt: skip
    with pytest.raises(ValueError, match="is 2 metrics, one per cutoff: use parse_metrics"):
        prm.parse_metric("ndcg@5,10")
    with pytest.raises(ValueError, match=r"\['ndcg@5'\] requested twice"):
        prm.parse_metrics(["ndcg@5,10", "ndcg@5"])


def test_multi_cutoff_columns_equal_single_ones() -> None:
    recs, truth = pl.DataFrame(RECS), pl.DataFrame(TRUTH)
    together = prm.evaluate(recs, truth, "ndcg@1,3,5", by="model")
    apart = prm.evaluate(recs, truth, ["ndcg@1", "ndcg@3", "ndcg@5"], by="model")
    assert together.equals(apart)


def test_parameters() -> None:
    spec = prm.parse_metric("fbeta(beta=0.5)@10")
    assert spec == prm.MetricSpec("fbeta(beta=0.5)@10", "fbeta", 10, (("beta", 0.5),))
    # defaults are filled in
    assert prm.parse_metric("fbeta@10").params == (("beta", 1.0),)
    specs = prm.parse_metrics("fbeta( beta = 2 )@5,10")
    assert [s.label for s in specs] == ["fbeta( beta = 2 )@5", "fbeta( beta = 2 )@10"]


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("fbeta(gamma=1)@5", r"unknown parameter 'gamma=1' .* takes \['beta'\]"),
        ("fbeta(beta)@5", "unknown parameter 'beta'"),
        ("fbeta(beta=x)@5", "parameter 'beta' in .* must be a number, got 'x'"),
        ("fbeta(beta=0)@5", "beta must be a finite number > 0"),
        ("fbeta(beta=inf)@5", "beta must be a finite number > 0"),
        ("fbeta(beta=1,beta=2)@5", "parameter 'beta' given twice"),
        ("ndcg(p=1)@5", "'ndcg' takes no parameters"),
        ("fbeta(beta=1)", "needs a cutoff"),
        ("r_precision@5", "takes no cutoff"),
        ("ndcg@0", "must be >= 1"),
        ("ndcg@", "cannot read metric"),
        ("ndcg@5,", "cannot read metric"),
        ("ndgc@10", "did you mean 'ndcg'"),
    ],
)
def test_parse_errors(text: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        prm.parse_metric(text)


def test_unknown_hit_names_explain_hits_is_the_hit_rate() -> None:
    with pytest.raises(ValueError, match="n_relevant_retrieved"):
        prm.parse_metric("hit@5")


# --- hits (hit rate) against ranx's hits (a count) ---------------------------------------


def test_hits_is_the_hit_rate_and_num_hits_the_count() -> None:
    recs, truth = pl.DataFrame(RECS).filter(pl.col("model") == "a"), pl.DataFrame(TRUTH)
    scores = prm.evaluate(
        recs, truth, ["hits@5", "success@5", "n_relevant_retrieved@5", "num_hits@5"],
        per_user=True, users_without_recs="exclude",
    )  # fmt: skip
    # user 1: B and D in the top 5 (2 hits); user 2: Q at 2
    assert scores["hits@5"].to_list() == [1.0, 1.0]
    assert scores["success@5"].to_list() == [1.0, 1.0]
    assert scores["n_relevant_retrieved@5"].to_list() == [2.0, 1.0]
    assert scores["num_hits@5"].to_list() == [2.0, 1.0]


def test_num_hits_matches_ranx_hits() -> None:
    ranx = pytest.importorskip("ranx")
    recs, truth = pl.DataFrame(RECS).filter(pl.col("model") == "a"), pl.DataFrame(TRUTH)
    with warnings.catch_warnings():
        # ranx's numba kernels warn when they compile; that is ranx's own code
        warnings.filterwarnings("ignore", message=".*unsafe cast from uint64 to int64")
        qrels = ranx.Qrels({"1": {"B": 1, "D": 1, "Z": 1}, "2": {"Q": 1}})
        run = ranx.Run({"1": {"A": 5, "B": 4, "C": 3, "D": 2, "E": 1}, "2": {"A": 2, "Q": 1}})
        expected = ranx.evaluate(qrels, run, "hits@3")
    ours = prm.evaluate(recs, truth, "num_hits@3", users_without_recs="exclude")
    # user 1: B at 2 (D at 4 is past 3); user 2: Q at 2 -> mean count 1
    assert ours["num_hits@3"][0] == pytest.approx(expected) == pytest.approx(1.0)


# --- F-beta -----------------------------------------------------------------------------


def test_fbeta_worked_example() -> None:
    recs = pl.DataFrame({"user": [1] * 5, "item": list("abcde"), "rank": [1, 2, 3, 4, 5]})
    truth = pl.DataFrame({"user": [1] * 4, "item": ["b", "d", "x", "y"]})
    scores = prm.evaluate(recs, truth, ["fbeta(beta=2)@5", "fbeta(beta=0.5)@5", "f1@5"])
    # P = 2/5, R = 2/4. beta 2: 5 P R / (4 P + R) = 5 * 0.2 / (1.6 + 0.5) = 10/21
    # beta 1/2: 1.25 * 0.2 / (0.1 + 0.5) = 0.25 / 0.6 = 5/12; f1 = 2 * 2 / (5 + 4) = 4/9
    assert scores.row(0) == pytest.approx((10 / 21, 5 / 12, 4 / 9))


@settings(max_examples=60, deadline=None)
@given(
    pattern=st.lists(st.integers(0, 1), min_size=0, max_size=8),
    unseen=st.integers(0, 4),
    k=st.integers(1, 10),
    beta=st.sampled_from([0.25, 0.5, 1.0, 2.0, 3.7]),
)
def test_fbeta_matches_the_textbook(pattern: list[int], unseen: int, k: int, beta: float) -> None:
    positions = textbook.at_pattern(pattern)
    grades = textbook.pattern_truth(positions, unseen)
    if not grades:
        return
    recs = pl.DataFrame(
        {"user": [1] * len(positions), "item": [str(i) for i in positions],
         "rank": list(positions.values())},
        schema={"user": pl.Int64, "item": pl.String, "rank": pl.Int64},
    )  # fmt: skip
    truth = pl.DataFrame({"user": [1] * len(grades), "item": [str(i) for i in grades]})
    label = f"fbeta(beta={beta})@{k}"
    got = prm.evaluate(recs, truth, [label, f"f1@{k}"])
    relevant: set[Hashable] = set(grades)
    assert got[label][0] == pytest.approx(textbook.fbeta(positions, relevant, k, beta))
    if beta == 1.0:
        assert got[label][0] == pytest.approx(got[f"f1@{k}"][0])


# --- the per-user/aggregation seam -------------------------------------------------------

SEAM_METRICS = [
    "map@5", "mrr", "ndcg@3,5", "precision@2", "pooled_recall@2", "mean_rank",
    "n_relevant_retrieved@5", "fbeta(beta=2)@3", "r_precision",
]  # fmt: skip


@pytest.mark.parametrize("users_without_truth", ["exclude", "judged", "zero"])
@pytest.mark.parametrize("by", [None, "model"])
@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
def test_evaluate_is_aggregate_of_per_user_parts(
    lazy: bool, by: str | None, users_without_truth: Any
) -> None:
    """The seam's functions take Polars frames (pandas reaches them through evaluate)."""
    data = pl.DataFrame(RECS)
    if by is None:
        data = data.filter(pl.col("model") == "a").drop("model")
    recs: pl.DataFrame | pl.LazyFrame = data.lazy() if lazy else data
    truth: pl.DataFrame | pl.LazyFrame = pl.DataFrame(TRUTH)
    truth = truth.lazy() if lazy else truth
    options: dict[str, Any] = {"by": by, "users_without_truth": users_without_truth}
    parts = prm.per_user_parts(recs, truth, SEAM_METRICS, **options)
    combined = prm.aggregate(parts, SEAM_METRICS, by=by)
    direct = prm.evaluate(recs, truth, SEAM_METRICS, **options)
    direct = direct.collect() if isinstance(direct, pl.LazyFrame) else direct
    combined = combined.collect() if isinstance(combined, pl.LazyFrame) else combined
    assert combined.columns == direct.columns
    for name in direct.columns:
        if direct[name].dtype == pl.Float64:
            assert combined[name].to_list() == pytest.approx(direct[name].to_list(), nan_ok=True)
        else:
            assert combined[name].to_list() == direct[name].to_list()


def test_per_user_parts_columns_and_per_user_values() -> None:
    recs, truth = pl.DataFrame(RECS), pl.DataFrame(TRUTH)
    metrics = ["pooled_recall@2", "mean_rank", "map@5"]
    parts = prm.per_user_parts(recs, truth, metrics, by="model")
    assert parts.columns == [
        "model", "user", "pooled_recall@2|num", "pooled_recall@2|den", "mean_rank", "map@5",
    ]  # fmt: skip
    assert all(parts[c].dtype == pl.Float64 for c in parts.columns[2:])
    per_user = prm.evaluate(recs, truth, metrics, by="model", per_user=True)
    assert per_user.select("model", "user").equals(parts.select("model", "user"))
    # per user, pooled recall is num / den
    ratio = (parts["pooled_recall@2|num"] / parts["pooled_recall@2|den"]).to_list()
    assert per_user["pooled_recall@2"].to_list() == pytest.approx(ratio)
    # mean_rank: null where the user has no relevant hit (model b, user 2 has no recs)
    assert per_user["mean_rank"].to_list() == parts["mean_rank"].to_list()


def test_aggregation_parts_describe_the_combination() -> None:
    parts = prm.aggregation_parts(["ndcg@5,10", "micro_recall@3"])
    assert parts == [
        prm.AggregationPart("ndcg@5", "mean", ("ndcg@5",)),
        prm.AggregationPart("ndcg@10", "mean", ("ndcg@10",)),
        prm.AggregationPart(
            "micro_recall@3", "pooled", ("micro_recall@3|num", "micro_recall@3|den")
        ),
    ]


def test_aggregate_by_hand_with_sums_and_counts() -> None:
    # what another engine does: sums and counts of the parts
    recs, truth = pl.DataFrame(RECS).filter(pl.col("model") == "a"), pl.DataFrame(TRUTH)
    metrics = ["map@5", "pooled_recall@2", "mean_rank"]
    parts = prm.per_user_parts(recs, truth, metrics, users_without_recs="exclude")
    expected = prm.evaluate(recs, truth, metrics, users_without_recs="exclude")
    by_hand = {}
    for part in prm.aggregation_parts(metrics):
        if part.kind == "mean":
            values = [x for x in parts[part.columns[0]].to_list() if x is not None]
            by_hand[part.label] = sum(values) / len(values)
        else:
            num, den = (sum(parts[c].to_list()) for c in part.columns)
            by_hand[part.label] = num / den
    assert list(by_hand.values()) == pytest.approx(list(expected.row(0)))


def test_aggregate_refuses_missing_parts() -> None:
    with pytest.raises(
        ValueError, match=r"parts is missing column\(s\) \['pooled_recall@2\|den'\]"
    ):
        prm.aggregate(pl.DataFrame({"pooled_recall@2|num": [1.0]}), "pooled_recall@2")


def test_aggregate_of_nothing_is_null() -> None:
    empty = pl.DataFrame(schema={"user": pl.Int64, "mrr": pl.Float64, "p@2|num": pl.Float64})
    assert prm.aggregate(empty.drop("p@2|num"), "mrr")["mrr"].to_list() == [None]


# --- the plan builds only what is needed --------------------------------------------------


def test_plan_builds_only_what_the_measures_need() -> None:
    recs, truth = pl.LazyFrame(RECS), pl.LazyFrame(TRUTH)
    plain = prm.evaluate(recs, truth, ["precision@3", "recall@3"]).explain()
    assert "__prm_hit_index" not in plain
    assert "__prm_idcg" not in plain
    assert "__prm_ideal_rank" not in plain
    ap = prm.evaluate(recs, truth, ["map@3"]).explain()
    assert "__prm_hit_index" in ap
    ndcg = prm.evaluate(recs, truth, ["ndcg@3"]).explain()
    assert "__prm_idcg@3" in ndcg


@settings(max_examples=40, deadline=None)
@given(case=cases())
def test_evaluate_is_aggregate_of_per_user_parts_on_generated_cases(case: Case) -> None:
    by = by_columns(case) or None
    kwargs = dict(case.kwargs)
    direct = prm.evaluate(case.recs, case.truth, case.metrics, **kwargs)
    parts = prm.per_user_parts(case.recs, case.truth, case.metrics, **kwargs)
    combined = prm.aggregate(parts, case.metrics, by=by)
    assert combined.columns == direct.columns
    assert combined.height == direct.height
    for name in direct.columns:
        left, right = combined[name].to_list(), direct[name].to_list()
        if direct[name].dtype == pl.Float64:
            # the same sums in another row order: equal up to rounding
            assert [x is None for x in left] == [x is None for x in right]
            pairs = [(x, y) for x, y in zip(left, right, strict=True) if y is not None]
            assert [x for x, _ in pairs] == pytest.approx([y for _, y in pairs], rel=1e-12)
        else:
            assert left == right
    # the per-user values are the parts' values (pooled: num / den)
    per_user = prm.evaluate(case.recs, case.truth, case.metrics, per_user=True, **kwargs)
    assert per_user.height == parts.height


def test_every_measure_declares_which_way_is_better() -> None:
    """METRICS.md, "Which way is better": the lower-is-better and descriptive measures."""
    from polars_rankmetrics._measures import builtin_measures  # noqa: PLC0415

    directions = {m.name: m.direction for m in builtin_measures()}
    lower = {"fallout", "mean_rank", "rbp_resid", "gini", "exposure_gini", "ndkl", "calibration"}
    # surprisal is novelty normalised (RePlay): descriptive as novelty
    descriptive = {"arp", "novelty", "long_tail", "judged", "surprisal"}
    assert {name for name, d in directions.items() if d == "lower"} == lower
    assert {name for name, d in directions.items() if d == "none"} == descriptive
    assert set(directions.values()) == {"higher", "lower", "none"}
    # the derived measures take their source's direction
    assert directions["gm_map"] == directions["map"] == "higher"
    assert all(directions[f"{family}_ndcg"] == "higher" for family in ("ips", "snips"))
