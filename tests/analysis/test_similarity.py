"""``similarity`` and ``rank_correlation`` against hand-worked values, textbooks and peers.

RBO: the textbook below builds the prefixes of both lists as sets (X_d by
brute force), takes RBO_min and RBO_max as the RBO of the worst and the best
continuation of the lists summed to a depth where p^d is negligible, and
RBO_ext from Webber et al.'s eq. 32 in exact fractions. Ties: RBO^a_min and
RBO^a_res are the mean over every order of the tied items (what Corsi &
Urbano's a-variant computes), and every form is checked against the values
of their reference implementation (``tests/data/rbo``). Kendall's tau-b:
``scipy.stats.kendalltau``.
"""

from __future__ import annotations

import csv
import itertools
import math
import re
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

import polars_rankmetrics as prm
from tests.conftest import Backend

RBO_DATA = Path(__file__).resolve().parents[1] / "data" / "rbo" / "corsi_urbano_2024.csv"

Ranking = Sequence[str | frozenset[str]]  # a tie group is a frozenset


# ---------------------------------------------------------------- textbook RBO


def _overlaps(short: Sequence[str], long: Sequence[str], depth: int) -> list[int]:
    """X_1..X_depth of two (extended) untied lists: their prefixes grown as sets."""
    seen_a: set[str] = set()
    seen_b: set[str] = set()
    overlaps, count = [], 0
    for d in range(depth):
        x = short[d] if d < len(short) else None
        y = long[d] if d < len(long) else None
        seen_a.update([x] if x is not None else [])
        seen_b.update([y] if y is not None else [])
        # the items that joined both prefixes at depth d + 1
        count += (x is not None and x in seen_b) + (y is not None and y != x and y in seen_a)
        overlaps.append(count)
    assert overlaps[: min(depth, 30)] == [
        len(set(short[:d]) & set(long[:d])) for d in range(1, min(depth, 30) + 1)
    ]
    return overlaps


def _rbo_sum(x: Sequence[float], p: float) -> float:
    return (1 - p) / p * sum(x_d / d * p**d for d, x_d in enumerate(x, start=1))


def _depth(p: float) -> int:
    # p^d / d below 1e-18 of the sum
    return int(math.log(1e-18) / math.log(p)) + 20


def textbook_min(a: Sequence[str], b: Sequence[str], p: float) -> float:
    """RBO of the lists continued with items neither list has, summed far down."""
    depth = max(len(a), len(b)) + _depth(p)
    fresh_a = [*a, *(f"a{i}" for i in range(depth))]
    fresh_b = [*b, *(f"b{i}" for i in range(depth))]
    return _rbo_sum(_overlaps(fresh_a, fresh_b, depth), p)


def textbook_max(a: Sequence[str], b: Sequence[str], p: float) -> float:
    """RBO of the best continuation: each list continues with the other's missing items."""
    short, long = (a, b) if len(a) <= len(b) else (b, a)
    depth = len(a) + len(b) + _depth(p)
    shared = [f"z{i}" for i in range(depth)]
    best_short = [*short, *(i for i in long if i not in short), *shared]
    best_long = [*long, *(i for i in short if i not in long), *shared]
    return _rbo_sum(_overlaps(best_short, best_long, depth), p)


def textbook_ext(a: Sequence[str], b: Sequence[str], p: Fraction) -> Fraction:
    """Webber, Moffat & Zobel (2010) eq. 32, in fractions."""
    short, long = (a, b) if len(a) <= len(b) else (b, a)
    s, l = len(short), len(long)  # noqa: E741 - the paper's names
    x = [0, *_overlaps(short, long, l)]
    head = sum(Fraction(x[d], d) * p**d for d in range(1, l + 1))
    head += sum(Fraction(x[s] * (d - s), s * d) * p**d for d in range(s + 1, l + 1))
    return (1 - p) / p * head + (Fraction(x[l] - x[s], l) + Fraction(x[s], s)) * p**l


def _orders(ranking: Ranking) -> list[list[str]]:
    groups = [[g] if isinstance(g, str) else sorted(g) for g in ranking]
    return [
        [item for group in combo for item in group]
        for combo in itertools.product(*(list(itertools.permutations(g)) for g in groups))
    ]


def expected_over_ties(a: Ranking, b: Ranking, p: float) -> tuple[float, float]:
    """Mean RBO_min and RBO_ext (of even lists) over every order of the tied items of both."""
    mins, exts = [], []
    for x in _orders(a):
        for y in _orders(b):
            mins.append(textbook_min(x, y, p))
            exts.append(float(textbook_ext(x, y, Fraction(str(p)))) if len(x) == len(y) else 0.0)
    return sum(mins) / len(mins), sum(exts) / len(exts)


