"""The pandas adapter: ``df.rank.evaluate`` and friends on pandas frames.

With pandas installed, ``import polars_rankmetrics`` makes the metric
functions available as ``df.rank.evaluate(...)``, ``df.rank.positions(...)``
and ``df.rank.relevance(...)`` on every pandas ``DataFrame``, while
``df.rank(...)`` **stays pandas' own** :meth:`pandas.DataFrame.rank`: same
results, signature, docstring, ``help`` and ``repr``; ``pd.DataFrame.rank``
(class level), ``Series.rank``, ``df.transform("rank")`` and
``df.groupby(...).rank()`` are untouched.

Each method forwards to the function of the same name in this module, which
is also the way to call them from typed code (type checkers see ``df.rank``
as pandas' method only). The computation runs in Polars: frames go through
Arrow and come back as pandas frames, with the dtypes of the input columns.

How the name is shared: ``pandas.DataFrame.rank`` becomes a descriptor whose
class-level value is pandas' function itself and whose value on a frame is a
bound method (``types.MethodType``) of pandas' function wrapped in a small
callable that also carries the metric methods. If something other than pandas
already replaced ``DataFrame.rank``, it is left alone and a
:class:`RankAccessorWarning` says so once.

Examples
--------
>>> import pandas as pd
>>> import polars_rankmetrics
>>> recs = pd.DataFrame({
...     "user": ["001"] * 5 + ["002"] * 5,
...     "item": ["A", "B", "C", "D", "E", "A", "C", "E", "B", "D"],
...     "rank": [1, 2, 3, 4, 5] * 2,
... })
>>> truth = pd.DataFrame({"user": ["001", "001", "001", "002", "002", "002"],
...                       "item": ["B", "D", "Z"] * 2})
>>> recs.rank.evaluate(truth, ["map@5", "ndcg@5", "mrr"])
   map@5    ndcg@5    mrr
0  0.275  0.440919  0.375
>>> recs[["rank"]].rank(method="dense", ascending=False).head(3)  # pandas' own rank
   rank
0   5.0
1   4.0
2   3.0
"""

from __future__ import annotations

import difflib
import inspect
import types
import warnings
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import polars as pl

try:
    import pandas as pd
except ImportError as exc:  # pragma: no cover - exercised in a subprocess
    raise ImportError(
        "polars_rankmetrics.pandas needs pandas and pyarrow: "
        "pip install pandas pyarrow (the package's pandas extra)"
    ) from exc

from polars_rankmetrics import _arrow
from polars_rankmetrics import ranking as _ranking
from polars_rankmetrics._frames import AnyFrame
from polars_rankmetrics._pipeline.inputs import as_list
from polars_rankmetrics._validation import shorten
from polars_rankmetrics.analysis.comparison import compare as _compare
from polars_rankmetrics.analysis.cutoff_curves import curves as _curves

# By name: the package attribute `evaluate` is the function, not this module.
from polars_rankmetrics.evaluation import evaluate as _core_evaluate
from polars_rankmetrics.options import (
    CompareOptions,
    EvaluateOptions,
    PositionOptions,
    Unpack,
    read,
    read_positions,
)

__all__ = [
    "RankAccessorWarning",
    "evaluate",
    "positions",
    "register",
    "relevance",
    "unregister",
]

_NAME = "rank"
_METHODS = ("compare", "curves", "evaluate", "positions", "relevance")
_ROW = "__prm_pandas_row"


class RankAccessorWarning(UserWarning):
    """``pandas.DataFrame.rank`` was replaced by someone else; the accessor is not installed."""


# ---------------------------------------------------------------------------
# Functions on pandas frames (the accessor methods forward to these)
# ---------------------------------------------------------------------------


