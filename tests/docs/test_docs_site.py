"""The documentation site builds with ``mkdocs build --strict``, and its examples run.

Run these with ``pytest -m docs`` (the default run leaves them out; CI runs them). The site build
is skipped (with the reason) where the ``docs`` extra is not installed.
"""

from __future__ import annotations

import ast
import html
import importlib
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import polars_rankmetrics as prm
from polars_rankmetrics._measures import _catalog as catalog
from polars_rankmetrics._measures import builtin_measures
from polars_rankmetrics._measures._catalog import metric_string
from polars_rankmetrics.options import DEFAULTS

ROOT = Path(__file__).resolve().parents[2]
PAGES = sorted((ROOT / "docs").glob("*.md"))
# DESIGN.md and REGISTRY.md are for contributors, excluded from the site (mkdocs.yml)
USER_PAGES = [page for page in PAGES if page.name not in ("DESIGN.md", "REGISTRY.md")]
DOCS_PACKAGES = (
    "mkdocs",
    "material",
    "mkdocstrings",
    "mkdocstrings_handlers.python",
    "mkdocs_jupyter",
)

# the public names the API reference must render (a submodule is documented by its names)
PUBLIC = [name for name in prm.__all__ if name != "__version__" and name != "sample"]

pytestmark = pytest.mark.docs


def test_site_builds_strictly(tmp_path: Path) -> None:
    missing = [
        name for name in DOCS_PACKAGES if importlib.util.find_spec(name.split(".")[0]) is None
    ]
    if missing:
        pytest.skip(f'mkdocs build needs the docs extra (pip install ".[docs]"); missing {missing}')
    site = tmp_path / "site"
    # run from tmp_path: mkdocs-jupyter writes a .cache folder into the working directory
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
         "-d", str(site)],
        cwd=tmp_path, capture_output=True, text=True, check=False,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-4000:]
    assert "WARNING" not in result.stderr, result.stderr[-4000:]
    api = (site / "api" / "index.html").read_text()
    for name in (*PUBLIC, "plot_curves", "read_trec_run", "unregister"):
        assert re.search(rf'id="polars_rankmetrics\.[\w.]*\b{name}"', api), name
    # every shared option with its default, in the table and in evaluate's signature
    evaluate = api.split('id="polars_rankmetrics.evaluation.evaluate"')[1]
    signature = evaluate.split("</code></pre>")[0]
    for option, default in DEFAULTS.items():
        assert f"<code>{option}</code>" in api, option
        shown = f'"{default}"' if isinstance(default, str) else str(default)
        pattern = rf'"n">{option}</span>[^\n]*<span class="o">=</span> <span [^>]*>{shown}</span>'
        assert re.search(pattern, signature), f"evaluate's signature lacks {option}={shown}"
    # the measure tables and lists filled in from the registry
    measures = (site / "measures" / "index.html").read_text()
    home = (site / "index.html").read_text()
    for measure in builtin_measures():
        assert f"<code>{html.escape(catalog.label(measure))}</code>" in measures, measure.name
        assert f"<code>{html.escape(metric_string(measure))}</code>" in home, measure.name
    assert "<!-- measures" not in measures + home
    notebook = (site / "notebooks" / "quickstart" / "index.html").read_text()
    # a notebook's outputs get the page's width: no table of contents beside them, no prompts
    assert 'data-md-type="toc" hidden' in notebook
    assert 'prompt">In\u00a0[1]:' not in notebook
    # doctest's marker of a blank output line is shown as the blank line it stands for
    shown = [page for page in site.rglob("*.html") if "BLANKLINE" in page.read_text()]
    assert not shown, f"<BLANKLINE> shown on {shown}"
    assert (site / "img" / "curves.png").exists()
    # the copy button of an example copies its input without prompts or output: valid Python
    copied = [
        (page, html.unescape(code))
        for page in site.rglob("*.html")
        for code in re.findall(r'data-copy="([^"]*)"', page.read_text())
    ]
    assert len(copied) > 50, "examples with prompts should carry their runnable input"
    assert any(page.parent.name == "api" for page, _ in copied), "docstring examples too"
    for page, code in copied:
        assert ">>>" not in code, page
        compile(code, str(page), "exec")


def test_every_page_is_in_the_nav() -> None:
    config = (ROOT / "mkdocs.yml").read_text()
    for page in USER_PAGES:
        assert f" {page.name}" in config, f"{page.name} is not in mkdocs.yml's nav"
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        assert f"notebooks/{notebook.name}" in config, f"{notebook.name} is not in the nav"


def mentioned_names(text: str) -> tuple[set[str], set[tuple[str, str]]]:
    attributes = set(re.findall(r"\bprm\.([A-Za-z_]\w*)", text))
    imports = {
        (module, name.split(" as ")[0].strip())
        for module, names in re.findall(
            r"from (polars_rankmetrics[\w.]*) import \(?([\w ,\n]+?)\)?\n", text
        )
        for name in names.split(",")
        if name.strip()
    }
    return attributes, imports


@pytest.mark.parametrize(
    "document", [ROOT / "README.md", *USER_PAGES], ids=["README.md", *[p.name for p in USER_PAGES]]
)
def test_documents_name_only_what_exists(document: Path) -> None:
    attributes, imports = mentioned_names(document.read_text())
    for name in attributes:
        assert hasattr(prm, name), f"{document.name} mentions prm.{name}, which does not exist"
    for module, name in imports:
        if module == "polars_rankmetrics.analysis.plots":
            pytest.importorskip("altair")
        # a name is an attribute of the module or one of its submodules (spark, trec, ...)
        found = hasattr(importlib.import_module(module), name) or (
            importlib.util.find_spec(f"{module}.{name}") is not None
        )
        assert found, f"{document.name} imports {name} from {module}, which does not exist"


