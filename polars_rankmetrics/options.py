"""The keyword options every surface shares, declared once: roles, conventions, list inputs.

``evaluate``, ``per_user_parts``, ``compare``, ``curves``, the ``.rank``
namespace, the pandas accessor and ``spark.evaluate`` take exactly these
keywords as ``**options: Unpack[EvaluateOptions]`` and forward them; none of
them copies a keyword by hand, so none can drift (a default, a ``Literal``
missing a value). Type checkers see every keyword and its type through
``Unpack`` (PEP 692); :func:`read` checks the names at run time and fills the
defaults, which live here and nowhere else (:data:`DEFAULTS`).
``tests/adapters/test_signatures.py`` pins every public signature to these
declarations.
"""

from __future__ import annotations

import difflib
import sys
from collections.abc import Mapping, Sequence
from typing import Any, Final, TypedDict, cast

if sys.version_info >= (3, 11):
    from typing import Unpack
else:  # pragma: no cover - Python 3.10
    from typing_extensions import Unpack

from polars_rankmetrics.conventions import (
    Conventions,
    Denominator,
    Duplicates,
    Gain,
    Ideal,
    NonpositiveScores,
    Preset,
    Ties,
    Unjudged,
    UserSets,
    UsersWithoutRecs,
    UsersWithoutTruth,
)

__all__ = [
    "DEFAULTS",
    "FRAME_OPTIONS",
    "ConventionOptions",
    "EvaluateOptions",
    "ListInputs",
    "Roles",
    "Unpack",
    "conventions_given",
    "names",
    "read",
]


class Roles(TypedDict, total=False):
    """The columns by role, and the groups evaluated side by side.

    ``user`` (default ``"user"``), ``item`` (``"item"``), ``rank``
    (``"rank"``), ``score`` (``None``: ranks are given), ``relevance``
    (``None``: every truth row is relevant with grade 1) and ``by``
    (``None``: one group).
    """

    user: str
    item: str
    rank: str
    score: str | None
    relevance: str | None
    by: str | Sequence[str] | None


class ConventionOptions(TypedDict, total=False):
    """The conventions of :class:`polars_rankmetrics.Conventions`, one keyword each.

    Every one defaults to ``None``: the value of the ``conventions`` preset
    (``"default"`` unless given), which may also be a
    :class:`~polars_rankmetrics.Conventions` object.
    """

    denominator: Denominator | None
    gain: Gain | Mapping[float, float] | None
    ties: Ties | None
    relevance_level: float | None
    users_without_recs: UsersWithoutRecs | None
    users_without_truth: UsersWithoutTruth | None
    duplicates: Duplicates | None
    ideal: Ideal | None
    unjudged: Unjudged | None
    nonpositive_scores: NonpositiveScores | None
    user_sets: UserSets | None
    conventions: Preset | Conventions


class ListInputs(TypedDict, total=False):
    """What the measures of the lists themselves read besides the lists (default ``None``).

    ``interactions``: the training history (novelty, arp, long_tail,
    calibration); ``items``: the item catalog (coverage, gini, ild,
    calibration); ``category``: its category column (ild, calibration);
    ``propensity``: the column of ``items`` holding each item's propensity,
    or of the truth holding each (user, item) pair's (the debiased measures
    ``ips_*``/``snips_*``; ``None``: estimated from ``interactions``).
    ``group``: its item-group column (awrf, ndkl); ``group_weight``: the
    column of each item's weights in its groups (a list beside a list of
    groups; default an equal split).
    """

    interactions: Any
    items: Any
    category: str | None
    propensity: str | None
    group: str | None
    group_weight: str | None


class EvaluateOptions(Roles, ConventionOptions, ListInputs, total=False):
    """Every keyword option of ``evaluate`` and of each surface that forwards to it."""


#: The default of every option: the one place it is written.
DEFAULTS: Final[Mapping[str, object]] = {
    "user": "user",
    "item": "item",
    "rank": "rank",
    "score": None,
    "relevance": None,
    "by": None,
    **dict.fromkeys(ConventionOptions.__annotations__, None),
    "conventions": "default",
    "interactions": None,
    "items": None,
    "category": None,
    "propensity": None,
    "group": None,
    "group_weight": None,
}


#: The options that hold frames: the frame boundary reads them at each face, as it reads
#: ``recs`` and the truth (:mod:`polars_rankmetrics._frames`).
FRAME_OPTIONS: Final = ("interactions", "items")


def names(declaration: type) -> tuple[str, ...]:
    """The keyword names of one of the declarations above, in declaration order."""
    return tuple(declaration.__annotations__)


def conventions_given(options: EvaluateOptions) -> dict[str, Any]:
    """The convention keywords of ``options``, as ``conventions.resolve`` takes them."""
    return {name: options.get(name) for name in names(ConventionOptions) if name != "conventions"}


def read(given: Mapping[str, object], *, function: str) -> EvaluateOptions:
    """The options of a call of ``function``: unknown keywords refused, every default filled in.

    Examples
    --------
    >>> read({"score": "s"}, function="evaluate")["score"]
    's'
    >>> read({"scroe": "s"}, function="evaluate")
    Traceback (most recent call last):
    ...
    TypeError: evaluate() got an unexpected keyword argument 'scroe'; did you mean 'score'?
    """
    unknown = [name for name in given if name not in DEFAULTS]
    if unknown:
        close = difflib.get_close_matches(unknown[0], list(DEFAULTS), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else f"; options are {list(DEFAULTS)}"
        raise TypeError(f"{function}() got an unexpected keyword argument {unknown[0]!r}{hint}")
    return cast("EvaluateOptions", {**DEFAULTS, **given})
