"""The pandas twins: same numbers as the Polars path, pandas dtypes and index kept."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

pd = pytest.importorskip("pandas")
pa = pytest.importorskip("pyarrow")

import polars_rankmetrics as prm  # noqa: E402
from polars_rankmetrics import pandas as prm_pd  # noqa: E402
from polars_rankmetrics.namespace import RankFrameNamespace  # noqa: E402

METRICS = [
    "precision@5", "recall@10", "f1@5", "hit_rate@3", "map@12", "mrr", "ndcg@10", "dcg@5",
    "r_precision", "mean_rank", "pooled_recall@10",
]  # fmt: skip


def random_case(seed: int = 7) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Two models' scored lists with ties, graded truth, users on one side only."""
    rng = np.random.default_rng(seed)
    rows = []
    for model in ("a", "b"):
        for user in range(40):
            items = rng.choice(120, size=int(rng.integers(1, 15)), replace=False)
            rows += [
                (model, f"{user:03d}", f"{i:04d}", round(float(rng.random()), 1)) for i in items
            ]
    recs = pl.DataFrame(rows, schema=["model", "user", "item", "score"], orient="row")
    judged = [
        (f"{user:03d}", f"{i:04d}", int(rng.integers(0, 4)))
        for user in range(5, 45)
        for i in rng.choice(120, size=int(rng.integers(1, 8)), replace=False)
    ]
    truth = pl.DataFrame(judged, schema=["user", "item", "grade"], orient="row")
    return recs, truth


@pytest.fixture(scope="module")
def case() -> tuple[pl.DataFrame, pl.DataFrame]:
    return random_case()


# The core's means are not bit-for-bit reproducible from run to run (parallel float
# sums differ in the last bits), even for identical Polars input.
CLOSE = {"rel_tol": 1e-12, "abs_tol": 1e-15}


def back(result: pd.DataFrame) -> pl.DataFrame:
    assert isinstance(result, pd.DataFrame)
    return pl.from_pandas(result)


# --- same numbers, same parameters ----------------------------------------------------


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"per_user": True},
        {"denominator": "relevant", "gain": "exponential", "ties": "item_asc"},
        {"users_without_recs": "exclude", "users_without_truth": "zero", "relevance_level": 2},
        {"conventions": "trec", "per_user": True},
    ],
)
def test_evaluate_twin_gives_the_polars_numbers(
    case: tuple[pl.DataFrame, pl.DataFrame], options: dict[str, Any]
) -> None:
    recs, truth = case
    kwargs = {"score": "score", "relevance": "grade", "by": "model", **options}
    expected = prm.evaluate(recs, truth, METRICS, **kwargs)
    from_accessor = recs.to_pandas().rank.evaluate(truth.to_pandas(), METRICS, **kwargs)
    from_function = prm_pd.evaluate(recs.to_pandas(), truth.to_pandas(), METRICS, **kwargs)
    assert_frame_equal(back(from_accessor), expected, **CLOSE)
    assert_frame_equal(back(from_function), expected, **CLOSE)
    assert list(from_accessor.columns) == expected.columns
    assert all(from_accessor[name].dtype == np.float64 for name in METRICS)


