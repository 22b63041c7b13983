"""``evaluate`` on Spark: the same numbers on a cluster, from the same Polars kernel.

Both frames are co-partitioned by a hash bucket of the user,
``pmod(xxhash64(user), n_buckets)``: every row of one user, in the
recommendations and in the truth, lands in the same bucket. Each bucket is
handed to the package's own Polars pipeline through Arrow
(``groupBy(bucket).cogroup(...).applyInArrow``), which computes the per-user
values there, exactly as on one machine. For means, each bucket reduces its
users to sums and counts per ``by`` group, and Spark adds those up and
divides: a mean of means would weigh buckets instead of users, and a pooled
ratio (``pooled_recall@k``) must pool numerators and denominators.

The measures of the lists themselves read more than one bucket's users.
Novelty, ARP and the long-tail share need each item's popularity c_i and the
number of users N over the whole ``interactions``: Spark counts them once
and every bucket gets the table. Calibration needs each user's own
interactions, which are co-partitioned with the lists. Coverage, Gini and
personalization are one value per ``by`` group: each bucket emits every
item's exposure x_i (how many of its users' top-k lists hold the item) and
its number of users with a list, which add up exactly across buckets since
every user is in one; Spark adds them and the group values follow.

The debiased measures (``ips_*``, ``snips_*``) read each item's propensity:
estimated, from n_i / max_j n_j over the whole ``interactions``, counted by
Spark once and sent to every bucket; given, from the whole ``items`` catalog.

Needs pyspark>=4.0 and pyarrow (the ``spark`` extra: ``pip install ".[spark]"``
in the repository); the executors need the package (and Polars) installed
too, in the Python Spark starts them with (``PYSPARK_PYTHON``).
"""

from __future__ import annotations

import math
import os
import re
import sys
import warnings
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, cast

import polars as pl

try:
    import pyarrow as pa
    from pyspark import cloudpickle
    from pyspark.errors import PythonException
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql import functions as F  # noqa: N812  (Spark's own idiom)
    from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema
    from pyspark.sql.types import IntegralType, LongType, StructField, StructType
except ImportError as error:  # pragma: no cover - exercised in a subprocess without pyspark
    raise ImportError(
        "polars_rankmetrics.spark needs pyspark>=4.0 and pyarrow: "
        "pip install 'pyspark>=4.0' pyarrow (the package's spark extra)"
    ) from error

from polars_rankmetrics._measures import Measure, lookup
from polars_rankmetrics._measures._registry import adopt_written, written_measures
from polars_rankmetrics._measures.lists import Keys, ListRequest, OfGroup, RowMean, per_user
from polars_rankmetrics._measures.lists import _exposure as exposure
from polars_rankmetrics._measures.lists import _popularity as popularity
from polars_rankmetrics._measures.lists._hooks import Count
from polars_rankmetrics._pipeline.aggregate import FINISH, Totals, decided_by_the_whole_truth
from polars_rankmetrics._pipeline.inputs import RecsSpec, as_list
from polars_rankmetrics._pipeline.population import with_every_group
from polars_rankmetrics._pipeline.propensity import POPULARITY_COUNT, counted_popularity
from polars_rankmetrics._pipeline.rank_cut import with_positions
from polars_rankmetrics.conventions import (
    Conventions,
    resolve,
)
from polars_rankmetrics.evaluation import (
    AggregationPart,
    MetricSpec,
    aggregation_parts,
    parse_metrics,
    per_user_parts,
)
from polars_rankmetrics.evaluation import evaluate as _evaluate_polars
from polars_rankmetrics.options import (
    Declared,
    EvaluateOptions,
    Unpack,
    conventions_given,
    read,
    travelling,
)

__all__ = ["evaluate"]

# input of about this many bytes per bucket (Spark's size estimate of both frames):
# one bucket is one Polars call in one Python worker, which holds it whole, about
# 3-5x its size at the peak
_BYTES_PER_BUCKET = 64 * 1024 * 1024
# with little data, still this many buckets per core, so that every core has work
_BUCKETS_PER_CORE = 3
_BUCKET = "__prm_bucket"
# ties="input": the input order, which the shuffle to buckets does not keep
_ORDER = "__prm_order"
# a data error raised in a worker travels to the driver inside Spark's wrapping; these
# markers let the driver take the package's message back out, whole
_ERROR_OPEN = "<<polars_rankmetrics:"
_ERROR_CLOSE = "<</polars_rankmetrics>>"
_ERROR_PATTERN = re.compile(
    re.escape(_ERROR_OPEN) + r"(ValueError|TypeError)>>(.*?)" + re.escape(_ERROR_CLOSE), re.DOTALL
)
# a worker whose Python lacks the package (or Polars, pyarrow) fails to unpickle the task
_MISSING_MODULE = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")
_ONE_BUCKET_NOTE = (
    "\n(counted in one bucket of the data: Spark stops at the first bucket with bad rows, "
    "so the whole data may hold more)"
)


# the kernel's output rows when measures of whole groups are asked for: the bucket's
# per-user rows or sums (0), the items' exposures (1), the users with a list (2)
_KIND = "__prm_kind"
_ITEM = "__prm_item"
_SIDE = "__prm_side"  # on the truth side of the cogroup: 0 truth, 1 interactions
_HISTORY = "__prm_h"
_POSITION = "__prm_pos"


@dataclass(frozen=True)
class _Lists:
    """The measures of the lists that read more than one bucket's users, and their inputs.

    ``popularity``: the :class:`RowMean` measures (per user, but from the
    popularity of items over every user); ``popular``: their tables per count
    (c_i with the head flags per shared ``by`` group and item, and N), counted
    in Spark over the whole interactions (``shares``: the head shares marked).
    ``of_group``: the :class:`OfGroup` measures, from the exposures every bucket emits;
    ``attention``: the (cutoff, patience) of those whose x_i is the attention
    Σ p^(r - 1) (exposure_gini), which each bucket emits per item beside x_i.
    """

    popularity: tuple[tuple[ListRequest, RowMean], ...]
    of_group: tuple[tuple[ListRequest, OfGroup], ...]
    cutoffs: tuple[int | None, ...]
    attention: tuple[tuple[int | None, float], ...]
    largest: int | None
    shared: tuple[str, ...]
    popular: dict[Count, tuple[pl.DataFrame, pl.DataFrame]] | None
    shares: dict[Count, list[float]]


@dataclass(frozen=True)
class _Plan:
    """Everything a bucket needs; pickled to the workers with the kernel."""

    metrics: tuple[str, ...]
    renames: dict[str, str]
    options: dict[str, Any]
    conventions: Conventions
    by: tuple[str, ...]
    user: str
    item: str
    position: str
    score: str | None
    truth_columns: tuple[str, ...] | None
    history_columns: tuple[str, ...] | None
    catalog: pl.DataFrame | None
    # a measure reads shares of the whole catalog (awrf, ndkl): each bucket gets all of it
    whole_catalog: bool
    # a column of the catalog or the truth is given (a propensity): the truth's items need
    # their catalog rows too
    truth_items_in_catalog: bool
    shared_by: tuple[str, ...]
    recs_only_by: tuple[str, ...]
    groups: pl.DataFrame | None
    parts: tuple[AggregationPart, ...]
    lists: _Lists | None
    per_user: bool
    out_schema: pa.Schema
    # the debiased measures' item counts over all the interactions (estimated propensities)
    popularity: pl.DataFrame | None = None
    # the measures users wrote among the metrics: registered again in each worker
    written: tuple[Measure, ...] = ()


