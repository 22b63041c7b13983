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
from dataclasses import dataclass
from typing import Any, Final, Literal, TypedDict, cast

if sys.version_info >= (3, 11):
    from typing import Unpack
else:  # pragma: no cover - Python 3.10
    from typing_extensions import Unpack

from polars_rankmetrics.conventions import (
    CiMethod,
    Conventions,
    Correction,
    Denominator,
    Direction,
    Duplicates,
    Gain,
    Hypothesis,
    Ideal,
    NonpositiveScores,
    Preset,
    Test,
    TieOrder,
    Ties,
    Unjudged,
    UserSets,
    UsersWithoutRecs,
    UsersWithoutTruth,
)

__all__ = [
    "DECLARED",
    "DEFAULTS",
    "FRAME_OPTIONS",
    "INPUTS",
    "POSITIONS",
    "STATISTICS",
    "CompareOptions",
    "ConventionOptions",
    "Declared",
    "EvaluateOptions",
    "ListInputs",
    "PositionOptions",
    "Roles",
    "StatisticsOptions",
    "Travel",
    "Unpack",
    "conventions_given",
    "names",
    "read",
    "read_inputs",
    "read_positions",
    "read_statistics",
    "travelling",
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
    groups; default an equal split). ``subtopic``: the truth's subtopic
    column (default ``"subtopic"``) of the diversity measures.
    """

    interactions: Any
    items: Any
    category: str | None
    propensity: str | None
    group: str | None
    group_weight: str | None
    subtopic: str | None


class EvaluateOptions(Roles, ConventionOptions, ListInputs, total=False):
    """Every keyword option of ``evaluate`` and of each surface that forwards to it."""


class PositionOptions(TypedDict, total=False):
    """How ``positions`` reads and ranks the lists: the roles, the tie order, repeats.

    :data:`POSITIONS` holds their defaults and meanings (``ties`` and
    ``duplicates`` are values here, not a preset's: ``positions`` ranks,
    it does not evaluate).
    """

    user: str
    item: str
    rank: str
    score: str | None
    ties: TieOrder
    duplicates: Duplicates
    by: str | Sequence[str] | None


class StatisticsOptions(TypedDict, total=False):
    """How ``compare`` and ``compare_per_user`` test and summarise: one keyword each.

    The test, the intervals, the correction for multiple comparisons, the
    decision (hypothesis and margin), the ties of wins and losses and which
    way is better; :data:`STATISTICS` holds their defaults and meanings.
    """

    test: Test
    ci: float
    ci_method: CiMethod
    correction: Correction
    alpha: float
    n_resamples: int
    seed: int | None
    hypothesis: Hypothesis
    margin: float | None
    tolerance: float
    direction: Direction | Mapping[str, Direction] | None
    risk_alpha: float | None


class CompareOptions(StatisticsOptions, EvaluateOptions, total=False):
    """Every keyword option of ``compare``: its statistics, then ``evaluate``'s."""


Travel = Literal["history", "catalog", "catalog_column", "truth_column", "either_column"]
"""How an input travels where the users are split over workers (:attr:`Declared.travels`)."""


@dataclass(frozen=True)
class Declared:
    """One keyword option, declared once: its default, its type and what it means.

    ``kind``: the type as the docs show it (``'str or None'``); ``doc``: what
    the option means, in reST sentences: the API reference shows it for every
    function that takes the option, ``evaluate``'s docstring holds it
    (:func:`docstring_block` writes it there) and the command line shows it in
    plain words. An input of the measures beside the lists and the truth
    (:class:`ListInputs`) also says what it is: ``what`` (a short phrase for
    the refusals: "the training history, one row per (user, item)"),
    ``frame`` (a frame the boundary reads, else a column name), ``reads``
    (the registry's input of the measures that read it: ``"catalog"`` for
    ``items``), ``required`` (those measures need it given: a propensity
    column is not, it is estimated without one) and ``needs`` (the options it
    names a column of, or works with).

    How it travels where the users are split over workers (Spark),
    ``travels``: ``"history"`` (a frame of (user, item) rows, split with the
    users' lists), ``"catalog"`` (a frame of items: each worker gets the rows
    of its items), ``"catalog_column"``, ``"truth_column"`` or
    ``"either_column"`` (a column name of the catalog or the truth, passed as
    given; a truth column travels with the truth's rows). ``whole_catalog``:
    its measures read shares of the whole catalog (each worker then gets all
    of it); ``estimated_from``: the frame it is estimated from when not given
    (counted over the whole of it once, not per worker).
    """

    name: str
    default: object
    kind: str
    doc: str
    what: str = ""
    frame: bool = False
    reads: str | None = None
    required: bool = True
    needs: tuple[str, ...] = ()
    travels: Travel | None = None
    whole_catalog: bool = False
    estimated_from: str | None = None