# ---------------------------------------------------------------- frames


def _long(rankings: Sequence[Ranking], *, user0: int = 0) -> pl.DataFrame:
    """One row per item, score = minus the group's index (a group ties)."""
    rows: list[tuple[int, str, float]] = []
    for user, ranking in enumerate(rankings, start=user0):
        for index, group in enumerate(ranking):
            items = [group] if isinstance(group, str) else sorted(group)
            rows.extend((user, item, -float(index)) for item in items)
    return pl.DataFrame(
        rows, schema={"user": pl.Int64, "item": pl.String, "score": pl.Float64}, orient="row"
    )


def _parse_ranking(text: str) -> list[str | frozenset[str]]:
    return [
        frozenset(group[1:-1].split()) if group.startswith("(") else group
        for group in re.findall(r"\([^)]*\)|\S+", text)
    ]


def _per_user(
    x: Sequence[Ranking], y: Sequence[Ranking], measures: list[str], **kwargs: Any
) -> dict[int, dict[str, Any]]:
    out = prm.similarity(_long(x), _long(y), measures, per_user=True, score="score", **kwargs)
    return {row["user"]: row for row in out.iter_rows(named=True)}


# ---------------------------------------------------------------- hand-worked


def test_a_swap_at_the_top_and_half_the_second_list_by_hand() -> None:
    # A_1 = 0 then 1: RBO = (1 - p)(p + p^2 + ...) = p; x y against y z: (1 - p) p / 2 + p^2 / 2
    values = _per_user([["b", "a", "c"], ["x", "y"]], [["a", "b", "c"], ["y", "z"]], ["rbo"])
    assert values[0]["rbo"] == pytest.approx(0.9, abs=1e-15)
    assert values[1]["rbo"] == pytest.approx(0.1 * 0.9 / 2 + 0.81 / 2, abs=1e-15)


def test_the_extrapolation_of_uneven_lists_stays_within_one() -> None:
    # dlukes/rbo#4: [1, 2, 3] against [1] with p = 0.4: X_1 = 1 and eq. 32 gives
    # (1 - p)(1 + p + p^2) + p^3 = 1 (the popular package gave 1.045)
    values = _per_user([["1", "2", "3"]], [["1"]], ["rbo(p=0.4)"])
    assert values[0]["rbo(p=0.4)"] == pytest.approx(1.0, abs=1e-15)


# dlukes/rbo#5's four rankings (julian-urbano: that package is wrong on uneven lists),
# RBO^a at p = 0.9 from the reference implementation (julian-urbano/sigir2024-rbo,
# rbo/Python/rbo.py at 0338fd9d, ties="a"), run once
DLUKES_5 = [
    ("N H M A", "C G N A", 0.3915, 0.19468557622089896, 0.5117424237791012),
    ("(N H) M A", "C G (N A)", 0.378, 0.18118557622089895, 0.5117424237791012),
    ("N H M A C F L", "C G N A", 0.49038364285714287, 0.26030336433134843, 0.42869112138293736),
    ("(N H) M (A C F) L", "C G (N A)", 0.4397393571428571, 0.23198036433134842, 0.4286911213829374),
]


def test_the_uneven_rankings_of_dlukes_rbo_issue_5() -> None:
    x = [_parse_ranking(row[0]) for row in DLUKES_5]
    y = [_parse_ranking(row[1]) for row in DLUKES_5]
    values = _per_user(x, y, ["rbo", "rbo_min", "rbo_res"], ties="average")
    for user, (_, _, ext, low, res) in enumerate(DLUKES_5):
        assert values[user]["rbo"] == pytest.approx(ext, abs=1e-13)
        assert values[user]["rbo_min"] == pytest.approx(low, abs=1e-13)
        assert values[user]["rbo_res"] == pytest.approx(res, abs=1e-13)


def test_the_example_of_the_reference_implementation_readme() -> None:
    # sigir2024-rbo rbo/Python/README.md prints RBO^a at p = 0.95:
    # {'ext': 0.6922853, 'min': 0.3310519, 'max': 0.8930692, 'res': 0.5620173}
    x = [_parse_ranking("red (blue green) yellow pink")]
    y = [_parse_ranking("(blue red) white (yellow black purple) green")]
    values = _per_user(x, y, ["rbo(p=0.95)", "rbo_min(p=0.95)", "rbo_res(p=0.95)"], ties="average")
    assert values[0]["rbo(p=0.95)"] == pytest.approx(0.6922853, abs=5e-8)
    assert values[0]["rbo_min(p=0.95)"] == pytest.approx(0.3310519, abs=5e-8)
    assert values[0]["rbo_res(p=0.95)"] == pytest.approx(0.5620173, abs=5e-8)


