"""Larger files through the readers (``pytest -m slow``): same rows as a plain-Python parse.

The default run keeps small inputs; these build files of a few hundred
thousand lines with every line ending and whitespace variant mixed in, and
check the Polars readers against a line-by-line Python reference.
"""

from __future__ import annotations

import csv
import io
import random

import polars as pl
import pytest

from polars_rankmetrics.kaggle import read_submission
from polars_rankmetrics.trec import read_trec_qrels, read_trec_run

pytestmark = pytest.mark.slow


def _mixed_endings(lines: list[str], seed: int) -> bytes:
    rng = random.Random(seed)
    return b"".join(line.encode() + rng.choice([b"\n", b"\r\n", b"\r"]) for line in lines)


@pytest.mark.parametrize("spacing", ["single", "mixed"])
def test_large_trec_run_matches_a_python_parse(spacing: str) -> None:
    rng = random.Random(1)
    n = 300_000
    lines = []
    for i in range(n):
        fields = [f"q{i // 1000}", "Q0", f"d{rng.randrange(10**6)}_{i}", str(i % 1000 + 1),
                  f"{rng.random():.4f}", "run"]  # fmt: skip
        separator = " " if spacing == "single" else rng.choice([" ", "\t", "  ", " \t "])
        lines.append(separator.join(fields))
    run = read_trec_run(_mixed_endings(lines, 2))
    # reference: split each line, rank by score desc then docno desc (trec_eval)
    parsed = [line.split() for line in lines]
    by_query: dict[str, list[tuple[float, str]]] = {}
    for fields in parsed:
        by_query.setdefault(fields[0], []).append((float(fields[4]), fields[2]))
    expected = [
        (qid, doc, rank, score)
        for qid in sorted(by_query)
        for rank, (score, doc) in enumerate(sorted(by_query[qid], reverse=True), start=1)
    ]
    assert run.select("user", "item", "rank", "score").rows() == expected


def test_large_qrels_match_a_python_parse() -> None:
    rng = random.Random(3)
    lines = [f"q{i // 50} 0 d{i} {rng.choice([-1, 0, 1, 2])}" for i in range(300_000)]
    qrels = read_trec_qrels(_mixed_endings(lines, 4))
    expected = [(f[0], f[2], int(f[3])) for f in (line.split() for line in lines)]
    assert qrels.rows() == expected


def test_large_wide_submission_matches_the_csv_module() -> None:
    rng = random.Random(5)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["customer_id", "prediction"])
    for user in range(100_000):
        items = [f"{rng.randrange(10**9):010d}" for _ in range(rng.randrange(0, 13))]
        user_id = f"{user:08d}" if user % 7 else f"id,{user:08d}"  # some ids need quoting
        writer.writerow([user_id, " ".join(dict.fromkeys(items))])
    data = out.getvalue().encode()
    got = read_submission(data)
    expected = [
        (row[0], item, rank)
        for row in list(csv.reader(io.StringIO(out.getvalue())))[1:]
        for rank, item in enumerate(row[1].split(), start=1)
    ]
    assert got.rows() == expected
    assert got.schema == pl.Schema({"user": pl.String, "item": pl.String, "rank": pl.UInt32})
