"""Deterministic generator of realistic recommendation-evaluation data.

Writes ``<out>/<size>/recs.parquet`` and ``<out>/<size>/truth.parquet``
(default ``benchmarks/data/``, git-ignored) chunk by chunk, so even the
1-billion-row set never sits in memory.

Data model
----------
recs   user Int64, item Int64, rank Int32 (1 = top), score Float64
truth  user Int64, item Int64, rel Int32 (graded relevance 1..3)

- Item popularity is Zipf-like (weight 1 / popularity_rank ** ZIPF_A); item ids
  are a fixed pseudo-random bijection of the popularity rank, so popular items
  are not simply the small ids.
- Every recommended user has exactly ``n_recs`` distinct items. Scores are
  strictly decreasing with rank inside a user (gap >= 0.1, so no ties even as
  float32) and agree with ``rank``: deriving ranks from ``score`` reproduces
  ``rank`` exactly under every tie rule.
- 90% of the recommended users have truth; the other 10% are "recommended
  users without truth". A further 5% of users are "truth users without
  recommendations".
- Each truth user has 1..20 relevant items (geometric, mean ~6, capped at 20),
  relevance 1/2/3 with probability 0.6/0.3/0.1. About 35% of the truth items
  are drawn from the user's own list, biased to its top (so metrics are not
  all 0), the rest from the popularity distribution.
- Rows are grouped by user (users in a scrambled id order) and by rank inside
  a user, the shape a recommender's top-k export usually has.
- ``--ids str`` writes user/item as strings ("u0000042", "i0000007") instead.

Everything is a pure function of (seed, size spec, chunk index): the same
command always writes byte-identical data.

Usage
-----
    python benchmarks/generate.py --sizes small,medium
    python benchmarks/generate.py --sizes large --out /big/disk
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

HERE = Path(__file__).resolve().parent
DEFAULT_OUT = HERE / "data"
SEED = 20240611
ZIPF_A = 1.0
CHUNK_USERS = 100_000  # part of the spec: changing it changes the data
TRUTH_SHARE = 0.90  # share of recommended users that have truth
TRUTH_ONLY_SHARE = 0.05  # extra truth users without recs, relative to n_users
MAX_TRUTH = 20
P_TRUTH_FROM_RECS = 0.35
REL_P = (0.6, 0.3, 0.1)


@dataclass(frozen=True)
class Size:
    name: str
    n_users: int
    n_recs: int
    n_items: int

    @property
    def rows(self) -> int:
        return self.n_users * self.n_recs


SIZES = {
    "small": Size("small", 10_000, 20, 20_000),
    "medium": Size("medium", 100_000, 100, 200_000),
    "large": Size("large", 1_000_000, 100, 1_000_000),
    "huge": Size("huge", 10_000_000, 100, 2_000_000),  # out-of-core demo only
}

RECS_SCHEMA = pa.schema(
    [("user", pa.int64()), ("item", pa.int64()), ("rank", pa.int32()), ("score", pa.float64())]
)
TRUTH_SCHEMA = pa.schema([("user", pa.int64()), ("item", pa.int64()), ("rel", pa.int32())])


def _coprime_multiplier(n: int) -> int:
    """A multiplier a with gcd(a, n) == 1, used for the bijection i -> (a*i + b) mod n."""
    a = int(n * 0.6180339887) | 1
    while math.gcd(a, n) != 1:
        a += 2
    return a


def _bijection(idx: np.ndarray, n: int, offset: int) -> np.ndarray:
    a = _coprime_multiplier(n)
    return (idx.astype(np.int64) * a + offset) % n


def _zipf_cdf(n_items: int) -> np.ndarray:
    w = 1.0 / np.arange(1, n_items + 1, dtype=np.float64) ** ZIPF_A
    cdf = np.cumsum(w)
    cdf /= cdf[-1]
    return cdf


def _distinct_rows(rng: np.random.Generator, cand: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per row of `cand`, a random order of its distinct values (duplicates last).

    Returns the reordered matrix and the number of distinct values per row.
    """
    order = np.argsort(cand, axis=1, kind="stable")
    s = np.take_along_axis(cand, order, axis=1)
    dup_sorted = np.zeros(s.shape, dtype=bool)
    dup_sorted[:, 1:] = s[:, 1:] == s[:, :-1]
    dup = np.empty_like(dup_sorted)
    np.put_along_axis(dup, order, dup_sorted, axis=1)
    keys = rng.random(cand.shape)
    keys[dup] = 2.0  # duplicates sort after every distinct value
    perm = np.argsort(keys, axis=1)
    n_distinct = cand.shape[1] - dup.sum(axis=1)
    return np.take_along_axis(cand, perm, axis=1), n_distinct


