"""The diversity measures: a worked example, the textbook, and pyndeval (ndeval's C code).

Topics with ties, unjudged documents, subtopics judged only non-relevant,
topics without relevant subtopics and runs missing topics: every per-topic
value and every mean equals pyndeval's (the ndeval 4.5 C code), and the
plain-Python textbook of ``tests/textbook_diversity.py``.
"""

from __future__ import annotations

import math
import random
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polars_rankmetrics as prm
from polars_rankmetrics._measures._registry import N_RELEVANT
from polars_rankmetrics._pipeline import subtopics
from polars_rankmetrics._pipeline.inputs import TruthSpec
from polars_rankmetrics._pipeline.truth import truth_statistics
from polars_rankmetrics.conventions import Conventions
from tests import textbook_diversity as textbook

# the ndeval labels of each measure (pyndeval's names) and ours
CUT = {
    "alpha_dcg": "alpha-DCG", "alpha_ndcg": "alpha-nDCG", "err_ia": "ERR-IA",
    "nerr_ia": "nERR-IA", "p_ia": "P-IA", "strec": "strec",
}  # fmt: skip
WHOLE = {"nrbp": "NRBP", "nnrbp": "nNRBP", "map_ia": "MAP-IA"}
# ndeval without -c: the topics of both the run and the qrels, those without a relevant
# subtopic scoring 0; pyndeval orders equal scores by docno ascending
NDEVAL: dict[str, Any] = {
    "score": "score", "relevance": "rel", "conventions": "ndeval", "ties": "item_asc",
}  # fmt: skip

QRELS = [
    ("q1", "1", "d1", 1), ("q1", "1", "d2", 1), ("q1", "2", "d2", 1), ("q1", "2", "d3", 0),
    ("q1", "3", "d4", 2),
    ("q2", "1", "a", 0), ("q2", "2", "b", 0),
]  # fmt: skip
RUN = [
    ("q1", "d3", 5.0), ("q1", "d2", 4.0), ("q1", "x", 4.0), ("q1", "d1", 3.0), ("q1", "d4", 1.0),
    ("q2", "a", 1.0),
]  # fmt: skip


def _frames(
    qrels: list[tuple[str, str, str, int]], run: list[tuple[str, str, float]]
) -> tuple[pl.DataFrame, pl.DataFrame]:
    truth = pl.DataFrame(
        qrels,
        schema={"user": pl.String, "subtopic": pl.String, "item": pl.String, "rel": pl.Int64},
        orient="row",
    )
    recs = pl.DataFrame(
        run, schema={"user": pl.String, "item": pl.String, "score": pl.Float64}, orient="row"
    )
    return recs, truth


def test_worked_example() -> None:
    recs, truth = _frames(QRELS, RUN)
    labels = ["alpha_dcg@2", "alpha_ndcg@5", "err_ia@2", "nerr_ia@2", "nrbp", "nnrbp",
              "map_ia", "p_ia@2", "strec@2"]  # fmt: skip
    got = prm.evaluate(recs, truth, labels, per_user=True, **NDEVAL).sort("user")
    # q1: S = {1: d1 d2, 2: d2, 3: d4} (d3 judged 0); run d3, d2, x, d1, d4 (d2 before x:
    # equal scores, docno ascending). Gains at alpha 1/2: 0, 2, 0, 1/2, 1.
    # The greedy ideal: d2 (2), d4 (1), d1 (1/2).
    log3, log5, log6 = math.log2(3), math.log2(5), math.log2(6)
    want = {
        "alpha_dcg@2": (2 / log3) / (3 * (1 + 0.5 / log3)),
        "alpha_ndcg@5": (2 / log3 + 0.5 / log5 + 1 / log6) / (2 + 1 / log3 + 0.5 / 2),
        "err_ia@2": (2 / 2) / (3 * (1 + 0.5 / 2)),
        "nerr_ia@2": (2 / 2) / (2 + 1 / 2),
        "nrbp": (1 - 0.5 * 0.5) / 3 * (2 * 0.5 + 0.5 * 0.5**3 + 1 * 0.5**4),
        "nnrbp": (2 * 0.5 + 0.5 * 0.5**3 + 0.5**4) / (2 + 1 * 0.5 + 0.5 * 0.25),
        "map_ia": ((1 / 2 + 2 / 4) / 2 + (1 / 2) / 1 + (1 / 5) / 1) / 3,
        "p_ia@2": 2 / (2 * 3),
        "strec@2": 2 / 3,
    }
    for label, value in want.items():
        # q2 has no relevant subtopic: it counts, with 0
        assert got[label].to_list() == pytest.approx([value, 0.0], rel=1e-12), label


