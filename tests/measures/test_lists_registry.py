"""No module outside ``polars_rankmetrics/_measures/`` branches on a measure's name.

Every surface (evaluate, curves, Spark, the CLI, the plots) reads what a
measure declares (its ``inputs``, ``aggregation``, ``curve`` and ``lists``
hooks), so a measure added to the registry works everywhere unchanged. This
scans the package's source (an AST walk, so docstrings and examples, which
are not comparisons, are fine) for a comparison with a string literal that
is a registered measure name or alias: ``name == "coverage"``,
``name in {"novelty", "arp"}``, ``"ild" in names``, and membership in a
module-level collection of such literals (``_GROUP = frozenset({...})``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import polars_rankmetrics
from polars_rankmetrics._measures import all_measures, known_names
from polars_rankmetrics._measures._curve import CURVE_TABLES
from polars_rankmetrics._measures._registry import AGGREGATIONS, INPUTS

PACKAGE = Path(polars_rankmetrics.__file__).parent
MEASURES = PACKAGE / "_measures"
NAMES = frozenset(known_names())
# the registry's own vocabulary: a table, an input or an aggregation kind that shares its
# spelling with a measure (the "hits" table, hit_rate's alias "hits"; the "judged" input)
# is compared as that, never as a measure's name
VOCABULARY = frozenset({*INPUTS, *CURVE_TABLES, *AGGREGATIONS})


def _strings(node: ast.AST, constants: dict[str, frozenset[str]]) -> frozenset[str]:
    """The string literals ``node`` stands for: a literal, a collection of them, or a constant."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return frozenset({node.value})
    if isinstance(node, (ast.Set, ast.Tuple, ast.List)):
        return frozenset(s for element in node.elts for s in _strings(element, constants))
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in ("frozenset", "set", "tuple")
        and len(node.args) == 1
    ):
        return _strings(node.args[0], constants)
    if isinstance(node, ast.Name):
        return constants.get(node.id, frozenset())
    if isinstance(node, ast.Starred):
        return _strings(node.value, constants)
    return frozenset()


def _module_constants(tree: ast.Module) -> dict[str, frozenset[str]]:
    """Module-level names bound to literal strings or collections of them."""
    constants: dict[str, frozenset[str]] = {}
    for statement in tree.body:
        targets: list[ast.expr] = []
        if isinstance(statement, ast.Assign):
            targets, value = statement.targets, statement.value
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            targets, value = [statement.target], statement.value
        for target in targets:
            if isinstance(target, ast.Name):
                found = _strings(value, constants)
                if found:
                    constants[target.id] = found
    return constants


def name_comparisons(source: str, names: frozenset[str] = NAMES) -> list[tuple[int, str]]:
    """(line, measure name) of every comparison of ``source`` against a measure name."""
    tree = ast.parse(source)
    constants = _module_constants(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        for operand in (node.left, *node.comparators):
            for literal in sorted(_strings(operand, constants) & names - VOCABULARY):
                found.append((node.lineno, literal))
    return found


def test_no_module_outside_the_measures_compares_a_measure_name() -> None:
    offenders = [
        f"{path.relative_to(PACKAGE.parent)}:{line}: {name!r}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if MEASURES not in path.parents
        for line, name in name_comparisons(path.read_text(encoding="utf-8"))
    ]
    assert not offenders, "measure names compared outside _measures/:\n" + "\n".join(offenders)


def test_the_scan_finds_each_kind_of_name_branch() -> None:
    source = """
GROUP = frozenset({"coverage", "gini"})
ok = name == "ndcg"
ok = "ild" in names
ok = name in ("novelty", "arp")
ok = name not in {"calibration"}
ok = name in GROUP
ok = m.inputs == "hits"
doc = "coverage"
"""
    assert name_comparisons(source) == [
        (3, "ndcg"),
        (4, "ild"),
        (5, "arp"),
        (5, "novelty"),
        (6, "calibration"),
        (7, "coverage"),
        (7, "gini"),
    ]


def test_every_measure_of_the_lists_declares_its_hook() -> None:
    lists = [m for m in all_measures() if "beyond_accuracy" in m.inputs]
    assert {m.name for m in lists} >= {
        "coverage", "novelty", "arp", "long_tail", "gini", "personalization", "ild", "calibration",
    }  # fmt: skip
    for measure in lists:
        assert measure.lists is not None, measure.name
        assert (measure.aggregation == "group") == (type(measure.lists).__name__ == "OfGroup")
