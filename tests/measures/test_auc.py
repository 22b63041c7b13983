"""The AUC family (``auc``, ``auc(max_fpr=t)``, ``gauc``, ``pauc@k``, ``pap@k``).

Hand-worked values; a pair-counting textbook (``tests/textbook_auc.py``) on
generated lists; scikit-learn's ``roc_auc_score`` (and torchmetrics'
``RetrievalAUROC`` where torch is installed) as oracles of ``auc``; RecTools'
own test cases for ``pauc@k`` and ``pap@k``, transcribed as facts.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.metrics import roc_auc_score  # type: ignore[import-untyped]

import polars_rankmetrics as prm
from polars_rankmetrics._row_order import run_tie_groups
from tests import textbook_auc as textbook

# a generated list may share no item with its truth: evaluate warns, and the values are
# still defined (0 or null), which is what these tests check
pytestmark = pytest.mark.filterwarnings("ignore::polars_rankmetrics.IdOverlapWarning")

# the tie rules: they order equal scores for the positions; the AUC counts them one half
TIE_RULES = st.sampled_from(["item_desc", "item_asc", "input", "average"])

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# user 1: a (0.9, relevant) b (0.8) c (0.8, relevant) d (0.1): 4 candidates, 2 positive
# user 2: x (0.5) y (0.4, relevant) z (0.3): 3 candidates, 1 positive below 1 negative
# user 3: p (0.7, relevant) only: one class, no AUC
# user 4: q (0.2), no relevant truth: not a user evaluate counts (users_without_truth)
RECS = pl.DataFrame(
    {
        "user": [1, 1, 1, 1, 2, 2, 2, 3, 4],
        "item": ["a", "b", "c", "d", "x", "y", "z", "p", "q"],
        "score": [0.9, 0.8, 0.8, 0.1, 0.5, 0.4, 0.3, 0.7, 0.2],
    }
)
TRUTH = pl.DataFrame(
    {"user": [1, 1, 2, 3, 4], "item": ["a", "c", "y", "p", "w"], "rel": [1, 2, 1, 1, 0]}
)


def _per_user(metric: str, **options: Any) -> dict[int, float | None]:
    frame = prm.evaluate(
        RECS, TRUTH, [metric], score="score", relevance="rel", per_user=True, **options
    )
    return dict(zip(frame.get_column("user"), frame.get_column(metric), strict=True))


@pytest.mark.parametrize("ties", ["item_desc", "item_asc", "input", "average"])
def test_auc_by_hand(ties: str) -> None:
    # user 1: a > b, a > d, c > d, and c ties b: one half under every tie rule (the rule
    # orders b and c for the positions, not for the AUC): 3.5 / 4; user 2: y > z: 1 of 2
    assert _per_user("auc", ties=ties) == {1: 0.875, 2: 0.5, 3: None}
    mean = prm.evaluate(RECS, TRUTH, ["auc"], score="score", relevance="rel", ties=ties)
    assert mean.item() == pytest.approx((0.875 + 0.5) / 2, abs=1e-15)


def test_auc_beside_measures_that_read_positions() -> None:
    """With ndcg@2 in the call the lists keep the tie rule's positions: the AUC is unchanged."""
    frame = prm.evaluate(
        RECS, TRUTH, ["ndcg@2", "auc", "gauc", "pauc@1"], score="score", relevance="rel",
        per_user=True,
    ).sort("user")  # fmt: skip
    assert frame.get_column("auc").to_list() == [0.875, 0.5, None]
    assert frame.get_column("gauc").to_list() == [0.875, 0.5, None]
    # item_desc places c (relevant) at 2, above b: pauc@1 reads that order (0 negatives
    # above a and c), and so does ndcg@2, whatever the AUC beside them reads
    assert frame.get_column("pauc@1").to_list() == [1.0, 0.0, 1.0]
    alone = prm.evaluate(
        RECS, TRUTH, ["ndcg@2", "pauc@1"], score="score", relevance="rel", per_user=True
    ).sort("user")
    assert frame.select("user", "ndcg@2", "pauc@1").equals(alone)


