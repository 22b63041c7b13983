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


def _memberships(items: dict[Any, Any]) -> dict[Any, dict[str, float]]:
    """Each item's share of each of its distinct groups: 1/m each, or its weights normalised.

    ``items``: item -> list of groups, or item -> {group: weight}.
    """
    result = {}
    for item, groups in items.items():
        if isinstance(groups, dict):
            total = sum(groups.values())
            result[item] = {g: w / total for g, w in groups.items()}
            continue
        distinct = sorted(set(groups))
        result[item] = {g: 1.0 / len(distinct) for g in distinct}
    return result


def _target(items: dict[Any, Any]) -> dict[str, float]:
    shares: dict[str, float] = defaultdict(float)
    for weights in _memberships(items).values():
        for g, w in weights.items():
            shares[g] += w / len(items)
    return dict(shares)


def textbook_awrf(ranked: list[tuple[int, Any]], items: dict[Any, Any], p: float) -> float:
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
    for di, ti in zip(d, t, strict=True):
        m = (di + ti) / 2
        divergence += 0.5 * (di * math.log2(di / m) if di > 0 else 0.0)
        divergence += 0.5 * (ti * math.log2(ti / m) if ti > 0 else 0.0)
    # the documented convention: a divergence below 1e-15 is rounding, counted as 0
    return 1.0 - math.sqrt(divergence if divergence > 1e-15 else 0.0)


def textbook_ndkl(ranked: list[tuple[int, Any]], items: dict[Any, Any]) -> float:
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
        item: draw(st.lists(st.sampled_from("xyz"), min_size=1, max_size=3)) for item in range(8)
    }
    rows: list[dict[str, Any]] = []
    for model in draw(st.sampled_from([["m1"], ["m1", "m2"]])):
        for user in draw(st.sets(st.integers(0, 4), min_size=1, max_size=4)):
            chosen = draw(st.lists(st.integers(0, 7), unique=True, min_size=1, max_size=6))
            ranks = sorted(
                draw(st.sets(st.integers(1, 9), min_size=len(chosen), max_size=len(chosen)))
            )
            rows += [
                {"model": model, "user": user, "item": i, "rank": r}
                for i, r in zip(chosen, ranks, strict=True)
            ]
    multi = any(len(set(groups)) > 1 for groups in catalog.values())
    return {
        "recs": pl.DataFrame(rows),
        "catalog": catalog,
        "p": draw(st.sampled_from([0.5, 0.8, 1.0])),
        "k": draw(st.sampled_from([1, 3, 10])),
        "multi": multi,
    }


@pytest.mark.properties
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


@pytest.mark.properties
@PROFILE
@given(cases(), st.data())
def test_weighted_groups_equal_the_textbook(case: dict[str, Any], data: st.DataObject) -> None:
    """group_weight=: a list of weights beside the list of groups, normalised per item."""
    weighted = {
        item: {g: float(data.draw(st.integers(1, 5))) for g in sorted(set(groups))}
        for item, groups in case["catalog"].items()
    }
    items = pl.DataFrame(
        {
            "item": list(weighted),
            "g": [list(shares) for shares in weighted.values()],
            "w": [list(shares.values()) for shares in weighted.values()],
        }
    )
    k, p = case["k"], case["p"]
    labels = [f"awrf(p={p})@{k}", f"ndkl@{k}"]
    options: dict[str, Any] = {"items": items, "group": "g", "group_weight": "w", "by": "model"}
    result = prm.evaluate(case["recs"], None, labels, per_user=True, **options)
    lists: dict[tuple[str, int], list[tuple[int, int]]] = defaultdict(list)
    for row in case["recs"].iter_rows(named=True):
        if row["rank"] <= k:
            lists[row["model"], row["user"]].append((row["rank"], row["item"]))
    got = {(r["model"], r["user"]): r for r in result.iter_rows(named=True)}
    for key, ranked in lists.items():
        assert got[key][labels[0]] == pytest.approx(
            textbook_awrf(ranked, weighted, p), abs=TOLERANCE
        )
        assert got[key][labels[1]] == pytest.approx(textbook_ndkl(ranked, weighted), abs=TOLERANCE)
    names = [label.partition("@")[0] for label in labels]
    curve = prm.curves(case["recs"], None, names, k=[k], **options)
    means = prm.evaluate(case["recs"], None, labels, **options)
    for row in curve.iter_rows(named=True):
        label = labels[0] if row["metric"].startswith("awrf") else labels[1]
        mean = means.filter(pl.col("model") == row["model"])[label][0]
        assert row["value"] == pytest.approx(mean, abs=TOLERANCE)


