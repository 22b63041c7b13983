"""``curves`` over the registry: every measure with a cutoff, equal to ``evaluate`` at every k.

Generic over :func:`polars_rankmetrics._measures.builtin_measures`: a measure
added to the registry with a cutoff is drawn and checked here without
editing this file.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polars_rankmetrics as prm
from polars_rankmetrics._measures import builtin_measures

from .._subprocess import assert_runs

HUGE = 10_000_000

# the measures of the lists themselves are drawn by analysis/_list_curves (their own
# equality with evaluate is tests/analysis/test_lists_analysis.py); they read no truth
CUTOFF = [
    m
    for m in builtin_measures()
    if m.cutoff != "none" and "beyond_accuracy" not in m.inputs and m.curve is not None
]
# a cutoff that counts something else than positions (pauc@k: the top k negatives) has
# no curve step: its value at k reads positions past k
UNDRAWN = [
    m.name
    for m in builtin_measures()
    if m.cutoff != "none" and "beyond_accuracy" not in m.inputs and m.curve is None
]
LISTS = [m.name for m in builtin_measures() if "beyond_accuracy" in m.inputs]
# the training history the debiased measures estimate their propensities from (items of
# several popularities, one never seen: its weight is the clip's)
HISTORY = pl.DataFrame(
    {"user": [1, 1, 2, 3, 3, 3, 7, 8], "item": ["a", "b", "a", "a", "c", "e", "a", "b"]}
)
NO_CUTOFF = [m.name for m in builtin_measures() if m.cutoff == "none"]


def _catalog(*frames: pl.DataFrame) -> pl.DataFrame:
    """Every item of the frames and of the history: serendipity reads the catalog's size."""
    return pl.concat([frame.select("item") for frame in (*frames, HISTORY)]).unique().sort("item")


# each measure by its name (the parameters' defaults), and parameters written out
LABELS = [m.name for m in CUTOFF] + ["rbp(p=0.9)", "err(max_grade=4)", "fbeta(beta=2)"]
CONVENTIONS = {
    "default": {},
    "trec": {"conventions": "trec"},
    "exponential": {"gain": "exponential"},
}


@pytest.fixture(scope="module")
def data() -> tuple[pl.DataFrame, pl.DataFrame]:
    """Tied scores, graded truth (0 and -1 too), users without lists or without relevant truth.

    Two models (a group the truth does not have). User 1: ties at the top;
    user 2: one relevant item, found late; user 3: only grades <= 0 (no
    relevant truth); user 4: a list but no truth row; user 5: truth but no
    list; user 6: relevant items never recommended.
    """
    rows = [
        ("m1", 1, "a", 0.9), ("m1", 1, "b", 0.9), ("m1", 1, "c", 0.5), ("m1", 1, "d", 0.5),
        ("m1", 1, "e", 0.1),
        ("m1", 2, "a", 0.8), ("m1", 2, "x", 0.7), ("m1", 2, "y", 0.7), ("m1", 2, "b", 0.2),
        ("m1", 3, "a", 0.3), ("m1", 3, "b", 0.2),
        ("m1", 4, "a", 0.5), ("m1", 4, "b", 0.5),
        ("m1", 6, "z", 1.0),
        ("m2", 1, "e", 0.9), ("m2", 1, "d", 0.8), ("m2", 1, "c", 0.8), ("m2", 1, "b", 0.1),
        ("m2", 2, "b", 0.4), ("m2", 2, "a", 0.4),
        ("m2", 3, "b", 0.9),
    ]  # fmt: skip
    recs = pl.DataFrame(
        rows,
        schema={"model": pl.String, "user": pl.Int64, "item": pl.String, "score": pl.Float64},
        orient="row",
    )
    judgements = [
        (1, "a", 3), (1, "c", 1), (1, "d", 0), (1, "e", 2), (1, "q", 2), (1, "r", -1),
        (2, "b", 1), (2, "y", 0), (2, "w", -1),
        (3, "a", 0), (3, "b", -1),
        (5, "a", 2), (5, "b", 1),
        (6, "a", 1), (6, "b", 1), (6, "c", 4),
    ]  # fmt: skip
    truth = pl.DataFrame(
        judgements,
        schema={"user": pl.Int64, "item": pl.String, "rel": pl.Int64},
        orient="row",
    ).with_columns(
        # each judgement's subtopic (the diversity measures read it): two intents
        subtopic=pl.when(pl.col("item").is_in(["a", "c", "q"]))
        .then(pl.lit("s1"))
        .otherwise(pl.lit("s2"))
    )
    return recs, truth


