"""Charts of the result frames: each renders to PNG and encodes what it claims."""

from __future__ import annotations

import builtins
import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_rankmetrics as prm
from polars_rankmetrics.analysis import plots
from polars_rankmetrics.analysis.plots import (
    plot_comparison,
    plot_curves,
    plot_distribution,
    plot_long_tail,
    plot_segments,
)

pytest.importorskip("altair")
pytest.importorskip("vl_convert")

MODELS = ["item_knn", "popularity", "random", "two_tower"]


@pytest.fixture(scope="module")
def sample() -> prm.sample.Sample:
    return prm.sample_data(n_users=600, n_items=400)


@pytest.fixture(scope="module")
def per_user(sample) -> pl.DataFrame:
    return prm.evaluate(
        sample.recs, sample.truth, ["ndcg@10", "recall@20"], score="score", relevance="rel",
        by="model", per_user=True,
    )  # fmt: skip


@pytest.fixture
def curves() -> pl.DataFrame:
    # the shape of curves(): by column, metric, k, value, interval; values of a real-looking run
    rows = []
    for model, level in [("two_tower", 0.36), ("item_knn", 0.25), ("popularity", 0.19)]:
        for metric, slope in [("ndcg", 0.03), ("recall", 0.09), ("precision", -0.02)]:
            for k in [1, 5, 10, 20]:
                value = max(level + slope * (k**0.5 - 1) - (0.1 if metric == "precision" else 0), 0)
                rows.append((model, metric, k, value, value - 0.02, value + 0.02))
    return pl.DataFrame(
        rows, schema=["model", "metric", "k", "value", "ci_low", "ci_high"], orient="row"
    )


@pytest.fixture
def comparison() -> pl.DataFrame:
    # the shape of compare(): baseline "popularity" has null diff columns
    rows = [
        # system, metric, n, mean, ci, diff, diff ci, effect, p, p_adj, significant
        (
            "popularity",
            "ndcg@10",
            1794,
            0.192,
            0.180,
            0.204,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
        ),
        (
            "item_knn",
            "ndcg@10",
            1794,
            0.249,
            0.236,
            0.262,
            0.057,
            0.043,
            0.071,
            0.19,
            1e-12,
            3e-12,
            True,
        ),
        (
            "two_tower",
            "ndcg@10",
            1794,
            0.369,
            0.354,
            0.384,
            0.177,
            0.161,
            0.193,
            0.51,
            1e-40,
            3e-40,
            True,
        ),
        (
            "random",
            "ndcg@10",
            1794,
            0.006,
            0.004,
            0.008,
            -0.186,
            -0.198,
            -0.174,
            -0.71,
            1e-60,
            3e-60,
            True,
        ),
        (
            "popularity",
            "map@10",
            1794,
            0.142,
            0.131,
            0.153,
            None,
            None,
            None,
            None,
            None,
            None,
            None,
        ),
        (
            "item_knn",
            "map@10",
            1794,
            0.150,
            0.139,
            0.161,
            0.008,
            -0.004,
            0.020,
            0.03,
            0.19,
            0.38,
            False,
        ),
        (
            "two_tower",
            "map@10",
            1794,
            0.278,
            0.264,
            0.292,
            0.136,
            0.121,
            0.151,
            0.44,
            1e-30,
            3e-30,
            True,
        ),
        (
            "random",
            "map@10",
            1794,
            0.003,
            0.002,
            0.004,
            -0.139,
            -0.150,
            -0.128,
            -0.62,
            1e-50,
            3e-50,
            True,
        ),
    ]
    schema = [
        "system", "metric", "n", "mean", "ci_low", "ci_high", "diff", "diff_ci_low",
        "diff_ci_high", "effect_size", "p_value", "p_adjusted", "significant",
    ]  # fmt: skip
    return pl.DataFrame(rows, schema=schema, orient="row")


def render(chart: Any, path: Path) -> dict[str, Any]:
    chart.save(path)
    assert path.stat().st_size > 5_000  # a real picture, not an empty canvas
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    spec: dict[str, Any] = chart.to_dict()
    return spec


