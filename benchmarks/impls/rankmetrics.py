"""This package, polars_rankmetrics: eager, lazy, streaming engine and from pandas.

Variants (all: map@10 + ndcg@10 + mrr@10, default conventions):

- ``eager``: ``evaluate(recs, truth, ...)`` on in-memory Polars DataFrames, rank given,
  binary relevance (every truth row relevant). The headline number.
- ``eager-score``: ranks derived from ``score`` (the ``rank`` column is dropped on load).
  The generated files hold each user's list as one block in rank order, as top-k
  retrieval output usually comes, so positions follow from the row order.
- ``eager-score-shuffled``: the same with the rows shuffled on load (seeded), so each
  list must be ranked by score: the general case.
- ``eager-graded``: graded NDCG from the truth's ``rel`` column.
- ``lazy``: ``recs.lazy().rank.evaluate(truth.lazy(), ...).collect()``.
- ``streaming``: the same plan collected with ``engine="streaming"``.
- ``pandas``: from pandas frames (numpy-backed, as ``pyarrow.Table.to_pandas()`` gives).
- ``eager-str``: as ``eager`` on the same data with string ids (``<size>-str``, made by
  ``generate.py --ids str`` / ``run.py --str-ids``).
"""

from __future__ import annotations

import contextlib

import polars as pl
import polars_rankmetrics as prm
from _common import (
    ALL_CONVENTIONS,
    MAP_HITS,
    MAP_MIN_K,
    MAP_RELEVANT,
    METRICS,
    MRR,
    NDCG_BINARY,
    NDCG_GRADED,
    NDCG_GRADED_EXP,
    frames_bytes,
    recs_path,
    truth_path,
    version_of,
)

VARIANTS = (
    "eager",
    "eager-score",
    "eager-score-shuffled",
    "eager-graded",
    "lazy",
    "streaming",
    "pandas",
    "eager-str",
)


def versions() -> dict[str, str]:
    return {**version_of("polars"), "polars_rankmetrics": prm.__version__}


def _pandas_evaluate():
    """The pandas entry point, or an error saying why there is none yet."""
    import pandas as pd

    with contextlib.suppress(ImportError):
        import polars_rankmetrics.pandas  # noqa: F401  (registers the accessor)
    # without the accessor, DataFrame.rank is pandas' own ranking method
    if not hasattr(pd.DataFrame({"a": [1]}).rank, "evaluate"):
        raise NotImplementedError("the pandas adapter (DataFrame.rank.evaluate) is not available")
    return lambda recs, truth, metrics, **kw: recs.rank.evaluate(truth, metrics, **kw)


def load(data_dir: str, variant: str):
    if variant.endswith("-str"):
        data_dir = data_dir.rstrip("/") + "-str"
    recs = pl.read_parquet(recs_path(data_dir))
    truth = pl.read_parquet(truth_path(data_dir))
    if variant.startswith("eager-score"):
        recs = recs.drop("rank")
    if variant == "eager-score-shuffled":
        recs = recs.sample(fraction=1.0, shuffle=True, seed=0)
    if variant == "pandas":
        _pandas_evaluate()  # fail early, before converting
        return recs.to_pandas(), truth.to_pandas()
    return recs, truth


input_bytes = frames_bytes  # what the harness reports as the input size


def _values(df) -> dict[str, float]:
    if not isinstance(df, pl.DataFrame):  # pandas result
        return {m: float(df[m].iloc[0]) for m in METRICS}
    return {m: float(df[m][0]) for m in METRICS}


def run(inputs, variant: str) -> dict[str, float]:
    recs, truth = inputs
    if variant in ("eager", "eager-str"):
        return _values(prm.evaluate(recs, truth, list(METRICS), rank="rank"))
    if variant.startswith("eager-score"):
        return _values(prm.evaluate(recs, truth, list(METRICS), score="score"))
    if variant == "eager-graded":
        return _values(prm.evaluate(recs, truth, list(METRICS), rank="rank", relevance="rel"))
    if variant in ("lazy", "streaming"):
        lf = recs.lazy().rank.evaluate(truth.lazy(), list(METRICS), rank="rank")
        engine = "streaming" if variant == "streaming" else "auto"
        return _values(lf.collect(engine=engine))
    if variant == "pandas":
        return _values(_pandas_evaluate()(recs, truth, list(METRICS)))
    raise ValueError(f"unknown variant {variant!r}; known: {VARIANTS}")


def check(inputs) -> dict[str, float]:
    """Our numbers under every convention a peer may use (see _common)."""
    recs, truth = inputs
    out: dict[str, float] = {}
    for key, kw in (
        (MAP_RELEVANT, {"denominator": "relevant"}),
        (MAP_MIN_K, {"denominator": "min_k"}),
        (MAP_HITS, {"denominator": "hits"}),
    ):
        out[key] = float(prm.evaluate(recs, truth, "map@10", **kw)["map@10"][0])
    for key, kw in (
        (NDCG_GRADED, {"relevance": "rel", "gain": "linear"}),
        (NDCG_GRADED_EXP, {"relevance": "rel", "gain": "exponential"}),
        (NDCG_BINARY, {}),
    ):
        out[key] = float(prm.evaluate(recs, truth, "ndcg@10", **kw)["ndcg@10"][0])
    out[MRR] = float(prm.evaluate(recs, truth, "mrr@10")["mrr@10"][0])
    assert set(out) == set(ALL_CONVENTIONS)
    return out
