"""A score matrix to metrics: ``top_k`` + ``evaluate`` against NumPy's floor and torchmetrics.

    python benchmarks/top_k.py [--users 100000] [--items 20000] [--k 10] [--rounds 3]
                               [--torch-users 8000] [--torch-items 2000]

One process, interleaved rounds, medians. On a seeded float32 matrix of
``users x items`` scores (and a truth of 1..10 relevant items per user):

- ``top_k+evaluate``: ``prm.top_k(scores, k)`` then
  ``prm.evaluate(..., ["ndcg@k", "mrr@k", "precision@k", "recall@k"], score="score")``;
- ``floor``: the least NumPy work a top-k needs, chunk by chunk as ``top_k``
  goes: ``np.argpartition`` of the negated scores to the k best columns, their
  scores gathered and sorted (no ids, no ties, no frame, no metric);
- ``top_k`` alone, to show the split.

Target: ``top_k+evaluate`` within 1.5x of the floor. Then, on a matrix small
enough for torchmetrics' flat (preds, target, indexes) tensors
(``--torch-users x --torch-items``: at 100,000 x 20,000 they would take 2e9
entries each, beyond the machine's memory), the same metrics by torchmetrics'
retrieval classes on the CPU against ``top_k+evaluate``: the numbers compared
(to 1e-6: torchmetrics computes in float32) and the ratio (target: at least 5x
faster). torchmetrics and torch are optional; without them that part is skipped.
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
from polars_rankmetrics import _matrix  # noqa: E402


def make_data(users: int, items: int, seed: int = 0) -> tuple[np.ndarray[Any, Any], pl.DataFrame]:
    rng = np.random.default_rng(seed)
    scores = rng.random((users, items), dtype=np.float32)
    n_truth = rng.integers(1, 11, size=users)
    truth = pl.DataFrame({
        "user": np.repeat(np.arange(users), n_truth),
        "item": rng.integers(0, items, size=int(n_truth.sum())),
    }).unique()  # fmt: skip
    # the relevant items score higher on average: metrics away from zero
    rows, columns = truth["user"].to_numpy(), truth["item"].to_numpy()
    scores[rows, columns] += rng.random(len(rows), dtype=np.float32)
    return scores, truth


def metrics(k: int) -> list[str]:
    return [f"ndcg@{k}", f"mrr@{k}", f"precision@{k}", f"recall@{k}"]


def ours(scores: np.ndarray[Any, Any], truth: pl.DataFrame, k: int) -> pl.DataFrame:
    return prm.evaluate(prm.top_k(scores, k), truth, metrics(k), score="score")


def floor(scores: np.ndarray[Any, Any], k: int) -> None:
    step = max(1, _matrix._CELLS_PER_CHUNK // scores.shape[1])
    for start in range(0, scores.shape[0], step):
        block = -scores[start : start + step]
        best = np.argpartition(block, k - 1, axis=1)[:, :k]
        values = np.take_along_axis(block, best, axis=1)
        np.take_along_axis(best, np.argsort(values, axis=1), axis=1)


def timed(work: Callable[[], object], rounds: int) -> list[float]:
    times = []
    for _ in range(rounds):
        gc.collect()
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return times


def interleaved(tasks: dict[str, Callable[[], object]], rounds: int) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name in tasks}
    for _ in range(rounds):
        for name, work in tasks.items():
            times[name] += timed(work, 1)
    return {name: statistics.median(values) for name, values in times.items()}


def torchmetrics_values(
    scores: np.ndarray[Any, Any], truth: pl.DataFrame, k: int
) -> dict[str, float] | None:
    try:
        import torch
        from torchmetrics import retrieval
    except ImportError:
        return None
    users, items = scores.shape
    target = np.zeros(scores.shape, dtype=bool)
    target[truth["user"].to_numpy(), truth["item"].to_numpy()] = True
    preds = torch.from_numpy(scores.reshape(-1))
    target_t = torch.from_numpy(target.reshape(-1))
    indexes = torch.arange(users).repeat_interleave(items)
    classes = {
        f"ndcg@{k}": retrieval.RetrievalNormalizedDCG(top_k=k),
        f"mrr@{k}": retrieval.RetrievalMRR(top_k=k),
        f"precision@{k}": retrieval.RetrievalPrecision(top_k=k),
        f"recall@{k}": retrieval.RetrievalRecall(top_k=k),
    }
    return {
        name: float(metric(preds, target_t, indexes=indexes)) for name, metric in classes.items()
    }


def against_the_floor(users: int, items: int, k: int, rounds: int) -> None:
    scores, truth = make_data(users, items)
    print(f"{users:,} x {items:,} float32 ({scores.nbytes / 2**30:.1f} GiB), k = {k}")
    medians = interleaved(
        {
            "floor": lambda: floor(scores, k),
            "top_k": lambda: prm.top_k(scores, k),
            "top_k+evaluate": lambda: ours(scores, truth, k),
        },
        rounds,
    )
    for name, seconds in medians.items():
        print(f"  {name:<16} {seconds:8.3f} s  {seconds / medians['floor']:5.2f}x the floor")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--items", type=int, default=20_000)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--torch-users", type=int, default=8_000)
    parser.add_argument("--torch-items", type=int, default=2_000)
    args = parser.parse_args()

    against_the_floor(args.users, args.items, args.k, args.rounds)
    gc.collect()

    small, small_truth = make_data(args.torch_users, args.torch_items, seed=1)
    print(f"\ntorchmetrics (CPU) on {args.torch_users:,} x {args.torch_items:,}:")
    theirs = torchmetrics_values(small, small_truth, args.k)
    if theirs is None:
        print("  skipped: torch and torchmetrics are not installed")
        return
    mine = ours(small, small_truth, args.k).row(0, named=True)
    for name, value in theirs.items():
        diff = abs(mine[name] - value)
        print(f"  {name:<14} ours {mine[name]:.6f}  torchmetrics {value:.6f}  |diff| {diff:.1e}")
    medians = interleaved(
        {
            "torchmetrics": lambda: torchmetrics_values(small, small_truth, args.k),
            "top_k+evaluate": lambda: ours(small, small_truth, args.k),
        },
        args.rounds,
    )
    ratio = medians["torchmetrics"] / medians["top_k+evaluate"]
    print(
        f"  torchmetrics {medians['torchmetrics']:.3f} s, top_k+evaluate "
        f"{medians['top_k+evaluate']:.3f} s: {ratio:.1f}x faster"
    )


if __name__ == "__main__":
    main()
