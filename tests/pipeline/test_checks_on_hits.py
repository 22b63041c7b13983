"""The recs' repeat checks on the hit rows, and ``duplicates="first"`` on the cut.

With given ranks and measures that read only the hits (every registry
measure declaring ``repeats="hits"``), ``evaluate`` checks repeated items and
positions on the hit rows only. These tests hold it to its documented rule:

* refused: a relevant item twice within the cut, two relevant items at one
  position within the cut (each can change a number);
* accepted: any repeat of a non-relevant item, a non-relevant item beside a
  relevant one at one position, repeats beyond the cut; the numbers are then
  those of the textbook on the relevant rows alone, each relevant item at its
  best position (a hits measure reads nothing else);
* with scores, or with a measure that reads whole lists (judged@k), every
  repeated item within the cut is refused, as before.

``duplicates="first"`` is checked against the textbook (an item keeps its best
given position; from scores, the list is ranked with its repeats removed).
"""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polars_rankmetrics as prm
from tests import textbook

METRICS = ["map@4", "ndcg@3", "mrr@4", "precision@2", "recall@4"]
CUT = 4  # the largest cutoff of METRICS


@st.composite
def lists_with_repeats(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    items = st.sampled_from(["a", "b", "c", "d", "e"])
    recs = [
        {"user": user, "item": draw(items), "rank": draw(st.integers(1, 6))}
        for user in (1, 2)
        for _ in range(draw(st.integers(0, 7)))
    ]
    truth = [
        {"user": user, "item": item}
        for user in (1, 2, 3)
        for item in draw(st.sets(items, max_size=3))
    ]
    return recs, truth


def _refused(recs: list[dict[str, Any]], truth: list[dict[str, Any]]) -> bool:
    """The documented rule: a relevant repeat, or two relevant items at one position."""
    relevant = {(row["user"], row["item"]) for row in truth}
    seen_items: set[tuple[Any, Any]] = set()
    at_position: dict[tuple[Any, int], set[Any]] = {}
    for row in recs:
        key = (row["user"], row["item"])
        if row["rank"] > CUT or key not in relevant:
            continue
        if key in seen_items:
            return True
        seen_items.add(key)
        at_position.setdefault((row["user"], row["rank"]), set()).add(row["item"])
    return any(len(items) > 1 for items in at_position.values())


@pytest.mark.properties
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lists_with_repeats())
def test_checks_on_hits_refuse_exactly_what_can_change_a_number(
    data: tuple[list[dict[str, Any]], list[dict[str, Any]]],
) -> None:
    recs, truth = data
    recs_frame = pl.DataFrame(recs, schema={"user": pl.Int64, "item": pl.String, "rank": pl.Int64})
    truth_frame = pl.DataFrame(truth, schema={"user": pl.Int64, "item": pl.String})
    if _refused(recs, truth):
        with pytest.raises(ValueError, match=r"duplicated \(user, (item|rank)\)"):
            prm.evaluate(recs_frame, truth_frame, METRICS)
        return
    got = prm.evaluate(recs_frame, truth_frame, METRICS).row(0, named=True)
    # duplicates="first" changes nothing a hits measure reads here
    first = prm.evaluate(recs_frame, truth_frame, METRICS, duplicates="first")
    assert first.row(0, named=True) == got
    # the reference: the relevant rows alone (a user left without rows still counts,
    # users_without_recs="zero"), each relevant item at its best position
    relevant = {(row["user"], row["item"]) for row in truth}
    kept = [row for row in recs if (row["user"], row["item"]) in relevant]
    (expected,) = textbook.evaluate(kept, truth, ["user", "item"], METRICS, duplicates="first")
    for label in METRICS:
        if expected[label] is None:
            assert got[label] is None
        else:
            assert got[label] == pytest.approx(expected[label], abs=1e-12), label


def test_a_truth_repeat_is_not_reported_as_a_recs_repeat() -> None:
    recs = pl.DataFrame({"user": [1, 1], "item": ["a", "b"], "rank": [1, 2]})
    truth = pl.DataFrame({"user": [1, 1], "item": ["a", "a"]})
    with pytest.raises(ValueError, match=r"truth has 2 rows") as raised:
        prm.evaluate(recs, truth, "map@2")
    assert "recs has" not in str(raised.value)


def test_a_row_repeated_whole_is_refused_when_relevant() -> None:
    # same item, same position twice: AP would count the hit twice
    recs = pl.DataFrame({"user": [1, 1, 1], "item": ["a", "a", "b"], "rank": [1, 1, 2]})
    truth = pl.DataFrame({"user": [1], "item": ["a"]})
    with pytest.raises(ValueError, match=r"recs has 2 rows with a duplicated \(user, item\)"):
        prm.evaluate(recs, truth, "map@2")
    # not relevant: accepted, a at 1 is the hit
    truth_b = pl.DataFrame({"user": [1], "item": ["b"]})
    assert prm.evaluate(recs, truth_b, "map@2")["map@2"][0] == pytest.approx(0.5)


def test_two_relevant_items_at_one_position_are_refused_one_relevant_is_not() -> None:
    recs = pl.DataFrame({"user": [1, 1, 1], "item": ["a", "b", "c"], "rank": [1, 1, 2]})
    both = pl.DataFrame({"user": [1, 1], "item": ["a", "b"]})
    with pytest.raises(ValueError, match=r"two items share one position"):
        prm.evaluate(recs, both, "map@2")
    one = pl.DataFrame({"user": [1], "item": ["a"]})
    assert prm.evaluate(recs, one, "map@2")["map@2"][0] == pytest.approx(1.0)


