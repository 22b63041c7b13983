"""Messy input thrown at every public entry point: a right number or one clear error.

Each case either computes the number by hand (in the case's comment) or
expects the package's refusal: a ``ValueError``/``TypeError`` (``OSError``
for a file that is not there) raised by the package, naming the column,
parameter or file, with no Polars or Arrow exception in its chain. Inputs are
never mutated (checked on every case, pandas included).

The base example: user 1 is recommended a (rank 1), b (rank 2) and finds b;
user 2 is recommended c (rank 1) and finds c. AP@2 = 1/2 for user 1 (b at
rank 2, one relevant item) and 1 for user 2: MAP@2 = 0.75.
"""

from __future__ import annotations

import datetime as dt
import io
import math
import warnings
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polars_rankmetrics as prm
from polars_rankmetrics import kaggle, trec
from polars_rankmetrics.cli import main
from tests.conftest import HAS_PANDAS

RECS = pl.DataFrame({
    "user": [1, 1, 2],
    "item": ["a", "b", "c"],
    "rank": [1, 2, 1],
    "score": [0.9, 0.5, 0.3],
})  # fmt: skip
TRUTH = pl.DataFrame({"user": [1, 2], "item": ["b", "c"], "rel": [1, 2]})
MAP2 = 0.75  # see the module docstring

FOREIGN = ("polars", "pyarrow", "numpy", "pandas")


@dataclass(frozen=True)
class Raises:
    """The expected refusal: its type and the words its message must hold."""

    kind: type[Exception]
    words: tuple[str, ...]

    def __init__(self, kind: type[Exception], *words: str) -> None:
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "words", words)


def _chain(error: BaseException) -> list[BaseException]:
    found, seen = [], set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        found.append(current)
        current = current.__cause__ or (
            None if current.__suppress_context__ else current.__context__
        )
    return found


def assert_clear(error: BaseException, expected: Raises) -> None:
    """One clear error of the package: its type, its words, no foreign exception behind it."""
    assert isinstance(error, expected.kind), f"{type(error)}: {error}"
    assert isinstance(error, (ValueError, TypeError, OSError))
    for link in _chain(error):
        module = type(link).__module__
        assert not module.startswith(FOREIGN), f"{module}.{type(link).__name__}: {link}"
    message = str(error)
    for word in expected.words:
        assert word in message, f"{word!r} not in {message!r}"
    assert len(message) < 2000


def check(call: Callable[[], Any], expected: Raises | Callable[[Any], None]) -> None:
    """Run ``call``: it raises ``expected`` or its result passes the ``expected`` check."""
    if isinstance(expected, Raises):
        with pytest.raises(Exception) as caught:  # noqa: PT011 - judged by assert_clear
            _collected(call())
        assert_clear(caught.value, expected)
    else:
        expected(_collected(call()))


def _collected(result: Any) -> Any:
    return result.collect() if isinstance(result, pl.LazyFrame) else result


def value(number: float | None, column: str | None = None) -> Callable[[Any], None]:
    """The result holds one row whose (only, or ``column``) value is ``number``."""

    def assert_value(result: Any) -> None:
        frame = result if isinstance(result, pl.DataFrame) else pl.from_pandas(result)
        assert frame.height == 1
        got = frame.get_column(column or frame.columns[-1])[0]
        if number is None:
            assert got is None or (isinstance(got, float) and math.isnan(got))
        else:
            assert got == pytest.approx(number)

    return assert_value


def _snapshot(frame: Any) -> Any:
    if isinstance(frame, (pl.DataFrame, pl.LazyFrame)):
        return frame.collect() if isinstance(frame, pl.LazyFrame) else frame.clone()
    if type(frame).__module__.startswith("pandas"):
        return frame.copy(deep=True)
    return frame


def assert_unchanged(before: Any, after: Any) -> None:
    if isinstance(after, pl.LazyFrame):
        after = after.collect()
    if isinstance(after, pl.DataFrame):
        assert_frame_equal(after, before)
    elif type(after).__module__.startswith("pandas"):
        import pandas as pd  # noqa: PLC0415 - pandas only when given one

        pd.testing.assert_frame_equal(after, before)
        assert list(after.columns) == list(before.columns)


# ----------------------------------------------------------------- evaluate


def _with(frame: pl.DataFrame, **columns: Any) -> pl.DataFrame:
    return frame.with_columns(
        pl.Series(name, values) if isinstance(values, list) else values.alias(name)
        for name, values in columns.items()
    )