def evaluate(
    recs: DataFrame,
    truth: DataFrame | None,
    metrics: str | Sequence[str],
    *,
    per_user: bool = False,
    n_buckets: int | None = None,
    **options: Unpack[EvaluateOptions],
) -> DataFrame:
    r"""Evaluate Spark recommendations against the truth: per-user scores or their means.

    The parameters, conventions, metric strings and errors are those of
    :func:`polars_rankmetrics.evaluate`, and so are the numbers: each bucket of
    users runs that function's Polars pipeline. Means are the mean over the
    evaluated users, :math:`\frac{1}{|U|}\sum_{u \in U} \mathrm{metric}(u)`,
    combined from each bucket's sum and count; ``pooled_recall@k`` is
    :math:`\sum_u \mathrm{hits}_u / \sum_u \min(k, m_u)` over all users.
    Each metric combines as :func:`polars_rankmetrics.aggregation_parts` says
    (mean, pooled ratio, geometric mean or sum of its per-user parts from
    :func:`polars_rankmetrics.evaluation.per_user_parts`), so a measure added to
    the registry works here unchanged. The measures of the lists themselves
    (``coverage``, ``novelty``, ``arp``, ``long_tail``, ``gini``,
    ``personalization``, ``ild``, ``calibration``) are exact too (see Notes).

    Parameters
    ----------
    recs, truth
        ``pyspark.sql.DataFrame`` in the long format of
        :func:`polars_rankmetrics.evaluate`; ``truth`` may be ``None`` when
        every metric describes the lists themselves.
    metrics, per_user
        As in :func:`polars_rankmetrics.evaluate`.
    n_buckets
        How many buckets of users the work is cut into (each is evaluated by
        one Polars call holding its rows in memory). Default: one per 64 MiB of
        input by Spark's size estimate, and at least three per core of the
        cluster (``defaultParallelism``).
    **options
        Every option of :func:`polars_rankmetrics.evaluate`
        (:class:`polars_rankmetrics.EvaluateOptions`): the column roles, the
        conventions (``ties="input"`` is the order of the rows as Spark reads
        them, ``monotonically_increasing_id``) and the list inputs:
        ``interactions``, the training history as a ``pyspark.sql.DataFrame``;
        ``items``, the catalog, a ``pyspark.sql.DataFrame`` or a Polars
        ``DataFrame`` (collected to the driver and sent to every task: one
        row per item), and its ``category``, ``group`` and ``group_weight`` columns.

    Returns
    -------
    A ``pyspark.sql.DataFrame``: one row of means per ``by`` group (sorted by
    them), or with ``per_user=True`` one row per (by..., user), in no
    particular order. The metric columns are ``double``; the ``by`` and user
    columns keep the types :func:`polars_rankmetrics.evaluate` gives them.

    Raises
    ------
    ValueError, TypeError
        The messages of :func:`polars_rankmetrics.evaluate`. Schema-level
        problems (missing columns, a string user against an integer one, an
        unknown metric) are raised before any Spark job; data-level ones (nulls,
        NaN, duplicates) when the evaluation runs, inside this call, with a note
        that the count is of the first bucket where they were found (the
        catalog's own checks run on the driver, on all of it).

    Notes
    -----
    The evaluation runs when this function is called (the data checks need it
    to): the means are collected to the driver (a few rows), the per-user
    rows are kept on the executors with ``localCheckpoint``.

    Every user's rows are in one bucket, so each per-user value is the
    single-machine value. ``by`` columns only in ``recs`` (models) are judged on
    the whole truth: their global set is collected first and handed to every
    bucket, so a model charged 0 for a user in one bucket where it recommended
    nothing still counts that user.

    The measures of the lists: ``interactions`` are co-partitioned with the
    lists by the same user bucket (calibration reads each user's own); c_i
    and N (novelty, arp, long_tail) are counted over all of them in Spark, the
    long-tail head is found on the driver from those counts, and the table
    (one row per item and shared ``by`` group) goes to every task. Coverage,
    Gini and personalization add up each item's exposure x_i and the number
    of users with a list U over the buckets, per ``by`` group, then take the
    single-machine formulas (Gini over the catalog: the items never shown
    add zeros, so only the ranks of the non-zero x_i are needed). Under
    ``unjudged="remove"`` or ``nonpositive_scores="drop"`` with metrics
    against the truth, the single-machine lists are the rows those leave;
    that combination is refused for novelty, arp, long_tail, coverage, gini
    and personalization (evaluate them in a separate call). A measure of a
    whole group that the registry adds later is refused: it cannot be put
    together from buckets until it says how.

    Examples
    --------
    >>> from pyspark.sql import SparkSession
    >>> from polars_rankmetrics import spark as prs
    >>> spark = SparkSession.builder.getOrCreate()
    >>> recs = spark.createDataFrame(
    ...     [("pop", 1, "a", 0.9), ("pop", 1, "c", 0.1), ("knn", 1, "c", 0.7)],
    ...     "model string, user long, item string, score double",
    ... )
    >>> truth = spark.createDataFrame(
    ...     [(1, "c", 3), (1, "d", 1), (2, "a", 2)], "user long, item string, rel long"
    ... )
    >>> prs.evaluate(recs, truth, ["map@2", "mrr"], score="score", by="model").show()
    +-----+-----+----+
    |model|map@2| mrr|
    +-----+-----+----+
    |  knn| 0.25| 0.5|
    |  pop|0.125|0.25|
    +-----+-----+----+
    <BLANKLINE>
    >>> catalog = spark.createDataFrame([(i,) for i in "abcd"], "item string")
    >>> prs.evaluate(recs, None, ["coverage@2"], score="score", by="model", items=catalog).show()
    +-----+----------+
    |model|coverage@2|
    +-----+----------+
    |  knn|      0.25|
    |  pop|       0.5|
    +-----+----------+
    <BLANKLINE>
    """
    metric_list = [metrics] if isinstance(metrics, str) else list(metrics)
    given = read(options, function="spark.evaluate")
    _check_frames(recs, truth, given)
    if n_buckets is not None and (
        isinstance(n_buckets, bool) or not isinstance(n_buckets, int) or n_buckets < 1
    ):
        raise ValueError(f"n_buckets must be a positive integer or None, got {n_buckets!r}")
    # schema-level checks and the output schema: the Polars pipeline on empty frames
    # of the same schemas raises exactly what it raises on one machine
    dry = _dry_run(recs, truth, metric_list, given, per_user=per_user)
    specs = parse_metrics(metric_list)
    conv = resolve(given["conventions"], **conventions_given(given))
    parts = tuple(aggregation_parts(metric_list))
    _refuse_group_measures(parts, specs)
    _refuse_condensed_lists(specs, conv)
    selected = _Selected.of(recs, truth, given, specs, conv)
    catalog = None
    items = _frame_given(given, _CATALOG_INPUTS)
    if items is not None and _reads_catalog(selected.reads, given):
        catalog = _collect_catalog(items)
        # the catalog's own checks (nulls, repeats, categories) on all of it, on the driver
        _dry_run(recs, truth, metric_list, given, per_user=per_user, catalog=catalog)
    plan, final = _planned(
        selected, given, specs, parts, dry, per_user=per_user, catalog=catalog, truth=truth
    )
    frames = [frame for frame in selected.frames() if frame is not None]
    buckets = n_buckets or _default_buckets(recs.sparkSession, *frames)
    partials = _bucketed(plan, *selected.frames(), buckets=buckets)
    return _results(partials, plan, final)


