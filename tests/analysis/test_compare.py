"""``compare`` and ``compare_per_user``: every row against scipy / statsmodels, edge cases, errors."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats
from statsmodels.stats.multitest import multipletests

import polars_rankmetrics as prm
from polars_rankmetrics.sample import sample_data
from tests.conftest import Backend

COLUMNS = [
    "system", "metric", "direction", "n", "mean", "ci_low", "ci_high", "n_paired", "diff", "diff_ci_low",
    "diff_ci_high", "effect_size", "p_value", "p_adjusted", "significant",
    "wins", "ties", "losses", "test", "hypothesis", "margin", "correction", "alpha", "ci",
    "ci_method", "n_resamples",
]  # fmt: skip


@pytest.fixture(scope="module")
def sample() -> tuple[pl.DataFrame, pl.DataFrame]:
    sample = sample_data(n_users=150, seed=3)
    return sample.recs, sample.truth


def _oracle_rows(
    per_user: pl.DataFrame, metric: str, baseline: str, *, ci: float = 0.95
) -> dict[str, dict[str, Any]]:
    """Textbook: pivot users x systems, scipy on each paired vector."""
    wide = per_user.pivot(on="model", index="user", values=metric)
    systems = sorted(name for name in wide.columns if name != "user")
    rows: dict[str, dict[str, Any]] = {}
    base = wide.get_column(baseline).to_numpy()
    for name in systems:
        a = wide.get_column(name).to_numpy()
        if name == baseline:
            x = a[~np.isnan(a)]
            rows[name] = {"n": x.size, "mean": x.mean()}
            continue
        both = ~np.isnan(a) & ~np.isnan(base)
        d = a[both] - base[both]
        interval = stats.t.interval(ci, d.size - 1, loc=d.mean(), scale=stats.sem(d))
        rows[name] = {
            "n": int(both.sum()),
            "mean": a[both].mean(),
            "diff": d.mean(),
            "diff_ci_low": interval[0],
            "diff_ci_high": interval[1],
            "effect_size": d.mean() / d.std(ddof=1),
            "p_value": stats.ttest_rel(a[both], base[both]).pvalue,
        }
    others = [name for name in systems if name != baseline]
    adjusted = multipletests([rows[name]["p_value"] for name in others], method="holm")[1]
    for name, p in zip(others, adjusted, strict=True):
        rows[name]["p_adjusted"] = p
    return rows


def test_compare_equals_scipy_on_every_backend(
    backend: Backend, sample: tuple[pl.DataFrame, pl.DataFrame]
) -> None:
    recs, truth = sample
    metrics = ["map@10", "ndcg@10"]
    result = backend.polars(
        backend.frame(recs).rank.compare(
            backend.frame(truth), metrics, score="score", relevance="rel", baseline="popularity"
        )
    )
    assert result.columns == COLUMNS
    assert result.height == 4 * len(metrics)
    per_user = prm.evaluate(
        recs, truth, metrics, score="score", relevance="rel", by="model", per_user=True
    )
    means = prm.evaluate(recs, truth, metrics, score="score", relevance="rel", by="model")
    for metric in metrics:
        oracle = _oracle_rows(per_user, metric, "popularity")
        rows = result.filter(pl.col("metric") == metric)
        assert rows.get_column("system").to_list()[0] == "popularity"
        for row in rows.iter_rows(named=True):
            expected = oracle[row["system"]]
            for key, value in expected.items():
                assert row[key] == pytest.approx(value, rel=1e-12, abs=1e-15), (key, row)
            # default conventions: every truth user counts for every system, so the
            # row's mean is evaluate's mean
            mean = means.filter(pl.col("model") == row["system"]).get_column(metric).item()
            assert row["mean"] == pytest.approx(mean, rel=1e-12)
            if row["system"] != "popularity":
                assert row["significant"] == (row["p_adjusted"] < 0.05)


def test_lazy_stays_lazy(sample: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    recs, truth = sample
    result = prm.compare(recs.lazy(), truth.lazy(), "mrr@10", score="score", baseline="random")
    assert isinstance(result, pl.LazyFrame)
    eager = prm.compare(recs, truth, "mrr@10", score="score", baseline="random")
    collected = result.collect()
    assert collected.columns == eager.columns
    np.testing.assert_allclose(collected.get_column("p_value")[1:], eager.get_column("p_value")[1:])


def test_pandas_keeps_system_dtype(sample: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    pd = pytest.importorskip("pandas")
    recs, truth = sample
    result = prm.compare(recs.to_pandas(), truth.to_pandas(), "mrr@10", score="score")
    assert isinstance(result, pd.DataFrame)
    assert list(result.columns[:3]) == ["system", "baseline", "metric"]


def test_pairs_layout(sample: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    recs, truth = sample
    result = prm.compare(recs, truth, ["hit_rate@5"], score="score", correction="bonferroni")
    assert result.columns == ["system", "baseline", *COLUMNS[1:]]
    own = result.filter(pl.col("baseline").is_null())
    pairs = result.filter(pl.col("baseline").is_not_null())
    systems = sorted(recs.get_column("model").unique().to_list())
    assert own.get_column("system").to_list() == systems
    assert pairs.select("system", "baseline").rows() == [
        (a, b) for i, a in enumerate(systems) for b in systems[i + 1 :]
    ]
    assert own.get_column("p_value").null_count() == own.height
    # the family is every pair of this metric: Bonferroni multiplies by 6
    p = pairs.get_column("p_value").to_numpy()
    np.testing.assert_allclose(pairs.get_column("p_adjusted").to_numpy(), np.minimum(p * 6, 1))
    per_user = prm.evaluate(
        recs, truth, "hit_rate@5", score="score", by="model", per_user=True
    ).pivot(on="model", index="user", values="hit_rate@5")
    for row in pairs.iter_rows(named=True):
        a = per_user.get_column(row["system"]).to_numpy()
        b = per_user.get_column(row["baseline"]).to_numpy()
        assert row["diff"] == pytest.approx((a - b).mean(), rel=1e-12)
        assert row["p_value"] == pytest.approx(stats.ttest_rel(a, b).pvalue, rel=1e-12)


def test_by_groups_are_separate_families() -> None:
    rng = np.random.default_rng(0)
    n = 40
    frame = pl.DataFrame(
        {
            "fold": np.repeat([1, 2], 3 * n),
            "model": np.tile(np.repeat(["a", "b", "c"], n), 2),
            "user": np.tile(np.arange(n), 6),
            "ap": rng.random(6 * n),
        }
    )
    result = prm.compare_per_user(frame, system="model", by="fold", baseline="a")
    assert result.columns == ["fold", *COLUMNS]
    for fold in (1, 2):
        rows = result.filter((pl.col("fold") == fold) & pl.col("p_value").is_not_null())
        p = rows.get_column("p_value").to_list()
        np.testing.assert_allclose(
            rows.get_column("p_adjusted").to_numpy(), multipletests(p, method="holm")[1]
        )
        part = frame.filter(pl.col("fold") == fold)
        a = part.filter(pl.col("model") == "a").get_column("ap").to_numpy()
        b = part.filter(pl.col("model") == "b").get_column("ap").to_numpy()
        assert p[0] == pytest.approx(stats.ttest_rel(b, a).pvalue, rel=1e-12)


def test_pairing_drops_users_of_one_system() -> None:
    recs = pl.DataFrame(
        {
            "model": ["x"] * 4 + ["y"] * 3,
            "user": [1, 2, 3, 4, 1, 2, 3],
            "item": ["a", "a", "a", "a", "a", "b", "a"],
            "rank": [1] * 7,
        }
    )
    truth = pl.DataFrame({"user": [1, 2, 3, 4], "item": ["a", "a", "b", "a"]})
    # users_without_recs="exclude": y recommended nothing to user 4, so x and y pair on 1..3
    result = prm.compare(recs, truth, "hit_rate@1", baseline="x", users_without_recs="exclude")
    rows = {row["system"]: row for row in result.iter_rows(named=True)}
    assert rows["x"]["n"] == 4
    assert rows["x"]["mean"] == pytest.approx(0.75)
    assert rows["y"]["n"] == 3
    # x: (1, 1, 0), y: (1, 0, 0) on users 1..3: d = (0, -1, 0)
    assert rows["y"]["mean"] == pytest.approx(1 / 3)
    assert rows["y"]["diff"] == pytest.approx(-1 / 3)
    a, b = np.array([1.0, 0, 0]), np.array([1.0, 1, 0])
    assert rows["y"]["p_value"] == pytest.approx(stats.ttest_rel(a, b).pvalue, rel=1e-12)
    # default conventions: y scores 0 on user 4, so all four pair
    default = prm.compare(recs, truth, "hit_rate@1", baseline="x")
    assert default.get_column("n").to_list() == [4, 4]


def test_edge_cases_are_documented_values_not_nan() -> None:
    frame = pl.DataFrame(
        {
            "model": ["a", "a", "a", "b", "b", "b", "c", "c", "c", "d"],
            "user": [1, 2, 3, 1, 2, 3, 1, 2, 3, 1],
            "m": [0.5, 0.25, 0.125, 0.5, 0.25, 0.125, 0.75, 0.5, 0.375, 0.9],
            "one": [1.0, None, None, 2.0, 5.0, None, None, 1.0, 1.0, 3.0],
        }
    )
    result = prm.compare_per_user(frame, baseline="a")
    rows = {(r["system"], r["metric"]): r for r in result.iter_rows(named=True)}
    wilcoxon = prm.compare_per_user(frame, baseline="a", test="wilcoxon")
    p = wilcoxon.filter(system="c", metric="m").get_column("p_value").item()
    assert p == 0.25  # three positive differences: 2 of 8 sign patterns, as scipy
    assert wilcoxon.filter(system="b", metric="m").get_column("p_value").item() == 1.0
    # b equals a: zero variance, zero difference -> p = 1, no effect size
    assert rows["b", "m"]["p_value"] == 1.0
    assert rows["b", "m"]["effect_size"] is None
    assert rows["b", "m"]["diff_ci_low"] == rows["b", "m"]["diff_ci_high"] == 0.0
    # c = a + 0.25 for every user (exact in binary): zero variance, nonzero difference -> p = 0
    assert rows["c", "m"]["p_value"] == 0.0
    assert rows["c", "m"]["diff"] == 0.25
    # d has one user: n = 1, a mean, no interval, no test
    assert rows["d", "m"]["n"] == 1
    assert rows["d", "m"]["mean"] == 0.9
    assert rows["d", "m"]["ci_low"] is None
    assert rows["d", "m"]["p_value"] is None
    assert rows["d", "m"]["significant"] is None
    # "one": a is defined for user 1 only; c never with a -> no pairs, no difference;
    # c's own row still states c's mean over its own two users (evaluate's number)
    assert rows["c", "one"]["n"] == 2
    assert rows["c", "one"]["mean"] == 1.0
    assert rows["c", "one"]["n_paired"] == 0
    assert rows["c", "one"]["diff"] is None
    assert rows["c", "one"]["p_value"] is None
    numbers = result.select(pl.selectors.float())
    assert not any(numbers.select(pl.all().is_nan().any()).row(0))


def test_randomization_is_reproducible_and_close_to_t(
    sample: tuple[pl.DataFrame, pl.DataFrame],
) -> None:
    recs, truth = sample
    options: dict[str, Any] = {"score": "score", "baseline": "popularity", "n_resamples": 2_000}
    first = prm.compare(recs, truth, ["ndcg@10"], test="randomization", seed=1, **options)
    again = prm.compare(recs, truth, ["ndcg@10"], test="randomization", seed=1, **options)
    other = prm.compare(recs, truth, ["ndcg@10"], test="randomization", seed=2, **options)
    # the same seed, the same p-values (evaluate's per-user sums may differ in the last bit
    # from run to run, as a parallel sum does, so the means are compared with a tolerance)
    assert first.get_column("p_value").equals(again.get_column("p_value"))
    np.testing.assert_allclose(
        first.get_column("diff").drop_nulls(), again.get_column("diff").drop_nulls(), rtol=1e-12
    )
    assert other.get_column("p_value").null_count() == 1
    # a weak effect (p far from the floor 1/(B+1)): another seed, another p-value
    rng = np.random.default_rng(0)
    a = rng.random(100)
    scores = pl.DataFrame(
        {
            "model": ["a"] * 100 + ["b"] * 100,
            "user": list(range(100)) * 2,
            "ap": np.concatenate([a, a + rng.normal(0.03, 0.2, 100)]),
        }
    )
    weak = [
        prm.compare_per_user(scores, baseline="a", test="randomization", seed=seed).item(
            1, "p_value"
        )
        for seed in (1, 1, 2)
    ]
    assert weak[0] == weak[1] != weak[2]
    exact_t = stats.ttest_rel(scores["ap"][100:], scores["ap"][:100]).pvalue
    assert weak[0] == pytest.approx(exact_t, abs=0.05)
    p = first.get_column("p_value").drop_nulls().to_numpy()
    assert np.all(p >= 1 / 2001)
    assert np.allclose(p * 2001, np.round(p * 2001))
    t = prm.compare(recs, truth, ["ndcg@10"], **options).get_column("p_value").drop_nulls()
    # a large effect: both tests find it (the t p-value is far below 1/2001)
    assert (t.to_numpy() < 0.05).tolist() == (p < 0.05).tolist()


def test_bootstrap_intervals_are_near_t_intervals(
    sample: tuple[pl.DataFrame, pl.DataFrame],
) -> None:
    recs, truth = sample
    t = prm.compare(recs, truth, "map@10", score="score", baseline="random")
    boot = prm.compare(
        recs, truth, "map@10", score="score", baseline="random", ci_method="bootstrap",
        n_resamples=4_000, seed=5,
    )  # fmt: skip
    for column in ("ci_low", "ci_high", "diff_ci_low", "diff_ci_high"):
        a = t.get_column(column).drop_nulls().to_numpy()
        b = boot.get_column(column).drop_nulls().to_numpy()
        width = (t.get_column("ci_high") - t.get_column("ci_low")).to_numpy()
        assert np.all(np.abs(a - b) < 0.25 * width.max())
    assert boot.get_column("p_value").equals(t.get_column("p_value"))


@st.composite
def per_user_frames(draw: st.DrawFn) -> pl.DataFrame:
    n_users = draw(st.integers(2, 25))
    systems = draw(st.sampled_from([["a", "b"], ["a", "b", "c"], ["a", "b", "c", "d"]]))
    value = st.one_of(
        st.none(), st.sampled_from([0.0, 0.5, 1.0]), st.floats(0, 1, allow_subnormal=False)
    )
    rows = []
    for name in systems:
        for user in range(n_users):
            if draw(st.booleans()) or user < 2:
                rows.append((name, user, draw(value), draw(value)))
    schema = {"model": pl.String, "user": pl.Int64, "m1": pl.Float64, "m2": pl.Float64}
    return pl.DataFrame(rows, schema=schema, orient="row")


def _textbook(frame: pl.DataFrame, metric: str, system: str, baseline: str) -> dict[str, Any]:
    values: dict[str, dict[int, float]] = {}
    for name, user, value in frame.select("model", "user", metric).iter_rows():
        if value is not None:
            values.setdefault(name, {})[user] = value
    a_values, b_values = values.get(system, {}), values.get(baseline, {})
    users = sorted(set(a_values) & set(b_values))
    a = np.array([a_values[u] for u in users])
    b = np.array([b_values[u] for u in users])
    own = np.array(list(a_values.values()))
    return {"n": len(a_values), "own": own, "n_paired": len(users), "a": a, "b": b}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(per_user_frames(), st.sampled_from(["holm", "bonferroni", "bh"]))
def test_compare_per_user_against_oracles(frame: pl.DataFrame, correction: str) -> None:
    systems = sorted(frame.get_column("model").unique().to_list())
    if len(systems) < 2:
        return
    result = prm.compare_per_user(frame, baseline="a", correction=correction)
    method = {"holm": "holm", "bonferroni": "bonferroni", "bh": "fdr_bh"}[correction]
    for metric in ("m1", "m2"):
        rows = result.filter(pl.col("metric") == metric)
        tested = []
        for row in rows.iter_rows(named=True):
            if row["system"] == "a":
                continue
            case = _textbook(frame, metric, row["system"], "a")
            a, b = case["a"], case["b"]
            # the system's own users (evaluate's mean); the difference over the pairs
            assert row["n"] == case["n"]
            assert row["n_paired"] == case["n_paired"]
            if case["n"]:
                assert row["mean"] == pytest.approx(case["own"].mean(), rel=1e-12)
            else:
                assert row["mean"] is None
            d = a - b
            if d.size == 0:
                assert row["diff"] is None
                assert row["p_value"] is None
                continue
            assert row["diff"] == pytest.approx(d.mean(), rel=1e-12, abs=1e-11)
            if d.size < 2:
                assert row["p_value"] is None
                assert row["diff_ci_low"] is None
                continue
            # equalities are decided on 12 significant digits of the values' scale
            scale = max(np.abs(a).max(), np.abs(b).max())
            grid = d if scale == 0 else np.round(d / 10.0 ** (np.floor(np.log10(scale)) - 11))
            if np.all(grid == grid[0]):
                assert row["p_value"] == (1.0 if grid[0] == 0 else 0.0)
                assert row["effect_size"] is None
                assert row["diff_ci_low"] == row["diff"] == row["diff_ci_high"]
            else:
                with warnings.catch_warnings():
                    # scipy's own warning on nearly equal differences: the oracle's concern
                    warnings.simplefilter("ignore", RuntimeWarning)
                    oracle = stats.ttest_rel(a, b)
                assert row["p_value"] == pytest.approx(oracle.pvalue, rel=1e-12, abs=1e-300)
                # its interval is t.interval's, and [mean, mean] when the sd underflows to 0
                low, high = oracle.confidence_interval(0.95)
                assert row["diff_ci_low"] == pytest.approx(low, rel=1e-12, abs=1e-15)
                assert row["diff_ci_high"] == pytest.approx(high, rel=1e-12, abs=1e-15)
            tested.append(row)
        if tested:
            adjusted = multipletests([row["p_value"] for row in tested], method=method)[1]
            for row, p in zip(tested, adjusted, strict=True):
                assert row["p_adjusted"] == pytest.approx(p, rel=1e-12)


def test_bad_input_is_refused_clearly(sample: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    recs, truth = sample
    with pytest.raises(ValueError, match=r"baseline 'bm25' is not one of the systems.*'two_tower'"):
        prm.compare(recs, truth, "map@10", score="score", baseline="bm25")
    with pytest.raises(ValueError, match="no system column 'run'"):
        prm.compare(recs, truth, "map@10", score="score", system="run")
    one = recs.filter(pl.col("model") == "random")
    with pytest.raises(ValueError, match=r"at least two systems.*\['random'\]"):
        prm.compare(one, truth, "map@10", score="score")
    with pytest.raises(ValueError, match="unknown test 'z'"):
        prm.compare(recs, truth, "map@10", score="score", test="z")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown correction 'fdr'"):
        prm.compare(recs, truth, "map@10", score="score", correction="fdr")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="ci must be between 0 and 1"):
        prm.compare(recs, truth, "map@10", score="score", ci=95)
    with pytest.raises(ValueError, match="n_resamples must be at least 1"):
        prm.compare(recs, truth, "map@10", score="score", n_resamples=0)
    with pytest.raises(ValueError, match="pooled_recall@10 is a ratio of sums over users"):
        prm.compare(recs, truth, "pooled_recall@10", score="score")
    scores = pl.DataFrame({"model": ["a", "b"], "user": [1, 1], "ap": [0.1, 0.2]})
    with pytest.raises(ValueError, match=r"metric column\(s\) \['ndcg'\] not in the per-user"):
        prm.compare_per_user(scores, ["ndcg"])
    with pytest.raises(ValueError, match="no system column 'system'"):
        prm.compare_per_user(scores, system="system")
    twice = pl.concat([scores, scores])
    with pytest.raises(ValueError, match="repeating a"):
        prm.compare_per_user(twice)
    with pytest.raises(ValueError, match="NaN"):
        prm.compare_per_user(scores.with_columns(pl.lit(math.nan).alias("ap")))
    with pytest.raises(TypeError, match="scores must be"):
        prm.compare_per_user({"model": ["a"]})


def test_report_formats(sample: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    recs, truth = sample
    cmp = prm.compare(recs, truth, ["map@10", "mrr@10"], score="score", baseline="popularity")
    rep = prm.report(cmp)
    assert isinstance(rep, prm.analysis.Report)
    markdown = rep.to_markdown()
    assert markdown.splitlines()[0] == "| system | map@10 | mrr@10 |"
    # random is far worse than popularity (marked below), two_tower far better (above)
    lines = {line.split(" | ")[0][2:]: line for line in markdown.splitlines()[2:6]}
    assert "‡" in lines["random"]
    assert "†" in lines["two_tower"]
    assert "†" not in lines["popularity"]
    assert "significantly better than popularity" in markdown
    assert rep._repr_markdown_() == markdown
    assert "<table>" in rep._repr_html_()
    latex = prm.report(cmp, format="latex", digits=2)
    assert isinstance(latex, str)
    assert r"item\_knn" in latex
    assert r"\textsuperscript{\ddag}" in latex
    assert "popularity & 0.12 [0.09, 0.16]" in latex
    assert (
        prm.report(cmp, format="csv").splitlines()[0].startswith("system,metric,direction,n,mean")
    )
    with pytest.raises(ValueError, match="unknown format"):
        prm.report(cmp, format="pdf")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="column"):
        prm.report(cmp.drop("significant"))


def test_report_pairs_letters() -> None:
    frame = pl.DataFrame(
        {
            "model": ["a"] * 6 + ["b"] * 6 + ["c"] * 6,
            "user": list(range(6)) * 3,
            "ap": [
                *[0.1, 0.2, 0.1, 0.2, 0.1, 0.2],
                *[0.5, 0.6, 0.55, 0.6, 0.5, 0.6],
                *[0.12, 0.18, 0.1, 0.22, 0.1, 0.19],
            ],
        }
    )  # fmt: skip
    text = prm.report(prm.compare_per_user(frame), format="markdown", intervals=False)
    assert isinstance(text, str)
    # b is far above a and c; a and c do not differ
    assert "| b | 0.558<sup>ac</sup> |" in text
    assert "| a | 0.150 |" in text
    assert "a = a, b = b, c = c" in text


def test_folds_in_recs_and_truth_are_separate_groups(
    sample: tuple[pl.DataFrame, pl.DataFrame],
) -> None:
    recs, truth = sample
    fold = (pl.col("user") % 2).alias("fold")
    recs_f, truth_f = recs.with_columns(fold), truth.with_columns(fold)
    result = prm.compare(
        recs_f, truth_f, "ndcg@10", score="score", relevance="rel", by="fold", baseline="random"
    )
    assert result.columns == ["fold", *COLUMNS]
    per_user = prm.evaluate(
        recs_f, truth_f, "ndcg@10", score="score", relevance="rel", by=["fold", "model"],
        per_user=True,
    )  # fmt: skip
    for fold_value in (0, 1):
        rows = result.filter(pl.col("fold") == fold_value)
        part = per_user.filter(pl.col("fold") == fold_value).drop("fold")
        oracle = _oracle_rows(part, "ndcg@10", "random")
        for row in rows.iter_rows(named=True):
            for key, value in oracle[row["system"]].items():
                assert row[key] == pytest.approx(value, rel=1e-12, abs=1e-15), (key, row)


def test_differences_whose_squares_underflow_follow_scipy() -> None:
    # d = [3.3e-252, 0]: the sd underflows to 0 though the values differ; scipy's
    # ttest_rel gives t = inf, p = 0 and the interval [mean, mean] (was ZeroDivisionError)
    frame = pl.DataFrame(
        {
            "model": ["a", "a", "b", "b"],
            "user": [1, 2, 1, 2],
            "m1": [0.0, 0.0, 3.3e-252, 0.0],
        }
    )
    row = (
        prm.compare_per_user(frame, baseline="a").filter(pl.col("system") == "b").row(0, named=True)
    )
    oracle = stats.ttest_rel(np.array([3.3e-252, 0.0]), np.zeros(2))
    assert row["p_value"] == oracle.pvalue == 0.0
    low, high = oracle.confidence_interval(0.95)
    assert (row["diff_ci_low"], row["diff_ci_high"]) == (low, high)
    assert row["effect_size"] is None


# ------------------------------------------------- one number: compare states evaluate's


def test_each_row_states_the_systems_own_mean_as_evaluate() -> None:
    """mean_rank leaves out users without a hit: paired users differ from a system's own."""
    recs = pl.DataFrame(
        {
            "model": ["a", "a", "a", "b", "b", "b"],
            "user": [1, 2, 3, 1, 2, 3],
            "item": ["x", "y", "q", "q", "x", "y"],
            "rank": [1, 1, 1, 1, 2, 1],
        }
    )
    truth = pl.DataFrame({"user": [1, 2, 3], "item": ["x", "x", "y"]})
    means = prm.evaluate(recs, truth, ["mean_rank"], by="model").sort("model")
    result = prm.compare(recs, truth, "mean_rank", baseline="a")
    # a finds user 1's item first; b finds users 2 (at 2) and 3 (at 1): one paired user? none
    assert result.get_column("mean").to_list() == means.get_column("mean_rank").to_list()
    assert result.get_column("n").to_list() == [1, 2]
    assert result.get_column("n_paired").to_list() == [None, 0]