NULL_RANK = Raises(ValueError, "'rank'", "1 null value", "example row")
EVALUATE_CASES = [
    # empty frames: no recs, every truth user scores 0 (trec_eval -c, counted); no truth,
    # no user to average (null)
    pytest.param(RECS.clear(), TRUTH, ["map@2"], {}, value(0.0), id="recs-empty"),
    pytest.param(RECS, TRUTH.clear(), ["map@2"], {}, value(None), id="truth-empty"),
    pytest.param(RECS.clear(), TRUTH.clear(), ["map@2"], {}, value(None), id="both-empty"),
    # missing columns
    pytest.param(RECS.drop("rank"), TRUTH, ["map@2"], {}, Raises(ValueError, "'rank'", "rank="),
                 id="recs-no-rank"),
    pytest.param(RECS, TRUTH.drop("item"), ["map@2"], {}, Raises(ValueError, "truth", "'item'"),
                 id="truth-no-item"),
    pytest.param(RECS, TRUTH, ["map@2"], {"score": "points"},
                 Raises(ValueError, "'points'", "score="), id="score-missing"),
    pytest.param(RECS, TRUTH, ["ndcg@2"], {"relevance": "grade"},
                 Raises(ValueError, "'grade'", "relevance="), id="relevance-missing"),
    # wrong dtypes of the rank
    pytest.param(_with(RECS, rank=pl.col("rank").cast(pl.String)), TRUTH, ["map@2"], {},
                 Raises(TypeError, "'rank'", "String"), id="rank-string"),
    pytest.param(_with(RECS, rank=[1.0, 2.5, 1.0]), TRUTH, ["map@2"], {},
                 Raises(TypeError, "'rank'", "Float64"), id="rank-fraction"),
    pytest.param(_with(RECS, rank=pl.col("rank").cast(pl.Decimal(10, 0))), TRUTH, ["map@2"], {},
                 Raises(TypeError, "'rank'", "Decimal"), id="rank-decimal"),
    pytest.param(_with(RECS, rank=[dt.date(2024, 1, 1)] * 3), TRUTH, ["map@2"], {},
                 Raises(TypeError, "'rank'", "Date"), id="rank-date"),
    pytest.param(_with(RECS, rank=pl.lit(None)), TRUTH, ["map@2"], {},
                 Raises(TypeError, "'rank'", "Null"), id="rank-null-dtype"),
    pytest.param(_with(RECS, rank=[True, False, True]), TRUTH, ["map@2"], {},
                 Raises(TypeError, "'rank'", "Boolean"), id="rank-bool"),
    # ids of unusual dtypes still compare by value: MAP@2 as in the base example
    pytest.param(_with(RECS, item=[True, False, True]), _with(TRUTH, item=[False, True]),
                 ["map@2"], {}, value(MAP2), id="item-bool"),
    pytest.param(_with(RECS, item=[[1], [2], [3]]), _with(TRUTH, item=[[2], [3]]), ["map@2"],
                 {}, value(MAP2), id="item-list"),
    pytest.param(_with(RECS, user=pl.struct("user")), _with(TRUTH, user=pl.struct("user")),
                 ["map@2"], {}, value(MAP2), id="user-struct"),
    pytest.param(_with(RECS, item=pl.col("item").cast(pl.Categorical)), TRUTH, ["map@2"], {},
                 value(MAP2), id="item-categorical-vs-string"),
    pytest.param(_with(RECS, user=pl.col("user").cast(pl.UInt8)), TRUTH, ["map@2"], {},
                 value(MAP2), id="user-uint8-vs-int64"),
    # "b " (trailing space) is not "b": user 1 finds nothing (AP 0), user 2 finds "ç": 0.5
    pytest.param(_with(RECS, item=["a", "b ", "ç"]), _with(TRUTH, item=["b", "ç"]), ["map@2"],
                 {}, value(0.5), id="item-unicode-whitespace"),
    # mismatched id families: every score would be 0
    pytest.param(RECS, _with(TRUTH, user=pl.col("user").cast(pl.String)), ["map@2"], {},
                 Raises(TypeError, "'user'", "Int64", "String"), id="user-int-vs-string"),
    pytest.param(RECS, _with(TRUTH, item=pl.lit(None)), ["map@2"], {},
                 Raises(TypeError, "'item'", "Null"), id="truth-item-null-dtype"),
    pytest.param(RECS, _with(TRUTH, item=[dt.date(2024, 1, 1)] * 2), ["map@2"], {},
                 Raises(TypeError, "'item'", "Date"), id="item-string-vs-date"),
    # nulls in every role
    pytest.param(_with(RECS, user=[1, None, 2]), TRUTH, ["map@2"], {},
                 Raises(ValueError, "'user'", "1 null value"), id="recs-null-user"),
    pytest.param(_with(RECS, item=["a", None, "c"]), TRUTH, ["map@2"], {},
                 Raises(ValueError, "'item'", "1 null value"), id="recs-null-item"),
    pytest.param(_with(RECS, rank=[1, None, 1]), TRUTH, ["map@2"], {}, NULL_RANK,
                 id="recs-null-rank"),
    pytest.param(_with(RECS, score=[0.9, None, 0.3]), TRUTH, ["map@2"], {"score": "score"},
                 Raises(ValueError, "'score'", "1 null value"), id="recs-null-score"),
    pytest.param(RECS, _with(TRUTH, user=[1, None]), ["map@2"], {},
                 Raises(ValueError, "truth", "'user'", "1 null value"), id="truth-null-user"),
    pytest.param(RECS, _with(TRUTH, rel=[1, None]), ["ndcg@2"], {"relevance": "rel"},
                 Raises(ValueError, "'rel'", "1 null value"), id="truth-null-rel"),
    pytest.param(_with(RECS, model=["a", None, "a"]), TRUTH, ["map@2"], {"by": "model"},
                 Raises(ValueError, "'model'", "1 null value"), id="recs-null-by"),
    # NaN and inf in scores and grades
    pytest.param(_with(RECS, score=[0.9, math.nan, 0.3]), TRUTH, ["map@2"], {"score": "score"},
                 Raises(ValueError, "'score'", "1 NaN value"), id="score-nan"),
    # an infinite score is an order like any other: b first, then a; AP@2 of user 1 = 1
    pytest.param(_with(RECS, score=[0.9, math.inf, 0.3]), TRUTH, ["map@2"], {"score": "score"},
                 value(1.0), id="score-inf"),
    pytest.param(RECS, _with(TRUTH, rel=[1.0, math.nan]), ["ndcg@2"], {"relevance": "rel"},
                 Raises(ValueError, "'rel'", "1 NaN value"), id="rel-nan"),
    pytest.param(RECS, _with(TRUTH, rel=[1.0, math.inf]), ["ndcg@2"], {"relevance": "rel"},
                 Raises(ValueError, "'rel'", "infinite"), id="rel-inf"),
    pytest.param(RECS, _with(TRUTH, rel=pl.col("rel").cast(pl.String)), ["ndcg@2"],
                 {"relevance": "rel"}, Raises(TypeError, "'rel'", "String"), id="rel-string"),
    # a negative grade is not relevant: user 2 is left out; user 1: b (rel 1) at rank 2,
    # NDCG@2 = (1 / log2 3) / 1
    pytest.param(RECS, _with(TRUTH, rel=[1, -1]), ["ndcg@2"], {"relevance": "rel"},
                 value(1 / math.log2(3)), id="rel-negative"),
    pytest.param(_with(RECS, score=["1", "2", "3"]), TRUTH, ["map@2"], {"score": "score"},
                 Raises(TypeError, "'score'", "String"), id="score-string"),
    # zero and negative ranks
    pytest.param(_with(RECS, rank=[0, 1, 1]), TRUTH, ["map@2"], {},
                 Raises(ValueError, "'rank'", "below 1", "example row"), id="rank-zero"),
    pytest.param(_with(RECS, rank=[-3, 1, 1]), TRUTH, ["map@2"], {},
                 Raises(ValueError, "'rank'", "below 1"), id="rank-negative"),
    # duplicate rows: a repeated truth row is refused; a repeated recommendation row
    # (same item, same rank) is the same list
    pytest.param(RECS, pl.concat([TRUTH, TRUTH.head(1)]), ["map@2"], {},
                 Raises(ValueError, "truth", "duplicated", "2 rows"), id="truth-duplicate-row"),
    pytest.param(pl.concat([RECS, RECS.head(1)]), TRUTH, ["map@2"], {}, value(MAP2),
                 id="recs-duplicate-row"),
    # cutoffs
    pytest.param(RECS, TRUTH, ["map@0"], {}, Raises(ValueError, "'map@0'", ">= 1"), id="k-zero"),
    pytest.param(RECS, TRUTH, ["map@-1"], {}, Raises(ValueError, "'map@-1'"), id="k-negative"),
    pytest.param(RECS, TRUTH, ["map@1.5"], {}, Raises(ValueError, "'map@1.5'"), id="k-float"),
    pytest.param(RECS, TRUTH, ["map@" + "9" * 25], {}, value(MAP2), id="k-huge"),
    # metric strings
    pytest.param(RECS, TRUTH, ["ndcg@"], {}, Raises(ValueError, "'ndcg@'"), id="metric-no-k"),
    pytest.param(RECS, TRUTH, ["ndcg@1.5"], {}, Raises(ValueError, "'ndcg@1.5'"),
                 id="metric-fraction-k"),
    pytest.param(RECS, TRUTH, ["ndgc@3"], {}, Raises(ValueError, "'ndgc'", "did you mean 'ndcg'"),
                 id="metric-unknown"),
    pytest.param(RECS, TRUTH, ["rbp(p=2)"], {}, Raises(ValueError, "rbp", "p", "2.0"),
                 id="metric-rbp-p2"),
    pytest.param(RECS, TRUTH, ["err(max_grade=-1)@3"], {}, Raises(ValueError, "max_grade"),
                 id="metric-err-negative-grade"),
    pytest.param(RECS, TRUTH, ["fbeta(beta=x)@3"], {}, Raises(ValueError, "'beta'"),
                 id="metric-parameter-text"),
    pytest.param(RECS, TRUTH, ["fbeta(gamma=1)@3"], {}, Raises(ValueError, "'gamma=1'"),
                 id="metric-unknown-parameter"),
    pytest.param(RECS, TRUTH, [3], {}, Raises(TypeError, "metric", "3"), id="metric-int"),
    pytest.param(RECS, TRUTH, [], {}, Raises(ValueError, "metrics is empty"), id="metrics-empty"),
    # by and the roles
    pytest.param(RECS, TRUTH, ["map@2"], {"by": "model"}, Raises(ValueError, "'model'", "by"),
                 id="by-missing"),
    pytest.param(RECS, TRUTH, ["map@2"], {"by": "user"}, Raises(ValueError, "user=", "by[0]="),
                 id="by-is-user"),
    pytest.param(RECS, TRUTH, ["map@2"], {"by": "rank"}, Raises(ValueError, "rank=", "by[0]="),
                 id="by-is-rank"),
    pytest.param(RECS, TRUTH, ["map@2"], {"user": None}, Raises(TypeError, "user", "None"),
                 id="user-none"),
    pytest.param(RECS, TRUTH, ["map@2"], {"item": 3}, Raises(TypeError, "item", "3"),
                 id="item-int"),
    pytest.param(RECS, TRUTH, ["map@2"], {"per_user": 1}, Raises(TypeError, "per_user"),
                 id="per-user-int"),
    pytest.param(RECS, TRUTH, ["map@2"], {"ties": "random", "score": "score"},
                 Raises(ValueError, "ties", "'random'"), id="ties-unknown"),
    pytest.param(RECS, TRUTH, ["map@2"], {"relevance_level": math.nan},
                 Raises(ValueError, "relevance_level", "nan"), id="relevance-level-nan"),
    pytest.param({"user": [1]}, TRUTH, ["map@2"], {}, Raises(TypeError, "recs", "dict"),
                 id="recs-dict"),
    pytest.param(RECS, [1, 2], ["map@2"], {}, Raises(TypeError, "truth", "list"),
                 id="truth-list"),
    pytest.param(RECS, None, ["map@2"], {}, Raises(ValueError, "truth="), id="truth-none"),
]  # fmt: skip


