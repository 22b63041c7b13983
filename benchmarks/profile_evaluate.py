"""Where ``evaluate`` spends its time, plan part by plan part (a profiling aid).

    python benchmarks/profile_evaluate.py [--size medium] [--rounds 5] [--score] [--graded]
        [--top-k] [--explain]

Polars 2 has no ``LazyFrame.profile()`` any more, so this splits the query
``evaluate`` builds into the parts its ``explain()`` shows and times each
alone, interleaved round by round (steadier on a shared machine):

- the whole call;
- the main plan (join of the truth with the top-k cut, the per-user
  AGGREGATE, the means) without the data checks (``--explain`` prints it);
- each data-check plan (nulls, duplicates, ...) alone;
- the join floor for scale.

It reaches into the package's private ``_validation.guard`` (wrapped for one
call, read-only) to separate the checks from the main plan; when that
changes, this script may need updating. It is not part of any test.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import polars as pl

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import polars_rankmetrics as prm  # noqa: E402
from polars_rankmetrics import _validation as v  # noqa: E402

import generate  # noqa: E402
from floor import join_floor  # noqa: E402

METRICS = ["map@10", "ndcg@10", "mrr@10"]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--size", default="medium")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--score", action="store_true", help="ranks from scores")
    p.add_argument("--graded", action="store_true", help="graded relevance (rel column)")
    p.add_argument("--data", type=Path, default=HERE / "data")
    p.add_argument("--explain", action="store_true", help="print the main plan")
    p.add_argument(
        "--top-k",
        action="store_true",
        help="hand evaluate only the top-10 lists (the rows RecTools is handed), "
        "with denominator='relevant' as vs_rectools.py",
    )
    args = p.parse_args(argv)

    d = generate.generate(generate.SIZES[args.size], args.data, verbose=False)
    recs = pl.read_parquet(d / "recs.parquet")
    truth = pl.read_parquet(d / "truth.parquet")
    kw: dict = {"relevance": "rel"} if args.graded else {}
    if args.top_k:
        recs = recs.filter(pl.col("rank") <= 10)
        kw["denominator"] = "relevant"
    if args.score:
        recs_in = recs.drop("rank")
        kw["score"] = "score"
    else:
        recs_in = recs

    # capture the main plan and the data-check plans of one call
    seen: dict = {}
    orig_guard = v.guard

    def spy_guard(result, checked, **kw):
        seen["result"] = result
        seen["checked"] = [(frame, list(checks)) for frame, checks in checked if checks]
        return orig_guard(result, checked, **kw)

    v.guard = spy_guard
    try:
        prm.evaluate(recs_in, truth, METRICS, **kw)
    finally:
        v.guard = orig_guard
    if args.explain:
        print(seen["result"].explain())

    tasks = {
        "evaluate(): the whole call": lambda: prm.evaluate(recs_in, truth, METRICS, **kw),
        "main plan alone (no data checks)": seen["result"].collect,
    }
    for i, (frame, cks) in enumerate(seen["checked"], 1):
        label = "; ".join(c.message.replace("{n}", "n")[:50] for c in cks)
        tasks[f"check plan {i}: {label}"] = v.summary(frame, cks).collect
    tasks["floor: top-k cut + inner join + counts"] = lambda: pl.collect_all(
        join_floor(recs.lazy(), truth.lazy())
    )

    for fn in tasks.values():
        fn()
    times: dict[str, list[float]] = {k: [] for k in tasks}
    for _ in range(args.rounds):
        for k, fn in tasks.items():
            t0 = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t0)
    print(
        f"{args.size}: {recs.height:,} recs rows, {truth.height:,} truth rows; "
        f"{args.rounds} interleaved rounds; {kw or 'rank given, binary'}"
    )
    for k, ts in times.items():
        print(f"{k[:100]:100s} min {min(ts):7.3f}  median {statistics.median(ts):7.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
