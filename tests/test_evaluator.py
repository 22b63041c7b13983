"""``Evaluator``: batches of whole users add up to ``evaluate`` on all of them, to the last bit.

For every measure of the registry (so a new one is covered without editing
this file), under the conventions of the cross-surface test and on its data
(ties, graded and negative grades, users without recommendations or without
truth), the users split into batches give through ``update`` and ``compute``
exactly the frame ``evaluate`` gives on all the rows, means and per-user
values, or the measure is refused by name when it is one number of all the
lists together. Then the state: merged from workers, saved and loaded, a user
in two batches refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankmetrics as prm
from polars_rankmetrics import Evaluator
from tests.test_one_number import CONVENTIONS, LIST_INPUTS, MEASURES, RECS, TRUTH
from tests.test_one_number import ROLES as SCORED

ROLES = {**SCORED, "by": "model"}

BATCHES = (["u1", "u2"], ["u3", "u4", "u5"], ["u6", "u7", "u8"])


def _of(frame: pl.DataFrame, users: list[str]) -> pl.DataFrame:
    return frame.filter(pl.col("user").is_in(users))


def _accumulated(metrics: list[str], batches: Any = BATCHES, **options: Any) -> Evaluator:
    evaluator = Evaluator(metrics, **options)
    for users in batches:
        evaluator.update(_of(RECS, users), _of(TRUTH, users))
    return evaluator


def _reference(metrics: list[str], *, per_user: bool, **options: Any) -> pl.DataFrame | Exception:
    try:
        return prm.evaluate(RECS, TRUTH, metrics, per_user=per_user, **options)
    except (ValueError, TypeError) as exc:
        return exc


@pytest.mark.parametrize("conventions", list(CONVENTIONS))
@pytest.mark.parametrize("label", list(MEASURES))
def test_every_measure_accumulates_exactly_or_is_refused_by_name(
    label: str, conventions: str
) -> None:
    options = {**ROLES, **LIST_INPUTS, **CONVENTIONS[conventions]}
    whole = _reference([label], per_user=False, **options)
    decided = [param for param in MEASURES[label].params if param.from_truth is not None]
    if MEASURES[label].aggregation == "group" or decided:
        with pytest.raises(ValueError, match=rf"cannot accumulate \['{label}'\]"):
            Evaluator([label], **options)
        given = label.replace("@", f"({decided[0].name}=3)@") if decided else None
        reference = None if given is None else _reference([given], per_user=False, **options)
        if isinstance(reference, pl.DataFrame):  # given in the metric, it accumulates
            assert given is not None
            assert_frame_equal(
                _accumulated([given], **options).compute(), reference, check_exact=True
            )
        return
    if isinstance(whole, Exception):
        # what evaluate refuses, the batches refuse too, naming the metric
        with pytest.raises(type(whole)):
            _accumulated([label], **options).compute()
        return
    evaluator = _accumulated([label], **options)
    # check_exact: the same float to the last bit, not to a tolerance
    assert_frame_equal(evaluator.compute(), whole, check_exact=True)
    per_user = _reference([label], per_user=True, **options)
    assert isinstance(per_user, pl.DataFrame)
    assert_frame_equal(evaluator.compute(per_user=True), per_user, check_exact=True)


@pytest.mark.parametrize("without_recs", ["zero", "exclude"])
def test_batches_of_any_size_and_order_with_models_missing_from_some(without_recs: str) -> None:
    # one user a batch: most batches lack one of the two models, which evaluate still
    # judges on their users (zero) or leaves them out (exclude)
    metrics = ["ndcg@3", "map", "rbp(p=0.5)@3", "pooled_recall@3", "gm_map@3", "ild@3"]
    options = {**ROLES, **LIST_INPUTS, "users_without_recs": without_recs}
    whole = prm.evaluate(RECS, TRUTH, metrics, **options)
    forward = _accumulated(metrics, **options).compute()
    backward = _accumulated(metrics, BATCHES[::-1], **options).compute()
    one_each = _accumulated(metrics, [[f"u{n}"] for n in range(8, 0, -1)], **options)
    assert_frame_equal(forward, whole, check_exact=True)
    assert_frame_equal(backward, whole, check_exact=True)
    assert_frame_equal(one_each.compute(), whole, check_exact=True)
    per_user = prm.evaluate(RECS, TRUTH, metrics, per_user=True, **options)
    assert_frame_equal(one_each.compute(per_user=True), per_user, check_exact=True)


def test_a_user_in_two_batches_is_refused_with_its_id_and_both_batches() -> None:
    evaluator = Evaluator(["ndcg@3"], **ROLES)
    evaluator.update(_of(RECS, ["u1", "u2"]), _of(TRUTH, ["u1", "u2"]))
    with pytest.raises(
        ValueError,
        match=r"a user of batch 2 was already added in an earlier batch: user='u2' \(batch 1\)",
    ):
        # u2's truth was in batch 1: its recommendations cannot come later
        evaluator.update(_of(RECS, ["u2", "u3"]), _of(TRUTH, ["u3"]))
    assert evaluator.batches == 1  # the refused batch added nothing


def test_merging_workers_equals_one_evaluator_and_leaves_the_other_unchanged() -> None:
    metrics = ["ndcg@3", "mrr", "pooled_recall@3"]
    options = ROLES
    left = _accumulated(metrics, BATCHES[:2], **options)
    right = _accumulated(metrics, BATCHES[2:], **options)
    before = right.compute()
    merged = left.merge(right)
    assert merged is left
    assert merged.batches == 3
    assert_frame_equal(
        merged.compute(), prm.evaluate(RECS, TRUTH, metrics, **options), check_exact=True
    )
    assert_frame_equal(right.compute(), before, check_exact=True)


def test_merging_refuses_other_metrics_options_or_the_same_users() -> None:
    left = _accumulated(["ndcg@3"], BATCHES[:1], **ROLES)
    with pytest.raises(ValueError, match="differs in its metrics"):
        left.merge(_accumulated(["mrr"], BATCHES[1:], **ROLES))
    with pytest.raises(ValueError, match="differs in its options"):
        left.merge(_accumulated(["ndcg@3"], BATCHES[1:], **ROLES, gain="exponential"))
    with pytest.raises(ValueError, match="already added"):
        left.merge(_accumulated(["ndcg@3"], BATCHES[:1], **ROLES))
    with pytest.raises(TypeError, match="another Evaluator"):
        left.merge("not an evaluator")  # type: ignore[arg-type]


def test_a_saved_state_loads_and_goes_on(tmp_path: Path) -> None:
    metrics = ["ndcg@3", "novelty@3", "gm_map@3"]
    options = {**ROLES, "interactions": LIST_INPUTS["interactions"]}
    first = _accumulated(
        metrics, BATCHES[:2], **options, conventions=prm.Conventions(gain="exponential")
    )
    first.save(tmp_path / "state")
    loaded = Evaluator.load(tmp_path / "state", interactions=LIST_INPUTS["interactions"])
    assert loaded.batches == 2
    loaded.update(_of(RECS, BATCHES[2]), _of(TRUTH, BATCHES[2]))
    whole = prm.evaluate(
        RECS, TRUTH, metrics, **options, conventions=prm.Conventions(gain="exponential")
    )
    assert_frame_equal(loaded.compute(), whole, check_exact=True)


def test_loading_checks_the_frames_and_saving_overwrites_nothing(tmp_path: Path) -> None:
    options = {**ROLES, "interactions": LIST_INPUTS["interactions"]}
    state = _accumulated(["novelty@3"], BATCHES[:1], **options)
    state.save(tmp_path / "state")
    with pytest.raises(FileExistsError, match="overwriting nothing"):
        state.save(tmp_path / "state")
    other = LIST_INPUTS["interactions"].head(3)
    with pytest.raises(ValueError, match="differs in its frames"):
        Evaluator.load(tmp_path / "state", interactions=other)
    with pytest.raises(ValueError, match="differs in its frames"):
        Evaluator.load(tmp_path / "state")  # the interactions not given again
    with pytest.raises(FileNotFoundError, match="no saved Evaluator"):
        Evaluator.load(tmp_path)


@pytest.mark.parametrize("buffer_rows", [0, 1_000_000])
def test_a_refused_batch_is_named_and_the_others_are_kept(buffer_rows: int) -> None:
    pytest.importorskip("pyarrow")
    evaluator = Evaluator(["mrr"], buffer_rows=buffer_rows, **ROLES)
    evaluator.update(_of(RECS, ["u1"]).to_arrow(), _of(TRUTH, ["u1"]).lazy())  # any frame kind
    bad = _of(RECS, ["u2"]).with_columns(pl.lit(None, pl.Float64).alias("score"))
    if buffer_rows == 0:  # each batch evaluated when it comes
        with pytest.raises(ValueError, match="score") as raised:
            evaluator.update(bad, _of(TRUTH, ["u2"]))
        kept = ["u1"]
    else:  # held, and evaluated with the next ones when computed
        evaluator.update(bad, _of(TRUTH, ["u2"]))
        evaluator.update(_of(RECS, ["u3"]), _of(TRUTH, ["u3"]))
        with pytest.raises(ValueError, match="score") as raised:
            evaluator.compute()
        kept = ["u1", "u3"]
    assert "(in batch 2 of the Evaluator)" in raised.value.__notes__
    assert evaluator.batches == len(kept)
    assert_frame_equal(
        evaluator.compute(),
        prm.evaluate(_of(RECS, kept), _of(TRUTH, kept), ["mrr"], **ROLES),
        check_exact=True,
    )
    evaluator.update(_of(RECS, ["u2"]), _of(TRUTH, ["u2"]))  # the refused users may come again
    with pytest.raises(ValueError, match=r"recs has no column 'user'.*'usr'"):
        evaluator.update(_of(RECS, ["u4"]).rename({"user": "usr"}), _of(TRUTH, ["u4"]))
    with pytest.raises(ValueError, match="no batch yet"):
        Evaluator(["mrr"]).compute()


def test_the_buffer_changes_when_queries_run_not_the_numbers() -> None:
    metrics = ["ndcg@3", "map", "novelty@3"]
    options = {**ROLES, "interactions": LIST_INPUTS["interactions"]}
    one_by_one = _accumulated(metrics, buffer_rows=0, **options)
    held = _accumulated(metrics, **options)
    assert_frame_equal(one_by_one.compute(), held.compute(), check_exact=True)
    with pytest.raises(ValueError, match="buffer_rows must be an integer >= 0"):
        Evaluator(metrics, buffer_rows=-1)


def test_the_sample_in_five_batches_equals_evaluate() -> None:
    sample = prm.sample_data(n_users=600)
    metrics = ["mrr", "ndcg@10", "map@10", "precision@10", "gm_map@10", "novelty@10", "rbp@10"]
    options = {
        "by": "model",
        "score": "score",
        "relevance": "rel",
        "interactions": sample.interactions,
    }
    evaluator = Evaluator(metrics, **options)
    for batch in range(5):
        users = pl.col("user") % 5 == batch
        evaluator.update(sample.recs.filter(users), sample.truth.filter(users))
    assert_frame_equal(
        evaluator.compute(),
        prm.evaluate(sample.recs, sample.truth, metrics, **options),
        check_exact=True,
    )


def _numbered_users(ids: list[int]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Recs and truth of users with integer ids (a model's row indices): two items each."""
    recs = pl.DataFrame({
        "user": [user for user in ids for _ in range(2)],
        "item": ["a", "b"] * len(ids),
        "rank": [1, 2] * len(ids),
    })  # fmt: skip
    return recs, pl.DataFrame({"user": ids, "item": ["b"] * len(ids)})


