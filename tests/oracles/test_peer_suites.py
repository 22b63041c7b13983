"""The peers' own test suites, replayed through our API.

Each case takes the input of one test of a peer's suite (ranx, ir_measures,
RecTools, recommenders, torchmetrics, scikit-learn, ml_metrics, scipy,
statsmodels), translates it into long frames and the matching conventions,
and asserts the value that peer's test asserts. The case id names the peer
and its test (repository path :: test name); the values are the peers', the
hand arithmetic beside them is ours.

How each peer's options translate, where a peer's convention has no
equivalent here, and where it differs from ``shared/METRICS.md`` (which we
follow): ``docs/conventions.md``, "Peers' own test suites". Where a peer
accepts input that is refused here (a truth row twice, two items at one
rank, an item outside the catalog), the case asserts the refusal.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_rankmetrics as prm
from polars_rankmetrics.analysis import _stats
from polars_rankmetrics.trec import trec_eval

Run = Mapping[Any, Sequence[Any] | Mapping[Any, float]]
Qrels = Mapping[Any, Sequence[Any] | Mapping[Any, float]]


def lg(i: float) -> float:
    """The DCG discount of position i: log2(i + 1)."""
    return math.log2(i + 1)


def recs_frame(run: Run, *, ranks: bool = False) -> pl.DataFrame:
    """A list per user is ranked 1, 2, ... in its order; a mapping holds scores (or the
    given ranks, gaps allowed, with ``ranks=True``)."""
    users: list[Any] = []
    items: list[Any] = []
    values: list[float] = []
    scored = not ranks and any(isinstance(v, Mapping) for v in run.values())
    for user, listed in run.items():
        if isinstance(listed, Mapping):
            pairs = list(listed.items())
        else:
            pairs = [(item, float(position)) for position, item in enumerate(listed, start=1)]
        for item, value in pairs:
            users.append(user)
            items.append(item)
            values.append(float(value))
    column = "score" if scored else "rank"
    frame = pl.DataFrame({"user": users, "item": items, column: values})
    return frame if scored else frame.with_columns(pl.col("rank").cast(pl.Int64))


def truth_frame(qrels: Qrels) -> pl.DataFrame:
    """A list per user is its relevant items (grade 1); a mapping holds grades."""
    users: list[Any] = []
    items: list[Any] = []
    grades: list[float] = []
    for user, judged in qrels.items():
        pairs = judged.items() if isinstance(judged, Mapping) else [(i, 1.0) for i in judged]
        for item, grade in pairs:
            users.append(user)
            items.append(item)
            grades.append(float(grade))
    return pl.DataFrame({"user": users, "item": items, "rel": grades})


@dataclass(frozen=True)
class Case:
    """One peer assertion: the mean over users and, optionally, per user."""

    run: Run
    qrels: Qrels
    metric: str
    mean: float
    per_user: Mapping[Any, float] | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    ranks: bool = False  # the run's mappings hold ranks, not scores


def evaluate_case(case: Case) -> tuple[float, dict[Any, float] | None]:
    """The mean over users, and the per-user values when the case gives them."""
    recs = recs_frame(case.run, ranks=case.ranks)
    truth = truth_frame(case.qrels)
    score = "score" if "score" in recs.columns else None
    kwargs = {"score": score, "relevance": "rel", **case.options}
    mean = prm.evaluate(recs, truth, case.metric, **kwargs)[case.metric][0]
    if case.per_user is None:
        return mean, None
    rows = prm.evaluate(recs, truth, case.metric, per_user=True, **kwargs)
    return mean, dict(zip(rows["user"].to_list(), rows[case.metric].to_list(), strict=True))


# --- ranx: tests/unit/ranx/metrics_test.py, meta/evaluate_test.py, metrics/*_test.py ---

# ranx's low-level tests give y_pred already sorted (every score 1): ranks in list order.
RANX_JARVELIN_TRUTH = {1: {2: 5, 4: 4, 5: 3, 10: 2}}
RANX_JARVELIN_RUNS = {
    "pred_1": [1, 2, 3, 4, 5],  # grades 0, 5, 0, 4, 3
    "pred_2": [10, 5, 2, 4, 3],  # grades 2, 3, 5, 4, 0
    "pred_3": [1, 3, 6, 7, 8],  # grades 0
}
RANX_DCG = {
    "pred_1": 5 / lg(2) + 4 / lg(4) + 3 / lg(5),
    "pred_2": 2 / lg(1) + 3 / lg(2) + 5 / lg(3) + 4 / lg(4),
    "pred_3": 0.0,
}
RANX_IDCG = 5 / lg(1) + 4 / lg(2) + 3 / lg(3) + 2 / lg(4)
RANX_DCG_BURGES = {
    "pred_1": 31 / lg(2) + 15 / lg(4) + 7 / lg(5),
    "pred_2": 3 / lg(1) + 7 / lg(2) + 31 / lg(3) + 15 / lg(4),
    "pred_3": 0.0,
}
RANX_IDCG_BURGES = 31 / lg(1) + 15 / lg(2) + 7 / lg(3) + 3 / lg(4)

# tests/unit/ranx/metrics/{bpref,f1}_test.py share these qrels
RANX_QRELS = {
    "q1": {"d2": 1, "d5": 1, "d1": 0, "d4": 0},
    "q2": {"d2": 1, "d5": 1, "d1": 0, "d6": 0},
    "q3": {"d2": 1, "d5": 1, "d7": 1, "d1": 0, "d6": 0, "d8": 0},
    "q4": {"d2": 1, "d4": 1, "d6": 1, "d9": 1, "d1": 0, "d3": 0, "d7": 0, "d8": 0},
}
RANX_BPREF_RUN = {
    "q1": {"d1": 10, "d2": 9, "d3": 8, "d4": 7},
    "q2": {"d1": 10, "d2": 9, "d3": 8, "d4": 7, "d5": 6, "d6": 5},
    "q3": {"d1": 10, "d2": 9, "d3": 8, "d4": 7, "d5": 6, "d6": 5, "d7": 4, "d8": 3},
    "q4": {"d1": 10, "d2": 9, "d3": 8, "d4": 7, "d6": 5, "d7": 4, "d8": 3},
}
RANX_BPREF = {
    "q1": 1 / 2 * (1 - 1 / 2),
    "q2": 1 / 2 * ((1 - 1 / 2) + (1 - 1 / 2)),
    "q3": 1 / 3 * ((1 - 1 / 3) + (1 - 1 / 3) + (1 - 2 / 3)),
    "q4": 1 / 4 * ((1 - 1 / 4) + (1 - 2 / 4) + (1 - 2 / 4)),
}
RANX_RBP_RUN = {"q1": {f"d{i}": 21.0 - i for i in range(1, 21)}}
RANX_RBP_QRELS = {"q1": ["d1", "d2", "d6", "d11", "d17"]}

RANX_PARALLEL_TRUTH = {1: [1, 2, 3], 2: [4, 5, 6, 7], 3: [8, 9]}
RANX_PARALLEL_RUN = {user: [4, 5, 6, 2, 1, 7, 3] for user in (1, 2, 3)}

RANX_CASES = [
    pytest.param(
        # ranx's hits@k is the count: num_hits@k here (hits@k is the hit rate)
        Case(
            {1: [1, 2, 3, 4, 5, 7], 2: [1, 2, 4, 3, 5, 7]},
            {1: [1, 4, 5, 6], 2: [1, 4, 6]},
            "num_hits@5",
            2.5,
            {1: 3, 2: 2},
        ),
        id="ranx/metrics_test.py::test_hits",
    ),
    pytest.param(
        Case({1: [1, 2, 3, 4, 5, 7]}, {1: [1, 4, 5, 6]}, "num_hits@5", 3),
        id="ranx/meta/evaluate_test.py::test_hits_single",
    ),
    pytest.param(
        # ranx's qrels list 6 twice for user 1; a truth row twice is refused here, so once
        Case(
            {1: [1, 2, 3, 4, 5, 7], 2: [1, 2, 4, 3, 5, 7]},
            {1: [9, 6, 8], 2: [1, 2, 4]},
            "hit_rate@5",
            0.5,
            {1: 0, 2: 1},
        ),
        id="ranx/metrics_test.py::test_hit_rate",
    ),
    pytest.param(
        Case({1: [1, 2, 4, 3, 5, 7]}, {1: [1, 2, 4]}, "hit_rate@5", 1.0),
        id="ranx/meta/evaluate_test.py::test_hit_rate_single",
    ),
    pytest.param(
        Case({1: [1, 2, 3, 4, 5, 7]}, {1: [1, 4, 5, 6]}, "precision@5", 3 / 5),
        id="ranx/meta/evaluate_test.py::test_precision_single",
    ),
    pytest.param(
        # the test compares with the mean of singles; by hand 2/5, 3/5, 0
        Case(
            RANX_PARALLEL_RUN,
            RANX_PARALLEL_TRUTH,
            "precision@5",
            1 / 3,
            {1: 2 / 5, 2: 3 / 5, 3: 0.0},
        ),
        id="ranx/metrics_test.py::test_precision",
    ),
    pytest.param(
        # (1 + 2/4 + 3/5) / 4: hits at 1, 4, 5 of 4 relevant
        Case(
            {1: [1, 2, 3, 4, 5, 7]},
            {1: [1, 4, 5, 6]},
            "map@6",
            0.525,
            options={"denominator": "relevant"},
        ),
        id="ranx/meta/evaluate_test.py::test_average_precision",
    ),
    pytest.param(
        # by hand: (1/4 + 2/5 + 3/7) / 3, (1 + 1 + 1 + 4/6) / 4, 0
        Case(
            RANX_PARALLEL_RUN,
            RANX_PARALLEL_TRUTH,
            "map@7",
            ((1 / 4 + 2 / 5 + 3 / 7) / 3 + (3 + 4 / 6) / 4) / 3,
            {1: (1 / 4 + 2 / 5 + 3 / 7) / 3, 2: (3 + 4 / 6) / 4, 3: 0.0},
            {"denominator": "relevant"},
        ),
        id="ranx/metrics_test.py::test_average_precision",
    ),
    pytest.param(
        Case({1: [2, 3, 1, 4, 5]}, {1: [3]}, "mrr@5", 0.5),
        id="ranx/metrics_test.py::test_reciprocal_rank_single",
    ),
    pytest.param(
        Case({1: [2, 1, 4, 5]}, {1: [3]}, "mrr@5", 0.0),
        id="ranx/metrics_test.py::test_reciprocal_rank_single_no_match",
    ),
    pytest.param(
        # user 3's list repeats the non-relevant item 1 (ranks given: accepted, reads nothing)
        Case(
            {1: [2, 3, 1, 4, 5], 2: [1, 2, 3, 4, 5], 3: [1, 1, 1, 4, 5]},
            {1: [3], 2: [1], 3: [3]},
            "mrr@5",
            0.5,
            {1: 0.5, 2: 1.0, 3: 0.0},
        ),
        id="ranx/metrics_test.py::test_reciprocal_rank",
    ),
    pytest.param(
        Case({1: [2, 4, 3, 1, 5, 6, 7]}, {1: [1, 2, 3]}, "r_precision", 2 / 3),
        id="ranx/metrics_test.py::test_r_precision_single",
    ),
    pytest.param(
        Case(
            {1: [2, 4, 3, 1, 5, 6, 7], 2: [2, 4, 3, 1, 5, 6, 7]},
            {1: [1, 2, 3], 2: [1, 2]},
            "r_precision",
            (2 / 3 + 1 / 2) / 2,
        ),
        id="ranx/metrics_test.py::test_r_precision",
    ),
    pytest.param(
        Case({1: [2, 4, 3, 1, 5, 6, 7]}, {1: [1, 2, 3]}, "recall@2", 1 / 3),
        id="ranx/metrics_test.py::test_recall_single",
    ),
    pytest.param(
        Case(
            {1: [2, 4, 3, 1, 5, 6, 7], 2: [2, 4, 3, 1, 5, 6, 7]},
            {1: [1, 2, 3], 2: [1, 2]},
            "recall@2",
            (1 / 3 + 1 / 2) / 2,
        ),
        id="ranx/metrics_test.py::test_recall",
    ),
    *[
        pytest.param(
            Case({1: run}, RANX_JARVELIN_TRUTH, metric, expected, options=options),
            id=f"ranx/metrics_test.py::{test}[{name}]",
        )
        for name, run in RANX_JARVELIN_RUNS.items()
        for test, metric, expected, options in (
            ("test_dcg_jarvelin", "dcg@10", RANX_DCG[name], {}),
            ("test_ndcg_jarvelin", "ndcg@10", RANX_DCG[name] / RANX_IDCG, {}),
            ("test_dcg_burges", "dcg@10", RANX_DCG_BURGES[name], {"gain": "exponential"}),
            (
                "test_ndcg_burges",
                "ndcg@10",
                RANX_DCG_BURGES[name] / RANX_IDCG_BURGES,
                {"gain": "exponential"},
            ),
        )
    ],
    pytest.param(
        Case(RANX_BPREF_RUN, RANX_QRELS, "bpref", sum(RANX_BPREF.values()) / 4, RANX_BPREF),
        id="ranx/metrics/bpref_test.py::test_bpref",
    ),
    *[
        # ranx's f1 without a cutoff reads each whole list: k = its length, per query
        pytest.param(
            Case(
                {q: RANX_BPREF_RUN[q] if q != "q4" else F1_Q4_RUN},
                {q: RANX_QRELS[q]},
                f"f1@{len(RANX_BPREF_RUN[q])}",
                expected,
            ),
            id=f"ranx/metrics/f1_test.py::test_f1[{q}]",
        )
        for q, expected in (
            ("q1", 2 * (1 / 4 * 1 / 2) / (1 / 4 + 1 / 2)),
            ("q2", 2 * (2 / 6 * 1) / (2 / 6 + 1)),
            ("q3", 2 * (3 / 8 * 1) / (3 / 8 + 1)),
            ("q4", 0.0),
        )
        for F1_Q4_RUN in [{"d1": 10, "d12": 9, "d3": 8, "d14": 7, "d16": 5, "d7": 4, "d8": 3}]
    ],
    *[
        pytest.param(
            Case(RANX_RBP_RUN, RANX_RBP_QRELS, f"rbp(p={p})", expected),
            id=f"ranx/metrics/rank_biased_precision_test.py::test_rank_biased_precision[{p}]",
        )
        for p, expected in ((0.5, 0.7661), (0.8, 0.4526), (0.95, 0.1881))
    ],
    *[
        # q_3 has an empty run: scored 0 and counted (ranx, our default)
        pytest.param(
            Case(
                {"q_1": {"doc_a": 1.0}, "q_2": {"doc_b": 1.0}, "q_4": {"doc_d": 1.0}},
                {"q_1": ["doc_a"], "q_2": ["doc_b"], "q_3": ["doc_c"], "q_4": ["doc_d"]},
                metric,
                0.75,
            ),
            id=f"ranx/metrics/zero_division_error_test.py::test_{name}",
        )
        for name, metric in (("precision", "precision@1"), ("recall", "recall@1"), ("f1", "f1@1"))
    ],
]


def test_ranx_strict_keys() -> None:
    """ranx/meta/evaluate_test.py::test_keys_control: run and qrels queries differ -> error."""
    truth = truth_frame({"q_1": {"doc_12": 5, "doc_25": 3}, "q_2": {"doc_11": 6, "doc_2": 1}})
    recs = recs_frame({"q_1": {"doc_12": 0.9, "doc_23": 0.8}, "q_3": {"doc_12": 0.9}})
    with pytest.raises(ValueError, match="user_sets='strict'"):
        prm.evaluate(recs, truth, "ndcg@5", score="score", relevance="rel", user_sets="strict")


# --- ir_measures: tests/test_measures.py, tests/test_pytrec_eval.py -------------------------

# test_measures.py: one query, scores disagree with the file's ranks (trec_eval reads the
# scores): D0 (0) .8, D2 (1) .7, D3 (2) .4, D1 (1) .3, D4 (0) .1. The test checks that
# every provider agrees; the values are those its providers print.
IRM_QRELS = {0: {"D0": 0, "D1": 1, "D2": 1, "D3": 2, "D4": 0}}
IRM_RUN = {0: {"D0": 0.8, "D2": 0.7, "D1": 0.3, "D3": 0.4, "D4": 0.1}}
IRM_MEASURES = [
    ("P@5", "precision@5", {}, 3 / 5),
    ("P(rel=2)@5", "precision@5", {"relevance_level": 2}, 1 / 5),
    ("RR", "mrr", {}, 1 / 2),
    ("RR(rel=2)", "mrr", {"relevance_level": 2}, 1 / 3),
    ("Rprec", "r_precision", {}, 2 / 3),
    ("AP", "map", {}, (1 / 2 + 2 / 3 + 3 / 4) / 3),
    ("AP@2", "map@2", {}, (1 / 2) / 3),
    ("AP(rel=2)", "map", {"relevance_level": 2}, 1 / 3),
    ("AP(rel=2)@2", "map@2", {"relevance_level": 2}, 0.0),
    ("nDCG", "ndcg", {}, (1 / lg(2) + 2 / lg(3) + 1 / lg(4)) / (2 + 1 / lg(2) + 1 / lg(3))),
    ("nDCG@2", "ndcg@2", {}, (1 / lg(2)) / (2 + 1 / lg(2))),
    ("R@2", "recall@2", {}, 1 / 3),
    ("R(rel=2)@2", "recall@2", {"relevance_level": 2}, 0.0),
    ("Bpref", "bpref", {}, 0.5),
    ("Bpref(rel=2)", "bpref", {"relevance_level": 2}, 0.0),
    ("Judged@5", "judged@5", {}, 1.0),
    # ir_measures' ERR (gdeval) fixes the top grade at 4: R(g) = (2^g - 1) / 16
    ("ERR@2", "err(max_grade=4)@2", {}, 0.03125),
    ("ERR@20", "err(max_grade=4)@20", {}, 0.10175),
    ("nDCG(dcg='exp-log2')@2", "ndcg@2", {"gain": "exponential"}, 0.17377),
    ("nDCG(dcg='exp-log2')@5", "ndcg@5", {"gain": "exponential"}, 0.6201),
]
IRM_CASES = [
    pytest.param(
        # conventions="trec" fixes the linear gain: the exponential cases keep the default
        Case(
            IRM_RUN,
            IRM_QRELS,
            metric,
            expected,
            options=options if "gain" in options else {"conventions": "trec", **options},
        ),
        id=f"ir_measures/tests/test_measures.py::test_measures[{name}]",
    )
    for name, metric, options, expected in IRM_MEASURES
]

# test_pytrec_eval.py: two queries; the qrels change from test to test
IRM2_RUN = {  # test_NumRet
    "0": {"D0": 0.8, "D2": 0.7, "D1": 0.3, "D3": 0.4, "D4": 0.1},
    "1": {"D1": 0.8, "D3": 0.7, "D4": 0.3, "D2": 0.4},
}
IRM2_RUN_B = {
    "0": {"D0": 0.8, "D2": 0.7, "D1": 0.3, "D3": 0.4, "D4": 0.1},
    "1": {"D1": 0.8, "D0": 0.7, "D3": 0.3, "D2": 0.4},
}
IRM2_QRELS_SET = {  # test_Success, test_SetP, test_SetR, test_SetAP, test_SetF, test_IPrec
    "0": {"D0": 0, "D1": 1, "D2": 2, "D3": 2, "D4": 0},
    "1": {"D0": 1, "D3": 2, "D5": 0},
}
IRM2_QRELS_NUMRET = {  # test_NumRet, test_gdeval.py, test_judged.py
    "0": {"D0": 0, "D1": 1, "D2": 1, "D3": 2, "D4": 0},
    "1": {"D0": 1, "D3": 2, "D5": 2},
}
IRM2_QRELS_IPREC = {  # test_IPrec
    "0": {"D0": 1, "D1": 1, "D2": 2, "D3": 2, "D4": 0},
    "1": {"D0": 1, "D3": 2, "D5": 0},
}
IRM2_QRELS_INFAP = {  # test_infAP, test_nDCG: -1 is "pooled but not judged"
    "0": {"D0": 1, "D1": -1, "D2": 0, "D3": 2, "D4": 0},
    "1": {"D0": 1, "D3": 2, "D4": -1, "D5": 0},
}
IRM2_QRELS_P = {  # test_P
    "0": {"D0": -1, "D1": 1, "D3": 2, "D4": 1},
    "1": {"D0": 1, "D3": 0, "D4": -1},
}
IRM2_SET_RUN = {
    "0": IRM2_RUN["0"],
    "1": {"D1": 0.8, "D4": 0.7, "D3": 0.3, "D2": 0.4},
}
TREC = {"conventions": "trec"}
IRM2_CASES = [
    pytest.param(
        Case(IRM2_SET_RUN, IRM2_QRELS_SET, "success@2", 0.5, {"0": 1, "1": 0}, TREC),
        id="ir_measures/tests/test_pytrec_eval.py::test_Success[rel=1]",
    ),
    pytest.param(
        Case(
            IRM2_SET_RUN,
            IRM2_QRELS_SET,
            "success@2",
            0.5,
            {"0": 1, "1": 0},
            {**TREC, "relevance_level": 2},
        ),
        id="ir_measures/tests/test_pytrec_eval.py::test_Success[rel=2]",
    ),
    pytest.param(
        Case(
            IRM2_SET_RUN, IRM2_QRELS_IPREC, "iprec(recall=0.25)", 0.625, {"0": 1.0, "1": 0.25}, TREC
        ),
        id="ir_measures/tests/test_pytrec_eval.py::test_IPrec[0.25]",
    ),
    pytest.param(
        Case(
            IRM2_SET_RUN, IRM2_QRELS_IPREC, "iprec(recall=0.5)", 0.625, {"0": 1.0, "1": 0.25}, TREC
        ),
        id="ir_measures/tests/test_pytrec_eval.py::test_IPrec[0.5]",
    ),
    pytest.param(
        Case(IRM2_SET_RUN, IRM2_QRELS_IPREC, "iprec(recall=0.75)", 0.5, {"0": 1.0, "1": 0.0}, TREC),
        id="ir_measures/tests/test_pytrec_eval.py::test_IPrec[0.75]",
    ),
    *[
        pytest.param(
            Case(
                IRM2_SET_RUN,
                IRM2_QRELS_IPREC,
                f"iprec(recall={x})",
                0.4583,
                {"0": 2 / 3, "1": 0.25},
                {**TREC, "relevance_level": 2},
            ),
            id=f"ir_measures/tests/test_pytrec_eval.py::test_IPrec[rel=2@{x}]",
        )
        for x in (0.1, 0.25, 0.5, 0.75)
    ],
    pytest.param(
        Case(
            IRM2_SET_RUN,
            IRM2_QRELS_INFAP,
            "map",
            0.47916666666666663,
            {"0": 0.8333, "1": 0.125},
            TREC,
        ),
        id="ir_measures/tests/test_pytrec_eval.py::test_infAP[AP]",
    ),
    pytest.param(
        Case(IRM2_SET_RUN, IRM2_QRELS_INFAP, "infap", 0.510416, {"0": 0.8333, "1": 0.1875}, TREC),
        id="ir_measures/tests/test_pytrec_eval.py::test_infAP[infAP]",
    ),
    pytest.param(
        Case(
            IRM2_SET_RUN,
            IRM2_QRELS_INFAP,
            "map",
            0.2917,
            {"0": 0.33333, "1": 0.25},
            {**TREC, "relevance_level": 2},
        ),
        id="ir_measures/tests/test_pytrec_eval.py::test_infAP[AP(rel=2)]",
    ),
    pytest.param(
        Case(
            IRM2_SET_RUN,
            IRM2_QRELS_INFAP,
            "infap",
            0.3542,
            {"0": 0.33333, "1": 0.375},
            {**TREC, "relevance_level": 2},
        ),
        id="ir_measures/tests/test_pytrec_eval.py::test_infAP[infAP(rel=2)]",
    ),
    pytest.param(
        Case(
            IRM2_SET_RUN,
            IRM2_QRELS_INFAP,
            "ndcg",
            (0.76018 + 0.32739) / 2,
            {"0": 0.76018, "1": 0.32739},
            TREC,
        ),
        id="ir_measures/tests/test_pytrec_eval.py::test_nDCG[nDCG]",
    ),
    pytest.param(
        Case(IRM2_SET_RUN, IRM2_QRELS_INFAP, "ndcg@3", 0.76018 / 2, {"0": 0.76018, "1": 0.0}, TREC),
        id="ir_measures/tests/test_pytrec_eval.py::test_nDCG[nDCG@3]",
    ),
    pytest.param(
        Case(IRM2_RUN_B, IRM2_QRELS_P, "precision@4", 0.375, {"0": 0.5, "1": 0.25}, TREC),
        id="ir_measures/tests/test_pytrec_eval.py::test_P[P@4]",
    ),
    pytest.param(
        Case(
            IRM2_RUN_B,
            IRM2_QRELS_P,
            "precision@4",
            0.5,
            {"0": 0.75, "1": 0.25},
            {**TREC, "unjudged": "remove"},
        ),
        id="ir_measures/tests/test_pytrec_eval.py::test_P[P(judged_only=True)@4]",
    ),
]

# test_gdeval.py, test_judged.py: the qrels and run of test_NumRet
IRM2_MORE = [
    # gdeval's nDCG is exponential (2^g - 1), its ERR fixes the top grade at 4
    ("test_gdeval.py::test_nDCG[nDCG@20]", "ndcg@20", {"gain": "exponential"},
     0.485545, {"0": 0.6201, "1": 0.35099}),
    ("test_gdeval.py::test_nDCG[nDCG@2]", "ndcg@2", {"gain": "exponential"},
     0.28031, {"0": 0.17377, "1": 0.38685}),
    ("test_gdeval.py::test_ERR[ERR@20]", "err(max_grade=4)@20", {}, 0.09775,
     {"0": 0.10175, "1": 0.09375}),
    ("test_gdeval.py::test_ERR[ERR@2]", "err(max_grade=4)@2", {}, 0.0625,
     {"0": 0.03125, "1": 0.09375}),
    # Judged@k divides by the documents retrieved within k
    ("test_judged.py::test_judged[Judged@1000]", "judged@1000", {}, 0.625, {"0": 1.0, "1": 0.25}),
    ("test_judged.py::test_judged[Judged@10]", "judged@10", {}, 0.625, {"0": 1.0, "1": 0.25}),
    ("test_judged.py::test_judged[Judged@3]", "judged@3", {}, 2 / 3, {"0": 1.0, "1": 1 / 3}),
    ("test_judged.py::test_judged[Judged@1]", "judged@1", {}, 0.5, {"0": 1.0, "1": 0.0}),
]  # fmt: skip
IRM2_CASES += [
    pytest.param(
        Case(IRM2_RUN, IRM2_QRELS_NUMRET, metric, mean, per_user, options),
        id=f"ir_measures/tests/{name}",
    )
    for name, metric, options, mean, per_user in IRM2_MORE
]

# test_cwl_eval.py: cwl.qrels and cwl.run (three topics, D1..D10 ranked in order)
CWL_QRELS = {
    "T1": {"D1": 1, "D2": 0, "D3": 1, "D4": 1, "D7": 1, "D8": 0, "D9": 1, "D10": 0},
    "T2": {"D1": 1, "D2": 1, "D5": 1, "D6": 0, "D7": 1, "D8": 1, "D9": 1, "D10": 0},
    "T3": {"D4": 0, "D5": 0, "D6": 1, "D7": 1, "D8": 1, "D9": 0, "D10": 1},
}
CWL_RUN = {topic: [f"D{i}" for i in range(1, 11)] for topic in CWL_QRELS}
CWL = [
    ("AP", "map", {}, (0.7087, 0.7438, 0.3068)),
    # SDCG: DCG over the DCG of k relevant items, RecTools' ideal
    ("SDCG(max_rel=1)@10", "ndcg@10", {"ideal": "k"}, (0.5645, 0.6531, 0.2848)),
    ("P@1", "precision@1", {}, (1.0, 1.0, 0.0)),
    ("P@10", "precision@10", {}, (0.5, 0.6, 0.4)),
    ("P@20", "precision@20", {}, (0.25, 0.3, 0.2)),
    ("P@5", "precision@5", {}, (0.6, 0.6, 0.0)),
    ("RBP(p=0.9, rel=1)", "rbp(p=0.9)", {}, (0.3501, 0.3996, 0.1988)),
    ("RR", "mrr", {}, (1.0, 1.0, 0.1667)),
]
IRM2_CASES += [
    pytest.param(
        Case(CWL_RUN, CWL_QRELS, metric, sum(values) / 3,
             dict(zip(CWL_QRELS, values, strict=True)), options),
        id=f"ir_measures/tests/test_cwl_eval.py::test_measures[{name}]",
    )
    for name, metric, options, values in CWL
]  # fmt: skip

# cvangysel/pytrec_eval tests/pytrec_eval_tests.py: q1 d2 relevant, d1 and d3 not; q2's
# run is empty (trec_eval leaves it out: conventions="trec")
PTE_QRELS = {"q1": {"d1": 0, "d2": 1, "d3": 0}, "q2": {"d2": 1, "d3": 1}}
PTE = [
    ("test_ndcg[rank3]", {"d1": 1.0, "d2": 0.0, "d3": 1.5}, "ndcg", 0.5),
    ("test_ndcg[rank1]", {"d1": 1.0, "d2": 2.0, "d3": 1.5}, "ndcg", 1.0),
    ("test_ndcg[rank2]", {"d1": 4.0, "d2": 2.0, "d3": 1.5}, "ndcg", 0.6309297535714575),
    ("test_ndcg_cut[3]", {"d1": 1.0, "d2": 0.0, "d3": 1.5}, "ndcg@3", 0.5),
    ("test_ndcg_cut[1]", {"d1": 1.0, "d2": 2.0, "d3": 1.5}, "ndcg@1", 1.0),
    ("test_ndcg_cut[1,2,3,1000-2]", {"d1": 1.0, "d2": 0.0, "d3": 1.5}, "ndcg@2", 0.0),
    ("test_ndcg_cut[1,2,3,1000-1]", {"d1": 1.0, "d2": 0.0, "d3": 1.5}, "ndcg@1", 0.0),
    ("test_ndcg_cut[1,2,3,1000-1000]", {"d1": 1.0, "d2": 0.0, "d3": 1.5}, "ndcg@1000", 0.5),
]
PYTREC_EVAL_CASES = [
    pytest.param(
        Case({"q1": run}, PTE_QRELS, metric, expected, {"q1": expected}, TREC),
        id=f"pytrec_eval/tests/pytrec_eval_tests.py::{name}",
    )
    for name, run, metric, expected in PTE
]

# test_pytrec_eval.py's set and count measures exist only in trec_eval's set: trec.trec_eval
IRM2_TREC_CASES = [
    # (qrels, measure, relevance level, per query, summary)
    ("test_NumRet[NumRet]", IRM2_QRELS_NUMRET, "num_ret", 1, (5, 4), 9),
    ("test_NumRet[rel=1]", IRM2_QRELS_NUMRET, "num_rel_ret", 1, (3, 1), 4),
    ("test_NumRet[rel=2]", IRM2_QRELS_NUMRET, "num_rel_ret", 2, (1, 1), 2),
    ("test_NumRet[rel=3]", IRM2_QRELS_NUMRET, "num_rel_ret", 3, (0, 0), 0),
    ("test_SetP[rel=1]", IRM2_QRELS_SET, "set_P", 1, (0.6, 0.25), 0.425),
    ("test_SetP[SetRelP rel=1]", IRM2_QRELS_SET, "set_relative_P", 1, (1.0, 0.5), 0.75),
    ("test_SetP[rel=2]", IRM2_QRELS_SET, "set_P", 2, (0.4, 0.25), 0.325),
    ("test_SetP[SetRelP rel=2]", IRM2_QRELS_SET, "set_relative_P", 2, (1.0, 1.0), 1.0),
    ("test_SetP[rel=3]", IRM2_QRELS_SET, "set_P", 3, (0.0, 0.0), 0.0),
    ("test_SetR[rel=1]", IRM2_QRELS_SET, "set_recall", 1, (1.0, 0.5), 0.75),
    ("test_SetR[rel=2]", IRM2_QRELS_SET, "set_recall", 2, (1.0, 1.0), 1.0),
    ("test_SetAP[rel=1]", IRM2_QRELS_SET, "set_map", 1, (0.6, 0.125), 0.3625),
    ("test_SetAP[rel=2]", IRM2_QRELS_SET, "set_map", 2, (0.4, 0.25), 0.325),
    ("test_SetF[rel=1]", IRM2_QRELS_SET, "set_F", 1, (0.75, 0.33333), 0.5417),
    ("test_SetF[beta=0.5]", IRM2_QRELS_SET, "set_F.0.5", 1, (0.6923, 0.3), 0.49615),
    ("test_SetF[beta=2.0]", IRM2_QRELS_SET, "set_F.2.0", 1, (0.81818, 0.375), 0.59659),
    ("test_SetF[rel=3]", IRM2_QRELS_SET, "set_F", 3, (0.0, 0.0), 0.0),
]


@pytest.mark.parametrize(
    ("qrels", "measure", "level", "per_query", "summary"),
    [pytest.param(*case[1:], id=f"ir_measures/tests/test_pytrec_eval.py::{case[0]}")
     for case in IRM2_TREC_CASES],
)  # fmt: skip
def test_ir_measures_trec_set_measures(
    qrels: Qrels, measure: str, level: int, per_query: tuple[float, float], summary: float
) -> None:
    recs = recs_frame(IRM2_RUN if measure.startswith("num") else IRM2_SET_RUN)
    table = trec_eval(
        truth_frame(qrels), recs, measure, per_query=True, relevance_level=level,
        score="score", tag=None,
    )  # fmt: skip
    values = {row["query"]: row["value"] for row in table.iter_rows(named=True)}
    assert values["0"] == pytest.approx(per_query[0], abs=1e-4)
    assert values["1"] == pytest.approx(per_query[1], abs=1e-4)
    assert values["all"] == pytest.approx(summary, abs=1e-4)


def test_ir_measures_ndcg_gains_with_grade_zero() -> None:
    """test_pytrec_eval.py::test_nDCG[nDCG(gains={0: 1, 1: 4})]: 0.97177 and 0.14949.

    A gain for grade 0 is trec_eval's own option (``-mndcg.0=1,1=4``): ``trec_eval``
    takes it; ``evaluate``'s ``gain=`` mapping refuses grades <= 0 (documented).
    """
    recs, truth = recs_frame(IRM2_SET_RUN), truth_frame(IRM2_QRELS_INFAP)
    table = trec_eval(truth, recs, "ndcg.0=1,1=4", per_query=True, tag=None)
    values = dict(zip(table["query"], table["value"], strict=True))
    assert (values["0"], values["1"]) == pytest.approx((0.97177, 0.14949), abs=1e-4)
    with pytest.raises(ValueError, match="gain"):
        prm.evaluate(recs, truth, "ndcg", score="score", relevance="rel", gain={0: 1, 1: 4})


@pytest.mark.parametrize("metric", ["success@2", "precision@2", "recall@2", "map"])
def test_ir_measures_level_above_every_grade(metric: str) -> None:
    """test_pytrec_eval.py::test_Success[rel=3], test_SetP[rel=3]: no document reaches
    grade 3, and every judged query still scores 0 (trec_eval counts it)."""
    recs, truth = recs_frame(IRM2_SET_RUN), truth_frame(IRM2_QRELS_SET)
    out = prm.evaluate(recs, truth, metric, score="score", relevance="rel",
                       conventions="trec", relevance_level=3, per_user=True)  # fmt: skip
    assert out[metric].to_list() == [0.0, 0.0]


# --- RecTools: tests/metrics/test_ranking.py, test_classification.py -----------------------

# test_ranking.py::TestMAP: ranks with gaps; user 6 has no recs (0, counted), user 9 no
# interactions (left out)
RT_MAP_RECO = {
    1: {1: 9, 3: 1}, 2: {1: 3}, 3: {1: 1, 2: 3, 3: 5, 4: 7, 5: 9}, 4: {1: 1},
    5: {1: 1, 2: 2, 3: 3}, 7: {1: 2}, 8: {2: 1}, 9: {1: 1},
}  # fmt: skip
RT_MAP_TRUTH = {1: [1, 2], 2: [1], 3: [1, 2, 3, 4, 5, 6], 4: [1], 5: [1, 2, 3], 6: [1], 7: [1],
                8: [1]}  # fmt: skip
RT_NDCG_RECO = {1: {1: 9}, 2: {2: 1}, 3: {1: 1, 2: 2, 3: 3}, 4: {1: 1},
                5: {1: 3, 2: 7, 3: 9, 5: 1}, 6: {1: 1}}  # fmt: skip
RT_NDCG_TRUTH = {1: [1], 2: [1], 3: [1, 2, 3], 4: [1], 5: [1]}
RT_MRR_TRUTH = {1: [1], 2: [1], 3: [1, 2, 3], 4: [1], 5: [1, 2, 3, 4]}
RT_IDCG3 = 1 / lg(1) + 1 / lg(2) + 1 / lg(3)
# test_classification.py
RT_RECO = {1: [1, 2, 3], 2: [1, 2], 3: [1], 4: [1]}
RT_TRUTH = {1: [4, 2, 3], 3: [1], 4: [2], 5: [2]}


def rectools_case(
    reco: Mapping[int, Mapping[int, int]],
    truth: Qrels,
    metric: str,
    values: Sequence[float],
    users: Sequence[int],
    options: Mapping[str, Any],
) -> Case:
    per_user = dict(zip(users, values, strict=True))
    return Case(reco, truth, metric, float(np.mean(values)), per_user, options, ranks=True)


RECTOOLS_CASES = [
    *[
        pytest.param(
            rectools_case(
                RT_MAP_RECO,
                RT_MAP_TRUTH,
                f"map@{k}",
                expected,
                range(1, 9),
                {"denominator": "k" if by_k else "relevant"},
            ),
            id=f"RecTools/tests/metrics/test_ranking.py::TestMAP::test_calc[{k}-{by_k}]",
        )
        for k, by_k, expected in (
            (1, False, [0, 0, 1 / 6, 1, 1 / 3, 0, 0, 0]),
            (3, False, [0, 1 / 3, 1 / 6 * (1 / 1 + 2 / 3), 1, 1, 0, 1 * (1 / 2), 0]),
            (1, True, [0, 0, 1, 1, 1, 0, 0, 0]),
            (3, True, [0, 1 / 9, 1 / 3 * (1 / 1 + 2 / 3), 1 / 3, 1, 0, 1 / 3 * (1 / 2), 0]),
        )
    ],
    *[
        pytest.param(
            rectools_case(
                RT_NDCG_RECO,
                RT_NDCG_TRUTH,
                f"ndcg@{k}",
                expected,
                range(1, 6),
                {"ideal": "truth" if achievable else "k"},
            ),
            id=f"RecTools/tests/metrics/test_ranking.py::TestNDCG::test_calc[{k}-{achievable}]",
        )
        for k, achievable, expected in (
            (1, False, [0, 0, 1, 1, 0]),
            (3, False, [0, 0, 1, 1 / RT_IDCG3, 0.5 / RT_IDCG3]),
            (1, True, [0, 0, 1, 1, 0]),
            (3, True, [0, 0, 1, 1, (1 / lg(3)) / (1 / lg(1))]),
        )
    ],
    *[
        pytest.param(
            rectools_case(
                {u: v for u, v in RT_NDCG_RECO.items() if u != 6},
                RT_MRR_TRUTH,
                f"mrr@{k}",
                expected,
                range(1, 6),
                {},
            ),
            id=f"RecTools/tests/metrics/test_ranking.py::TestMRR::test_calc[{k}]",
        )
        for k, expected in ((1, [0, 0, 1, 1, 0]), (3, [0, 0, 1, 1, 1 / 3]))
    ],
    pytest.param(
        # interactions list (1, 1) twice: refused here, once gives the same RR
        rectools_case(
            {1: {1: 1, 2: 2, 3: 3}, 2: {1: 4, 2: 5, 3: 6}},
            {1: [1, 2], 2: [1, 2, 3]},
            "mrr@3",
            [1, 0],
            [1, 2],
            {},
        ),
        id="RecTools/tests/metrics/test_ranking.py::TestMRR::test_when_duplicates_in_interactions",
    ),
    *[
        pytest.param(
            Case(
                RT_RECO,
                RT_TRUTH,
                metric,
                float(np.mean(expected)),
                dict(zip([1, 3, 4, 5], expected, strict=True)),
            ),
            id=f"RecTools/tests/metrics/test_classification.py::{test}",
        )
        for test, metric, expected in (
            ("TestPrecision::test_calc", "precision@2", [0.5, 0.5, 0.0, 0.0]),
            ("TestRecall::test_calc", "recall@2", [1 / 3, 1, 0, 0]),
            ("TestHitRate::test_calc", "hit_rate@2", [1, 1, 0, 0]),
            ("TestF1Beta::test_calc", f"fbeta(beta={2**0.5!r})@2", [0.375, 0.75, 0, 0]),
        )
    ],
]


def test_rectools_duplicate_interactions_refused() -> None:
    """RecTools TestMAP::test_when_duplicates_in_interactions scores AP = 3.5/3 > 1.

    A (user, item) twice in the interactions counts twice there; here it is refused.
    """
    recs = recs_frame({1: [1, 2, 3]})
    truth = pl.DataFrame({"user": [1, 1, 1], "item": [1, 2, 1]})
    with pytest.raises(ValueError, match="truth"):
        prm.evaluate(recs, truth, "map@3")


@pytest.mark.parametrize("metric", ["map@3", "ndcg@3", "mrr@3"])
def test_rectools_when_no_interactions(metric: str) -> None:
    """TestMAP/TestNDCG/TestMRR::test_when_no_interactions: no truth at all -> NaN there,
    null here (no user has a defined value)."""
    recs = pl.DataFrame({"user": [1, 2], "item": [1, 1], "rank": [1, 1]})
    empty = pl.DataFrame(schema={"user": pl.Int64, "item": pl.Int64})
    assert prm.evaluate(recs, empty, metric)[metric][0] is None


def test_rectools_arp_when_no_interactions() -> None:
    """test_popularity.py::test_when_no_interactions: every item has popularity 0."""
    recs = recs_frame(RT_POP_RECO)
    empty = pl.DataFrame(schema={"user": pl.String, "item": pl.String})
    assert prm.list_metrics(recs, "arp@2", interactions=empty)["arp@2"][0] == 0.0


@pytest.mark.parametrize("metric", ["precision@2", "ndcg@2"])
def test_elliot_no_evaluable_users(metric: str) -> None:
    """sisinflab/elliot tests/evaluation/test_accelerated_metrics.py::
    test_accelerated_metrics_no_evaluable_users_returns_nan: the only user's judged item
    is below the relevance threshold 1 -> NaN there, null here, no per-user row."""
    recs = recs_frame({"u1": {"i2": 0.9, "i3": 0.8}})
    truth = truth_frame({"u1": {"i1": 0.0}})
    kwargs: dict[str, Any] = {"score": "score", "relevance": "rel", "relevance_level": 1}
    assert prm.evaluate(recs, truth, metric, **kwargs)[metric][0] is None
    assert prm.evaluate(recs, truth, metric, per_user=True, **kwargs).height == 0


# --- recommenders: tests/unit/recommenders/evaluation/test_python_evaluation.py --------------

MS_TRUE = {
    "user": [1, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 1, 1],
    "item": [3, 1, 4, 5, 6, 7, 2, 5, 6, 8, 9, 10, 11, 12, 13, 14, 1, 2],
    "rating": [3, 5, 5, 3, 3, 1, 5, 5, 5, 4, 4, 3, 3, 3, 2, 1, 5, 4],
}
MS_PRED = {
    "user": [1, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 1, 1],
    "item": [12, 10, 3, 5, 11, 13, 4, 10, 7, 13, 1, 3, 5, 2, 11, 14, 3, 10],
    "prediction": [12, 14, 13, 12, 11, 10, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 14, 13],
}
MS_CASES = [
    # relevancy_method="top_k": every truth row is relevant (binary), the top k by prediction
    ("test_python_precision_at_k", "precision@10", 0.26666),
    ("test_python_recall_at_k", "recall@10", 0.37777),
    ("test_python_map_at_k", "map@10", 0.23613),
    ("test_python_map", "map", 0.23613),
    ("test_python_ndcg_at_k", "ndcg@10", 0.38172),
    # r_precision_at_k at k = 10 >= every user's number of relevant items is R-precision
    ("test_python_r_precision[k=10]", "r_precision", 0.37777),
]


@pytest.mark.parametrize(
    ("metric", "expected"),
    [pytest.param(m, e, id=f"recommenders/test_python_evaluation.py::{t}") for t, m, e in MS_CASES],
)
def test_recommenders_ranking(metric: str, expected: float) -> None:
    recs = pl.DataFrame(MS_PRED).with_columns(pl.col("prediction").cast(pl.Float64))
    truth = pl.DataFrame(MS_TRUE).drop("rating")
    value = prm.evaluate(recs, truth, metric, score="prediction")[metric][0]
    assert value == pytest.approx(expected, rel=1e-4)
    # rating_nohit: item 100 for everyone scores 0
    nohit = recs.with_columns(pl.lit(100).alias("item")).unique(["user", "item"])
    with pytest.warns(prm.IdOverlapWarning):  # every id unmatched: warned, scored 0
        assert prm.evaluate(nohit, truth, metric, score="prediction")[metric][0] == 0.0


def test_recommenders_ndcg_wikipedia() -> None:
    """test_python_ndcg_at_k: raw grades, log2 discount, Wikipedia's example: 0.785."""
    truth = pl.DataFrame({"user": [0] * 8, "item": range(8), "rel": [3, 2, 3, 0, 1, 2, 3, 2]})
    recs = pl.DataFrame({"user": [0] * 6, "item": range(6), "score": [6.0, 5, 4, 3, 2, 1]})
    value = prm.evaluate(recs, truth, "ndcg@6", score="score", relevance="rel")["ndcg@6"][0]
    assert value == pytest.approx(0.785, abs=1e-4)


