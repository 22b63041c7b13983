"""Exposure fairness: awrf, ndkl, group_exposure, expected_exposure, trec_fair_score.

Hand-worked lists, a plain-Python textbook under hypothesis-generated lists
(several groups per item, ranks with gaps, several models and cutoffs),
scipy's Jensen-Shannon distance, and the peers' own formulas: diazf/expeval
(expected exposure, its numbers on an example run through its code) and the
TREC Fair Ranking 2022 evaluation script (AWRF x nDCG), rebuilt by hand here
from its definitions.
"""

from __future__ import annotations

import math
import os
from collections import defaultdict
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import jensenshannon

import polars_rankmetrics as prm

settings.register_profile(
    "prm-exposure-fast",
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "prm-exposure-thorough",
    max_examples=1000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
PROFILE = settings.get_profile("prm-exposure-" + os.environ.get("PRM_HYPOTHESIS_PROFILE", "fast"))
TOLERANCE = 1e-9

RECS = pl.DataFrame(
    {"user": [1, 1, 1, 2, 2], "item": ["a", "b", "c", "a", "d"], "rank": [1, 2, 3, 1, 2]}
)
ITEMS = pl.DataFrame({"item": ["a", "b", "c", "d"], "g": ["x", "x", "y", "y"]})


# ---------------------------------------------------------------- textbook


def _memberships(items: dict[Any, list[str]]) -> dict[Any, dict[str, float]]:
    """Each item's share of each of its distinct groups (1/m each)."""
    result = {}
    for item, groups in items.items():
        distinct = sorted(set(groups))
        result[item] = {g: 1.0 / len(distinct) for g in distinct}
    return result


def _target(items: dict[Any, list[str]]) -> dict[str, float]:
    shares: dict[str, float] = defaultdict(float)
    for weights in _memberships(items).values():
        for g, w in weights.items():
            shares[g] += w / len(items)
    return dict(shares)


def textbook_awrf(ranked: list[tuple[int, Any]], items: dict[Any, list[str]], p: float) -> float:
    """1 - JS distance (base 2) of the attention-weighted group shares and the catalog's."""
    member, target = _memberships(items), _target(items)
    groups = sorted(target)
    weight: dict[str, float] = defaultdict(float)
    for rank, item in ranked:
        for g, w in member[item].items():
            weight[g] += p ** (rank - 1) * w
    total = sum(weight.values())
    d = [weight[g] / total for g in groups]
    t = [target[g] for g in groups]
    divergence = 0.0
    for di, ti in zip(d, t):
        m = (di + ti) / 2
        divergence += 0.5 * (di * math.log2(di / m) if di > 0 else 0.0)
        divergence += 0.5 * (ti * math.log2(ti / m) if ti > 0 else 0.0)
    return 1.0 - math.sqrt(max(divergence, 0.0))


def textbook_ndkl(ranked: list[tuple[int, Any]], items: dict[Any, list[str]]) -> float:
    """(1/Z) sum_i KL(top-i shares || catalog shares) / log2(i + 1), natural log."""
    member, target = _memberships(items), _target(items)
    counts: dict[str, float] = defaultdict(float)
    numerator = z = 0.0
    for i, (_, item) in enumerate(sorted(ranked), start=1):
        for g, w in member[item].items():
            counts[g] += w
        kl = sum((c / i) * math.log((c / i) / target[g]) for g, c in counts.items() if c > 0)
        numerator += kl / math.log2(i + 1)
        z += 1.0 / math.log2(i + 1)
    return numerator / z


# ---------------------------------------------------------------- hand-worked


def test_awrf_and_ndkl_by_hand() -> None:
    """User 2 shows x then y at p=1: the catalog's shares, AWRF 1; NDKL only from i = 1."""
    result = prm.evaluate(
        RECS, None, ["awrf@3", "awrf(p=1)@3", "ndkl@3", "ndkl@1"],
        items=ITEMS, group="g", per_user=True,
    ).sort("user")  # fmt: skip
    # user 1, p = 0.5: attention 1, 1/2, 1/4 on x, x, y: d = (6/7, 1/7), t = (1/2, 1/2)
    d, t = [6 / 7, 1 / 7], [0.5, 0.5]
    assert result["awrf@3"][0] == pytest.approx(1 - jensenshannon(d, t, base=2), abs=1e-12)
    assert result["awrf(p=1)@3"][1] == pytest.approx(1.0, abs=1e-12)
    # user 2: top-1 is all x, KL = ln 2; top-2 matches the catalog, KL = 0
    assert result["ndkl@3"][1] == pytest.approx(math.log(2) / (1 + 1 / math.log2(3)), abs=1e-12)
    assert result["ndkl@1"][1] == pytest.approx(math.log(2), abs=1e-12)
    # user 1: KL at i = 1 (ln 2), i = 2 (ln 2) and i = 3 (2/3 ln 4/3 + 1/3 ln 2/3)
    kl3 = 2 / 3 * math.log(4 / 3) + 1 / 3 * math.log(2 / 3)
    z = 1 + 1 / math.log2(3) + 1 / 2
    expected = (math.log(2) + math.log(2) / math.log2(3) + kl3 / 2) / z
    assert result["ndkl@3"][0] == pytest.approx(expected, abs=1e-12)


def test_several_groups_split_an_items_attention() -> None:
    """An item of groups [x, y] gives each half of its attention (and half its catalog share)."""
    items = pl.DataFrame({"item": ["a", "b"], "g": [["x", "y"], ["y"]]})
    recs = pl.DataFrame({"user": [1], "item": ["a"], "rank": [1]})
    result = prm.evaluate(recs, None, ["awrf@1", "ndkl@1"], items=items, group="g")
    # d = (1/2, 1/2), t = (1/4, 3/4)
    d, t = [0.5, 0.5], [0.25, 0.75]
    assert result["awrf@1"][0] == pytest.approx(1 - jensenshannon(d, t, base=2), abs=1e-12)
    kl = 0.5 * math.log(0.5 / 0.25) + 0.5 * math.log(0.5 / 0.75)
    assert result["ndkl@1"][0] == pytest.approx(kl, abs=1e-12)


# ---------------------------------------------------------------- hypothesis


@st.composite
def cases(draw: st.DrawFn) -> dict[str, Any]:
    catalog = {
        item: draw(st.lists(st.sampled_from("xyz"), min_size=1, max_size=3))
        for item in range(8)
    }
    rows: list[dict[str, Any]] = []
    for model in draw(st.sampled_from([["m1"], ["m1", "m2"]])):
        for user in draw(st.sets(st.integers(0, 4), min_size=1, max_size=4)):
            chosen = draw(st.lists(st.integers(0, 7), unique=True, min_size=1, max_size=6))
            ranks = sorted(draw(st.sets(st.integers(1, 9), min_size=len(chosen), max_size=len(chosen))))
            rows += [
                {"model": model, "user": user, "item": i, "rank": r}
                for i, r in zip(chosen, ranks)
            ]
    multi = any(len(set(groups)) > 1 for groups in catalog.values())
    return {
        "recs": pl.DataFrame(rows),
        "catalog": catalog,
        "p": draw(st.sampled_from([0.5, 0.8, 1.0])),
        "k": draw(st.sampled_from([1, 3, 10])),
        "multi": multi,
    }


@PROFILE
@given(cases())
def test_awrf_and_ndkl_equal_the_textbook(case: dict[str, Any]) -> None:
    catalog = case["catalog"]
    items = pl.DataFrame({"item": list(catalog), "g": [sorted(set(v)) for v in catalog.values()]})
    if not case["multi"]:
        items = items.with_columns(pl.col("g").list.first())
    k, p = case["k"], case["p"]
    labels = [f"awrf(p={p})@{k}", f"ndkl@{k}"]
    result = prm.evaluate(
        case["recs"], None, labels, by="model", items=items, group="g", per_user=True
    )
    lists: dict[tuple[str, int], list[tuple[int, int]]] = defaultdict(list)
    for row in case["recs"].iter_rows(named=True):
        if row["rank"] <= k:
            lists[row["model"], row["user"]].append((row["rank"], row["item"]))
    got = {(r["model"], r["user"]): r for r in result.iter_rows(named=True)}
    for key, ranked in lists.items():
        assert got[key][labels[0]] == pytest.approx(
            textbook_awrf(ranked, catalog, p), abs=TOLERANCE
        )
        assert got[key][labels[1]] == pytest.approx(textbook_ndkl(ranked, catalog), abs=TOLERANCE)
    # a user whose list is empty within k is not counted
    assert all(got[key][labels[0]] is None for key in got if key not in lists)
    # the curve at k is evaluate's mean at k
    names = [label.partition("@")[0] for label in labels]
    curve = prm.curves(case["recs"], None, names, k=[k], by="model", items=items, group="g")
    means = prm.evaluate(case["recs"], None, labels, by="model", items=items, group="g")
    for row in curve.iter_rows(named=True):
        label = labels[0] if row["metric"].startswith("awrf") else labels[1]
        mean = means.filter(pl.col("model") == row["model"])[label][0]
        assert row["value"] == pytest.approx(mean, abs=TOLERANCE)


# ---------------------------------------------------------------- input errors


def test_group_is_required_and_checked() -> None:
    with pytest.raises(ValueError, match="need group="):
        prm.evaluate(RECS, None, ["awrf@3"], items=ITEMS)
    with pytest.raises(ValueError, match="awrf need items="):
        prm.evaluate(RECS, None, ["awrf@3"], group="g")
    with pytest.raises(ValueError, match="missing from the item catalog"):
        prm.evaluate(RECS, None, ["ndkl@3"], items=ITEMS.head(3), group="g")
    with pytest.raises(TypeError, match=r"'w' \(group\) must hold a group label"):
        prm.evaluate(RECS, None, ["ndkl@3"], items=ITEMS.with_columns(w=1.5), group="w")
    with pytest.raises(ValueError, match="patience p"):
        prm.evaluate(RECS, None, ["awrf(p=0)@3"], items=ITEMS, group="g")
    nulls = ITEMS.with_columns(pl.when(pl.col("item") == "a").then(pl.col("g")).alias("g"))
    with pytest.raises(ValueError, match=r"'g' \(group\) has 3 item\(s\) without a group"):
        prm.evaluate(RECS, None, ["awrf@3"], items=nulls, group="g")
