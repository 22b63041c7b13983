"""A notebook runs wherever it is opened: it reads no file of the repository by path.

The notebooks are rendered on the docs site and downloaded from there; a path such
as ``../tests/data/...`` exists only in a clone. Data comes from the package
(``prm.sample_data()``, ``polars_rankmetrics.trec.trec_eval_files()``) or is
written by the notebook itself.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
# a path that climbs out of the notebook's folder, or into the repository's test data
CLONE_PATH = re.compile(r"""Path\(\s*["']\.\.["']\s*\)|["']\.\./|tests/data|["']tests["']""")


def test_notebooks_read_no_file_of_the_clone() -> None:
    found = []
    for notebook in NOTEBOOKS:
        for cell in json.loads(notebook.read_text())["cells"]:
            source = "".join(cell["source"])
            climbs = CLONE_PATH.search(source) if cell["cell_type"] == "code" else None
            if climbs is not None:
                found.append(f"{notebook.name}: {climbs.group()!r}")
    assert len(NOTEBOOKS) >= 4
    assert not found, found
