"""list_metrics against the plain-Python textbook under hypothesis-generated data.

Several ``by`` groups (models, and folds with their own history), ranks with
gaps (lists shorter than k, users whose list is empty within a cut), items
absent from the interactions, repeated interaction rows, one or several
categories per item (lists with repeats), ties in popularity at the head.
"""

from __future__ import annotations

import math
import os
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polars_rankmetrics as prm
from tests import textbook_beyond as tb

# hypothesis-generated cases: the properties suite (python -m pytest -m properties)
pytestmark = pytest.mark.properties

settings.register_profile(
    "prm-beyond-fast",
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "prm-beyond-thorough",
    max_examples=1500,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
PROFILE = settings.get_profile("prm-beyond-" + os.environ.get("PRM_HYPOTHESIS_PROFILE", "fast"))

TOLERANCE = 1e-9
CATALOG = list(range(12))  # list items come from 0..9; 10 and 11 are never shown
NAMES = (
    "coverage", "novelty", "arp", "long_tail", "gini", "personalization", "ild", "calibration",
    "entropy", "surprisal", "rank_biased_entropy", "entropy(p=0.85)",
    "rank_biased_entropy(p=0.5, epsilon=0)", "rank_biased_entropy(p=1)",
)  # fmt: skip


@st.composite
def cases(draw: st.DrawFn) -> dict[str, Any]:
    layout = draw(st.sampled_from(["none", "model", "fold_model"]))
    models = ["m1", "m2"] if layout != "none" else ["m1"]
    folds = ["f1", "f2"] if layout == "fold_model" else ["f1"]
    recs: list[dict[str, Any]] = []
    for fold in folds:
        for model in models:
            for user in draw(st.sets(st.integers(0, 5), max_size=6)):
                items = draw(st.lists(st.integers(0, 9), unique=True, min_size=1, max_size=6))
                gaps = draw(st.booleans())
                ranks = (
                    sorted(
                        draw(st.sets(st.integers(1, 8), min_size=len(items), max_size=len(items)))
                    )
                    if gaps
                    else list(range(1, len(items) + 1))
                )
                recs += [
                    {"fold": fold, "model": model, "user": user, "item": i, "rank": rank}
                    for i, rank in zip(items, ranks, strict=True)
                ]
    history = [
        {"fold": draw(st.sampled_from(folds)), "user": u, "item": i}
        for u, i in draw(
            st.lists(st.tuples(st.integers(0, 7), st.integers(0, 11)), min_size=1, max_size=30)
        )
    ]
    multi = draw(st.booleans())
    if multi:
        categories: list[Any] = [
            draw(st.lists(st.sampled_from("wxyz"), min_size=1, max_size=4)) for _ in CATALOG
        ]
    else:
        categories = [draw(st.sampled_from("xyz")) for _ in CATALOG]
    cutoffs = {name: draw(st.sampled_from([None, 1, 2, 3, 5])) for name in NAMES}
    head_share = draw(st.sampled_from([0.0, 0.2, 0.5, 1.0, 0.35]))
    alpha = draw(st.sampled_from([0.01, 0.5, 1.0]))
    return {
        "layout": layout,
        "recs": recs,
        "history": history,
        "categories": categories,
        "cutoffs": cutoffs,
        "head_share": head_share,
        "alpha": alpha,
    }


def _label(name: str, k: int | None) -> str:
    return name if k is None else f"{name}@{k}"


def _frames(case: dict[str, Any]) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame, list[str]]:
    by = {"none": [], "model": ["model"], "fold_model": ["fold", "model"]}[case["layout"]]
    schema = {"fold": pl.String, "model": pl.String, "user": pl.Int64, "item": pl.Int64}
    recs = pl.DataFrame(case["recs"], schema={**schema, "rank": pl.Int64}).select(
        *by, "user", "item", "rank"
    )
    history_columns = ["fold"] if case["layout"] == "fold_model" else []
    history = pl.DataFrame(case["history"], schema=schema).select(*history_columns, "user", "item")
    items = pl.DataFrame({"item": CATALOG, "category": case["categories"]})
    return recs, history, items, by


def _textbook_inputs(
    case: dict[str, Any], group: tuple[str, str]
) -> tuple[dict[object, list[tuple[object, int]]], list[tuple[object, object]], dict[object, Any]]:
    fold, _ = group
    lists: dict[object, list[tuple[object, int]]] = {}
    for row in case["recs"]:
        if (row["fold"], row["model"]) == group:
            lists.setdefault(row["user"], []).append((row["item"], row["rank"]))
    fold_history = case["layout"] == "fold_model"
    history = [
        (row["user"], row["item"])
        for row in case["history"]
        if not fold_history or row["fold"] == fold
    ]
    catalog = {
        item: frozenset(c if isinstance(c, list) else [c])
        for item, c in zip(CATALOG, case["categories"], strict=True)
    }
    return lists, history, catalog


