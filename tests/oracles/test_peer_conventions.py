"""Peers' conventions as named options of ``evaluate`` (issue 12), defaults unchanged.

Each option has a hand-worked example, a check against the peer where it is
installed (trec_eval's own outputs, pytrec_eval, ir_measures, ranx) or against
the peer's documented formula, a hypothesis test against ``tests/textbook.py``
and its bad-input errors.
"""

from __future__ import annotations

import math
import re
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_rankmetrics as prm
from polars_rankmetrics import pandas as prm_pd
from polars_rankmetrics.conventions import resolve
from polars_rankmetrics.trec import read_trec_qrels, read_trec_run
from tests import textbook

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "conformance" / "trec_eval"
needs_data = pytest.mark.skipif(not DATA.is_dir(), reason=f"no trec_eval data at {DATA}")

# one user, five recommendations, graded truth: B (1) at 2, D (2) at 4, Z (0) judged, unshown
RECS = pl.DataFrame(
    {
        "user": [1] * 5,
        "item": ["A", "B", "C", "D", "E"],
        "rank": [1, 2, 3, 4, 5],
        "score": [5.0, 4.0, 3.0, 0.0, -1.0],
    }
)
TRUTH = pl.DataFrame({"user": [1, 1, 1], "item": ["B", "D", "Z"], "rel": [1, 2, 0]})


def _one(metric: str, **options: Any) -> float:
    out = prm.evaluate(RECS, TRUTH, metric, relevance="rel", **options)
    return float(out[metric][0])


def _lg(i: int) -> float:
    return math.log2(i + 1)


# --- the defaults do not move ---------------------------------------------------------


def test_defaults_are_unchanged() -> None:
    conv = resolve()
    assert (conv.denominator, conv.gain, conv.ideal) == ("min_k", "linear", "truth")
    assert (conv.unjudged, conv.nonpositive_scores, conv.user_sets) == ("keep", "keep", "any")
    explicit = {
        "ideal": "truth",
        "unjudged": "keep",
        "nonpositive_scores": "keep",
        "user_sets": "any",
    }
    metrics = ["map@5", "ndcg@3", "precision@2", "mrr"]
    assert prm.evaluate(RECS, TRUTH, metrics, relevance="rel", **explicit).equals(
        prm.evaluate(RECS, TRUTH, metrics, relevance="rel")
    )


# --- 1. AP divided by k (RecTools divide_by_k=True, RePlay) ---------------------------


def test_denominator_k_worked_example() -> None:
    # hits B at 2 (P@2 = 1/2) and D at 4 (P@4 = 2/4): sum 1.0, / k = 5 -> 0.2
    assert _one("map@5", denominator="k") == pytest.approx(0.2)
    # at k = 3 only B: 0.5 / 3; the default divides by min(m_u = 2, 3) = 2
    assert _one("map@3", denominator="k") == pytest.approx(0.5 / 3)
    assert _one("map@3") == pytest.approx(0.25)


def test_denominator_k_replay_formula() -> None:
    # RePlay's MAP docstring: AP@K(i) = 1/K sum_{j=1..K} 1[r_ij] Precision@j(i); its example
    # style: relevant at positions 1 and 3 of K = 4 -> (1/1 + 2/3) / 4
    recs = pl.DataFrame({"user": [7] * 4, "item": [1, 2, 3, 4], "rank": [1, 2, 3, 4]})
    truth = pl.DataFrame({"user": [7, 7, 7], "item": [1, 3, 99]})
    out = prm.evaluate(recs, truth, "map@4", denominator="k")
    assert out["map@4"][0] == pytest.approx((1 + 2 / 3) / 4)


def test_denominator_k_errors() -> None:
    with pytest.raises(ValueError, match=r"denominator='k' divides AP by the cutoff.*map@k"):
        _one("map", denominator="k")
    with pytest.raises(ValueError, match="fixes denominator='relevant'"):
        _one("map@5", denominator="k", conventions="trec")
    with pytest.raises(ValueError, match="denominator"):
        _one("map@5", denominator="K")


# --- 2. NDCG whose ideal is k items (RecTools' NDCG, "SDCG") --------------------------