def test_the_reference_implementations_test_file() -> None:
    with RBO_DATA.open() as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 200
    x = [_parse_ranking(row["x"]) for row in rows]
    y = [_parse_ranking(row["y"]) for row in rows]
    # each row has its own p: ask for every p once, read each user's own
    ps = sorted({row["p"] for row in rows})
    measures = [f"{form}(p={p})" for p in ps for form in ("rbo", "rbo_min", "rbo_res")]
    values = _per_user(x, y, measures, ties="average")
    worst = 0.0
    for user, row in enumerate(rows):
        for form, column in (("rbo", "a_ext"), ("rbo_min", "a_min"), ("rbo_res", "a_res")):
            got = values[user][f"{form}(p={row['p']})"]
            worst = max(worst, abs(got - float(row[column])))
    assert worst < 1e-12


# ---------------------------------------------------------------- textbook, hypothesis

ITEMS = list("abcdefghij")


@st.composite
def list_pairs(draw: st.DrawFn) -> tuple[list[list[str]], list[list[str]]]:
    n = draw(st.integers(1, 4))
    xs, ys = [], []
    for _ in range(n):
        xs.append(draw(st.permutations(ITEMS)).copy()[: draw(st.integers(0, 7))])
        ys.append(draw(st.permutations(ITEMS)).copy()[: draw(st.integers(0, 7))])
    return xs, ys


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pairs=list_pairs(), p=st.sampled_from([0.1, 0.5, 0.8, 0.9, 0.95]))
def test_rbo_against_the_textbook(pairs: tuple[list[list[str]], list[list[str]]], p: float) -> None:
    xs, ys = pairs
    labels = [f"rbo(p={p})", f"rbo_min(p={p})", f"rbo_res(p={p})"]
    out = prm.similarity(
        _long(xs).rename({"score": "s"}), _long(ys).rename({"score": "s"}), labels,
        per_user=True, score="s",
    )  # fmt: skip
    values = {row["user"]: row for row in out.iter_rows(named=True)}
    for user, (x, y) in enumerate(zip(xs, ys, strict=True)):
        if not x and not y:
            # a user with no row on either side is no user
            assert user not in values
            continue
        row = values[user]
        if not x or not y:
            # an empty list against another: nothing in common, everything possible
            assert (row[labels[0]], row[labels[1]]) == (0.0, 0.0)
            assert row[labels[2]] == pytest.approx(1.0, abs=1e-12)
            continue
        assert row[labels[0]] == pytest.approx(
            float(textbook_ext(x, y, Fraction(str(p)))), abs=1e-12
        )
        low = textbook_min(x, y, p)
        assert row[labels[1]] == pytest.approx(low, abs=1e-12)
        assert row[labels[2]] == pytest.approx(textbook_max(x, y, p) - low, abs=1e-12)


@st.composite
def tied_rankings(draw: st.DrawFn) -> list[str | frozenset[str]]:
    items = draw(st.permutations(list("abcdefg")))[: draw(st.integers(1, 6))]
    ranking: list[str | frozenset[str]] = []
    index = 0
    while index < len(items):
        size = draw(st.integers(1, 3))
        group = items[index : index + size]
        ranking.append(group[0] if len(group) == 1 else frozenset(group))
        index += size
    return ranking


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(x=tied_rankings(), y=tied_rankings(), p=st.sampled_from([0.5, 0.9]))
def test_ties_give_the_expected_rbo_min_over_every_order(
    x: list[str | frozenset[str]], y: list[str | frozenset[str]], p: float
) -> None:
    labels = [f"rbo_min(p={p})", f"rbo(p={p})"]
    row = _per_user([x], [y], labels, ties="average")[0]
    low, ext = expected_over_ties(x, y, p)
    assert row[labels[0]] == pytest.approx(low, abs=1e-12)
    length = sum(1 if isinstance(g, str) else len(g) for g in x)
    if length == sum(1 if isinstance(g, str) else len(g) for g in y):
        # even lists: RBO_ext is linear in the overlaps, so it is the expectation too
        assert row[labels[1]] == pytest.approx(ext, abs=1e-12)


