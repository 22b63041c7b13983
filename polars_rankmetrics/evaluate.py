"""``evaluate``: metric strings in, per-user scores or their means out, in one query.

The pipeline, built once on ``LazyFrame``:

1. rank the recommendations (from the score when given) and cut them to the
   largest cutoff requested;
2. keep the truth rows with a positive grade and, for groups that only the
   recommendations have (models), repeat them per group;
3. left-join those truth rows with the ranked recommendations: each relevant
   item gets its position or null. Non-relevant recommendations never change a
   metric, so they are not carried past the join;
4. one ``group_by(by..., user).agg(...)`` evaluates every metric with the
   expressions of :mod:`polars_rankmetrics.metrics`;
5. apply the user policies, then average per ``by`` group.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, cast

import polars as pl

from polars_rankmetrics import _formulas as formula
from polars_rankmetrics import _validation as v
from polars_rankmetrics import metrics as m
from polars_rankmetrics import ranking as r
from polars_rankmetrics._id_overlap import warn_if_disjoint

__all__ = ["MetricSpec", "evaluate", "parse_metric"]

UsersWithoutRecs = Literal["zero", "exclude"]
UsersWithoutTruth = Literal["exclude", "judged", "zero"]
Conventions = Literal["default", "trec"]

# canonical name -> (needs a cutoff, accepts a cutoff)
_METRICS: dict[str, tuple[bool, bool]] = {
    "precision": (True, True),
    "recall": (False, True),
    "f1": (True, True),
    "hit_rate": (False, True),
    "map": (False, True),
    "mrr": (False, True),
    "ndcg": (False, True),
    "dcg": (False, True),
    "r_precision": (False, False),
    "mean_rank": (False, False),
    "pooled_recall": (True, True),
}
_ALIASES = {"hits": "hit_rate", "ap": "map", "rr": "mrr", "micro_recall": "pooled_recall"}
_M = "__m"  # the user's number of relevant items, m_u
_HIT_INDEX = "__hit_index"  # j: the hit's place among its list's relevant hits

_PATTERN = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(?:@\s*(\d+))?\s*$")

# What each preset sets; a preset only fills conventions left at their defaults.
_DEFAULTS = {
    "denominator": "min_k",
    "users_without_recs": None,
    "users_without_truth": None,
    "ties": "item_desc",
    "gain": "linear",
}
_PRESETS: dict[str, dict[str, str]] = {
    "default": {"users_without_recs": "zero", "users_without_truth": "exclude"},
    # trec_eval 10.0 without -c: AP over all relevant items, only queries with a run,
    # and a judged query without relevant documents scores 0 (num_q counts it);
    # its tie rule, score then docno descending, is already the default
    "trec": {
        "denominator": "relevant",
        "users_without_recs": "exclude",
        "users_without_truth": "judged",
    },
}


@dataclass(frozen=True)
class MetricSpec:
    """One requested metric: the string as given, its canonical name and cutoff."""

    label: str
    name: str
    k: int | None


def parse_metric(text: str) -> MetricSpec:
    """Parse ``"name@k"`` or ``"name"`` into a :class:`MetricSpec`.

    Examples
    --------
    >>> parse_metric("MAP@12")
    MetricSpec(label='MAP@12', name='map', k=12)
    >>> parse_metric("hits@5")
    MetricSpec(label='hits@5', name='hit_rate', k=5)
    """
    if not isinstance(text, str):
        raise TypeError(f"a metric must be a string like 'map@12', got {text!r}")
    match = _PATTERN.match(text)
    if match is None:
        raise ValueError(f"cannot read metric {text!r}: write 'name@k' (e.g. 'ndcg@10') or 'name'")
    raw_name, raw_k = match.groups()
    name = _ALIASES.get(raw_name.lower(), raw_name.lower())
    if name not in _METRICS:
        known = [*_METRICS, *_ALIASES]
        hint = difflib.get_close_matches(raw_name.lower(), known, n=1)
        suggestion = f"; did you mean {hint[0]!r}?" if hint else ""
        raise ValueError(f"unknown metric {raw_name!r} in {text!r}{suggestion} (known: {known})")
    k = v.check_cutoff(int(raw_k), what=f"the cutoff in {text!r}") if raw_k else None
    needs_k, accepts_k = _METRICS[name]
    if needs_k and k is None:
        raise ValueError(f"{text!r} needs a cutoff, e.g. '{raw_name}@10'")
    if k is not None and not accepts_k:
        raise ValueError(f"{raw_name!r} takes no cutoff; write {raw_name!r}")
    return MetricSpec(text, name, k)


def _parse_all(metrics: str | Sequence[str]) -> list[MetricSpec]:
    specs = [parse_metric(text) for text in ([metrics] if isinstance(metrics, str) else metrics)]
    if not specs:
        raise ValueError("metrics is empty: ask for at least one, e.g. ['map@12']")
    labels = [spec.label for spec in specs]
    repeated = sorted({label for label in labels if labels.count(label) > 1})
    if repeated:
        raise ValueError(f"metric(s) {repeated} requested twice")
    return specs


@dataclass(frozen=True)
class _Conventions:
    denominator: m.Denominator
    gain: m.Gain
    users_without_recs: UsersWithoutRecs
    users_without_truth: UsersWithoutTruth


def _tag(k: int | None) -> str:
    return "all" if k is None else str(k)


def _hits_within(k: int | None, rank: str) -> pl.Expr:
    """Relevant rows of the hits table within the cutoff."""
    within = pl.lit(value=True) if k is None else pl.col(rank) <= k
    return pl.col(r.IS_RELEVANT) & within


def _hit_partials(
    specs: Sequence[MetricSpec], conv: _Conventions, rank: str, grade: str
) -> dict[str, pl.Expr]:
    """The per-user sums over the hits table that the requested metrics read."""
    partials: dict[str, pl.Expr] = {}
    for metric in specs:
        k, tag = metric.k, _tag(metric.k)
        hits = _hits_within(k, rank)
        if metric.name in ("precision", "recall", "f1", "hit_rate", "map", "pooled_recall"):
            partials[f"__hits@{tag}"] = hits.sum()
        if metric.name in ("mrr", "mean_rank"):
            partials[f"__first@{tag}"] = pl.col(rank).filter(hits).min()
        if metric.name == "map":
            # the j-th relevant hit (in rank order) at position i contributes P@i = j / i
            partials[f"__ap@{tag}"] = (pl.col(_HIT_INDEX) / pl.col(rank)).filter(hits).sum()
        if metric.name in ("ndcg", "dcg"):
            within = pl.lit(value=True) if k is None else pl.col(rank) <= k
            terms = formula.gain(pl.col(grade), conv.gain) / formula.discount(pl.col(rank))
            partials[f"__dcg@{tag}"] = terms.filter(within).sum()
        if metric.name == "r_precision":
            partials["__rprec"] = (pl.col(r.IS_RELEVANT) & (pl.col(rank) <= pl.col(_M))).sum()
    return partials


def _ideal_partials(
    specs: Sequence[MetricSpec], conv: _Conventions, grade: str
) -> dict[str, pl.Expr]:
    """Ideal DCG sums over the truth (positions in the ideal list come precomputed)."""
    partials: dict[str, pl.Expr] = {}
    for metric in specs:
        if metric.name == "ndcg":
            k = metric.k
            shown = pl.lit(value=True) if k is None else pl.col(r.IDEAL_RANK) <= k
            terms = formula.gain(pl.col(grade), conv.gain) / formula.discount(pl.col(r.IDEAL_RANK))
            partials[f"__idcg@{_tag(k)}"] = terms.filter(shown).sum()
    return partials


def _final(metric: MetricSpec, conv: _Conventions) -> list[pl.Expr]:
    """The metric's column(s) from the per-user partial sums, by the shared formulas."""
    k, tag = metric.k, _tag(metric.k)
    n_relevant = pl.col(_M)
    hits = pl.col(f"__hits@{tag}")
    value: pl.Expr
    if metric.name == "pooled_recall":
        cutoff = _cutoff(k)
        capped = pl.min_horizontal(n_relevant, pl.lit(cutoff)).cast(pl.Float64)
        return [
            formula.defined(hits, n_relevant).alias(f"__hits_{metric.label}"),
            capped.alias(f"__cap_{metric.label}"),
        ]
    if metric.name == "precision":
        value = formula.precision(hits, _cutoff(k))
    elif metric.name == "recall":
        value = formula.recall(hits, n_relevant)
    elif metric.name == "f1":
        value = formula.f1(hits, n_relevant, _cutoff(k))
    elif metric.name == "hit_rate":
        value = formula.hit_rate(hits)
    elif metric.name == "map":
        value = formula.average_precision(
            pl.col(f"__ap@{tag}"), hits, n_relevant, k, conv.denominator
        )
    elif metric.name == "mrr":
        value = formula.reciprocal_rank(pl.col(f"__first@{tag}"))
    elif metric.name == "r_precision":
        value = formula.r_precision(pl.col("__rprec"), n_relevant)
    elif metric.name == "mean_rank":
        return [pl.col(f"__first@{tag}").cast(pl.Float64).alias(metric.label)]
    elif metric.name == "ndcg":
        # graded metrics read the raw grades: defined wherever some grade is positive
        return [formula.ndcg(pl.col(f"__dcg@{tag}"), pl.col(f"__idcg@{tag}")).alias(metric.label)]
    else:
        return [pl.col(f"__dcg@{tag}").alias(metric.label)]
    return [formula.defined(value, n_relevant).alias(metric.label)]


