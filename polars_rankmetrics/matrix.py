"""``top_k``: a model's score matrix to the long frame every function takes.

The engine, in row chunks and with evaluate's tie order, is
:mod:`polars_rankmetrics._matrix`.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from polars_rankmetrics import _matrix
from polars_rankmetrics._frames import AnyFrame, read
from polars_rankmetrics.conventions import Conventions, Ties

__all__ = ["top_k"]


def top_k(
    scores: object,
    k: int,
    *,
    users: Sequence[object] | pl.Series | None = None,
    items: Sequence[object] | pl.Series | None = None,
    exclude: AnyFrame | None = None,
    user: str = "user",
    item: str = "item",
    score: str = "score",
    rank: str = "rank",
    ties: Ties | None = None,
    chunk_rows: int | None = None,
) -> pl.DataFrame:
    """Each user's k best items of a score matrix, as a long frame (user, item, score, rank).

    Parameters
    ----------
    scores
        An (n users x m items) matrix, higher is better: a NumPy array or any
        tensor with ``__dlpack__`` (PyTorch, JAX, CuPy; a tensor on a GPU is
        copied to main memory one chunk of rows at a time, where its library
        supports it). Floats or integers (integers compared as float64); NaN
        is refused with its row and column. Never modified.
    k
        How many items to keep per user (all of them when the matrix has fewer).
    users, items
        The ids of the rows and the columns, unique; default ``0..n-1`` and
        ``0..m-1`` (Int64).
    exclude
        Pairs (``user``, ``item``) never to recommend (items already seen), any
        frame kind; pairs outside the matrix are ignored. A user left with
        fewer than k items keeps them all.
    user, item, score, rank
        The names of the result's columns.
    ties
        The order of equal scores, evaluate's (``"item_desc"``, trec_eval's and
        the default; ``"item_asc"``; ``"input"``: column order). So
        ``evaluate(top_k(s, k), truth, ["ndcg@10"], score="score")`` ranks the
        kept items exactly as it ranks the whole matrix's long frame.
    chunk_rows
        Rows per chunk (default: about 16M cells a chunk); the memory held is
        one chunk's working copies plus the n x k rows kept.

    Returns
    -------
    pl.DataFrame
        n x min(k, m) rows (fewer where items are excluded), sorted by user
        position then rank; ``score`` keeps the matrix's dtype, ``rank``
        (UInt32) counts 1..k.

    Examples
    --------
    >>> import numpy as np
    >>> from polars_rankmetrics import top_k
    >>> scores = np.array([[0.1, 0.9, 0.4], [0.7, 0.7, 0.2]])
    >>> top_k(scores, 2, items=["a", "b", "c"], users=["u1", "u2"])
    shape: (4, 4)
    ┌──────┬──────┬───────┬──────┐
    │ user ┆ item ┆ score ┆ rank │
    │ ---  ┆ ---  ┆ ---   ┆ ---  │
    │ str  ┆ str  ┆ f64   ┆ u32  │
    ╞══════╪══════╪═══════╪══════╡
    │ u1   ┆ b    ┆ 0.9   ┆ 1    │
    │ u1   ┆ c    ┆ 0.4   ┆ 2    │
    │ u2   ┆ b    ┆ 0.7   ┆ 1    │
    │ u2   ┆ a    ┆ 0.7   ┆ 2    │
    └──────┴──────┴───────┴──────┘
    """
    matrix = _matrix.as_matrix(scores)
    _check_counts(k, chunk_rows)
    order = _tie_order(ties)
    row_ids = _matrix.ids(users, matrix.rows, name=user, axis="rows")
    column_ids = _matrix.ids(items, matrix.columns, name=item, axis="columns")
    excluded = None
    if exclude is not None:
        pairs = _pairs(read(exclude, name="exclude"), user, item)
        excluded = _matrix.exclusions(pairs, row_ids, column_ids, user=user, item=item)
    return _matrix.top_k_rows(
        matrix,
        k,
        row_ids,
        column_ids,
        ties=order,
        excluded=excluded,
        names=(user, item, score, rank),
        chunk_rows=chunk_rows,
    )


def _check_counts(k: int, chunk_rows: int | None) -> None:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise ValueError(f"k must be a positive integer; got {k!r}")
    positive = isinstance(chunk_rows, int) and not isinstance(chunk_rows, bool) and chunk_rows > 0
    if chunk_rows is not None and not positive:
        raise ValueError(f"chunk_rows must be a positive integer or None; got {chunk_rows!r}")


def _tie_order(ties: Ties | None) -> Ties:
    order = Conventions().ties if ties is None else ties
    if order not in ("item_desc", "item_asc", "input"):
        raise ValueError(
            f"ties must be 'item_desc', 'item_asc' or 'input' for top_k; got {order!r} "
            "('average' is not an order: keep the candidates with a generous k and pass "
            "ties='average' to evaluate)"
        )
    return order


def _pairs(frame: pl.DataFrame | pl.LazyFrame, user: str, item: str) -> pl.DataFrame:
    names = frame.collect_schema().names()
    missing = [name for name in (user, item) if name not in names]
    if missing:
        raise ValueError(f"exclude has no column {missing[0]!r} (its columns: {names})")
    pairs = frame.select(user, item)
    return pairs.collect() if isinstance(pairs, pl.LazyFrame) else pairs