def test_group_weight_is_checked() -> None:
    items = pl.DataFrame(
        {"item": ["a", "b", "c", "d"], "g": [["x", "y"], ["x"], ["y"], ["y"]]}
    ).with_columns(w=pl.Series([[3.0, 1.0], [1.0], [1.0], [2.0]]))
    result = prm.evaluate(
        RECS, None, ["awrf(p=1)@1"], items=items, group="g", group_weight="w", per_user=True
    )
    # user 1 and 2 show a first: d = (3/4, 1/4); t = ((3/4 + 1) / 4, (1/4 + 2) / 4)
    d, t = [0.75, 0.25], [1.75 / 4, 2.25 / 4]
    assert result["awrf(p=1)@1"].to_list() == pytest.approx(
        [1 - jensenshannon(d, t, base=2)] * 2, abs=1e-12
    )
    with pytest.raises(ValueError, match="no group= was given"):
        prm.evaluate(RECS, None, ["gini@1"], items=items, group_weight="w")
    with pytest.raises(TypeError, match=r"'w' \(group_weight\) must hold a List of numbers"):
        prm.evaluate(
            RECS, None, ["awrf@1"], items=items.with_columns(w=pl.lit(1.0)), group="g",
            group_weight="w",
        )  # fmt: skip
    short = items.with_columns(w=pl.Series([[3.0], [1.0], [1.0], [2.0]]))
    with pytest.raises(ValueError, match=r"'w' \(group_weight\) has 1 item\(s\)"):
        prm.evaluate(RECS, None, ["awrf@1"], items=short, group="g", group_weight="w")
    negative = items.with_columns(w=pl.Series([[3.0, -1.0], [1.0], [1.0], [2.0]]))
    with pytest.raises(ValueError, match="null, negative"):
        prm.evaluate(RECS, None, ["ndkl@1"], items=negative, group="g", group_weight="w")


def test_awrf_is_finite_where_a_groups_share_is_tiny() -> None:
    """awrf@100, the minority's two items at ranks 80 and 100: d = 1e-24, finite (was NaN).

    u = (d - t) / (d + t) rounds to -1 there and 0 x log1p(-1) was NaN; with
    0 log 0 = 0 the value is the textbook's, near its limit d = 0.
    """
    catalog = {i: ["min"] if i in (79, 99) else ["maj"] for i in range(100)}
    items = pl.DataFrame({"item": list(catalog), "g": [groups[0] for groups in catalog.values()]})
    recs = pl.DataFrame({"user": [1] * 100, "item": list(range(100)), "rank": range(1, 101)})
    ranked = list(zip(recs["rank"], recs["item"], strict=True))
    want = textbook_awrf(ranked, catalog, 0.5)
    # the limit d_min = 0: JS^2 = (t_min + log2(2 / (1 + t_maj)) + t_maj log2(2 t_maj / (1 + t_maj))) / 2
    t_min, t_maj = 0.02, 0.98
    limit = 1 - math.sqrt(
        (t_min + math.log2(2 / (1 + t_maj)) + t_maj * math.log2(2 * t_maj / (1 + t_maj))) / 2
    )
    assert want == pytest.approx(limit, abs=1e-12)
    assert round(want, 3) == 0.900
    labels = ["awrf@100", "ndkl@100"]
    per_user = prm.evaluate(recs, None, labels, items=items, group="g", per_user=True)
    assert per_user["awrf@100"][0] == pytest.approx(want, abs=1e-12)
    assert per_user["ndkl@100"][0] == pytest.approx(textbook_ndkl(ranked, catalog), abs=1e-12)
    # evaluate's mean and the curve at 100 are that value too, not NaN
    mean = prm.evaluate(recs, None, labels, items=items, group="g")
    assert mean["awrf@100"][0] == pytest.approx(want, abs=1e-12)
    curve = prm.curves(recs, None, ["awrf"], k=[79, 80, 100], items=items, group="g")
    assert all(math.isfinite(value) for value in curve["value"])
    assert curve["value"][2] == pytest.approx(want, abs=1e-12)