def test_ideal_k_worked_example() -> None:
    # DCG@5 = 1/lg(2) + 2/lg(4) (linear gains 1 and 2 at positions 2 and 4);
    # ideal: k = 5 items of the user's top gain 2
    dcg5 = 1 / _lg(2) + 2 / _lg(4)
    ideal5 = 2 * sum(1 / _lg(i) for i in range(1, 6))
    assert _one("ndcg@5", ideal="k") == pytest.approx(dcg5 / ideal5)
    assert _one("ndcg@5", ideal="k") == pytest.approx(0.253061, abs=1e-6)
    # the default ideal is the truth: 2/lg(1) + 1/lg(2)
    assert _one("ndcg@5") == pytest.approx(dcg5 / (2 + 1 / _lg(2)))


def test_ideal_k_rectools_binary() -> None:
    # RecTools' NDCG docstring: IDCG@k = sum_{i=1..k} 1/log2(i+1), whatever the number of
    # relevant items. One relevant item at position 1 of k = 3: 1 / (1 + 1/lg 2 + 1/lg 3)
    recs = pl.DataFrame({"user": [1, 1, 1], "item": [1, 2, 3], "rank": [1, 2, 3]})
    truth = pl.DataFrame({"user": [1], "item": [1]})
    out = prm.evaluate(recs, truth, ["ndcg@3", "dcg@3"], ideal="k")
    assert out["ndcg@3"][0] == pytest.approx(1 / (1 + 1 / _lg(2) + 1 / _lg(3)))
    assert out["dcg@3"][0] == pytest.approx(1.0)  # DCG does not read the ideal


def test_ideal_k_errors() -> None:
    with pytest.raises(ValueError, match=r"ideal='k'.*'ndcg' needs a cutoff, e.g. 'ndcg@10'"):
        _one("ndcg", ideal="k")
    with pytest.raises(ValueError, match="at most"):
        _one("ndcg@2000000", ideal="k")
    with pytest.raises(ValueError, match="fixes ideal='truth'"):
        _one("ndcg@5", ideal="k", conventions="trec")
    with pytest.raises(ValueError, match="ideal"):
        _one("ndcg@5", ideal="all")


# --- 3. a gain per grade (trec_eval -mndcg.1=3,2=9) ----------------------------------


def test_gain_table_worked_example() -> None:
    # gains: B (1) -> 1 (unlisted: its own grade), D (2) -> 9
    dcg = 1 / _lg(2) + 9 / _lg(4)
    assert _one("ndcg@5", gain={2: 9}) == pytest.approx(dcg / (9 + 1 / _lg(2)))
    assert _one("dcg@5", gain={2: 9}) == pytest.approx(dcg)
    # a table that does not grow with the grade: the ideal list sorts by gain (grade 1 first)
    assert _one("ndcg@1", gain={1: 5, 2: 0.5}) == pytest.approx(0.0)
    assert _one("ndcg@2", gain={1: 5, 2: 0.5}) == pytest.approx((5 / _lg(2)) / (5 + 0.5 / _lg(2)))


@needs_data
def test_gain_table_matches_trec_eval() -> None:
    # trec_eval -q -mndcg.1=3,2=9,4=4.5 qrels.test results.test (out.test.meas_params)
    lines = (DATA / "expected" / "out.test.meas_params").read_text().splitlines()
    expected = {
        parts[1]: float(parts[2])
        for parts in (line.split() for line in lines)
        if parts and parts[0] == "ndcg_1=3,2=9,4=4.5"
    }
    assert set(expected) == {"301", "302", "303", "all"}
    qrels = read_trec_qrels(DATA / "qrels.test")
    run = read_trec_run(DATA / "results.test")
    table = {1: 3, 2: 9, 4: 4.5}
    per_user = prm.evaluate(
        run, qrels, "ndcg", score="score", relevance="rel", conventions="trec", gain=table,
        per_user=True,
    )  # fmt: skip
    for user, value in zip(per_user["user"], per_user["ndcg"], strict=True):
        assert value == pytest.approx(expected[user], abs=5e-5)
    summary = prm.evaluate(run, qrels, "ndcg", score="score", relevance="rel",
                           conventions="trec", gain=table)  # fmt: skip
    assert summary["ndcg"][0] == pytest.approx(expected["all"], abs=5e-5)


