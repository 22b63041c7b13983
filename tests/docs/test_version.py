"""``__version__`` is the installed package's version, read from its metadata."""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

import pytest

import polars_rankmetrics as prm
from polars_rankmetrics._version import UNKNOWN, package_version

ROOT = Path(__file__).resolve().parents[2]


def test_version_is_the_package_metadata() -> None:
    installed = metadata.version("polars_rankmetrics")
    assert prm.__version__ == installed
    # pyproject.toml is the one place it is written (an editable install reads it)
    written = re.search(r'^version = "([^"]+)"$', (ROOT / "pyproject.toml").read_text(), re.M)
    assert written is not None
    assert installed == written.group(1)


def test_version_of_a_checkout_that_is_not_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    def not_installed(distribution: str) -> str:
        raise metadata.PackageNotFoundError(distribution)

    monkeypatch.setattr(metadata, "version", not_installed)
    assert package_version() == UNKNOWN == "0+unknown"
