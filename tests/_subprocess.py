"""Run a snippet in a fresh interpreter: imports as a new user would see them."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_python(code: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter with warnings as errors."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, "-W", "error", "-c", textwrap.dedent(code)],
        capture_output=True, text=True, env=env, cwd=ROOT, check=False, timeout=120,
    )  # fmt: skip


def assert_runs(code: str) -> str:
    """Run ``code``; fail with its stderr unless it exits 0. Returns its stdout."""
    done = run_python(code)
    assert done.returncode == 0, done.stderr
    return done.stdout
