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
import subprocess
import sys
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


# Runs in a child interpreter: the kernel and its ZeroMQ sockets live and die there, so
# their teardown cannot trip this process's warnings-as-errors.
_EXECUTE = """
import json, sys, time
from pathlib import Path

import nbformat
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager
from nbclient import NotebookClient

notebook, kernels, timeout = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
# the only kernel: this interpreter (sys.executable), whatever kernels Jupyter has installed
spec = kernels / "prm-tests"
spec.mkdir(parents=True)
argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
(spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": "prm"}))
specs = KernelSpecManager(kernel_dirs=[str(kernels)], ensure_native_kernel=False)
client = NotebookClient(
    nbformat.read(notebook, as_version=4),
    km=KernelManager(kernel_name="prm-tests", kernel_spec_manager=specs),
    timeout=timeout,
    allow_errors=False,
    resources={"metadata": {"path": str(notebook.parent)}},  # as Jupyter: next to the notebook
)
start = time.perf_counter()
client.execute()  # raises CellExecutionError, naming the cell, on the first error
print(f"{time.perf_counter() - start:.1f}")
"""


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=IDS)
def test_notebook_runs(notebook: Path, tmp_path: Path) -> None:
    for module in ("nbformat", "nbclient", "ipykernel", "altair", "vl_convert"):
        # nbclient and ipykernel come with the test extra; the charts need the plot extra
        pytest.importorskip(module)
    # the kernel imports this checkout's package whether or not it is installed
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-c", _EXECUTE, str(notebook), str(tmp_path / "kernels"),
         str(CELL_TIMEOUT_S)],
        capture_output=True, text=True, check=False, timeout=NOTEBOOK_BUDGET_S + 60,
        env={**os.environ, "PYTHONPATH": path},
    )  # fmt: skip
    assert done.returncode == 0, f"{notebook.name} failed:\n{done.stderr[-6000:]}"
    elapsed = float(done.stdout.split()[-1])
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