_CONVENTION_KIND = "or None, default None (the preset's)"


def _convention(name: str, choices: str, doc: str) -> Declared:
    return Declared(name, None, f"{choices} {_CONVENTION_KIND}", doc)


_ROLES = (
    Declared(
        "user", "user", "str",
        "The column of the user (query, customer, session) in every frame.",
    ),
    Declared(
        "item", "item", "str",
        "The column of the item (document, product) in every frame.",
    ),
    Declared(
        "rank", "rank", "str",
        "The column of ``recs`` holding each item's position, 1 at the top (read when "
        "``score`` is ``None``; with ``score``, the name of the positions derived).",
    ),
    Declared(
        "score", None, "str or None",
        "The column of ``recs`` holding each item's score, higher is better: ranks are "
        "derived per user from it, equal scores ordered by ``ties``. ``None``: ranks are "
        "given in ``rank``.",
    ),
    Declared(
        "relevance", None, "str or None",
        "The column of the truth holding each row's graded relevance. ``None``: every "
        "truth row is relevant with grade 1.",
    ),
    Declared(
        "by", None, "str, sequence of str or None",
        "Columns evaluated side by side. Those in both frames join with the truth "
        "(folds, time splits); those only in ``recs`` (models) share it. Every role names "
        "a column of its own, distinct from these.",
    ),
)  # fmt: skip

