"""ERR@k (Chapelle et al. 2009) and judged@k: worked examples, textbook, ir_measures."""

from __future__ import annotations

import shutil
import warnings
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import polars_rankmetrics as prm
from tests import textbook

RECS = pl.DataFrame(
    {"user": [1, 1, 1, 1, 2, 2], "item": ["a", "b", "c", "d", "a", "e"], "rank": [1, 2, 3, 4, 1, 2]}
)
TRUTH = pl.DataFrame(
    {
        "user": [1, 1, 1, 1, 2, 2],
        "item": ["a", "b", "c", "x", "e", "q"],
        "rel": [1.0, 0.0, 3.0, 2.0, 2.0, -1.0],
    }
)


def test_err_worked_example() -> None:
    scores = prm.evaluate(
        RECS, TRUTH, ["err@1", "err@3", "err(max_grade=4)@3", "err"], relevance="rel",
        per_user=True,
    )  # fmt: skip
    # g_max = 3 (the truth's largest grade): R(1) = 1/8, R(3) = 7/8, R(2) = 3/8.
    # user 1: a (1) at 1, b (0) at 2, c (3) at 3: ERR@3 = 1/8 + (7/8)(7/8)/3
    # user 2: a unjudged at 1, e (2) at 2: ERR = (3/8) / 2
    assert scores["err@1"].to_list() == pytest.approx([1 / 8, 0.0])
    assert scores["err@3"].to_list() == pytest.approx([1 / 8 + 49 / 192, 3 / 16])
    # g_max = 4: R(1) = 1/16, R(3) = 7/16, R(2) = 3/16
    assert scores["err(max_grade=4)@3"].to_list() == pytest.approx(
        [1 / 16 + (15 / 16) * (7 / 16) / 3, 3 / 32]
    )
    assert scores["err"].to_list() == scores["err@3"].to_list()


def test_err_grades_above_max_grade_count_as_max_grade() -> None:
    capped = prm.evaluate(RECS, TRUTH, "err(max_grade=1)@3", relevance="rel", per_user=True)
    # every positive grade counts as 1: R = 1/2; user 1: 1/2 + (1/2)(1/2)/3
    assert capped["err(max_grade=1)@3"].to_list() == pytest.approx([1 / 2 + 1 / 12, 1 / 4])


def test_err_stays_finite_for_large_grades() -> None:
    truth = TRUTH.with_columns(pl.col("rel") * 500.0)  # grades up to 1500: 2^g overflows
    scores = prm.evaluate(RECS, truth, "err@3", relevance="rel", per_user=True)
    # R(1500) = 1 - 2^-1500, R(500) ~ 2^-1000 ~ 0: user 1 ~ 0 + 1 * 1/3; user 2 ~ 2^-500 / 2
    assert scores["err@3"].to_list() == pytest.approx([1 / 3, 0.0], abs=1e-12)


def test_judged_worked_example() -> None:
    scores = prm.evaluate(
        RECS, TRUTH, ["judged@2", "judged@3", "judged@10", "judged"], relevance="rel",
        per_user=True,
    )  # fmt: skip
    # user 1: a, b, c judged (b with grade 0), d not; user 2: a unjudged, e judged
    assert scores["judged@2"].to_list() == pytest.approx([1.0, 0.5])
    assert scores["judged@3"].to_list() == pytest.approx([1.0, 0.5])
    # a list shorter than k: divided by its length (4 and 2), as ir_measures
    assert scores["judged@10"].to_list() == pytest.approx([0.75, 0.5])
    assert scores["judged"].to_list() == pytest.approx([0.75, 0.5])


def test_judged_builds_the_judged_table_only_when_asked() -> None:
    plain = prm.evaluate(RECS.lazy(), TRUTH.lazy(), "ndcg@3", relevance="rel").explain()
    judged = prm.evaluate(RECS.lazy(), TRUTH.lazy(), "judged@3", relevance="rel").explain()
    assert "judged_nonrel" not in plain
    assert "judged_nonrel" in judged


lists = st.lists(st.sampled_from("abcdefgh"), min_size=0, max_size=7, unique=True)
grades = st.dictionaries(st.sampled_from("abcdefghij"), st.integers(-1, 4), max_size=8)


