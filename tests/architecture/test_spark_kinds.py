"""Spark names no statistic: every value it computes comes from the kinds' own formulas.

A measure's aggregation kind (mean, pooled ratio, geometric mean, sum) says
how its users combine, once, in :data:`polars_rankmetrics._pipeline.aggregate.FINISH`,
which the single-machine plan and Spark's combine of its buckets both call; a
measure of whole groups of lists finishes from its merged exposures in its
kind's module (:func:`polars_rankmetrics._measures.lists._exposure.merged_values`),
and the popularity counts follow their kind's rule. So ``spark.py`` spells no
kind, no exposure statistic and no counting rule: a scan of its code (not its
prose) keeps it so.
"""

from __future__ import annotations

import ast
import typing
from collections.abc import Collection
from pathlib import Path

import polars_rankmetrics
from polars_rankmetrics._measures._registry import Aggregation
from polars_rankmetrics._measures.lists._hooks import Count, ExposureStat
from polars_rankmetrics._pipeline.aggregate import FINISH
from polars_rankmetrics.options import INPUTS

SPARK = Path(polars_rankmetrics.__file__).parent / "spark.py"
# "group" and "interactions" are also inputs' names (the group column, the history), which
# Spark ships: tests/architecture/test_inputs_declared.py accounts for those
STATISTICS = {
    *typing.get_args(Aggregation),
    *typing.get_args(ExposureStat),
    *typing.get_args(Count),
    "longest",
} - {option.name for option in INPUTS}


def named_statistics(path: Path, names: Collection[str] = STATISTICS) -> list[tuple[int, str]]:
    """The statistic names (``names``) spelt as strings in ``path``'s code (docstrings are prose)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    prose = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef))
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return sorted(
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and node.value in names and id(node) not in prose
    )


def test_spark_names_no_statistic() -> None:
    assert named_statistics(SPARK) == []


def test_the_scan_would_see_one(tmp_path: Path) -> None:
    module = tmp_path / "engine.py"
    module.write_text('"""mean, in prose"""\nif kind == "mean":\n    value = total / count\n')
    assert named_statistics(module) == [(2, "mean")]


def test_every_kind_combinable_from_sums_has_its_finish() -> None:
    assert set(FINISH) == {"mean", "pooled", "geometric_mean", "sum"}
    assert set(typing.get_args(Aggregation)) - set(FINISH) == {"group"}
