"""The ``.rank`` namespace on Polars ``DataFrame`` and ``LazyFrame``, and its typed twin.

Each method is a one-line forward to the function of the same name, with the
same parameters; the functions carry the documentation.

Type checkers cannot see namespaces registered at run time: for mypy and
pyright ``df.rank`` is an unknown attribute of ``pl.DataFrame`` (mypy:
``"DataFrame" has no attribute "rank"  [attr-defined]``). Typed code writes
``rank(df).evaluate(...)`` instead: :func:`rank` returns the very same
namespace object, typed, so that ``rank(df).evaluate(...)`` is a
``pl.DataFrame`` and ``rank(lf).evaluate(...)`` a ``pl.LazyFrame`` for the
checker, with every parameter checked. The plain functions
(:func:`polars_rankmetrics.evaluate`, ...) type-check as well.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Generic, TypeVar, overload

import numpy as np
import polars as pl

from polars_rankmetrics import evaluation as _evaluate
from polars_rankmetrics import ranking as _ranking
from polars_rankmetrics._frames import AnyFrame
from polars_rankmetrics.analysis.comparison import compare as _compare
from polars_rankmetrics.analysis.cutoff_curves import curves as _curves
from polars_rankmetrics.options import CompareOptions, EvaluateOptions, PositionOptions, Unpack

__all__ = ["RankFrameNamespace", "RankLazyFrameNamespace", "rank"]

FrameT = TypeVar("FrameT", pl.DataFrame, pl.LazyFrame)


class _RankNamespace(Generic[FrameT]):
    def __init__(self, frame: FrameT) -> None:
        self._frame: FrameT = frame

    def positions(
        self,
        k: int | None = None,
        **options: Unpack[PositionOptions],
    ) -> FrameT:
        return _ranking.positions(self._frame, k, **options)

    def relevance(
        self,
        truth: AnyFrame,
        *,
        user: str = "user",
        item: str = "item",
        rank: str = "rank",
        relevance: str | None = None,
        relevance_level: float | None = None,
        by: str | Sequence[str] | None = None,
    ) -> FrameT:
        return _ranking.relevance(
            self._frame, truth, user=user, item=item, rank=rank, relevance=relevance,
            relevance_level=relevance_level, by=by,
        )  # fmt: skip

    def evaluate(
        self,
        truth: AnyFrame | None,
        metrics: str | Sequence[str],
        *,
        per_user: bool = False,
        **options: Unpack[EvaluateOptions],
    ) -> FrameT:
        return _evaluate.evaluate(self._frame, truth, metrics, per_user=per_user, **options)

    def compare(
        self,
        truth: AnyFrame | None,
        metrics: str | Sequence[str],
        *,
        system: str = "model",
        baseline: Any = None,
        **options: Unpack[CompareOptions],
    ) -> FrameT:
        return _compare(self._frame, truth, metrics, system=system, baseline=baseline, **options)

    def curves(
        self,
        truth: AnyFrame | None,
        metrics: str | Sequence[str],
        *,
        k: int | np.integer[Any] | Iterable[int | np.integer[Any]] = range(1, 101),
        ci: float | None = None,
        **options: Unpack[EvaluateOptions],
    ) -> FrameT:
        return _curves(self._frame, truth, metrics, k=k, ci=ci, **options)

    positions.__doc__ = _ranking.positions.__doc__
    relevance.__doc__ = _ranking.relevance.__doc__
    evaluate.__doc__ = _evaluate.evaluate.__doc__
    compare.__doc__ = _compare.__doc__
    curves.__doc__ = _curves.__doc__


@pl.api.register_dataframe_namespace("rank")
class RankFrameNamespace(_RankNamespace[pl.DataFrame]):
    """``DataFrame.rank``: positions, relevance labels and metrics of ranked lists."""


@pl.api.register_lazyframe_namespace("rank")
class RankLazyFrameNamespace(_RankNamespace[pl.LazyFrame]):
    """``LazyFrame.rank``: the same methods as ``DataFrame.rank``; results stay lazy."""


@overload
def rank(frame: pl.DataFrame) -> RankFrameNamespace: ...


@overload
def rank(frame: pl.LazyFrame) -> RankLazyFrameNamespace: ...


def rank(frame: pl.DataFrame | pl.LazyFrame) -> RankFrameNamespace | RankLazyFrameNamespace:
    """``frame.rank``, typed: what type checkers see of the run-time namespace.

    ``rank(df).evaluate(truth, ["map@12"])`` does exactly what
    ``df.rank.evaluate(truth, ["map@12"])`` does; mypy and pyright know the
    methods, their parameters and that they return the kind of frame given.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_rankmetrics import rank
    >>> recs = pl.DataFrame({"user": [1, 1], "item": ["a", "b"], "rank": [1, 2]})
    >>> truth = pl.DataFrame({"user": [1], "item": ["b"]})
    >>> rank(recs).evaluate(truth, ["mrr"])
    shape: (1, 1)
    ┌─────┐
    │ mrr │
    │ --- │
    │ f64 │
    ╞═════╡
    │ 0.5 │
    └─────┘
    """
    if isinstance(frame, pl.LazyFrame):
        return RankLazyFrameNamespace(frame)
    if isinstance(frame, pl.DataFrame):
        return RankFrameNamespace(frame)
    raise TypeError(
        f"rank() takes a Polars DataFrame or LazyFrame, got {type(frame).__name__}; the "
        "functions take every other kind (pandas, Arrow): polars_rankmetrics.evaluate(frame, ...)"
    )
