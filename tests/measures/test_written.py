"""Measures users write (``polars_rankmetrics.measures``): the same numbers as built-in ones.

Built-in measures re-written with the public API (``Sum`` over hits, lists and
judgements; a value reading m_u, k, parameters) must give the built-in
numbers per user and as means on hypothesis-generated data under every
convention the generator draws (ties, duplicates, relevance levels, users
policies, folds and models), and the same curves. A measure with no built-in
twin is checked against a loop over the positions the package assigns. The
declaration's errors are checked when it is registered, each naming the
problem.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import polars as pl
import pytest
from hypothesis import given, settings

import polars_rankmetrics as prm
from polars_rankmetrics.measures import (
    Measure,
    Param,
    Row,
    Sum,
    User,
    register_measure,
    registered_measures,
    unregister_measure,
)
from tests.measures.test_properties import PROFILE, Case, by_columns, cases

# each example evaluates a dozen metrics twice: half the property suite's examples
FEWER = settings(PROFILE, max_examples=max(PROFILE.max_examples // 2, 1))


def _min_k(user: User) -> pl.Expr:
    return pl.min_horizontal(user.n_relevant, user.k).cast(pl.Float64)


def _dcg_term(row: Row) -> pl.Expr:
    return row.grade / (row.position.cast(pl.Float64) + 1).log(2)


REWRITTEN: dict[str, Measure] = {
    "w_precision": Measure(
        "w_precision",
        sums={"hits": Sum("hits", lambda row: row.relevant)},
        value=lambda user: user.sum("hits") / user.k,
        direction="higher",
        cutoff="required",
    ),
    "w_recall": Measure(
        "w_recall",
        sums={"hits": Sum("hits", lambda row: row.relevant)},
        value=lambda user: user.sum("hits") / user.n_relevant,
        direction="higher",
    ),
    "w_rr": Measure(
        "w_rr",
        sums={
            "rr": Sum(
                "hits",
                lambda row: pl.when(row.relevant & (row.relevant_above == 1)).then(
                    1.0 / row.position
                ),
            )
        },
        value=lambda user: user.sum("rr"),
        direction="higher",
    ),
    "w_hit_rate": Measure(
        "w_hit_rate",
        sums={"hits": Sum("hits", lambda row: row.relevant)},
        value=lambda user: (user.sum("hits") > 0).cast(pl.Float64),
        direction="higher",
    ),
    "w_ap": Measure(
        "w_ap",
        sums={
            "p": Sum(
                "hits", lambda row: pl.when(row.relevant).then(row.relevant_above / row.position)
            )
        },
        value=lambda user: user.sum("p") / _min_k(user),
        direction="higher",
        cutoff="required",
    ),
    "w_dcg": Measure(
        "w_dcg",
        sums={"dcg": Sum("hits", _dcg_term)},
        value=lambda user: user.sum("dcg"),
        direction="higher",
    ),
    "w_pooled_recall": Measure(
        "w_pooled_recall",
        sums={"hits": Sum("hits", lambda row: row.relevant)},
        value=lambda user: (user.sum("hits"), _min_k(user)),
        direction="higher",
        cutoff="required",
        aggregation="pooled",
    ),
    "w_fallout": Measure(
        "w_fallout",
        sums={"fp": Sum("judgements", lambda row: (row.grade >= 0) & ~row.relevant)},
        value=lambda user: pl.when(user.n_nonrelevant > 0).then(
            user.sum("fp") / user.n_nonrelevant
        ),
        direction="lower",
        fill=None,
    ),
    "w_rbp": Measure(
        "w_rbp",
        sums={
            "w": Sum(
                "hits",
                lambda row: pl.when(row.relevant).then(row.number("p") ** (row.position - 1)),
            )
        },
        value=lambda user: (1 - user.number("p")) * user.sum("w"),
        direction="higher",
        params=[Param("p", 0.8, doc="persistence")],
    ),
}
# each written measure's built-in twin, and the conventions under which they agree
TWINS: dict[str, tuple[str, dict[str, Any]]] = {
    "w_precision": ("precision", {}),
    "w_recall": ("recall", {}),
    "w_rr": ("mrr", {}),
    "w_hit_rate": ("hit_rate", {}),
    "w_ap": ("map", {"denominator": "min_k"}),
    # dcg keeps its raw grades for a user whose grades are all below relevance_level;
    # a written measure is defined for users with a relevant item (the others get fill)
    "w_dcg": ("dcg", {"gain": "linear", "relevance_level": None}),
    "w_pooled_recall": ("pooled_recall", {}),
    "w_fallout": ("fallout", {}),
    "w_rbp": ("rbp", {}),
}
CUTOFF_REQUIRED = {"w_precision", "w_ap", "w_pooled_recall"}


@pytest.fixture(scope="module", autouse=True)
def _registered() -> Iterator[None]:
    for measure in REWRITTEN.values():
        register_measure(measure)
    yield
    for name in REWRITTEN:
        unregister_measure(name)


def _labels(k: int | None) -> list[tuple[str, str]]:
    pairs = []
    for name, (twin, _) in TWINS.items():
        if k is None and name in CUTOFF_REQUIRED:
            continue
        at = "" if k is None else f"@{k}"
        pairs.append((f"{name}{at}", f"{twin}{at}"))
    return pairs


def _agrees(name: str, kwargs: dict[str, Any]) -> bool:
    """Whether the conventions of ``kwargs`` are those under which ``name`` equals its twin."""
    trec = kwargs.get("conventions", "default") == "trec"
    for key, value in TWINS[name][1].items():
        given_value = "relevant" if trec and key == "denominator" else kwargs.get(key)
        if key == "relevance_level" and given_value is not None:
            return False
        if given_value is not None and given_value != value:
            return False
    return True


def _same(a: float | None, b: float | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


@FEWER
@given(cases())
def test_written_measures_equal_their_built_in_twins(case: Case) -> None:
    k = 3
    pairs = [(w, b) for w, b in _labels(k) if _agrees(w.partition("@")[0], case.kwargs)]
    labels = [label for pair in pairs for label in pair]
    for per_user in (True, False):
        got = prm.evaluate(case.recs, case.truth, labels, per_user=per_user, **case.kwargs)
        for row in got.to_dicts():
            for written, builtin in pairs:
                assert _same(row[written], row[builtin]), (written, row, case)


@pytest.mark.properties
@FEWER
@given(cases())
def test_written_measures_draw_their_twins_curves(case: Case) -> None:
    names = [w for w, _ in _labels(None) if _agrees(w, case.kwargs)] + [
        name for name in CUTOFF_REQUIRED if _agrees(name, case.kwargs)
    ]
    twins = [TWINS[name][0] for name in names]
    kwargs = dict(case.kwargs)
    curves = prm.curves(case.recs, case.truth, [*names, *twins], k=[1, 2, 4, 7], **kwargs)
    by = by_columns(case)
    wide = curves.pivot(on="metric", index=[*by, "k"], values="value")
    for row in wide.to_dicts():
        for name, twin in zip(names, twins, strict=True):
            assert _same(row[name], row[twin]), (name, row, case)


def test_a_measure_without_twin_by_hand() -> None:
    # graded hits discounted by position over m_u: user 1 holds a (grade 2) at 1 and
    # c (grade 1) at 3 of m_u = 3 relevant: (2/1 + 1/3) / 3; user 2: b (grade 3, the
    # higher score) at 1 of 1: 3/1; user 3 recommended nothing: 0 (users_without_recs="zero")
    register_measure(
        Measure(
            "graded_credit",
            sums={"credit": Sum("hits", lambda row: row.grade / row.position)},
            value=lambda user: user.sum("credit") / user.n_relevant,
            direction="higher",
        )
    )
    try:
        recs = pl.DataFrame(
            {"user": [1, 1, 1, 2, 2], "item": list("abcab"), "score": [0.9, 0.5, 0.1, 0.3, 0.8]}
        )
        truth = pl.DataFrame(
            {"user": [1, 1, 1, 2, 3], "item": list("acdbx"), "rel": [2, 1, 1, 3, 1]}
        )
        got = prm.evaluate(
            recs, truth, ["graded_credit@3", "graded_credit@1"], score="score",
            relevance="rel", per_user=True,
        )  # fmt: skip
        assert got.to_dicts() == [
            {
                "user": 1,
                "graded_credit@3": pytest.approx((2 + 1 / 3) / 3),
                "graded_credit@1": pytest.approx(2 / 3),
            },
            {"user": 2, "graded_credit@3": 3.0, "graded_credit@1": 3.0},
            {"user": 3, "graded_credit@3": 0.0, "graded_credit@1": 0.0},
        ]
        mean = prm.evaluate(recs, truth, "graded_credit@3", score="score", relevance="rel")
        assert mean.item() == pytest.approx(((2 + 1 / 3) / 3 + 3.0 + 0.0) / 3)
    finally:
        unregister_measure("graded_credit")


@FEWER
@given(cases())
def test_a_measure_without_twin_against_a_loop(case: Case) -> None:
    """dhits = (1/m_u) sum of 1/position over relevant hits within k, from the package's positions."""
    register_measure(
        Measure(
            "dhits_loop",
            sums={"credit": Sum("hits", lambda row: pl.when(row.relevant).then(1 / row.position))},
            value=lambda user: user.sum("credit") / user.n_relevant,
            direction="higher",
            fill=None,
        )
    )
    try:
        kwargs = {**case.kwargs, "users_without_truth": "exclude", "users_without_recs": "zero"}
        kwargs.pop("conventions", None)
        got = prm.evaluate(case.recs, case.truth, "dhits_loop@3", per_user=True, **kwargs)
        recall = prm.evaluate(case.recs, case.truth, "recall@3", per_user=True, **kwargs)
        assert got.select(pl.exclude("dhits_loop@3")).equals(recall.select(pl.exclude("recall@3")))
        positions = _ranked_relevant(case, kwargs)
        keys = [name for name in got.columns if name != "dhits_loop@3"]
        for row in got.to_dicts():
            key = tuple(row[name] for name in keys)
            found, m_u = positions.get(key, ([], None))
            if m_u is None:  # no recommendations: every sum 0
                assert row["dhits_loop@3"] == 0.0
                continue
            expected = sum(1 / p for p in found if p <= 3) / m_u
            assert row["dhits_loop@3"] == pytest.approx(expected, rel=1e-12), (row, case)
    finally:
        unregister_measure("dhits_loop")