@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
@pytest.mark.parametrize(("recs", "truth", "metrics", "options", "expected"), EVALUATE_CASES)
def test_evaluate(
    recs: Any, truth: Any, metrics: Any, options: dict[str, Any], expected: Any, lazy: bool
) -> None:
    if lazy:
        if not isinstance(recs, pl.DataFrame):
            pytest.skip("only frames have a lazy form")
        recs = recs.lazy()
        truth = truth.lazy() if isinstance(truth, pl.DataFrame) else truth
    before = _snapshot(recs), _snapshot(truth)
    check(lambda: prm.evaluate(recs, truth, metrics, **options), expected)
    assert_unchanged(before[0], recs)
    assert_unchanged(before[1], truth)


@pytest.mark.parametrize("lazy", [False, True], ids=["eager", "lazy"])
def test_namespace_forwards_the_same_errors(lazy: bool) -> None:
    recs = RECS.lazy() if lazy else RECS
    truth = TRUTH.lazy() if lazy else TRUTH
    check(lambda: recs.rank.evaluate(truth, "map@2"), value(MAP2))
    check(lambda: recs.rank.evaluate(truth, "ndcg@1.5"), Raises(ValueError, "'ndcg@1.5'"))
    check(lambda: recs.rank.positions(0), Raises(ValueError, "k", ">= 1"))
    check(lambda: recs.rank.evaluate(truth, "map@2", rank="pos"), Raises(ValueError, "'pos'"))


# ----------------------------------------------------------------- parts, aggregate, overlap

PARTS = prm.per_user_parts(RECS, TRUTH, ["map@2", "pooled_recall@2"])
PARTS_CASES = [
    # pooled recall@2: both relevant items found, sum(num) / sum(den) = 2 / 2
    pytest.param(lambda: prm.aggregate(PARTS, ["map@2", "pooled_recall@2"]), value(1.0),
                 id="aggregate"),
    pytest.param(lambda: prm.aggregate(PARTS, ["map@2"]), value(MAP2), id="aggregate-map"),
    pytest.param(lambda: prm.aggregate(PARTS.clear(), ["map@2"]), value(None),
                 id="aggregate-empty"),
    pytest.param(lambda: prm.aggregate(PARTS, ["ndcg@2"]), Raises(ValueError, "'ndcg@2'"),
                 id="aggregate-part-missing"),
    pytest.param(lambda: prm.aggregate(PARTS, ["map@2"], by="model"),
                 Raises(ValueError, "'model'"), id="aggregate-by-missing"),
    pytest.param(lambda: prm.aggregate(PARTS.with_columns(pl.col("map@2").cast(str)), ["map@2"]),
                 Raises(TypeError, "'map@2'", "String"), id="aggregate-part-string"),
    pytest.param(lambda: prm.aggregate([1], ["map@2"]), Raises(TypeError, "parts", "list"),
                 id="aggregate-list"),
    pytest.param(lambda: prm.per_user_parts(RECS, TRUTH, ["map@0"]), Raises(ValueError, "'map@0'"),
                 id="parts-k-zero"),
    pytest.param(lambda: prm.per_user_parts(RECS, TRUTH.drop("user"), ["map@2"]),
                 Raises(ValueError, "truth", "'user'"), id="parts-truth-no-user"),
    pytest.param(lambda: prm.check_overlap(RECS, TRUTH, user=None),
                 Raises(TypeError, "user", "None"), id="overlap-user-none"),
    pytest.param(lambda: prm.check_overlap(RECS, TRUTH.drop("item")),
                 Raises(ValueError, "truth", "'item'"), id="overlap-missing-item"),
    pytest.param(lambda: prm.check_overlap([1], TRUTH), Raises(TypeError, "recs", "list"),
                 id="overlap-list"),
]  # fmt: skip