def test_recommenders_precision_normalization() -> None:
    """test_python_precision_at_k: P@5 of 3-item lists is at most 3/5 (divide by k)."""
    same = pl.DataFrame({"user": [1, 1, 1, 2, 2, 2], "item": [1, 2, 3] * 2,
                         "score": [5.0, 4, 3, 5, 5, 3]})  # fmt: skip
    truth = same.select("user", "item")
    assert prm.evaluate(same, truth, "precision@3", score="score")["precision@3"][0] == 1.0
    assert prm.evaluate(same, truth, "precision@5", score="score")["precision@5"][0] == (
        pytest.approx(0.6)
    )


def test_recommenders_catalog_coverage() -> None:
    """test_catalog_coverage: 4 of the 5 training items recommended -> 0.8."""
    train = pl.DataFrame({"user": [1, 1, 1, 2, 2, 3, 3, 3], "item": [1, 2, 4, 3, 4, 3, 4, 5]})
    reco = recs_frame({1: [3, 5], 2: [2, 5], 3: [1, 2]})
    catalog = train.select("item").unique()
    out = prm.list_metrics(reco, "coverage", items=catalog)
    assert out["coverage"][0] == pytest.approx(0.8)


# --- OTTO (otto-de/recsys-dataset): test/test_evaluate.py -----------------------------------


