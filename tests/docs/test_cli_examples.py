"""Every command-line example of the README and the docs runs as written.

The examples read the files ``rankmetrics demo --write DIR`` writes (the
built-in sample as Parquet, Kaggle CSV and TREC files). Each ``bash`` or
``console`` block holding a ``rankmetrics`` command runs as one shell script in
a copy of that folder (a ``cd`` carries on to the next line), the command being
``python -m polars_rankmetrics.cli`` of this checkout. Each command must exit 0
(``rankmetrics gate`` may exit 1: its verdict), print no error, and, in a
``bash`` block, no warning; a ``console`` block's shown output must be what it
prints (its ``rankmetrics ...: warning:`` lines on stderr). Other lines of a
block (``pip install``...) are not run.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = [
    ROOT / "README.md",
    *sorted(p for p in (ROOT / "docs").glob("*.md") if p.name not in ("DESIGN.md", "REGISTRY.md")),
]

pytestmark = pytest.mark.docs


@dataclass
class Command:
    """One command of a block, and what the block shows it printing (console blocks)."""

    line: str
    shown_out: list[str] = field(default_factory=list)
    shown_err: list[str] = field(default_factory=list)


def _commands(language: str, body: str) -> list[Command]:
    lines = body.replace("\\\n", " ").splitlines()  # a continued line is one command
    if language == "bash":
        return [Command(line) for line in lines if line.startswith(("rankmetrics ", "cd "))]
    commands: list[Command] = []
    for line in lines:
        if line.startswith("$ "):
            commands.append(Command(line[2:]))
        elif commands and line.strip():
            shown = commands[-1].shown_err if re.match(r"rankmetrics \w+: ", line) else None
            (shown if shown is not None else commands[-1].shown_out).append(line)
    return commands


def _blocks() -> list[tuple[str, str, list[Command]]]:
    found = []
    for document in DOCUMENTS:
        text = document.read_text()
        for index, (language, body) in enumerate(
            re.findall(r"```(bash|console)\n(.*?)```", text, re.S)
        ):
            commands = _commands(language, body)
            if any(command.line.startswith("rankmetrics") for command in commands):
                found.append((f"{document.name}-{index}", language, commands))
    return found


BLOCKS = _blocks()


def test_the_examples_are_found() -> None:
    names = {name.rsplit("-", 1)[0] for name, _, _ in BLOCKS}
    assert {"README.md", "files-and-cli.md", "fusion.md", "comparing-systems.md"} <= names
    lines = [command.line for _, _, commands in BLOCKS for command in commands]
    assert sum(line.startswith("rankmetrics ") for line in lines) >= 25


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


def _words(line: str) -> list[str]:
    return line.split()


@pytest.mark.parametrize(("name", "language", "commands"), BLOCKS, ids=[b[0] for b in BLOCKS])
def test_example_runs_as_written(
    name: str, language: str, commands: list[Command], sample_folder: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    shutil.copytree(sample_folder, work)
    shim = tmp_path / "bin" / "rankmetrics"
    shim.parent.mkdir()
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m polars_rankmetrics.cli "$@"\n')
    shim.chmod(0o755)
    logs = tmp_path / "logs"
    logs.mkdir()
    script = [
        f'{{ {command.line}\n}} > "{logs}/{i}.out" 2> "{logs}/{i}.err"; echo $? > "{logs}/{i}.status"'
        for i, command in enumerate(commands)
    ]
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "PATH": f"{shim.parent}{os.pathsep}{os.environ['PATH']}",
    }
    subprocess.run(["bash", "-c", "\n".join(script)], cwd=work, env=env, check=False, timeout=600)
    for i, command in enumerate(commands):
        status = int((logs / f"{i}.status").read_text())
        out, err = (logs / f"{i}.out").read_text(), (logs / f"{i}.err").read_text()
        said = f"{name}: {command.line}\n{err[-3000:]}"
        allowed = (0, 1) if command.line.startswith("rankmetrics gate ") else (0,)
        assert status in allowed, said
        assert "error:" not in err, said
        assert "Traceback" not in err, said
        if language == "bash":
            assert "warning:" not in err, said
            continue
        if command.shown_out:
            assert [_words(line) for line in out.splitlines() if line.strip()] == [
                _words(line) for line in command.shown_out
            ], said
        warned = [_words(line) for line in err.splitlines() if ": warning: " in line]
        assert warned == [_words(line) for line in command.shown_err], said
