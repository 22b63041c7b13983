"""Deciding between systems: comparisons with tests and intervals, metric@k curves, reports.

Charts of these results are in :mod:`polars_rankmetrics.analysis.plots` (the ``plot`` extra).

Everything here reads per-user scores (those of
:func:`polars_rankmetrics.evaluate` with ``per_user=True``) or runs one
evaluation plan; nothing changes how a metric is computed.
"""

from polars_rankmetrics.analysis.anova import anova
from polars_rankmetrics.analysis.cd_diagram import plot_critical_difference
from polars_rankmetrics.analysis.compare import compare, compare_per_user
from polars_rankmetrics.analysis.curves import curves
from polars_rankmetrics.analysis.exposure import expected_exposure, group_exposure, trec_fair_score
from polars_rankmetrics.analysis.friedman import FriedmanResult, friedman
from polars_rankmetrics.analysis.planning import users_needed
from polars_rankmetrics.analysis.report import Report, report

__all__ = [
    "FriedmanResult",
    "Report",
    "anova",
    "compare",
    "compare_per_user",
    "curves",
    "expected_exposure",
    "friedman",
    "group_exposure",
    "plot_critical_difference",
    "report",
    "trec_fair_score",
    "users_needed",
]
