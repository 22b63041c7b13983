"""list_metrics: hand-computed values for each measure, conventions and bad input.

Every test runs on Polars eager, Polars lazy and pandas (the ``backend``
fixture). The arithmetic of each expected value is written beside it.
"""

from __future__ import annotations

import math
from typing import Any

import polars as pl
import pytest

import polars_rankmetrics as prm
from tests.conftest import Backend

# Three lists (ranks given):  u1 [a, b, c]   u2 [a, d]   u3 [e]  (shorter than k)
RECS = {
    "user": [1, 1, 1, 2, 2, 3],
    "item": ["a", "b", "c", "a", "d", "e"],
    "rank": [1, 2, 3, 1, 2, 1],
}
# Users 1, 2, 3, 4, 5 (N = 5); (1, a) is repeated and counts once:
# c_a = |{1, 2, 3, 4}| = 4, c_b = |{4}| = 1, c_c = |{5}| = 1, c_d = c_e = 0.
HISTORY = {
    "user": [1, 1, 2, 3, 4, 4, 5],
    "item": ["a", "a", "a", "a", "b", "a", "c"],
}
# Eight catalog items; f, g, h are never recommended.
CATALOG = {
    "item": ["a", "b", "c", "d", "e", "f", "g", "h"],
    "genre": ["x", "x", "y", "y", "z", "z", "x", "y"],
}


def run(backend: Backend, recs: Any, metrics: Any, **kwargs: Any) -> pl.DataFrame:
    """list_metrics on the backend's frames, the result as a Polars DataFrame."""
    for name in ("interactions", "items"):
        if isinstance(kwargs.get(name), dict):
            kwargs[name] = backend.frame(kwargs[name])
    frame = backend.frame(recs) if isinstance(recs, dict) else recs
    return backend.polars(prm.list_metrics(frame, metrics, **kwargs))


def one(result: pl.DataFrame, label: str) -> float | None:
    assert result.height == 1
    value = result[label][0]
    return None if value is None else float(value)


# ---------------------------------------------------------------------------
# Hand-computed values, one measure at a time
# ---------------------------------------------------------------------------


def test_coverage(backend: Backend) -> None:
    result = run(backend, RECS, ["coverage@2", "coverage"], items=CATALOG)
    # top 2: {a, b, d, e} -> 4 / 8; whole lists: {a, b, c, d, e} -> 5 / 8
    assert one(result, "coverage@2") == pytest.approx(0.5)
    assert one(result, "coverage") == pytest.approx(0.625)


def test_novelty(backend: Backend) -> None:
    result = run(backend, RECS, ["novelty@2"], interactions=HISTORY)
    # u1 [a, b]: (-log2(4/5) - log2(1/5)) / 2 = (0.321928 + 2.321928) / 2 = 1.321928
    # u2 [a, d]: d has c = 0, counted as 1: (0.321928 + 2.321928) / 2 = 1.321928
    # u3 [e]:    -log2(1/5) = 2.321928 (k_u = 1)
    # mean = (1.321928 + 1.321928 + 2.321928) / 3 = 1.655261
    assert one(result, "novelty@2") == pytest.approx(1.6552614282206957, abs=1e-12)


def test_arp(backend: Backend) -> None:
    result = run(backend, RECS, ["arp@2", "arp"], interactions=HISTORY)
    # @2: u1 (4 + 1) / 2 = 2.5, u2 (4 + 0) / 2 = 2, u3 0 / 1 = 0 -> 4.5 / 3 = 1.5
    # whole: u1 (4 + 1 + 1) / 3 = 2, u2 2, u3 0 -> 4 / 3
    assert one(result, "arp@2") == pytest.approx(1.5)
    assert one(result, "arp") == pytest.approx(4 / 3)


def test_long_tail(backend: Backend) -> None:
    # sum c = 6. share 0.2 -> 1.2: a (sum before 0 < 1.2) is the head; b (before 4) is not.
    result = run(backend, RECS, ["long_tail@2"], interactions=HISTORY)
    # u1 [a, b] 1/2, u2 [a, d] 1/2, u3 [e] 1 -> (0.5 + 0.5 + 1) / 3
    assert one(result, "long_tail@2") == pytest.approx(2 / 3)
    # share 0.8 -> 4.8: a (before 0), then b and c tie at c = 1: item ascending puts b
    # first (before 4 < 4.8, head) and c after it (before 5, tail). Head {a, b}:
    # u1 [a, b] 0, u2 [a, d] 1/2, u3 [e] 1 -> 1.5 / 3 (with c first, u1 would be 1/2)
    result = run(backend, RECS, ["long_tail@2"], interactions=HISTORY, head_share=0.8)
    assert one(result, "long_tail@2") == pytest.approx(0.5)
    # share 0: the empty prefix already reaches 0, so every item is in the tail
    result = run(backend, RECS, ["long_tail"], interactions=HISTORY, head_share=0.0)
    assert one(result, "long_tail") == pytest.approx(1.0)


