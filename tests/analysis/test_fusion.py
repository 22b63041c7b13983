"""``fuse`` and ``optimize_fusion``: ranx's numbers, a textbook's, and clear refusals.

Three independent checks of the fused scores:

* ranx's own unit-test inputs and the values its tests expect
  (``tests/unit/ranx/fusion/*_test.py``, ``tests/unit/ranx/normalization/*``);
* ranx itself (test-only oracle) for every method x norm both offer, on
  generated runs with missing items and tied scores;
* a slow textbook written from the papers' formulas (below), under
  hypothesis-generated runs, including users some runs do not list.

ranx orders equal scores by its sort (stable for lists of at most 16 items,
so by the order the items were given); the runs given to ranx list their
items by id descending, the order :func:`fuse` gives equal scores.
"""

from __future__ import annotations

import math
import re
import statistics
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polars_rankmetrics as prm
from polars_rankmetrics.analysis.fusion import METHODS, NORMS

ranx = pytest.importorskip("ranx")

RunDict = dict[str, dict[str, float]]  # user -> item -> score

# ranx's fusion tests use these three runs for every method (unnormalised)
RANX_RUNS: dict[str, RunDict] = {
    "run_1": {"q1": {"d1": 1, "d2": 2, "d3": 3}, "q2": {"d1": 1, "d2": 2}},
    "run_2": {"q1": {"d1": 3, "d2": 2}, "q2": {"d1": 1, "d3": 3}},
    "run_3": {"q1": {"d3": 1}, "q2": {"d2": 2, "d3": 3}},
}
LN2 = math.log(2)
# the values ranx's tests assert, (q, d) -> value, as they write them
RANX_EXPECTED: dict[str, dict[tuple[str, str], float]] = {
    "sum": {("q1", "d1"): 1 + 3, ("q1", "d2"): 2 + 2, ("q1", "d3"): 3 + 1,
            ("q2", "d1"): 1 + 1, ("q2", "d2"): 2 + 2, ("q2", "d3"): 3 + 3},
    "mnz": {("q1", "d1"): 4 * 2, ("q1", "d2"): 4 * 2, ("q1", "d3"): 4 * 2,
            ("q2", "d1"): 2 * 2, ("q2", "d2"): 4 * 2, ("q2", "d3"): 6 * 2},
    "anz": {("q1", "d1"): 2, ("q1", "d2"): 2, ("q1", "d3"): 2,
            ("q2", "d1"): 1, ("q2", "d2"): 2, ("q2", "d3"): 3},
    "max": {("q1", "d1"): 3, ("q1", "d2"): 2, ("q1", "d3"): 3,
            ("q2", "d1"): 1, ("q2", "d2"): 2, ("q2", "d3"): 3},
    "min": {("q1", "d1"): 1, ("q1", "d2"): 2, ("q1", "d3"): 1,
            ("q2", "d1"): 1, ("q2", "d2"): 2, ("q2", "d3"): 3},
    "med": {("q1", "d1"): 2, ("q1", "d2"): 2, ("q1", "d3"): 2,
            ("q2", "d1"): 1, ("q2", "d2"): 2, ("q2", "d3"): 3},
    "rrf": {("q1", "d1"): 1 / 63 + 1 / 61, ("q1", "d2"): 1 / 62 + 1 / 62,
            ("q1", "d3"): 1 / 61 + 1 / 61, ("q2", "d1"): 1 / 62 + 1 / 62,
            ("q2", "d2"): 1 / 61 + 1 / 62, ("q2", "d3"): 1 / 61 + 1 / 61},
    "isr": {("q1", "d1"): (1 / 9 + 1) * 2, ("q1", "d2"): (1 / 4 + 1 / 4) * 2,
            ("q1", "d3"): (1 + 1) * 2, ("q2", "d1"): (1 / 4 + 1 / 4) * 2,
            ("q2", "d2"): (1 + 1 / 4) * 2, ("q2", "d3"): (1 + 1) * 2},
    "log_isr": {("q1", "d1"): (1 / 9 + 1) * LN2, ("q1", "d2"): (1 / 4 + 1 / 4) * LN2,
                ("q1", "d3"): (1 + 1) * LN2, ("q2", "d1"): (1 / 4 + 1 / 4) * LN2,
                ("q2", "d2"): (1 + 1 / 4) * LN2, ("q2", "d3"): (1 + 1) * LN2},
    "bordafuse": {("q1", "d1"): 1 + 3 + 1.5, ("q1", "d2"): 2 + 2 + 1.5,
                  ("q1", "d3"): 3 + 1 + 3, ("q2", "d1"): 2 + 2 + 1,
                  ("q2", "d2"): 3 + 1 + 2, ("q2", "d3"): 1 + 3 + 3},
    "wsum": {("q1", "d1"): 0.3 * 1 + 0.2 * 3, ("q1", "d2"): 0.3 * 2 + 0.2 * 2,
             ("q1", "d3"): 0.3 * 3 + 0.5 * 1, ("q2", "d1"): 0.3 * 1 + 0.2 * 1,
             ("q2", "d2"): 0.3 * 2 + 0.5 * 2, ("q2", "d3"): 0.2 * 3 + 0.5 * 3},
}  # fmt: skip
RANX_WEIGHTS = [0.3, 0.2, 0.5]