def _ranked_relevant(
    case: Case, kwargs: dict[str, Any]
) -> dict[tuple[Any, ...], tuple[list[int], int]]:
    """(by..., user) -> (positions of its relevant recommended items, m_u), by plain loops."""
    labeled = prm.evaluate(
        case.recs, case.truth, ["n_relevant_retrieved@1000", "recall"], per_user=True, **kwargs
    )
    del labeled  # evaluate accepted the case: the frames are valid for these conventions
    user, item = kwargs["user"], kwargs["item"]
    by = by_columns(case)
    score, rank = kwargs.get("score"), kwargs.get("rank", "rank")
    ranked = prm.positions(
        case.recs, score=score, rank=rank if score is None else "rank", user=user, item=item,
        by=by or None, ties=kwargs["ties"], duplicates=kwargs["duplicates"],
    )  # fmt: skip
    position = "rank" if score is not None else rank
    truth_by = [name for name in by if name in case.truth.columns]
    level = kwargs.get("relevance_level")
    relevance = kwargs.get("relevance")
    relevant: dict[tuple[Any, ...], set[Any]] = {}
    for row in case.truth.to_dicts():
        grade = 1.0 if relevance is None else row[relevance]
        if grade > 0 and (level is None or grade >= level):
            relevant.setdefault((*(row[n] for n in truth_by), row[user]), set()).add(row[item])
    out: dict[tuple[Any, ...], tuple[list[int], int]] = {}
    for row in ranked.to_dicts():
        key = (*(row[n] for n in by), row[user])
        truth_key = (*(row[n] for n in truth_by), row[user])
        items = relevant.get(truth_key, set())
        found, _ = out.get(key, ([], len(items)))
        if row[item] in items:
            found.append(row[position])
        out[key] = (found, len(items))
    return out


