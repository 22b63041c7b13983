"""Every example of the documentation runs as a reader pastes it, starting from nothing.

* **A page** is pasted top to bottom into one fresh interpreter: each of its
  code blocks in order (a doctest block's shown output compared, a plain
  Python block run), in one namespace that starts empty, so the first use of
  a name must follow its import or definition *on that page*. The page runs in
  a copy of the folder ``rankmetrics demo --write DIR`` fills: the files the
  examples read (``recs.parquet``, ``submission.csv``, ``qrels.txt``, ...).
* **A docstring shown in the API reference** (every object of a
  ``::: target`` in ``docs/api.md``, its public members included) stands
  alone: its examples run in a namespace of their own that starts empty, not
  in its module's globals as ``--doctest-modules`` runs them.

The Spark page's example runs in the Spark suite
(``tests/adapters/test_spark_workers.py``, a fresh interpreter as well), and
the Spark adapter's docstring here carries the ``spark`` marker.
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import inspect
import os
import re
import shutil
import subprocess
import sys
import types
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
USER_PAGES = sorted(
    page for page in (ROOT / "docs").glob("*.md") if page.name not in ("DESIGN.md", "REGISTRY.md")
)
# run as a fresh interpreter by the Spark suite (tests/adapters/test_spark_workers.py)
SPARK_PAGES = {"spark.md"}
FLAGS = doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS
# a fenced block: its indent (inside a list item), its language and its body
FENCE = re.compile(
    r"^(?P<indent>[ \t]*)```(?P<lang>\w*)[^\n]*\n(?P<body>.*?)^(?P=indent)```", re.S | re.M
)
# what the pages' charts save (docs/img holds the copies the page shows)
SAVED = {
    "charts.md": {"comparison.png", "curves.png", "distribution.png", "long_tail.png",
                  "segments.png"},
}  # fmt: skip


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page: where it starts and its text, unindented."""

    line: int
    language: str
    body: str


def blocks(text: str) -> list[Block]:
    found = []
    for match in FENCE.finditer(text):
        indent = len(match.group("indent"))
        body = "\n".join(line[indent:] for line in match.group("body").splitlines()) + "\n"
        found.append(Block(text.count("\n", 0, match.start()) + 2, match.group("lang"), body))
    return found


def runs_here(block: Block) -> bool:
    return ">>>" in block.body or block.language == "python"


@pytest.fixture(scope="module")
def sample_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("demo") / "files"
    done = subprocess.run(
        [sys.executable, "-m", "polars_rankmetrics.cli", "demo", "--write", str(folder)],
        capture_output=True, text=True, check=False, cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return folder


@pytest.mark.docs
@pytest.mark.parametrize("page", USER_PAGES, ids=[page.name for page in USER_PAGES])
def test_every_example_is_a_code_block(page: Path) -> None:
    # a doctest outside a fence is shown as a paragraph of prose, without its copy button
    text = page.read_text()
    inside = sum(
        block.body.count("\n>>> ") + block.body.startswith(">>> ") for block in blocks(text)
    )
    everywhere = len(re.findall(r"^[ \t]*>>> ", text, re.M))
    assert inside == everywhere, f"{page.name}: {everywhere - inside} examples outside a code block"


@pytest.mark.docs
@pytest.mark.parametrize(
    "page",
    [page for page in USER_PAGES if any(runs_here(b) for b in blocks(page.read_text()))],
    ids=lambda page: page.name,
)
def test_page_runs_as_pasted_from_top_to_bottom(
    page: Path, sample_folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if page.name in SPARK_PAGES:
        pytest.skip("run as pasted by the Spark suite (tests/adapters/test_spark_workers.py)")
    text = page.read_text()
    if "import pandas" in text:
        pytest.importorskip("pandas")
    if "plot_" in text:
        pytest.importorskip("altair")
        pytest.importorskip("vl_convert")
    work = tmp_path / "work"
    shutil.copytree(sample_folder, work)
    monkeypatch.chdir(work)
    namespace: dict[str, object] = {"__name__": "__main__"}
    report: list[str] = []
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    parser = doctest.DocTestParser()
    tried = 0
    for block in filter(runs_here, blocks(text)):
        where = f"{page.name}, line {block.line}"
        if ">>>" in block.body:
            test = parser.get_doctest(block.body, {}, where, str(page), block.line - 1)
            test.globs = namespace  # the page's one namespace (a DocTest copies the one given)
            result = runner.run(test, out=report.append, clear_globs=False)
            tried += result.attempted
            assert result.failed == 0, f"{where}:\n{''.join(report)[-6000:]}"
        else:
            exec(compile(block.body, where, "exec"), namespace)
            tried += 1
    assert tried > 0
    if page.name in SAVED:
        assert {path.name for path in work.glob("*.png")} == SAVED[page.name]


def api_targets() -> list[str]:
    """The ``::: path`` targets of docs/api.md."""
    return re.findall(r"^::: ([\w.]+)$", (ROOT / "docs" / "api.md").read_text(), re.M)


def _resolve(path: str) -> object:
    if importlib.util.find_spec(path.rsplit(".", 1)[0]) is not None:
        try:
            return importlib.import_module(path)
        except ModuleNotFoundError:
            pass
    module, attribute = path.rsplit(".", 1)
    return getattr(importlib.import_module(module), attribute)


def _public(name: str, root: str) -> bool:
    # mkdocstrings shows public members: none of the parts below the target is private
    return not any(
        part.startswith("_") and not part.startswith("__") for part in name[len(root) :].split(".")
    )


def shown_docstrings(target: str) -> list[doctest.DocTest]:
    """The doctests of a target of the API reference and of its members shown there."""
    obj = _resolve(target)
    finder = doctest.DocTestFinder(exclude_empty=True)
    if isinstance(obj, types.ModuleType):
        # the module's own docstring, then each name of its __all__ wherever it is defined
        found = doctest.DocTestFinder(recurse=False).find(obj, target, globs={})
        for name in obj.__all__:
            member = getattr(obj, name)
            if inspect.isroutine(member) or inspect.isclass(member):
                found += finder.find(
                    member, f"{target}.{name}", module=inspect.getmodule(member), globs={}
                )
    else:
        found = finder.find(obj, target, module=inspect.getmodule(obj), globs={})
    return [test for test in found if test.examples and _public(test.name, target)]


def _cases() -> list[object]:
    cases: list[object] = []
    for target in api_targets():
        if target.startswith("polars_rankmetrics.spark"):
            # importing the adapter needs pyspark; its doctest starts a SparkSession
            cases.append(pytest.param(target, None, id=target, marks=pytest.mark.spark))
            continue
        cases.extend(
            pytest.param(target, test.name, id=test.name, marks=pytest.mark.docs)
            for test in shown_docstrings(target)
        )
    return cases


@pytest.mark.parametrize(("target", "name"), _cases())
def test_docstring_example_stands_alone(
    target: str, name: str | None, request: pytest.FixtureRequest
) -> None:
    if name is None:  # the Spark adapter: its example gets the test session from getOrCreate()
        pytest.importorskip("pyspark")
        request.getfixturevalue("spark")
    if "plots" in target or "cd_diagram" in target:
        pytest.importorskip("altair")
    tests = [test for test in shown_docstrings(target) if name in (None, test.name)]
    assert tests, f"{target} shows no example"
    report: list[str] = []
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    for test in tests:
        test.globs = {"__name__": "__main__"}  # nothing imported: the example imports what it uses
        result = runner.run(test, out=report.append)
        assert result.failed == 0, f"{test.name} as pasted:\n{''.join(report)[-6000:]}"