def test_auc_from_given_ranks_has_no_ties() -> None:
    """Given ranks never tie (a shared rank is refused): each pair is ordered by its ranks."""
    recs = RECS.with_columns(pl.col("score").rank("ordinal", descending=True).over("user"))
    recs = recs.rename({"score": "rank"})
    frame = prm.evaluate(recs, TRUTH, ["auc"], relevance="rel", per_user=True).sort("user")
    # ordinal ranks: b (first of the tie in the rows) at 2 above c: a > b, a > d, c > d: 3 / 4
    assert frame.get_column("auc").to_list() == [0.75, 0.5, None]


def test_partial_auc_by_hand() -> None:
    # user 1, tied: ROC (0, 0) (0, 1/2) (1/2, 1) (1, 1); up to fpr 1/2 the area is 3/8,
    # McClish: (1 + (3/8 - 1/8) / (1/2 - 1/8)) / 2 = 5/6. User 2: ROC (0,0) (1/2,0) (1/2,1)
    # (1,1): area 0 up to 1/2, (1 + (0 - 1/8) / (3/8)) / 2 = 1/3
    got = _per_user("auc(max_fpr=0.5)")
    assert got == _per_user("auc(max_fpr=0.5)", ties="average")
    assert got[1] == pytest.approx(5 / 6, abs=1e-15)
    assert got[2] == pytest.approx(1 / 3, abs=1e-15)
    assert got[3] is None
    assert got[1] == pytest.approx(roc_auc_score([1, 0, 1, 0], [0.9, 0.8, 0.8, 0.1], max_fpr=0.5))


def test_gauc_by_hand() -> None:
    # weights: the candidates of the users with both classes (4 and 3); users 3, 4 left out
    frame = prm.evaluate(RECS, TRUTH, ["gauc"], score="score", relevance="rel", ties="average")
    assert frame.item() == pytest.approx((4 * 0.875 + 3 * 0.5) / 7, abs=1e-15)
    assert _per_user("gauc", ties="average") == {1: 0.875, 2: 0.5, 3: None}
    # RecBole's weights: the positives (2 and 1)
    frame = prm.evaluate(
        RECS, TRUTH, ["gauc(weight=positives)"], score="score", relevance="rel", ties="average"
    )
    assert frame.item() == pytest.approx((2 * 0.875 + 1 * 0.5) / 3, abs=1e-15)


def test_pauc_and_pap_by_hand() -> None:
    # user 1 (item_desc: a, c, b, d; m_u = 2): k = 1: a and c have 0 negatives above: (1 + 1)
    # / (1 * 2) = 1. User 2 (x, y, z): y has 1 negative above: k = 1 gives 0, k = 2 gives
    # (2 - 1) / (2 * 1). User 3: p alone, no negative: (k - 0) / k = 1.
    assert _per_user("pauc@1") == {1: 1.0, 2: 0.0, 3: 1.0}
    assert _per_user("pauc@2") == {1: 1.0, 2: 0.5, 3: 1.0}
    # pap@1: only the top min(m_u, 1) = 1 positive counts, over 1 * 1
    assert _per_user("pap@1") == {1: 1.0, 2: 0.0, 3: 1.0}


# ------------------------------------------------------------------ RecTools' own cases

# RecTools tests/metrics/test_auc.py (TestPartialAUC/TestPAP.test_calc): the inputs
# and the expected per-user values with insufficient_handling="ignore" (RecTools'
# default; "exclude" and "raise" have no equivalent here)
RT_RECO = pl.DataFrame(
    {
        "user": [1, 2, 3, 3, 3, 4, 5, 5, 5, 5],
        "item": [1, 2, 1, 2, 3, 1, 1, 2, 3, 5],
        "rank": [9, 1, 1, 2, 3, 1, 3, 7, 9, 1],
    }
)
RT_INTERACTIONS = pl.DataFrame(
    {"user": [1, 2, 3, 3, 3, 4, 5, 5, 5, 5], "item": [1, 1, 1, 2, 3, 1, 1, 2, 3, 4]}
)
RT_CALC = [
    ("pauc@1", [0, 0, 1, 1, 0]),
    ("pauc@3", [0, 0, 1, 1, 1 / 12]),
    ("pap@1", [0, 0, 1, 1, 0]),
    ("pap@3", [0, 0, 1, 1, 1 / 9]),
]


