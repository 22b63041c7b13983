"""The same call gives the same bits twice, for every measure of the registry.

Polars 2 collects with its streaming engine: a group's float values are added
in the order its threads meet them, and joins do not keep row order, so a sum
over rows that come from a join or from several places can change in the last
bit from call to call (and a tie broken on it can flip). The measures add such
rows exactly (:mod:`polars_rankmetrics._sums`). This test evaluates
every measure the registry accepts under the default conventions (the same
labels as :mod:`tests.test_one_number`), per user and through ``curves``, on
data large enough to spread a list's rows over several morsels and threads,
several times, and asks for identical frames.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
import pytest

import polars_rankmetrics as prm
from polars_rankmetrics._measures import Measure, lookup
from tests.test_one_number import MEASURES, reference

# every measure twice on the same larger data: the properties suite (python -m pytest -m properties)
pytestmark = pytest.mark.properties

REPEATS = 2
USERS, ROWS, ITEMS = 2000, 20, 600


@pytest.fixture(scope="module")
def data() -> dict[str, Any]:
    rng = np.random.default_rng(7)
    n = USERS * ROWS
    recs = pl.DataFrame(
        {
            "model": np.repeat(["A", "B"], n),
            "user": np.tile(np.repeat(np.arange(USERS), ROWS), 2),
            "item": rng.integers(0, ITEMS, 2 * n),
            # few distinct scores: many ties, broken by the tie rule
            "score": rng.integers(0, 12, 2 * n) / 11.0,
        }
    ).unique(["model", "user", "item"], maintain_order=True)
    m = USERS * 5
    truth = pl.DataFrame(
        {
            "user": rng.integers(0, USERS, m),
            "item": rng.integers(0, ITEMS, m),
            "rel": rng.integers(-1, 4, m),
            # the judgement's subtopic (the diversity measures read it)
            "subtopic": rng.integers(0, 3, m),
        }
    ).unique(["user", "item"], maintain_order=True)
    interactions = pl.DataFrame(
        {"user": rng.integers(0, USERS, 20 * USERS), "item": rng.integers(0, ITEMS, 20 * USERS)}
    )
    # one to three genres and one or two sides per item: fractional weights (1/3), whose
    # float sums depend on their order
    genres, sides = ["x", "y", "z", "w"], ["a", "b"]
    items = pl.DataFrame(
        {
            "item": np.arange(ITEMS),
            "genre": [
                list(rng.choice(genres, rng.integers(1, 4), replace=False)) for _ in range(ITEMS)
            ],
            "side": [
                list(rng.choice(sides, rng.integers(1, 3), replace=False)) for _ in range(ITEMS)
            ],
        }
    )
    return {
        "recs": recs,
        "truth": truth,
        "by": "model",
        "score": "score",
        "relevance": "rel",
        "interactions": interactions,
        "items": items,
        "category": "genre",
        "group": "side",
    }


# parameters whose terms are not dyadic (p = 0.5's attention 2^-r sums exactly in any order)
NOT_DYADIC = ["exposure_gini(p=0.8)@10", "awrf(p=0.8)@10"]


def _accepted() -> list[str]:
    """The labels evaluate accepts, at k = 10: lists long enough for many terms per sum."""
    return [
        label if MEASURES[label].cutoff == "none" else f"{label.split('@')[0]}@10"
        for label, want in reference("default").items()
        if isinstance(want, dict)
    ] + NOT_DYADIC


def _differences(first: pl.DataFrame, again: pl.DataFrame) -> list[str]:
    assert first.columns == again.columns
    assert first.height == again.height
    return [
        name
        for name in first.columns
        if not first.get_column(name).equals(again.get_column(name), check_names=True)
    ]


@pytest.mark.parametrize("per_user", [True, False], ids=["per_user", "means"])
def test_evaluate_twice(data: dict[str, Any], per_user: bool) -> None:
    labels = _accepted()
    assert len(labels) > len(MEASURES) // 2  # the registry, not a handful

    def run() -> pl.DataFrame:
        return prm.evaluate(per_user=per_user, metrics=labels, **data)  # type: ignore[arg-type,no-any-return]

    first = run()
    changed: set[str] = set()
    for _ in range(REPEATS):
        changed.update(_differences(first, run()))
    assert not changed, f"values changed between identical calls: {sorted(changed)}"


def _drawn(measure: Measure) -> bool:
    return measure.curve is not None or measure.lists is not None


def test_curves_twice(data: dict[str, Any]) -> None:
    # the measures curves draws: not pauc@k and pap@k (their k counts negatives), which
    # declare no curve step
    names = [
        label.split("@")[0]
        for label in _accepted()
        if "@" in label and _drawn(lookup(label.split("@")[0].split("(")[0]))
    ]

    def run() -> pl.DataFrame:
        return prm.curves(metrics=names, k=[1, 3, 10], **data)  # type: ignore[arg-type,no-any-return]

    first = run()
    changed: list[str] = []
    for _ in range(REPEATS):
        again = run()
        if not first.equals(again):
            joined = first.join(again, on=["model", "metric", "k"], suffix="_again")
            moved = joined.filter(pl.col("value").ne_missing(pl.col("value_again")))
            changed += moved.get_column("metric").unique().to_list()
    assert not changed, f"curves changed between identical calls: {sorted(set(changed))}"