# the inputs that are frames: the history split with the users, the catalog collected; every
# other option (a column name among them) reaches the buckets' Polars calls as given
_HISTORY_INPUTS = travelling("history")
_CATALOG_INPUTS = travelling("catalog")
_FRAMES = frozenset(option.name for option in (*_HISTORY_INPUTS, *_CATALOG_INPUTS))


def _polars_options(given: EvaluateOptions) -> dict[str, Any]:
    """The options every Polars call of the buckets takes as given (all but the input frames)."""
    return {name: value for name, value in given.items() if name not in _FRAMES}


def _given(given: EvaluateOptions, name: str) -> Any:
    """The option ``name`` of ``given`` (a declared input's, read by its declaration)."""
    return cast("Mapping[str, Any]", given)[name]


def _frame_given(given: EvaluateOptions, inputs: Sequence[Declared]) -> Any:
    """The frame given for one of ``inputs`` (the history's, or the catalog's), if any."""
    found = [_given(given, option.name) for option in inputs]
    return next((frame for frame in found if frame is not None), None)


def _check_frames(recs: object, truth: object, given: EvaluateOptions) -> None:
    """Refuse a frame that is not a Spark one, naming the argument."""
    history = [(option.name, _given(given, option.name)) for option in _HISTORY_INPUTS]
    for name, frame in (("recs", recs), ("truth", truth), *history):
        if (frame is not None or name == "recs") and not isinstance(frame, DataFrame):
            raise TypeError(
                f"{name} must be a pyspark.sql.DataFrame, got {type(frame).__name__} "
                "(Polars or pandas frames: use polars_rankmetrics.evaluate)"
            )


def _dry_run(
    recs: DataFrame,
    truth: DataFrame | None,
    metric_list: list[str],
    given: EvaluateOptions,
    *,
    per_user: bool,
    catalog: pl.DataFrame | None = None,
) -> pl.DataFrame:
    """The Polars pipeline on empty frames of the Spark schemas, and on the collected catalog."""
    frames: dict[str, Any] = {}
    for option in _HISTORY_INPUTS:
        history = _given(given, option.name)
        frames[option.name] = None if history is None else _empty_like(history.schema)
    for option in _CATALOG_INPUTS:
        shown = catalog if catalog is not None else _catalog_schema(_given(given, option.name))
        frames[option.name] = shown
    return _evaluate_polars(
        _empty_like(recs.schema),
        None if truth is None else _empty_like(truth.schema),
        metric_list,
        per_user=per_user,
        **_polars_options(given),
        **frames,
    )


@dataclass(frozen=True)
class _Selected:
    """The columns of each Spark input the buckets read, and how ``by`` splits between them."""

    recs: DataFrame
    truth: DataFrame | None
    history: DataFrame | None
    shared_by: tuple[str, ...]
    recs_only_by: tuple[str, ...]
    by: tuple[str, ...]
    position: str
    reads: frozenset[str]

    @classmethod
    def of(
        cls,
        recs: DataFrame,
        truth: DataFrame | None,
        given: EvaluateOptions,
        specs: Sequence[MetricSpec],
        conv: Conventions,
    ) -> _Selected:
        user, item, interactions = (
            given["user"],
            given["item"],
            _frame_given(given, _HISTORY_INPUTS),
        )
        by = as_list(given["by"])
        shared_by = tuple(name for name in by if truth is not None and name in truth.columns)
        position = given["score"] if given["score"] is not None else given["rank"]
        recs_in = recs.select(*(_col(n) for n in dict.fromkeys([*by, user, item, position])))
        if conv.ties == "input":
            # equal scores keep their input order: number the rows before the shuffle
            recs_in = recs_in.withColumn(_ORDER, F.monotonically_increasing_id())
        reads = frozenset(name for spec in specs for name in lookup(spec.name).inputs)
        grades = _truth_values(truth, given["relevance"], given, reads)
        truth_columns = dict.fromkeys([*shared_by, user, item, *grades])
        history = None
        if interactions is not None and any(option.reads in reads for option in _HISTORY_INPUTS):
            history_columns = [*(n for n in by if n in interactions.columns), user, item]
            history = interactions.select(*(_col(name) for name in history_columns))
        return cls(
            recs=recs_in,
            truth=None if truth is None else truth.select(*(_col(n) for n in truth_columns)),
            history=history,
            shared_by=shared_by,
            recs_only_by=tuple(name for name in by if name not in shared_by),
            by=tuple(by),
            position=position,
            reads=reads,
        )

    def frames(self) -> tuple[DataFrame, DataFrame | None, DataFrame | None]:
        return self.recs, self.truth, self.history


def _planned(
    selected: _Selected,
    given: EvaluateOptions,
    specs: Sequence[MetricSpec],
    parts: tuple[AggregationPart, ...],
    dry: pl.DataFrame,
    *,
    per_user: bool,
    catalog: pl.DataFrame | None,
    truth: DataFrame | None,
) -> tuple[_Plan, StructType]:
    """Everything a bucket needs, and the schema of the final rows."""
    user, item, reads = given["user"], given["item"], selected.reads
    spark = selected.recs.sparkSession
    lists = _lists_plan(specs, list(selected.by), selected.history, user=user, item=item)
    partial_schema, final = _partial_schema(
        dry,
        list(selected.by),
        parts,
        per_user=per_user,
        lists=lists,
        item_type=selected.recs.schema[item].dataType,
    )
    large = spark.conf.get("spark.sql.execution.arrow.useLargeVarTypes", "false") == "true"
    bucket_metrics, renames = _truth_wide_metrics(specs, selected.truth, given["relevance"])
    # an input estimated from a frame when not given (propensities from the history's counts)
    estimated = [
        option.estimated_from
        for option in travelling("either_column", "catalog_column", "truth_column")
        if option.estimated_from is not None
        and option.reads in reads
        and _given(given, option.name) is None
    ]
    plan = _Plan(
        metrics=bucket_metrics,
        renames=renames,
        options=_polars_options(given),
        conventions=resolve(given["conventions"], **conventions_given(given)),
        by=selected.by,
        user=user,
        item=item,
        position=selected.position,
        score=given["score"],
        truth_columns=None if selected.truth is None else tuple(selected.truth.columns),
        history_columns=None if selected.history is None else tuple(selected.history.columns),
        catalog=catalog,
        whole_catalog=any(
            option.whole_catalog
            and option.reads in reads
            and _given(given, option.name) is not None
            for option in travelling("catalog_column")
        ),
        truth_items_in_catalog=any(
            _given(given, option.name) is not None for option in travelling("either_column")
        ),
        shared_by=selected.shared_by,
        recs_only_by=selected.recs_only_by,
        groups=(
            None
            if truth is None
            else _global_groups(selected.recs, selected.shared_by, selected.recs_only_by)
        ),
        parts=parts,
        lists=lists,
        per_user=per_user,
        out_schema=to_arrow_schema(partial_schema, timezone="UTC", prefers_large_types=large),
        popularity=_popularity_counts(
            _given(given, estimated[0]) if estimated else None, user=user, item=item
        ),
        written=_written(specs),
    )
    return plan, final


