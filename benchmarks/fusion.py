"""Rank fusion and its evaluation against ranx, side by side in one process.

    python benchmarks/fusion.py [--queries 1000000] [--docs 100] [--runs 5] [--rounds 3]
                                [--methods rrf,wsum,mnz] [--norm min-max]

Generates (numpy, seeded) ``runs`` runs over the same queries, each listing
``docs`` documents per query out of a pool of ``2 x docs`` (so runs overlap
and each misses some), with float scores, and a truth of 1..10 relevant
documents per query. Ids are strings (ranx's ids are strings). For each
method it times, interleaved round by round, the median of ``rounds``:

- ``polars_rankmetrics``: ``prm.evaluate(prm.fuse(long_frame, ...), truth, "ndcg@10")``,
  from the long Polars frame (one row per run, query, document);
- ``ranx (Run built)``: ``ranx.evaluate(qrels, ranx.fuse(runs, ...), "ndcg@10")`` on
  ``Run``/``Qrels`` objects built beforehand (building excluded);
- ``ranx (from frames)``: the same with ``Run.from_df`` of each run's pandas frame
  and ``Qrels.from_df`` timed too (building included).

Before timing, the fused NDCG@10 of both libraries is printed (they agree up to
the order of fused ties, which ranx leaves to its sort). The default 1M queries
x 100 documents x 5 runs is 500M rows: about 40 GB as string ids in Polars and
far more as ranx's dicts; ``--queries`` scales it down.
"""

from __future__ import annotations

import argparse
import gc
import statistics
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


def make_data(
    n_queries: int, n_docs: int, n_runs: int, seed: int = 0
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The runs as one long frame (run, user, item, score) and the truth (user, item)."""
    rng = np.random.default_rng(seed)
    pool = 2 * n_docs
    frames = []
    for run in range(n_runs):
        # each query's documents: a random window of the pool, so runs overlap in part
        start = rng.integers(0, pool, size=n_queries)
        offsets = rng.permutation(pool)[:n_docs]
        docs = (start[:, None] + offsets[None, :]) % pool
        frames.append(
            pl.DataFrame(
                {
                    "run": np.full(n_queries * n_docs, f"run{run}"),
                    "user": np.repeat(np.arange(n_queries), n_docs),
                    "item": docs.ravel(),
                    "score": rng.random(n_queries * n_docs),
                }
            )
        )
    runs = pl.concat(frames).with_columns(
        ("q" + pl.col("user").cast(pl.String)).alias("user"),
        ("d" + pl.col("item").cast(pl.String)).alias("item"),
    )
    n_truth = rng.integers(1, 11, size=n_queries)
    truth = (
        pl.DataFrame(
            {
                "user": np.repeat(np.arange(n_queries), n_truth),
                "item": rng.integers(0, pool, size=int(n_truth.sum())),
            }
        )
        .unique(maintain_order=True)
        .with_columns(
            ("q" + pl.col("user").cast(pl.String)).alias("user"),
            ("d" + pl.col("item").cast(pl.String)).alias("item"),
        )
    )
    return runs, truth


def pandas_runs_of(runs: pl.DataFrame) -> dict[str, Any]:
    """Each run as the pandas frame ``Run.from_df`` takes (object ids, float scores)."""
    return {
        name: part.drop("run").to_pandas().astype({"user": object, "item": object})
        for (name,), part in runs.group_by("run", maintain_order=True)
    }


def qrels_frame_of(truth: pl.DataFrame) -> Any:
    frame = truth.with_columns(pl.lit(1, dtype=pl.Int64).alias("rel")).to_pandas()
    return frame.astype({"user": object, "item": object})


def ranx_objects(runs: pl.DataFrame, truth: pl.DataFrame) -> tuple[list[Any], Any]:
    """ranx's ``Run`` per run and its ``Qrels``, from pandas frames (``from_df``)."""
    from ranx import Qrels, Run

    pandas_runs = pandas_runs_of(runs)
    built = [
        Run.from_df(frame, q_id_col="user", doc_id_col="item", score_col="score", name=name)
        for name, frame in pandas_runs.items()
    ]
    qrels = Qrels.from_df(
        qrels_frame_of(truth), q_id_col="user", doc_id_col="item", score_col="rel"
    )
    return built, qrels


def params(method: str, n_runs: int) -> dict[str, Any]:
    if method == "wsum":
        return {"weights": [1.0 / n_runs] * n_runs}
    return {}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=1_000_000)
    parser.add_argument("--docs", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--methods", default="rrf,wsum,mnz")
    parser.add_argument("--norm", default="min-max")
    args = parser.parse_args()
    from ranx import evaluate as ranx_evaluate
    from ranx import fuse as ranx_fuse

    norm = None if args.norm == "none" else args.norm
    runs, truth = make_data(args.queries, args.docs, args.runs)
    names = runs.get_column("run").unique(maintain_order=True).to_list()
    print(
        f"{args.queries:,} queries x {args.docs} docs x {args.runs} runs = {runs.height:,} rows; "
        f"norm={norm}; {args.rounds} interleaved rounds, medians"
    )
    pandas_runs = pandas_runs_of(runs)
    built, qrels = ranx_objects(runs, truth)
    rows = []
    for method in args.methods.split(","):
        ours_params = dict(params(method, len(names)))
        if method == "wsum":
            ours_params["weights"] = dict(zip(names, ours_params["weights"], strict=True))

        def ours(method: str = method, extra: dict[str, Any] = ours_params) -> float:
            fused = prm.fuse(runs, method=method, norm=norm, **extra)  # type: ignore[call-overload]
            return float(prm.evaluate(fused, truth, "ndcg@10").item())

        def ranx_built(method: str = method) -> float:
            fused = ranx_fuse(built, norm=norm, method=method, params=params(method, len(names)))
            return float(ranx_evaluate(qrels, fused, "ndcg@10", save_results_in_run=False))

        def ranx_from_frames(method: str = method) -> float:
            from ranx import Qrels, Run

            objects = [
                Run.from_df(f, q_id_col="user", doc_id_col="item", score_col="score", name=n)
                for n, f in pandas_runs.items()
            ]
            own_qrels = Qrels.from_df(
                qrels_frame_of(truth), q_id_col="user", doc_id_col="item", score_col="rel"
            )
            fused = ranx_fuse(objects, norm=norm, method=method, params=params(method, len(names)))
            return float(ranx_evaluate(own_qrels, fused, "ndcg@10", save_results_in_run=False))

        tasks: dict[str, Callable[[], float]] = {
            "polars_rankmetrics": ours,
            "ranx (Run built)": ranx_built,
            "ranx (from frames)": ranx_from_frames,
        }
        values = {name: task() for name, task in tasks.items()}  # warm-up (numba compiles)
        print(f"{method}: ndcg@10 " + ", ".join(f"{k} {v:.6f}" for k, v in values.items()))
        times: dict[str, list[float]] = {name: [] for name in tasks}
        for _ in range(args.rounds):
            for name, task in tasks.items():
                gc.collect()
                start = time.perf_counter()
                task()
                times[name].append(time.perf_counter() - start)
        medians = {name: statistics.median(ts) for name, ts in times.items()}
        for name, median in medians.items():
            ratio = medians["polars_rankmetrics"] / median
            rows.append(f"| {method} | {name} | {median:.3f} | {ratio:.2f} |")
    print("\n| method | implementation | median s | ours / this (below 1: ours faster) |")
    print("|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