def test_awrf_and_ndkl_are_finite_with_a_membership_weight_of_zero() -> None:
    """The docs allow a weight of 0: a group with d = 0 (and t = 0) adds 0 (was NaN)."""
    items = pl.DataFrame({"item": ["a", "b"], "g": [["x", "y"], ["y"]], "w": [[1.0, 0.0], [1.0]]})
    recs = pl.DataFrame({"user": [1, 2, 2], "item": ["a", "b", "a"], "rank": [1, 1, 2]})
    labels = ["awrf(p=1)@2", "ndkl@2"]
    options: dict[str, Any] = {"items": items, "group": "g", "group_weight": "w"}
    result = prm.evaluate(recs, None, labels, per_user=True, **options).sort("user")
    weighted = {"a": {"x": 1.0, "y": 0.0}, "b": {"y": 1.0}}
    # user 1 shows a: d = (1, 0), t = (1/2, 1/2)
    assert result["awrf(p=1)@2"][0] == pytest.approx(
        1 - jensenshannon([1.0, 0.0], [0.5, 0.5], base=2), abs=1e-12
    )
    assert result["ndkl@2"][0] == pytest.approx(math.log(2), abs=1e-12)
    for row, ranked in zip(
        result.iter_rows(named=True), [[(1, "a")], [(1, "b"), (2, "a")]], strict=True
    ):
        assert row["awrf(p=1)@2"] == pytest.approx(textbook_awrf(ranked, weighted, 1.0), abs=1e-12)
        assert row["ndkl@2"] == pytest.approx(textbook_ndkl(ranked, weighted), abs=1e-12)
    # a group whose every weight is 0 (t = 0, d = 0) adds nothing: a alone is the catalog
    alone = items.filter(pl.col("item") == "a")
    only_a = prm.evaluate(recs.filter(pl.col("item") == "a"), None, labels, items=alone,
                          group="g", group_weight="w", per_user=True)  # fmt: skip
    assert only_a["awrf(p=1)@2"].to_list() == [1.0, 1.0]
    assert only_a["ndkl@2"].to_list() == [0.0, 0.0]
    curve = prm.curves(recs, None, ["awrf", "ndkl"], k=[1, 2], **options)
    assert all(math.isfinite(value) for value in curve["value"])


def test_non_finite_group_weights_are_refused() -> None:
    """A NaN or infinite group_weight is refused with the row (it was NaN in the mean)."""
    items = pl.DataFrame({"item": ["a", "b", "c", "d"], "g": [["x"], ["x"], ["y"], ["y"]]})
    for bad in (float("nan"), float("inf")):
        weighted = items.with_columns(w=pl.Series([[1.0], [bad], [1.0], [1.0]]))
        with pytest.raises(
            ValueError, match=r"'w' \(group_weight\) has 1 item\(s\).*NaN or infinite.*item='b'"
        ):
            prm.evaluate(RECS, None, ["awrf@3"], items=weighted, group="g", group_weight="w")


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


# ---------------------------------------------------------------- group_exposure


def test_group_exposure_by_hand() -> None:
    """Attention 1 + 1/2 + 1/4 (user 1) and 1 + 1/2 (user 2), pooled over the lists."""
    result = prm.group_exposure(RECS, ITEMS, group="g")
    # x: a, b (user 1) and a (user 2): 1 + 1/2 + 1; y: c (user 1), d (user 2): 1/4 + 1/2
    total = 1.75 + 1.5
    assert result["g"].to_list() == ["x", "y"]
    assert result["exposure"].to_list() == pytest.approx([2.5, 0.75])
    assert result["share"].to_list() == pytest.approx([2.5 / total, 0.75 / total])
    assert result["target"].to_list() == pytest.approx([0.5, 0.5])
    gap = (2.5 / total - 0.5) - (0.75 / total - 0.5)
    assert result["gap"].to_list() == pytest.approx([gap, gap])
    by_model = prm.group_exposure(
        pl.concat([RECS.with_columns(m=pl.lit("a")), RECS.with_columns(m=pl.lit("b"))]),
        ITEMS, group="g", by="m", k=1, p=1.0,
    )  # fmt: skip
    # k = 1: both users show x first
    assert by_model["share"].to_list() == pytest.approx([1.0, 0.0, 1.0, 0.0])
    assert by_model["gap"].to_list() == pytest.approx([1.0] * 4)


def test_group_exposure_reads_a_long_frame_with_weights() -> None:
    """Item a is 3/4 x and 1/4 y (weights 3 and 1); a list column [x, y] is 1/2 each."""
    long = pl.DataFrame(
        {
            "item": ["a", "a", "b", "c", "d"],
            "g": ["x", "y", "x", "y", "y"],
            "w": [3.0, 1.0, 2.0, 1.0, 1.0],
        }
    )
    result = prm.group_exposure(RECS, long, group="g", weight="w", p=1.0)
    # attention 1 each: a twice, b, c, d once; x: 2 * 3/4 + 1, y: 2 * 1/4 + 1 + 1
    assert result["exposure"].to_list() == pytest.approx([2.5, 2.5])
    assert result["target"].to_list() == pytest.approx([1.75 / 4, 2.25 / 4])
    # without weights the long frame splits a equally; the same as a list column
    split = prm.group_exposure(RECS, long.drop("w"), group="g", p=1.0)
    listed = prm.group_exposure(
        RECS, long.group_by("item", maintain_order=True).agg("g"), group="g", p=1.0
    )
    assert split["exposure"].to_list() == pytest.approx([2.0, 3.0])
    assert listed["exposure"].to_list() == pytest.approx([2.0, 3.0])


