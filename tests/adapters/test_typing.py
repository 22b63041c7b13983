"""What type checkers see: the documented ``rank(df)`` pattern type-checks under mypy --strict."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path

import polars as pl
import pytest

import polars_rankmetrics as prm

# the documented pattern checked by mypy (about 20 s): with the docs, in their own suite
pytestmark = pytest.mark.docs

ROOT = Path(__file__).resolve().parents[2]

SNIPPET = textwrap.dedent(
    """
    import polars as pl
    import polars_rankmetrics as prm
    from polars_rankmetrics import rank

    recs = pl.DataFrame({"user": [1, 1], "item": ["a", "b"], "rank": [1, 2]})
    truth = pl.DataFrame({"user": [1], "item": ["b"]})
    eager: pl.DataFrame = rank(recs).evaluate(truth, ["mrr", "ndcg@10"], denominator="relevant")
    lazy: pl.LazyFrame = rank(recs.lazy()).evaluate(truth, "map@12", by=None)
    ranked: pl.DataFrame = rank(recs).positions(k=2)
    function: pl.DataFrame = prm.evaluate(recs, truth, ["mrr"])
    # every option of evaluate, through every surface (compare's ties lacked "average")
    averaged: pl.DataFrame = rank(recs).evaluate(truth, ["mrr"], ties="average", score="s")
    compared: pl.DataFrame = rank(recs).compare(truth, "mrr", ties="average", gain={1: 2.0})
    drawn: pl.DataFrame = prm.curves(recs, truth, ["mrr"], k=[1, 2], ideal="truth")
    # any other frame kind: an Arrow C stream (a DuckDB relation, a pyarrow reader) in, a
    # Polars DataFrame out; an eager-only analysis gives a DataFrame for a LazyFrame
    class Stream:
        def __arrow_c_stream__(self, requested_schema: object = None) -> object: ...

    from_arrow: pl.DataFrame = prm.evaluate(Stream(), Stream(), ["mrr"])
    still_lazy: pl.LazyFrame = prm.compare(recs.lazy(), Stream(), "mrr")
    exposure: pl.DataFrame = prm.group_exposure(recs.lazy(), Stream(), group="g")
    """
)
WRONG = SNIPPET + 'oops: pl.DataFrame = rank(recs.lazy()).evaluate(truth, "mrr")\n'
# an option misspelt or mistyped is seen by mypy through the shared declaration
WRONG += 'rank(recs).compare(truth, "mrr", tie="first")\n'
WRONG += 'prm.curves(recs, truth, ["mrr"], denominator="half")\n'
WRONG += 'arrow_lazy: pl.LazyFrame = prm.evaluate(Stream(), truth, "mrr")\n'
WRONG += 'prm.evaluate([1, 2], truth, "mrr")\n'
NAMESPACE = SNIPPET + 'direct = recs.rank.evaluate(truth, "mrr")\n'


@pytest.fixture(scope="module")
def mypy_output(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """One mypy --strict run over the three snippets (mypy is slow to start): output per file."""
    folder = tmp_path_factory.mktemp("typing")
    files = {"good": SNIPPET, "wrong": WRONG, "namespace": NAMESPACE}
    for name, code in files.items():
        (folder / f"{name}.py").write_text(code)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--cache-dir",
            str(folder / ".mypy_cache"),
            "--config-file",
            "/dev/null",
            *[str(folder / f"{name}.py") for name in files],
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin", "MYPYPATH": str(ROOT)},
        check=False,
    )
    lines = done.stdout.splitlines()
    return {name: "\n".join(line for line in lines if f"{name}.py:" in line) for name in files}


needs_mypy = pytest.mark.skipif(
    importlib.util.find_spec("mypy") is None, reason="mypy is not installed"
)


@needs_mypy
def test_the_documented_pattern_type_checks(mypy_output: dict[str, str]) -> None:
    assert mypy_output["good"] == ""


@needs_mypy
def test_mypy_sees_the_frame_kind(mypy_output: dict[str, str]) -> None:
    assert 'expression has type "LazyFrame", variable has type "DataFrame"' in mypy_output["wrong"]


@needs_mypy
def test_mypy_sees_arrow_in_polars_out(mypy_output: dict[str, str]) -> None:
    assert 'expression has type "DataFrame", variable has type "LazyFrame"' in mypy_output["wrong"]
    assert 'Argument 1 to "evaluate" has incompatible type "list[int]"' in mypy_output["wrong"]


@needs_mypy
def test_mypy_checks_every_shared_option(mypy_output: dict[str, str]) -> None:
    assert 'Unexpected keyword argument "tie"' in mypy_output["wrong"]
    assert 'Argument "denominator" to "curves" has incompatible type' in mypy_output["wrong"]


@needs_mypy
def test_mypy_cannot_see_the_run_time_namespace(mypy_output: dict[str, str]) -> None:
    # the honest part of the README: the namespace is registered at run time
    assert '"DataFrame" has no attribute "rank"' in mypy_output["namespace"]


def test_rank_is_the_namespace() -> None:
    recs = pl.DataFrame({"user": [1, 1], "item": ["a", "b"], "rank": [1, 2]})
    truth = pl.DataFrame({"user": [1], "item": ["b"]})
    assert prm.rank(recs).evaluate(truth, "mrr").equals(recs.rank.evaluate(truth, "mrr"))
    lazy = prm.rank(recs.lazy()).evaluate(truth, "mrr")
    assert isinstance(lazy, pl.LazyFrame)
    with pytest.raises(TypeError, match="rank\\(\\) takes a Polars DataFrame or LazyFrame"):
        prm.rank([1, 2])  # type: ignore[call-overload]
