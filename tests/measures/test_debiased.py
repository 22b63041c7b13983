"""The debiased measures ``ips_*`` and ``snips_*`` (``_measures/debiased.py``).

Checked against a hand-worked case, a plain-Python textbook under
hypothesis-generated data (given and estimated propensities), WarpRec's
``IPSRecall``/``SNIPSRecall``/``IPSDCG``/``SNIPSDCG`` and RecPack's
``IPSHitRateK`` (their formulas re-derived here: neither is installed), the
identities of the definitions (SNIPS with equal propensities is the plain
measure, IPS is the plain measure over p), and a simulation of the logging
process: the mean of ``ips_dcg@k`` over many popularity-biased draws of the
observed truth approaches the full truth's DCG@k.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polars_rankmetrics as prm

BASES = ("recall", "precision", "hit_rate", "dcg", "ndcg", "map")

# ---------------------------------------------------------------- the hand-worked case

RECS = pl.DataFrame(
    {"user": [1, 1, 1, 2, 2], "item": [10, 11, 12, 10, 13], "rank": [1, 2, 3, 1, 2]}
)
TRUTH = pl.DataFrame({"user": [1, 1, 2, 2], "item": [11, 12, 13, 14]})
ITEMS = pl.DataFrame({"item": [10, 11, 12, 13, 14], "p": [1.0, 0.5, 0.25, 0.5, 0.1]})


def test_hand_worked_given_propensities() -> None:
    # user 1: relevant 11 (p 1/2, w 2) at 2 and 12 (p 1/4, w 4) at 3; W = 6, m = 2
    # user 2: relevant 13 (w 2) at 2 and 14 (w 10) not recommended; W = 12, m = 2
    d2, d3 = 1 / math.log2(3), 1 / math.log2(4)
    ideal = 1 + d2
    expected = {
        "ips_recall@3": [(2 + 4) / 2, 2 / 2],
        "snips_recall@3": [6 / 6, 2 / 12],
        "ips_precision@3": [6 / 3, 2 / 3],
        "snips_precision@3": [(2 / 6) * 6 / 3, (2 / 12) * 2 / 3],
        "ips_hit_rate@3": [2.0, 2.0],
        "snips_hit_rate@3": [2 * 2 / 6, 2 * 2 / 12],
        "ips_dcg@3": [2 * d2 + 4 * d3, 2 * d2],
        "snips_dcg@3": [(2 * d2 + 4 * d3) / 3, (2 * d2) / 6],
        "ips_ndcg@3": [(2 * d2 + 4 * d3) / ideal, 2 * d2 / ideal],
        "snips_ndcg@3": [(2 * d2 + 4 * d3) / 3 / ideal, (2 * d2) / 6 / ideal],
        # AP: sum w_i (1 + sum of the weights above) / i, over min(m, k) = 2
        "ips_map@3": [(2 * 1 / 2 + 4 * (1 + 2) / 3) / 2, (2 * 1 / 2) / 2],
        # SNIPS: the weights times m / W (1/3 for user 1, 1/6 for user 2)
        "snips_map@3": [
            ((2 / 3) * 1 / 2 + (4 / 3) * (1 + 2 / 3) / 3) / 2,
            ((2 / 6) * 1 / 2) / 2,
        ],
    }
    got = prm.evaluate(
        RECS, TRUTH, list(expected), items=ITEMS, propensity="p", per_user=True
    ).sort("user")
    for label, values in expected.items():
        assert got[label].to_list() == pytest.approx(values, rel=1e-14), label
    means = prm.evaluate(RECS, TRUTH, list(expected), items=ITEMS, propensity="p")
    for label, values in expected.items():
        assert means[label].item() == pytest.approx(sum(values) / 2, rel=1e-14), label


def test_hand_worked_estimated_propensities() -> None:
    # n_i over distinct users (a repeated row counts once): 10: 3, 11: 1, 12: 1; max 3
    history = pl.DataFrame({"user": [1, 2, 3, 3, 3, 4], "item": [10, 10, 10, 11, 11, 12]})
    got = prm.evaluate(
        RECS,
        TRUTH,
        ["ips_recall@3", "ips_recall(gamma=1)@3", "ips_recall(clip=0.7)@3"],
        interactions=history,
        per_user=True,
    ).sort("user")
    share = 1 / 3
    # gamma 0: p = share^(1/2); gamma 1: p = share; 13 and 14 were never seen: p = 0 -> clip
    assert got["ips_recall@3"].to_list() == pytest.approx(
        [2 / math.sqrt(share) / 2, (1 / 0.001) / 2], rel=1e-14
    )
    assert got["ips_recall(gamma=1)@3"].to_list() == pytest.approx(
        [2 / share / 2, (1 / 0.001) / 2], rel=1e-14
    )
    # clip 0.7: both of user 1's propensities (0.577) are raised to 0.7
    assert got["ips_recall(clip=0.7)@3"].to_list() == pytest.approx(
        [2 / 0.7 / 2, 1 / 0.7 / 2], rel=1e-14
    )


def test_graded_truth_without_a_relevance_column_agrees() -> None:
    # the binary truth takes another path (a semi join): the same numbers as grade 1
    graded = TRUTH.with_columns(pl.lit(1).alias("rel"))
    labels = [f"{family}_{base}@3" for family in ("ips", "snips") for base in BASES]
    plain = prm.evaluate(RECS, TRUTH, labels, items=ITEMS, propensity="p")
    with_grades = prm.evaluate(RECS, graded, labels, items=ITEMS, propensity="p", relevance="rel")
    for label in labels:
        assert plain[label].item() == pytest.approx(with_grades[label].item(), rel=1e-14)


# ---------------------------------------------------------------- the textbook


def _textbook(
    ranked: Sequence[object],
    grades: Mapping[object, float],
    weights: Mapping[object, float],  # the user's relevant items' weights
    k: int,
    *,
    normalised: bool,
) -> dict[str, float] | None:
    """Every debiased measure of one user, straight from the definitions (None: not counted)."""
    relevant = {item for item, grade in grades.items() if grade > 0}
    m = len(relevant)
    if m == 0:
        return None
    total = sum(weights[item] for item in relevant)
    c = m / total if normalised else 1.0
    top = list(ranked)[:k]
    hits = [(i, item) for i, item in enumerate(top, start=1) if item in relevant]
    hits_weight = sum(c * weights[item] for _, item in hits)
    dcg = sum(c * weights[item] * grades[item] / math.log2(i + 1) for i, item in hits)
    ideal = sum(g / math.log2(j + 1) for j, g in enumerate(sorted(grades.values())[::-1][:k], 1))
    precision_sum, above = 0.0, 0.0
    for i, item in hits:
        precision_sum += c * weights[item] * (1 + above) / i
        above += c * weights[item]
    return {
        "recall": hits_weight / m,
        "precision": hits_weight / k,
        "hit_rate": c * weights[hits[0][1]] if hits else 0.0,
        "dcg": dcg,
        "ndcg": dcg / ideal if ideal > 0 else 0.0,
        "map": precision_sum / min(m, k),
    }


@st.composite
def _cases(draw: st.DrawFn) -> tuple[pl.DataFrame, pl.DataFrame, dict[int, float], int, float]:
    items = list(range(8))
    recs_rows, truth_rows = [], []
    for user in range(draw(st.integers(1, 5))):
        listed = draw(st.permutations(items))[: draw(st.integers(0, 8))]
        recs_rows += [(user, item, rank) for rank, item in enumerate(listed, start=1)]
        judged = draw(st.lists(st.sampled_from(items), unique=True, max_size=6))
        truth_rows += [(user, item, draw(st.integers(0, 3))) for item in judged]
    propensity = {item: draw(st.floats(0.01, 1.0)) for item in items}
    k = draw(st.integers(1, 9))
    clip = draw(st.sampled_from([0.001, 0.05, 0.3]))
    recs = pl.DataFrame(
        recs_rows, schema={"user": pl.Int64, "item": pl.Int64, "rank": pl.Int64}, orient="row"
    )
    truth = pl.DataFrame(
        truth_rows, schema={"user": pl.Int64, "item": pl.Int64, "rel": pl.Int64}, orient="row"
    )
    return recs, truth, propensity, k, clip


def _check_against_textbook(
    recs: pl.DataFrame,
    truth: pl.DataFrame,
    weights: Callable[[object, object], float],
    k: int,
    params: str,
    **options: object,
) -> None:
    labels = [f"{family}_{base}{params}@{k}" for family in ("ips", "snips") for base in BASES]
    got = prm.evaluate(recs, truth, labels, relevance="rel", per_user=True, **options)  # type: ignore[arg-type]
    rows = {row["user"]: row for row in got.to_dicts()}
    users = set(truth.filter(pl.col("rel") > 0)["user"].to_list())
    assert set(rows) == users
    for user in users:
        ranked = recs.filter(pl.col("user") == user).sort("rank")["item"].to_list()
        grades = {
            item: float(grade)
            for item, grade in truth.filter(pl.col("user") == user).select("item", "rel").rows()
        }
        own = {item: weights(user, item) for item in grades}
        for family in ("ips", "snips"):
            want = _textbook(ranked, grades, own, k, normalised=family == "snips")
            assert want is not None
            for base in BASES:
                label = f"{family}_{base}{params}@{k}"
                assert rows[user][label] == pytest.approx(want[base], rel=1e-12, abs=1e-12), label


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_cases())
def test_given_propensities_match_the_textbook(
    case: tuple[pl.DataFrame, pl.DataFrame, dict[int, float], int, float],
) -> None:
    recs, truth, propensity, k, clip = case
    items = pl.DataFrame({"item": list(propensity), "p": list(propensity.values())})
    weights = {item: 1 / max(p, clip) for item, p in propensity.items()}
    _check_against_textbook(
        recs, truth, lambda _, item: weights[item], k, f"(clip={clip})", items=items, propensity="p"
    )


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_cases(), st.randoms(use_true_random=False))
def test_a_truth_column_gives_each_pair_its_propensity(
    case: tuple[pl.DataFrame, pl.DataFrame, dict[int, float], int, float], rng: random.Random
) -> None:
    recs, truth, _, k, clip = case
    # every truth row its own propensity (rows with grade <= 0 may hold anything: unread)
    pairs = {(u, i): rng.uniform(0.01, 1.0) for u, i in truth.select("user", "item").rows()}
    truth = truth.with_columns(
        pl.Series("p", [pairs[u, i] if g > 0 else None for u, i, g in truth.rows()], pl.Float64)
    )
    _check_against_textbook(
        recs,
        truth,
        lambda user, item: 1 / max(pairs[user, item], clip),
        k,
        f"(clip={clip})",
        propensity="p",
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    _cases(),
    st.lists(st.tuples(st.integers(0, 6), st.integers(0, 9)), min_size=1, max_size=25),
    st.sampled_from([0.0, 0.5, 2.0]),
)
def test_estimated_propensities_match_the_textbook(
    case: tuple[pl.DataFrame, pl.DataFrame, dict[int, float], int, float],
    pairs: list[tuple[int, int]],
    gamma: float,
) -> None:
    recs, truth, _, k, clip = case
    history = pl.DataFrame(pairs, schema={"user": pl.Int64, "item": pl.Int64}, orient="row")
    # Yang et al. eq. 15 over distinct users per item; items never seen have p = 0
    counts = {item: len({u for u, i in set(pairs) if i == item}) for item in range(10)}
    largest = max(counts.values())
    weights = {
        item: 1 / max((n / largest) ** ((gamma + 1) / 2), clip) for item, n in counts.items()
    }
    _check_against_textbook(
        recs,
        truth,
        lambda _, item: weights[item],
        k,
        f"(gamma={gamma},clip={clip})",
        interactions=history,
    )


# ---------------------------------------------------------------- identities and a peer


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_cases(), st.floats(0.05, 1.0))
def test_equal_propensities(
    case: tuple[pl.DataFrame, pl.DataFrame, dict[int, float], int, float], p: float
) -> None:
    """SNIPS is the plain measure; IPS of a linear measure is the plain one over p."""
    recs, truth, _, k, _ = case
    items = pl.DataFrame({"item": list(range(8)), "p": [p] * 8})
    labels = [f"{family}_{base}@{k}" for family in ("ips", "snips") for base in BASES]
    plain = [f"{base}@{k}" for base in BASES]
    got = prm.evaluate(
        recs, truth, labels + plain, relevance="rel", items=items, propensity="p", per_user=True
    )
    for base in BASES:
        want = got[f"{base}@{k}"].to_list()
        assert got[f"snips_{base}@{k}"].to_list() == pytest.approx(want, rel=1e-12, abs=1e-12)
        if base != "map":  # AP's pairs of hits weigh 1/p^2
            scaled = [value / p for value in want]
            assert got[f"ips_{base}@{k}"].to_list() == pytest.approx(scaled, rel=1e-12, abs=1e-12)


def test_recpack_ips_hit_rate() -> None:
    """RecPack's ``IPSHitRateK``: the mean over users of the sum of 1/p over the hits in the top K.

    Its propensities are each item's share of the truth's interactions,
    ``pi(i) = n_i / sum_j n_j``, its inverse capped at ``ip_cap = 10000``: the
    weights 1 / max(p, 1/10000), so RecPack's value is ``K * ips_precision@K``
    with ``clip=1e-4`` (RecPack's users are those with a relevant item and a list).
    """
    rng = random.Random(7)
    truth_rows = [(u, i) for u in range(30) for i in rng.sample(range(40), 4)]
    recs_rows = [(u, i, r) for u in range(30) for r, i in enumerate(rng.sample(range(40), 5), 1)]
    truth = pl.DataFrame(truth_rows, schema=["user", "item"], orient="row")
    recs = pl.DataFrame(recs_rows, schema=["user", "item", "rank"], orient="row")
    counts = truth.group_by("item").len()
    items = counts.select("item", (pl.col("len") / pl.col("len").sum()).alias("p"))
    pi = dict(items.rows())
    relevant = {(u, i) for u, i in truth_rows}
    # RecPack's formula, re-derived: scores = hits * inverse propensities, summed / users
    scores = sum(min(1 / pi[i], 10000.0) for u, i, r in recs_rows if r <= 5 and (u, i) in relevant)
    recpack = scores / 30
    got = prm.evaluate(recs, truth, "ips_precision(clip=0.0001)@5", items=items, propensity="p")
    assert 5 * got.item() == pytest.approx(recpack, rel=1e-13)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    _cases(),
    st.sets(st.tuples(st.integers(0, 6), st.integers(0, 9)), min_size=1, max_size=25),
)
def test_warprec_ips_and_snips_recall_and_dcg(
    case: tuple[pl.DataFrame, pl.DataFrame, dict[int, float], int, float],
    pairs: set[tuple[int, int]],
) -> None:
    """WarpRec 1.4's ``IPSRecall``, ``SNIPSRecall``, ``IPSDCG`` and ``SNIPSDCG``, re-derived.

    WarpRec (``warprec/evaluation/propensity.py``, ``metrics/debiased/``):
    ``p_i = clamp((n_i / max_j n_j)^0.5, 0.1, 1)`` with n_i the item's training
    interactions (distinct users here: the history has no repeated pair);
    binary relevance; IPSRecall = sum over the top-k hits of 1/p, / m_u;
    SNIPSRecall = the same / sum over the user's relevant items of 1/p;
    IPSDCG = sum of (1/p) / log2(i + 1); SNIPSDCG = IPSDCG / the same sum. Ours
    with ``gamma=0, clip=0.1``: the first three equal, and ``snips_dcg`` is m_u
    times SNIPSDCG (ours equals the plain DCG when every propensity is equal).
    """
    recs, truth, _, k, _ = case
    truth = truth.filter(pl.col("rel") > 0).select("user", "item")
    history = pl.DataFrame(sorted(pairs), schema={"user": pl.Int64, "item": pl.Int64}, orient="row")
    counts = {item: sum(1 for _, i in pairs if i == item) for item in range(10)}
    largest = max(counts.values())
    propensity = {item: min(max((n / largest) ** 0.5, 0.1), 1.0) for item, n in counts.items()}
    labels = [
        f"{name}(clip=0.1)@{k}" for name in ("ips_recall", "snips_recall", "ips_dcg", "snips_dcg")
    ]
    got = prm.evaluate(recs, truth, labels, interactions=history, per_user=True)
    for row in got.to_dicts():
        relevant = set(truth.filter(pl.col("user") == row["user"])["item"].to_list())
        ranked = recs.filter(pl.col("user") == row["user"]).sort("rank")["item"].to_list()[:k]
        hits = [(i, item) for i, item in enumerate(ranked, start=1) if item in relevant]
        total = sum(1 / propensity[item] for item in relevant)
        ips_dcg = sum(1 / propensity[item] / math.log2(i + 1) for i, item in hits)
        warprec = {
            "ips_recall": sum(1 / propensity[item] for _, item in hits) / len(relevant),
            "snips_recall": sum(1 / propensity[item] for _, item in hits) / total,
            "ips_dcg": ips_dcg,
            "snips_dcg": len(relevant) * (ips_dcg / total),
        }
        for name, want in warprec.items():
            assert row[f"{name}(clip=0.1)@{k}"] == pytest.approx(want, rel=1e-12, abs=1e-12)


# ---------------------------------------------------------------- unbiasedness


def test_ips_dcg_is_unbiased_by_simulation() -> None:
    """Each relevant pair of a known full truth is logged with probability p_i.

    Popular items (low index) are logged more often. Over 400 draws of the
    logged truth, the mean of ``ips_dcg@10`` (a user without a logged relevant
    item scores 0: the IPS sum over nothing) is within 4 standard errors, and
    within 3%, of the full truth's DCG@10; the naive DCG@10 is far below it.
    """
    rng = random.Random(2026)
    n_users, n_items, draws, k = 60, 40, 400, 10
    propensity = {i: 0.9 * (1 - i / n_items) ** 2 + 0.1 for i in range(n_items)}
    full = [
        (u, i, rng.randint(1, 3)) for u in range(n_users) for i in rng.sample(range(n_items), 8)
    ]
    recs_rows = [
        (u, i, r) for u in range(n_users) for r, i in enumerate(rng.sample(range(n_items), k), 1)
    ]
    recs = pl.DataFrame(recs_rows, schema=["user", "item", "rank"], orient="row")
    full_truth = pl.DataFrame(full, schema=["user", "item", "rel"], orient="row")
    items = pl.DataFrame({"item": list(propensity), "p": list(propensity.values())})
    target = prm.evaluate(recs, full_truth, "dcg@10", relevance="rel").item()
    logged = pl.DataFrame(
        [(d, u, i, g) for d in range(draws) for u, i, g in full if rng.random() < propensity[i]],
        schema=["draw", "user", "item", "rel"],
        orient="row",
    )
    per_user = prm.evaluate(
        recs.join(pl.DataFrame({"draw": list(range(draws))}), how="cross"),
        logged,
        ["ips_dcg(clip=0.01)@10", "dcg@10"],
        relevance="rel",
        by="draw",
        items=items,
        propensity="p",
        per_user=True,
    )
    # every user counts in every draw: the missing ones (no logged relevant item) score 0
    ips = "ips_dcg(clip=0.01)@10"
    sums = per_user.group_by("draw").agg(pl.col(ips, "dcg@10").sum() / n_users)
    estimates = sums[ips]
    mean, se = estimates.mean(), estimates.std() / math.sqrt(draws)
    assert isinstance(mean, float)
    assert isinstance(se, float)
    assert abs(mean - target) < 4 * se
    assert abs(mean - target) < 0.03 * target
    naive = sums["dcg@10"].mean()
    assert isinstance(naive, float)
    assert naive < target - 10 * se  # the logged truth's plain DCG is biased down


# ---------------------------------------------------------------- refusals


def test_refusals_name_what_is_wrong() -> None:
    with pytest.raises(ValueError, match=r"ips_dcg@3.*propensity=.*interactions="):
        prm.evaluate(RECS, TRUTH, "ips_dcg@3")
    with pytest.raises(ValueError, match=r"items"):
        prm.evaluate(RECS, TRUTH, "ips_dcg@3", propensity="p")
    with pytest.raises(ValueError, match=r"'q'"):
        prm.evaluate(RECS, TRUTH, "ips_dcg@3", items=ITEMS, propensity="q")
    for bad in (0.0, 1.5, float("nan")):
        items = ITEMS.with_columns(
            pl.when(pl.col("item") == 11).then(bad).otherwise("p").alias("p")
        )
        with pytest.raises(ValueError, match=r"'p' \(propensity\) has 1 value\(s\) outside"):
            prm.evaluate(RECS, TRUTH, "ips_dcg@3", items=items, propensity="p")
    nulls = ITEMS.with_columns(pl.when(pl.col("item") == 11).then(None).otherwise("p").alias("p"))
    with pytest.raises(ValueError, match=r"'p' \(propensity\) has 1 null"):
        prm.evaluate(RECS, TRUTH, "ips_dcg@3", items=nulls, propensity="p")
    with pytest.raises(ValueError, match=r"1 relevant truth item\(s\) have no row in items="):
        prm.evaluate(
            RECS, TRUTH, "ips_dcg@3", items=ITEMS.filter(pl.col("item") != 14), propensity="p"
        )
    with pytest.raises(ValueError, match=r"duplicated \(item\)"):
        prm.evaluate(RECS, TRUTH, "ips_dcg@3", items=pl.concat([ITEMS, ITEMS]), propensity="p")
    with pytest.raises(ValueError, match=r"'p' is in both the truth and items="):
        prm.evaluate(RECS, TRUTH.with_columns(p=0.5), "ips_dcg@3", items=ITEMS, propensity="p")
    with pytest.raises(ValueError, match=r"truth column 'p' \(propensity\) has 1 value"):
        prm.evaluate(
            RECS, TRUTH.with_columns(p=pl.Series([0.5, 2.0, 0.5, 0.5])), "ips_dcg@3", propensity="p"
        )
    with pytest.raises(ValueError, match=r"gamma must be a finite number > -1"):
        prm.evaluate(RECS, TRUTH, "ips_dcg(gamma=-1)@3", items=ITEMS, propensity="p")
    with pytest.raises(ValueError, match=r"clip must be in \(0, 1\]"):
        prm.evaluate(RECS, TRUTH, "snips_recall(clip=0)@3", items=ITEMS, propensity="p")
    with pytest.raises(ValueError, match=r"ties='average'|ips_dcg"):
        prm.evaluate(RECS, TRUTH, "ips_dcg@3", items=ITEMS, propensity="p", ties="average")


@pytest.mark.parametrize("lazy", [False, True])
def test_empty_interactions_are_refused(lazy: bool) -> None:
    """No interactions: every n_i would be 0 and every hit weigh 1 / clip (ips_recall 750)."""
    history = pl.DataFrame({"user": [1], "item": [10]}).clear()
    recs = RECS.lazy() if lazy else RECS
    interactions = history.lazy() if lazy else history
    with pytest.raises(ValueError, match=r"interactions has no rows.*ips_recall@3.*1 / clip"):
        pl.LazyFrame.collect(
            prm.evaluate(recs, TRUTH, ["ips_recall@3"], interactions=interactions).lazy()
        )


def test_id_type_errors_name_the_frame_that_differs() -> None:
    """items= or interactions= with string ids: the message names it, not the truth."""
    as_text = pl.col("item").cast(pl.String)
    with pytest.raises(
        TypeError,
        match=r"Int64 in recs and truth but String in items;.*items\.with_columns\(pl\.col\('item'\)",
    ):
        prm.evaluate(
            RECS, TRUTH, ["ips_recall@3"], items=ITEMS.with_columns(as_text), propensity="p"
        )
    history = pl.DataFrame({"user": [1, 2], "item": [10, 11]}).with_columns(as_text)
    with pytest.raises(
        TypeError,
        match=r"Int64 in recs and truth but String in interactions;.*interactions\.with_columns",
    ):
        prm.evaluate(RECS, TRUTH, ["ips_recall@3"], interactions=history)


@pytest.mark.parametrize("denominator", ["min_k", "relevant", "k"])
def test_curves_equal_evaluate_at_every_k(denominator: str) -> None:
    # the curve steps (running weighted sums, W_u over the user's whole relevant truth)
    # against evaluate's partials, at cutoffs inside and past the lists
    labels = [f"{family}_{base}" for family in ("ips", "snips") for base in BASES]
    ks = [1, 2, 3, 5, 50]
    options: dict[str, Any] = {"items": ITEMS, "propensity": "p", "denominator": denominator}
    curves = prm.curves(RECS, TRUTH, labels, k=ks, **options)
    wide = prm.evaluate(RECS, TRUTH, [f"{label}@{k}" for label in labels for k in ks], **options)
    for row in curves.iter_rows(named=True):
        want = wide.item(0, f"{row['metric']}@{row['k']}")
        assert row["value"] == pytest.approx(want, abs=1e-12), (row["metric"], row["k"])


def test_inputs_are_not_mutated_and_lazy_agrees() -> None:
    items, truth = ITEMS.clone(), TRUTH.clone()
    labels = [f"snips_{base}@2" for base in BASES]
    eager = prm.evaluate(RECS, truth, labels, items=items, propensity="p")
    lazy = prm.evaluate(
        RECS.lazy(), truth.lazy(), labels, items=items.lazy(), propensity="p"
    ).collect()
    assert eager.equals(lazy)
    assert items.equals(ITEMS)
    assert truth.equals(TRUTH)


@pytest.mark.spark
def test_spark_reads_the_whole_interactions_and_catalog(spark: Any) -> None:
    """Each bucket holds some users: n_i and max n_j still come from every interaction."""
    from polars_rankmetrics import spark as prs  # noqa: PLC0415 - only with pyspark

    rng = random.Random(3)
    recs = pl.DataFrame(
        [(u, i, r) for u in range(40) for r, i in enumerate(rng.sample(range(30), 6), 1)],
        schema=["user", "item", "rank"],
        orient="row",
    )
    truth = pl.DataFrame(
        [(u, i) for u in range(40) for i in rng.sample(range(30), 4)],
        schema=["user", "item"],
        orient="row",
    )
    history = pl.DataFrame(
        [(rng.randrange(60), min(rng.randrange(30), rng.randrange(30))) for _ in range(400)],
        schema=["user", "item"],
        orient="row",
    )
    items = pl.DataFrame({"item": list(range(30)), "p": [0.05 + i / 40 for i in range(30)]})
    labels = [f"{family}_{base}@5" for family in ("ips", "snips") for base in BASES]
    by_pair = truth.with_columns(
        p=pl.Series([0.05 + (u * 7 + i) % 19 / 20 for u, i in truth.rows()])
    )
    for side, judged in (
        ({"interactions": history}, truth),
        ({"items": items, "propensity": "p"}, truth),
        ({"propensity": "p"}, by_pair),
    ):
        want = prm.evaluate(recs, judged, labels, **side)  # type: ignore[arg-type]
        spark_side = {
            name: spark.createDataFrame(value.to_arrow()) if name == "interactions" else value
            for name, value in side.items()
        }
        got = prs.evaluate(
            spark.createDataFrame(recs.to_arrow()),
            spark.createDataFrame(judged.to_arrow()),
            labels,
            n_buckets=4,
            **spark_side,
        )
        row = got.collect()[0].asDict()
        for label in labels:
            assert row[label] == pytest.approx(want[label].item(), rel=1e-12), label


@pytest.mark.spark
def test_spark_refuses_empty_interactions(spark: Any) -> None:
    """Spark counts n_i once over the interactions: none at all is refused, as on one machine."""
    from polars_rankmetrics import spark as prs  # noqa: PLC0415 - only with pyspark

    history = pl.DataFrame({"user": [1], "item": [10]}).clear()
    with pytest.raises(ValueError, match=r"interactions has no rows"):
        prs.evaluate(
            spark.createDataFrame(RECS.to_arrow()),
            spark.createDataFrame(TRUTH.to_arrow()),
            ["ips_recall@3"],
            n_buckets=2,
            interactions=spark.createDataFrame(history.to_arrow()),
        ).collect()