def test_the_a_variants_residual_is_not_the_mean_over_orders() -> None:
    # a against a (b c): either order of b, c gives RBO_res = ln 2 - 1/2 + ... = 0.306853
    # at p = 0.5; RBO^a_max counts the first unseen item at depth 2 by its expected
    # contribution (1/2), so RBO^a_res = 0.244353 (Corsi & Urbano's reference gives
    # 0.2443528194400547, run once)
    row = _per_user([["a"]], [["a", frozenset({"b", "c"})]], ["rbo_res(p=0.5)"], ties="average")
    assert row[0]["rbo_res(p=0.5)"] == pytest.approx(0.2443528194400547, abs=1e-15)
    orders = [["a", "b", "c"], ["a", "c", "b"]]
    mean = sum(textbook_max(["a"], y, 0.5) - textbook_min(["a"], y, 0.5) for y in orders) / 2
    assert mean == pytest.approx(0.3068528194400547, abs=1e-12)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pairs=list_pairs(), k=st.integers(1, 8))
def test_jaccard_and_intersection_against_sets(
    pairs: tuple[list[list[str]], list[list[str]]], k: int
) -> None:
    xs, ys = pairs
    labels = [f"jaccard@{k}", f"intersection@{k}"]
    values = _per_user(xs, ys, labels)
    for user, (x, y) in enumerate(zip(xs, ys, strict=True)):
        a, b = set(x[:k]), set(y[:k])
        if not a and not b:
            assert user not in values
            continue
        assert values[user][labels[0]] == pytest.approx(len(a & b) / len(a | b), abs=1e-15)
        assert values[user][labels[1]] == pytest.approx(len(a & b) / k, abs=1e-15)
        if len(x) >= k:
            # RecTools' Intersection: recall@k of the reference against the list's top k
            assert values[user][labels[1]] == pytest.approx(len(a & b) / len(a), abs=1e-15)


def test_expected_intersection_over_ties() -> None:
    x = [["a", frozenset({"b", "c"}), "d"]]
    y = [[frozenset({"c", "x", "y"}), "a"]]
    row = _per_user(x, y, ["intersection@2"], ties="average")[0]
    orders = [(a, b) for a in _orders(x[0]) for b in _orders(y[0])]
    mean = sum(len(set(a[:2]) & set(b[:2])) / 2 for a, b in orders) / len(orders)
    assert row["intersection@2"] == pytest.approx(mean, abs=1e-15)


# ---------------------------------------------------------------- groups, users, frames


def _runs(backend: Backend) -> tuple[Any, Any]:
    reference = backend.frame(
        {"user": [1, 1, 1, 2, 2, 4], "item": list("abcxyq"), "rank": [1, 2, 3, 1, 2, 1]}
    )
    recs = backend.frame(
        {
            "model": ["new"] * 6 + ["old"] * 5,
            "user": [1, 1, 1, 2, 2, 3, 1, 1, 1, 2, 2],
            "item": list("bacyzm") + list("abcxy"),
            "rank": [1, 2, 3, 1, 2, 1, 1, 2, 3, 1, 2],
        }
    )
    return recs, reference


def test_per_user_and_means_on_every_backend(backend: Backend) -> None:
    recs, reference = _runs(backend)
    per_user = backend.polars(
        prm.similarity(recs, reference, ["rbo", "rbo_res", "jaccard@2"], by="model", per_user=True)
    )
    assert per_user.columns == ["model", "user", "rbo", "rbo_res", "jaccard@2"]
    rows = {(r["model"], r["user"]): r for r in per_user.iter_rows(named=True)}
    # every user of either side counts for every model
    assert sorted(rows) == [(m, u) for m in ("new", "old") for u in (1, 2, 3, 4)]
    assert rows[("new", 1)]["rbo"] == pytest.approx(0.9, abs=1e-15)
    # user 3: a list on the recommendations' side only; user 4: on the reference's only
    for key in (("new", 3), ("new", 4), ("old", 4)):
        assert (rows[key]["rbo"], rows[key]["jaccard@2"]) == (0.0, 0.0)
        assert rows[key]["rbo_res"] == pytest.approx(1.0, abs=1e-12)
    # user 3 has no list in "old" nor in the reference: undefined
    assert (rows[("old", 3)]["rbo"], rows[("old", 3)]["jaccard@2"]) == (None, None)
    means = backend.polars(
        prm.similarity(recs, reference, ["rbo", "rbo_res", "jaccard@2"], by="model")
    )
    expected = per_user.group_by("model").agg(pl.col("rbo", "rbo_res", "jaccard@2").mean())
    assert means.columns == ["model", "rbo", "rbo_res", "jaccard@2"]
    for row in means.iter_rows(named=True):
        own = expected.filter(pl.col("model") == row["model"]).row(0, named=True)
        for label in ("rbo", "rbo_res", "jaccard@2"):
            assert row[label] == pytest.approx(own[label], abs=1e-15)


