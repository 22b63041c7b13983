"""Risk-sensitive comparison: URisk, TRisk and GeoRisk in compare's result (risk_alpha=).

Checked against a worked example by hand, plain-loop textbooks of the papers'
formulas under hypothesis (URisk as ndeval's and gdeval's ``-riskAlpha`` print
it: each query's difference, a loss times 1 + alpha, averaged), scipy's paired
t statistic (TRisk at alpha = 0) and the surfaces that forward the option.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

import polars_rankmetrics as prm
from polars_rankmetrics.analysis import _risk
from polars_rankmetrics.cli import main

SCORES = pl.DataFrame(
    {
        "model": ["bm25"] * 4 + ["neural"] * 4 + ["sparse"] * 4,
        "user": [1, 2, 3, 4] * 3,
        "ap": [0.2, 0.4, 0.1, 0.5, 0.3, 0.6, 0.1, 0.8, 0.1, 0.1, 0.2, 0.9],
    }
)


def textbook_urisk(system: list[float], baseline: list[float], alpha: float) -> float:
    """ndeval/gdeval: per query, a loss weighted by 1 + alpha; the mean over queries."""
    total = 0.0
    for run, base in zip(system, baseline, strict=True):
        total += (1 + alpha) * (run - base) if run < base else run - base
    return total / len(system)


def textbook_trisk(system: list[float], baseline: list[float], alpha: float) -> float:
    weighted = [
        (1 + alpha) * (run - base) if run < base else run - base
        for run, base in zip(system, baseline, strict=True)
    ]
    n = len(weighted)
    mean = sum(weighted) / n
    variance = sum((value - mean) ** 2 for value in weighted) / (n - 1)
    return mean / math.sqrt(variance / n)


def textbook_georisk(table: list[list[float]], alpha: float) -> list[float]:
    """GeoRisk (Dincer, Macdonald & Ounis 2016) with loops: rows users, columns systems."""
    users, systems = len(table), len(table[0])
    column = [sum(table[j][i] for j in range(users)) for i in range(systems)]
    row = [sum(table[j]) for j in range(users)]
    total = sum(row)
    values = []
    for i in range(systems):
        zrisk = 0.0
        for j in range(users):
            expected = column[i] * row[j] / total if total else 0.0
            z = (table[j][i] - expected) / math.sqrt(expected) if expected > 0 else 0.0
            zrisk += z * (1 + alpha) if z < 0 else z
        phi = 0.5 * (1 + math.erf(zrisk / users / math.sqrt(2)))
        values.append(math.sqrt(column[i] / users * phi))
    return values


def test_worked_example_against_a_baseline() -> None:
    result = prm.compare_per_user(SCORES, baseline="bm25", risk_alpha=1.0)
    rows = {row["system"]: row for row in result.iter_rows(named=True)}
    # neural - bm25 = (0.1, 0.2, 0, 0.3): no loss, URisk is the mean gain 0.15 and TRisk
    # the paired t statistic 0.15 / (0.129099 / 2) = 2.323790
    assert rows["neural"]["urisk"] == pytest.approx(0.15, abs=1e-15)
    assert rows["neural"]["trisk"] == pytest.approx(2.3237900077244, rel=1e-12)
    # sparse - bm25 = (-0.1, -0.3, 0.1, 0.4): the losses doubled, (-0.2 - 0.6 + 0.1 + 0.4) / 4
    assert rows["sparse"]["urisk"] == pytest.approx(-0.075, abs=1e-15)
    weighted = np.array([-0.2, -0.6, 0.1, 0.4])
    expected_t = weighted.mean() / (weighted.std(ddof=1) / 2)
    assert rows["sparse"]["trisk"] == pytest.approx(expected_t, rel=1e-12)
    assert rows["bm25"]["urisk"] is None
    assert rows["bm25"]["trisk"] is None
    table = SCORES.pivot("model", index="user", values="ap").sort("user")
    matrix = table.select("bm25", "neural", "sparse").rows()
    expected = dict(
        zip(
            ["bm25", "neural", "sparse"],
            textbook_georisk([list(r) for r in matrix], 1.0),
            strict=True,
        )
    )
    for name, value in expected.items():
        assert rows[name]["georisk"] == pytest.approx(value, rel=1e-12)
    assert result.get_column("risk_alpha").to_list() == [1.0, 1.0, 1.0]


def test_without_risk_alpha_no_risk_columns() -> None:
    columns = prm.compare_per_user(SCORES, baseline="bm25").columns
    assert not {"urisk", "trisk", "georisk", "risk_alpha"} & set(columns)


def test_alpha_zero_is_the_mean_difference_and_the_t_statistic() -> None:
    result = prm.compare_per_user(SCORES, baseline="bm25", risk_alpha=0.0).filter(
        pl.col("system") == "sparse"
    )
    row = result.row(0, named=True)
    assert row["urisk"] == pytest.approx(row["diff"], abs=1e-15)
    sparse = SCORES.filter(pl.col("model") == "sparse").get_column("ap").to_numpy()
    bm25 = SCORES.filter(pl.col("model") == "bm25").get_column("ap").to_numpy()
    assert row["trisk"] == pytest.approx(stats.ttest_rel(sparse, bm25).statistic, rel=1e-12)


def test_every_pair_reads_system_against_baseline() -> None:
    result = prm.compare_per_user(SCORES, risk_alpha=2.0).filter(pl.col("baseline").is_not_null())
    for row in result.iter_rows(named=True):
        a = SCORES.filter(pl.col("model") == row["system"]).sort("user").get_column("ap")
        b = SCORES.filter(pl.col("model") == row["baseline"]).sort("user").get_column("ap")
        assert row["urisk"] == pytest.approx(
            textbook_urisk(a.to_list(), b.to_list(), 2.0), abs=1e-15
        )


def test_lower_is_better_reads_the_improvement() -> None:
    scores = pl.DataFrame(
        {
            "model": ["a"] * 3 + ["b"] * 3,
            "user": [1, 2, 3] * 2,
            "mean_rank": [2.0, 4.0, 6.0, 3.0, 4.0, 5.0],
        }
    )
    row = (
        prm.compare_per_user(scores, baseline="a", risk_alpha=1.0)
        .filter(pl.col("system") == "b")
        .row(0, named=True)
    )
    # improvement g = -(b - a) = (-1, 0, 1): the loss on user 1 doubled, (-2 + 0 + 1) / 3
    assert row["direction"] == "lower"
    assert row["urisk"] == pytest.approx(-1 / 3, abs=1e-15)
    # GeoRisk reads effectiveness (higher is better): none for a rank
    assert row["georisk"] is None


def test_no_direction_no_risk() -> None:
    scores = SCORES.rename({"ap": "clicks_share"})
    row = (
        prm.compare_per_user(scores, baseline="bm25", risk_alpha=1.0)
        .filter(pl.col("system") == "neural")
        .row(0, named=True)
    )
    assert row["direction"] is None
    assert (row["urisk"], row["trisk"], row["georisk"]) == (None, None, None)
    given_direction = prm.compare_per_user(
        scores, baseline="bm25", risk_alpha=1.0, direction="higher"
    )
    assert given_direction.filter(pl.col("system") == "neural")["urisk"][0] == pytest.approx(0.15)


def test_constant_difference_has_no_trisk() -> None:
    scores = pl.DataFrame(
        {"model": ["a"] * 3 + ["b"] * 3, "user": [1, 2, 3] * 2, "ap": [0.1, 0.2, 0.3] * 2}
    )
    row = prm.compare_per_user(scores, baseline="a", risk_alpha=1.0).row(1, named=True)
    assert row["urisk"] == 0.0
    assert row["trisk"] is None  # no spread: the t statistic is undefined


@pytest.mark.parametrize("alpha", [-0.5, math.nan, math.inf, True, "1"])
def test_bad_risk_alpha_is_refused(alpha: object) -> None:
    with pytest.raises((ValueError, TypeError), match="risk_alpha"):
        prm.compare_per_user(SCORES, baseline="bm25", risk_alpha=alpha)  # type: ignore[arg-type]


def test_compare_forwards_risk_alpha() -> None:
    recs = pl.DataFrame(
        {
            "model": ["a", "a", "b", "b", "a", "b"],
            "user": [1, 1, 1, 1, 2, 2],
            "item": ["x", "y", "y", "x", "z", "w"],
            "rank": [1, 2, 1, 2, 1, 1],
        }
    )
    truth = pl.DataFrame({"user": [1, 2], "item": ["x", "z"]})
    result = prm.compare(recs, truth, ["mrr"], baseline="a", risk_alpha=1.0)
    row = result.filter(pl.col("system") == "b").row(0, named=True)
    # b - a = (0.5 - 1, 0 - 1): both losses doubled, (-1 - 2) / 2
    assert row["urisk"] == pytest.approx(-1.5)
    assert recs.rank.compare(truth, ["mrr"], baseline="a", risk_alpha=1.0).equals(result)


def test_cli_risk_alpha(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recs, truth, out = tmp_path / "recs.csv", tmp_path / "truth.csv", tmp_path / "result.csv"
    pl.DataFrame(
        {"model": ["a", "a", "b", "b"], "user": [1, 2, 1, 2], "item": ["x", "z", "y", "z"],
         "rank": [1, 1, 1, 1]}
    ).write_csv(recs)  # fmt: skip
    pl.DataFrame({"user": [1, 2], "item": ["x", "z"]}).write_csv(truth)
    code = main(
        ["compare", str(recs), str(truth), "--metrics", "mrr", "--baseline", "a",
         "--risk-alpha", "1", "--output", str(out)]
    )  # fmt: skip
    assert code == 0
    row = pl.read_csv(out).filter(pl.col("system") == "b").row(0, named=True)
    assert row["urisk"] == pytest.approx(-1.0)  # (-2 + 0) / 2
    assert "URisk" in capsys.readouterr().out


scores_strategy = st.lists(
    st.tuples(
        st.sampled_from([0.0, 0.25, 0.5, 1.0]) | st.floats(0, 1),
        st.sampled_from([0.0, 0.25, 0.5, 1.0]) | st.floats(0, 1),
        st.floats(0, 1),
    ),
    min_size=2,
    max_size=25,
)


@settings(max_examples=60, deadline=None)
@given(scores_strategy, st.sampled_from([0.0, 0.5, 1.0, 5.0]))
def test_risks_equal_the_textbooks(rows: list[tuple[float, float, float]], alpha: float) -> None:
    a = [row[0] for row in rows]
    b = [row[1] for row in rows]
    gain = np.array(a) - np.array(b)
    assert _risk.urisk(gain, alpha) == pytest.approx(textbook_urisk(a, b, alpha), abs=1e-12)
    spread = _risk.risk_weighted(gain, alpha)
    if spread.std(ddof=1) > 1e-9:
        assert _risk.trisk(gain, alpha) == pytest.approx(
            textbook_trisk(a, b, alpha), rel=1e-9, abs=1e-9
        )
    table = [list(row) for row in rows]
    assert _risk.georisk(np.array(table), alpha) == pytest.approx(
        textbook_georisk(table, alpha), rel=1e-9, abs=1e-12
    )


def test_georisk_of_identical_systems_is_their_mean_root_half() -> None:
    # e = x everywhere: z = 0, Phi(0) = 1/2, GeoRisk = sqrt(mean / 2)
    values = _risk.georisk(np.array([[0.2, 0.2], [0.6, 0.6]]), 3.0)
    assert values == pytest.approx([math.sqrt(0.4 / 2)] * 2)


def test_georisk_of_all_zero_scores() -> None:
    assert _risk.georisk(np.zeros((3, 2)), 1.0) == [0.0, 0.0]