def _check_index_roles(frame: pd.DataFrame, name: str, columns: Sequence[str | None]) -> None:
    # A role column kept in the index (df.set_index("user")) is the likeliest way a
    # pandas user meets "missing column"; say where it is and how to fix it.
    levels = {level for level in frame.index.names if level is not None}
    for column in columns:
        if column is not None and column not in frame.columns and column in levels:
            raise ValueError(
                f"{name} has no column {shorten(column)}: it is an index level. The adapter reads "
                f"columns only; move it out of the index first: {name}.reset_index()"
            )


def _recs_to_polars(recs: pd.DataFrame, roles: Sequence[str | None]) -> pl.DataFrame:
    frame = _arrow.to_polars(recs, name="recs")
    _check_index_roles(recs, "recs", roles)
    return frame


def _check_frames(
    recs: object, truth: object, recs_roles: Sequence[str | None], truth_roles: Sequence[str | None]
) -> None:
    """Refuse recs that are not pandas, and a role of either frame kept in the index.

    The functions below then call the package's own, which read the frames
    (truth of any kind) and give pandas back.
    """
    if not isinstance(recs, pd.DataFrame):
        raise TypeError(f"recs must be a pandas DataFrame, got {type(recs).__name__}")
    _check_index_roles(recs, "recs", recs_roles)
    if isinstance(truth, pd.DataFrame):
        # a by column in the truth's index would silently make the truth shared by every group
        _check_index_roles(truth, "truth", truth_roles)


def positions(
    recs: pd.DataFrame,
    k: int | None = None,
    **options: Unpack[PositionOptions],
) -> pd.DataFrame:
    """Rank positions per user (1 = top) of a pandas frame, optionally cut to the top k.

    The pandas twin of :func:`polars_rankmetrics.positions`, also available as
    ``recs.rank.positions(...)``.

    Parameters
    ----------
    recs : pandas.DataFrame
        Long-format recommendations, one row per (user, item).
    k, **options
        As in :func:`polars_rankmetrics.positions` (the roles, ``ties``,
        ``duplicates``, ``by``).

    Returns
    -------
    pandas.DataFrame
        The kept rows of ``recs`` in their order **with their index labels**,
        plus the rank column (``uint32`` when derived from ``score``).

    Notes
    -----
    Input columns keep their pandas dtype. Columns are read from the columns
    only, never from the index. ``recs`` is not modified.

    Examples
    --------
    >>> import pandas as pd
    >>> from polars_rankmetrics import pandas as prm_pd
    >>> recs = pd.DataFrame(
    ...     {"user": [1, 1, 1, 2], "item": ["a", "b", "c", "a"], "score": [0.2, 0.9, 0.2, 0.5]},
    ...     index=[10, 11, 12, 13],
    ... )
    >>> prm_pd.positions(recs, 2, score="score")
        user item  score  rank
    11     1    b    0.9     1
    12     1    c    0.2     2
    13     2    a    0.5     1
    """
    given = read_positions(options, function="positions")
    score = given["score"]
    roles = [given["user"], given["item"], score, None if score else given["rank"]]
    frame = _recs_to_polars(recs, [*roles, *as_list(given["by"])])
    row = _arrow.unused_name(frame.columns, _ROW)
    result = _ranking.positions(frame.with_row_index(row), k, **options)
    index = recs.index.take(result.get_column(row).to_numpy())
    return _arrow.to_pandas(result.drop(row), [(recs, frame.schema)], index=index)


