"""users_needed against statsmodels' TTestPower().solve_power, rounded up."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.power import TTestPower

from polars_rankmetrics.analysis import planning, users_needed
from polars_rankmetrics.analysis.planning import _power


def _scores(n: int, seed: int, spread: float) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    base = rng.random(n)
    return pl.DataFrame(
        {
            "model": ["base"] * n + ["new"] * n + ["other"] * n,
            "user": list(range(n)) * 3,
            "m": [*base, *(base + rng.normal(0, spread, n)), *(base + rng.normal(0, 0.3, n))],
            "m2": rng.random(3 * n),
        }
    )


@settings(max_examples=25, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.sampled_from([0.005, 0.01, 0.05]),
    st.sampled_from([0.01, 0.05, 0.1]),
    st.sampled_from([0.8, 0.9]),
)
def test_users_needed_equals_statsmodels(
    seed: int, effect: float, alpha: float, power: float
) -> None:
    frame = _scores(30, seed, 0.1)
    result = users_needed(
        frame, ["m", "m2"], baseline="base", effect=effect, alpha=alpha, power=power
    )
    assert result.select("system", "metric").rows() == [
        ("new", "m"), ("new", "m2"), ("other", "m"), ("other", "m2"),
    ]  # fmt: skip
    for row in result.iter_rows(named=True):
        a = frame.filter(pl.col("model") == row["system"]).get_column(row["metric"]).to_numpy()
        b = frame.filter(pl.col("model") == "base").get_column(row["metric"]).to_numpy()
        sd = np.std(a - b, ddof=1)
        assert row["sd_diff"] == pytest.approx(sd, rel=1e-12)
        expected = TTestPower().solve_power(
            effect_size=effect / sd, nobs=None, alpha=alpha, power=power
        )
        assert row["users_needed"] == math.ceil(expected)
        n = row["users_needed"]
        # the smallest such n: n reaches the power, n - 1 does not
        assert _power(n, effect / sd, alpha) >= power
        assert n == 2 or _power(n - 1, effect / sd, alpha) < power


def test_power_equals_statsmodels() -> None:
    for n, es in ((5, 0.8), (40, 0.3), (200, 0.1)):
        assert _power(n, es, 0.05) == pytest.approx(
            TTestPower().power(effect_size=es, nobs=n, alpha=0.05), rel=1e-10
        )


def _counted_power(calls: list[int]) -> object:
    """_power, counting its calls and refusing more than 200 (the old loop made millions)."""

    def power(n: int, effect_size: float, alpha: float) -> float:
        calls.append(n)
        if len(calls) > 200:
            raise AssertionError("users_needed evaluated the power more than 200 times")
        return _power(n, effect_size, alpha)

    return power


def test_a_tiny_effect_is_solved_in_a_few_dozen_steps(monkeypatch: pytest.MonkeyPatch) -> None:
    """effect / s_d = 7e-7: n about 1.6e13 by bisection (one user at a time took minutes)."""
    frame = pl.DataFrame(
        {"model": ["a"] * 4 + ["b"] * 4, "user": [1, 2, 3, 4] * 2,
         "m": [0.3, 0.6, 0.1, 0.8, 0.2, 0.4, 0.1, 0.5]}
    )  # fmt: skip  # d = 0.1, 0.2, 0, 0.3: s_d = 0.129099
    sd = float(np.std([0.1, 0.2, 0.0, 0.3], ddof=1))
    effect = 7e-7 * sd
    calls: list[int] = []
    monkeypatch.setattr(planning, "_power", _counted_power(calls))
    n = users_needed(frame, "m", baseline="b", effect=effect).item(0, "users_needed")
    assert len(calls) <= 200
    expected = TTestPower().solve_power(effect_size=effect / sd, alpha=0.05, power=0.8)
    assert n == pytest.approx(expected, rel=1e-9)
    assert _power(n, effect / sd, 0.05) >= 0.8 > _power(n - 1, effect / sd, 0.05)


def test_a_large_effect_size_is_not_lost_to_a_nan_power() -> None:
    """Effect size 10: scipy's nct.cdf gave NaN for the lower tail at n = 3 (power 1 - 4e-7)."""
    assert _power(3, 10.0, 0.05) == pytest.approx(0.99999957716901, rel=1e-12)
    assert planning._smallest_n(10.0, 0.05, 0.8) == 3


def test_an_effect_too_small_for_any_study_is_refused() -> None:
    frame = pl.DataFrame(
        {"model": ["a", "a", "b", "b"], "user": [1, 2, 1, 2], "m": [0.3, 0.25, 0.1, 0.0]}
    )
    with pytest.raises(ValueError, match=r"effect=1e-12 is .* standard deviations.*'m'.*'a'"):
        users_needed(frame, "m", baseline="b", effect=1e-12)


def test_degenerate_and_bad_input() -> None:
    frame = pl.DataFrame(
        {"model": ["a", "a", "b", "b"], "user": [1, 2, 1, 2], "m": [0.3, 0.2, 0.1, 0.0]}
    )  # d = 0.2 for both users (on the grid): no sd, no effect size
    result = users_needed(frame, "m", baseline="b", effect=0.01)
    assert result.row(0) == ("a", "m", 2, None, None)
    with pytest.raises(ValueError, match="above 0"):
        users_needed(frame, "m", baseline="b", effect=0)
    with pytest.raises(ValueError, match="power must be between 0 and 1"):
        users_needed(frame, "m", baseline="b", effect=0.01, power=1.0)
    with pytest.raises(ValueError, match="baseline 'c' is not one of the systems"):
        users_needed(frame, "m", baseline="c", effect=0.01)
    lazy = users_needed(frame.lazy(), "m", baseline="b", effect=0.01)
    assert isinstance(lazy, pl.LazyFrame)
