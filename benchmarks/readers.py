"""Memory and time of the file readers: TREC runs and qrels, Kaggle submissions, OTTO.

    python benchmarks/readers.py [--scale 1.0] [--dir /tmp/rankmetrics-readers] [--only NAME]
        [--before PATH] [--time-otto ROUNDS]

Generates each file once (kept in ``--dir``), then reads it in a fresh child
process and reports the file size, the peak resident memory the read added
(peak RSS minus the RSS after the imports, from ``getrusage``) as a multiple
of the file size, the estimated size of the frame returned
(``DataFrame.estimated_size``) and the wall time. A ``floor`` row per file
reads it with Polars' own ``read_csv`` as string columns, for scale. ``otto``
times the whole ``score_submission(..., preset="otto")`` on a submission of
300k sessions x 3 types x 20 labels (18M exploded rows) at scale 1.

``--time-readers N`` times each file reader (old and new, ``--before``) in
this one process, in N interleaved rounds: medians / minima in seconds and
the before / after ratios.

``--before PATH`` measures the package at PATH too (e.g. ``git archive`` of an
older commit), each reader in its own child, file by file. ``--time-otto N``
instead times OTTO scoring of the two packages in this one process, in N
interleaved rounds (the older reader modules are loaded under another package
name), and prints the medians, minima and their ratio.

Scale 1 writes about 230 MB of files.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
import warnings
from pathlib import Path

import polars as pl

ROOT = Path(__file__).resolve().parents[1]


def _trec_run(path: Path, lines: int) -> None:
    n_queries = max(1, lines // 1000)
    frame = pl.select(i=pl.int_range(lines)).select(
        qid=pl.format("q{}", pl.col("i") // 1000 % n_queries),
        q0=pl.lit("Q0"),
        docno=pl.format("doc{}", pl.col("i") * 7919 % 5_000_000),
        rank=(pl.col("i") % 1000 + 1).cast(pl.String),
        score=(1000.0 - pl.col("i") % 1000 + 0.123).cast(pl.String),
        tag=pl.lit("bm25"),
    )
    frame.write_csv(path, separator=" ", include_header=False, quote_style="never")


def _trec_qrels(path: Path, lines: int) -> None:
    frame = pl.select(i=pl.int_range(lines)).select(
        qid=pl.format("q{}", pl.col("i") // 100),
        iteration=pl.lit("0"),
        docno=pl.format("doc{}", pl.col("i") * 7919 % 5_000_000),
        rel=(pl.col("i") % 3).cast(pl.String),
    )
    frame.write_csv(path, separator=" ", include_header=False, quote_style="never")


def _kaggle_wide(path: Path, users: int) -> None:
    frame = pl.select(u=pl.int_range(users)).select(
        customer_id=pl.format("{}", pl.col("u").cast(pl.String).str.zfill(16)),
        prediction=pl.int_ranges(pl.col("u") % 5, pl.col("u") % 5 + 12)
        .list.eval(pl.element().cast(pl.String).str.zfill(10))
        .list.join(" "),
    )
    frame.write_csv(path)


def _kaggle_long(path: Path, rows: int) -> None:
    frame = pl.select(i=pl.int_range(rows)).select(
        customer_id=(pl.col("i") // 12).cast(pl.String).str.zfill(16),
        prediction=(pl.col("i") % 12 + pl.col("i") // 12 % 5).cast(pl.String).str.zfill(10),
    )
    frame.write_csv(path)


def _otto(directory: Path, sessions: int) -> tuple[Path, Path]:
    types = pl.DataFrame({"t": ["clicks", "carts", "orders"]})
    base = pl.select(s=pl.int_range(sessions)).join(types, how="cross")
    sub = base.select(
        session_type=pl.format("{}_{}", pl.col("s"), pl.col("t")),
        labels=pl.int_ranges(pl.col("s") % 97, pl.col("s") % 97 + 20)
        .list.eval((pl.element() * 7919 % 1_800_000).cast(pl.String))
        .list.join(" "),
    )
    sol = base.select(
        session_type=pl.format("{}_{}", pl.col("s"), pl.col("t")),
        labels=pl.int_ranges(pl.col("s") % 97 + 15, pl.col("s") % 97 + 25)
        .list.eval((pl.element() * 7919 % 1_800_000).cast(pl.String))
        .list.join(" "),
    )
    sub_path, sol_path = directory / "otto_submission.csv", directory / "otto_solution.csv"
    sub.write_csv(sub_path)
    sol.write_csv(sol_path)
    return sub_path, sol_path


CHILD = textwrap.dedent(
    """
    import json, resource, sys, time
    import polars_rankmetrics.kaggle as kaggle
    import polars_rankmetrics.trec as trec
    def rss_kib():
        for line in open("/proc/self/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    import polars as pl
    base = rss_kib()
    kind, paths = sys.argv[1], sys.argv[2:]
    start = time.perf_counter()
    frame = None
    if kind == "trec_run":
        frame = trec.read_trec_run(paths[0])
    elif kind == "trec_qrels":
        frame = trec.read_trec_qrels(paths[0])
    elif kind in ("kaggle_wide", "kaggle_long"):
        frame = kaggle.read_submission(paths[0])
    elif kind.startswith("floor_"):
        space = kind.startswith("floor_trec")
        frame = pl.read_csv(
            paths[0], has_header=not space, separator=" " if space else ",",
            quote_char=None if space else '"', infer_schema=False,
        )
    else:
        rows = kaggle.score_submission(paths[0], paths[1], preset="otto")
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if frame is not None:
        rows = frame.height
    print(json.dumps({
        "rows": rows, "seconds": seconds, "added_mib": (peak - base) / 1024,
        "frame_mib": frame.estimated_size() / 2**20 if frame is not None else None,
    }))
    """
)


def _measure(kind: str, paths: list[Path], root: Path) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-W", "ignore", "-c", CHILD, kind, *map(str, paths)],
        capture_output=True,
        text=True,
        check=False,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
        cwd="/",  # python -c puts the working directory first on sys.path
    )
    if done.returncode:
        raise SystemExit(f"{kind} failed:\n{done.stderr}")
    result: dict[str, float] = json.loads(done.stdout.splitlines()[-1])
    return result


_READERS = ("kaggle", "_kaggle_csv", "_textfiles", "trec")


def _before_package(before: Path, into: Path) -> str:
    """Copy the reader modules of the package at ``before`` as package ``rm_before``."""
    package = into / "rm_before"
    package.mkdir()
    (package / "__init__.py").write_text("")
    pattern = re.compile(r"polars_rankmetrics\.(" + "|".join(_READERS) + r")\b")
    for module in _READERS:
        text = (before / "polars_rankmetrics" / f"{module}.py").read_text()
        (package / f"{module}.py").write_text(pattern.sub(r"rm_before.\1", text))
    return str(into)


def _time_otto(paths: list[Path], before: Path, rounds: int) -> None:
    """Old and new OTTO scoring, interleaved in this process; medians, minima, ratio."""
    import importlib

    import polars_rankmetrics.kaggle as new

    with tempfile.TemporaryDirectory() as folder:
        sys.path.insert(0, _before_package(before, Path(folder)))
        old = importlib.import_module("rm_before.kaggle")
        times: dict[str, list[float]] = {"before": [], "after": []}
        for _ in range(rounds):
            for label, module in (("before", old), ("after", new)):
                start = time.perf_counter()
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    score = module.score_submission(*map(str, paths), preset="otto")
                times[label].append(time.perf_counter() - start)
                print(f"{label}: {times[label][-1]:.2f} s (score {score:.6f})", flush=True)
    for label, seconds in times.items():
        print(f"{label}: median {statistics.median(seconds):.2f} s, min {min(seconds):.2f} s")
    medians = statistics.median(times["before"]) / statistics.median(times["after"])
    minima = min(times["before"]) / min(times["after"])
    print(f"before / after: {medians:.2f}x (medians), {minima:.2f}x (minima)")


def _time_reader(name: str, path: Path, before: Path, rounds: int) -> None:
    """One reader old and new, interleaved in this process; medians, minima, ratio."""
    import importlib

    import polars_rankmetrics.kaggle as new_kaggle
    import polars_rankmetrics.trec as new_trec

    with tempfile.TemporaryDirectory() as folder:
        sys.path.insert(0, _before_package(before, Path(folder)))
        modules = {
            "before": (importlib.import_module("rm_before.trec"),
                       importlib.import_module("rm_before.kaggle")),
            "after": (new_trec, new_kaggle),
        }  # fmt: skip
        times: dict[str, list[float]] = {"before": [], "after": []}
        for _ in range(rounds):
            for label, (trec, kaggle) in modules.items():
                start = time.perf_counter()
                if name == "trec_run":
                    trec.read_trec_run(path)
                elif name == "trec_qrels":
                    trec.read_trec_qrels(path)
                else:
                    kaggle.read_submission(path)
                times[label].append(time.perf_counter() - start)
    med = {label: statistics.median(seconds) for label, seconds in times.items()}
    low = {label: min(seconds) for label, seconds in times.items()}
    print(
        f"| {name} | {rounds} | {med['before']:.2f} / {low['before']:.2f} | "
        f"{med['after']:.2f} / {low['after']:.2f} | "
        f"{med['before'] / med['after']:.2f}x / {low['before'] / low['after']:.2f}x |",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/rankmetrics-readers"))
    parser.add_argument(
        "--only", help="one of trec_run, trec_qrels, kaggle_wide, kaggle_long, otto"
    )
    parser.add_argument(
        "--before",
        type=Path,
        help="also measure the package at this path (e.g. a git worktree of an older commit), "
        "interleaved with this one",
    )
    parser.add_argument(
        "--time-otto", type=int, metavar="ROUNDS", help="time OTTO old vs new in one process"
    )
    parser.add_argument(
        "--time-readers",
        type=int,
        metavar="ROUNDS",
        help="time each file reader old vs new in one process, interleaved",
    )
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    suffix = f"{args.scale:g}"
    files: dict[str, list[Path]] = {}
    specs = {
        "trec_run": (_trec_run, int(1_500_000 * args.scale)),
        "trec_qrels": (_trec_qrels, int(1_500_000 * args.scale)),
        "kaggle_wide": (_kaggle_wide, int(1_000_000 * args.scale)),
        "kaggle_long": (_kaggle_long, int(3_000_000 * args.scale)),
    }
    for name, (make, size) in specs.items():
        path = args.dir / f"{name}_{suffix}.txt"
        if not path.exists():
            make(path, size)
        files[name] = [path]
    otto_dir = args.dir / f"otto_{suffix}"
    otto_dir.mkdir(exist_ok=True)
    if not (otto_dir / "otto_solution.csv").exists():
        _otto(otto_dir, int(300_000 * args.scale))
    files["otto"] = [otto_dir / "otto_submission.csv", otto_dir / "otto_solution.csv"]
    if args.time_otto:
        if not args.before:
            raise SystemExit("--time-otto needs --before")
        _time_otto(files["otto"], args.before, args.time_otto)
        return
    if args.time_readers:
        if not args.before:
            raise SystemExit("--time-readers needs --before")
        for name in ("trec_run", "trec_qrels", "kaggle_wide", "kaggle_long"):
            if not args.only or name == args.only:
                _time_reader(name, files[name][0], args.before, args.time_readers)
        return
    roots = [("after", ROOT)] + ([("before", args.before)] if args.before else [])
    print(
        "| reader | code | file MiB | rows (or score) | added peak RSS MiB | x file size "
        "| frame MiB | x file size | seconds |"
    )
    print("|---|---|--:|--:|--:|--:|--:|--:|--:|")
    for name, paths in files.items():
        if args.only and name != args.only:
            continue
        size = sum(path.stat().st_size for path in paths) / 2**20
        runs = [(label, name, root) for label, root in roots]
        if name != "otto":
            runs.append(("polars read_csv, strings", f"floor_{name}", ROOT))
        for label, kind, root in runs:
            got = _measure(kind, paths, root)
            rows = got["rows"]
            shown = f"{rows:,}" if isinstance(rows, int) else f"{rows:.6f}"
            frame = got.get("frame_mib")
            framed = f"{frame:.0f} | {frame / size:.1f}" if frame is not None else "- | -"
            print(
                f"| {name} | {label} | {size:.1f} | {shown} | {got['added_mib']:.0f} | "
                f"{got['added_mib'] / size:.1f} | {framed} | {got['seconds']:.2f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
