"""The measures of the lists themselves ("beyond accuracy"): no truth needed.

One module per measure or tight family, each with its formula, conventions
and reference, registering its :class:`~polars_rankmetrics._measures.Measure`
with a hook (:mod:`._hooks`) that says how it is computed, drawn over k and
merged across Spark's buckets:

* :mod:`.coverage`, :mod:`.gini`, :mod:`.personalization`: one value per
  group from the exposures x_i (:mod:`._exposure`);
* :mod:`.popularity`: novelty, ARP and the long-tail share, per-user means
  over the list of a term of the item's popularity (:mod:`._popularity`);
* :mod:`.ild`, :mod:`.calibration`: per-user values from the list's
  categories (:mod:`._shared`: codes, category tables).

:mod:`._plan` plans them from the hooks (:func:`per_user`, :func:`per_group`);
the list plan (:mod:`polars_rankmetrics.beyond`), ``curves`` and Spark read
only the hooks. Definitions: ``METRICS.md``, "Beyond accuracy".
"""

from polars_rankmetrics._measures.lists import (
    calibration,
    coverage,
    gini,
    ild,
    personalization,
    popularity,
)
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

# the modules register their measures when imported, in the order of METRICS.md's table
del coverage, gini, personalization, popularity, ild, calibration