def test_ndeval_at_one_is_not_normalised() -> None:
    # ndeval's normalisation loop starts at rank 2: @1 is the raw gain (pyndeval: 1.0)
    recs, truth = _frames(QRELS, [("q1", "d1", 1.0)])
    got = prm.evaluate(recs, truth, ["err_ia@1", "alpha_dcg@1", "nerr_ia@1"], **NDEVAL)
    assert got.row(0) == pytest.approx((1.0, 1.0, 0.5))


def test_paper_normalisation() -> None:
    recs, truth = _frames(QRELS, RUN)
    got = prm.evaluate(
        recs, truth, ["alpha_dcg(norm=none)@2", "err_ia(norm=none)@2"], per_user=True, **NDEVAL
    ).sort("user")
    # raw alpha-DCG@2 = 2 / log2(3); Chapelle's ERR-IA = (alpha / |S|) * 2 / 2
    assert got.row(0)[1:] == pytest.approx((2 / math.log2(3), 0.5 / 3 * 1.0))


def test_subtopic_column_missing_is_refused_by_name() -> None:
    recs, truth = _frames(QRELS, RUN)
    with pytest.raises(ValueError, match=r"alpha_ndcg@5 read subtopic judgements.*'topic'"):
        prm.evaluate(recs, truth.drop("subtopic"), "alpha_ndcg@5", subtopic="topic", **NDEVAL)


def test_a_subtopic_judged_twice_is_refused() -> None:
    recs, truth = _frames([*QRELS, ("q1", "1", "d1", 0)], RUN)
    with pytest.raises(ValueError, match="subtopic"):
        prm.evaluate(recs, truth, "alpha_ndcg@5", **NDEVAL)


def test_a_document_twice_in_a_run_is_refused() -> None:
    recs, truth = _frames(QRELS, [*RUN, ("q1", "d1", 4.5)])
    with pytest.raises(ValueError, match="d1"):
        prm.evaluate(recs, truth, "alpha_ndcg@5", **NDEVAL)


def test_the_other_measures_read_the_collapsed_truth() -> None:
    recs, truth = _frames(QRELS, RUN)
    both = prm.evaluate(recs, truth, ["alpha_ndcg@5", "map", "ndcg@5"], **NDEVAL)
    # a document relevant to any subtopic is relevant (ndeval's MAP), its largest grade
    collapsed = truth.group_by("user", "item").agg(pl.col("rel").max())
    alone = prm.evaluate(recs, collapsed, ["map", "ndcg@5"], **NDEVAL)
    assert both.select("map", "ndcg@5").row(0) == pytest.approx(alone.row(0))


@pytest.mark.parametrize("level", [None, 2])
def test_the_other_measures_read_every_judged_pair_and_its_largest_grade(
    level: int | None,
) -> None:
    # graded and judged-based measures beside a diversity one: the pairs judged 0 for every
    # subtopic count as judged non-relevant, and a grade below the relevance level keeps
    # its gain (the collapse of the whole truth, computed here by hand)
    qrels = [*QRELS, ("q1", "3", "d1", 2), ("q1", "1", "d5", 0), ("q1", "2", "d5", 0)]
    run = [*RUN, ("q1", "d5", 2.0)]
    recs, truth = _frames(qrels, run)
    options: dict[str, Any] = {"score": "score", "relevance": "rel", "relevance_level": level}
    labels = ["map", "ndcg@5", "bpref", "judged@3", "fallout@5", "recall@5"]
    both = prm.evaluate(recs, truth, ["alpha_ndcg@5", *labels], per_user=True, **options)
    collapsed = truth.group_by("user", "item").agg(pl.col("rel").max())
    alone = prm.evaluate(recs, collapsed, labels, per_user=True, **options)
    assert_frame_equal(both.sort("user").select("user", *labels), alone.sort("user"))


