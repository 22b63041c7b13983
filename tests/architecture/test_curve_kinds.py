"""Curves name no exposure statistic: the group measures' kind computes them at every k.

The statistics of the exposures x_i that the measures of whole groups of
lists read (:data:`polars_rankmetrics._measures.lists._hooks.ExposureStat`,
and the longest list) are computed once, in the kind's module
(:mod:`polars_rankmetrics._measures.lists._exposure`), for ``evaluate``,
``curves`` and Spark. ``analysis/_list_curves.py`` asks it for the
statistics at its grid of cutoffs and applies each hook's formula: a scan of
its code (not its prose) keeps it from spelling a statistic again.
"""

from __future__ import annotations

import typing
from pathlib import Path

import polars_rankmetrics
from polars_rankmetrics._measures.lists._hooks import ExposureStat

from .test_spark_kinds import named_statistics

LIST_CURVES = Path(polars_rankmetrics.__file__).parent / "analysis" / "_list_curves.py"
EXPOSURE_STATISTICS = {*typing.get_args(ExposureStat), "longest"}


def test_list_curves_name_no_exposure_statistic() -> None:
    assert named_statistics(LIST_CURVES, EXPOSURE_STATISTICS) == []


def test_the_scan_would_see_one(tmp_path: Path) -> None:
    module = tmp_path / "curves.py"
    module.write_text('"""pairs, in prose"""\nif "pairs" in reads:\n    running = pairs\n')
    assert named_statistics(module, EXPOSURE_STATISTICS) == [(2, "pairs")]
