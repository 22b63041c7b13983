"""``rankmetrics fuse`` through ``main``: the files fused as ``prm.fuse`` fuses the frames."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

import polars_rankmetrics as prm
from polars_rankmetrics.cli import main
from polars_rankmetrics.sample import sample_data
from polars_rankmetrics.trec import write_trec_run

MODELS = ("popularity", "item_knn", "random")


@pytest.fixture
def runs(tmp_path: Path) -> dict[str, pl.DataFrame]:
    recs = sample_data(n_users=30, seed=4).recs
    frames = {m: recs.filter(pl.col("model") == m).drop("model") for m in MODELS}
    for name, frame in frames.items():
        frame.write_parquet(tmp_path / f"{name}.parquet")
    return frames


def _paths(tmp_path: Path, suffix: str = ".parquet") -> list[str]:
    return [str(tmp_path / f"{name}{suffix}") for name in MODELS]


@pytest.mark.parametrize(
    ("options", "api"),
    [
        ([], {}),
        (["--method", "mnz", "--norm", "zmuv"], {"method": "mnz", "norm": "zmuv"}),
        (["--method", "rrf", "--k", "10"], {"method": "rrf", "k": 10.0}),
        (["--method", "bordafuse", "--norm", "none"], {"method": "bordafuse", "norm": None}),
        (
            ["--method", "wsum", "--weights", "0.2", "0.5", "0.3"],
            {"method": "wsum", "weights": [0.2, 0.5, 0.3]},
        ),
    ],
)
def test_the_file_is_fuse_of_the_frames(
    runs: dict[str, pl.DataFrame], tmp_path: Path, options: list[str], api: dict[str, object]
) -> None:
    out = tmp_path / "fused.parquet"
    assert main(["fuse", *_paths(tmp_path), *options, "-o", str(out)]) == 0
    named = {f"{name}.parquet": frame for name, frame in runs.items()}
    expected = prm.fuse(named, **api)  # type: ignore[call-overload]
    assert pl.read_parquet(out).equals(expected)


def _as_text(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.with_columns(pl.col("user", "item").cast(pl.String))


def test_csv_and_parquet_runs_share_ids_as_numbers(
    runs: dict[str, pl.DataFrame], tmp_path: Path
) -> None:
    runs["random"].write_csv(tmp_path / "random.csv")
    paths = [*_paths(tmp_path)[:2], str(tmp_path / "random.csv")]
    out = tmp_path / "fused.parquet"
    assert main(["fuse", *paths, "-o", str(out)]) == 0
    # one id rule for every file: the CSV writes its ids as plain integers, so they are
    # the Parquet runs' integers, and the fused run is that of the frames
    names = [Path(path).name for path in paths]
    expected = prm.fuse(dict(zip(names, runs.values(), strict=True)))
    assert pl.read_parquet(out).equals(expected)


def test_a_csv_run_of_text_ids_makes_every_run_text(
    runs: dict[str, pl.DataFrame], tmp_path: Path
) -> None:
    # ids that are no plain integers ("007"): text in every file, and a warning says so
    padded = runs["random"].with_columns(pl.format("00{}", "item").alias("item"))
    padded.write_csv(tmp_path / "random.csv")
    paths = [*_paths(tmp_path)[:2], str(tmp_path / "random.csv")]
    out = tmp_path / "fused.parquet"
    assert main(["fuse", *paths, "-o", str(out)]) == 0
    assert pl.read_parquet(out).schema["item"] == pl.String


def test_trec_runs(runs: dict[str, pl.DataFrame], tmp_path: Path) -> None:
    paths = []
    for name, frame in runs.items():
        path = tmp_path / f"{name}.run"
        write_trec_run(_as_text(frame), path, score="score", tag=name)
        paths.append(str(path))
    out = tmp_path / "fused.parquet"
    assert main(["fuse", *paths, "--trec", "--method", "sum", "-o", str(out)]) == 0
    expected = prm.fuse({f"{n}.run": _as_text(f) for n, f in runs.items()}, method="sum")
    assert pl.read_parquet(out).equals(expected)


def test_one_file_of_several_runs(runs: dict[str, pl.DataFrame], tmp_path: Path) -> None:
    long = pl.concat([f.with_columns(system=pl.lit(n)) for n, f in runs.items()])
    long.write_parquet(tmp_path / "all.parquet")
    out = tmp_path / "fused.parquet"
    assert main(["fuse", str(tmp_path / "all.parquet"), "--run", "system", "-o", str(out)]) == 0
    assert pl.read_parquet(out).equals(prm.fuse(long, run="system"))


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["-o", "{first}"], "is the input file"),
        (["--method", "sum", "--weights", "1", "2", "3"], "--weights is read by --method wsum"),
        (["--method", "wsum"], "--method wsum needs --weights"),
        (["--method", "wsum", "--weights", "1"], "--weights has 1 value"),
        (["--method", "isr", "--k", "3"], "--k is read by --method rrf only"),
        (["--score", "points"], "missing column 'points' for --score points"),
    ],
)
def test_refusals_are_one_line(
    runs: dict[str, pl.DataFrame], tmp_path: Path, capsys: pytest.CaptureFixture[str],
    options: list[str], message: str,
) -> None:  # fmt: skip
    paths = _paths(tmp_path)
    before = Path(paths[0]).read_bytes()
    status = main(["fuse", *paths, *[o.format(first=paths[0]) for o in options]])
    err = capsys.readouterr().err
    assert status == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1
    assert Path(paths[0]).read_bytes() == before


def test_printed_as_csv(
    runs: dict[str, pl.DataFrame], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["fuse", *_paths(tmp_path), "--format", "csv"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "user,item,score,rank"
    assert (
        len(out.splitlines()) == prm.fuse({f"{n}.parquet": f for n, f in runs.items()}).height + 1
    )