def test_the_per_user_frame_goes_to_compare_per_user() -> None:
    recs, reference = _runs(Backend("polars-eager", lambda f: f, lambda f: f))
    per_user = prm.similarity(recs, reference, ["rbo", "intersection@2"], by="model", per_user=True)
    means = prm.similarity(recs, reference, ["rbo", "intersection@2"], by="model")
    cmp = prm.compare_per_user(per_user, ["rbo", "intersection@2"], baseline="old")
    for row in cmp.iter_rows(named=True):
        mean = means.filter(pl.col("model") == row["system"]).get_column(row["metric"]).item()
        assert row["mean"] == pytest.approx(mean, abs=1e-12)
    new = cmp.filter((pl.col("system") == "new") & (pl.col("metric") == "rbo")).row(0, named=True)
    # paired on users 1, 2 and 4 (user 3 is undefined for "old")
    assert new["n_paired"] == 3


def test_without_by_one_row_and_a_reference_with_folds() -> None:
    recs = pl.DataFrame({"fold": [1, 1, 2, 2], "user": [1, 1, 1, 1], "item": list("abab"),
                         "rank": [1, 2, 1, 2]})  # fmt: skip
    reference = pl.DataFrame({"fold": [1, 1, 2, 2], "user": [1, 1, 1, 1], "item": list("abba"),
                              "rank": [1, 2, 1, 2]})  # fmt: skip
    # the fold is in both: each fold's lists are compared with that fold's reference
    out = prm.similarity(recs, reference, ["jaccard@1"], by="fold")
    assert out.to_dict(as_series=False) == {"fold": [1, 2], "jaccard@1": [1.0, 0.0]}
    first = pl.col("fold") == 1
    one = prm.similarity(recs.filter(first), reference.filter(first), ["jaccard@2", "rbo"])
    assert one.columns == ["jaccard@2", "rbo"]
    assert one.row(0) == (1.0, pytest.approx(1.0, abs=1e-15))


def test_scores_follow_the_tie_rule_and_given_ranks_are_an_order() -> None:
    recs = pl.DataFrame({"user": [1, 1, 1], "item": ["a", "b", "c"], "s": [1.0, 1.0, 0.5]})
    reference = pl.DataFrame({"user": [1, 1, 1], "item": ["b", "a", "c"], "s": [3.0, 2.0, 1.0]})
    # item_desc puts b before a: identical lists; item_asc: a swap at the top
    same = prm.similarity(recs, reference, ["rbo"], score="s")
    swapped = prm.similarity(recs, reference, ["rbo"], score="s", ties="item_asc")
    assert same.item() == pytest.approx(1.0, abs=1e-15)
    assert swapped.item() == pytest.approx(0.9, abs=1e-15)
    gaps = pl.DataFrame({"user": [1, 1, 1], "item": ["b", "a", "c"], "rank": [2, 5, 9]})
    dense = pl.DataFrame({"user": [1, 1, 1], "item": ["b", "a", "c"], "rank": [1, 2, 3]})
    assert prm.similarity(gaps, dense, ["rbo"]).item() == pytest.approx(1.0, abs=1e-15)


def test_a_cutoff_reads_the_top_k_of_both_lists() -> None:
    recs = pl.DataFrame({"user": [1] * 4, "item": list("abcd"), "rank": [1, 2, 3, 4]})
    reference = pl.DataFrame({"user": [1] * 4, "item": list("abdc"), "rank": [1, 2, 3, 4]})
    cut = prm.similarity(recs, reference, ["rbo@2", "rbo_min@2"])
    assert cut.row(0) == (
        pytest.approx(1.0, abs=1e-15),
        pytest.approx(textbook_min(["a", "b"], ["a", "b"], 0.9), abs=1e-12),
    )


def test_duplicates_first_keeps_the_best_position() -> None:
    recs = pl.DataFrame({"user": [1, 1, 1], "item": ["a", "a", "b"], "rank": [1, 2, 3]})
    reference = pl.DataFrame({"user": [1, 1], "item": ["a", "b"], "rank": [1, 2]})
    with pytest.raises(ValueError, match=r"recs has 2 rows with a duplicated"):
        prm.similarity(recs, reference, ["rbo"])
    out = prm.similarity(recs, reference, ["rbo"], duplicates="first")
    assert out.item() == pytest.approx(1.0, abs=1e-15)


