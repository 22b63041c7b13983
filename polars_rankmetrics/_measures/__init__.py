"""Every measure ``evaluate`` knows, one module per family, and the registry they join.

Importing this package registers the measures below; the evaluation plan reads
them through :func:`lookup`. To add a measure, add one module here, import it
below, and see ``docs/REGISTRY.md``.
"""

from polars_rankmetrics._measures import (
    average_precision,
    beyond_accuracy,
    err,
    f1,
    fbeta,
    hit_rate,
    judged,
    mean_rank,
    ndcg,
    pooled_recall,
    precision,
    r_precision,
    recall,
    reciprocal_rank,
    trec,
)
from polars_rankmetrics._measures._registry import (
    Context,
    Measure,
    Param,
    Partial,
    all_measures,
    canonical,
    known_names,
    lookup,
    register,
)

__all__ = [
    "Context",
    "Measure",
    "Param",
    "Partial",
    "all_measures",
    "canonical",
    "known_names",
    "lookup",
    "register",
]

# the family modules register their measures when imported
del average_precision, err, f1, fbeta, hit_rate, judged, mean_rank, ndcg, pooled_recall, precision
del beyond_accuracy
del r_precision, recall, reciprocal_rank, trec
