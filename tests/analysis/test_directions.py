"""Every decision knows which way is better: a regression is never reported as a pass.

For every measure of the registry (the built-in ones and those written in
``tests/user_measures.py``), a candidate worse than the baseline by the
measure's own direction (lower NDCG, higher fall-out or mean rank) goes
through each decision surface: ``compare``'s one-sided hypotheses, its wins
and losses, the report's marks and letters, Friedman's mean ranks and the
release gate. Each must say "worse". A measure without a better side
(``arp``, ``novelty``...) is refused by every decision, naming it, unless the
caller says which way is better. End to end, the issue's own example: moving
every relevant item from rank 1 to rank 3 fails the gate on ``fallout@2``
and ``mean_rank``, and ``optimize_fusion`` finds the weights of the better run.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_rankmetrics as prm
from polars_rankmetrics._measures import Measure, all_measures
from polars_rankmetrics.cli import main as cli_main
from tests import user_measures  # noqa: F401 - registers the measures written outside

SIGN = {"higher": 1.0, "lower": -1.0}


def _label(measure: Measure) -> str:
    return measure.name if measure.cutoff == "none" else f"{measure.name}@10"


MEASURES = {_label(m): m for m in all_measures()}
DECIDED = [label for label, m in MEASURES.items() if m.direction != "none"]
DESCRIPTIVE = [label for label, m in MEASURES.items() if m.direction == "none"]


def _regression(label: str, users: int = 30) -> pl.DataFrame:
    """Per-user values: the candidate worse than the baseline for every user, by the direction."""
    rng = np.random.default_rng(7)
    base = rng.uniform(0.3, 0.7, users)
    worse = base - SIGN[MEASURES[label].direction] * rng.uniform(0.05, 0.2, users)
    return pl.DataFrame(
        {
            "model": ["baseline"] * users + ["candidate"] * users,
            "user": [*range(users), *range(users)],
            label: [*base, *worse],
        }
    )


def test_the_registry_has_both_directions_and_descriptive_measures() -> None:
    directions = {m.direction for m in MEASURES.values()}
    assert directions == {"higher", "lower", "none"}
    assert {"fallout@10", "mean_rank", "gini@10", "relevant_position@10"} <= {
        label for label in DECIDED if MEASURES[label].direction == "lower"
    }
    assert {"arp@10", "novelty@10", "judged_share@10"} <= set(DESCRIPTIVE)


@pytest.mark.parametrize("label", DECIDED)
def test_compare_calls_a_regression_worse(label: str) -> None:
    scores = _regression(label)
    for hypothesis in ("superiority", "noninferiority"):
        margin = 0.01 if hypothesis == "noninferiority" else None
        row = (
            prm.compare_per_user(scores, baseline="baseline", hypothesis=hypothesis, margin=margin)
            .filter(pl.col("system") == "candidate")
            .row(0, named=True)
        )
        assert row["direction"] == MEASURES[label].direction
        assert row["significant"] is False, (label, hypothesis, row)
        assert row["p_value"] > 0.5
    two_sided = prm.compare_per_user(scores, baseline="baseline")
    row = two_sided.filter(pl.col("system") == "candidate").row(0, named=True)
    assert (row["wins"], row["losses"]) == (0, 30), label
    assert row["significant"] is True
    report = prm.report(two_sided)
    candidate = report.rows.index(next(r for r in report.rows if r[0] == "candidate"))
    assert report.marks[candidate] == ["‡"], (label, report.marks)
    assert "‡ significantly worse" in report.legend
    assert f"{MEASURES[label].direction} is better: {label}" in report.legend


@pytest.mark.parametrize("label", DECIDED)
def test_every_pair_letters_the_better_system(label: str) -> None:
    scores = _regression(label)
    report = prm.report(prm.compare_per_user(scores))
    marks = dict(zip([row[0] for row in report.rows], report.marks, strict=True))
    # a = baseline, b = candidate: the baseline is better, so it carries b's letter
    assert marks == {"baseline": ["b"], "candidate": [""]}, (label, marks)


@pytest.mark.parametrize("label", DECIDED)
def test_friedman_ranks_the_better_system_first(label: str) -> None:
    rng = np.random.default_rng(3)
    means = []
    for block in range(6):
        base = float(rng.uniform(0.3, 0.7))
        worse = base - SIGN[MEASURES[label].direction] * 0.1
        means += [("baseline", block, base), ("candidate", block, worse)]
    frame = pl.DataFrame(means, schema=["model", "dataset", label], orient="row")
    result = prm.friedman(frame, label)
    assert result.mean_ranks.get_column("system").to_list() == ["baseline", "candidate"]
    assert result.direction == MEASURES[label].direction


@pytest.mark.parametrize("label", DESCRIPTIVE)
def test_a_measure_without_a_better_side_is_refused_by_every_decision(label: str) -> None:
    scores = _regression_without_direction(label)
    message = f"{label!r} is descriptive"
    with pytest.raises(ValueError, match=message):
        prm.compare_per_user(scores, baseline="baseline", hypothesis="superiority")
    with pytest.raises(ValueError, match=message):
        prm.friedman(scores.rename({"user": "dataset"}), label)
    # the numbers stay; no win or loss is counted, the report marks by value
    two_sided = prm.compare_per_user(scores, baseline="baseline")
    row = two_sided.filter(pl.col("system") == "candidate").row(0, named=True)
    assert row["direction"] == "none"
    assert (row["wins"], row["ties"], row["losses"]) == (None, None, None)
    assert "↑/↓ significantly above/below" in prm.report(two_sided).legend
    # told which way is better, they decide
    told = prm.compare_per_user(
        scores, baseline="baseline", hypothesis="superiority", direction={label: "lower"}
    )
    assert told.filter(pl.col("system") == "candidate").row(0, named=True)["significant"]


def _regression_without_direction(label: str) -> pl.DataFrame:
    users = 20
    base = np.linspace(0.3, 0.7, users)
    return pl.DataFrame(
        {
            "model": ["baseline"] * users + ["candidate"] * users,
            "user": [*range(users), *range(users)],
            label: [*base, *(base - 0.1)],
        }
    )


def test_a_column_that_is_no_metric_string_needs_a_direction() -> None:
    scores = _regression_without_direction("my_score")
    with pytest.raises(ValueError, match="'my_score' is not a metric string"):
        prm.compare_per_user(scores, baseline="baseline", hypothesis="noninferiority", margin=0.1)
    with pytest.raises(ValueError, match="direction must be one of"):
        prm.compare_per_user(scores, baseline="baseline", direction="up")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not among the metrics"):
        prm.compare_per_user(scores, baseline="baseline", direction={"other": "higher"})
    rows = prm.compare_per_user(scores, baseline="baseline", direction="higher")
    assert rows.filter(pl.col("system") == "candidate").row(0, named=True)["losses"] == 20


# ------------------------------------------------------------------ end to end


def _ranked(first: bool) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Each user's relevant item at rank 1 (the baseline) or rank 3 (the regression)."""
    rows, truth = [], []
    for user in range(40):
        relevant, judged = f"r{user}", f"n{user}"
        # the judged non-relevant item takes the relevant one's place in the regression
        order = [relevant, "x", "y", judged] if first else [judged, "x", relevant, "y"]
        rows += [(user, item, position) for position, item in enumerate(order, 1)]
        truth += [(user, relevant, 1), (user, judged, 0)]
    recs = pl.DataFrame(rows, schema=["user", "item", "rank"], orient="row")
    return recs, pl.DataFrame(truth, schema=["user", "item", "rel"], orient="row")


