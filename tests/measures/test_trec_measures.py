"""trec_eval's measures beyond the conformance files.

- hand-worked values for the measures that read unjudged documents (bpref,
  infAP, relstring, rbp, unj...), computed in the comments;
- the package against the plain-Python textbook (``tests/trec_textbook.py``,
  itself checked against trec_eval's expected files) on generated runs, every
  measure, parameters, ``-q``, ``-c`` and ``-l``, line for line;
- the package against pytrec_eval (trec_eval 9.0.8's C core) for the measures
  it has.
"""

from __future__ import annotations

import math
import os
import random
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polars_rankmetrics as prm
from polars_rankmetrics.trec import read_trec_qrels, read_trec_run, trec_eval
from tests import trec_textbook

# ---------------------------------------------------------------- by hand

# q1 ranked: d2 (grade 0), d5 (pooled, grade -1: unjudged), d1 (grade 2),
# d9 (not in the qrels), d4 (grade 1); relevant at level 1: ranks 3 and 5; R = 2
HAND_QRELS = pl.DataFrame(
    {"user": ["q1"] * 4, "item": ["d1", "d2", "d4", "d5"], "rel": [2, 0, 1, -1]}
)
HAND_RUN = pl.DataFrame(
    {
        "user": ["q1"] * 5,
        "item": ["d2", "d5", "d1", "d9", "d4"],
        "score": [0.9, 0.8, 0.7, 0.6, 0.5],
        "tag": ["hand"] * 5,
    }
)


def values(table: pl.DataFrame, query: str = "q1") -> dict[str, Any]:
    rows = table.filter(pl.col("query") == query)
    return {
        m: (t if t is not None else v)
        for m, v, t in rows.select("measure", "value", "text").iter_rows()
    }


def test_hand_worked_judgement_measures() -> None:
    got = values(
        trec_eval(
            HAND_QRELS,
            HAND_RUN,
            [
                "bpref",
                "infAP",
                "relstring",
                "rbp",
                "rbp_resid",
                "unj.5",
                "num_nonrel_judged_ret",
                "binG",
                "iprec_at_recall..5",
                "Rprec_mult.1",
            ],
            per_query=True,
        )
    )
    # bpref: both relevant documents sit below the one judged non-relevant (d2),
    # each adds 1 - min(1, R) / min(1, R) = 0
    assert got["bpref"] == 0.0
    eps = 0.00001
    # infAP at rank 3 (j = 2; 1 relevant, 1 non-relevant, 1 unjudged above... none
    # relevant above): 1/3 + 2/3 * (0 + 1 + 1) / 2 * (0 + eps) / (0 + 1 + 2 eps);
    # at rank 5 (j = 4): 1/5 + 4/5 * (1 + 1 + 1) / 4 * (1 + eps) / (1 + 1 + 2 eps)
    first = 1 / 3 + 2 / 3 * 1.0 * eps / (1 + 2 * eps)
    second = 1 / 5 + 4 / 5 * 0.75 * (1 + eps) / (2 + 2 * eps)
    assert got["infAP"] == pytest.approx((first + second) / 2, abs=1e-12)
    assert got["relstring"] == "0.2-1"
    # rbp (p = 0.9): gains grade / 2 (the highest grade), 0.1 * (1 * 0.9^2 + 0.5 * 0.9^4)
    assert got["rbp"] == pytest.approx(0.1 * (0.81 + 0.5 * 0.6561), abs=1e-12)
    # rbp_resid: unjudged at ranks 2 and 4, plus the rest of the list: 0.9^5 + 0.1 * (0.9 + 0.729)
    assert got["rbp_resid"] == pytest.approx(0.59049 + 0.1 * 1.629, abs=1e-12)
    assert got["unj_5"] == pytest.approx(2 / 5)
    assert got["num_nonrel_judged_ret"] == 1.0
    # binG: 1/log2(2 + 2 non-relevant above) + 1/log2(2 + 3), over R
    assert got["binG"] == pytest.approx((1 / 2 + 1 / math.log2(5)) / 2)
    # lround(0.5 * 2) = 1: best precision at or after the first relevant: 2/5 at rank 5
    assert got["iprec_at_recall_0.50"] == pytest.approx(0.4)
    # Rprec_mult_1.00: precision at floor(1 * 2 + 0.9) = 2 documents
    assert got["Rprec_mult_1.00"] == 0.0