@pytest.mark.parametrize(
    ("first", "second", "repeated"),
    [
        ([0, 1, 2], [2, 3], 2),  # small ids: kept in a table by id
        ([0, 1, 2], [2, 3, 10**12], 2),  # a large id moves the users kept into frames
        ([-5, 1], [1, 7], 1),  # a negative id: frames from the start
        ([10**12, 3], [5, 10**12], 10**12),
    ],
)
def test_integer_users_in_two_batches_are_refused_however_they_are_kept(
    first: list[int], second: list[int], repeated: int
) -> None:
    evaluator = Evaluator(["mrr"])
    evaluator.update(*_numbered_users(first))
    with pytest.raises(
        ValueError,
        match=rf"a user of batch 2 was already added in an earlier batch: user={repeated} "
        r"\(batch 1\)",
    ):
        evaluator.update(*_numbered_users(second))
    assert evaluator.batches == 1
    recs, truth = _numbered_users([*first, 99])
    evaluator.update(*_numbered_users([99]))  # the refused batch's other users may come
    assert_frame_equal(evaluator.compute(), prm.evaluate(recs, truth, ["mrr"]), check_exact=True)


def test_integer_users_are_counted_and_named_by_value_whatever_their_dtype() -> None:
    evaluator = Evaluator(["mrr"])
    evaluator.update(*_numbered_users([0, 1, 2, 3]))
    recs, truth = _numbered_users([3, 2, 8])
    small = [frame.with_columns(pl.col("user").cast(pl.UInt8)) for frame in (recs, truth)]
    with pytest.raises(ValueError, match=r"2 users of batch 2 were .* user=2 \(batch 1\)"):
        evaluator.update(*small)
    # the recs' users alone count too: u3 had its truth in batch 1
    with pytest.raises(ValueError, match=r"user=3 \(batch 1\)"):
        evaluator.update(_numbered_users([3])[0], truth.clear())
    # and the truth's: one user repeated in each
    with pytest.raises(ValueError, match=r"2 users of batch 2 were .* user=0 \(batch 1\)"):
        evaluator.update(_numbered_users([0])[0], _numbered_users([1])[1])
    # 128-bit ids, which no table by id holds: the users kept move into frames
    wide = [frame.with_columns(pl.col("user").cast(pl.Int128)) for frame in _numbered_users([1])]
    with pytest.raises(ValueError, match=r"user=1 \(batch 1\)"):
        evaluator.update(*wide)
    evaluator.update(*_numbered_users([5]))
    with pytest.raises(ValueError, match=r"user=5 \(batch 2\)"):
        evaluator.update(*_numbered_users([5]))


