"""Beyond-accuracy measures against ``evaluate`` on the same lists: time and peak memory.

Data (deterministic, in memory, written once to ``benchmarks/data/beyond-<rows>/``):
``users`` lists of ``--list`` distinct items each (ranks 1..L, Zipf item
popularity over a catalog of ``--catalog`` items), ``--interactions`` training
rows (Zipf items, repeats allowed), a catalog whose ``cats`` column holds 1
category for two thirds of the items and 3 for the rest (of 20), and a
``genre`` column with one category; a truth of 10 items per user for
``evaluate``.

Each task runs in a fresh process that loads the Parquet files into memory,
then times the call (best of ``--repeat``) and reports the peak RSS above
the RSS after loading. ``evaluate`` computes map@10, ndcg@10 and mrr@10;
each beyond-accuracy measure is computed @10 alone, then all eight in one
call.

Usage::

    python benchmarks/beyond.py --users 10000            # 1M rows (develop)
    python benchmarks/beyond.py --users 100000 --write   # 10M rows, into results/beyond.md
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SEED = 20261123
N_CATEGORIES = 20

TASKS = {
    "evaluate (map@10, ndcg@10, mrr@10)": ("evaluate", []),
    "coverage@10": ("list", ["coverage@10"]),
    "novelty@10": ("list", ["novelty@10"]),
    "arp@10": ("list", ["arp@10"]),
    "long_tail@10": ("list", ["long_tail@10"]),
    "gini@10": ("list", ["gini@10"]),
    "personalization@10": ("list", ["personalization@10"]),
    "ild@10 (one category)": ("list_genre", ["ild@10"]),
    "ild@10 (1 or 3 categories)": ("list", ["ild@10"]),
    "calibration@10 (1 or 3 categories)": ("list", ["calibration@10"]),
    "all eight @10": (
        "list",
        [
            "coverage@10",
            "novelty@10",
            "arp@10",
            "long_tail@10",
            "gini@10",
            "personalization@10",
            "ild@10",
            "calibration@10",
        ],
    ),
    "evaluate: the three + all eight, one call": ("evaluate_all", []),
}
EIGHT = TASKS["all eight @10"][1]


def generate(folder: Path, users: int, length: int, catalog: int, interactions: int) -> None:
    import numpy as np
    import polars as pl

    if (folder / "done").exists():
        return
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(SEED)
    weights = 1.0 / np.arange(1, catalog + 1)
    weights /= weights.sum()
    # popular items are not simply the small ids
    ids = rng.permutation(catalog)
    draws = int(length * 1.6)
    recs = (
        pl.DataFrame(
            {
                "user": np.repeat(np.arange(users, dtype=np.int64), draws),
                "item": ids[rng.choice(catalog, size=users * draws, p=weights)].astype(np.int64),
            }
        )
        .unique(maintain_order=True)
        .with_columns(pl.col("user").cum_count().over("user").cast(pl.Int32).alias("rank"))
        .filter(pl.col("rank") <= length)
    )
    recs.write_parquet(folder / "recs.parquet")
    history_users = int(users * 1.2)
    pl.DataFrame(
        {
            "user": rng.integers(0, history_users, size=interactions, dtype=np.int64),
            "item": ids[rng.choice(catalog, size=interactions, p=weights)].astype(np.int64),
        }
    ).write_parquet(folder / "interactions.parquet")
    first = rng.integers(0, N_CATEGORIES, size=catalog)
    three = rng.random(catalog) < 1 / 3
    cats = [
        [int(f), int((f + 7) % N_CATEGORIES), int((f + 13) % N_CATEGORIES)] if t else [int(f)]
        for f, t in zip(first, three, strict=True)
    ]
    pl.DataFrame(
        {
            "item": np.arange(catalog, dtype=np.int64),
            "cats": cats,
            "genre": first.astype(np.int64),
        }
    ).write_parquet(folder / "items.parquet")
    pl.DataFrame(
        {
            "user": np.repeat(np.arange(users, dtype=np.int64), 10),
            "item": ids[rng.choice(catalog, size=users * 10, p=weights)].astype(np.int64),
        }
    ).unique().write_parquet(folder / "truth.parquet")
    (folder / "done").write_text("ok")


def status_mb(field: str) -> float:
    # VmRSS: resident now; VmHWM: peak resident since start or since the last reset (Linux)
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def reset_peak() -> None:
    # writing 5 to clear_refs resets VmHWM (Linux >= 4.0), so loading does not count
    Path("/proc/self/clear_refs").write_text("5")


def run_task(folder: Path, kind: str, metrics: list[str], repeat: int) -> dict[str, float]:
    import polars as pl

    sys.path.insert(0, str(ROOT))
    import polars_rankmetrics as prm

    recs = pl.read_parquet(folder / "recs.parquet")
    interactions = pl.read_parquet(folder / "interactions.parquet")
    items = pl.read_parquet(folder / "items.parquet")
    truth = pl.read_parquet(folder / "truth.parquet")
    loaded = status_mb("VmRSS")
    reset_peak()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        if kind == "evaluate":
            prm.evaluate(recs, truth, ["map@10", "ndcg@10", "mrr@10"])
        elif kind == "evaluate_all":
            prm.evaluate(
                recs, truth, ["map@10", "ndcg@10", "mrr@10", *EIGHT],
                interactions=interactions, items=items, category="cats",
            )  # fmt: skip
        else:
            category = "genre" if kind == "list_genre" else "cats"
            prm.list_metrics(
                recs, metrics, interactions=interactions, items=items, category=category
            )
        times.append(time.perf_counter() - start)
    peak = status_mb("VmHWM")
    return {
        "seconds": min(times),
        "loaded_mb": loaded,
        "peak_above_loaded_mb": peak - loaded,
        "rows": recs.height,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--users", type=int, default=10_000)
    parser.add_argument("--list", type=int, default=100)
    parser.add_argument("--catalog", type=int, default=50_000)
    parser.add_argument("--interactions", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--write", action="store_true", help="write results/beyond.md")
    parser.add_argument("--task", help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.task:
        kind, metrics = TASKS[args.task]
        print(json.dumps(run_task(Path(args.folder), kind, metrics, args.repeat)))
        return
    rows = args.users * args.list
    folder = HERE / "data" / f"beyond-{rows}"
    generate(folder, args.users, args.list, args.catalog, args.interactions)
    results = {}
    for name in TASKS:
        out = subprocess.run(
            [sys.executable, __file__, "--task", name, "--folder", str(folder),
             "--repeat", str(args.repeat)],
            check=True, capture_output=True, text=True,
        )  # fmt: skip
        results[name] = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"{name:40s} {results[name]['seconds']:8.3f} s  "
              f"peak +{results[name]['peak_above_loaded_mb']:7.0f} MB", flush=True)  # fmt: skip
    base = results["evaluate (map@10, ndcg@10, mrr@10)"]["seconds"]
    first = next(iter(results.values()))
    import polars as pl

    lines = [
        f"# Beyond-accuracy measures vs evaluate ({first['rows']:,} recommendation rows)",
        "",
        f"{args.users:,} users x {args.list} items (Zipf popularity over {args.catalog:,} "
        f"items), {args.interactions:,} interactions, catalog with 1 or 3 categories per "
        f"item (of {N_CATEGORIES}). Frames in memory (DataFrame); best of {args.repeat}; "
        f"peak RSS above the RSS after loading the inputs ({first['loaded_mb']:.0f} MB). "
        f"Polars {pl.__version__}, `python benchmarks/beyond.py --users {args.users}`.",
        "",
        "| task | seconds | x evaluate | peak RSS above inputs (MB) |",
        "|---|---:|---:|---:|",
    ]
    for name, result in results.items():
        lines.append(
            f"| {name} | {result['seconds']:.3f} | {result['seconds'] / base:.2f} | "
            f"{result['peak_above_loaded_mb']:.0f} |"
        )
    text = "\n".join(lines) + "\n"
    print(text)
    if args.write:
        (HERE / "results" / "beyond.md").write_text(text)


if __name__ == "__main__":
    main()