def test_inputs_are_not_mutated_and_lazy_stays_lazy() -> None:
    recs, reference = _runs(Backend("polars-eager", lambda f: f, lambda f: f))
    before = recs.clone()
    out = prm.similarity(recs.lazy(), reference.lazy(), ["rbo"], by="model")
    assert isinstance(out, pl.LazyFrame)
    assert out.collect().equals(prm.similarity(recs, reference, ["rbo"], by="model"))
    assert recs.equals(before)


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("measures", "kwargs", "error", "match"),
    [
        (
            ["rbo_mn"],
            {},
            ValueError,
            r"unknown similarity measure 'rbo_mn'.*did you mean 'rbo_min'",
        ),
        (["rbo(p=1)"], {}, ValueError, r"parameter 'p' in 'rbo\(p=1\)' must be in \(0, 1\)"),
        (["rbo(p=0)"], {}, ValueError, r"must be in \(0, 1\)"),
        (["rbo(q=0.5)"], {}, ValueError, r"unknown parameter 'q=0.5'"),
        (["rbo(p=0.5, p=0.6)"], {}, ValueError, r"gives 2 parameters"),
        (["rbo(p=high)"], {}, ValueError, r"must be a number, got 'high'"),
        (["rbo(p=nan)"], {}, ValueError, r"must be in \(0, 1\)"),
        (["rbo@0"], {}, ValueError, r"cutoff"),
        (["ndcg@10"], {}, ValueError, r"unknown similarity measure 'ndcg'"),
        ([3], {}, TypeError, r"must be a string"),
        (["jaccard"], {}, ValueError, r"'jaccard' needs a cutoff"),
        (["jaccard(p=0.5)@3"], {}, ValueError, r"takes no parameters"),
        (["rbo", "rbo"], {}, ValueError, r"requested twice"),
        ([], {}, ValueError, r"measures is empty"),
        (["rbo@2", "rbo_min@3"], {}, ValueError, r"give them one cutoff"),
        (["rbo"], {"ties": "random"}, ValueError, r"ties"),
        (["rbo"], {"ties": "average"}, ValueError, r"pass score="),
        (["jaccard@3"], {"ties": "average", "score": "rank"}, ValueError, r"not implemented for"),
        (["rbo@3"], {"ties": "average", "score": "rank"}, ValueError, r"drop the cutoff"),
        (["rbo"], {"scroe": "s"}, TypeError, r"unexpected keyword argument 'scroe'.*'score'"),
        (["rbo"], {"relevance": "rel"}, ValueError, r"reads no relevance column"),
        (["rbo"], {"item": "movie"}, ValueError, r"recs is missing column 'movie'"),
    ],
)
def test_bad_arguments_are_refused(
    measures: list[str], kwargs: dict[str, Any], error: type[Exception], match: str
) -> None:
    recs = pl.DataFrame({"user": [1], "item": ["a"], "rank": [1]})
    with pytest.raises(error, match=match):
        prm.similarity(recs, recs, measures, **kwargs)


def test_the_reference_is_named_in_its_errors() -> None:
    recs = pl.DataFrame({"user": [1], "item": ["a"], "rank": [1]})
    with pytest.raises(ValueError, match=r"reference is missing column 'item'"):
        prm.similarity(recs, recs.rename({"item": "movie"}), ["rbo"])
    repeated = pl.DataFrame({"user": [1, 1], "item": ["a", "a"], "rank": [1, 2]})
    with pytest.raises(ValueError, match=r"reference has 2 rows with a duplicated \(user, item\)"):
        prm.similarity(recs, repeated, ["rbo"])
    with pytest.raises(ValueError, match=r"reference column 'rank' \(rank\) has 1 null"):
        prm.similarity(recs, recs.with_columns(pl.lit(None, pl.Int64).alias("rank")), ["rbo"])
    with pytest.raises(TypeError, match=r"reference must be a Polars DataFrame"):
        prm.similarity(recs, {"user": [1]}, ["rbo"])
    with pytest.raises(TypeError, match=r"'item' has dtype String in recs but Int32 in reference"):
        prm.similarity(recs, recs.with_columns(pl.lit(1).alias("item")), ["rbo"])


def test_ids_of_two_integer_dtypes_match_by_value() -> None:
    recs = pl.DataFrame(
        {"user": [1, 1], "item": [5, 6], "rank": [1, 2]},
        schema_overrides={"user": pl.Int32, "item": pl.UInt16},
    )
    reference = pl.DataFrame({"user": [1, 1], "item": [6, 5], "rank": [1, 2]})
    out = prm.similarity(recs, reference, ["rbo", "jaccard@2"], per_user=True)
    assert out.rows() == [(1, pytest.approx(0.9, abs=1e-15), 1.0)]


