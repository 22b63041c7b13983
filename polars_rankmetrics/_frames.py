"""The frame boundary: the one module that knows which kinds of frames come in and go out.

Every public function reads its frames here, once, at its top, calls the
engine with Polars frames and gives the result back here; nothing below the
faces sees anything but Polars. The kinds accepted:

* a Polars ``DataFrame`` or ``LazyFrame``: used as it is (no copy, no
  conversion: a check of its type is all the boundary costs);
* a pandas ``DataFrame``: converted through Arrow
  (:mod:`polars_rankmetrics._arrow`, zero-copy for numeric and pyarrow-backed
  columns); a result goes back to pandas with the input columns' dtypes;
* a pyarrow ``Table``, and any object exporting the Arrow C stream interface
  (``__arrow_c_stream__``: a pyarrow ``RecordBatchReader``, a DuckDB relation,
  ...): read once into a Polars ``DataFrame``. Arrow has no frame to give a
  result back as, so such a caller gets a Polars ``DataFrame``.

The result's kind follows the call's primary frame (``recs``, ``scores``,
``runs``...): Polars eager in, eager out; lazy in, lazy out where the function
is lazy (an eager-only analysis gives a ``DataFrame``); pandas in, pandas out;
Arrow in, Polars ``DataFrame`` out. The other frames of a call (truth,
interactions, items, a reference run) may be of any kind; they do not change
the result's kind.

Typing: :data:`Frame` is the primary frame of a function whose result has its
kind, :data:`Eager` that of an eager-only one. Both are bound type variables
whose default is ``pl.DataFrame``: a Polars or pandas frame binds them (the
result has its type), while an Arrow object (:class:`ArrowStream`) or, for
:data:`Eager`, a ``LazyFrame`` leaves them unbound, and a type checker then
takes the default (PEP 696), ``pl.DataFrame``, which is what such a call
returns.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Generic, Literal, Protocol, TypeAlias, cast, overload

import polars as pl

from polars_rankmetrics.options import FRAME_OPTIONS, EvaluateOptions

if TYPE_CHECKING:
    from typing_extensions import TypeVar
else:
    from typing import TypeVar

__all__ = [
    "AnyFrame",
    "ArrowStream",
    "Caller",
    "Eager",
    "Frame",
    "PandasFrame",
    "Polars",
    "caller",
    "collected",
    "eager_caller",
    "read",
    "runs_caller",
]


class ArrowStream(Protocol):
    """An object exporting the Arrow C stream interface (a pyarrow Table, a DuckDB relation...)."""

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any: ...


class PandasFrame(Protocol):
    """A pandas ``DataFrame``, as type checkers see it (pandas ships no annotations)."""

    @property
    def iloc(self) -> Any: ...

    @property
    def index(self) -> Any: ...


Polars: TypeAlias = pl.DataFrame | pl.LazyFrame
"""A Polars frame, eager or lazy: what the engine below the faces takes."""

AnyFrame: TypeAlias = pl.DataFrame | pl.LazyFrame | PandasFrame | ArrowStream
"""Any frame a public function accepts (its secondary frames: truth, items, ...)."""

if sys.version_info >= (3, 13) or TYPE_CHECKING:
    Frame = TypeVar("Frame", bound=pl.DataFrame | pl.LazyFrame | PandasFrame, default=pl.DataFrame)
    Eager = TypeVar("Eager", bound=pl.DataFrame | PandasFrame, default=pl.DataFrame)
else:  # pragma: no cover - the default (PEP 696) is for type checkers; typing has it from 3.13
    Frame = TypeVar("Frame", bound=pl.DataFrame | pl.LazyFrame | PandasFrame)
    Eager = TypeVar("Eager", bound=pl.DataFrame | PandasFrame)

_Out = TypeVar("_Out")

_Kind = Literal["eager", "lazy", "pandas", "arrow"]

_ACCEPTED = (
    "a Polars DataFrame or LazyFrame, a pandas DataFrame, a pyarrow Table, or another object "
    "with __arrow_c_stream__ (a pyarrow RecordBatchReader, a DuckDB relation)"
)


def _is_pandas(frame: object, kind: str = "DataFrame") -> bool:
    # a pandas object exists only once pandas is loaded: it is never imported to find out
    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(frame, getattr(pandas, kind))


def _refused(frame: object, name: str, also: str) -> TypeError:
    hint = ""
    if isinstance(frame, Mapping):
        hint = f" (a dict of columns: pl.DataFrame({name}) first)"
    elif isinstance(frame, pl.Series) or _is_pandas(frame, "Series"):
        hint = f" (one column: {name}.to_frame() first)"
    return TypeError(f"{name} must be {also}{_ACCEPTED}; got {type(frame).__name__}{hint}")


def _kind(frame: object, name: str, also: str = "") -> _Kind:
    """The kind of ``frame``, or the TypeError naming ``name`` and the kinds accepted."""
    if isinstance(frame, pl.LazyFrame):
        return "lazy"
    if isinstance(frame, pl.DataFrame):
        return "eager"
    if _is_pandas(frame):  # before the Arrow stream, which pandas frames export too
        return "pandas"
    # a Series exports an Arrow stream too, but it is one column, not a frame
    if hasattr(type(frame), "__arrow_c_stream__") and not (
        isinstance(frame, pl.Series) or _is_pandas(frame, "Series")
    ):
        return "arrow"
    raise _refused(frame, name, also)


def _polars(frame: Any, kind: _Kind, name: str) -> Polars:
    if kind in ("eager", "lazy"):
        return cast("Polars", frame)
    if kind == "pandas":
        from polars_rankmetrics import _arrow  # noqa: PLC0415 - pandas is optional

        return _arrow.to_polars(frame, name=name)
    try:
        # Polars reads the C stream itself (no pyarrow needed), zero-copy where Arrow allows
        return pl.DataFrame(frame)
    except Exception as exc:
        raise TypeError(
            f"{name} ({type(frame).__name__}) could not be read through its Arrow C stream: "
            f"{exc}; convert it to a Polars DataFrame first, e.g. pl.DataFrame({name})"
        ) from exc


def read(frame: object, *, name: str, also: str = "") -> Polars:
    """``frame`` as a Polars frame, whatever kind it is (a Polars frame as it is).

    For a frame whose kind says nothing about the result (a reference run, a
    frame drawn or written); ``also`` names what else the argument may be, for
    the error.
    """
    return _polars(frame, _kind(frame, name, also), name)


def collected(frame: Polars) -> pl.DataFrame:
    """``frame`` in memory (a LazyFrame collected)."""
    return frame.collect() if isinstance(frame, pl.LazyFrame) else frame


class Caller(Generic[_Out]):
    """One public call's frames: the primary one in Polars, and the kind to give back.

    Made by :func:`caller`, :func:`eager_caller` or :func:`runs_caller`.
    ``frame`` is the primary frame in Polars; :meth:`read` reads the others
    (their pandas dtypes are kept for the way back); :meth:`back` gives a
    Polars result back in the caller's kind.
    """

    __slots__ = ("_eager", "_kind", "_sources", "frame")

    def __init__(self, frame: Polars, kind: _Kind, sources: list[Any], *, eager: bool) -> None:
        self.frame = frame
        self._kind = kind
        self._sources = sources  # (pandas frame, its Polars schema): the dtypes to give back
        self._eager = eager

    @overload
    def read(self, frame: None, *, name: str) -> None: ...
    @overload
    def read(self, frame: AnyFrame, *, name: str) -> Polars: ...
    def read(self, frame: AnyFrame | None, *, name: str) -> Polars | None:
        """Another frame of the call (truth, items...) in Polars; ``None`` stays ``None``."""
        if frame is None:
            return None
        kind = _kind(frame, name)
        polars_frame = _polars(frame, kind, name)
        if kind == "pandas":
            self._sources.append((frame, cast("pl.DataFrame", polars_frame).schema))
        return polars_frame

    def read_options(self, options: EvaluateOptions) -> EvaluateOptions:
        """``options`` with the frames among them (``interactions``, ``items``) in Polars."""
        given = cast("Mapping[str, Any]", options)
        read = {
            name: self.read(given[name], name=name)
            for name in FRAME_OPTIONS
            if given.get(name) is not None
        }
        return cast("EvaluateOptions", {**given, **read})

    def back(self, result: Polars) -> _Out:
        """``result`` in the caller's kind (collected unless the caller's frame was lazy)."""
        if self._kind == "lazy" and not self._eager:
            return cast("_Out", result.lazy())
        frame = collected(result)
        if self._kind == "pandas":
            from polars_rankmetrics import _arrow  # noqa: PLC0415 - pandas is optional

            return cast("_Out", _arrow.to_pandas(frame, self._sources))
        return cast("_Out", frame)


def _caller(frame: object, name: str, *, eager: bool, also: str = "") -> Caller[Any]:
    kind = _kind(frame, name, also)
    polars_frame = _polars(frame, kind, name)
    sources = [(frame, polars_frame.schema)] if kind == "pandas" else []
    return Caller(polars_frame, kind, sources, eager=eager)


def caller(frame: Frame | ArrowStream, *, name: str) -> Caller[Frame]:
    """The primary frame of a function whose result has its kind (lazy stays lazy)."""
    return _caller(frame, name, eager=False)


def eager_caller(frame: Eager | pl.LazyFrame | ArrowStream, *, name: str) -> Caller[Eager]:
    """The primary frame of an eager-only function: a LazyFrame gives a ``pl.DataFrame``."""
    return _caller(frame, name, eager=True)


def runs_caller(runs: object, *, name: str) -> tuple[Polars | dict[Any, Polars], Caller[Any]]:
    """Runs, one frame or a dict of them (run name -> frame), in Polars, and the kind to give back.

    A dict gives back lazy if any of its frames is lazy, pandas if all are
    pandas (with the dtypes of the first), else a Polars ``DataFrame``.
    """
    if not isinstance(runs, Mapping):
        call = _caller(runs, name, eager=False, also="a dict of frames (run name -> frame) or ")
        return call.frame, call
    if not runs:
        raise ValueError(f"{name} is an empty dict: give at least one run (name -> frame)")
    kinds: list[_Kind] = []
    read: dict[Any, Polars] = {}
    for key, frame in runs.items():
        kinds.append(_kind(frame, f"{name}[{key!r}]"))
        read[key] = _polars(frame, kinds[-1], f"{name}[{key!r}]")
    kind: _Kind = "lazy" if "lazy" in kinds else "pandas" if set(kinds) == {"pandas"} else "eager"
    first_key = next(iter(runs))
    first = read[first_key]  # the Caller's frame: the first run
    sources = [(runs[first_key], collected(first).schema)] if kind == "pandas" else []
    return read, Caller(first, kind, sources, eager=False)