@pytest.mark.parametrize(("call", "expected"), PARTS_CASES)
def test_parts_and_overlap(call: Callable[[], Any], expected: Any) -> None:
    before = RECS.clone(), TRUTH.clone(), PARTS.clone()
    check(call, expected)
    for frame, copy in zip((RECS, TRUTH, PARTS), before, strict=True):
        assert_frame_equal(frame, copy)


# ----------------------------------------------------------------- positions, relevance

POSITIONS_CASES = [
    pytest.param(lambda: prm.positions(RECS, 0), Raises(ValueError, "k", ">= 1"), id="k-0"),
    pytest.param(lambda: prm.positions(RECS, -2), Raises(ValueError, "k", "-2"), id="k-neg"),
    pytest.param(lambda: prm.positions(RECS, True), Raises(TypeError, "k", "bool"), id="k-bool"),
    pytest.param(lambda: prm.positions(RECS, 2.0), Raises(TypeError, "k", "float"), id="k-float"),
    pytest.param(lambda: prm.positions(RECS, "2"), Raises(TypeError, "k", "str"), id="k-str"),
    pytest.param(lambda: prm.positions(RECS.drop("item")), Raises(ValueError, "'item'"),
                 id="missing-item"),
    pytest.param(lambda: prm.positions(RECS, by="model"), Raises(ValueError, "'model'"),
                 id="by-missing"),
    pytest.param(lambda: prm.positions(_with(RECS, score=[1.0, math.nan, 2.0]), score="score"),
                 Raises(ValueError, "'score'", "NaN"), id="score-nan"),
    pytest.param(lambda: prm.positions(_with(RECS, rank=pl.col("rank").cast(pl.String))),
                 Raises(TypeError, "'rank'", "String"), id="rank-string"),
    pytest.param(lambda: prm.positions(RECS, 2, duplicates="drop"),
                 Raises(ValueError, "duplicates", "'drop'"), id="duplicates-unknown"),
    pytest.param(lambda: prm.relevance(RECS, TRUTH, relevance="grade"),
                 Raises(ValueError, "'grade'"), id="relevance-missing"),
    pytest.param(lambda: prm.relevance(RECS, _with(TRUTH, rel=[1.0, math.nan]), relevance="rel"),
                 Raises(ValueError, "'rel'", "NaN"), id="relevance-nan"),
    pytest.param(lambda: prm.relevance(RECS, TRUTH, relevance="rel", relevance_level="1"),
                 Raises(TypeError, "relevance_level"), id="level-str"),
    pytest.param(lambda: prm.relevance(RECS, pl.concat([TRUTH, TRUTH])),
                 Raises(ValueError, "truth", "duplicated"), id="truth-duplicates"),
    pytest.param(lambda: prm.relevance(RECS, {"user": [1]}), Raises(TypeError, "truth", "dict"),
                 id="truth-dict"),
]  # fmt: skip


@pytest.mark.parametrize(("call", "expected"), POSITIONS_CASES)
def test_positions_and_relevance(call: Callable[[], Any], expected: Raises) -> None:
    before = RECS.clone(), TRUTH.clone()
    check(call, expected)
    assert_frame_equal(RECS, before[0])
    assert_frame_equal(TRUTH, before[1])


def test_positions_empty_and_huge_k() -> None:
    assert prm.positions(RECS.clear(), 2).height == 0
    # a cutoff beyond every list keeps every row
    assert_frame_equal(prm.positions(RECS, 10**30), RECS)


# ----------------------------------------------------------------- per-user expressions

LABELED = prm.relevance(RECS, TRUTH, relevance="rel")


@pytest.mark.parametrize(
    ("make", "expected"),
    [
        (lambda: prm.average_precision(0), Raises(ValueError, "k", ">= 1")),
        (lambda: prm.precision(-1), Raises(ValueError, "k", "-1")),
        (lambda: prm.precision(None), Raises(ValueError, "precision", "cutoff")),  # type: ignore[arg-type]
        (lambda: prm.recall(1.5), Raises(TypeError, "k", "float")),  # type: ignore[arg-type]
        (lambda: prm.hit_rate(True), Raises(TypeError, "k", "bool")),
        (lambda: prm.ndcg("3"), Raises(TypeError, "k", "str")),  # type: ignore[arg-type]
        (lambda: prm.average_precision(2, denominator="k_min"),  # type: ignore[arg-type]
         Raises(ValueError, "denominator", "'k_min'")),
        (lambda: prm.dcg(2, gain="log"), Raises(ValueError, "gain", "'log'")),  # type: ignore[arg-type]
        (lambda: prm.ndcg(2, rank=3), Raises(TypeError, "rank", "3")),  # type: ignore[arg-type]
        (lambda: prm.reciprocal_rank(relevant=None), Raises(TypeError, "relevant", "None")),  # type: ignore[arg-type]
        (lambda: prm.ndcg(2, ideal_rank=["x"]), Raises(TypeError, "ideal_rank")),  # type: ignore[arg-type]
        (lambda: prm.first_relevant_rank(rank=1.0), Raises(TypeError, "rank")),  # type: ignore[arg-type]
    ],
)  # fmt: skip
def test_expression_parameters(make: Callable[[], Any], expected: Raises) -> None:
    check(make, expected)


def test_expressions_on_a_labeled_frame() -> None:
    # per user, by hand: user 1 finds b at rank 2 of 2 (P@2 1/2, AP@2 1/2, RR 1/2),
    # user 2 finds c at rank 1 (P@2 1/2: one relevant in two slots, AP 1, RR 1)
    result = LABELED.group_by("user").agg(
        prm.precision(2), prm.average_precision(2), prm.reciprocal_rank(), prm.hit_rate(10**30)
    )
    assert result.sort("user").rows() == [(1, 0.5, 0.5, 0.5, 1.0), (2, 0.5, 1.0, 1.0, 1.0)]


# ----------------------------------------------------------------- compare, curves, report

MODELS = pl.concat([
    RECS.drop("score").with_columns(model=pl.lit("a")),
    RECS.drop("score").with_columns(model=pl.lit("b"), rank=pl.Series([2, 1, 1])),
])  # fmt: skip
PER_USER = prm.evaluate(MODELS, TRUTH, ["map@2", "mrr"], by="model", per_user=True)


