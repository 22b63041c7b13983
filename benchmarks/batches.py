"""The accumulator over batches against one ``evaluate`` of all of them, in one process.

    python benchmarks/batches.py [--users 1000000] [--recs 20] [--batches 100] [--rounds 3]

One process, interleaved rounds, medians. Seeded lists of ``--recs`` ranked
items for ``--users`` users (and 1..10 relevant items each), cut beforehand
into ``--batches`` batches of whole users (the cutting is not timed: a
training loop has its batches already):

- ``evaluate``: one call on all the rows;
- ``Evaluator``: ``update`` per batch, then ``compute``.

The two results are checked equal to the last bit before timing. Target: the
Evaluator within 1.3x of one ``evaluate`` call.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import polars as pl

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import polars_rankmetrics as prm  # noqa: E402

METRICS = ["ndcg@10", "map@10", "mrr@10", "recall@20", "precision@10"]


def make_data(users: int, recs: int, seed: int = 0) -> tuple[pl.DataFrame, pl.DataFrame]:
    rng = np.random.default_rng(seed)
    items = 50_000
    lists = pl.DataFrame({
        "user": np.repeat(np.arange(users), recs),
        "item": rng.integers(0, items, size=users * recs),
        "rank": np.tile(np.arange(1, recs + 1), users),
    }).unique(["user", "item"], keep="first", maintain_order=True)  # fmt: skip
    n_truth = rng.integers(1, 11, size=users)
    truth = pl.DataFrame({
        "user": np.repeat(np.arange(users), n_truth),
        "item": rng.integers(0, items, size=int(n_truth.sum())),
    }).unique()  # fmt: skip
    return lists, truth


def batched(
    recs: pl.DataFrame, truth: pl.DataFrame, batches: int
) -> list[tuple[pl.DataFrame, pl.DataFrame]]:
    number = pl.col("user") % batches
    recs_parts = recs.with_columns(number.alias("batch")).partition_by("batch", as_dict=True)
    truth_parts = truth.with_columns(number.alias("batch")).partition_by("batch", as_dict=True)
    return [
        (recs_parts[key].drop("batch"), truth_parts.get(key, truth.clear()).drop("batch"))
        for key in sorted(recs_parts)
    ]


def accumulated(parts: list[tuple[pl.DataFrame, pl.DataFrame]]) -> pl.DataFrame:
    evaluator = prm.Evaluator(METRICS)
    for recs, truth in parts:
        evaluator.update(recs, truth)
    return evaluator.compute()


def interleaved(tasks: dict[str, Callable[[], object]], rounds: int) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name in tasks}
    for _ in range(rounds):
        for name, work in tasks.items():
            gc.collect()
            start = time.perf_counter()
            work()
            times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=1_000_000)
    parser.add_argument("--recs", type=int, default=20)
    parser.add_argument("--batches", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    recs, truth = make_data(args.users, args.recs)
    parts = batched(recs, truth, args.batches)
    whole = prm.evaluate(recs, truth, METRICS)
    if not accumulated(parts).equals(whole):
        raise SystemExit("the Evaluator and evaluate disagree")
    print(f"{recs.height:,} rows, {args.users:,} users in {len(parts)} batches: the same numbers")
    medians = interleaved(
        {
            "evaluate": lambda: prm.evaluate(recs, truth, METRICS),
            "Evaluator": lambda: accumulated(parts),
        },
        args.rounds,
    )
    ratio = medians["Evaluator"] / medians["evaluate"]
    print(
        f"  evaluate {medians['evaluate']:.3f} s, Evaluator {medians['Evaluator']:.3f} s: "
        f"{ratio:.2f}x (target 1.3x)"
    )


if __name__ == "__main__":
    main()
