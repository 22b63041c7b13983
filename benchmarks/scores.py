"""Ranks from scores: evaluate() against the cheapest bare-Polars per-user ordering, in one run.

    python benchmarks/scores.py [--size medium] [--users 20000] [--repeats 9]

Loads ``benchmarks/generate.py``'s data set (default ``medium``: 100k users x
100 recommendations = 10M rows; ``--users N`` keeps the first N users, e.g.
20,000 for 2M rows while iterating), drops the given ranks and alternates,
round by round, one warm-up call each, the variants below. It prints the
median and minimum of each (wall clock, and the process's CPU time, steadier
on a shared machine), and the issue-17 ratios:

- **bare orderings** of the shuffled rows (``sample(fraction=1, shuffle=True,
  seed=0)``), the top 10 per user with positions, by the score alone (no tie
  rule, no checks, no truth): an ordinal ``rank`` over the user, of the
  score or of its bits read as an Int64 (the same order, ranked faster);
  ``top_k_by``
  per user in a ``group_by``; one sort by score then a row count per user.
  The fastest (by median) is the denominator;
- ``evaluate(shuffled, truth, ["map@10", "ndcg@10", "mrr@10"], score="score")``
  (target <= 1.2x that denominator) and with ``duplicates="first"`` (target
  <= 1.3x the default);
- the same with a repeated item in the top 10 of one list: the default refuses
  it (target: the refusal costs no more than evaluating clean data), and
  ``"first"`` with a repeat in 1% of the lists (those lists ranked again);
- rows as generated (each list one block in score order): evaluate from
  scores, default and ``"first"``, against the join floor of
  ``benchmarks/floor.py`` (ranks given: top-10 cut, join, counts).
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
K = 10
METRICS = ["map@10", "ndcg@10", "mrr@10"]


def bare_orderings(recs: pl.LazyFrame, k: int = K) -> dict[str, Callable[[], object]]:
    """Per-user top-k with positions by the score alone: the candidates for the denominator."""
    # the package's order-preserving Int64 of a float (on the path once main() has run)
    from polars_rankmetrics._pipeline.rank_cut import score_order

    score = pl.col("score")
    return {
        "bare: rank('ordinal').over(user), cut": lambda: (
            recs.select(
                "user", "item", score.rank("ordinal", descending=True).over("user").alias("r")
            )
            .filter(pl.col("r") <= k)
            .collect()
        ),
        "bare: rank of the score's Int64 bits over user, cut": lambda: (
            recs.select(
                "user",
                "item",
                score_order("score").rank("ordinal", descending=True).over("user").alias("r"),
            )
            .filter(pl.col("r") <= k)
            .collect()
        ),
        "bare: group_by(user) top_k_by": lambda: (
            recs.group_by("user").agg(pl.col("item").top_k_by("score", k)).collect()
        ),
        "bare: sort(score), count per user, cut": lambda: (
            recs.sort("score", descending=True)
            .select(
                "user",
                "item",
                (pl.int_range(pl.len(), dtype=pl.UInt32).over("user") + 1).alias("r"),
            )
            .filter(pl.col("r") <= k)
            .collect()
        ),
    }


def with_repeats(recs: pl.DataFrame, share: float) -> pl.DataFrame:
    """Repeat the top item of a share of the lists just below it (a slot taken twice)."""
    users = recs.select(pl.col("user").unique().sort())
    chosen = users.filter(pl.int_range(pl.len()) < max(1, int(share * users.height)))
    best = (
        recs.join(chosen, on="user", how="semi")
        .filter(pl.col("score") == pl.col("score").max().over("user"))
        .with_columns(pl.col("score") - 0.01)
    )
    return pl.concat([recs, best.select(recs.columns)])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--size", default="medium")
    p.add_argument("--users", type=int, default=None, help="keep the first N users only")
    p.add_argument("--repeats", type=int, default=9)
    p.add_argument("--data", type=Path, default=HERE / "data")
    p.add_argument("--only", default="", help="comma-separated substrings of variant names")
    args = p.parse_args(argv)

    sys.path.insert(0, str(HERE))
    import generate
    from floor import join_floor

    sys.path.insert(0, str(HERE.parent))
    import polars_rankmetrics as prm

    d = generate.generate(generate.SIZES[args.size], args.data, verbose=False)
    recs = pl.read_parquet(d / "recs.parquet")
    truth = pl.read_parquet(d / "truth.parquet")
    if args.users is not None:
        users = recs.select(pl.col("user").unique(maintain_order=True).head(args.users))
        recs = recs.join(users, on="user", how="semi")
        truth = truth.join(users, on="user", how="semi")
    scored = recs.drop("rank")
    shuffled = scored.sample(fraction=1.0, shuffle=True, seed=0)
    refused = with_repeats(shuffled, 0.0).sample(fraction=1.0, shuffle=True, seed=1)
    refused_ordered = with_repeats(scored, 0.0).sort("user", "score", descending=[False, True])
    repeats_1pct = with_repeats(shuffled, 0.01).sample(fraction=1.0, shuffle=True, seed=2)
    print(
        f"{args.size}{f' (first {args.users:,} users)' if args.users else ''}: "
        f"{recs.height:,} recs rows, {truth.height:,} truth rows; Polars {pl.__version__}, "
        f"{pl.thread_pool_size()} threads"
    )

    def evaluate(frame: pl.DataFrame, **kwargs: object) -> Callable[[], object]:
        return lambda: prm.evaluate(frame, truth, METRICS, score="score", **kwargs)

    def refusal(frame: pl.DataFrame) -> Callable[[], object]:
        def run() -> None:
            try:
                prm.evaluate(frame, truth, METRICS, score="score")
            except ValueError as error:
                if "duplicated" not in str(error):
                    raise
            else:
                raise AssertionError("a repeated item within the top 10 was not refused")

        return run

    tasks: dict[str, Callable[[], object]] = {
        "floor (ranks given)": lambda: pl.collect_all(join_floor(recs.lazy(), truth.lazy())),
        **bare_orderings(shuffled.lazy()),
        "evaluate, shuffled": evaluate(shuffled),
        "evaluate, shuffled, first": evaluate(shuffled, duplicates="first"),
        "evaluate, shuffled, a repeat: refused": refusal(refused),
        "evaluate, shuffled, first, repeats in 1% of lists": evaluate(
            repeats_1pct, duplicates="first"
        ),
        "evaluate, in rank order": evaluate(scored),
        "evaluate, in rank order, first": evaluate(scored, duplicates="first"),
        "evaluate, in rank order, a repeat: refused": refusal(refused_ordered),
    }
    if args.only:
        wanted = args.only.split(",")
        always = ("floor", "bare", "evaluate, shuffled")
        tasks = {
            name: fn
            for name, fn in tasks.items()
            if name.startswith(always[:2]) or name == always[2] or any(w in name for w in wanted)
        }
    # the same numbers from every plan before timing them
    base = prm.evaluate(shuffled, truth, METRICS, score="score")
    for frame, kwargs in ((shuffled, {"duplicates": "first"}), (scored, {})):
        other = prm.evaluate(frame, truth, METRICS, score="score", **kwargs)
        for name in METRICS:
            assert abs(other[name].item() - base[name].item()) < 1e-12, name
    for fn in tasks.values():  # warm-up
        fn()
    wall: dict[str, list[float]] = {name: [] for name in tasks}
    cpu: dict[str, list[float]] = {name: [] for name in tasks}
    for _ in range(args.repeats):
        for name, fn in tasks.items():
            c0, t0 = time.process_time(), time.perf_counter()
            fn()
            wall[name].append(time.perf_counter() - t0)
            cpu[name].append(time.process_time() - c0)

    def med(name: str, table: dict[str, list[float]] = wall) -> float:
        return statistics.median(table[name])

    def low(name: str, table: dict[str, list[float]] = wall) -> float:
        return min(table[name])

    print(f"{args.repeats} interleaved rounds; wall clock and process CPU seconds")
    print("| variant | wall median | wall min | CPU median | CPU min |\n|---|--:|--:|--:|--:|")
    for name in tasks:
        print(
            f"| {name} | {med(name):.3f} | {low(name):.3f} | "
            f"{med(name, cpu):.3f} | {low(name, cpu):.3f} |"
        )
    bare = min((name for name in tasks if name.startswith("bare")), key=med)
    print(f"\ndenominator: the fastest bare ordering by median, {bare!r}")

    def ratio(top: str, bottom: str, target: float | None = None) -> None:
        if top not in tasks or bottom not in tasks:
            return
        verdict = "" if target is None else f" (target <= {target}x)"
        print(
            f"{top} / {bottom}: {med(top) / med(bottom):.2f}x medians, "
            f"{low(top) / low(bottom):.2f}x minima, "
            f"CPU {med(top, cpu) / med(bottom, cpu):.2f}x medians{verdict}"
        )

    ratio("evaluate, shuffled", bare, 1.2)
    ratio("evaluate, shuffled, first", "evaluate, shuffled", 1.3)
    ratio("evaluate, shuffled, a repeat: refused", "evaluate, shuffled", 1.0)
    ratio("evaluate, shuffled, first, repeats in 1% of lists", "evaluate, shuffled")
    ratio("evaluate, in rank order", "floor (ranks given)")
    ratio("evaluate, in rank order, first", "evaluate, in rank order", 1.3)
    ratio("evaluate, in rank order, a repeat: refused", "evaluate, in rank order", 1.0)
    ratio("evaluate, shuffled", "floor (ranks given)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