def test_otto_get_scores() -> None:
    """test_evaluate.py::test_get_scores at k = 3: recall pooled per event type
    (clicks 1/3, carts 3/9, orders 1/5), then 0.1, 0.3, 0.6 weights; session 4 has labels
    but no predictions (its hits are 0, its min(k, |labels|) counts)."""
    from polars_rankmetrics import kaggle  # noqa: PLC0415 - this test only

    preds = {
        1: {"clicks": [1, 2, 3], "carts": [1, 2, 3], "orders": [1, 32, 33]},
        2: {"clicks": [1000003, 2, 3], "carts": [1000004, 2, 3, 1000007], "orders": [1, 2, 3]},
        3: {"clicks": [1, 2, 3], "carts": [1000007, 1000004, 3], "orders": [1, 2, 3]},
    }
    carts = [1000000, 1000004, 1000007]
    labels = {
        1: {"orders": [0, 1, 2, 3, 4, 5, 16, 17, 18, 19, 20]},
        2: {"clicks": 1000003, "carts": carts, "orders": [1000000, 1000004]},
        3: {"clicks": 1000003, "carts": carts},
        4: {"clicks": 1000003, "carts": carts},
    }
    submission = pl.DataFrame({
        "session_type": [f"{s}_{t}" for s, p in preds.items() for t in p],
        "labels": [" ".join(map(str, v)) for p in preds.values() for v in p.values()],
    })  # fmt: skip
    solution = "\n".join(
        json.dumps({"session": s, "labels": lab}) for s, lab in labels.items()
    ).encode()
    preset = dataclasses.replace(kaggle.PRESETS["otto"], metric="pooled_recall@3")
    score = kaggle.score_submission(submission, solution, preset=preset, unknown_ids="ignore")
    assert score == pytest.approx(0.1 * 1 / 3 + 0.3 * 3 / 9 + 0.6 * 1 / 5)
    rows = kaggle.score_submission(
        submission, solution, preset=preset, unknown_ids="ignore", per_user=True
    )
    assert isinstance(rows, pl.DataFrame)
    # expected_evaluated_events (sessions without a label of a type are not scored there)
    hits = {(r["user"], r["type"]): r["hits"] for r in rows.iter_rows(named=True)}
    assert hits == {
        ("1_orders", "orders"): 1,
        ("2_clicks", "clicks"): 1, ("2_carts", "carts"): 1, ("2_orders", "orders"): 0,
        ("3_clicks", "clicks"): 0, ("3_carts", "carts"): 2,
        ("4_clicks", "clicks"): 0, ("4_carts", "carts"): 0,
    }  # fmt: skip


