"""Differential tests: ``evaluate`` against two independent evaluators.

* pytrec-eval-terrier (the trec_eval 9.0.8 C core) under ``conventions="trec"``;
* ranx (numba) with the conventions set to ranx's own, each choice explained
  where it is made.

Both oracles are built from plain dicts (never ranx's ``from_df``). pytrec_eval
stores scores as float32, so scores are integer-valued: distinct when the test
is about the metrics, deliberately tied when it is about trec_eval's tie rule
(score descending, then document id descending, as strings). Random data comes
from a seeded ``random.Random`` per test id, so a failure reproduces exactly.
"""

from __future__ import annotations

import math
import random
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import polars as pl
import pytest

import polars_rankmetrics as prm

TOLERANCE = 1e-9
CUTOFFS = (1, 3, 5, 10)
SEEDS = range(12)

Qrels = dict[str, dict[str, int]]
Run = dict[str, dict[str, float]]


# --- data ------------------------------------------------------------------------------


def random_data(
    rng: random.Random,
    *,
    graded: bool,
    ties: bool,
    level: int = 1,
    nothing_relevant: bool = False,
    n_queries: int = 16,
    n_docs: int = 40,
) -> tuple[Qrels, Run]:
    """Judgements and a run over the same documents.

    About one query in seven is only in the run and one in seven only in the
    judgements. Every judged query has a document at or above ``level`` unless
    ``nothing_relevant``: then about a third are judged with grades all below it.
    """
    qrels: Qrels = {}
    run: Run = {}
    grades = [-1, 0, 1, 1, 2, 3] if graded else [0, 1, 1]
    for q in range(n_queries):
        qid = f"q{q:02d}"
        where = rng.random()
        if where > 1 / 7:  # judged
            docs = rng.sample(range(n_docs), rng.randint(1, 12))
            judged = {f"d{d}": rng.choice(grades) for d in docs}
            if nothing_relevant and rng.random() < 0.3:
                judged = {doc: min(grade, level - 1) for doc, grade in judged.items()}
            elif max(judged.values()) < level:
                judged[next(iter(judged))] = level
            qrels[qid] = judged
        if where < 6 / 7:  # retrieved
            docs = rng.sample(range(n_docs), rng.randint(1, 25))
            if ties:
                scores = [float(rng.randint(0, 3)) for _ in docs]
            else:
                scores = [float(s) for s in rng.sample(range(1, 1000), len(docs))]
            run[qid] = {f"d{d}": score for d, score in zip(docs, scores, strict=True)}
    return qrels, run


def frames(qrels: Qrels, run: Run) -> tuple[pl.DataFrame, pl.DataFrame]:
    recs = pl.DataFrame(
        [{"user": q, "item": d, "score": s} for q, docs in run.items() for d, s in docs.items()],
        schema={"user": pl.String, "item": pl.String, "score": pl.Float64},
    )
    truth = pl.DataFrame(
        [{"user": q, "item": d, "rel": r} for q, docs in qrels.items() for d, r in docs.items()],
        schema={"user": pl.String, "item": pl.String, "rel": pl.Int64},
    )
    return recs, truth


def per_user(result: pl.DataFrame) -> dict[str, dict[str, Any]]:
    return {row.pop("user"): row for row in result.to_dicts()}


def assert_close(got: float | None, expected: float, what: str) -> None:
    assert got is not None, f"{what}: got null, expected {expected}"
    assert math.isclose(got, expected, rel_tol=0, abs_tol=TOLERANCE), (
        f"{what}: got {got!r}, expected {expected!r}"
    )


# --- pytrec_eval (trec_eval) -----------------------------------------------------------

# trec_eval measure -> evaluate's metric string
TREC_MEASURES = {
    "map": "map",
    "recip_rank": "mrr",
    "ndcg": "ndcg",
    "Rprec": "r_precision",
    **{f"map_cut_{k}": f"map@{k}" for k in CUTOFFS},
    **{f"P_{k}": f"precision@{k}" for k in CUTOFFS},
    **{f"recall_{k}": f"recall@{k}" for k in CUTOFFS},
    **{f"ndcg_cut_{k}": f"ndcg@{k}" for k in CUTOFFS},
    **{f"success_{k}": f"hit_rate@{k}" for k in CUTOFFS},
}
CUTS = ",".join(map(str, CUTOFFS))
TREC_REQUEST = {
    "map",
    "recip_rank",
    "ndcg",
    "Rprec",
    f"map_cut.{CUTS}",
    f"P.{CUTS}",
    f"recall.{CUTS}",
    f"ndcg_cut.{CUTS}",
    f"success.{CUTS}",
}


@pytest.fixture(scope="module")
def pytrec_eval() -> Any:
    return pytest.importorskip("pytrec_eval")


