"""Curves and comparisons of the beyond-accuracy measures (novelty, ILD, calibration, ...).

``curves`` must give, at every k, the number ``evaluate(..., [f"{m}@{k}"])``
gives (hand examples on every backend, and the plain-Python textbook under
hypothesis); ``compare`` must give ``compare_per_user`` on ``evaluate``'s
per-user values, with scipy's paired t-test.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from polars.testing import assert_frame_equal
from scipy import stats

import polars_rankmetrics as prm
from tests import textbook_beyond as tb
from tests.conftest import Backend
from tests.measures.test_lists_properties import _frames, _textbook_inputs, cases

# Two models. Lists shorter than k (m1 u3 [e]), a rank gap (m2 u1: ranks 1, 3, 4), a user
# absent from the interactions (u6), items absent from the interactions (d, e).
RECS = {
    "model": ["m1"] * 8 + ["m2"] * 7,
    "user": [1, 1, 1, 2, 2, 3, 6, 6, 1, 1, 1, 2, 2, 2, 6],
    "item": ["a", "b", "c", "a", "d", "e", "c", "b", "b", "e", "a", "d", "c", "a", "e"],
    "rank": [1, 2, 3, 1, 2, 1, 1, 2, 1, 3, 4, 1, 2, 3, 1],
}
# N = 5 users; c_a = 4, c_b = 1, c_c = 1, c_d = c_e = 0
HISTORY = {"user": [1, 1, 2, 3, 4, 4, 5], "item": ["a", "a", "a", "a", "b", "a", "c"]}
CATALOG = {"item": ["a", "b", "c", "d", "e", "f"], "genre": ["x", "x", "y", "y", "z", "z"]}
MULTI = {
    "item": ["a", "b", "c", "d", "e", "f"],
    "genre": [["x", "y"], ["x"], ["y", "z"], ["y", "x", "x"], ["z"], ["w"]],
}
LIST_NAMES = [
    "novelty",
    "arp",
    "long_tail",
    "long_tail(head_share=0.5)",
    "ild",
    "calibration",
    "calibration(alpha=0.5)",
    "coverage",
    "gini",
    "personalization",
]
PROFILE = settings(
    max_examples=10,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _inputs(backend: Backend, catalog: dict[str, Any]) -> dict[str, Any]:
    return {
        "interactions": backend.frame(HISTORY),
        "items": backend.frame(catalog),
        "category": "genre",
    }


def _close(actual: float | None, expected: float | None) -> bool:
    if actual is None or expected is None:
        return actual is None and expected is None
    return math.isclose(actual, expected, rel_tol=1e-9, abs_tol=1e-9)


# ---------------------------------------------------------------------------
# curves
# ---------------------------------------------------------------------------


def test_curves_equal_evaluate_at_every_k(backend: Backend) -> None:
    # one category per item on Polars eager, several on the others (the hypothesis test
    # below draws both on every layout)
    catalog = CATALOG if backend.name == "polars-eager" else MULTI
    recs = backend.frame(RECS)
    got = backend.polars(
        recs.rank.curves(
            None, LIST_NAMES, k=range(1, 6), by="model", ci=0.9, **_inputs(backend, catalog)
        )
    )
    assert got.columns == ["model", "metric", "k", "value", "ci_low", "ci_high"]
    assert got.height == 2 * len(LIST_NAMES) * 5
    assert got["metric"].unique(maintain_order=True).to_list() == LIST_NAMES
    # one evaluate call for every (measure, k): its columns are named "name@k"
    labels = [f"{name}@{k}" for k in range(1, 6) for name in LIST_NAMES]
    expected = backend.polars(
        recs.rank.evaluate(None, labels, by="model", **_inputs(backend, catalog))
    )
    assert expected["model"].to_list() == ["m1", "m2"]
    for model, name, k, value, *_ in got.iter_rows():
        wanted = expected.filter(pl.col("model") == model)[f"{name}@{k}"].item()
        assert _close(value, wanted), (model, name, k, value, wanted)


def test_hand_values_of_the_curves() -> None:
    recs = pl.DataFrame(RECS).filter(pl.col("model") == "m1")
    got = prm.curves(
        recs, None, ["novelty", "ild", "coverage", "personalization"], k=[1, 2, 3],
        interactions=pl.DataFrame(HISTORY), items=pl.DataFrame(CATALOG), category="genre",
    )  # fmt: skip
    values = {(m, k): v for m, k, v in got.select("metric", "k", "value").iter_rows()}
    # novelty terms -log2(max(c, 1) / 5): a 1.321928, b = c = d = e 2.321928
    # k=1: u1 a, u2 a, u3 e, u6 c -> (1.321928 * 2 + 2.321928 * 2) / 4
    a, rare = -math.log2(4 / 5), -math.log2(1 / 5)
    assert values["novelty", 1] == pytest.approx((2 * a + 2 * rare) / 4)
    # k=2: u1 (a + b) / 2, u2 (a + d) / 2, u3 e, u6 (c + b) / 2
    assert values["novelty", 2] == pytest.approx(((a + rare) / 2 * 2 + rare + rare) / 4)
    # ILD needs two items: none at k=1; k=2: u1 a, b (x, x) 0; u2 a, d (x, y) 1; u6 c, b 1
    assert values["ild", 1] is None
    assert values["ild", 2] == pytest.approx(2 / 3)
    # k=3: u1 a, b, c: pairs ab 0, ac 1, bc 1 -> 2/3; u2 and u6 unchanged
    assert values["ild", 3] == pytest.approx((2 / 3 + 1 + 1) / 3)
    # coverage: k=1 {a, e, c} of 6; k=2 adds b, d
    assert values["coverage", 1] == pytest.approx(3 / 6)
    assert values["coverage", 2] == pytest.approx(5 / 6)
    # personalization, U = 4 lists (6 pairs): k=1 a shared by u1, u2 -> 1 - 1 / (6 * 1)
    assert values["personalization", 1] == pytest.approx(1 - 1 / 6)
    # k=2: a (u1, u2) and b (u1, u6) -> 1 - 2 / (6 * 2)
    assert values["personalization", 2] == pytest.approx(1 - 2 / 12)


def test_list_measures_beside_accuracy_metrics(backend: Backend) -> None:
    recs = backend.frame(RECS)
    truth = backend.frame({"user": [1, 2, 7], "item": ["b", "c", "a"]})
    inputs = _inputs(backend, CATALOG)
    got = backend.polars(
        recs.rank.curves(truth, ["novelty", "ndcg", "calibration"], k=[1, 3], by="model",
                         ci=0.95, **inputs)
    )  # fmt: skip
    accuracy = backend.polars(recs.rank.curves(truth, ["ndcg"], k=[1, 3], by="model", ci=0.95))
    described = backend.polars(
        recs.rank.curves(None, ["novelty", "calibration"], k=[1, 3], by="model", ci=0.95, **inputs)
    )
    assert_frame_equal(got.filter(pl.col("metric") == "ndcg"), accuracy)
    assert_frame_equal(
        got.filter(pl.col("metric") != "ndcg").sort("model", "metric", "k"),
        described.sort("model", "metric", "k"),
    )


def test_interval_is_the_t_interval_of_the_per_user_values() -> None:
    recs = pl.DataFrame(RECS)
    inputs = {"interactions": pl.DataFrame(HISTORY), "items": pl.DataFrame(MULTI),
              "category": "genre"}  # fmt: skip
    got = prm.curves(recs, None, ["calibration", "ild"], k=[3], by="model", ci=0.9, **inputs)
    per_user = prm.evaluate(
        recs, None, ["calibration@3", "ild@3"], by="model", per_user=True, **inputs
    )
    for model, name, _, value, low, high in got.iter_rows():
        values = per_user.filter(model=model)[f"{name}@3"].drop_nulls().to_numpy()
        half = stats.t.ppf(0.95, len(values) - 1) * values.std(ddof=1) / math.sqrt(len(values))
        assert value == pytest.approx(values.mean())
        assert (low, high) == pytest.approx((values.mean() - half, values.mean() + half))


def test_group_measures_have_no_interval() -> None:
    got = prm.curves(
        pl.DataFrame(RECS), None, ["gini", "coverage"], k=[2], ci=0.9, by="model",
        items=pl.DataFrame(CATALOG),
    )  # fmt: skip
    assert got["value"].null_count() == 0
    assert got["ci_low"].null_count() == got["ci_high"].null_count() == got.height


def test_curves_from_scores_equal_evaluate() -> None:
    # ranks from scores (ties broken by the tie rule), a repeated item kept once
    recs = pl.DataFrame({
        "user": [1, 1, 1, 1, 2, 2, 2],
        "item": ["a", "b", "c", "b", "d", "a", "e"],
        "score": [0.9, 0.5, 0.5, 0.1, 0.3, 0.3, 0.2],
    })  # fmt: skip
    inputs = {"interactions": pl.DataFrame(HISTORY), "items": pl.DataFrame(MULTI),
              "category": "genre", "score": "score", "duplicates": "first"}  # fmt: skip
    names = ["novelty", "ild", "calibration", "gini", "personalization"]
    got = prm.curves(recs, None, names, k=range(1, 5), **inputs)
    for k in range(1, 5):
        expected = prm.evaluate(recs, None, [f"{name}@{k}" for name in names], **inputs)
        for name in names:
            value = got.filter(metric=name, k=k)["value"].item()
            assert _close(value, expected[f"{name}@{k}"].item()), (name, k)


def test_curves_refuse_missing_inputs() -> None:
    recs = pl.DataFrame(RECS)
    with pytest.raises(ValueError, match=r"novelty need interactions="):
        prm.curves(recs, None, ["novelty"], k=[5])
    with pytest.raises(ValueError, match=r"ild need items="):
        prm.curves(recs, None, ["ild"], k=[5])
    with pytest.raises(ValueError, match=r"need category="):
        prm.curves(recs, None, ["ild"], k=[5], items=pl.DataFrame(CATALOG))
    with pytest.raises(ValueError, match=r"curves cannot draw \['ndcg'\] without truth"):
        prm.curves(recs, None, ["ndcg", "novelty"], k=[5], interactions=pl.DataFrame(HISTORY))
    with pytest.raises(ValueError, match="missing from the item catalog"):
        prm.curves(recs, None, ["coverage"], k=[5], items=pl.DataFrame(CATALOG).head(2))


@PROFILE
@given(cases())
def test_curves_match_the_textbook(case: dict[str, Any]) -> None:
    recs, history, items, by = _frames(case)
    share, alpha = case["head_share"], case["alpha"]
    names = {
        "novelty": "novelty",
        "arp": "arp",
        "long_tail": f"long_tail(head_share={share})",
        "ild": "ild",
        "calibration": f"calibration(alpha={alpha})",
        "coverage": "coverage",
        "gini": "gini",
        "personalization": "personalization",
    }
    ks = range(1, 10)
    lazy = case["layout"] == "model"
    got = prm.curves(
        recs.lazy() if lazy else recs, None, list(names.values()), k=ks, by=by or None, ci=0.9,
        interactions=history, items=items, category="category",
    )  # fmt: skip
    if isinstance(got, pl.LazyFrame):
        got = got.collect()
    rows = {(*row[: len(by)], row[len(by)], row[len(by) + 1]): row for row in got.iter_rows()}
    for group in sorted({(row["fold"], row["model"]) for row in case["recs"]}):
        lists, group_history, catalog = _textbook_inputs(case, group)
        if not tb.top(lists, max(ks)):
            continue  # no list within the largest k: evaluate has no such user, nor curves
        named = {"fold": group[0], "model": group[1]}
        key = tuple(named[column] for column in by)
        for name, label in names.items():
            for k in ks:
                expected = tb.group_value(
                    name, k, lists, group_history, catalog, head_share=share, alpha=alpha
                )
                if name == "coverage" and not tb.top(lists, k):
                    expected = None  # no list within k: nothing to cover (evaluate: no row)
                row = rows[(*key, label, k)]
                value, low, high = row[-3:]
                assert _close(value, expected), (group, label, k, value, expected)
                if name not in tb.USER_MEASURES:
                    assert low is None
                    assert high is None
                    continue
                values = [
                    v
                    for v in tb.per_user(
                        name, k, lists, group_history, catalog, head_share=share, alpha=alpha
                    ).values()
                    if v is not None
                ]
                if len(values) < 2:
                    assert low is None
                    assert high is None
                    continue
                half = (
                    stats.t.ppf(0.95, len(values) - 1)
                    * float(np.std(values, ddof=1))
                    / math.sqrt(len(values))
                )
                # the variance comes from running sums of squares: where the values are
                # (nearly) equal, cancellation leaves ~1e-16 in it, ~1e-8 in its root
                assert math.isclose(low, float(np.mean(values)) - half, abs_tol=1e-6)
                assert math.isclose(high, float(np.mean(values)) + half, abs_tol=1e-6)


# ---------------------------------------------------------------------------
# compare
# ---------------------------------------------------------------------------


def test_compare_equals_compare_per_user_on_evaluate(backend: Backend) -> None:
    recs = backend.frame(RECS)
    inputs = _inputs(backend, MULTI)
    labels = ["novelty@3", "ild@3", "calibration@3", "long_tail(head_share=0.5)@2"]
    got = backend.polars(recs.rank.compare(None, labels, baseline="m1", **inputs))
    per_user = recs.rank.evaluate(None, labels, by="model", per_user=True, **inputs)
    expected = backend.polars(prm.compare_per_user(per_user, labels, baseline="m1"))
    assert_frame_equal(got, expected)
    # users paired where both systems have a value: u1, u2, u6 (u3 has no m2 list); ILD
    # leaves out u6 (one m2 item), calibration u6 (no interactions)
    assert got.filter(pl.col("system") == "m2")["n"].to_list() == [3, 2, 2, 3]


def test_compare_p_value_is_scipys_paired_t_test() -> None:
    sample = prm.sample_data(n_users=60, seed=3)
    got = prm.compare(
        sample.recs, None, ["novelty@10", "calibration@10"], score="score",
        baseline="popularity", interactions=sample.interactions, items=sample.items,
        category="categories",
    )  # fmt: skip
    per_user = prm.evaluate(
        sample.recs, None, ["novelty@10", "calibration@10"], score="score", by="model",
        per_user=True, interactions=sample.interactions, items=sample.items,
        category="categories",
    )  # fmt: skip
    base = per_user.filter(model="popularity")
    for system, metric, p_value in (
        got.drop_nulls("p_value").select("system", "metric", "p_value").iter_rows()
    ):
        paired = per_user.filter(model=system).join(base, on="user", suffix="_b").drop_nulls()
        expected = stats.ttest_rel(paired[metric], paired[f"{metric}_b"]).pvalue
        assert p_value == pytest.approx(expected, rel=1e-9)


def test_compare_with_truth_and_list_measures(backend: Backend) -> None:
    recs = backend.frame(RECS)
    truth = backend.frame({"user": [1, 2, 6], "item": ["b", "c", "a"]})
    inputs = _inputs(backend, CATALOG)
    got = backend.polars(recs.rank.compare(truth, ["mrr", "arp@2"], **inputs))
    accuracy = backend.polars(recs.rank.compare(truth, ["mrr"]))
    described = backend.polars(recs.rank.compare(None, ["arp@2"], **inputs))
    assert_frame_equal(got.filter(pl.col("metric") == "mrr"), accuracy)
    assert_frame_equal(got.filter(pl.col("metric") == "arp@2"), described)


@pytest.mark.parametrize("label", ["coverage@2", "gini", "personalization@3"])
def test_compare_refuses_group_measures(label: str) -> None:
    with pytest.raises(ValueError, match=rf"compare cannot test '{label}': {label} is one value "):
        prm.compare(pl.DataFrame(RECS), None, [label], items=pl.DataFrame(CATALOG))


def test_compare_refuses_missing_inputs() -> None:
    with pytest.raises(ValueError, match=r"calibration need interactions="):
        prm.compare(
            pl.DataFrame(RECS), None, ["calibration@2"], items=pl.DataFrame(CATALOG),
            category="genre",
        )  # fmt: skip
    with pytest.raises(ValueError, match=r"compare the lists with the truth: pass truth="):
        prm.compare(pl.DataFrame(RECS), None, ["ndcg@2"])


# ---------------------------------------------------------------------------
# the namespaces forward with the functions' own signatures
# ---------------------------------------------------------------------------


# tests/adapters/test_signatures.py: annotations and defaults included, every surface


# ---------------------------------------------------------------------------
# plot_curves draws them
# ---------------------------------------------------------------------------


def test_plot_curves_of_list_measures(tmp_path: Path) -> None:
    pytest.importorskip("altair")
    pytest.importorskip("vl_convert")
    from polars_rankmetrics.analysis.plots import plot_curves  # noqa: PLC0415 - optional extra

    frame = prm.curves(
        pl.DataFrame(RECS), None, ["novelty", "ild", "coverage"], k=range(1, 6), by="model",
        ci=0.9, interactions=pl.DataFrame(HISTORY), items=pl.DataFrame(CATALOG),
        category="genre",
    )  # fmt: skip
    chart = plot_curves(frame)
    chart.save(tmp_path / "beyond.png")
    assert (tmp_path / "beyond.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (tmp_path / "beyond.png").stat().st_size > 5_000
    spec = chart.to_dict()
    assert spec["facet"]["column"]["sort"] == ["novelty", "ild", "coverage"]
    layers = spec["spec"]["layer"]
    assert [layer["mark"]["type"] for layer in layers] == ["area", "line"]
    # coverage is one value per model, not a mean over users: the axis says so
    assert layers[1]["encoding"]["y"]["title"] == "value (mean over users or per system)"
    only_means = plot_curves(frame.filter(pl.col("metric") != "coverage")).to_dict()
    assert only_means["spec"]["layer"][1]["encoding"]["y"]["title"] == "mean over users"


def test_a_curve_where_the_attention_underflows_equals_evaluate() -> None:
    # p^(r - 1) is 0.0 past rank ~109 for p = 0.001: such an item adds nothing to the
    # entropy (not 0 ln 0 = NaN) and the curve gives evaluate's number at every k
    rng = np.random.default_rng(1)
    n = 130
    recs = pl.DataFrame({
        "model": "m",
        "user": np.repeat(np.arange(4), n),
        "item": np.concatenate([rng.permutation(200)[:n] for _ in range(4)]),
        "rank": np.tile(np.arange(1, n + 1), 4),
    })  # fmt: skip
    items = pl.DataFrame({"item": np.arange(200)})
    for metric in ("entropy(p=0.001)", "exposure_gini(p=0.001)"):
        curve = prm.curves(recs, None, [metric], k=[100, 120, 130], by="model", items=items)
        for k, value in curve.sort("k").select("k", "value").rows():
            label = f"{metric}@{k}"
            want = prm.evaluate(recs, None, [label], by="model", items=items)[label].item()
            assert value == pytest.approx(want, rel=1e-12, abs=1e-15), (label, value, want)
