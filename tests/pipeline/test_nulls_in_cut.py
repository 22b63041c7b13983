"""Where the recs' nulls are refused: the rows that are read.

With ranks given and every metric cut at some k, a row ranked below the
largest cutoff changes no number whatever its user or item, so a null user
or item there is accepted (the numbers are those of the rows without it),
while one within the cut is refused; a null rank could be anywhere, and a
``by`` value of any row adds its group, so both are refused on every row. With scores every row is ranked, so a
null anywhere is refused. Eager, lazy and streaming give the same outcome.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_rankmetrics as prm

TRUTH = pl.DataFrame({"user": [1, 1, 2], "item": [10, 13, 20]})
RECS = {
    "user": [1, 1, 1, 1, 2, 2, 2],
    "item": [10, 11, 12, 13, 21, 20, 22],
    "rank": [1, 2, 3, 4, 1, 2, 3],
    "model": ["m"] * 7,
}
METRICS = ["map@2", "ndcg@3", "recall@2"]  # the largest cutoff: 3


def _with(row: int, **values: Any) -> pl.DataFrame:
    columns = {name: list(column) for name, column in RECS.items()}
    for name, value in values.items():
        columns[name][row] = value
    return pl.DataFrame(columns, schema_overrides={"rank": pl.Int64})


def _evaluate(
    recs: pl.DataFrame, mode: str, metrics: list[str] = METRICS, **options: Any
) -> pl.DataFrame:
    if mode == "eager":
        return prm.evaluate(recs, TRUTH, metrics, **options)
    engine = "streaming" if mode == "streaming" else "auto"
    return prm.evaluate(recs.lazy(), TRUTH.lazy(), metrics, **options).collect(engine=engine)


MODES = ["eager", "lazy", "streaming"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("column", ["user", "item"])
def test_a_null_below_the_cut_changes_nothing_and_is_accepted(mode: str, column: str) -> None:
    # row 3 is user 1's rank 4, below every cutoff (3); its item 13 is relevant, but
    # no metric reads rank 4
    with_null = _evaluate(_with(3, **{column: None}), mode, by="model")
    clean = _evaluate(_with(3), mode, by="model")
    assert with_null.equals(clean)
    # hand values: user 1 has 10 at rank 1 (of 2 relevant), user 2 has 20 at rank 2
    assert with_null["recall@2"].to_list() == pytest.approx([(1 / 2 + 1 / 1) / 2])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("column", "shown"), [("user", "user=None"), ("item", "item=None")])
def test_a_null_within_the_cut_is_refused(mode: str, column: str, shown: str) -> None:
    with pytest.raises(ValueError, match=rf"'{column}' \({column}\) has 1 null") as error:
        _evaluate(_with(1, **{column: None}), mode)
    assert shown in str(error.value)
    assert "rank=2" in str(error.value)


@pytest.mark.parametrize("mode", MODES)
def test_a_null_rank_is_refused_anywhere_with_its_row_index(mode: str) -> None:
    with pytest.raises(ValueError, match=r"'rank' \(rank\) has 1 null") as error:
        _evaluate(_with(6, rank=None), mode)
    assert "row=6" in str(error.value)


@pytest.mark.parametrize("mode", MODES)
def test_a_null_group_is_refused_anywhere(mode: str) -> None:
    # below the cut, but it would add a group of its own (every truth user at 0)
    with pytest.raises(ValueError, match=r"'model' \(by\[0\]\) has 1 null") as error:
        _evaluate(_with(3, model=None), mode, by="model")
    assert "row=3, model=None, rank=4" in str(error.value)


@pytest.mark.parametrize("mode", MODES)
def test_ranks_below_one_are_refused(mode: str) -> None:
    with pytest.raises(ValueError, match=r"has 1 value\(s\) below 1"):
        _evaluate(_with(5, rank=0), mode)


@pytest.mark.parametrize("mode", MODES)
def test_without_a_cutoff_every_row_is_read_and_checked(mode: str) -> None:
    recs = _with(3, item=None)
    with pytest.raises(ValueError, match=r"'item' \(item\) has 1 null"):
        _evaluate(recs, mode, ["map"])


@pytest.mark.parametrize("mode", MODES)
def test_with_scores_a_null_anywhere_is_refused(mode: str) -> None:
    recs = _with(3, user=None).drop("rank").with_columns(score=pl.Series([7.0, 6, 5, 4, 3, 2, 1]))
    with pytest.raises(ValueError, match=r"'user' \(user\) has 1 null"):
        _evaluate(recs, mode, score="score")


def test_a_parquet_scan_finds_nulls_in_one_row_group_of_many(tmp_path: Path) -> None:
    # the row-wise checks filter first, so the reader may skip row groups by their
    # statistics: the one group with nulls must still give every count and example
    n = 50_000
    recs = pl.DataFrame(
        {
            "user": pl.int_range(n, eager=True) // 10,
            "item": pl.int_range(n, eager=True) % 97,
            "rank": pl.int_range(n, eager=True) % 10 + 1,
        }
    ).with_columns(
        user=pl.when(pl.int_range(pl.len()).is_in([40_001, 40_012])).then(None).otherwise("user"),
        rank=pl.when(pl.int_range(pl.len()) == 45_678).then(None).otherwise("rank"),
    )
    path = tmp_path / "recs.parquet"
    recs.write_parquet(path, row_group_size=5_000)
    truth = pl.DataFrame({"user": [0, 1], "item": [0, 11]}).lazy()
    query = prm.evaluate(pl.scan_parquet(path), truth, METRICS)
    with pytest.raises(ValueError, match="invalid input") as error:
        query.collect(engine="streaming")
    message = str(error.value)
    assert "'user' (user) has 2 null value(s); example row: user=None, item=37, rank=2" in message
    assert "'rank' (rank) has 1 null value(s); example row: row=45678, rank=None" in message