def test_gini(backend: Backend) -> None:
    result = run(backend, RECS, ["gini@2"], items=CATALOG)
    # x at top 2: a 2, b 1, d 1, e 1, and c f g h 0; sorted [0,0,0,0,1,1,1,2], n = 8, sum 5
    # sum (2j - 9) x_(j) = 1*1 + 3*1 + 5*1 + 7*2 = 23 -> 23 / (8 * 5) = 0.575
    assert one(result, "gini@2") == pytest.approx(0.575)


def test_gini_equal_exposure_of_the_whole_catalog_is_zero(backend: Backend) -> None:
    recs = {"user": [1, 2], "item": ["a", "b"], "rank": [1, 1]}
    result = run(backend, recs, ["gini"], items={"item": ["a", "b"]})
    # x = [1, 1]: (-1)*1 + 1*1 = 0
    assert one(result, "gini") == pytest.approx(0.0)


def test_personalization(backend: Backend) -> None:
    result = run(backend, RECS, ["personalization@2", "personalization"])
    # U = 3 users, 3 pairs. Only a is shared (x_a = 2): 1 pair shares 1 item.
    # @2: 1 - 1 / (3 * 2) = 0.833333 (pairs: u1-u2 overlap 1/2, the others 0)
    # whole lists, compared at the longest length 3: 1 - 1 / (3 * 3) = 0.888889
    assert one(result, "personalization@2") == pytest.approx(5 / 6)
    assert one(result, "personalization") == pytest.approx(8 / 9)


def test_personalization_of_one_user_is_undefined(backend: Backend) -> None:
    recs = {"user": [1, 1], "item": ["a", "b"], "rank": [1, 2]}
    assert one(run(backend, recs, ["personalization@2"]), "personalization@2") is None


def test_ild_one_category(backend: Backend) -> None:
    result = run(backend, RECS, ["ild@3"], items=CATALOG, category="genre")
    # u1 [a x, b x, c y]: pairs ab 0, ac 1, bc 1 -> 2/3; u2 [a x, d y]: 1;
    # u3 has one item (no pair): not counted -> (2/3 + 1) / 2
    assert one(result, "ild@3") == pytest.approx(5 / 6)


MULTI = {
    "item": ["a", "b", "c", "d", "e"],
    "genre": [["x", "y"], ["x"], ["y", "z"], ["y", "x", "x"], ["z"]],
}


def test_ild_several_categories(backend: Backend) -> None:
    result = run(backend, RECS, ["ild"], items=MULTI, category="genre")
    # u1: a {x,y} b {x}: J = 1/2 -> 0.5; a, c {y,z}: J = 1/3 -> 2/3; b, c: J = 0 -> 1
    #     mean (0.5 + 0.666667 + 1) / 3 = 0.722222
    # u2: a {x,y}, d {x,y} (the repeated x counts once): J = 1 -> 0
    # mean over u1, u2 = 0.361111
    assert one(result, "ild") == pytest.approx((0.5 + 2 / 3 + 1) / 3 / 2)


def test_calibration(backend: Backend) -> None:
    history = {"user": [1, 1, 3, 3], "item": ["b", "c", "e", "e"]}
    result = run(
        backend, RECS, ["calibration@3"], interactions=history, items=MULTI, category="genre"
    )
    # u1 history {b, c}: b {x} -> x 1; c {y, z} -> y 1/2, z 1/2; p = x .5, y .25, z .25
    # u1 list [a, b, c]: a x .5 y .5; b x 1; c y .5 z .5 -> q = x 1.5/3, y 1/3, z .5/3
    # q~ = .99 q + .01 p: x .5, y .3325, z .1675
    # KL = .5 ln(.5/.5) + .25 ln(.25/.3325) + .25 ln(.25/.1675)
    #    = 0 + .25 * -0.285179 + .25 * 0.400478 = 0.028825
    # u2 has no interactions: not counted. u3 history {e} (repeat counts once): p = q = z 1
    # -> 0. mean (0.028825 + 0) / 2 = 0.014412
    assert one(result, "calibration@3") == pytest.approx(0.014412328045432882, abs=1e-12)
    per_user = run(
        backend,
        RECS,
        ["calibration@3"],
        interactions=history,
        items=MULTI,
        category="genre",
        per_user=True,
    )
    values = dict(zip(per_user["user"], per_user["calibration@3"], strict=True))
    assert values[1] == pytest.approx(0.028824656090865763, abs=1e-12)
    assert values[2] is None
    assert values[3] == pytest.approx(0.0)