def test_hand_worked_graded_measures() -> None:
    got = values(
        trec_eval(
            HAND_QRELS, HAND_RUN, ["ndcg", "dcg", "ideal_dcg", "G", "ndcg_cut.3"], per_query=True
        )
    )
    dcg = 2 / math.log2(4) + 1 / math.log2(6)
    ideal = 2 / math.log2(2) + 1 / math.log2(3)
    assert got["dcg"] == pytest.approx(dcg)
    assert got["ideal_dcg"] == pytest.approx(ideal)
    assert got["ndcg"] == pytest.approx(dcg / ideal)
    assert got["ndcg_cut_3"] == pytest.approx((2 / math.log2(4)) / ideal)
    # G: cost runs 2, 3 (ideal gains 2, 1), then 1 a position: 2, 3, 4, 5, 6; results
    # gain 0, 0, 2, 2, 3: 2 / log2(2 + 4 - 2) + 1 / log2(2 + 6 - 3), over 3
    assert got["G"] == pytest.approx((2 / 2 + 1 / math.log2(5)) / 3)


def test_measure_parameters_change_names_and_values() -> None:
    table = trec_eval(
        HAND_QRELS,
        HAND_RUN,
        ["utility.2,-1,0,0", "rbp.p=0.5", "set_F.0.5", "ndcg.2=0"],
        per_query=True,
    )
    got = values(table)
    # 2 relevant retrieved, 3 others: 2 * 2 - 3
    assert got["utility_2,-1,0,0"] == 4 - 3
    assert got["rbp_p=0.5"] == pytest.approx(0.5 * (1 * 0.25 + 0.5 * 0.0625))
    precision, recall = 2 / 5, 1.0
    assert got["set_F_0.5"] == pytest.approx(1.5 * precision * recall / (0.5 * precision + recall))
    # grade 2 worth nothing: only d4 (grade 1) counts, ideal = d4 first
    assert got["ndcg_2=0"] == pytest.approx((1 / math.log2(6)) / 1)


def test_several_runs_in_one_frame() -> None:
    other = HAND_RUN.with_columns(pl.col("score").reverse(), tag=pl.lit("other"))
    both = pl.concat(
        [HAND_RUN.with_columns(name=pl.lit("a")), other.with_columns(name=pl.lit("b"))]
    )
    table = trec_eval(HAND_QRELS, both, "official", runs="name")
    assert table.columns == ["name", "measure", "query", "value", "text"]
    for name, run in (("a", HAND_RUN), ("b", other)):
        alone = trec_eval(HAND_QRELS, run, "official")
        assert table.filter(pl.col("name") == name).drop("name").equals(alone)
    assert table.filter(pl.col("measure") == "runid")["text"].to_list() == ["hand", "other"]


def test_refusals() -> None:
    with pytest.raises(ValueError, match="no query in common with the qrels"):
        trec_eval(HAND_QRELS, HAND_RUN.with_columns(user=pl.lit("q9")))
    with pytest.raises(ValueError, match=r"run: 2 rows repeat a \(query, document\) pair"):
        trec_eval(HAND_QRELS, pl.concat([HAND_RUN, HAND_RUN.head(1)]))
    with pytest.raises(ValueError, match="must hold integer grades"):
        trec_eval(HAND_QRELS.with_columns(pl.col("rel") / 2), HAND_RUN)
    with pytest.raises(ValueError, match="null or NaN"):
        trec_eval(HAND_QRELS, HAND_RUN.with_columns(score=pl.lit(float("nan"))))
    with pytest.raises(ValueError, match="utility takes 4 coefficients"):
        trec_eval(HAND_QRELS, HAND_RUN, "utility.1,2")