# --- torchmetrics: retrieval docstring examples (src/torchmetrics/retrieval/*.py) -----------

TM_INDEXES = [0, 0, 0, 1, 1, 1, 1]
TM_PREDS = [0.2, 0.3, 0.5, 0.1, 0.3, 0.5, 0.2]
TM_TARGET = [False, False, True, False, True, False, True]


def torchmetrics_case(
    indexes: Sequence[int], preds: Sequence[float], target: Sequence[float]
) -> tuple[dict[int, dict[int, float]], dict[int, dict[int, float]]]:
    """Rows of one (query, document) each: the document is its row number."""
    run: dict[int, dict[int, float]] = {}
    qrels: dict[int, dict[int, float]] = {}
    for doc, (query, pred, tgt) in enumerate(zip(indexes, preds, target, strict=True)):
        run.setdefault(query, {})[doc] = pred
        qrels.setdefault(query, {})[doc] = float(tgt)
    return run, qrels


TM_RUN, TM_QRELS = torchmetrics_case(TM_INDEXES, TM_PREDS, TM_TARGET)
TM_RUN_HR, TM_QRELS_HR = torchmetrics_case(
    TM_INDEXES, TM_PREDS, [True, False, False, False, True, False, True]
)
TM_RUN_1, TM_QRELS_1 = torchmetrics_case([0, 0, 0], [0.2, 0.3, 0.5], [True, False, True])
TM_RUN_RR, TM_QRELS_RR = torchmetrics_case([0, 0, 0], [0.2, 0.3, 0.5], [False, True, False])
TM_RUN_NDCG, TM_QRELS_NDCG = torchmetrics_case([0] * 5, [0.1, 0.2, 0.3, 4, 70], [10, 0, 0, 1, 5])
TORCHMETRICS_CASES = [
    # RetrievalMAP divides by the relevant items retrieved within top_k ("hits")
    pytest.param(
        Case(TM_RUN, TM_QRELS, "map", 0.7917, options={"denominator": "hits"}),
        id="torchmetrics/retrieval/average_precision.py::RetrievalMAP",
    ),
    pytest.param(
        Case(TM_RUN, TM_QRELS, "mrr", 0.75),
        id="torchmetrics/retrieval/reciprocal_rank.py::RetrievalMRR",
    ),
    pytest.param(
        Case(TM_RUN, TM_QRELS, "ndcg", 0.8467),
        id="torchmetrics/retrieval/ndcg.py::RetrievalNormalizedDCG",
    ),
    pytest.param(
        Case(TM_RUN, TM_QRELS, "precision@2", 0.5),
        id="torchmetrics/retrieval/precision.py::RetrievalPrecision(top_k=2)",
    ),
    pytest.param(
        Case(TM_RUN, TM_QRELS, "recall@2", 0.75),
        id="torchmetrics/retrieval/recall.py::RetrievalRecall(top_k=2)",
    ),
    pytest.param(
        Case(TM_RUN, TM_QRELS, "r_precision", 0.75),
        id="torchmetrics/retrieval/r_precision.py::RetrievalRPrecision",
    ),
    pytest.param(
        Case(TM_RUN_HR, TM_QRELS_HR, "hit_rate@2", 0.5),
        id="torchmetrics/retrieval/hit_rate.py::RetrievalHitRate(top_k=2)",
    ),
    pytest.param(
        Case(TM_RUN_1, TM_QRELS_1, "map", 0.8333, options={"denominator": "hits"}),
        id="torchmetrics/functional/retrieval/average_precision.py",
    ),
    pytest.param(
        Case(TM_RUN_1, TM_QRELS_1, "precision@2", 0.5),
        id="torchmetrics/functional/retrieval/precision.py",
    ),
    pytest.param(
        Case(TM_RUN_1, TM_QRELS_1, "recall@2", 0.5),
        id="torchmetrics/functional/retrieval/recall.py",
    ),
    pytest.param(
        Case(TM_RUN_1, TM_QRELS_1, "hit_rate@2", 1.0),
        id="torchmetrics/functional/retrieval/hit_rate.py",
    ),
    pytest.param(
        Case(TM_RUN_1, TM_QRELS_1, "r_precision", 0.5),
        id="torchmetrics/functional/retrieval/r_precision.py",
    ),
    pytest.param(
        Case(TM_RUN_RR, TM_QRELS_RR, "mrr", 0.5),
        id="torchmetrics/functional/retrieval/reciprocal_rank.py",
    ),
    pytest.param(
        Case(TM_RUN_NDCG, TM_QRELS_NDCG, "ndcg", 0.6957),
        id="torchmetrics/functional/retrieval/ndcg.py",
    ),
]


