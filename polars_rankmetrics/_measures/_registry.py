"""The measure registry: what each measure needs and how it is computed.

A measure is one :class:`Measure` record, declared in its own module of
:mod:`polars_rankmetrics._measures` and added with :func:`register`. The
evaluation plan (:mod:`polars_rankmetrics.evaluate`) reads only these records:
which tables to build (``inputs``), which per-user partial sums to gather
(``hit_partials``), how to turn them into the per-user value or parts
(``finals``) and how users are combined (``aggregation``). Nothing in the plan
names a measure. See ``docs/REGISTRY.md`` for how to add one.

The tables a measure reads (``inputs``):

``"hits"``
    The hits table: the truth rows with a positive grade that were recommended
    within the largest cutoff, one row each with its position (column
    ``ctx.rank``), its grade (:data:`GRADE`) and its binary label
    (:data:`RELEVANT`). Non-relevant recommendations are not in it.
``"hit_index"``
    The hits table sorted by list and position with :data:`HIT_INDEX`, the
    running count of relevant hits in the list (j of the j-th relevant hit).
``"n_relevant_on_hits"``
    The user's number of relevant items (:data:`N_RELEVANT`) beside each hit row.
``"grades"``
    The graded relevance of the hits (always present in the hits table; declared
    so that the plan knows the measure reads grades).
``"gain"``
    The measure applies the ``gain`` convention to the grades: grades whose gain
    overflows a float64 sum (infinite, above 1e300) are refused by a data check.
``"ideal"``
    The user's ideal DCG at ``ctx.k`` under the gain convention, as the
    per-user column ``ctx.ideal_dcg`` (counted per grade, or ranked when the
    grades are not known up front).
``"max_grade"``
    :data:`MAX_GRADE` on every hits-table row: the largest grade in the truth.
``"judged"``
    The judged non-relevant table: truth rows with a grade <= 0 recommended
    within the largest cutoff, with their position (``ctx.rank``), read by
    ``judged_partials``. Built only when a requested measure declares it.
``"list"``
    Every row of the ranked cut (position ``ctx.rank``), read by
    ``list_partials`` (e.g. the list's length within the cutoff).
``"judgements"``
    Every truth row (any grade, negative grades included) recommended within
    the largest cutoff, sorted by list and position, with :data:`GRADE`,
    :data:`RELEVANT`, :data:`N_RELEVANT`, :data:`N_NONRELEVANT` (the user's
    judged non-relevant items: grade >= 0, not relevant) and running counts
    down the list: :data:`RELEVANT_ABOVE` (relevant rows at or above),
    :data:`NONRELEVANT_ABOVE` (judged non-relevant at or above) and
    :data:`UNJUDGED_ABOVE` (negative grades, trec_eval's "pooled but
    unjudged", at or above). Read by ``judgement_partials`` (bpref, infAP).
``"list_length"``
    :data:`LIST_LENGTH` on every hits-table row: the last position of the
    row's list (its number of candidates when positions are 1..n; a given
    rank past an empty slot counts the slot; a tie group at its last
    position under ``ties="average"``). The AUC family reads it.
``"score_ties"``
    :data:`TIE_START` and :data:`TIE_SIZE` on every hits-table row: the first
    position and the size of the row's group of equal scores in its list, and
    :data:`TIE_RELEVANT` and :data:`TIE_RELEVANT_ABOVE`: the relevant rows of
    the list in that group and in the groups above it,
    under every tie rule (the tie rule orders the group; these do not depend
    on it). With given ranks, which never tie, the row's position and 1. The
    AUC family reads them (a tie counts one half). When every requested
    measure declares it, the position column holds each group's last position.
``"n_nonrelevant"``
    :data:`N_NONRELEVANT` on every per-user row: the user's judged
    non-relevant items over the whole truth (grade >= 0, not relevant;
    trec_eval's judged non-relevant), 0 for a user with none, whether or not
    any of them was recommended.
``"beyond_accuracy"``
    A measure of the lists themselves (its :attr:`Measure.lists` hook, see
    :mod:`polars_rankmetrics._measures.lists`), computed from the ranked cut
    (no truth); its ``finals`` read the per-list or per-group column
    ``ctx.name(<measure name>)`` the list plan writes. The users it counts are
    the users with a list, whatever the truth.
``"interactions"``, ``"catalog"``, ``"category"``, ``"group"``
    A list measure that also reads ``evaluate``'s ``interactions=``,
    ``items=``, ``category=`` or ``group=``.
``"subtopics"``
    The subtopic judgements (the diversity measures): the truth's rows carry a
    subtopic (``evaluate``'s ``subtopic=`` column), one row per (user,
    subtopic, item). Two tables, each one row per relevant (list, subtopic,
    item) with its position (``ctx.rank``), :data:`SUBTOPIC_SEEN` (the
    documents above it relevant to its subtopic) and :data:`SUBTOPIC_RELEVANT`
    (the subtopic's relevant documents): the run's rows, read by
    ``subtopic_partials``, and the rows of the greedy ideal ranking, read by
    ``ideal_subtopic_partials``; :data:`N_SUBTOPICS` (the user's subtopics
    with a relevant document) on every per-user row. The other measures of the
    call read the truth collapsed to one row per (user, item), its largest
    grade (a document relevant to any subtopic is relevant, as ndeval's MAP).
``"propensity"``
    Each item's chance of being observed (the debiased measures): on every
    hits-table row, and on the user's relevant truth rows that
    ``truth_partials`` read, :data:`PROPENSITY` (the propensity given by the
    ``propensity=`` column of ``items=`` or of the truth, null when estimated) and
    :data:`POPULARITY_SHARE` (``n_i / max_j n_j`` from ``interactions=``,
    null when given), see :mod:`polars_rankmetrics._pipeline.propensity`; estimated,
    also :data:`POPULARITY_RANK` (the dense rank of n_i, descending) and
    :data:`CATALOG_SIZE` (the items of ``items=``), which serendipity reads.

Every per-user row of a truth measure also has :data:`N_RELEVANT` (m_u).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import polars as pl

from polars_rankmetrics._names import PREFIX
from polars_rankmetrics.conventions import DIRECTIONS, Direction

if TYPE_CHECKING:
    from polars_rankmetrics._measures._curve import CurveStep
    from polars_rankmetrics._measures._trec_plan import Plan, Request
    from polars_rankmetrics._measures.lists._hooks import ListHook
    from polars_rankmetrics.conventions import Conventions

__all__ = [
    "AGGREGATIONS",
    "CATALOG_SIZE",
    "DIRECTIONS",
    "GRADE",
    "HIT_INDEX",
    "INPUTS",
    "LIST_LENGTH",
    "MAX_GRADE",
    "NONRELEVANT_ABOVE",
    "N_NONRELEVANT",
    "N_RELEVANT",
    "N_SUBTOPICS",
    "POPULARITY_RANK",
    "POPULARITY_SHARE",
    "PREFIX",
    "PROPENSITY",
    "RELEVANT",
    "RELEVANT_ABOVE",
    "SUBTOPIC_RELEVANT",
    "SUBTOPIC_SEEN",
    "TIE_RELEVANT",
    "TIE_RELEVANT_ABOVE",
    "TIE_SIZE",
    "TIE_START",
    "UNJUDGED_ABOVE",
    "Aggregation",
    "Context",
    "Direction",
    "Measure",
    "Param",
    "ParamValue",
    "Partial",
    "TrecFamily",
    "adopt_written",
    "all_measures",
    "builtin_measures",
    "known_names",
    "lookup",
    "register",
    "register_trec",
    "register_written",
    "trec_families",
    "trec_family",
    "unregister_written",
    "written_measures",
]

RELEVANT = f"{PREFIX}relevant"  # Boolean: grade > 0 and grade >= relevance_level
GRADE = f"{PREFIX}grade"  # Float64 graded relevance of a truth row
IDEAL_RANK = f"{PREFIX}ideal_rank"  # the row's position in its user's ideal list
N_RELEVANT = f"{PREFIX}n_relevant"  # m_u, the user's number of relevant items
HIT_INDEX = f"{PREFIX}hit_index"  # j: the hit's place among its list's relevant hits
MAX_GRADE = f"{PREFIX}max_grade"  # the largest grade in the truth (input "max_grade")
LIST_LENGTH = f"{PREFIX}list_length"  # the last position of the hit's list (input "list_length")
# input "judgements" (trec_eval's judgement-based measures: bpref, infAP)
N_NONRELEVANT = f"{PREFIX}n_nonrelevant"  # judged non-relevant items of the user
RELEVANT_ABOVE = f"{PREFIX}relevant_above"  # relevant judged rows at or above this one
NONRELEVANT_ABOVE = f"{PREFIX}nonrelevant_above"  # judged non-relevant rows at or above
UNJUDGED_ABOVE = f"{PREFIX}unjudged_above"  # negative-grade rows at or above
# input "propensity": the item's given propensity (null: estimated) and its share of the
# largest popularity, n_i / max_j n_j, over the interactions (null: given)
PROPENSITY = f"{PREFIX}propensity"
POPULARITY_SHARE = f"{PREFIX}popularity_share"
# input "subtopics" (the diversity measures): on the run's and the ideal ranking's subtopic
# rows, the documents above the row relevant to its subtopic (C_s(r - 1)) and the subtopic's
# relevant documents; per user, the subtopics with a relevant document (|S_q|)
SUBTOPIC_SEEN = f"{PREFIX}subtopic_seen"
SUBTOPIC_RELEVANT = f"{PREFIX}subtopic_relevant"
N_SUBTOPICS = f"{PREFIX}n_subtopics"
# and, estimated: the item's popularity rank (1 = the most popular; equal counts share a rank,
# the next count the next rank; null for an item without interactions) and the size of the
# catalog items= holds (null without items=): serendipity's
POPULARITY_RANK = f"{PREFIX}popularity_rank"
CATALOG_SIZE = f"{PREFIX}catalog_size"
# ties="average": the size of the row's group of equal scores (its position column then
# holds the group's first position)
TIE_SIZE = f"{PREFIX}tie_size"
# input "score_ties" (the AUC family): the first position of the row's group of equal scores
# in its list, whatever the tie rule (TIE_SIZE beside it: the group's size)
TIE_START = f"{PREFIX}tie_start"
# ties="average" with input "hit_index", or input "score_ties": the number of relevant items
# in the row's tie group
TIE_RELEVANT = f"{PREFIX}tie_relevant"
# input "score_ties": the relevant items of the list in tie groups above the row's
TIE_RELEVANT_ABOVE = f"{PREFIX}tie_relevant_above"

Aggregation = Literal["mean", "geometric_mean", "pooled", "sum", "group"]

AGGREGATIONS: tuple[Aggregation, ...] = ("mean", "geometric_mean", "pooled", "sum", "group")
Input = Literal[
    "hits", "hit_index", "n_relevant_on_hits", "grades", "gain", "ideal", "max_grade", "judged",
    "list", "judgements", "n_nonrelevant", "beyond_accuracy", "interactions", "catalog",
    "category", "group", "propensity", "subtopics", "list_length", "score_ties",
]  # fmt: skip
INPUTS: tuple[Input, ...] = (
    "hits", "hit_index", "n_relevant_on_hits", "grades", "gain", "ideal", "max_grade", "judged",
    "list", "judgements", "n_nonrelevant", "beyond_accuracy", "interactions", "catalog",
    "category", "group", "propensity", "subtopics", "list_length", "score_ties",
)  # fmt: skip
Cutoff = Literal["required", "optional", "none"]
# a parameter's value: a number, one of a few words (Param.choices), or None (the data decides)
ParamValue = float | str | None
Repeats = Literal["hits", "list"]

# the part columns each aggregation kind reads, as suffixes of the metric label
PART_SUFFIXES: dict[Aggregation, tuple[str, ...]] = {
    "mean": ("",),
    "geometric_mean": ("log",),
    "pooled": ("num", "den"),
    "sum": ("",),
    "group": ("",),
}


def part_column(label: str, suffix: str) -> str:
    """The column holding one part of a metric: ``label`` or ``label|suffix``."""
    return label if not suffix else f"{label}|{suffix}"


@dataclass(frozen=True)
class Param:
    """One parameter of a measure, written ``name(param=value)`` in a metric string.

    ``kind``: ``int``, ``float`` or ``str``; a ``str`` parameter takes one of
    ``choices`` (``arp(popularity=interactions)``), written bare. ``check``
    receives the parsed number and returns it (normalised) or raises
    ``ValueError`` naming the parameter. ``default=None`` means the value is
    decided by the data and ``None`` reaches the measure; ``from_truth`` then
    names the statistic of the whole truth that decides it (``"max_grade"``:
    the largest positive grade), so that a plan that sees only part of the
    truth at a time (a Spark bucket) computes it once over all of it and
    passes it in as the parameter's value.
    """

    name: str
    kind: type[int] | type[float] | type[str]
    default: ParamValue
    doc: str
    check: Callable[[float], float] | None = None
    from_truth: Literal["max_grade"] | None = None
    choices: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if (self.kind is str) != bool(self.choices) or (
            self.kind is str and self.default not in self.choices
        ):
            raise ValueError(
                f"parameter {self.name!r}: a str kind needs choices holding its default"
            )


@dataclass(frozen=True)
class Partial:
    """A per-user partial sum over the hits table, shared by name between measures.

    ``fill``: the value of a user without any hit row (0 for sums and counts,
    ``None`` for a minimum or other statistic that has no value then).
    ``summed``: ``expr`` is a row's term (null: not summed), and the partial
    its exact sum over the list's rows (:func:`polars_rankmetrics._sums.exact_sums`),
    the same whatever order the rows come in (a join's, a batch's, another
    run's); otherwise ``expr`` is an aggregation (a count, a first value, a
    sum of terms put in position order first with ``sort_by``). Made by
    :meth:`sum_of`.
    """

    name: str
    expr: pl.Expr
    fill: float | None = 0
    summed: bool = False

    @classmethod
    def sum_of(cls, name: str, term: pl.Expr, where: pl.Expr) -> Partial:
        """The exact sum of ``term`` over the rows where ``where`` holds (0 without)."""
        return cls(name, pl.when(where).then(term), summed=True)


@dataclass(frozen=True)
class Context:
    """What a measure's expressions may read for one requested metric.

    ``k`` is the cutoff (``None``: the whole list), ``params`` the parameters
    with their defaults, ``conventions`` the resolved conventions and ``rank``
    the name of the position column of the hits table.
    """

    k: int | None
    params: Mapping[str, ParamValue]
    conventions: Conventions
    rank: str

    def number(self, name: str) -> float | None:
        """The numeric parameter ``name`` (``None``: decided by the data)."""
        value = self.params[name]
        if isinstance(value, str):
            raise TypeError(f"parameter {name!r} is a word ({value!r}), not a number")
        return value

    @property
    def tag(self) -> str:
        """What distinguishes this metric's partials from another cutoff's or parameter's."""
        cut = "all" if self.k is None else str(self.k)
        if not self.params:
            return cut
        values = ",".join(f"{name}={value}" for name, value in sorted(self.params.items()))
        return f"{cut}({values})"

    def name(self, base: str) -> str:
        """The column of partial ``base`` for this cutoff and these parameters."""
        return f"{PREFIX}{base}@{self.tag}"

    def cutoff(self) -> int:
        """The cutoff of a measure that requires one."""
        if self.k is None:
            raise ValueError("this metric needs a cutoff")
        return self.k

    def within(self) -> pl.Expr:
        """True on table rows within the cutoff (a row-wise column, so that its sum counts)."""
        position = pl.col(self.rank)
        return position.is_not_null() if self.k is None else position <= self.k

    def hits(self) -> pl.Expr:
        """True on relevant hits-table rows within the cutoff."""
        return pl.col(RELEVANT) & self.within()

    @property
    def tie_average(self) -> bool:
        """``ties="average"``: the expected value over every order of the tied items."""
        return self.conventions.ties == "average"

    def share_within(self) -> pl.Expr:
        """With ``ties="average"``, the chance that the row sits within the cutoff.

        A group of ``n`` equal scores fills positions ``a .. a + n - 1``
        (``a`` in ``ctx.rank``, ``n`` in :data:`TIE_SIZE`); over every order of
        the group each of its items is equally likely at each of them, so it
        is within k with chance ``clip(k - a + 1, 0, n) / n``.
        """
        if self.k is None:
            return pl.lit(1.0)
        start = pl.col(self.rank).cast(pl.Float64)
        return ((float(self.k) - start + 1.0) / pl.col(TIE_SIZE)).clip(0.0, 1.0)

    def mean_discount(self) -> pl.Expr:
        """With ``ties="average"``, the expected DCG discount of the row within the cutoff.

        ``(1/n) sum_{i = a .. min(a + n - 1, k)} 1 / log2(i + 1)``: each of the
        group's positions is equally likely (McSherry & Najork 2008), and
        positions past k count 0.
        """
        start = pl.col(self.rank).cast(pl.Int64)
        end = start + pl.col(TIE_SIZE).cast(pl.Int64)
        if self.k is not None:
            end = pl.min_horizontal(end, pl.lit(self.k + 1, dtype=pl.Int64))
        terms = (pl.element().cast(pl.Float64) + 1.0).log(2).pow(-1.0)
        total = pl.int_ranges(start, pl.max_horizontal(end, start)).list.eval(terms).list.sum()
        return total / pl.col(TIE_SIZE).cast(pl.Float64)

    @property
    def ideal_dcg(self) -> str:
        """The per-user ideal DCG column at this cutoff (input ``"ideal"``)."""
        return f"{PREFIX}idcg@{'all' if self.k is None else self.k}"