def relevance(
    recs: pd.DataFrame,
    truth: AnyFrame,
    *,
    user: str = "user",
    item: str = "item",
    rank: str = "rank",
    relevance: str | None = None,
    relevance_level: float | None = None,
    by: str | Sequence[str] | None = None,
) -> pd.DataFrame:
    """Label ranked recommendations of a pandas frame with the truth.

    The pandas twin of :func:`polars_rankmetrics.relevance`, also available as
    ``recs.rank.relevance(truth, ...)``: every recommendation row plus one row
    per relevant truth item that was not recommended, with the columns
    ``rel`` (or ``relevance``), ``is_relevant`` and ``n_relevant`` added.

    Parameters
    ----------
    recs : pandas.DataFrame
        Ranked recommendations.
    truth : pandas.DataFrame, polars.DataFrame or LazyFrame, or an Arrow object
        One row per judged (user, item).
    user, item, rank, relevance, relevance_level, by
        As in :func:`polars_rankmetrics.relevance`.

    Returns
    -------
    pandas.DataFrame
        Sorted by (by..., user, rank) with a fresh ``RangeIndex`` (the added
        truth rows have no label in ``recs``). Input columns keep their pandas
        dtype; an integer column of ``recs`` that is missing on the added rows
        (``rank``) becomes the matching nullable dtype (``Int64``...).

    Examples
    --------
    >>> import pandas as pd
    >>> from polars_rankmetrics import pandas as prm_pd
    >>> ranked = pd.DataFrame({"user": [1, 1], "item": ["a", "b"], "rank": [1, 2]})
    >>> truth = pd.DataFrame({"user": [1, 1, 2], "item": ["b", "z", "y"]})
    >>> prm_pd.relevance(ranked, truth)
       user item  rank  rel  is_relevant  n_relevant  ideal_rank
    0     1    a     1  0.0        False           2        <NA>
    1     1    b     2  1.0         True           2           1
    2     1    z  <NA>  1.0         True           2           2
    3     2    y  <NA>  1.0         True           1           1
    """
    groups = as_list(by)
    _check_frames(recs, truth, [user, item, rank, *groups], [user, item, relevance, *groups])
    return _ranking.relevance(
        recs, truth, user=user, item=item, rank=rank, relevance=relevance,
        relevance_level=relevance_level, by=by,
    )  # fmt: skip


def evaluate(
    recs: pd.DataFrame,
    truth: AnyFrame | None,
    metrics: str | Sequence[str],
    *,
    per_user: bool = False,
    **options: Unpack[EvaluateOptions],
) -> pd.DataFrame:
    """Evaluate recommendations in a pandas frame against the truth.

    The pandas twin of :func:`polars_rankmetrics.evaluate`, also available as
    ``recs.rank.evaluate(truth, metrics, ...)``; the numbers are the same.

    Parameters
    ----------
    recs : pandas.DataFrame
        Long-format recommendations with a ``rank`` or a ``score`` column.
    truth : pandas.DataFrame, polars.DataFrame or LazyFrame, or an Arrow object
        One row per judged (user, item), optionally with graded relevance.
    metrics : str or sequence of str
        Metric strings such as ``"map@12"``, ``"ndcg@10"``, ``"mrr"``.
    per_user, **options
        As in :func:`polars_rankmetrics.evaluate`, which documents every
        option (:class:`polars_rankmetrics.EvaluateOptions`: the column
        roles, the conventions, the list inputs) and which users are averaged.

    Returns
    -------
    pandas.DataFrame
        One ``float64`` column per metric string, named exactly as given,
        after the ``by`` columns (and ``user`` with ``per_user=True``), which
        keep their pandas dtype. The index is a fresh ``RangeIndex``; use
        ``.set_index(...)`` for labelled rows.

    Examples
    --------
    >>> import pandas as pd
    >>> from polars_rankmetrics import pandas as prm_pd
    >>> recs = pd.DataFrame({
    ...     "model": ["a"] * 5 + ["b"] * 5,
    ...     "user": [1] * 10,
    ...     "item": ["A", "B", "C", "D", "E", "A", "C", "E", "B", "D"],
    ...     "rank": [1, 2, 3, 4, 5] * 2,
    ... })
    >>> truth = pd.DataFrame({"user": [1, 1, 1], "item": ["B", "D", "Z"]})
    >>> prm_pd.evaluate(recs, truth, ["map@5", "mrr", "precision@5"], by="model")
      model     map@5   mrr  precision@5
    0     a  0.333333  0.50          0.4
    1     b  0.216667  0.25          0.4
    """
    given = read(options, function="evaluate")
    groups = as_list(given["by"])
    _check_frames(
        recs, truth, [given["user"], given["item"], given["score"] or given["rank"], *groups],
        [given["user"], given["item"], given["relevance"], *groups],
    )  # fmt: skip
    return _core_evaluate(recs, truth, metrics, per_user=per_user, **options)