def _at_user_1(frame: pl.DataFrame, column: str, number: float) -> pl.DataFrame:
    at = (pl.col("user") == 1) & (pl.col("model") == "a")
    return frame.with_columns(pl.when(at).then(number).otherwise(pl.col(column)).alias(column))


ANALYSIS_CASES = [
    pytest.param(lambda: prm.compare(RECS, TRUTH, ["map@2"]),
                 Raises(ValueError, "system column 'model'"), id="compare-no-system"),
    pytest.param(lambda: prm.compare(MODELS.filter(pl.col("model") == "a"), TRUTH, ["map@2"]),
                 Raises(ValueError, "two systems", "'model'"), id="compare-one-system"),
    pytest.param(lambda: prm.compare(MODELS.clear(), TRUTH, ["map@2"]),
                 Raises(ValueError, "two systems"), id="compare-empty"),
    pytest.param(lambda: prm.compare(MODELS, TRUTH, ["map@2"], baseline="c"),
                 Raises(ValueError, "baseline", "'c'"), id="compare-baseline-unknown"),
    pytest.param(lambda: prm.compare(MODELS, TRUTH, ["map@2"], ci=1.5),
                 Raises(ValueError, "ci", "1.5"), id="compare-ci"),
    pytest.param(lambda: prm.compare(MODELS, TRUTH, ["map@2"], ci=True),
                 Raises(TypeError, "ci"), id="compare-ci-bool"),
    pytest.param(lambda: prm.compare(MODELS, TRUTH, ["map@2"], test="z"),
                 Raises(ValueError, "test", "'z'"), id="compare-test"),
    pytest.param(lambda: prm.compare(MODELS, TRUTH, ["map@2"], seed="x"),
                 Raises(TypeError, "seed"), id="compare-seed"),
    pytest.param(lambda: prm.compare(MODELS, TRUTH, ["map@2"], system="user"),
                 Raises(ValueError, "user=", "by[0]="), id="compare-system-is-user"),
    pytest.param(lambda: prm.compare_per_user(PER_USER, ["ndcg@2"]),
                 Raises(ValueError, "'ndcg@2'"), id="cpu-metric-missing"),
    pytest.param(lambda: prm.compare_per_user(PER_USER, []), Raises(ValueError, "metrics"),
                 id="cpu-metrics-empty"),
    pytest.param(lambda: prm.compare_per_user(PER_USER, ["user"]), Raises(ValueError, "'user'"),
                 id="cpu-metric-is-key"),
    pytest.param(lambda: prm.compare_per_user(_at_user_1(PER_USER, "map@2", math.nan)),
                 Raises(ValueError, "'map@2'", "1 NaN"), id="cpu-nan"),
    pytest.param(lambda: prm.compare_per_user(_at_user_1(PER_USER, "map@2", math.inf)),
                 Raises(ValueError, "'map@2'", "1 infinite", "'user': 1"), id="cpu-inf"),
    pytest.param(lambda: prm.compare_per_user(PER_USER.with_columns(pl.col("mrr").cast(str)), ["mrr"]),
                 Raises(TypeError, "'mrr'", "String"), id="cpu-string-metric"),
    pytest.param(lambda: prm.compare_per_user(pl.concat([PER_USER, PER_USER])),
                 Raises(ValueError, "repeating", "'user'"), id="cpu-duplicates"),
    pytest.param(lambda: prm.compare_per_user(PER_USER.clear()),
                 Raises(ValueError, "two systems"), id="cpu-empty"),
    pytest.param(lambda: prm.curves(RECS, TRUTH, ["precision"], k=[0, 1]),
                 Raises(ValueError, "k", "0"), id="curves-k-zero"),
    pytest.param(lambda: prm.curves(RECS, TRUTH, ["precision"], k=[]),
                 Raises(ValueError, "k is empty"), id="curves-k-empty"),
    pytest.param(lambda: prm.curves(RECS, TRUTH, ["precision"], k=[1.5]),
                 Raises(TypeError, "k", "1.5"), id="curves-k-float"),
    pytest.param(lambda: prm.curves(RECS, TRUTH, ["precision"], k=True),
                 Raises(TypeError, "k", "True"), id="curves-k-bool"),
    pytest.param(lambda: prm.curves(RECS, TRUTH, ["precision"], k="12"),
                 Raises(TypeError, "k"), id="curves-k-str"),
    pytest.param(lambda: prm.curves(RECS, TRUTH, ["precision@2"], k=[1]),
                 Raises(ValueError, "'precision@2'"), id="curves-metric-with-k"),
    pytest.param(lambda: prm.curves(RECS, TRUTH, ["precison"], k=[1]),
                 Raises(ValueError, "'precison'"), id="curves-unknown"),
    pytest.param(lambda: prm.curves(RECS, TRUTH, ["precision"], k=[1], ci=2),
                 Raises(ValueError, "ci", "2"), id="curves-ci"),
    pytest.param(lambda: prm.report(pl.DataFrame({"a": [1]})),
                 Raises(ValueError, "prm.compare", "'system'"), id="report-not-a-comparison"),
    pytest.param(lambda: prm.report("table"), Raises(TypeError, "str"), id="report-str"),
    pytest.param(lambda: prm.report(prm.compare_per_user(PER_USER), format="docx"),
                 Raises(ValueError, "format", "'docx'"), id="report-format"),
    pytest.param(lambda: prm.report(prm.compare_per_user(PER_USER), digits=-1),
                 Raises(ValueError, "digits", "-1"), id="report-digits"),
]  # fmt: skip


@pytest.mark.parametrize(("call", "expected"), ANALYSIS_CASES)
def test_analysis(call: Callable[[], Any], expected: Raises) -> None:
    before = MODELS.clone(), PER_USER.clone()
    check(call, expected)
    assert_frame_equal(MODELS, before[0])
    assert_frame_equal(PER_USER, before[1])


def test_curves_by_hand() -> None:
    # precision@1: user 1's top item a misses, user 2's c hits: 1/2; precision@3: one hit
    # in three slots for each user (missing slots are misses): 1/3; repeated k once
    result = prm.curves(RECS, TRUTH, ["precision"], k=[3, 1, 1])
    assert result.sort("k").rows() == [
        ("precision", 1, 0.5),
        ("precision", 3, pytest.approx(1 / 3)),
    ]


# ----------------------------------------------------------------- list measures