_CONVENTIONS = (
    _convention(
        "denominator", '{"min_k", "relevant", "hits", "k"}',
        'AP denominator: ``"min_k"`` (Kaggle), ``"relevant"`` (trec_eval), ``"hits"``, '
        '``"k"`` (the cutoff: RecTools ``divide_by_k=True``; needs ``map@k``). See '
        ":func:`polars_rankmetrics.average_precision`.",
    ),
    _convention(
        "gain", '{"linear", "exponential"}, mapping',
        'NDCG/DCG gain: ``"linear"`` (trec_eval), ``"exponential"`` (2^rel - 1) or a '
        "mapping ``{grade: gain}`` (trec_eval ``-mndcg.1=3,2=9``: grades not listed gain "
        "their own value; grades > 0, gains finite and >= 0). The ideal list is sorted by "
        "gain.",
    ),
    _convention(
        "ties", '{"item_desc", "item_asc", "input", "average"}',
        'Order of equal scores: ``"item_desc"`` (trec_eval), ``"item_asc"``, ``"input"``, '
        'or ``"average"``: the exact expected value over every order of the tied items '
        "(McSherry & Najork 2008; sklearn ``ndcg_score(ignore_ties=False)``), from ``score`` "
        "only, for precision, recall, f1, fbeta, hit_rate, n_relevant_retrieved, "
        'pooled_recall, map (denominator not ``"hits"``), mrr, dcg and ndcg; other measures '
        "refuse it.",
    ),
    Declared(
        "relevance_level", None, "float or None",
        "Minimum grade that binary metrics count as relevant (trec_eval ``-l``); a finite "
        "number. ``None``: every positive grade.",
    ),
    _convention(
        "users_without_recs", '{"zero", "exclude"}',
        'Users with relevant truth but no recommendations: ``"zero"`` (they score 0 and '
        'count, as trec_eval ``-c``) or ``"exclude"``.',
    ),
    _convention(
        "users_without_truth", '{"exclude", "judged", "zero"}',
        "Users without relevant truth, for whom recall, AP and NDCG are undefined: "
        '``"exclude"`` (H&M), ``"judged"`` (those with truth rows, all non-relevant, count: '
        'trec_eval, ranx) or ``"zero"`` (those with recommendations or truth rows count; '
        "Santander). Counted users score 0 on the binary metrics; NDCG and DCG keep the "
        "value of their raw grades (a relevance level can leave graded items below it, as "
        'with trec_eval ``-l``). ``users_without_recs="exclude"`` still leaves out users '
        "without recommendations.",
    ),
    _convention(
        "duplicates", '{"error", "first"}',
        'A (user, item) recommended twice: ``"error"`` or ``"first"`` (keep its best '
        'position; from scores, rank the list with its repeats removed). ``"error"`` '
        "refuses what can change a number, within the largest cutoff requested (a repeat "
        "further down changes nothing asked for): with given ranks and measures that read "
        "only relevant items (all but ``judged@k``), a relevant item twice or two relevant "
        "items at one position (a repeated non-relevant item is accepted: it takes no "
        "position from anyone); with ranks from scores or with ``judged@k``, any item twice "
        "(and with given ranks any position twice).",
    ),
    _convention(
        "ideal", '{"truth", "k"}',
        'NDCG\'s ideal DCG: ``"truth"`` (the user\'s truth sorted by gain) or ``"k"`` (k '
        "items of the user's highest gain, RecTools' NDCG, \"SDCG\"; binary: "
        "``sum_{i<=k} 1/log2(i+1)``; needs ``ndcg@k``).",
    ),
    _convention(
        "unjudged", '{"keep", "remove"}',
        "Recommended items without a judgement, that is without a truth row or with a "
        'negative grade (trec_eval\'s "in the pool, unjudged"): ``"keep"`` or ``"remove"``, '
        "before positions are assigned, so the items below move up (condensed lists, Sakai "
        "2007; trec_eval ``-J``, pytrec_eval ``judged_docs_only_flag``). Given ranks are "
        "re-numbered 1, 2, ... in their order.",
    ),
    _convention(
        "nonpositive_scores", '{"keep", "drop"}',
        '``"keep"`` or ``"drop"``: recommendations with a score <= 0 are not retrieved '
        "(removed before positions are assigned; needs ``score``).",
    ),
    _convention(
        "user_sets", '{"any", "strict"}',
        '``"any"`` or ``"strict"``: the (by..., user) of ``recs`` and of the truth (users '
        "with any truth row) must be the same, else the call raises naming how many are on "
        "one side only (ranx's strict check).",
    ),
    Declared(
        "conventions", "default", '{"default", "trec", "ndeval"} or Conventions',
        'A preset, ``"default"``, ``"trec"`` (trec_eval\'s conventions) or ``"ndeval"`` '
        "(ndeval's, the diversity measures': as ``\"trec\"`` without fixing any), or a "
        ":class:`polars_rankmetrics.Conventions` object. Every convention keyword left at "
        '``None`` takes the preset\'s value. ``"trec"`` fixes ``denominator="relevant"``, '
        '``gain="linear"``, ``ties="item_desc"`` and ``ideal="truth"`` (an explicit '
        'different value is refused; a gain mapping is allowed, trec_eval\'s ``-mndcg``) and '
        'defaults ``users_without_recs="exclude"`` (pass ``"zero"`` for trec_eval ``-c``) and '
        '``users_without_truth="judged"``. ``"default"``: ``"min_k"``, ``"linear"``, '
        '``"item_desc"``, ``"zero"``, ``"exclude"``, ``"error"``, ``ideal="truth"``, '
        '``unjudged="keep"``, ``nonpositive_scores="keep"``, ``user_sets="any"``. See '
        ":mod:`polars_rankmetrics.conventions`.",
    ),
)  # fmt: skip