def test_strict_user_sets_count_the_topics_of_a_subtopic_truth() -> None:
    # q3 is in the qrels only, with two subtopic rows: one topic, named once
    recs, truth = _frames([*QRELS, ("q3", "1", "z", 1), ("q3", "2", "z", 0)], RUN)
    message = r"user_sets='strict': 1 \(user\) value\(s\) in truth only .*example row: user='q3'"
    with pytest.raises(ValueError, match=message):
        prm.evaluate(recs, truth, ["alpha_ndcg@5", "map"], **NDEVAL, user_sets="strict")
    same = prm.evaluate(recs, truth.filter(pl.col("user") != "q3"), "alpha_ndcg@5", **NDEVAL)
    strict = prm.evaluate(
        recs, truth.filter(pl.col("user") != "q3"), "alpha_ndcg@5", **NDEVAL, user_sets="strict"
    )
    assert_frame_equal(strict, same)


# ------------------------------------------------------------------ generated topics


def _generated(seed: int) -> tuple[list[tuple[str, str, str, int]], list[tuple[str, str, float]]]:
    """Qrels and a run: ties, unjudged documents, topics without relevant subtopics."""
    rng = random.Random(seed)
    docs = [f"d{n}" for n in range(12)]  # d10, d11: strcmp orders them before d2
    qrels, run = [], []
    for topic in (f"t{n}" for n in range(rng.randint(1, 5))):
        subtopics = [str(s) for s in range(1, rng.randint(1, 4) + 1)]
        for subtopic in subtopics:
            for doc in rng.sample(docs, rng.randint(0, 6)):
                qrels.append((topic, subtopic, doc, rng.choice([0, 0, 1, 1, 2])))
        if rng.random() < 0.8:  # some topics have no run
            for doc in rng.sample(docs, rng.randint(1, 10)):
                run.append((topic, doc, float(rng.randint(0, 4))))  # equal scores
    if not run:
        run.append(("t9", "d1", 1.0))  # a run topic without qrels: not counted
    return qrels, run


def _pyndeval(
    qrels: list[tuple[str, str, str, int]],
    run: list[tuple[str, str, float]],
    ks: list[int],
    alpha: float,
    beta: float,
) -> dict[str, dict[str, float]]:
    pyndeval = pytest.importorskip("pyndeval")
    measures = [f"{name}@{k}" for name in CUT.values() for k in ks] + list(WHOLE.values())
    found = pyndeval.ndeval(qrels, run, measures=measures, alpha=alpha, beta=beta)
    # ndeval's nNRBP of a topic without relevant subtopics is 0 / 0: 0 here
    return {
        topic: {name: 0.0 if math.isnan(value) else value for name, value in values.items()}
        for topic, values in found.items()
    }


def _ours(
    recs: pl.DataFrame, truth: pl.DataFrame, ks: list[int], alpha: float, beta: float
) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    def written(name: str) -> str:
        # alpha and beta where the measure reads them, left out at their defaults
        params = {"alpha": alpha} if name not in {"p_ia", "strec", "map_ia"} else {}
        if "rbp" in name:
            params["beta"] = beta
        given = ",".join(f"{p}={v}" for p, v in params.items() if v != 0.5)
        return f"{name}({given})" if given else name

    labels = {f"{written(name)}@{k}": f"{peer}@{k}" for name, peer in CUT.items() for k in ks}
    labels.update({written(name): peer for name, peer in WHOLE.items()})
    per_user = prm.evaluate(recs, truth, list(labels), per_user=True, **NDEVAL)
    means = prm.evaluate(recs, truth, list(labels), **NDEVAL)
    rows = {row["user"]: {labels[m]: row[m] for m in labels} for row in per_user.to_dicts()}
    return rows, {labels[m]: means[m].item() for m in labels}


@pytest.mark.parametrize(("alpha", "beta"), [(0.5, 0.5), (0.25, 0.75), (0.75, 0.5)])
@pytest.mark.parametrize("seed", range(12))
def test_equal_to_pyndeval_per_topic_and_in_the_mean(seed: int, alpha: float, beta: float) -> None:
    _assert_equal_to_pyndeval(seed, alpha, beta)


