"""Randomized Tukey HSD: the package's streamed kernel against a plain NumPy version.

    python benchmarks/hsd.py                      # 100,000 users x 10 systems, B = 10,000
    python benchmarks/hsd.py --resamples 200      # the same per replicate, extrapolated

Both draw, for every replicate, one independent permutation of the system
labels within each user, and count replicates whose range of system means
reaches each pair's observed |difference|. The plain version is what one
writes first: per replicate, argsort of random keys, a gather, column sums.
The package's (``polars_rankmetrics.analysis._stats.tukey_hsd_p_values``)
shuffles whole batches of replicates at once (``Generator.permuted``, at
most 2^22 cells per batch) on values held as whole numbers of grid steps.
Times are wall-clock seconds; per-replicate time times B is printed too.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from polars_rankmetrics.analysis._stats import tukey_hsd_p_values


def plain(
    matrix: np.ndarray, pairs: list[tuple[int, int]], resamples: int, seed: int
) -> list[float]:
    rng = np.random.default_rng(seed)
    n, k = matrix.shape
    means = matrix.mean(axis=0)
    observed = np.array([abs(means[i] - means[j]) for i, j in pairs])
    exceed = np.zeros(len(pairs), dtype=np.int64)
    for _ in range(resamples):
        order = rng.random((n, k)).argsort(axis=1)
        permuted = np.take_along_axis(matrix, order, axis=1).mean(axis=0)
        exceed += permuted.max() - permuted.min() >= observed - 1e-12
    return list((exceed + 1) / (resamples + 1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--systems", type=int, default=10)
    parser.add_argument("--resamples", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    # nDCG-like values: a system effect plus user difficulty plus noise, on [0, 1]
    matrix = np.clip(
        rng.normal(0.3, 0.1, (args.users, 1))
        + np.linspace(0, 0.01, args.systems)
        + rng.normal(0, 0.15, (args.users, args.systems)),
        0,
        1,
    ).round(4)
    pairs = [(i, j) for i in range(args.systems) for j in range(i + 1, args.systems)]
    print(f"{args.users:,} users x {args.systems} systems, B = {args.resamples:,}")
    for name, run in (
        ("package (streamed batches)", lambda: tukey_hsd_p_values(
            matrix, pairs, n_resamples=args.resamples, rng=np.random.default_rng(1))),
        ("plain NumPy (per replicate)", lambda: plain(matrix, pairs, args.resamples, 1)),
    ):  # fmt: skip
        start = time.perf_counter()
        p = run()
        seconds = time.perf_counter() - start
        per = seconds / args.resamples
        print(
            f"{name:30s} {seconds:8.2f} s  ({per * 1e3:.2f} ms per replicate, "
            f"{per * 10_000:.0f} s at B = 10,000)  smallest p {min(p):.4f}"
        )


if __name__ == "__main__":
    main()
