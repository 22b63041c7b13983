"""``top_k``: a score matrix to the long frame, equal to a NumPy argsort textbook.

The textbook sorts each row completely (``np.lexsort`` on the score, then the
tie order of the item ids) and keeps its first k, excluded items left out:
nothing of the chunked partition the function uses. Hypothesis draws small
matrices with many ties (scores from a few values, infinities included), ids
of both kinds, exclusions and chunk sizes.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from polars.testing import assert_frame_equal

import polars_rankmetrics as prm
from polars_rankmetrics import top_k

TIES = ("item_desc", "item_asc", "input")


def textbook(
    scores: np.ndarray[Any, Any],
    k: int,
    users: list[Any],
    items: list[Any],
    excluded: set[tuple[Any, Any]],
    ties: str,
) -> pl.DataFrame:
    """Each row sorted whole by score descending, equal scores in the tie order; its first k."""
    if ties == "input":
        place = list(range(len(items)))
    else:
        order = sorted(range(len(items)), key=lambda c: items[c], reverse=ties == "item_desc")
        place = [0] * len(items)
        for position, column in enumerate(order):
            place[column] = position
    rows = []
    for r, user in enumerate(users):
        columns = [c for c in range(len(items)) if (user, items[c]) not in excluded]
        columns.sort(key=lambda c: (-float(scores[r, c]), place[c]))
        rows += [(user, items[c], scores[r, c], n + 1) for n, c in enumerate(columns[:k])]
    return pl.DataFrame(
        rows,
        schema={
            "user": pl.Series(users).dtype,
            "item": pl.Series(items).dtype,
            "score": pl.Series(scores.reshape(-1)).dtype,
            "rank": pl.UInt32,
        },
        orient="row",
    )


@st.composite
def cases(draw: st.DrawFn) -> dict[str, Any]:
    n_users = draw(st.integers(1, 6))
    n_items = draw(st.integers(1, 8))
    dtype = draw(st.sampled_from([np.float64, np.float32, np.int32]))
    tiny = {np.float64: 1e-300, np.float32: float(np.float32(1e-30))}
    values = (
        st.sampled_from([0, 1, 2, 3])
        if dtype == np.int32
        # a tiny positive score of the dtype (float32 holds no 1e-300: it would become 0)
        else st.sampled_from([0.0, 0.5, 1.0, -1.0, float("inf"), float("-inf"), tiny[dtype]])
    )
    scores = draw(hnp.arrays(dtype, (n_users, n_items), elements=values))
    strings = draw(st.booleans())
    ids = st.text("abc", min_size=1, max_size=3) if strings else st.integers(-50, 50)
    users = draw(st.lists(ids, min_size=n_users, max_size=n_users, unique=True))
    items = draw(st.lists(ids, min_size=n_items, max_size=n_items, unique=True))
    pairs = st.tuples(st.sampled_from(users), st.sampled_from(items))
    excluded = draw(st.sets(pairs, max_size=n_users * n_items))
    return {
        "scores": scores,
        "k": draw(st.integers(1, n_items + 2)),
        "users": users,
        "items": items,
        "excluded": excluded,
        "ties": draw(st.sampled_from(TIES)),
        "chunk_rows": draw(st.sampled_from([None, 1, 2, 4])),
    }


@settings(max_examples=300, deadline=None)
@given(cases())
def test_top_k_equals_the_textbook(case: dict[str, Any]) -> None:
    exclude = pl.DataFrame(
        list(case["excluded"]),
        schema={"user": pl.Series(case["users"]).dtype, "item": pl.Series(case["items"]).dtype},
        orient="row",
    )
    before = case["scores"].copy()
    result = top_k(
        case["scores"],
        case["k"],
        users=case["users"],
        items=case["items"],
        exclude=exclude,
        ties=case["ties"],
        chunk_rows=case["chunk_rows"],
    )
    expected = textbook(
        case["scores"], case["k"], case["users"], case["items"], case["excluded"], case["ties"]
    )
    assert_frame_equal(result, expected, check_exact=True)
    np.testing.assert_array_equal(case["scores"], before)  # the matrix is never modified


@settings(max_examples=60, deadline=None)
@given(cases())
# every score tied, k past the list: precision 7/9 must have the same bits for a user that
# Polars holds alone in a chunk (divided exactly there, by the reciprocal elsewhere)
@example({
    "scores": np.full((3, 7), 0.5), "k": 9, "users": ["a", "b", "aa"],
    "items": ["a", "b", "c", "aa", "ab", "bb", "aaa"], "excluded": set(),
    "ties": "item_desc", "chunk_rows": None,
})  # fmt: skip
def test_evaluate_ranks_the_kept_items_as_it_ranks_the_whole_matrix(case: dict[str, Any]) -> None:
    scores, users, items = case["scores"], case["users"], case["items"]
    if np.issubdtype(scores.dtype, np.floating) and not np.isfinite(scores).all():
        scores = np.nan_to_num(scores, posinf=9.0, neginf=-9.0)
    k = case["k"]
    whole = pl.DataFrame({
        "user": np.repeat(np.array(users, dtype=object), len(items)).tolist(),
        "item": np.tile(np.array(items, dtype=object), len(users)).tolist(),
        "score": scores.reshape(-1).astype(np.float64),
    })  # fmt: skip
    truth = whole.filter(pl.col("score") > 0.4).select("user", "item")
    kept = top_k(scores, k, users=users, items=items, ties=case["ties"]).with_columns(
        pl.col("score").cast(pl.Float64)
    )
    metrics = [f"ndcg@{k}", f"precision@{k}", f"map@{k}", f"mrr@{k}"]
    options: dict[str, Any] = {"score": "score", "ties": case["ties"], "per_user": True}
    assert_frame_equal(
        prm.evaluate(kept.drop("rank"), truth, metrics, **options),
        prm.evaluate(whole, truth, metrics, **options),
        check_exact=True,
    )


def test_worked_example_with_exclusions_and_a_short_row() -> None:
    scores = np.array([[0.1, 0.9, 0.4, 0.9], [0.3, 0.2, 0.1, 0.0]], dtype=np.float32)
    seen = pl.DataFrame({"user": ["u1", "u2", "u2", "u9"], "item": ["d", "a", "b", "a"]})
    result = top_k(scores, 3, users=["u1", "u2"], items=["a", "b", "c", "d"], exclude=seen)
    assert result.rows() == [
        ("u1", "b", pytest.approx(0.9), 1),  # d ties with b but is excluded
        ("u1", "c", pytest.approx(0.4), 2),
        ("u1", "a", pytest.approx(0.1), 3),
        ("u2", "c", pytest.approx(0.1), 1),
        ("u2", "d", pytest.approx(0.0), 2),  # only two items left for u2
    ]
    assert result.schema["score"] == pl.Float32


def test_default_ids_and_the_tie_order_at_the_cut() -> None:
    scores = np.zeros((2, 5))
    assert top_k(scores, 2)["item"].to_list() == [4, 3, 4, 3]  # trec_eval: ids descending
    assert top_k(scores, 2, ties="item_asc")["item"].to_list() == [0, 1, 0, 1]
    assert top_k(scores, 9)["rank"].to_list() == [1, 2, 3, 4, 5] * 2


class _Tensor:
    """A stand-in for a tensor library: DLPack and slicing only (what ``top_k`` reads)."""

    def __init__(self, array: np.ndarray[Any, Any]) -> None:
        self._array = array
        self.shape = array.shape

    def __getitem__(self, key: slice) -> _Tensor:
        return _Tensor(self._array[key])

    def __dlpack__(self, **kwargs: Any) -> Any:
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self) -> tuple[int, int]:
        return self._array.__dlpack_device__()


def test_any_tensor_with_dlpack_gives_the_numpy_result() -> None:
    scores = np.random.default_rng(3).random((7, 5))
    assert_frame_equal(top_k(_Tensor(scores), 3, chunk_rows=2), top_k(scores, 3))
    torch = pytest.importorskip("torch")
    assert_frame_equal(top_k(torch.from_numpy(scores), 3), top_k(scores, 3))
    with pytest.raises(TypeError, match=r"could not be read through DLPack.*scores.detach\(\)"):
        top_k(torch.from_numpy(scores).requires_grad_(), 3)


@pytest.mark.parametrize(
    ("scores", "kwargs", "error", "message"),
    [
        (
            np.array([[0.1, np.nan], [0.2, 0.3]]),
            {},
            ValueError,
            r"NaN .* row 0, column 1 \(user 0, item 1\)",
        ),
        (np.zeros(3), {}, ValueError, r"must be 2-D .* shape \(3,\)"),
        ([[0.1, 0.2]], {}, TypeError, r"NumPy array or a tensor with __dlpack__.* np.asarray"),
        (pl.DataFrame({"a": [1.0]}), {}, TypeError, "goes to evaluate directly"),
        (np.array([["a", "b"]]), {}, TypeError, "real numbers"),
        (
            np.zeros((2, 2)),
            {"users": [1, 1]},
            ValueError,
            r"users holds 2 repeated ids, e.g. 1 at rows \[0, 1\]",
        ),
        (
            np.zeros((2, 2)),
            {"items": ["a"]},
            ValueError,
            "items holds 1 ids but scores has 2 columns",
        ),
        (np.zeros((2, 2)), {"items": ["a", None]}, ValueError, "missing ids"),
        (np.zeros((2, 2)), {"k": 0}, ValueError, "k must be a positive integer"),
        (np.zeros((2, 2)), {"ties": "average"}, ValueError, "'average' is not an order"),
        (np.zeros((2, 2)), {"chunk_rows": 0}, ValueError, "chunk_rows must be"),
        (
            np.zeros((2, 2)),
            {"exclude": pl.DataFrame({"user": [0]})},
            ValueError,
            "no column 'item'",
        ),
        (
            np.zeros((2, 2)),
            {"exclude": pl.DataFrame({"user": ["x"], "item": [0]})},
            TypeError,
            "both as numbers or both as strings",
        ),
    ],
)
def test_bad_input_is_refused_with_what_and_where(
    scores: Any, kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    k = kwargs.pop("k", 1)
    with pytest.raises(error, match=message):
        top_k(scores, k, **kwargs)