def walk(spec: Any) -> list[dict[str, Any]]:
    """Every dict in a spec (to find encodings wherever facets and layers put them)."""
    found = []
    if isinstance(spec, dict):
        found.append(spec)
        for value in spec.values():
            found.extend(walk(value))
    elif isinstance(spec, list):
        for value in spec:
            found.extend(walk(value))
    return found


def encodings(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [node["encoding"] for node in walk(spec) if "encoding" in node and "mark" in node]


def axis_titles(spec: dict[str, Any]) -> set[str]:
    return {
        channel["title"]
        for encoding in encodings(spec)
        for name, channel in encoding.items()
        if name in {"x", "y"} and isinstance(channel, dict) and channel.get("title")
    }


def test_curves(curves: pl.DataFrame, tmp_path: Path) -> None:
    spec = render(plot_curves(curves), tmp_path / "curves.png")
    assert spec["facet"]["column"]["field"] == "metric"
    assert spec["resolve"]["scale"]["y"] == "independent"
    assert "Metrics by cutoff k, by model" in spec["title"]
    assert {"cutoff k (list length)", "mean over users"} <= axis_titles(spec)
    marks = [layer["mark"]["type"] for layer in spec["spec"]["layer"]]
    assert marks == ["area", "line"]  # interval band under the lines
    line = spec["spec"]["layer"][1]["encoding"]
    assert line["color"]["field"] == "model"
    assert line["color"]["scale"]["domain"] == ["item_knn", "popularity", "two_tower"]
    # a legend, drawn opaque even though the bands are pale (no layer may switch it off)
    assert line["color"]["legend"]["symbolOpacity"] == 1
    assert all(e.get("color", {}).get("legend", {}) is not None for e in encodings(spec))
    # no interval columns: no band
    spec = render(plot_curves(curves.drop("ci_low", "ci_high")), tmp_path / "plain.png")
    assert [layer["mark"]["type"] for layer in spec["spec"]["layer"]] == ["line"]
    assert "bands" not in spec["title"]


def test_curves_fold_extra_by_columns_into_the_label(curves: pl.DataFrame, tmp_path: Path) -> None:
    folds = pl.concat([curves.with_columns(fold=pl.lit(f)) for f in (1, 2)])
    spec = render(plot_curves(folds.lazy(), title="Two folds"), tmp_path / "folds.png")
    domain = spec["spec"]["layer"][1]["encoding"]["color"]["scale"]["domain"]
    assert "model=two_tower | fold=2" in domain
    assert spec["title"] == "Two folds"


def test_comparison(comparison: pl.DataFrame, tmp_path: Path) -> None:
    spec = render(plot_comparison(comparison), tmp_path / "comparison.png")
    assert spec["title"]["text"] == "Systems compared with the baseline 'popularity'"
    # a frame made by hand carries no method columns: the subtitle says only what it knows
    assert (
        spec["title"]["subtitle"]
        == "means and differences with intervals; filled: adjusted p < alpha"
    )
    assert "mean over users (with confidence interval)" in axis_titles(spec)
    assert "difference from 'popularity' (with interval)" in axis_titles(spec)
    verdicts = [
        e["color"] for e in encodings(spec) if e.get("color", {}).get("field") == "_verdict"
    ]
    assert verdicts
    assert verdicts[0]["scale"]["domain"][0] == "significant"
    # the significant differences are the ones filled
    diff_data = next(
        values for name, values in spec["datasets"].items()
        if values and "zero" in values[0]
    )  # fmt: skip
    filled = {
        (row["system"], row["metric"]) for row in diff_data if row["_verdict"] == "significant"
    }
    assert ("item_knn", "map@10") not in filled
    assert ("item_knn", "ndcg@10") in filled
    # the baseline has no difference: it is labelled at 0 instead
    assert sum(row["diff"] is not None for row in diff_data) == 6
    marks = [node["mark"] for node in walk(spec) if isinstance(node.get("mark"), dict)]
    assert {"type": "text", "text": "baseline"}.items() <= next(
        m for m in marks if m["type"] == "text"
    ).items()


def test_comparison_subtitle_states_the_method_compare_used(tmp_path: Path) -> None:
    scores = pl.DataFrame(
        {"model": ["a"] * 4 + ["b"] * 4, "user": [1, 2, 3, 4] * 2,
         "ap": [0.1, 0.2, 0.3, 0.2, 0.3, 0.5, 0.4, 0.6]}
    )  # fmt: skip
    compared = prm.compare_per_user(
        scores, baseline="a", test="wilcoxon", correction="bonferroni", alpha=0.1, ci=0.9
    )
    spec = render(plot_comparison(compared), tmp_path / "method.png")
    assert spec["title"]["subtitle"] == (
        "means and differences with 90% t-intervals; filled: Wilcoxon signed-rank test, "
        "two-sided; Bonferroni-adjusted p < 0.1"
    )


def test_comparison_with_other_by_columns(comparison: pl.DataFrame, tmp_path: Path) -> None:
    by_fold = pl.concat([comparison.with_columns(fold=pl.lit(f)) for f in (1, 2)])
    spec = render(plot_comparison(by_fold), tmp_path / "folds.png")
    panels = {row["_panel"] for values in spec["datasets"].values() for row in values}
    assert "ndcg@10 | fold=2" in panels


@pytest.mark.parametrize(
    ("baseline", "title", "pairs"),
    [
        (None, "Every pair of systems compared", 6),
        (["random", "popularity"], "Systems compared with the baselines 'popularity', 'random'", 5),
    ],
)
def test_comparison_of_every_pair(
    sample, baseline: list[str] | None, title: str, pairs: int, tmp_path: Path
) -> None:
    # compare(...) without a baseline, a notebook's first call: a `baseline` column names
    # each row's other system; the chart failed in to_dict() on those labels
    compared = prm.compare(
        sample.recs, sample.truth, ["ndcg@10", "recall@20"], score="score", relevance="rel",
        baseline=baseline,
    )  # fmt: skip
    spec = render(plot_comparison(compared), tmp_path / "pairs.png")
    assert spec["title"]["text"] == title
    means, diffs = (
        next(values for values in spec["datasets"].values() if values and test(values[0]))
        for test in (lambda row: "zero" not in row, lambda row: "zero" in row)
    )
    # every system's mean once per metric, every pair's difference as "system - other"
    assert sorted((row["metric"], row["system"]) for row in means) == sorted(
        (metric, model) for metric in ("ndcg@10", "recall@20") for model in MODELS
    )
    assert len(diffs) == 2 * pairs
    assert all(row["_row"] == f"{row['system']} - {row['baseline']}" for row in diffs)
    assert "item_knn - popularity" in {row["_row"] for row in diffs}
    assert all(row["diff"] is not None for row in diffs)
    assert "baseline" not in [
        node["mark"].get("text") for node in walk(spec) if isinstance(node.get("mark"), dict)
    ]


def test_distribution_without_zeros_draws_only_the_boxes(tmp_path: Path) -> None:
    # novelty is never 0: an all-empty "users at 0" panel would say nothing
    per_user = pl.DataFrame(
        {"model": ["pop"] * 3 + ["knn"] * 3, "user": [1, 2, 3] * 2,
         "novelty@10": [2.1, 2.3, 2.2, 3.0, 4.5, 3.8]}
    )  # fmt: skip
    spec = render(plot_distribution(per_user, "novelty@10"), tmp_path / "novelty.png")
    assert len(spec["hconcat"]) == 1
    assert "novelty@10" in axis_titles(spec)
    assert "share of users with novelty@10 = 0" not in axis_titles(spec)
    marks = {node["mark"]["type"] for node in walk(spec) if isinstance(node.get("mark"), dict)}
    assert "bar" not in marks
    assert {"boxplot", "tick"} <= marks
    boxes = next(values for values in spec["datasets"].values() if len(values) == 6)
    assert sorted(row["novelty@10"] for row in boxes) == sorted(per_user["novelty@10"])


def test_distribution(per_user: pl.DataFrame, tmp_path: Path) -> None:
    spec = render(plot_distribution(per_user, "ndcg@10"), tmp_path / "distribution.png")
    assert spec["title"] == "ndcg@10 per user, by model"
    assert {"share of users with ndcg@10 = 0", "ndcg@10 of users above 0"} <= axis_titles(spec)
    shares = next(
        values for values in spec["datasets"].values() if values and "at_zero" in values[0]
    )
    by_model = {row["model"]: row for row in shares}
    assert sorted(by_model) == MODELS
    expected = per_user.filter(pl.col("model") == "random")["ndcg@10"].drop_nulls()
    assert by_model["random"]["at_zero"] == pytest.approx((expected == 0).mean())
    assert by_model["random"]["at_zero"] > by_model["two_tower"]["at_zero"]
    marks = {node["mark"]["type"] for node in walk(spec) if isinstance(node.get("mark"), dict)}
    assert {"bar", "boxplot", "tick"} <= marks


def test_segments(per_user: pl.DataFrame, sample, tmp_path: Path) -> None:
    order = ["new", "casual", "active"]
    spec = render(
        plot_segments(per_user, "ndcg@10", sample.users, order=order), tmp_path / "segments.png"
    )
    assert spec["title"] == "Mean ndcg@10 by segment and model (95% confidence intervals)"
    assert {"segment (users)", "mean ndcg@10 (95% interval)"} <= axis_titles(spec)
    x = spec["layer"][0]["encoding"]["x"]
    assert [label.split(" ")[0] for label in x["sort"]] == order
    rows = spec["datasets"][spec["data"]["name"]]
    row = next(r for r in rows if r["segment"] == "new" and r["model"] == "two_tower")
    values = (
        per_user.join(sample.users, on="user")
        .filter(pl.col("segment") == "new", pl.col("model") == "two_tower")["ndcg@10"]
        .drop_nulls()
    )
    half = 1.959964 * values.std() / values.len() ** 0.5
    assert row["n"] == values.len()
    assert row["mean"] == pytest.approx(values.mean())
    assert row["ci_high"] - row["mean"] == pytest.approx(half, rel=1e-6)


def test_other_by_columns_get_their_own_rows(
    per_user: pl.DataFrame, sample, tmp_path: Path
) -> None:
    folds = pl.concat([per_user.with_columns(fold=pl.lit(f)) for f in (1, 2)])
    spec = render(plot_distribution(folds, "ndcg@10", by="fold"), tmp_path / "folds.png")
    shares = next(v for v in spec["datasets"].values() if v and "at_zero" in v[0])
    assert len(shares) == 8
    assert {"model=random | fold=2", "model=two_tower | fold=1"} <= {r["model"] for r in shares}
    spec = render(plot_segments(folds, "ndcg@10", sample.users, by=["fold"]), tmp_path / "s.png")
    rows = spec["datasets"][spec["data"]["name"]]
    assert len({r["model"] for r in rows}) == 8
    with pytest.raises(ValueError, match="per_user has no column 'split'"):
        plot_distribution(folds, "ndcg@10", by="split")


def test_segments_refuses_two_segments_for_one_user(per_user: pl.DataFrame) -> None:
    segments = pl.DataFrame({"user": [0, 0], "segment": ["a", "b"]})
    with pytest.raises(
        ValueError, match="segments has 2 rows for users that appear more than once"
    ):
        plot_segments(per_user, "ndcg@10", segments)


def test_long_tail(sample, tmp_path: Path) -> None:
    spec = render(
        plot_long_tail(sample.recs, sample.interactions, k=10), tmp_path / "long_tail.png"
    )
    assert spec["title"]["text"] == "Exposure by item popularity (top 10), by model"
    for layer in spec["layer"]:
        assert layer["encoding"]["x"]["scale"] == {"type": "log"}
        assert layer["encoding"]["y"]["scale"] == {"type": "log"}
    assert any("item popularity rank" in title for title in axis_titles(spec))
    rows = [row for values in spec["datasets"].values() for row in values]
    # each system's shares (times items per bin) add up to 1: every slot is counted once
    for model in [*MODELS, "training interactions"]:
        total = sum(r["share"] * r["items_in_bin"] for r in rows if r["model"] == model)
        assert total == pytest.approx(1.0), model
    # popularity puts far more of its slots on the head than random does
    head = {r["model"]: r["share"] for r in rows if r["bin_start"] == 1}
    assert head["popularity"] > 10 * head.get("random", 0.0)
    slots = sum(r["slots"] for r in rows if r["model"] == "popularity")
    assert slots == 10 * sample.users.height


def test_bad_input_is_named(
    per_user: pl.DataFrame, curves: pl.DataFrame, comparison: pl.DataFrame
) -> None:
    with pytest.raises(ValueError, match="frame has no column 'k'"):
        plot_curves(curves.drop("k"))
    with pytest.raises(ValueError, match="per_user has no column 'map@12'"):
        plot_distribution(per_user, "map@12")
    with pytest.raises(TypeError, match="must be a Polars DataFrame"):
        plot_distribution({"model": ["a"]}, "ndcg@10")
    with pytest.raises(TypeError, match="column 'significant' must be Boolean"):
        plot_comparison(comparison.with_columns(pl.col("significant").cast(pl.Float64)))
    with pytest.raises(ValueError, match="confidence must be between 0 and 1"):
        plot_segments(per_user, "ndcg@10", per_user, confidence=95)


def test_pandas_frames_work(per_user: pl.DataFrame, tmp_path: Path) -> None:
    pytest.importorskip("pandas")
    spec = render(plot_distribution(per_user.to_pandas(), "recall@20"), tmp_path / "pd.png")
    assert spec["title"] == "recall@20 per user, by model"


def test_without_altair_the_error_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, curves: pl.DataFrame
) -> None:
    real_import = builtins.__import__

    def blocked(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "altair" or name.startswith("altair."):
            raise ImportError(f"No module named {name!r}")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", blocked)
    with pytest.raises(
        ImportError, match=r"pip install altair vl-convert-python \(the package's plot extra\)"
    ):
        plot_curves(curves)


def test_charts_are_json_serialisable(curves: pl.DataFrame) -> None:
    # users save to .html/.json too: the spec must be plain JSON
    json.dumps(plots.plot_curves(curves).to_dict())


def test_trec_charts_say_queries(tmp_path: Path) -> None:
    per_query = pl.DataFrame(
        {"model": ["bm25"] * 3 + ["dense"] * 3, "user": [1, 2, 3] * 2,
         "map": [0.0, 0.3, 0.5, 0.2, 0.0, 0.9]}
    )  # fmt: skip
    compared = prm.compare_per_user(per_query, baseline="bm25")
    comparison = render(plot_comparison(compared, unit="queries"), tmp_path / "c.png")
    distribution = render(plot_distribution(per_query, "map", unit="queries"), tmp_path / "d.png")
    curves = pl.DataFrame(
        {"model": ["bm25"] * 2, "metric": ["map"] * 2, "k": [1, 2], "value": [0.1, 0.2]}
    )
    curve = render(plot_curves(curves, unit="queries"), tmp_path / "k.png")
    titles = axis_titles(comparison) | axis_titles(distribution) | axis_titles(curve)
    assert "mean over queries (with confidence interval)" in titles
    assert "share of queries with map = 0" in titles
    assert "mean over queries" in titles
    assert not [title for title in titles if "user" in title]


def test_every_chart_is_at_the_top_level() -> None:
    # prm.plot_curves(...) as prm.plot_critical_difference(...): no deep import to find
    for name in plots.__all__:
        assert name in prm.__all__, name
        assert getattr(prm, name) is getattr(plots, name)