def _rectools_per_user(recs: pl.DataFrame, truth: pl.DataFrame, metric: str) -> list[float]:
    frame = prm.evaluate(recs, truth, [metric], per_user=True).sort("user")
    return frame.get_column(metric).to_list()


@pytest.mark.parametrize(("metric", "expected"), RT_CALC)
def test_rectools_test_calc(metric: str, expected: list[float]) -> None:
    got = _rectools_per_user(RT_RECO, RT_INTERACTIONS, metric)
    assert got == pytest.approx(expected, abs=1e-15)
    mean = prm.evaluate(RT_RECO, RT_INTERACTIONS, [metric]).item()
    assert mean == pytest.approx(sum(expected) / len(expected), abs=1e-15)


# RecTools' docstring examples of PartialAUC and PAP (rectools/metrics/auc.py)
DOC_RECO = pl.DataFrame(
    {"user": [1, 1, 2, 2, 2, 3, 3], "item": [1, 2, 3, 1, 2, 3, 2], "rank": [1, 2, 1, 2, 3, 1, 2]}
)
DOC_INTERACTIONS = pl.DataFrame({"user": [1, 1, 2, 2, 3, 3], "item": [1, 2, 1, 3, 1, 2]})


@pytest.mark.parametrize("name", ["pauc", "pap"])
def test_rectools_docstring_examples(name: str) -> None:
    assert _rectools_per_user(DOC_RECO, DOC_INTERACTIONS, f"{name}@1") == [1.0, 1.0, 0.0]
    got = _rectools_per_user(DOC_RECO, DOC_INTERACTIONS, f"{name}@3")
    assert got == pytest.approx([1.0, 1.0, 1 / 3], abs=1e-15)


# RecTools' test_when_duplicates_in_interactions_*: RecTools drops the repeated
# interaction (user 1, item 1); a repeated truth row is refused here, so it is given once
DUP_RECO = pl.DataFrame(
    {"user": [1, 1, 1, 2, 2, 2], "item": [1, 2, 3, 1, 2, 3], "rank": [1, 2, 3, 4, 5, 6]}
)
DUP_INTERACTIONS = pl.DataFrame({"user": [1, 1, 2, 2, 2], "item": [1, 2, 1, 2, 3]})
DUP_UNSEEN = pl.DataFrame({"user": [1, 1, 2, 2, 2, 1], "item": [1, 2, 1, 2, 3, 10]})


@pytest.mark.parametrize("metric", ["pauc@1", "pauc@3", "pap@1", "pap@3"])
def test_rectools_duplicates_sufficient(metric: str) -> None:
    assert _rectools_per_user(DUP_RECO, DUP_INTERACTIONS, metric) == [1.0, 0.0]


def test_rectools_duplicates_insufficient() -> None:
    got = _rectools_per_user(DUP_RECO, DUP_UNSEEN, "pauc@1")
    assert got == pytest.approx([2 / 3, 0.0], abs=1e-15)
    short = pl.DataFrame({"user": [1, 2, 2, 2], "item": [1, 1, 2, 3], "rank": [1, 4, 5, 6]})
    assert _rectools_per_user(short, DUP_UNSEEN, "pap@2") == [0.5, 0.0]


# ------------------------------------------------------------------ generated lists