@pytest.mark.parametrize("seed", range(4))
def test_the_ideal_built_a_few_users_at_a_time_gives_the_same_numbers(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the greedy lays the users out in grids of a bounded number of cells: here 3, so
    # users of the same number of documents are split over several grids
    monkeypatch.setattr(subtopics, "_GRID_CELLS", 3)
    _assert_equal_to_pyndeval(seed, 0.25, 0.75)


def _assert_equal_to_pyndeval(seed: int, alpha: float, beta: float) -> None:
    qrels, run = _generated(seed)
    ks = [1, 2, 3, 5, 10, 20]
    want = _pyndeval(qrels, sorted(run), ks, alpha, beta)
    got, means = _ours(*_frames(qrels, run), ks, alpha, beta)
    assert set(got) == set(want)
    for topic, values in want.items():
        for name, value in values.items():
            assert got[topic][name] == pytest.approx(value, rel=1e-12, abs=1e-15), (topic, name)
    for name, mean in means.items():
        if not want:  # no topic in both: no mean
            assert mean is None, name
            continue
        expected = sum(values[name] for values in want.values()) / len(want)
        assert mean == pytest.approx(expected, rel=1e-12, abs=1e-15), name


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6), k=st.integers(1, 12))
def test_equal_to_the_textbook(seed: int, k: int) -> None:
    qrels, run = _generated(seed)
    recs, truth = _frames(qrels, run)
    names = [*CUT, *WHOLE]
    labels = [f"{n}@{k}" if n in CUT else n for n in names]
    got = prm.evaluate(recs, truth, labels, per_user=True, **NDEVAL)
    for row in got.to_dicts():
        topic = row["user"]
        judged: dict[str, set[str]] = {}
        for t, subtopic, doc, rel in qrels:
            if t == topic and rel >= 1:
                judged.setdefault(subtopic, set()).add(doc)
        # score descending, docno ascending (NDEVAL's ties)
        ranked = [doc for t, doc, _ in sorted(run, key=lambda r: (-r[2], r[1])) if t == topic]
        frozen = {s: frozenset(d) for s, d in judged.items()}
        want = textbook.measures(ranked, frozen, k)
        for name, label in zip(names, labels, strict=True):
            assert row[label] == pytest.approx(want[name], rel=1e-12, abs=1e-15), (topic, label)


def test_tf_ranking_alpha_dcg_example() -> None:
    # TF-Ranking's AlphaDCGMetric documentation (tfr.keras.metrics.AlphaDCGMetric): labels
    # [[0, 1], [1, 0], [1, 1]] (two subtopics), scores [3, 1, 2], alpha 0.5: 2.1963947
    truth = pl.DataFrame(
        {"user": [1, 1, 1, 1], "item": ["i0", "i1", "i2", "i2"], "subtopic": [2, 1, 1, 2]}
    )
    recs = pl.DataFrame({"user": [1, 1, 1], "item": ["i0", "i1", "i2"], "score": [3.0, 1.0, 2.0]})
    got = prm.evaluate(recs, truth, "alpha_dcg(norm=none)@3", score="score").item()
    assert got == pytest.approx(2.1963947, abs=5e-7)


@pytest.mark.parametrize("seed", range(4))
def test_equal_to_ir_measures(seed: int) -> None:
    ir_measures = pytest.importorskip("ir_measures")
    qrels, run = _generated(seed)
    recs, truth = _frames(qrels, run)
    measures = [
        ir_measures.alpha_nDCG @ 10, ir_measures.ERR_IA @ 5, ir_measures.P_IA @ 10,
        ir_measures.AP_IA,
    ]  # fmt: skip
    qrels_frame = truth.rename(
        {"user": "query_id", "subtopic": "iteration", "item": "doc_id", "rel": "relevance"}
    ).to_pandas()
    run_frame = recs.rename({"user": "query_id", "item": "doc_id"}).to_pandas()
    found = {str(m): {} for m in measures}
    for metric in ir_measures.iter_calc(measures, qrels_frame, run_frame):
        found[str(metric.measure)][metric.query_id] = metric.value
    ours = prm.evaluate(
        recs, truth, ["alpha_ndcg@10", "err_ia@5", "p_ia@10", "map_ia"], per_user=True, **NDEVAL
    )
    for name, label in [("alpha_nDCG@10", "alpha_ndcg@10"), ("ERR_IA@5", "err_ia@5"),
                        ("P_IA@10", "p_ia@10"), ("AP_IA", "map_ia")]:  # fmt: skip
        mine = dict(zip(ours["user"], ours[label], strict=True))
        for topic, value in found[name].items():
            # a qrels topic the run lacks: ir_measures gives it 0, ndeval leaves it out
            got = mine.get(topic, 0.0)
            assert got == pytest.approx(value, rel=1e-12, abs=1e-15), (name, topic)


