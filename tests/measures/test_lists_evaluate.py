"""The beyond-accuracy measures through ``evaluate`` (the measure registry).

``evaluate`` must give exactly ``list_metrics``' numbers, alone or mixed
with accuracy metrics (which must not change), on every backend.
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankmetrics as prm
from polars_rankmetrics.cli import main
from tests.conftest import Backend
from tests.measures.test_lists import CATALOG, HISTORY, MULTI, RECS

ALL = [
    "coverage@2",
    "novelty@2",
    "arp",
    "long_tail@2",
    "gini@2",
    "personalization",
    "ild@3",
    "calibration@3",
]
PER_USER = ["novelty@2", "arp", "long_tail@2", "ild@3", "calibration@3"]
TRUTH = {"user": [1, 2, 4], "item": ["b", "z", "a"]}  # user 4: truth, no list


def _inputs(backend: Backend, catalog: dict[str, Any] = CATALOG) -> dict[str, Any]:
    return {
        "interactions": backend.frame(HISTORY),
        "items": backend.frame(catalog),
        "category": "genre",
    }


@pytest.mark.parametrize("catalog", [CATALOG, MULTI], ids=["one-category", "several"])
def test_evaluate_without_truth_equals_list_metrics(
    backend: Backend, catalog: dict[str, Any]
) -> None:
    recs = backend.frame(RECS)
    got = backend.polars(recs.rank.evaluate(None, ALL, **_inputs(backend, catalog)))
    expected = backend.polars(prm.list_metrics(recs, ALL, **_inputs(backend, catalog)))
    assert_frame_equal(got, expected)
    # the hand-computed values of tests/measures/test_lists.py
    if catalog is CATALOG:
        assert got["coverage@2"][0] == pytest.approx(0.5)
        assert got["novelty@2"][0] == pytest.approx(1.6552614282206957)
        assert got["gini@2"][0] == pytest.approx(0.575)
        assert got["personalization"][0] == pytest.approx(8 / 9)
        assert got["ild@3"][0] == pytest.approx(5 / 6)


def test_mixed_with_accuracy_metrics(backend: Backend) -> None:
    recs, truth = backend.frame(RECS), backend.frame(TRUTH)
    mixed = backend.polars(recs.rank.evaluate(truth, ["map@2", *ALL, "ndcg@3"], **_inputs(backend)))
    accuracy = backend.polars(recs.rank.evaluate(truth, ["map@2", "ndcg@3"]))
    described = backend.polars(prm.list_metrics(recs, ALL, **_inputs(backend)))
    assert_frame_equal(mixed.select("map@2", "ndcg@3"), accuracy)
    assert_frame_equal(mixed.select(ALL), described)


def test_mixed_per_user(backend: Backend) -> None:
    recs, truth = backend.frame(RECS), backend.frame(TRUTH)
    got = backend.polars(
        recs.rank.evaluate(
            truth, ["mrr", *PER_USER, "coverage@2"], per_user=True, **_inputs(backend)
        )
    )
    # users 1, 2 (truth and lists), 3 (a list, no truth: not judged), 4 (truth, no list)
    assert got["user"].to_list() == [1, 2, 3, 4]
    accuracy = backend.polars(recs.rank.evaluate(truth, ["mrr"], per_user=True))
    assert_frame_equal(got.filter(pl.col("mrr").is_not_null()).select("user", "mrr"), accuracy)
    assert got["mrr"][2] is None
    described = backend.polars(prm.list_metrics(recs, PER_USER, per_user=True, **_inputs(backend)))
    assert_frame_equal(got.filter(pl.col("user") < 4).select("user", *PER_USER), described)
    assert got.filter(pl.col("user") == 4).select(PER_USER).row(0) == (None,) * len(PER_USER)
    # a group measure shows its group's value on every row
    assert got["coverage@2"].to_list() == pytest.approx([0.5] * 4)


def test_parameters_in_the_metric_string(backend: Backend) -> None:
    recs = backend.frame(RECS)
    got = backend.polars(
        recs.rank.evaluate(
            None,
            ["long_tail(head_share=0.8)@2", "long_tail@2", "calibration(alpha=1)"],
            **_inputs(backend),
        )
    )
    # tests/measures/test_lists.py::test_long_tail: 0.5 with share 0.8, 2/3 with 0.2
    assert got["long_tail(head_share=0.8)@2"][0] == pytest.approx(0.5)
    assert got["long_tail@2"][0] == pytest.approx(2 / 3)
    assert got["calibration(alpha=1)"][0] == pytest.approx(0.0)
    # share 0: every item is in the tail (0.0 is a value, not a missing one)
    zero = recs.rank.evaluate(None, ["long_tail(head_share=0)"], **_inputs(backend))
    assert backend.polars(zero)["long_tail(head_share=0)"][0] == pytest.approx(1.0)


def test_groups_with_their_own_history() -> None:
    recs = pl.DataFrame(
        {
            "fold": [1, 1, 2, 2],
            "model": ["p", "q", "p", "q"],
            "user": [1, 1, 1, 1],
            "item": ["a", "b", "a", "b"],
            "rank": [1, 1, 1, 1],
        }
    )
    history = pl.DataFrame({"fold": [1, 1, 2], "user": [1, 2, 3], "item": ["a", "a", "b"]})
    got = prm.evaluate(recs, None, ["arp", "novelty"], interactions=history, by=["fold", "model"])
    # as tests/measures/test_lists.py::test_groups_side_by_side_with_their_own_history
    assert got["arp"].to_list() == pytest.approx([2.0, 0.0, 0.0, 1.0])
    assert got["novelty"].to_list() == pytest.approx([0.0, 1.0, 0.0, 0.0])


def test_per_user_parts_and_aggregate_agree_with_evaluate() -> None:
    recs, truth = pl.DataFrame(RECS), pl.DataFrame(TRUTH)
    metrics = ["map@2", *ALL]
    inputs = {"interactions": pl.DataFrame(HISTORY), "items": pl.DataFrame(CATALOG)}
    parts = prm.per_user_parts(recs, truth, metrics, category="genre", **inputs)
    assert_frame_equal(
        prm.aggregate(parts, metrics),
        prm.evaluate(recs, truth, metrics, category="genre", **inputs),
    )


def test_namespace_forwards_the_inputs() -> None:
    got = pl.DataFrame(RECS).rank.evaluate(None, ["arp@2"], interactions=pl.DataFrame(HISTORY))
    assert got["arp@2"][0] == pytest.approx(1.5)


def test_truth_is_needed_for_accuracy_metrics() -> None:
    with pytest.raises(ValueError, match=r"\['map@2'\] compare the lists with the truth"):
        prm.evaluate(pl.DataFrame(RECS), None, ["map@2", "arp"], interactions=pl.DataFrame(HISTORY))


def test_missing_inputs_name_the_parameter() -> None:
    with pytest.raises(ValueError, match=r"coverage need items="):
        prm.evaluate(pl.DataFrame(RECS), pl.DataFrame(TRUTH), ["map@2", "coverage@2"])


def test_bad_parameters_are_refused() -> None:
    with pytest.raises(ValueError, match=r"head_share must be between 0 and 1"):
        prm.evaluate(pl.DataFrame(RECS), None, ["long_tail(head_share=2)"])
    with pytest.raises(ValueError, match=r"alpha must be in \(0, 1\]"):
        prm.evaluate(pl.DataFrame(RECS), None, ["calibration(alpha=0)"])
    with pytest.raises(ValueError, match=r"'coverage' takes no parameters"):
        prm.evaluate(pl.DataFrame(RECS), None, ["coverage(alpha=0.5)"])
    # arp takes one parameter (popularity=users|interactions), and not alpha
    with pytest.raises(
        ValueError, match=r"unknown parameter 'alpha=0.5'.*'arp' takes \['popularity'\]"
    ):
        prm.evaluate(pl.DataFrame(RECS), None, ["arp(alpha=0.5)"])
    with pytest.raises(
        ValueError, match=r"'popularity'.*must be one of \['users', 'interactions'\]"
    ):
        prm.evaluate(pl.DataFrame(RECS), None, ["arp(popularity=rows)"])


def test_repeated_item_is_refused_even_beyond_a_hit() -> None:
    # a repeated non-relevant item changes no accuracy metric, but it changes coverage
    recs = pl.DataFrame({"user": [1, 1], "item": ["a", "a"], "rank": [1, 2]})
    with pytest.raises(ValueError, match=r"duplicated \(user, item\)"):
        prm.evaluate(recs, None, ["personalization"])


def test_command_line_takes_the_list_inputs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sample = prm.sample_data(n_users=200, n_items=150)
    paths = {name: tmp_path / f"{name}.parquet" for name in ("recs", "train", "items")}
    sample.recs.write_parquet(paths["recs"])
    sample.interactions.write_parquet(paths["train"])
    sample.items.write_parquet(paths["items"])
    sample.truth.write_csv(tmp_path / "truth.csv")
    metrics = ["map@10", "coverage@10", "novelty@10", "ild@10", "calibration@10"]
    status = main([
        "evaluate", str(paths["recs"]), str(tmp_path / "truth.csv"), "-m", *metrics,
        "--score", "score", "--by", "model", "--interactions", str(paths["train"]),
        "--items", str(paths["items"]), "--category", "categories", "--format", "csv",
    ])  # fmt: skip
    assert status == 0
    printed = pl.read_csv(io.StringIO(capsys.readouterr().out)).sort("model")

    # the CSV truth's ids are plain integers, numbers as the Parquet files' (the CLI's one
    # id rule): the API on the same frames gives the same numbers
    expected = prm.evaluate(
        sample.recs, sample.truth, metrics, score="score", by="model",
        interactions=sample.interactions, items=sample.items, category="categories",
    ).sort("model")  # fmt: skip
    assert_frame_equal(printed, expected, check_dtypes=False)
    # only list measures: no truth file needed
    assert main([
        "evaluate", str(paths["recs"]), "-m", "coverage@10", "--score", "score",
        "--by", "model", "--items", str(paths["items"]),
    ]) == 0  # fmt: skip
    # an accuracy metric without a truth file is refused in one line
    capsys.readouterr()
    refused = ["evaluate", str(paths["recs"]), "-m", "map@10", "--score", "score", "--by", "model"]
    assert main(refused) == 2
    assert "pass a truth file" in capsys.readouterr().err


def test_list_metrics_refuses_an_unknown_input_naming_the_closest() -> None:
    recs = pl.DataFrame({"user": [1, 1], "item": [1, 2], "rank": [1, 2]})
    with pytest.raises(TypeError, match=r"'itmes'; did you mean 'items'\?"):
        prm.list_metrics(recs, ["coverage@2"], itmes=pl.DataFrame({"item": [1, 2]}))  # type: ignore[call-arg]