def test_group_exposure_refuses_bad_input() -> None:
    with pytest.raises(ValueError, match="missing from the item catalog"):
        prm.group_exposure(RECS, ITEMS.head(2), group="g")
    with pytest.raises(ValueError, match="repeated within a list"):
        prm.group_exposure(RECS.with_columns(rank=pl.lit(1)), ITEMS, group="g")
    weighted = ITEMS.with_columns(w=pl.lit(1.0))
    with pytest.raises(ValueError, match="several rows"):
        prm.group_exposure(RECS, pl.concat([weighted, weighted]), group="g", weight="w")
    with pytest.raises(ValueError, match="negative weight"):
        prm.group_exposure(RECS, weighted.with_columns(w=pl.lit(-1.0)), group="g", weight="w")
    with pytest.raises(ValueError, match="sum to 0"):
        prm.group_exposure(RECS, weighted.with_columns(w=pl.lit(0.0)), group="g", weight="w")
    with pytest.raises(ValueError, match="group="):
        prm.group_exposure(RECS, ITEMS, group="genre")


def test_group_exposure_refuses_non_finite_weights() -> None:
    """A NaN or infinite membership weight is refused with the row (it gave NaN shares)."""
    for bad in (float("nan"), float("inf")):
        weighted = ITEMS.with_columns(w=pl.Series([1.0, bad, 1.0, 1.0]))
        with pytest.raises(
            ValueError, match=r"items column 'w' \(weight\) has 1 NaN or infinite.*'item': 'b'"
        ):
            prm.group_exposure(RECS, weighted, group="g", weight="w")
        with pytest.raises(ValueError, match=r"items column 'w' \(weight\) has 1 NaN"):
            prm.trec_fair_score(RECS, RECS, weighted, group="g", weight="w")
    with pytest.raises(TypeError, match=r"items column 'w' \(weight\) must be numeric"):
        prm.group_exposure(RECS, ITEMS.with_columns(w=pl.lit("1")), group="g", weight="w")


def test_group_exposure_without_attention_is_null_not_nan() -> None:
    """Empty recs (or none within k): shares undefined, null; a target of 0: no ratio."""
    for recs in (RECS.clear(), RECS.with_columns(pl.col("rank") + 5)):
        result = prm.group_exposure(recs, ITEMS, group="g", k=3)
        assert result["exposure"].to_list() == [0.0, 0.0]
        assert result["target"].to_list() == [0.5, 0.5]
        for column in ("share", "difference", "ratio", "gap"):
            assert result[column].to_list() == [None, None], column
    # z: a's membership of weight 0, its only one: target 0, share 0, ratio null
    long = pl.DataFrame(
        {"item": ["a", "a", "b", "c", "d"], "g": ["x", "z", "x", "y", "y"],
         "w": [1.0, 0.0, 1.0, 1.0, 1.0]}
    )  # fmt: skip
    result = prm.group_exposure(RECS, long, group="g", weight="w")
    z = result.filter(pl.col("g") == "z").row(0, named=True)
    assert (z["exposure"], z["share"], z["target"], z["ratio"]) == (0.0, 0.0, 0.0, None)
    assert all(value is not None and math.isfinite(value) for value in result["gap"])


def test_group_exposure_names_an_empty_group_list() -> None:
    """An item with an empty list of groups: said so, not 'missing from the item catalog'."""
    items = pl.DataFrame({"item": ["a", "b", "c", "d"], "g": [["x"], [], ["y"], ["y"]]})
    message = r"items column 'g' \(group\) has 1 item\(s\) with an empty list of groups.*'b'"
    with pytest.raises(ValueError, match=message):
        prm.group_exposure(RECS, items, group="g")
    with pytest.raises(ValueError, match=message):
        prm.trec_fair_score(RECS, RECS, items, group="g")


def test_exposure_functions_name_the_frame_with_other_ids() -> None:
    """Ids of another type in items= or truth: a TypeError naming that frame, no Polars error."""
    numbered = pl.DataFrame({"item": [1, 2], "g": ["x", "y"]})
    with pytest.raises(TypeError, match=r"String in recs but Int64 in items.*items\.with_columns"):
        prm.group_exposure(RECS, numbered, group="g")
    with pytest.raises(TypeError, match=r"String in recs but Int64 in items"):
        prm.trec_fair_score(RECS, RECS, numbered, group="g")
    truth = RECS.with_columns(pl.col("user").cast(pl.String))
    with pytest.raises(TypeError, match=r"'user' has dtype Int64 in recs but String in truth"):
        prm.trec_fair_score(RECS, truth, ITEMS, group="g")
    samples = RECS.with_columns(sample=pl.lit(1))
    with pytest.raises(TypeError, match=r"'user' has dtype Int64 in recs but String in truth"):
        prm.expected_exposure(samples, truth)
    target = pl.DataFrame({"user": ["1", "2"], "g": ["x", "y"], "target": [0.5, 0.5]})
    with pytest.raises(TypeError, match=r"'user' has dtype Int64 in recs but String in target"):
        prm.trec_fair_score(RECS, RECS, ITEMS, group="g", target=target)


