"""Inputs and options declared once: in ``polars_rankmetrics.options``, read from there.

Every keyword option (roles, conventions, the inputs of the measures beside
the lists and the truth) is one :class:`~polars_rankmetrics.options.Declared`
record: its default, its type as the docs show it and what it means. The
typed declarations (the ``TypedDict`` s type checkers read, the engine's
``ListInputs`` spec) hold exactly those names; ``evaluate``'s docstring, the
command line's flags and the refusals of a missing input are made from the
records. No public surface names an input by hand: a new input is one
declaration plus the measures that read it (and the engine's list plan).
"""

from __future__ import annotations

import ast
import dataclasses
import typing
from pathlib import Path

import polars_rankmetrics
from polars_rankmetrics import options
from polars_rankmetrics._measures import builtin_measures
from polars_rankmetrics._pipeline.inputs import ListInputs
from polars_rankmetrics.cli import build_parser

PACKAGE = Path(polars_rankmetrics.__file__).parent
NAMES = {option.name for option in options.INPUTS}

# Public modules that may still spell an input's name, and why: each is a known exception
ALLOWED: dict[str, str] = {
    "options.py": "the declarations themselves",
    "analysis/exposure.py": "group_exposure and trec_fair_score take a catalog (items) and a "
    "group column of their own, not evaluate's inputs",
    "analysis/plots.py": "plot_long_tail's own interactions parameter; a chart's group field",
    "cli/demo.py": "the demo writes the sample's frames (interactions, items) as files",
    "kaggle.py": "a Kaggle prediction's items, its own word",
    "sample.py": "the sample's own frames",
}


def _public_modules() -> list[Path]:
    return [
        path
        for path in sorted(PACKAGE.rglob("*.py"))
        if not any(part.startswith("_") and part != "__init__.py" for part in
                   path.relative_to(PACKAGE).parts)
    ]  # fmt: skip


def input_names(path: Path) -> set[str]:
    """The inputs ``path`` names in code: string constants, keyword arguments, attributes.

    Docstrings are prose, method calls (``.items()``) and local names are not counted.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                skipped.add(id(first.value))
        if isinstance(node, ast.Call):
            skipped.add(id(node.func))
    found = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Constant) and node.value in NAMES:
            found.add(str(node.value))
        elif isinstance(node, ast.Attribute) and node.attr in NAMES:
            found.add(node.attr)
        elif isinstance(node, ast.keyword) and node.arg in NAMES:
            found.add(str(node.arg))
    return found


def test_every_option_is_declared_once_in_order() -> None:
    hints = typing.get_type_hints(options.EvaluateOptions)
    assert list(options.DECLARED) == list(hints)
    assert all(option.doc for option in options.DECLARED.values())
    assert [field.name for field in dataclasses.fields(ListInputs)] == [
        o.name for o in options.INPUTS
    ]
    assert options.FRAME_OPTIONS == ("interactions", "items")


def test_no_public_surface_names_an_input() -> None:
    flagged = {
        str(path.relative_to(PACKAGE)): sorted(found)
        for path in _public_modules()
        if (found := input_names(path))
    }
    unexplained = {module: found for module, found in flagged.items() if module not in ALLOWED}
    assert not unexplained, f"these surfaces name inputs by hand: {unexplained}"
    stale = sorted(set(ALLOWED) - set(flagged))
    assert not stale, f"allowed but no longer naming inputs (drop them from ALLOWED): {stale}"


def test_the_scan_finds_a_named_input(tmp_path: Path) -> None:
    module = tmp_path / "face.py"
    module.write_text(
        'def f(x):\n    """interactions in prose"""\n    return g(interactions=x, y="items").items()\n'
    )
    assert input_names(module) == {"interactions", "items"}


def test_the_command_line_takes_every_input_from_its_declaration() -> None:
    parser = build_parser()
    evaluate = next(
        action.choices["evaluate"] for action in parser._actions if getattr(action, "choices", None)
    )
    helps = {action.dest: action.help or "" for action in evaluate._actions}
    for option in options.INPUTS:
        assert option.name in helps, option.name
        readers = {m.name for m in builtin_measures() if option.reads and option.reads in m.inputs}
        assert all(name in helps[option.name] for name in readers), (option.name, readers)
