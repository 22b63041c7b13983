"""The command line's id types: its numbers are ``evaluate()``'s on the same ids.

Ids are numbers when every file gives them as numbers: Parquet or JSON
integers, whole floats, and a CSV file's integers written plainly (``10``, as
Polars' CSV reader reads them), so the same ids give the same numbers whatever
the files' formats, and equal scores break on the ids' values (item 10 above
item 9 under the default ``item_desc`` rule). Text that is no plain integer
(``00123``, a string or categorical column of a typed file) makes them text in
every file, ties break on the text (``"9"`` above ``"10"``), and a warning
names the files that gave numbers. The data below ties scores across ids of
one, two and three digits with relevant items among them, so that every
registered measure changes with the order.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankmetrics as prm
from polars_rankmetrics._measures import builtin_measures
from polars_rankmetrics.cli import main
from polars_rankmetrics.ranking import Ties

K = 2
IDS = ("user", "item")
RECS = pl.DataFrame({
    "user": [1] * 5 + [2] * 5 + [3] * 4,
    "item": [9, 10, 100, 7, 8, 2, 9, 10, 11, 3, 10, 9, 1, 20],
    "score": [0.5, 0.5, 0.5, 0.3, 0.1, 0.9, 0.4, 0.4, 0.4, 0.2, 0.8, 0.8, 0.8, 0.8],
})  # fmt: skip
TRUTH = pl.DataFrame({
    "user": [1, 1, 1, 2, 2, 2, 3, 3, 3, 3],
    "item": [9, 100, 7, 9, 3, 10, 9, 20, 5, 10],
    "rel": [2, 0, 1, 1, 2, 0, 1, 3, 1, 0],
    # the judgements' subtopics, read by the diversity measures
    "subtopic": [1, 2, 2, 1, 1, 2, 1, 2, 1, 1],
})  # fmt: skip
INTERACTIONS = pl.DataFrame(
    {"user": [1, 1, 2, 2, 3, 4, 4, 4], "item": [9, 9, 10, 100, 9, 2, 1, 20]}
)
ITEMS = pl.DataFrame({
    "item": [1, 2, 3, 7, 8, 9, 10, 11, 20, 100],
    "genre": ["a", "b", "a", "b", "a", "b", "a", "b", "a", "a"],
})  # fmt: skip
FRAMES = {"recs": RECS, "truth": TRUTH, "interactions": INTERACTIONS, "items": ITEMS}

# every registered measure, with a cutoff where it takes one; the side files give the list
# measures their interactions, catalog and categories, so none is left out
METRICS = [m.name if m.cutoff == "none" else f"{m.name}@{K}" for m in builtin_measures()]
OPTIONS = ["--score", "score", "--relevance", "rel", "--category", "genre", "--group", "genre"]

# a layout: each file's format and, for Parquet, the dtype its ids are written in
# (None: as above, Int64)
Layout = Mapping[str, tuple[str, type[pl.DataType] | None]]
PARQUET: Layout = dict.fromkeys(FRAMES, (".parquet", None))


def _layout(**changes: tuple[str, type[pl.DataType] | None]) -> Layout:
    return {**PARQUET, **changes}


NUMERIC_LAYOUTS: dict[str, Layout] = {
    "parquet": PARQUET,
    # integers of several widths meet in one integer dtype (here Int64)
    "int32-int64": _layout(
        recs=(".parquet", pl.Int32),
        interactions=(".parquet", pl.Int16),
        items=(".parquet", pl.UInt8),
    ),
    "uint32-int64": _layout(recs=(".parquet", pl.UInt32)),
    # UInt64 with Int64: Int128 holds both
    "uint64-int64": _layout(recs=(".parquet", pl.UInt64)),
    # whole-number floats are integers that went through a float: 1.0 is 1
    "float-int64": _layout(recs=(".parquet", pl.Float64), items=(".parquet", pl.Float32)),
    "json": {
        "recs": (".json", None),
        "truth": (".ndjson", None),
        "interactions": (".jsonl", None),
        "items": (".json", None),
    },
    # CSV ids written as plain integers are integers: the format changes no number
    "csv": dict.fromkeys(FRAMES, (".csv", None)),
    "parquet-recs-csv-truth": _layout(truth=(".csv", None)),
    "csv-recs-parquet-truth": _layout(recs=(".csv", None)),
    "csv-items": _layout(items=(".csv", None)),
    "tsv-and-json": {**dict.fromkeys(FRAMES, (".tsv", None)), "items": (".json", None)},
}
# layout, and the id columns that become text (the others stay numbers)
TEXT_LAYOUTS: dict[str, tuple[Layout, tuple[str, ...]]] = {
    "string-ids-in-parquet": (_layout(recs=(".parquet", pl.String)), IDS),
    "categorical-ids-in-parquet": (_layout(truth=(".parquet", pl.Categorical)), IDS),
    # a CSV file follows the typed file that holds text
    "string-ids-in-parquet-csv-truth": (
        _layout(recs=(".parquet", pl.String), truth=(".csv", None)),
        IDS,
    ),
}


def _write(frame: pl.DataFrame, path: Path, dtype: type[pl.DataType] | None) -> None:
    if dtype is not None:
        # integers become categories through their text
        via = pl.String if dtype == pl.Categorical else dtype
        frame = frame.with_columns(
            pl.col(name).cast(via).cast(dtype) for name in IDS if name in frame
        )
    suffix = path.suffix
    if suffix == ".parquet":
        frame.write_parquet(path)
    elif suffix in (".csv", ".tsv"):
        frame.write_csv(path, separator="," if suffix == ".csv" else "\t")
    elif suffix == ".json":
        path.write_text(frame.write_json())
    else:
        frame.write_ndjson(path)


def _files(tmp: Path, layout: Layout) -> dict[str, str]:
    tmp.mkdir(parents=True, exist_ok=True)
    paths = {}
    for role, (suffix, dtype) in layout.items():
        path = tmp / f"{role}{suffix}"
        _write(FRAMES[role], path, dtype)
        paths[role] = str(path)
    return paths


def _cli(
    tmp: Path,
    layout: Layout,
    capsys: pytest.CaptureFixture[str],
    ties: Ties = "item_desc",
    *,
    warned: Sequence[str] = (),
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """``rankmetrics evaluate`` on the files of ``layout``: (printed means, written means).

    ``warned``: roles whose files every warning on ids compared as text names
    (none: no warning at all).
    """
    paths = _files(tmp, layout)
    output = tmp / "means.parquet"
    status = main([
        "evaluate", paths["recs"], paths["truth"], "-m", *METRICS, *OPTIONS, "--ties", ties,
        "--interactions", paths["interactions"], "--items", paths["items"],
        "--format", "json", "--output", str(output),
    ])  # fmt: skip
    captured = capsys.readouterr()
    assert status == 0, captured.err
    warnings = captured.err.splitlines()
    if not warned:
        assert warnings == []
    else:
        assert warnings, "ids compared as text where a file gave numbers: no warning"
        for line in warnings:
            assert "are compared as text in every file" in line
            assert all(paths[role] in line for role in warned), (line, warned)
    printed = pl.DataFrame(json.loads(captured.out), schema=dict.fromkeys(METRICS, pl.Float64))
    return printed, pl.read_parquet(output)


def _api(text: Sequence[str], ties: Ties = "item_desc") -> pl.DataFrame:
    """``evaluate()`` on the frames, the ``text`` id columns as strings, the others Int64."""
    frames = {
        role: frame.with_columns(pl.col(name).cast(pl.String) for name in text if name in frame)
        for role, frame in FRAMES.items()
    }
    return prm.evaluate(
        frames["recs"], frames["truth"], METRICS, score="score", relevance="rel",
        interactions=frames["interactions"], items=frames["items"], category="genre", group="genre",
        ties=ties,
    )  # fmt: skip


def _close(got: pl.DataFrame, expected: pl.DataFrame) -> None:
    """Same columns, nulls and values to 1e-12: the one-number standard.

    Not to the bit: a per-user value summed in a group-by (eleven_pt's 11 terms)
    may take its terms in another order from one query to the next (seen on
    Polars 2.0); the means over users are exact, the per-user sums are not.
    """
    assert got.columns == expected.columns
    for name in expected.columns:
        for g, e in zip(got[name].to_list(), expected[name].to_list(), strict=True):
            assert (g is None) == (e is None), name
            if e is not None:
                assert abs(g - e) <= 1e-12, (name, g, e)


def _assert_same(got: tuple[pl.DataFrame, pl.DataFrame], expected: pl.DataFrame) -> None:
    printed, written = got
    assert written.columns == METRICS
    _close(written, expected)
    # JSON prints each float in its shortest exact form
    _close(printed, expected)


@pytest.mark.parametrize("ties", ["item_desc", "item_asc"])
@pytest.mark.parametrize("layout", NUMERIC_LAYOUTS.values(), ids=NUMERIC_LAYOUTS.keys())
def test_numeric_ids_tie_break_by_value(
    layout: Layout, ties: Ties, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = _api((), ties)
    if layout is PARQUET:
        # literally prm.evaluate(pl.read_parquet(...)) on the files the command read
        paths = _files(tmp_path / "api", layout)
        read = {role: pl.read_parquet(path) for role, path in paths.items()}
        direct = prm.evaluate(
            read["recs"], read["truth"], METRICS, score="score", relevance="rel",
            interactions=read["interactions"], items=read["items"], category="genre", group="genre",
            ties=ties,
        )  # fmt: skip
        _close(direct, expected)
    _assert_same(_cli(tmp_path, layout, capsys, ties), expected)


@pytest.mark.parametrize(("layout", "text"), TEXT_LAYOUTS.values(), ids=TEXT_LAYOUTS.keys())
def test_text_ids_tie_break_by_text(
    layout: Layout, text: tuple[str, ...], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # text ids in a typed file: "9" above "10", as evaluate() on text ids, and a warning
    # naming every file
    as_text = _api(text)
    typed_text = [
        role for role, (_, dtype) in layout.items() if dtype in (pl.String, pl.Categorical)
    ]
    _assert_same(_cli(tmp_path / "text", layout, capsys, warned=typed_text), as_text)
    # the same ids as integers in every file break ties by value: other numbers
    as_numbers = _api(())
    _assert_same(_cli(tmp_path / "numbers", PARQUET, capsys), as_numbers)
    # ... in every measure that reads the order of tied scores (the data tie scores where the
    # two orders differ); the AUC family counts a tie one half, in no order
    ordered = [
        m.name if m.cutoff == "none" else f"{m.name}@{K}"
        for m in builtin_measures()
        if "score_ties" not in m.inputs
    ]
    assert [name for name in ordered if as_text[name].equals(as_numbers[name])] == []
    assert len(ordered) < len(METRICS)


def test_compare_reads_ids_by_the_same_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    metrics = [
        label
        for label, measure in zip(METRICS, builtin_measures(), strict=True)
        if measure.aggregation == "mean"
    ]
    # two systems: the second scores every item the same, so its list is the tie order
    recs = pl.concat([
        RECS.with_columns(model=pl.lit("a")),
        RECS.with_columns(model=pl.lit("b"), score=pl.lit(1.0)),
    ])  # fmt: skip
    paths = {**_files(tmp_path, PARQUET), "recs": str(tmp_path / "systems.parquet")}
    recs.write_parquet(paths["recs"])
    status = main([
        "compare", paths["recs"], paths["truth"], "-m", *metrics, *OPTIONS,
        "--interactions", paths["interactions"], "--items", paths["items"],
        "--baseline", "a", "--format", "csv",
    ])  # fmt: skip
    captured = capsys.readouterr()
    assert status == 0, captured.err
    got = pl.read_csv(captured.out.encode())
    expected = prm.compare(
        recs, TRUTH, metrics, score="score", relevance="rel", baseline="a",
        interactions=INTERACTIONS, items=ITEMS, category="genre", group="genre",
    )  # fmt: skip
    columns = ["system", "metric", "n", "mean", "diff", "p_value"]
    assert_frame_equal(
        got.select(columns), expected.select(columns), check_dtypes=False, rel_tol=1e-12
    )


def test_float_ids_beyond_int64_are_refused_naming_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recs = pl.DataFrame({"user": [1.0, 2.0], "item": [3.0, 1e20], "rank": [1, 1]})
    recs.write_parquet(tmp_path / "r.parquet")
    TRUTH.write_parquet(tmp_path / "t.parquet")
    status = main(["evaluate", str(tmp_path / "r.parquet"), str(tmp_path / "t.parquet"),
                   "-m", "mrr"])  # fmt: skip
    assert status == 2
    err = capsys.readouterr().err
    assert "r.parquet: id column 'item' holds numbers beyond Int64 (1 value(s), e.g. 1e+20)" in err
