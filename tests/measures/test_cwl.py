"""INST and INSQ (``_measures/cwl.py``) against cwl_eval, its test files and the papers.

Checked against: a hand-worked case at depth 2 (exact fractions), the values
``cwl-eval`` prints for the qrels/gains and run files it ships in
``cwl/tests`` (github.com/ireval/cwl: ``qrel_file``, ``gain_file``,
``result_file``; the inputs transcribed as data), cwl_eval's own classes on
hypothesis-generated rankings (graded gains, gaps in the ranks, cutoffs,
targets and depths) and a plain-Python textbook of the papers' definitions
(``tests/textbook_models.py``), and ``ir_measures``' ``INST``/``INSQ``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polars_rankmetrics as prm
from tests import textbook_models as tm

cwl_inst = pytest.importorskip("cwl.ruler.measures.cwl_inst")
cwl_insq = pytest.importorskip("cwl.ruler.measures.cwl_insq")
cwl_ranking = pytest.importorskip("cwl.ruler.ranking")


def _per_user(recs: pl.DataFrame, truth: pl.DataFrame, metrics: list[str]) -> dict[Any, Any]:
    result = prm.evaluate(recs, truth, metrics, relevance="grade", per_user=True)
    return {row["user"]: row for row in result.iter_rows(named=True)}


# ---------------------------------------------------------------- hand-worked, depth 2


def test_hand_worked_at_depth_two() -> None:
    # depth 2, T = 1: INSQ's C(1) = (2/3)^2 = 4/9, so W = (9/13, 4/13) whatever the gains.
    # INST: a relevant first document leaves T_1 = 0, C(1) = (1/2)^2 = 1/4, W = (4/5, 1/5);
    # a non-relevant one leaves T_1 = 1, C(1) = 4/9 (as INSQ).
    recs = pl.DataFrame(
        {"user": ["a", "a", "b", "b", "c", "c"], "item": ["x", "y", "y", "x", "x", "y"],
         "rank": [1, 2, 1, 2, 1, 2]}
    )  # fmt: skip
    truth = pl.DataFrame(
        {"user": ["a", "b", "c", "c"], "item": ["x", "x", "x", "y"], "grade": [1, 1, 1, 1]}
    )
    values = _per_user(recs, truth, ["inst(T=1,depth=2)", "insq(T=1,depth=2)"])
    assert values["a"]["inst(T=1,depth=2)"] == pytest.approx(4 / 5, rel=1e-12)
    assert values["b"]["inst(T=1,depth=2)"] == pytest.approx(4 / 13, rel=1e-12)
    assert values["c"]["inst(T=1,depth=2)"] == pytest.approx(4 / 5 + 1 / 5, rel=1e-12)
    assert values["a"]["insq(T=1,depth=2)"] == pytest.approx(9 / 13, rel=1e-12)
    assert values["b"]["insq(T=1,depth=2)"] == pytest.approx(4 / 13, rel=1e-12)
    assert values["c"]["insq(T=1,depth=2)"] == pytest.approx(1.0, rel=1e-12)


def test_defaults_are_target_three_and_depth_one_thousand() -> None:
    recs = pl.DataFrame({"user": [1, 1, 1], "item": [1, 2, 3], "rank": [1, 2, 3]})
    truth = pl.DataFrame({"user": [1, 1], "item": [1, 3], "grade": [2, 1]})
    values = _per_user(recs, truth, ["inst", "inst(T=3,depth=1000)", "insq", "insq(T=3)"])[1]
    assert values["inst"] == values["inst(T=3,depth=1000)"]
    assert values["insq"] == values["insq(T=3)"]
    # the truth's largest grade is gain 1: gains (1, 0, 1/2)
    gains = {1: 1.0, 3: 0.5}
    assert values["inst"] == pytest.approx(tm.cwl_rate(gains, 3.0, 1000, adaptive=True), rel=1e-12)


# ---------------------------------------------------------------- cwl_eval's own files

# cwl/tests/gain_file of github.com/ireval/cwl (topic, document, gain); its qrel_file holds the
# same documents with gain 1 where gain_file's is positive, 0 elsewhere
_GAINS = [
    ("T1", "D1", 1.0), ("T1", "D2", 0.0), ("T1", "D3", 1.0), ("T1", "D4", 1.0),
    ("T1", "D7", 1.0), ("T1", "D8", 0.0), ("T1", "D9", 1.0), ("T1", "D10", 0.0),
    ("T2", "D1", 0.2), ("T2", "D2", 0.4), ("T2", "D5", 1.0), ("T2", "D6", 0.0),
    ("T2", "D7", 0.2), ("T2", "D8", 1.0), ("T2", "D9", 0.4), ("T2", "D10", 0.0),
    ("T3", "D4", 0.0), ("T3", "D5", 0.0), ("T3", "D6", 0.8), ("T3", "D7", 0.2),
    ("T3", "D8", 0.4), ("T3", "D9", 0.0), ("T3", "D10", 1.0),
]  # fmt: skip
# cwl/tests/result_file: every topic ranks D1..D10 at ranks 1..10
_RESULT = pl.DataFrame(
    [(topic, f"D{n}", n) for topic in ("T1", "T2", "T3") for n in range(1, 11)],
    schema={"user": pl.String, "item": pl.String, "rank": pl.Int64},
    orient="row",
)
# the EU column `cwl-eval qrel_file result_file` and `cwl-eval gain_file result_file` print
# (cwl-eval 1.0.12, metrics INSTCWLMetric(1), INSTCWLMetric(3), INSQCWLMetric(1),
# INSQCWLMetric(3); 4 decimals)
_PRINTED = {
    "qrel_file": {
        "T1": (0.7934, 0.4939, 0.5872, 0.3760),
        "T2": (0.9226, 0.5664, 0.6629, 0.4223),
        "T3": (0.0888, 0.1578, 0.0880, 0.1418),
    },
    "gain_file": {
        "T1": (0.7934, 0.4939, 0.5872, 0.3760),
        "T2": (0.2342, 0.2066, 0.2200, 0.1834),
        "T3": (0.0510, 0.0871, 0.0507, 0.0821),
    },
}
_METRICS = ["inst(T=1)", "inst(T=3)", "insq(T=1)", "insq(T=3)"]


@pytest.mark.parametrize("file", ["qrel_file", "gain_file"])
def test_cwl_evals_own_test_files(file: str) -> None:
    truth = pl.DataFrame(
        [(t, d, (1.0 if g > 0 else 0.0) if file == "qrel_file" else g) for t, d, g in _GAINS],
        schema={"user": pl.String, "item": pl.String, "grade": pl.Float64},
        orient="row",
    )
    # cwl_eval reads the gains as they are (in [0, 1]): gain 1 is grade 1
    metrics = [metric.replace(")", ",max_grade=1)") for metric in _METRICS]
    values = _per_user(_RESULT, truth, metrics)
    for topic, printed in _PRINTED[file].items():
        for metric, expected in zip(metrics, printed, strict=True):
            assert round(values[topic][metric], 4) == pytest.approx(expected, abs=1e-12)
            # and cwl_eval's classes to the last bits
            gains = dict.fromkeys(range(1, 11), 0.0)
            for t, d, g in _GAINS:
                if t == topic:
                    gains[int(d[1:])] = (1.0 if g > 0 else 0.0) if file == "qrel_file" else g
            oracle = _cwl(metric.startswith("inst"), [gains[n] for n in range(1, 11)], metric)
            assert values[topic][metric] == pytest.approx(oracle, rel=1e-10, abs=1e-13)


def _cwl(adaptive: bool, gains: list[float], metric: str, depth: int = 1000) -> float:
    target = float(metric.split("T=")[1].split(",", maxsplit=1)[0].rstrip(")"))
    model = cwl_inst.INSTCWLMetric(target) if adaptive else cwl_insq.INSQCWLMetric(target)
    ranking = cwl_ranking.Ranking(
        "q", np.array(gains, dtype=float), np.ones(len(gains)), max_n=depth
    )
    return float(model.measure(ranking))


# ---------------------------------------------------------------- generated rankings

SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def rankings(draw: st.DrawFn) -> dict[str, Any]:
    users = draw(st.integers(1, 4))
    recs, truth = [], []
    for user in range(users):
        length = draw(st.integers(0, 9))
        ranks = sorted(draw(st.sets(st.integers(1, 14), min_size=length, max_size=length)))
        for item, rank in enumerate(ranks):
            recs.append((user, item, rank))
        for item in draw(st.sets(st.integers(0, 12), max_size=7)):
            truth.append((user, item, draw(st.sampled_from([0, 1, 2, 3]))))
    return {
        "recs": recs,
        "truth": truth,
        "k": draw(st.sampled_from([None, 1, 3, 5, 20])),
        "T": draw(st.sampled_from([0.5, 1.0, 2.0, 3.0, 7.5])),
        "depth": draw(st.sampled_from([1, 2, 5, 12, 1000])),
        "max_grade": draw(st.sampled_from([None, 1.0, 2.5])),
    }


@pytest.mark.properties
@SETTINGS
@given(rankings())
def test_generated_rankings_match_cwl_eval_and_the_textbook(case: dict[str, Any]) -> None:
    ints = pl.Int64
    recs = pl.DataFrame(
        case["recs"], schema={"user": ints, "item": ints, "rank": ints}, orient="row"
    )
    truth = pl.DataFrame(
        case["truth"], schema={"user": ints, "item": ints, "grade": ints}, orient="row"
    )
    top = max((g for _, _, g in case["truth"]), default=0)
    g_max = case["max_grade"] if case["max_grade"] is not None else top
    params = f"T={case['T']},depth={case['depth']}"
    if case["max_grade"] is not None:
        params += f",max_grade={case['max_grade']}"
    cut = "" if case["k"] is None else f"@{case['k']}"
    labels = {name: f"{name}({params}){cut}" for name in ("inst", "insq")}
    result = prm.evaluate(recs, truth, list(labels.values()), relevance="grade", per_user=True)
    values = {row["user"]: row for row in result.iter_rows(named=True)}
    grade = {(u, i): g for u, i, g in case["truth"]}
    for user in {u for u, _, _ in case["truth"]} | {u for u, _, _ in case["recs"]}:
        gains = {
            rank: min(grade.get((user, item), 0), g_max) / g_max
            for u, item, rank in case["recs"]
            if u == user
            and grade.get((user, item), 0) > 0
            and (case["k"] is None or rank <= case["k"])
        }
        vector = [gains.get(position, 0.0) for position in range(1, max(gains, default=0) + 1)]
        for name, label in labels.items():
            if user not in values:
                continue
            actual = values[user][label]
            adaptive = name == "inst"
            expected = tm.cwl_rate(gains, case["T"], case["depth"], adaptive=adaptive)
            assert actual == pytest.approx(expected, rel=1e-9, abs=1e-15), (user, label)
            oracle = _cwl(adaptive, vector or [0.0], f"T={case['T']}", case["depth"])
            assert actual == pytest.approx(oracle, rel=1e-9, abs=1e-15), (user, label)


def test_ir_measures_inst_and_insq() -> None:
    ir_measures = pytest.importorskip("ir_measures")
    recs = pl.DataFrame(
        {"user": ["q"] * 4 + ["r"] * 3, "item": ["d1", "d2", "d3", "d4", "d1", "d5", "d6"],
         "score": [4.0, 3.0, 2.0, 1.0, 3.0, 2.0, 1.0]}
    )  # fmt: skip
    truth = pl.DataFrame(
        {"user": ["q", "q", "q", "r"], "item": ["d1", "d3", "d9", "d6"], "grade": [2, 1, 3, 1]}
    )
    qrels = [ir_measures.Qrel(*row) for row in truth.iter_rows()]
    run = [ir_measures.ScoredDoc(*row) for row in recs.iter_rows()]
    for target in (1.0, 3.0):
        inst, insq = ir_measures.INST(T=target, max_rel=3), ir_measures.INSQ(T=target, max_rel=3)
        peers = ir_measures.calc_aggregate([inst, insq], qrels, run)
        ours = prm.evaluate(
            recs, truth, [f"inst(T={target})", f"insq(T={target})"], score="score",
            relevance="grade",
        )  # fmt: skip
        got = list(ours.row(0))
        assert got == pytest.approx([float(peers[inst]), float(peers[insq])], rel=1e-10)


@pytest.mark.parametrize(
    ("metric", "message"),
    [
        ("inst(T=0)", "T must be a finite number > 0"),
        ("insq(T=-1)", "T must be a finite number > 0"),
        ("inst(depth=0)", "depth"),
        ("insq(max_grade=0)", "max_grade must be a finite number > 0"),
    ],
)
def test_bad_parameters_are_refused(metric: str, message: str) -> None:
    recs = pl.DataFrame({"user": [1], "item": [1], "rank": [1]})
    truth = pl.DataFrame({"user": [1], "item": [1], "grade": [1]})
    with pytest.raises(ValueError, match=message):
        prm.evaluate(recs, truth, [metric], relevance="grade")


def test_a_user_without_a_relevant_document_scores_zero() -> None:
    recs = pl.DataFrame({"user": [1, 2], "item": [1, 2], "rank": [1, 1]})
    truth = pl.DataFrame({"user": [1, 2], "item": [1, 9], "grade": [1, 1]})
    values = _per_user(recs, truth, ["inst", "insq"])
    assert values[2]["inst"] == 0.0
    assert values[2]["insq"] == 0.0
    assert math.isfinite(values[1]["inst"])