def _cutoff(k: int | None) -> int:
    if k is None:
        raise ValueError("this metric needs a cutoff")
    return k


def _resolve(conventions: str, **given: str | None) -> dict[str, str]:
    v.check_literal(conventions, list(_PRESETS), name="conventions")
    preset = _PRESETS[conventions]
    resolved = {
        name: preset.get(name, value) if value == _DEFAULTS[name] else value
        for name, value in given.items()
    }
    return {name: str(value) for name, value in resolved.items()}


def evaluate(
    recs: r.FrameT,
    truth: pl.DataFrame | pl.LazyFrame,
    metrics: str | Sequence[str],
    *,
    user: str = "user",
    item: str = "item",
    rank: str = "rank",
    score: str | None = None,
    relevance: str | None = None,
    by: str | Sequence[str] | None = None,
    per_user: bool = False,
    denominator: m.Denominator = "min_k",
    gain: m.Gain = "linear",
    ties: r.Ties = "item_desc",
    relevance_level: float | None = None,
    users_without_recs: UsersWithoutRecs | None = None,
    users_without_truth: UsersWithoutTruth | None = None,
    duplicates: r.Duplicates = "error",
    conventions: Conventions = "default",
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
        ``"name@k"`` or ``"name"`` strings: ``precision@k``, ``recall``,
        ``f1@k``, ``hit_rate`` (``hits``), ``map`` (``ap``), ``mrr`` (``rr``),
        ``ndcg``, ``dcg``, ``r_precision``, ``mean_rank``, ``pooled_recall@k``.
        Each becomes a Float64 column named exactly as given.
    user, item, rank, score, relevance
        Column roles. With ``score``, ranks are derived per user (``ties``);
        with ``relevance=None`` every truth row is relevant with grade 1.
    by
        Columns evaluated side by side. Those in both frames join with the
        truth (folds, time splits); those only in ``recs`` (models) share it.
    per_user
        ``False``: one row of means per ``by`` group. ``True``: one row per
        (by..., user) for every evaluated user, sorted by those keys.
    denominator
        AP denominator: ``"min_k"`` (Kaggle), ``"relevant"`` (trec_eval),
        ``"hits"``. See :func:`polars_rankmetrics.average_precision`.
    gain
        NDCG/DCG gain: ``"linear"`` (trec_eval) or ``"exponential"`` (2^rel - 1).
    ties
        Order of equal scores: ``"item_desc"`` (trec_eval), ``"item_asc"``, ``"input"``.
    relevance_level
        Minimum grade that binary metrics count as relevant (trec_eval ``-l``).
    users_without_recs
        Users with relevant truth but no recommendations: ``"zero"`` (they
        score 0 and count, as trec_eval ``-c``) or ``"exclude"``. ``None``
        (default) means ``"zero"``, or ``"exclude"`` under ``conventions="trec"``.
    users_without_truth
        Users without relevant truth, for whom recall, AP and NDCG are
        undefined: ``"exclude"`` (H&M), ``"judged"`` (those with truth rows,
        all non-relevant, count: trec_eval, ranx) or ``"zero"`` (those with
        recommendations or truth rows count; Santander). Counted users score
        0 on the binary metrics; NDCG and DCG keep the value of their raw
        grades (a relevance level can leave graded items below it, as with
        trec_eval ``-l``). ``users_without_recs="exclude"`` still leaves out
        users without recommendations. ``None`` (default) means
        ``"exclude"``, or ``"judged"`` under ``conventions="trec"``.
    duplicates
        A (user, item) recommended twice: ``"error"`` or ``"first"`` (keep its
        best position). Lists are checked up to the largest cutoff requested:
        a repeat further down cannot change any metric asked for.
    conventions
        ``"default"`` or ``"trec"``: trec_eval's conventions (AP denominator
        ``"relevant"``, only users with recommendations, judged users without
        relevant items count as 0, ties by item id descending, the default
        anyway). A preset fills each convention left at its default (a
        ``denominator`` or ``gain`` equal to its default counts as left), so
        pass ``users_without_recs="zero"`` for trec_eval ``-c``.

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
    """
    specs = _parse_all(metrics)
    if not isinstance(per_user, bool):
        raise TypeError(f"per_user must be True or False, got {per_user!r}")
    resolved = _resolve(
        conventions,
        denominator=denominator,
        gain=gain,
        ties=ties,
        users_without_recs=users_without_recs,
        users_without_truth=users_without_truth,
    )
    v.check_literal(resolved["denominator"], m.DENOMINATORS, name="denominator")
    v.check_literal(resolved["gain"], m.GAINS, name="gain")
    v.check_literal(resolved["users_without_recs"], ("zero", "exclude"), name="users_without_recs")
    v.check_literal(
        resolved["users_without_truth"], ("exclude", "judged", "zero"), name="users_without_truth"
    )
    conv = _Conventions(
        cast("m.Denominator", resolved["denominator"]),
        cast("m.Gain", resolved["gain"]),
        cast("UsersWithoutRecs", resolved["users_without_recs"]),
        cast("UsersWithoutTruth", resolved["users_without_truth"]),
    )
    recs_spec: r.RecsSpec = r.RecsSpec(
        user, item, rank, score, tuple(r.as_list(by)), cast("r.Ties", resolved["ties"]), duplicates
    )
    recs_lf, truth_lf, truth_spec, checks = r.prepare(
        recs, truth, recs_spec, (relevance, relevance_level)
    )
    in_memory = isinstance(recs, pl.DataFrame)
    ranked = _ranked_cut(
        recs_lf,
        recs_spec,
        specs,
        hold=in_memory,
        run_lengths=r.lengths_in_rank_order(recs, recs_spec),
    )
    # only NDCG reads the grades up front (an in-memory truth's distinct grades)
    wants_ndcg = any(metric.name == "ndcg" for metric in specs)
    partials, hit_rows = _per_user(
        recs_lf,
        ranked,
        truth_lf,
        spec=recs_spec,
        truth_spec=truth_spec,
        specs=specs,
        conv=conv,
        grade_levels=r.grade_levels(truth, truth_spec) if wants_ndcg else None,
    )
    result = _scores(
        partials,
        recs_lf,
        _judged_users(recs_lf, truth_lf, recs_spec, truth_spec),
        spec=recs_spec,
        specs=specs,
        conv=conv,
        per_user=per_user,
    )
    checks.extend(r.list_checks(ranked, recs_spec, positions=False, in_memory=in_memory))
    if score is None:
        # a repeated position changes a metric only where a relevant item sits, so
        # check the (few) hit rows rather than every recommendation
        checks.append((hit_rows, [r.position_check(recs_spec, in_memory=in_memory)]))
    evaluated = r.like(recs, v.guard(result, checks))
    if in_memory and isinstance(truth, pl.DataFrame):  # a lazy query is not run early
        warn_if_disjoint(recs_lf, truth_lf, user=user, item=item)
    return evaluated


def _largest_cutoff(specs: Sequence[MetricSpec]) -> int | None:
    """The cut that keeps every position some metric reads (None: the whole list)."""
    cutoffs = [spec.k for spec in specs]
    if any(k is None for k in cutoffs):
        return None
    return max(k for k in cutoffs if k is not None)


def _ranked_cut(
    recs: pl.LazyFrame,
    spec: r.RecsSpec,
    specs: Sequence[MetricSpec],
    *,
    hold: bool,
    run_lengths: pl.Series | None,
) -> pl.LazyFrame:
    columns = [*spec.list_keys, spec.item, spec.score or spec.rank]
    selected = recs.select(list(dict.fromkeys(columns)))
    ranked = r.with_positions(selected, spec, run_lengths=run_lengths)
    k = _largest_cutoff(specs)
    cut = r.cut(ranked, k, spec.rank).select(*spec.list_keys, spec.item, spec.rank)
    # the main plan and the duplicate check both read the cut: with ``hold``, rank and
    # cut once (the optimiser does not share it by itself). Only for frames already in
    # memory, and only a top-k cut (a small share of their rows): a lazy scan may be
    # larger than memory, and holding its cut more than doubled the peak on 1 billion rows
    return cut.cache() if hold and k is not None else cut


def _hits_table(
    ranked: pl.LazyFrame, truth: pl.LazyFrame, spec: r.RecsSpec, truth_spec: r.TruthSpec
) -> pl.LazyFrame:
    """Relevant truth items that were recommended within the cut, with their positions.

    Sorted by list and position, so that the index of each relevant hit within
    its list (for AP) is a running count rather than a sort per user.
    """
    on = [*truth_spec.shared_by, spec.user, spec.item]
    hits = truth.join(ranked, on=on, how="inner").sort([*spec.list_keys, spec.rank])
    relevant = pl.col(r.IS_RELEVANT).cast(pl.UInt32)
    running = relevant.cum_sum()
    # sorted by list: a list starts where any of its keys differs from the row above
    first_of_list = pl.any_horizontal(
        pl.col(key).ne_missing(pl.col(key).shift(1)) for key in spec.list_keys
    )
    before_list = pl.when(first_of_list).then(running - relevant).forward_fill()
    return hits.with_columns((running - before_list).alias(_HIT_INDEX))


def _per_user(
    recs: pl.LazyFrame,
    ranked: pl.LazyFrame,
    truth: pl.LazyFrame,
    *,
    spec: r.RecsSpec,
    truth_spec: r.TruthSpec,
    specs: Sequence[MetricSpec],
    conv: _Conventions,
    grade_levels: tuple[float, ...] | None,
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """Per-user partial sums: truth statistics joined with hit statistics.

    Returns the per-user frame (one row per evaluated user and ``by`` group,
    with ``__m``, the number of relevant items) and the hits table.
    ``grade_levels``: the truth's distinct positive grades when known up front
    (:func:`polars_rankmetrics.ranking.grade_levels`), else ``None``.
    """
    user_keys = [*truth_spec.shared_by, spec.user]
    ndcg_cutoffs = {metric.k for metric in specs if metric.name == "ndcg"}
    # grades known up front and every ndcg cut finite: the ideal DCG follows from the
    # user's item count per grade, so the window that ranks the truth by grade is not needed
    levels = grade_levels if None not in ndcg_cutoffs else None
    ideal_ranks = bool(ndcg_cutoffs) and levels is None
    relevant_truth = r.labeled_truth(truth, truth_spec, ideal=ideal_ranks)
    statistics = [pl.col(r.IS_RELEVANT).sum().alias(_M)]
    if ideal_ranks:
        ideal = _ideal_partials(specs, conv, truth_spec.grade)
        statistics += [expr.alias(name) for name, expr in ideal.items()]
    elif ndcg_cutoffs and levels is not None:
        statistics += _grade_counts(levels, truth_spec)
    truth_stats = relevant_truth.group_by(user_keys).agg(statistics)
    if ndcg_cutoffs and levels is not None:
        counted = [
            (formula.gain(pl.lit(level), conv.gain), pl.col(f"__n_grade{index}"))
            for index, level in enumerate(levels)
        ]
        truth_stats = truth_stats.with_columns(
            formula.ideal_dcg(counted, k).alias(f"__idcg@{_tag(k)}")
            for k in ndcg_cutoffs
            if k is not None
        )
    hits = _hits_table(ranked, relevant_truth, spec, truth_spec)
    partials = _hit_partials(specs, conv, spec.rank, truth_spec.grade)
    if "__rprec" in partials:
        hits = hits.join(truth_stats.select(*user_keys, _M), on=user_keys, how="left")
    hit_stats = hits.group_by(spec.list_keys).agg(
        expr.alias(name) for name, expr in partials.items()
    )
    recs_only_by = [name for name in spec.by if name not in truth_spec.shared_by]
    users = r.expand_over_groups(truth_stats, recs, recs_only_by, truth_spec.shared_by)
    sums = [name for name in partials if not name.startswith("__first")]
    per_user = users.join(hit_stats, on=spec.list_keys, how="left").with_columns(
        pl.col(sums).fill_null(0)
    )
    return per_user, hits


def _grade_counts(levels: Sequence[float], truth_spec: r.TruthSpec) -> list[pl.Expr]:
    """Per user, the number of truth items at each grade (``__n_grade<i>``)."""
    if truth_spec.relevance is None:
        # every grade is 1: the count is the user's number of rows
        return [pl.len().alias("__n_grade0")]
    grade = pl.col(truth_spec.grade)
    return [(grade == level).sum().alias(f"__n_grade{i}") for i, level in enumerate(levels)]


def _judged_users(
    recs: pl.LazyFrame, truth: pl.LazyFrame, spec: r.RecsSpec, truth_spec: r.TruthSpec
) -> pl.LazyFrame:
    """Every (by..., user) with at least one truth row, whatever its grade."""
    recs_only_by = [name for name in spec.by if name not in truth_spec.shared_by]
    users = truth.select(*truth_spec.shared_by, spec.user).unique()
    judged = r.expand_over_groups(users, recs, recs_only_by, truth_spec.shared_by)
    return judged.select(spec.list_keys)


def _scores(
    partials: pl.LazyFrame,
    recs: pl.LazyFrame,
    judged: pl.LazyFrame,
    *,
    spec: r.RecsSpec,
    specs: Sequence[MetricSpec],
    conv: _Conventions,
    per_user: bool,
) -> pl.LazyFrame:
    """Per-user metrics from the partial sums, the user policies, then means."""
    list_keys = spec.list_keys
    finals = [expression for metric in specs for expression in _final(metric, conv)]
    scores = partials.select(*list_keys, pl.col(_M).alias("__n_relevant"), *finals)
    if conv.users_without_truth == "exclude":
        scores = scores.filter(pl.col("__n_relevant") > 0)
    else:
        # no relevant item: the binary metrics score 0, graded ones keep their value
        filled = [
            name for metric in specs if metric.name != "mean_rank" for name in _output_names(metric)
        ]
        scores = scores.with_columns(pl.col(filled).fill_null(0.0))
    scores = scores.drop("__n_relevant")
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
            pl.lit(None if metric.name == "mean_rank" else 0.0, pl.Float64).alias(name)
            for metric in specs
            for name in _output_names(metric)
        ]
        scores = pl.concat([scores, unjudged.with_columns(zeros)], how="vertical_relaxed")
    if per_user:
        finals = [_per_user_value(metric) for metric in specs]
        return scores.select(*list_keys, *finals).sort(list_keys)
    means = [_mean(metric) for metric in specs]
    if spec.by:
        return scores.group_by(list(spec.by)).agg(means).sort(list(spec.by))
    return scores.select(means)


def _output_names(metric: MetricSpec) -> list[str]:
    if metric.name == "pooled_recall":
        return [f"__hits_{metric.label}", f"__cap_{metric.label}"]
    return [metric.label]


def _per_user_value(metric: MetricSpec) -> pl.Expr:
    if metric.name == "pooled_recall":
        hits, cap = (pl.col(name) for name in _output_names(metric))
        return pl.when(cap > 0).then(hits / cap).otherwise(0.0).alias(metric.label)
    return pl.col(metric.label)


def _mean(metric: MetricSpec) -> pl.Expr:
    if metric.name == "pooled_recall":
        # OTTO: pooled over users, sum(hits) / sum(min(k, m_u)), not a mean of ratios
        hits, cap = (pl.col(name) for name in _output_names(metric))
        # no evaluated user: null like every other mean, not 0/0 = NaN
        return pl.when(cap.sum() > 0).then(hits.sum() / cap.sum()).alias(metric.label)
    return pl.col(metric.label).mean()
