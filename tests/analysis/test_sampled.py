"""Sampled metrics and their correction, against a textbook solve and a simulation.

The textbook builds the whole (N x (n + 1)) matrix of P(sampled rank r | full
rank R) from binomial coefficients (math.comb, not scipy's hypergeometric law)
and solves Krichene & Rendle's two problems on it directly: the bias-variance
normal equations and the bounded least squares (scipy's lsq_linear on the
full matrix). The simulation draws full ranks for two systems, samples their
candidates, and checks that the corrected means land near the full-ranking
means and keep the systems' order where the uncorrected ones reverse it.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import lsq_linear, minimize

import polars_rankmetrics as prm
from polars_rankmetrics.analysis.sampled import Correction


def _value(metric: str, k: int, rank: int) -> float:
    """One relevant item at rank ``rank``: the metric, by hand."""
    if rank > k:
        return 0.0
    return {
        "recall": 1.0,
        "hit_rate": 1.0,
        "precision": 1.0 / k,
        "ndcg": 1.0 / math.log2(rank + 1),
        "map": 1.0 / rank,
        "mrr": 1.0 / rank,
    }[metric]


def _textbook(
    metric: str, k: int, n_items: int, n_sampled: int, correction: str, gamma: float
) -> np.ndarray:
    full = range(1, n_items + 1)
    sampled = range(1, n_sampled + 2)
    total = math.comb(n_items - 1, n_sampled)
    a = np.array(
        [
            [
                math.comb(R - 1, r - 1) * math.comb(n_items - R, n_sampled - r + 1) / total
                for r in sampled
            ]
            for R in full
        ]
    )
    m = np.array([_value(metric, k, R) for R in full])
    w = math.sqrt(1.0 / n_items)
    if correction == "bv":
        lhs = (1 - gamma) * (a * w).T @ (a * w) + gamma * np.diag(a.sum(axis=0) / n_items)
        c = np.linalg.lstsq(lhs, (a * w).T @ (m * w), rcond=None)[0]
    else:
        c = lsq_linear(a * w, m * w, bounds=(m.min(), m.max()), method="bvls").x
    c = np.clip(c, m.min(), m.max())
    if n_items > k:
        c[k:] = 0.0
    return np.asarray(c, dtype=np.float64)


METRICS = ["recall", "hit_rate", "precision", "ndcg", "map", "mrr"]


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("correction", ["bv", "cls"])
def test_coefficients_equal_the_textbook_solve(metric: str, correction: Correction) -> None:
    for n_items, n_sampled, k, gamma in ((300, 20, 5, 0.01), (120, 9, 3, 0.3), (50, 49, 4, 0.0)):
        got = prm.correction_coefficients(
            f"{metric}@{k}",
            n_items=n_items,
            n_sampled=n_sampled,
            correction=correction,
            gamma=gamma,
        )
        want = _textbook(metric, k, n_items, n_sampled, correction, gamma)
        np.testing.assert_allclose(got, want, atol=1e-6)


@settings(max_examples=40, deadline=None)
@given(
    metric=st.sampled_from(METRICS),
    k=st.integers(1, 6),
    n_items=st.integers(3, 70),
    share=st.floats(0.05, 1.0),
    gamma=st.floats(0.0, 1.0),
)
def test_bias_variance_coefficients_under_hypothesis(
    metric: str, k: int, n_items: int, share: float, gamma: float
) -> None:
    n_sampled = max(1, min(n_items - 1, round(share * (n_items - 1))))
    got = prm.correction_coefficients(
        f"{metric}@{k}", n_items=n_items, n_sampled=n_sampled, correction="bv", gamma=gamma
    )
    want = _textbook(metric, k, n_items, n_sampled, "bv", gamma)
    np.testing.assert_allclose(got, want, atol=1e-7)


# Krichene & Rendle's BV objective (KDD 2020, "trading off bias and variance"), as the
# docs and the module docstring state it: squared bias plus gamma times the variance
BV_OBJECTIVE = "sum_R p(R) [(E[c_r | R] - M(R))^2 + gamma Var(c_r | R)]"


def _law(n_items: int, n_sampled: int) -> np.ndarray:
    """P(sampled rank r | full rank R), rows R = 1..N, columns r = 1..n + 1 (math.comb)."""
    total = math.comb(n_items - 1, n_sampled)
    return np.array(
        [
            [
                math.comb(R - 1, r - 1) * math.comb(n_items - R, n_sampled - r + 1) / total
                for r in range(1, n_sampled + 2)
            ]
            for R in range(1, n_items + 1)
        ]
    )


def _minimise(law: np.ndarray, m: np.ndarray, gamma: float, *, old_docs: bool) -> np.ndarray:
    """Argmin over c of the BV objective (or of the docs' former one), numerically (BFGS).

    Stated: sum_R p(R) [(E[c_r|R] - M(R))^2 + gamma Var(c_r|R)], Var = E[c^2] - E[c]^2.
    Former docs: sum_R p(R) [(1 - gamma) (E[c_r|R] - M(R))^2 + gamma E[c_r^2|R]].
    """
    p = 1.0 / law.shape[0]

    def objective(c: np.ndarray) -> tuple[float, np.ndarray]:
        mean, square = law @ c, law @ (c * c)
        bias = mean - m
        if old_docs:
            value = p * np.sum((1 - gamma) * bias**2 + gamma * square)
            grad = p * (2 * (1 - gamma) * law.T @ bias + 2 * gamma * c * law.sum(axis=0))
        else:
            value = p * np.sum(bias**2 + gamma * (square - mean**2))
            grad = p * (2 * law.T @ bias + 2 * gamma * (c * law.sum(axis=0) - law.T @ mean))
        return float(value), grad

    start = np.zeros(law.shape[1])
    found = minimize(objective, start, jac=True, method="BFGS", options={"gtol": 1e-13})
    return np.asarray(found.x)


@pytest.mark.parametrize("metric", ["recall", "ndcg", "map"])
@pytest.mark.parametrize("gamma", [0.01, 0.3, 0.5, 0.9])
def test_bias_variance_coefficients_minimise_the_stated_objective(
    metric: str, gamma: float
) -> None:
    """The "bv" coefficients are the minimiser of BV_OBJECTIVE, found by scipy.optimize.

    The docs once stated (1 - gamma) (bias)^2 + gamma E[c^2], whose minimiser is
    (1 - gamma) times this one (a 2x gap at gamma = 0.5): the code solved the
    paper's normal equations ((1 - gamma) A'A + gamma diag(w)) c = A'M all
    along, and the docs now state the paper's objective.
    """
    n_items, n_sampled, k = 40, 5, 6  # every sampled rank within the cutoff: no override
    law = _law(n_items, n_sampled)
    m = np.array([_value(metric, k, R) for R in range(1, n_items + 1)])
    found = _minimise(law, m, gamma, old_docs=False)
    got = prm.correction_coefficients(
        f"{metric}@{k}", n_items=n_items, n_sampled=n_sampled, correction="bv", gamma=gamma
    )
    # the coefficients are clipped to the range of M after the solve (documented)
    np.testing.assert_allclose(got, np.clip(found, m.min(), m.max()), atol=1e-7)
    former = _minimise(law, m, gamma, old_docs=True)
    np.testing.assert_allclose(former, (1 - gamma) * found, atol=1e-7)
    assert not np.allclose(np.clip(former, m.min(), m.max()), got, atol=1e-4)


def test_docs_state_the_objective_the_code_minimises() -> None:
    """The module docstring and the docs page state BV_OBJECTIVE, not the former one."""
    from pathlib import Path  # noqa: PLC0415 - this test only

    import polars_rankmetrics.analysis.sampled as sampled  # noqa: PLC0415 - this test only

    page = Path(__file__).parents[2] / "docs" / "sampled-metrics.md"
    for text in (sampled.__doc__ or "", page.read_text(encoding="utf-8")):
        flat = " ".join(text.replace(" given ", " | ").split())
        assert BV_OBJECTIVE in flat
        assert "(1 - gamma) (E[c_r | R] - M(R))^2" not in flat


@pytest.mark.parametrize("metric", METRICS)
@pytest.mark.parametrize("correction", ["bv", "cls"])
def test_with_the_whole_catalog_as_candidates_the_correction_is_the_metric(
    metric: str, correction: Correction
) -> None:
    # n = N - 1: the sampled rank is the full rank, P(r | R) the identity
    got = prm.correction_coefficients(
        f"{metric}@4", n_items=12, n_sampled=11, correction=correction
    )
    np.testing.assert_allclose(got, [_value(metric, 4, r) for r in range(1, 13)], atol=1e-9)


def _candidates(
    full_ranks: np.ndarray, *, n_items: int, n_sampled: int, seed: int, model: str
) -> pl.DataFrame:
    """Each user's relevant item ranked among n sampled items: long rows (model, user, item, rank)."""
    rng = np.random.default_rng(seed)
    sampled_rank = 1 + rng.hypergeometric(full_ranks - 1, n_items - full_ranks, n_sampled)
    users = np.repeat(np.arange(full_ranks.size), n_sampled + 1)
    rank = np.tile(np.arange(1, n_sampled + 2), full_ranks.size)
    relevant_here = rank == np.repeat(sampled_rank, n_sampled + 1)
    item = np.where(relevant_here, -1, rank)  # item -1 is the held-out one
    return pl.DataFrame({"model": model, "user": users, "item": item, "rank": rank})