# ranx's normalisation tests: one run, q1 = d1:1, d2:2, d3:3 and q2 = d1:1, d2:2
NORM_RUN: RunDict = {"q1": {"d1": 1, "d2": 2, "d3": 3}, "q2": {"d1": 1, "d2": 2}}
NORM_EXPECTED: dict[str, dict[tuple[str, str], float]] = {
    "max": {("q1", "d1"): 1 / 3, ("q1", "d2"): 2 / 3, ("q1", "d3"): 1.0,
            ("q2", "d1"): 1 / 2, ("q2", "d2"): 1.0},
    "min-max": {("q1", "d1"): 0.0, ("q1", "d2"): 0.5, ("q1", "d3"): 1.0,
                ("q2", "d1"): 0.0, ("q2", "d2"): 1.0},
    "rank": {("q1", "d1"): 1 - 2 / 3, ("q1", "d2"): 1 - 1 / 3, ("q1", "d3"): 1.0,
             ("q2", "d1"): 1 - 1 / 2, ("q2", "d2"): 1.0},
    "sum": {("q1", "d1"): 0 / 3, ("q1", "d2"): 1 / 3, ("q1", "d3"): 2 / 3,
            ("q2", "d1"): 0.0, ("q2", "d2"): 1.0},
    "zmuv": {("q1", "d1"): -1 / 0.816496580927726, ("q1", "d2"): 0.0,
             ("q1", "d3"): 1 / 0.816496580927726, ("q2", "d1"): -1.0, ("q2", "d2"): 1.0},
}  # fmt: skip


def _long(runs: dict[str, RunDict]) -> pl.DataFrame:
    rows = [
        (name, user, item, float(value))
        for name, run in runs.items()
        for user, items in run.items()
        for item, value in items.items()
    ]
    return pl.DataFrame(rows, schema=["run", "user", "item", "score"], orient="row")


def _scores(fused: pl.DataFrame) -> dict[tuple[Any, Any], float]:
    return {(row[0], row[1]): row[2] for row in fused.select("user", "item", "score").iter_rows()}


def _params(method: str, n_runs: int) -> dict[str, Any]:
    if method == "wsum":
        return {"weights": list(np.linspace(0.2, 1.0, n_runs))}
    if method == "rrf":
        return {"k": 60}
    return {}


# ---------------------------------------------------------------- ranx's own tests


@pytest.mark.parametrize("method", list(RANX_EXPECTED))
def test_ranx_unit_test_values(method: str) -> None:
    weights = dict(zip(RANX_RUNS, RANX_WEIGHTS, strict=True)) if method == "wsum" else None
    fused = prm.fuse(_long(RANX_RUNS), method=method, norm=None, weights=weights)  # type: ignore[arg-type]
    got = _scores(fused)
    assert got.keys() == RANX_EXPECTED[method].keys()
    for key, expected in RANX_EXPECTED[method].items():
        assert got[key] == pytest.approx(expected, rel=1e-15, abs=0), key


@pytest.mark.parametrize("norm", list(NORM_EXPECTED))
def test_ranx_normalisation_test_values(norm: str) -> None:
    # one run fused by CombSUM is the run normalised
    fused = prm.fuse(_long({"r": NORM_RUN}), method="sum", norm=norm)  # type: ignore[arg-type]
    got = _scores(fused)
    for key, expected in NORM_EXPECTED[norm].items():
        assert got[key] == pytest.approx(expected, rel=1e-15, abs=1e-15), key


