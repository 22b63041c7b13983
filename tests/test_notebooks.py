"""The notebooks run top to bottom, and they are stored executed.

Each notebook runs in a fresh Jupyter kernel started with this interpreter
(``sys.executable``), so it sees the same installed package as the tests;
every cell has a time limit and the whole notebook must finish well under two
minutes. The stored copies must carry their outputs (they render on GitHub
and in the docs site without being run again): every code cell executed, in
order, with at least one output, and charts embedded as PNG images.
"""

from __future__ import annotations

import ast
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
IDS = [path.name for path in NOTEBOOKS]
CELL_TIMEOUT_S = 90
NOTEBOOK_BUDGET_S = 110
MAX_BYTES = 1_500_000


def _cells(notebook: Path) -> list[dict[str, Any]]:
    cells: list[dict[str, Any]] = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return [cell for cell in cells if cell["cell_type"] == "code"]


def _ends_in_expression(source: str) -> bool:
    body = ast.parse(source).body
    return bool(body) and isinstance(body[-1], ast.Expr)


def _kernel_manager(kernels: Path) -> Any:
    """A kernel manager whose only kernel runs ``sys.executable -m ipykernel_launcher``."""
    from jupyter_client.kernelspec import KernelSpecManager  # noqa: PLC0415 (test extra)
    from jupyter_client.manager import KernelManager  # noqa: PLC0415

    spec = kernels / "prm-tests"
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(
        json.dumps({"argv": argv, "display_name": "prm tests", "language": "python"})
    )
    specs = KernelSpecManager(kernel_dirs=[str(kernels)], ensure_native_kernel=False)
    return KernelManager(kernel_name="prm-tests", kernel_spec_manager=specs)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # jupyter_client / zmq internals
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=IDS)
def test_notebook_runs(notebook: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    pytest.importorskip("altair")  # the notebooks draw charts: the plot extra
    document = nbformat.read(notebook, as_version=4)
    # the kernel imports this checkout's package whether or not it is installed
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    monkeypatch.setenv("PYTHONPATH", path)
    client = nbclient.NotebookClient(
        document,
        km=_kernel_manager(tmp_path / "kernels"),
        timeout=CELL_TIMEOUT_S,
        allow_errors=False,
        resources={"metadata": {"path": str(notebook.parent)}},  # as Jupyter: next to it
    )
    start = time.perf_counter()
    client.execute()  # raises CellExecutionError naming the cell on the first error
    elapsed = time.perf_counter() - start
    assert elapsed < NOTEBOOK_BUDGET_S, f"{notebook.name} took {elapsed:.0f} s"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=IDS)
def test_notebook_is_stored_executed(notebook: Path) -> None:
    cells = _cells(notebook)
    assert cells, f"{notebook.name} has no code cell"
    counts = [cell.get("execution_count") for cell in cells]
    unexecuted = [index for index, count in enumerate(counts) if count is None]
    assert not unexecuted, f"{notebook.name}: code cells {unexecuted} were not executed"
    assert counts == list(range(1, len(cells) + 1)), (
        f"{notebook.name} was not run top to bottom in one go: execution counts {counts}"
    )
    # a cell ending in an expression shows its value (one that only defines things may be silent)
    silent = [
        index
        for index, cell in enumerate(cells)
        if _ends_in_expression("".join(cell["source"])) and not cell.get("outputs")
    ]
    assert not silent, f"{notebook.name}: code cells {silent} end in an expression but show nothing"
    assert any(cell.get("outputs") for cell in cells), f"{notebook.name} stores no output at all"
    errors = [
        index
        for index, cell in enumerate(cells)
        for output in cell["outputs"]
        if output.get("output_type") == "error"
    ]
    assert not errors, f"{notebook.name}: code cells {errors} stored an error"
    assert notebook.stat().st_size < MAX_BYTES, f"{notebook.name} is over {MAX_BYTES} bytes"


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=IDS)
def test_charts_are_static_images(notebook: Path) -> None:
    """A chart is stored as a PNG (it renders anywhere), never as a Vega-Lite spec only."""
    outputs = [output for cell in _cells(notebook) for output in cell.get("outputs", [])]
    kinds = {kind for output in outputs for kind in output.get("data", {})}
    vega = {kind for kind in kinds if "vegalite" in kind or "vega" in kind}
    assert not vega - {"image/png"}, f"{notebook.name} stores a chart as {sorted(vega)}"


def test_there_are_the_four_notebooks() -> None:
    names = {path.stem for path in NOTEBOOKS}
    assert {"quickstart", "comparing_models", "kaggle_submission", "trec_evaluation"} <= names
