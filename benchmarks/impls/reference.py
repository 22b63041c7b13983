"""An independent, textbook implementation in bare Polars (benchmark oracle).

Written straight from shared/METRICS.md, separately from the package, so the
agreement check has a third opinion while the package is being written (and
after). Not timed against anything; ``check`` computes every convention a
peer may use.
"""

from __future__ import annotations

import math

import polars as pl
from _common import (
    MAP_HITS,
    MAP_MIN_K,
    MAP_RELEVANT,
    MRR,
    NDCG_BINARY,
    NDCG_GRADED,
    NDCG_GRADED_EXP,
    K,
    frames_bytes,
    recs_path,
    truth_path,
    version_of,
)


def versions() -> dict[str, str]:
    return version_of("polars")


def load(data_dir: str, variant: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    return pl.read_parquet(recs_path(data_dir)), pl.read_parquet(truth_path(data_dir))


input_bytes = frames_bytes  # what the harness reports as the input size


def all_conventions(recs: pl.DataFrame, truth: pl.DataFrame, k: int = K) -> dict[str, float]:
    truth = truth.filter(pl.col("rel") > 0)
    # per truth user: m_u, and the ideal DCG (graded linear, exponential, binary)
    disc = pl.int_range(1, pl.len() + 1).cast(pl.Float64).add(1).log(2)
    ideal = (
        truth.sort(["user", "rel"], descending=[False, True])
        .group_by("user", maintain_order=True)
        .agg(
            m=pl.len(),
            idcg_lin=(pl.col("rel").cast(pl.Float64) / disc).head(k).sum(),
            idcg_exp=((2.0 ** pl.col("rel").cast(pl.Float64) - 1) / disc).head(k).sum(),
            idcg_bin=(1.0 / disc).head(k).sum(),
        )
    )
    lab = (
        recs.filter(pl.col("rank") <= k)
        .join(truth.select("user", "item", "rel"), on=["user", "item"], how="inner")
        .sort(["user", "rank"])
        .with_columns(
            hits_so_far=pl.int_range(1, pl.len() + 1).over("user"),
            d=(pl.col("rank").cast(pl.Float64) + 1).log(2),
        )
        .group_by("user")
        .agg(
            ap_sum=(pl.col("hits_so_far") / pl.col("rank")).sum(),
            n_hits=pl.len(),
            dcg_lin=(pl.col("rel") / pl.col("d")).sum(),
            dcg_exp=((2.0 ** pl.col("rel").cast(pl.Float64) - 1) / pl.col("d")).sum(),
            dcg_bin=(1.0 / pl.col("d")).sum(),
            rr=1.0 / pl.col("rank").min(),
        )
    )
    # every truth user counts (no recommendations -> 0); recs users without
    # truth are left out (the left join from the truth side drops them)
    per_user = ideal.join(lab, on="user", how="left").fill_null(0)
    m = pl.col("m").cast(pl.Float64)
    res = per_user.select(
        pl.lit(0.0).alias("_"),
        (pl.col("ap_sum") / m).mean().alias(MAP_RELEVANT),
        (pl.col("ap_sum") / pl.min_horizontal(m, pl.lit(float(k)))).mean().alias(MAP_MIN_K),
        pl.when(pl.col("n_hits") > 0)
        .then(pl.col("ap_sum") / pl.col("n_hits"))
        .otherwise(0.0)
        .mean()
        .alias(MAP_HITS),
        (pl.col("dcg_lin") / pl.col("idcg_lin")).mean().alias(NDCG_GRADED),
        (pl.col("dcg_exp") / pl.col("idcg_exp")).mean().alias(NDCG_GRADED_EXP),
        (pl.col("dcg_bin") / pl.col("idcg_bin")).mean().alias(NDCG_BINARY),
        pl.col("rr").mean().alias(MRR),
    ).drop("_")
    out = res.row(0, named=True)
    assert all(math.isfinite(v) for v in out.values())
    return out


def check(inputs: tuple[pl.DataFrame, pl.DataFrame]) -> dict[str, float]:
    return all_conventions(*inputs)


def run(inputs: tuple[pl.DataFrame, pl.DataFrame], variant: str) -> dict[str, float]:
    v = all_conventions(*inputs)
    return {"map@10": v[MAP_MIN_K], "ndcg@10": v[NDCG_BINARY], "mrr@10": v[MRR]}
