"""Analysis of evaluation results: comparisons, curves and charts (``analysis.plots``)."""
