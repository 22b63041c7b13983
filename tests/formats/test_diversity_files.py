"""TREC diversity qrels (``topic subtopic docno judgment``), ``trec.ndeval`` and the CLI.

The numbers of ``ndeval`` and of ``rankmetrics trec --diversity`` on files are
pyndeval's (the ndeval 4.5 C code) on the same judgements and run.
"""

from __future__ import annotations

import contextlib
import io
import math
import random
from pathlib import Path

import polars as pl
import pytest

from polars_rankmetrics.cli import main
from polars_rankmetrics.trec import (
    format_trec_eval,
    ndeval,
    ndeval_measures,
    read_trec_diversity_qrels,
    read_trec_run,
)


def test_reader_reads_the_long_frame() -> None:
    frame = read_trec_diversity_qrels(
        b"51 1 clueweb09-en0000-00-00000 1\n51\t2  d2 0\n\n52 1 d9#3 2\n"
    )
    assert frame.columns == ["user", "subtopic", "item", "rel"]
    assert frame.rows() == [
        ("51", "1", "clueweb09-en0000-00-00000", 1),
        ("51", "2", "d2", 0),
        ("52", "1", "d9#3", 2),
    ]


def test_reader_refuses_bad_lines_by_number() -> None:
    with pytest.raises(ValueError, match=r"line 2.*not an integer"):
        read_trec_diversity_qrels(b"1 1 a 1\n1 1 b yes\n")
    with pytest.raises(ValueError, match=r"line 2.*4 whitespace-separated fields"):
        read_trec_diversity_qrels(b"1 1 a 1\n1 1 b\n")
    with pytest.raises(ValueError, match=r"line 3.*same docno for this subtopic.*line 1"):
        read_trec_diversity_qrels(b"1 1 a 1\n1 2 a 1\n1 1 a 0\n")
    kept = read_trec_diversity_qrels(b"1 1 a 1\n1 2 a 1\n1 1 a 0\n", duplicates="first")
    assert kept["rel"].to_list() == [1, 1]


def test_ndeval_names() -> None:
    table = ndeval_measures()
    assert len(table) == 21  # ndeval's CSV columns
    assert list(table)[:3] == ["ERR-IA@5", "ERR-IA@10", "ERR-IA@20"]
    assert table["nNRBP"] == "nnrbp(alpha=0.5,beta=0.5)"
    with pytest.raises(ValueError, match="unknown ndeval measure 'alpha-ndcg'"):
        ndeval_measures(["alpha-ndcg"])


def _files(
    tmp_path: Path, seed: int
) -> tuple[Path, Path, list[tuple[str, str, str, int]], list[tuple[str, str, float]]]:
    """Diversity qrels and a run with distinct scores (the file's rank order is the score's)."""
    rng = random.Random(seed)
    qrels, run = [], []
    for topic in range(1, 6):
        for subtopic in range(1, rng.randint(1, 4) + 1):
            for doc in rng.sample(range(15), rng.randint(0, 7)):
                qrels.append((str(topic), str(subtopic), f"doc{doc}", rng.choice([0, 1, 1, 2])))
        if topic != 3:  # topic 3: in the qrels only
            scores = rng.sample(range(100), 12)
            run += [
                (str(topic), f"doc{d}", float(s)) for d, s in zip(range(12), scores, strict=True)
            ]
    run.append(("9", "doc1", 1.0))  # a topic without qrels
    qrels_path, run_path = tmp_path / "qrels.txt", tmp_path / "run.txt"
    qrels_path.write_text("".join(f"{t} {s} {d} {j}\n" for t, s, d, j in qrels))
    ranked = sorted(run, key=lambda row: (row[0], -row[2]))
    lines, last, rank = [], None, 0
    for topic, doc, score in ranked:
        rank = 1 if topic != last else rank + 1
        last = topic
        lines.append(f"{topic} Q0 {doc} {rank} {score} sys\n")
    run_path.write_text("".join(lines))
    return qrels_path, run_path, qrels, ranked


@pytest.mark.parametrize("seed", range(4))
def test_ndeval_equals_pyndeval_on_files(tmp_path: Path, seed: int) -> None:
    pyndeval = pytest.importorskip("pyndeval")
    qrels_path, run_path, qrels, run = _files(tmp_path, seed)
    table = ndeval(read_trec_diversity_qrels(qrels_path), read_trec_run(run_path))
    want = pyndeval.ndeval(qrels, run, measures=list(ndeval_measures()))
    got = {(row[0], row[1]): row[2] for row in table.rows()}
    for topic, values in want.items():
        for name, value in values.items():
            expected = 0.0 if math.isnan(value) else value  # nNRBP without relevant subtopics
            assert got[name, topic] == pytest.approx(expected, rel=1e-12, abs=1e-15)
    for name in ndeval_measures():
        mean = sum(0.0 if math.isnan(v[name]) else v[name] for v in want.values()) / len(want)
        assert got[name, "all"] == pytest.approx(mean, rel=1e-12, abs=1e-15)
    # -c: every qrels topic, those without a run scoring 0
    complete = ndeval(read_trec_diversity_qrels(qrels_path), read_trec_run(run_path), complete=True)
    n_topics = len({row[0] for row in qrels})
    means = {row[0]: row[2] for row in complete.filter(pl.col("query") == "all").rows()}
    assert means["MAP-IA"] == pytest.approx(got["MAP-IA", "all"] * len(want) / n_topics)


def test_cli_prints_ndevals_measures(tmp_path: Path) -> None:
    pyndeval = pytest.importorskip("pyndeval")
    qrels_path, run_path, qrels, run = _files(tmp_path, 7)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["trec", "--diversity", "-q", str(qrels_path), str(run_path)]) == 0
    lines = [line.split("\t") for line in out.getvalue().splitlines()]
    assert len({name.strip() for name, _, _ in lines}) == 21
    want = pyndeval.ndeval(qrels, run)
    printed = {(name.strip(), query): float(value) for name, query, value in lines}
    for topic, values in want.items():
        for name, value in values.items():
            assert printed[name, topic] == pytest.approx(
                0.0 if math.isnan(value) else value, abs=5e-5
            )
    # the measures named are ndeval's: --diversity is implied
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["trec", str(qrels_path), str(run_path), "-m", "alpha-nDCG@20"]) == 0
    assert out.getvalue().startswith("alpha-nDCG@20")
    assert (
        format_trec_eval(
            ndeval(
                read_trec_diversity_qrels(qrels_path), read_trec_run(run_path), ["alpha-nDCG@20"]
            ).filter(pl.col("query") == "all")
        )
        == out.getvalue()
    )