def trec_eval(pytrec_eval: Any, qrels: Qrels, run: Run, level: int) -> dict[str, dict[str, float]]:
    """Per-query trec_eval measures (without -c: queries both judged and retrieved)."""
    evaluator = pytrec_eval.RelevanceEvaluator(qrels, TREC_REQUEST, relevance_level=level)
    return evaluator.evaluate(run)


def check_against_trec_eval(
    pytrec_eval: Any, qrels: Qrels, run: Run, level: int, *, complete: bool = False
) -> None:
    recs, truth = frames(qrels, run)
    metrics = list(TREC_MEASURES.values())
    kwargs: dict[str, Any] = {
        "score": "score",
        "relevance": "rel",
        # AP over all relevant, only retrieved queries, judged queries without a
        # relevant document count as 0, ties by score then docno descending
        "conventions": "trec",
        # trec_eval -l: binary measures count rel >= level, ndcg keeps the raw grades
        "relevance_level": None if level == 1 else level,
    }
    if complete:
        # trec_eval -c: judged queries missing from the run count too. pytrec_eval
        # has no -c; an empty ranking for each of them is the same thing
        kwargs["users_without_recs"] = "zero"
        run = {**{qid: {} for qid in qrels}, **run}
    expected = trec_eval(pytrec_eval, qrels, run, level)
    got = per_user(prm.evaluate(recs, truth, metrics, per_user=True, **kwargs))
    assert sorted(got) == sorted(expected)
    for qid, measures in expected.items():
        for measure, metric in TREC_MEASURES.items():
            assert_close(got[qid][metric], measures[measure], f"{qid} {measure} / {metric}")
    means = prm.evaluate(recs, truth, metrics, **kwargs).row(0, named=True)
    for measure, metric in TREC_MEASURES.items():
        mean = sum(measures[measure] for measures in expected.values()) / len(expected)
        assert_close(means[metric], mean, f"mean {measure} / {metric}")


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("graded", [False, True], ids=["binary", "graded"])
def test_trec_eval_measures(pytrec_eval: Any, seed: int, graded: bool) -> None:
    qrels, run = random_data(random.Random(f"trec-{seed}-{graded}"), graded=graded, ties=False)
    check_against_trec_eval(pytrec_eval, qrels, run, level=1)


@pytest.mark.parametrize("seed", SEEDS)
def test_trec_eval_tie_rule(pytrec_eval: Any, seed: int) -> None:
    # integer scores in 0..3: many exact ties (exact in float32 too), broken by
    # trec_eval on the document id descending, compared as strings ("d10" < "d9")
    qrels, run = random_data(random.Random(f"ties-{seed}"), graded=True, ties=True)
    check_against_trec_eval(pytrec_eval, qrels, run, level=1)


@pytest.mark.parametrize("seed", SEEDS)
def test_trec_eval_relevance_level(pytrec_eval: Any, seed: int) -> None:
    qrels, run = random_data(random.Random(f"level-{seed}"), graded=True, ties=False, level=2)
    check_against_trec_eval(pytrec_eval, qrels, run, level=2)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("graded", [False, True], ids=["binary", "graded"])
def test_trec_eval_complete(pytrec_eval: Any, seed: int, graded: bool) -> None:
    qrels, run = random_data(random.Random(f"complete-{seed}-{graded}"), graded=graded, ties=True)
    if not set(qrels) - set(run):  # make sure a judged query is missing from the run
        del run[min(set(qrels) & set(run))]
    check_against_trec_eval(pytrec_eval, qrels, run, level=1, complete=True)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("complete", [False, True], ids=["", "-c"])
def test_trec_eval_counts_judged_queries_without_relevant_documents(
    pytrec_eval: Any, seed: int, complete: bool
) -> None:
    # trec_eval averages over every query that is judged (and retrieved, without
    # -c), also one whose judgements are all non-relevant: it scores 0. trec_eval
    # 10.0 does the same: shared/conformance/trec_eval/expected/out.comment.test
    # has num_q 31 for 31 judged topics of which 30 have a relevant document.
    qrels, run = random_data(
        random.Random(f"norel-{seed}"), graded=True, ties=False, nothing_relevant=True
    )
    assert any(qid in run and max(judged.values()) <= 0 for qid, judged in qrels.items()), (
        "the data must hold a retrieved query judged all non-relevant"
    )
    check_against_trec_eval(pytrec_eval, qrels, run, level=1, complete=complete)