def test_the_ideal_does_not_depend_on_the_truth_row_order() -> None:
    # documents in three subtopics each: at alpha 0.3 a gain is a float sum of three
    # powers whose last bit depends on the order they are added in, and an equal gain
    # a tie broken on it (summed in subtopic order, whatever order the rows come in)
    rows = [("q", str(i % 7), str(i // 3), 1) for i in range(2000)]
    scores = random.Random(5)
    run = [("q", str(i), scores.random()) for i in range(700)]
    recs, truth = _frames(rows, run)
    metrics = ["nnrbp(alpha=0.3,beta=0.8)", "alpha_ndcg(alpha=0.3)@20", "nerr_ia(alpha=0.3)@20"]
    want = prm.evaluate(recs, truth, metrics, **NDEVAL)
    for seed in range(8):
        shuffled = truth.sample(fraction=1.0, shuffle=True, seed=seed)
        assert prm.evaluate(recs, shuffled, metrics, **NDEVAL).equals(want), seed


@settings(max_examples=80, deadline=None)
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from(["a", "b"]),
            st.sampled_from(["q1", "q2", "q3"]),
            st.sampled_from(["1", "2", "3"]),
            st.sampled_from(["x", "y", "z", "w"]),
            st.sampled_from([-1, 0, 1, 2, 3]),
        ),
        max_size=40,
        unique_by=lambda row: row[:4],
    ),
    level=st.sampled_from([None, 0.5, 1.0, 2.0, 3.5]),
    graded=st.booleans(),
    shared=st.booleans(),
)
def test_the_users_counts_of_relevant_items_equal_those_of_the_collapsed_pairs(
    rows: list[tuple[str, str, str, str, int]], level: float | None, graded: bool, shared: bool
) -> None:
    # a call of subtopic measures alone reads each user's relevant items counted without the
    # pairs' collapse: the same users and counts as the statistics of the collapsed pairs
    schema = {"model": pl.String, "user": pl.String, "subtopic": pl.String, "item": pl.String}
    truth = pl.DataFrame(rows, schema={**schema, "rel": pl.Int64}, orient="row")
    spec = TruthSpec(
        "user", "item", "rel" if graded else None, level, ("model",) if shared else (),
        subtopic="subtopic",
    )  # fmt: skip
    if not shared:
        truth = truth.unique(["user", "subtopic", "item"], keep="first", maintain_order=True)
    keys = [*spec.shared_by, "user"]
    _, want = truth_statistics(
        subtopics.positive_pairs(truth.lazy(), spec), spec, requests=[],
        conv=Conventions(), grade_levels=None, truth_rows=None,
    )  # fmt: skip
    got = subtopics.relevant_item_counts(truth.lazy(), spec)
    assert_frame_equal(
        got.collect().sort(keys), want.select(*keys, N_RELEVANT).collect().sort(keys)
    )


@pytest.mark.parametrize("level", [None, 2])
@pytest.mark.parametrize("without_truth", ["exclude", "judged", "zero"])
@pytest.mark.parametrize("without_recs", ["zero", "exclude"])
def test_subtopic_measures_alone_give_what_they_give_beside_others(
    level: int | None, without_truth: str, without_recs: str
) -> None:
    # alone they read each user's relevant items counted without the pairs' collapse; beside
    # map the collapsed pairs: the same users (q2 judged 0 only, q4 below the level) and values
    qrels = [*QRELS, ("q4", "1", "e", 1), ("q4", "2", "f", 0), ("q1", "3", "d1", 2)]
    recs, truth = _frames(qrels, [*RUN, ("q4", "e", 1.0), ("q4", "f", 0.5), ("q5", "a", 1.0)])
    labels = ["alpha_ndcg@5", "p_ia@3", "strec@4", "map_ia", "nnrbp", "err_ia@5"]
    options: dict[str, Any] = {
        **NDEVAL, "relevance_level": level, "users_without_truth": without_truth,
        "users_without_recs": without_recs,
    }  # fmt: skip
    alone = prm.evaluate(recs, truth, labels, per_user=True, **options)
    beside = prm.evaluate(recs, truth, [*labels, "map"], per_user=True, **options)
    assert_frame_equal(alone.sort("user"), beside.drop("map").sort("user"))
    assert_frame_equal(
        prm.evaluate(recs, truth, labels, **options),
        prm.evaluate(recs, truth, [*labels, "map"], **options).drop("map"),
    )
