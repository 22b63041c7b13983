"""Microsoft Recommenders: ``python_evaluation.map_at_k`` and ``ndcg_at_k`` on pandas frames.

Recommenders has no MRR, so its row times map@10 + ndcg@10 only (mrr@10 is
reported as missing). Both functions rank by the prediction column (score).

- ``map_at_k`` divides by min(k, |relevant|) (= ours, ``min_k``) but averages
  over the users present in both frames: truth users without recommendations
  are dropped. Its mean is rescaled to all truth users (missing count 0).
- ``ndcg_at_k(score_type="raw")`` uses the graded relevance with linear gain
  and an outer merge with the full truth, so its mean already covers every
  truth user.
- Both are wrapped in ``lru_cache_df``, which hashes a tuple of every byte of
  each input frame on every call (its time and memory are part of the
  peer's cost); the cache itself is cleared before every timed repeat.
"""

from __future__ import annotations

import time

import pyarrow.parquet as pq
from _common import MAP_MIN_K, NDCG_GRADED, K, frames_bytes, recs_path, truth_path, version_of
from recommenders.evaluation import python_evaluation as pe

CONVENTIONS = {"map@10": MAP_MIN_K, "ndcg@10": NDCG_GRADED}
VARIANTS = ("full", "topk")
MISSING = {"mrr@10": "recommenders has no MRR"}
COLS = {"col_user": "user", "col_item": "item", "col_prediction": "score"}


def versions() -> dict[str, str]:
    return version_of("recommenders", "pandas")


def load(data_dir: str, variant: str):
    recs = pq.read_table(recs_path(data_dir), columns=["user", "item", "score", "rank"]).to_pandas()
    if variant == "topk":
        recs = recs[recs["rank"] <= K].reset_index(drop=True)
    truth = pq.read_table(truth_path(data_dir), columns=["user", "item", "rel"]).to_pandas()
    return recs.drop(columns="rank"), truth


input_bytes = frames_bytes  # what the harness reports as the input size


def _clear_caches() -> None:
    for name in ("merge_ranking_true_pred", "_get_reciprocal_rank"):
        fn = getattr(pe, name, None)
        if fn is not None and hasattr(fn, "cache_clear"):
            fn.cache_clear()


def run(inputs, variant: str) -> dict:
    recs, truth = inputs
    _clear_caches()
    t0 = time.perf_counter()
    n_truth_users = truth["user"].nunique()
    n_common = len(set(truth["user"]).intersection(set(recs["user"])))
    map_ = pe.map_at_k(truth, recs, k=K, **COLS)
    t1 = time.perf_counter()
    ndcg = pe.ndcg_at_k(truth, recs, k=K, col_rating="rel", score_type="raw", **COLS)
    t2 = time.perf_counter()
    return {
        "map@10": map_ * n_common / n_truth_users,
        "ndcg@10": ndcg,
        "phases": {"map": t1 - t0, "ndcg": t2 - t1},
    }
