"""``evaluate``: metric strings in, per-user scores or their means out, in one query.

The pipeline, built once on ``LazyFrame``, reads the measure registry
(:mod:`polars_rankmetrics._measures`) for everything measure-specific:

1. rank the recommendations (from the score when given) and cut them to the
   largest cutoff requested;
2. keep the truth rows with a positive grade and, for groups that only the
   recommendations have (models), repeat them per group; per user, count the
   relevant items (m_u) and, if a measure needs it, the ideal DCG;
3. join those truth rows with the ranked cut (the hits table): each relevant
   item recommended within the cut, with its position. Non-relevant
   recommendations never change a measure that reads the hits, so they are not
   carried past the join. Without a relevance column every truth row has grade
   1: a hit takes nothing from its truth row, and a semi join (the
   recommendations whose key is in the truth) replaces the pairing join;
4. one ``group_by(by..., user).agg(...)`` gathers the partial sums the
   requested measures declare, and their per-user formulas give the parts;
5. apply the users-counted conventions (:func:`per_user_parts`), then combine
   users per ``by`` group as each measure says (:func:`aggregate`).
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from polars_rankmetrics import _formulas as formula
from polars_rankmetrics import _measures as registry
from polars_rankmetrics import _validation as v
from polars_rankmetrics import ranking as r
from polars_rankmetrics._measures import beyond_accuracy as ba
from polars_rankmetrics._measures._registry import (
    GRADE,
    HIT_INDEX,
    IDEAL_RANK,
    MAX_GRADE,
    N_NONRELEVANT,
    N_RELEVANT,
    NONRELEVANT_ABOVE,
    RELEVANT,
    RELEVANT_ABOVE,
    TIE_RELEVANT,
    TIE_SIZE,
    UNJUDGED_ABOVE,
    Aggregation,
    Context,
    Measure,
    part_column,
)
from polars_rankmetrics._names import PREFIX, check_roles
from polars_rankmetrics._pipeline.aggregate import exact_mean, fixed_point
from polars_rankmetrics._pipeline.overlap import MIN_USER_SHARE, warn_if_disjoint_frames
from polars_rankmetrics.conventions import (
    CONVENTION_KEYWORDS,
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
    resolve,
)

__all__ = [
    "AggregationPart",
    "Ideal",
    "MetricSpec",
    "NonpositiveScores",
    "Preset",
    "Unjudged",
    "UserSets",
    "UsersWithoutRecs",
    "UsersWithoutTruth",
    "aggregate",
    "aggregation_parts",
    "evaluate",
    "parse_metric",
    "parse_metrics",
    "per_user_parts",
]

_PATTERN = re.compile(
    r"^\s*(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*"
    r"(?:\((?P<params>[^()]*)\))?\s*"
    r"(?:@\s*(?P<cutoffs>[0-9]+(?:\s*,\s*[0-9]+)*))?\s*$"
)
_MAX_TABLE = 1 << 20  # most entries of the ideal DCG's table of discount prefix sums
_TOP_GAIN = f"{PREFIX}top_gain"  # the user's highest gain (ideal="k")
_POSITION = f"{PREFIX}rank"  # positions derived from a score, when ``rank`` names another role
_HIT_ROW = f"{PREFIX}hit_row"  # a hit row's recommendation row, for the checks on the hit rows
_HIT_USERS = f"{PREFIX}hit_users"  # users with a hit (the overlap warning's evidence)
_KEY = f"{PREFIX}key"  # the (by..., user, item) join key packed into one integer


@dataclass(frozen=True)
class MetricSpec:
    """One requested metric: its label (the output column), canonical name, cutoff, parameters.

    ``params`` holds every parameter of the measure as ``(name, value)`` pairs,
    defaults filled in (``None``: decided by the data).
    """

    label: str
    name: str
    k: int | None
    params: tuple[tuple[str, float | None], ...] = ()


def parse_metrics(metrics: str | Sequence[str]) -> list[MetricSpec]:
    """Parse metric strings, expanding ``"name@k1,k2,..."`` into one metric per cutoff.

    Accepted forms: ``"name"``, ``"name@k"``, ``"name@k1,k2,k3"`` (labels
    ``name@k1``, ``name@k2``...), and with parameters ``"name(p=v, q=w)@k"``.
    Names are case-insensitive; the label of a single metric is the string as
    given. Labels must be distinct.

    Examples
    --------
    >>> [spec.label for spec in parse_metrics(["ndcg@5,10,20", "mrr"])]
    ['ndcg@5', 'ndcg@10', 'ndcg@20', 'mrr']
    """
    texts = [metrics] if isinstance(metrics, str) else list(metrics)
    specs = [spec for text in texts for spec in _parse(text)]
    if not specs:
        raise ValueError("metrics is empty: ask for at least one, e.g. ['map@12']")
    labels = [spec.label for spec in specs]
    repeated = sorted({label for label in labels if labels.count(label) > 1})
    if repeated:
        raise ValueError(f"metric(s) {repeated} requested twice")
    return specs


def parse_metric(text: str) -> MetricSpec:
    """Parse one metric string ``"name"``, ``"name@k"`` or ``"name(p=v)@k"``.

    Names come from the measure registry (case-insensitive, aliases accepted);
    an unknown name suggests the closest. ``"hits@k"`` is the hit rate (an
    alias of ``hit_rate``), not ranx's count of relevant items retrieved,
    which is ``n_relevant_retrieved@k``. For ``"name@k1,k2"``, which is several
    metrics, use :func:`parse_metrics`.

    Examples
    --------
    >>> parse_metric("MAP@12")
    MetricSpec(label='MAP@12', name='map', k=12, params=())
    >>> parse_metric("hits@5")
    MetricSpec(label='hits@5', name='hit_rate', k=5, params=())
    """
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
) -> tuple[tuple[str, float | None], ...]:
    declared = {param.name: param for param in measure.params}
    given: dict[str, float] = {}
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
            try:
                number = param.kind(value)
            except ValueError:
                kind = "an integer" if param.kind is int else "a number"
                raise ValueError(
                    f"parameter {name!r} in {text!r} must be {kind}, got {value!r}"
                ) from None
            given[name] = param.check(number) if param.check else number
    return tuple((param.name, given.get(param.name, param.default)) for param in measure.params)


@dataclass(frozen=True)
class AggregationPart:
    """How one metric's per-user parts combine into its value for a group of users.

    ``kind`` ``"mean"``: mean of the non-null ``columns[0]``; ``"pooled"``:
    ``sum(num) / sum(den)`` (``columns`` = (num, den); null when ``sum(den) = 0``);
    ``"geometric_mean"``: ``exp(mean(log))``; ``"sum"``: sum; ``"group"``: the
    group's one value (the first). Only sums and counts are needed, so another
    engine can combine partial results.
    """

    label: str
    kind: Aggregation
    columns: tuple[str, ...]


def aggregation_parts(metrics: str | Sequence[str]) -> list[AggregationPart]:
    """The part columns of each metric and how they combine over users.

    Examples
    --------
    >>> aggregation_parts(["map@5", "pooled_recall@20"])  # doctest: +NORMALIZE_WHITESPACE
    [AggregationPart(label='map@5', kind='mean', columns=('map@5',)),
     AggregationPart(label='pooled_recall@20', kind='pooled',
                     columns=('pooled_recall@20|num', 'pooled_recall@20|den'))]
    """
    return [_aggregation_part(spec) for spec in parse_metrics(metrics)]


def _aggregation_part(spec: MetricSpec) -> AggregationPart:
    measure = registry.lookup(spec.name)
    columns = tuple(part_column(spec.label, suffix) for suffix in measure.suffixes)
    return AggregationPart(spec.label, measure.aggregation, columns)


def _combine(part: AggregationPart) -> pl.Expr:
    columns = [pl.col(name) for name in part.columns]
    # means the same to the last bit whatever order the users come in (pooled and summed
    # parts are counts, whose float sums are exact): the frame has fixed_point's columns
    if part.kind == "mean":
        return exact_mean(part.columns[0]).alias(part.label)
    if part.kind == "pooled":
        # OTTO: pooled over users, sum(num) / sum(den), not a mean of ratios; no
        # evaluated user: null like every other mean, not 0/0 = NaN
        num, den = columns
        return pl.when(den.sum() > 0).then(num.sum() / den.sum()).alias(part.label)
    if part.kind == "geometric_mean":
        return exact_mean(part.columns[0]).exp().alias(part.label)
    if part.kind == "sum":
        return columns[0].sum().alias(part.label)
    return columns[0].first().alias(part.label)


def per_user_values(specs: Sequence[MetricSpec]) -> list[pl.Expr]:
    """Each metric's per-user value from its part columns: ``evaluate(per_user=True)``'s columns.

    With :func:`aggregate` over the same parts, one per-user pass gives both
    the per-user values and the means (the command line's ``--per-user``).
    """
    values = []
    for spec in specs:
        measure = registry.lookup(spec.name)
        parts = {suffix: pl.col(part_column(spec.label, suffix)) for suffix in measure.suffixes}
        values.append(measure.value(parts).alias(spec.label))
    return values


def _aggregate_lf(parts: pl.LazyFrame, specs: Sequence[MetricSpec], by: list[str]) -> pl.LazyFrame:
    combos = [_aggregation_part(spec) for spec in specs]
    averaged = [c.columns[0] for c in combos if c.kind in ("mean", "geometric_mean")]
    parts = parts.with_columns(fixed_point(averaged))
    combined = [_combine(combo) for combo in combos]
    if by:
        return parts.group_by(by).agg(combined).sort(by)
    return parts.select(combined)


def aggregate(
    parts: r.FrameT, metrics: str | Sequence[str], *, by: str | Sequence[str] | None = None
) -> r.FrameT:
    """Combine per-user parts (:func:`per_user_parts`) into one row per ``by`` group.

    ``aggregate(per_user_parts(recs, truth, metrics, by=by, ...), metrics, by=by)``
    is exactly ``evaluate(recs, truth, metrics, by=by, ...)``. Each metric's
    parts combine as :func:`aggregation_parts` says.

    Parameters
    ----------
    parts
        One row per (by..., user) with the part columns of each metric.
    metrics
        The metric strings the parts were computed for.
    by
        The group columns (sorted ascending in the result); ``None``: one row.

    Examples
    --------
    >>> import polars as pl
    >>> parts = pl.DataFrame({
    ...     "user": [1, 2],
    ...     "mrr": [1.0, 0.5],
    ...     "pooled_recall@2|num": [1.0, 1.0],
    ...     "pooled_recall@2|den": [1.0, 2.0],
    ... })
    >>> aggregate(parts, ["mrr", "pooled_recall@2"])
    shape: (1, 2)
    ┌──────┬─────────────────┐
    │ mrr  ┆ pooled_recall@2 │
    │ ---  ┆ ---             │
    │ f64  ┆ f64             │
    ╞══════╪═════════════════╡
    │ 0.75 ┆ 0.666667        │
    └──────┴─────────────────┘
    """
    specs = parse_metrics(metrics)
    lf = r.to_lazy(parts, name="parts")
    schema = lf.collect_schema()
    groups = r.as_list(by)
    needed = {"by": groups, "parts": [c for s in specs for c in _aggregation_part(s).columns]}
    missing = [name for names in needed.values() for name in names if name not in schema]
    if missing:
        raise ValueError(
            f"parts is missing column(s) {missing}; it has {list(schema.names())} "
            "(compute it with per_user_parts for the same metrics)"
        )
    not_numbers = {name: schema[name] for name in needed["parts"] if not schema[name].is_numeric()}
    if not_numbers:
        raise TypeError(
            f"parts column(s) {list(not_numbers)} must be numeric, got dtype(s) "
            f"{[str(dtype) for dtype in not_numbers.values()]} (per_user_parts gives Float64)"
        )
    return r.like(parts, _aggregate_lf(lf, specs, groups))


@dataclass(frozen=True)
class _Request:
    """One requested metric with its measure and expression context."""

    spec: MetricSpec
    measure: Measure
    ctx: Context

    def part_names(self) -> list[str]:
        return [part_column(self.spec.label, suffix) for suffix in self.measure.suffixes]


def per_user_parts(
    recs: r.FrameT,
    truth: pl.DataFrame | pl.LazyFrame | None,
    metrics: str | Sequence[str],
    *,
    user: str = "user",
    item: str = "item",
    rank: str = "rank",
    score: str | None = None,
    relevance: str | None = None,
    by: str | Sequence[str] | None = None,
    denominator: Denominator | None = None,
    gain: Gain | Mapping[float, float] | None = None,
    ties: Ties | None = None,
    relevance_level: float | None = None,
    users_without_recs: UsersWithoutRecs | None = None,
    users_without_truth: UsersWithoutTruth | None = None,
    duplicates: Duplicates | None = None,
    ideal: Ideal | None = None,
    unjudged: Unjudged | None = None,
    nonpositive_scores: NonpositiveScores | None = None,
    user_sets: UserSets | None = None,
    conventions: Preset | Conventions = "default",
    interactions: Any = None,
    items: Any = None,
    category: str | None = None,
) -> r.FrameT:
    """Per-user parts of each metric: what :func:`aggregate` combines into ``evaluate``'s means.

    The keywords are :func:`evaluate`'s. One row per (by..., user) counted by
    the conventions, sorted by those keys; for each metric label the columns
    its aggregation reads (:func:`aggregation_parts`), all Float64:

    * ``"mean"``: ``label``, the per-user value; null where the user is not
      counted for this metric (``mean_rank`` without a relevant hit);
    * ``"pooled"``: ``label|num`` and ``label|den``;
    * ``"geometric_mean"``: ``label|log``;
    * ``"sum"``, ``"group"``: ``label``.

    Examples
    --------
    >>> import polars as pl
    >>> recs = pl.DataFrame({"user": [1, 1, 2], "item": ["a", "b", "a"], "rank": [1, 2, 1]})
    >>> truth = pl.DataFrame({"user": [1, 2, 2], "item": ["b", "b", "c"]})
    >>> per_user_parts(recs, truth, ["mrr", "pooled_recall@1"])
    shape: (2, 4)
    ┌──────┬─────┬─────────────────────┬─────────────────────┐
    │ user ┆ mrr ┆ pooled_recall@1|num ┆ pooled_recall@1|den │
    │ ---  ┆ --- ┆ ---                 ┆ ---                 │
    │ i64  ┆ f64 ┆ f64                 ┆ f64                 │
    ╞══════╪═════╪═════════════════════╪═════════════════════╡
    │ 1    ┆ 0.5 ┆ 0.0                 ┆ 1.0                 │
    │ 2    ┆ 0.0 ┆ 0.0                 ┆ 1.0                 │
    └──────┴─────┴─────────────────────┴─────────────────────┘
    """
    parts, checks, requests, keys, _ = _plan_call(locals())
    columns = [name for request in requests for name in request.part_names()]
    result = parts.select(*keys, *columns).sort(keys)
    return r.like(recs, v.guard(result, checks))


def evaluate(
    recs: r.FrameT,
    truth: pl.DataFrame | pl.LazyFrame | None,
    metrics: str | Sequence[str],
    *,
    user: str = "user",
    item: str = "item",
    rank: str = "rank",
    score: str | None = None,
    relevance: str | None = None,
    by: str | Sequence[str] | None = None,
    per_user: bool = False,
    denominator: Denominator | None = None,
    gain: Gain | Mapping[float, float] | None = None,
    ties: Ties | None = None,
    relevance_level: float | None = None,
    users_without_recs: UsersWithoutRecs | None = None,
    users_without_truth: UsersWithoutTruth | None = None,
    duplicates: Duplicates | None = None,
    ideal: Ideal | None = None,
    unjudged: Unjudged | None = None,
    nonpositive_scores: NonpositiveScores | None = None,
    user_sets: UserSets | None = None,
    conventions: Preset | Conventions = "default",
    interactions: Any = None,
    items: Any = None,
    category: str | None = None,
) -> r.FrameT:
    """Evaluate recommendations against the truth: per-user scores or their means.

    Parameters
    ----------
    recs
        Long-format recommendations: one row per (user, item) with a ``rank``
        (1 = top) or a ``score`` (higher is better).
    truth
        One row per judged (user, item), optionally with graded relevance.
    metrics
        Metric strings (see :func:`parse_metrics`): ``"name@k"``, ``"name"``,
        ``"name@k1,k2,k3"`` (one column per cutoff) or ``"name(param=v)@k"``.
        Names: ``precision@k``, ``recall``, ``f1@k``, ``hit_rate``
        (``hits``, ``success``: 1 if anything relevant is in the top k),
        ``n_relevant_retrieved`` (``num_hits``: the count, ranx's ``hits``;
        **warning**: ``hits@k`` here is the hit rate, 0 or 1 per user, while
        ranx's ``hits@k`` is this count),
        ``map`` (``ap``), ``mrr`` (``rr``), ``ndcg``, ``dcg``, ``r_precision``,
        ``mean_rank``, ``pooled_recall@k`` (``micro_recall``),
        ``fbeta(beta=b)@k``, ``err(max_grade=g)@k``, ``judged@k``. Measures of
        the lists themselves, which read no truth (see
        :func:`polars_rankmetrics.list_metrics` for their formulas and
        conventions): ``coverage``, ``novelty``, ``arp``,
        ``long_tail(head_share=0.2)``, ``gini``, ``personalization``, ``ild``,
        ``calibration(alpha=0.01)``. Each becomes a Float64 column named
        exactly as given. ``docs/REGISTRY.md`` lists each measure's definition.
    user, item, rank, score, relevance
        Column roles, distinct from each other and from ``by``. With
        ``score``, ranks are derived per user (``ties``); with
        ``relevance=None`` every truth row is relevant with grade 1.
    by
        Columns evaluated side by side. Those in both frames join with the
        truth (folds, time splits); those only in ``recs`` (models) share it.
    per_user
        ``False``: one row per ``by`` group, each metric combined over users
        as :func:`aggregation_parts` says (``aggregate(per_user_parts(...))``).
        ``True``: one row per (by..., user) for every evaluated user, sorted by
        those keys.
    denominator
        AP denominator: ``"min_k"`` (Kaggle), ``"relevant"`` (trec_eval),
        ``"hits"``, ``"k"`` (the cutoff: RecTools ``divide_by_k=True``;
        needs ``map@k``). See :func:`polars_rankmetrics.average_precision`.
    gain
        NDCG/DCG gain: ``"linear"`` (trec_eval), ``"exponential"`` (2^rel - 1)
        or a mapping ``{grade: gain}`` (trec_eval ``-mndcg.1=3,2=9``: grades
        not listed gain their own value; grades > 0, gains finite and >= 0).
        The ideal list is sorted by gain.
    ideal
        NDCG's ideal DCG: ``"truth"`` (the user's truth sorted by gain) or
        ``"k"`` (k items of the user's highest gain, RecTools' NDCG, "SDCG";
        binary: ``sum_{i<=k} 1/log2(i+1)``; needs ``ndcg@k``).
    ties
        Order of equal scores: ``"item_desc"`` (trec_eval), ``"item_asc"``, ``"input"``,
        or ``"average"``: the exact expected value over every order of the tied
        items (McSherry & Najork 2008; sklearn ``ndcg_score(ignore_ties=False)``),
        from ``score`` only, for precision, recall, f1, fbeta, hit_rate,
        n_relevant_retrieved, pooled_recall, map (denominator not ``"hits"``),
        mrr, dcg and ndcg; other measures refuse it.
    relevance_level
        Minimum grade that binary metrics count as relevant (trec_eval ``-l``);
        a finite number.
    users_without_recs
        Users with relevant truth but no recommendations: ``"zero"`` (they
        score 0 and count, as trec_eval ``-c``) or ``"exclude"``.
    users_without_truth
        Users without relevant truth, for whom recall, AP and NDCG are
        undefined: ``"exclude"`` (H&M), ``"judged"`` (those with truth rows,
        all non-relevant, count: trec_eval, ranx) or ``"zero"`` (those with
        recommendations or truth rows count; Santander). Counted users score
        0 on the binary metrics; NDCG and DCG keep the value of their raw
        grades (a relevance level can leave graded items below it, as with
        trec_eval ``-l``). ``users_without_recs="exclude"`` still leaves out
        users without recommendations.
    duplicates
        A (user, item) recommended twice: ``"error"`` or ``"first"`` (keep its
        best position; from scores, rank the list with its repeats removed).
        ``"error"`` refuses what can change a number, within the largest
        cutoff requested (a repeat further down changes nothing asked for):
        with given ranks and measures that read only relevant items (all but
        ``judged@k``), a relevant item twice or two relevant items at one
        position (a repeated non-relevant item is accepted: it takes no
        position from anyone); with ranks from scores or with ``judged@k``,
        any item twice (and with given ranks any position twice).
    unjudged
        Recommended items without a judgement, that is without a truth row
        or with a negative grade (trec_eval's "in the pool, unjudged"):
        ``"keep"`` or ``"remove"``, before positions are assigned, so the
        items below move up (condensed lists, Sakai 2007; trec_eval ``-J``,
        pytrec_eval ``judged_docs_only_flag``). Given ranks are re-numbered
        1, 2, ... in their order.
    nonpositive_scores
        ``"keep"`` or ``"drop"``: recommendations with a score <= 0 are not
        retrieved (removed before positions are assigned; needs ``score``).
    user_sets
        ``"any"`` or ``"strict"``: the (by..., user) of ``recs`` and of the
        truth (users with any truth row) must be the same, else the call
        raises naming how many are on one side only (ranx's strict check).
    conventions
        A preset, ``"default"`` or ``"trec"`` (trec_eval's conventions), or a
        :class:`polars_rankmetrics.Conventions` object. Every convention
        keyword left at ``None`` takes the preset's value. ``"trec"`` fixes
        ``denominator="relevant"``, ``gain="linear"`` and ``ties="item_desc"``
        (an explicit different value is refused) and defaults
        ``users_without_recs="exclude"`` (pass ``"zero"`` for trec_eval ``-c``)
        and ``users_without_truth="judged"``. ``"default"``: ``"min_k"``,
        ``"linear"``, ``"item_desc"``, ``"zero"``, ``"exclude"``, ``"error"``,
        ``ideal="truth"``, ``unjudged="keep"``, ``nonpositive_scores="keep"``,
        ``user_sets="any"``. ``"trec"`` also fixes ``ideal="truth"``; a gain
        mapping is allowed with it (trec_eval's ``-mndcg``). See
        :mod:`polars_rankmetrics.conventions`.
    interactions, items, category
        For the measures of the lists: the training history (novelty, arp,
        long_tail, calibration), the item catalog (coverage, gini, ild,
        calibration) and its category column (ild, calibration), as in
        :func:`polars_rankmetrics.list_metrics`. ``truth`` may be ``None``
        when only such measures are asked for. Their users are the users with
        a list, whatever the truth; with ``per_user=True`` a metric is null on
        the rows of users it does not count, and a group measure (coverage,
        gini, personalization) shows its group's value on every row.

    Returns
    -------
    A frame of the kind ``recs`` is (a LazyFrame stays lazy, nothing is
    collected early); errors in the data are raised when it is collected.

    Notes
    -----
    Evaluated users are the users of the truth with at least one relevant
    item (per ``by`` group), subject to ``users_without_recs``, plus, with
    ``users_without_truth="zero"``, users recommended something without any
    relevant truth (``"judged"``: users with truth rows but no relevant one).
    A ``by`` group that exists only in ``recs`` (a model) is judged on the
    whole truth of the groups it shares with the truth (folds): a model with
    no recommendations at all in some fold is not evaluated there.
    ``mean_rank`` averages only the users whose first relevant
    item was recommended; ``pooled_recall@k`` is ``sum(hits) / sum(min(k, m_u))``
    (OTTO), per user ``hits / min(k, m_u)``. Ids compare by value (see
    :func:`polars_rankmetrics.relevance`); frames in memory sharing almost no
    ids warn with :class:`polars_rankmetrics.IdOverlapWarning`, and
    :func:`polars_rankmetrics.check_overlap` checks LazyFrames explicitly.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankmetrics as prm
    >>> recs = pl.DataFrame({
    ...     "model": ["a"] * 5 + ["b"] * 5,
    ...     "user": [1] * 10,
    ...     "item": ["A", "B", "C", "D", "E", "A", "C", "E", "B", "D"],
    ...     "rank": [1, 2, 3, 4, 5] * 2,
    ... })
    >>> truth = pl.DataFrame({"user": [1, 1, 1], "item": ["B", "D", "Z"]})
    >>> prm.evaluate(recs, truth, ["map@5", "mrr", "precision@5"], by="model")
    shape: (2, 4)
    ┌───────┬──────────┬──────┬─────────────┐
    │ model ┆ map@5    ┆ mrr  ┆ precision@5 │
    │ ---   ┆ ---      ┆ ---  ┆ ---         │
    │ str   ┆ f64      ┆ f64  ┆ f64         │
    ╞═══════╪══════════╪══════╪═════════════╡
    │ a     ┆ 0.333333 ┆ 0.5  ┆ 0.4         │
    │ b     ┆ 0.216667 ┆ 0.25 ┆ 0.4         │
    └───────┴──────────┴──────┴─────────────┘
    >>> prm.evaluate(recs, truth, "ndcg@2,5", by="model")
    shape: (2, 3)
    ┌───────┬──────────┬──────────┐
    │ model ┆ ndcg@2   ┆ ndcg@5   │
    │ ---   ┆ ---      ┆ ---      │
    │ str   ┆ f64      ┆ f64      │
    ╞═══════╪══════════╪══════════╡
    │ a     ┆ 0.386853 ┆ 0.498189 │
    │ b     ┆ 0.0      ┆ 0.383649 │
    └───────┴──────────┴──────────┘
    """
    if not isinstance(per_user, bool):
        raise TypeError(f"per_user must be True or False, got {per_user!r}")
    parts, checks, requests, keys, hit_users = _plan_call(locals())
    if per_user:
        result = parts.select(*keys, *per_user_values([request.spec for request in requests]))
        result = result.sort(keys)
    else:
        result = _aggregate_lf(parts, [request.spec for request in requests], r.as_list(by))
    in_memory = isinstance(recs, pl.DataFrame) and isinstance(truth, pl.DataFrame)
    probe = v.Probe(hit_users) if in_memory and hit_users is not None else None
    evaluated = r.like(recs, v.guard(result, checks, probes=[] if probe is None else [probe]))
    if (
        isinstance(recs, pl.DataFrame)
        and isinstance(truth, pl.DataFrame)
        and not _overlap_shown(probe, truth)
    ):
        # after the data checks passed; a lazy query is not run early (see check_overlap)
        warn_if_disjoint_frames(recs, truth, user=user, item=item)
    return evaluated


def _overlap_shown(probe: v.Probe | None, truth: pl.DataFrame | pl.LazyFrame | None) -> bool:
    """Whether the users with a hit settle that the frames share ids (no warning possible).

    Each user with a hit is a truth user with a recommendation and each hit a
    recommended truth item, and the truth has at most ``truth.height`` users:
    ``hit users >= 1% of the truth's rows`` leaves the overlap warning's rule
    (fewer than 1% of the truth's users recommended anything, or no truth
    item recommended) nothing to find, without a look at the ids.
    """
    if probe is None or not isinstance(truth, pl.DataFrame):
        return False
    users = probe.values.get(_HIT_USERS) or 0
    return bool(users) and users >= MIN_USER_SHARE * truth.height


def _plan_call(
    arguments: Mapping[str, Any],
) -> tuple[
    pl.LazyFrame,
    list[tuple[pl.LazyFrame, list[v.DataCheck]]],
    list[_Request],
    list[str],
    pl.LazyFrame | None,
]:
    """:func:`_plan` for a call of :func:`evaluate` or :func:`per_user_parts`.

    ``arguments``: the call's arguments by name (both functions take the same
    keywords), read here once: the conventions resolved, the roles gathered.
    """
    conv = resolve(
        arguments["conventions"], **{name: arguments[name] for name in CONVENTION_KEYWORDS}
    )
    roles = _Roles(
        arguments["user"],
        arguments["item"],
        arguments["rank"],
        arguments["score"],
        arguments["relevance"],
        tuple(r.as_list(arguments["by"])),
    )
    described = _ListInputs(arguments["interactions"], arguments["items"], arguments["category"])
    return _plan(
        arguments["recs"],
        arguments["truth"],
        arguments["metrics"],
        roles,
        conv,
        described=described,
    )


@dataclass(frozen=True)
class _Roles:
    user: str
    item: str
    rank: str
    score: str | None
    relevance: str | None
    by: tuple[str, ...]


@dataclass(frozen=True)
class _ListInputs:
    """What the measures of the lists themselves read besides the lists (beyond accuracy)."""

    interactions: Any
    items: Any
    category: str | None


def _requests(
    specs: Sequence[MetricSpec], roles: _Roles, conv: Conventions
) -> tuple[list[_Request], str, list[str]]:
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
        _Request(
            spec,
            registry.lookup(spec.name),
            Context(spec.k, dict(spec.params), conv, rank=position),
        )
        for spec in specs
    ]
    return requests, position, keys


def _plan(
    recs: pl.DataFrame | pl.LazyFrame,
    truth: pl.DataFrame | pl.LazyFrame | None,
    metrics: str | Sequence[str],
    roles: _Roles,
    conv: Conventions,
    *,
    described: _ListInputs,
) -> tuple[
    pl.LazyFrame,
    list[tuple[pl.LazyFrame, list[v.DataCheck]]],
    list[_Request],
    list[str],
    pl.LazyFrame | None,
]:
    """The per-user parts frame (unsorted, unguarded), its data checks, the requests, the keys.

    And, when the hits table is held (computed once), a one-row frame of its
    number of distinct users (:data:`_HIT_USERS`), else ``None``.
    """
    specs = parse_metrics(metrics)
    check_roles(
        user=roles.user,
        item=roles.item,
        by=roles.by,
        recs_only={"score": roles.score} if roles.score is not None else {"rank": roles.rank},
        truth_only={"relevance": roles.relevance},
    )
    requests, position, keys = _requests(specs, roles, conv)
    tie_average = conv.ties == "average"
    if tie_average:
        _check_tie_average(requests, roles)
    recs_spec = r.RecsSpec(
        roles.user,
        roles.item,
        position,
        roles.score,
        roles.by,
        # ties="average": the duplicate policy runs on a strict order, then each group of
        # equal scores gets its first position and size (_ranked_cut)
        "item_desc" if conv.ties == "average" else conv.ties,
        conv.duplicates,
    )
    # measures of the lists themselves (coverage, novelty, ...) read no truth
    truth_requests = [
        request for request in requests if "beyond_accuracy" not in request.measure.inputs
    ]
    described_requests = [
        request for request in requests if "beyond_accuracy" in request.measure.inputs
    ]
    in_memory = isinstance(recs, pl.DataFrame)
    if truth_requests and truth is None:
        raise ValueError(
            f"{[request.spec.label for request in truth_requests]} compare the lists with the "
            "truth: pass truth= (it may be None only when every metric describes the lists "
            f"themselves: {_truthless_names()})"
        )
    # given ranks cut at a finite k: rows are checked where they are read (the cut)
    checks_on_cut = _checks_on_cut(roles.score, conv, specs)
    if truth_requests and truth is not None:
        recs_lf, truth_lf, truth_spec, checks = r.prepare(
            recs,
            truth,
            recs_spec,
            (roles.relevance, conv.relevance_level),
            recs_row_checks=not checks_on_cut,
        )
    else:
        recs_lf, checks = _recs_alone(recs, recs_spec, row_checks=not checks_on_cut)
    _check_ideal(requests, conv)
    if truth is None and (conv.unjudged == "remove" or conv.nonpositive_scores == "drop"):
        raise ValueError(
            "unjudged='remove' and nonpositive_scores='drop' change the lists compared with "
            "the truth: pass truth= (the measures of the lists alone read every row)"
        )
    retrieved = (
        _retrieved(recs_lf, truth_lf, recs_spec, truth_spec, conv)
        if truth_requests and truth is not None
        else None
    )
    # ranks given and no measure reads whole lists: only the hit rows can show a repeat
    # that changes a number, so the recs' repeats are checked (or dropped) there
    hits_only = roles.score is None and all(q.measure.repeats == "hits" for q in requests)
    ranked = _ranked_cut(
        recs_lf if retrieved is None else retrieved,
        recs_spec,
        specs,
        hold=in_memory,
        # rows removed before ranking: the lists are no longer runs of the input's rows
        run_lengths=(
            r.lengths_in_rank_order(recs, recs_spec)
            if retrieved is None and not tie_average
            else None
        ),
        renumber=retrieved is not None and roles.score is None,
        tie_groups=tie_average,
        drop_repeats=not hits_only,
    )
    checks.extend(
        r.cut_checks(recs_lf, ranked, recs_spec, in_memory=in_memory) if checks_on_cut else []
    )
    parts: pl.LazyFrame | None = None
    hit_rows: pl.LazyFrame | None = None
    hit_users: pl.LazyFrame | None = None
    if truth_requests and truth is not None:
        if conv.user_sets == "strict":
            checks.append(_user_sets_check(recs_lf, truth_lf, recs_spec, truth_spec))
        inputs = {name for request in truth_requests for name in request.measure.inputs}
        # only the ideal DCG reads the grades up front (an in-memory truth's distinct grades)
        levels = r.grade_levels(truth, truth_spec) if "ideal" in inputs else None
        per_user, hit_rows = _per_user(
            recs_lf,
            ranked,
            truth_lf,
            spec=recs_spec,
            truth_spec=truth_spec,
            requests=truth_requests,
            conv=conv,
            grade_levels=levels,
            truth_rows=truth.height if isinstance(truth, pl.DataFrame) else None,
            hit_row=_HIT_ROW if hits_only else None,
            hold=_largest_cutoff(specs) is not None,
            cut=_largest_cutoff(specs),
            join_key=_packed_key(
                truth, recs_lf, truth_lf, [*truth_spec.shared_by, roles.user, roles.item]
            ),
        )
        # held hits only: else counting their users would run the join once more
        held = in_memory and _largest_cutoff(specs) is not None
        hit_users = (
            hit_rows.select(pl.col(roles.user).n_unique().alias(_HIT_USERS)) if held else None
        )
        parts = _parts(
            per_user,
            recs_lf,
            _judged_users(recs_lf, truth_lf, recs_spec, truth_spec),
            spec=recs_spec,
            requests=truth_requests,
            conv=conv,
        )
        if roles.relevance is not None and "gain" in inputs:
            checks.append(
                (truth_lf, [_gain_check(roles, conv, in_memory=isinstance(truth, pl.DataFrame))])
            )
    if described_requests:
        parts, list_checks = _list_parts(parts, ranked, recs_spec, described_requests, described)
        checks.extend(list_checks)
    if parts is None:  # unreachable: metrics is never empty
        raise ValueError("metrics is empty")
    if hits_only and hit_rows is not None:
        # with given ranks, a repeated item or position changes a hits measure only where
        # a relevant item sits: check the (few) hit rows rather than every recommendation
        checks.append((hit_rows, r.hit_checks(recs_spec, _HIT_ROW, in_memory=in_memory)))
    else:
        # ranks from scores: the top k comes in no fixed order (in every layout the same
        # example, the first list's offending row at its best position)
        checks.extend(
            r.list_checks(
                ranked, recs_spec, in_memory=in_memory, by_position=roles.score is not None
            )
        )
    return parts, checks, requests, keys, hit_users


def _list_parts(
    parts: pl.LazyFrame | None,
    ranked: pl.LazyFrame,
    spec: r.RecsSpec,
    requests: Sequence[_Request],
    described: _ListInputs,
) -> tuple[pl.LazyFrame, list[tuple[pl.LazyFrame, list[v.DataCheck]]]]:
    """Add the measures of the lists themselves to the per-user parts.

    Their users are the users with a list in the cut, whatever the truth: the
    rows of ``parts`` (users judged on the truth) and those users are joined
    in full, each metric null on the rows of users it does not count, which
    every aggregation skips. A group measure's value is written on every row
    of its group.
    """
    from polars_rankmetrics import beyond  # noqa: PLC0415 - beyond imports this module's peers

    measures = {
        request.ctx.name(request.measure.name): ba.Measure(
            request.ctx.name(request.measure.name),
            request.measure.name,
            request.ctx.k,
            **{
                name: float(value)
                for name, value in request.ctx.params.items()
                if name in ("head_share", "alpha") and value is not None
            },
        )
        for request in requests
    }
    plan = beyond.plan_lists(
        ranked,
        list(measures.values()),
        by=spec.by,
        user=spec.user,
        item=spec.item,
        rank=spec.rank,
        interactions=described.interactions,
        items=described.items,
        category=described.category,
    )
    list_keys = spec.list_keys
    key_types = ranked.collect_schema()
    users = plan.users if plan.users is not None else ranked.select(list_keys).unique()
    # the list plan may widen id dtypes to match the interactions; give them back
    users = users.with_columns(pl.col(key).cast(key_types[key]) for key in list_keys)
    if parts is not None:
        users = parts.join(users, on=list_keys, how="full", coalesce=True)
    if plan.groups is not None:
        groups = plan.groups.with_columns(pl.col(key).cast(key_types[key]) for key in spec.by)
        users = (
            users.join(groups, on=list(spec.by), how="left")
            if spec.by
            else users.join(groups, how="cross")
        )
    finals = [
        expression.alias(part_column(request.spec.label, suffix))
        for request in requests
        for suffix, expression in request.measure.finals(request.ctx).items()
    ]
    return users.with_columns(finals), plan.checks


def _gain_check(roles: _Roles, conv: Conventions, *, in_memory: bool) -> v.DataCheck:
    """Grades whose gain overflows a float64 sum: NDCG would be inf / inf = NaN."""
    column = roles.relevance or ""
    grade = pl.col(column).cast(pl.Float64)
    # NaN has its own check; -inf and other grades <= 0 gain nothing
    bad = ~(formula.gain(grade, conv.gain) <= formula.GAIN_LIMIT) & ~grade.is_nan()
    limit = (
        "above 1e300"
        if conv.gain != "exponential"
        else f"above {math.log2(formula.GAIN_LIMIT + 1):.1f}, where 2^g - 1 passes 1e300"
    )
    # the message is formatted with {n}: a gain table's braces are doubled
    label = formula.gain_label(conv.gain).replace("{", "{{").replace("}", "}}")
    return v.DataCheck(
        bad=bad,
        message=f"truth column {column!r} (relevance) has {{n}} grade(s) too large for the "
        f"{label} gain (grades {limit}, or infinite): DCG and NDCG "
        "would overflow to inf or NaN; rescale the grades",
        show=(roles.user, roles.item, column),
        screen=bad.any() if in_memory else None,
    )


def _truthless_names() -> list[str]:
    return [m.name for m in registry.all_measures() if "beyond_accuracy" in m.inputs]


def _check_ideal(requests: Sequence[_Request], conv: Conventions) -> None:
    """``ideal="k"`` needs a cutoff on every measure that reads the ideal DCG."""
    if conv.ideal != "k":
        return
    for request in requests:
        if "ideal" not in request.measure.inputs:
            continue
        k = request.ctx.k
        if k is None:
            raise ValueError(
                f"ideal='k' makes the ideal DCG k items of the top gain, so "
                f"{request.spec.label!r} needs a cutoff, e.g. '{request.spec.name}@10'"
            )
        if k > _MAX_TABLE:
            raise ValueError(
                f"ideal='k' sums k discounts: the cutoff of {request.spec.label!r} must be at "
                f"most {_MAX_TABLE}"
            )


def _check_tie_average(requests: Sequence[_Request], roles: _Roles) -> None:
    """``ties="average"`` needs scores and measures whose expectation is implemented."""
    if roles.score is None:
        raise ValueError(
            "ties='average' averages over the orders of equal scores: pass score=<column> "
            "(given ranks have no ties to average)"
        )
    refused = [request.spec.label for request in requests if not request.measure.tie_average]
    if refused:
        supported = [m.name for m in registry.all_measures() if m.tie_average]
        raise ValueError(
            f"ties='average' is not implemented for {refused}: its exact expectation over "
            f"the orders of tied scores is implemented for {supported}; use another ties= "
            "for the others"
        )


def _retrieved(
    recs: pl.LazyFrame,
    truth: pl.LazyFrame,
    spec: r.RecsSpec,
    truth_spec: r.TruthSpec,
    conv: Conventions,
) -> pl.LazyFrame | None:
    """The recommendations left once ``unjudged``/``nonpositive_scores`` removed some (or None).

    Both remove rows before positions are assigned, so the rows below move up
    (condensed lists, Sakai 2007; trec_eval ``-J``).
    """
    kept = None
    if conv.nonpositive_scores == "drop":
        if spec.score is None:
            raise ValueError(
                "nonpositive_scores='drop' reads the scores: pass score=<column> (with given "
                "ranks there is no score to compare with 0)"
            )
        # NaN has its own data check; a null score is refused there too
        kept = recs.filter(pl.col(spec.score).cast(pl.Float64) > 0)
    if conv.unjudged == "remove":
        on = [*truth_spec.shared_by, spec.user, spec.item]
        judged = truth
        if truth_spec.relevance is not None:
            # trec_eval (form_res_rels.c): a negative grade is "in the pool but unjudged"
            judged = truth.filter(pl.col(truth_spec.relevance).cast(pl.Float64) >= 0)
        judged = judged.select(on).unique()
        kept = (recs if kept is None else kept).join(judged, on=on, how="semi")
    return kept


def _user_sets_check(
    recs: pl.LazyFrame, truth: pl.LazyFrame, spec: r.RecsSpec, truth_spec: r.TruthSpec
) -> tuple[pl.LazyFrame, list[v.DataCheck]]:
    """``user_sets="strict"``: every list's user has truth rows and every truth user a list."""
    in_recs, in_truth = f"{PREFIX}in_recs", f"{PREFIX}in_truth"
    keys = spec.list_keys
    listed = recs.select(keys).unique().with_columns(pl.lit(value=True).alias(in_recs))
    judged = _judged_users(recs, truth, spec, truth_spec).with_columns(
        pl.lit(value=True).alias(in_truth)
    )
    # sorted: the example rows of the message are the smallest keys, not a join's whim
    both = listed.join(judged, on=keys, how="full", coalesce=True).sort(keys)
    what = "(" + ", ".join(keys) + ")"
    hint = "; pass user_sets='any' to evaluate the users they share"
    return both, [
        v.DataCheck(
            bad=pl.col(in_truth).is_null(),
            message=f"user_sets='strict': {{n}} {what} value(s) in recs only "
            f"(recommendations but no truth row){hint}",
            show=tuple(keys),
        ),
        v.DataCheck(
            bad=pl.col(in_recs).is_null(),
            message=f"user_sets='strict': {{n}} {what} value(s) in truth only "
            f"(truth rows but no recommendations){hint}",
            show=tuple(keys),
        ),
    ]


def _largest_cutoff(specs: Sequence[MetricSpec]) -> int | None:
    """The cut that keeps every position some metric reads (None: the whole list)."""
    cutoffs = [spec.k for spec in specs]
    if any(k is None for k in cutoffs):
        return None
    return max(k for k in cutoffs if k is not None)


def _checks_on_cut(score: str | None, conv: Conventions, specs: Sequence[MetricSpec]) -> bool:
    """Whether the recs' row checks can look at the top-k cut (:func:`ranking.cut_checks`).

    Given ranks (no ranking reads every row), no tie groups, no rows removed
    before the cut (``unjudged="remove"`` renumbers), and a finite cutoff.
    """
    return (
        score is None
        and conv.ties != "average"
        and conv.unjudged != "remove"
        and _largest_cutoff(specs) is not None
    )


def _recs_alone(
    recs: pl.DataFrame | pl.LazyFrame, spec: r.RecsSpec, *, row_checks: bool
) -> tuple[pl.LazyFrame, list[tuple[pl.LazyFrame, list[v.DataCheck]]]]:
    """The recs lazy with their checks, when no truth is read (the list measures alone)."""
    recs_lf = r.to_lazy(recs, name="recs")
    schema = recs_lf.collect_schema()
    r.check_recs_schema(schema, spec)
    in_memory = isinstance(recs, pl.DataFrame)
    return recs_lf, [
        (recs_lf, r.recs_checks(spec, schema, in_memory=in_memory) if row_checks else [])
    ]


def _ranked_cut(
    recs: pl.LazyFrame,
    spec: r.RecsSpec,
    specs: Sequence[MetricSpec],
    *,
    hold: bool,
    run_lengths: pl.Series | None,
    renumber: bool = False,
    tie_groups: bool = False,
    drop_repeats: bool = True,
) -> pl.LazyFrame:
    columns = [*spec.list_keys, spec.item, spec.score or spec.rank]
    selected = recs.select(list(dict.fromkeys(columns)))
    k = _largest_cutoff(specs)
    # renumbered ranks and tie groups read the whole list, so they cut afterwards
    regroup = tie_groups and spec.score is not None
    early = not (renumber or regroup)
    ranked = r.with_positions(
        selected, spec, k if early else None, run_lengths=run_lengths, drop_repeats=drop_repeats
    )
    if renumber:
        # given ranks of a list some rows left: 1, 2, ... in their order. "min" keeps a
        # repeated rank repeated, so the position check still sees it
        ranked = ranked.with_columns(pl.col(spec.rank).rank("min").over(spec.list_keys))
    extra = []
    if regroup and spec.score is not None:
        # ties="average": a group of equal scores keeps its first position a and its size n
        # (the cut at a <= k keeps every group that reaches into the top k whole)
        value = pl.col(spec.score).cast(pl.Float64) + 0.0  # -0.0 ties with 0.0
        ranked = ranked.with_columns(
            value.rank("min", descending=True).over(spec.list_keys).alias(spec.rank),
            pl.len().over([*spec.list_keys, value]).alias(TIE_SIZE),
        )
        extra = [TIE_SIZE]
    cut = (ranked if early else r.cut(ranked, k, spec.rank)).select(
        *spec.list_keys, spec.item, spec.rank, *extra
    )
    # the main plan and the checks on the cut all read it: with ``hold``, rank and cut
    # once (the optimiser does not share it by itself). Only for frames already in
    # memory, and only a top-k cut (a small share of their rows): the streaming engine
    # holds a lazy scan's whole cut while the join waits for its build side (1 billion
    # rows: peak 9.1 -> 15.8 GiB)
    return cut.cache() if hold and k is not None else cut


def _hits_table(
    ranked: pl.LazyFrame,
    truth: pl.LazyFrame,
    spec: r.RecsSpec,
    truth_spec: r.TruthSpec,
    *,
    hit_index: bool,
    tie_groups: bool = False,
    first_on_hits: bool = False,
    join_key: tuple[pl.Expr, pl.Expr] | None = None,
    binary: list[pl.Expr] | None = None,
    order: pl.Expr | None = None,
) -> pl.LazyFrame:
    """Relevant truth items that were recommended within the cut, with their positions.

    ``join_key``: (truth side, recs side) of one integer standing for the
    (by..., user, item) key (:func:`_packed_key`); the join then reads one
    column instead of several, and every key column comes from the recs.

    ``binary``: the truth has no relevance column, so the columns a hit would take
    from its truth row are these constants (grade 1, its label, ...): the
    recommendations in the truth are found by a semi join, about half the cost
    of the inner join that pairs them with their truth rows.

    ``first_on_hits``: the cut still holds given ranks' repeats, which
    ``duplicates="first"`` drops here.

    With ``hit_index``, sorted by list and position, so that the index of each
    relevant hit within its list (for AP) is a running count rather than a
    sort per user; with ``tie_groups`` too (``ties="average"``), each row also
    gets its tie group's number of relevant items (AP's expectation reads it).
    ``order``: one column that sorts the rows as (list, position) do
    (:func:`_list_order`); a sort on one column is cheaper than on several.
    """
    on = [*truth_spec.shared_by, spec.user, spec.item]
    if binary is not None:
        # every truth row has grade 1 (no relevance column): a hit takes nothing from its
        # truth row, so the recommendations are kept where their key is in the truth, a
        # semi join (no pairs to build; a repeated truth row is refused by its own check)
        if join_key is None:
            hits = ranked.join(truth.select(on), on=on, how="semi")
        else:
            truth_key, recs_key = join_key
            hits = (
                ranked.with_columns(recs_key.alias(_KEY))
                .join(truth.select(truth_key.alias(_KEY)), on=_KEY, how="semi")
                .drop(_KEY)
            )
        hits = hits.with_columns(binary)
    elif join_key is None:
        hits = truth.join(ranked, on=on, how="inner")
    else:
        truth_key, recs_key = join_key
        hits = (
            truth.select(pl.exclude(on), truth_key.alias(_KEY))
            .join(ranked.with_columns(recs_key.alias(_KEY)), on=_KEY, how="inner")
            .drop(_KEY)
        )
    if first_on_hits:
        # duplicates="first" with given ranks: a hits measure reads only the relevant
        # rows, so each relevant item's best position is kept here, on about 5% of the
        # cut, rather than by a window over every (list, item) of the cut
        hits = r.keep_best_position(hits, spec)
    if not hit_index:
        return hits
    if tie_groups:
        in_group = pl.col(RELEVANT).cast(pl.UInt32).sum().over([*spec.list_keys, spec.rank])
        hits = hits.with_columns(in_group.alias(TIE_RELEVANT))
    hits = hits.sort([*spec.list_keys, spec.rank] if order is None else order)
    relevant = pl.col(RELEVANT).cast(pl.UInt32)
    running = relevant.cum_sum()
    # sorted by list: a list starts where any of its keys differs from the row above
    first_of_list = pl.any_horizontal(
        pl.col(key).ne_missing(pl.col(key).shift(1)) for key in spec.list_keys
    )
    before_list = pl.when(first_of_list).then(running - relevant).forward_fill()
    return hits.with_columns((running - before_list).alias(HIT_INDEX))


def _packed_key(
    truth: pl.DataFrame | pl.LazyFrame,
    recs: pl.LazyFrame,
    truth_lf: pl.LazyFrame,
    keys: Sequence[str],
) -> tuple[pl.Expr, pl.Expr] | None:
    """The join key columns packed into one integer, exactly, when their values allow it.

    A join on several integer columns hashes each row's values together; on one
    integer column it is about twice as fast (10 million recommendations: the
    join is most of the work). Each key's values lie in a range ``lo..hi``:
    the truth's own (an in-memory truth, read once) or else the dtype's. With
    ``span_j = hi_j - lo_j + 1``, ``R_j`` the product of the spans after key
    ``j`` and ``c = span_0 // 2``, the number
    ``(x_0 - lo_0 - c) R_0 + sum_{j > 0} (x_j - lo_j) R_j`` is one-to-one on the
    ranges and lies in ``[-c R_0, ceil(span_0 / 2) R_0)``: an Int64 when that
    bound is at most 2^63, else an Int128 when at most 2^127 (two 64-bit ids of
    a lazy truth: exactly 2^127). A recommendation outside a range cannot match
    any truth row: its key is null, which joins nothing. ``None``: the keys are
    joined as they are (string ids, a key beyond 64 bits).

    Returns the truth's key and the recommendations' key (both expressions on
    the frames with unified key dtypes, :func:`polars_rankmetrics.ranking.prepare`).
    """
    recs_schema, truth_schema = recs.collect_schema(), truth_lf.collect_schema()
    if not all(recs_schema[key].is_integer() and truth_schema[key].is_integer() for key in keys):
        return None
    if any(truth_schema[key].base_type() in (pl.Int128, pl.UInt128) for key in keys):
        return None
    if isinstance(truth, pl.DataFrame) and all(truth.schema[key].is_integer() for key in keys):
        if truth.height == 0:
            return None
        low = truth.select(pl.col(key).min() for key in keys).row(0)
        high = truth.select(pl.col(key).max() for key in keys).row(0)
        if any(value is None for value in (*low, *high)):
            return None  # a key that is all null: the null checks report it
        ranges = list(zip(low, high, strict=True))
    else:
        ranges = [_dtype_range(truth_schema[key]) for key in keys]
    spans = [hi - lo + 1 for lo, hi in ranges]
    after = math.prod(spans[1:])
    bound = (spans[0] - spans[0] // 2) * after
    target: pl.DataType
    if bound <= 1 << 63:
        target = pl.Int64()
    elif bound <= 1 << 127:
        target = pl.Int128()
    else:
        return None

    def packed(*, masked: bool) -> pl.Expr:
        total: pl.Expr = pl.lit(0, target)
        radix = after
        for index, (key, (lo, hi)) in enumerate(zip(keys, ranges, strict=True)):
            value = pl.col(key).cast(target, strict=False)
            if masked:
                # outside the truth's range: no truth row to match, a null key
                inside = value.is_between(pl.lit(lo, target), pl.lit(hi, target))
                value = pl.when(inside).then(value)
            shift = lo + (spans[0] // 2 if index == 0 else 0)
            term = (value - pl.lit(shift, target)) * pl.lit(radix, target)
            total = total + term
            radix = radix // spans[index + 1] if index + 1 < len(spans) else 1
        return total

    return packed(masked=False), packed(masked=True)


def _dtype_range(dtype: pl.DataType) -> tuple[int, int]:
    """The smallest and largest value of an integer dtype of at most 64 bits."""
    bits: dict[type[pl.DataType], int] = {
        pl.Int8: 8,
        pl.UInt8: 8,
        pl.Int16: 16,
        pl.UInt16: 16,
        pl.Int32: 32,
        pl.UInt32: 32,
    }
    width = bits.get(dtype.base_type(), 64)
    if dtype.is_signed_integer():
        return -(1 << (width - 1)), (1 << (width - 1)) - 1
    return 0, (1 << width) - 1


def _ideal_cutoffs(requests: Sequence[_Request]) -> set[int | None]:
    return {request.ctx.k for request in requests if "ideal" in request.measure.inputs}


def _partial_tables(
    hits: pl.LazyFrame,
    ranked: pl.LazyFrame,
    truth: pl.LazyFrame,
    truth_stats: pl.LazyFrame,
    *,
    spec: r.RecsSpec,
    truth_spec: r.TruthSpec,
    inputs: Collection[str],
) -> list[tuple[pl.LazyFrame, str]]:
    """Each table the requested measures read, with the ``Measure`` field of its partials.

    The hits table always; the others only when a requested measure declares them.
    """
    tables = [(hits, "hit_partials")]
    if "judged" in inputs:
        tables.append((_judged_table(ranked, truth, spec, truth_spec), "judged_partials"))
    if "list" in inputs:
        tables.append((ranked, "list_partials"))
    if "judgements" in inputs:
        user_keys = [*truth_spec.shared_by, spec.user]
        judgements = _judgements_table(
            ranked, truth, truth_stats, spec=spec, truth_spec=truth_spec, user_keys=user_keys
        )
        tables.append((judgements, "judgement_partials"))
    return tables


def _per_user(
    recs: pl.LazyFrame,
    ranked: pl.LazyFrame,
    truth: pl.LazyFrame,
    *,
    spec: r.RecsSpec,
    truth_spec: r.TruthSpec,
    requests: Sequence[_Request],
    conv: Conventions,
    grade_levels: tuple[float, ...] | None,
    truth_rows: int | None,
    hit_row: str | None = None,
    hold: bool = False,
    join_key: tuple[pl.Expr, pl.Expr] | None = None,
    cut: int | None = None,
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """Per-user partial sums: truth statistics joined with hit statistics.

    Returns the per-user frame (one row per evaluated user and ``by`` group,
    with :data:`N_RELEVANT`, the partials and ideal DCGs the requests read)
    and the hits table. ``grade_levels``: the truth's distinct positive grades
    when known up front (:func:`polars_rankmetrics.ranking.grade_levels`).
    ``truth_rows``: the truth's row count when in memory, a bound on any user's
    number of items (the ideal DCG's table of discounts needs no more entries).
    ``hit_row``: give each hit row the index of its row in the cut, in this column.
    ``hold``: the hits table is computed once (cached): the main plan and the hit-row
    checks both read it (a few percent of the cut, also for a lazy scan).
    ``join_key``: the truth's and the recs' packed join key (:func:`_packed_key`).
    ``cut``: the cut's largest position (``None``: the whole lists).
    """
    user_keys = [*truth_spec.shared_by, spec.user]
    inputs = {name for request in requests for name in request.measure.inputs}
    ideal_cutoffs = _ideal_cutoffs(requests)
    # grades known up front and every ideal cut finite: the ideal DCG follows from the
    # user's item count per grade, so the window that ranks the truth by grade is not
    # needed. A cutoff past every user's truth costs nothing: the table of discounts stops
    # at the longest possible list; beyond _MAX_TABLE entries (a huge k on a truth of
    # unknown size) the window is cheaper than the table
    longest = truth_rows
    table_sizes = [k if longest is None else min(k, longest) for k in ideal_cutoffs if k]
    counted_ok = None not in ideal_cutoffs and all(n <= _MAX_TABLE for n in table_sizes)
    levels = grade_levels if counted_ok else None
    top_gain = conv.ideal == "k" and bool(ideal_cutoffs)
    ideal_ranks = bool(ideal_cutoffs) and levels is None and not top_gain
    relevant_truth = r.labeled_truth(
        truth, truth_spec, ideal=ideal_ranks, names=(GRADE, RELEVANT, IDEAL_RANK)
    )
    if ideal_ranks and isinstance(conv.gain, tuple):
        # a gain table need not grow with the grade: the ideal list sorts by gain
        by_gain = formula.gain(pl.col(GRADE), conv.gain).rank("ordinal", descending=True)
        relevant_truth = relevant_truth.with_columns(by_gain.over(user_keys).alias(IDEAL_RANK))
    statistics = [_n_relevant(truth_spec)]
    if top_gain:
        # RecTools' NDCG: the ideal list is k items of the user's highest gain
        statistics.append(formula.gain(pl.col(GRADE), conv.gain).max().alias(_TOP_GAIN))
    elif ideal_ranks:
        statistics += [_ranked_ideal(k, conv) for k in ideal_cutoffs]
    elif ideal_cutoffs and levels is not None:
        statistics += _grade_counts(levels, truth_spec)
    truth_stats = relevant_truth.group_by(user_keys).agg(statistics)
    if top_gain:
        truth_stats = truth_stats.with_columns(
            (pl.col(_TOP_GAIN) * formula.discount_sum(k)).alias(_ideal_name(k))
            for k in ideal_cutoffs
            if k is not None
        )
    elif ideal_cutoffs and levels is not None:
        index_of = {level: index for index, level in enumerate(levels)}
        counted = [
            (formula.gain(pl.lit(level), conv.gain), pl.col(f"{PREFIX}n_grade{index_of[level]}"))
            for level in formula.gain_order(conv.gain, levels)
        ]
        truth_stats = truth_stats.with_columns(
            formula.ideal_dcg(counted, k, longest).alias(_ideal_name(k))
            for k in ideal_cutoffs
            if k is not None
        )
    labeled = relevant_truth
    if "max_grade" in inputs:
        # one scalar over the whole truth, set beside each of its rows
        labeled = labeled.with_columns(pl.col(GRADE).max().alias(MAX_GRADE))
    binary = _binary_hit_columns(truth_spec, inputs)
    hits = _hits_table(
        ranked if hit_row is None else ranked.with_row_index(hit_row),
        # binary: the keys of every truth row, read from the truth itself (a plan shared
        # with the labeling would be held in a cache: a copy of every truth row)
        labeled if binary is None else truth,
        spec,
        truth_spec,
        hit_index="hit_index" in inputs,
        tie_groups=conv.ties == "average",
        first_on_hits=hit_row is not None and spec.duplicates == "first",
        join_key=join_key,
        binary=binary,
        order=_list_order(ranked, spec, cut),
    )
    if hold:
        # the main plan and the checks on the hit rows both read the hits: join once
        # (the optimiser does not share it by itself; a few percent of the cut's rows)
        hits = hits.cache()
    if "n_relevant_on_hits" in inputs:
        hits = hits.join(truth_stats.select(*user_keys, N_RELEVANT), on=user_keys, how="left")
    recs_only_by = [name for name in spec.by if name not in truth_spec.shared_by]
    per_user = r.expand_over_groups(truth_stats, recs, recs_only_by, truth_spec.shared_by)
    tables = _partial_tables(
        hits, ranked, truth, truth_stats, spec=spec, truth_spec=truth_spec, inputs=inputs
    )
    for table, kind in tables:
        partials = {
            partial.name: partial
            for request in requests
            for partial in getattr(request.measure, kind)(request.ctx)
        }
        if not partials:
            continue
        stats = table.group_by(spec.list_keys).agg(
            partial.expr.alias(name) for name, partial in partials.items()
        )
        fills = [
            pl.col(name).fill_null(partial.fill)
            for name, partial in partials.items()
            if partial.fill is not None
        ]
        per_user = per_user.join(stats, on=spec.list_keys, how="left").with_columns(fills)
    return per_user, hits


def _list_order(ranked: pl.LazyFrame, spec: r.RecsSpec, cut: int | None) -> pl.Expr | None:
    """One Int128 that orders the cut's rows as (user, position) do, or ``None``.

    ``user * (cut + 1) + position`` is strictly increasing in (user, position)
    for positions ``1..cut``, which every position in the cut is (ranks below 1
    are refused by the position checks of the same query). Only for lists
    keyed by one integer user (no ``by``) and integer positions of a finite cut.
    """
    if cut is None or spec.by:
        return None
    schema = ranked.collect_schema()
    user, position = schema[spec.user], schema[spec.rank]
    if not (user.is_integer() and position.is_integer()):
        return None
    if user.base_type() in (pl.Int128, pl.UInt128):
        return None
    return pl.col(spec.user).cast(pl.Int128) * pl.lit(cut + 1, pl.Int128) + pl.col(spec.rank).cast(
        pl.Int128
    )


def _n_relevant(truth_spec: r.TruthSpec) -> pl.Expr:
    """The user's number of relevant items, m_u, over the labeled truth."""
    if truth_spec.relevance is None:
        # every row has grade 1: all rows are relevant or none (a relevance level above 1)
        level = truth_spec.relevance_level
        count = pl.len() if level is None or level <= 1.0 else pl.len() * 0
        return count.alias(N_RELEVANT)
    return pl.col(RELEVANT).sum().alias(N_RELEVANT)


def _binary_hit_columns(truth_spec: r.TruthSpec, inputs: Collection[str]) -> list[pl.Expr] | None:
    """What a hit reads of its truth row, when every truth row has grade 1 (else ``None``).

    No relevance column: the grade is 1, its label the one
    :func:`polars_rankmetrics.ranking.labeled_truth` gives grade 1 (relevant
    unless the relevance level is above 1), and the largest grade of a truth
    with a hit is 1.
    """
    if truth_spec.relevance is not None:
        return None
    level = truth_spec.relevance_level
    columns = [
        pl.lit(1.0, pl.Float64).alias(GRADE),
        pl.lit(level is None or level <= 1.0).alias(RELEVANT),
    ]
    if "max_grade" in inputs:
        columns.append(pl.lit(1.0, pl.Float64).alias(MAX_GRADE))
    return columns


def _judged_table(
    ranked: pl.LazyFrame, truth: pl.LazyFrame, spec: r.RecsSpec, truth_spec: r.TruthSpec
) -> pl.LazyFrame:
    """Judged non-relevant items (truth grade <= 0) recommended within the cut, with positions."""
    if truth_spec.relevance is None:
        # every truth row has grade 1: nothing is judged non-relevant
        return ranked.filter(pl.lit(value=False))
    on = [*truth_spec.shared_by, spec.user, spec.item]
    non_relevant = truth.filter(pl.col(truth_spec.relevance).cast(pl.Float64) <= 0).select(on)
    return non_relevant.join(ranked, on=on, how="inner")


def _judgements_table(
    ranked: pl.LazyFrame,
    truth: pl.LazyFrame,
    truth_stats: pl.LazyFrame,
    *,
    spec: r.RecsSpec,
    truth_spec: r.TruthSpec,
    user_keys: Sequence[str],
) -> pl.LazyFrame:
    """Every judged recommendation (any grade), with running judgement counts down its list.

    Built only for trec_eval's judgement-based measures (input ``"judgements"``:
    bpref, infAP): trec_eval tells judged non-relevant documents (grade >= 0,
    not relevant) from pooled-but-unjudged ones (negative grade).
    """
    grade = (
        pl.lit(1.0)
        if truth_spec.relevance is None
        else pl.col(truth_spec.relevance).cast(pl.Float64)
    )
    relevant = pl.col(GRADE) > 0
    if truth_spec.relevance_level is not None:
        relevant = relevant & (pl.col(GRADE) >= truth_spec.relevance_level)
    labeled = truth.select(*user_keys, spec.item, grade.alias(GRADE)).with_columns(
        relevant.alias(RELEVANT)
    )
    nonrelevant = (pl.col(GRADE) >= 0) & ~pl.col(RELEVANT)
    counts = labeled.group_by(user_keys).agg(nonrelevant.sum().alias(N_NONRELEVANT))
    rows = (
        labeled.join(ranked, on=[*user_keys, spec.item], how="inner")
        .join(truth_stats.select(*user_keys, N_RELEVANT), on=user_keys, how="left")
        .join(counts, on=user_keys, how="left")
        # the running counts go down each list
        .sort([*spec.list_keys, spec.rank])
    )

    def running(flag: pl.Expr) -> pl.Expr:
        return flag.cast(pl.UInt32).cum_sum().over(spec.list_keys)

    return rows.with_columns(
        running(pl.col(RELEVANT)).alias(RELEVANT_ABOVE),
        running(nonrelevant).alias(NONRELEVANT_ABOVE),
        running(pl.col(GRADE) < 0).alias(UNJUDGED_ABOVE),
        pl.col(N_RELEVANT).fill_null(0),
    )


def _ideal_name(k: int | None) -> str:
    return f"{PREFIX}idcg@{'all' if k is None else k}"


def _ranked_ideal(k: int | None, conv: Conventions) -> pl.Expr:
    """Ideal DCG@k from each truth item's position in its user's ideal list."""
    shown = pl.lit(value=True) if k is None else pl.col(IDEAL_RANK) <= k
    terms = formula.gain(pl.col(GRADE), conv.gain) / formula.discount(pl.col(IDEAL_RANK))
    return terms.filter(shown).sum().alias(_ideal_name(k))


def _grade_counts(levels: Sequence[float], truth_spec: r.TruthSpec) -> list[pl.Expr]:
    """Per user, the number of truth items at each grade (``<prefix>n_grade<i>``)."""
    if truth_spec.relevance is None:
        # every grade is 1: the count is the user's number of rows
        return [pl.len().alias(f"{PREFIX}n_grade0")]
    grade = pl.col(GRADE)
    return [(grade == level).sum().alias(f"{PREFIX}n_grade{i}") for i, level in enumerate(levels)]


def _judged_users(
    recs: pl.LazyFrame, truth: pl.LazyFrame, spec: r.RecsSpec, truth_spec: r.TruthSpec
) -> pl.LazyFrame:
    """Every (by..., user) with at least one truth row, whatever its grade."""
    recs_only_by = [name for name in spec.by if name not in truth_spec.shared_by]
    users = truth.select(*truth_spec.shared_by, spec.user).unique()
    judged = r.expand_over_groups(users, recs, recs_only_by, truth_spec.shared_by)
    return judged.select(spec.list_keys)


def _parts(
    partials: pl.LazyFrame,
    recs: pl.LazyFrame,
    judged: pl.LazyFrame,
    *,
    spec: r.RecsSpec,
    requests: Sequence[_Request],
    conv: Conventions,
) -> pl.LazyFrame:
    """Each metric's per-user parts from the partial sums, under the users-counted policies."""
    list_keys = spec.list_keys
    finals = [
        expression.alias(part_column(request.spec.label, suffix))
        for request in requests
        for suffix, expression in request.measure.finals(request.ctx).items()
    ]
    scores = partials.select(*list_keys, N_RELEVANT, *finals)
    if conv.users_without_truth == "exclude":
        scores = scores.filter(pl.col(N_RELEVANT) > 0)
    else:
        # no relevant item: the binary metrics score 0, graded ones keep their value
        scores = scores.with_columns(
            pl.col(name).fill_null(request.measure.fill)
            for request in requests
            if request.measure.fill is not None
            for name in request.part_names()
        )
    scores = scores.drop(N_RELEVANT)
    users_with_recs = recs.select(list_keys).unique()
    if conv.users_without_recs == "exclude":
        scores = scores.join(users_with_recs, on=list_keys, how="semi")
    if conv.users_without_truth != "exclude":
        counted = judged
        if conv.users_without_truth == "zero":
            counted = pl.concat([users_with_recs, judged]).unique()
        if conv.users_without_recs == "exclude":
            counted = counted.join(users_with_recs, on=list_keys, how="semi")
        unjudged = counted.join(scores, on=list_keys, how="anti")
        zeros = [
            pl.lit(request.measure.fill, pl.Float64).alias(name)
            for request in requests
            for name in request.part_names()
        ]
        scores = pl.concat([scores, unjudged.with_columns(zeros)], how="vertical_relaxed")
    return scores
