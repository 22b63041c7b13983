"""``evaluate``: metric strings in, per-user scores or their means out, in one query.

The public faces: :func:`evaluate`, :func:`per_user_parts` and
:func:`aggregate` (``aggregate(per_user_parts(...))`` is ``evaluate``),
:func:`aggregation_parts`, and the metric strings' :func:`parse_metrics` and
:func:`parse_metric`. The plan they run, built once on ``LazyFrame`` from the
measure registry (:mod:`polars_rankmetrics._measures`), is
:mod:`polars_rankmetrics._pipeline` (its steps: :mod:`polars_rankmetrics._pipeline.plan`).
"""

from __future__ import annotations

from collections.abc import Sequence

from polars_rankmetrics._frames import AnyFrame, ArrowStream, Frame, caller
from polars_rankmetrics._pipeline.aggregate import (
    AggregationPart,
    aggregate_lf,
    aggregation_part,
    check_parts,
    per_user_values,
)
from polars_rankmetrics._pipeline.inputs import as_list, to_lazy
from polars_rankmetrics._pipeline.parse import MetricSpec, metric_spec, metric_specs
from polars_rankmetrics._pipeline.plan import guard_evaluation, guarded_parts, plan_call, specs
from polars_rankmetrics.conventions import (
    Conventions,
    Ideal,
    NonpositiveScores,
    Preset,
    Unjudged,
    UserSets,
    UsersWithoutRecs,
    UsersWithoutTruth,
)
from polars_rankmetrics.options import EvaluateOptions, Unpack, read

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


def parse_metrics(metrics: str | Sequence[str]) -> list[MetricSpec]:
    """Parse metric strings, expanding ``"name@k1,k2,..."`` into one metric per cutoff.

    Accepted forms: ``"name"``, ``"name@k"``, ``"name@k1,k2,k3"`` (labels
    ``name@k1``, ``name@k2``...), and with parameters ``"name(p=v, q=w)@k"``.
    Names are case-insensitive; the label of a single metric is the string as
    given. Labels must be distinct.

    Examples
    --------
    >>> from polars_rankmetrics import parse_metrics
    >>> [spec.label for spec in parse_metrics(["ndcg@5,10,20", "mrr"])]
    ['ndcg@5', 'ndcg@10', 'ndcg@20', 'mrr']
    """
    return metric_specs(metrics)


def parse_metric(text: str) -> MetricSpec:
    """Parse one metric string ``"name"``, ``"name@k"`` or ``"name(p=v)@k"``.

    Names come from the measure registry (case-insensitive, aliases accepted);
    an unknown name suggests the closest. ``"hits@k"`` is the hit rate (an
    alias of ``hit_rate``), not ranx's count of relevant items retrieved,
    which is ``n_relevant_retrieved@k``. For ``"name@k1,k2"``, which is several
    metrics, use :func:`parse_metrics`.

    Examples
    --------
    >>> from polars_rankmetrics import parse_metric
    >>> parse_metric("MAP@12")
    MetricSpec(label='MAP@12', name='map', k=12, params=())
    >>> parse_metric("hits@5")
    MetricSpec(label='hits@5', name='hit_rate', k=5, params=())
    """
    return metric_spec(text)


def aggregation_parts(metrics: str | Sequence[str]) -> list[AggregationPart]:
    """The part columns of each metric and how they combine over users.

    Examples
    --------
    >>> from polars_rankmetrics import aggregation_parts
    >>> aggregation_parts(["map@5", "pooled_recall@20"])  # doctest: +NORMALIZE_WHITESPACE
    [AggregationPart(label='map@5', kind='mean', columns=('map@5',)),
     AggregationPart(label='pooled_recall@20', kind='pooled',
                     columns=('pooled_recall@20|num', 'pooled_recall@20|den'))]
    """
    return [aggregation_part(spec) for spec in metric_specs(metrics)]


