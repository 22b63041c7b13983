"""One number, every surface: each registered measure agrees everywhere, or is refused by name.

For every measure of the registry (so a new measure is covered without editing
this file), under a sample of conventions, on data with tied scores, graded
and negative grades, users without recommendations, users without truth and
users with judged non-relevant items only, the value of ``evaluate`` on an
eager frame is the reference; every other surface gives it to 1e-12 (nulls in
the same places) or refuses the metric with an error that names it:

* ``evaluate`` lazy and streaming, the ``.rank`` namespace, pandas;
* ``compare``'s per-system rows (its ``mean``); it refuses exactly the
  measures whose users are not combined by a mean (the measure's own
  declaration says which);
* ``curves`` at k; it refuses exactly the measures without a cutoff (a measure without
  a curve step is evaluated at each k);
* ``rankmetrics evaluate`` on Parquet and CSV files;
* Spark (``-m spark``, :func:`test_spark_gives_the_same_number`).

The registry includes the measures written outside the package in
``tests/user_measures.py`` (with :mod:`polars_rankmetrics.measures`, as a user
writes them): the command line loads that file with ``--measures``, and
Spark's workers receive them with the plan.

A metric the reference refuses (e.g. ``ties="average"`` for a measure that has
no tie-averaged form) must be refused by every surface too.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import polars as pl
import pytest

import polars_rankmetrics as prm
from polars_rankmetrics._measures import Measure, all_measures
from polars_rankmetrics.cli import main as cli_main
from tests import user_measures

CUT = 3
ROLES: dict[str, Any] = {"score": "score", "relevance": "rel"}

_A = [
    ("u1", "i1", 0.9), ("u1", "i2", 0.8), ("u1", "i3", 0.8), ("u1", "i4", 0.5), ("u1", "i5", 0.4),
    ("u2", "i2", 0.7), ("u2", "i6", 0.7), ("u2", "i7", 0.7), ("u2", "i1", 0.2),
    ("u3", "i3", 0.9), ("u3", "i9", 0.1),
    ("u4", "i1", 0.6), ("u4", "i5", 0.5),
    ("u5", "i8", 0.9), ("u5", "i4", 0.9), ("u5", "i10", 0.3), ("u5", "i11", 0.2),
    ("u8", "i5", 0.3),
]  # fmt: skip
_B = [
    ("u1", "i3", 0.6), ("u1", "i1", 0.6), ("u1", "i6", 0.5),
    ("u2", "i7", 0.9), ("u2", "i1", 0.8), ("u2", "i2", 0.1), ("u2", "i8", 0.1),
    ("u3", "i4", 0.5),
    ("u5", "i10", 0.9), ("u5", "i11", 0.8), ("u5", "i12", 0.8), ("u5", "i8", 0.1),
    ("u8", "i2", 0.3), ("u8", "i1", 0.2),
]  # fmt: skip
RECS = pl.DataFrame(
    [("A", *row) for row in _A] + [("B", *row) for row in _B],
    schema={"model": pl.String, "user": pl.String, "item": pl.String, "score": pl.Float64},
    orient="row",
)
_TRUTH = [
    ("u1", "i2", 3), ("u1", "i4", 1), ("u1", "i6", 0), ("u1", "i12", 2),
    ("u2", "i6", 1), ("u2", "i7", 2), ("u2", "i1", -1),
    ("u4", "i1", 0), ("u4", "i5", 0),
    ("u5", "i4", 2), ("u5", "i11", 1), ("u5", "i13", 1), ("u5", "i10", 0),
    ("u6", "i3", 1), ("u6", "i9", 2),
    ("u8", "i1", 1),
]  # fmt: skip
TRUTH = pl.DataFrame(
    _TRUTH, schema={"user": pl.String, "item": pl.String, "rel": pl.Int64}, orient="row"
).with_columns(
    # each judgement's subtopic, read by the diversity measures (alpha_ndcg, err_ia...)
    subtopic=pl.Series(["a", "b", "a", "b", "a", "a", "b", "a", "b", "a", "b", "b", "a", "a",
                        "b", "a"]),
)  # fmt: skip
INTERACTIONS = pl.DataFrame(
    {
        "user": ["u1", "u1", "u2", "u3", "u3", "u4", "u5", "u7", "u7", "u7"],
        "item": ["i1", "i3", "i1", "i2", "i1", "i5", "i4", "i1", "i6", "i9"],
    }
)
ITEMS = pl.DataFrame(
    {
        "item": [f"i{n}" for n in range(1, 14)],
        "genre": ["x", "y", "x", "z", "y", "x", "z", "z", "y", "x", "x", "y", "z"],
        "side": ["a", "a", "b", "a", "b", "b", "a", "a", "a", "b", "a", "b", "a"],
    }
)
LIST_INPUTS: dict[str, Any] = {
    "interactions": INTERACTIONS,
    "items": ITEMS,
    "category": "genre",
    "group": "side",
}

CONVENTIONS: dict[str, dict[str, Any]] = {
    "default": {},
    "trec": {"conventions": "trec"},
    "exponential_gain": {"gain": "exponential"},
    "ties_average": {"ties": "average"},
    "ties_item_asc": {"ties": "item_asc", "denominator": "relevant"},
    "users_policies": {"users_without_truth": "zero", "users_without_recs": "exclude"},
}


def _label(measure: Measure) -> str:
    return measure.name if measure.cutoff == "none" else f"{measure.name}@{CUT}"


MEASURES = {_label(measure): measure for measure in all_measures()}
LABELS = list(MEASURES)

Values = dict[str, dict[str, float | None]]  # label -> model -> value
Outcome = Values | Exception


def _values(frame: pl.DataFrame, labels: list[str]) -> Values:
    rows = frame.sort("model").to_dicts()
    return {label: {row["model"]: row[label] for row in rows} for label in labels}


def _evaluate_eager(labels: list[str], conv: Mapping[str, Any]) -> pl.DataFrame:
    return prm.evaluate(RECS, TRUTH, labels, by="model", **ROLES, **LIST_INPUTS, **conv)


def _reference(conv_name: str) -> dict[str, Values | Exception]:
    """Each label alone through eager ``evaluate``: its values, or its refusal."""
    found: dict[str, Values | Exception] = {}
    for label in LABELS:
        try:
            found[label] = _values(_evaluate_eager([label], CONVENTIONS[conv_name]), [label])
        except (ValueError, TypeError) as error:
            found[label] = error
    return found


_REFERENCES: dict[str, dict[str, Values | Exception]] = {}


def reference(conv_name: str) -> dict[str, Values | Exception]:
    if conv_name not in _REFERENCES:
        _REFERENCES[conv_name] = _reference(conv_name)
    return _REFERENCES[conv_name]


# ------------------------------------------------------------------ the surfaces


def _lazy(labels: list[str], conv: Mapping[str, Any]) -> pl.DataFrame:
    plan = prm.evaluate(
        RECS.lazy(), TRUTH.lazy(), labels, by="model", **ROLES, **LIST_INPUTS, **conv
    )
    return plan.collect()


def _streaming(labels: list[str], conv: Mapping[str, Any]) -> pl.DataFrame:
    plan = prm.evaluate(
        RECS.lazy(), TRUTH.lazy(), labels, by="model", **ROLES, **LIST_INPUTS, **conv
    )
    return plan.collect(engine="streaming")


def _namespace(labels: list[str], conv: Mapping[str, Any]) -> pl.DataFrame:
    return RECS.rank.evaluate(TRUTH, labels, by="model", **ROLES, **LIST_INPUTS, **conv)  # type: ignore[attr-defined,no-any-return]


def _pandas(labels: list[str], conv: Mapping[str, Any]) -> pl.DataFrame:
    pytest.importorskip("pandas")
    inputs = {
        "interactions": INTERACTIONS.to_pandas(),
        "items": ITEMS.to_pandas(),
        "category": "genre",
        "group": "side",
    }
    result = RECS.to_pandas().rank.evaluate(
        TRUTH.to_pandas(), labels, by="model", **ROLES, **inputs, **conv
    )
    assert type(result).__module__.startswith("pandas")
    return pl.from_pandas(result)


def _compare(labels: list[str], conv: Mapping[str, Any]) -> pl.DataFrame:
    # with a baseline, every system's row (its own, and each comparison with the baseline)
    result = prm.compare(
        RECS, TRUTH, labels, system="model", baseline="A", **ROLES, **LIST_INPUTS, **conv
    )
    return result.pivot(on="metric", index="system", values="mean").rename({"system": "model"})


def _curves(labels: list[str], conv: Mapping[str, Any]) -> pl.DataFrame:
    names = [label.removesuffix(f"@{CUT}") for label in labels]
    result = prm.curves(RECS, TRUTH, names, k=[CUT], by="model", **ROLES, **LIST_INPUTS, **conv)
    renamed = result.with_columns(
        pl.col("metric").replace_strict(dict(zip(names, labels, strict=True)))
    )
    return renamed.pivot(on="metric", index="model", values="value")


def _cli_option(name: str, value: Any) -> list[str]:
    return [f"--{name.replace('_', '-')}", str(value)]


def _cli(suffix: str) -> Callable[[list[str], Mapping[str, Any]], pl.DataFrame]:
    def run(labels: list[str], conv: Mapping[str, Any]) -> pl.DataFrame:
        folder = _cli_folder()
        paths = {}
        for name, frame in {
            "recs": RECS,
            "truth": TRUTH,
            "interactions": INTERACTIONS,
            "items": ITEMS,
        }.items():
            path = folder / f"{name}.{suffix}"
            if not path.exists():
                frame.write_parquet(path) if suffix == "parquet" else frame.write_csv(path)
            paths[name] = str(path)
        argv = [
            "evaluate", paths["recs"], paths["truth"], "-m", *labels, "--by", "model",
            "--score", "score", "--relevance", "rel", "--interactions", paths["interactions"],
            "--items", paths["items"], "--category", "genre", "--group", "side",
            "--format", "json", "--measures", user_measures.__file__,
        ]  # fmt: skip
        for name, value in conv.items():
            argv += _cli_option(name, value)
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = cli_main(argv)
        if status != 0:
            raise ValueError(err.getvalue())
        return pl.DataFrame(json.loads(out.getvalue()))

    return run


_FOLDER: list[Path] = []


def _cli_folder() -> Path:
    return _FOLDER[0]


@pytest.fixture(autouse=True)
def _files(tmp_path_factory: pytest.TempPathFactory) -> None:
    if not _FOLDER:
        _FOLDER.append(tmp_path_factory.mktemp("one_number"))


def _compare_refuses(measure: Measure, conv: Mapping[str, Any]) -> bool:
    del conv
    return measure.unpaired_reason("label") is not None


def _curves_refuses(measure: Measure, conv: Mapping[str, Any]) -> bool:
    # documented: curves draws no tie-averaged curve yet (the tie shares vary with k)
    return measure.cutoff == "none" or conv.get("ties") == "average"


def _never(measure: Measure, conv: Mapping[str, Any]) -> bool:
    del measure, conv
    return False


Surface = Callable[[list[str], Mapping[str, Any]], pl.DataFrame]
Refuses = Callable[[Measure, Mapping[str, Any]], bool]
SURFACES: dict[str, tuple[Surface, Refuses]] = {
    "lazy": (_lazy, _never),
    "streaming": (_streaming, _never),
    "namespace": (_namespace, _never),
    "pandas": (_pandas, _never),
    "compare": (_compare, _compare_refuses),
    "curves": (_curves, _curves_refuses),
    "cli_parquet": (_cli("parquet"), _never),
    "cli_csv": (_cli("csv"), _never),
}  # fmt: skip


def _same(got: float | None, want: float | None) -> bool:
    if got is None or want is None:
        return got is None and want is None
    if math.isnan(want):
        return math.isnan(got)
    return abs(got - want) <= 1e-12 * max(1.0, abs(want))


def _names_it(error: BaseException, label: str) -> bool:
    text = str(error).lower()
    measure = MEASURES[label]
    return any(name in text for name in (label, measure.name, *measure.aliases))


def check_surface(
    surface: Surface,
    refuses: Refuses,
    conv_name: str,
) -> None:
    expected = reference(conv_name)
    conv = CONVENTIONS[conv_name]
    accepted = [
        label
        for label, want in expected.items()
        if not isinstance(want, Exception) and not refuses(MEASURES[label], conv)
    ]
    problems: list[str] = []
    got: Values = {}
    try:
        if accepted:
            got = _values(surface(accepted, conv), accepted)
    except (ValueError, TypeError) as error:
        problems.append(f"the batch of every accepted metric raised {error}")
    for label in accepted:
        want = expected[label]
        assert not isinstance(want, Exception)
        values = got.get(label)
        if values is None:
            try:
                values = _values(surface([label], conv), [label])[label]
            except (ValueError, TypeError) as error:
                problems.append(f"{label}: refused ({error}) where evaluate gives {want[label]}")
                continue
        for model, value in want[label].items():
            if not _same(values.get(model), value):
                problems.append(f"{label} [{model}]: {values.get(model)!r} != evaluate {value!r}")
    for label, want in expected.items():
        if not isinstance(want, Exception) and not refuses(MEASURES[label], conv):
            continue
        try:
            surface([label], conv)
        except (ValueError, TypeError) as error:
            if not _names_it(error, label):
                problems.append(f"{label}: refused without naming it: {error}")
            continue
        problems.append(f"{label}: gave a value where it must be refused")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("conv_name", list(CONVENTIONS))
@pytest.mark.parametrize("surface", list(SURFACES))
def test_every_surface_gives_the_same_number(surface: str, conv_name: str) -> None:
    function, refuses = SURFACES[surface]
    check_surface(function, refuses, conv_name)


def test_the_measures_written_outside_the_package_are_checked() -> None:
    written = {m.name for m in all_measures() if m.written_in}
    assert {"dhits", "judged_share", "pooled_hits", "total_gain"} <= written
    assert {label.partition("@")[0] for label in LABELS} >= written


def test_the_reference_computes_most_measures() -> None:
    """The fixture is rich enough: every measure has a value under the default conventions."""
    refused = {
        label: str(outcome) for label, outcome in reference("default").items()
        if isinstance(outcome, Exception)
    }  # fmt: skip
    assert not refused
    values = reference("default")
    # the two models differ on most measures: a surface mixing them up would be seen
    differing = [
        label for label, outcome in values.items()
        if isinstance(outcome, dict) and outcome[label]["A"] != outcome[label]["B"]
    ]  # fmt: skip
    assert len(differing) >= len(values) * 2 // 3


@pytest.mark.spark
@pytest.mark.parametrize("conv_name", list(CONVENTIONS))
def test_spark_gives_the_same_number(spark: Any, conv_name: str) -> None:
    from polars_rankmetrics import spark as prs  # noqa: PLC0415 - only with pyspark

    def run(labels: list[str], conv: Mapping[str, Any]) -> pl.DataFrame:
        result = prs.evaluate(
            spark.createDataFrame(RECS.to_arrow()),
            spark.createDataFrame(TRUTH.to_arrow()),
            labels,
            by="model",
            interactions=spark.createDataFrame(INTERACTIONS.to_arrow()),
            items=ITEMS,
            category="genre",
            group="side",
            **ROLES,
            **conv,
        )
        frame = pl.from_arrow(result.toArrow())
        assert isinstance(frame, pl.DataFrame)
        return frame

    check_surface(run, _never, conv_name)
