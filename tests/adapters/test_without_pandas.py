"""The Polars path works, and is tested, without pandas or pyarrow.

Each test runs in a fresh interpreter where ``import pandas`` / ``import
pyarrow`` fail (``sys.modules[name] = None`` blocks an import), so nothing in
this process's imports can hide a dependency.
"""

from __future__ import annotations

import textwrap

import pytest

from tests._subprocess import assert_runs

BLOCK = """
import sys
for name in {blocked!r}:
    sys.modules[name] = None  # `import name` now raises ImportError
"""

POLARS_PATH = """
import polars as pl
import polars_rankmetrics as prm

recs = pl.DataFrame({
    "user": ["u1"] * 5 + ["u2"] * 5,
    "item": ["A", "B", "C", "D", "E", "A", "C", "E", "B", "D"],
    "score": [0.9, 0.8, 0.7, 0.6, 0.5] * 2,
})
truth = pl.DataFrame({"user": ["u1"] * 3 + ["u2"] * 3, "item": ["B", "D", "Z"] * 2})
metrics = ["map@5", "ndcg@5", "mrr", "precision@5", "recall@5"]
expected = {"map@5": 0.275, "ndcg@5": 0.440919, "mrr": 0.375, "precision@5": 0.4, "recall@5": 0.666667}
for got in (
    prm.evaluate(recs, truth, metrics, score="score"),
    recs.rank.evaluate(truth, metrics, score="score"),
    recs.lazy().rank.evaluate(truth.lazy(), metrics, score="score").collect(),
):
    assert {name: round(got[name][0], 6) for name in metrics} == expected, got
ranked = recs.rank.positions(3, score="score")
assert ranked["rank"].to_list() == [1, 2, 3] * 2
labeled = ranked.rank.relevance(truth)
assert sorted(labeled.filter(pl.col("rank").is_null())["item"].to_list()) == ["B", "D", "D", "Z", "Z"]
assert labeled["is_relevant"].sum() == 6
"""


@pytest.mark.parametrize("blocked", [("pandas", "pyarrow"), ("pandas",)])
def test_polars_path_without_pandas(blocked: tuple[str, ...]) -> None:
    assert_runs(
        BLOCK.format(blocked=blocked)
        + POLARS_PATH
        + textwrap.dedent(
            f"""
            assert all(sys.modules[name] is None for name in {blocked!r})
            assert not [f for f in sys.meta_path if "polars_rankmetrics" in type(f).__module__]
            try:
                import polars_rankmetrics.pandas
            except ImportError as exc:
                assert "(the package's pandas extra)" in str(exc), exc
            else:
                raise AssertionError("the pandas adapter imported without pandas")
            """
        )
    )


def test_polars_path_never_imports_pandas() -> None:
    # pandas installed but unused: neither importing the package nor computing on
    # Polars frames may import it (it is slow to import).
    assert_runs(
        "import sys\n"
        + POLARS_PATH
        + 'assert "pandas" not in sys.modules, "the Polars path imported pandas"\n'
    )


def test_pandas_adapter_without_pyarrow_says_what_to_install() -> None:
    pytest.importorskip("pandas")
    out = assert_runs(
        BLOCK.format(blocked=("pyarrow",))
        + textwrap.dedent(
            """
            import pandas as pd
            import polars_rankmetrics
            recs = pd.DataFrame({"user": [1], "item": ["a"], "rank": [1]})
            assert recs.rank(pct=True)["rank"].tolist() == [1.0]  # pandas' rank needs no pyarrow
            try:
                recs.rank.positions()
            except ImportError as exc:
                print(exc)
            else:
                raise AssertionError("converted without pyarrow")
            # every function reads pandas frames through the same boundary
            try:
                polars_rankmetrics.evaluate(recs, recs, "mrr")
            except ImportError as exc:
                print(exc)
            else:
                raise AssertionError("converted without pyarrow")
            """
        )
    )
    assert out.count("recs is a pandas frame: polars_rankmetrics needs pyarrow") == 2, out
    assert out.count("pip install pyarrow (the package's pandas extra)") == 2, out
