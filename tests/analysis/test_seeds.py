"""seeds_interval: the two-way (runs, then users) bootstrap, against its limiting cases.

With one run it must be the percentile bootstrap over users; with values that
do not vary over users, the percentile bootstrap over the runs' means (scipy's
``bootstrap(method="percentile")`` is the oracle of both, up to Monte Carlo
error). With both sources it must be wider than either alone, and its
coverage of the mean of the generating model is checked by simulation.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from scipy import stats

import polars_rankmetrics as prm


def _frame(values: np.ndarray, system: str = "a") -> pl.DataFrame:
    runs, users = values.shape
    return pl.DataFrame(
        {
            "model": system,
            "seed": np.repeat(np.arange(runs), users),
            "user": np.tile(np.arange(users), runs),
            "m": values.ravel(),
        }
    )


def _scipy_percentile(x: np.ndarray) -> tuple[float, float]:
    result = stats.bootstrap((x,), np.mean, method="percentile", n_resamples=20_000, random_state=1)
    return result.confidence_interval.low, result.confidence_interval.high


def test_one_run_is_the_bootstrap_over_users() -> None:
    x = np.random.default_rng(0).beta(2, 5, size=(1, 400))
    got = prm.seeds_interval(_frame(x), "m", n_resamples=20_000).row(0, named=True)
    low, high = _scipy_percentile(x[0])
    width = high - low
    assert got["n_runs"] == 1
    assert got["run_sd"] is None
    assert got["mean"] == pytest.approx(x.mean(), abs=1e-15)
    assert abs(got["ci_low"] - low) < 0.03 * width
    assert abs(got["ci_high"] - high) < 0.03 * width


def test_values_constant_over_users_give_the_bootstrap_over_runs() -> None:
    means = np.array([0.30, 0.34, 0.29, 0.41, 0.36, 0.33, 0.38, 0.31])
    x = np.repeat(means[:, None], 50, axis=1)
    got = prm.seeds_interval(_frame(x), "m", n_resamples=20_000).row(0, named=True)
    low, high = _scipy_percentile(means)
    width = high - low
    assert got["run_sd"] == pytest.approx(means.std(ddof=1))
    assert abs(got["ci_low"] - low) < 0.03 * width
    assert abs(got["ci_high"] - high) < 0.03 * width


def test_both_sources_widen_the_interval() -> None:
    rng = np.random.default_rng(2)
    run_effect = rng.normal(0, 0.03, size=(6, 1))
    user_effect = rng.normal(0, 0.1, size=(1, 300))
    x = 0.4 + run_effect + user_effect + rng.normal(0, 0.05, size=(6, 300))
    both = prm.seeds_interval(_frame(x), "m").row(0, named=True)
    users_only = prm.seeds_interval(_frame(x.mean(axis=0, keepdims=True)), "m").row(0, named=True)
    runs_only = prm.seeds_interval(
        _frame(np.repeat(x.mean(axis=1, keepdims=True), 300, axis=1)), "m"
    ).row(0, named=True)
    width = both["ci_high"] - both["ci_low"]
    assert width > users_only["ci_high"] - users_only["ci_low"]
    assert width > runs_only["ci_high"] - runs_only["ci_low"]


def test_coverage_of_the_generating_mean() -> None:
    # x[s, u] = mu + run effect + user effect + noise: the interval should cover mu about
    # as often as its level says (the bootstrap with 10 runs undercovers a little)
    rng = np.random.default_rng(3)
    covered = 0
    trials = 150
    for _ in range(trials):
        x = (
            0.5
            + rng.normal(0, 0.02, size=(10, 1))
            + rng.normal(0, 0.08, size=(1, 200))
            + rng.normal(0, 0.05, size=(10, 200))
        )
        row = prm.seeds_interval(_frame(x), "m", n_resamples=1000, seed=None).row(0, named=True)
        covered += row["ci_low"] <= 0.5 <= row["ci_high"]
    assert 0.85 <= covered / trials <= 0.99


def test_systems_metrics_and_frame_kinds() -> None:
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(4)
    frame = pl.concat([_frame(rng.random((3, 20)), "a"), _frame(rng.random((3, 20)) + 1, "b")])
    frame = frame.with_columns(other=pl.col("m") * 2)
    eager = prm.seeds_interval(frame, ["m", "other"], n_resamples=500)
    assert eager.select("system", "metric").rows() == [
        ("a", "m"), ("a", "other"), ("b", "m"), ("b", "other")
    ]  # fmt: skip
    lazy = prm.seeds_interval(frame.lazy(), ["m", "other"], n_resamples=500)
    assert isinstance(lazy, pl.LazyFrame)
    assert lazy.collect().equals(eager)
    pandas = prm.seeds_interval(frame.to_pandas(), ["m", "other"], n_resamples=500)
    assert isinstance(pandas, pd.DataFrame)
    assert pandas["ci_low"].tolist() == eager["ci_low"].to_list()


def test_a_user_missing_from_one_run_is_left_out_and_counted() -> None:
    frame = _frame(np.arange(12, dtype=float).reshape(3, 4) / 12)
    frame = frame.filter(~((pl.col("seed") == 1) & (pl.col("user") == 2)))
    row = prm.seeds_interval(frame, "m", n_resamples=200).row(0, named=True)
    assert (row["n_users"], row["users_left_out"]) == (3, 1)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"run": "fold"}, "no run column 'fold'"),
        ({"ci": 1.0}, "ci must be"),
        ({"n_resamples": 0}, "n_resamples must be"),
        ({"metrics": []}, "metrics is empty"),
        ({"metrics": "nope"}, "no metric column 'nope'"),
    ],
)
def test_bad_input_is_refused(kwargs: dict[str, object], message: str) -> None:
    call: dict[str, object] = {"metrics": "m", **kwargs}
    with pytest.raises(ValueError, match=message):
        prm.seeds_interval(_frame(np.ones((2, 3))), **call)  # type: ignore[arg-type]
