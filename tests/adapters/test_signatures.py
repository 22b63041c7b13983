"""Every public surface takes the shared keyword options from their one declaration.

``polars_rankmetrics.options`` declares the column roles, the
conventions and the list inputs once (``EvaluateOptions``); each surface takes
them as ``**options: Unpack[EvaluateOptions]`` and copies none by hand. These
tests pin that, with the resolved annotations and defaults (not just the
names), so that a keyword added, retyped or re-defaulted on one surface only
fails here.
"""

from __future__ import annotations

import inspect
import re
import typing
from collections.abc import Callable
from typing import Any

import polars as pl
import pytest

import polars_rankmetrics as prm
from polars_rankmetrics import namespace
from polars_rankmetrics import options as declared
from polars_rankmetrics.cli import build_parser

pd = pytest.importorskip("pandas")
from polars_rankmetrics import pandas as prm_pd  # noqa: E402 - after the pandas check

OPTIONS = set(declared.DEFAULTS)
STATISTICS = set(declared.STATISTICS)
UNPACKED = typing.Unpack[declared.EvaluateOptions]  # type: ignore[misc]
# compare takes the statistics options as well: one declaration of both
COMPARE_UNPACKED = typing.Unpack[declared.CompareOptions]  # type: ignore[misc]


def _forwarders() -> dict[str, Callable[..., Any]]:
    frame = pl.DataFrame({"user": [1], "item": ["a"], "rank": [1]})
    found: dict[str, Callable[..., Any]] = {
        "evaluate": prm.evaluate,
        "per_user_parts": prm.per_user_parts,
        "compare": prm.compare,
        "curves": prm.curves,
        "pandas.evaluate": prm_pd.evaluate,
    }
    for kind, space in (
        ("DataFrame", namespace.RankFrameNamespace(frame)),
        ("LazyFrame", namespace.RankLazyFrameNamespace(frame.lazy())),
        ("pandas", pd.DataFrame({"a": [1]}).rank),
    ):
        for name in ("evaluate", "compare", "curves"):
            found[f"{kind}.rank.{name}"] = getattr(space, name)
    try:
        from polars_rankmetrics import spark  # noqa: PLC0415 - only with pyspark
    except ImportError:
        pass
    else:
        found["spark.evaluate"] = spark.evaluate
    return found


FORWARDERS = _forwarders()


def _hints(function: Callable[..., Any]) -> dict[str, Any]:
    target = getattr(function, "__func__", function)
    return typing.get_type_hints(target, include_extras=True)


@pytest.mark.parametrize("name", list(FORWARDERS))
def test_the_options_come_from_their_one_declaration(name: str) -> None:
    function = FORWARDERS[name]
    parameters = inspect.signature(function).parameters
    own = STATISTICS if name.endswith("compare") else set()
    copied = sorted((OPTIONS | own).intersection(parameters))
    assert not copied, f"{name} copies the shared option(s) {copied} by hand"
    variadic = [p for p in parameters.values() if p.kind is inspect.Parameter.VAR_KEYWORD]
    assert [p.name for p in variadic] == ["options"], name
    expected = COMPARE_UNPACKED if name.endswith("compare") else UNPACKED
    assert _hints(function)["options"] == expected, name


@pytest.mark.parametrize(
    "function",
    [
        prm.positions,
        prm_pd.positions,
        namespace.RankFrameNamespace.positions,
        namespace.RankLazyFrameNamespace.positions,
    ],
)
def test_positions_take_their_options_from_their_declaration(function: Any) -> None:
    parameters = inspect.signature(function).parameters
    assert not sorted(set(declared.POSITIONS).intersection(parameters))
    unpacked = typing.Unpack[declared.PositionOptions]  # type: ignore[misc]
    assert _hints(function)["options"] == unpacked
    assert list(typing.get_type_hints(declared.PositionOptions)) == list(declared.POSITIONS)


def test_compare_per_user_takes_the_statistics_from_their_declaration() -> None:
    parameters = inspect.signature(prm.compare_per_user).parameters
    assert not sorted(STATISTICS.intersection(parameters))
    unpacked = typing.Unpack[declared.StatisticsOptions]  # type: ignore[misc]
    assert _hints(prm.compare_per_user)["options"] == unpacked
    assert list(typing.get_type_hints(declared.StatisticsOptions)) == list(declared.STATISTICS)
    hints = typing.get_type_hints(declared.CompareOptions)
    assert list(hints) == [*declared.STATISTICS, *declared.DEFAULTS]
    # a misspelt statistic gets the closest one
    scores = pl.DataFrame({"model": ["a", "b"], "user": [1, 1], "m": [0.1, 0.2]})
    with pytest.raises(TypeError, match=r"'tset'.*did you mean 'test'"):
        prm.compare_per_user(scores, baseline="a", tset="t")  # type: ignore[call-arg]