# torchmetrics >= 1.8 (PR #3160) ignores predictions <= 0 in AP, RR, precision and recall:
# nonpositive_scores="drop". test_{map,mrr,precision,recall}.py::test_*_all_zero_predictions
TM_RUN_ZERO, TM_QRELS_ZERO = torchmetrics_case([0, 0, 0], [0.0, 0.0, 0.0], [1, 0, 1])
TORCHMETRICS_CASES += [
    pytest.param(
        Case(TM_RUN_ZERO, TM_QRELS_ZERO, metric, 0.0,
             options={"nonpositive_scores": "drop", "denominator": "hits"}),
        id=f"torchmetrics/tests/unittests/retrieval/test_{name}.py::"
        f"test_{name}_all_zero_predictions_returns_zero",
    )
    for name, metric in (
        ("map", "map"), ("mrr", "mrr"), ("precision", "precision@3"), ("recall", "recall@3")
    )
]  # fmt: skip


def test_torchmetrics_empty_target_neg() -> None:
    """torchmetrics' default ``empty_target_action="neg"``: a query without a relevant
    document scores 0 and counts, as ``users_without_truth="zero"``."""
    run, qrels = torchmetrics_case(
        [*TM_INDEXES, 2, 2], [*TM_PREDS, 0.4, 0.6], [*TM_TARGET, False, False]
    )
    recs, truth = recs_frame(run), truth_frame(qrels)
    kwargs: dict[str, Any] = {"score": "score", "relevance": "rel", "denominator": "hits"}
    zero = prm.evaluate(recs, truth, "map", users_without_truth="zero", **kwargs)["map"][0]
    assert zero == pytest.approx((1 + (1 / 2 + 2 / 3) / 2 + 0) / 3)
    # torchmetrics "skip" is our default: the query is left out
    assert prm.evaluate(recs, truth, "map", **kwargs)["map"][0] == pytest.approx(0.7917, abs=1e-4)