# ------------------------------------------------------------------ declarations refused


def _try(**changes: Any) -> None:
    fields: dict[str, Any] = {
        "name": "mine",
        "sums": {"hits": Sum("hits", lambda row: row.relevant)},
        "value": lambda user: user.sum("hits"),
        "direction": "higher",
    }
    register_measure(Measure(**{**fields, **changes}))


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"name": "NDCG"}, "lower case letters"),
        ({"name": "ndcg"}, "taken by the built-in measure 'ndcg'"),
        ({"aliases": ["ap"]}, "taken by the built-in measure 'map'"),
        ({"sums": {}}, "declares no sums"),
        ({"sums": {"x": Sum("everything", 1.0)}}, "rows are one of"),  # type: ignore[arg-type]
        ({"value": lambda user: user.sum("other")}, "does not declare"),
        (
            {"sums": {"hits": Sum("list", lambda row: row.relevant)}},
            "rows 'list' have no column 'relevant'",
        ),
        ({"value": lambda user: user.sum("hits") / user.k}, "declare cutoff='required'"),
        (
            {"sums": {"hits": Sum("hits", 1.0), "unused": Sum("hits", 1.0)}},
            "reads none of the sums ['unused']",
        ),
        ({"direction": "up"}, "direction must be one of"),
        ({"aggregation": "median"}, "aggregation must be one of"),
        ({"aggregation": "pooled"}, "gives (numerator, denominator)"),
        ({"value": lambda user: 1.0}, "must be a Polars expression"),
        ({"fill": math.nan}, "fill must be a finite number"),
        ({"value": lambda user: user.param("h")}, "no parameter 'h'"),
    ],
)
def test_a_bad_declaration_is_refused_when_registered(
    changes: dict[str, Any], message: str
) -> None:
    with pytest.raises((ValueError, TypeError), match=_escaped(message)):
        _try(**changes)
    assert "mine" not in registered_measures()


