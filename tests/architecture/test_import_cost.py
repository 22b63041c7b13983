"""``import polars_rankmetrics`` and ``rankmetrics --help`` load no heavy optional module.

scipy (the statistics of ``compare``, ``friedman``, ``sampled_metrics``...), Altair
(the charts), pandas and pyarrow are loaded where they are used: importing scipy's
distributions alone took 2-3 s on a cold machine, ten times ``import polars``.
``benchmarks/import_time.py`` measures the times; this test keeps the modules out.
Each check runs in a fresh interpreter, so nothing this process imported can hide one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests._subprocess import ROOT, assert_runs

HEAVY = ("scipy", "altair", "vl_convert", "pandas", "pyarrow", "statsmodels", "pyspark")


def loaded_after(statement: str) -> list[str]:
    """The heavy modules a fresh interpreter holds after running ``statement``."""
    code = f"import json, sys\n{statement}\nprint(json.dumps(sorted({{n.split('.')[0] for n in sys.modules}} & {set(HEAVY)!r})))"
    return list(json.loads(assert_runs(code)))


@pytest.mark.parametrize(
    "statement",
    [
        "import polars_rankmetrics",
        "import polars_rankmetrics as prm; prm.evaluate",
        "from polars_rankmetrics import compare, plot_critical_difference, report",
        "import polars_rankmetrics.cli",
    ],
)
def test_import_loads_no_heavy_module(statement: str) -> None:
    loaded = loaded_after(statement)
    assert loaded == [], f"{statement!r} imports {loaded}: import them where they are used"


def test_help_loads_no_heavy_module() -> None:
    loaded = loaded_after(
        "from polars_rankmetrics.cli import main\n"
        "import contextlib, io\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    assert main(['--help']) == 0\n"
        "    assert main(['compare', '--help']) == 0"
    )
    assert loaded == [], f"rankmetrics --help imports {loaded}"


def test_the_statistics_still_load_scipy_on_use() -> None:
    # the other side of the rule: a comparison needs scipy and gets it
    code = """
    import sys
    import polars as pl
    import polars_rankmetrics as prm
    recs = pl.DataFrame({"model": ["a"] * 4 + ["b"] * 4, "user": [1, 1, 2, 2] * 2,
                         "item": [1, 2, 1, 2, 2, 1, 2, 1], "rank": [1, 2] * 4})
    truth = pl.DataFrame({"user": [1, 2], "item": [1, 1]})
    prm.compare(recs, truth, ["mrr"], baseline="a")
    assert "scipy.stats" in sys.modules
    """
    assert_runs(code)


def test_the_command_runs_as_installed() -> None:
    # python -m polars_rankmetrics.cli --help, as the `rankmetrics` script does, exits 0
    done = subprocess.run(
        [sys.executable, "-m", "polars_rankmetrics.cli", "--help"],
        capture_output=True, text=True, cwd=ROOT, check=False, timeout=60,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "rankmetrics" in done.stdout