def _expected(
    recs: pl.DataFrame, truth: pl.DataFrame, label: str, ks: list[int], **options: Any
) -> dict[tuple[str, int], float | None]:
    """``evaluate``, once per k, by (model, k)."""
    wide = prm.evaluate(recs, truth, [f"{label}@{k}" for k in ks], **options)
    return {
        (row["model"], k): row[f"{label}@{k}"] for row in wide.iter_rows(named=True) for k in ks
    }


def _assert_equal(
    result: pl.DataFrame, expected: dict[tuple[str, int], float | None], label: str
) -> None:
    got = {
        (row["model"], row["k"]): row["value"]
        for row in result.filter(pl.col("metric") == label).iter_rows(named=True)
    }
    assert got.keys() == expected.keys(), label
    for key, want in expected.items():
        value = got[key]
        assert (value is None) == (want is None), (label, key, value, want)
        if value is not None and want is not None:
            assert math.isclose(value, want, rel_tol=0.0, abs_tol=1e-12), (label, key, value, want)


def test_every_measure_with_a_cutoff_is_covered() -> None:
    names = {label.split("(")[0] for label in LABELS}
    cut = {m.name for m in builtin_measures() if m.cutoff != "none"}
    assert cut == names | set(LISTS) | set(UNDRAWN)
    # no curve step (pauc@k: its k counts negatives; the diversity measures): evaluated at each k
    assert {"pauc", "pap", "alpha_ndcg", "err_ia"} <= set(UNDRAWN)
    # the ones curves turned away before its hooks
    assert {"err", "rbp", "judged", "gm_map", "fbeta", "n_relevant_retrieved"} <= names


@pytest.mark.parametrize("options", list(CONVENTIONS.values()), ids=list(CONVENTIONS))
@pytest.mark.parametrize("label", LABELS)
def test_equal_to_evaluate_at_every_k(
    data: tuple[pl.DataFrame, pl.DataFrame], label: str, options: dict[str, Any]
) -> None:
    recs, truth = data
    longest = recs.group_by("model", "user").len().get_column("len").max()
    assert isinstance(longest, int)
    ks = [*range(1, longest + 3), HUGE]
    common: dict[str, Any] = {
        "by": "model", "score": "score", "relevance": "rel", "interactions": HISTORY,
        "items": _catalog(recs, truth), **options,
    }  # fmt: skip
    result = prm.curves(recs, truth, [label], k=ks, **common)
    assert result.columns == ["model", "metric", "k", "value"]
    _assert_equal(result, _expected(recs, truth, label, ks, **common), label)