# ---------------------------------------------------------------------------
# df.rank: pandas' method, plus the metric methods
# ---------------------------------------------------------------------------


class _FrameRank:
    # The ``__func__`` of the bound method that ``df.rank`` returns. Calling it calls
    # pandas' function; what functools.update_wrapper would copy (and any other dunder
    # attribute) is read from pandas' function, so that inspect.signature, help(), repr
    # and pickle see pandas' method. The metric methods are the only additions.

    __slots__ = ("_descriptor", "_frame")

    def __init__(self, frame: pd.DataFrame, descriptor: _RankDescriptor) -> None:
        self._frame = frame
        self._descriptor = descriptor

    def __call__(self, frame: pd.DataFrame, /, *args: Any, **kwargs: Any) -> Any:
        return self._descriptor.original(frame, *args, **kwargs)

    @property
    def __doc__(self) -> str | None:  # type: ignore[override]
        return self._descriptor.original.__doc__  # type: ignore[no-any-return]

    @property
    def __module__(self) -> str:  # type: ignore[override]
        return self._descriptor.original.__module__  # type: ignore[no-any-return]

    @property
    def __signature__(self) -> inspect.Signature:
        return self._descriptor.signature()

    @property
    def __dict__(self) -> dict[str, Any]:  # type: ignore[override]
        # What dir(df.rank) lists besides the method's own attributes: tab completion.
        return {name: getattr(self, name) for name in _METHODS}

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            return getattr(self._descriptor.original, name)
        close = difflib.get_close_matches(name, _METHODS, n=1)
        hint = f"; did you mean {shorten(close[0])}?" if close else ""
        raise AttributeError(
            f"DataFrame.rank has no attribute {shorten(name)}: it is pandas' rank method, with "
            f"the metric methods {', '.join(_METHODS)}{hint}"
        )

    def __eq__(self, other: object) -> bool:
        # df.rank == df.rank, as for any bound method.
        return (
            isinstance(other, _FrameRank)
            and other._frame is self._frame
            and other._descriptor.original is self._descriptor.original
        )

    def __hash__(self) -> int:
        return hash(self._descriptor.original)

    def positions(
        self,
        k: int | None = None,
        **options: Unpack[PositionOptions],
    ) -> pd.DataFrame:
        return positions(self._frame, k, **options)

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
    ) -> pd.DataFrame:
        return _relevance(
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
    ) -> pd.DataFrame:
        return evaluate(self._frame, truth, metrics, per_user=per_user, **options)

    # compare and curves read pandas frames themselves: these forward to them directly
    def compare(
        self,
        truth: AnyFrame | None,
        metrics: str | Sequence[str],
        *,
        system: str = "model",
        baseline: Any = None,
        **options: Unpack[CompareOptions],
    ) -> pd.DataFrame:
        return _compare(self._frame, truth, metrics, system=system, baseline=baseline, **options)

    def curves(
        self,
        truth: AnyFrame | None,
        metrics: str | Sequence[str],
        *,
        k: int | np.integer[Any] | Iterable[int | np.integer[Any]] = range(1, 101),
        ci: float | None = None,
        **options: Unpack[EvaluateOptions],
    ) -> pd.DataFrame:
        return _curves(self._frame, truth, metrics, k=k, ci=ci, **options)