def _no_partials(ctx: Context) -> list[Partial]:
    del ctx
    return []


@dataclass(frozen=True)
class Measure:
    """One measure family member: everything the plan needs to compute it.

    Attributes
    ----------
    name
        Canonical metric-string name (lower case), e.g. ``"ndcg"``.
    direction
        Which way is better: ``"higher"`` (precision, NDCG...), ``"lower"``
        (fall-out, mean rank, Gini...) or ``"none"`` (a descriptive measure
        whose better side depends on the goal: ARP, novelty). Every decision
        (a gate, a one-sided test, a ranking of systems) reads it.
    aliases
        Other names accepted in metric strings (``"ap"`` for ``"map"``).
    cutoff
        ``"required"`` (``precision@k``), ``"optional"`` or ``"none"`` (no ``@k``).
    params
        Parameters written ``name(param=value)``; unknown ones are refused.
    inputs
        Tables and columns the measure reads (see the module docstring).
    repeats
        Which repeated positions can change it: ``"hits"`` (only where a relevant
        item sits: positions are checked on the hit rows) or ``"list"`` (every
        row of the cut matters: positions are checked on the whole cut).
    hit_partials
        The per-user partial sums over the hits table, grouped per list.
    judged_partials, list_partials, judgement_partials
        The same over the judged non-relevant table (input ``"judged"``), over
        every row of the cut (input ``"list"``) and over every judged row of the
        cut with running judgement counts (input ``"judgements"``).
    subtopic_partials, ideal_subtopic_partials
        The per-user sums over the run's subtopic rows and over the greedy
        ideal ranking's (input ``"subtopics"``; see the module docstring).
    ideal_alpha
        With ``ideal_subtopic_partials``, the redundancy penalty alpha of the
        greedy ideal ranking they read (its gain at each step is
        ``sum_s (1 - alpha)^{C_s}``), from the context's parameters.
    truth_partials
        Per-user sums over the user's truth rows with a positive grade
        (:data:`GRADE`, :data:`RELEVANT`, and with input ``"propensity"`` its
        columns), whether recommended or not: one value per user of the truth,
        shared by every group only the recommendations have (models). Each
        partial's ``expr`` is the row's term (null: not summed), not an
        aggregation: the truth rows come out of joins in no fixed order, so the
        plan sums the terms exactly (:func:`polars_rankmetrics._sums.exact_sums`).
    finals
        Per-user expressions over the partials (and :data:`N_RELEVANT`, the
        ideal DCG...), one per part suffix of ``aggregation`` (``""`` for the
        value; ``"num"``/``"den"`` pooled; ``"log"`` geometric mean).
    aggregation
        How users combine: ``"mean"`` of the value (nulls, users the measure
        leaves out, are skipped), ``"geometric_mean"`` (``exp(mean(log))``),
        ``"pooled"`` (``sum(num) / sum(den)``, null when ``sum(den) = 0``),
        ``"sum"``, or ``"group"`` (one value per ``by`` group, written on each
        of its users' rows; the first is taken).
    fill
        Value of each part for a counted user without relevant truth or
        without recommendations (``None``: not counted for this measure).
    per_user_value
        The per-user value from the parts (``per_user=True``); default: the
        ``""`` part.
    reads_past_cutoff
        Its cutoff does not bound the positions it reads (``pauc@k`` keeps the
        user's top k non-relevant items and the relevant items ranked above
        any of them, however far down): the plan ranks the whole lists.
    tie_average
        The measure implements ``ties="average"`` (its exact expectation over
        the orders of tied scores, with ``ctx.share_within()`` or
        ``ctx.mean_discount()``); the others refuse it.
    doc
        One line for the docs: what it is and its formula.
    curve
        Its curve step (:class:`polars_rankmetrics._measures._curve.CurveStep`):
        how the per-user value evolves with k, from running states down the
        list, for ``curves`` (every k in one pass); ``ctx.k`` is ``None``.
        ``None``: ``curves`` cannot draw it (no cutoff, or not implemented).
    lists
        A measure of the lists themselves (input ``"beyond_accuracy"``): how it
        is computed per list or per group, drawn over k and merged across
        Spark's buckets (:mod:`polars_rankmetrics._measures.lists._hooks`:
        ``RowMean``, ``PerList`` or ``OfGroup``). ``None`` for the others.
    written_in
        For a measure a user wrote (:mod:`polars_rankmetrics._measures._written`),
        the modules its functions come from (Spark sends them to its workers);
        empty for the built-in measures.
    """

    name: str
    finals: Callable[[Context], Mapping[str, pl.Expr]]
    doc: str
    direction: Direction
    aliases: tuple[str, ...] = ()
    cutoff: Cutoff = "optional"
    params: tuple[Param, ...] = ()
    inputs: frozenset[Input] = frozenset({"hits"})
    repeats: Repeats = "hits"
    hit_partials: Callable[[Context], list[Partial]] = _no_partials
    judged_partials: Callable[[Context], list[Partial]] = _no_partials
    list_partials: Callable[[Context], list[Partial]] = _no_partials
    judgement_partials: Callable[[Context], list[Partial]] = _no_partials
    truth_partials: Callable[[Context], list[Partial]] = _no_partials
    subtopic_partials: Callable[[Context], list[Partial]] = _no_partials
    ideal_subtopic_partials: Callable[[Context], list[Partial]] = _no_partials
    ideal_alpha: Callable[[Context], float] | None = None
    aggregation: Aggregation = "mean"
    fill: float | None = 0.0
    per_user_value: Callable[[Mapping[str, pl.Expr]], pl.Expr] | None = None
    reads_past_cutoff: bool = False
    tie_average: bool = False
    curve: Callable[[Context], CurveStep] | None = None
    lists: ListHook | None = None
    written_in: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.direction not in DIRECTIONS:
            raise ValueError(
                f"measure {self.name!r}: direction must be one of {DIRECTIONS}, "
                f"got {self.direction!r}"
            )
        if self.aggregation not in AGGREGATIONS:
            raise ValueError(f"measure {self.name!r}: unknown aggregation {self.aggregation!r}")
        if (self.lists is None) == ("beyond_accuracy" in self.inputs):
            raise ValueError(
                f"measure {self.name!r}: a measure of the lists (input 'beyond_accuracy') "
                "declares its lists hook, and only it"
            )
        unknown = set(self.inputs) - set(INPUTS)
        if unknown:
            raise ValueError(f"measure {self.name!r}: unknown inputs {sorted(unknown)}")

    @property
    def suffixes(self) -> tuple[str, ...]:
        """The part columns of this measure, as suffixes of its label."""
        return PART_SUFFIXES[self.aggregation]

    def unpaired_reason(self, label: str) -> str | None:
        """Why per-user values of this measure cannot be paired and tested as means.

        ``None`` for a measure whose users are combined by a mean: its mean
        over a system's users is the number ``evaluate`` gives, and paired
        differences of per-user values test it. Any other aggregation has no
        such per-user reading (``compare`` refuses it with this reason).
        """
        if self.aggregation == "mean":
            return None
        why: dict[Aggregation, str] = {
            "geometric_mean": (
                "a geometric mean over users (exp of the mean of log(max(value, 1e-5))), "
                "so an arithmetic mean of its per-user values is not the number evaluate "
                "gives; test the floored logs instead: per_user_parts(...) gives them as "
                f"'{label}|log', for compare_per_user"
            ),
            "pooled": (
                "a ratio of sums over users (sum of numerators / sum of denominators), not a "
                "mean of per-user values"
            ),
            "sum": "a sum over users, not a mean of per-user values",
            "group": (
                "one value per group of lists (it describes all the users' lists together), "
                "with no per-user values to pair or test"
            ),
        }
        return f"{label} is {why[self.aggregation]}"

    def value(self, parts: Mapping[str, pl.Expr]) -> pl.Expr:
        """The per-user value from its part columns (keyed by suffix)."""
        if self.per_user_value is not None:
            return self.per_user_value(parts)
        return parts[""]


