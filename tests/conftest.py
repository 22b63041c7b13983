"""Shared fixtures: one behaviour suite, every backend.

``backend`` turns a dict of columns into the backend's frame (Polars eager,
Polars lazy, pandas) and any result back into a Polars DataFrame, so a test
written once through the ``.rank`` namespace runs on all of them.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_rankmetrics  # noqa: F401  (registers the namespaces)

HAS_PANDAS = (
    importlib.util.find_spec("pandas") is not None
    and importlib.util.find_spec("pyarrow") is not None
)

# trec_eval 10.0's own test files, kept in the repository (see its README.md)
CONFORMANCE_DIR = Path(__file__).resolve().parent / "data" / "trec_eval"


@dataclass(frozen=True)
class Backend:
    """How to build input frames for one backend and read its results back."""

    name: str
    make: Callable[[pl.DataFrame], Any]
    back: Callable[[Any], pl.DataFrame]

    def frame(self, data: Mapping[str, Sequence[Any]] | pl.DataFrame, **schema: Any) -> Any:
        """The backend's frame holding ``data`` (a dict of columns or a Polars frame)."""
        polars_frame = (
            data if isinstance(data, pl.DataFrame) else pl.DataFrame(data, schema_overrides=schema)
        )
        return self.make(polars_frame)

    def polars(self, result: Any) -> pl.DataFrame:
        """A result of this backend as a Polars DataFrame."""
        return self.back(result)


def _to_pandas(frame: pl.DataFrame) -> Any:
    # pandas holds an integer column with missing values in a nullable dtype (Int64...);
    # plain to_pandas() would make it float64, which is a different input.
    result = frame.to_pandas()
    for name, dtype in frame.schema.items():
        if dtype.is_integer() and frame[name].null_count():
            result[name] = result[name].astype(str(dtype))
    return result


def _from_pandas(result: Any) -> pl.DataFrame:
    return pl.from_pandas(result)


# pandas is always a backend: without it (or pyarrow) its cases skip, visibly
BACKENDS = [
    Backend("polars-eager", lambda frame: frame, lambda result: result),
    Backend("polars-lazy", lambda frame: frame.lazy(), lambda result: result.collect()),
    Backend("pandas", _to_pandas, _from_pandas),
]


@pytest.fixture(params=BACKENDS, ids=[backend.name for backend in BACKENDS])
def backend(request: pytest.FixtureRequest) -> Backend:
    """Each behaviour test runs once per backend."""
    backend: Backend = request.param
    if backend.name == "pandas":
        pytest.importorskip("pandas")
        pytest.importorskip("pyarrow")
    return backend


@pytest.fixture
def conformance_dir() -> Path:
    """The trec_eval conformance data (``tests/data/trec_eval``)."""
    return CONFORMANCE_DIR


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Generated inputs may share no ids by chance: the overlap warning is not their subject.

    ``IdOverlapWarning`` warns a user whose ids do not match (its own tests are in
    tests/pipeline); a hypothesis case whose ten truth items were all missed is a valid
    ranking, scored 0, and the suite turns every warning into an error.
    """
    for item in items:
        function = getattr(item, "function", None)
        if getattr(function, "is_hypothesis_test", False):
            item.add_marker(
                pytest.mark.filterwarnings("ignore::polars_rankmetrics.IdOverlapWarning")
            )
