"""Root fixtures: the one local SparkSession of a test run (tests and doctests share it).

The Spark tests and the doctest of ``polars_rankmetrics/spark.py`` carry the
``spark`` marker (``-m "not spark"`` leaves them out); without pyspark that
module is not collected at all.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent
HAS_PYSPARK = importlib.util.find_spec("pyspark") is not None
SPARK_MODULE = "polars_rankmetrics/spark.py"

collect_ignore = [] if HAS_PYSPARK else [SPARK_MODULE]


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the Spark module's doctest as a Spark test (before -m deselects)."""
    for item in items:
        if item.nodeid.startswith(SPARK_MODULE):
            item.add_marker(pytest.mark.spark)


@pytest.fixture(autouse=True)
def _written_measures_kept() -> Iterator[None]:
    """Each test (and doctest) leaves the measures users registered as it found them.

    A docs page registers and unregisters its own ``dhits``; the measures of
    ``tests/user_measures.py``, registered once at collection, carry the same
    names and must still be there for the tests that run after it.
    """
    from polars_rankmetrics._measures import _registry  # noqa: PLC0415

    before = {measure.name: measure for measure in _registry.written_measures()}
    yield
    for measure in _registry.written_measures():
        if before.get(measure.name) is not measure:
            _registry.unregister_written(measure.name)
    for name, measure in before.items():
        if _registry.canonical(name) is None:
            _registry.register_written(measure)


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """One small local SparkSession for the whole run: 2 cores, no UI, 1 GiB."""
    if not HAS_PYSPARK:
        pytest.skip("pyspark is not installed (pip install 'polars_rankmetrics[spark]')")
    if shutil.which("java") is None and "JAVA_HOME" not in os.environ:
        pytest.skip("Spark needs Java 17 (java on PATH or JAVA_HOME)")
    # the Python workers run this interpreter and import this checkout
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    from pyspark.sql import SparkSession  # noqa: PLC0415  (only when a Spark test runs)

    session = (
        SparkSession.builder.master("local[2]")
        .appName("polars_rankmetrics-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.driver.memory", "1g")
        .config("spark.sql.adaptive.enabled", "true")
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.fixture(autouse=True)
def _spark_for_the_spark_doctest(request: pytest.FixtureRequest) -> None:
    """The doctest of the Spark module gets the test session from getOrCreate()."""
    if request.node.nodeid.startswith(SPARK_MODULE):
        request.getfixturevalue("spark")