def test_bordafuse_with_a_user_that_no_run_lists() -> None:
    # ranx's test_bordafuse_no_result_query: q2 is empty in every run, q1 as before
    runs = {
        "a": {"q1": {"d1": 1, "d2": 2, "d3": 3}},
        "b": {"q1": {"d1": 3, "d2": 2}},
        "c": {"q1": {"d3": 1}},
    }
    got = _scores(prm.fuse(_long(runs), method="bordafuse"))
    assert got == {("q1", "d1"): 5.5, ("q1", "d2"): 5.5, ("q1", "d3"): 7.0}


# ---------------------------------------------------------------- ranx on generated runs


def _generated(seed: int, *, n_runs: int = 3, n_users: int = 25) -> dict[str, RunDict]:
    rng = np.random.default_rng(seed)
    pool = [f"d{i:02d}" for i in range(14)]
    runs: dict[str, RunDict] = {}
    for r in range(n_runs):
        run: RunDict = {}
        for u in range(n_users):
            size = int(rng.integers(1, 12))
            items = rng.choice(pool, size=size, replace=False)
            # coarse scores: many ties; some runs negative (max and zmuv see signs)
            values = rng.integers(-3 if r == 1 else 0, 6, size=size) / 2.0
            # the order ranx keeps for equal scores: item id descending, as fuse breaks ties
            run[f"q{u}"] = dict(
                sorted(zip(items.tolist(), values.tolist(), strict=True), reverse=True)
            )
        runs[f"run{r}"] = run
    return runs


def _ranx_fused(runs: dict[str, RunDict], method: str, norm: str | None) -> dict[Any, float]:
    from ranx import Run, fuse  # noqa: PLC0415 - test-only oracle

    ranx_runs = [Run(run, name=name) for name, run in runs.items()]
    fused = fuse(ranx_runs, norm=norm, method=method, params=_params(method, len(runs)))
    return {(q, d): value for q, docs in fused.to_dict().items() for d, value in docs.items()}


@pytest.mark.parametrize("norm", [*NORMS, None])
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("seed", [0, 1])
def test_equals_ranx_on_generated_runs(method: str, norm: str | None, seed: int) -> None:
    runs = _generated(seed)
    expected = _ranx_fused(runs, method, norm)
    params = _params(method, len(runs))
    if method == "wsum":
        params["weights"] = dict(zip(runs, params["weights"], strict=True))
    got = _scores(prm.fuse(_long(runs), method=method, norm=norm, **params))  # type: ignore[arg-type]
    assert got.keys() == expected.keys()
    if method in ("max", "min"):
        # ranx's CombMAX (CombMIN) reads a run that does not list an item as -1e9 (1e9), so an
        # item listed only with values beyond that (norm="max" of an all-negative list divides
        # by the floor 1e-9) gets the sentinel there; fuse takes the runs that list it
        sentinel = -1e9 if method == "max" else 1e9
        beyond = [key for key, value in expected.items() if value == sentinel]
        assert all(abs(got[key]) > 1e9 for key in beyond)
        expected = {key: value for key, value in expected.items() if key not in beyond}
    worst = max(abs(got[key] - value) / max(1.0, abs(value)) for key, value in expected.items())
    assert worst < 1e-12


def test_ranx_ties_follow_the_given_order_on_short_lists() -> None:
    # the premise of the comparison above: ranx keeps the given order of equal scores
    from ranx import Run  # noqa: PLC0415 - test-only oracle

    run = Run({"q": {"d9": 1.0, "d5": 1.0, "d7": 2.0, "d1": 1.0}})
    assert list(run.to_dict()["q"]) == ["d7", "d9", "d5", "d1"]


def _continuous(seed: int, *, n_runs: int, n_users: int) -> dict[str, RunDict]:
    """Runs of distinct positive scores: no fused ties, whose order ranx leaves to its sort."""
    rng = np.random.default_rng(seed)
    pool = [f"d{i:02d}" for i in range(14)]
    return {
        f"run{r}": {
            f"q{u}": {
                str(d): float(s)
                for d, s in zip(
                    rng.choice(pool, size=8, replace=False), rng.random(8) + 0.1, strict=True
                )
            }
            for u in range(n_users)
        }
        for r in range(n_runs)
    }


