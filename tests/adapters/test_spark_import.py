"""Without pyspark, ``polars_rankmetrics.spark`` says which extra to install."""

from __future__ import annotations

import importlib
import sys

import pytest


def test_import_without_pyspark_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    # None in sys.modules makes "import pyspark..." raise ImportError, as if not installed
    for name in [name for name in sys.modules if name == "pyspark" or name.startswith("pyspark.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "pyspark", None)
    monkeypatch.delitem(sys.modules, "polars_rankmetrics.spark", raising=False)
    with pytest.raises(
        ImportError, match=r"pip install 'pyspark>=4.0' pyarrow \(the package's spark extra\)"
    ):
        importlib.import_module("polars_rankmetrics.spark")