@st.composite
def scored_users(draw: st.DrawFn) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A few users with tied scores, graded truth (0 and unrecommended items too)."""
    recs_rows, truth_rows = [], []
    for user in range(draw(st.integers(1, 5))):
        items = draw(st.lists(st.integers(0, 9), unique=True, max_size=8))
        for item in items:
            recs_rows.append((user, item, float(draw(st.integers(0, 3)))))
        for item in draw(st.lists(st.integers(0, 12), unique=True, max_size=6)):
            truth_rows.append((user, item, draw(st.integers(0, 2))))
    recs = pl.DataFrame(
        recs_rows, schema={"user": pl.Int64, "item": pl.Int64, "score": pl.Float64}, orient="row"
    )
    truth = pl.DataFrame(
        truth_rows, schema={"user": pl.Int64, "item": pl.Int64, "rel": pl.Int64}, orient="row"
    )
    return recs, truth


def _candidates(
    recs: pl.DataFrame, truth: pl.DataFrame, user: int
) -> tuple[list[textbook.Candidate], set[Hashable]]:
    rows = recs.filter(pl.col("user") == user)
    pairs = list(zip(rows.get_column("item"), rows.get_column("score"), strict=True))
    # item_desc: score descending, then item id descending (the package's default)
    ordered = sorted(pairs, key=lambda row: (row[1], row[0]), reverse=True)
    position = {item: n for n, (item, _) in enumerate(ordered, start=1)}
    candidates = [(item, position[item], score) for item, score in pairs]
    relevant = set(truth.filter(pl.col("user") == user, pl.col("rel") > 0).get_column("item"))
    return candidates, relevant


def _close(got: float | None, want: float | None) -> bool:
    if got is None or want is None:
        return got is None and want is None
    return math.isclose(got, want, rel_tol=0.0, abs_tol=1e-12)


def _evaluated(
    recs: pl.DataFrame, truth: pl.DataFrame, metric: str, **options: Any
) -> dict[int, float | None]:
    frame = prm.evaluate(
        recs, truth, [metric], score="score", relevance="rel", per_user=True, **options
    )
    return dict(zip(frame.get_column("user"), frame.get_column(metric), strict=True))


@SETTINGS
@given(case=scored_users(), ties=TIE_RULES)
def test_auc_against_the_textbook(case: tuple[pl.DataFrame, pl.DataFrame], ties: str) -> None:
    recs, truth = case
    got = _evaluated(recs, truth, "auc", ties=ties)
    for user in recs.get_column("user").unique():
        candidates, relevant = _candidates(recs, truth, user)
        # equal scores count one half whatever rule orders them for the positions
        want = textbook.auc(candidates, relevant, "score")
        assert _close(got.get(user), want), (user, got.get(user), want)


@SETTINGS
@given(
    case=scored_users(),
    ties=TIE_RULES,
    max_fpr=st.sampled_from([0.05, 0.2, 0.25, 0.5, 0.7, 1.0]),
)
def test_partial_auc_against_the_textbook(
    case: tuple[pl.DataFrame, pl.DataFrame], ties: str, max_fpr: float
) -> None:
    recs, truth = case
    got = _evaluated(recs, truth, f"auc(max_fpr={max_fpr})", ties=ties)
    for user in recs.get_column("user").unique():
        candidates, relevant = _candidates(recs, truth, user)
        want = textbook.partial_auc(candidates, relevant, max_fpr, "score")
        assert _close(got.get(user), want), (user, got.get(user), want)


@SETTINGS
@given(
    case=scored_users(),
    weighted_by=st.sampled_from(["candidates", "positives"]),
    ties=TIE_RULES,
)
def test_gauc_against_the_textbook(
    case: tuple[pl.DataFrame, pl.DataFrame], weighted_by: str, ties: str
) -> None:
    recs, truth = case
    total = weight = 0.0
    for user in recs.get_column("user").unique():
        candidates, relevant = _candidates(recs, truth, user)
        value = textbook.auc(candidates, relevant, "score")
        if value is not None:
            positives = sum(1 for item, _, _ in candidates if item in relevant)
            size = len(candidates) if weighted_by == "candidates" else positives
            total += size * value
            weight += size
    metric = f"gauc(weight={weighted_by})"
    got = prm.evaluate(recs, truth, [metric], score="score", relevance="rel", ties=ties)
    assert _close(got.item(), total / weight if weight else None)


@st.composite
def ranked_users(draw: st.DrawFn) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Given ranks with gaps, relevant items recommended or not."""
    recs_rows, truth_rows = [], []
    for user in range(draw(st.integers(1, 5))):
        items = draw(st.lists(st.integers(0, 9), unique=True, max_size=7))
        ranks = draw(st.lists(st.integers(1, 12), unique=True, min_size=len(items)))
        recs_rows += [(user, item, rank) for item, rank in zip(items, ranks, strict=False)]
        truth_rows += [(user, item) for item in draw(st.lists(st.integers(0, 12), unique=True))]
    recs = pl.DataFrame(
        recs_rows, schema={"user": pl.Int64, "item": pl.Int64, "rank": pl.Int64}, orient="row"
    )
    truth = pl.DataFrame(truth_rows, schema={"user": pl.Int64, "item": pl.Int64}, orient="row")
    return recs, truth