def test_optimize_fusion_equals_ranx_grid() -> None:
    from ranx import Qrels, Run, optimize_fusion  # noqa: PLC0415 - test-only oracle

    runs = _continuous(3, n_runs=2, n_users=40)
    rng = np.random.default_rng(7)
    truth = {
        q: {str(d): 1 for d in rng.choice([f"d{i:02d}" for i in range(14)], size=3, replace=False)}
        for q in runs["run0"]
    }
    _, report = optimize_fusion(
        Qrels(truth), [Run(r, name=n) for n, r in runs.items()], norm=None,
        method="wsum", metric="ndcg@5", return_optimization_report=True, show_progress=False,
    )  # fmt: skip
    truth_frame = pl.DataFrame(
        [(q, d) for q, docs in truth.items() for d in docs], schema=["user", "item"], orient="row"
    )
    found = prm.optimize_fusion(_long(runs), truth_frame, method="wsum", norm=None, metric="ndcg@5")
    # ranx's report names a point by the text of its tuple: "(np.float64(0.1), ...)" with
    # NumPy 2, "(0.1, 0.9)" with NumPy 1 (the oldest versions CI tests)
    number = r"-?\d+(?:\.\d+)?(?:e-?\d+)?"
    ranx_scores = {
        tuple(float(w) for w in re.findall(number, config.replace("float64", ""))): value
        for config, value in zip(report.configs, report.results, strict=True)
    }
    assert found.grid.height == 11
    compared = 0
    for weights, value in found.grid.select("weights", "ndcg@5").iter_rows():
        # a zero weight ties every item only the other run lists (all 0), in an order ranx
        # leaves to its sort; the other points have no ties
        if min(weights) > 0:
            assert value == pytest.approx(ranx_scores[tuple(weights)], abs=1e-12), weights
            compared += 1
    assert compared == 9


def test_optimize_fusion_rrf_equals_ranx_grid() -> None:
    from ranx import Qrels, Run, optimize_fusion  # noqa: PLC0415 - test-only oracle

    runs = _generated(4, n_runs=3, n_users=30)
    truth = {q: {sorted(docs)[0]: 1} for q, docs in runs["run1"].items()}
    # positions only (no fused ties matter for RR: equal RRF scores of different items
    # need equal position multisets, and ranx's order of those is its sort's)
    _, report = optimize_fusion(
        Qrels(truth), [Run(r, name=n) for n, r in runs.items()], norm=None,
        method="rrf", metric="mrr", return_optimization_report=True, show_progress=False,
    )  # fmt: skip
    truth_frame = pl.DataFrame(
        [(q, d) for q, docs in truth.items() for d in docs], schema=["user", "item"], orient="row"
    )
    found = prm.optimize_fusion(_long(runs), truth_frame, method="rrf", norm=None, metric="mrr")
    assert found.grid.get_column("k").to_list() == [float(k) for k in range(10, 101, 10)]
    np.testing.assert_allclose(found.grid.get_column("mrr").to_numpy(), report.results, atol=1e-12)


# ---------------------------------------------------------------- a slow textbook


