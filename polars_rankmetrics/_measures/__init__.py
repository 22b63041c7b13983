"""Every measure ``evaluate`` knows, one module per family, and the registry they join.

Importing this package registers the measures below; the evaluation plan reads
them through :func:`lookup`, and ``rankmetrics trec`` reads trec_eval's measure
families (:class:`TrecFamily`) through :func:`trec_families`. To add a measure,
add one module here (it is found and imported below, in name order; modules
whose name starts with ``_`` are the registry's own) and see ``docs/REGISTRY.md``.
"""

import importlib
import pkgutil

from polars_rankmetrics._measures._registry import (
    Context,
    Measure,
    Param,
    Partial,
    TrecFamily,
    all_measures,
    builtin_measures,
    canonical,
    known_names,
    lookup,
    register,
    register_trec,
    trec_families,
    trec_family,
)

__all__ = [
    "Context",
    "Measure",
    "Param",
    "Partial",
    "TrecFamily",
    "all_measures",
    "builtin_measures",
    "canonical",
    "known_names",
    "lookup",
    "register",
    "register_trec",
    "trec_families",
    "trec_family",
]


def _register_families() -> None:
    """Import every family module of this package: each registers its measures."""
    for module in sorted(pkgutil.iter_modules(__path__), key=lambda found: found.name):
        if not module.name.startswith("_"):
            importlib.import_module(f"{__name__}.{module.name}")


_register_families()
