"""The floor: the least work any of these metrics needs, in bare Polars.

Variants:

- ``join``: cut the recommendations to the top k, inner-join them with the
  truth on (user, item), count the joined rows per user (the hits) and the
  truth rows per user (m_u). Every per-user metric needs at least this.
- ``join-str``: ``join`` on the same data with string ids (``<size>-str``).
- ``scan``: a plain scan of the columns the task reads (user, item, rank of
  the recommendations; user, item of the truth): one sum per column.

They return the metrics' slots filled with NaN: the floor computes no metric.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import polars as pl
from _common import frames_bytes, recs_path, truth_path, version_of

VARIANTS = ("join", "scan", "join-str")


def versions() -> dict[str, str]:
    return version_of("polars")


def load(data_dir: str, variant: str):
    if variant.endswith("-str"):
        data_dir = data_dir.rstrip("/") + "-str"
    return pl.read_parquet(recs_path(data_dir)), pl.read_parquet(truth_path(data_dir))


input_bytes = frames_bytes  # what the harness reports as the input size


def _shared():
    # the floor queries live in benchmarks/floor.py (also a script of its own)
    spec = importlib.util.spec_from_file_location(
        "bench_floor", Path(__file__).parent.parent / "floor.py"
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


FLOOR = _shared()


def run(inputs, variant: str) -> dict:
    recs, truth = inputs
    if variant in ("join", "join-str"):
        plans = FLOOR.join_floor(recs.lazy(), truth.lazy())
    elif variant == "scan":
        plans = FLOOR.scan_floor(recs.lazy(), truth.lazy())
    else:
        raise ValueError(f"unknown variant {variant!r}; known: {VARIANTS}")
    pl.collect_all(plans)
    nan = float("nan")
    return {"map@10": nan, "ndcg@10": nan, "mrr@10": nan}