def _textbook(
    runs: dict[str, RunDict], method: str, norm: str | None, *, k: float = 60.0,
    weights: dict[str, float] | None = None,
) -> dict[tuple[str, str], float]:  # fmt: skip
    """The fused scores from the formulas (docs/fusion.md), one user and one item at a time."""
    users = sorted({u for run in runs.values() for u in run})
    result = {}
    for user in users:
        lists = {name: run.get(user, {}) for name, run in runs.items()}
        ordered = {  # items by score descending, equal scores by id descending
            name: sorted(items, key=lambda d, items=items: (items[d], d), reverse=True)
            for name, items in lists.items()
        }
        values: dict[str, dict[str, float]] = {}
        for name, items in lists.items():
            scores = list(items.values())
            out = {}
            for d, s in items.items():
                if norm is None:
                    out[d] = s
                elif norm == "min-max":
                    out[d] = (s - min(scores)) / max(max(scores) - min(scores), 1e-9)
                elif norm == "max":
                    out[d] = s / max(*scores, 1e-9)
                elif norm == "sum":
                    out[d] = (s - min(scores)) / max(sum(t - min(scores) for t in scores), 1e-9)
                elif norm == "zmuv":
                    out[d] = (s - statistics.fmean(scores)) / max(statistics.pstdev(scores), 1e-9)
                else:
                    out[d] = 1 - ordered[name].index(d) / len(scores)
            values[name] = out
        candidates = sorted({d for items in lists.values() for d in items})
        for d in candidates:
            listing = [name for name in runs if d in lists[name]]
            got = [values[name][d] for name in listing]
            pos = [ordered[name].index(d) + 1 for name in listing]
            n = len(listing)
            if method == "sum":
                fused = sum(got)
            elif method == "wsum":
                assert weights is not None
                fused = sum(weights[name] * values[name][d] for name in listing)
            elif method == "mnz":
                fused = sum(got) * n
            elif method == "anz":
                fused = sum(got) / n
            elif method == "max":
                fused = max(got)
            elif method == "min":
                fused = min(got)
            elif method == "med":
                fused = statistics.median(got)
            elif method == "rrf":
                fused = sum(1 / (k + p) for p in pos)
            elif method == "isr":
                fused = n * sum(1 / p**2 for p in pos)
            elif method == "log_isr":
                fused = math.log(n) * sum(1 / p**2 for p in pos)
            else:
                c = len(candidates)
                fused = sum(
                    c - ordered[name].index(d)
                    if d in lists[name]
                    else (c - len(lists[name]) + 1) / 2
                    for name in runs
                )
            result[(user, d)] = fused
    return result


_SCORES = st.sampled_from([0.0, 0.5, 1.0, 1.5, 2.0, -1.0, 3.25])
_LIST = st.dictionaries(st.sampled_from(["a", "b", "c", "d", "e"]), _SCORES, max_size=5)
_RUN = st.dictionaries(st.sampled_from(["u1", "u2", "u3"]), _LIST, max_size=3)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    runs=st.lists(_RUN, min_size=1, max_size=3),
    method=st.sampled_from(METHODS),
    norm=st.sampled_from([*NORMS, None]),
    k=st.sampled_from([0.0, 1.0, 60.0]),
)
def test_equals_the_textbook(runs: list[RunDict], method: str, norm: str | None, k: float) -> None:
    named = {f"r{i}": {u: items for u, items in run.items() if items} for i, run in enumerate(runs)}
    frame = _long(named)
    if frame.height == 0 or frame.get_column("run").n_unique() < len(named):
        return  # a run without rows is no run of the long frame
    weights = {name: 0.5 + i for i, name in enumerate(named)}
    options: dict[str, Any] = {}
    if method == "wsum":
        options["weights"] = weights
    if method == "rrf":
        options["k"] = k
    fused = prm.fuse(frame, method=method, norm=norm, **options)  # type: ignore[arg-type]
    expected = _textbook(named, method, norm, k=k, weights=weights)
    got = _scores(fused)
    assert got.keys() == expected.keys()
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, rel=1e-12, abs=1e-12), key
    # rank: 1..n per user by score descending, equal scores by item descending
    for user, group in fused.group_by("user"):
        order = sorted(
            group.iter_rows(named=True), key=lambda r: (r["score"], r["item"]), reverse=True
        )
        assert [row["rank"] for row in order] == list(range(1, len(order) + 1)), user


# ---------------------------------------------------------------- the frame around it


def _two_runs() -> pl.DataFrame:
    return pl.DataFrame({
        "run": ["x"] * 4 + ["y"] * 3,
        "user": [1, 1, 2, 2, 1, 1, 2],
        "item": ["a", "b", "a", "c", "b", "c", "c"],
        "score": [0.9, 0.5, 0.4, 0.4, 2.0, 1.0, 3.0],
    })  # fmt: skip


def test_lazy_in_lazy_out_and_dict_input_agree() -> None:
    frame = _two_runs()
    eager = prm.fuse(frame, method="mnz")
    lazy = prm.fuse(frame.lazy(), method="mnz")
    assert isinstance(lazy, pl.LazyFrame)
    split = {name: part.drop("run") for (name,), part in frame.group_by("run", maintain_order=True)}
    as_dict = prm.fuse(split, method="mnz")
    lazy_dict = prm.fuse({n: f.lazy() for n, f in split.items()}, method="mnz")
    assert isinstance(lazy_dict, pl.LazyFrame)
    for other in (lazy.collect(), as_dict, lazy_dict.collect()):
        assert other.equals(eager)
    assert eager.columns == ["user", "item", "score", "rank"]
    assert eager.schema["rank"] == pl.UInt32