_relevance = relevance  # the method's parameter named `relevance` shadows the function
_FrameRank.positions.__doc__ = positions.__doc__
_FrameRank.relevance.__doc__ = relevance.__doc__
_FrameRank.evaluate.__doc__ = evaluate.__doc__
_FrameRank.compare.__doc__ = _compare.__doc__
_FrameRank.curves.__doc__ = _curves.__doc__


class _RankDescriptor:
    """``pandas.DataFrame.rank`` while the accessor is registered.

    On the class (``pd.DataFrame.rank``) it is pandas' original function,
    unchanged; on a frame it is that function bound to the frame, with the
    metric methods added (see :class:`_FrameRank`). Like a function, it is a
    non-data descriptor.
    """

    # Recognised by name as well as by class, so that a reloaded module stays idempotent.
    polars_rankmetrics_rank_accessor = True

    __slots__ = ("_signature", "original", "replaced_own")

    def __init__(self, original: Any, *, replaced_own: bool) -> None:
        self.original = original
        # Whether DataFrame itself defined rank (else it was inherited from NDFrame).
        self.replaced_own = replaced_own
        self._signature: inspect.Signature | None = None

    def signature(self) -> inspect.Signature:
        """The signature of pandas' function (computed once, on first use)."""
        if self._signature is None:
            self._signature = inspect.signature(self.original)
        return self._signature

    def __get__(self, frame: pd.DataFrame | None, owner: type | None = None) -> Any:
        if frame is None:
            return self.original
        return types.MethodType(_FrameRank(frame, self), frame)


def _is_ours(attribute: object) -> bool:
    return bool(getattr(type(attribute), "polars_rankmetrics_rank_accessor", False))


def _is_pandas_rank(attribute: object) -> bool:
    # pandas' own function: a plain function *defined* in pandas (its globals are a pandas
    # module's). A wrapper made elsewhere with functools.wraps copies __module__ but not
    # __globals__, and pandas' own accessors are not functions.
    if not isinstance(attribute, types.FunctionType) or attribute.__name__ != _NAME:
        return False
    module = str(attribute.__globals__.get("__name__", ""))
    return module == "pandas" or module.startswith("pandas.")


_warned_conflict = False


def register() -> bool:
    """Install ``df.rank.<method>`` on ``pandas.DataFrame``; idempotent.

    Importing :mod:`polars_rankmetrics` (or this module) calls it. When
    ``DataFrame.rank`` is not pandas' own function any more (another library,
    or a future pandas, replaced it), it is left alone and a
    :class:`RankAccessorWarning` is emitted, once per process.

    Returns
    -------
    bool
        Whether the accessor is in place.
    """
    global _warned_conflict  # noqa: PLW0603 - warn once per process, whatever calls us
    if _is_ours(pd.DataFrame.__dict__.get(_NAME)):
        return True
    current = inspect.getattr_static(pd.DataFrame, _NAME, None)
    if not _is_pandas_rank(current):
        if not _warned_conflict:
            _warned_conflict = True
            warnings.warn(
                f"pandas.DataFrame.rank is not pandas' own method (it is {shorten(current)}); "
                "polars_rankmetrics leaves it as it is, so df.rank.evaluate/positions/"
                "relevance are not available: call polars_rankmetrics.pandas.evaluate(df, ...) "
                "and the other functions of that module instead",
                RankAccessorWarning,
                stacklevel=2,
            )
        return False
    descriptor = _RankDescriptor(current, replaced_own=_NAME in pd.DataFrame.__dict__)
    setattr(pd.DataFrame, _NAME, descriptor)
    return True


def unregister() -> None:
    """Give ``pandas.DataFrame.rank`` back exactly as it was before :func:`register`.

    A no-op when the accessor is not installed.
    """
    current = pd.DataFrame.__dict__.get(_NAME)
    if current is None or not _is_ours(current):
        return
    if current.replaced_own:
        setattr(pd.DataFrame, _NAME, current.original)
    else:
        delattr(pd.DataFrame, _NAME)


register()