@needs_data
@pytest.mark.parametrize("table", [{1: 3, 2: 9, 4: 5}, {1: 1, 3: 10}, {2: 1, 4: 2}, {3: 0}])
def test_gain_table_matches_ir_measures_on_graded_qrels(table: dict[int, int]) -> None:
    # graded qrels (-1..4): the table changes the ideal order; ir_measures' nDCG(gains=...)
    # maps each level to its gain before pytrec_eval (integer gains only there), so list
    # every level
    ir_measures = pytest.importorskip("ir_measures")
    qrels = read_trec_qrels(DATA / "qrels.rel_level")
    run = read_trec_run(DATA / "results.test")
    full = {level: table.get(level, level) for level in range(0, 5)}
    measure = ir_measures.nDCG(gains=full)
    got = prm.evaluate(run, qrels, "ndcg", score="score", relevance="rel", conventions="trec",
                       gain=table, per_user=True)  # fmt: skip
    mine = dict(zip(got["user"], got["ndcg"], strict=True))
    q = [ir_measures.Qrel(u, i, int(g)) for u, i, g in qrels.iter_rows()]
    r = [ir_measures.ScoredDoc(u, i, s) for u, i, _, s, _ in run.iter_rows()]
    theirs = {m.query_id: m.value for m in ir_measures.iter_calc([measure], q, r)}
    assert theirs.keys() == mine.keys()
    for user, value in theirs.items():
        assert mine[user] == pytest.approx(value, abs=1e-9)


def test_gain_table_errors() -> None:
    with pytest.raises(ValueError, match=r"grade 0 must be a finite number > 0"):
        _one("ndcg@5", gain={0: 1})
    with pytest.raises(
        ValueError, match=r"gain of grade 2 must be a finite number in \[0, 1e300\]"
    ):
        _one("ndcg@5", gain={2: -1})
    with pytest.raises(ValueError, match="gain of grade 2"):
        _one("ndcg@5", gain={2: float("nan")})
    with pytest.raises(TypeError, match="gain mapping grades must be numbers"):
        _one("ndcg@5", gain={"2": 9})
    with pytest.raises(TypeError, match=r"gain must be 'linear', 'exponential' or a mapping"):
        _one("ndcg@5", gain=9)
    with pytest.raises(ValueError, match="gain"):
        _one("ndcg@5", gain="cubic")
    # trec_eval's own -mndcg: a table is allowed with the trec preset, a named gain is not
    assert resolve("trec", gain={2: 9}).gain == ((2.0, 9.0),)
    with pytest.raises(ValueError, match="fixes gain='linear'"):
        resolve("trec", gain="exponential")


def test_gain_table_overflow_is_refused() -> None:
    truth = TRUTH.with_columns(pl.Series("rel", [1.0, 2e300, 0.0]))
    with pytest.raises(ValueError, match=r"too large for the \{2: 9\} gain"):
        prm.evaluate(RECS, truth, "ndcg@5", relevance="rel", gain={2: 9})


# --- 4. ties="average": the expectation over the orders of tied scores ---------------

TIED = pl.DataFrame({"user": [1] * 5, "item": list("ABCDE"), "score": [3.0, 2, 2, 2, 1]})
TIED_TRUTH = pl.DataFrame({"user": [1, 1, 1], "item": ["B", "E", "A"], "rel": [2, 1, 0]})


def _tied(metrics: list[str], **options: Any) -> dict[str, float]:
    out = prm.evaluate(TIED, TIED_TRUTH, metrics, score="score", relevance="rel",
                       ties="average", **options)  # fmt: skip
    return {name: float(out[name][0]) for name in metrics}


