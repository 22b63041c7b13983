"""``curves``: equal to ``evaluate`` at every k, under every convention, on every backend."""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

import polars_rankmetrics as prm
from polars_rankmetrics.sample import sample_data
from tests.conftest import Backend

ALL = ["precision", "recall", "f1", "hit_rate", "map", "mrr", "ndcg", "dcg", "pooled_recall"]


@pytest.fixture(scope="module")
def sample() -> tuple[pl.DataFrame, pl.DataFrame]:
    sample = sample_data(n_users=120, seed=5)
    return sample.recs, sample.truth


def _evaluate_long(
    recs: Any, truth: Any, names: list[str], ks: list[int], **options: Any
) -> pl.DataFrame:
    """The oracle: evaluate once per (metric, k), reshaped like curves' output."""
    by = options.get("by")
    wide = prm.evaluate(recs, truth, [f"{n}@{k}" for n in names for k in ks], **options)
    index = [by] if isinstance(by, str) else list(by or [])
    if not index:
        wide = wide.with_columns(pl.lit(0).alias("__all"))
        index = ["__all"]
    long = wide.unpivot(index=index, variable_name="label", value_name="expected")
    parts = pl.col("label").str.split("@")
    return long.with_columns(
        parts.list.get(0).alias("metric"), parts.list.get(1).cast(pl.Int64).alias("k")
    ).drop("label")


def _assert_equal(result: pl.DataFrame, expected: pl.DataFrame, keys: list[str]) -> None:
    if "__all" in expected.columns:
        expected = expected.drop("__all")
    joined = result.join(expected, on=[*keys, "metric", "k"], how="full", coalesce=True)
    assert joined.height == result.height == expected.height
    both_null = joined.get_column("value").is_null() & joined.get_column("expected").is_null()
    checked = joined.filter(~both_null)
    np.testing.assert_allclose(
        checked.get_column("value").to_numpy(),
        checked.get_column("expected").to_numpy(),
        rtol=1e-10,
        atol=1e-12,
    )


CONVENTIONS = [
    {},
    {"conventions": "trec"},
    {"denominator": "hits", "gain": "exponential"},
    {"denominator": "relevant", "users_without_truth": "zero"},
    {"relevance_level": 2, "users_without_recs": "exclude", "users_without_truth": "judged"},
    {"ties": "item_asc", "users_without_truth": "judged"},
]


@pytest.mark.parametrize("options", CONVENTIONS)
def test_equal_to_evaluate_at_every_k(
    sample: tuple[pl.DataFrame, pl.DataFrame], options: dict[str, Any]
) -> None:
    recs, truth = sample
    ks = list(range(1, 13))
    result = prm.curves(
        recs, truth, ALL, k=ks, by="model", score="score", relevance="rel", **options
    )
    assert result.columns == ["model", "metric", "k", "value"]
    assert result.schema["k"] == pl.Int64
    expected = _evaluate_long(
        recs, truth, ALL, ks, by="model", score="score", relevance="rel", **options
    )
    _assert_equal(result, expected, ["model"])


def test_every_backend_and_lazy_stays_lazy(
    backend: Backend, sample: tuple[pl.DataFrame, pl.DataFrame]
) -> None:
    recs, truth = sample
    names = ["ndcg", "map", "recall"]
    result = backend.frame(recs).rank.curves(
        backend.frame(truth), names, k=[1, 5, 10], by="model", score="score", relevance="rel"
    )
    if backend.name == "polars-lazy":
        assert isinstance(result, pl.LazyFrame)
    expected = _evaluate_long(
        recs, truth, names, [1, 5, 10], by="model", score="score", relevance="rel"
    )
    _assert_equal(backend.polars(result), expected, ["model"])