def _draw_items(rng: np.random.Generator, cdf: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    pop_rank = np.searchsorted(cdf, rng.random(shape), side="right")
    return np.minimum(pop_rank, cdf.size - 1)


def _rec_lists(rng: np.random.Generator, cdf: np.ndarray, n_rows: int, n_recs: int) -> np.ndarray:
    """(n_rows, n_recs) popularity ranks, distinct within each row."""
    out = np.empty((n_rows, n_recs), dtype=np.int64)
    todo = np.arange(n_rows)
    width = 2 * n_recs + 20
    while todo.size:
        cand = _draw_items(rng, cdf, (todo.size, width))
        lists, n_distinct = _distinct_rows(rng, cand)
        ok = n_distinct >= n_recs
        out[todo[ok]] = lists[ok, :n_recs]
        todo = todo[~ok]
        width *= 2
    return out


def _chunk(size: Size, chunk: int, seed: int, cdf: np.ndarray) -> tuple[pa.Table, pa.Table]:
    """Generate the recs and truth rows of users [chunk*CHUNK_USERS, ...)."""
    rng = np.random.default_rng([seed, size.n_users, size.n_recs, size.n_items, chunk])
    n_truth_only = int(size.n_users * TRUTH_ONLY_SHARE)
    universe = size.n_users + n_truth_only
    lo = chunk * CHUNK_USERS
    hi = min(size.n_users, lo + CHUNK_USERS)
    b = hi - lo
    n = size.n_recs

    # --- recommendations
    pop = _rec_lists(rng, cdf, b, n)  # popularity ranks, (b, n)
    user_idx = np.arange(lo, hi, dtype=np.int64)
    users = _bijection(user_idx, universe, offset=7)
    items = _bijection(pop, size.n_items, offset=13)
    ranks = np.broadcast_to(np.arange(1, n + 1, dtype=np.int32), (b, n))
    # strictly decreasing in rank with gaps >= 0.1: ranks from scores == rank
    scores = (n + 1 - ranks) + 0.9 * rng.random((b, n))
    recs = pa.table(
        {
            "user": np.repeat(users, n),
            "item": items.ravel(),
            "rank": ranks.ravel(),
            "score": scores.ravel(),
        },
        schema=RECS_SCHEMA,
    )

    # --- truth of the recommended users in this chunk (TRUTH_SHARE of them)
    has_truth = rng.random(b) < TRUTH_SHARE
    t_pop_parts = [(pop[has_truth], users[has_truth])]
    # truth-only users: spread over the chunks in proportion
    n_chunks = math.ceil(size.n_users / CHUNK_USERS)
    per_chunk = math.ceil(n_truth_only / n_chunks)
    t_lo = size.n_users + chunk * per_chunk
    t_hi = min(universe, t_lo + per_chunk)
    truth_only_users = _bijection(np.arange(t_lo, t_hi, dtype=np.int64), universe, offset=7)

    tables = []
    for own_pop, t_users in [*t_pop_parts, (None, truth_only_users)]:
        tb = t_users.size
        if tb == 0:
            continue
        m = np.minimum(rng.geometric(1 / 6, size=tb), MAX_TRUTH)
        width = MAX_TRUTH * 3
        cand = _draw_items(rng, cdf, (tb, width))
        if own_pop is not None:
            from_recs = rng.random((tb, width)) < P_TRUTH_FROM_RECS
            pos = np.minimum((n * rng.random((tb, width)) ** 3).astype(np.int64), n - 1)
            own = np.take_along_axis(own_pop, pos, axis=1)
            cand = np.where(from_recs, own, cand)
        lists, n_distinct = _distinct_rows(rng, cand)
        m = np.minimum(m, n_distinct)
        keep = np.arange(width)[None, :] < m[:, None]
        rel = rng.choice(np.array([1, 2, 3], dtype=np.int32), size=int(keep.sum()), p=REL_P)
        tables.append(
            pa.table(
                {
                    "user": np.repeat(t_users, m),
                    "item": _bijection(lists[keep], size.n_items, offset=13),
                    "rel": rel,
                },
                schema=TRUTH_SCHEMA,
            )
        )
    truth = pa.concat_tables(tables)
    return recs, truth


def _to_str_ids(t: pa.Table) -> pa.Table:
    import pyarrow.compute as pc

    def fmt(col: pa.ChunkedArray, prefix: str) -> pa.ChunkedArray:
        s = pc.cast(col, pa.string())
        return pc.binary_join_element_wise(prefix, pc.utf8_lpad(s, 7, "0"), "")

    t = t.set_column(0, "user", fmt(t.column("user"), "u"))
    return t.set_column(1, "item", fmt(t.column("item"), "i"))


def dataset_dir(out: Path, size: str, ids: str = "int") -> Path:
    return out / (size if ids == "int" else f"{size}-str")


def generate(
    size: Size,
    out: Path,
    *,
    seed: int = SEED,
    ids: str = "int",
    row_group_rows: int = 1_000_000,
    verbose: bool = True,
) -> Path:
    d = dataset_dir(out, size.name, ids)
    d.mkdir(parents=True, exist_ok=True)
    marker = d / "DONE"
    if marker.exists() and marker.read_text().strip() == f"seed={seed}":
        if verbose:
            print(f"{d}: up to date")
        return d
    marker.unlink(missing_ok=True)
    cdf = _zipf_cdf(size.n_items)
    n_chunks = math.ceil(size.n_users / CHUNK_USERS)
    rw = tw = None
    t0 = time.perf_counter()
    n_recs = n_truth = 0
    try:
        for c in range(n_chunks):
            recs, truth = _chunk(size, c, seed, cdf)
            if ids == "str":
                recs, truth = _to_str_ids(recs), _to_str_ids(truth)
            if rw is None:
                rw = pq.ParquetWriter(d / "recs.parquet", recs.schema, compression="zstd")
                tw = pq.ParquetWriter(d / "truth.parquet", truth.schema, compression="zstd")
            rw.write_table(recs, row_group_size=row_group_rows)
            tw.write_table(truth, row_group_size=row_group_rows)
            n_recs += recs.num_rows
            n_truth += truth.num_rows
            if verbose and (c % 10 == 9 or c == n_chunks - 1):
                print(
                    f"  {size.name}: chunk {c + 1}/{n_chunks}, {n_recs:,} recs rows, "
                    f"{n_truth:,} truth rows, {time.perf_counter() - t0:.0f}s",
                    flush=True,
                )
    finally:
        if rw is not None:
            rw.close()
        if tw is not None:
            tw.close()
    marker.write_text(f"seed={seed}\n")
    return d


def _write_part(job: tuple[Size, Path, int, int, str]) -> tuple[int, int, int]:
    size, d, chunk, seed, ids = job
    recs, truth = _chunk(size, chunk, seed, _zipf_cdf(size.n_items))
    if ids == "str":
        recs, truth = _to_str_ids(recs), _to_str_ids(truth)
    pq.write_table(
        recs, d / f"recs-part-{chunk:05d}.parquet", compression="zstd", row_group_size=1_000_000
    )
    pq.write_table(
        truth, d / f"truth-part-{chunk:05d}.parquet", compression="zstd", row_group_size=1_000_000
    )
    return chunk, recs.num_rows, truth.num_rows


def generate_parts(
    size: Size,
    out: Path,
    *,
    seed: int = SEED,
    ids: str = "int",
    processes: int = 2,
    verbose: bool = True,
) -> Path:
    """Same data as :func:`generate`, one Parquet file per chunk, written by
    `processes` worker processes (for the data sets too big to write serially).

    Read with ``pl.scan_parquet(d / "recs-part-*.parquet")``.
    """
    import multiprocessing as mp

    d = out / f"{size.name}-parts"
    d.mkdir(parents=True, exist_ok=True)
    marker = d / "DONE"
    if marker.exists() and marker.read_text().strip() == f"seed={seed}":
        return d
    n_chunks = math.ceil(size.n_users / CHUNK_USERS)
    jobs = [(size, d, c, seed, ids) for c in range(n_chunks)]
    t0 = time.perf_counter()
    n_recs = n_truth = done = 0
    with mp.get_context("spawn").Pool(processes) as pool:
        for _, nr, nt in pool.imap_unordered(_write_part, jobs):
            done += 1
            n_recs += nr
            n_truth += nt
            if verbose and (done % 10 == 0 or done == n_chunks):
                print(
                    f"  {size.name}: {done}/{n_chunks} chunks, {n_recs:,} recs rows, "
                    f"{n_truth:,} truth rows, {time.perf_counter() - t0:.0f}s",
                    flush=True,
                )
    marker.write_text(f"seed={seed}\n")
    return d


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--sizes", default="small,medium", help=f"comma list of {', '.join(SIZES)}")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p.add_argument("--seed", type=int, default=SEED)
    p.add_argument("--ids", choices=["int", "str"], default="int")
    args = p.parse_args(argv)
    for name in args.sizes.split(","):
        size = SIZES[name]
        print(f"{name}: {size.n_users:,} users x {size.n_recs} recs = {size.rows:,} rows")
        d = generate(size, args.out, seed=args.seed, ids=args.ids)
        mb = sum(f.stat().st_size for f in d.glob("*.parquet")) / 2**20
        print(f"  -> {d} ({mb:,.0f} MiB on disk)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
