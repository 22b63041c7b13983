"""alpha-nDCG@20 against NDCG@10 through ``evaluate``, and against pyndeval on the same files.

Data (deterministic, generated in memory): ``--rows`` / 20 topics with a
list of 20 distinct documents each (distinct scores, so every tie rule gives
the same order), and subtopic judgements: per topic 3 subtopics and 12
judged documents (half from the list), each relevant to one or two subtopics
or to none. The same data is written as TREC files (a run and diversity qrels,
``topic subtopic docno judgment``) into a temporary folder.

Tasks, in ``--rounds`` interleaved rounds (each round runs every task once,
so a change in the machine's load touches all alike):

* ``ndcg@10`` and ``alpha_ndcg@20`` through ``evaluate`` on the frames in
  memory (the target: alpha-nDCG@20 within 2x of NDCG@10 at 10M rows);
* ``alpha_ndcg@20`` from the files (read_trec_run, read_trec_diversity_qrels,
  ``evaluate`` per topic) against pyndeval from the same files (the lines
  parsed in Python, then ``pyndeval.ndeval``; the target: faster at every
  size), after checking that both give the same per-topic numbers.

``--floor`` adds the bare work of both measures, with no checks of the input
and plain float sums: for ``ndcg@10`` each topic's top 10 by score joined with
the relevant truth rows and summed, beside the truth's relevant count per
topic; for ``alpha_ndcg@20`` each topic's top 20 joined with the relevant
subtopic rows, ``C_s(r - 1)`` as a rank within (topic, subtopic), summed, and
the greedy ideal: the relevant rows sorted (topic, docno descending,
subtopic) and numbered in Polars, placed by the package's NumPy greedy (no
Polars primitive places them) and summed. Each evaluate task is then also
reported against its floor.

Reported per task: the median and the minimum wall time over the rounds and
the ratio of the median to NDCG@10's.

Usage::

    python benchmarks/diversity.py --rows 100000 --rounds 3     # develop
    python benchmarks/diversity.py --rows 10000000 --rounds 5   # the 10M-row target
    python benchmarks/diversity.py --rows 10000000 --no-pyndeval  # without the peer
    python benchmarks/diversity.py --rows 10000000 --no-pyndeval --floor  # and the bare work
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

SEED = 20261128
LENGTH = 20
SUBTOPICS = 3
JUDGED = 12


def generate(rows: int) -> dict[str, Any]:
    """The run and the subtopic qrels, as Polars DataFrames (ids are strings, as TREC's)."""
    import numpy as np
    import polars as pl

    rng = np.random.default_rng(SEED)
    topics = max(1, rows // LENGTH)
    docs_per_topic = 60
    # per topic: 20 distinct documents of 60 ranked, 12 judged (6 of them ranked)
    ranked = np.argsort(rng.random((topics, docs_per_topic)), axis=1)[:, :LENGTH]
    unranked = np.argsort(rng.random((topics, docs_per_topic)), axis=1)
    judged = np.concatenate([ranked[:, ::4], ranked[:, 1::4][:, :1], unranked[:, :JUDGED]], axis=1)
    topic_ids = np.arange(topics, dtype=np.int64)
    run = pl.DataFrame(
        {
            "user": np.repeat(topic_ids, LENGTH),
            "item": ranked.ravel(),
            "score": np.tile(np.arange(LENGTH, 0, -1, dtype=np.float64), topics),
        }
    )
    qrels = (
        pl.DataFrame({"user": np.repeat(topic_ids, judged.shape[1]), "item": judged.ravel()})
        .unique(maintain_order=True)
        .group_by("user", maintain_order=True)
        .head(JUDGED)
    )
    n = qrels.height
    # each judged document: one subtopic, a second with chance 1/4, none with chance 1/4
    first = rng.integers(1, SUBTOPICS + 1, size=n)
    second = np.where(rng.random(n) < 0.25, rng.integers(1, SUBTOPICS + 1, size=n), first)
    relevant = rng.random(n) >= 0.25
    rows_per_subtopic = [
        qrels.with_columns(
            subtopic=pl.lit(s),
            rel=pl.Series(((first == s) | (second == s)) & relevant).cast(pl.Int64),
        )
        for s in range(1, SUBTOPICS + 1)
    ]
    truth = pl.concat(rows_per_subtopic).select("user", "subtopic", "item", "rel")
    as_text = [pl.col("user").cast(pl.String), pl.format("d{}", pl.col("item")).alias("item")]
    return {
        "recs": run.with_columns(as_text),
        "truth": truth.with_columns(*as_text, pl.col("subtopic").cast(pl.String)),
    }


def write_files(data: dict[str, Any], folder: Path) -> tuple[Path, Path]:
    """The run and the diversity qrels as TREC files."""
    import polars as pl

    run_path, qrels_path = folder / "run.txt", folder / "qrels.txt"
    run = data["recs"].with_columns(
        pl.lit("Q0").alias("q0"),
        pl.col("score").rank("ordinal", descending=True).over("user").alias("rank"),
        pl.lit("bench").alias("tag"),
    )
    run.select("user", "q0", "item", "rank", "score", "tag").write_csv(
        run_path, separator=" ", include_header=False
    )
    data["truth"].write_csv(qrels_path, separator=" ", include_header=False)
    return run_path, qrels_path


def ours_from_files(run_path: Path, qrels_path: Path) -> dict[str, float]:
    """alpha-nDCG@20 per topic: the files read, then ``evaluate``."""
    import polars_rankmetrics as prm
    from polars_rankmetrics.trec import read_trec_diversity_qrels, read_trec_run

    run = read_trec_run(run_path)
    qrels = read_trec_diversity_qrels(qrels_path)
    values = prm.evaluate(
        run, qrels, ["alpha_ndcg@20"], relevance="rel", conventions="ndeval", per_user=True
    )
    return dict(zip(values["user"], values["alpha_ndcg@20"], strict=True))


def pyndeval_from_files(run_path: Path, qrels_path: Path) -> dict[str, float]:
    """alpha-nDCG@20 per topic: the lines parsed in Python, then pyndeval."""
    import pyndeval

    with qrels_path.open() as lines:
        qrels = [(t, s, d, int(j)) for t, s, d, j in (line.split() for line in lines)]
    with run_path.open() as lines:
        run = [(t, d, float(score)) for t, _, d, _, score, _ in (line.split() for line in lines)]
    found = pyndeval.ndeval(qrels, run, measures=["alpha-nDCG@20"])
    return {topic: values["alpha-nDCG@20"] for topic, values in found.items()}


def _top(recs: Any, k: int) -> Any:
    """Each topic's top ``k`` by score, with its position ``rank``."""
    import polars as pl

    position = pl.col("score").rank("ordinal", descending=True).over("user")
    return recs.lazy().with_columns(rank=position).filter(pl.col("rank") <= k)


def floor_ndcg(recs: Any, plain: Any) -> object:
    """The bare work of ``ndcg@10``: the top 10 joined with the relevant pairs, summed."""
    import polars as pl

    relevant = plain.lazy().filter(pl.col("rel") > 0)
    gain = (2.0 ** pl.col("rel") - 1) / (pl.col("rank") + 1).log(2)
    dcg = _top(recs, 10).join(relevant, on=["user", "item"]).group_by("user").agg(gain.sum())
    return pl.collect_all([dcg, relevant.group_by("user").len()])


def floor_alpha_ndcg(recs: Any, truth: Any, alpha: float = 0.5, k: int = 20) -> object:
    """The bare work of ``alpha_ndcg@20``: the run's subtopic rows and the greedy ideal, summed."""
    import numpy as np
    import polars as pl
    from polars_rankmetrics._pipeline.subtopics import _greedy_positions, _Rows

    relevant = truth.lazy().filter(pl.col("rel") > 0).select("user", "subtopic", "item")
    seen = pl.col("rank").rank("ordinal").over("user", "subtopic") - 1
    term = (1 - alpha) ** pl.col("seen") / (pl.col("rank") + 1).log(2)
    dcg = (
        _top(recs, k)
        .join(relevant, on=["user", "item"])
        .with_columns(seen=seen)
        .group_by("user")
        .agg(term.sum().alias("dcg"))
    )
    # the ideal: rows by topic, docno descending (ndeval's ties), subtopic; integer ids
    ordered = (
        relevant.with_row_index("slot")
        .with_columns(pl.col("slot").min().over("user", "subtopic"))
        .sort(["user", "item", "subtopic"], descending=[False, True, False])
        .select(
            "user",
            pl.col("user").rle_id().alias("topic_id"),
            pl.struct("user", "item").rle_id().alias("doc_id"),
            "slot",
        )
    )
    dcg, ordered = pl.collect_all([dcg, ordered])
    ids = (ordered[name].to_numpy().astype(np.int64) for name in ("topic_id", "doc_id", "slot"))
    position, placed_seen = _greedy_positions(_Rows(*ids), alpha=alpha, depth=k)
    ideal = (
        ordered.select("user")
        .with_columns(rank=pl.Series(position), seen=pl.Series(placed_seen))
        .filter(pl.col("rank") > 0)
        .group_by("user")
        .agg(term.sum().alias("dcg"))
    )
    return dcg, ideal


def tasks(
    data: dict[str, Any], files: tuple[Path, Path], peer: bool, floor: bool
) -> dict[str, Callable[[], object]]:
    import polars_rankmetrics as prm

    recs, truth = data["recs"], data["truth"]
    plain = truth.group_by("user", "item").agg(rel=truth["rel"].max())
    work: dict[str, Callable[[], object]] = {
        "ndcg@10 (evaluate, frames)": lambda: prm.evaluate(
            recs, plain, ["ndcg@10"], score="score", relevance="rel"
        ),
        "alpha_ndcg@20 (evaluate, frames)": lambda: prm.evaluate(
            recs, truth, ["alpha_ndcg@20"], score="score", relevance="rel", conventions="ndeval"
        ),
        "alpha_ndcg@20 (files, per topic)": lambda: ours_from_files(*files),
    }
    if peer:
        work["pyndeval alpha-nDCG@20 (files, per topic)"] = lambda: pyndeval_from_files(*files)
    if floor:
        work[FLOORS["ndcg@10 (evaluate, frames)"]] = lambda: floor_ndcg(recs, plain)
        work[FLOORS["alpha_ndcg@20 (evaluate, frames)"]] = lambda: floor_alpha_ndcg(recs, truth)
    return work


# each evaluate task's floor (--floor)
FLOORS = {
    "ndcg@10 (evaluate, frames)": "floor of ndcg@10 (bare work)",
    "alpha_ndcg@20 (evaluate, frames)": "floor of alpha_ndcg@20 (bare work)",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000, help="run rows (20 per topic)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds")
    parser.add_argument("--no-pyndeval", action="store_true", help="leave the peer out")
    parser.add_argument("--floor", action="store_true", help="add the bare work of both")
    args = parser.parse_args()
    import polars as pl

    start = time.perf_counter()
    data = generate(args.rows)
    with tempfile.TemporaryDirectory() as folder:
        files = write_files(data, Path(folder))
        print(
            f"{data['recs'].height:,} run rows, {data['truth'].height:,} qrels rows "
            f"(generated and written in {time.perf_counter() - start:.1f} s); "
            f"Polars {pl.__version__}, {pl.thread_pool_size()} threads",
            flush=True,
        )
        peer = not args.no_pyndeval
        if peer:
            ours, theirs = ours_from_files(*files), pyndeval_from_files(*files)
            worst = max(abs(ours[topic] - value) for topic, value in theirs.items())
            same = set(ours) == set(theirs)
            print(f"same topics: {same}; largest per-topic difference from pyndeval: {worst:.2e}")
        work = tasks(data, files, peer, args.floor)
        times: dict[str, list[float]] = {name: [] for name in work}
        for _ in range(args.rounds):
            for name, run in work.items():
                begin = time.perf_counter()
                run()
                times[name].append(time.perf_counter() - begin)
    base = statistics.median(times["ndcg@10 (evaluate, frames)"])
    print("| task | median s | min s | median / ndcg@10 |\n|---|---:|---:|---:|")
    for name, seconds in times.items():
        median = statistics.median(seconds)
        print(f"| {name} | {median:.3f} | {min(seconds):.3f} | {median / base:.2f}x |")
    for name, floor in FLOORS.items() if args.floor else []:
        ratio = statistics.median(times[name]) / statistics.median(times[floor])
        print(f"{name}: {ratio:.2f}x its floor")


if __name__ == "__main__":
    main()