def test_positions_and_relevance_twins(case: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    recs, truth = case
    ranked = prm.positions(recs, 5, score="score", by="model", ties="item_asc")
    got = recs.to_pandas().rank.positions(5, score="score", by="model", ties="item_asc")
    assert_frame_equal(back(got), ranked, check_exact=True)
    labeled = prm.relevance(ranked, truth, relevance="grade", by="model")
    got_labeled = got.rank.relevance(truth.to_pandas(), relevance="grade", by="model")
    # The core does not fix the order of a user's unrecommended truth rows.
    keys = ["model", "user", "item"]
    assert_frame_equal(back(got_labeled).sort(keys), labeled.sort(keys), check_exact=True)


def test_truth_may_be_a_polars_frame(case: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    recs, truth = case
    expected = prm.evaluate(recs, truth, "map@12", score="score", by="model")
    for polars_truth in (truth, truth.lazy()):
        got = recs.to_pandas().rank.evaluate(polars_truth, "map@12", score="score", by="model")
        assert_frame_equal(back(got), expected, **CLOSE)


def _parameters(function: Callable[..., Any], skip: int) -> list[tuple[str, Any, Any]]:
    params = list(inspect.signature(function).parameters.values())[skip:]
    return [(p.name, p.kind, p.default) for p in params]


@pytest.mark.parametrize("name", ["positions", "relevance", "evaluate"])
def test_same_parameters_as_polars(name: str) -> None:
    core = getattr(prm, name)
    assert _parameters(getattr(prm_pd, name), 0) == _parameters(core, 0)
    method = getattr(pd.DataFrame({"user": []}).rank, name)
    assert _parameters(method, 0) == _parameters(getattr(RankFrameNamespace, name), 1)
    assert method.__doc__ == getattr(prm_pd, name).__doc__


# --- dtypes ---------------------------------------------------------------------------

STRING_DTYPES = [
    pytest.param("str", id="str"),
    pytest.param(object, id="object"),
    pytest.param("string[python]", id="string-python"),
    pytest.param("string[pyarrow]", id="string-pyarrow"),
    pytest.param(pd.ArrowDtype(pa.string()), id="arrow-string"),
    pytest.param(pd.ArrowDtype(pa.large_string()), id="arrow-large-string"),
]


@pytest.mark.parametrize("dtype", STRING_DTYPES)
def test_string_ids_keep_dtype_and_leading_zeros(dtype: Any) -> None:
    recs = pd.DataFrame(
        {"user": ["007", "007", "010"], "item": ["0001", "01", "0001"], "rank": [1, 2, 1]}
    ).astype({"user": dtype, "item": dtype})
    truth = pd.DataFrame({"user": ["007", "099"], "item": ["01", "0002"]}).astype(
        {"user": dtype, "item": dtype}
    )
    positioned = recs.rank.positions()
    labeled = recs.rank.relevance(truth)
    per_user = recs.rank.evaluate(truth, "mrr", per_user=True)
    for result in (positioned, labeled, per_user):
        assert result["user"].dtype == recs["user"].dtype
    assert labeled["item"].dtype == recs["item"].dtype
    assert labeled["user"].tolist() == ["007", "007", "010", "099"]
    assert labeled["item"].tolist() == ["0001", "01", "0001", "0002"]
    assert per_user["user"].tolist() == ["007", "099"]
    assert per_user["mrr"].tolist() == [0.5, 0.0]


@pytest.mark.parametrize(
    ("dtype", "big"),
    [("int64", 2**62 + 1), ("uint64", 2**63 + 1), ("Int64", 2**62 + 1), ("int32", 2**31 - 1)],
)
def test_integer_ids_stay_exact_integers(dtype: str, big: int) -> None:
    # 2**62 + 1 is not a float64: the ids must never pass through float.
    recs = pd.DataFrame({"user": [big, big, 5], "item": [big, 3, 3], "rank": [1, 2, 1]})
    recs = recs.astype({"user": dtype, "item": dtype})
    truth = pd.DataFrame({"user": [big, 8], "item": [3, big]}).astype(
        {"user": dtype, "item": dtype}
    )
    labeled = recs.rank.relevance(truth)
    assert labeled["user"].dtype == recs["user"].dtype
    assert labeled["item"].dtype == recs["item"].dtype
    assert labeled["user"].tolist() == [5, 8, big, big]
    assert labeled["item"].tolist() == [3, big, big, 3]
    assert recs.rank.evaluate(truth, "mrr", per_user=True)["user"].tolist() == [8, big]


def test_categorical_ids_and_groups() -> None:
    recs = pd.DataFrame(
        {
            "model": pd.Categorical(["m2", "m2", "m1"], categories=["m2", "m1", "unused"]),
            "user": pd.Categorical(["u1", "u1", "u1"]),
            "item": pd.Categorical([10, 20, 10]),
            "rank": [1, 2, 1],
        }
    )
    truth = pd.DataFrame({"user": ["u1", "u2"], "item": [20, 30]})
    positioned = recs.rank.positions(by="model")
    pd.testing.assert_series_equal(positioned["model"], recs["model"])
    pd.testing.assert_series_equal(positioned["item"], recs["item"])
    labeled = recs.rank.relevance(truth, by="model")
    # truth values the categories lack are appended, never turned into NaN
    assert list(labeled["user"].cat.categories) == ["u1", "u2"]
    assert list(labeled["item"].cat.categories) == [10, 20, 30]
    assert labeled["user"].notna().all()
    assert labeled["item"].notna().all()
    means = recs.rank.evaluate(truth, ["map@2", "mrr"], by="model")
    assert means["model"].dtype == recs["model"].dtype
    assert means["model"].tolist() == ["m1", "m2"]  # sorted by value, as on Polars
    assert means["mrr"].tolist() == [0.0, 0.25]


def test_ordered_categorical_keeps_order() -> None:
    dtype = pd.CategoricalDtype(["z", "a"], ordered=True)
    recs = pd.DataFrame({"user": pd.Series(["a", "z"], dtype=dtype), "item": ["x", "x"], "rank": 1})
    assert recs.rank.positions()["user"].dtype == dtype


def test_pyarrow_backed_frames_stay_pyarrow_backed() -> None:
    recs = pd.DataFrame(
        {"user": ["u1", "u1", "u2"], "item": ["a", "b", "a"], "score": [0.5, 0.7, 0.1]}
    ).convert_dtypes(dtype_backend="pyarrow")
    truth = pd.DataFrame({"user": ["u1", "u3"], "item": ["a", "c"]}).convert_dtypes(
        dtype_backend="pyarrow"
    )
    positioned = recs.rank.positions(score="score")
    assert all(isinstance(dtype, pd.ArrowDtype) for dtype in positioned.dtypes)
    assert positioned.dtypes.to_dict() == {
        **recs.dtypes.to_dict(),
        "rank": pd.ArrowDtype(pa.uint32()),
    }
    labeled = positioned.rank.relevance(truth)
    assert all(isinstance(dtype, pd.ArrowDtype) for dtype in labeled.dtypes)
    assert labeled["rank"].isna().tolist() == [False, False, False, True]
    means = recs.rank.evaluate(truth, "map@2", score="score")
    assert means["map@2"].dtype == pd.ArrowDtype(pa.float64())
    assert means["map@2"].tolist() == [0.25]


def test_missing_integers_become_nullable_not_float() -> None:
    recs = pd.DataFrame({"user": [1, 1], "item": ["a", "b"], "rank": np.array([1, 2], "int16")})
    truth = pd.DataFrame({"user": [1, 2], "item": ["b", "c"]})
    labeled = recs.rank.relevance(truth)
    assert labeled["rank"].dtype == pd.Int16Dtype()
    assert labeled["rank"].tolist() == [1, 2, pd.NA]
    assert labeled["n_relevant"].dtype == np.uint32
    assert labeled["is_relevant"].dtype == np.bool_
    assert labeled["rel"].dtype == np.float64


def test_extra_columns_keep_their_dtype() -> None:
    recs = pd.DataFrame(
        {
            "user": [1, 1],
            "item": ["a", "b"],
            "score": np.array([0.5, 0.25], dtype="float32"),
            "when": pd.to_datetime(["2024-01-01", "2024-01-02"]).tz_localize("UTC"),
            "flag": pd.array([True, None], dtype="boolean"),
        }
    )
    positioned = recs.rank.positions(score="score")
    pd.testing.assert_frame_equal(positioned.drop(columns="rank"), recs)


# --- index ----------------------------------------------------------------------------


def test_positions_keeps_the_labels_of_kept_rows() -> None:
    index = pd.MultiIndex.from_tuples([("x", 3), ("x", 1), ("y", 2), ("y", 2)], names=["a", "b"])
    recs = pd.DataFrame(
        {"user": [1, 1, 1, 2], "item": ["p", "q", "r", "p"], "score": [0.1, 0.9, 0.5, 0.3]},
        index=index,
    )
    got = recs.rank.positions(2, score="score")
    expected = recs.iloc[[1, 2, 3]].assign(rank=np.array([1, 2, 1], dtype="uint32"))
    pd.testing.assert_frame_equal(got, expected)


def test_relevance_and_evaluate_get_a_range_index() -> None:
    recs = pd.DataFrame({"user": [1, 1], "item": ["a", "b"], "rank": [1, 2]}, index=[7, 3])
    truth = pd.DataFrame({"user": [1, 2], "item": ["b", "c"]}, index=["t1", "t2"])
    pd.testing.assert_index_equal(recs.rank.relevance(truth).index, pd.RangeIndex(3))
    pd.testing.assert_index_equal(recs.rank.evaluate(truth, "mrr").index, pd.RangeIndex(1))


@pytest.mark.parametrize(
    ("make", "message"),
    [
        pytest.param(
            lambda recs, truth: recs.set_index("user").rank.evaluate(truth, "mrr"),
            r"recs has no column 'user': it is an index level.*reset_index",
            id="recs",
        ),
        pytest.param(
            lambda recs, truth: recs.rank.relevance(truth.set_index(["user", "item"])),
            r"truth has no column 'user': it is an index level",
            id="truth",
        ),
        pytest.param(
            lambda recs, truth: recs.set_index("rank").rank.positions(),
            r"recs has no column 'rank': it is an index level",
            id="rank",
        ),
    ],
)
def test_role_in_the_index_is_explained(
    make: Callable[[pd.DataFrame, pd.DataFrame], Any], message: str
) -> None:
    recs = pd.DataFrame({"user": [1, 1], "item": ["a", "b"], "rank": [1, 2]})
    truth = pd.DataFrame({"user": [1], "item": ["b"]})
    with pytest.raises(ValueError, match=message):
        make(recs, truth)


# --- inputs and errors ----------------------------------------------------------------


def test_inputs_are_not_mutated(case: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    recs = case[0].to_pandas().set_axis(pd.RangeIndex(100, 100 + case[0].height))
    truth = case[1].to_pandas()
    recs_before, truth_before = recs.copy(deep=True), truth.copy(deep=True)
    ranked = recs.rank.positions(3, score="score", by="model")
    ranked_before = ranked.copy(deep=True)
    ranked.rank.relevance(truth, by="model", relevance="grade")
    recs.rank.evaluate(truth, METRICS, score="score", by="model", relevance="grade")
    for got, before in ((recs, recs_before), (truth, truth_before), (ranked, ranked_before)):
        pd.testing.assert_frame_equal(got, before, check_exact=True)


def test_inputs_are_checked_when_called_not_when_accessed() -> None:
    frame = pd.DataFrame({"x": [1]})
    methods = (frame.rank.evaluate, frame.rank.positions, frame.rank.relevance)
    assert all(callable(method) for method in methods)
    with pytest.raises(ValueError, match=r"recs is missing column 'user'.*has columns \['x'\]"):
        frame.rank.evaluate(pd.DataFrame({"user": [1], "item": [2]}), "mrr")


def test_missing_scores_are_refused() -> None:
    recs = pd.DataFrame({"user": [1, 1], "item": ["a", "b"], "score": [0.5, np.nan]})
    with pytest.raises(ValueError, match="score"):
        recs.rank.positions(score="score")


@pytest.mark.parametrize(
    ("recs", "error", "message"),
    [
        pytest.param(
            pd.DataFrame({"user": [1], "item": ["a"], "rank": [1], 0: [1]}),
            TypeError, r"not strings, e.g. 0 \(int\).*rename\(columns=str\)", id="int-label",
        ),
        pytest.param(
            pd.DataFrame([[1, "a", 1, 2]], columns=["user", "item", "rank", "rank"]),
            ValueError, "duplicated column label.*'rank'", id="duplicate-label",
        ),
        pytest.param(
            pd.DataFrame({"user": [1, "u2"], "item": ["a", "b"], "rank": [1, 1]}),
            TypeError, r"recs column 'user' \(dtype object\) cannot be converted", id="mixed-object",
        ),
    ],
)  # fmt: skip
def test_unconvertible_frames_are_explained(
    recs: pd.DataFrame, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        recs.rank.positions()


def test_frame_types_are_checked() -> None:
    recs = pd.DataFrame({"user": [1], "item": ["a"], "rank": [1]})
    with pytest.raises(TypeError, match="recs must be a pandas DataFrame, got DataFrame"):
        prm_pd.evaluate(pl.from_pandas(recs), recs, "mrr")  # type: ignore[arg-type]
    # the truth may be any frame (Polars, pandas, Arrow), but not a dict of columns
    with pytest.raises(TypeError, match=r"truth must be a Polars DataFrame .*; got dict"):
        recs.rank.evaluate({"user": [1], "item": ["a"]}, "mrr")


def test_key_dtype_mismatch_is_refused_not_zero() -> None:
    recs = pd.DataFrame({"user": [1], "item": ["1"], "rank": [1]})
    truth = pd.DataFrame({"user": [1], "item": [1]})
    with pytest.raises((TypeError, ValueError), match="item"):
        recs.rank.evaluate(truth, "mrr")
