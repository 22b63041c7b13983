"""AUC and GAUC against plain NDCG@10 through ``evaluate``, side by side in one process.

Data (deterministic, in memory): ``--rows`` recommendation rows, lists of
``--list`` distinct items with scores (Zipf item popularity over a catalog of
``--catalog`` items; scores rounded to 2 decimals, so most lists hold ties), and a
truth of 10 items per user (Zipf), so most users have both relevant and
non-relevant candidates.

``--rounds`` interleaved rounds, each running every task once in turn, so a
change in the machine's load touches them alike: ``ndcg@10`` (the
reference, a top-10 cut), ``auc`` (every candidate of every list: the whole
lists are ranked), ``auc`` with ``ties="average"`` (equal scores count one
half: tie groups are counted), ``auc(max_fpr=0.1)``, ``gauc`` and ``pauc@10``
(RecTools' partial AUC: whole lists too). Reported per task: the median and
the minimum wall time and the median's ratio to ``ndcg@10``'s (the issue's
target: ``auc`` within 2x of NDCG@10 at 10M rows).

Usage::

    python benchmarks/auc.py --rows 100000 --rounds 3      # develop
    python benchmarks/auc.py --rows 10000000 --rounds 7
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SEED = 20261128


def data(rows: int, length: int, catalog: int) -> dict[str, object]:
    import numpy as np
    import polars as pl

    rng = np.random.default_rng(SEED)
    users = max(1, rows // length)
    weights = 1.0 / np.arange(1, catalog + 1)
    weights /= weights.sum()
    ids = rng.permutation(catalog)  # popular items are not simply the small ids
    draws = int(length * 1.6)
    recs = (
        pl.DataFrame(
            {
                "user": np.repeat(np.arange(users, dtype=np.int64), draws),
                "item": ids[rng.choice(catalog, size=users * draws, p=weights)].astype(np.int64),
            }
        )
        .unique(maintain_order=True)
        .with_columns(pl.col("user").cum_count().over("user").alias("slot"))
        .filter(pl.col("slot") <= length)
        .drop("slot")
    )
    # two decimals (100 values): most lists of 20 hold a tie, as real scores often do
    recs = recs.with_columns(score=pl.Series(rng.uniform(0.0, 1.0, size=recs.height)).round(2))
    truth = pl.DataFrame(
        {
            "user": np.repeat(np.arange(users, dtype=np.int64), 10),
            "item": ids[rng.choice(catalog, size=users * 10, p=weights)].astype(np.int64),
        }
    ).unique()
    return {"recs": recs, "truth": truth}


def tasks(frames: dict[str, object]) -> dict[str, Callable[[], object]]:
    sys.path.insert(0, str(ROOT))
    import polars_rankmetrics as prm

    recs, truth = frames["recs"], frames["truth"]

    def run(metric: str, **options: object) -> Callable[[], object]:
        return lambda: prm.evaluate(recs, truth, metric, score="score", **options)  # type: ignore[arg-type]

    return {
        "ndcg@10": run("ndcg@10"),
        "auc": run("auc"),
        "auc, ties='average'": run("auc", ties="average"),
        "auc(max_fpr=0.1)": run("auc(max_fpr=0.1)"),
        "gauc": run("gauc"),
        "pauc@10": run("pauc@10"),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="recommendation rows")
    parser.add_argument("--list", type=int, default=20, help="list length")
    parser.add_argument("--catalog", type=int, default=50_000, help="catalog size")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    frames = data(args.rows, args.list, args.catalog)
    calls = tasks(frames)
    for call in calls.values():  # warm up (imports, first-call costs)
        call()
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(args.rounds):
        for name, call in calls.items():
            start = time.perf_counter()
            call()
            times[name].append(time.perf_counter() - start)
    reference = statistics.median(times["ndcg@10"])
    rows = frames["recs"].height  # type: ignore[attr-defined]
    print(f"{rows:,} recommendation rows, {args.rounds} interleaved rounds")
    print("| task | median s | min s | median / ndcg@10 |")
    print("|---|---:|---:|---:|")
    for name, seconds in times.items():
        median = statistics.median(seconds)
        print(f"| {name} | {median:.3f} | {min(seconds):.3f} | {median / reference:.2f}x |")


if __name__ == "__main__":
    main()
