"""Ranking metrics (MAP, MRR, NDCG, precision, recall, hit rate) as Polars expressions.

Importing the package registers the ``.rank`` namespace on Polars ``DataFrame``
and ``LazyFrame`` (and, when pandas is installed, the ``df.rank.<method>``
accessor on pandas frames, leaving pandas' own ``df.rank(...)`` untouched).
"""

from polars_rankmetrics import (
    _pandas_hook,  # df.rank.<method> on pandas, when pandas is imported
    sample,  # prm.sample.sample_data, as the docs use it
)
from polars_rankmetrics import namespace as _namespace  # registers .rank on Polars frames
from polars_rankmetrics._pipeline.overlap import IdOverlap, IdOverlapWarning, check_overlap
from polars_rankmetrics._version import package_version as _package_version
from polars_rankmetrics.analysis import (
    FriedmanResult,
    FusionOptimum,
    SampledMetricsWarning,
    anova,
    compare,
    compare_per_user,
    correction_coefficients,
    curves,
    expected_exposure,
    friedman,
    fuse,
    group_exposure,
    optimize_fusion,
    plot_comparison,
    plot_critical_difference,
    plot_curves,
    plot_distribution,
    plot_long_tail,
    plot_segments,
    rank_correlation,
    report,
    sampled_metrics,
    seeds_interval,
    similarity,
    trec_fair_score,
    users_needed,
)
from polars_rankmetrics.batches import Evaluator
from polars_rankmetrics.beyond import list_metrics
from polars_rankmetrics.conventions import Conventions
from polars_rankmetrics.evaluation import (
    AggregationPart,
    MetricSpec,
    aggregate,
    aggregation_parts,
    evaluate,
    parse_metric,
    parse_metrics,
    per_user_parts,
)
from polars_rankmetrics.matrix import top_k
from polars_rankmetrics.measures import Measure, Sum, register_measure, unregister_measure
from polars_rankmetrics.metrics import (
    average_precision,
    dcg,
    f1,
    first_relevant_rank,
    hit_rate,
    ndcg,
    precision,
    r_precision,
    recall,
    reciprocal_rank,
)
from polars_rankmetrics.namespace import rank  # df.rank, typed (type checkers cannot see df.rank)
from polars_rankmetrics.options import (
    ConventionOptions,
    EvaluateOptions,
    ListInputs,
    Roles,
)
from polars_rankmetrics.ranking import positions, relevance
from polars_rankmetrics.sample import sample_data

__version__ = _package_version()  # pyproject.toml is the one place it is written

__all__ = [
    "AggregationPart",
    "ConventionOptions",
    "Conventions",
    "EvaluateOptions",
    "Evaluator",
    "FriedmanResult",
    "FusionOptimum",
    "IdOverlap",
    "IdOverlapWarning",
    "ListInputs",
    "Measure",
    "MetricSpec",
    "Roles",
    "SampledMetricsWarning",
    "Sum",
    "__version__",
    "aggregate",
    "aggregation_parts",
    "anova",
    "average_precision",
    "check_overlap",
    "compare",
    "compare_per_user",
    "correction_coefficients",
    "curves",
    "dcg",
    "evaluate",
    "expected_exposure",
    "f1",
    "first_relevant_rank",
    "friedman",
    "fuse",
    "group_exposure",
    "hit_rate",
    "list_metrics",
    "ndcg",
    "optimize_fusion",
    "parse_metric",
    "parse_metrics",
    "per_user_parts",
    "plot_comparison",
    "plot_critical_difference",
    "plot_curves",
    "plot_distribution",
    "plot_long_tail",
    "plot_segments",
    "positions",
    "precision",
    "r_precision",
    "rank",
    "rank_correlation",
    "recall",
    "reciprocal_rank",
    "register_measure",
    "relevance",
    "report",
    "sample",
    "sample_data",
    "sampled_metrics",
    "seeds_interval",
    "similarity",
    "top_k",
    "trec_fair_score",
    "unregister_measure",
    "users_needed",
]

del _namespace, _package_version, _pandas_hook
