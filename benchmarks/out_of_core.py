"""Beyond one machine's memory: evaluate a recommendation set larger than RAM, streaming.

    python benchmarks/out_of_core.py [--size huge] [--keep] [--mem-limit 22] [--rounds 1]

1. Generates the ``huge`` set, 10M users x 100 = 1 billion recommendation rows
   (user Int64, item Int64, rank Int32, score Float64: 28 bytes a row, about
   26 GiB in memory, more than this machine's RAM), chunk by chunk in two
   worker processes, one Parquet file per 100k users, so it never sits in
   memory.
2. In a child process (so its peak RSS is its own):
   ``pl.scan_parquet(recs) -> .rank.evaluate(pl.scan_parquet(truth), [map@10,
   ndcg@10, mrr@10]) -> .collect(engine="streaming")``, timed, with its peak RSS.
   Then, for scale, the join floor on the same files with the same engine.
   ``--rounds N`` alternates the two N times (one child process each time)
   and reports each run and the medians.
3. Writes benchmarks/results/out_of_core.json (report.py adds it to
   results.md) and deletes the data unless --keep.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
METRICS = ["map@10", "ndcg@10", "mrr@10"]


def child(task: str, d: Path) -> None:
    """Runs inside the measured process; prints one JSON line."""
    import polars as pl

    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(HERE))
    import polars_rankmetrics  # noqa: F401  (registers .rank)

    recs = pl.scan_parquet(d / "recs-part-*.parquet")
    truth = pl.scan_parquet(d / "truth-part-*.parquet")
    t0 = time.perf_counter()
    if task == "evaluate":
        out = recs.rank.evaluate(truth, METRICS, rank="rank").collect(engine="streaming")
        values = out.row(0, named=True)
    elif task == "floor":
        import floor

        for f in pl.collect_all(floor.join_floor(recs, truth), engine="streaming"):
            f.height  # noqa: B018
        values = {}
    else:
        raise ValueError(task)
    dt = time.perf_counter() - t0
    print(
        "@@RESULT@@" + json.dumps({"seconds": dt, "values": values, "polars": pl.__version__}),
        flush=True,
    )


def measure(task: str, d: Path, mem_limit: int, timeout: float) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(
        [sys.executable, __file__, "--child", task, "--dir", str(d)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,
    )
    t0 = time.perf_counter()
    status = "ok"
    peak_seen = 0
    while True:
        pid, _, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        try:
            with open(f"/proc/{proc.pid}/status") as f:
                rss = next(int(x.split()[1]) * 1024 for x in f if x.startswith("VmRSS:"))
        except (OSError, StopIteration):
            rss = 0
        peak_seen = max(peak_seen, rss)
        if rss > mem_limit or time.perf_counter() - t0 > timeout:
            status = "oom" if rss > mem_limit else "timeout"
            os.killpg(proc.pid, signal.SIGKILL)
            _, _, ru = os.wait4(proc.pid, 0)
            break
        time.sleep(0.2)
    wall = time.perf_counter() - t0
    stdout = proc.stdout.read().decode(errors="replace")
    stderr = proc.stderr.read().decode(errors="replace")
    res: dict = {
        "task": task,
        "status": status,
        "process_wall_s": round(wall, 1),
        "peak_rss_gib": round(ru.ru_maxrss * 1024 / 2**30, 2),
    }
    for line in stdout.splitlines():
        if line.startswith("@@RESULT@@"):
            res.update(json.loads(line[len("@@RESULT@@") :]))
    if "seconds" not in res and status == "ok":
        res["status"] = "error"
        res["error"] = stderr.strip()[-1500:]
    return res


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--size", default="huge")
    p.add_argument("--data", type=Path, default=HERE / "data")
    p.add_argument("--keep", action="store_true", help="keep the generated files")
    p.add_argument("--mem-limit", type=float, default=22.0, help="GiB; the child is killed past it")
    p.add_argument("--timeout", type=float, default=3600.0)
    p.add_argument("--no-floor", action="store_true")
    p.add_argument("--rounds", type=int, default=1, help="evaluate and floor alternated N times")
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--dir", type=Path, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.child:
        child(args.child, args.dir)
        return 0

    sys.path.insert(0, str(HERE))
    import generate

    size = generate.SIZES[args.size]
    free = shutil.disk_usage(args.data.parent if not args.data.exists() else args.data).free
    print(
        f"{args.size}: {size.n_users:,} users x {size.n_recs} = {size.rows:,} rows "
        f"({size.rows * 28 / 2**30:.1f} GiB in memory as Int64/Int64/Int32/Float64); "
        f"{free / 2**30:.0f} GiB free on disk",
        flush=True,
    )
    t0 = time.perf_counter()
    d = generate.generate_parts(size, args.data, processes=2)
    gen_s = time.perf_counter() - t0
    files = sorted(d.glob("*.parquet"))
    disk = sum(f.stat().st_size for f in files)
    ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    print(
        f"generated in {gen_s:.0f}s: {len(files)} files, {disk / 2**30:.1f} GiB on disk", flush=True
    )

    result = {
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": f"{os.cpu_count()} cores, {ram / 2**30:.1f} GiB RAM, {platform.platform()}",
        "rows": size.rows,
        "users": size.n_users,
        "in_memory_gib": round(size.rows * 28 / 2**30, 1),
        "ram_gib": round(ram / 2**30, 1),
        "parquet_gib": round(disk / 2**30, 2),
        "generate_s": round(gen_s),
        "command": "pl.scan_parquet(recs).rank.evaluate(pl.scan_parquet(truth), "
        "['map@10','ndcg@10','mrr@10'], rank='rank').collect(engine='streaming')",
    }
    limit = int(args.mem_limit * 2**30)
    runs: dict[str, list[dict]] = {}
    for _ in range(args.rounds):
        for task in ["evaluate"] + ([] if args.no_floor else ["floor"]):
            r = measure(task, d, limit, args.timeout)
            print(f"{task}: {json.dumps(r)}", flush=True)
            runs.setdefault(task, []).append(r)
    for task, task_runs in runs.items():
        # the run of median time stands for the task (all runs are kept beside it)
        ordered = sorted(task_runs, key=lambda run: run.get("seconds", float("inf")))
        result[task] = ordered[(len(ordered) - 1) // 2]
        if len(task_runs) > 1:
            result[f"{task}_runs"] = task_runs
    ev = result["evaluate"]
    result["evaluate_status"] = ev["status"]
    if ev["status"] == "ok":
        result["evaluate_s"] = round(ev["seconds"], 1)
        result["evaluate_peak_rss_gib"] = ev["peak_rss_gib"]
        result["values"] = ev["values"]
    if result.get("floor", {}).get("status") == "ok":
        result["floor_s"] = round(result["floor"]["seconds"], 1)
        result["floor_peak_rss_gib"] = result["floor"]["peak_rss_gib"]
    out = HERE / "results" / "out_of_core.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1))
    print(f"wrote {out}")
    if not args.keep:
        shutil.rmtree(d)
        print(f"deleted {d}")
    return 0 if ev["status"] == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
