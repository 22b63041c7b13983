"""RecTools: ``calc_metrics`` on pandas frames (its native input).

Columns are renamed to RecTools' ``user_id`` / ``item_id`` / ``rank`` on load
(untimed). ``calc_metrics`` computes the three metrics in one call and shares
the merge of recommendations with interactions between them.

Conventions: MAP divides by all relevant items (``divide_by_k=False``, the
default) = ours with ``denominator="relevant"``; NDCG is binary and, with the
default ``divide_by_achievable=False``, divides every user by the IDCG of k
relevant items (not the user's own ideal), so it is run with
``divide_by_achievable=True``, which matches ours (binary). Users: RecTools
left-joins the interactions with the recommendations, so truth users without
recommendations count 0 and recommended users without truth are left out, as
ours.
"""

from __future__ import annotations

import time

import pyarrow.parquet as pq
from _common import (
    MAP_RELEVANT,
    MRR,
    NDCG_BINARY,
    K,
    frames_bytes,
    recs_path,
    truth_path,
    version_of,
)
from rectools import Columns
from rectools.metrics import MAP, NDCG, calc_metrics
from rectools.metrics import MRR as RT_MRR

CONVENTIONS = {"map@10": MAP_RELEVANT, "ndcg@10": NDCG_BINARY, "mrr@10": MRR}
VARIANTS = ("full", "topk")
METRICS = {
    "map@10": MAP(k=K),
    "ndcg@10": NDCG(k=K, divide_by_achievable=True),
    "mrr@10": RT_MRR(k=K),
}


def versions() -> dict[str, str]:
    return version_of("rectools", "pandas")


def load(data_dir: str, variant: str):
    recs = pq.read_table(recs_path(data_dir), columns=["user", "item", "rank"]).to_pandas()
    if variant == "topk":
        recs = recs[recs["rank"] <= K].reset_index(drop=True)
    truth = pq.read_table(truth_path(data_dir), columns=["user", "item"]).to_pandas()
    names = {"user": Columns.User, "item": Columns.Item, "rank": Columns.Rank}
    return recs.rename(columns=names), truth.rename(columns=names)


input_bytes = frames_bytes  # what the harness reports as the input size


def run(inputs, variant: str) -> dict:
    recs, truth = inputs
    t0 = time.perf_counter()
    res = calc_metrics(METRICS, reco=recs, interactions=truth)
    return {**{m: res[m] for m in METRICS}, "phases": {"metric": time.perf_counter() - t0}}