# ---------------------------------------------------------------- expected exposure

# diazf/expeval (commit of github:diazf/expeval fetched 2026-11), run as
# `expeval.py -u rbp -p P -U qrels.txt run.txt` on these inputs; its unnormalised output:
# disparity = EE-D, relevance = EE-R / 2, difference = EE-L (printed to 6 decimals)
EXPEVAL_QRELS = [("q1", "d1", 2), ("q1", "d2", 1), ("q1", "d3", 1), ("q1", "d4", 0),
                 ("q2", "e1", 1), ("q2", "e2", 1)]  # fmt: skip
EXPEVAL_RUN = [
    ("q1", "s1", "d1", 1), ("q1", "s1", "d2", 2), ("q1", "s1", "d4", 3), ("q1", "s1", "d3", 4),
    ("q1", "s2", "d2", 1), ("q1", "s2", "d1", 2), ("q1", "s2", "d3", 3), ("q1", "s2", "d5", 4),
    ("q1", "s3", "d4", 1), ("q1", "s3", "d1", 2), ("q1", "s3", "d3", 3),
    ("q2", "s1", "e1", 1), ("q2", "s1", "e3", 2), ("q2", "s2", "e3", 1), ("q2", "s2", "e2", 2),
]  # fmt: skip
EXPEVAL_OUTPUT = {  # p: {qid: (disparity, relevance, difference)}
    0.5: {"q1": (0.913194, 0.932292, 0.329861), "q2": (0.875000, 0.562500, 0.875000)},
    0.8: {"q1": (1.795890, 1.728747, 0.375196), "q2": (1.220000, 0.810000, 1.220000)},
}


@pytest.mark.parametrize("p", [0.5, 0.8])
def test_expected_exposure_reproduces_expeval(p: float) -> None:
    qrels = pl.DataFrame(EXPEVAL_QRELS, schema=["user", "item", "rel"], orient="row")
    run = pl.DataFrame(EXPEVAL_RUN, schema=["user", "sample", "item", "rank"], orient="row")
    result = prm.expected_exposure(run, qrels, relevance="rel", p=p, per_user=True)
    for row in result.iter_rows(named=True):
        disparity, relevance, difference = EXPEVAL_OUTPUT[p][row["user"]]
        assert row["ee_d"] == pytest.approx(disparity, abs=5e-7)
        assert row["ee_r"] == pytest.approx(2 * relevance, abs=1e-6)
        assert row["ee_l"] == pytest.approx(difference, abs=5e-7)
    means = prm.expected_exposure(run, qrels, relevance="rel", p=p)
    assert means["users"][0] == 2
    assert means["ee_l"][0] == pytest.approx(result["ee_l"].mean(), abs=1e-12)


def textbook_expected_exposure(
    samples: dict[Any, list[Any]], grades: dict[Any, float], p: float, k: int | None
) -> tuple[float, float, float]:
    """EE-L, EE-D, EE-R by enumerating every ideal ranking's exposure (permutations of ties)."""
    import itertools  # noqa: PLC0415 - textbook only

    e: dict[Any, float] = defaultdict(float)
    for ranking in samples.values():
        for r, item in enumerate(ranking, start=1):
            if k is None or r <= k:
                e[item] += p ** (r - 1) / len(samples)
    relevant = [i for i, g in grades.items() if g > 0]
    levels = sorted({grades[i] for i in relevant}, reverse=True)
    blocks = [[i for i in relevant if grades[i] == level] for level in levels]
    target: dict[Any, float] = defaultdict(float)
    orders = list(itertools.product(*[list(itertools.permutations(b)) for b in blocks]))
    for order in orders:
        ranking = [i for block in order for i in block]
        for r, item in enumerate(ranking, start=1):
            if k is None or r <= k:
                target[item] += p ** (r - 1) / len(orders)
    keys = set(e) | set(target)
    ee_l = sum((e[i] - target[i]) ** 2 for i in keys)
    ee_d = sum(v**2 for v in e.values())
    ee_r = 2 * sum(e[i] * target[i] for i in keys)
    return ee_l, ee_d, ee_r