# --- scikit-learn: ndcg_score / dcg_score (sklearn/metrics/tests/test_ranking.py, docs) ------

SK_TRUE = [10, 0, 0, 1, 5]


def sklearn_case(y_true: Sequence[float], y_score: Sequence[float]) -> tuple[Run, Qrels]:
    """One sample of sklearn's 2-D arrays: every column is a scored, judged document."""
    return (
        {0: {j: float(s) for j, s in enumerate(y_score)}},
        {0: {j: float(t) for j, t in enumerate(y_true)}},
    )


SK_DISC5 = [1 / lg(i) for i in range(1, 6)]
SKLEARN_CASES = [
    pytest.param(
        Case(
            *sklearn_case(SK_TRUE, [0.1, 0.2, 0.3, 4, 70]),
            "ndcg",
            0.6957,
            options={"ties": "average"},
        ),
        id="sklearn/metrics/_ranking.py::ndcg_score[docstring-1]",
    ),
    pytest.param(
        Case(
            *sklearn_case(SK_TRUE, [0.05, 1.1, 1.0, 0.5, 0.0]),
            "ndcg",
            (1 / lg(3) + 10 / lg(4) + 5 / lg(5)) / (10 + 5 / lg(2) + 1 / lg(3)),
            options={"ties": "average"},
        ),
        id="sklearn/metrics/_ranking.py::ndcg_score[docstring-0.49]",
    ),
    pytest.param(
        Case(
            *sklearn_case(SK_TRUE, [0.05, 1.1, 1.0, 0.5, 0.0]),
            "ndcg@4",
            (1 / lg(3) + 10 / lg(4)) / (10 + 5 / lg(2) + 1 / lg(3)),
            options={"ties": "average"},
        ),
        id="sklearn/metrics/_ranking.py::ndcg_score[docstring-k=4-0.35]",
    ),
    # ties: documents 0 (grade 10) and 4 (grade 5) share the top score
    pytest.param(
        Case(*sklearn_case(SK_TRUE, [1, 0, 0, 0, 1]), "ndcg@1", 0.75, options={"ties": "average"}),
        id="sklearn/metrics/_ranking.py::ndcg_score[docstring-ties-k=1]",
    ),
    # ignore_ties=True orders by a reversed np.argsort, not a stable sort: here the tie
    # comes out index descending (item_desc), which is not a rule in general
    pytest.param(
        Case(*sklearn_case(SK_TRUE, [1, 0, 0, 0, 1]), "ndcg@1", 0.5),
        id="sklearn/metrics/_ranking.py::ndcg_score[docstring-ignore_ties-k=1]",
    ),
    pytest.param(
        Case(
            *sklearn_case([0, 1, 2, 3, 4], [0, 0, 0, 0, 0]),
            "dcg@5",
            sum(SK_DISC5) * 2.0,
            options={"ties": "average"},
        ),
        id="sklearn/metrics/tests/test_ranking.py::test_dcg_ties[all-tied]",
    ),
    pytest.param(
        Case(
            *sklearn_case([0, 1, 2, 3, 4], [0, 0, 0, 0, 0]),
            "dcg@5",
            sum(d * t for d, t in zip(SK_DISC5, [4, 3, 2, 1, 0], strict=True)),
        ),
        id="sklearn/metrics/tests/test_ranking.py::test_dcg_ties[ignore_ties]",
    ),
    pytest.param(
        Case(
            *sklearn_case([0, 1, 2, 3, 4], [0, 0, 0, 1, 1]),
            "dcg@5",
            sum(SK_DISC5[:2]) * 3.5 + sum(SK_DISC5[2:]) * 1.0,
            options={"ties": "average"},
        ),
        id="sklearn/metrics/tests/test_ranking.py::test_dcg_ties[two-groups]",
    ),
]


@pytest.mark.parametrize("ties", ["average", "item_desc"])
def test_sklearn_ndcg_toy_examples(ties: str) -> None:
    """test_ndcg_toy_examples: y_true = 3 * eye(7)[:5], scores 6..0: NDCG = 1/log2(u + 2)."""
    run = {u: {j: float(6 - j) for j in range(7)} for u in range(5)}
    qrels = {u: {j: 3.0 if j == u else 0.0 for j in range(7)} for u in range(5)}
    out = prm.evaluate(recs_frame(run), truth_frame(qrels), ["ndcg", "dcg@7"], score="score",
                       relevance="rel", ties=ties, per_user=True)  # fmt: skip
    # user u's relevant item is at position u + 1
    assert out["ndcg"].to_list() == pytest.approx([1 / lg(u + 1) for u in range(5)])
    assert out["dcg@7"].to_list() == pytest.approx([3 / lg(u + 1) for u in range(5)])


# --- ml_metrics (benhamner/Metrics): Python/ml_metrics/test/test_average_precision.py --------

ML_CASES = [
    pytest.param(
        Case({0: [6, 4, 7, 1, 2]}, {0: [1, 2, 3, 4, 5]}, "map@2", 0.25),
        id="ml_metrics/test_average_precision.py::test_apk[1]",
    ),
    # a repeated prediction wastes its slot (ml_metrics skips "p in predicted[:i]")
    pytest.param(
        Case(
            {0: [1, 1, 1, 1, 1]},
            {0: [1, 2, 3, 4, 5]},
            "map@5",
            0.2,
            options={"duplicates": "first"},
        ),
        id="ml_metrics/test_average_precision.py::test_apk[2]",
    ),
    pytest.param(
        Case({0: [*range(1, 21), *range(200, 600)]}, {0: list(range(1, 100))}, "map@20", 1.0),
        id="ml_metrics/test_average_precision.py::test_apk[3]",
    ),
    pytest.param(
        Case({0: [1, 2, 3, 4]}, {0: [1, 2, 3, 4]}, "map@3", 1.0),
        id="ml_metrics/test_average_precision.py::test_mapk[1]",
    ),
    pytest.param(
        Case(
            {u: [1, 2, 3, 4, 5] for u in range(3)},
            {0: [1, 3, 4], 1: [1, 2, 4], 2: [1, 3]},
            "map@3",
            0.685185185185185,
        ),
        id="ml_metrics/test_average_precision.py::test_mapk[2]",
    ),
    pytest.param(
        Case(
            {0: [6, 4, 7, 1, 2], 1: [1, 1, 1, 1, 1]},
            {0: [1, 2, 3, 4, 5], 1: [1, 2, 3, 4, 5]},
            "map@5",
            0.26,
            options={"duplicates": "first"},
        ),
        id="ml_metrics/test_average_precision.py::test_mapk[3]",
    ),
    pytest.param(
        Case(
            {0: [1, 2, 3, 4, 5], 1: [1, 1, 1], 2: [1, 2, 1]},
            {0: [1, 3], 1: [1, 2, 3], 2: [1, 2, 3]},
            "map@3",
            11 / 18,
            options={"duplicates": "first"},
        ),
        id="ml_metrics/test_average_precision.py::test_mapk[4]",
    ),
]


# --- RePlay: tests/metrics/conftest.py (recs_data, gt_data), tests/metrics/test_metrics.py ---