# ---------------------------------------------------------------- rank correlation


def textbook_tau_ap(reference: dict[str, float], other: dict[str, float]) -> float:
    """Yilmaz et al. (2008): p' = mean over i >= 2 of the share of correct pairs above i."""
    systems = sorted(other, key=lambda name: other[name], reverse=True)
    shares = [
        Fraction(sum(reference[above] > reference[system] for above in systems[:i]), i)
        for i, system in enumerate(systems)
        if i > 0
    ]
    return float(2 * sum(shares) / len(shares) - 1)


@settings(max_examples=80, deadline=None)
@given(
    values=st.lists(
        st.tuples(st.integers(0, 5), st.integers(0, 5)), min_size=2, max_size=12
    ).filter(lambda v: len({a for a, _ in v}) > 1 and len({b for _, b in v}) > 1)
)
def test_kendall_is_scipys_tau_b(values: list[tuple[int, int]]) -> None:
    a = {f"s{i}": float(x) for i, (x, _) in enumerate(values)}
    b = {f"s{i}": float(y) for i, (_, y) in enumerate(values)}
    expected = stats.kendalltau([x for x, _ in values], [y for _, y in values]).statistic
    assert prm.rank_correlation(a, b) == pytest.approx(expected, abs=1e-12)


@settings(max_examples=80, deadline=None)
@given(order=st.permutations(list(range(8))), n=st.integers(2, 8))
def test_tau_ap_against_the_textbook(order: list[int], n: int) -> None:
    reference = {f"s{i}": float(i) for i in range(n)}
    other = {f"s{i}": float(rank) for i, rank in enumerate(o for o in order if o < n)}
    got = prm.rank_correlation(reference, other, method="tau_ap")
    assert got == pytest.approx(textbook_tau_ap(reference, other), abs=1e-12)
    if n == 2:  # one pair: tau_AP is tau
        assert got == pytest.approx(prm.rank_correlation(reference, other), abs=1e-12)


@settings(max_examples=60, deadline=None)
@given(
    order=st.permutations(list(range(7))), other=st.lists(st.integers(0, 3), min_size=7, max_size=7)
)
def test_ties_of_the_other_ordering_give_the_mean_tau_ap_over_their_orders(
    order: list[int], other: list[int]
) -> None:
    # Urbano & Marrero's tau_AP,a: every order of the other ordering's ties, equally likely
    reference = {f"s{i}": float(rank) for i, rank in enumerate(order)}
    scores = {f"s{i}": float(value) for i, value in enumerate(other)}
    if len(set(other)) == 1:
        return
    groups = sorted(set(other), reverse=True)
    members = [[name for name in scores if scores[name] == value] for value in groups]
    values = []
    for combo in itertools.product(*(itertools.permutations(group) for group in members)):
        flat = [name for group in combo for name in group]
        untied = {name: float(len(flat) - place) for place, name in enumerate(flat)}
        values.append(textbook_tau_ap(reference, untied))
    got = prm.rank_correlation(reference, scores, method="tau_ap")
    assert got == pytest.approx(sum(values) / len(values), abs=1e-12)


def test_tau_ap_by_hand_and_its_asymmetry() -> None:
    truth = {"A": 4.0, "B": 3.0, "C": 2.0, "D": 1.0}
    top = {"A": 3.0, "B": 4.0, "C": 2.0, "D": 1.0}
    # B A C D: C(2) = 0, C(3) = 2, C(4) = 3 -> 2/3 (0 + 1 + 1) - 1 = 1/3
    assert prm.rank_correlation(truth, top, method="tau_ap") == pytest.approx(1 / 3, abs=1e-15)
    assert prm.rank_correlation(truth, truth, method="tau_ap") == 1.0
    reverse = {name: -value for name, value in truth.items()}
    assert prm.rank_correlation(truth, reverse, method="tau_ap") == -1.0
    skewed = {"A": 4.0, "B": 1.0, "C": 3.0, "D": 2.0}
    # swapping the arguments changes which ordering is walked down
    assert prm.rank_correlation(truth, skewed, method="tau_ap") != pytest.approx(
        prm.rank_correlation(skewed, truth, method="tau_ap")
    )