def test_every_measure_in_one_call_with_intervals(data: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    recs, truth = data
    ks = [1, 2, 3, 7]
    common: dict[str, Any] = {
        "by": "model", "score": "score", "relevance": "rel", "interactions": HISTORY,
        "items": _catalog(recs, truth),
    }  # fmt: skip
    result = prm.curves(recs, truth, LABELS, k=ks, ci=0.9, **common)
    assert result.get_column("metric").unique(maintain_order=True).to_list() == LABELS
    for label in LABELS:
        _assert_equal(result, _expected(recs, truth, label, ks, **common), label)
    # an interval only for a mean over users (not pooled recall, nor a geometric mean)
    without = result.filter(pl.col("metric").is_in(["pooled_recall", "gm_map", "gm_bpref"]))
    assert without.get_column("ci_low").null_count() == without.height
    means = result.filter(pl.col("metric") == "recall", pl.col("k") == 7)
    assert (means.get_column("ci_low") <= means.get_column("value")).all()


def test_bit_for_bit_where_the_per_user_values_agree() -> None:
    """The exact mean of evaluate, not a float sum whose last bit depends on the order."""
    sample = prm.sample_data(n_users=300, seed=11)
    names = ["recall", "hit_rate", "mrr", "map"]
    ks = [1, 2, 3, 5, 8, 13]
    common: dict[str, Any] = {"by": "model", "score": "score", "relevance": "rel"}
    result = prm.curves(sample.recs, sample.truth, names, k=ks, **common)
    for name in names:
        expected = _expected(sample.recs, sample.truth, name, ks, **common)
        got = {
            (row["model"], row["k"]): row["value"]
            for row in result.filter(pl.col("metric") == name).iter_rows(named=True)
        }
        assert got == expected, name


def test_a_huge_k_costs_what_evaluate_costs() -> None:
    recs = pl.DataFrame({"user": [1, 1, 2], "item": ["a", "b", "a"], "rank": [1, 2, 1]})
    truth = pl.DataFrame({"user": [1, 2], "item": ["b", "a"], "subtopic": [1, 1]})
    inputs = {"interactions": HISTORY, "items": _catalog(recs, truth)}
    result = prm.curves(recs, truth, LABELS, k=[HUGE], **inputs)
    assert result.height == len(LABELS)
    assert result.get_column("k").to_list() == [HUGE] * len(LABELS)
    for label in LABELS:
        want = prm.evaluate(recs, truth, [f"{label}@{HUGE}"], **inputs).item()
        got = result.filter(pl.col("metric") == label).get_column("value").item()
        if want is None:  # undefined here (fallout without a judged non-relevant item)
            assert got is None, label
            continue
        assert math.isclose(got, want, rel_tol=0.0, abs_tol=1e-12), label
    # the work is bounded by the rows and the longest list: a k of a billion fits in memory
    # that a grid of every k up to it would not
    code = """
        import resource
        import polars as pl
        import polars_rankmetrics as prm
        limit = 3 * 2**30
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        recs = pl.DataFrame({"user": [1, 1, 2], "item": ["a", "b", "a"], "rank": [1, 2, 1]})
        truth = pl.DataFrame({"user": [1, 2], "item": ["b", "a"]})
        result = prm.curves(recs, truth, ["ndcg", "precision", "map"], k=10**9)
        print(result.get_column("value").to_list())
    """
    values = [float(text) for text in assert_runs(code).strip().strip("[]").split(",")]
    # user 1 finds b at 2, user 2 finds a at 1
    want = [(1 / math.log2(3) + 1) / 2, 2 / 2 / 10**9, (1 / 2 + 1) / 2]
    assert values == pytest.approx(want, rel=0.0, abs=1e-12)


def test_a_huge_k_for_the_measures_of_the_lists() -> None:
    recs = pl.DataFrame({"user": [1, 1, 2], "item": ["a", "b", "a"], "rank": [1, 2, 1]})
    train = pl.DataFrame({"user": [1, 2, 3], "item": ["a", "a", "b"]})
    catalog = pl.DataFrame({"item": ["a", "b", "c"], "genre": ["x", "y", "y"]})
    inputs: dict[str, Any] = {
        "interactions": train,
        "items": catalog,
        "category": "genre",
        "group": "genre",
    }
    ks = [1, 2, HUGE]
    result = prm.curves(recs, None, LISTS, k=ks, **inputs)
    assert result.height == len(LISTS) * len(ks)
    for label in LISTS:
        wide = prm.evaluate(recs, None, [f"{label}@{k}" for k in ks], **inputs)
        for k in ks:
            got = result.filter(pl.col("metric") == label, pl.col("k") == k).item(0, "value")
            want = wide.item(0, f"{label}@{k}")
            assert (got is None) == (want is None), (label, k)
            if got is not None:
                assert math.isclose(got, want, rel_tol=0.0, abs_tol=1e-12), (label, k)


def test_k_accepts_integers_and_refuses_the_rest(data: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    recs, truth = data
    common: dict[str, Any] = {"by": "model", "score": "score", "relevance": "rel"}
    single = prm.curves(recs, truth, ["ndcg"], k=np.int64(5), **common)
    assert single.get_column("k").unique().to_list() == [5]
    spread = prm.curves(recs, truth, ["ndcg"], k=np.arange(1, 4), **common)
    listed = prm.curves(recs, truth, ["ndcg"], k=[1, 2, 3], **common)
    assert spread.equals(listed)
    assert prm.curves(recs, truth, ["ndcg"], k=range(1, 4), **common).equals(listed)
    with pytest.raises(TypeError, match=r"k must be an integer.*2\.5"):
        prm.curves(recs, truth, ["ndcg"], k=2.5, **common)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"every k must be an integer.*2\.5"):
        prm.curves(recs, truth, ["ndcg"], k=[1, 2.5], **common)  # type: ignore[list-item]
    with pytest.raises(TypeError, match="k must be an integer"):
        prm.curves(recs, truth, ["ndcg"], k=np.float64(3.0), **common)  # type: ignore[arg-type]


@pytest.mark.parametrize("name", NO_CUTOFF)
def test_a_measure_without_a_cutoff_is_refused_by_name(
    data: tuple[pl.DataFrame, pl.DataFrame], name: str
) -> None:
    recs, truth = data
    with pytest.raises(ValueError, match=rf"'{name}'.*no cutoff to vary"):
        prm.curves(recs, truth, [name], score="score", relevance="rel")


@pytest.mark.parametrize("name", UNDRAWN)
def test_a_measure_without_a_curve_step_is_its_value_at_each_k(
    data: tuple[pl.DataFrame, pl.DataFrame], name: str
) -> None:
    recs, truth = data
    common = {"score": "score", "relevance": "rel", "by": "model"}
    drawn = prm.curves(recs, truth, [name], k=[1, 2, 3], **common)
    for k in (1, 2, 3):
        at_k = prm.evaluate(recs, truth, [f"{name}@{k}"], **common).sort("model")
        values = drawn.filter(pl.col("k") == k).sort("model").get_column("value")
        assert values.to_list() == at_k.get_column(f"{name}@{k}").to_list(), (name, k)


# ------------------------------------------------------------------ random inputs


@st.composite
def cases(draw: st.DrawFn) -> tuple[pl.DataFrame, pl.DataFrame, dict[str, Any]]:
    """Small lists with tied scores and graded truth (negative grades too)."""
    n_users = draw(st.integers(1, 5))
    items = list(range(7))
    recs_rows = []
    for user in range(n_users):
        for item in draw(st.lists(st.sampled_from(items), unique=True, max_size=6)):
            recs_rows.append((user, item, float(draw(st.integers(0, 2)))))
    truth_rows = [
        (user, item, draw(st.integers(-1, 3)))
        for user in range(n_users + 1)
        for item in draw(st.lists(st.sampled_from(items), unique=True, max_size=4))
    ]
    recs = pl.DataFrame(
        recs_rows, schema={"user": pl.Int64, "item": pl.Int64, "score": pl.Float64}, orient="row"
    )
    truth = pl.DataFrame(
        truth_rows, schema={"user": pl.Int64, "item": pl.Int64, "rel": pl.Int64}, orient="row"
    )
    options = draw(
        st.fixed_dictionaries(
            {},
            optional={
                "conventions": st.sampled_from(["default", "trec"]),
                "relevance_level": st.sampled_from([1, 2]),
                "users_without_recs": st.sampled_from(["zero", "exclude"]),
                "users_without_truth": st.sampled_from(["exclude", "judged", "zero"]),
            },
        )
    )
    return recs, truth, options


@pytest.mark.properties
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_equal_to_evaluate_on_random_inputs(case: tuple) -> None:
    recs, truth, options = case
    if recs.height == 0 or truth.height == 0:
        return
    labels = ["err", "rbp(p=0.5)", "gm_map", "judged", "fbeta(beta=0.5)", "bpref", "infap"]
    ks = [1, 2, 3, 4, 6, 9]
    common: dict[str, Any] = {"score": "score", "relevance": "rel", **options}
    result = prm.curves(recs, truth, labels, k=ks, **common).with_columns(model=pl.lit("all"))
    for label in labels:
        wide = prm.evaluate(recs, truth, [f"{label}@{k}" for k in ks], **common)
        expected = {("all", k): wide.item(0, f"{label}@{k}") for k in ks}
        _assert_equal(result, expected, label)
