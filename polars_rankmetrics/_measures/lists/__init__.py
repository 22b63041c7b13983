"""The measures of the lists themselves ("beyond accuracy"): no truth needed.

One module per measure or tight family, each with its formula, conventions
and reference, registering its :class:`~polars_rankmetrics._measures.Measure`
with a hook (:mod:`._hooks`) that says how it is computed, drawn over k and
merged across Spark's buckets:

* :mod:`.coverage`, :mod:`.gini`, :mod:`.personalization`,
  :mod:`.exposure_gini`: one value per group from the exposures x_i
  (:mod:`._exposure`; exposure_gini's x_i weighted by rank);
* :mod:`.popularity`: novelty, ARP and the long-tail share, per-user means
  over the list of a term of the item's popularity (:mod:`._popularity`);
* :mod:`.ild`, :mod:`.calibration`: per-user values from the list's
  categories (:mod:`._shared`: codes, category tables);
* :mod:`.fairness`: AWRF and NDKL, per-user values from the list's item
  groups (``group=``) against the catalog's group shares.

:mod:`._plan` plans them from the hooks (:func:`per_user`, :func:`per_group`);
the list plan (:mod:`polars_rankmetrics.beyond`), ``curves`` and Spark read
only the hooks. A new measure of the lists is one module here (found and
imported below; modules whose name starts with ``_`` are the shared pieces).
Definitions: ``METRICS.md``, "Beyond accuracy".
"""

import importlib
import pkgutil

from polars_rankmetrics._measures.lists._hooks import (
    Keys,
    ListHook,
    ListRequest,
    OfGroup,
    PerList,
    RowMean,
)
from polars_rankmetrics._measures.lists._plan import (
    group_requests,
    per_group,
    per_user,
    user_requests,
)

__all__ = [
    "Keys",
    "ListHook",
    "ListRequest",
    "OfGroup",
    "PerList",
    "RowMean",
    "group_requests",
    "per_group",
    "per_user",
    "user_requests",
]


def _register_measures() -> None:
    """Import every measure module of this package (name order): each registers its measures."""
    for module in sorted(pkgutil.iter_modules(__path__), key=lambda found: found.name):
        if not module.name.startswith("_"):
            importlib.import_module(f"{__name__}.{module.name}")


_register_measures()