ITEMS = pl.DataFrame({"item": ["a", "b", "c", "d"], "cat": ["x", "y", "x", "y"]})
LIST_CASES = [
    # coverage@2: a, b, c of 4 catalog items are recommended: 3/4
    pytest.param(lambda: prm.list_metrics(RECS, ["coverage@2"], items=ITEMS), value(0.75),
                 id="coverage"),
    pytest.param(lambda: prm.list_metrics(RECS, ["coverage@2"]), Raises(ValueError, "items="),
                 id="coverage-no-items"),
    pytest.param(lambda: prm.list_metrics(RECS, ["coverage@2"], items=ITEMS.rename({"item": "x"})),
                 Raises(ValueError, "items", "'item'"), id="items-no-item-column"),
    pytest.param(lambda: prm.list_metrics(RECS, ["coverage@2"], items=ITEMS.clear()),
                 Raises(ValueError, "3 distinct item(s)", "catalog"), id="items-empty"),
    pytest.param(lambda: prm.list_metrics(RECS, ["coverage@2"], items=pl.concat([ITEMS, ITEMS])),
                 Raises(ValueError, "items", "duplicated"), id="items-duplicated"),
    pytest.param(lambda: prm.list_metrics(RECS, ["coverage@2"], items=_with(ITEMS, item=[1, 2, 3, 4])),
                 Raises(TypeError, "'item'", "Int64"), id="items-int-ids"),
    pytest.param(lambda: prm.list_metrics(RECS, ["ild@2"], items=ITEMS),
                 Raises(ValueError, "category="), id="ild-no-category"),
    pytest.param(lambda: prm.list_metrics(RECS, ["ild@2"], items=ITEMS, category="genre"),
                 Raises(ValueError, "'genre'"), id="ild-category-missing"),
    pytest.param(lambda: prm.list_metrics(RECS, ["ild@2"], items=_with(ITEMS, cat=["x", None, "x", "y"]), category="cat"),
                 Raises(ValueError, "'cat'", "without a category"), id="ild-category-null"),
    pytest.param(lambda: prm.list_metrics(RECS, ["novelty@2"], interactions=pl.DataFrame({"user": [9, None], "item": ["a", "b"]})),
                 Raises(ValueError, "interactions", "'user'", "null"), id="interactions-null"),
    pytest.param(lambda: prm.list_metrics(RECS, ["novelty@2"], interactions=pl.DataFrame({"user": ["9"], "item": ["a"]})),
                 Raises(TypeError, "'user'", "interactions"), id="interactions-id-dtype"),
    pytest.param(lambda: prm.list_metrics(RECS, ["map@2"]), Raises(ValueError, "'map'"),
                 id="accuracy-metric"),
    pytest.param(lambda: prm.list_metrics(RECS, ["long_tail@2"], interactions=TRUTH, head_share=2),
                 Raises(ValueError, "head_share", "2"), id="head-share"),
    pytest.param(lambda: prm.evaluate(RECS, TRUTH, ["coverage@2"], items=["a", "b"]),
                 Raises(TypeError, "items", "list"), id="evaluate-items-list"),
    pytest.param(lambda: prm.evaluate(RECS, None, ["coverage@0"], items=ITEMS),
                 Raises(ValueError, "'coverage@0'"), id="evaluate-list-k-zero"),
]  # fmt: skip


@pytest.mark.parametrize(("call", "expected"), LIST_CASES)
def test_list_measures(call: Callable[[], Any], expected: Any) -> None:
    before = RECS.clone(), ITEMS.clone()
    check(call, expected)
    assert_frame_equal(RECS, before[0])
    assert_frame_equal(ITEMS, before[1])


# ----------------------------------------------------------------- pandas


@pytest.mark.skipif(not HAS_PANDAS, reason="needs pandas and pyarrow")
class TestPandas:
    """pandas-only shapes: index, column labels, object columns, nullable dtypes."""

    @staticmethod
    def _cases() -> list[Any]:
        import numpy as np  # noqa: PLC0415 - with pandas only
        import pandas as pd  # noqa: PLC0415

        recs, truth = RECS.to_pandas(), TRUTH.to_pandas()
        multi = recs.copy()
        multi.columns = pd.MultiIndex.from_tuples([("a", name) for name in recs.columns])
        mixed_item = recs.assign(item=pd.Series(["a", 2, 3.5], dtype=object))
        mixed_user = recs.assign(user=pd.Series([1, "1", 2], dtype=object))
        nullable = recs.astype({"rank": "Int64"})
        nullable.loc[1, "rank"] = pd.NA
        duplicated = pd.DataFrame([[1, "a", 1, 2]], columns=["user", "item", "rank", "rank"])
        return [
            # a non-default index plays no part: MAP@2 as in the base example
            (recs.set_index(pd.Index([10, 20, 30])), truth.set_index(pd.Index(["x", "y"])), {},
             value(MAP2)),
            (recs.astype({"item": "category"}), truth, {}, value(MAP2)),
            (recs.iloc[:0], truth, {}, value(0.0)),
            (recs, truth.iloc[:0], {}, value(None)),
            (multi, truth, {}, Raises(TypeError, "recs", "not strings", "('a', 'user')")),
            (duplicated, truth, {}, Raises(ValueError, "recs", "duplicated column", "'rank'")),
            (mixed_item, truth, {}, Raises(TypeError, "recs column 'item'", "object")),
            (mixed_user, truth, {}, Raises(TypeError, "recs column 'user'", "object")),
            (recs.set_index("user"), truth, {}, Raises(ValueError, "'user'", "index")),
            (nullable, truth, {}, NULL_RANK),
            (recs.assign(rank=[1.0, np.nan, 1.0]), truth, {}, Raises(TypeError, "'rank'")),
            (recs.assign(score=[0.9, np.nan, 0.3]), truth, {"score": "score"},
             Raises(ValueError, "'score'", "1 null")),
            (recs, truth, {"user": None}, Raises(TypeError, "user")),
        ]  # fmt: skip

    def test_evaluate(self) -> None:
        for recs, truth, options, expected in self._cases():
            before = _snapshot(recs), _snapshot(truth)
            check(lambda r=recs, t=truth, o=options: r.rank.evaluate(t, ["map@2"], **o), expected)
            assert_unchanged(before[0], recs)
            assert_unchanged(before[1], truth)

    def test_positions_and_compare(self) -> None:
        import pandas as pd  # noqa: PLC0415 - with pandas only

        recs = RECS.to_pandas().set_index(pd.Index([5, 6, 7]))
        before = recs.copy(deep=True)
        check(lambda: recs.rank.positions(0), Raises(ValueError, "k", ">= 1"))
        check(lambda: recs.rank.positions(True), Raises(TypeError, "k", "bool"))
        per_user = PER_USER.to_pandas()
        check(lambda: prm.compare_per_user(per_user, ["ndcg@2"]), Raises(ValueError, "'ndcg@2'"))
        assert_unchanged(before, recs)


# ----------------------------------------------------------------- files: Kaggle and TREC