def test_integer_users_are_checked_after_merge_and_load(tmp_path: Path) -> None:
    left = Evaluator(["mrr"])
    left.update(*_numbered_users([0, 1]))
    right = Evaluator(["mrr"])
    right.update(*_numbered_users([4]))
    right.update(*_numbered_users([2, 3]))
    left.merge(right)
    # its users again, under batches 4 and 5: the first named
    with pytest.raises(ValueError, match=r"a user of batch 4 was .* user=4 \(batch 2\)"):
        left.merge(right)
    assert left.batches == 3
    left.save(tmp_path / "state")
    loaded = Evaluator.load(tmp_path / "state")
    with pytest.raises(ValueError, match=r"a user of batch 4 was .* user=4 \(batch 2\)"):
        loaded.update(*_numbered_users([5, 4]))
    loaded.update(*_numbered_users([5]))
    recs, truth = _numbered_users([0, 1, 2, 3, 4, 5])
    assert_frame_equal(loaded.compute(), prm.evaluate(recs, truth, ["mrr"]), check_exact=True)


def test_a_refused_batch_of_integer_users_leaves_no_user_kept() -> None:
    evaluator = Evaluator(["mrr"], buffer_rows=0)
    evaluator.update(*_numbered_users([0, 1]))
    recs, truth = _numbered_users([2, 3])
    with pytest.raises(ValueError, match="rank"):
        evaluator.update(recs.with_columns(pl.lit(None, pl.Int64).alias("rank")), truth)
    evaluator.update(recs, truth)  # its users come again, not refused
    every_recs, every_truth = _numbered_users([0, 1, 2, 3])
    assert_frame_equal(
        evaluator.compute(), prm.evaluate(every_recs, every_truth, ["mrr"]), check_exact=True
    )


def test_a_user_is_whole_within_its_folds_when_the_truth_has_them() -> None:
    # by a column of both frames (a fold): a user is one per fold, and may come once per fold
    recs, truth = _numbered_users([0, 1])
    folds = [
        [frame.with_columns(pl.lit(fold).alias("fold")) for frame in (recs, truth)]
        for fold in ("a", "b")
    ]
    evaluator = Evaluator(["mrr"], by="fold")
    evaluator.update(*folds[0])
    evaluator.update(*folds[1])  # the same users in another fold
    with pytest.raises(
        ValueError, match=r"2 users of batch 3 were .* fold='a', user=0 \(batch 1\)"
    ):
        evaluator.update(folds[0][0], folds[0][1].clear())
    assert evaluator.batches == 2
