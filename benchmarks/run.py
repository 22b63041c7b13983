"""Run the benchmark suite: this package, its peers and the floor, side by side.

One command::

    python benchmarks/run.py --sizes small,medium [--peers all] [--repeats 3]

1. Generates the data sets that are missing (benchmarks/generate.py).
2. Agreement check, before any timing, on the small set: every peer's
   numbers against this package's under the peer's own conventions (and
   the independent bare-Polars reference), saying where conventions differ.
3. Times every implementation, one process each, started with its own
   virtual environment's interpreter (benchmarks/.venvs/<peer>, made by
   setup_peers.sh), same files, same task (map@10 + ndcg@10 + mrr@10 averaged
   over the truth users). A process that passes --timeout or --mem-limit is
   killed and reported as such. Its numbers are checked against ours again.
4. Writes benchmarks/results/results.json (merged by size with earlier runs)
   and, through benchmarks/report.py, results.md and time_vs_rows.png.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
VENVS = HERE / ".venvs"
IMPLS = HERE / "impls"
HARNESS = IMPLS / "_harness.py"
RESULTS = HERE / "results"

sys.path.insert(0, str(HERE))
import generate  # noqa: E402

# (implementation, variant) in the order they run; the environment is the
# driver's own interpreter for ours, the floor and the reference, else
# benchmarks/.venvs/<impl>.
OURS = [
    ("floor", "scan"),
    ("floor", "join"),
    ("rankmetrics", "eager"),
    ("rankmetrics", "lazy"),
    ("rankmetrics", "streaming"),
    ("rankmetrics", "eager-score"),
    ("rankmetrics", "eager-score-shuffled"),
    ("rankmetrics", "eager-graded"),
    ("rankmetrics", "pandas"),
]
PEERS = {
    "rectools": ["full", "topk"],
    "replay": ["full", "topk", "pandas-full"],
    "ranx": ["full", "topk"],
    "pytrec_eval": ["full", "topk"],
    "recommenders": ["full", "topk"],
    "torchmetrics": ["full", "topk"],
}
LOCAL = {"floor", "rankmetrics", "reference"}
TOL = 1e-6


def python_for(impl: str) -> Path | None:
    if impl in LOCAL:
        return Path(sys.executable)
    py = VENVS / impl / "bin" / "python"
    return py if py.exists() else None


def _child_env() -> dict[str, str]:
    env = dict(os.environ)
    # our package is imported from the working tree
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("PYTHONWARNINGS", "ignore")
    return env


def _rss_of(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def launch(
    impl: str, variant: str, data_dir: Path, *, extra: list[str], timeout: float, mem_limit: int
) -> dict:
    """Run the harness for one implementation in its own process, watched."""
    py = python_for(impl)
    base = {"impl": impl, "variant": variant, "data": str(data_dir)}
    if py is None:
        return {
            **base,
            "status": "not installed",
            "error": f"no {VENVS / impl}; run benchmarks/setup_peers.sh {impl}",
        }
    cmd = [str(py), str(HARNESS), impl, variant, str(data_dir), *extra]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            cmd, stdout=out, stderr=err, env=_child_env(), cwd=ROOT, start_new_session=True
        )
        status = None
        watched_peak = 0
        while True:
            pid, wstatus, ru = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                proc.returncode = os.waitstatus_to_exitcode(wstatus)
                break
            rss = _rss_of(proc.pid)
            watched_peak = max(watched_peak, rss)
            elapsed = time.perf_counter() - t0
            if rss > mem_limit:
                status = "oom"
            elif elapsed > timeout:
                status = "timeout"
            if status:
                os.killpg(proc.pid, signal.SIGKILL)
                _, wstatus, ru = os.wait4(proc.pid, 0)
                proc.returncode = os.waitstatus_to_exitcode(wstatus)
                break
            time.sleep(0.1)
        wall = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode(errors="replace")
        stderr = err.read().decode(errors="replace")
    res = None
    for line in stdout.splitlines():
        if line.startswith("@@RESULT@@"):
            res = json.loads(line[len("@@RESULT@@") :])
    process_maxrss = ru.ru_maxrss * 1024
    if status == "oom":
        error = f"RSS passed --mem-limit ({mem_limit / 2**30:.0f} GiB) after {wall:.0f}s"
        return {**base, "status": "oom", "error": error, "process_maxrss": process_maxrss}
    if status == "timeout":
        return {
            **base,
            "status": "timeout",
            "error": f"still running after {timeout:.0f}s",
            "process_maxrss": process_maxrss,
        }
    if res is None:
        killed = proc.returncode in (-signal.SIGKILL, 137)
        return {
            **base,
            "status": "oom" if killed else "error",
            "error": (
                "killed (SIGKILL, likely the kernel's OOM killer)"
                if killed
                else f"exit {proc.returncode}: " + stderr.strip()[-800:]
            ),
            "process_maxrss": process_maxrss,
        }
    res["process_maxrss"] = process_maxrss
    res["process_wall_s"] = wall
    return res


def describe(impl: str) -> dict:
    return launch(impl, "-", Path("-"), extra=["--describe"], timeout=300, mem_limit=2**34)


def machine() -> dict:
    info = {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cores": os.cpu_count(),
    }
    try:
        cpu = Path("/proc/cpuinfo").read_text()
        info["cpu"] = next(
            (ln.split(":", 1)[1].strip() for ln in cpu.splitlines() if ln.startswith("model name")),
            "?",
        )
        mem = Path("/proc/meminfo").read_text().split()
        info["ram_gib"] = round(int(mem[mem.index("MemTotal:") + 1]) / 2**20, 1)
    except (OSError, ValueError, StopIteration):
        pass
    # the package is edited between runs: say which commit the tree was on (read-only)
    with contextlib.suppress(OSError):
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
        info["commit"] = f"{head} (working tree may differ)"
    try:
        import polars as pl

        info["polars"] = pl.__version__
        info["polars_threads"] = pl.thread_pool_size()
    except ImportError:
        pass
    return info


def _close(a: float, b: float) -> bool:
    return abs(a - b) <= TOL * max(1.0, abs(b))


def compare(values: dict, conventions: dict, oracle: dict, defaults: dict) -> list[dict]:
    """Per metric: the peer's value, ours under its conventions, and ours by default."""
    rows = []
    for metric, conv in conventions.items():
        if metric not in values:
            continue
        ours = oracle.get(conv)
        rows.append(
            {
                "metric": metric,
                "convention": conv,
                "peer": values[metric],
                "ours": ours,
                "ours_default": defaults.get(metric),
                "agrees": ours is not None and _close(values[metric], ours),
            }
        )
    return rows