@PROFILE
@given(
    st.dictionaries(st.integers(0, 6), st.integers(0, 3), min_size=1, max_size=5),
    st.lists(st.permutations(list(range(8))).map(lambda x: x[:5]), min_size=1, max_size=3),
    st.sampled_from([0.5, 0.9]),
    st.sampled_from([None, 2, 4]),
)
def test_expected_exposure_equals_the_textbook(
    grades: dict[int, int], rankings: list[list[int]], p: float, k: int | None
) -> None:
    if not any(g > 0 for g in grades.values()):
        return
    samples = dict(enumerate(rankings))
    run = pl.DataFrame(
        [(s, 7, item, r) for s, ranking in samples.items() for r, item in enumerate(ranking, 1)],
        schema=["sample", "user", "item", "rank"],
        orient="row",
    )
    truth = pl.DataFrame(
        {"user": [7] * len(grades), "item": list(grades), "rel": list(grades.values())}
    )
    got = prm.expected_exposure(run, truth, relevance="rel", p=p, k=k, per_user=True)
    want = textbook_expected_exposure(samples, {i: float(g) for i, g in grades.items()}, p, k)
    assert got["ee_l"][0] == pytest.approx(want[0], abs=TOLERANCE)
    assert got["ee_d"][0] == pytest.approx(want[1], abs=TOLERANCE)
    assert got["ee_r"][0] == pytest.approx(want[2], abs=TOLERANCE)


# ---------------------------------------------------------------- TREC Fair 2022


def trec2022_by_hand(
    run: list[Any],
    relevant: set[Any],
    alignment: dict[Any, dict[str, float]],
    target: dict[str, float],
    target_len: int = 500,
) -> tuple[float, float]:
    """nDCG and AWRF of one query as wptrec.metrics.AWRFMetric computes them (one dimension).

    Rebuilt from the script's definitions: discount 1 / log2(max(r, 2)); binary
    utility; ideal DCG over min(target_len, |relevant|) ranks; the group
    distribution the discount-weighted mean of the known pages' alignment
    rows; AWRF = 1 - jensenshannon(d, t) ** 2 (scipy, natural logarithm).
    """
    import numpy as np  # noqa: PLC0415 - textbook only

    disc = 1.0 / np.log2(np.maximum(np.arange(1, target_len + 1), 2))
    util = np.array([1.0 if page in relevant else 0.0 for page in run])
    ndcg = float(np.sum(util * disc[: len(run)]) / np.sum(disc[: min(target_len, len(relevant))]))
    groups = sorted(target)
    known = [(r, page) for r, page in enumerate(run) if page in alignment]
    weights = np.array([disc[r] for r, _ in known])
    rows = np.array([[alignment[page].get(g, 0.0) for g in groups] for _, page in known])
    d = (weights[:, None] * rows).sum(axis=0) / weights.sum()
    t = np.array([target[g] for g in groups])
    return ndcg, float(1 - jensenshannon(d, t) ** 2)


def test_trec_fair_score_reproduces_the_2022_script() -> None:
    """Two queries, per-query targets, an item of two groups and an unknown page."""
    catalog = pl.DataFrame(
        {
            "item": ["a", "b", "c", "d", "e", "f"],
            "geo": [["eu"], ["eu", "af"], ["as"], ["af"], ["eu"], ["as", "af"]],
        }
    )
    alignment = {
        row["item"]: {g: 1 / len(row["geo"]) for g in row["geo"]}
        for row in catalog.iter_rows(named=True)
    }
    runs = {"q1": ["b", "a", "zz", "c", "f"], "q2": ["d", "e"]}
    qrels = {"q1": {"a", "c", "d"}, "q2": {"e", "f", "a", "b"}}
    targets = {"q1": {"eu": 0.2, "af": 0.5, "as": 0.3}, "q2": {"eu": 0.6, "af": 0.1, "as": 0.3}}
    recs = pl.DataFrame(
        [(q, page, r) for q, run in runs.items() for r, page in enumerate(run, 1)],
        schema=["user", "item", "rank"],
        orient="row",
    )
    truth = pl.DataFrame(
        [(q, page) for q, pages in qrels.items() for page in sorted(pages)],
        schema=["user", "item"],
        orient="row",
    )
    target = pl.DataFrame(
        [(q, g, s) for q, shares in targets.items() for g, s in shares.items()],
        schema=["user", "geo", "target"],
        orient="row",
    )
    got = prm.trec_fair_score(recs, truth, catalog, group="geo", target=target, per_user=True).sort(
        "user"
    )
    for row in got.iter_rows(named=True):
        ndcg, awrf = trec2022_by_hand(
            runs[row["user"]], qrels[row["user"]], alignment, targets[row["user"]]
        )
        assert row["ndcg"] == pytest.approx(ndcg, abs=1e-6)  # the script's discounts are f4
        assert row["awrf"] == pytest.approx(awrf, abs=1e-9)
        assert row["score"] == pytest.approx(ndcg * awrf, abs=1e-6)
    means = prm.trec_fair_score(recs, truth, catalog, group="geo", target=target)
    assert means["score"][0] == pytest.approx(got["score"].mean(), abs=1e-12)
    # the track's alignments are fractional: a long frame with weights (b 70 % eu)
    weights = {("b", "eu"): 0.7, ("b", "af"): 0.3, ("f", "as"): 0.2, ("f", "af"): 0.8}
    long = catalog.explode("geo").with_columns(
        w=pl.struct("item", "geo").map_elements(
            lambda row: weights.get((row["item"], row["geo"]), 1.0), return_dtype=pl.Float64
        )
    )
    weighted = {
        item: {g: weights.get((item, g), 1.0) for g in shares} for item, shares in alignment.items()
    }
    by_weight = prm.trec_fair_score(
        recs, truth, long, group="geo", weight="w", target=target, per_user=True
    ).sort("user")
    for row in by_weight.iter_rows(named=True):
        _, awrf = trec2022_by_hand(
            runs[row["user"]], qrels[row["user"]], weighted, targets[row["user"]]
        )
        assert row["awrf"] == pytest.approx(awrf, abs=1e-9)
    with pytest.raises(ValueError, match="target_len=2"):
        prm.trec_fair_score(recs, truth, catalog, group="geo", target_len=2)