@pytest.mark.parametrize("name", [name for name in FORWARDERS if ".rank." in name])
def test_each_method_is_its_function_less_the_frame(name: str) -> None:
    """Same keyword parameters, annotations and defaults as the function it forwards to."""
    method = FORWARDERS[name]
    function = {"evaluate": prm.evaluate, "compare": prm.compare, "curves": prm.curves}[
        name.rsplit(".", 1)[1]
    ]
    if name.startswith("pandas.") and name.endswith("evaluate"):
        function = prm_pd.evaluate
    own = inspect.signature(method).parameters
    theirs = inspect.signature(function).parameters
    keywords = [p for p in theirs.values() if p.kind is inspect.Parameter.KEYWORD_ONLY]
    assert [p.name for p in keywords] == [
        p.name for p in own.values() if p.kind is inspect.Parameter.KEYWORD_ONLY
    ]
    method_hints, function_hints = _hints(method), _hints(function)
    for parameter in [*keywords, theirs["options"]]:
        assert own[parameter.name].default == parameter.default, (name, parameter.name)
        assert method_hints[parameter.name] == function_hints[parameter.name], (
            name,
            parameter.name,
        )
    assert method.__doc__ == function.__doc__


def test_every_declared_option_has_a_default_and_a_type() -> None:
    hints = typing.get_type_hints(declared.EvaluateOptions)
    assert set(hints) == OPTIONS
    assert list(hints) == list(declared.DEFAULTS)
    filled = declared.read({}, function="evaluate")
    assert dict(filled) == dict(declared.DEFAULTS)


def test_the_command_line_offers_every_convention_with_its_declared_choices() -> None:
    parser = build_parser()
    evaluate_parser = next(
        action.choices["evaluate"]
        for action in parser._actions
        if isinstance(action.choices, dict) and "evaluate" in action.choices
    )
    offered = {action.dest: action for action in evaluate_parser._actions}
    hints = typing.get_type_hints(declared.ConventionOptions)
    for name, hint in hints.items():
        assert name in offered, f"rankmetrics evaluate has no --{name.replace('_', '-')}"
        literals = [
            value
            for arg in typing.get_args(hint)
            for value in (typing.get_args(arg) if typing.get_origin(arg) is typing.Literal else ())
        ]
        if literals:
            assert list(offered[name].choices) == literals, name


def test_an_unknown_keyword_is_refused_with_the_closest_option() -> None:
    recs = pl.DataFrame({"user": [1], "item": ["a"], "rank": [1]})
    with pytest.raises(
        TypeError,
        match=r"evaluate\(\) got an unexpected keyword argument 'scroe'; did you mean 'score'\?",
    ):
        prm.evaluate(recs, recs, ["mrr"], scroe="s")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"compare.*'tie'.*did you mean 'ties'"):
        prm.compare(recs, recs, ["mrr"], tie="first")  # type: ignore[call-arg]


def _documented_options() -> dict[str, tuple[str, str]]:
    """evaluate's "Other Parameters": each name with its stated type and default."""
    doc = inspect.getdoc(prm.evaluate) or ""
    section = doc[doc.index("Other Parameters") : doc.index("\nReturns")]
    found: dict[str, tuple[str, str]] = {}
    for line in section.splitlines():
        head = re.match(r"^([a-z_, ]+) : (.*), default (.*)$", line)
        if head is None:
            continue
        names = [name.strip() for name in head.group(1).split(",")]
        # "None (the preset's)": the words after a default explain it
        defaults = [d.strip() for d in re.sub(r" \(.*\)$", "", head.group(3)).split(",")]
        if len(defaults) == 1:
            defaults *= len(names)
        assert len(defaults) == len(names), f"defaults of {names} do not pair up: {line}"
        for name, default in zip(names, defaults, strict=True):
            assert name not in found, f"{name} documented twice"
            found[name] = (head.group(2), default)
    return found


def _literal_choices(hint: Any) -> set[str]:
    """The strings a (possibly nested) Literal in ``hint`` admits."""
    if typing.get_origin(hint) is typing.Literal:
        return {arg for arg in typing.get_args(hint) if isinstance(arg, str)}
    return set().union(*(_literal_choices(arg) for arg in typing.get_args(hint)))


def test_evaluate_documents_every_option_with_its_declared_default_and_choices() -> None:
    documented = _documented_options()
    assert set(documented) == OPTIONS, (
        f"evaluate's Other Parameters document {sorted(set(documented) - OPTIONS)} "
        f"beyond the declaration and miss {sorted(OPTIONS - set(documented))}"
    )
    hints = typing.get_type_hints(declared.EvaluateOptions)
    for name, (kind, default) in documented.items():
        expected = declared.DEFAULTS[name]
        stated = None if default == "None" else default.strip('"')
        assert stated == expected, f"{name}: documented default {default}, declared {expected!r}"
        choices = _literal_choices(hints[name])
        if choices:
            listed = set(re.findall(r'"([^"]+)"', kind.split("}")[0]))
            assert listed == choices, (
                f"{name}: documented {sorted(listed)}, declared {sorted(choices)}"
            )
        if type(None) in typing.get_args(hints[name]) and "," not in kind.split(" or ")[0]:
            assert "None" in kind, f"{name} accepts None but its documented type omits it"
