"""Column names that clash with other roles, internal columns or output labels.

Each role's column is renamed, in turn, to every name the pipeline uses (other
roles' defaults, former internal names, labels, the reserved prefix). Each
call either gives the baseline numbers or raises one clear ``ValueError``
from this package (never a raw Polars error, never a silently wrong number).
"""

from __future__ import annotations

from typing import Any

import polars as pl
import pytest

import polars_rankmetrics as prm

NAMES = [
    "user", "item", "rank", "score", "rel", "model",
    "is_relevant", "ideal_rank", "n_relevant", "__m", "__hit_index", "__n_relevant",
    "__hits@all", "__first@all", "__dcg@3", "__idcg@3", "map@3", "ndcg@3",
    "pooled_recall@2|num", "__prm_x", "__prm_row",
]  # fmt: skip
METRICS = ["map@3", "ndcg@3", "mrr", "pooled_recall@2", "r_precision", "mean_rank"]

RECS = pl.DataFrame(
    {
        "model": ["a"] * 4 + ["b"] * 3,
        "user": [1, 1, 1, 2, 1, 1, 2],
        "item": ["x", "y", "z", "x", "z", "y", "w"],
        "rank": [1, 2, 3, 1, 1, 2, 1],
        "score": [0.9, 0.5, 0.1, 0.3, 0.8, 0.6, 0.7],
    }
)
TRUTH = pl.DataFrame(
    {"user": [1, 1, 2, 3], "item": ["y", "z", "w", "x"], "rel": [2.0, 1.0, 3.0, 1.0]}
)
DEFAULTS = {"user": "user", "item": "item", "rank": "rank", "score": "score", "by": "model"}


def _frames(
    recs: pl.DataFrame, role: str, name: str
) -> tuple[pl.DataFrame, pl.DataFrame, dict[str, Any]] | None:
    """recs and truth with ``role``'s column renamed to ``name``, and the keywords.

    ``None`` when ``name`` is already another column of that frame: then the
    role is pointed at that column instead (two roles, one column).
    """
    truth = TRUTH
    keywords: dict[str, Any] = {"relevance": "rel", "by": "model"}
    column = {"relevance": "rel", "by": "model"}.get(role, role)
    in_recs, in_truth = column in recs.columns, column in truth.columns
    if name == column:
        return recs, truth, keywords
    if (in_recs and name in recs.columns) or (in_truth and name in truth.columns):
        return None
    if in_recs:
        recs = recs.rename({column: name})
    if in_truth:
        truth = truth.rename({column: name})
    keywords[role] = name
    return recs, truth, keywords


def _clear(error: ValueError) -> None:
    # our own ValueError, not a Polars exception (several subclass ValueError-like bases)
    assert type(error) is ValueError, type(error)
    assert "polars.exceptions" not in repr(type(error))


def _same(result: pl.DataFrame, baseline: pl.DataFrame) -> None:
    assert result.shape == baseline.shape
    for got, want in zip(result.columns, baseline.columns, strict=True):
        left, right = result[got].to_list(), baseline[want].to_list()
        if baseline[want].dtype == pl.Float64:
            assert left == pytest.approx(right, nan_ok=True)
        else:
            assert left == right


@pytest.mark.parametrize("per_user", [False, True])
@pytest.mark.parametrize("mode", ["rank", "score"])
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("role", ["user", "item", "rank", "score", "relevance", "by"])
def test_evaluate(role: str, name: str, mode: str, per_user: bool) -> None:
    if (role == "rank" and mode == "score") or (role == "score" and mode == "rank"):
        pytest.skip("role not read in this mode")
    position = {"score": "score"} if mode == "score" else {}
    base = RECS.drop("rank" if mode == "score" else "score")
    baseline = prm.evaluate(
        base, TRUTH, METRICS, relevance="rel", by="model", per_user=per_user, **position
    )
    setup = _frames(base, role, name)
    if setup is None:
        # two roles name one column
        keywords: dict[str, Any] = {"relevance": "rel", "by": "model", **position, role: name}
        with pytest.raises(ValueError, match="name the same column") as info:
            prm.evaluate(base, TRUTH, METRICS, per_user=per_user, **keywords)
        _clear(info.value)
        return
    recs, truth, keywords = setup
    if mode == "score":
        keywords.setdefault("score", "score")
    reserved = name.startswith("__prm_")
    label_key = role in ("user", "by") and name in ("map@3", "ndcg@3", "pooled_recall@2|num")
    # a by column that the truth also has joins with it: named as the relevance, it
    # would be both (refused); likewise a relevance named as the by column
    by_is_relevance = (role, name) in (("by", "rel"), ("relevance", "model"))
    if by_is_relevance:
        with pytest.raises(ValueError, match="name the same column") as info:
            prm.evaluate(recs, truth, METRICS, per_user=per_user, **keywords)
        _clear(info.value)
        return
    if reserved or label_key:
        with pytest.raises(ValueError, match=r"reserved|already a key column") as info:
            prm.evaluate(recs, truth, METRICS, per_user=per_user, **keywords)
        _clear(info.value)
        return
    result = prm.evaluate(recs, truth, METRICS, per_user=per_user, **keywords)
    _same(result, baseline)


