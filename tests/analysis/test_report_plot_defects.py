"""Reported defects of the report and the charts, each pinned (issue "Statistics you can publish").

Each failed before its fix: a LaTeX legend whose ``<`` printed as an inverted
exclamation mark, systems past the 26th labelled ``{``, ``|``, ``}``..., a
legend that did not say n, a raw Polars join error when the segments' user
ids had another type, ``plot_curves`` refusing the curves of one system and
``plot_long_tail`` drawing ``bins + 1`` bins.
"""

from __future__ import annotations

import string
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_rankmetrics as prm
from polars_rankmetrics.analysis import plots

pytest.importorskip("altair")


def _scores(systems: int, users: int = 6) -> pl.DataFrame:
    # system s scores s / 100 above the first on every user: every pair differs
    return pl.DataFrame(
        {
            "model": [f"s{s:02d}" for s in range(systems) for _ in range(users)],
            "user": list(range(users)) * systems,
            "ap": [0.01 * s + 0.001 * u for s in range(systems) for u in range(users)],
        }
    )


def test_the_latex_legend_escapes_less_than() -> None:
    latex = prm.report(prm.compare_per_user(_scores(2), baseline="s00"), format="latex")
    assert isinstance(latex, str)
    legend = latex.split(r"\end{tabular}")[1]
    assert "<" not in legend
    assert r"p \textless{} 0.05" in legend


@pytest.mark.parametrize(
    ("options", "stated"),
    [
        (
            {},
            [
                "95% t-interval",
                "paired t-test, two-sided",
                "Holm-adjusted p < 0.05",
                "over 6 users",
            ],
        ),
        (
            {"test": "randomization", "correction": "bh", "alpha": 0.01, "n_resamples": 999},
            ["paired randomization test, B = 999", "Benjamini-Hochberg-adjusted p < 0.01"],
        ),
        (
            {"test": "wilcoxon", "correction": "none", "ci": 0.9, "ci_method": "bootstrap"},
            ["90% percentile bootstrap interval, 10,000 resamples", "unadjusted p < 0.05"],
        ),
        (
            {"hypothesis": "noninferiority", "margin": 0.005},
            ["shown non-inferior to s00 (margin 0.005)", "H0: mean difference <= -0.005"],
        ),
        (
            {"hypothesis": "equivalence", "margin": 0.02},
            ["shown equivalent to s00 (within +-0.02)", "TOST against +-0.02"],
        ),
        ({"hypothesis": "superiority"}, ["one-sided, H0: mean difference <= 0"]),
    ],
)
def test_the_legend_states_how_the_comparison_was_made(
    options: dict[str, Any], stated: list[str]
) -> None:
    markdown = prm.report(
        prm.compare_per_user(_scores(2), baseline="s00", **options), format="markdown"
    )
    assert isinstance(markdown, str)
    legend = markdown.split("\n\n")[1].replace("\n", " ")
    for words in stated:
        assert words in legend
    if options.get("hypothesis") in ("noninferiority", "equivalence", "superiority"):
        assert "significantly below" not in legend


def test_a_system_shown_noninferior_with_a_lower_mean_gets_the_upward_mark() -> None:
    # s01 is 0.001 below s00 on every user: within a 0.01 margin, so non-inferior, and a
    # mark for "below" would misread the decision
    scores = pl.DataFrame(
        {
            "model": ["s00"] * 6 + ["s01"] * 6,
            "user": list(range(6)) * 2,
            "ap": [0.3, 0.5, 0.2, 0.4, 0.6, 0.1, 0.299, 0.4985, 0.199, 0.399, 0.5995, 0.099],
        }
    )
    cmp = prm.compare_per_user(scores, baseline="s00", hypothesis="noninferiority", margin=0.01)
    assert cmp.filter(pl.col("system") == "s01")["significant"][0]
    built = prm.report(cmp)
    assert isinstance(built, prm.analysis.Report)
    assert "†" in built.to_markdown().split("\n\n")[0]
    assert "‡" not in built.to_markdown()


def test_tukey_hsd_states_its_family_adjustment_and_resamples() -> None:
    legend = prm.report(
        prm.compare_per_user(_scores(3), test="tukey_hsd", n_resamples=500), format="markdown"
    )
    assert isinstance(legend, str)
    assert "randomized Tukey HSD, B = 500, two-sided; family-adjusted p < 0.05" in legend


def test_more_than_26_systems_get_letters_not_symbols() -> None:
    built = prm.report(prm.compare_per_user(_scores(28), correction="none"))
    assert not isinstance(built, str)
    allowed = set(string.ascii_lowercase) | {","}
    for row in built.marks:
        for mark in row:
            assert set(mark) <= allowed, mark
    # the last system beats every other, the 27th and 28th are labelled aa and ab
    assert built.marks[-1][0].endswith("z,aa")
    assert "aa = s26, ab = s27" in built.legend


def test_the_legend_says_how_many_users() -> None:
    text = prm.report(prm.compare_per_user(_scores(2, users=5), baseline="s00"), format="markdown")
    assert "over 5 users" in str(text)
    uneven = _scores(2, users=5).filter(~((pl.col("model") == "s01") & (pl.col("user") == 0)))
    text = str(prm.report(prm.compare_per_user(uneven, baseline="s00"), format="markdown"))
    assert "(n=5)" in text
    assert "(n=4)" in text


def test_plot_segments_refuses_user_ids_of_another_type_clearly() -> None:
    per_user = pl.DataFrame({"model": ["a", "a"], "user": [1, 2], "ap": [0.1, 0.2]})
    segments = pl.DataFrame({"user": ["1", "2"], "segment": ["x", "y"]})
    with pytest.raises(TypeError, match=r"per_user and segments have different 'user' types"):
        plots.plot_segments(per_user, "ap", segments)


def test_plot_curves_draws_the_curves_of_one_system(tmp_path: Path) -> None:
    pytest.importorskip("vl_convert")
    recs = pl.DataFrame({"user": [1, 1, 2, 2], "item": list("abab"), "rank": [1, 2] * 2})
    truth = pl.DataFrame({"user": [1, 2], "item": ["b", "a"]})
    curves = prm.curves(recs, truth, ["recall", "ndcg"], k=[1, 2])
    chart = plots.plot_curves(curves)
    path = tmp_path / "one.png"
    chart.save(path)
    assert path.stat().st_size > 5_000
    spec: dict[str, Any] = chart.to_dict()
    assert spec["spec"]["layer"][-1]["encoding"]["color"]["field"] == "model"


@pytest.mark.parametrize("bins", [3, 5, 20])
def test_plot_long_tail_draws_at_most_its_bins(bins: int) -> None:
    items = [f"i{n}" for n in range(60)]
    history = pl.DataFrame(
        {"user": [u for u in range(60) for _ in range(u % 7 + 1)],
         "item": [items[(u * 7 + j) % 60] for u in range(60) for j in range(u % 7 + 1)]}
    )  # fmt: skip
    recs = pl.DataFrame(
        {"model": ["m"] * 120, "user": [u for u in range(60) for _ in range(2)],
         "item": [items[(u + j) % 60] for u in range(60) for j in range(2)],
         "rank": [1, 2] * 60}
    )  # fmt: skip
    chart = plots.plot_long_tail(recs, history, score=None, bins=bins)
    spec = chart.to_dict()
    datasets = spec["datasets"].values()
    starts = {row["bin_start"] for rows in datasets for row in rows if "bin_start" in row}
    assert 1 <= len(starts) <= bins
