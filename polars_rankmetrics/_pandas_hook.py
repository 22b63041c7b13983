"""Register the pandas ``df.rank`` accessor without importing pandas.

Importing pandas takes longer than importing Polars and this package
together, and Polars-only users should not pay for it. Importing this module
(``polars_rankmetrics/__init__.py`` does) therefore does one of three things:

* pandas is already imported: register the accessor now;
* pandas is installed but not imported yet: put a one-shot finder on
  ``sys.meta_path`` that registers the accessor right after ``import pandas``
  has finished, then removes itself;
* pandas is not installed (or its import is blocked): nothing.

The adapter itself lives in :mod:`polars_rankmetrics.pandas`.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import warnings
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

from polars_rankmetrics._validation import shorten

__all__ = ["install"]

_TARGET = "pandas"


_ADAPTER = "polars_rankmetrics.pandas"


def _register() -> None:
    importing = sys.modules.get(_ADAPTER)
    if importing is not None and not hasattr(importing, "register"):
        # The adapter's own `import pandas` brought us here: it registers itself
        # when its import finishes.
        return
    # Deferred on purpose: this import is what imports pandas (already loaded here).
    from polars_rankmetrics import pandas as adapter  # noqa: PLC0415

    adapter.register()


class _RegisteringLoader(importlib.abc.Loader):
    """pandas' own loader, plus a call to :func:`_register` once pandas has loaded."""

    def __init__(self, loader: importlib.abc.Loader, finder: _PandasFinder) -> None:
        self._loader = loader
        self._finder = finder

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        return self._loader.create_module(spec)

    def exec_module(self, module: ModuleType) -> None:
        # Put the real loader back first, so pandas' module carries no trace of the hook.
        module.__loader__ = self._loader
        if module.__spec__ is not None:
            module.__spec__.loader = self._loader
        self._finder.remove()
        self._loader.exec_module(module)
        try:
            _register()
        except Exception as exc:  # a failure here must not break `import pandas`
            warnings.warn(
                f"polars_rankmetrics could not register the pandas accessor: {shorten(exc)}; "
                "use the functions of polars_rankmetrics.pandas instead",
                RuntimeWarning,
                stacklevel=2,
            )


class _PandasFinder(importlib.abc.MetaPathFinder):
    """Finds pandas with the other finders and wraps its loader (see the module docstring)."""

    # Recognised by name as well as by class, so that a reloaded module stays idempotent.
    polars_rankmetrics_pandas_hook = True

    def __init__(self) -> None:
        self._searching = False

    def find_spec(
        self,
        fullname: str,
        path: Sequence[str] | None = None,  # noqa: ARG002 - the MetaPathFinder protocol
        target: ModuleType | None = None,  # noqa: ARG002
    ) -> ModuleSpec | None:
        if fullname != _TARGET or self._searching:
            return None
        # find_spec may be a mere availability probe, so the finder stays installed
        # until pandas is actually executed (see _RegisteringLoader.exec_module).
        self._searching = True
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            self._searching = False
        if spec is None or spec.loader is None:
            return None
        spec.loader = _RegisteringLoader(spec.loader, self)
        return spec

    def remove(self) -> None:
        """Take this finder off ``sys.meta_path`` (a no-op when it is not there)."""
        sys.meta_path[:] = [finder for finder in sys.meta_path if finder is not self]


def install() -> None:
    """Register the pandas accessor now, when pandas is imported, or never (see above)."""
    if _TARGET in sys.modules:
        module = sys.modules[_TARGET]
        # None: the import is blocked; no DataFrame yet: pandas is mid-import (then
        # it is not ours to complete, and the accessor can be registered later).
        if module is not None and hasattr(module, "DataFrame"):
            _register()
        return
    if any(getattr(f, "polars_rankmetrics_pandas_hook", False) for f in sys.meta_path):
        return
    if importlib.util.find_spec(_TARGET) is None:
        return
    sys.meta_path.insert(0, _PandasFinder())


install()
