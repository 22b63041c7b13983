"""The engine never climbs: no private module imports a public one, except the declarations.

The engine (``_measures/``, ``_pipeline/``, the private analysis modules and the
private helpers beside them) is what every public face calls; if it imported a
face, the faces could no longer be thin shells over it and import cycles would
follow. The only public modules below the faces are the declarations
(:mod:`polars_rankmetrics.conventions` and :mod:`polars_rankmetrics.options`),
which themselves import no other public module. Imports inside functions count
too: a late import is still an arrow up.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import polars_rankmetrics

PACKAGE = Path(polars_rankmetrics.__file__).parent
DECLARATIONS = frozenset({"polars_rankmetrics.conventions", "polars_rankmetrics.options"})
# the pandas hook registers the public pandas adapter on import: it is an adapter's shim,
# not part of the engine
ADAPTER_SHIMS = frozenset({"polars_rankmetrics._pandas_hook"})


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def is_private(module: str) -> bool:
    """A module some component of whose dotted path (after the package) starts with ``_``."""
    return any(part.startswith("_") and not part.startswith("__") for part in module.split(".")[1:])


def imported_modules(path: Path) -> Iterator[tuple[int, str]]:
    """Every module of the package that ``path`` imports, anywhere in it, with its line."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("polars_rankmetrics"):
                    yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join([*base, *([node.module] if node.module else [])])
            else:
                source = node.module or ""
            if not source.startswith("polars_rankmetrics"):
                continue
            # "from polars_rankmetrics import evaluate" may name a module or a function
            for alias in node.names:
                candidate = f"{source}.{alias.name}"
                is_module = (PACKAGE.parent / Path(*candidate.split("."))).with_suffix(
                    ".py"
                ).exists() or (PACKAGE.parent / Path(*candidate.split("."))).is_dir()
                yield node.lineno, candidate if is_module else source


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def test_the_scan_sees_the_package() -> None:
    modules = {_module_name(path) for path in _modules()}
    assert {"polars_rankmetrics._pipeline.plan", "polars_rankmetrics.evaluation"} <= modules
    # the scan finds an import inside a function (the kind this test exists for)
    found = dict(imported_modules(PACKAGE / "_arrow.py"))
    assert any(is_private(name) for name in found.values())


def test_the_engine_imports_no_public_module() -> None:
    arrows_up = []
    for path in _modules():
        module = _module_name(path)
        if not is_private(module) or module in ADAPTER_SHIMS:
            continue
        for line, target in imported_modules(path):
            if target == "polars_rankmetrics" or (
                not is_private(target) and target not in DECLARATIONS
            ):
                arrows_up.append(f"{module}:{line} imports {target}")
    assert not arrows_up, "\n".join(arrows_up)


def test_the_declarations_import_no_other_public_module() -> None:
    arrows_up = []
    for path in _modules():
        module = _module_name(path)
        if module not in DECLARATIONS:
            continue
        for line, target in imported_modules(path):
            if not is_private(target) and target not in DECLARATIONS:
                arrows_up.append(f"{module}:{line} imports {target}")
    assert not arrows_up, "\n".join(arrows_up)