def test_lists_measures_and_scores_still_refuse_every_repeat() -> None:
    recs = pl.DataFrame({"user": [1, 1, 1], "item": ["a", "b", "a"], "rank": [1, 2, 3]})
    truth = pl.DataFrame({"user": [1, 1], "item": ["b", "z"], "rel": [1, 0]})
    with pytest.raises(ValueError, match=r"an item is recommended twice"):
        prm.evaluate(recs, truth, ["map@3", "judged@3"], relevance="rel")
    scored = recs.rename({"rank": "score"}).with_columns(-pl.col("score").cast(pl.Float64))
    with pytest.raises(ValueError, match=r"an item is recommended twice"):
        prm.evaluate(scored, truth, "map@3", score="score", relevance="rel")


@st.composite
def scored_lists(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[dict[str, Any]], str]:
    items = st.sampled_from([1, 2, 3, 4, 5])
    recs = [
        {"user": user, "item": draw(items), "score": float(draw(st.integers(0, 3)))}
        for user in (1, 2)
        for _ in range(draw(st.integers(0, 7)))
    ]
    truth = [
        {"user": user, "item": item} for user in (1, 2) for item in draw(st.sets(items, max_size=3))
    ]
    return recs, truth, draw(st.sampled_from(["item_desc", "item_asc", "input"]))


@pytest.mark.properties
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scored_lists())
def test_duplicates_first_from_scores_ranks_the_list_without_its_repeats(
    data: tuple[list[dict[str, Any]], list[dict[str, Any]], str],
) -> None:
    recs, truth, ties = data
    recs_frame = pl.DataFrame(
        recs, schema={"user": pl.Int64, "item": pl.Int64, "score": pl.Float64}
    )
    truth_frame = pl.DataFrame(truth, schema={"user": pl.Int64, "item": pl.Int64})
    got = prm.evaluate(
        recs_frame, truth_frame, METRICS, score="score", ties=ties, duplicates="first"
    ).row(0, named=True)
    (expected,) = textbook.evaluate(
        recs, truth, ["user", "item"], METRICS, score="score", ties=ties, duplicates="first"
    )
    for label in METRICS:
        if expected[label] is None:
            assert got[label] is None
        else:
            assert got[label] == pytest.approx(expected[label], abs=1e-12), label
    # the public positions agree with the textbook's, list by list
    ranked = prm.positions(recs_frame, 4, score="score", ties=ties, duplicates="first")
    for user in (1, 2):
        rows = [(row["item"], row["score"]) for row in recs if row["user"] == user]
        want = {
            item: pos
            for item, pos in textbook.positions_from_scores(rows, ties, "first").items()
            if pos <= 4
        }
        mine = ranked.filter(pl.col("user") == user)
        assert dict(zip(mine["item"], mine["rank"], strict=True)) == want


@pytest.mark.properties
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lists_with_repeats())
def test_duplicates_first_with_ranks_keeps_each_relevant_items_best_position(
    data: tuple[list[dict[str, Any]], list[dict[str, Any]]],
) -> None:
    recs, truth = data
    relevant = {(row["user"], row["item"]) for row in truth}
    best: dict[tuple[Any, Any], int] = {}
    for row in recs:
        key = (row["user"], row["item"])
        if key in relevant:
            best[key] = min(best.get(key, row["rank"]), row["rank"])
    shown = [(user, rank) for (user, _), rank in best.items() if rank <= CUT]
    recs_frame = pl.DataFrame(recs, schema={"user": pl.Int64, "item": pl.String, "rank": pl.Int64})
    truth_frame = pl.DataFrame(truth, schema={"user": pl.Int64, "item": pl.String})
    if len(shown) != len(set(shown)):
        # two relevant items at one best position: still ambiguous, still refused
        with pytest.raises(ValueError, match=r"two items share one position"):
            prm.evaluate(recs_frame, truth_frame, METRICS, duplicates="first")
        return
    got = prm.evaluate(recs_frame, truth_frame, METRICS, duplicates="first").row(0, named=True)
    kept = [row for row in recs if (row["user"], row["item"]) in relevant]
    (expected,) = textbook.evaluate(kept, truth, ["user", "item"], METRICS, duplicates="first")
    for label in METRICS:
        if expected[label] is None:
            assert got[label] is None
        else:
            assert got[label] == pytest.approx(expected[label], abs=1e-12), label
    # a measure reading whole lists takes the other path (the cut): the same numbers,
    # where that path accepts the list (it refuses any two items at one position)
    every: dict[tuple[Any, Any], int] = {}
    for row in recs:
        key = (row["user"], row["item"])
        every[key] = min(every.get(key, row["rank"]), row["rank"])
    places = [(user, rank) for (user, _), rank in every.items() if rank <= CUT]
    if len(places) != len(set(places)):
        return
    both = prm.evaluate(recs_frame, truth_frame, [*METRICS, "judged@4"], duplicates="first").row(
        0, named=True
    )
    assert {label: both[label] for label in METRICS} == pytest.approx(got)