_REGISTRY: dict[str, Measure] = {}
_ALIASES: dict[str, str] = {}
# the measures users wrote (polars_rankmetrics.measures), by name: the others are built in
_WRITTEN: dict[str, Measure] = {}


def register(measure: Measure) -> Measure:
    """Add ``measure`` to the registry; its name and aliases must be new."""
    for name in (measure.name, *measure.aliases):
        if name != name.lower() or name in _REGISTRY or name in _ALIASES:
            raise ValueError(f"metric name {name!r} is taken or not lower case")
    _REGISTRY[measure.name] = measure
    for alias in measure.aliases:
        _ALIASES[alias] = measure.name
    return measure


def register_written(measure: Measure) -> Measure:
    """Add a measure a user wrote; it replaces the user's earlier measure of that name.

    A notebook cell run twice registers its measure twice: the second
    replaces the first. A built-in measure's name or alias is refused.
    """
    for name in (measure.name, *measure.aliases):
        owner = _REGISTRY.get(name) or _REGISTRY.get(_ALIASES.get(name, ""))
        if owner is not None and owner.name not in _WRITTEN:
            raise ValueError(
                f"metric name {name!r} is taken by the built-in measure {owner.name!r}; "
                "choose another name"
            )
        if owner is not None and owner.name != measure.name:
            raise ValueError(
                f"metric name {name!r} is taken by the measure {owner.name!r} you registered "
                "earlier; choose another name, or unregister that one first"
            )
    if measure.name in _WRITTEN:
        unregister_written(measure.name)
    _WRITTEN[measure.name] = register(measure)
    return measure