_LIST_INPUTS = (
    Declared(
        "interactions", None, "frame or None",
        "The training history, one row per (user, item) (repeats count once), for the "
        "measures that read it (the measures of the lists' popularity: novelty, arp, "
        "long_tail, surprisal; calibration; estimated propensities; serendipity's popularity "
        "ranks). ``by`` columns it also has (folds) "
        "give each group its own history; the others (models) share it.",
        what="the training history, one row per (user, item)", frame=True,
        reads="interactions", travels="history",
    ),
    Declared(
        "items", None, "frame or None",
        "The item catalog, one row per item, with the ``item`` column and the columns "
        "``category``, ``group``, ``group_weight`` and ``propensity`` name, for the "
        "measures that read it (coverage, gini, ild, calibration, the exposure-fairness "
        "measures, serendipity: the catalog's size). Every listed item must be in it; one "
        "catalog serves every ``by`` group.",
        what="the item catalog, one row per item", frame=True, reads="catalog",
        travels="catalog",
    ),
    Declared(
        "category", None, "str or None",
        "The column of ``items`` holding each item's category (String, Categorical, Enum "
        "or integer) or a List of them (ild, calibration).",
        what="the items column holding each item's category or list of categories",
        reads="category", needs=("items",), travels="catalog_column",
    ),
    Declared(
        "propensity", None, "str or None",
        "The column of ``items`` (one propensity per item) or of the truth (one per "
        "relevant pair) holding each relevant pair's probability of being observed, in "
        "(0, 1], for the debiased measures (``ips_*``, ``snips_*``). ``None``: estimated "
        "from ``interactions`` as ``(n_i / max_j n_j)^((gamma + 1) / 2)``.",
        what="the propensity column of items= or of the truth", reads="propensity",
        required=False, travels="either_column", estimated_from="interactions",
    ),
    Declared(
        "group", None, "str or None",
        "The column of ``items`` holding each item's group, a label or a list of labels, "
        "for the exposure-fairness measures (``awrf``, ``ndkl``).",
        what="the items column holding each item's group or list of groups",
        reads="group", needs=("items",), travels="catalog_column", whole_catalog=True,
    ),
    Declared(
        "group_weight", None, "str or None",
        "The column of ``items`` with each item's weights in its groups: a list beside the "
        "list of ``group``, normalised per item. ``None``: an equal split.",
        what="the weights of each item's groups", needs=("group",),
        travels="catalog_column",
    ),
    Declared(
        "subtopic", "subtopic", "str or None",
        "The column of the truth holding each row's subtopic (intent) for the diversity "
        "measures (``alpha_ndcg``, ``err_ia``, ``nrbp``, ``p_ia``, ``map_ia``, ``strec``...): "
        "the truth then has one row per (user, subtopic, item), TREC's diversity qrels "
        "``topic subtopic docno judgment``. The other measures of the call read one row per "
        "(user, item), its largest grade. ``None``: ``\"subtopic\"``.",
        what="the truth's subtopic column", reads="subtopics", required=False,
        travels="truth_column",
    ),
)  # fmt: skip

#: Every option, declared once (:class:`Declared`), in the order of the declarations above.
DECLARED: Final[Mapping[str, Declared]] = {
    option.name: option for option in (*_ROLES, *_CONVENTIONS, *_LIST_INPUTS)
}