def test_calibration_alpha_one_is_zero(backend: Backend) -> None:
    # alpha = 1: q~ = p, so every divergence is 0
    result = run(
        backend, RECS, ["calibration"], interactions=HISTORY, items=CATALOG, category="genre",
        alpha=1.0,
    )  # fmt: skip
    assert one(result, "calibration") == pytest.approx(0.0)


# ---------------------------------------------------------------------------
# Populations, groups, cuts and ranks from scores
# ---------------------------------------------------------------------------


def test_per_user_values(backend: Backend) -> None:
    result = run(
        backend, RECS, ["novelty@2", "arp@2", "long_tail@2", "ild@2"], interactions=HISTORY,
        items=CATALOG, category="genre", per_user=True,
    )  # fmt: skip
    assert result["user"].to_list() == [1, 2, 3]
    assert result["arp@2"].to_list() == pytest.approx([2.5, 2.0, 0.0])
    assert result["long_tail@2"].to_list() == pytest.approx([0.5, 0.5, 1.0])
    # u1 [a x, b x] 0; u2 [a x, d y] 1; u3 one item: null
    assert result["ild@2"].to_list()[:2] == pytest.approx([0.0, 1.0])
    assert result["ild@2"][2] is None


def test_ranks_beyond_the_cut_leave_a_user_out(backend: Backend) -> None:
    # u2's only item is at rank 3: its list is empty at k = 2 and it is not a user there
    recs = {"user": [1, 1, 2], "item": ["a", "b", "a"], "rank": [1, 2, 3]}
    result = run(backend, recs, ["arp@2", "arp", "personalization@2"], interactions=HISTORY)
    assert one(result, "arp@2") == pytest.approx(2.5)  # u1 only: (4 + 1) / 2
    assert one(result, "arp") == pytest.approx((2.5 + 4.0) / 2)
    assert one(result, "personalization@2") is None  # one user


def test_groups_side_by_side_with_their_own_history(backend: Backend) -> None:
    recs = {
        "fold": [1, 1, 2, 2],
        "model": ["p", "q", "p", "q"],
        "user": [1, 1, 1, 1],
        "item": ["a", "b", "a", "b"],
        "rank": [1, 1, 1, 1],
    }
    # fold 1: a seen by users 1 and 2 (N = 2); fold 2: b seen by user 3 (N = 1)
    history = {"fold": [1, 1, 2], "user": [1, 2, 3], "item": ["a", "a", "b"]}
    result = run(
        backend, recs, ["arp", "novelty", "coverage"], interactions=history,
        items={"item": ["a", "b", "c", "d"]}, by=["fold", "model"],
    )  # fmt: skip
    assert result.select("fold", "model").rows() == [(1, "p"), (1, "q"), (2, "p"), (2, "q")]
    # fold 1: c_a = 2, c_b = 0; fold 2: c_a = 0, c_b = 1
    assert result["arp"].to_list() == pytest.approx([2.0, 0.0, 0.0, 1.0])
    # novelty: fold 1 p: -log2(2/2) = 0; q: -log2(1/2) = 1; fold 2 p: -log2(1/1) = 0; q: 0
    assert result["novelty"].to_list() == pytest.approx([0.0, 1.0, 0.0, 0.0])
    assert result["coverage"].to_list() == pytest.approx([0.25] * 4)


def test_ranks_from_scores_follow_the_tie_rule(backend: Backend) -> None:
    recs = {"user": [1, 1, 1], "item": ["a", "b", "c"], "score": [0.9, 0.5, 0.5]}
    catalog = {"item": ["a", "b", "c"], "genre": ["x", "x", "y"]}
    # item_desc (default): [a, c, b] -> top 2 [a x, c y]: ILD 1; item_asc: [a, b]: 0
    desc = run(backend, recs, ["ild@2"], score="score", items=catalog, category="genre")
    asc = run(
        backend, recs, ["ild@2"], score="score", items=catalog, category="genre", ties="item_asc"
    )
    assert one(desc, "ild@2") == pytest.approx(1.0)
    assert one(asc, "ild@2") == pytest.approx(0.0)