@SETTINGS
@given(case=ranked_users(), k=st.integers(1, 6))
def test_pauc_and_pap_against_the_textbook(case: tuple[pl.DataFrame, pl.DataFrame], k: int) -> None:
    recs, truth = case
    frame = prm.evaluate(recs, truth, [f"pauc@{k}", f"pap@{k}"], per_user=True)
    for row in frame.iter_rows(named=True):
        rows = recs.filter(pl.col("user") == row["user"])
        positions = dict(zip(rows.get_column("item"), rows.get_column("rank"), strict=True))
        relevant = set(truth.filter(pl.col("user") == row["user"]).get_column("item"))
        assert _close(row[f"pauc@{k}"], textbook.pauc(positions, relevant, k)), row
        assert _close(row[f"pap@{k}"], textbook.pap(positions, relevant, k)), row


# ------------------------------------------------------------------ peers as oracles


@SETTINGS
@given(case=scored_users(), max_fpr=st.sampled_from([None, 0.1, 0.3, 0.5]), ties=TIE_RULES)
def test_auc_equals_scikit_learn(
    case: tuple[pl.DataFrame, pl.DataFrame], max_fpr: Any, ties: str
) -> None:
    """sklearn's roc_auc_score of each user's labels and scores (equal scores: one half)."""
    recs, truth = case
    metric = "auc" if max_fpr is None else f"auc(max_fpr={max_fpr})"
    got = _evaluated(recs, truth, metric, ties=ties)
    for user in recs.get_column("user").unique():
        candidates, relevant = _candidates(recs, truth, user)
        labels = [int(item in relevant) for item, _, _ in candidates]
        if len(set(labels)) < 2:  # sklearn refuses one class: the package leaves it out
            assert got.get(user) is None
            continue
        want = roc_auc_score(labels, [score for _, _, score in candidates], max_fpr=max_fpr)
        assert _close(got.get(user), float(want)), (user, got.get(user), want)


@SETTINGS
@given(case=scored_users(), max_fpr=st.sampled_from([None, 0.3]))
def test_auc_equals_torchmetrics(case: tuple[pl.DataFrame, pl.DataFrame], max_fpr: Any) -> None:
    """torchmetrics' RetrievalAUROC over the users with both classes (torch is optional).

    It scores a query whose candidates are all relevant 0 (and one without a relevant
    candidate 0, or skips it): the package leaves both out, so only users with both
    classes are given to it.
    """
    torch = pytest.importorskip("torch")
    retrieval = pytest.importorskip("torchmetrics.retrieval")
    recs, truth = case
    metric = "auc" if max_fpr is None else f"auc(max_fpr={max_fpr})"
    got = prm.evaluate(recs, truth, [metric], score="score", relevance="rel")
    preds, target, indexes = [], [], []
    for user in recs.get_column("user").unique():
        candidates, relevant = _candidates(recs, truth, user)
        labels = [item in relevant for item, _, _ in candidates]
        if all(labels) or not any(labels):
            continue
        preds += [score for _, _, score in candidates]
        target += labels
        indexes += [user] * len(labels)
    if not indexes:
        assert got.item() is None
        return
    oracle = retrieval.RetrievalAUROC(max_fpr=max_fpr)
    want = oracle(
        torch.tensor(preds, dtype=torch.float64),
        torch.tensor(target),
        indexes=torch.tensor(indexes),
    )
    # torchmetrics computes the curve in float32
    assert math.isclose(got.item(), float(want), rel_tol=0.0, abs_tol=1e-6)


# ------------------------------------------------------------------ refusals


def test_bad_parameters_and_cutoffs_are_refused() -> None:
    roles: dict[str, Any] = {"score": "score", "relevance": "rel"}
    with pytest.raises(ValueError, match=r"max_fpr must be a number in \(0, 1\], got 0"):
        prm.evaluate(RECS, TRUTH, ["auc(max_fpr=0)"], **roles)
    with pytest.raises(ValueError, match="max_fpr must be a number in"):
        prm.evaluate(RECS, TRUTH, ["auc(max_fpr=1.5)"], **roles)
    with pytest.raises(ValueError, match="'auc' takes no cutoff"):
        prm.evaluate(RECS, TRUTH, ["auc@10"], **roles)
    with pytest.raises(ValueError, match="'pauc' needs a cutoff"):
        prm.evaluate(RECS, TRUTH, ["pauc"], **roles)
    with pytest.raises(ValueError, match=r"ties='average' is not implemented for \['pap@3'\]"):
        prm.evaluate(RECS, TRUTH, ["pap@3"], ties="average", **roles)