@pytest.fixture
def files(tmp_path: Path) -> Path:
    texts = {
        "sub.csv": "customer_id,prediction\nc1,A B\nc2,C\n",
        "sol.csv": "customer_id,prediction\nc1,B\nc2,C D\n",
        "header.csv": "customer_id,prediction\n",
        "empty.csv": "",
        "junk.csv": "a b c\n",
        "run.txt": "q1 Q0 d1 1 0.9 r\nq1 Q0 d2 2 0.8 r\n",
        "qrels.txt": "q1 0 d2 1\n",
        "short_qrels.txt": "q1 0 d2\n",
        "text_grade.txt": "q1 0 d2 x\n",
        "nan_run.txt": "q1 Q0 d1 1 nan r\n",
        "recs.csv": "user,item,rank\n1,a,1\n1,b,2\n2,c,1\n",
        "truth.csv": "user,item\n1,b\n2,c\n",
        "models.csv": "model,user,item,rank\na,1,a,1\na,1,b,2\nb,1,b,1\nb,2,c,1\na,2,c,1\n",
        "header_recs.csv": "user,item,rank\n",
        "text_rank.csv": "user,item,rank\n1,a,1\n1,b,second\n",
        "fraction_rank.csv": "user,item,rank\n1,b,1.5\n2,c,1\n",
        "ragged.csv": "user,item,rank\n1,a,1\n1,b,2,9\n",
    }
    for name, text in texts.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    (tmp_path / "latin1.csv").write_bytes(b"\xff\xfeuser,item\n1,a\n")
    (tmp_path / "latin1_run.txt").write_bytes(b"q1 Q0 d\xe9 1 0.9 r\n")
    (tmp_path / "folder").mkdir()
    return tmp_path


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        # c1: B at 2 of [A, B] -> AP@2 1/2 (one relevant); c2: C at 1, D missed -> AP@2
        # (1/1) / min(2, 2) = 1/2; mean 1/2
        (lambda d: kaggle.score_submission(d / "sub.csv", d / "sol.csv", "map@2"), 0.5),
        (lambda d: kaggle.score_submission(d / "nope.csv", d / "sol.csv", "map@2"),
         Raises(FileNotFoundError, "nope.csv")),
        (lambda d: kaggle.score_submission(d / "folder", d / "sol.csv", "map@2"),
         Raises(ValueError, "folder", "directory")),
        (lambda d: kaggle.score_submission(d / "empty.csv", d / "sol.csv", "map@2"),
         Raises(ValueError, "empty.csv", "empty")),
        (lambda d: kaggle.score_submission(d / "junk.csv", d / "sol.csv", "map@2"),
         Raises(ValueError, "junk.csv", "line 1")),
        (lambda d: kaggle.score_submission(d / "sub.csv", d / "header.csv", "map@2"),
         Raises(ValueError, "header.csv")),
        (lambda d: kaggle.score_submission(d / "sub.csv", d / "sol.csv", "map@"),
         Raises(ValueError, "'map@'")),
        (lambda d: kaggle.score_submission(d / "sub.csv", d / "sol.csv"),
         Raises(ValueError, "metric=", "preset=")),
        (lambda d: kaggle.score_submission(d / "sub.csv", d / "sol.csv", preset="kdd"),
         Raises(ValueError, "'kdd'")),
        (lambda d: kaggle.score_submission([1, 2], d / "sol.csv", "map@2"),
         Raises(TypeError, "submission", "list")),
        (lambda d: kaggle.score_submission(d / "sub.csv", d / "sol.csv", "map@2", unknown_ids="x"),
         Raises(ValueError, "unknown_ids", "'x'")),
        (lambda d: trec.read_trec_run(d / "nope.txt"), Raises(FileNotFoundError, "nope.txt")),
        (lambda d: trec.read_trec_run(d / "folder"), Raises(ValueError, "folder", "directory")),
        (lambda d: trec.read_trec_run(d / "nan_run.txt"),
         Raises(ValueError, "nan_run.txt", "line 1", "score")),
        (lambda d: trec.read_trec_run(d / "latin1_run.txt"),
         Raises(ValueError, "latin1_run.txt", "UTF-8")),
        (lambda d: trec.read_trec_run(d / "run.txt", ranks="rank"), Raises(ValueError, "ranks")),
        (lambda d: trec.read_trec_qrels(d / "short_qrels.txt"),
         Raises(ValueError, "short_qrels.txt", "4", "fields")),
        (lambda d: trec.read_trec_qrels(d / "text_grade.txt"),
         Raises(ValueError, "text_grade.txt", "relevance")),
        # trec_eval: d2 (relevant) at rank 2 of q1: AP = 1/2
        (lambda d: trec.trec_eval(trec.read_trec_qrels(d / "qrels.txt"),
                                  trec.read_trec_run(d / "run.txt"), "map")["value"][0], 0.5),
        (lambda d: trec.trec_eval(trec.read_trec_qrels(d / "qrels.txt"),
                                  trec.read_trec_run(d / "run.txt").clear(), "map"),
         Raises(ValueError, "run", "no rows")),
        # any frame kind is read (pandas qrels too); what is no frame is refused
        (lambda d: trec.trec_eval(trec.read_trec_qrels(d / "qrels.txt").to_pandas(),
                                  trec.read_trec_run(d / "run.txt"), "map")["value"][0], 0.5),
        (lambda d: trec.trec_eval(trec.read_trec_qrels(d / "qrels.txt").to_dict(),
                                  trec.read_trec_run(d / "run.txt"), "map"),
         Raises(TypeError, "qrels", "DataFrame", "dict")),
        (lambda d: trec.trec_eval(trec.read_trec_qrels(d / "qrels.txt"),
                                  trec.read_trec_run(d / "run.txt"), "map",
                                  relevance_level=math.nan),
         Raises(ValueError, "relevance_level", "nan")),
        (lambda d: trec.trec_eval(trec.read_trec_qrels(d / "qrels.txt"),
                                  trec.read_trec_run(d / "run.txt"), "mapp"),
         Raises(ValueError, "'mapp'")),
    ],
)  # fmt: skip
def test_files(files: Path, call: Callable[[Path], Any], expected: Any) -> None:
    contents = {path: path.read_bytes() for path in files.iterdir() if path.is_file()}
    if isinstance(expected, Raises):
        check(lambda: call(files), expected)
    else:
        assert call(files) == pytest.approx(expected)
    assert {path: path.read_bytes() for path in contents} == contents


# ----------------------------------------------------------------- the command line


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(list(argv))
    return status, out.getvalue(), err.getvalue()