def test_rank_correlation_reads_frames(backend: Backend) -> None:
    first = backend.frame({"model": ["a", "b", "c"], "ndcg@10": [0.3, 0.2, 0.1]})
    second = backend.frame({"model": ["c", "b", "a"], "ndcg@10": [0.5, 0.1, 0.4]})
    # a > b > c against c > a > b
    expected = stats.kendalltau([0.3, 0.2, 0.1], [0.4, 0.1, 0.5]).statistic
    assert prm.rank_correlation(first, second) == pytest.approx(expected, abs=1e-15)
    both = backend.frame({"model": ["a", "b", "c"], "x": [3, 2, 1], "y": [1, 2, 3]})
    assert prm.rank_correlation(both, metric=("x", "y")) == pytest.approx(-1.0, abs=1e-15)


@pytest.mark.parametrize(
    ("a", "b", "kwargs", "match"),
    [
        ({"a": 1, "b": 2}, {"a": 1, "c": 2}, {}, r"2 system\(s\) are in one ordering only"),
        ({"a": 1}, {"a": 1}, {}, r"at least two systems"),
        ({"a": 1, "b": 1}, {"a": 1, "b": 2}, {}, r"same score in reference"),
        (
            {"a": 1, "b": 2, "c": 2},
            {"a": 1, "b": 2, "c": 3},
            {"method": "tau_ap"},
            r"reference ties",
        ),
        ({"a": 1, "b": 2}, {"a": 1, "b": 2}, {"method": "spearman"}, r"method must be one of"),
        ({"a": 1, "b": float("nan")}, {"a": 1, "b": 2}, {}, r"give a finite number"),
        ({"a": 1, "b": 2}, None, {}, r"metric=\(reference_column, other_column\)"),
    ],
)
def test_rank_correlation_refuses(
    a: dict[str, float], b: dict[str, float] | None, kwargs: dict[str, Any], match: str
) -> None:
    with pytest.raises(ValueError, match=match):
        prm.rank_correlation(a, b, **kwargs)


def test_rank_correlation_names_the_missing_column() -> None:
    frame = pl.DataFrame({"model": ["a", "b"], "x": [1.0, 2.0], "y": [2.0, 1.0]})
    with pytest.raises(ValueError, match=r"2 numeric columns besides 'model'"):
        prm.rank_correlation(frame, frame)
    with pytest.raises(ValueError, match=r"no system column 'system'"):
        prm.rank_correlation(frame, frame, metric="x", system="system")
    with pytest.raises(ValueError, match=r"no metric column 'z'"):
        prm.rank_correlation(frame, frame, metric="z")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pairs=list_pairs(), p=st.sampled_from([0.3, 0.9]))
def test_the_closed_forms_and_the_sums_over_depths_agree(
    pairs: tuple[list[list[str]], list[list[str]]], p: float
) -> None:
    # lists without ties take the closed forms; the same lists summed depth by depth (the
    # plan of pairs with ties) must give the same numbers
    from polars_rankmetrics._pipeline.inputs import RecsSpec  # noqa: PLC0415
    from polars_rankmetrics.analysis import _rbo  # noqa: PLC0415 - the private plan
    from polars_rankmetrics.analysis.list_similarity import _Inputs  # noqa: PLC0415

    xs, ys = pairs
    spec = RecsSpec("user", "item", "rank", "score", ())
    inputs = _Inputs.read(
        _long(xs).lazy(), _long(ys).lazy(), spec, average=False, in_memory=(False, False)
    )
    lists = inputs.oriented(None)
    requests = [_rbo.RboRequest(form, form, p) for form in ("ext", "min", "res")]
    closed = _rbo._untied(lists, inputs.keys, requests).collect().sort("user")
    summed = _rbo._tied(lists, inputs.keys, requests).collect().sort("user")
    assert closed["user"].to_list() == summed["user"].to_list()
    for form in ("ext", "min", "res"):
        for a, b in zip(closed[form].to_list(), summed[form].to_list(), strict=True):
            assert a == pytest.approx(b, abs=1e-12)


def test_models_within_folds_share_each_folds_reference() -> None:
    reference = pl.DataFrame(
        {"fold": [1, 1, 2, 2], "user": [1, 1, 1, 1], "item": list("abba"), "rank": [1, 2, 1, 2]}
    )
    recs = pl.DataFrame(
        {
            "fold": [1, 1, 1, 1, 2, 2, 2, 2],
            "model": ["m", "m", "n", "n"] * 2,
            "user": [1] * 8,
            "item": list("abba") * 2,
            "rank": [1, 2] * 4,
        }
    )
    out = prm.similarity(recs, reference, ["jaccard@1"], by=["fold", "model"])
    # fold 1's reference starts with a, fold 2's with b
    assert out.rows() == [(1, "m", 1.0), (1, "n", 0.0), (2, "m", 0.0), (2, "n", 1.0)]