def test_tie_average_worked_example() -> None:
    # A (3.0) at 1; B, C, D tied at 2..4 (B relevant, grade 2); E (1.0, grade 1) at 5.
    # B is at each of 2, 3, 4 with chance 1/3
    got = _tied(["precision@2", "recall@3", "dcg@3", "mrr", "mrr@2", "hit_rate@3",
                 "n_relevant_retrieved@5", "f1@3", "map@5"])  # fmt: skip
    # AP over min(m_u, k) = 2: B at 2, 3 or 4 (P = 1/2, 1/3, 1/4), then E at 5 (P = 2/5)
    assert got["map@5"] == pytest.approx(((1 / 2 + 1 / 3 + 1 / 4) / 3 + 2 / 5) / 2)
    assert got["precision@2"] == pytest.approx((1 / 3) / 2)
    assert got["recall@3"] == pytest.approx((2 / 3) / 2)
    assert got["dcg@3"] == pytest.approx(2 * (1 / _lg(2) + 1 / _lg(3)) / 3)
    assert got["mrr"] == pytest.approx((1 / 2 + 1 / 3 + 1 / 4) / 3)
    assert got["mrr@2"] == pytest.approx((1 / 2) / 3)
    assert got["hit_rate@3"] == pytest.approx(2 / 3)
    assert got["n_relevant_retrieved@5"] == pytest.approx(2.0)
    assert got["f1@3"] == pytest.approx(2 * (2 / 3) / (3 + 2))


def test_tie_average_matches_sklearn_ndcg() -> None:
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    # sklearn ranks only the scored items: the truth here is within the list
    y_true = np.array([[0, 2, 0, 0, 1]])
    y_score = np.array([[3.0, 2.0, 2.0, 2.0, 1.0]])
    for k in (1, 2, 3, 4, 5):
        got = _tied([f"ndcg@{k}"])[f"ndcg@{k}"]
        theirs = sklearn_metrics.ndcg_score(y_true, y_score, k=k, ignore_ties=False)
        assert got == pytest.approx(theirs)


@settings(max_examples=40, deadline=None)
@given(
    grades=st.lists(st.integers(0, 3), min_size=2, max_size=7),
    scores=st.lists(st.sampled_from([0.0, 1.0, 2.0]), min_size=7, max_size=7),
    k=st.integers(1, 7),
)
def test_tie_average_matches_sklearn_under_hypothesis(
    grades: list[int], scores: list[float], k: int
) -> None:
    sklearn_metrics = pytest.importorskip("sklearn.metrics")
    scores = scores[: len(grades)]
    if not any(grades):
        return  # sklearn scores 0 where ndcg is undefined here
    recs = pl.DataFrame({"user": [1] * len(grades), "item": list(range(len(grades))),
                         "score": scores})  # fmt: skip
    truth = pl.DataFrame({"user": [1] * len(grades), "item": list(range(len(grades))),
                          "rel": grades})  # fmt: skip
    out = prm.evaluate(recs, truth, f"ndcg@{k}", score="score", relevance="rel", ties="average")
    theirs = sklearn_metrics.ndcg_score(
        np.array([grades]), np.array([scores]), k=k, ignore_ties=False
    )
    assert out[f"ndcg@{k}"][0] == pytest.approx(theirs)


@settings(max_examples=60, deadline=None)
@given(
    data=st.deferred(lambda: _user_lists(longest=5)),
    k=st.integers(1, 6),
    denominator=st.sampled_from(["min_k", "relevant", "k"]),
)
def test_tie_average_matches_brute_force(
    data: tuple[list[tuple[int, int, float]], dict[int, dict[int, int]]],
    k: int,
    denominator: str,
) -> None:
    rows, truth = data
    recs, truth_frame = _frames(rows, truth)
    metrics = [f"precision@{k}", f"recall@{k}", f"hit_rate@{k}", "mrr", f"mrr@{k}",
               f"ndcg@{k}", f"dcg@{k}", "ndcg", f"n_relevant_retrieved@{k}", f"map@{k}"]  # fmt: skip
    if denominator != "k":
        metrics.append("map")
    got = prm.evaluate(recs, truth_frame, metrics, score="score", relevance="rel",
                       ties="average", denominator=denominator, per_user=True)  # fmt: skip
    for row in got.iter_rows(named=True):
        user = row["user"]
        grades: dict[Hashable, float] = {i: float(g) for i, g in truth[user].items()}
        mine = [(item, score) for u, item, score in rows if u == user]
        if not mine:
            continue  # a user without recommendations scores 0 (the usual rule)
        for label in metrics:
            measure = _textbook_measure(label, grades, denominator)
            expected = textbook.tie_average(mine, measure)
            assert row[label] == pytest.approx(expected), label