# ---------------------------------------------------------------- against the textbook

SPECS = [
    "all_trec",
    "official",
    "set",
    "P.1,3",
    "ndcg.1=3,2=0.5",
    "ndcg_rel.0=1,3=7",
    "G.2=-1",
    "Rndcg.3=1",
    "Rndcg",
    "rbp.p=0.5",
    "rbp.2=5,p=0.7",
    "rbp_resid.p=0.6",
    "utility.2,-1,0.5,0",
    "11pt_avg..25,.5",
    "iprec_at_recall..33,.5,1",
    "Rprec_mult.0.5,1.5",
    "relstring.3",
    "set_F.0.5",
    "dcg",
    "ideal_dcg",
    "unj.1,2",
    "relative_P.2",
    "success.1,2",
    "map_cut.2",
    "ndcg_cut.1,3",
]


@st.composite
def trec_cases(draw: st.DrawFn) -> dict[str, Any]:
    n_queries = draw(st.integers(1, 4))
    docs = [f"d{i}" for i in range(8)]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, list[tuple[str, float]]] = {}
    for q in range(n_queries):
        qid = f"q{q}"
        judged = draw(st.lists(st.sampled_from(docs), max_size=7, unique=True))
        grades = draw(
            st.lists(
                st.sampled_from([-1, 0, 0, 1, 1, 2, 3, 4]),
                min_size=len(judged),
                max_size=len(judged),
            )
        )
        if judged or draw(st.booleans()):
            qrels[qid] = dict(zip(judged, grades, strict=True)) or {"d0": 0}
        if draw(st.integers(0, 4)):  # most queries have a run
            retrieved = draw(
                st.lists(st.sampled_from([*docs, "u1", "u2"]), min_size=1, max_size=9, unique=True)
            )
            # small integer scores: ties, broken by document id as trec_eval does
            scores = draw(
                st.lists(st.integers(0, 4), min_size=len(retrieved), max_size=len(retrieved))
            )
            run[qid] = [(d, float(s)) for d, s in zip(retrieved, scores, strict=True)]
    return {
        "qrels": qrels,
        "run": run,
        "measures": draw(st.lists(st.sampled_from(SPECS), min_size=1, max_size=4)),
        "complete": draw(st.booleans()),
        "level": draw(st.sampled_from([1, 1, 2, 0])),
    }


def frames(
    qrels: dict[str, dict[str, int]], run: dict[str, list[tuple[str, float]]]
) -> tuple[pl.DataFrame, pl.DataFrame]:
    qrels_frame = pl.DataFrame(
        [(q, d, g) for q, docs in qrels.items() for d, g in docs.items()],
        schema={"user": pl.String, "item": pl.String, "rel": pl.Int64},
        orient="row",
    )
    run_frame = pl.DataFrame(
        [(q, d, s, "tag") for q, docs in run.items() for d, s in docs],
        schema={"user": pl.String, "item": pl.String, "score": pl.Float64, "tag": pl.String},
        orient="row",
    )
    return qrels_frame, run_frame


def same_value(got: float | None, text: str | None, want: float | str) -> bool:
    if isinstance(want, str):
        return text == want
    if got is None:
        return False
    return (math.isnan(got) and math.isnan(want)) or abs(got - want) <= 1e-9 * max(1.0, abs(want))


