"""What the plan reads: frame kinds, column roles, the specs of recs and truth, the requests.

Everything is written once on ``LazyFrame``; a ``DataFrame`` goes
``lazy() ... collect()`` (:func:`to_lazy`, :func:`like`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import polars as pl

from polars_rankmetrics import _measures as registry
from polars_rankmetrics._measures._registry import Context, Measure, part_column
from polars_rankmetrics._names import PREFIX
from polars_rankmetrics._pipeline.parse import MetricSpec
from polars_rankmetrics.conventions import Conventions

Ties = Literal["item_desc", "item_asc", "input"]


Duplicates = Literal["error", "first"]


TIES: tuple[Ties, ...] = ("item_desc", "item_asc", "input")


DUPLICATES: tuple[Duplicates, ...] = ("error", "first")


DEFAULT_RELEVANCE = "rel"


_POSITION = f"{PREFIX}rank"  # positions derived from a score, when ``rank`` names another role


def as_list(columns: str | Sequence[str] | None) -> list[str]:
    """Normalise a ``by=`` argument to a list of column names."""
    if columns is None:
        return []
    if isinstance(columns, str):
        return [columns]
    return list(columns)


def to_lazy(frame: object, *, name: str) -> pl.LazyFrame:
    """Return ``frame`` as a LazyFrame, refusing anything that is not a Polars frame.

    The faces read every other kind into Polars (:mod:`polars_rankmetrics._frames`)
    before the engine sees it.
    """
    if isinstance(frame, pl.LazyFrame):
        return frame
    if isinstance(frame, pl.DataFrame):
        return frame.lazy()
    raise TypeError(f"{name} must be a polars DataFrame or LazyFrame, got {type(frame).__name__}")


def like(
    template: pl.DataFrame | pl.LazyFrame, result: pl.LazyFrame
) -> pl.DataFrame | pl.LazyFrame:
    """Return ``result`` as the kind of frame ``template`` is (lazy stays lazy)."""
    if isinstance(template, pl.LazyFrame):
        return result
    return result.collect()


@dataclass(frozen=True)
class RecsSpec:
    """Column roles and conventions for a recommendations frame."""

    user: str
    item: str
    rank: str
    score: str | None
    by: tuple[str, ...]
    ties: Ties = "item_desc"
    duplicates: Duplicates = "error"

    @property
    def list_keys(self) -> list[str]:
        """The columns identifying one ranked list: the ``by`` groups and the user."""
        return [*self.by, self.user]


@dataclass(frozen=True)
class TruthSpec:
    """Column roles and conventions for a ground-truth frame."""

    user: str
    item: str
    relevance: str | None
    relevance_level: float | None
    shared_by: tuple[str, ...]
    # the subtopic column, when a requested measure reads the subtopic judgements: the
    # truth then has one row per (user, subtopic, item)
    subtopic: str | None = None

    @property
    def grade(self) -> str:
        """Name of the graded-relevance column in labeled frames."""
        return self.relevance or DEFAULT_RELEVANCE


@dataclass(frozen=True)
class Roles:
    user: str
    item: str
    rank: str
    score: str | None
    relevance: str | None
    by: tuple[str, ...]


@dataclass(frozen=True)
class ListInputs:
    """What the measures of the lists themselves read besides the lists (beyond accuracy)."""

    interactions: Any
    items: Any
    category: str | None
    propensity: str | None = None
    group: str | None = None
    group_weight: str | None = None
    subtopic: str | None = None


@dataclass(frozen=True)
class Request:
    """One requested metric with its measure and expression context."""

    spec: MetricSpec
    measure: Measure
    ctx: Context

    def part_names(self) -> list[str]:
        return [part_column(self.spec.label, suffix) for suffix in self.measure.suffixes]


def metric_requests(
    specs: Sequence[MetricSpec], roles: Roles, conv: Conventions
) -> tuple[list[Request], str, list[str]]:
    """Each metric with its measure and context, the position column and the key columns."""
    position = roles.rank
    if roles.score is not None and roles.rank in {roles.user, roles.item, roles.score, *roles.by}:
        # the positions are derived: give them a private name rather than overwrite a role
        position = _POSITION
    keys = [*roles.by, roles.user]
    for spec in specs:
        measure = registry.lookup(spec.name)
        for name in (part_column(spec.label, s) for s in measure.suffixes):
            if name in keys:
                raise ValueError(
                    f"metric {spec.label!r} would write column {name!r}, which is already a "
                    f"key column (by/user); rename that column"
                )
    requests = [
        Request(
            spec,
            registry.lookup(spec.name),
            Context(spec.k, dict(spec.params), conv, rank=position),
        )
        for spec in specs
    ]
    return requests, position, keys