def test_categorical_and_integer_ids_and_categories(backend: Backend) -> None:
    recs = pl.DataFrame(RECS).with_columns(pl.col("item").cast(pl.Categorical))
    catalog = pl.DataFrame(CATALOG).with_columns(pl.col("genre").cast(pl.Categorical))
    result = run(
        backend, backend.frame(recs), ["ild@3", "novelty@2"], interactions=HISTORY,
        items=backend.frame(catalog), category="genre",
    )  # fmt: skip
    assert one(result, "ild@3") == pytest.approx(5 / 6)
    assert one(result, "novelty@2") == pytest.approx(1.6552614282206957)
    codes = {"x": 0, "y": 1, "z": 2}
    numeric = {"item": CATALOG["item"], "genre": [codes[g] for g in CATALOG["genre"]]}
    result = run(backend, RECS, ["ild@3"], items=numeric, category="genre")
    assert one(result, "ild@3") == pytest.approx(5 / 6)


def test_inputs_are_not_modified(backend: Backend) -> None:
    recs, history = backend.frame(RECS), backend.frame(HISTORY)
    before = backend.polars(recs), backend.polars(history)
    prm.list_metrics(recs, ["novelty@2"], interactions=history)
    assert backend.polars(recs).equals(before[0])
    assert backend.polars(history).equals(before[1])


def test_namespace_free_function_on_a_lazy_frame_stays_lazy() -> None:
    result = prm.list_metrics(pl.LazyFrame(RECS), ["personalization@2"])
    assert isinstance(result, pl.LazyFrame)


# ---------------------------------------------------------------------------
# Bad input
# ---------------------------------------------------------------------------


def test_list_item_missing_from_the_catalog(backend: Backend) -> None:
    catalog = {"item": ["a", "b", "c", "d"], "genre": ["x"] * 4}
    with pytest.raises(ValueError, match=r"1 distinct item\(s\) of the recommended items are "
                       r"missing from the item catalog.*item='e'"):  # fmt: skip
        run(backend, RECS, ["coverage"], items=catalog)


def test_interaction_item_missing_from_the_catalog_for_calibration(backend: Backend) -> None:
    history = {"user": [1], "item": ["zz"]}
    with pytest.raises(ValueError, match=r"interactions' items are missing.*item='zz'"):
        run(backend, RECS, ["calibration"], interactions=history, items=CATALOG, category="genre")