@settings(
    max_examples=int(os.environ.get("TREC_EXAMPLES", "40")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(trec_cases())
def test_every_measure_matches_the_textbook(case: dict[str, Any]) -> None:
    qrels, run = case["qrels"], case["run"]
    shared = set(qrels) & set(run)
    if not qrels or not run or not (shared or case["complete"]):
        return  # trec_eval stops: no query with both results and judgements
    try:
        expected = trec_textbook.trec_eval_rows(
            qrels,
            run,
            "tag",
            case["measures"],
            per_query=True,
            complete=case["complete"],
            level=case["level"],
        )
    except ValueError:
        with pytest.raises(ValueError, match="no query in common"):
            trec_eval(*frames(qrels, run), case["measures"], complete=case["complete"])
        return
    table = trec_eval(
        *frames(qrels, run),
        case["measures"],
        per_query=True,
        complete=case["complete"],
        relevance_level=case["level"],
    )
    assert table.height == len(expected)
    for (measure, query, value, text), (name, qid, want, _) in zip(
        table.iter_rows(), expected, strict=True
    ):
        assert (measure, query) == (name, qid)
        assert same_value(value, text, want), (measure, query, value, text, want)


# ---------------------------------------------------------------- against pytrec_eval

# pytrec_eval 0.5 wraps trec_eval 9.0.8: iprec_at_recall and 11pt_avg there turn a
# recall level into a count of relevant documents with (int)(x * R + 0.9), trec_eval
# 10 with lround(x * R); they are compared only where both counts agree (below)
PYTREC = [
    "bpref",
    "infAP",
    "Rprec_mult",
    "set_P",
    "set_relative_P",
    "set_recall",
    "set_map",
    "set_F",
    "relative_P",
    "binG",
    "G",
    "ndcg_rel",
    "Rndcg",
    "utility",
    "num_nonrel_judged_ret",
    "map",
    "Rprec",
    "recip_rank",
    "ndcg",
    "relstring",
    "iprec_at_recall",
    "11pt_avg",
    "success",
]


@pytest.mark.parametrize("level", [1, 2])
def test_agrees_with_pytrec_eval(level: int) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    rng = random.Random(level)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, list[tuple[str, float]]] = {}
    for q in range(40):
        docs = [f"d{rng.randrange(80):02d}" for _ in range(50)]
        qrels[f"q{q}"] = {d: rng.choice([-1, 0, 0, 0, 1, 1, 2, 3]) for d in docs[:30]}
        # distinct scores, exact in pytrec_eval's float32
        retrieved = list(dict.fromkeys(docs[12:]))
        run[f"q{q}"] = [(d, float(i)) for i, d in enumerate(rng.sample(retrieved, len(retrieved)))]
    table = trec_eval(*frames(qrels, run), PYTREC, per_query=True, relevance_level=level)
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, set(PYTREC), relevance_level=level)
    theirs = evaluator.evaluate({q: dict(docs) for q, docs in run.items()})
    ours = table.filter(pl.col("query") != "all")
    compared = 0
    for measure, query, value, text in ours.iter_rows():
        key = measure
        if measure.startswith(("iprec_at_recall", "11pt_avg")) and not old_rounding_agrees(
            measure, qrels[query], level
        ):
            continue
        expected = theirs[query][key]
        if text is not None:
            continue  # pytrec_eval returns relstring as a number
        assert value == pytest.approx(expected, abs=1e-9), (measure, query)
        compared += 1
    assert compared > 1500


def old_rounding_agrees(measure: str, judged: dict[str, int], level: int) -> bool:
    """Whether trec_eval 9's (int)(x R + 0.9) and 10's lround(x R) give the same counts."""
    relevant = sum(1 for g in judged.values() if g >= level)
    levels = (
        [float(measure.rsplit("_", 1)[1])]
        if measure.startswith("iprec")
        else [i / 10 for i in range(11)]
    )
    return all(int(x * relevant + 0.9) == trec_textbook.c_lround(x * relevant) for x in levels)


def test_relstring_alone_prints_nothing_without_per_query() -> None:
    # trec_eval prints relstring per query only
    assert trec_eval(HAND_QRELS, HAND_RUN, "relstring").height == 0
    table = trec_eval(HAND_QRELS, HAND_RUN, "relstring.2", per_query=True)
    assert table.rows() == [("relstring_2", "q1", None, "0.")]