def _textbook_measure(label: str, grades: dict[Hashable, float], denominator: str) -> Any:
    """The textbook's measure ``label`` of one ordered list (positions -> value)."""
    name, k = textbook.parse(label)
    relevant = textbook.relevant_items(grades)
    if name == "map":
        return lambda p: textbook.average_precision(p, relevant, k, denominator)
    if name == "precision":
        assert k is not None
        return lambda p: textbook.precision(p, relevant, k)
    if name == "n_relevant_retrieved":
        return lambda p: float(textbook.hits(p, relevant, k))
    if name in {"recall", "hit_rate"}:
        return lambda p: getattr(textbook, name)(p, relevant, k)
    if name == "mrr":
        return lambda p: textbook.reciprocal_rank(p, relevant, k)
    return lambda p: getattr(textbook, name)(p, grades, k, "linear")  # ndcg, dcg


def test_tie_average_errors() -> None:
    with pytest.raises(ValueError, match=r"ties='average' is not implemented for \['err@5'\]"):
        _tied(["err@5"])
    with pytest.raises(ValueError, match="ties='average' with denominator='hits'"):
        _tied(["map@5"], denominator="hits")
    with pytest.raises(ValueError, match=r"not implemented for.*'r_precision'"):
        _tied(["r_precision", "ndcg@3"])
    with pytest.raises(ValueError, match=r"ties='average' averages over the orders.*score="):
        prm.evaluate(RECS, TRUTH, "ndcg@3", relevance="rel", ties="average")
    with pytest.raises(ValueError, match="fixes ties='item_desc'"):
        _tied(["ndcg@3"], conventions="trec")


def test_tie_average_without_ties_is_the_plain_value() -> None:
    metrics = ["precision@2", "mrr", "ndcg@3", "hit_rate@1"]
    plain = prm.evaluate(RECS, TRUTH, metrics, score="score", relevance="rel")
    averaged = prm.evaluate(RECS, TRUTH, metrics, score="score", relevance="rel", ties="average")
    for name in metrics:
        assert averaged[name][0] == pytest.approx(plain[name][0])


# --- 5. judged-only evaluation (condensed lists, trec_eval -J) ------------------------


def test_unjudged_remove_worked_example() -> None:
    # judged items: B, D, Z. The list condenses to B (1), D (2): A, C, E leave
    assert _one("precision@2", unjudged="remove") == pytest.approx(1.0)
    assert _one("mrr", unjudged="remove") == pytest.approx(1.0)
    # AP over m_u = 2: (1/1 + 2/2) / 2
    assert _one("map", unjudged="remove") == pytest.approx(1.0)
    assert _one("precision@2") == pytest.approx(0.5)


def test_unjudged_remove_given_ranks_are_renumbered() -> None:
    # ranks with gaps: the judged items at 3 and 10 become 1 and 2
    recs = pl.DataFrame({"user": [1, 1, 1], "item": ["x", "B", "D"], "rank": [1, 3, 10]})
    out = prm.evaluate(recs, TRUTH, ["mrr", "ndcg@2"], relevance="rel", unjudged="remove")
    assert out["mrr"][0] == pytest.approx(1.0)
    assert out["ndcg@2"][0] == pytest.approx((1 + 2 / _lg(2)) / (2 + 1 / _lg(2)))


@needs_data
@pytest.mark.parametrize("qrels_name", ["qrels.test", "qrels.rel_level"])
def test_unjudged_remove_matches_pytrec_eval(qrels_name: str) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels = read_trec_qrels(DATA / qrels_name)
    run = read_trec_run(DATA / "results.test")
    measures = {"map", "ndcg", "P_5", "P_10", "recip_rank", "recall_100", "ndcg_cut_10"}
    q: dict[str, dict[str, int]] = {}
    for u, i, g in qrels.iter_rows():
        q.setdefault(u, {})[i] = int(g)
    r: dict[str, dict[str, float]] = {}
    for u, i, _, s, _ in run.iter_rows():
        r.setdefault(u, {})[i] = float(s)
    evaluator = pytrec_eval.RelevanceEvaluator(q, measures, judged_docs_only_flag=True)
    theirs = evaluator.evaluate(r)
    names = {"map": "map", "ndcg": "ndcg", "precision@5": "P_5", "precision@10": "P_10",
             "mrr": "recip_rank", "recall@100": "recall_100", "ndcg@10": "ndcg_cut_10"}  # fmt: skip
    got = prm.evaluate(run, qrels, list(names), score="score", relevance="rel",
                       conventions="trec", unjudged="remove", per_user=True)  # fmt: skip
    assert set(got["user"]) == set(theirs)
    for row in got.iter_rows(named=True):
        for label, measure in names.items():
            assert row[label] == pytest.approx(theirs[row["user"]][measure], abs=1e-9), label
    # and -J changes the numbers here (the check is not vacuous)
    plain = prm.evaluate(run, qrels, "map", score="score", relevance="rel", conventions="trec")
    judged = prm.evaluate(run, qrels, "map", score="score", relevance="rel", conventions="trec",
                          unjudged="remove")  # fmt: skip
    assert plain["map"][0] != pytest.approx(judged["map"][0], abs=1e-4)