def _close(actual: float | None, expected: float | None) -> bool:
    if actual is None or expected is None:
        return actual is None and expected is None
    return math.isclose(actual, expected, rel_tol=TOLERANCE, abs_tol=TOLERANCE)


def _groups(case: dict[str, Any], by: list[str]) -> list[tuple[str, str]]:
    return sorted({(row["fold"], row["model"]) for row in case["recs"]})


@PROFILE
@given(cases())
def test_group_values_match_the_textbook(case: dict[str, Any]) -> None:
    recs, history, items, by = _frames(case)
    labels = {name: _label(name, k) for name, k in case["cutoffs"].items()}
    result = prm.list_metrics(
        recs.lazy() if case["layout"] == "model" else recs,
        list(labels.values()),
        interactions=history,
        items=items,
        category="category",
        by=by or None,
        head_share=case["head_share"],
        alpha=case["alpha"],
    )
    if isinstance(result, pl.LazyFrame):
        result = result.collect()
    ks = list(case["cutoffs"].values())
    largest = None if None in ks else max(k for k in ks if k is not None)
    expected_rows = []
    for group in _groups(case, by):
        lists, group_history, catalog = _textbook_inputs(case, group)
        if not tb.top(lists, largest):
            # no list within the largest cut: the group has no users (no row), and
            # without by the one row has nothing to describe
            if not by:
                expected_rows.append(dict.fromkeys(labels.values()))
            continue
        row = {"fold": group[0], "model": group[1]}
        for name, k in case["cutoffs"].items():
            row[labels[name]] = tb.group_value(
                name, k, lists, group_history, catalog,
                head_share=case["head_share"], alpha=case["alpha"],
            )  # fmt: skip
        expected_rows.append(row)
    if not by and not expected_rows:
        # no recommendations at all: one row, every measure undefined (no lists to describe)
        expected_rows = [dict.fromkeys(labels.values())]
    assert result.height == len(expected_rows)
    for actual, expected in zip(result.iter_rows(named=True), expected_rows, strict=True):
        for column in by:
            assert actual[column] == expected[column]
        for label in labels.values():
            assert _close(actual[label], expected[label]), (label, actual, expected)


@PROFILE
@given(cases())
def test_per_user_values_match_the_textbook(case: dict[str, Any]) -> None:
    recs, history, items, by = _frames(case)
    per_user_names = [name for name in NAMES if tb.parameters(name)[0] in tb.USER_MEASURES]
    labels = {name: _label(name, case["cutoffs"][name]) for name in per_user_names}
    result = prm.list_metrics(
        recs,
        list(labels.values()),
        interactions=history.lazy(),
        items=items.lazy(),
        category="category",
        by=by or None,
        per_user=True,
        head_share=case["head_share"],
        alpha=case["alpha"],
    )
    ks = [case["cutoffs"][name] for name in per_user_names]
    largest = None if None in ks else max(k for k in ks if k is not None)
    expected: dict[tuple[Any, ...], dict[str, float | None]] = {}
    for group in _groups(case, by):
        lists, group_history, catalog = _textbook_inputs(case, group)
        values = {
            name: tb.per_user(
                name,
                case["cutoffs"][name],
                lists,
                group_history,
                catalog,
                head_share=case["head_share"],
                alpha=case["alpha"],
            )
            for name in per_user_names
        }
        named = {"fold": group[0], "model": group[1]}
        for user in tb.top(lists, largest):
            key = (*[named[column] for column in by], user)
            expected[key] = {labels[name]: values[name].get(user) for name in per_user_names}
    assert result.height == len(expected)
    for actual in result.iter_rows(named=True):
        key = (*[actual[column] for column in by], actual["user"])
        for label, value in expected[key].items():
            assert _close(actual[label], value), (key, label, actual[label], value)


@PROFILE
@given(cases())
def test_evaluate_gives_the_numbers_of_list_metrics(case: dict[str, Any]) -> None:
    recs, history, items, by = _frames(case)
    labels = [_label(name, k) for name, k in case["cutoffs"].items()]
    share, alpha = case["head_share"], case["alpha"]
    # evaluate takes the parameters in the metric strings
    strings = [
        label.replace("long_tail", f"long_tail(head_share={share})").replace(
            "calibration", f"calibration(alpha={alpha})"
        )
        for label in labels
    ]
    inputs = {"interactions": history, "items": items, "category": "category", "by": by or None}
    expected = prm.list_metrics(recs, labels, head_share=share, alpha=alpha, **inputs)
    got = prm.evaluate(recs, None, strings, **inputs)
    assert got.columns == [*by, *strings]
    assert got.height == expected.height
    for label, string in zip(labels, strings, strict=True):
        for a, b in zip(got[string], expected[label], strict=True):
            assert _close(a, b), (string, a, b)
