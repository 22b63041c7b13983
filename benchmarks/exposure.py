"""AWRF@10 against plain NDCG@10 through ``evaluate``, side by side in one process.

Data (deterministic, generated in memory): ``--rows`` / 10 users with a list
of 10 distinct items each (ranks 1..10, Zipf item popularity over a catalog
of ``--catalog`` items), a truth of 10 items per user (half from the list),
and a catalog whose ``group`` column holds one of 8 groups and whose
``groups`` column holds a list of 1 (two thirds of the items) or 2 groups.

``--rounds`` interleaved rounds: each round runs every task once, in turn, so
a change in the machine's load touches all tasks alike. Reported per task:
the median and the minimum wall time over the rounds and the ratio of the
median to NDCG@10's (the target for AWRF: within 1.5x).

Usage::

    python benchmarks/exposure.py --rows 1000000 --rounds 3     # develop
    python benchmarks/exposure.py --rows 10000000 --rounds 7    # the 10M-row target
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

SEED = 20261126
LENGTH = 10
N_GROUPS = 8


def generate(rows: int, catalog: int) -> dict[str, Any]:
    """The lists, the truth and the catalog, as Polars DataFrames."""
    import numpy as np
    import polars as pl

    rng = np.random.default_rng(SEED)
    users = max(1, rows // LENGTH)
    weights = 1.0 / np.arange(1, catalog + 1)
    weights /= weights.sum()
    # 10 distinct items per user: draw 14, keep the first 10 distinct (Zipf head repeats)
    draws = rng.choice(catalog, size=(users, 14), p=weights)
    items = np.empty((users, LENGTH), dtype=np.int64)
    for row in range(users):
        _, first = np.unique(draws[row], return_index=True)
        distinct = draws[row][np.sort(first)]
        if distinct.size < LENGTH:
            extra = rng.choice(catalog, size=3 * LENGTH, replace=False)
            distinct = np.concatenate([distinct, extra[~np.isin(extra, distinct)]])
        items[row] = distinct[:LENGTH]
    user_ids = np.repeat(np.arange(users, dtype=np.int64), LENGTH)
    recs = pl.DataFrame(
        {
            "user": user_ids,
            "item": items.ravel(),
            "rank": np.tile(np.arange(1, LENGTH + 1, dtype=np.int64), users),
        }
    )
    hits = items[:, ::2]
    misses = rng.integers(0, catalog, size=(users, LENGTH // 2))
    truth = pl.DataFrame(
        {
            "user": np.repeat(np.arange(users, dtype=np.int64), LENGTH),
            "item": np.concatenate([hits, misses], axis=1).ravel(),
        }
    ).unique()
    first = rng.integers(0, N_GROUPS, size=catalog)
    second = (first + rng.integers(1, N_GROUPS, size=catalog)) % N_GROUPS
    several = rng.random(catalog) < 1 / 3
    names = np.array([f"g{n}" for n in range(N_GROUPS)])
    catalog_frame = pl.DataFrame(
        {
            "item": np.arange(catalog, dtype=np.int64),
            "group": names[first],
            "groups": [
                [names[a], names[b]] if two else [names[a]]
                for a, b, two in zip(first, second, several, strict=True)
            ],
        }
    )
    return {"recs": recs, "truth": truth, "items": catalog_frame}


def tasks(data: dict[str, Any]) -> dict[str, Callable[[], object]]:
    import polars_rankmetrics as prm

    recs, truth, items = data["recs"], data["truth"], data["items"]
    return {
        "ndcg@10 (evaluate, truth)": lambda: prm.evaluate(recs, truth, ["ndcg@10"]),
        "awrf@10 (one group per item)": lambda: prm.evaluate(
            recs, None, ["awrf@10"], items=items, group="group"
        ),
        "awrf@10 (1 or 2 groups per item)": lambda: prm.evaluate(
            recs, None, ["awrf@10"], items=items, group="groups"
        ),
        "ndkl@10 (one group per item)": lambda: prm.evaluate(
            recs, None, ["ndkl@10"], items=items, group="group"
        ),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="recommendation rows")
    parser.add_argument("--catalog", type=int, default=100_000, help="catalog items")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds")
    parser.add_argument("--skip-ndkl", action="store_true", help="leave NDKL out")
    args = parser.parse_args()
    import polars as pl

    start = time.perf_counter()
    data = generate(args.rows, args.catalog)
    print(
        f"{data['recs'].height:,} rows, {data['items'].height:,} items "
        f"(generated in {time.perf_counter() - start:.1f} s); Polars {pl.__version__}, "
        f"{pl.thread_pool_size()} threads",
        flush=True,
    )
    work = tasks(data)
    if args.skip_ndkl:
        work = {name: run for name, run in work.items() if not name.startswith("ndkl")}
    times: dict[str, list[float]] = {name: [] for name in work}
    for _ in range(args.rounds):
        for name, run in work.items():
            begin = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - begin)
    base = statistics.median(times["ndcg@10 (evaluate, truth)"])
    print("| task | median s | min s | median / ndcg@10 |\n|---|---:|---:|---:|")
    for name, seconds in times.items():
        median = statistics.median(seconds)
        print(f"| {name} | {median:.3f} | {min(seconds):.3f} | {median / base:.2f}x |")


if __name__ == "__main__":
    main()