_STATISTICS = (
    Declared(
        "test", "t", '{"t", "randomization", "wilcoxon", "tukey_hsd"}',
        '``"t"`` (paired t-test, as ``scipy.stats.ttest_rel``), ``"randomization"`` (paired '
        "sign flip, ``n_resamples`` resamples, p = (b + 1) / (B + 1)), ``\"wilcoxon\"`` "
        '(``scipy.stats.wilcoxon``, zero differences dropped) or ``"tukey_hsd"`` (randomized '
        "Tukey HSD, Carterette 2012: within each user the system labels are permuted, "
        "``n_resamples`` replicates; per pair p = (b + 1) / (B + 1), b counting replicates "
        "whose largest |difference of two systems' means| is >= the pair's observed "
        '|difference|). All two-sided. ``"tukey_hsd"`` is family-adjusted by construction: '
        "``p_value`` and ``p_adjusted`` are the same number and ``correction`` is not "
        "applied; it uses the users with a value for every system of the group.",
    ),
    Declared("ci", 0.95, "float", "Confidence level of every interval, in (0, 1)."),
    Declared(
        "ci_method", "t", '{"t", "bootstrap"}',
        '``"t"``: mean +- t_{(1+ci)/2, n-1} s / sqrt(n); ``"bootstrap"``: percentile '
        "bootstrap over users (``n_resamples``, ``seed``).",
    ),
    Declared(
        "correction", "holm", '{"holm", "bonferroni", "bh", "none"}',
        '``"holm"``, ``"bonferroni"``, ``"bh"`` (Benjamini-Hochberg) or ``"none"``, applied '
        "within each family: every comparison of one metric in one ``by`` group.",
    ),
    Declared("alpha", 0.05, "float", "``significant`` is ``p_adjusted < alpha``."),
    Declared(
        "n_resamples", 10_000, "int",
        "Resamples of the randomization test, Tukey HSD and the bootstrap.",
    ),
    Declared(
        "seed", 0, "int or None",
        "Seed of numpy's random generator (randomization, Tukey HSD, bootstrap): the same "
        "seed gives the same numbers. ``None``: fresh randomness.",
    ),
    Declared(
        "hypothesis", "difference", "str",
        "The decision the paired t-test makes on the improvement g = s (system - baseline), "
        "s = +1 for a metric where higher is better, -1 where lower is (``direction``), df "
        'n - 1: ``"difference"`` (H0 mean(d) = 0, two-sided: no direction needed); '
        '``"superiority"`` (H0 mean(g) <= 0, one-sided); ``"noninferiority"`` (H0 mean(g) '
        "<= -margin, one-sided p of t = (mean(g) + margin) / (sd(g) / sqrt(n))); "
        '``"equivalence"`` (TOST, Schuirmann 1987: p = max of the one-sided p-values against '
        "-margin and +margin; no direction needed). ``significant`` then means H0 is "
        "rejected (the system is shown superior, non-inferior or equivalent). Only with "
        '``test="t"``. A one-sided hypothesis on a metric without a direction is refused, '
        "naming it.",
    ),
    Declared(
        "margin", None, "float or None",
        'The margin m > 0 of ``"noninferiority"`` and ``"equivalence"``, in the metric\'s '
        "units (e.g. 0.005 of nDCG); refused with the other hypotheses.",
    ),
    Declared(
        "tolerance", 0.0, "float",
        "``wins``, ``ties``, ``losses`` count users whose improvement g_u is > tolerance "
        "(the system better), within it, or < -tolerance (worse); 0: exact ties.",
    ),
    Declared(
        "direction", None, '{"higher", "lower", "none"}, mapping or None',
        "Which way is better: the metric's declared direction by default (the ``direction`` "
        "column; ``mean_rank``, ``fallout``, ``gini``... are lower-is-better), or "
        '``"higher"`` / ``"lower"`` for every metric, or a mapping per metric (a column that '
        "is not a metric string, or a descriptive measure such as ``arp``, declares none). "
        "Without one, ``wins``/``ties``/``losses`` are null and one-sided hypotheses are "
        "refused; ``diff`` is always system - baseline.",
    ),
    Declared(
        "risk_alpha", None, "float or None",
        "Risk-sensitive comparison (ndeval's and gdeval's ``-riskAlpha``): a number alpha "
        ">= 0 adds ``urisk`` (URisk, the mean over paired users of the improvement g_u, "
        "each loss weighted by 1 + alpha; Dincer, Macdonald & Ounis 2014), ``trisk`` (TRisk "
        "= URisk / (sd / sqrt(n)), the paired t statistic of the weighted improvements: "
        "< -2 a significant risk, > 2 a significant gain) and ``georisk`` (GeoRisk, Dincer "
        "et al. 2016: the system's mean and its risk against every system of the group, "
        "over the users with a value for all of them; for metrics where higher is better "
        "and scores >= 0, else null) to the result. URisk and TRisk read the metric's "
        "direction (null without one). ``None``: no risk columns.",
    ),
)  # fmt: skip

_POSITIONS = (
    *_ROLES[:3],
    Declared(
        "score", None, "str or None",
        "The column to rank by, higher is better, compared as float64. ``rank`` is then "
        "the column written (overwritten if present); ``None``: the ranks in ``rank`` are "
        "read and checked.",
    ),
    Declared(
        "ties", "item_desc", '{"item_desc", "item_asc", "input"}',
        'How equal scores are ordered: ``"item_desc"`` (trec_eval: item id descending), '
        '``"item_asc"`` (item id ascending), ``"input"`` (the order of the rows). Item ids '
        "compare by value.",
    ),
    Declared(
        "duplicates", "error", '{"error", "first"}',
        'A (user, item) recommended twice: ``"error"`` or ``"first"`` (keep its best '
        "position; score-derived ranks are then re-numbered).",
    ),
    Declared(
        "by", None, "str, sequence of str or None",
        "Columns that identify separate lists besides the user (model, fold...).",
    ),
)  # fmt: skip

#: The options of ``positions`` (:class:`PositionOptions`), declared once.
POSITIONS: Final[Mapping[str, Declared]] = {option.name: option for option in _POSITIONS}

#: The statistics options of ``compare`` (:class:`StatisticsOptions`), declared once.
STATISTICS: Final[Mapping[str, Declared]] = {option.name: option for option in _STATISTICS}