@pytest.mark.parametrize("metric", ["auc", "gauc", "pauc@2", "pap@2"])
def test_two_items_at_one_given_rank_are_refused(metric: str) -> None:
    # b (a negative) shares position 1 with a: its place decides the negatives above c
    recs = pl.DataFrame({"user": [1, 1, 1], "item": ["a", "b", "c"], "rank": [1, 1, 2]})
    truth = pl.DataFrame({"user": [1, 1], "item": ["a", "c"]})
    with pytest.raises(ValueError, match=r"2 rows with a duplicated \(user, rank\).*user=1"):
        prm.evaluate(recs, truth, [metric])


def test_curves_of_pauc_and_pap_are_their_values_at_each_k() -> None:
    # no curve step (k counts negatives, not positions): curves evaluates them at each k
    options = {"score": "score", "relevance": "rel"}
    for name in ("pauc", "pap"):
        drawn = prm.curves(RECS, TRUTH, [name], k=[1, 2, 3], **options)
        for k in (1, 2, 3):
            at_k = prm.evaluate(RECS, TRUTH, [f"{name}@{k}"], **options).item()
            assert drawn.filter(pl.col("k") == k).get_column("value").item() == at_k


def test_compare_refuses_gauc_a_ratio_of_sums() -> None:
    recs = pl.concat([RECS.with_columns(model=pl.lit(m)) for m in ("A", "B")])
    with pytest.raises(ValueError, match=r"cannot test 'gauc': gauc is a ratio of sums"):
        prm.compare(
            recs, TRUTH, ["gauc"], system="model", baseline="A", score="score", relevance="rel"
        )


def test_pauc_reads_past_its_cutoff_beside_other_measures() -> None:
    """The whole list is ranked when pauc@1 is asked with ndcg@1 (its cutoff counts negatives)."""
    recs = pl.DataFrame({"user": [1] * 4, "item": ["n1", "r1", "n2", "r2"], "rank": [1, 2, 3, 4]})
    truth = pl.DataFrame({"user": [1, 1], "item": ["r1", "r2"]})
    frame = prm.evaluate(recs, truth, ["pauc@2", "ndcg@1"])
    # r1: 1 negative above, (2 - 1); r2: 2 above, not counted: 1 / (2 * 2)
    assert frame.row(0) == (0.25, 0.0)


@SETTINGS
@given(case=scored_users(), max_fpr=st.sampled_from([0.3, 1.0]))
def test_lists_in_rank_order_give_the_same_auc(
    case: tuple[pl.DataFrame, pl.DataFrame], max_fpr: float
) -> None:
    """Rows already in rank order: the tie groups are read from the runs, not ranked again."""
    recs, truth = case
    ordered = recs.sort(["user", "score", "item"], descending=[False, True, True])
    metrics = [f"auc(max_fpr={max_fpr})", "gauc"]
    # in memory in rank order (the runs), lazy (the ranking windows), and beside ndcg
    runs = prm.evaluate(ordered, truth, metrics, score="score", relevance="rel", per_user=True)
    ranked = prm.evaluate(
        ordered.lazy(), truth, metrics, score="score", relevance="rel", per_user=True
    ).collect()
    mixed = prm.evaluate(
        ordered, truth, [*metrics, "ndcg@3"], score="score", relevance="rel", per_user=True
    )
    for other in (ranked, mixed.select(runs.columns)):
        for name in metrics:
            got, want = runs.sort("user")[name], other.sort("user")[name]
            assert got.equals(want), (name, got.to_list(), want.to_list())


def test_run_tie_groups_in_rank_order() -> None:
    """The runs of equal scores, list by list (-0.0 equals 0.0; a new list starts a group)."""
    scores = pl.Series([0.5, 0.5, 0.0, -0.0, 0.5, 0.2, 0.2])
    first, size = run_tie_groups(scores, pl.Series([4, 1, 2]))
    assert first.to_list() == [1, 1, 3, 3, 1, 1, 1]
    assert size.to_list() == [2, 2, 2, 2, 1, 2, 2]
