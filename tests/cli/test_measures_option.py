"""``--measures``: the measures a user wrote, loaded from a file or a module by the commands."""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

import polars as pl
import pytest

from polars_rankmetrics.cli import main
from polars_rankmetrics.measures import registered_measures, unregister_measure

MEASURE = """
import polars as pl
from polars_rankmetrics.measures import Measure, Sum, register_measure

register_measure(
    Measure(
        "first_hit_credit",
        sums={"credit": Sum("hits", lambda row: pl.when(row.relevant_above == 1).then(2.0 / row.position))},
        value=lambda user: user.sum("credit"),
        direction="higher",
    )
)
"""


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(argv)
    return status, out.getvalue(), err.getvalue()


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    recs = pl.DataFrame({"user": [1, 1, 2, 2], "item": ["a", "b", "a", "c"], "rank": [1, 2, 1, 2]})
    truth = pl.DataFrame({"user": [1, 2], "item": ["b", "a"]})
    paths = {"recs": tmp_path / "recs.parquet", "truth": tmp_path / "truth.parquet"}
    recs.write_parquet(paths["recs"])
    truth.write_parquet(paths["truth"])
    (tmp_path / "my_measures.py").write_text(MEASURE)
    return {name: str(path) for name, path in paths.items()} | {
        "file": str(tmp_path / "my_measures.py"),
        "folder": str(tmp_path),
    }


@pytest.fixture(autouse=True)
def _forget() -> object:
    yield None
    if "first_hit_credit" in registered_measures():
        unregister_measure("first_hit_credit")


def test_evaluate_reads_a_measure_from_a_file(files: dict[str, str]) -> None:
    status, out, err = _run(
        ["evaluate", files["recs"], files["truth"], "-m", "first_hit_credit@2", "mrr@2",
         "--measures", files["file"], "--format", "json"]
    )  # fmt: skip
    assert status == 0, err
    # user 1: first hit at 2 -> 2/2 = 1; user 2: at 1 -> 2/1 = 2; mean 1.5 (mrr 0.75)
    assert json.loads(out) == [{"first_hit_credit@2": 1.5, "mrr@2": 0.75}]


def test_evaluate_reads_a_measure_from_a_module(
    files: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(files["folder"])
    status, out, err = _run(
        ["evaluate", files["recs"], files["truth"], "-m", "first_hit_credit@2",
         "--measures", "my_measures", "--format", "json"]
    )  # fmt: skip
    assert status == 0, err
    assert json.loads(out) == [{"first_hit_credit@2": 1.5}]
    sys.modules.pop("my_measures", None)


def test_compare_and_gate_read_it_too(files: dict[str, str], tmp_path: Path) -> None:
    recs = pl.DataFrame(
        {"model": ["a", "a", "b", "b"] * 2, "user": [1, 1, 1, 1, 2, 2, 2, 2],
         "item": ["a", "b", "b", "a", "a", "c", "c", "a"], "rank": [1, 2, 1, 2] * 2}
    )  # fmt: skip
    path = tmp_path / "two.parquet"
    recs.write_parquet(path)
    status, out, err = _run(
        ["compare", str(path), files["truth"], "-m", "first_hit_credit@2", "--baseline", "a",
         "--measures", files["file"], "--format", "json"]
    )  # fmt: skip
    assert status == 0, err
    means = {row["system"]: row["mean"] for row in json.loads(out)}
    assert means == {"a": 1.5, "b": 1.5}
    status, out, err = _run(
        ["gate", str(path), files["truth"], "-m", "first_hit_credit@2", "--baseline", "a",
         "--margin", "0.5", "--measures", files["file"]]
    )  # fmt: skip
    # b gains 1 on user 1 and loses 1 on user 2: mean 0, but two users cannot show it
    # no worse than -0.5 (p = 0.25): the gate fails, exit status 1
    assert status == 1, err
    assert "first_hit_credit@2\thigher is better\tdiff +0.000000" in out


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("missing_file.py", "--measures missing_file.py: no such file"),
        ("no_such_module_here", "no module 'no_such_module_here' importable from here"),
        ("not a/name", "no such file, and not a module name"),
    ],
)
def test_a_source_that_cannot_load_is_one_line(
    files: dict[str, str], source: str, message: str
) -> None:
    status, out, err = _run(
        ["evaluate", files["recs"], files["truth"], "-m", "mrr", "--measures", source]
    )
    assert status == 2
    assert out == ""
    assert message in err
    assert err.count("\n") == 1


def test_a_file_that_fails_says_why(files: dict[str, str], tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("from polars_rankmetrics.measures import Measure\nMeasure()\n")
    status, _, err = _run(
        ["evaluate", files["recs"], files["truth"], "-m", "mrr", "--measures", str(broken)]
    )
    assert status == 2
    assert f"--measures {broken} failed: TypeError" in err
    assert err.count("\n") == 1


def test_without_the_option_the_name_is_unknown(files: dict[str, str]) -> None:
    assert "first_hit_credit" not in registered_measures()
    status, _, err = _run(["evaluate", files["recs"], files["truth"], "-m", "first_hit_credit@2"])
    assert status == 2
    assert "unknown metric 'first_hit_credit'" in err