def test_unj_agrees_with_ir_measures_judged() -> None:
    # ir_measures' own Judged@k: the share of the top k found in the qrels; with no
    # negative grades it is 1 - unj_k (unj also counts pooled-unjudged documents)
    ir_measures = pytest.importorskip("ir_measures")
    rng = random.Random(7)
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, list[tuple[str, float]]] = {}
    for q in range(20):
        docs = [f"d{rng.randrange(40):02d}" for _ in range(30)]
        qrels[f"q{q}"] = {d: rng.choice([0, 0, 1, 2]) for d in docs[:15]}
        retrieved = list(dict.fromkeys(docs[8:]))
        run[f"q{q}"] = [(d, float(i)) for i, d in enumerate(rng.sample(retrieved, len(retrieved)))]
    table = trec_eval(*frames(qrels, run), "unj.1,5,10", per_query=True)
    measures = [ir_measures.Judged @ k for k in (1, 5, 10)]
    theirs = {
        (f"unj_{metric.measure.params['cutoff']}", metric.query_id): metric.value
        for metric in ir_measures.iter_calc(
            measures,
            [ir_measures.Qrel(q, d, g) for q, docs in qrels.items() for d, g in docs.items()],
            [ir_measures.ScoredDoc(q, d, s) for q, docs in run.items() for d, s in docs],
        )
    }
    ours = table.filter(pl.col("query") != "all")
    assert ours.height == len(theirs) == 60
    for measure, query, value, _ in ours.iter_rows():
        assert 1 - value == pytest.approx(theirs[measure, query], abs=1e-12), (measure, query)


# ---------------------------------------------------------------- evaluate metric strings


TREC_DATA = Path(__file__).resolve().parents[1] / "data" / "trec_eval"
# evaluate's metric string -> the trec_eval measure it reproduces
AS_METRICS = {
    "gm_map": "gm_map",
    "iprec(recall=0)": "iprec_at_recall_0.00",
    "iprec(recall=0.1)": "iprec_at_recall_0.10",
    "iprec_at_recall(recall=0.5)": "iprec_at_recall_0.50",
    "iprec(recall=1)": "iprec_at_recall_1.00",
    "eleven_pt": "11pt_avg",
    "rbp(p=0.9)": "rbp",
    "bpref": "bpref",
    "gm_bpref": "gm_bpref",
    "infap": "infAP",
    "rbp_resid(p=0.9)": "rbp_resid",
}


