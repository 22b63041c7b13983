"""Only the frame boundary knows the backends: pandas and Arrow appear nowhere else.

Every public function reads its frames through :mod:`polars_rankmetrics._frames`
(and gives its result back there); the engine below sees Polars frames only.
An AST scan of every module of the package looks for what handling another
backend takes: importing pandas, pyarrow or the pandas conversion
(``_arrow``), calling the conversions (``to_pandas``, ``from_pandas``,
``from_arrow``, ``to_arrow``, ``__arrow_c_stream__``), testing a frame for
pandas (``is_pandas``, the strings ``"pandas"``/``"pyarrow"``). Docstrings may
name the backends; code may not, outside the modules allowed below.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import polars_rankmetrics
from tests.architecture.test_layers import _module_name

PACKAGE = Path(polars_rankmetrics.__file__).parent

#: The modules that may handle pandas or Arrow, each with its reason.
ALLOWED = {
    "polars_rankmetrics._frames": "the frame boundary itself",
    "polars_rankmetrics._arrow": "pandas <-> Polars through Arrow, used by the boundary only",
    "polars_rankmetrics.pandas": "the pandas adapter: df.rank, index labels, index-level roles",
    "polars_rankmetrics._pandas_hook": "registers the pandas adapter when pandas is imported",
    # Spark's own exchange: Arrow schemas and record batches between Spark's workers and
    # Polars, never a frame a user passes to a public function
    "polars_rankmetrics.spark": "Spark's Arrow exchange with its workers",
}

_MODULES = ("pandas", "pyarrow")
_CALLS = frozenset(
    {"to_pandas", "from_pandas", "from_arrow", "to_arrow", "__arrow_c_stream__", "is_pandas"}
)
_NAMES = frozenset({"is_pandas", "_is_pandas", "_arrow"})
_STRINGS = frozenset({"pandas", "pyarrow", "__arrow_c_stream__"})


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the nodes that are docstrings (a module's, a class's, a function's)."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def backend_handling(source: str) -> Iterator[tuple[int, str]]:
    """Each place in ``source`` that handles pandas or Arrow, with its line."""
    tree = ast.parse(source)
    docstrings = _docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in _MODULES or alias.name.endswith("._arrow"):
                    yield node.lineno, f"import {alias.name}"
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            names = [alias.name for alias in node.names]
            if module.split(".")[0] in _MODULES or module.endswith("._arrow") or "_arrow" in names:
                yield node.lineno, f"from {module} import {', '.join(names)}"
        elif isinstance(node, ast.Attribute) and node.attr in _CALLS | _NAMES:
            yield node.lineno, f".{node.attr}"
        elif isinstance(node, ast.Name) and node.id in _NAMES:
            yield node.lineno, node.id
        elif (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and id(node) not in docstrings
            and (node.value in _STRINGS or node.value.startswith(("pandas.", "pyarrow.")))
        ):
            yield node.lineno, repr(node.value)


def test_the_scan_finds_backend_handling() -> None:
    # each way the faces used to detect or convert pandas, as they were written
    written = '''
"""A docstring may say pandas."""
import pandas as pd
from polars_rankmetrics import _arrow
def f(frame):
    """And so may this one: "pandas"."""
    if type(frame).__module__.split(".")[0] == "pandas":
        return _arrow.to_polars(frame, name="x")
    if _is_pandas(frame) or hasattr(frame, "__arrow_c_stream__"):
        return pl.from_pandas(frame).to_arrow()
'''
    found = {what for _, what in backend_handling(written)}
    assert found == {
        "import pandas",
        "from polars_rankmetrics import _arrow",
        "'pandas'",
        "_arrow",
        "_is_pandas",
        "'__arrow_c_stream__'",
        ".to_arrow",
        ".from_pandas",
    }
    assert not list(backend_handling('"""pandas in, pandas out."""\nx = "a pandas frame"\n'))


def test_pandas_and_arrow_are_handled_only_at_the_boundary() -> None:
    modules = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}
    assert set(ALLOWED) <= set(modules), "an allowed module is gone: update ALLOWED"
    found = [
        f"{module}:{line}: {what}"
        for module, path in modules.items()
        if module not in ALLOWED
        for line, what in backend_handling(path.read_text(encoding="utf-8"))
    ]
    assert not found, "pandas/Arrow handled outside polars_rankmetrics._frames:\n" + "\n".join(
        found
    )