def unregister_written(name: str) -> None:
    """Remove the measure a user registered as ``name`` (a built-in one is refused)."""
    found = canonical(name)
    if found is None or found not in _WRITTEN:
        raise ValueError(
            f"no measure you registered is called {name!r} (yours: {sorted(_WRITTEN) or 'none'})"
        )
    measure = _WRITTEN.pop(found)
    del _REGISTRY[found]
    for alias in measure.aliases:
        _ALIASES.pop(alias, None)


def adopt_written(measures: Iterable[Measure]) -> None:
    """Register measures a user wrote elsewhere (sent to a Spark worker with the plan)."""
    for measure in measures:
        if _REGISTRY.get(measure.name) is not measure:
            register_written(measure)


def written_measures(names: Iterable[str] = ()) -> list[Measure]:
    """The measures users wrote among ``names`` (metric names, any case or alias); all if none."""
    wanted = {canonical(name) for name in names}
    return [m for m in _WRITTEN.values() if not wanted or m.name in wanted]


def builtin_measures() -> list[Measure]:
    """Every measure the package itself registers, in registration order."""
    return [m for m in _REGISTRY.values() if m.name not in _WRITTEN]


def canonical(name: str) -> str | None:
    """The canonical name for ``name`` (any case), or ``None`` if unknown."""
    lowered = name.lower()
    if lowered in _REGISTRY:
        return lowered
    return _ALIASES.get(lowered)


