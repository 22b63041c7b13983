"""Metric strings: ``"name"``, ``"name@k"``, ``"name@k1,k2"``, ``"name(p=v)@k"``.

The public faces are :func:`polars_rankmetrics.evaluation.parse_metrics` and
:func:`polars_rankmetrics.evaluation.parse_metric`; names come from the measure
registry (:mod:`polars_rankmetrics._measures`).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from polars_rankmetrics import _measures as registry
from polars_rankmetrics import _validation as v
from polars_rankmetrics._measures._registry import Measure, ParamValue

_PATTERN = re.compile(
    r"^\s*(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*"
    r"(?:\((?P<params>[^()]*)\))?\s*"
    r"(?:@\s*(?P<cutoffs>[0-9]+(?:\s*,\s*[0-9]+)*))?\s*$"
)


@dataclass(frozen=True)
class MetricSpec:
    """One requested metric: its label (the output column), canonical name, cutoff, parameters.

    ``params`` holds every parameter of the measure as ``(name, value)`` pairs,
    defaults filled in (``None``: decided by the data).
    """

    label: str
    name: str
    k: int | None
    params: tuple[tuple[str, ParamValue], ...] = ()


def metric_specs(metrics: str | Sequence[str]) -> list[MetricSpec]:
    """:func:`polars_rankmetrics.evaluation.parse_metrics`: one spec per metric and cutoff."""
    texts = [metrics] if isinstance(metrics, str) else list(metrics)
    specs = [spec for text in texts for spec in _parse(text)]
    if not specs:
        raise ValueError("metrics is empty: ask for at least one, e.g. ['map@12']")
    labels = [spec.label for spec in specs]
    repeated = sorted({label for label in labels if labels.count(label) > 1})
    if repeated:
        raise ValueError(f"metric(s) {repeated} requested twice")
    return specs


def metric_spec(text: str) -> MetricSpec:
    """:func:`polars_rankmetrics.evaluation.parse_metric`: the spec of one metric string."""
    specs = _parse(text)
    if len(specs) != 1:
        raise ValueError(f"{text!r} is {len(specs)} metrics, one per cutoff: use parse_metrics")
    return specs[0]


def _parse(text: object) -> list[MetricSpec]:
    if not isinstance(text, str):
        raise TypeError(f"a metric must be a string like 'map@12', got {text!r}")
    match = _PATTERN.match(text)
    if match is None:
        raise ValueError(
            f"cannot read metric {text!r}: write 'name@k' (e.g. 'ndcg@10'), 'name', "
            "'name@k1,k2' or 'name(param=value)@k'"
        )
    raw_name = match.group("name")
    if registry.canonical(raw_name) is None:
        known = registry.known_names()
        hint = difflib.get_close_matches(raw_name.lower(), known, n=1)
        suggestion = f"; did you mean {hint[0]!r}?" if hint else ""
        note = ""
        if raw_name.lower().startswith("hit"):
            note = (
                ". Note: 'hits@k' here is the hit rate (0 or 1 per user), not ranx's count "
                "of relevant items retrieved, which is 'n_relevant_retrieved@k'"
            )
        raise ValueError(
            f"unknown metric {raw_name!r} in {text!r}{suggestion} (known: {known}){note}"
        )
    measure = registry.lookup(raw_name)
    params = _parse_params(measure, match.group("params"), text)
    raw_cutoffs = match.group("cutoffs")
    cutoffs: list[int | None] = (
        [
            v.check_cutoff(int(part), what=f"the cutoff in {text!r}")
            for part in raw_cutoffs.split(",")
        ]
        if raw_cutoffs
        else [None]
    )
    if measure.cutoff == "required" and cutoffs == [None]:
        raise ValueError(f"{text!r} needs a cutoff, e.g. '{raw_name}@10'")
    if measure.cutoff == "none" and cutoffs != [None]:
        raise ValueError(f"{raw_name!r} takes no cutoff; write {raw_name!r}")
    if len(cutoffs) == 1:
        return [MetricSpec(text, measure.name, cutoffs[0], params)]
    head = text[: text.rindex("@")].strip()
    return [MetricSpec(f"{head}@{k}", measure.name, k, params) for k in cutoffs]


def _parse_params(
    measure: Measure, raw: str | None, text: str
) -> tuple[tuple[str, ParamValue], ...]:
    declared = {param.name: param for param in measure.params}
    given: dict[str, ParamValue] = {}
    if raw is not None and raw.strip():
        if not declared:
            raise ValueError(f"{measure.name!r} takes no parameters, in {text!r}")
        for item in raw.split(","):
            name, sep, value = (part.strip() for part in item.partition("="))
            if not sep or name not in declared:
                raise ValueError(
                    f"unknown parameter {item.strip()!r} in {text!r}: {measure.name!r} "
                    f"takes {sorted(declared)}, written {measure.name}(name=value)"
                )
            if name in given:
                raise ValueError(f"parameter {name!r} given twice in {text!r}")
            param = declared[name]
            if param.kind is str:
                if value not in param.choices:
                    raise ValueError(
                        f"parameter {name!r} in {text!r} must be one of "
                        f"{list(param.choices)}, got {value!r}"
                    )
                given[name] = value
                continue
            try:
                number = float(value) if param.kind is float else int(value)
            except ValueError:
                kind = "an integer" if param.kind is int else "a number"
                raise ValueError(
                    f"parameter {name!r} in {text!r} must be {kind}, got {value!r}"
                ) from None
            given[name] = param.check(number) if param.check else number
    return tuple((param.name, given.get(param.name, param.default)) for param in measure.params)