def test_the_output_evaluates_as_ranks_and_as_scores_alike() -> None:
    sample = prm.sample_data(n_users=60, seed=3)
    recs = sample.recs
    models = recs.get_column("model").unique().sort().to_list()[:2]
    runs = recs.filter(pl.col("model").is_in(models)).rename({"model": "run"})
    fused = prm.fuse(runs, method="sum", norm="zmuv")
    by_rank = prm.evaluate(fused, sample.truth, ["ndcg@10", "map@10"])
    by_score = prm.evaluate(fused.drop("rank"), sample.truth, ["ndcg@10", "map@10"], score="score")
    assert by_rank.equals(by_score)


def test_pandas_in_pandas_out() -> None:
    pd = pytest.importorskip("pandas")
    frame = _two_runs()
    got = prm.fuse(frame.to_pandas(), method="rrf")
    assert isinstance(got, pd.DataFrame)
    expected = prm.fuse(frame, method="rrf")
    assert list(got.columns) == expected.columns
    for column in expected.columns:
        assert got[column].tolist() == expected.get_column(column).to_list(), column


def test_roles_renamed_and_by_groups() -> None:
    frame = _two_runs().rename({"user": "q", "item": "doc", "score": "s", "run": "system"})
    folds = pl.concat([frame.with_columns(fold=pl.lit(f)) for f in (1, 2)])
    got = prm.fuse(folds, method="rrf", run="system", user="q", item="doc", score="s", by="fold")
    assert got.columns == ["fold", "q", "doc", "s", "rank"]
    one = prm.fuse(frame, method="rrf", run="system", user="q", item="doc", score="s")
    assert got.filter(pl.col("fold") == 2).drop("fold").equals(one)


def test_the_input_is_not_changed() -> None:
    frame = _two_runs()
    copy = frame.clone()
    prm.fuse(frame, method="wsum", weights={"x": 1.0, "y": 2.0})
    assert frame.equals(copy)


def test_weights_as_a_sequence_follow_the_dict_order() -> None:
    split = {n: f.drop("run") for (n,), f in _two_runs().group_by("run", maintain_order=True)}
    by_name = prm.fuse(split, method="wsum", weights={"x": 0.25, "y": 0.75})
    assert prm.fuse(split, method="wsum", weights=[0.25, 0.75]).equals(by_name)


@pytest.mark.parametrize(
    ("change", "options", "message"),
    [
        (pl.col("score"), {"method": "nope"}, "method must be one of"),
        (pl.col("score"), {"norm": "minmax"}, "did you mean 'min-max'"),
        (pl.col("score"), {"method": "wsum"}, "needs weights"),
        (pl.col("score"), {"method": "sum", "weights": {"x": 1}}, "read by method='wsum' only"),
        (pl.col("score"), {"method": "sum", "k": 3}, "read by method='rrf' only"),
        (pl.col("score"), {"method": "rrf", "k": -1}, "k must be >= 0"),
        (pl.col("score"), {"method": "wsum", "weights": [1, 2]}, "must be a mapping"),
        (pl.col("score"), {"score": "points"}, "missing column 'points' for score"),
    ],
)
def test_refusals_at_call_time(change: pl.Expr, options: dict[str, Any], message: str) -> None:
    frame = _two_runs().with_columns(change)
    with pytest.raises((ValueError, TypeError), match=message):
        prm.fuse(frame, **options)


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize(
    ("change", "message"),
    [
        (pl.when(pl.int_range(pl.len()) == 2).then(None).otherwise(pl.col("score")).alias("score"),
         r"column 'score' \(score\) has 1 null value"),
        (pl.when(pl.int_range(pl.len()) == 2).then(float("nan")).otherwise(pl.col("score")).alias("score"),
         "has 1 NaN or infinite value"),
        (pl.when(pl.int_range(pl.len()) == 1).then(pl.lit("a")).otherwise(pl.col("item")).alias("item"),
         r"2 rows with a duplicated \(run, user, item\).*run='x', user=1, item='a'"),
    ],
)  # fmt: skip
def test_data_refusals_name_a_row(change: pl.Expr, message: str, *, lazy: bool) -> None:
    frame = _two_runs().with_columns(change)

    def fused() -> pl.DataFrame:
        if lazy:  # refused when collected
            return prm.fuse(frame.lazy(), method="sum").collect()
        return prm.fuse(frame, method="sum")

    with pytest.raises(ValueError, match=message):
        fused()


