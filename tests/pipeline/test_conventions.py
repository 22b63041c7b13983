"""The Conventions object, the presets and their conflict rules, value checks."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_rankmetrics as prm
from polars_rankmetrics.conventions import FIXED, PRESETS, Conventions, resolve

RECS = pl.DataFrame({"user": [1, 1, 2], "item": ["a", "b", "a"], "rank": [1, 2, 1]})
TRUTH = pl.DataFrame({"user": [1, 1, 3], "item": ["b", "c", "z"], "rel": [2, 1, 1]})


def test_presets_hold_the_documented_values() -> None:
    assert PRESETS["default"] == Conventions()
    trec = PRESETS["trec"]
    assert (trec.denominator, trec.gain, trec.ties) == ("relevant", "linear", "item_desc")
    assert (trec.users_without_recs, trec.users_without_truth) == ("exclude", "judged")
    assert FIXED["trec"] == {"denominator", "gain", "ideal", "ties"}
    assert FIXED["default"] == frozenset()


@pytest.mark.parametrize(
    ("name", "value"),
    [("denominator", "min_k"), ("denominator", "hits"), ("gain", "exponential"), ("ties", "input")],
)
def test_trec_refuses_a_value_it_fixes(name: str, value: str) -> None:
    # before the registry, conventions="trec", denominator="min_k" silently gave trec's AP
    with pytest.raises(ValueError, match=f"conventions='trec' fixes {name}="):
        prm.evaluate(RECS, TRUTH, "map@2", conventions="trec", **{name: value})


@pytest.mark.parametrize(
    ("name", "value"),
    [("denominator", "relevant"), ("gain", "linear"), ("ties", "item_desc")],
)
def test_trec_accepts_its_own_fixed_values(name: str, value: str) -> None:
    given = prm.evaluate(RECS, TRUTH, "map@2", conventions="trec", **{name: value})
    assert given.equals(prm.evaluate(RECS, TRUTH, "map@2", conventions="trec"))


def test_trec_only_defaults_the_users_counted() -> None:
    # trec_eval -c: users without a run count as 0, on top of the trec preset
    conv = resolve("trec", users_without_recs="zero", users_without_truth="zero")
    assert conv.users_without_recs == "zero"
    assert conv.users_without_truth == "zero"
    assert conv.denominator == "relevant"
    # user 1: AP = (1/2) / 2 (both relevant items count); user 3 (no run) 0 under -c
    scores = prm.evaluate(RECS, TRUTH, "map", conventions="trec", users_without_recs="zero")
    assert scores["map"][0] == pytest.approx((0.25 + 0.0) / 2)


def test_a_conventions_object_fixes_everything() -> None:
    conv = Conventions(denominator="hits", users_without_recs="exclude")
    by_object = prm.evaluate(RECS, TRUTH, "map@2", conventions=conv)
    by_keywords = prm.evaluate(
        RECS, TRUTH, "map@2", denominator="hits", users_without_recs="exclude"
    )
    assert by_object.equals(by_keywords)
    assert prm.evaluate(RECS, TRUTH, "map@2", conventions=conv, denominator="hits").equals(
        by_object
    )
    with pytest.raises(ValueError, match="the Conventions object given fixes denominator"):
        prm.evaluate(RECS, TRUTH, "map@2", conventions=conv, denominator="min_k")


@pytest.mark.parametrize(
    ("keyword", "value", "match"),
    [
        ("denominator", "min-k", "denominator must be one of .* did you mean 'min_k'"),
        ("gain", "exp", "gain must be one of"),
        ("ties", "desc", "ties must be one of"),
        ("users_without_recs", "keep", "users_without_recs must be one of"),
        ("users_without_truth", "judge", "did you mean 'judged'"),
        ("duplicates", "last", "duplicates must be one of"),
        ("conventions", "trec_eval", "conventions must be one of"),
    ],
)
def test_unknown_values_are_refused_once(keyword: str, value: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        prm.evaluate(RECS, TRUTH, "map@2", **{keyword: value})


@pytest.mark.parametrize("level", [math.nan, math.inf, -math.inf, np.float64("nan")])
def test_non_finite_relevance_level_is_refused(level: float) -> None:
    # NaN compares false with every grade: every metric was silently null
    with pytest.raises(ValueError, match="relevance_level must be a finite number"):
        prm.evaluate(RECS, TRUTH, "map@2", relevance="rel", relevance_level=level)
    with pytest.raises(ValueError, match="relevance_level must be a finite number"):
        prm.relevance(RECS, TRUTH, relevance="rel", relevance_level=level)


@pytest.mark.parametrize("level", ["2", True, [2]])
def test_relevance_level_must_be_a_number(level: Any) -> None:
    with pytest.raises(TypeError, match="relevance_level must be a number"):
        prm.evaluate(RECS, TRUTH, "map@2", relevance="rel", relevance_level=level)


def test_numpy_numbers_are_accepted() -> None:
    plain = prm.evaluate(RECS, TRUTH, "precision@2", relevance="rel", relevance_level=2)
    for level in (np.int64(2), np.float64(2.0), np.int32(2)):
        numpy = prm.evaluate(RECS, TRUTH, "precision@2", relevance="rel", relevance_level=level)
        assert numpy.equals(plain)
    # only user 1's relevant item b (grade 2) counts: P@2 = 1/2
    assert plain["precision@2"][0] == pytest.approx(0.5)
    cut = prm.positions(RECS, k=np.int64(1))
    assert cut.equals(prm.positions(RECS, k=1))
    labeled = prm.relevance(RECS, TRUTH, relevance="rel", relevance_level=np.int64(2))
    assert labeled["is_relevant"].to_list() == [False, True, False, False, False]


def test_resolve_refuses_unknown_conventions() -> None:
    with pytest.raises(TypeError, match="unknown convention"):
        resolve("default", denomintor="hits")