@settings(max_examples=80, deadline=None)
@given(ranked=lists, truth=grades, k=st.one_of(st.none(), st.integers(1, 8)))
def test_err_and_judged_match_the_textbook(
    ranked: list[str], truth: dict[str, int], k: int | None
) -> None:
    if not any(grade > 0 for grade in truth.values()):
        return  # users without a relevant item are not evaluated
    positions = textbook.at(ranked)
    recs = pl.DataFrame(
        {"user": [1] * len(ranked), "item": ranked, "rank": list(range(1, len(ranked) + 1))},
        schema={"user": pl.Int64, "item": pl.String, "rank": pl.Int64},
    )
    truth_frame = pl.DataFrame(
        {"user": [1] * len(truth), "item": list(truth), "rel": [float(g) for g in truth.values()]}
    )
    tag = "" if k is None else f"@{k}"
    labels = [f"err{tag}", f"err(max_grade=4){tag}", f"judged{tag}"]
    got = prm.evaluate(recs, truth_frame, labels, relevance="rel", per_user=True)
    row = got.row(0, named=True)
    grades_map = {item: float(g) for item, g in truth.items()}
    top = max(grades_map.values())
    assert row[labels[0]] == pytest.approx(textbook.err(positions, grades_map, k, top))
    assert row[labels[1]] == pytest.approx(textbook.err(positions, grades_map, k, 4.0))
    expected_judged = textbook.judged(positions, set(truth), k)
    if expected_judged is None:
        assert row[labels[2]] is None
    else:
        assert row[labels[2]] == pytest.approx(expected_judged)


# --- ir_measures as oracle ------------------------------------------------------------------


def _ir_measures() -> Any:
    return pytest.importorskip("ir_measures")


def _oracle_case() -> tuple[pl.DataFrame, pl.DataFrame, Any, Any]:
    runs = {"1": ["a", "b", "c", "d", "e"], "2": ["a", "e", "f"], "3": ["z", "y", "x", "w"]}
    qrels = {
        "1": {"a": 1, "b": 0, "c": 4, "x": 2},
        "2": {"e": 2, "q": 0, "f": 3},
        "3": {"y": 1, "w": 4, "x": 0},
    }
    recs = pl.DataFrame(
        [(q, doc, rank) for q, docs in runs.items() for rank, doc in enumerate(docs, start=1)],
        schema={"user": pl.String, "item": pl.String, "rank": pl.Int64},
        orient="row",
    )
    truth = pl.DataFrame(
        [(q, doc, float(g)) for q, docs in qrels.items() for doc, g in docs.items()],
        schema={"user": pl.String, "item": pl.String, "rel": pl.Float64},
        orient="row",
    )
    # distinct scores falling with the rank: every tool reads the same order
    run = {q: {doc: float(len(docs) - i) for i, doc in enumerate(docs)} for q, docs in runs.items()}
    return recs, truth, qrels, run


@pytest.mark.skipif(shutil.which("perl") is None, reason="gdeval (ir_measures' ERR) needs perl")
@pytest.mark.parametrize("k", [1, 2, 3, 5, 10])
def test_err_matches_ir_measures_gdeval(k: int) -> None:
    ir = _ir_measures()
    recs, truth, qrels, run = _oracle_case()
    measure = ir.parse_measure(f"ERR@{k}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = {m.query_id: m.value for m in ir.gdeval.iter_calc([measure], qrels, run)}
    # gdeval fixes g_max = 4 (MAX_JUDGMENT) and prints 5 decimals
    ours = prm.evaluate(recs, truth, f"err(max_grade=4)@{k}", relevance="rel", per_user=True)
    got = dict(ours.iter_rows())
    assert set(got) == set(expected)
    for query, value in expected.items():
        assert got[query] == pytest.approx(value, abs=5e-6)


@pytest.mark.parametrize("k", [1, 2, 3, 4, 10])
def test_judged_matches_ir_measures(k: int) -> None:
    ir = _ir_measures()
    recs, truth, qrels, run = _oracle_case()
    measure = ir.parse_measure(f"Judged@{k}")
    expected = {m.query_id: m.value for m in ir.judged.iter_calc([measure], qrels, run)}
    ours = prm.evaluate(recs, truth, f"judged@{k}", relevance="rel", per_user=True)
    got = dict(ours.iter_rows())
    assert set(got) == set(expected)
    for query, value in expected.items():
        assert got[query] == pytest.approx(value)
