"""Time and peak memory of ``rankmetrics demo`` (and ``sample_data`` alone) by number of users.

    python benchmarks/demo_size.py [--sizes 10000,50000,100000,500000,1000000]
        [--what demo,sample] [--package PATH] [--mem-limit 20] [--timeout 900]
        [--label after] [--json benchmarks/results/demo_size.json]

Each size runs in its own child process (one at a time: run it on an otherwise
quiet machine), ``demo`` as ``python -m polars_rankmetrics.cli demo --users N
--format csv`` (the sample, ``evaluate`` and ``compare``), ``sample`` as
``sample_data(n_users=N)`` alone. The child's peak resident memory is its
``ru_maxrss`` (``os.wait4``), the same figure as ``/usr/bin/time -v``'s
"Maximum resident set size". A child whose resident memory passes
``--mem-limit`` GiB is killed and reported as such, so that a size that does
not fit cannot take the machine down. ``--package PATH`` measures the package
at PATH (e.g. ``git archive`` of an older commit unpacked there) instead of
this checkout's. ``--json`` merges the rows, under ``--label``, into that file
(a row replaces the one of the same label, what and size), from which
``report.py`` writes the section "The demo's size" of ``results/results.md``
(:func:`section`).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = "from polars_rankmetrics.sample import sample_data; sample_data(n_users={n})"


def _rss_bytes(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def measure(what: str, n_users: int, *, package: Path, mem_limit: float, timeout: float) -> dict:
    """Run one size in a child process; its wall time, peak RSS and how it ended."""
    if what == "demo":
        command = [sys.executable, "-m", "polars_rankmetrics.cli", "demo", "--users", str(n_users)]
        command += ["--format", "csv"]
    else:
        command = [sys.executable, "-c", SAMPLE.format(n=n_users)]
    env = {**os.environ, "PYTHONPATH": str(package)}
    start = time.perf_counter()
    child = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    ended = "ok"
    while True:
        pid, status, usage = os.wait4(child.pid, os.WNOHANG)
        if pid:
            break
        if _rss_bytes(child.pid) > mem_limit * 2**30:
            child.send_signal(signal.SIGKILL)
            ended = f"killed above {mem_limit:g} GiB"
        elif time.perf_counter() - start > timeout:
            child.send_signal(signal.SIGKILL)
            ended = f"killed after {timeout:g} s"
        time.sleep(0.05)
    seconds = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if ended == "ok" and child.returncode != 0:
        error = (
            child.stderr.read().decode(errors="replace").strip().splitlines()
            if child.stderr
            else []
        )
        ended = f"exit {child.returncode}: {error[-1] if error else ''}"
    return {
        "what": what,
        "users": n_users,
        "seconds": seconds,
        "peak_gib": usage.ru_maxrss * 1024 / 2**30,
        "ended": ended,
    }


def section(results: dict) -> list[str]:
    """The Markdown section of ``results/results.md`` from ``demo_size.json``."""
    lines = ["## The demo's size: `rankmetrics demo --users N`", "", results["note"], ""]
    lines += [
        "| users | what | "
        + " | ".join(f"{label} wall s | {label} peak RSS GiB" for label in results["labels"])
        + " |"
    ]
    lines += ["|--:|---|" + "--:|--:|" * len(results["labels"])]
    keys = sorted({(row["users"], row["what"]) for row in results["rows"]})
    for users, what in keys:
        cells = []
        for label in results["labels"]:
            row = next(
                (r for r in results["rows"]
                 if (r["label"], r["users"], r["what"]) == (label, users, what)),
                None,
            )  # fmt: skip
            if row is None:
                cells += ["", ""]
            elif row["seconds"] != row["seconds"]:  # NaN: not run, the reason in "ended"
                cells += [row["ended"], "-"]
            elif row["ended"] != "ok":
                cells += [f"{row['seconds']:.0f} ({row['ended']})", f"{row['peak_gib']:.2f}"]
            else:
                cells += [f"{row['seconds']:.1f}", f"{row['peak_gib']:.2f}"]
        lines.append(f"| {users:,} | {what} | " + " | ".join(cells) + " |")
    return [*lines, ""]


def _merge(path: Path, label: str, rows: list[dict]) -> None:
    results = json.loads(path.read_text()) if path.exists() else {"labels": [], "rows": []}
    results.setdefault("note", "")
    if label not in results["labels"]:
        results["labels"].append(label)
    new = {(label, row["what"], row["users"]) for row in rows}
    results["rows"] = [
        row for row in results["rows"] if (row["label"], row["what"], row["users"]) not in new
    ] + [{"label": label, **row} for row in rows]
    path.write_text(json.dumps(results, indent=1) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,50000,100000,500000,1000000")
    parser.add_argument("--what", default="demo,sample", help="demo, sample or both")
    parser.add_argument("--package", type=Path, default=ROOT, help="the package's parent folder")
    parser.add_argument("--mem-limit", type=float, default=20.0, help="GiB of RSS per child")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per child")
    parser.add_argument("--label", default="after", help="the rows' label in --json")
    parser.add_argument("--json", type=Path, help="merge the rows into this file")
    args = parser.parse_args()
    rows = []
    when = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    sizes = [int(size.replace("_", "")) for size in args.sizes.split(",")]
    print(f"package: {args.package}")
    print("| what | users | wall s | peak RSS GiB | ended |")
    print("|---|---:|---:|---:|---|")
    for what in args.what.split(","):
        for n_users in sizes:
            row = measure(
                what, n_users, package=args.package, mem_limit=args.mem_limit, timeout=args.timeout
            )
            print(
                f"| {row['what']} | {row['users']:,} | {row['seconds']:.1f} | "
                f"{row['peak_gib']:.2f} | {row['ended']} |",
                flush=True,
            )
            load = os.getloadavg()[0]
            rows.append({**row, "date": when, "load": round(load, 1), "host": platform.node()})
            if args.json:
                _merge(args.json, args.label, rows)


if __name__ == "__main__":
    main()
