"""The installed package's version, read from its metadata (``pyproject.toml`` is the one place)."""

from __future__ import annotations

from importlib import metadata

__all__ = ["UNKNOWN", "package_version"]

#: The version of a source checkout that is not installed (no metadata to read).
UNKNOWN = "0+unknown"


def package_version(distribution: str = "polars_rankmetrics") -> str:
    """The version of ``distribution`` as installed, or :data:`UNKNOWN` when it is not.

    Examples
    --------
    >>> package_version("no-such-distribution")
    '0+unknown'
    """
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return UNKNOWN