@pytest.mark.parametrize(
    ("metrics", "given", "message"),
    [
        (["coverage@10"], {}, r"coverage need items="),
        (["gini"], {"interactions": HISTORY}, r"gini need items="),
        (["novelty", "arp@5"], {}, r"arp, novelty need interactions="),
        (["long_tail"], {"items": CATALOG}, r"long_tail need interactions="),
        (["ild"], {"items": CATALOG}, r"ild need category="),
        (["ild"], {}, r"ild need items=.*ild need category="),
        (["calibration"], {"items": CATALOG, "category": "genre"}, r"calibration need interact"),
        (["calibration"], {"interactions": HISTORY}, r"calibration need items="),
    ],
)
def test_missing_inputs_name_the_parameter(
    backend: Backend, metrics: list[str], given: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        run(backend, RECS, metrics, **given)


def test_interactions_without_key_columns(backend: Backend) -> None:
    with pytest.raises(ValueError, match=r"interactions is missing column 'user'"):
        run(backend, RECS, ["arp"], interactions={"customer": [1], "item": ["a"]})


def test_key_dtypes_that_cannot_match(backend: Backend) -> None:
    with pytest.raises(TypeError, match=r"key column 'item' has dtype String in recs but Int64 in "
                       r"interactions"):  # fmt: skip
        run(backend, RECS, ["arp"], interactions={"user": [1], "item": [7]})
    with pytest.raises(TypeError, match=r"key column 'item'.*in items"):
        run(backend, RECS, ["coverage"], items={"item": [1, 2]})


def test_category_of_the_wrong_dtype(backend: Backend) -> None:
    catalog = {"item": CATALOG["item"], "genre": [0.5] * 8}
    with pytest.raises(TypeError, match=r"items column 'genre' \(category\) must hold"):
        run(backend, RECS, ["ild"], items=catalog, category="genre")


def test_nulls_in_keys(backend: Backend) -> None:
    history = {"user": [1, None], "item": ["a", "b"]}
    with pytest.raises(ValueError, match=r"interactions column 'user' \(user\) has 1 null"):
        run(backend, RECS, ["arp"], interactions=history)
    catalog = {"item": ["a", "b", "c", "d", "e", None], "genre": ["x"] * 6}
    with pytest.raises(ValueError, match=r"items column 'item' \(item\) has 1 null"):
        run(backend, RECS, ["coverage"], items=catalog)


def test_nan_in_float_keys(backend: Backend) -> None:
    recs = {"user": [1.0, 2.0], "item": ["a", "b"], "rank": [1, 1]}
    history = {"user": [1.0, float("nan")], "item": ["a", "b"]}
    # pandas hands NaN to Polars as a missing value: a null there
    with pytest.raises(ValueError, match=r"interactions column 'user' \(user\) has 1 (NaN|null)"):
        run(backend, recs, ["arp"], interactions=history)


def test_catalog_item_twice(backend: Backend) -> None:
    catalog = {"item": ["a", "b", "c", "d", "e", "a"], "genre": ["x"] * 6}
    with pytest.raises(ValueError, match=r"items has 2 rows with a duplicated \(item\): one row"):
        run(backend, RECS, ["coverage"], items=catalog, category="genre")


def test_items_without_a_category(backend: Backend) -> None:
    catalog = {"item": ["a", "b", "c", "d", "e"], "genre": [["x"], [], ["y"], ["x"], None]}
    with pytest.raises(ValueError, match=r"'genre' \(category\) has 2 item\(s\) without a cat"):
        run(backend, RECS, ["ild"], items=catalog, category="genre")


def test_item_twice_in_a_list(backend: Backend) -> None:
    recs = {"user": [1, 1], "item": ["a", "a"], "rank": [1, 2]}
    with pytest.raises(ValueError, match=r"duplicated \(user, item\)"):
        run(backend, recs, ["personalization"])
    result = run(backend, recs, ["coverage"], items=CATALOG, duplicates="first")
    assert one(result, "coverage") == pytest.approx(1 / 8)


def test_group_measures_per_user_are_refused() -> None:
    with pytest.raises(
        ValueError, match=r"\['coverage@5', 'personalization'\] describe a whole group"
    ):
        prm.list_metrics(pl.DataFrame(RECS), ["coverage@5", "personalization"], per_user=True)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"head_share": 1.5}, ValueError, r"head_share must be between 0 and 1"),
        ({"alpha": 0.0}, ValueError, r"alpha must be in \(0, 1\]"),
        ({"alpha": "x"}, TypeError, r"alpha must be a number"),
    ],
)
def test_bad_parameters(kwargs: dict[str, Any], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        prm.list_metrics(pl.DataFrame(RECS), ["arp"], interactions=pl.DataFrame(HISTORY), **kwargs)


def test_unknown_measure_suggests_the_closest() -> None:
    with pytest.raises(ValueError, match=r"unknown measure 'novelt'.*did you mean 'novelty'"):
        prm.list_metrics(pl.DataFrame(RECS), ["novelt@5"])
    with pytest.raises(ValueError, match=r"must be >= 1"):
        prm.list_metrics(pl.DataFrame(RECS), ["arp@0"])


def test_lazy_errors_are_raised_at_collect() -> None:
    history = pl.LazyFrame({"user": [1, None], "item": ["a", "b"]})
    query = prm.list_metrics(pl.LazyFrame(RECS), ["arp"], interactions=history)
    with pytest.raises(ValueError, match=r"has 1 null"):
        query.collect()


def test_novelty_is_finite_for_items_nobody_saw() -> None:
    recs = pl.DataFrame({"user": [1], "item": ["new"], "rank": [1]})
    result = prm.list_metrics(recs, ["novelty"], interactions=pl.DataFrame(HISTORY))
    # max(c, 1) = 1: -log2(1 / 5)
    assert result["novelty"][0] == pytest.approx(math.log2(5))


def test_no_list_within_the_cut_describes_nothing(backend: Backend) -> None:
    # the only list starts at rank 3: at k = 2 there is no list, so no value (not coverage 0)
    recs = {"user": [1], "item": ["a"], "rank": [3]}
    result = run(backend, recs, ["coverage@2", "arp@2"], items=CATALOG, interactions=HISTORY)
    assert result.row(0) == (None, None)
    # with by, such a group has no row at all
    recs = {"model": ["p", "q"], "user": [1, 1], "item": ["a", "a"], "rank": [1, 3]}
    result = run(backend, recs, ["coverage@2"], items=CATALOG, by="model")
    assert result.rows() == [("p", 0.125)]