DEFAULT_KEYS = {
    "map@10": "map@10|denominator=min_k",
    "ndcg@10": "ndcg@10|binary",
    "mrr@10": "mrr@10",
}


def oracle_values(data_dir: Path, timeout: float, mem_limit: int) -> dict:
    """Our package's numbers under every convention (falls back to the reference)."""
    out = {}
    for impl in ("rankmetrics", "reference"):
        r = launch(impl, "check", data_dir, extra=["--check"], timeout=timeout, mem_limit=mem_limit)
        out[impl] = r
    return out


def agreement(data_dir: Path, peers: list[str], descs: dict, args) -> dict:
    print(f"\n== agreement check on {data_dir.name} (before timing)", flush=True)
    orc = oracle_values(data_dir, args.timeout, args.mem_limit)
    ours = orc["rankmetrics"]
    ref = orc["reference"]
    report: dict = {
        "data": data_dir.name,
        "oracle_status": ours.get("status"),
        "reference_status": ref.get("status"),
        "peers": {},
    }
    oracle = ours.get("values") if ours.get("status") == "ok" else None
    if ref.get("status") == "ok":
        report["reference"] = ref["values"]
        if oracle is not None:
            report["package_vs_reference"] = {
                k: {
                    "package": oracle[k],
                    "reference": ref["values"][k],
                    "agrees": _close(oracle[k], ref["values"][k]),
                }
                for k in ref["values"]
            }
            bad = [k for k, v in report["package_vs_reference"].items() if not v["agrees"]]
            print(
                f"   package vs independent reference: "
                f"{'all agree' if not bad else 'DIFFER on ' + ', '.join(bad)}"
            )
    if oracle is None:
        print(f"   package not usable ({ours.get('error', '?')}); comparing with the reference")
        oracle = ref.get("values", {})
    report["oracle"] = oracle
    defaults = {m: oracle.get(k) for m, k in DEFAULT_KEYS.items()}
    for peer in peers:
        d = descs.get(peer, {})
        if d.get("status") != "ok":
            report["peers"][peer] = {"status": d.get("status", "?"), "error": d.get("error")}
            print(f"   {peer:13s} {d.get('status')}: {d.get('error', '')[:200]}")
            continue
        r = launch(
            peer,
            PEERS[peer][0],
            data_dir,
            extra=["--repeats", "1"],
            timeout=args.timeout,
            mem_limit=args.mem_limit,
        )
        entry = {"status": r["status"], "variant": PEERS[peer][0], "missing": d.get("missing", {})}
        if r["status"] == "ok":
            entry["rows"] = compare(r["values"], d["conventions"], oracle, defaults)
            for row in entry["rows"]:
                note = ""
                if row["convention"] != DEFAULT_KEYS[row["metric"]]:
                    note = f"  (our default convention gives {row['ours_default']:.6f})"
                print(
                    f"   {peer:13s} {row['metric']:8s} peer={row['peer']:.9f} "
                    f"ours[{row['convention']}]={row['ours']:.9f} "
                    f"{'OK' if row['agrees'] else 'DIFFERS'}{note}"
                )
            for m, why in entry["missing"].items():
                print(f"   {peer:13s} {m:8s} n/a: {why}")
        else:
            entry["error"] = r.get("error")
            print(f"   {peer:13s} {r['status']}: {str(r.get('error'))[:300]}")
        report["peers"][peer] = entry
    return report


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument(
        "--sizes",
        default="small,medium",
        help=f"comma list of {', '.join(s for s in generate.SIZES if s != 'huge')}",
    )
    p.add_argument(
        "--peers", default="all", help="'all', 'none' or a comma list of " + ", ".join(PEERS)
    )
    p.add_argument("--only", default="", help="comma list of impl[:variant] to run (debugging)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument(
        "--max-repeat-seconds",
        type=float,
        default=120.0,
        help="an implementation stops repeating once its repeats took this long",
    )
    p.add_argument(
        "--timeout",
        type=float,
        default=900.0,
        help="seconds one implementation's process may take (load + repeats)",
    )
    p.add_argument("--mem-limit", type=float, default=20.0, help="GiB of RSS per process")
    p.add_argument("--data", type=Path, default=generate.DEFAULT_OUT)
    p.add_argument("--out", type=Path, default=RESULTS)
    p.add_argument("--no-check", action="store_true", help="skip the agreement check")
    p.add_argument(
        "--str-ids",
        action="store_true",
        help="also time this package and the join floor on string user/item ids",
    )
    p.add_argument("--no-report", action="store_true")
    args = p.parse_args(argv)
    args.mem_limit = int(args.mem_limit * 2**30)

    sizes = [s for s in args.sizes.split(",") if s]
    peers = (
        list(PEERS)
        if args.peers == "all"
        else []
        if args.peers == "none"
        else args.peers.split(",")
    )
    for name in [*sizes, "small"]:
        generate.generate(generate.SIZES[name], args.data)
        if args.str_ids and name in sizes:
            generate.generate(generate.SIZES[name], args.data, ids="str")

    plan = list(OURS) + [(peer, v) for peer in peers for v in PEERS[peer]]
    if args.str_ids:
        plan[2:2] = [("floor", "join-str"), ("rankmetrics", "eager-str")]
    if args.only:
        wanted = args.only.split(",")
        plan = [(i, v) for i, v in plan if i in wanted or f"{i}:{v}" in wanted]

    mach = machine()
    print("machine:", json.dumps(mach))
    descs = {peer: describe(peer) for peer in peers}
    for peer, d in descs.items():
        print(f"   {peer}: {d['status']} {d.get('versions', d.get('error', ''))}")

    run_info = {
        "started": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "machine": mach,
        "argv": sys.argv[1:],
        "repeats": args.repeats,
        "peers": {
            p_: {k: d.get(k) for k in ("status", "versions", "error", "conventions", "missing")}
            for p_, d in descs.items()
        },
    }
    if not args.no_check and peers:
        run_info["agreement"] = agreement(
            generate.dataset_dir(args.data, "small"), peers, descs, args
        )

    results: dict = {}
    for name in sizes:
        size = generate.SIZES[name]
        d = generate.dataset_dir(args.data, name)
        print(
            f"\n== {name}: {size.n_users:,} users x {size.n_recs} = {size.rows:,} rows", flush=True
        )
        orc = oracle_values(d, args.timeout, args.mem_limit)
        oracle = (
            orc["rankmetrics"].get("values")
            if orc["rankmetrics"].get("status") == "ok"
            else orc["reference"].get("values", {})
        )
        defaults = {m: oracle.get(k) for m, k in DEFAULT_KEYS.items()}
        rows = []
        for impl, variant in plan:
            r = launch(
                impl,
                variant,
                d,
                extra=[
                    "--repeats",
                    str(args.repeats),
                    "--max-seconds",
                    str(args.max_repeat_seconds),
                ],
                timeout=args.timeout,
                mem_limit=args.mem_limit,
            )
            if r.get("status") == "ok" and impl in PEERS:
                r["agreement"] = compare(
                    r["values"], descs[impl].get("conventions", {}), oracle, defaults
                )
            elif r.get("status") == "ok" and impl == "rankmetrics":
                r["agreement"] = compare(
                    r["values"],
                    {
                        m: DEFAULT_KEYS[m]
                        if variant != "eager-graded" or m != "ndcg@10"
                        else "ndcg@10|relevance=rel,gain=linear"
                        for m in DEFAULT_KEYS
                    },
                    oracle,
                    defaults,
                )
            rows.append(r)
            ok = r.get("status") == "ok"
            agrees = all(a["agrees"] for a in r.get("agreement", [])) if ok else None
            msg = (
                f"median {r['median_s']:8.3f}s  peak RSS {r['peak_rss'] / 2**20:8.0f} MiB"
                f"  (+{r['extra_rss'] / 2**20:.0f} MiB)  n={len(r['times'])}"
                + (
                    ""
                    if agrees is None or impl == "floor"
                    else "  agrees"
                    if agrees
                    else "  DIFFERS"
                )
                + (
                    f"  phases {', '.join(f'{k} {v:.2f}s' for k, v in r['phases'].items())}"
                    if r.get("phases")
                    else ""
                )
                if ok
                else f"{r['status']}: {str(r.get('error'))[:300]}"
            )
            print(f"   {impl + ':' + variant:30s} {msg}", flush=True)
        results[name] = {
            "size": {
                "name": name,
                "users": size.n_users,
                "recs": size.n_recs,
                "rows": size.rows,
                "items": size.n_items,
            },
            "oracle": oracle,
            "rows": rows,
            "finished": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        }

    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "results.json"
    merged = json.loads(path.read_text()) if path.exists() else {"sizes": {}}
    for name, entry in results.items():
        # merge row by row, so re-running a subset (--peers none, --only ...) keeps the rest
        prev = merged["sizes"].get(name)
        if prev:
            fresh = {(r["impl"], r["variant"]) for r in entry["rows"]}
            kept = [r for r in prev["rows"] if (r["impl"], r["variant"]) not in fresh]
            order = {
                key: i
                for i, key in enumerate(
                    [
                        *OURS,
                        ("floor", "join-str"),
                        ("rankmetrics", "eager-str"),
                        *[(p_, v) for p_, vs in PEERS.items() for v in vs],
                    ]
                )
            }
            entry["rows"] = sorted(
                kept + entry["rows"], key=lambda r: order.get((r["impl"], r["variant"]), 999)
            )
        merged["sizes"][name] = entry
    merged["runs"] = [*merged.get("runs", []), run_info][-10:]
    merged["machine"] = mach
    if "agreement" in run_info:
        merged["agreement"] = run_info["agreement"]
    merged["peers"] = {**merged.get("peers", {}), **run_info["peers"]}
    path.write_text(json.dumps(merged, indent=1, default=str))
    print(f"\nwrote {path}")
    if not args.no_report:
        report_py = VENVS / "report" / "bin" / "python"
        py = str(report_py) if report_py.exists() else sys.executable
        subprocess.run([py, str(HERE / "report.py"), str(path)], check=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