def test_unjudged_remove_keeps_users_with_only_unjudged_items() -> None:
    # every recommended item unjudged: the user still has a run, and scores 0
    recs = pl.DataFrame({"user": [1, 2], "item": ["x", "B"], "rank": [1, 1]})
    truth = pl.DataFrame({"user": [1, 2], "item": ["B", "B"]})
    out = prm.evaluate(recs, truth, "mrr", unjudged="remove", per_user=True,
                       users_without_recs="exclude")  # fmt: skip
    assert out["mrr"].to_list() == [0.0, 1.0]


def test_unjudged_errors() -> None:
    with pytest.raises(ValueError, match="unjudged"):
        _one("mrr", unjudged="drop")


# --- 6. scores <= 0 are not retrieved ------------------------------------------------


def test_nonpositive_scores_drop_worked_example() -> None:
    # scores 5, 4, 3, 0, -1: D (score 0) and E leave the list; B stays at 2
    assert _one("precision@2", score="score", nonpositive_scores="drop") == pytest.approx(0.5)
    assert _one("recall@5", score="score", nonpositive_scores="drop") == pytest.approx(0.5)
    assert _one("recall@5", score="score") == pytest.approx(1.0)


def test_nonpositive_scores_errors() -> None:
    with pytest.raises(ValueError, match="nonpositive_scores='drop' reads the scores"):
        _one("mrr", nonpositive_scores="drop")
    with pytest.raises(ValueError, match="nonpositive_scores"):
        _one("mrr", score="score", nonpositive_scores="zero")


# --- 7. the same users on both sides (ranx's strict check) ----------------------------


def test_user_sets_strict() -> None:
    recs = pl.DataFrame({"user": [1, 2, 2], "item": ["B", "a", "b"], "rank": [1, 1, 2]})
    truth = pl.DataFrame({"user": [1, 3, 4], "item": ["B", "c", "d"]})
    message = (
        r"user_sets='strict': 1 \(user\) value\(s\) in recs only .*example row: user=2"
        r"(.|\n)*user_sets='strict': 2 \(user\) value\(s\) in truth only .*example row: user=3"
    )
    with pytest.raises(ValueError, match=message):
        prm.evaluate(recs, truth, "mrr", user_sets="strict")
    lazy = prm.evaluate(recs.lazy(), truth.lazy(), "mrr", user_sets="strict")
    with pytest.raises(ValueError, match="in truth only"):
        lazy.collect()
    # the same users: the result is the default one
    same = truth.filter(pl.col("user") == 1)
    recs1 = recs.filter(pl.col("user") == 1)
    assert prm.evaluate(recs1, same, "mrr", user_sets="strict").equals(
        prm.evaluate(recs1, same, "mrr")
    )


def test_user_sets_strict_follows_ranx() -> None:
    # ranx refuses a run and qrels with different query ids unless make_comparable=True,
    # which then scores a query without results 0 and drops those without qrels
    ranx = pytest.importorskip("ranx")
    qrels = ranx.Qrels({"1": {"a": 1}, "3": {"c": 1}})
    run = ranx.Run({"1": {"a": 1.0}, "2": {"b": 1.0}})
    with pytest.raises(AssertionError, match="query ids do not match"):
        ranx.evaluate(qrels, run, "mrr")
    recs = pl.DataFrame({"user": ["1", "2"], "item": ["a", "b"], "score": [1.0, 1.0]})
    truth = pl.DataFrame({"user": ["1", "3"], "item": ["a", "c"]})
    with pytest.raises(ValueError, match="user_sets='strict'"):
        prm.evaluate(recs, truth, "mrr", score="score", user_sets="strict")
    comparable = ranx.evaluate(qrels, run, "mrr", make_comparable=True)
    default = prm.evaluate(recs, truth, "mrr", score="score")
    assert default["mrr"][0] == pytest.approx(comparable)


