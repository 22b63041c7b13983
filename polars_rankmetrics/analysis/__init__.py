"""Deciding between systems: comparisons with tests and intervals, metric@k curves, reports.

Charts of these results are in :mod:`polars_rankmetrics.analysis.plots` (the ``plot`` extra,
imported when a chart is drawn), each also here and at the top level.

Everything here reads per-user scores (those of
:func:`polars_rankmetrics.evaluate` with ``per_user=True``) or runs one
evaluation plan; nothing changes how a metric is computed.
"""

from polars_rankmetrics.analysis.cd_diagram import plot_critical_difference
from polars_rankmetrics.analysis.comparison import compare, compare_per_user
from polars_rankmetrics.analysis.cutoff_curves import curves
from polars_rankmetrics.analysis.exposure import expected_exposure, group_exposure, trec_fair_score
from polars_rankmetrics.analysis.friedman_nemenyi import FriedmanResult, friedman
from polars_rankmetrics.analysis.fusion import FusionOptimum, fuse, optimize_fusion
from polars_rankmetrics.analysis.leaderboards import rank_correlation
from polars_rankmetrics.analysis.list_similarity import similarity
from polars_rankmetrics.analysis.planning import users_needed
from polars_rankmetrics.analysis.plots import (
    plot_comparison,
    plot_curves,
    plot_distribution,
    plot_long_tail,
    plot_segments,
)
from polars_rankmetrics.analysis.reporting import Report, report
from polars_rankmetrics.analysis.sampled import (
    SampledMetricsWarning,
    correction_coefficients,
    sampled_metrics,
)
from polars_rankmetrics.analysis.seeds import seeds_interval
from polars_rankmetrics.analysis.variance_analysis import anova

__all__ = [
    "FriedmanResult",
    "FusionOptimum",
    "Report",
    "SampledMetricsWarning",
    "anova",
    "compare",
    "compare_per_user",
    "correction_coefficients",
    "curves",
    "expected_exposure",
    "friedman",
    "fuse",
    "group_exposure",
    "optimize_fusion",
    "plot_comparison",
    "plot_critical_difference",
    "plot_curves",
    "plot_distribution",
    "plot_long_tail",
    "plot_segments",
    "rank_correlation",
    "report",
    "sampled_metrics",
    "seeds_interval",
    "similarity",
    "trec_fair_score",
    "users_needed",
]