def _written(specs: Sequence[MetricSpec]) -> tuple[Measure, ...]:
    """The measures users wrote among ``specs``, their modules sent to the workers by value.

    A worker imports the package, not the user's module (a notebook, a file
    loaded by ``rankmetrics --measures``): the measure's functions travel with
    the plan, pickled by value, and the worker registers them.
    """
    written = tuple(written_measures(spec.name for spec in specs))
    for module in {name for measure in written for name in measure.written_in}:
        found = sys.modules.get(module)
        if found is not None and module != "__main__":
            cloudpickle.register_pickle_by_value(found)  # type: ignore[no-untyped-call]
    return written


def _truth_values(
    truth: DataFrame | None,
    relevance: str | None,
    given: EvaluateOptions,
    reads: Collection[str],
) -> list[str]:
    """The truth's columns besides its keys: the grades, and the inputs that are its columns.

    An input naming a column of the truth (a propensity, the diversity measures'
    subtopic) travels with the truth's rows (co-partitioned by user): the column
    given, or its default when its measures are read.
    """
    names = [relevance] if relevance is not None else []
    if truth is None:
        return names
    for option in travelling("truth_column", "either_column"):
        column = _given(given, option.name)
        if column is None and option.reads in reads:
            column = option.default
        if isinstance(column, str) and column in truth.columns:
            names.append(column)
    return names


def _reads_catalog(reads: Collection[str], given: EvaluateOptions) -> bool:
    """Whether the buckets read the catalog: its measures, or a column given of it or the truth."""
    if any(option.reads in reads for option in _CATALOG_INPUTS):
        return True
    return any(
        option.reads in reads and _given(given, option.name) is not None
        for option in travelling("either_column")
    )


def _popularity_counts(
    interactions: DataFrame | None, *, user: str, item: str
) -> pl.DataFrame | None:
    """n_i, the distinct users with each item, over all the interactions (one Spark job).

    Estimated propensities read n_i / max_j n_j: a bucket holds only its users'
    interactions, so the counts and their largest are taken here, once, and
    sent with every task (one row per item). ``None`` without interactions.
    """
    if interactions is None:
        return None
    counts = (
        interactions.select(_col(user), _col(item))
        .distinct()
        .groupBy(_col(item))
        .agg(F.count(F.lit(1)).cast("double").alias(POPULARITY_COUNT))
    )
    with _unwrapped_errors():
        return _frame(counts.toArrow())


def _bucketed(
    plan: _Plan,
    recs: DataFrame,
    truth: DataFrame | None,
    history: DataFrame | None,
    *,
    buckets: int,
) -> DataFrame:
    """The kernel's rows: the frames co-partitioned by the user's bucket, each bucket evaluated."""
    frames = [frame for frame in (recs, truth, history) if frame is not None]
    types = [frame.schema[plan.user].dataType for frame in frames]
    bucket = F.pmod(F.xxhash64(_hash_key(types, plan.user)), F.lit(buckets))
    side = _side(
        recs.sparkSession,
        None if truth is None else truth.withColumn(_BUCKET, bucket),
        None if history is None else history.withColumn(_BUCKET, bucket),
    )
    schema = from_arrow_schema(plan.out_schema)
    with _quiet_pandas_warning():
        return (
            recs.withColumn(_BUCKET, bucket)
            .groupBy(_BUCKET)
            .cogroup(side.groupBy(_BUCKET))
            .applyInArrow(_kernel(plan), schema=schema)
        )


def _results(partials: DataFrame, plan: _Plan, final: StructType) -> DataFrame:
    """The per-user rows, or the means collected to the driver, with the group measures."""
    spark = partials.sparkSession
    by = list(plan.by)
    lists = plan.lists
    grouped = lists is not None and bool(lists.of_group)
    if grouped:
        # read three times (rows, exposures, users): run the buckets once
        with _unwrapped_errors():
            partials = partials.localCheckpoint(eager=True)
    if plan.per_user:
        if grouped and lists is not None:
            rows = partials.filter(F.col(_KIND) == 0).select(*(_col(n) for n in final.names))
            values = _group_values(partials, plan, lists)
            return _with_group_values(
                spark, rows, values=values, plan=plan, lists=lists, final=final
            )
        with _unwrapped_errors():
            return partials.localCheckpoint(eager=True)
    rows_in = partials.filter(F.col(_KIND) == 0) if grouped else partials
    result = _combine(rows_in, by, plan.parts)
    with _unwrapped_errors():
        table = result.toArrow()
    means = _frame(table)
    if grouped and lists is not None:
        means = _joined(means, _group_values(partials, plan, lists), by)
    means = means.select(final.names)
    if by:
        means = means.sort(by, nulls_last=False)
    return spark.createDataFrame(means.rows(), schema=final)


def _col(name: str) -> Column:
    # backticks: a column name with a dot is a name, not a struct field
    return F.col("`" + name.replace("`", "``") + "`")


def _empty_like(schema: StructType) -> pl.DataFrame:
    """An empty Polars frame with the dtypes the kernel will see for these columns."""
    fields = []
    for field in schema.fields:
        try:
            arrow = to_arrow_schema(StructType([field]), timezone="UTC").field(0)
        except Exception:  # a type Arrow cannot carry: never a role column
            arrow = pa.field(field.name, pa.null())
        fields.append(arrow)
    return _frame(pa.schema(fields).empty_table())


def _catalog_schema(items: object) -> pl.DataFrame | None:
    """The catalog with its columns and no rows, for the checks that run before any job."""
    if items is None:
        return None
    if isinstance(items, DataFrame):
        return _empty_like(items.schema)
    if isinstance(items, pl.DataFrame):
        return items.clear()
    raise TypeError(
        f"items must be a pyspark.sql.DataFrame or a polars.DataFrame, got {type(items).__name__}"
    )


def _collect_catalog(items: DataFrame | pl.DataFrame) -> pl.DataFrame:
    """The whole catalog on the driver: one row per item, sent with every task."""
    if isinstance(items, pl.DataFrame):
        return items
    with _unwrapped_errors():
        return _frame(items.toArrow())


def _hash_key(types: Sequence[Any], user: str) -> Column:
    """The user column as hashed in every frame: one type, so equal ids share a bucket.

    xxhash64 hashes an int and a bigint of the same value differently, and the
    pipeline joins integer ids of any width as Int64, so integers are hashed as bigint.
    """
    if any(isinstance(dtype, IntegralType) for dtype in types):
        return _col(user).cast("bigint")
    return _col(user)


def _default_buckets(spark: SparkSession, *frames: DataFrame) -> int:
    try:
        cores = spark.sparkContext.defaultParallelism
    except Exception:  # Spark Connect has no SparkContext: its shuffle width will do
        cores = int(spark.conf.get("spark.sql.shuffle.partitions", "200") or 200)
    floor = max(1, cores * _BUCKETS_PER_CORE)
    size = 0
    for frame in frames:
        estimate = _size_estimate(frame)
        if estimate is None:
            return floor
        size += estimate
    return max(floor, math.ceil(size / _BYTES_PER_BUCKET))


def _size_estimate(frame: DataFrame) -> int | None:
    """Spark's estimate of a frame's size in bytes, without running it (None: unknown)."""
    try:
        stats = frame._jdf.queryExecution().optimizedPlan().stats()
        size = int(str(stats.sizeInBytes()))  # a Python int, or a JavaObject (BigInt)
    except Exception:  # Spark Connect has no JVM handle: use the floor
        return None
    # an unknown source is estimated as Long.MaxValue (spark.sql.defaultSizeInBytes)
    return size if 0 <= size < 2**62 else None