def test_user_sets_strict_per_model() -> None:
    # model b skipped user 2: strict compares each model's users with the truth's
    recs = pl.DataFrame({"model": ["a", "a", "b"], "user": [1, 2, 1], "item": ["B", "C", "B"],
                         "rank": [1, 1, 1]})  # fmt: skip
    truth = pl.DataFrame({"user": [1, 2], "item": ["B", "C"]})
    with pytest.raises(ValueError, match=r"1 \(model, user\) value\(s\) in truth only"):
        prm.evaluate(recs, truth, "mrr", by="model", user_sets="strict")


def test_user_sets_errors() -> None:
    with pytest.raises(ValueError, match="user_sets"):
        _one("mrr", user_sets="exact")


# --- hits@k is the hit rate, not ranx's count ----------------------------------------


def test_hits_is_the_hit_rate_not_ranx_count() -> None:
    ranx = pytest.importorskip("ranx")
    out = _one("hits@5"), _one("num_hits@5")
    assert out == (1.0, 2.0)  # B and D are both in the top 5
    qrels = ranx.Qrels({"1": {"B": 1, "D": 2}})
    run = ranx.Run({"1": {"A": 5.0, "B": 4.0, "C": 3.0, "D": 2.0, "E": 1.0}})
    assert ranx.evaluate(qrels, run, "hits@5") == pytest.approx(2.0)  # ranx: the count


# --- the pandas and namespace forwards -----------------------------------------------


def test_forwards() -> None:
    options: dict[str, Any] = {
        "denominator": "k",
        "gain": {2: 9},
        "ideal": "k",
        "unjudged": "remove",
    }
    metrics = ["map@5", "ndcg@5"]
    expected = prm.evaluate(RECS, TRUTH, metrics, relevance="rel", **options)
    assert RECS.rank.evaluate(TRUTH, metrics, relevance="rel", **options).equals(expected)
    got = prm_pd.evaluate(RECS.to_pandas(), TRUTH.to_pandas(), metrics, relevance="rel",
                          **options)  # fmt: skip
    assert got["map@5"][0] == pytest.approx(expected["map@5"][0])
    assert got["ndcg@5"][0] == pytest.approx(expected["ndcg@5"][0])
    through = RECS.to_pandas().rank.evaluate(TRUTH.to_pandas(), metrics, relevance="rel",
                                             nonpositive_scores="drop", score="score")  # fmt: skip
    assert list(through.columns) == metrics


# --- hypothesis: every option against the textbook -----------------------------------

ITEMS = list(range(8))


@st.composite
def _user_lists(
    draw: st.DrawFn, longest: int = 7
) -> tuple[list[tuple[int, int, float]], dict[int, dict[int, int]]]:
    """Up to 3 users: recommendations (user, item, score) and graded truth {user: {item: g}}."""
    rows: list[tuple[int, int, float]] = []
    truth: dict[int, dict[int, int]] = {}
    for user in range(draw(st.integers(1, 3))):
        items = draw(st.lists(st.sampled_from(ITEMS), unique=True, max_size=longest))
        scores = draw(
            st.lists(st.sampled_from([-1.0, 0.0, 0.5, 1.0, 2.0, 3.0]), min_size=len(items),
                     max_size=len(items))
        )  # fmt: skip
        rows += [(user, item, score) for item, score in zip(items, scores, strict=True)]
        judged = draw(st.dictionaries(st.sampled_from(ITEMS), st.integers(-1, 3), max_size=6))
        if judged:
            truth[user] = judged
    return rows, truth


def _frames(
    rows: list[tuple[int, int, float]], truth: dict[int, dict[int, int]]
) -> tuple[pl.DataFrame, pl.DataFrame]:
    recs = pl.DataFrame(rows, schema={"user": pl.Int64, "item": pl.Int64, "score": pl.Float64},
                        orient="row")  # fmt: skip
    truth_rows = [(u, i, g) for u, judged in truth.items() for i, g in judged.items()]
    truth_frame = pl.DataFrame(
        truth_rows, schema={"user": pl.Int64, "item": pl.Int64, "rel": pl.Int64}, orient="row"
    )
    return recs, truth_frame


