"""How long deciding between systems takes, against evaluating them.

    python benchmarks/compare.py [--users 20000] [--recs 100] [--systems 5] [--rounds 3]

Generates (numpy, in memory) ``systems`` recommenders over the same users,
each a top-``recs`` list per user (ranks 1..recs) of Zipf-popular items, one
truth of 1..20 relevant items per user (graded 1-3), and times, best of
``rounds`` (interleaved, steadier on a shared machine):

- ``evaluate(..., by="model", per_user=True)`` for map@10 and ndcg@10;
- ``compare`` with the paired t-test on the same metrics (baseline: system 0);
- ``compare`` with the randomization test, 10,000 resamples;
- ``curves`` for six metrics at k = 1..100, against ``evaluate`` of the same
  six metrics at k = 100 (one cutoff) and against 100 evaluate calls' worth
  (estimated from 5 cutoffs).

Rows = users x recs x systems. Results go to stdout as a Markdown table.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import polars_rankmetrics as prm  # noqa: E402

METRICS = ["map@10", "ndcg@10"]
CURVES = ["ndcg", "recall", "precision", "map", "hit_rate", "mrr"]


def make_data(
    n_users: int, n_recs: int, n_systems: int, seed: int = 0
) -> tuple[pl.DataFrame, pl.DataFrame]:
    rng = np.random.default_rng(seed)
    n_items = max(10 * n_recs, n_users // 2)
    weights = 1.0 / np.arange(1, n_items + 1)
    weights /= weights.sum()
    n_truth = np.minimum(rng.geometric(1 / 6, n_users), 20)
    truth_user = np.repeat(np.arange(n_users), n_truth)
    truth_item = rng.choice(n_items, size=truth_user.size, p=weights)
    truth = (
        pl.DataFrame(
            {
                "user": truth_user,
                "item": truth_item,
                "rel": rng.choice([1, 2, 3], truth_user.size, p=[0.6, 0.3, 0.1]),
            }
        )
        # the same data in every process: keep the first of each pair, in order
        .unique(["user", "item"], keep="first", maintain_order=True)
        .sort("user", maintain_order=True)
    )
    first_truth = truth.group_by("user", maintain_order=True).agg(pl.col("item").first())
    chosen = np.zeros(n_users, dtype=np.int64)
    chosen[first_truth.get_column("user").to_numpy()] = first_truth.get_column("item").to_numpy()
    frames = []
    for system in range(n_systems):
        # a run of consecutive item ids from a popular start: distinct within the list
        start = rng.choice(n_items, size=n_users, p=weights)
        items = (start[:, None] + np.arange(n_recs)) % n_items
        # better systems put the user's first truth item into more lists
        lucky = np.flatnonzero(rng.random(n_users) < 0.05 * (system + 1))
        items[lucky, rng.integers(0, n_recs, lucky.size)] = chosen[lucky]
        frames.append(
            pl.DataFrame(
                {
                    "model": np.full(n_users * n_recs, f"s{system}"),
                    "user": np.repeat(np.arange(n_users), n_recs),
                    "item": items.ravel(),
                    "rank": np.tile(np.arange(1, n_recs + 1, dtype=np.int32), n_users),
                }
            ).unique(["model", "user", "item"], keep="first", maintain_order=True)
        )
    recs = pl.concat(frames).with_columns(
        pl.col("rank").rank("ordinal").over("model", "user").cast(pl.Int32)
    )
    return recs, truth


def best_of(rounds: int, tasks: dict[str, Callable[[], Any]]) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name in tasks}
    for _ in range(rounds):
        for name, task in tasks.items():
            start = time.perf_counter()
            task()
            times[name].append(time.perf_counter() - start)
    return {name: min(values) for name, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=20_000)
    parser.add_argument("--recs", type=int, default=100)
    parser.add_argument("--systems", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--resamples", type=int, default=10_000)
    args = parser.parse_args()
    recs, truth = make_data(args.users, args.recs, args.systems)
    common: dict[str, Any] = {"relevance": "rel"}
    ks = range(1, args.recs + 1)
    at_top = [f"{name}@{args.recs}" for name in CURVES]
    few = [f"{name}@{k}" for name in CURVES for k in (1, 25, 50, 75, args.recs)]
    tasks: dict[str, Callable[[], Any]] = {
        "evaluate per_user (map@10, ndcg@10)": lambda: prm.evaluate(
            recs, truth, METRICS, by="model", per_user=True, **common
        ),
        "compare, t-test": lambda: prm.compare(recs, truth, METRICS, baseline="s0", **common),
        f"compare, randomization ({args.resamples:,} resamples)": lambda: prm.compare(
            recs,
            truth,
            METRICS,
            baseline="s0",
            test="randomization",
            n_resamples=args.resamples,
            **common,
        ),
        f"evaluate, 6 metrics at k={args.recs}": lambda: prm.evaluate(
            recs, truth, at_top, by="model", **common
        ),
        "evaluate, 6 metrics at 5 cutoffs": lambda: prm.evaluate(
            recs, truth, few, by="model", **common
        ),
        f"curves, 6 metrics, k=1..{args.recs}": lambda: prm.curves(
            recs, truth, CURVES, k=ks, by="model", **common
        ),
        f"curves, 6 metrics, k=1..{args.recs}, ci=0.95": lambda: prm.curves(
            recs, truth, CURVES, k=ks, by="model", ci=0.95, **common
        ),
    }
    timings = best_of(args.rounds, tasks)
    base = timings["evaluate per_user (map@10, ndcg@10)"]
    top = timings[f"evaluate, 6 metrics at k={args.recs}"]
    print(
        f"{recs.height:,} recommendation rows ({args.users:,} users x {args.recs} x "
        f"{args.systems} systems), {truth.height:,} truth rows; best of {args.rounds}\n"
    )
    print("| task | seconds | vs evaluate per_user | vs evaluate at k=100 |")
    print("|---|---:|---:|---:|")
    for name, seconds in timings.items():
        print(f"| {name} | {seconds:.2f} | {seconds / base:.2f}x | {seconds / top:.2f}x |")


if __name__ == "__main__":
    main()
