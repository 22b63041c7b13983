"""Spark from a virtual environment: the page's example runs as pasted, and workers that
lack the package get advice instead of Spark's raw worker traceback.

Spark starts its Python workers with ``PYSPARK_PYTHON`` (``python3`` from the PATH when
it is not set), not with the interpreter that runs the driver. Each case runs in a fresh
interpreter (its own SparkSession, started after the environment is set), as a user's
script would; about half a minute each.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.spark

pytest.importorskip("pyspark")


def _run(code: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "PYSPARK_PYTHON"}
    environment.update(PYTHONPATH=str(ROOT), **env)
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=cwd, env=environment,
        check=False, timeout=600,
    )  # fmt: skip


def test_the_spark_page_example_runs_as_pasted_without_pyspark_python(tmp_path: Path) -> None:
    blocks = re.findall(r"```python\n(.+?)```", (ROOT / "docs" / "spark.md").read_text(), re.S)
    assert len(blocks) == 1
    done = _run(blocks[0], tmp_path)
    assert done.returncode == 0, done.stderr[-4000:]
    assert re.search(r"\|\s*two_tower\|\s*0\.\d+\|", done.stdout), done.stdout
    assert "only showing top 3 rows" in done.stdout


WITHOUT_THE_PACKAGE = """
import polars_rankmetrics as prm
from polars_rankmetrics import spark as prs
from pyspark.sql import SparkSession

spark = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false").getOrCreate()
spark.sparkContext.setLogLevel("OFF")
sample = prm.sample_data(n_users=30, n_items=40)
recs = spark.createDataFrame(sample.recs.to_arrow())
truth = spark.createDataFrame(sample.truth.to_arrow())
try:
    prs.evaluate(recs, truth, ["ndcg@10"], score="score")
except ImportError as error:
    print(error)
"""


def test_workers_without_the_package_are_told_what_to_do(tmp_path: Path) -> None:
    # a Python without Polars for the workers: a bare virtual environment
    other = tmp_path / "other"
    venv.create(other, with_pip=False)
    python = other / "bin" / "python"
    done = _run(WITHOUT_THE_PACKAGE, tmp_path, PYSPARK_PYTHON=str(python))
    assert done.returncode == 0, done.stderr[-4000:]
    said = done.stdout.strip()
    # the first of the package's dependencies the workers' imports reach
    named = re.match(r"Spark's Python workers cannot import '(polars|numpy)': they run ", said)
    assert named, said
    assert said[named.end() :].startswith(f"PYSPARK_PYTHON={python}, not this interpreter"), said
    assert "os.environ['PYSPARK_PYTHON'] = sys.executable" in said
    assert "Traceback" not in said