def _global_groups(
    recs: DataFrame, shared_by: Sequence[str], recs_only_by: Sequence[str]
) -> pl.DataFrame | None:
    """Every (shared by..., recs-only by...) group of the whole recommendations.

    A model is judged on every truth user of the folds it has recommendations in,
    also in a bucket where it recommended nothing to anyone.
    """
    if not recs_only_by:
        return None
    columns = [*shared_by, *recs_only_by]
    distinct = recs.select(*(_col(name) for name in columns)).distinct()
    with _unwrapped_errors():
        table = distinct.toArrow()
    return _frame(table)


def _refuse_group_measures(parts: Sequence[AggregationPart], specs: Sequence[MetricSpec]) -> None:
    """A value over a whole ``by`` group combines from buckets only where its measure says how.

    An :class:`OfGroup` measure (coverage, Gini, personalization) adds up
    exposures; another measure of whole groups (aggregation ``"group"``) is
    refused until it declares how.
    """
    names = {spec.label: spec.name for spec in specs}
    grouped = [
        part.label
        for part in parts
        if part.kind not in FINISH
        and not (part.label in names and isinstance(lookup(names[part.label]).lists, OfGroup))
    ]
    if grouped:
        raise ValueError(
            f"metric(s) {grouped} take one value per group over all of its users at once "
            "(aggregation 'group'), which Spark's buckets of users cannot combine; "
            "evaluate them with polars_rankmetrics.evaluate"
        )


def _refuse_condensed_lists(specs: Sequence[MetricSpec], conv: Conventions) -> None:
    """Rows removed against the truth change the lists the list measures describe."""
    if conv.unjudged != "remove" and conv.nonpositive_scores != "drop":
        return
    outside = [
        spec.label for spec in specs if isinstance(lookup(spec.name).lists, (OfGroup, RowMean))
    ]
    against_truth = [spec.label for spec in specs if lookup(spec.name).lists is None]
    if outside and against_truth:
        raise ValueError(
            f"{outside} describe the lists left by unjudged='remove' / "
            "nonpositive_scores='drop', which polars_rankmetrics.spark does not rebuild "
            f"outside the buckets; evaluate them in a call without {against_truth}"
        )


def _lists_plan(
    specs: Sequence[MetricSpec],
    by: Sequence[str],
    history: DataFrame | None,
    *,
    user: str,
    item: str,
) -> _Lists | None:
    """The list measures computed outside the pipeline, with the popularity they read."""
    requests = [
        (ListRequest(spec.label, spec.k, dict(spec.params)), lookup(spec.name).lists)
        for spec in specs
    ]
    means = tuple((r, hook) for r, hook in requests if isinstance(hook, RowMean))
    group = tuple((r, hook) for r, hook in requests if isinstance(hook, OfGroup))
    if not means and not group:
        return None
    ks = [spec.k for spec in specs]
    # the pipeline's lists: cut at the largest cutoff of every metric asked for
    largest = None if None in ks else max(k for k in ks if k is not None)
    shared = tuple(name for name in by if history is not None and name in history.columns)
    shares = popularity.wanted(means)
    popular = None
    if means and history is not None:
        popular = {
            count: _popularity(history, shared, user=user, item=item, count=count, shares=marked)
            for count, marked in shares.items()
        }
    return _Lists(
        popularity=means,
        of_group=group,
        cutoffs=tuple(dict.fromkeys(r.k for r, _ in group)),
        attention=tuple(
            dict.fromkeys((r.k, p) for r, hook in group if (p := hook.weight(r)) is not None)
        ),
        largest=largest,
        shared=shared,
        popular=popular,
        shares=shares,
    )