@pytest.mark.parametrize(
    ("expected", "qrels", "run", "options"),
    [
        ("out.test.aq", "qrels.test", "results.test", {}),
        ("out.test.aqc", "qrels.test", "results.trunc", {"users_without_recs": "zero"}),
        ("out.test.aql", "qrels.rel_level", "results.test", {"relevance_level": 2}),
    ],
)
def test_metric_strings_give_trec_evals_means(
    expected: str, qrels: str, run: str, options: dict[str, Any]
) -> None:
    printed = {
        line.split("\t")[0].strip(): float(line.split("\t")[2])
        for line in (TREC_DATA / "expected" / expected).read_text().splitlines()
        if line.split("\t")[1] == "all" and not line.startswith("runid")
    }
    # trec_eval's rbp rescales graded qrels; the metric string's rbp is binary
    metrics = [m for m in AS_METRICS if not (m.startswith("rbp") and qrels == "qrels.rel_level")]
    got = prm.evaluate(
        read_trec_run(TREC_DATA / run),
        read_trec_qrels(TREC_DATA / qrels),
        metrics,
        score="score",
        relevance="rel",
        conventions="trec",
        **options,
    )
    for metric in metrics:
        assert got[metric][0] == pytest.approx(printed[AS_METRICS[metric]], abs=5e-5), metric


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trec_cases())
def test_metric_strings_match_trec_eval_per_query(case: dict[str, Any]) -> None:
    qrels = {q: {d: max(g, 0) for d, g in docs.items()} for q, docs in case["qrels"].items()}
    binary = {q: {d: min(g, 1) for d, g in docs.items()} for q, docs in qrels.items()}
    run = case["run"]
    if not set(qrels) & set(run):
        return
    qrels_frame, run_frame = frames(binary, run)
    ours = prm.evaluate(
        run_frame,
        qrels_frame,
        ["iprec(recall=0.3)", "eleven_pt", "rbp(p=0.7)", "gm_map"],
        score="score",
        relevance="rel",
        conventions="trec",
        per_user=True,
    )
    table = trec_eval(
        qrels_frame,
        run_frame,
        ["iprec_at_recall..3", "11pt_avg", "rbp.p=0.7", "map"],
        per_query=True,
    )
    reference = {(m, q): v for m, q, v, _ in table.filter(pl.col("query") != "all").iter_rows()}
    names = {
        "iprec(recall=0.3)": "iprec_at_recall_0.30",
        "eleven_pt": "11pt_avg",
        "rbp(p=0.7)": "rbp_p=0.7",
    }
    for row in ours.iter_rows(named=True):
        user = row["user"]
        for metric, measure in names.items():
            assert row[metric] == pytest.approx(reference[measure, user], abs=1e-12)
        # per user, gm_map's value is AP floored at 0.00001
        assert row["gm_map"] == pytest.approx(max(reference["map", user], 1e-5), abs=1e-12)
    # the judgement measures read graded qrels with negative grades (pooled, unjudged)
    graded_qrels, _ = frames(case["qrels"], run)
    judged = prm.evaluate(
        run_frame,
        graded_qrels,
        ["bpref", "infap", "rbp_resid(p=0.7)", "gm_bpref"],
        score="score",
        relevance="rel",
        conventions="trec",
        per_user=True,
    )
    table = trec_eval(
        graded_qrels, run_frame, ["bpref", "infAP", "rbp_resid.p=0.7"], per_query=True
    )
    reference = {(m, q): v for m, q, v, _ in table.filter(pl.col("query") != "all").iter_rows()}
    relevant = {q for q, docs in case["qrels"].items() if any(g > 0 for g in docs.values())}
    for row in judged.iter_rows(named=True):
        user = row["user"]
        if user not in relevant:
            continue  # undefined for evaluate (no relevant item); trec_eval prints 0
        assert row["bpref"] == pytest.approx(reference["bpref", user], abs=1e-12)
        assert row["gm_bpref"] == pytest.approx(max(reference["bpref", user], 1e-5), abs=1e-12)
        assert row["infap"] == pytest.approx(reference["infAP", user], abs=1e-12)
        assert row["rbp_resid(p=0.7)"] == pytest.approx(
            reference["rbp_resid_p=0.7", user], abs=1e-12
        )


def test_metric_string_parameters_are_checked() -> None:
    with pytest.raises(ValueError, match="recall must be between 0 and 1"):
        prm.evaluate(HAND_RUN, HAND_QRELS, "iprec(recall=2)", score="score", relevance="rel")
    with pytest.raises(ValueError, match="persistence p must be between 0 and 1"):
        prm.evaluate(HAND_RUN, HAND_QRELS, "rbp(p=1)", score="score", relevance="rel")
    with pytest.raises(ValueError, match="persistence p must be between 0 and 1"):
        prm.evaluate(HAND_RUN, HAND_QRELS, "rbp_resid(p=0)", score="score", relevance="rel")


def test_judgement_metric_strings_by_hand() -> None:
    # the hand case: bpref 0, infAP and rbp_resid as worked out above (p = 0.9)
    got = prm.evaluate(
        HAND_RUN,
        HAND_QRELS,
        ["bpref", "infap", "rbp_resid(p=0.9)", "bpref@2"],
        score="score",
        relevance="rel",
    )
    eps = 0.00001
    first = 1 / 3 + 2 / 3 * 1.0 * eps / (1 + 2 * eps)
    second = 1 / 5 + 4 / 5 * 0.75 * (1 + eps) / (2 + 2 * eps)
    assert got.row(0) == pytest.approx(
        (0.0, (first + second) / 2, 0.59049 + 0.1 * 1.629, 0.0), abs=1e-12
    )