def _escaped(text: str) -> str:
    import re  # noqa: PLC0415 - only here

    return re.escape(text)


def test_a_parameter_is_checked_in_the_metric_string() -> None:
    def positive(value: float) -> float:
        if value <= 0:
            raise ValueError(f"mine's h must be > 0, got {value}")
        return value

    _try(
        params=[Param("h", 2.0, check=positive)],
        value=lambda user: user.sum("hits") * user.number("h"),
    )
    try:
        recs = pl.DataFrame({"user": [1], "item": ["a"], "rank": [1]})
        truth = pl.DataFrame({"user": [1], "item": ["a"]})
        assert prm.evaluate(recs, truth, ["mine", "mine(h=3)"]).row(0) == (2.0, 3.0)
        with pytest.raises(ValueError, match="mine's h must be > 0"):
            prm.evaluate(recs, truth, "mine(h=-1)")
        with pytest.raises(ValueError, match="unknown parameter 'p=1'"):
            prm.evaluate(recs, truth, "mine(p=1)")
    finally:
        unregister_measure("mine")


def test_registering_again_replaces_and_unregistering_removes() -> None:
    recs = pl.DataFrame({"user": [1, 1], "item": ["a", "b"], "rank": [1, 2]})
    truth = pl.DataFrame({"user": [1, 1], "item": ["a", "b"]})
    _try()
    assert prm.evaluate(recs, truth, "mine").item() == 2.0
    _try(value=lambda user: user.sum("hits") * 10)  # a notebook cell edited and run again
    assert prm.evaluate(recs, truth, "mine").item() == 20.0
    assert registered_measures().count("mine") == 1
    unregister_measure("mine")
    with pytest.raises(ValueError, match="unknown metric 'mine'"):
        prm.evaluate(recs, truth, "mine")
    with pytest.raises(ValueError, match="no measure you registered is called 'ndcg'"):
        unregister_measure("ndcg")


def test_a_written_measure_refuses_tie_averaging_by_name() -> None:
    _try()
    try:
        recs = pl.DataFrame({"user": [1, 1], "item": ["a", "b"], "score": [1.0, 1.0]})
        truth = pl.DataFrame({"user": [1], "item": ["a"]})
        with pytest.raises(ValueError, match="mine"):
            prm.evaluate(recs, truth, "mine@1", score="score", ties="average")
    finally:
        unregister_measure("mine")


def test_its_declaration_is_public_and_typed() -> None:
    measure = Measure(
        "typed", sums={"n": Sum("list", 1.0)}, value=lambda user: user.sum("n"), direction="none"
    )
    assert register_measure(measure) is measure
    try:
        assert prm.Measure is Measure
        assert prm.Sum is Sum
        assert Sum.__module__ == "polars_rankmetrics.measures"
        recs = pl.DataFrame({"user": [1, 1, 2], "item": ["a", "b", "a"], "rank": [1, 2, 1]})
        truth = pl.DataFrame({"user": [1, 2], "item": ["a", "a"]})
        got = prm.evaluate(recs, truth, ["typed@1", "typed"], per_user=True)
        assert got.rows() == [(1, 1.0, 2.0), (2, 1.0, 1.0)]
    finally:
        unregister_measure("typed")