@pytest.mark.parametrize("label", ["gm_map@10", "gm_bpref"])
def test_a_geometric_mean_is_refused_not_labelled_with_an_arithmetic_mean(
    sample: tuple[pl.DataFrame, pl.DataFrame], label: str
) -> None:
    recs, truth = sample
    with pytest.raises(ValueError, match=rf"compare cannot test '{label}'.*geometric mean"):
        prm.compare(recs, truth, label, score="score", relevance="rel")


def test_compare_takes_every_metric_string_and_convention_evaluate_takes(
    sample: tuple[pl.DataFrame, pl.DataFrame],
) -> None:
    recs, truth = sample
    options: dict[str, Any] = {"score": "score", "relevance": "rel"}
    several = prm.compare(recs, truth, "recall@1,2", baseline="popularity", **options)
    assert several.get_column("metric").unique(maintain_order=True).to_list() == [
        "recall@1",
        "recall@2",
    ]
    first = prm.Conventions(duplicates="first")
    result = prm.compare(recs, truth, "recall@2", conventions=first, **options)
    means = prm.evaluate(recs, truth, ["recall@2"], by="model", conventions=first, **options)
    own = result.filter(pl.col("baseline").is_null()).sort("system")
    assert own.get_column("mean").to_list() == means.sort("model").get_column("recall@2").to_list()


def test_resampling_logs_its_stage_through_logging(caplog: pytest.LogCaptureFixture) -> None:
    scores = pl.DataFrame(
        {"model": ["a"] * 4 + ["b"] * 4, "user": [1, 2, 3, 4] * 2,
         "ap": [0.1, 0.2, 0.3, 0.2, 0.3, 0.5, 0.4, 0.6]}
    )  # fmt: skip
    with caplog.at_level("INFO", logger="polars_rankmetrics"):
        prm.compare_per_user(scores, baseline="a", test="randomization", n_resamples=100)
    messages = [record.getMessage() for record in caplog.records]
    assert (
        messages[0] == "compare: 1 metric(s) x 1 group(s), test='randomization', 100 resamples ..."
    )
    assert messages[1].startswith(messages[0][:-4] + ": done in ")
    caplog.clear()
    with caplog.at_level("INFO", logger="polars_rankmetrics"):
        prm.compare_per_user(scores, baseline="a")  # nothing resampled: nothing logged
    assert caplog.records == []
