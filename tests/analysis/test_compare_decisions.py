"""compare's decisions: superiority, non-inferiority, equivalence, several baselines.

Oracles: scipy ``ttest_rel``/``ttest_1samp`` with ``alternative=``, statsmodels
``ttost_paired`` (TOST) and ``multipletests`` (one family for several baselines).
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.multitest import multipletests
from statsmodels.stats.weightstats import ttost_paired

import polars_rankmetrics as prm


def _pair(a: np.ndarray, b: np.ndarray) -> pl.DataFrame:
    n = a.size
    return pl.DataFrame(
        {"model": ["new"] * n + ["old"] * n, "user": [*range(n), *range(n)], "m": [*a, *b]}
    )


@st.composite
def pairs(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, float]:
    n = draw(st.integers(3, 30))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    b = rng.random(n)
    a = np.clip(b + rng.normal(draw(st.floats(-0.1, 0.1)), 0.1, n), 0, 1)
    margin = draw(st.sampled_from([0.001, 0.01, 0.05]))
    return a, b, margin


@settings(max_examples=30, deadline=None)
@given(pairs())
def test_one_sided_p_values_equal_scipy_and_statsmodels(case: tuple) -> None:
    a, b, margin = case
    frame = _pair(a, b)
    d = a - b
    superiority = prm.compare_per_user(
        frame, baseline="old", direction="higher", hypothesis="superiority"
    )
    assert superiority.item(1, "p_value") == pytest.approx(
        stats.ttest_rel(a, b, alternative="greater").pvalue, rel=1e-9
    )
    noninferiority = prm.compare_per_user(
        frame, baseline="old", direction="higher", hypothesis="noninferiority", margin=margin
    )
    assert noninferiority.item(1, "p_value") == pytest.approx(
        stats.ttest_1samp(d, -margin, alternative="greater").pvalue, rel=1e-9
    )
    # the one-sided p of t = (mean(d) + m) / (s_d / sqrt n), by hand
    t = (d.mean() + margin) / (d.std(ddof=1) / np.sqrt(d.size))
    assert noninferiority.item(1, "p_value") == pytest.approx(stats.t.sf(t, d.size - 1), rel=1e-9)
    equivalence = prm.compare_per_user(
        frame, baseline="old", direction="higher", hypothesis="equivalence", margin=margin
    )
    assert equivalence.item(1, "p_value") == pytest.approx(
        ttost_paired(a, b, -margin, margin)[0], rel=1e-9
    )
    default = prm.compare_per_user(frame, baseline="old", direction="higher")
    assert default.item(1, "p_value") == pytest.approx(stats.ttest_rel(a, b).pvalue, rel=1e-9)


def test_decisions_by_hand() -> None:
    # d = (0.01, -0.01, 0.02, 0.0): mean 0.005, sd 0.012910, se 0.006455
    a = np.array([0.51, 0.49, 0.52, 0.5])
    b = np.array([0.5, 0.5, 0.5, 0.5])
    result = prm.compare_per_user(
        _pair(a, b), baseline="old", direction="higher", hypothesis="noninferiority", margin=0.01
    )
    row = result.row(1, named=True)
    # t = (0.005 + 0.01) / 0.006455 = 2.32379 on 3 df: p = 0.051364
    assert row["p_value"] == pytest.approx(0.0513636, abs=1e-6)
    assert row["significant"] is False
    assert (row["wins"], row["ties"], row["losses"]) == (2, 1, 1)


def test_zero_variance_decisions() -> None:
    a = np.array([0.3, 0.2, 0.3])
    b = np.array([0.1, 0.0, 0.1])  # d = 0.2 for every user (on the grid)
    frame = _pair(a, b)
    cases = [
        ("superiority", None, 0.0),
        ("noninferiority", 0.2, 0.0),
        ("equivalence", 0.2, 1.0),  # d = +m: on the boundary, not equivalent
        ("equivalence", 0.3, 0.0),
    ]
    for hypothesis, margin, p in cases:
        result = prm.compare_per_user(
            frame, baseline="old", direction="higher", hypothesis=hypothesis, margin=margin
        )
        assert result.item(1, "p_value") == p, (hypothesis, margin)
    flipped = prm.compare_per_user(_pair(b, a), baseline="old", direction="higher", hypothesis="noninferiority",
                                   margin=0.2)  # fmt: skip
    assert flipped.item(1, "p_value") == 1.0  # d = -m exactly: H0's boundary


def test_several_baselines_form_one_family() -> None:
    rng = np.random.default_rng(4)
    n, systems = 20, ["a", "b", "c", "d"]
    frame = pl.DataFrame(
        {
            "model": [name for name in systems for _ in range(n)],
            "user": list(range(n)) * len(systems),
            "m": rng.random(n * len(systems)),
        }
    )
    result = prm.compare_per_user(frame, baseline=["b", "a"])
    own = result.filter(pl.col("baseline").is_null())
    assert own.get_column("system").to_list() == ["b", "a"]
    tested = result.filter(pl.col("baseline").is_not_null())
    assert tested.select("system", "baseline").rows() == [
        ("a", "b"), ("c", "b"), ("d", "b"), ("c", "a"), ("d", "a"),
    ]  # fmt: skip
    wide = {name: frame.filter(pl.col("model") == name).get_column("m").to_numpy()
            for name in systems}  # fmt: skip
    expected = [
        stats.ttest_rel(wide[s], wide[base]).pvalue
        for s, base in tested.select("system", "baseline").rows()
    ]
    assert tested.get_column("p_value").to_list() == pytest.approx(expected, rel=1e-9)
    holm = multipletests(expected, method="holm")[1]
    assert tested.get_column("p_adjusted").to_list() == pytest.approx(list(holm), rel=1e-9)


def test_bad_decisions_are_refused() -> None:
    frame = _pair(np.array([0.1, 0.2]), np.array([0.2, 0.1]))
    with pytest.raises(ValueError, match="needs margin="):
        prm.compare_per_user(frame, baseline="old", direction="higher", hypothesis="noninferiority")
    with pytest.raises(ValueError, match=r"margin=0\.01 applies only"):
        prm.compare_per_user(frame, baseline="old", direction="higher", margin=0.01)
    with pytest.raises(ValueError, match="above 0"):
        prm.compare_per_user(
            frame, baseline="old", direction="higher", hypothesis="equivalence", margin=0
        )
    with pytest.raises(ValueError, match="finite number >= 0"):
        prm.compare_per_user(
            frame, baseline="old", direction="higher", hypothesis="equivalence", margin=-1.0
        )
    with pytest.raises(ValueError, match="use test='t'"):
        prm.compare_per_user(
            frame, baseline="old", direction="higher", hypothesis="superiority", test="wilcoxon"
        )
    with pytest.raises(ValueError, match="unknown hypothesis 'better'"):
        prm.compare_per_user(frame, baseline="old", direction="higher", hypothesis="better")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="tolerance must be a number"):
        prm.compare_per_user(frame, baseline="old", direction="higher", tolerance="0")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"baseline \['old', 'old'\] names a system twice"):
        prm.compare_per_user(frame, baseline=["old", "old"])
    with pytest.raises(ValueError, match="baseline 'x' is not one of the systems"):
        prm.compare_per_user(frame, baseline=["old", "x"])
    with pytest.raises(ValueError, match="empty list"):
        prm.compare_per_user(frame, baseline=[])


def test_decisions_through_compare() -> None:
    sample = prm.sample_data(n_users=60, seed=1)
    result = prm.compare(
        sample.recs, sample.truth, "ndcg@10", score="score", baseline="popularity",
        hypothesis="noninferiority", margin=0.01,
    )  # fmt: skip
    per_user = prm.evaluate(
        sample.recs, sample.truth, "ndcg@10", score="score", by="model", per_user=True
    )
    direct = prm.compare_per_user(
        per_user, baseline="popularity", hypothesis="noninferiority", margin=0.01
    )
    assert result.equals(direct)
    counts = result.filter(pl.col("diff").is_not_null()).select(
        pl.sum_horizontal("wins", "ties", "losses") == pl.col("n_paired")
    )
    assert counts.to_series().all()


def test_tukey_hsd_through_compare() -> None:
    sample = prm.sample_data(n_users=40, seed=2)
    result = prm.compare(
        sample.recs, sample.truth, "ndcg@10", score="score", test="tukey_hsd", n_resamples=300
    )
    per_user = prm.evaluate(
        sample.recs, sample.truth, "ndcg@10", score="score", by="model", per_user=True
    )
    assert result.equals(prm.compare_per_user(per_user, test="tukey_hsd", n_resamples=300))
    assert result.get_column("p_value").drop_nulls().len() == result.height - 4