def test_a_weight_missing_for_a_run_of_a_long_frame() -> None:
    with pytest.raises(ValueError, match="no weight to the run of 3 row"):
        prm.fuse(_two_runs().lazy(), method="wsum", weights={"x": 1.0}).collect()


def test_dict_runs_must_share_id_dtypes() -> None:
    split = {n: f.drop("run") for (n,), f in _two_runs().group_by("run", maintain_order=True)}
    split["y"] = split["y"].with_columns(pl.col("user").cast(pl.String))
    with pytest.raises(TypeError, match="column 'user' is String in run 'y' but Int64"):
        prm.fuse(split)


def test_optimize_fusion_is_one_evaluation_per_grid_point() -> None:
    sample = prm.sample_data(n_users=50, seed=1)
    models = sample.recs.get_column("model").unique().sort().to_list()[:2]
    runs = sample.recs.filter(pl.col("model").is_in(models)).rename({"model": "run"})
    found = prm.optimize_fusion(runs, sample.truth, metric="ndcg@10", step=0.25)
    assert found.grid.height == 5
    for weights, value in found.grid.select("weights", "ndcg@10").iter_rows():
        fused = prm.fuse(runs, method="wsum", weights=dict(zip(models, weights, strict=True)))
        expected = prm.evaluate(fused, sample.truth, "ndcg@10").item()
        assert value == pytest.approx(expected, abs=1e-12)
    assert found.best_score == found.grid.get_column("ndcg@10").max()
    assert found.runs == tuple(models)


# ---------------------------------------------------------------- trectools, where installed


def _trec_run(run: RunDict, name: str) -> Any:
    import pandas as pd  # noqa: PLC0415 - trectools reads pandas frames
    from trectools import TrecRun  # noqa: PLC0415 - test-only oracle

    rows = [
        (q, "Q0", d, rank, s, name)
        for q, items in run.items()
        # in fuse's order (score descending, equal scores by id descending): trectools' RRF
        # reads each list in its row order
        for rank, (d, s) in enumerate(
            sorted(items.items(), key=lambda pair: (pair[1], pair[0]), reverse=True), start=1
        )
    ]
    frame = pd.DataFrame(rows, columns=["query", "q0", "docid", "rank", "score", "system"])
    trec_run = TrecRun(None)
    trec_run.load_run_from_dataframe(frame)
    return trec_run


def _trectools_scores(fused: Any) -> dict[tuple[Any, Any], float]:
    data = fused.run_data
    return {
        (q, d): float(s)
        for q, d, s in zip(data["query"], data["docid"], data["score"], strict=True)
    }


@pytest.mark.parametrize("seed", [0, 1])
def test_rrf_equals_trectools(seed: int) -> None:
    fusion = pytest.importorskip("trectools.fusion")
    runs = _generated(seed)
    fused = fusion.reciprocal_rank_fusion([_trec_run(r, n) for n, r in runs.items()], k=60)
    expected = _trectools_scores(fused)
    got = _scores(prm.fuse(_long(runs), method="rrf"))
    assert got.keys() == expected.keys()
    assert max(abs(got[key] - value) for key, value in expected.items()) < 1e-15