#: The default of every option: the one place it is written.
DEFAULTS: Final[Mapping[str, object]] = {name: d.default for name, d in DECLARED.items()}

#: The inputs of the measures beside the lists and the truth, in declaration order.
INPUTS: Final[tuple[Declared, ...]] = _LIST_INPUTS

#: The options that hold frames: the frame boundary reads them at each face, as it reads
#: ``recs`` and the truth (:mod:`polars_rankmetrics._frames`).
FRAME_OPTIONS: Final = tuple(option.name for option in _LIST_INPUTS if option.frame)


def travelling(*ways: Travel) -> tuple[Declared, ...]:
    """The inputs that travel one of ``ways`` (:attr:`Declared.travels`), in declaration order.

    Examples
    --------
    >>> [option.name for option in travelling("history", "catalog")]
    ['interactions', 'items']
    """
    return tuple(option for option in INPUTS if option.travels in ways)


def names(declaration: type) -> tuple[str, ...]:
    """The keyword names of one of the declarations above, in declaration order."""
    return tuple(declaration.__annotations__)


def conventions_given(options: EvaluateOptions) -> dict[str, Any]:
    """The convention keywords of ``options``, as ``conventions.resolve`` takes them."""
    return {name: options.get(name) for name in names(ConventionOptions) if name != "conventions"}


def read_statistics(given: Mapping[str, object]) -> tuple[StatisticsOptions, dict[str, object]]:
    """A call's statistics options with their defaults, and the other keywords it was given.

    Examples
    --------
    >>> statistics, rest = read_statistics({"test": "wilcoxon", "score": "s"})
    >>> statistics["test"], statistics["ci"], rest
    ('wilcoxon', 0.95, {'score': 's'})
    """
    own = {name: value for name, value in given.items() if name in STATISTICS}
    rest = {name: value for name, value in given.items() if name not in STATISTICS}
    defaults = {name: option.default for name, option in STATISTICS.items()}
    return cast("StatisticsOptions", {**defaults, **own}), rest


def read_inputs(given: Mapping[str, object], *, function: str) -> ListInputs:
    """The inputs of a call (:class:`ListInputs`): unknown keywords refused, defaults filled in.

    Examples
    --------
    >>> read_inputs({"category": "genre"}, function="list_metrics")["items"] is None
    True
    >>> read_inputs({"itmes": None}, function="list_metrics")
    Traceback (most recent call last):
    ...
    TypeError: list_metrics() got an unexpected keyword argument 'itmes'; did you mean 'items'?
    """
    known = names(ListInputs)
    unknown = [name for name in given if name not in known]
    if unknown:
        close = difflib.get_close_matches(unknown[0], list(known), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else f"; inputs are {list(known)}"
        raise TypeError(f"{function}() got an unexpected keyword argument {unknown[0]!r}{hint}")
    defaults = {option.name: option.default for option in INPUTS}
    return cast("ListInputs", {**defaults, **given})


def read_positions(given: Mapping[str, object], *, function: str) -> PositionOptions:
    """The options of a call of ``positions``: unknown keywords refused, defaults filled in.

    Examples
    --------
    >>> read_positions({"score": "s"}, function="positions")["ties"]
    'item_desc'
    """
    unknown = [name for name in given if name not in POSITIONS]
    if unknown:
        close = difflib.get_close_matches(unknown[0], list(POSITIONS), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else f"; options are {list(POSITIONS)}"
        raise TypeError(f"{function}() got an unexpected keyword argument {unknown[0]!r}{hint}")
    defaults = {name: option.default for name, option in POSITIONS.items()}
    return cast("PositionOptions", {**defaults, **given})


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
    if unknown and unknown[0] in STATISTICS:
        raise TypeError(
            f"{function}() got an unexpected keyword argument {unknown[0]!r}: it is an option "
            "of compare and compare_per_user (how systems are tested)"
        )
    if unknown:
        close = difflib.get_close_matches(unknown[0], [*DEFAULTS, *STATISTICS], n=1)
        hint = f"; did you mean {close[0]!r}?" if close else f"; options are {list(DEFAULTS)}"
        raise TypeError(f"{function}() got an unexpected keyword argument {unknown[0]!r}{hint}")
    return cast("EvaluateOptions", {**DEFAULTS, **given})
