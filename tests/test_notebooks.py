"""Every code cell of the notebooks runs, in order, without error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[1] / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[path.name for path in NOTEBOOKS])
def test_notebook_runs(notebook: Path) -> None:
    cells = json.loads(notebook.read_text())["cells"]
    namespace: dict[str, object] = {}
    for index, cell in enumerate(cell for cell in cells if cell["cell_type"] == "code"):
        source = "".join(cell["source"])
        exec(compile(source, f"{notebook.name}[cell {index}]", "exec"), namespace)


def test_there_is_a_notebook() -> None:
    assert NOTEBOOKS