def _popularity(
    history: DataFrame,
    shared: Sequence[str],
    *,
    user: str,
    item: str,
    count: Count,
    shares: Sequence[float],
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """c_i (with the head flags) per (shared..., item), and N per shared group, over all users.

    Counted in Spark: distinct (shared..., user, item) pairs then users per
    item (``count="users"``), or rows (``"interactions"``); the head (a
    running sum over the items by c_i descending) is found on the driver by
    the single-machine code, from every item's count.
    """
    keys = [*shared, item]
    c, n = popularity.c_column(count), popularity.n_column(count)
    rows = history.select(*(_col(name) for name in [*shared, user, item]))
    pairs = rows.distinct() if popularity.distinct(count) else rows
    per_item = pairs.groupBy(*(_col(name) for name in keys)).agg(F.count(F.lit(1)).alias(c))
    people = history.select(*(_col(name) for name in [*shared, user]))
    people = people.distinct() if popularity.distinct(count) else people
    grouped = people.groupBy(*(_col(name) for name in shared)) if shared else people.groupBy()
    users = grouped.agg(F.count(F.lit(1)).alias(n))
    with _unwrapped_errors():
        counts = _as_int64(_frame(per_item.toArrow()), [*keys, c])
        totals = _as_int64(_frame(users.toArrow()), [*shared, n])
    roles = Keys(tuple(shared), user, item, _POSITION, tuple(shared))
    return popularity.with_head(counts.lazy(), roles, count, shares).collect(), totals


def _as_int64(frame: pl.DataFrame, columns: Sequence[str]) -> pl.DataFrame:
    """Integer key columns as Int64: the pipeline joins integer ids of any width so."""
    return frame.with_columns(
        pl.col(name).cast(pl.Int64) for name in columns if frame.schema[name].is_integer()
    )


def _side(spark: SparkSession, truth: DataFrame | None, history: DataFrame | None) -> DataFrame:
    """The second frame of the cogroup (bucketed): the truth, the interactions or both.

    Both at once are stacked, the interactions' columns renamed (their user and
    item would collide with the truth's) and a flag telling the rows apart.
    """
    if history is None:
        if truth is not None:
            return truth
        return spark.createDataFrame([], StructType([StructField(_BUCKET, LongType())]))
    renamed = history.select(
        _col(_BUCKET),
        *(
            _col(name).alias(f"{_HISTORY}{index}")
            for index, name in enumerate(history.columns)
            if name != _BUCKET
        ),
    ).withColumn(_SIDE, F.lit(1))
    if truth is None:
        return renamed
    return truth.withColumn(_SIDE, F.lit(0)).unionByName(renamed, allowMissingColumns=True)


def _summed(parts: Sequence[AggregationPart]) -> list[AggregationPart]:
    """The parts Spark adds up from the buckets' sums (those of a kind that finishes from sums).

    The measures of whole groups of lists come apart: their kind merges exposures.
    """
    return [part for part in parts if part.kind in FINISH]


def _partial_schema(
    dry: pl.DataFrame,
    by: Sequence[str],
    parts: Sequence[AggregationPart],
    *,
    per_user: bool,
    lists: _Lists | None,
    item_type: Any,
) -> tuple[StructType, StructType]:
    """The kernel's output schema and the final one, from the pipeline's own output.

    Per user the kernel returns the final rows. For means it returns, per ``by``
    group, the sum and the count of non-null values of each part column. With
    group measures, beside those: the exposures and the users with a list.
    """
    old = pl.CompatLevel.oldest()
    final_arrow = dry.to_arrow(compat_level=old).schema
    final = from_arrow_schema(final_arrow)
    if per_user:
        fields = list(final_arrow)
    else:
        fields = list(dry.select(by).to_arrow(compat_level=old).schema)
        for index, column in enumerate(_part_columns(parts)):
            del column  # positional names: labels may hold characters Spark reads specially
            fields += [pa.field(f"__s{index}", pa.float64()), pa.field(f"__n{index}", pa.int64())]
    if lists is not None and lists.of_group:
        item = StructField(_ITEM, LongType() if isinstance(item_type, IntegralType) else item_type)
        fields += [pa.field(_KIND, pa.int32()), to_arrow_schema(StructType([item])).field(0)]
        for index in range(len(lists.cutoffs)):
            fields += [pa.field(f"__{part}{index}", pa.int64()) for part in ("x", "u", "l")]
        fields += [pa.field(f"__a{index}", pa.float64()) for index in range(len(lists.attention))]
    return from_arrow_schema(pa.schema(fields)), final


def _part_columns(parts: Sequence[AggregationPart]) -> list[str]:
    return [column for part in _summed(parts) for column in part.columns]


def _kernel(plan: _Plan) -> Callable[[pa.Table, pa.Table], pa.Table]:
    def bucket(recs: pa.Table, side: pa.Table) -> pa.Table:
        result = _evaluate_bucket(plan, recs.drop_columns([_BUCKET]), side.drop_columns([_BUCKET]))
        names = plan.out_schema.names
        # rows of one kind leave the other kinds' columns empty
        result = result.with_columns(pl.lit(None).alias(n) for n in names if n not in result)
        table = result.select(names).to_arrow(compat_level=pl.CompatLevel.oldest())
        # Spark checks the returned Arrow types against the declared schema exactly
        return table.cast(plan.out_schema)

    return bucket


def _frame(table: pa.Table) -> pl.DataFrame:
    frame = pl.from_arrow(table)
    if not isinstance(frame, pl.DataFrame):  # pragma: no cover - a table gives a frame
        raise TypeError("expected a DataFrame from an Arrow table")
    return frame


def _split(plan: _Plan, side: pl.DataFrame) -> tuple[pl.DataFrame | None, pl.DataFrame | None]:
    """The truth and the interactions of one bucket, from the cogroup's second frame."""
    if plan.history_columns is None:
        return (side if plan.truth_columns is not None else None), None
    stacked = _SIDE in side.columns and plan.truth_columns is not None
    rows = side.filter(pl.col(_SIDE) == 1) if stacked else side
    history = rows.select(
        pl.col(f"{_HISTORY}{index}").alias(name) for index, name in enumerate(plan.history_columns)
    )
    if plan.truth_columns is None:
        return None, history
    truth = side.filter(pl.col(_SIDE) == 0).select(plan.truth_columns)
    return truth, history


def _evaluate_bucket(plan: _Plan, recs_table: pa.Table, side_table: pa.Table) -> pl.DataFrame:
    """One bucket through the single-machine pipeline: per-user rows, or sums per group."""
    adopt_written(plan.written)
    recs = _frame(recs_table)
    truth, history = _split(plan, _frame(side_table))
    if _ORDER in recs.columns:
        recs = recs.sort(_ORDER).drop(_ORDER)
    catalog = _bucket_catalog(plan, recs, history, truth)
    with_groups, placeholder = _with_every_group(plan, recs, truth)
    per_user = _per_user_parts(plan, with_groups, truth, history, catalog)
    if placeholder is not None:
        per_user = per_user.filter(pl.col(plan.user).ne_missing(placeholder))
    extra: list[pl.DataFrame] = []
    if plan.lists is not None:
        lists = _cut_lists(plan, recs, per_user.schema)
        if plan.lists.popularity:
            per_user = _with_popularity(plan, plan.lists, per_user, lists)
        if plan.lists.of_group:
            extra = _exposures(plan, plan.lists, lists)
    if plan.per_user:
        kept = per_user
    else:
        sums: list[pl.Expr] = []
        for index, column in enumerate(_part_columns(plan.parts)):
            value = pl.col(column).cast(pl.Float64)
            sums += [
                value.sum().alias(f"__s{index}"),
                value.count().cast(pl.Int64).alias(f"__n{index}"),
            ]
        if not sums:  # group measures only: the groups of the users are all Spark needs
            kept = per_user.select(plan.by).unique()
        elif plan.by:
            kept = per_user.group_by(list(plan.by)).agg(sums)
        else:
            kept = per_user.select(sums)
    if not extra:
        return kept
    rows = [kept.with_columns(pl.lit(0, pl.Int32).alias(_KIND))] if kept.width else []
    return pl.concat([*rows, *extra], how="diagonal_relaxed")


def _per_user_parts(
    plan: _Plan,
    recs: pl.DataFrame,
    truth: pl.DataFrame | None,
    history: pl.DataFrame | None,
    catalog: pl.DataFrame | None,
) -> pl.DataFrame:
    """Per (by..., user): the final values, or the part columns the aggregation reads."""
    compute = _evaluate_polars if plan.per_user else per_user_parts
    options = {"per_user": True, **plan.options} if plan.per_user else dict(plan.options)
    # the input frames as this bucket holds them; the column names are among the options
    inputs: dict[str, Any] = {
        **{option.name: history for option in _HISTORY_INPUTS},
        **{option.name: catalog for option in _CATALOG_INPUTS},
    }
    with _marked_errors(), counted_popularity(plan.popularity):
        result = compute(recs, truth, list(plan.metrics), **options, **inputs)
    if not plan.renames:
        return result
    # back to the labels asked for: "err(max_grade=3.0)@10" and its parts -> "err@10"
    return result.rename(
        {
            name: plan.renames[name.split("|")[0]] + name[len(name.split("|")[0]) :]
            for name in result.columns
            if name.split("|")[0] in plan.renames
        }
    )


def _truth_wide_metrics(
    specs: Sequence[MetricSpec], truth: DataFrame | None, relevance: str | None
) -> tuple[tuple[str, ...], dict[str, str]]:
    """Each metric as a bucket computes it, and the labels to rename its columns back to.

    A bucket sees only its users' truth, so a parameter the data decides from
    the whole truth (:attr:`Param.from_truth`: the largest grade, ERR's
    ``max_grade``) is computed here once, over all of it, and written into
    the bucket's metric string; the other metrics go as they are.
    """
    labels = tuple(spec.label for spec in specs)
    decided = decided_by_the_whole_truth(specs)
    if truth is None or relevance is None or not decided:
        # binary truth: every bucket's largest grade is 1, as the whole truth's
        return labels, {}
    grade = F.col(relevance).cast("double")
    largest = truth.filter(grade > 0).agg(F.max(grade)).first()
    if largest is None or largest[0] is None:
        return labels, {}
    metrics, renames = [], {}
    for spec in specs:
        if spec.label not in decided:
            metrics.append(spec.label)
            continue
        params = {**dict(spec.params), **dict.fromkeys(decided[spec.label], float(largest[0]))}
        written = ",".join(
            f"{name}={value!r}" for name, value in params.items() if value is not None
        )
        metric = f"{spec.name}({written})" + ("" if spec.k is None else f"@{spec.k}")
        metrics.append(metric)
        renames[metric] = spec.label
    return tuple(metrics), renames


def _key(column: str, dtype: pl.DataType) -> pl.Expr:
    """An id as the pipeline compares ids: integers as Int64, labels as text.

    Not strict: an id that cannot be one (refused before any job) matches nothing.
    """
    return pl.col(column).cast(pl.Int64 if dtype.is_integer() else pl.String, strict=False)


def _bucket_catalog(
    plan: _Plan, recs: pl.DataFrame, history: pl.DataFrame | None, truth: pl.DataFrame | None
) -> pl.DataFrame | None:
    """The catalog rows of this bucket's items (and the first one, for a placeholder row).

    The catalog was checked whole on the driver; the items it lacks are still
    this bucket's to report, as on one machine. With a propensity column (the
    debiased measures), the truth's items too: each relevant one needs its row.
    """
    if plan.catalog is None:
        return None
    catalog = plan.catalog
    if plan.whole_catalog:
        # the target of awrf and ndkl: each group's share of the whole catalog
        return catalog
    dtype = catalog.schema[plan.item]
    if not dtype.is_integer() and recs.schema[plan.item].is_integer():
        return catalog  # ids that can never match: the pipeline says so
    seen = [recs.select(_key(plan.item, dtype).alias(_ITEM))]
    if history is not None:
        seen.append(history.select(_key(plan.item, dtype).alias(_ITEM)))
    if truth is not None and plan.truth_items_in_catalog:
        seen.append(truth.select(_key(plan.item, dtype).alias(_ITEM)))
    seen.append(catalog.head(1).select(_key(plan.item, dtype).alias(_ITEM)))
    wanted = pl.concat(seen, how="vertical_relaxed").unique()
    keyed = catalog.with_columns(_key(plan.item, dtype).alias(_ITEM))
    return keyed.join(wanted, on=_ITEM, how="semi").drop(_ITEM)


def _cut_lists(plan: _Plan, recs: pl.DataFrame, keys: pl.Schema) -> pl.DataFrame:
    """The ranked lists cut at the largest cutoff, as the pipeline cuts them (already checked).

    Keys are cast to the dtypes of the pipeline's per-user rows, items as the
    pipeline compares them.
    """
    lists = plan.lists
    if lists is None:  # pragma: no cover - called only with list measures
        raise ValueError("no list measures")
    rank = _POSITION if plan.score is not None else plan.position
    spec = RecsSpec(
        plan.user,
        plan.item,
        rank,
        plan.score,
        plan.by,
        # ties="average" is refused for the measures of the lists (no expectation)
        "item_desc" if plan.conventions.ties == "average" else plan.conventions.ties,
        plan.conventions.duplicates,
    )
    columns = list(dict.fromkeys([*plan.by, plan.user, plan.item, plan.position]))
    cut = with_positions(recs.lazy().select(columns), spec, lists.largest)
    list_keys = [*plan.by, plan.user]
    item_dtype = recs.schema[plan.item]
    return cut.select(
        *(pl.col(name).cast(keys[name]) for name in list_keys),
        _key(plan.item, item_dtype) if item_dtype.is_integer() else pl.col(plan.item),
        pl.col(rank).alias(_POSITION),
    ).collect()


def _with_popularity(
    plan: _Plan, lists_plan: _Lists, per_user_rows: pl.DataFrame, lists: pl.DataFrame
) -> pl.DataFrame:
    """The :class:`RowMean` measures from the popularity over every bucket, in their columns."""
    if lists_plan.popular is None:  # pragma: no cover - refused before any job
        raise ValueError(f"{[r.label for r, _ in lists_plan.popularity]} need interactions")
    keys = Keys(plan.by, plan.user, plan.item, _POSITION, lists_plan.shared)
    # the counts' keys as the lists hold them (the families agree: checked before any job)
    shared = list(lists_plan.shared)
    popular = {
        count: (
            items.lazy().with_columns(
                pl.col(name).cast(lists.schema[name]) for name in [*shared, plan.item]
            ),
            totals.lazy().with_columns(pl.col(name).cast(lists.schema[name]) for name in shared),
        )
        for count, (items, totals) in lists_plan.popular.items()
    }
    values = per_user(
        lists.lazy(),
        list(lists_plan.popularity),
        keys,
        popular=popular,
    ).collect()
    labels = [request.label for request, _ in lists_plan.popularity]
    joined = per_user_rows.drop(labels).join(
        values, on=[*plan.by, plan.user], how="left", nulls_equal=True
    )
    return joined.select(per_user_rows.columns)


def _exposures(plan: _Plan, lists_plan: _Lists, lists: pl.DataFrame) -> list[pl.DataFrame]:
    """Per (by..., item) its exposure x_i, and per ``by`` group the users with a list.

    Per cutoff k: x_i counts the users whose top-k list holds item i (each
    (user, item) is once in a list), and per ``by`` group U counts the users
    with at least one item within k and L is their longest length (what
    personalization compares without a cutoff). Each user is in one bucket,
    so Spark adds x_i and U and takes the largest L.
    """
    by = list(plan.by)

    def within(k: int | None) -> pl.Expr:
        return pl.len() if k is None else (pl.col(_POSITION) <= k).sum()

    ks = list(lists_plan.cutoffs)
    exposures = lists.group_by([*by, plan.item]).agg(
        *(within(k).cast(pl.Int64).alias(f"__x{index}") for index, k in enumerate(ks)),
        *(
            exposure.attention_within(pl.col(_POSITION), k, p).sum().alias(f"__a{index}")
            for index, (k, p) in enumerate(lists_plan.attention)
        ),
    )
    lengths = lists.group_by([*by, plan.user]).agg(
        within(k).cast(pl.Int64).alias(f"__k{index}") for index, k in enumerate(ks)
    )
    stats = [
        expr
        for index in range(len(ks))
        for expr in (
            (pl.col(f"__k{index}") > 0).sum().cast(pl.Int64).alias(f"__u{index}"),
            pl.col(f"__k{index}").max().cast(pl.Int64).alias(f"__l{index}"),
        )
    ]
    users = lengths.group_by(by).agg(stats) if by else lengths.select(stats)
    return [
        exposures.rename({plan.item: _ITEM}).with_columns(pl.lit(1, pl.Int32).alias(_KIND)),
        users.with_columns(pl.lit(2, pl.Int32).alias(_KIND)),
    ]


def _with_every_group(
    plan: _Plan, recs: pl.DataFrame, truth: pl.DataFrame | None
) -> tuple[pl.DataFrame, Any]:
    """Recs with one placeholder row for each global group missing from this bucket.

    :func:`polars_rankmetrics._pipeline.population.with_every_group`: a model
    that recommended nothing to this bucket's users is still judged on them.
    """
    any_item = None
    if plan.catalog is not None and plan.catalog.height:
        any_item = plan.catalog.item(0, plan.item)
    return with_every_group(
        recs, truth, plan.groups, roles=(plan.user, plan.item, plan.position), any_item=any_item
    )


def _combine(partials: DataFrame, by: Sequence[str], parts: Sequence[AggregationPart]) -> DataFrame:
    """The buckets' partials added up per ``by`` group, then each kind's finish.

    Every kind's partial is the sum and the count of each part column
    (:class:`polars_rankmetrics._pipeline.aggregate.Totals`), which add up
    across buckets; the value is the kind's own formula
    (:data:`~polars_rankmetrics._pipeline.aggregate.FINISH`), the one the
    single-machine plan computes, in Spark's column arithmetic.
    """
    columns = _part_columns(parts)
    if not columns:  # group measures only: their groups, or the one row
        if by:
            return partials.select(*(_col(name) for name in by)).distinct()
        return partials.sparkSession.range(1).select()
    sums = [F.sum(f"__s{index}").alias(f"__s{index}") for index in range(len(columns))]
    counts = [F.sum(f"__n{index}").alias(f"__n{index}") for index in range(len(columns))]
    grouped = partials.groupBy(*(_col(name) for name in by)) if by else partials.groupBy()
    totals = grouped.agg(*sums, *counts)
    index = {column: position for position, column in enumerate(columns)}
    finals = [
        FINISH[part.kind](
            _SparkArithmetic(),
            Totals(
                tuple(F.col(f"__s{index[column]}") for column in part.columns),
                tuple(F.col(f"__n{index[column]}") for column in part.columns),
            ),
        )
        .cast("double")
        .alias(part.label)
        for part in _summed(parts)
    ]
    return totals.select(*(_col(name) for name in by), *finals)


class _SparkArithmetic:
    """The arithmetic a kind's finish needs, in Spark columns."""

    def where_positive(self, guard: Column, value: Column) -> Column:
        return F.when(guard > 0, value)

    def exp(self, value: Column) -> Column:
        return F.exp(value)


def _group_values(partials: DataFrame, plan: _Plan, lists: _Lists) -> pl.DataFrame:
    """Coverage, Gini and personalization per ``by`` group from the buckets' exposures.

    Spark adds each item's exposures x_i over the buckets, then counts, per
    group and cutoff, the items with each value of x: a histogram as long as
    the distinct exposures (at most the number of users), whatever the size of
    the catalog. The driver takes from it what the single-machine formulas
    read (``_measures.lists._exposure.per_group``): items shown, Σ x, Σ r x_(r) over the shown items
    sorted ascending (r = 1..s; equal x give the same sum in any order),
    Σ x (x - 1), and, from the users' rows, U and the longest list.
    """
    by = [_col(name) for name in plan.by]
    x_of = [f"__x{index}" for index in range(len(lists.cutoffs))]
    a_of = [f"__a{index}" for index in range(len(lists.attention))]
    exposures = (
        partials.filter(F.col(_KIND) == 1)
        .groupBy(*by, _col(_ITEM))
        .agg(*(F.sum(name).alias(name) for name in [*x_of, *a_of]))
    )
    stacked = exposures.select(
        *by,
        F.explode(
            F.array(
                *(F.struct(F.lit(i).alias("cut"), F.col(n).alias("x")) for i, n in enumerate(x_of))
            )
        ).alias("e"),
    )
    histogram = stacked.groupBy(*by, F.col("e.cut").alias("cut"), F.col("e.x").alias("x")).agg(
        F.count(F.lit(1)).alias("m")
    )
    rows = partials.filter(F.col(_KIND) == 2)
    users = (rows.groupBy(*by) if by else rows.groupBy()).agg(
        *(
            aggregate(f"__{part}{index}").alias(f"{part}{index}")
            for index in range(len(lists.cutoffs))
            for part, aggregate in (("u", F.sum), ("l", F.max))
        )
    )
    with _unwrapped_errors():
        counts = _frame(histogram.toArrow())
        people = _frame(users.toArrow())
        # the attention x_i are reals: no short histogram, one row per item shown goes to
        # the driver (no more than the catalog it already holds)
        attended = _frame(exposures.select(*by, *a_of).toArrow()) if a_of else None
    size = None if plan.catalog is None else float(plan.catalog.height)
    return exposure.merged_values(
        counts, people, attended, by=plan.by, cutoffs=lists.cutoffs,
        attention=lists.attention, requests=lists.of_group, catalog_n=size,
    )  # fmt: skip


def _with_group_values(
    spark: SparkSession,
    rows: DataFrame,
    *,
    values: pl.DataFrame,
    plan: _Plan,
    lists: _Lists,
    final: StructType,
) -> DataFrame:
    """Per-user rows with each group measure's value of their ``by`` group (as ``evaluate``)."""
    labels = [request.label for request, _ in lists.of_group]
    kept = rows.drop(*labels)
    if not plan.by:
        row = values.row(0, named=True) if values.height else dict.fromkeys(labels)
        for label in labels:
            kept = kept.withColumn(label, F.lit(row[label]).cast("double"))
    else:
        schema = StructType([final[name] for name in [*plan.by, *labels]])
        table = spark.createDataFrame(values.select(schema.names).rows(), schema=schema)
        kept = kept.join(F.broadcast(table), on=list(plan.by), how="left")
    return kept.select(*(_col(name) for name in final.names))


def _joined(means: pl.DataFrame, values: pl.DataFrame, by: Sequence[str]) -> pl.DataFrame:
    """The means beside the group measures' values, one row per ``by`` group."""
    if by:
        keys = values.with_columns(pl.col(name).cast(means.schema[name]) for name in by)
        return means.join(keys, on=list(by), how="left", nulls_equal=True)
    labels = values.columns
    row = values.row(0, named=True) if values.height else dict.fromkeys(labels)
    extra = pl.DataFrame(
        {label: [row[label]] for label in labels}, schema=dict.fromkeys(labels, pl.Float64)
    )
    return pl.concat([means, extra], how="horizontal") if means.width else extra


@contextmanager
def _marked_errors() -> Iterator[None]:
    """In a worker: mark the pipeline's input errors so the driver can find them."""
    try:
        yield
    except (ValueError, TypeError) as error:
        kind = type(error).__name__
        raise type(error)(f"{_ERROR_OPEN}{kind}>>{error}{_ERROR_CLOSE}") from None


@contextmanager
def _unwrapped_errors() -> Iterator[None]:
    """Re-raise a data error from a worker as the package's own ValueError/TypeError."""
    try:
        yield
    except PythonException as error:
        found = _ERROR_PATTERN.search(str(error))
        if found is None:
            missing = _MISSING_MODULE.search(str(error))
            if missing is not None:
                raise ImportError(_workers_lack(missing.group(1))) from None
            raise
        kind = ValueError if found.group(1) == "ValueError" else TypeError
        raise kind(found.group(2) + _ONE_BUCKET_NOTE) from None


def _workers_lack(module: str) -> str:
    """What to do when Spark's Python workers cannot import ``module``."""
    given = os.environ.get("PYSPARK_PYTHON")
    runs = (
        f"they run PYSPARK_PYTHON={given}"
        if given
        else "PYSPARK_PYTHON is not set, so they run 'python3' from the PATH"
    )
    return (
        f"Spark's Python workers cannot import {module!r}: {runs}, not this interpreter "
        f"({sys.executable}), and polars_rankmetrics (with polars and pyarrow) is not "
        "installed there. In local mode, point the workers at this interpreter before the "
        "session starts (os.environ['PYSPARK_PYTHON'] = sys.executable, or export "
        'PYSPARK_PYTHON="$(which python)" in the shell); on a cluster, install the package '
        "in the executors' Python (a packed environment or a cluster library: see the docs' "
        "Spark page, 'Submitting to a cluster')"
    )


@contextmanager
def _quiet_pandas_warning() -> Iterator[None]:
    # pyspark checks the pandas version when an Arrow UDF is declared and warns about
    # pandas 3; these Arrow UDFs never touch pandas
    with warnings.catch_warnings():
        # positional: the warning's class, not an input of the measures
        pandas_note = "PySpark does not yet fully support pandas"
        warnings.filterwarnings("ignore", pandas_note, FutureWarning)
        yield
