"""The README's Python examples paste into a plain ``python`` and print what it shows.

Each ``python`` block of the README is what a reader copies: code without
``>>>`` prompts or output. It is fed as pasted to a fresh interactive
interpreter (``python -i``, the block on its standard input), so it must stand
alone and keep to what the interactive prompt accepts (no blank line inside a
``def`` or ``for``). What it prints must be the ``text`` block right after it;
a block without one prints nothing. The Spark example carries the ``spark``
marker (it starts a local SparkSession).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.S | re.M)


def examples() -> list[tuple[str, str | None]]:
    """Each ``python`` block of the README and the ``text`` block right after it, if any."""
    text = README.read_text()
    fences = list(FENCE.finditer(text))
    found = []
    for block, after in zip(fences, [*fences[1:], None], strict=True):
        if block.group(1) != "python":
            continue
        follows = after is not None and not text[block.end() : after.start()].strip()
        shown = (
            after.group(2) if follows and after is not None and after.group(1) == "text" else None
        )
        found.append((block.group(2), shown))
    return found


EXAMPLES = examples()


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.strip("\n").splitlines()]


def test_the_examples_are_code_and_output_apart() -> None:
    assert len(EXAMPLES) >= 4
    assert sum(shown is not None for _, shown in EXAMPLES) >= 3
    for code, _ in EXAMPLES:
        assert not re.search(r"^(>>>|\.\.\.) ", code, re.M), f"a prompt in:\n{code}"
    # every output shown belongs to the code block right above it
    texts = re.findall(r"^```text\n", README.read_text(), re.M)
    assert len(texts) == sum(shown is not None for _, shown in EXAMPLES)


@pytest.mark.parametrize(
    ("code", "shown"),
    [
        pytest.param(*example, marks=[pytest.mark.spark] if "pyspark" in example[0] else [])
        for example in EXAMPLES
    ],
    ids=[f"block{i}" for i in range(len(EXAMPLES))],
)
def test_example_pastes_into_python_and_prints_what_is_shown(
    code: str, shown: str | None, tmp_path: Path
) -> None:
    if "pyspark" in code:
        pytest.importorskip("pyspark")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONSTARTUP", "PYSPARK_PYTHON")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-q", "-i"], input=code + "\n", capture_output=True, text=True,
        cwd=tmp_path, env=env, check=False, timeout=600,
    )  # fmt: skip
    # the prompts (>>> and ...) go to stderr, with any traceback or warning
    problems = re.findall(
        r"^(?:>>> |\.\.\. )*(Traceback.*|\w*(?:Error|Warning)\b.*)$", done.stderr, re.M
    )
    assert not problems, f"{problems}\n{done.stderr[-4000:]}"
    assert _lines(done.stdout) == _lines(shown or ""), done.stdout


def test_readme_links_every_notebook_and_page() -> None:
    # the README is the repository's front page: a notebook or a page it does not list is
    # one a reader of GitHub does not find
    text = README.read_text()
    notebooks = sorted(path.name for path in (ROOT / "notebooks").glob("*.ipynb"))
    pages = sorted(
        path.name
        for path in (ROOT / "docs").glob("*.md")
        if path.name not in ("index.md", "DESIGN.md", "REGISTRY.md")
    )
    missing = [f"notebooks/{name}" for name in notebooks if f"(notebooks/{name})" not in text]
    missing += [f"docs/{name}" for name in pages if f"(docs/{name})" not in text]
    assert not missing, f"README.md does not link {missing}"


def test_readme_benchmark_of_evaluate_is_the_performance_page_s() -> None:
    # one measurement on both pages, found in the results files: a figure the README keeps
    # after the performance page moved on is stale
    row = next(
        line
        for line in README.read_text().splitlines()
        if line.startswith("| `evaluate`, ranks given")
    )
    seconds = re.findall(r"(\d+\.\d+)(?:-(\d+\.\d+))? s\b", row)
    figures = {figure for pair in seconds for figure in pair if figure}
    assert len(figures) >= 2, row
    page = (ROOT / "docs" / "performance.md").read_text()
    results = (ROOT / "benchmarks" / "results" / "performance.md").read_text()
    for figure in sorted(figures):
        assert figure in page, f"README's {figure} s is not on docs/performance.md"
        assert figure in results, f"README's {figure} s is in no benchmarks/results file"
