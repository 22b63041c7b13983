"""The same plans on Polars' GPU engine and on the CPU, side by side, numbers compared.

    python benchmarks/gpu.py [--sizes torchmetrics,10M,100M] [--rounds 3] [--json FILE]

Runs in one go on a machine with an NVIDIA GPU and ``cudf-polars`` (the
package's ``gpu`` extra, ``pip install "polars[gpu]"``); on a machine without
them, the CPU half runs and the GPU half is skipped with the reason. Sizes:

- ``torchmetrics``: the shape of torchmetrics#2287, 8,000 queries x 40
  scored candidates (320,000 rows), ranks from scores;
- ``10M``: 100,000 users x 100 ranked recommendations;
- ``100M``: 1,000,000 users x 100 ranked recommendations.

For each size, the lazy plan of ``evaluate(recs, truth, ["ndcg@10", "map@10",
"mrr@10", "recall@20"])`` is collected with ``engine="cpu"`` ("in-memory"
here: the GPU engine's counterpart) and with ``pl.GPUEngine(raise_on_fail=True)``:
where an operation of the plan is not supported on the GPU, that raises and
the message is printed (then the plan is collected again with
``raise_on_fail=False``, which runs it on the CPU, to say so in the figures).
The numbers of both must agree to 1e-12. Interleaved rounds, medians; the
results go to ``--json`` (default ``benchmarks/results/gpu.json``).
"""

from __future__ import annotations

import argparse
import gc
import json
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import polars_rankmetrics as prm  # noqa: E402

METRICS = ["ndcg@10", "map@10", "mrr@10", "recall@20"]
SIZES = {
    "torchmetrics": (8_000, 40, True),
    "10M": (100_000, 100, False),
    "100M": (1_000_000, 100, False),
}


def make_data(
    users: int, per_user: int, scored: bool, seed: int = 0
) -> tuple[pl.DataFrame, pl.DataFrame]:
    rng = np.random.default_rng(seed)
    items = max(10 * per_user, 50_000)
    recs = pl.DataFrame({
        "user": np.repeat(np.arange(users), per_user),
        "item": rng.integers(0, items, size=users * per_user),
    }).unique(["user", "item"], keep="first", maintain_order=True)  # fmt: skip
    if scored:
        recs = recs.with_columns(pl.Series("score", rng.random(recs.height)))
    else:
        recs = recs.with_columns(pl.int_range(1, pl.len() + 1).over("user").alias("rank"))
    n_truth = rng.integers(1, 11, size=users)
    truth = pl.DataFrame({
        "user": np.repeat(np.arange(users), n_truth),
        "item": rng.integers(0, items, size=int(n_truth.sum())),
    }).unique()  # fmt: skip
    return recs, truth


def gpu_engine() -> tuple[Any, str | None]:
    """The GPU engine, or why there is none."""
    try:
        import cudf_polars  # noqa: F401 - optional, only on a GPU machine
    except ImportError as exc:
        return None, f"cudf-polars is not installed ({exc}): pip install 'polars[gpu]'"
    try:
        engine = pl.GPUEngine(raise_on_fail=True)
        pl.LazyFrame({"a": [1]}).collect(engine=engine)
    except Exception as exc:
        return None, f"the GPU engine does not start: {exc}"
    return engine, None


def collect(plan: pl.LazyFrame, engine: Any) -> tuple[pl.DataFrame, float]:
    gc.collect()
    start = time.perf_counter()
    result = plan.collect(engine=engine)
    return result, time.perf_counter() - start


def run_size(name: str, rounds: int, gpu: Any) -> dict[str, Any]:
    users, per_user, scored = SIZES[name]
    recs, truth = make_data(users, per_user, scored)
    options: dict[str, Any] = {"score": "score"} if scored else {}
    plan = prm.evaluate(recs.lazy(), truth.lazy(), METRICS, **options)
    record: dict[str, Any] = {"size": name, "rows": recs.height}
    cpu_times, gpu_times = [], []
    reference, note = None, None
    for _ in range(rounds):
        reference, seconds = collect(plan, "in-memory")
        cpu_times.append(seconds)
        if gpu is None:
            continue
        try:
            on_gpu, seconds = collect(plan, gpu)
        except Exception as exc:
            note = f"not on the GPU: {str(exc).splitlines()[0]}"
            on_gpu, seconds = collect(plan, pl.GPUEngine(raise_on_fail=False))
        gpu_times.append(seconds)
        diff = max(abs(a - b) for a, b in zip(on_gpu.row(0), reference.row(0), strict=True))
        record["max_difference"] = max(diff, record.get("max_difference", 0.0))
    record["cpu_s"] = statistics.median(cpu_times)
    if gpu_times:
        record["gpu_s"] = statistics.median(gpu_times)
        record["gpu_note"] = note or "every operation on the GPU"
    assert reference is not None
    record["values"] = reference.row(0, named=True)
    return record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="torchmetrics,10M,100M")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path, default=HERE / "results" / "gpu.json")
    args = parser.parse_args()
    gpu, why = gpu_engine()
    print(f"Polars {pl.__version__}, {platform.machine()}; GPU: {'yes' if gpu else why}")
    records = []
    for name in args.sizes.split(","):
        record = run_size(name, args.rounds, gpu)
        records.append(record)
        line = f"{name:>12} {record['rows']:>12,} rows  CPU {record['cpu_s']:8.3f} s"
        if "gpu_s" in record:
            line += (
                f"  GPU {record['gpu_s']:8.3f} s ({record['cpu_s'] / record['gpu_s']:.1f}x)"
                f"  max |diff| {record['max_difference']:.1e}  {record['gpu_note']}"
            )
            if record["max_difference"] > 1e-12:
                line += "  DISAGREES"
        print(line)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps({"gpu": why or "yes", "records": records}, indent=2) + "\n")


if __name__ == "__main__":
    main()
