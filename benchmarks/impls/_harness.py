"""Run one implementation of the benchmark task in this process and report JSON.

Started by ``benchmarks/run.py`` as ``<venv python> _harness.py IMPL VARIANT DATA_DIR``
so that every implementation runs in its own process, with its own
interpreter and virtual environment, and its memory is its own. Standard
library only: the peers' environments have nothing of ours installed.

The implementation module ``impls/<IMPL>.py`` provides

- ``load(data_dir, variant) -> inputs``: read the Parquet files into the
  implementation's natural in-memory input (Polars frames, pandas frames,
  ...). Not timed: the task starts from frames already in memory.
- ``input_bytes(inputs) -> int`` (optional): in-memory size of those inputs.
- ``warmup(inputs, variant)`` (optional): one-off costs that are not part of
  evaluating (numba JIT compilation), run once before timing.
- ``check(inputs) -> dict`` (oracles only): values under every convention.
- ``VARIANTS``, ``CONVENTIONS`` (metric -> convention key of _common),
  ``MISSING`` (metric -> why the peer cannot compute it): read by --describe.
- ``run(inputs, variant) -> dict``: the timed task. Returns the three means
  ``{"map@10": .., "ndcg@10": .., "mrr@10": ..}``, averaged over every truth
  user (users without recommendations count 0; users without truth are left
  out), optionally with ``"phases": {name: seconds}``.

Timing: wall clock (perf_counter) around ``run``; median over repeats.
Memory: the kernel's high-water mark of this process's RSS (VmHWM), reset
before each repeat through /proc/self/clear_refs, so "peak" is the peak while
evaluating (inputs included, as they are resident), and "extra" is that peak
minus the RSS just before the call.
"""

from __future__ import annotations

import gc
import importlib.util
import json
import os
import statistics
import sys
import time
import traceback
from pathlib import Path

HERE = Path(__file__).resolve().parent
# impls/ranx.py must not shadow the real `ranx` package: drop this folder
# from the import path and load implementation modules by file path.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]


def _status_kib(field: str) -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return -1


def rss_bytes() -> int:
    return _status_kib("VmRSS") * 1024


def hwm_bytes() -> int:
    return _status_kib("VmHWM") * 1024


def reset_hwm() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        return False
    return True


def _load_file(module_name: str, path: Path):
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = mod
    spec.loader.exec_module(mod)
    return mod


def load_impl(name: str):
    # the implementations import the shared helpers as `_common`
    if "_common" not in sys.modules:
        _load_file("_common", HERE / "_common.py")
    return _load_file(f"bench_impl_{name}", HERE / f"{name}.py")


def emit(obj: dict) -> None:
    # one line, prefixed, so that stray prints from libraries cannot confuse it
    sys.stdout.write("@@RESULT@@" + json.dumps(obj) + "\n")
    sys.stdout.flush()


def main() -> int:
    import argparse

    p = argparse.ArgumentParser()
    p.add_argument("impl")
    p.add_argument("variant")
    p.add_argument("data_dir")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument(
        "--max-seconds",
        type=float,
        default=120.0,
        help="stop repeating once the time spent repeating passes this",
    )
    p.add_argument(
        "--check", action="store_true", help="call check(inputs) once instead of timing run()"
    )
    p.add_argument(
        "--describe",
        action="store_true",
        help="report the module's VARIANTS, CONVENTIONS, MISSING and docstring",
    )
    args = p.parse_args()

    out: dict = {"impl": args.impl, "variant": args.variant, "data": args.data_dir}
    try:
        mod = load_impl(args.impl)
        out["python"] = sys.version.split()[0]
        out["versions"] = getattr(mod, "versions", lambda: {})()
        if args.describe:
            out.update(
                status="ok",
                variants=list(getattr(mod, "VARIANTS", ())),
                conventions=dict(getattr(mod, "CONVENTIONS", {})),
                missing=dict(getattr(mod, "MISSING", {})),
                doc=(mod.__doc__ or "").strip(),
            )
            emit(out)
            return 0
        t0 = time.perf_counter()
        inputs = mod.load(args.data_dir, args.variant)
        out["load_s"] = time.perf_counter() - t0
        out["input_bytes"] = mod.input_bytes(inputs) if hasattr(mod, "input_bytes") else None
        if hasattr(mod, "warmup"):
            t0 = time.perf_counter()
            mod.warmup(inputs, args.variant)
            out["warmup_s"] = time.perf_counter() - t0
        if args.check:
            t0 = time.perf_counter()
            out.update(status="ok", values=mod.check(inputs), check_s=time.perf_counter() - t0)
            emit(out)
            return 0
        times: list[float] = []
        phases: list[dict] = []
        peaks: list[int] = []
        bases: list[int] = []
        result = None
        started = time.perf_counter()
        for _ in range(max(1, args.repeats)):
            gc.collect()
            base = rss_bytes()
            hwm_ok = reset_hwm()
            t0 = time.perf_counter()
            result = mod.run(inputs, args.variant)
            dt = time.perf_counter() - t0
            peak = hwm_bytes() if hwm_ok else -1
            times.append(dt)
            bases.append(base)
            peaks.append(peak)
            phases.append(dict(result.pop("phases", {}) or {}))
            result = {k: float(v) for k, v in result.items()}
            if time.perf_counter() - started > args.max_seconds:
                break
        out.update(
            status="ok",
            times=times,
            median_s=statistics.median(times),
            min_s=min(times),
            phases={
                k: statistics.median(ph[k] for ph in phases if k in ph)
                for k in (phases[0] if phases else {})
            },
            base_rss=max(bases),
            peak_rss=max(peaks),
            extra_rss=max(p - b for p, b in zip(peaks, bases, strict=True)),
            values=result,
            # other work on the machine skews timings: keep the 1-minute load
            loadavg_1m=os.getloadavg()[0],
        )
    except MemoryError:
        out.update(status="oom", error="MemoryError")
    except Exception as e:  # reported, not raised: the driver shows it
        out.update(
            status="error",
            error=f"{type(e).__name__}: {e}",
            traceback=traceback.format_exc(limit=8),
        )
    emit(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
