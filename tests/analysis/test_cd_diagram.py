"""The critical-difference diagram: its groups, and a PNG rendered through vl-convert."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from polars_rankmetrics.analysis import friedman, plot_critical_difference
from polars_rankmetrics.analysis.cd_diagram import cliques

pytest.importorskip("altair")
pytest.importorskip("vl_convert")

NAMES = ["pop", "itemknn", "bpr", "lightgcn", "sasrec", "ease", "bert4rec"]


def _means() -> pl.DataFrame:
    rng = np.random.default_rng(5)
    n, k = 20, len(NAMES)
    strength = np.array([0.30, 0.31, 0.33, 0.36, 0.37, 0.40, 0.41])
    table = strength + rng.normal(0, 0.03, (n, k))
    return pl.DataFrame(
        {
            "dataset": [f"d{i}" for _ in range(k) for i in range(n)],
            "model": [NAMES[j] for j in range(k) for _ in range(n)],
            "ndcg": table.T.ravel(),
        }
    )


def test_cliques_are_the_maximal_runs_within_the_cd() -> None:
    assert cliques([1.0, 1.5, 2.0, 4.0], 1.0) == [(0, 2)]
    assert cliques([1.0, 2.1, 3.2, 4.3], 1.0) == []
    assert cliques([1.7, 2.0, 3.2, 3.85, 5.2, 5.7, 6.35], 2.014) == [
        (0, 2), (1, 3), (2, 4), (3, 5), (4, 6),
    ]  # fmt: skip


def test_diagram_renders_to_png(tmp_path: Path) -> None:
    result = friedman(_means(), "ndcg")
    assert result.mean_ranks.get_column("system").to_list() == [
        "bert4rec", "ease", "sasrec", "lightgcn", "bpr", "itemknn", "pop",
    ]  # fmt: skip
    chart = plot_critical_difference(result)
    spec = chart.to_dict()
    texts = [
        value.get("label") or value.get("text")
        for layer in spec["layer"]
        if "values" in layer.get("data", {})
        for value in layer["data"]["values"]
    ]
    assert "bert4rec (1.70)" in texts
    assert "(6.35) pop" in texts
    assert f"CD = {result.critical_difference:.2f}" in texts
    path = tmp_path / "cd.png"
    chart.save(str(path))
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert path.stat().st_size > 5_000


def test_refuses_what_is_not_a_friedman_result() -> None:
    with pytest.raises(TypeError, match="takes the result of friedman"):
        plot_critical_difference(_means())  # type: ignore[arg-type]