EVALUATE = ("evaluate", "recs.csv", "truth.csv", "-m", "map@2")
CLI_CASES = [
    (EVALUATE, None),
    (("evaluate", "nope.csv", "truth.csv", "-m", "map@2"), "nope.csv: no such file"),
    (("evaluate", "folder", "truth.csv", "-m", "map@2"), "folder: is a directory"),
    (("evaluate", "empty.csv", "truth.csv", "-m", "map@2"), "empty.csv: the file is empty"),
    (("evaluate", "header_recs.csv", "truth.csv", "-m", "map@2"), "header_recs.csv: the file has no rows"),
    (("evaluate", "latin1.csv", "truth.csv", "-m", "map@2"), "latin1.csv, line 1: not UTF-8"),
    (("evaluate", "ragged.csv", "truth.csv", "-m", "map@2"), "ragged.csv: cannot be read as CSV"),
    (("evaluate", "text_rank.csv", "truth.csv", "-m", "map@2"),
     "text_rank.csv: column 'rank' must hold whole numbers (positions, 1 = top), but 1 value(s) "
     "are not, e.g. 'second' on data row 2"),
    (("evaluate", "fraction_rank.csv", "truth.csv", "-m", "map@2"), "'rank' (rank) must hold integer"),
    ((*EVALUATE, "--output", "truth.csv"), "--output truth.csv: is the input file truth.csv"),
    ((*EVALUATE, "--per-user", "recs.csv"), "--per-user recs.csv: is the input file recs.csv"),
    ((*EVALUATE, "--output", "folder"), "--output folder: is a directory"),
    (("evaluate", "recs.csv", "truth.csv", "-m", "ndcg@1.5"), "'ndcg@1.5'"),
    ((*EVALUATE, "--by", "model"), "'model'"),
    ((*EVALUATE, "--relevance-level", "nan"), "relevance_level must be a finite number"),
    (("kaggle", "sub.csv", "sol.csv", "--metric", "map@2"), None),
    (("kaggle", "empty.csv", "sol.csv", "--metric", "map@2"), "empty.csv: the file is empty"),
    (("kaggle", "sub.csv", "sol.csv", "--metric", "map@2", "--per-user", "sol.csv"),
     "is the input file sol.csv"),
    (("trec", "qrels.txt", "run.txt", "-m", "map"), None),
    (("trec", "qrels.txt", "nope.txt", "-m", "map"), "nope.txt: no such file"),
    (("trec", "qrels.txt", "latin1_run.txt", "-m", "map"), "latin1_run.txt, line 1: not UTF-8"),
    (("trec", "short_qrels.txt", "run.txt", "-m", "map"), "short_qrels.txt, line 1"),
    (("trec", "qrels.txt", "run.txt", "-m", "map", "--output", "run.txt"), "is the input file run.txt"),
    (("compare", "models.csv", "truth.csv", "--metrics", "map@2"), None),
    (("compare", "recs.csv", "truth.csv", "--metrics", "map@2"), "system column 'model'"),
    (("compare", "models.csv", "truth.csv", "--metrics", "map@2", "--ci", "2"), "ci must be between"),
    (("compare", "text_rank.csv", "truth.csv", "--metrics", "map@2"), "text_rank.csv: column 'rank'"),
]  # fmt: skip


@pytest.mark.parametrize(("argv", "error"), CLI_CASES, ids=[" ".join(a) for a, _ in CLI_CASES])
def test_command_line(
    files: Path, monkeypatch: pytest.MonkeyPatch, argv: tuple[str, ...], error: str | None
) -> None:
    monkeypatch.chdir(files)
    contents = {path: path.read_bytes() for path in files.iterdir() if path.is_file()}
    status, out, err = _cli(*argv)
    if error is None:
        assert (status, err) == (0, "")
        assert out.strip()
    else:
        assert status == 2
        assert "Traceback" not in err
        lines = [line for line in err.splitlines() if ": error: " in line]
        assert len(lines) == 1, err  # one line, after any warnings
        assert err.rstrip("\n").endswith(lines[0])
        assert lines[0].startswith(f"rankmetrics {argv[0]}: error: ")
        assert error in lines[0]
    assert {path: path.read_bytes() for path in contents} == contents


def test_command_line_means_by_hand(files: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(files)
    status, out, _ = _cli(*EVALUATE, "--format", "csv")
    assert status == 0
    assert out.split() == ["map@2", str(MAP2)]


# ----------------------------------------------------------------- a small random search

DTYPES = {
    "int": (pl.Int64, lambda n: list(range(1, n + 1))),
    "uint8": (pl.UInt8, lambda n: list(range(1, n + 1))),
    "string": (pl.String, lambda n: [str(i) for i in range(1, n + 1)]),
    "float": (pl.Float64, lambda n: [i + 0.5 for i in range(n)]),
    "bool": (pl.Boolean, lambda n: [i % 2 == 0 for i in range(n)]),
    "date": (pl.Date, lambda n: [dt.date(2024, 1, 1 + i) for i in range(n)]),
    "decimal": (pl.Decimal(10, 2), lambda n: [Decimal(i) for i in range(n)]),
    "null": (pl.Null, lambda n: [None] * n),
    "list": (pl.List(pl.Int64), lambda n: [[i] for i in range(n)]),
}


@st.composite
def messy(draw: st.DrawFn) -> tuple[pl.DataFrame, pl.DataFrame, dict[str, Any]]:
    n = draw(st.integers(0, 4))

    def column(role: str) -> pl.Series:
        kind = draw(st.sampled_from(sorted(DTYPES)))
        dtype, values = DTYPES[kind]
        data = values(n)
        if n and draw(st.booleans()):
            data[draw(st.integers(0, n - 1))] = None
        return pl.Series(role, data, dtype=dtype)

    recs = pl.DataFrame([column("user"), column("item"), column("rank")])
    truth = pl.DataFrame([column("user"), column("item"), column("rel")])
    options: dict[str, Any] = draw(
        st.sampled_from([{}, {"relevance": "rel"}, {"by": "model"}, {"score": "rank"}])
    )
    return recs, truth, options


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=messy(), metric=st.sampled_from(["map@2", "ndcg@3", "mrr", "precision@1", "recall"]))
def test_random_messy_frames(
    case: tuple[pl.DataFrame, pl.DataFrame, dict[str, Any]], metric: str
) -> None:
    recs, truth, options = case
    before = recs.clone(), truth.clone()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", prm.IdOverlapWarning)
        try:
            result = prm.evaluate(recs, truth, [metric], **options)
        except (ValueError, TypeError) as error:
            assert_clear(error, Raises(type(error)))
        else:
            # a number came out: it must be a score (0..1) or null, never NaN or inf
            score = result.get_column(metric)[0]
            assert score is None or 0.0 <= score <= 1.0
    assert_frame_equal(recs, before[0])
    assert_frame_equal(truth, before[1])