def known_names() -> list[str]:
    """Every accepted name: canonical names then aliases."""
    return [*_REGISTRY, *_ALIASES]


def lookup(name: str) -> Measure:
    """The measure called ``name`` (or one of its aliases); unknown names suggest the closest."""
    found = canonical(name)
    if found is None:
        hint = difflib.get_close_matches(name.lower(), known_names(), n=1)
        suggestion = f"; did you mean {hint[0]!r}?" if hint else ""
        raise ValueError(f"unknown metric {name!r}{suggestion} (known: {known_names()})")
    return _REGISTRY[found]


def all_measures() -> list[Measure]:
    """Every registered measure, in registration order."""
    return list(_REGISTRY.values())


# ---------------------------------------------------------------- trec_eval's measures

TrecParams = Literal["none", "cut_long", "cut_double", "p_double", "p_pair"]
TrecSummary = Literal["mean", "geometric_mean", "sum", "sum_qrels", "text", "runid"]


@dataclass(frozen=True)
class TrecFamily:
    """One trec_eval measure (``P``, ``map``, ``ndcg``...) as ``rankmetrics trec`` computes it.

    :func:`polars_rankmetrics.trec.trec_eval` reads only these records (see
    ``docs/REGISTRY.md``); the family is declared in the module of
    :mod:`polars_rankmetrics._measures` that holds its formula, beside the
    :class:`Measure` that gives the same value as an ``evaluate`` metric string.

    Attributes
    ----------
    name
        trec_eval's name (``"P"``, ``"iprec_at_recall"``, ``"ndcg_cut"``).
    position
        Its place in trec_eval's measure table (``measures.c``): the print order.
    params
        How trec_eval parses ``name.params``: ``"none"``, ``"cut_long"`` (integer
        cutoffs ``P.5,10``, one printed value each: ``P_5``), ``"cut_double"``
        (real cutoffs ``iprec_at_recall..1,.2``: ``iprec_at_recall_0.10``),
        ``"p_double"`` (real parameters ``utility.2,-1,0,0``, one value) or
        ``"p_pair"`` (``name=value`` parameters ``ndcg.1=3,2=9``, one value).
    defaults
        The cutoffs or real parameters used when none are given.
    compute
        Adds the family's per-query columns to the plan
        (:class:`polars_rankmetrics._measures._trec_plan.Plan`); ``None`` for ``runid``.
    summary
        The ``all`` value: ``"mean"`` over queries, ``"geometric_mean"`` (the
        per-query values are logs: ``exp(mean)``), ``"sum"`` (counts),
        ``"sum_qrels"`` (a sum, but under ``-c`` every relevant qrels line),
        ``"text"`` (per query only: ``relstring``) or ``"runid"`` (the run's tag).
    per_query
        Printed per query (``-q``); ``runid``, ``num_q``, ``gm_map`` and
        ``gm_bpref`` are printed for ``all`` only.
    sets
        trec_eval's measure sets (``"official"``, ``"all_trec"``, ``"set"``)
        that name the family.
    metric
        The ``evaluate`` metric string with the same value under
        ``conventions="trec"``, for the default parameters; ``{k}`` stands for
        the cutoff (``"precision@{k}"``, ``"iprec(recall={k:g})"``).
    missing
        Under ``-c``, the value a query the run lacks gets after its stand-in
        ranking (trec_eval resets ``num_ret``, ``unj_k``, and ``utility``,
        ``relstring``, ``rbp_resid`` without parameters); ``None``: kept.
    """

    name: str
    position: int
    compute: Callable[[Plan, Request], None] | None
    params: TrecParams = "none"
    defaults: tuple[float, ...] = ()
    summary: TrecSummary = "mean"
    per_query: bool = True
    sets: tuple[str, ...] = ("all_trec",)
    metric: str | None = None
    missing: float | str | None = None


_TREC: dict[str, TrecFamily] = {}


def register_trec(family: TrecFamily) -> TrecFamily:
    """Add a trec_eval measure family; its name and table position must be new."""
    if family.name in _TREC or any(f.position == family.position for f in _TREC.values()):
        raise ValueError(f"trec_eval measure {family.name!r} or its position is taken")
    _TREC[family.name] = family
    return family


def trec_family(name: str) -> TrecFamily:
    """The trec_eval measure family called ``name`` (as trec_eval spells it)."""
    return _TREC[name]


def trec_families() -> dict[str, TrecFamily]:
    """Every trec_eval measure family, in trec_eval's print order."""
    return {f.name: f for f in sorted(_TREC.values(), key=lambda f: f.position)}