REPLAY_RECS = {
    1: {3: 0.6, 7: 0.5, 10: 0.4, 11: 0.3, 2: 0.2},
    2: {5: 0.6, 8: 0.5, 11: 0.4, 1: 0.3, 3: 0.2},
    3: {4: 1.0, 9: 0.5, 2: 0.1},
}
REPLAY_GT = {1: [5, 6, 7, 8, 9, 10], 2: [6, 7, 4, 10, 11], 3: [1, 2, 3, 4, 5]}
REPLAY_CASES = [
    pytest.param(
        Case(REPLAY_RECS, REPLAY_GT, metric, expected),
        id=f"RePlay/tests/metrics/test_metrics.py::{test}[{metric}]",
    )
    for test, metric, expected in (
        ("test_metric[Precision]", "precision@3", 0.55555),
        ("test_metric[Precision]", "precision@5", 0.333333),
        ("test_metric[Precision]", "precision@10", 0.166666),
        ("test_metric[HitRate]", "hit_rate@3", 1.0),
        ("test_metric[MRR]", "mrr@3", 0.61111),
        ("test_metric[MRR]", "mrr@10", 0.61111),
        # RePlay's MAP divides by min(k, |Rel|): our default (user 1 has 6 relevant: at
        # k = 10 it divides by 6, not 10)
        ("test_metric[MAP]", "map@3", 0.35185),
        ("test_metric[MAP]", "map@5", 0.21111),
        ("test_metric[MAP]", "map@10", 0.198148),
        ("test_metric[NDCG]", "ndcg@3", 0.48975),
        ("test_metric[NDCG]", "ndcg@5", 0.35396),
        ("test_metric[NDCG]", "ndcg@10", 0.34018),
        ("test_recall", "recall@5", 0.31111),
        ("test_recall", "recall@10", 0.31111),
    )
]
REPLAY_CASES += [
    pytest.param(
        Case({1: [1, 3]}, {1: [1, 2]}, metric, expected),
        id=f"RePlay/tests/metrics/test_metrics.py::test_metric_value_by_user[{metric}]",
    )
    for metric, expected in (
        ("hit_rate@1", 1.0), ("hit_rate@5", 1.0), ("map@1", 1.0), ("map@5", 0.5),
        ("mrr@5", 1.0), ("ndcg@1", 1.0), ("ndcg@5", 0.6131471927654584),
        ("precision@1", 1.0), ("precision@5", 0.2), ("recall@1", 0.5), ("recall@5", 0.5),
    )
]  # fmt: skip


def test_replay_coverage() -> None:
    """RePlay test_coverage_metric: recs against themselves, top 3 holds 9 of 10 items."""
    recs = recs_frame(REPLAY_RECS)
    catalog = recs.select("item").unique()
    out = prm.list_metrics(recs, ["coverage@3", "coverage@5"], score="score", items=catalog)
    assert out.row(0) == pytest.approx((0.9, 1.0))


# --- recmetrics: tests/test_metrics.py ------------------------------------------------------

RECMETRICS_CASES = [
    # _apk divides by the hits within k; _ark (mark) by the number of relevant items
    pytest.param(
        Case({0: ["a", "x", "b", "c", "d", "e", "q", "y", "z", "f"]},
             {0: ["a", "b", "c", "d", "e", "f"]}, "map@10", 0.7749999999999999,
             options={"denominator": "hits"}),
        id="recmetrics/tests/test_metrics.py::test_apk[stanford]",
    ),
    *[
        pytest.param(
            Case({0: predicted}, {0: ["A", "B", "X"]}, f"map@{k}", expected,
                 options={"denominator": "hits", "duplicates": "first"}),
            id=f"recmetrics/tests/test_metrics.py::test_apk[{''.join(predicted)}@{k}]",
        )
        for predicted, k, expected in (
            (["X", "Y", "Z"], 1, 1.0), (["X", "Y", "Z"], 2, 1.0), (["X", "Y", "Z"], 3, 1.0),
            (["foo", "B", "A"], 1, 0.0), (["foo", "B", "A"], 2, 1 / 2),
            (["foo", "B", "A"], 3, (1 / 2 + 2 / 3) / 2),
            (["A", "A", "Z"], 3, 1.0), (["A", "A", "Z"], 1000, 1.0), (["A", "B", "Z"], 3, 1.0),
            (["B"], 1, 1.0), (["B"], 3, 1.0), (["Z"], 100, 0.0), (["B", "B", "B"], 100, 1.0),
        )
    ],
    # no predictions: 0 (a user without recommendations scores 0)
    pytest.param(
        Case({1: ["A"]}, {0: ["A", "B", "X"], 1: ["A"]}, "map@3", 0.5,
             {0: 0.0, 1: 1.0}, {"denominator": "hits"}),
        id="recmetrics/tests/test_metrics.py::test_apk[no-predictions]",
    ),
    pytest.param(
        Case({0: ["X", "Y", "Z"], 1: ["X", "Y", "Z"]}, {0: ["A", "B", "X"], 1: ["A", "B", "Y"]},
             "map@5", 0.25, options={"denominator": "relevant"}),
        id="recmetrics/tests/test_metrics.py::test_mark",
    ),
    pytest.param(
        Case({0: ["X", "Y", "Z"], 1: ["A", "Z", "B"]}, {0: ["A", "B", "X"], 1: ["A", "B", "Y"]},
             "map@5", (1 + (1 + 2 / 3) / 2) / 2, options={"denominator": "hits"}),
        id="recmetrics/tests/test_metrics.py::test_mapk[letters]",
    ),
    pytest.param(
        # METRICS.md worked example 2; 0 is a repeated non-relevant prediction
        Case({0: [5, 0, 4, 0, 0, 2, 0, 0, 3, 1], 1: [0, 7, 0, 0, 6, 0, 8, 0, 0, 0]},
             {0: [1, 2, 3, 4, 5], 1: [6, 7, 8]}, "map@10", 0.53254,
             options={"denominator": "hits"}),
        id="recmetrics/tests/test_metrics.py::test_mapk[multi-class]",
    ),
    pytest.param(
        Case({0: ["X", "Y", "Z"], 1: ["X", "Y", "Z"]}, {0: ["A", "B", "X"], 1: ["A", "B", "Y"]},
             "precision@3", 1 / 3),
        id="recmetrics/tests/test_metrics.py::test_recommender_precision",
    ),
    pytest.param(
        Case({0: ["X", "Y", "Z"], 1: ["X", "Y", "Z"]}, {0: ["A", "B", "X"], 1: ["A", "B", "Y"]},
             "recall@3", 1 / 3),
        id="recmetrics/tests/test_metrics.py::test_recommender_recall",
    ),
]  # fmt: skip


def test_recmetrics_personalization() -> None:
    """test_personalization: one shared item (X) among 3 lists of 4 -> 1 - 1/12 = 0.916."""
    recs = recs_frame({0: ["1", "2", "C", "D"], 1: ["4", "3", "m", "X"], 2: ["7", "B", "t", "X"]})
    out = prm.list_metrics(recs, "personalization@4")
    assert out["personalization@4"][0] == pytest.approx(0.916, abs=1e-2)
    assert out["personalization@4"][0] == pytest.approx(1 - 1 / 12)


def test_recmetrics_intra_list_similarity() -> None:
    """test_intra_list_similarity: three comedies and an action film, similarity 0.5.

    One category per item: recmetrics' cosine similarity is the Jaccard index, so our
    ild (1 - Jaccard) is 1 - 0.5.
    """
    recs = recs_frame({0: [3, 7, 5, 9]})
    genre = {1: None, 2: None, 3: "Comedy", 4: "Comedy", 5: "Comedy", 6: "Action", 7: "Comedy",
             8: None, 9: "Action", 10: "Action"}  # fmt: skip
    items = pl.DataFrame({"item": [i for i, g in genre.items() if g], "category": [
        g for g in genre.values() if g]})  # fmt: skip
    out = prm.list_metrics(recs, "ild@4", items=items, category="category")
    assert out["ild@4"][0] == pytest.approx(1 - 0.5)


def test_recmetrics_coverage() -> None:
    """test_prediction_coverage / test_catalog_coverage: X, Y, Z of 6 items -> 50 %.

    An item outside the catalog (W) fails recmetrics' assertion; here it is refused too.
    """
    catalog = pl.DataFrame({"item": ["A", "B", "C", "X", "Y", "Z"]})
    recs = recs_frame({0: ["X", "Y", "Z"], 1: ["X", "Y", "Z"]})
    assert prm.list_metrics(recs, "coverage@3", items=catalog)["coverage@3"][0] == 0.5
    with pytest.raises(ValueError, match="catalog"):
        prm.list_metrics(recs_frame({0: ["X", "Y", "Z"], 1: ["W", "Y", "Z"]}), "coverage@3",
                         items=catalog)  # fmt: skip


def test_recmetrics_novelty() -> None:
    """test_novelty: the same top 10 for two users, item popularity counts, 933 users.

    recmetrics: mean over users of sum_i -log2(pop_i / u) / n = 0.10697.
    """
    pop = {1198: 893, 1270: 876, 593: 876, 2762: 867, 318: 864, 2571: 863, 260: 859,
           1240: 857, 296: 856, 608: 853}  # fmt: skip
    history = pl.DataFrame({"user": [u for c in pop.values() for u in range(c)],
                            "item": [i for i, c in pop.items() for _ in range(c)]})  # fmt: skip
    # users 893..932 hold only another item, so that N = 933 users
    history = pl.concat([history, pl.DataFrame({"user": range(893, 933), "item": [1] * 40})])
    recs = recs_frame({0: list(pop), 1: list(pop)})
    out = prm.list_metrics(recs, "novelty@10", interactions=history)
    assert out["novelty@10"][0] == pytest.approx(0.10697151566593581, rel=1e-12)


@pytest.mark.parametrize(
    "case", [*RANX_CASES, *IRM_CASES, *IRM2_CASES, *RECTOOLS_CASES, *TORCHMETRICS_CASES,
             *SKLEARN_CASES, *ML_CASES, *REPLAY_CASES, *RECMETRICS_CASES, *PYTREC_EVAL_CASES],
)  # fmt: skip
def test_peer_case(case: Case) -> None:
    mean, per_user = evaluate_case(case)
    assert mean == pytest.approx(case.mean, abs=1e-4)
    if case.per_user is not None:
        # the same users, each with the peer's value (users left out are absent)
        assert per_user == pytest.approx(dict(case.per_user), abs=1e-4)


# --- RecTools beyond accuracy: tests/metrics/test_novelty.py, test_popularity.py,
#     test_catalog.py ---------------------------------------------------------------------