def api_targets() -> list[str]:
    """The ``::: path`` targets of docs/api.md."""
    return re.findall(r"^::: ([\w.]+)$", (ROOT / "docs" / "api.md").read_text(), re.M)


def resolve(path: str) -> object:
    module, attribute = path.rsplit(".", 1)
    return getattr(importlib.import_module(module), attribute, None)


def test_api_reference_renders_every_public_name() -> None:
    # each public name has its own '::: module.name' (a new public name without docs fails)
    targets = api_targets()
    missing = [
        name
        for name in PUBLIC
        if not any(
            path.endswith(f".{name}") and resolve(path) is getattr(prm, name)
            for path in targets
            if not path.startswith("polars_rankmetrics.spark")  # importing it needs pyspark
        )
    ]
    assert not missing, f"docs/api.md lacks '::: polars_rankmetrics.<module>.<name>' for {missing}"


@pytest.mark.parametrize("module", ["pandas", "spark"])
def test_api_reference_renders_every_adapter_function(module: str) -> None:
    # read statically: importing polars_rankmetrics.spark needs pyspark
    source = (ROOT / "polars_rankmetrics" / f"{module}.py").read_text()
    names = next(
        ast.literal_eval(node.value)
        for node in ast.parse(source).body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "__all__"
    )
    targets = set(api_targets())
    missing = [name for name in names if f"polars_rankmetrics.{module}.{name}" not in targets]
    assert not missing, f"docs/api.md lacks {[f'polars_rankmetrics.{module}.{n}' for n in missing]}"


def test_committed_measure_lists_match_the_registry() -> None:
    stale = [str(path.relative_to(ROOT)) for path in catalog.stale()]
    assert not stale, f"{stale} list other measures than the registry: run {catalog.COMMAND}"


def test_evaluate_docstring_names_every_measure() -> None:
    doc = prm.evaluate.__doc__ or ""
    listed = set(
        re.findall(r"``(\w+)(?:\([^`]*\))?(?:@k)?``", doc.split(catalog.DOCSTRING_LEAD)[1])
    )
    for measure in builtin_measures():
        assert {measure.name, *measure.aliases} <= listed, measure.name


def test_site_pages_use_the_generated_lists() -> None:
    # the pages name no measure by hand where the registry's list belongs
    assert "<!-- measures:table -->" in (ROOT / "docs" / "measures.md").read_text()
    assert "<!-- measures:names -->" in (ROOT / "docs" / "index.md").read_text()
    assert "<!-- options:table -->" in (ROOT / "docs" / "api.md").read_text()


# a peer's own name for a measure, as a measure's docstring cites it (RetrievalFallOut)
PEER_NAME = re.compile(r"\b[A-Z][a-z]+(?:[A-Z][a-z]*)+\b")


def test_conventions_page_calls_no_registered_measure_missing() -> None:
    # a peer measure that a registered measure names as its twin (fallout cites torchmetrics'
    # RetrievalFallOut) is a translation, not "no equivalent here"
    twins: dict[str, str] = {}
    for measure in builtin_measures():
        module = importlib.import_module(measure.finals.__module__)
        for name in PEER_NAME.findall(f"{measure.doc or ''} {module.__doc__ or ''}"):
            twins.setdefault(name, measure.name)
    assert twins.get("RetrievalFallOut") == "fallout"
    page = (ROOT / "docs" / "conventions.md").read_text()
    table = page.split("## Peers' own test suites")[1].split("\n\n|")[1].split("\n\n")[0]
    rows = [line for line in table.splitlines() if line.startswith("| ") and "|---" not in line]
    assert len(rows) > 10
    wrong = [
        (row.split(" | ")[0].strip("| "), name, twins[name])
        for row in rows[1:]  # the header first
        for span in re.findall(r"`([^`]+)`", row.rstrip(" |").rsplit(" | ", 1)[1])
        for name in re.findall(r"^\w+", span)
        if name in twins
    ]
    assert not wrong, f"conventions.md: (peer, its measure, ours) listed as no equivalent: {wrong}"


def family_modules() -> list[str]:
    # every family module of the registry: the truth measures' own modules, the modules of
    # the measures of the lists (their finals are shared; the module that registers them is
    # found on disk) and the trec_eval families of ``rankmetrics trec``
    package = ROOT / "polars_rankmetrics" / "_measures"
    on_disk = {
        ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for path in [*package.glob("[a-z]*.py"), *(package / "lists").glob("[a-z]*.py")]
    }
    truth = {m.finals.__module__ for m in builtin_measures() if catalog.reads_truth(m)}
    assert truth <= on_disk, "a measure's module is not a family module of _measures/"
    return sorted(on_disk)


@pytest.mark.parametrize("module", family_modules())
def test_each_measure_module_states_formula_conventions_and_references(module: str) -> None:
    doc = importlib.import_module(module).__doc__ or ""
    assert " = " in doc, f"{module}'s docstring has no formula"
    assert "\nNotes\n-----\n" in doc, f"{module}'s docstring states no conventions (Notes)"
    assert "\nReferences\n----------\n" in doc, f"{module}'s docstring cites no reference"