def test_ci_is_the_t_interval_over_users(sample: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    recs, truth = sample
    result = prm.curves(
        recs, truth, ["ndcg", "precision", "pooled_recall"], k=[3, 10], by="model",
        score="score", relevance="rel", ci=0.9,
    )  # fmt: skip
    assert result.columns == ["model", "metric", "k", "value", "ci_low", "ci_high"]
    per_user = prm.evaluate(
        recs, truth, ["ndcg@3", "ndcg@10", "precision@3", "precision@10"], by="model",
        score="score", relevance="rel", per_user=True,
    )  # fmt: skip
    for row in result.filter(pl.col("metric") != "pooled_recall").iter_rows(named=True):
        x = (
            per_user.filter(pl.col("model") == row["model"])
            .get_column(f"{row['metric']}@{row['k']}")
            .drop_nulls()
            .to_numpy()
        )
        low, high = stats.t.interval(0.9, x.size - 1, loc=x.mean(), scale=stats.sem(x))
        assert row["ci_low"] == pytest.approx(low, rel=1e-9, abs=1e-12)
        assert row["ci_high"] == pytest.approx(high, rel=1e-9, abs=1e-12)
    pooled = result.filter(pl.col("metric") == "pooled_recall")
    assert pooled.get_column("ci_low").null_count() == pooled.height


@st.composite
def cases(draw: st.DrawFn) -> tuple[pl.DataFrame, pl.DataFrame, dict[str, Any]]:
    """Small recs with tied scores, graded truth, users on one side only."""
    n_users = draw(st.integers(1, 6))
    items = list(range(8))
    recs_rows = []
    for model in ("m1", "m2"):
        for user in range(n_users):
            chosen = draw(st.lists(st.sampled_from(items), unique=True, max_size=7))
            for item in chosen:
                recs_rows.append((model, user, item, float(draw(st.integers(0, 3)))))
    truth_rows = []
    for user in range(n_users + 1):  # the last user has truth but no recommendations
        for item in draw(st.lists(st.sampled_from(items), unique=True, max_size=5)):
            truth_rows.append((user, item, draw(st.integers(-1, 3))))
    recs = pl.DataFrame(
        recs_rows,
        schema={"model": pl.String, "user": pl.Int64, "item": pl.Int64, "score": pl.Float64},
        orient="row",
    )
    truth = pl.DataFrame(
        truth_rows, schema={"user": pl.Int64, "item": pl.Int64, "rel": pl.Int64}, orient="row"
    )
    options = draw(
        st.fixed_dictionaries(
            {},
            optional={
                "denominator": st.sampled_from(["min_k", "relevant", "hits"]),
                "gain": st.sampled_from(["linear", "exponential"]),
                "ties": st.sampled_from(["item_desc", "item_asc", "input"]),
                "relevance_level": st.sampled_from([1, 2]),
                "users_without_recs": st.sampled_from(["zero", "exclude"]),
                "users_without_truth": st.sampled_from(["exclude", "judged", "zero"]),
                "conventions": st.sampled_from(["default", "trec"]),
            },
        )
    )
    if options.get("conventions") == "trec":
        # the trec preset fixes these three; a different value is refused (test_conventions)
        trec_fixed = {"denominator": "relevant", "gain": "linear", "ties": "item_desc"}
        for name, fixed in trec_fixed.items():
            if options.get(name, fixed) != fixed:
                del options[name]
    return recs, truth, options


@pytest.mark.properties
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_equal_to_evaluate_on_generated_cases(case: tuple) -> None:
    recs, truth, options = case
    if recs.height == 0 or truth.height == 0:
        return
    ks = [1, 2, 3, 5, 8]
    result = prm.curves(
        recs, truth, ALL, k=ks, by="model", score="score", relevance="rel", **options
    )
    expected = _evaluate_long(
        recs, truth, ALL, ks, by="model", score="score", relevance="rel", **options
    )
    _assert_equal(result, expected, ["model"])


def test_worked_example_without_by() -> None:
    recs = pl.DataFrame({"user": [1, 1, 1, 2, 2, 2], "item": list("abcabc"), "rank": [1, 2, 3] * 2})
    truth = pl.DataFrame({"user": [1, 2, 2], "item": ["b", "a", "c"]})
    result = prm.curves(recs, truth, ["precision", "map", "f1"], k=[1, 2, 3])
    values = {(r["metric"], r["k"]): r["value"] for r in result.iter_rows(named=True)}
    # user 1 finds b at 2, user 2 finds a at 1 and c at 3
    # precision@2 = (1/2 + 1/2) / 2; map@3 (min_k): user 1 (1/2) / 1, user 2 (1 + 2/3) / 2
    assert values["precision", 2] == pytest.approx(0.5)
    assert values["map", 3] == pytest.approx((0.5 + (1 + 2 / 3) / 2) / 2)
    # f1@1 = 2h / (k + m): user 1: 0, user 2: 2 / 3
    assert values["f1", 1] == pytest.approx(1 / 3)


def test_bad_input_is_refused(sample: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    recs, truth = sample
    with pytest.raises(ValueError, match="without a cutoff"):
        prm.curves(recs, truth, ["ndcg@10"], score="score")
    with pytest.raises(ValueError, match="no cutoff to vary"):
        prm.curves(recs, truth, ["r_precision"], score="score")
    with pytest.raises(ValueError, match="no cutoff to vary"):
        prm.curves(recs, truth, ["mean_rank"], score="score")
    with pytest.raises(ValueError, match="unknown metric 'ndgc'"):
        prm.curves(recs, truth, ["ndgc"], score="score")
    with pytest.raises(ValueError, match="at least 1"):
        prm.curves(recs, truth, ["ndcg"], k=[0, 1], score="score")
    with pytest.raises(ValueError, match="k is empty"):
        prm.curves(recs, truth, ["ndcg"], k=[], score="score")
    with pytest.raises(ValueError, match="ci must be None or a number"):
        prm.curves(recs, truth, ["ndcg"], score="score", ci=1.5)
    with pytest.raises(ValueError, match="requested twice"):
        prm.curves(recs, truth, ["ndcg", "ndcg"], score="score")