@pytest.mark.parametrize("seed", range(4))
def test_trec_eval_relevance_level_with_judged_queries_below_it(
    pytrec_eval: Any, seed: int
) -> None:
    # with -l2 a query judged only 1 (and 0, -1) has no relevant document, so its
    # binary measures are 0, but its ndcg still gains from the grades 1
    qrels, run = random_data(
        random.Random(f"norel-level-{seed}"),
        graded=True,
        ties=False,
        level=2,
        nothing_relevant=True,
    )
    assert any(qid in run and 0 < max(judged.values()) < 2 for qid, judged in qrels.items()), (
        "the data must hold a retrieved query judged with grades below the level only"
    )
    check_against_trec_eval(pytrec_eval, qrels, run, level=2)


def test_trec_eval_tie_rule_by_hand(pytrec_eval: Any) -> None:
    # guards the premise of the tie test: trec_eval puts "d9" before "d10" on a tie
    qrels = {"q": {"d9": 1, "d10": 0}}
    run = {"q": {"d10": 1.0, "d9": 1.0}}
    assert trec_eval(pytrec_eval, qrels, run, 1)["q"]["recip_rank"] == 1.0
    check_against_trec_eval(pytrec_eval, qrels, run, level=1)


# --- ranx ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ranx() -> Any:
    return pytest.importorskip("ranx")


@contextmanager
def quiet_numba() -> Iterator[None]:
    # ranx's numba kernels warn "unsafe cast from uint64 to int64" when they
    # compile; that is ranx's own code, not something this package can fix
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="unsafe cast from uint64 to int64")
        yield


def ranx_scores(
    ranx: Any, qrels: Qrels, run: Run, metrics: list[str]
) -> dict[str, dict[str, float]]:
    """Per-query ranx scores, {metric: {query: value}}."""
    # make_comparable: queries missing from the run are added with no results
    # (they score 0 and count: users_without_recs="zero") and queries missing
    # from the qrels are dropped (users_without_truth is not "zero")
    ranx_run = ranx.Run({q: dict(docs) for q, docs in run.items()})
    with quiet_numba():
        ranx.evaluate(
            ranx.Qrels({q: dict(docs) for q, docs in qrels.items()}),
            ranx_run,
            metrics,
            make_comparable=True,
            threads=1,
        )
    return {metric: dict(ranx_run.scores[metric]) for metric in metrics}


RANX_LINEAR = {
    **{f"map@{k}": f"map@{k}" for k in CUTOFFS},
    "map": "map",
    **{f"mrr@{k}": f"mrr@{k}" for k in CUTOFFS},
    "mrr": "mrr",
    **{f"ndcg@{k}": f"ndcg@{k}" for k in CUTOFFS},
    "ndcg": "ndcg",
    **{f"precision@{k}": f"precision@{k}" for k in CUTOFFS},
    **{f"recall@{k}": f"recall@{k}" for k in CUTOFFS},
    "recall": "recall",
    **{f"hit_rate@{k}": f"hit_rate@{k}" for k in CUTOFFS},
}
RANX_EXPONENTIAL = {f"ndcg_burges@{k}": f"ndcg@{k}" for k in CUTOFFS} | {"ndcg_burges": "ndcg"}


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("graded", [False, True], ids=["binary", "graded"])
def test_ranx_metrics(ranx: Any, seed: int, graded: bool) -> None:
    # distinct scores: ranx's order of tied documents is its sort's, not a rule;
    # some queries are judged with no relevant document
    qrels, run = random_data(
        random.Random(f"ranx-{seed}-{graded}"), graded=graded, ties=False, nothing_relevant=True
    )
    recs, truth = frames(qrels, run)
    for mapping, gain in ((RANX_LINEAR, "linear"), (RANX_EXPONENTIAL, "exponential")):
        expected = ranx_scores(ranx, qrels, run, list(mapping))
        kwargs: dict[str, Any] = {
            "score": "score",
            "relevance": "rel",
            # ranx: AP divides by every relevant document of the query (not min(m, k))
            "denominator": "relevant",
            # ranx "ndcg" takes the grade as gain (Jarvelin), "ndcg_burges" 2^rel - 1
            "gain": gain,
            "users_without_recs": "zero",  # make_comparable, see ranx_scores
            # a query of the qrels without a relevant document scores 0 and counts
            # in ranx; one only in the run is dropped by make_comparable
            "users_without_truth": "judged",
        }
        metrics = sorted(set(mapping.values()))
        got = per_user(prm.evaluate(recs, truth, metrics, per_user=True, **kwargs))
        queries = set(qrels)
        assert set(got) == queries
        for measure, metric in mapping.items():
            assert set(expected[measure]) == queries
            for qid, value in expected[measure].items():
                assert_close(got[qid][metric], value, f"{qid} ranx {measure} / {metric}")
        means = prm.evaluate(recs, truth, metrics, **kwargs).row(0, named=True)
        for measure, metric in mapping.items():
            mean = sum(expected[measure].values()) / len(expected[measure])
            assert_close(means[metric], mean, f"mean ranx {measure} / {metric}")