@pytest.mark.filterwarnings("ignore:The inplace keyword")  # trectools' own pandas calls
@pytest.mark.parametrize("method", ["sum", "max", "min", "anz", "mnz", "med"])
def test_combos_equal_trectools(method: str) -> None:
    # trectools' combos read raw scores (norm=None) of two runs (it merges them pairwise)
    fusion = pytest.importorskip("trectools.fusion")
    runs = _generated(2, n_runs=2)
    fused = fusion.combos([_trec_run(r, n) for n, r in runs.items()], strategy=method)
    expected = _trectools_scores(fused)
    got = _scores(prm.fuse(_long(runs), method=method, norm=None))  # type: ignore[arg-type]
    assert got.keys() == expected.keys()
    assert max(abs(got[key] - value) for key, value in expected.items()) < 1e-12


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"method": "mnz"}, "method must be one of"),
        ({"metric": "ndcg@5,10"}, "one metric string"),
        ({"step": 0.3}, "step must divide 1"),
        # step 0 was a ZeroDivisionError, a negative step "grid is empty" without the step
        ({"step": 0}, r"step must be in \(0, 1\].*got 0"),
        ({"step": 0.0}, r"step must be in \(0, 1\].*got 0.0"),
        ({"step": -0.1}, r"step must be in \(0, 1\].*got -0.1"),
        ({"step": 2.0}, r"step must be in \(0, 1\]"),
        ({"grid": []}, "grid is empty"),
        ({"grid": [{"x": 1.0}]}, "no weight to run 'y'"),
        ({"method": "rrf", "grid": [10, -1]}, "k must be >= 0"),
        ({"norm": "z"}, "norm must be one of"),
    ],
)
def test_optimize_fusion_refusals(options: dict[str, Any], message: str) -> None:
    truth = pl.DataFrame({"user": [1, 2], "item": ["a", "c"]})
    with pytest.raises((ValueError, TypeError), match=message):
        prm.optimize_fusion(_two_runs(), truth, **options)


@pytest.mark.parametrize("method", ["wsum", "rrf"])
def test_optimize_fusion_without_relevant_items_says_so(method: str) -> None:
    """An empty truth: a clear ValueError (was float(None)'s TypeError)."""
    empty = pl.DataFrame({"user": [1], "item": ["a"]}).clear()
    with pytest.raises(ValueError, match=r"mrr is undefined \(null\) at every grid point"):
        prm.optimize_fusion(_two_runs(), empty, method=method, metric="mrr")


def test_optimize_fusion_keeps_the_first_of_equal_best_points() -> None:
    """Equal scores at every point (no truth user among the runs'): the first point, as documented.

    Polars' arg_max on a column it flags as sorted (a constant one) gives the last.
    """
    truth = pl.DataFrame({"user": [98, 99], "item": ["a", "c"]})
    found = prm.optimize_fusion(_two_runs(), truth, metric="mrr", step=0.5)
    assert found.grid.get_column("mrr").to_list() == [0.0, 0.0, 0.0]
    assert found.best == {"weights": {"x": 0.0, "y": 1.0}}
    assert found.grid.get_column("weights")[0].to_list() == [0.0, 1.0]


def test_the_default_grid_is_built_without_the_full_product() -> None:
    """Step 0.002 with 3 runs: 125751 points, not a filter of 501^3 = 1.3e8 products."""
    from polars_rankmetrics.analysis.fusion import _simplex  # noqa: PLC0415 - this test only

    assert _simplex(3, 0.5) == [
        (0.0, 0.0, 1.0), (0.0, 0.5, 0.5), (0.0, 1.0, 0.0), (0.5, 0.0, 0.5), (0.5, 0.5, 0.0),
        (1.0, 0.0, 0.0),
    ]  # fmt: skip
    assert len(_simplex(3, 0.002)) == math.comb(502, 2)


def test_optimize_fusion_takes_weights_grid_in_the_runs_order() -> None:
    truth = pl.DataFrame({"user": [1, 2], "item": ["b", "c"]})
    found = prm.optimize_fusion(
        _two_runs(), truth, metric="mrr", grid=[[1.0, 0.0], {"x": 0.0, "y": 1.0}]
    )
    assert found.runs == ("x", "y")
    assert found.grid.get_column("weights").to_list() == [[1.0, 0.0], [0.0, 1.0]]
    rrf = prm.optimize_fusion(_two_runs(), truth, method="rrf", metric="mrr", grid=[1, 2.5])
    assert rrf.grid.get_column("k").to_list() == [1.0, 2.5]
    assert rrf.best["k"] in (1, 2.5)


def test_each_method_is_one_record() -> None:
    """The methods fuse accepts are the records of the engine, in the Literal's order."""
    from typing import get_args  # noqa: PLC0415 - this test only

    from polars_rankmetrics.analysis import _fusion  # noqa: PLC0415 - this test only
    from polars_rankmetrics.conventions import FusionMethod  # noqa: PLC0415 - this test only

    assert tuple(_fusion.METHODS) == get_args(FusionMethod) == METHODS
    readers = {name: record.parameter for name, record in _fusion.METHODS.items()}
    assert readers["wsum"] == "weights"
    assert readers["rrf"] == "k"
    assert {parameter for parameter in readers.values() if parameter} == {"weights", "k"}