def aggregate(
    parts: Frame | ArrowStream,
    metrics: str | Sequence[str],
    *,
    by: str | Sequence[str] | None = None,
) -> Frame:
    """Combine per-user parts (:func:`per_user_parts`) into one row per ``by`` group.

    ``aggregate(per_user_parts(recs, truth, metrics, by=by, ...), metrics, by=by)``
    is exactly ``evaluate(recs, truth, metrics, by=by, ...)``. Each metric's
    parts combine as :func:`aggregation_parts` says.

    Parameters
    ----------
    parts
        One row per (by..., user) with the part columns of each metric. Any
        frame (see :func:`evaluate`).
    metrics
        The metric strings the parts were computed for.
    by
        The group columns (sorted ascending in the result); ``None``: one row.

    Returns
    -------
    Frame
        A frame of the kind ``parts`` is, as for :func:`evaluate`.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_rankmetrics import aggregate
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
    specs = metric_specs(metrics)
    call = caller(parts, name="parts")
    lf = to_lazy(call.frame, name="parts")
    groups = as_list(by)
    check_parts(lf.collect_schema(), specs, groups)
    return call.back(aggregate_lf(lf, specs, groups))


def per_user_parts(
    recs: Frame | ArrowStream,
    truth: AnyFrame | None,
    metrics: str | Sequence[str],
    **options: Unpack[EvaluateOptions],
) -> Frame:
    """Per-user parts of each metric: what :func:`aggregate` combines into ``evaluate``'s means.

    The keywords are :func:`evaluate`'s. One row per (by..., user) counted by
    the conventions, sorted by those keys; for each metric label the columns
    its aggregation reads (:func:`aggregation_parts`), all Float64:

    * ``"mean"``: ``label``, the per-user value; null where the user is not
      counted for this metric (``mean_rank`` without a relevant hit);
    * ``"pooled"``: ``label|num`` and ``label|den``;
    * ``"geometric_mean"``: ``label|log``;
    * ``"sum"``, ``"group"``: ``label``.

    A frame of the kind ``recs`` is, as for :func:`evaluate`.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_rankmetrics import per_user_parts
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
    call = caller(recs, name="recs")
    roles, conv, described = specs(call.read_options(read(options, function="per_user_parts")))
    truth_frame = call.read(truth, name="truth")
    parts = guarded_parts(call.frame, truth_frame, metrics, roles, conv, described=described)
    return call.back(parts)


