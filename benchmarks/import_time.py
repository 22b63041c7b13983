"""``import polars``, ``import polars_rankmetrics`` and ``rankmetrics --help`` in fresh processes.

    python benchmarks/import_time.py [--rounds 15] [--package PATH ...] [--markdown]

Each round starts one fresh interpreter per case, in turn (interleaved, so a
busy spell of the machine hits every case alike), and each case is timed two
ways: the import inside the process (``time.perf_counter`` around the
statement) and the whole process from the outside (start, import, exit, as a
person waits for ``rankmetrics --help``). The medians (and minima) over the
rounds are printed; ``--markdown`` prints the table of
``results/import_time.md``. ``--package PATH`` (repeatable) measures the
package at PATH too, e.g. an older commit unpacked there with ``git archive``,
labelled by its folder's name; the default is this checkout.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TIMED = "import time; t = time.perf_counter(); {statement}; print(time.perf_counter() - t)"
CASES = {
    "import polars": [TIMED.format(statement="import polars")],
    "import polars_rankmetrics": [TIMED.format(statement="import polars_rankmetrics")],
    "rankmetrics --help": None,  # the command itself, timed from the outside only
}


def run_once(case: str, package: Path) -> tuple[float | None, float]:
    """One fresh process: (seconds inside it, or None; seconds of the whole process)."""
    code = CASES[case]
    if code is None:
        command = [sys.executable, "-m", "polars_rankmetrics.cli", "--help"]
    else:
        command = [sys.executable, "-c", *code]
    env = {**os.environ, "PYTHONPATH": str(package)}
    start = time.perf_counter()
    # run from the package's folder: `python -c` and `-m` put the working directory first
    done = subprocess.run(command, env=env, cwd=package, capture_output=True, text=True, check=True)
    wall = time.perf_counter() - start
    inside = float(done.stdout.split()[-1]) if code is not None else None
    return inside, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--package", type=Path, action="append", help="a package's parent folder")
    parser.add_argument("--markdown", action="store_true", help="print the results table")
    args = parser.parse_args()
    packages = args.package or [ROOT]
    runs = [(case, package) for package in packages for case in CASES]
    inside: dict[tuple[str, Path], list[float]] = {run: [] for run in runs}
    wall: dict[tuple[str, Path], list[float]] = {run: [] for run in runs}
    for _ in range(args.rounds + 1):
        for run in runs:
            seconds, total = run_once(*run)
            if seconds is not None:
                inside[run].append(seconds)
            wall[run].append(total)
    for run in runs:  # the first round warms the file cache and the bytecode: dropped
        inside[run], wall[run] = inside[run][1:], wall[run][1:]
    print(f"{args.rounds} rounds, load average {os.getloadavg()[0]:.1f}, {sys.version.split()[0]}")
    if args.markdown:
        print("| package | case | in the process, median (min) s | whole process, median (min) s |")
        print("|---|---|--:|--:|")
    for case, package in runs:
        times, totals = inside[case, package], wall[case, package]
        within = f"{statistics.median(times):.3f} ({min(times):.3f})" if times else "-"
        whole = f"{statistics.median(totals):.3f} ({min(totals):.3f})"
        label = package.name or str(package)
        if args.markdown:
            print(f"| {label} | `{case}` | {within} | {whole} |")
        else:
            print(f"{label:>20}  {case:<28} inside {within:>16}  process {whole:>16}")


if __name__ == "__main__":
    main()
