"""Every install line works today: the package is not on the package index yet.

``pip install polars_rankmetrics`` (and ``"polars_rankmetrics[plot]"``...) finds
nothing until the package is published, so it may appear only where the text says
it is for then; elsewhere the docs install from the repository (``pip install .``,
``".[plot]"``) or from the wheel CI builds, whose name carries the version of
``pyproject.toml``. No placeholder stands for an address the reader cannot know.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VERSION = re.search(r'^version = "([^"]+)"$', (ROOT / "pyproject.toml").read_text(), re.M)


def _texts() -> list[tuple[str, str]]:
    texts = [
        (str(path.relative_to(ROOT)), path.read_text())
        for path in [
            ROOT / "README.md",
            *sorted((ROOT / "docs").glob("*.md")),
            *sorted((ROOT / "polars_rankmetrics").rglob("*.py")),
        ]
    ]
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(notebook.read_text())["cells"]
        texts.append((notebook.name, "\n".join("".join(cell["source"]) for cell in cells)))
    return texts


TEXTS = _texts()
FROM_THE_INDEX = re.compile(r"""pip install ["']?polars_rankmetrics\b""")


def test_the_index_line_only_where_it_says_it_is_for_once_published() -> None:
    found = []
    for name, text in TEXTS:
        for match in FROM_THE_INDEX.finditer(text):
            # the paragraph around it (a blank line ends one)
            start = text.rfind("\n\n", 0, match.start()) + 1
            end = text.find("\n\n", match.end())
            paragraph = text[start : end if end >= 0 else len(text)]
            if "published" not in paragraph:
                found.append(f"{name}: {paragraph.strip()[:300]}")
    assert not found, (
        "pip install polars_rankmetrics finds nothing until the package is published: "
        "install from the repository (pip install .) or the wheel, or say it is for once it "
        "is published:\n" + "\n".join(found)
    )


def test_no_placeholder_for_an_address() -> None:
    found = [name for name, text in TEXTS if re.search(r"<[^<>\n]*address[^<>\n]*>", text)]
    assert not found


def test_wheel_names_carry_the_version_built() -> None:
    assert VERSION is not None
    found = [
        (name, version)
        for name, text in TEXTS
        for version in re.findall(r"polars_rankmetrics-([^-*\s]+)-py3-none-any\.whl", text)
        if version != VERSION.group(1)
    ]
    assert not found, f"wheels named with another version than {VERSION.group(1)}: {found}"


def test_getting_started_says_every_way_in() -> None:
    text = (ROOT / "docs" / "getting-started.md").read_text()
    install = text.split("## Install", 1)[1].split("\n## ", 1)[0]
    assert "pip install .  " in install  # from the repository
    assert '"dist/polars_rankmetrics-' in install
    assert '.whl[plot]"' in install
    assert "Once the package is published" in install
