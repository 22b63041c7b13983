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
import base64
import json
import re
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOK_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))
IDS = [path.name for path in NOTEBOOKS]
CELL_TIMEOUT_S = 90
NOTEBOOK_BUDGET_S = 110
MAX_BYTES = 1_500_000
# the width the docs site gives a notebook's outputs in a 1280 px wide window (measured in
# Chromium: the table of contents and the prompts left out, docs/hooks/notebook_pages.py); a
# wider picture is shrunk to it, and its text with it (a 1,300 px chart's to 5-6 px)
PAGE_WIDTH_PX = 958


def _cells(notebook: Path) -> list[dict[str, Any]]:
    cells: list[dict[str, Any]] = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
    return [cell for cell in cells if cell["cell_type"] == "code"]


def _ends_in_expression(source: str) -> bool:
    body = ast.parse(source).body
    return bool(body) and isinstance(body[-1], ast.Expr)


# a warning names the kernel's temporary file of the cell: another one every run
_CELL_FILE = re.compile(r"\S*ipykernel_\d+\S*\.py:\d+")


def _texts(cell: dict[str, Any]) -> list[str]:
    """A cell's text outputs (printed text, values' text forms); pictures are compared apart."""
    texts = []
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream":
            texts.append("".join(output["text"]))
        elif "text/plain" in output.get("data", {}):
            texts.append("".join(output["data"]["text/plain"]))
    return [_CELL_FILE.sub("<cell>", text) for text in texts]


def _pictures(cell: dict[str, Any]) -> int:
    return sum("image/png" in output.get("data", {}) for output in cell.get("outputs", []))


# its own suite (python -m pytest -m docs): re-executing every notebook takes minutes
pytestmark = pytest.mark.docs


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=IDS)
def test_notebook_runs_and_gives_its_stored_outputs(notebook: Path, tmp_path: Path) -> None:
    for module in ("nbformat", "nbclient", "ipykernel", "altair", "vl_convert"):
        # nbclient and ipykernel come with the test extra; the charts need the plot extra
        pytest.importorskip(module)
    executed = tmp_path / notebook.name
    # a child interpreter: the kernel and its ZeroMQ sockets live and die there, so their
    # teardown cannot trip this process's warnings-as-errors
    done = subprocess.run(
        [sys.executable, str(NOTEBOOK_DIR / "execute.py"), str(notebook), "--out",
         str(executed), "--timeout", str(CELL_TIMEOUT_S)],
        capture_output=True, text=True, check=False, timeout=NOTEBOOK_BUDGET_S + 60,
    )  # fmt: skip
    assert done.returncode == 0, f"{notebook.name} failed:\n{done.stderr[-6000:]}"
    elapsed = float(done.stdout.split()[-1])
    assert elapsed < NOTEBOOK_BUDGET_S, f"{notebook.name} took {elapsed:.0f} s"
    # what a reader sees stored is what the notebook computes today: every printed number
    stored, fresh = _cells(notebook), _cells(executed)
    assert len(stored) == len(fresh)
    for index, (old, new) in enumerate(zip(stored, fresh, strict=True)):
        assert _texts(new) == _texts(old), (
            f"{notebook.name}: code cell {index} prints something else than its stored output; "
            "re-execute it (python notebooks/execute.py)"
        )
        assert _pictures(new) == _pictures(old), f"{notebook.name}: code cell {index}'s charts"


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


def _png_width(data: str) -> int:
    raw = base64.b64decode(data)
    assert raw[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width: int = struct.unpack(">I", raw[16:20])[0]
    return width


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=IDS)
def test_pictures_fit_the_page_at_their_own_size(notebook: Path) -> None:
    # the stored picture's pixels and the width the page gives it (its metadata), both
    wide = [
        (index, _png_width(output["data"]["image/png"]), output.get("metadata", {}))
        for index, cell in enumerate(_cells(notebook))
        for output in cell.get("outputs", [])
        if "image/png" in output.get("data", {})
    ]
    assert wide, f"{notebook.name} stores no picture"
    wide = [
        (index, width)
        for index, width, metadata in wide
        if max(width, metadata.get("image/png", {}).get("width", 0)) > PAGE_WIDTH_PX
    ]
    assert not wide, (
        f"{notebook.name}: pictures wider than the page's {PAGE_WIDTH_PX} px (code cell, width): "
        f"{wide}; give the chart a smaller width or scale_factor, or its legend below"
    )