def _positions(rows: list[tuple[int, int, float]], user: int, **how: Any) -> dict[Hashable, int]:
    mine = [(item, score) for u, item, score in rows if u == user]
    if how.get("drop"):
        order = textbook.retrieved_by_score(mine, "item_desc")
    else:
        order = textbook.rank_items(mine, "item_desc")
    return {item: n for n, item in enumerate(order, start=1)}


GAINS = st.one_of(
    st.sampled_from(["linear", "exponential"]),
    st.dictionaries(st.sampled_from([1, 2, 3]), st.sampled_from([0.0, 0.5, 3.0, 9.0]),
                    max_size=3),
)  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(
    data=_user_lists(),
    k=st.integers(1, 8),
    gain=GAINS,
    ideal=st.sampled_from(["truth", "k"]),
    unjudged=st.sampled_from(["keep", "remove"]),
    drop=st.booleans(),
)
def test_options_match_the_textbook(
    data: tuple[list[tuple[int, int, float]], dict[int, dict[int, int]]],
    k: int,
    gain: str | dict[int, float],
    ideal: str,
    unjudged: str,
    drop: bool,
) -> None:
    rows, truth = data
    recs, truth_frame = _frames(rows, truth)
    metrics = [f"map@{k}", f"ndcg@{k}", f"dcg@{k}", f"precision@{k}", "mrr"]
    got = prm.evaluate(
        recs, truth_frame, metrics, score="score", relevance="rel", denominator="k",
        gain=gain, ideal=ideal, unjudged=unjudged,
        nonpositive_scores="drop" if drop else "keep", per_user=True,
    )  # fmt: skip
    table = {float(g): v for g, v in gain.items()} if isinstance(gain, dict) else gain
    expected_users = {u for u, judged in truth.items() if any(g > 0 for g in judged.values())}
    assert set(got["user"]) == expected_users
    for row in got.iter_rows(named=True):
        user = row["user"]
        grades: dict[Hashable, float] = {i: float(g) for i, g in truth[user].items()}
        positions = _positions(rows, user, drop=drop)
        if unjudged == "remove":
            positions = textbook.condensed(positions, grades)
        relevant = textbook.relevant_items(grades)
        assert row[f"map@{k}"] == pytest.approx(
            textbook.average_precision(positions, relevant, k, "k")
        )
        assert row[f"precision@{k}"] == pytest.approx(textbook.precision(positions, relevant, k))
        assert row["mrr"] == pytest.approx(textbook.reciprocal_rank(positions, relevant, None))
        expected_ndcg = textbook.peer_ndcg(positions, grades, k, table, ideal)
        if expected_ndcg is None:
            assert row[f"ndcg@{k}"] is None
        else:
            assert row[f"ndcg@{k}"] == pytest.approx(expected_ndcg)
        expected_dcg = sum(
            textbook.any_gain(grades.get(item, 0.0), table) / math.log2(p + 1)
            for item, p in positions.items()
            if p <= k
        )
        assert row[f"dcg@{k}"] == pytest.approx(expected_dcg)


@settings(max_examples=40, deadline=None)
@given(data=_user_lists())
def test_user_sets_strict_raises_exactly_when_the_sets_differ(
    data: tuple[list[tuple[int, int, float]], dict[int, dict[int, int]]],
) -> None:
    rows, truth = data
    recs, truth_frame = _frames(rows, truth)
    in_recs, in_truth = {u for u, _, _ in rows}, set(truth)
    only_recs, only_truth = len(in_recs - in_truth), len(in_truth - in_recs)
    if only_recs or only_truth:
        with pytest.raises(ValueError, match="user_sets='strict'") as error:
            prm.evaluate(recs, truth_frame, "mrr", score="score", user_sets="strict")
        text = str(error.value)
        found = {
            side: int(n) for n, side in re.findall(r"(\d+) \(user\) value\(s\) in (\w+) only", text)
        }
        assert found == {side: n for side, n in (("recs", only_recs), ("truth", only_truth)) if n}
    else:
        prm.evaluate(recs, truth_frame, "mrr", score="score", user_sets="strict")