def _full_mean(full_ranks: np.ndarray, metric: str, k: int) -> float:
    return float(np.mean([_value(metric, k, int(r)) for r in full_ranks]))


def test_corrected_estimates_land_near_the_full_metric_and_keep_the_order() -> None:
    n_items, n_sampled, users = 2000, 99, 6000
    rng = np.random.default_rng(7)
    # A: 30% of users find their item in the top 10, the others nowhere in particular;
    # B: everyone between 1 and 200 (a better AUC, a worse top of the list)
    a = np.where(
        rng.random(users) < 0.3, rng.integers(1, 11, users), rng.integers(1, n_items + 1, users)
    )
    b = rng.integers(1, 201, users)
    recs = pl.concat(
        [
            _candidates(a, n_items=n_items, n_sampled=n_sampled, seed=1, model="A"),
            _candidates(b, n_items=n_items, n_sampled=n_sampled, seed=2, model="B"),
        ]
    )
    truth = pl.DataFrame({"user": np.arange(users), "item": -1})
    metrics = ["recall@10", "ndcg@10"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", prm.SampledMetricsWarning)
        naive = prm.sampled_metrics(
            recs, truth, metrics, n_items=n_items, correction=None, by="model"
        )
    bv = prm.sampled_metrics(recs, truth, metrics, n_items=n_items, by="model")
    cls = prm.sampled_metrics(recs, truth, metrics, n_items=n_items, correction="cls", by="model")
    for label, metric in (("recall@10", "recall"), ("ndcg@10", "ndcg")):
        full = {"A": _full_mean(a, metric, 10), "B": _full_mean(b, metric, 10)}
        assert full["A"] > full["B"]
        row = {m: i for i, m in enumerate(naive.get_column("model"))}
        sampled = {m: naive.get_column(label)[i] for m, i in row.items()}
        assert sampled["B"] > sampled["A"], "the case must reverse the order when uncorrected"
        # stated tolerances: BV (the default) within 0.1 of the full mean, CLS (bias only,
        # constrained, it shrinks harder) within 0.15; uncorrected B is off by more than 0.3
        for corrected, tolerance in ((bv, 0.1), (cls, 0.15)):
            est = dict(zip(corrected.get_column("model"), corrected.get_column(label), strict=True))
            assert est["A"] > est["B"], f"{label}: the corrected estimate keeps the full order"
            for model in ("A", "B"):
                assert abs(est[model] - full[model]) < tolerance
        assert abs(sampled["B"] - full["B"]) > 0.3  # where the uncorrected one is far off


def test_uncorrected_values_are_evaluate_on_the_sampled_lists_with_a_warning() -> None:
    recs = _candidates(np.array([1, 5, 30, 2]), n_items=40, n_sampled=9, seed=3, model="m")
    truth = pl.DataFrame({"user": [0, 1, 2, 3], "item": -1})
    with pytest.warns(prm.SampledMetricsWarning, match="correction"):
        got = prm.sampled_metrics(
            recs, truth, ["ndcg@3", "map@3"], n_items=40, correction=None, per_user=True
        )
    want = prm.evaluate(recs, truth, ["ndcg@3", "map@3"], per_user=True)
    assert got.select("user", "ndcg@3", "map@3").equals(want.sort("user"))


def test_per_user_values_feed_compare_and_average_to_the_estimate() -> None:
    rng = np.random.default_rng(11)
    recs = pl.concat(
        _candidates(rng.integers(1, 60, 300), n_items=500, n_sampled=49, seed=s, model=m)
        for s, m in ((4, "x"), (5, "y"))
    )
    truth = pl.DataFrame({"user": np.arange(300), "item": -1})
    per = prm.sampled_metrics(recs, truth, "ndcg@10", n_items=500, by="model", per_user=True)
    means = prm.sampled_metrics(recs, truth, "ndcg@10", n_items=500, by="model")
    assert per.columns == ["model", "user", "ndcg@10"]
    assert means.get_column("n_users").to_list() == [300, 300]
    compared = prm.compare_per_user(per, "ndcg@10", system="model", baseline="x")
    row = compared.filter(pl.col("system") == "y").row(0, named=True)
    assert row["n_paired"] == 300
    assert row["diff_ci_low"] < row["diff"] < row["diff_ci_high"]
    np.testing.assert_allclose(
        row["mean"], means.filter(pl.col("model") == "y")["ndcg@10"][0], atol=1e-12
    )


def test_lists_of_different_lengths_get_their_own_coefficients() -> None:
    short = _candidates(np.array([3]), n_items=50, n_sampled=4, seed=6, model="m")
    long = _candidates(np.array([3]), n_items=50, n_sampled=19, seed=6, model="m").with_columns(
        user=pl.lit(1, dtype=pl.Int64)
    )
    recs = pl.concat([short, long])
    truth = pl.DataFrame({"user": [0, 1], "item": -1})
    per = prm.sampled_metrics(recs, truth, "recall@5", n_items=50, per_user=True)
    r = prm.evaluate(recs, truth, "mean_rank", per_user=True).sort("user").get_column("mean_rank")
    for user, n_sampled in ((0, 4), (1, 19)):
        c = prm.correction_coefficients("recall@5", n_items=50, n_sampled=n_sampled)
        assert per.get_column("recall@5")[user] == c[int(r[user]) - 1]


def test_frame_kinds_come_back_as_given() -> None:
    pd = pytest.importorskip("pandas")
    recs = _candidates(np.array([1, 4, 9]), n_items=30, n_sampled=9, seed=8, model="m")
    truth = pl.DataFrame({"user": [0, 1, 2], "item": -1})
    eager = prm.sampled_metrics(recs, truth, "recall@3", n_items=30)
    lazy = prm.sampled_metrics(recs.lazy(), truth.lazy(), "recall@3", n_items=30)
    assert isinstance(lazy, pl.LazyFrame)
    assert lazy.collect().equals(eager)
    pandas = prm.sampled_metrics(recs.to_pandas(), truth.to_pandas(), "recall@3", n_items=30)
    assert isinstance(pandas, pd.DataFrame)
    assert pandas["recall@3"].iloc[0] == eager["recall@3"][0]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"truth": pl.DataFrame({"user": [0, 0, 1], "item": [-1, 2, -1]})},
            "more than one relevant",
        ),
        ({"truth": pl.DataFrame({"user": [0, 1], "item": [-1, 999]})}, "no list holding"),
        ({"n_items": 5}, "more candidates than n_items=5"),
        ({"metrics": "recall"}, "needs a cutoff"),
        ({"metrics": "coverage@10"}, "cannot correct 'coverage@10'"),
        ({"metrics": "pooled_recall@10"}, "cannot correct"),
        ({"metrics": "recal@10"}, "recall"),
        ({"correction": "ips"}, "correction must be"),
        ({"gamma": 1.5}, "gamma must be"),
        ({"n_items": 30.0}, "n_items must be an integer"),
        ({"n_items": True}, "n_items must be an integer"),
    ],
)
def test_bad_input_is_refused_with_one_clear_error(change: dict[str, object], message: str) -> None:
    recs = _candidates(np.array([1, 4]), n_items=30, n_sampled=9, seed=9, model="m")
    call: dict[str, object] = {
        "truth": pl.DataFrame({"user": [0, 1], "item": -1}),
        "metrics": "recall@3",
        "n_items": 30,
        **change,
    }
    with pytest.raises(ValueError, match=message):
        prm.sampled_metrics(recs, call.pop("truth"), call.pop("metrics"), **call)  # type: ignore[arg-type]


