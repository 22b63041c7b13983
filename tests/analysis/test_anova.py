"""Two-way ANOVA without replication against statsmodels' ``anova_lm`` on an OLS fit."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polars_rankmetrics.analysis.variance_analysis import anova

pd = pytest.importorskip("pandas")
smf = pytest.importorskip("statsmodels.formula.api")
from statsmodels.stats.anova import anova_lm  # noqa: E402 - after the import check


def _scores(table: np.ndarray) -> pl.DataFrame:
    n, k = table.shape
    return pl.DataFrame(
        {
            "model": [f"s{j}" for j in range(k) for _ in range(n)],
            "user": list(range(n)) * k,
            "value": table.T.ravel(),
        }
    )


def _oracle(frame: pl.DataFrame) -> pd.DataFrame:
    fit = smf.ols("value ~ C(model) + C(user)", data=frame.to_pandas()).fit()
    return anova_lm(fit)


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 12), st.integers(2, 6), st.integers(0, 2**32 - 1))
def test_anova_equals_statsmodels(n: int, k: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    table = rng.random((n, k)) + rng.normal(0, 0.2, k)
    frame = _scores(table)
    result = anova(frame, "value")
    oracle = _oracle(frame)
    assert result.get_column("source").to_list() == ["system", "user", "residual"]
    assert result.get_column("df").to_list() == oracle["df"].astype(int).tolist()
    for ours, theirs in (("sum_sq", "sum_sq"), ("mean_sq", "mean_sq")):
        assert result.get_column(ours).to_list() == pytest.approx(
            oracle[theirs].tolist(), rel=1e-9, abs=1e-15
        )
    assert result.get_column("F").to_list()[:2] == pytest.approx(oracle["F"].tolist()[:2], rel=1e-8)
    assert result.get_column("p_value").to_list()[:2] == pytest.approx(
        oracle["PR(>F)"].tolist()[:2], rel=1e-8, abs=1e-300
    )
    assert result.item(2, "F") is None
    assert result.item(2, "p_value") is None
    ss = oracle["sum_sq"].to_numpy()
    ms_residual = oracle["mean_sq"].iloc[2]
    omega = (ss[0] - (k - 1) * ms_residual) / (ss.sum() + ms_residual)
    assert result.item(0, "omega_sq") == pytest.approx(omega, rel=1e-9, abs=1e-15)
    assert result.get_column("omega_sq").to_list()[1:] == [None, None]


def test_incomplete_users_are_left_out() -> None:
    rng = np.random.default_rng(1)
    table = rng.random((6, 3))
    frame = _scores(table)
    extra = pl.DataFrame({"model": ["s0", "s1"], "user": [99, 99], "value": [0.1, 0.9]})
    with_null = frame.with_columns(
        pl.when((pl.col("user") == 5) & (pl.col("model") == "s2"))
        .then(None)
        .otherwise(pl.col("value"))
        .alias("value")
    )
    expected = anova(frame.filter(pl.col("user") != 5), "value")
    assert anova(pl.concat([with_null, extra]), "value").equals(expected)


def test_backends_and_additive_scores() -> None:
    table = np.array([[0.1, 0.2, 0.4], [0.3, 0.4, 0.6], [0.0, 0.1, 0.3]])
    frame = _scores(table)  # exactly additive on paper: no residual
    result = anova(frame, "value")
    assert result.item(2, "sum_sq") == 0.0
    assert result.item(0, "F") is None
    assert result.item(0, "p_value") is None
    lazy = anova(frame.lazy(), "value")
    assert isinstance(lazy, pl.LazyFrame)
    assert lazy.collect().equals(result)
    pandas = anova(frame.to_pandas(), "value")
    assert isinstance(pandas, pd.DataFrame)
    assert pandas["sum_sq"].tolist() == result.get_column("sum_sq").to_list()


@pytest.mark.parametrize("value", [0.0, 0.5, 0.1, 1 / 3])
def test_every_value_equal_has_no_effect_and_no_omega(value: float) -> None:
    """Every value equal: sums of squares 0, F, p and omega^2 null.

    0.5 raised ZeroDivisionError (the guard ran after the division); 0.1 gave
    sums of squares of 1e-33 from rounding and omega^2 = 0.5.
    """
    result = anova(_scores(np.full((3, 3), value)), "value")
    assert result.get_column("sum_sq").to_list() == [0.0, 0.0, 0.0]
    for column in ("F", "p_value", "omega_sq"):
        assert result.get_column(column).to_list() == [None, None, None], column


def test_equal_system_means_give_omega_zero() -> None:
    """Systems alike for every user, users differing: SS_system 0, omega^2 0 (defined)."""
    table = np.array([[0.1, 0.1], [0.2, 0.2], [0.3, 0.3]])
    result = anova(_scores(table), "value")
    assert result.item(0, "sum_sq") == 0.0
    assert result.item(0, "omega_sq") == 0.0
    assert result.item(1, "sum_sq") == pytest.approx(0.04, abs=1e-15)


def test_bad_input_is_refused() -> None:
    frame = _scores(np.random.default_rng(0).random((3, 2)))
    with pytest.raises(ValueError, match="no metric column 'ndcg'"):
        anova(frame, "ndcg")
    with pytest.raises(ValueError, match="at least 2 systems and 2 users"):
        anova(frame.filter(pl.col("model") == "s0"), "value")
    with pytest.raises(ValueError, match=r"repeating a \(user, system\) pair"):
        anova(pl.concat([frame, frame.head(1)]), "value")
    with pytest.raises(ValueError, match="NaN or infinite"):
        anova(frame.with_columns(pl.lit(float("nan")).alias("value")), "value")
    with pytest.raises(TypeError, match="must be a Polars DataFrame or LazyFrame, a pandas"):
        anova({"value": [1]}, "value")
