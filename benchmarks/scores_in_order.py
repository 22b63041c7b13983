"""Ranks from scores on lists that arrive in rank order, against the join floor, at any size.

    python benchmarks/scores_in_order.py [--size large] [--rounds 9]

``benchmarks/scores.py`` measures this case beside shuffled rows, whose
copies do not fit a 100M-row set in memory; this script loads the set once
and alternates, round by round (one warm-up call each), three tasks:

- the join floor of ``benchmarks/floor.py`` (ranks given: top-10 cut, inner
  join on (user, item), rows per user on both sides);
- ``evaluate(recs, truth, ["map@10", "ndcg@10", "mrr@10"])`` with the ranks;
- the same from the scores alone (the rank column dropped), rows as
  generated: each list one block, best first.

It prints the median and minimum of each and the issue-17 ratios to the
floor (target <= 1.6x at 10M, <= 1.5x at 100M, default checks on).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import polars as pl

HERE = Path(__file__).resolve().parent
METRICS = ["map@10", "ndcg@10", "mrr@10"]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--size", default="medium")
    p.add_argument("--rounds", type=int, default=9)
    p.add_argument("--data", type=Path, default=HERE / "data")
    args = p.parse_args(argv)

    sys.path.insert(0, str(HERE))
    import generate
    from floor import join_floor

    sys.path.insert(0, str(HERE.parent))
    import polars_rankmetrics as prm

    d = generate.generate(generate.SIZES[args.size], args.data, verbose=False)
    recs = pl.read_parquet(d / "recs.parquet")
    truth = pl.read_parquet(d / "truth.parquet")
    scored = recs.drop("rank")
    print(
        f"{args.size}: {recs.height:,} recs rows, {truth.height:,} truth rows; "
        f"Polars {pl.__version__}, {pl.thread_pool_size()} threads"
    )
    tasks: dict[str, Callable[[], object]] = {
        "floor (ranks given)": lambda: pl.collect_all(join_floor(recs.lazy(), truth.lazy())),
        "evaluate, ranks given": lambda: prm.evaluate(recs, truth, METRICS),
        "evaluate, scores in rank order": lambda: prm.evaluate(
            scored, truth, METRICS, score="score"
        ),
    }
    from_scores = prm.evaluate(scored, truth, METRICS, score="score").row(0)
    given = prm.evaluate(recs, truth, METRICS).row(0)
    # the same numbers, up to the last bits of a sum taken in another order
    if any(abs(a - b) > 1e-12 for a, b in zip(from_scores, given, strict=True)):
        raise AssertionError(f"ranks from the scores gave {from_scores}, given ranks {given}")
    times: dict[str, list[float]] = {name: [] for name in tasks}
    for task in tasks.values():
        task()  # warm-up
    for _ in range(args.rounds):
        for name, task in tasks.items():
            start = time.perf_counter()
            task()
            times[name].append(time.perf_counter() - start)
    print(f"{args.rounds} interleaved rounds, wall clock seconds")
    print("| task | median | min |\n|---|--:|--:|")
    for name, seconds in times.items():
        print(f"| {name} | {statistics.median(seconds):.3f} | {min(seconds):.3f} |")
    floor = times["floor (ranks given)"]
    for name in list(tasks)[1:]:
        mine = times[name]
        print(
            f"{name} / floor: {statistics.median(mine) / statistics.median(floor):.2f}x medians, "
            f"{min(mine) / min(floor):.2f}x minima"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
