"""Faces thin, engines short: a statement budget for every function of the package.

A public function (a public name in a public module, or a public method of a class there)
stays under about 30 statements, an engine function under about 80. Statements, not lines:
the AST counts a Polars chain or a long call as one, so formatting never moves a function
over or under its budget, and a docstring is free. A function over budget is split into
named steps (helpers that say what each part does), never excused here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import polars_rankmetrics

PACKAGE = Path(polars_rankmetrics.__file__).parent
PUBLIC_BUDGET = 30
ENGINE_BUDGET = 80


def _is_private(path: Path) -> bool:
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    return any(part.startswith("_") and not part.startswith("__") for part in parts)


def _statements(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """Statements inside the function (nested ones included), its docstring not counted."""
    count = sum(1 for node in ast.walk(function) if isinstance(node, ast.stmt)) - 1
    first = function.body[0]
    if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
        count -= 1
    return count


def _functions(tree: ast.Module) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Module-level functions and the methods of module-level classes, with their names."""
    found: list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found.append((node.name, node))
        elif isinstance(node, ast.ClassDef):
            private_class = node.name.startswith("_")
            for member in node.body:
                if isinstance(member, ast.FunctionDef | ast.AsyncFunctionDef):
                    name = f"{node.name}.{member.name}"
                    found.append(("_" + name if private_class else name, member))
    return found


def _budgets() -> list[tuple[str, int, int]]:
    """(where, statements, budget) for every function of the package."""
    rows = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        private_module = _is_private(path)
        for name, function in _functions(tree):
            leaf = name.rsplit(".", 1)[-1]
            dunder = leaf.startswith("__") and leaf.endswith("__")
            public = (
                not private_module
                and not name.startswith("_")
                and not (leaf.startswith("_") and not dunder)
            )
            budget = PUBLIC_BUDGET if public else ENGINE_BUDGET
            where = f"{path.relative_to(PACKAGE.parent)}:{name}"
            rows.append((where, _statements(function), budget))
    return rows


def test_every_function_within_its_budget() -> None:
    over = [
        f"{where}: {count} statements (budget {budget})"
        for where, count, budget in _budgets()
        if count > budget
    ]
    assert not over, "split into named steps:\n" + "\n".join(over)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('def f():\n    """Doc."""\n    return 1\n', 1),
        ("def f(x):\n    if x:\n        y = 1\n    else:\n        y = 2\n    return y\n", 4),
        ("def f(df):\n    return df.filter(1).select(2).group_by(3).agg(4)\n", 1),
    ],
)
def test_statements_are_counted_as_the_ast_sees_them(source: str, expected: int) -> None:
    function = ast.parse(source).body[0]
    assert isinstance(function, ast.FunctionDef)
    assert _statements(function) == expected


def test_the_scan_sees_public_faces_and_engines() -> None:
    rows = {where: budget for where, _, budget in _budgets()}
    assert rows["polars_rankmetrics/evaluation.py:evaluate"] == PUBLIC_BUDGET
    assert rows["polars_rankmetrics/_pipeline/plan.py:plan"] == ENGINE_BUDGET
