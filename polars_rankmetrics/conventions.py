"""The conventions of an evaluation, as one typed object, and the named presets.

Ranking measures differ between libraries and competitions less in their
formulas than in conventions: the AP denominator, the NDCG gain, how equal
scores are ordered, which grade counts as relevant, which users are averaged.
:class:`Conventions` holds them all; :func:`resolve` builds it once from
:func:`polars_rankmetrics.evaluate`'s keyword arguments and a preset, checking
every value there.

A preset **fixes** the conventions that define its measures and only
**defaults** the others:

========================  ===============  ==================================  ====================
convention                ``"default"``    ``"trec"`` (trec_eval 10.0)         ``"ndeval"`` (4.5)
========================  ===============  ==================================  ====================
``denominator``           min_k            relevant (fixed)                    relevant
``gain``                  linear           linear (fixed; a table: ``-mndcg``)  linear
``ideal``                 truth            truth (fixed)                       truth
``ties``                  item_desc        item_desc (fixed)                   item_desc
``relevance_level``       None             None                                None
``users_without_recs``    zero             exclude (``-c`` is ``"zero"``)      exclude (``-c``: 0)
``users_without_truth``   exclude          judged                              judged
``duplicates``            error            error                               error
``unjudged``              keep             keep (``-J`` is ``"remove"``)       keep
``nonpositive_scores``    keep             keep                                keep
``user_sets``             any              any                                 any
========================  ===============  ==================================  ====================

``"ndeval"`` is ndeval's (the TREC Web track's diversity evaluation, 4.5):
the topics of both the run and the qrels count, those without a relevant
subtopic scoring 0 (``-c``: ``users_without_recs="zero"``); equal scores by
docno descending (ndeval ``-traditional``; pyndeval and ir_measures order
them ascending: ``ties="item_asc"``). Its measures' own defaults (alpha 0.5,
NRBP's beta 0.5, the greedy ideal ranking) are the diversity measures'
defaults, and ``rankmetrics trec`` prints them at ndeval's cutoffs 5, 10, 20.

Under ``"default"`` every convention is only a default. Under ``"trec"`` an
explicit value different from a fixed one (``conventions="trec",
denominator="min_k"``) is refused: the result would no longer be trec_eval's,
so the call is contradictory. The users-counted policies are options of
trec_eval itself (``-c``) and may be changed on top of the preset.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from typing import Any, Literal

from polars_rankmetrics import _formulas as formula
from polars_rankmetrics import _validation as v

__all__ = ["CONVENTION_KEYWORDS", "PRESETS", "Conventions", "Preset", "resolve"]

Preset = Literal["default", "trec", "ndeval"]

# the keyword arguments of evaluate (and of per_user_parts, spark.evaluate, the CLI)
# that name a convention: resolve(preset, **{name: value}) takes exactly these
CONVENTION_KEYWORDS = (
    "denominator",
    "gain",
    "ties",
    "relevance_level",
    "users_without_recs",
    "users_without_truth",
    "duplicates",
    "ideal",
    "unjudged",
    "nonpositive_scores",
    "user_sets",
)
Denominator = formula.Denominator
Gain = formula.Gain
GainTable = formula.GainTable
Ties = Literal["item_desc", "item_asc", "input", "average"]
# the orders of equal scores that give each row one position (positions(); "average" does not)
TieOrder = Literal["item_desc", "item_asc", "input"]
Ideal = Literal["truth", "k"]
Unjudged = Literal["keep", "remove"]
NonpositiveScores = Literal["keep", "drop"]
UserSets = Literal["any", "strict"]
Duplicates = Literal["error", "first"]
UsersWithoutRecs = Literal["zero", "exclude"]
UsersWithoutTruth = Literal["exclude", "judged", "zero"]

# the statistics of compare, and which way a measure is better: every Literal once, here
Test = Literal["t", "randomization", "wilcoxon", "tukey_hsd"]
Correction = Literal["holm", "bonferroni", "bh", "none"]
CiMethod = Literal["t", "bootstrap"]
Hypothesis = Literal["difference", "superiority", "noninferiority", "equivalence"]
TESTS: tuple[Test, ...] = ("t", "randomization", "wilcoxon", "tukey_hsd")
HYPOTHESES: tuple[Hypothesis, ...] = ("difference", "superiority", "noninferiority", "equivalence")
CORRECTIONS: tuple[Correction, ...] = ("holm", "bonferroni", "bh", "none")
CI_METHODS: tuple[CiMethod, ...] = ("t", "bootstrap")
# which way is better: "higher", "lower", or "none" for a descriptive measure whose better
# side depends on the goal (ARP, novelty); every decision reads it (METRICS.md)
Direction = Literal["higher", "lower", "none"]
DIRECTIONS: tuple[Direction, ...] = ("higher", "lower", "none")

# rank fusion (analysis/fusion.py), spelt as ranx's fuse(method=..., norm=...) spells them
FusionMethod = Literal[
    "rrf", "sum", "mnz", "anz", "max", "min", "med", "wsum", "bordafuse", "isr", "log_isr"
]
FusionNorm = Literal["min-max", "max", "sum", "zmuv", "rank"]

PRESET_NAMES: tuple[Preset, ...] = ("default", "trec", "ndeval")
_CHOICES: dict[str, tuple[str, ...]] = {
    "denominator": ("min_k", "relevant", "hits", "k"),
    "gain": ("linear", "exponential"),
    "ideal": ("truth", "k"),
    "ties": ("item_desc", "item_asc", "input", "average"),
    "users_without_recs": ("zero", "exclude"),
    "users_without_truth": ("exclude", "judged", "zero"),
    "duplicates": ("error", "first"),
    "unjudged": ("keep", "remove"),
    "nonpositive_scores": ("keep", "drop"),
    "user_sets": ("any", "strict"),
}


def _check_choice(value: object, allowed: tuple[str, ...], *, name: str) -> None:
    v.check_literal(value, allowed, name=name)


def check_gain(gain: object) -> formula.GainSpec:
    """``gain`` as ``"linear"``, ``"exponential"`` or a sorted table of (grade, gain) pairs.

    A mapping ``{grade: gain}`` (trec_eval ``-mndcg.1=3,2=9``) needs grades > 0
    (rows of grade <= 0 never reach DCG) and finite gains >= 0 up to 1e300;
    unlisted grades keep their own value as gain.
    """
    if isinstance(gain, str):
        _check_choice(gain, _CHOICES["gain"], name="gain")
        return gain  # type: ignore[return-value]
    pairs: object = list(gain.items()) if isinstance(gain, Mapping) else gain
    if not isinstance(pairs, (tuple, list)):
        raise TypeError(
            f"gain must be 'linear', 'exponential' or a mapping {{grade: gain}} such as "
            f"{{1: 3, 2: 9}}, got {v.shorten(gain)}"
        )
    table: dict[float, float] = {}
    pair: object
    for pair in pairs:
        if not (isinstance(pair, tuple) and len(pair) == 2):
            raise TypeError(
                f"gain table entries must be (grade, gain) pairs, got {v.shorten(pair)}"
            )
        grade, value = pair
        for what, number in (("grade", grade), ("gain", value)):
            if isinstance(number, bool) or not isinstance(number, numbers.Real):
                raise TypeError(
                    f"gain mapping {what}s must be numbers, got {v.shorten(number)} "
                    f"(e.g. gain={{1: 3, 2: 9}})"
                )
        level, amount = float(grade), float(value)
        if not (math.isfinite(level) and level > 0):
            raise ValueError(
                f"gain mapping: grade {v.shorten(grade)} must be a finite number > 0 (items of "
                "grade <= 0 are never gained: give them no entry)"
            )
        if not (math.isfinite(amount) and 0 <= amount <= formula.GAIN_LIMIT):
            raise ValueError(
                f"gain mapping: the gain of grade {level:g} must be a finite number in "
                f"[0, 1e300], got {v.shorten(value)}"
            )
        if level in table:
            raise ValueError(f"gain mapping: grade {level:g} is given twice")
        table[level] = amount
    return tuple(sorted(table.items()))


def check_level(level: object) -> float | None:
    """``relevance_level`` as a finite float (NumPy numbers accepted), or ``None``."""
    if level is None:
        return None
    if isinstance(level, bool) or not isinstance(level, numbers.Real):
        raise TypeError(f"relevance_level must be a number or None, got {v.shorten(level)}")
    value = float(level)
    if not math.isfinite(value):
        # NaN compares false with every grade: every metric would silently be null
        raise ValueError(f"relevance_level must be a finite number, got {v.shorten(level)}")
    return value


@dataclass(frozen=True)
class Conventions:
    """Every convention of an evaluation, resolved and checked.

    Attributes
    ----------
    denominator
        AP denominator: ``"min_k"`` (Kaggle ``min(m_u, k)``), ``"relevant"``
        (trec_eval, m_u) or ``"hits"``.
    gain
        NDCG/DCG gain: ``"linear"`` (g, trec_eval), ``"exponential"`` (2^g - 1)
        or a table of ``(grade, gain)`` pairs (from a mapping ``{grade: gain}``,
        trec_eval ``-mndcg.1=3,2=9``: unlisted grades gain their own value).
    ideal
        NDCG's ideal DCG: ``"truth"`` (the user's truth sorted by gain) or
        ``"k"`` (k items of the user's highest gain: RecTools' NDCG).
    ties
        Order of equal scores: ``"item_desc"`` (trec_eval), ``"item_asc"``, ``"input"``,
        or ``"average"``: the expected measure over every order of the tied items
        (McSherry & Najork 2008; sklearn ``ndcg_score(ignore_ties=False)``), for
        the measures that implement it.
    relevance_level
        Minimum grade the binary measures count as relevant (trec_eval ``-l``);
        ``None``: every positive grade. Graded measures read the raw grades.
    users_without_recs
        Users with relevant truth and no recommendation: ``"zero"`` (count, score
        0; trec_eval ``-c``) or ``"exclude"``.
    users_without_truth
        Users without relevant truth: ``"exclude"``, ``"judged"`` (those with
        truth rows count; trec_eval) or ``"zero"`` (those with recommendations
        or truth rows count).
    duplicates
        An item recommended twice in a list: ``"error"`` or ``"first"``.
    unjudged
        Recommended items without any truth row: ``"keep"`` or ``"remove"``
        (before positions are assigned: condensed lists, trec_eval ``-J``).
    nonpositive_scores
        Recommendations with a score <= 0: ``"keep"`` or ``"drop"`` (not retrieved).
    user_sets
        ``"any"`` or ``"strict"``: the users of the recommendations and of the
        truth must be the same (ranx's strict comparison).
    preset
        The preset these came from (``"default"``, ``"trec"``, ``"ndeval"``).

    Examples
    --------
    >>> from polars_rankmetrics.conventions import resolve
    >>> resolve("trec", users_without_recs="zero").denominator  # trec_eval -c
    'relevant'
    >>> resolve("trec", denominator="min_k")
    Traceback (most recent call last):
    ...
    ValueError: conventions='trec' fixes denominator='relevant' (trec_eval's definition), \
so denominator='min_k' contradicts it: drop denominator=, or use conventions='default' \
with denominator='min_k'
    """

    denominator: Denominator = "min_k"
    gain: Gain | GainTable = "linear"
    ideal: Ideal = "truth"
    ties: Ties = "item_desc"
    relevance_level: float | None = None
    users_without_recs: UsersWithoutRecs = "zero"
    users_without_truth: UsersWithoutTruth = "exclude"
    duplicates: Duplicates = "error"
    unjudged: Unjudged = "keep"
    nonpositive_scores: NonpositiveScores = "keep"
    user_sets: UserSets = "any"
    preset: Preset = "default"

    def __post_init__(self) -> None:
        for name, allowed in _CHOICES.items():
            if name != "gain":
                _check_choice(getattr(self, name), allowed, name=name)
        _check_choice(self.preset, PRESET_NAMES, name="conventions")
        object.__setattr__(self, "gain", check_gain(self.gain))
        object.__setattr__(self, "relevance_level", check_level(self.relevance_level))


PRESETS: dict[str, Conventions] = {}
# the conventions each preset fixes: an explicit different value is a conflict
FIXED: dict[str, frozenset[str]] = {
    "default": frozenset(),
    # trec_eval's AP divides by every relevant item, its NDCG has linear gain and
    # it orders equal scores by docno descending
    "trec": frozenset({"denominator", "gain", "ideal", "ties"}),
    # ndeval's measures are the diversity measures' defaults: none of these conventions
    # changes them, so none is fixed
    "ndeval": frozenset(),
}
PRESETS["default"] = Conventions()
# trec_eval 10.0 without -c: only queries with a run; a judged query without a
# relevant document scores 0 (num_q counts it)
PRESETS["trec"] = Conventions(
    denominator="relevant",
    users_without_recs="exclude",
    users_without_truth="judged",
    preset="trec",
)


# ndeval 4.5 without -c: the topics of the run and the qrels; a judged topic without a
# relevant subtopic scores 0; its non-intent-aware MAP divides by every relevant document
PRESETS["ndeval"] = Conventions(
    denominator="relevant",
    users_without_recs="exclude",
    users_without_truth="judged",
    preset="ndeval",
)


def _checked(name: str, value: object) -> object:
    """One convention's value, checked (and normalised: a gain mapping becomes a table)."""
    if name == "relevance_level":
        return check_level(value)
    if name == "gain":
        return check_gain(value)
    _check_choice(value, _CHOICES[name], name=name)
    return value


def resolve(conventions: Preset | Conventions = "default", **given: object) -> Conventions:
    """The conventions of a call: the preset, with the keywords given (``None``: not given).

    Parameters
    ----------
    conventions
        A preset name (``"default"``, ``"trec"``, ``"ndeval"``) or a :class:`Conventions`
        object, which then fixes every convention.
    **given
        ``denominator``, ``gain``, ``ideal``, ``ties``, ``relevance_level``,
        ``users_without_recs``, ``users_without_truth``, ``duplicates``,
        ``unjudged``, ``nonpositive_scores``, ``user_sets``; ``None`` takes
        the preset's value.

    Raises
    ------
    ValueError
        An unknown value, a non-finite ``relevance_level``, or a value that
        contradicts one the preset fixes.

    Examples
    --------
    >>> resolve("trec").users_without_truth
    'judged'
    >>> resolve(gain="exponential").gain
    'exponential'
    """
    names = {f.name for f in fields(Conventions)} - {"preset"}
    unknown = set(given) - names
    if unknown:
        raise TypeError(f"unknown convention(s) {sorted(unknown)}; known: {sorted(names)}")
    if isinstance(conventions, Conventions):
        base, fixed = conventions, frozenset(names)
        preset_text = "the Conventions object given"
    else:
        _check_choice(conventions, tuple(PRESETS), name="conventions")
        base, fixed = PRESETS[conventions], FIXED[conventions]
        preset_text = f"conventions={conventions!r}"
    changes: dict[str, Any] = {}
    for name, value in given.items():
        if value is None:
            continue
        checked = _checked(name, value)
        current = getattr(base, name)
        if checked == current:
            continue
        if name == "gain" and base.preset == "trec" and isinstance(checked, tuple):
            # trec_eval's own -mndcg.1=3,2=9: a gain table is trec_eval's definition too
            changes[name] = checked
            continue
        if name in fixed:
            why = " (trec_eval's definition)" if base.preset == "trec" else ""
            other = "conventions='default'" if base.preset != "default" else "a preset"
            shown = formula.gain_label(checked) if name == "gain" else repr(checked)  # type: ignore[arg-type]
            raise ValueError(
                f"{preset_text} fixes {name}={current!r}{why}, so {name}={shown} "
                f"contradicts it: drop {name}=, or use {other} with {name}={shown}"
            )
        changes[name] = checked
    return replace(base, **changes) if changes else base