RT_NOV_HISTORY = {"u1": ["i1", "i2"], "u2": ["i1"], "u3": ["i1"]}
RT_NOV_RECO = {"u1": ["i3"], "u2": ["i2", "i3"], "u3": ["i1", "i2"]}
RT_POP_HISTORY = {"u1": ["i1", "i2"], "u2": ["i1", "i3"], "u3": ["i1", "i2"]}
RT_POP_RECO = {"u1": ["i1", "i2"], "u2": ["i3", "i1", "i2"], "u3": ["i3", "i2"]}
LOG3 = math.log2(3)
BEYOND_CASES = [
    ("test_novelty.py::test_correct_miuf_values[1]", RT_NOV_RECO, RT_NOV_HISTORY, "novelty@1",
     [LOG3, LOG3, 0.0]),
    ("test_novelty.py::test_correct_miuf_values[2]", RT_NOV_RECO, RT_NOV_HISTORY, "novelty@2",
     [LOG3, LOG3, LOG3 / 2]),
    ("test_popularity.py::test_correct_arp_values[1]", RT_POP_RECO, RT_POP_HISTORY, "arp@1",
     [3.0, 1.0, 1.0]),
    ("test_popularity.py::test_correct_arp_values[3]", RT_POP_RECO, RT_POP_HISTORY, "arp@3",
     [2.5, 2.0, 1.5]),
    ("test_popularity.py::test_when_new_item_in_reco[3]",
     {**RT_POP_RECO, "u2": ["i3", "i1", "i4"]}, RT_POP_HISTORY, "arp@3", [2.5, 4 / 3, 1.5]),
]  # fmt: skip


@pytest.mark.parametrize(
    ("reco", "history", "metric", "per_user"),
    [pytest.param(*case[1:], id=f"RecTools/tests/metrics/{case[0]}") for case in BEYOND_CASES],
)
def test_rectools_beyond(reco: Run, history: Qrels, metric: str, per_user: Sequence[float]) -> None:
    interactions = truth_frame(history).select("user", "item")
    out = prm.list_metrics(recs_frame(reco), metric, interactions=interactions)
    assert out[metric][0] == pytest.approx(float(np.mean(per_user)))


def test_rectools_catalog_coverage() -> None:
    """test_catalog.py::test_calc[True-0.4]: items 1 and 2 in the top 2, catalog of 5.

    User 2 holds items 1 and 2 both at rank 1, which RecTools reads as both in the top
    2; two items at one position are refused here, so user 2's item 2 goes to rank 2.
    """
    catalog = pl.DataFrame({"item": range(5)})
    reco = pl.DataFrame({"user": [1, 1, 1, 2, 2, 3, 4], "item": [1, 2, 3, 1, 2, 1, 1],
                         "rank": [1, 2, 3, 1, 1, 3, 2]})  # fmt: skip
    with pytest.raises(ValueError, match="share one position"):
        prm.list_metrics(reco, "coverage@2", items=catalog)
    reco = reco.with_columns(rank=pl.Series([1, 2, 3, 1, 2, 3, 2]))
    out = prm.list_metrics(reco, "coverage@2", items=catalog)
    assert out["coverage@2"][0] == pytest.approx(0.4)


# --- scipy and statsmodels: the statistics of compare ----------------------------------------


def paired_scores(a: Sequence[float], b: Sequence[float]) -> pl.DataFrame:
    n = len(a)
    return pl.DataFrame({"model": ["a"] * n + ["b"] * n, "user": [*range(n), *range(n)],
                         "value": [float(x) for x in (*a, *b)]})  # fmt: skip


def compared(a: Sequence[float], b: Sequence[float], test: str) -> dict[str, Any]:
    out = prm.compare_per_user(paired_scores(a, b), baseline="b", test=test)  # type: ignore[arg-type]
    return out.filter(pl.col("system") == "a").row(0, named=True)


def test_scipy_ttest_rel() -> None:
    """scipy/stats/tests/test_stats.py::test_ttest_rel: t = 0.8125, p = 0.41846."""
    row = compared(np.linspace(1, 100, 100), np.linspace(1.01, 99.989, 100), "t")
    assert row["p_value"] == pytest.approx(0.41846234511362157, rel=1e-9)
    assert row["effect_size"] * math.sqrt(100) == pytest.approx(0.81248591389165692, rel=1e-9)


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        # test_accuracy_wilcoxon: zeros and ties, zero_method="wilcox", asymptotic, no
        # continuity correction (scipy's defaults when zeros are present)
        pytest.param(
            [u for u, v in zip(range(-4, 5), [1, 4, 16, 15, 8, 4, 5, 1, 2], strict=True)
             for _ in range(v)],
            None, 0.00641346115861,
            id="scipy/stats/tests/test_morestats.py::TestWilcoxon::test_accuracy_wilcoxon[wilcox]",
        ),
        # test_wilcoxon_result_attributes's data: no ties nor zeros, n = 12: scipy's default
        # is the exact distribution (the test's 0.6949 is method="asymptotic")
        pytest.param(
            [120, 114, 181, 188, 180, 146, 121, 191, 132, 113, 127, 112],
            [133, 143, 119, 189, 112, 199, 198, 113, 115, 121, 142, 187], 0.7333984375,
            id="scipy/stats/tests/test_morestats.py::TestWilcoxon::test_wilcoxon_result_attributes[exact]",
        ),
        # test_wilcoxon_tie: d = 0.1 ten times; every sign the same, exact p = 2 / 2^10
        pytest.param([0.1] * 10, None, 2 / 2**10,
                     id="scipy/stats/tests/test_morestats.py::TestWilcoxon::test_wilcoxon_tie[exact]"),
    ],
)  # fmt: skip
def test_scipy_wilcoxon(a: Sequence[float], b: Sequence[float] | None, expected: float) -> None:
    row = compared(a, b if b is not None else [0.0] * len(a), "wilcoxon")
    assert row["p_value"] == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("n", [5, 13, 14, 20])
def test_scipy_wilcoxon_constant_difference(n: int) -> None:
    """Every difference 0.1: scipy's default is an exact permutation test up to n = 13
    (p = 2 / 2^n), then the normal approximation; compare keeps scipy's value."""
    row = compared([0.1] * n, [0.0] * n, "wilcoxon")
    from scipy import stats  # noqa: PLC0415 - the oracle, next to its use

    assert row["p_value"] == pytest.approx(float(stats.wilcoxon([0.1] * n).pvalue), rel=1e-12)
    if n <= 13:
        assert row["p_value"] == pytest.approx(2 / 2**n, rel=1e-12)


def test_scipy_intervals() -> None:
    """The intervals of compare against scipy's own: ``ttest_rel(...).confidence_interval``
    for the difference, ``t.interval`` for a mean (exact), and ``bootstrap(method=
    "percentile")`` (different random streams: equal up to Monte Carlo error)."""
    from scipy import stats  # noqa: PLC0415 - the oracle, next to its use

    rng = np.random.default_rng(3)
    a = rng.random(30)
    b = a + rng.normal(0.05, 0.1, 30)
    row = compared(list(a), list(b), "t")
    diff = stats.ttest_rel(a, b).confidence_interval(0.95)
    assert (row["diff_ci_low"], row["diff_ci_high"]) == pytest.approx((diff.low, diff.high))
    mean = stats.t.interval(0.95, 29, loc=a.mean(), scale=stats.sem(a))
    assert (row["ci_low"], row["ci_high"]) == pytest.approx(mean)
    out = prm.compare_per_user(
        paired_scores(list(a), list(b)), baseline="b", ci_method="bootstrap",
        n_resamples=20_000, seed=0,
    ).filter(pl.col("system") == "a").row(0, named=True)  # fmt: skip
    for values, low, high in ((a, "ci_low", "ci_high"), (a - b, "diff_ci_low", "diff_ci_high")):
        ref = stats.bootstrap(
            (values,), np.mean, method="percentile", n_resamples=20_000, random_state=0
        ).confidence_interval
        tolerance = 0.1 * stats.sem(values)
        assert out[low] == pytest.approx(ref.low, abs=tolerance)
        assert out[high] == pytest.approx(ref.high, abs=tolerance)


# statsmodels/stats/tests/test_multi.py: pval0 sorted, with R's p.adjust columns (res_multtest1)
SM_RAW = [5.23656777208e-05, 0.00028140506198, 0.0149877310796, 0.0202732688798,
          0.177096952723, 0.642193923795, 0.680845947633, 0.71626938238, 0.838541367553,
          0.967833824309]  # fmt: skip
SM_BONFERRONI = [0.000523656777208, 0.0028140506198, 0.149877310796, 0.202732688798,
                 1.0, 1.0, 1.0, 1.0, 1.0, 1.0]  # fmt: skip
SM_HOLM = [0.000523656777208, 0.00253264555782, 0.1199018486368, 0.1419128821586,
           1.0, 1.0, 1.0, 1.0, 1.0, 1.0]  # fmt: skip
SM_BH = [0.000523656777208, 0.0014070253099, 0.04995910359866667, 0.0506831721995,
         0.354193905446, 0.895336727975, 0.895336727975, 0.895336727975,
         0.9317126306144445, 0.967833824309]  # fmt: skip
# res_multtest3: raw, bonferroni, holm, fdr_bh
SM3_RAW = [0.001, 0.002, 0.003, 0.004, 0.005, 0.05, 0.06, 0.07, 0.08, 0.09]
SM3 = {
    "bonferroni": [0.01, 0.02, 0.03, 0.04, 0.05, 0.5, 0.6, 0.7, 0.8, 0.9],
    "holm": [0.01, 0.018, 0.024, 0.028, 0.03, 0.25, 0.25, 0.25, 0.25, 0.25],
    "bh": [0.01] * 5 + [0.08333333333333334, 0.0857142857142857, 0.0875, 0.0888888888888889, 0.09],
}


@pytest.mark.parametrize(
    ("raw", "method", "expected"),
    [
        pytest.param(SM_RAW, "bonferroni", SM_BONFERRONI, id="statsmodels/test_multi.py::res_multtest1[b]"),
        pytest.param(SM_RAW, "holm", SM_HOLM, id="statsmodels/test_multi.py::res_multtest1[h]"),
        pytest.param(SM_RAW, "bh", SM_BH, id="statsmodels/test_multi.py::res_multtest1[fdr_i]"),
        *[pytest.param(SM3_RAW, m, e, id=f"statsmodels/test_multi.py::res_multtest3[{m}]")
          for m, e in SM3.items()],
    ],
)  # fmt: skip
def test_statsmodels_multipletests(raw: list[float], method: str, expected: list[float]) -> None:
    # shuffled, as the family's p-values come in no particular order
    order = [3, 9, 0, 6, 1, 8, 2, 5, 7, 4]
    adjusted = _stats.adjust([raw[i] for i in order], method)  # type: ignore[arg-type]
    assert adjusted == pytest.approx([expected[i] for i in order], rel=1e-12)
