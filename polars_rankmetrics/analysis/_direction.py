"""Which way is better, for every decision: a measure's declared direction, or the user's.

Every measure of the registry declares its direction (``"higher"``,
``"lower"`` or ``"none"``: a descriptive measure whose better side depends on
the goal). A decision (a gate, a one-sided test, wins and losses, the marks of
a report, a ranking of systems, a fusion optimiser) reads it here: the metric
string's measure says, unless the caller's ``direction=`` does (one direction
for every metric, or one per metric). A column that is no metric string (a
per-user score of the user's own) has no declared direction.

A decision then works on the **improvement**: the difference times the sign of
the direction (+1 higher is better, -1 lower is better), so that "better" is
always "larger improvement" and a regression is never reported as a pass. A
decision on a metric without a direction is refused with the reason, naming
the metric and how to give one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeAlias

from polars_rankmetrics._measures import lookup
from polars_rankmetrics._measures._registry import DIRECTIONS, Direction
from polars_rankmetrics._pipeline.parse import metric_spec

__all__ = ["Directions", "GivenDirection", "directions", "require", "sign", "word"]

GivenDirection: TypeAlias = Direction | Mapping[str, Direction] | None
"""``direction=`` as a caller gives it: one for every metric, one per metric, or none."""

Directions = dict[str, Direction | None]
"""Each metric's direction (``None``: not declared, and not given)."""


def declared(label: str) -> Direction | None:
    """The direction the registry declares for a metric string (``None``: not a metric string)."""
    try:
        spec = metric_spec(label)
    except (ValueError, TypeError):
        return None
    return lookup(spec.name).direction


def directions(metrics: Sequence[str], given: GivenDirection) -> Directions:
    """Each metric's direction: the caller's where given, else the registry's.

    A mapping must name only metrics of ``metrics``; a value must be one of
    ``"higher"``, ``"lower"``, ``"none"``.
    """
    if given is None:
        return {metric: declared(metric) for metric in metrics}
    if isinstance(given, str):
        _check(given, "direction")
        return dict.fromkeys(metrics, given)
    if not isinstance(given, Mapping):
        raise TypeError(
            f"direction must be 'higher', 'lower', 'none' or a mapping of metric to one of "
            f"them, got {given!r}"
        )
    unknown = sorted(set(given) - set(metrics))
    if unknown:
        raise ValueError(
            f"direction names {unknown}, which are not among the metrics {list(metrics)}"
        )
    for metric, value in given.items():
        _check(value, f"direction[{metric!r}]")
    return {metric: given.get(metric, declared(metric)) for metric in metrics}


def _check(value: object, what: str) -> None:
    if value not in DIRECTIONS:
        raise ValueError(f"{what} must be one of {list(DIRECTIONS)}, got {value!r}")


def sign(direction: Direction | None) -> float | None:
    """+1 where higher is better, -1 where lower is, ``None`` where neither is declared."""
    return {"higher": 1.0, "lower": -1.0}.get(direction or "none")


def require(
    metric: str, direction: Direction | None, decision: str, *, per_metric: bool = True
) -> float:
    """The sign of ``metric``'s direction, or a refusal saying why ``decision`` needs one.

    ``per_metric``: the caller's ``direction=`` takes a mapping per metric
    (else one word), as the refusal's advice shows.
    """
    found = sign(direction)
    if found is not None:
        return found
    why = (
        "is descriptive: its better side depends on the goal"
        if direction == "none"
        else "is not a metric string of a registered measure, so no direction is declared"
    )
    given = f"{{{metric!r}: 'higher'}}" if per_metric else "'higher'"
    raise ValueError(
        f"{decision} decides which system is better, but {metric!r} {why}; say which way is "
        f"better with direction={given} (or 'lower')"
    )


def word(direction: Direction | None) -> str:
    """How a report or a chart states the direction: ``"higher is better"``..."""
    return {
        "higher": "higher is better",
        "lower": "lower is better",
    }.get(direction or "none", "no better side declared")
