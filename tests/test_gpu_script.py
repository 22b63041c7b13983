"""``benchmarks/gpu.py`` runs end to end on a machine without a GPU: its CPU half, the GPU skipped.

On a GPU machine the same script times both engines and compares their numbers
(to 1e-12); here it must still run, say why the GPU half is skipped, and write
its JSON record.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests._subprocess import ROOT


def test_the_gpu_script_runs_on_the_cpu_and_says_why_the_gpu_is_skipped(tmp_path: Path) -> None:
    out = tmp_path / "gpu.json"
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "gpu.py"), "--sizes", "torchmetrics",
         "--rounds", "1", "--json", str(out)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    record = json.loads(out.read_text())
    (size,) = record["records"]
    assert size["size"] == "torchmetrics"
    assert size["rows"] > 300_000
    assert 0 < size["values"]["ndcg@10"] < 1
    if "gpu_s" not in size:  # no GPU here: the reason is printed and recorded
        assert "GPU: " in done.stdout
        assert record["gpu"] != "yes"
    else:  # a GPU machine: both engines gave the same numbers
        assert size["max_difference"] <= 1e-12