# ---------------------------------------------------------------- exposure_gini


def textbook_gini(x: list[float]) -> float | None:
    ordered = sorted(x)
    n, total = len(ordered), sum(ordered)
    if total == 0:
        return None
    return sum((2 * j - n - 1) * v for j, v in enumerate(ordered, start=1)) / (n * total)


def test_expected_exposure_refuses_grades_that_are_not_finite_numbers() -> None:
    """A NaN grade counted as the highest grade; text gave a raw Polars error."""
    samples = pl.DataFrame({"sample": [1, 1], "user": [1, 1], "item": ["a", "b"], "rank": [1, 2]})
    truth = pl.DataFrame({"user": [1, 1], "item": ["a", "b"]})
    for bad in (float("nan"), float("inf"), float("-inf")):
        graded = truth.with_columns(rel=pl.Series([1.0, bad]))
        with pytest.raises(
            ValueError, match=r"truth column 'rel' \(relevance\) has 1 NaN or infinite.*'b'"
        ):
            prm.expected_exposure(samples, graded, relevance="rel")
    nulls = truth.with_columns(rel=pl.Series([1.0, None]))
    with pytest.raises(ValueError, match=r"truth column 'rel' \(relevance\) has 1 null.*'b'"):
        prm.expected_exposure(samples, nulls, relevance="rel")
    text = truth.with_columns(rel=pl.Series(["1", "x"]))
    with pytest.raises(TypeError, match=r"truth column 'rel' \(relevance\) must be numeric"):
        prm.expected_exposure(samples, text, relevance="rel")


def test_trec_fair_score_refuses_targets_that_are_not_finite_or_sum_to_0() -> None:
    truth = pl.DataFrame({"user": [1, 2], "item": ["a", "d"]})
    for bad in (float("nan"), float("inf")):
        target = pl.DataFrame({"g": ["x", "y"], "target": [bad, 1.0]})
        with pytest.raises(
            ValueError, match=r"target column 'target' \(target share\) has 1 NaN or infinite"
        ):
            prm.trec_fair_score(RECS, truth, ITEMS, group="g", target=target)
    zero = pl.DataFrame({"g": ["x", "y"], "target": [0.0, 0.0]})
    with pytest.raises(ValueError, match=r"target's shares sum to 0"):
        prm.trec_fair_score(RECS, truth, ITEMS, group="g", target=zero)
    per_query = pl.DataFrame({"user": [1, 1, 2], "g": ["x", "y", "x"], "target": [0.5, 0.5, 0.0]})
    with pytest.raises(ValueError, match=r"target's shares sum to 0 for 1 query\(ies\).*'user': 2"):
        prm.trec_fair_score(RECS, truth, ITEMS, group="g", target=per_query)
    lacking = per_query.filter(pl.col("user") == 1)
    with pytest.raises(ValueError, match=r"target gives no shares for 1 query\(ies\).*'user': 2"):
        prm.trec_fair_score(RECS, truth, ITEMS, group="g", target=lacking)