@pytest.mark.parametrize("name", NAMES)
def test_evaluate_score_mode_rank_keyword(name: str) -> None:
    # with a score, rank= only names the derived positions: any name works
    baseline = prm.evaluate(RECS.drop("rank"), TRUTH, METRICS, score="score", by="model")
    result = prm.evaluate(RECS.drop("rank"), TRUTH, METRICS, score="score", by="model", rank=name)
    _same(result, baseline)


@pytest.mark.parametrize("mode", ["rank", "score"])
@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("role", ["user", "item", "rank", "score", "by"])
def test_positions(role: str, name: str, mode: str) -> None:
    recs = RECS if mode == "score" else RECS.drop("score")
    position = {"score": "score"} if mode == "score" else {}
    if role == "score" and mode == "rank":
        pytest.skip("role not read in this mode")
    baseline = prm.positions(recs, 2, by="model", **position)
    column = "model" if role == "by" else role
    keywords: dict[str, Any] = {"by": "model", **position}
    if name != column and name in recs.columns and not (role == "rank" and mode == "score"):
        keywords[role] = name
        with pytest.raises(ValueError, match="name the same column") as info:
            prm.positions(recs, 2, **keywords)
        _clear(info.value)
        return
    if role == "rank" and mode == "score":
        # rank names the column written from the score
        keywords["rank"] = name
        if name in ("user", "item", "score", "model"):
            with pytest.raises(ValueError, match="name the same column") as info:
                prm.positions(recs, 2, **keywords)
            _clear(info.value)
            return
        if name.startswith("__prm_"):
            with pytest.raises(ValueError, match="reserved") as info:
                prm.positions(recs, 2, **keywords)
            _clear(info.value)
            return
        result = prm.positions(recs.drop("rank"), 2, **keywords)
        got = result.sort("model", "user", name).select("model", "user", "item", name)
        want = baseline.sort("model", "user", "rank").select("model", "user", "item", "rank")
        assert got.rows() == want.rows()
        return
    renamed = recs.rename({column: name}) if name != column else recs
    if name != column:
        keywords[role] = name
    if name.startswith("__prm_"):
        with pytest.raises(ValueError, match="reserved") as info:
            prm.positions(renamed, 2, **keywords)
        _clear(info.value)
        return
    result = prm.positions(renamed, 2, **keywords)
    _same(result, baseline)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("role", ["user", "item", "rank", "relevance", "by"])
def test_relevance(role: str, name: str) -> None:
    recs = RECS.drop("score")
    baseline = prm.relevance(recs, TRUTH, relevance="rel", by="model")
    setup = _frames(recs, role, name)
    if setup is None:
        keywords: dict[str, Any] = {"relevance": "rel", "by": "model", role: name}
        with pytest.raises(ValueError, match="name the same column") as info:
            prm.relevance(recs, TRUTH, **keywords)
        _clear(info.value)
        return
    renamed_recs, truth, keywords = setup
    added = {"is_relevant", "n_relevant", "ideal_rank"}
    clash = (
        name.startswith("__prm_")
        # the relevance column is written into the labeled recs under its own name
        or (role == "relevance" and (name in recs.columns or name in added))
        or (role != "relevance" and name in {*added, "rel"})
    )
    if clash:
        with pytest.raises(
            ValueError, match=r"reserved|would add|adds|name the same column"
        ) as info:
            prm.relevance(renamed_recs, truth, **keywords)
        _clear(info.value)
        return
    result = prm.relevance(renamed_recs, truth, **keywords)
    _same(result, baseline)