def _systems() -> tuple[pl.DataFrame, pl.DataFrame]:
    good, truth = _ranked(first=True)
    bad, _ = _ranked(first=False)
    recs = pl.concat(
        [good.with_columns(model=pl.lit("live")), bad.with_columns(model=pl.lit("candidate"))]
    )
    return recs, truth


def _cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli_main(argv)
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("metric", ["fallout@2", "mean_rank", "mrr@2", "ndcg@2"])
def test_the_gate_fails_a_regression(metric: str, tmp_path: Path) -> None:
    recs, truth = _systems()
    values = prm.evaluate(recs, truth, metric, by="model", relevance="rel")
    worse = dict(values.iter_rows())
    # the regression moved every relevant item from 1 to 3: worse by every one of them
    sign = SIGN[MEASURES[metric if metric in MEASURES else metric.replace("@2", "@10")].direction]
    assert sign * (worse["candidate"] - worse["live"]) < 0, worse
    recs.write_parquet(tmp_path / "recs.parquet")
    truth.write_parquet(tmp_path / "truth.parquet")
    status, out, err = _cli(
        ["gate", str(tmp_path / "recs.parquet"), str(tmp_path / "truth.parquet"),
         "--baseline", "live", "-m", metric, "--margin", "0.01", "--relevance", "rel"]
    )  # fmt: skip
    assert status == 1, out + err
    assert "FAIL not shown non-inferior" in out
    assert "gate: FAIL (0 of 1 comparisons pass)" in out


def test_the_gate_refuses_a_descriptive_measure_unless_told(tmp_path: Path) -> None:
    recs, truth = _systems()
    recs.write_parquet(tmp_path / "recs.parquet")
    truth.write_parquet(tmp_path / "truth.parquet")
    argv = [
        "gate", str(tmp_path / "recs.parquet"), str(tmp_path / "truth.parquet"),
        "--baseline", "live", "-m", "judged@2", "--margin", "0.01", "--relevance", "rel",
    ]  # fmt: skip
    status, _, err = _cli(argv)
    assert status == 2
    assert "'judged@2' is descriptive" in err
    assert "--direction" in err
    # judged@2: live shows one judged item of two, the candidate too (its relevant one
    # moved below the cut, a judged non-relevant one came up): equal for every user
    status, out, err = _cli([*argv, "--direction", "judged@2=higher"])
    assert status == 0, err
    assert "judged@2\thigher is better" in out


@pytest.mark.parametrize("metric", ["mean_rank", "fallout@2", "ndcg@2"])
def test_optimize_fusion_finds_the_better_run(metric: str) -> None:
    recs, truth = _systems()
    runs = recs.rename({"model": "run"}).with_columns(score=-pl.col("rank").cast(pl.Float64))
    found = prm.optimize_fusion(
        runs.drop("rank"), truth, metric=metric, step=0.25, relevance="rel", norm=None
    )
    assert found.best["weights"]["live"] > found.best["weights"]["candidate"], found.grid
    best = prm.evaluate(recs, truth, metric, by="model", relevance="rel")
    live = dict(best.iter_rows())["live"]
    assert found.best_score == pytest.approx(live)


def test_optimize_fusion_refuses_a_descriptive_measure() -> None:
    recs, truth = _systems()
    runs = recs.rename({"model": "run"}).with_columns(score=-pl.col("rank").cast(pl.Float64))
    with pytest.raises(ValueError, match="'judged@2' is descriptive"):
        prm.optimize_fusion(runs.drop("rank"), truth, metric="judged@2", relevance="rel")
    found: Any = prm.optimize_fusion(
        runs.drop("rank"), truth, metric="judged@2", relevance="rel", step=0.5,
        direction="higher",
    )  # fmt: skip
    assert found.best_score == found.grid.get_column("judged@2").max()