def test_trec_fair_score_gives_null_awrf_to_a_list_without_catalog_items() -> None:
    """No catalog item in the list: null, as with an empty catalog (was 1 - ln 2 / 2)."""
    truth = pl.DataFrame({"user": [1, 2], "item": ["a", "zz"]})
    recs = RECS.with_columns(
        pl.when(pl.col("user") == 2).then(pl.lit("zz") + pl.col("rank").cast(pl.String))
        .otherwise("item").alias("item")
    )  # fmt: skip
    got = prm.trec_fair_score(recs, truth, ITEMS, group="g", per_user=True).sort("user")
    assert got["awrf"][1] is None
    assert got["score"][1] is None
    assert got["ndcg"][1] == 0.0
    empty = prm.trec_fair_score(recs, truth, ITEMS.clear(), group="g", per_user=True)
    assert empty["awrf"].to_list() == [None, None]
    # the means leave the null out: user 1's AWRF and score
    means = prm.trec_fair_score(recs, truth, ITEMS, group="g")
    assert means["awrf"][0] == pytest.approx(got["awrf"][0], abs=1e-12)
    assert means["score"][0] == pytest.approx(got["score"][0], abs=1e-12)
    assert means["ndcg"][0] == pytest.approx(got["ndcg"].mean(), abs=1e-12)


def test_exposure_gini_by_hand() -> None:
    """Attention 1, 1/2, 1/4 and 1, 1/2 over a catalog of five items (one never shown)."""
    items = ITEMS.vstack(pl.DataFrame({"item": ["e"], "g": ["y"]}))
    result = prm.evaluate(
        RECS, None, ["exposure_gini@3", "exposure_gini(p=1)@3", "gini@3"], items=items
    )
    # a: 1 + 1, b: 1/2, c: 1/4, d: 1/2, e: 0
    assert result["exposure_gini@3"][0] == pytest.approx(
        textbook_gini([2.0, 0.5, 0.25, 0.5, 0.0]), abs=1e-12
    )
    # p = 1 counts lists: gini@k
    assert result["exposure_gini(p=1)@3"][0] == pytest.approx(result["gini@3"][0], abs=1e-12)


@pytest.mark.properties
@PROFILE
@given(cases())
def test_exposure_gini_equals_the_textbook(case: dict[str, Any]) -> None:
    catalog = pl.DataFrame({"item": list(range(10))})  # items 8 and 9 are never shown
    k, p = case["k"], case["p"]
    label = f"exposure_gini(p={p})@{k}"
    recs = case["recs"]
    result = prm.evaluate(recs, None, [label], by="model", items=catalog)
    for model, rows in recs.group_by("model"):
        x = dict.fromkeys(range(10), 0.0)
        for row in rows.filter(pl.col("rank") <= k).iter_rows(named=True):
            x[row["item"]] += p ** (row["rank"] - 1)
        # a model without any list within k has no row (as gini@k)
        mine = result.filter(pl.col("model") == model[0])[label]
        got = mine[0] if len(mine) else None
        want = textbook_gini(list(x.values()))
        assert (got is None and want is None) or got == pytest.approx(want, abs=TOLERANCE)
    # the curve at k is evaluate's value at k
    curve = prm.curves(recs, None, [f"exposure_gini(p={p})"], k=[k], by="model", items=catalog)
    for row in curve.iter_rows(named=True):
        value = result.filter(pl.col("model") == row["model"])[label][0]
        assert (row["value"] is None and value is None) or row["value"] == pytest.approx(
            value, abs=TOLERANCE
        )


def test_list_metrics_gives_evaluates_numbers() -> None:
    labels = ["awrf@3", "ndkl@2", "exposure_gini(p=0.8)@3"]
    listed = prm.list_metrics(RECS, labels, items=ITEMS, group="g")
    evaluated = prm.evaluate(RECS, None, labels, items=ITEMS, group="g")
    for label in labels:
        assert listed[label][0] == pytest.approx(evaluated[label][0], abs=1e-12)
    with pytest.raises(ValueError, match="need group="):
        prm.list_metrics(RECS, ["ndkl@2"], items=ITEMS)


def test_per_user_outputs_feed_compare_per_user() -> None:
    """expected_exposure and trec_fair_score per user: compare_per_user gives intervals."""
    qrels = pl.DataFrame(EXPEVAL_QRELS, schema=["user", "item", "rel"], orient="row")
    run = pl.DataFrame(EXPEVAL_RUN, schema=["user", "sample", "item", "rank"], orient="row")
    # a second system: every sample reversed within its list
    flipped = run.with_columns(
        (pl.col("rank").max().over("user", "sample") + 1 - pl.col("rank")).alias("rank")
    )
    both = pl.concat([run.with_columns(model=pl.lit("a")), flipped.with_columns(model=pl.lit("b"))])
    scores = prm.expected_exposure(both, qrels, relevance="rel", by="model", per_user=True)
    result = prm.compare_per_user(scores, ["ee_l", "ee_r"], system="model", baseline="a")
    for row in result.iter_rows(named=True):
        mine = scores.filter(pl.col("model") == row["system"])[row["metric"]]
        assert row["n"] == 2
        assert row["mean"] == pytest.approx(mine.mean(), abs=1e-12)