def _sampled_lists(users: int = 30, n_sampled: int = 49) -> tuple[pl.DataFrame, pl.DataFrame]:
    ranks = np.random.default_rng(12).integers(1, 200, users)
    recs = _candidates(ranks, n_items=500, n_sampled=n_sampled, seed=13, model="m").drop("model")
    return recs, pl.DataFrame({"user": np.arange(users), "item": -1})


def test_evaluate_warns_when_the_lists_look_sampled() -> None:
    recs, truth = _sampled_lists()
    with pytest.warns(prm.SampledMetricsWarning, match="look like sampled evaluation"):
        prm.evaluate(recs, truth, "recall@10")
    # sampled_metrics evaluates the same lists without passing the warning on
    with warnings.catch_warnings():
        warnings.simplefilter("error", prm.SampledMetricsWarning)
        prm.sampled_metrics(recs, truth, "recall@10", n_items=500)


@pytest.mark.parametrize(
    "change",
    ["a missed item", "two relevant", "few users", "lazy", "short lists", "unequal lengths"],
)
def test_evaluate_does_not_warn_on_lists_that_are_not_sampled(change: str) -> None:
    recs, truth = _sampled_lists(users=10 if change == "few users" else 30)
    if change == "a missed item":  # a top-k list misses some users' relevant item
        truth = truth.with_columns(item=pl.when(pl.col("user") == 3).then(999).otherwise(-1))
    if change == "two relevant":
        truth = pl.concat([truth, pl.DataFrame({"user": [5], "item": [1]}, schema=truth.schema)])
    if change == "short lists":  # top-10 lists holding each user's one item: not a sample
        recs = _sampled_lists(n_sampled=9)[0]
    if change == "unequal lengths":
        recs = recs.filter(
            ~((pl.col("user") == 2) & (pl.col("rank") == 50) & (pl.col("item") != -1))
        )
    with warnings.catch_warnings():
        warnings.simplefilter("error", prm.SampledMetricsWarning)
        if change == "lazy":  # a lazy query is not run early to look
            prm.evaluate(recs.lazy(), truth.lazy(), "recall@10").collect()
        else:
            prm.evaluate(recs, truth, "recall@10")