def evaluate(
    recs: Frame | ArrowStream,
    truth: AnyFrame | None,
    metrics: str | Sequence[str],
    *,
    per_user: bool = False,
    **options: Unpack[EvaluateOptions],
) -> Frame:
    """Evaluate recommendations against the truth: per-user scores or their means.

    Parameters
    ----------
    recs
        Long-format recommendations: one row per (user, item) with a ``rank``
        (1 = top) or a ``score`` (higher is better). A Polars DataFrame or
        LazyFrame, a pandas DataFrame, a pyarrow Table or any object with
        ``__arrow_c_stream__`` (a pyarrow RecordBatchReader, a DuckDB relation).
    truth
        One row per judged (user, item), optionally with graded relevance;
        any of those kinds.
    metrics
        Metric strings (see :func:`parse_metrics`): ``"name@k"``, ``"name"``,
        ``"name@k1,k2,k3"`` (one column per cutoff) or ``"name(param=v)@k"``.
        Names (from the measure registry). Against the truth: ``auc(max_fpr=1)``,
        ``gauc(weight=candidates)``, ``pauc@k``, ``pap@k``, ``precision@k``, ``map@k``
        (``ap@k``), ``inst(T=3,depth=1000)@k``, ``insq(T=3,depth=1000)@k``,
        ``ips_recall(gamma=0,clip=0.001)@k``, ``ips_precision(gamma=0,clip=0.001)@k``,
        ``ips_hit_rate(gamma=0,clip=0.001)@k``, ``ips_dcg(gamma=0,clip=0.001)@k``,
        ``ips_ndcg(gamma=0,clip=0.001)@k``, ``ips_map(gamma=0,clip=0.001)@k``
        (``ips_ap@k``), ``snips_recall(gamma=0,clip=0.001)@k``,
        ``snips_precision(gamma=0,clip=0.001)@k``,
        ``snips_hit_rate(gamma=0,clip=0.001)@k``, ``snips_dcg(gamma=0,clip=0.001)@k``,
        ``snips_ndcg(gamma=0,clip=0.001)@k``, ``snips_map(gamma=0,clip=0.001)@k``
        (``snips_ap@k``), ``alpha_dcg(alpha=0.5,norm=ideal_ideal)@k``,
        ``alpha_ndcg(alpha=0.5)@k``, ``err_ia(alpha=0.5,norm=ideal_ideal)@k``,
        ``nerr_ia(alpha=0.5)@k``, ``nrbp(alpha=0.5,beta=0.5)``,
        ``nnrbp(alpha=0.5,beta=0.5)``, ``p_ia@k``, ``map_ia``, ``strec@k``, ``err@k``,
        ``fbeta(beta=1)@k``, ``f1@k``, ``fallout@k`` (``fall_out@k``), ``hit_rate@k``
        (``hits@k``, ``success@k``), ``n_relevant_retrieved@k`` (``num_hits@k``),
        ``judged@k``, ``mrr@k`` (``rr@k``), ``mean_rank``, ``ndcg@k``, ``dcg@k``,
        ``pooled_recall@k`` (``micro_recall@k``), ``r_precision``, ``recall@k``,
        ``serendipity@k``, ``gm_map@k``, ``iprec(recall=0)@k`` (``iprec_at_recall@k``),
        ``eleven_pt@k`` (``eleven_point@k``), ``rbp(p=0.8)@k``, ``bpref@k``, ``infap@k``
        (``inf_ap@k``), ``rbp_resid(p=0.8)@k`` (``rbp_residual@k``), ``gm_bpref@k``. Of
        the lists themselves, which read no truth: ``calibration(alpha=0.01)@k``,
        ``coverage@k``, ``entropy(p=1)@k``, ``gini@k``, ``exposure_gini(p=0.5)@k``,
        ``awrf(p=0.5)@k``, ``ndkl@k``, ``ild@k``, ``personalization@k``,
        ``novelty(popularity=users)@k``, ``arp(popularity=users)@k``,
        ``long_tail(head_share=0.2,popularity=users)@k``,
        ``rank_biased_entropy(p=0.85,epsilon=1e-06)@k``, ``surprisal@k``. Leave out
        ``@k`` to evaluate the whole list; ``pauc``, ``pap``, ``precision``,
        ``ips_precision``, ``snips_precision``, ``alpha_dcg``, ``alpha_ndcg``,
        ``err_ia``, ``nerr_ia``, ``p_ia``, ``strec``, ``fbeta``, ``f1``,
        ``pooled_recall`` require a cutoff, and ``auc``, ``gauc``, ``nrbp``, ``nnrbp``,
        ``map_ia``, ``mean_rank``, ``r_precision`` take none.

        **Warning**: ``hits@k`` is the hit rate, 0 or 1 per user, while ranx's
        ``hits@k`` is a count, here ``n_relevant_retrieved@k``. The formulas are
        on the docs' Measures page (and :func:`polars_rankmetrics.list_metrics`
        for the measures of the lists). Each becomes a Float64 column named
        exactly as given.
    per_user
        ``False``: one row per ``by`` group, each metric combined over users
        as :func:`aggregation_parts` says (``aggregate(per_user_parts(...))``).
        ``True``: one row per (by..., user) for every evaluated user, sorted by
        those keys.
    **options
        The keyword options every surface shares
        (:class:`polars_rankmetrics.EvaluateOptions`), each below.

    Other Parameters
    ----------------
    user : str, default "user"
        The column of the user (query, customer, session) in every frame.
    item : str, default "item"
        The column of the item (document, product) in every frame.
    rank : str, default "rank"
        The column of ``recs`` holding each item's position, 1 at the top (read when ``score``
        is ``None``; with ``score``, the name of the positions derived).
    score : str or None, default None
        The column of ``recs`` holding each item's score, higher is better: ranks are derived
        per user from it, equal scores ordered by ``ties``. ``None``: ranks are given in
        ``rank``.
    relevance : str or None, default None
        The column of the truth holding each row's graded relevance. ``None``: every truth row
        is relevant with grade 1.
    by : str, sequence of str or None, default None
        Columns evaluated side by side. Those in both frames join with the truth (folds, time
        splits); those only in ``recs`` (models) share it. Every role names a column of its own,
        distinct from these.
    denominator : {"min_k", "relevant", "hits", "k"} or None, default None (the preset's)
        AP denominator: ``"min_k"`` (Kaggle), ``"relevant"`` (trec_eval), ``"hits"``, ``"k"``
        (the cutoff: RecTools ``divide_by_k=True``; needs ``map@k``). See
        :func:`polars_rankmetrics.average_precision`.
    gain : {"linear", "exponential"}, mapping or None, default None (the preset's)
        NDCG/DCG gain: ``"linear"`` (trec_eval), ``"exponential"`` (2^rel - 1) or a mapping
        ``{grade: gain}`` (trec_eval ``-mndcg.1=3,2=9``: grades not listed gain their own value;
        grades > 0, gains finite and >= 0). The ideal list is sorted by gain.
    ties : {"item_desc", "item_asc", "input", "average"} or None, default None (the preset's)
        Order of equal scores: ``"item_desc"`` (trec_eval), ``"item_asc"``, ``"input"``, or
        ``"average"``: the exact expected value over every order of the tied items (McSherry &
        Najork 2008; sklearn ``ndcg_score(ignore_ties=False)``), from ``score`` only, for
        precision, recall, f1, fbeta, hit_rate, n_relevant_retrieved, pooled_recall, map
        (denominator not ``"hits"``), mrr, dcg and ndcg; other measures refuse it.
    relevance_level : float or None, default None
        Minimum grade that binary metrics count as relevant (trec_eval ``-l``); a finite number.
        ``None``: every positive grade.
    users_without_recs : {"zero", "exclude"} or None, default None (the preset's)
        Users with relevant truth but no recommendations: ``"zero"`` (they score 0 and count, as
        trec_eval ``-c``) or ``"exclude"``.
    users_without_truth : {"exclude", "judged", "zero"} or None, default None (the preset's)
        Users without relevant truth, for whom recall, AP and NDCG are undefined: ``"exclude"``
        (H&M), ``"judged"`` (those with truth rows, all non-relevant, count: trec_eval, ranx) or
        ``"zero"`` (those with recommendations or truth rows count; Santander). Counted users
        score 0 on the binary metrics; NDCG and DCG keep the value of their raw grades (a
        relevance level can leave graded items below it, as with trec_eval ``-l``).
        ``users_without_recs="exclude"`` still leaves out users without recommendations.
    duplicates : {"error", "first"} or None, default None (the preset's)
        A (user, item) recommended twice: ``"error"`` or ``"first"`` (keep its best position;
        from scores, rank the list with its repeats removed). ``"error"`` refuses what can
        change a number, within the largest cutoff requested (a repeat further down changes
        nothing asked for): with given ranks and measures that read only relevant items (all but
        ``judged@k``), a relevant item twice or two relevant items at one position (a repeated
        non-relevant item is accepted: it takes no position from anyone); with ranks from scores
        or with ``judged@k``, any item twice (and with given ranks any position twice).
    ideal : {"truth", "k"} or None, default None (the preset's)
        NDCG's ideal DCG: ``"truth"`` (the user's truth sorted by gain) or ``"k"`` (k items of
        the user's highest gain, RecTools' NDCG, "SDCG"; binary: ``sum_{i<=k} 1/log2(i+1)``;
        needs ``ndcg@k``).
    unjudged : {"keep", "remove"} or None, default None (the preset's)
        Recommended items without a judgement, that is without a truth row or with a negative
        grade (trec_eval's "in the pool, unjudged"): ``"keep"`` or ``"remove"``, before
        positions are assigned, so the items below move up (condensed lists, Sakai 2007;
        trec_eval ``-J``, pytrec_eval ``judged_docs_only_flag``). Given ranks are re-numbered 1,
        2, ... in their order.
    nonpositive_scores : {"keep", "drop"} or None, default None (the preset's)
        ``"keep"`` or ``"drop"``: recommendations with a score <= 0 are not retrieved (removed
        before positions are assigned; needs ``score``).
    user_sets : {"any", "strict"} or None, default None (the preset's)
        ``"any"`` or ``"strict"``: the (by..., user) of ``recs`` and of the truth (users with
        any truth row) must be the same, else the call raises naming how many are on one side
        only (ranx's strict check).
    conventions : {"default", "trec", "ndeval"} or Conventions, default "default"
        A preset, ``"default"``, ``"trec"`` (trec_eval's conventions) or ``"ndeval"`` (ndeval's,
        the diversity measures': as ``"trec"`` without fixing any), or a
        :class:`polars_rankmetrics.Conventions` object. Every convention keyword left at
        ``None`` takes the preset's value. ``"trec"`` fixes ``denominator="relevant"``,
        ``gain="linear"``, ``ties="item_desc"`` and ``ideal="truth"`` (an explicit different
        value is refused; a gain mapping is allowed, trec_eval's ``-mndcg``) and defaults
        ``users_without_recs="exclude"`` (pass ``"zero"`` for trec_eval ``-c``) and
        ``users_without_truth="judged"``. ``"default"``: ``"min_k"``, ``"linear"``,
        ``"item_desc"``, ``"zero"``, ``"exclude"``, ``"error"``, ``ideal="truth"``,
        ``unjudged="keep"``, ``nonpositive_scores="keep"``, ``user_sets="any"``. See
        :mod:`polars_rankmetrics.conventions`.
    interactions : frame or None, default None
        The training history, one row per (user, item) (repeats count once), for the measures
        that read it (the measures of the lists' popularity: novelty, arp, long_tail, surprisal;
        calibration; estimated propensities; serendipity's popularity ranks). ``by`` columns it
        also has (folds) give each group its own history; the others (models) share it.
    items : frame or None, default None
        The item catalog, one row per item, with the ``item`` column and the columns
        ``category``, ``group``, ``group_weight`` and ``propensity`` name, for the measures that
        read it (coverage, gini, ild, calibration, the exposure-fairness measures, serendipity:
        the catalog's size). Every listed item must be in it; one catalog serves every ``by``
        group.
    category : str or None, default None
        The column of ``items`` holding each item's category (String, Categorical, Enum or
        integer) or a List of them (ild, calibration).
    propensity : str or None, default None
        The column of ``items`` (one propensity per item) or of the truth (one per relevant
        pair) holding each relevant pair's probability of being observed, in (0, 1], for the
        debiased measures (``ips_*``, ``snips_*``). ``None``: estimated from ``interactions`` as
        ``(n_i / max_j n_j)^((gamma + 1) / 2)``.
    group : str or None, default None
        The column of ``items`` holding each item's group, a label or a list of labels, for the
        exposure-fairness measures (``awrf``, ``ndkl``).
    group_weight : str or None, default None
        The column of ``items`` with each item's weights in its groups: a list beside the list
        of ``group``, normalised per item. ``None``: an equal split.
    subtopic : str or None, default "subtopic"
        The column of the truth holding each row's subtopic (intent) for the diversity measures
        (``alpha_ndcg``, ``err_ia``, ``nrbp``, ``p_ia``, ``map_ia``, ``strec``...): the truth
        then has one row per (user, subtopic, item), TREC's diversity qrels ``topic subtopic
        docno judgment``. The other measures of the call read one row per (user, item), its
        largest grade. ``None``: ``"subtopic"``.

    Returns
    -------
    Frame
        A frame of the kind ``recs`` is: a LazyFrame stays lazy (nothing is
        collected early; errors in the data are raised when it is collected),
        pandas in, pandas out (input columns keep their dtypes), and an Arrow
        object (pyarrow, DuckDB) gives a Polars DataFrame.

    Notes
    -----
    Evaluated users are the users of the truth with at least one relevant
    item (per ``by`` group), subject to ``users_without_recs``, plus, with
    ``users_without_truth="zero"``, users recommended something without any
    relevant truth (``"judged"``: users with truth rows but no relevant one).
    The measures of the lists themselves (coverage, novelty, ild...) count
    the users with a list, whatever the truth (``truth`` may be ``None`` when
    only such measures are asked for); with ``per_user=True`` a metric is
    null on the rows of users it does not count, and a group measure
    (coverage, gini, personalization) shows its group's value on every row.
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
    call = caller(recs, name="recs")
    given = call.read_options(read(options, function="evaluate"))
    truth_frame = call.read(truth, name="truth")
    parts, checks, requests, keys, hit_users = plan_call(call.frame, truth_frame, metrics, given)
    specs = [request.spec for request in requests]
    if per_user:
        result = parts.select(*keys, *per_user_values(specs)).sort(keys)
    else:
        result = aggregate_lf(parts, specs, as_list(given["by"]))
    return call.back(
        guard_evaluation(
            call.frame, truth_frame, result, checks, hit_users, user=given["user"],
            item=given["item"], relevance=given["relevance"], level=_relevance_level(given),
            by=as_list(given["by"]),
        )
    )  # fmt: skip


def _relevance_level(given: EvaluateOptions) -> float | None:
    """The relevance level given, by keyword or in a ``Conventions`` object."""
    level = given.get("relevance_level")
    conventions = given.get("conventions")
    if level is None and isinstance(conventions, Conventions):
        return conventions.relevance_level
    return level
