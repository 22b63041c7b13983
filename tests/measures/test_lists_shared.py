"""Several list measures in one call share the coded lists: same values as one at a time.

ILD and calibration run on integer codes of the lists, items and categories
(packed two to an integer); asked together, at one or several cutoffs, they
share that coding. Here each is also computed alone, and the wide packing
(64-bit indices: Int128 keys) gives the same numbers as the 32-bit one.
"""

from __future__ import annotations

import math

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankmetrics as prm

RECS = pl.DataFrame(
    {
        "fold": ["f1"] * 7 + ["f2"] * 4,
        "model": ["a", "a", "a", "b", "b", "b", "b", "a", "a", "a", "b"],
        "user": ["u1", "u1", "u1", "u1", "u1", "u2", "u2", "u1", "u1", "u3", "u3"],
        "item": ["i1", "i2", "i3", "i4", "i1", "i3", "i5", "i2", "i5", "i1", "i4"],
        "rank": [1, 2, 3, 1, 3, 1, 2, 1, 2, 1, 1],
    }
)
HISTORY = pl.DataFrame(
    {
        "fold": ["f1", "f1", "f1", "f1", "f2", "f2", "f2"],
        "user": ["u1", "u1", "u2", "u1", "u1", "u3", "u3"],
        "item": ["i1", "i4", "i5", "i1", "i3", "i2", "i5"],
    }
)
ITEMS = pl.DataFrame(
    {
        "item": ["i1", "i2", "i3", "i4", "i5"],
        "genre": [["x", "y"], ["x"], ["y", "z"], ["z"], ["x", "y", "z"]],
    }
)
METRICS = ["ild@2", "ild", "calibration@2", "calibration", "novelty@2", "coverage@3"]


def _run(metrics: list[str], *, per_user: bool = True) -> pl.DataFrame:
    keys = ["fold", "model", "user"] if per_user else ["fold", "model"]
    return prm.list_metrics(
        RECS,
        metrics,
        interactions=HISTORY,
        items=ITEMS,
        category="genre",
        by=["fold", "model"],
        per_user=per_user,
    ).sort(keys)


def _same(left: pl.DataFrame, right: pl.DataFrame) -> None:
    # the sums run in another order: equal up to rounding
    assert_frame_equal(left, right, rel_tol=1e-12, abs_tol=1e-12)


@pytest.mark.parametrize("per_user", [True, False], ids=["per-user", "means"])
def test_one_call_equals_separate_calls(*, per_user: bool) -> None:
    metrics = [m for m in METRICS if not (per_user and m.startswith("coverage"))]
    together = _run(metrics, per_user=per_user)
    keys = ["fold", "model", "user"] if per_user else ["fold", "model"]
    for metric in metrics:
        _same(together.select(*keys, metric), _run([metric], per_user=per_user))


def test_hand_worked_values_in_one_call() -> None:
    result = _run(["ild@2", "calibration@2"])
    row = result.row(0, named=True)  # f1, model a, u1: top 2 = i1 {x,y}, i2 {x}
    # ILD: J({x,y}, {x}) = 1/2 -> 0.5
    assert row["ild@2"] == pytest.approx(0.5)
    # history of u1 in f1: i1 (twice, counts once), i4 -> p = x 1/4, y 1/4, z 1/2;
    # list: q = x 3/4, y 1/4, z 0; q~ = 0.99 q + 0.01 p
    p = {"x": 0.25, "y": 0.25, "z": 0.5}
    q = {"x": 0.75, "y": 0.25, "z": 0.0}
    expected = sum(p[c] * math.log(p[c] / (0.99 * q[c] + 0.01 * p[c])) for c in p)
    assert row["calibration@2"] == pytest.approx(expected, abs=1e-12)


def test_wide_codes_give_the_same_values(monkeypatch: pytest.MonkeyPatch) -> None:
    metrics = [m for m in METRICS if not m.startswith("coverage")]
    narrow = _run(metrics)
    # a 64-bit-index build of Polars: codes are UInt64 and pairs pack into an Int128
    monkeypatch.setattr(pl, "get_index_type", pl.UInt64)
    _same(_run(metrics), narrow)


def test_per_user_cutoff_below_the_cut_of_a_group_measure() -> None:
    # coverage without a cutoff keeps whole lists; ild@1 still reads only position 1
    # (one item: no pair, null) and calibration@1 only the top item
    together = _run(["coverage", "ild@1", "calibration@1"], per_user=False)
    assert together["ild@1"].null_count() == together.height
    _same(
        together.select("fold", "model", "calibration@1"), _run(["calibration@1"], per_user=False)
    )
