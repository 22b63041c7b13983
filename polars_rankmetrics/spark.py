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

Install with ``pip install "polars_rankmetrics[spark]"``; the executors need
the package (and Polars) installed too.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, cast

import polars as pl

try:
    import pyarrow as pa
    from pyspark.errors import PythonException
    from pyspark.sql import Column, DataFrame, SparkSession
    from pyspark.sql import functions as F  # noqa: N812  (Spark's own idiom)
    from pyspark.sql.pandas.types import from_arrow_schema, to_arrow_schema
    from pyspark.sql.types import IntegralType, StructType
except ImportError as error:  # pragma: no cover - exercised in a subprocess without pyspark
    raise ImportError(
        "polars_rankmetrics.spark needs pyspark>=4.0 and pyarrow: "
        "pip install 'polars_rankmetrics[spark]'"
    ) from error

from polars_rankmetrics import ranking as r
from polars_rankmetrics.conventions import (
    Conventions,
    Denominator,
    Duplicates,
    Gain,
    Preset,
    Ties,
    UsersWithoutRecs,
    UsersWithoutTruth,
    resolve,
)
from polars_rankmetrics.evaluate import AggregationPart, aggregation_parts, per_user_parts
from polars_rankmetrics.evaluate import evaluate as _evaluate_polars

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
_ONE_BUCKET_NOTE = (
    "\n(counted in one bucket of the data: Spark stops at the first bucket with bad rows, "
    "so the whole data may hold more)"
)


@dataclass(frozen=True)
class _Plan:
    """Everything a bucket needs; pickled to the workers with the kernel."""

    metrics: tuple[str, ...]
    options: dict[str, Any]
    by: tuple[str, ...]
    user: str
    item: str
    position: str
    shared_by: tuple[str, ...]
    recs_only_by: tuple[str, ...]
    groups: pl.DataFrame | None
    parts: tuple[AggregationPart, ...]
    per_user: bool
    out_schema: pa.Schema


def evaluate(
    recs: DataFrame,
    truth: DataFrame,
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
    gain: Gain | None = None,
    ties: Ties | None = None,
    relevance_level: float | None = None,
    users_without_recs: UsersWithoutRecs | None = None,
    users_without_truth: UsersWithoutTruth | None = None,
    duplicates: Duplicates | None = None,
    conventions: Preset | Conventions = "default",
    n_buckets: int | None = None,
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
    :func:`polars_rankmetrics.evaluate.per_user_parts`), so a measure added to
    the registry works here unchanged.

    Parameters
    ----------
    recs, truth
        ``pyspark.sql.DataFrame`` in the long format of
        :func:`polars_rankmetrics.evaluate`.
    metrics, user, item, rank, score, relevance, by, per_user
        As in :func:`polars_rankmetrics.evaluate`.
    denominator, gain, ties, relevance_level, users_without_recs, users_without_truth
        As in :func:`polars_rankmetrics.evaluate`; ``ties="input"`` is the
        order of the rows as Spark reads them (``monotonically_increasing_id``).
    duplicates, conventions
        As in :func:`polars_rankmetrics.evaluate`.
    n_buckets
        How many buckets of users the work is cut into (each is evaluated by
        one Polars call holding its rows in memory). Default: one per 64 MiB of
        input by Spark's size estimate, and at least three per core of the
        cluster (``defaultParallelism``).

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
        that the count is of the first bucket where they were found.

    Notes
    -----
    The evaluation runs when this function is called (the data checks need it
    to): the means are collected to the driver (a few rows), the per-user
    rows are kept on the executors with ``localCheckpoint``.

    Every user's rows are in one bucket, so each per-user value is the
    single-machine value. ``by`` columns only in ``recs`` (models) are judged on
    the whole truth: their global set is collected first and handed to every
    bucket, so a model charged 0 for a user in one bucket where it recommended
    nothing still counts that user. A measure that takes one value per group
    over all of its users at once (aggregation ``"group"``) cannot be put
    together from buckets and is refused.

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
    """
    if not isinstance(recs, DataFrame) or not isinstance(truth, DataFrame):
        wrong = recs if not isinstance(recs, DataFrame) else truth
        name = "recs" if wrong is recs else "truth"
        raise TypeError(
            f"{name} must be a pyspark.sql.DataFrame, got {type(wrong).__name__} "
            "(Polars or pandas frames: use polars_rankmetrics.evaluate)"
        )
    metric_list = [metrics] if isinstance(metrics, str) else list(metrics)
    options: dict[str, Any] = {
        "user": user,
        "item": item,
        "rank": rank,
        "score": score,
        "relevance": relevance,
        "by": by,
        "denominator": denominator,
        "gain": gain,
        "ties": ties,
        "relevance_level": relevance_level,
        "users_without_recs": users_without_recs,
        "users_without_truth": users_without_truth,
        "duplicates": duplicates,
        "conventions": conventions,
    }
    # schema-level checks and the output schema: the Polars pipeline on empty frames
    # of the same schemas raises exactly what it raises on one machine
    empty_recs = _empty_like(recs.schema)
    empty_truth = _empty_like(truth.schema)
    dry = _evaluate_polars(empty_recs, empty_truth, metric_list, per_user=per_user, **options)
    if n_buckets is not None and (
        isinstance(n_buckets, bool) or not isinstance(n_buckets, int) or n_buckets < 1
    ):
        raise ValueError(f"n_buckets must be a positive integer or None, got {n_buckets!r}")

    by_list = r.as_list(by)
    shared_by = tuple(name for name in by_list if name in truth.columns)
    recs_only_by = tuple(name for name in by_list if name not in shared_by)
    position = score if score is not None else rank
    recs_columns = list(dict.fromkeys([*by_list, user, item, position]))
    grades = [relevance] if relevance is not None else []
    truth_columns = list(dict.fromkeys([*shared_by, user, item, *grades]))
    recs_in = recs.select(*(_col(name) for name in recs_columns))
    conv = resolve(
        conventions,
        denominator=denominator,
        gain=gain,
        ties=ties,
        relevance_level=relevance_level,
        users_without_recs=users_without_recs,
        users_without_truth=users_without_truth,
        duplicates=duplicates,
    )
    if conv.ties == "input":
        # equal scores keep their input order: number the rows before the shuffle
        recs_in = recs_in.withColumn(_ORDER, F.monotonically_increasing_id())
    truth_in = truth.select(*(_col(name) for name in truth_columns))

    spark = recs.sparkSession
    buckets = n_buckets or _default_buckets(spark, recs_in, truth_in)
    parts = tuple(aggregation_parts(metric_list))
    _refuse_group_measures(parts)
    partial_schema, final = _partial_schema(dry, by_list, parts, per_user=per_user)
    large = spark.conf.get("spark.sql.execution.arrow.useLargeVarTypes", "false") == "true"
    plan = _Plan(
        metrics=tuple(metric_list),
        options=options,
        by=tuple(by_list),
        user=user,
        item=item,
        position=position,
        shared_by=shared_by,
        recs_only_by=recs_only_by,
        groups=_global_groups(recs_in, shared_by, recs_only_by),
        parts=parts,
        per_user=per_user,
        out_schema=to_arrow_schema(partial_schema, timezone="UTC", prefers_large_types=large),
    )
    hashed = _hash_key(recs.schema[user].dataType, truth.schema[user].dataType, user)
    recs_b = recs_in.withColumn(_BUCKET, F.pmod(F.xxhash64(hashed), F.lit(buckets)))
    truth_b = truth_in.withColumn(_BUCKET, F.pmod(F.xxhash64(hashed), F.lit(buckets)))
    with _quiet_pandas_warning():
        partials = (
            recs_b.groupBy(_BUCKET)
            .cogroup(truth_b.groupBy(_BUCKET))
            .applyInArrow(_kernel(plan), schema=partial_schema)
        )
    if per_user:
        with _unwrapped_errors():
            return partials.localCheckpoint(eager=True)
    result = _combine(partials, by_list, parts)
    with _unwrapped_errors():
        rows = result.collect()
    return spark.createDataFrame(rows, schema=final)


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
    frame = pl.from_arrow(pa.schema(fields).empty_table())
    if not isinstance(frame, pl.DataFrame):  # pragma: no cover - a table gives a frame
        raise TypeError("expected a DataFrame from an Arrow table")
    return frame


def _hash_key(recs_type: Any, truth_type: Any, user: str) -> Column:
    """The user column as hashed in both frames: one type, so equal ids share a bucket.

    xxhash64 hashes an int and a bigint of the same value differently, and the
    pipeline joins integer ids of any width as Int64, so integers are hashed as bigint.
    """
    if isinstance(recs_type, IntegralType) or isinstance(truth_type, IntegralType):
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
    frame = pl.from_arrow(table)
    if not isinstance(frame, pl.DataFrame):  # pragma: no cover - a table gives a frame
        raise TypeError("expected a DataFrame from an Arrow table")
    return frame


def _refuse_group_measures(parts: Sequence[AggregationPart]) -> None:
    """A value computed over a whole ``by`` group cannot be put together from buckets."""
    grouped = [part.label for part in parts if part.kind == "group"]
    if grouped:
        raise ValueError(
            f"metric(s) {grouped} take one value per group over all of its users at once "
            "(aggregation 'group'), which Spark's buckets of users cannot combine; "
            "evaluate them with polars_rankmetrics.evaluate"
        )


def _partial_schema(
    dry: pl.DataFrame, by: Sequence[str], parts: Sequence[AggregationPart], *, per_user: bool
) -> tuple[StructType, StructType]:
    """The kernel's output schema and the final one, from the pipeline's own output.

    Per user the kernel returns the final rows. For means it returns, per ``by``
    group, the sum and the count of non-null values of each part column.
    """
    final = from_arrow_schema(dry.to_arrow(compat_level=pl.CompatLevel.oldest()).schema)
    if per_user:
        return final, final
    keys = dry.select(by).to_arrow(compat_level=pl.CompatLevel.oldest()).schema
    fields = list(keys)
    for index, column in enumerate(_part_columns(parts)):
        del column  # positional names: labels may hold characters Spark reads specially
        fields += [pa.field(f"__s{index}", pa.float64()), pa.field(f"__n{index}", pa.int64())]
    return from_arrow_schema(pa.schema(fields)), final


def _part_columns(parts: Sequence[AggregationPart]) -> list[str]:
    return [column for part in parts for column in part.columns]


def _kernel(plan: _Plan) -> Callable[[pa.Table, pa.Table], pa.Table]:
    def bucket(recs: pa.Table, truth: pa.Table) -> pa.Table:
        result = _evaluate_bucket(plan, recs.drop_columns([_BUCKET]), truth.drop_columns([_BUCKET]))
        table = result.to_arrow(compat_level=pl.CompatLevel.oldest())
        # Spark checks the returned Arrow types against the declared schema exactly
        return table.select(plan.out_schema.names).cast(plan.out_schema)

    return bucket


def _frame(table: pa.Table) -> pl.DataFrame:
    frame = pl.from_arrow(table)
    if not isinstance(frame, pl.DataFrame):  # pragma: no cover - a table gives a frame
        raise TypeError("expected a DataFrame from an Arrow table")
    return frame


def _evaluate_bucket(plan: _Plan, recs_table: pa.Table, truth_table: pa.Table) -> pl.DataFrame:
    """One bucket through the single-machine pipeline: per-user rows, or sums per group."""
    recs = _frame(recs_table)
    truth = _frame(truth_table)
    if _ORDER in recs.columns:
        recs = recs.sort(_ORDER).drop(_ORDER)
    recs, placeholder = _with_every_group(plan, recs, truth)
    per_user = _per_user_parts(plan, recs, truth)
    if placeholder is not None:
        per_user = per_user.filter(pl.col(plan.user).ne_missing(placeholder))
    if plan.per_user:
        return per_user
    sums: list[pl.Expr] = []
    for index, column in enumerate(_part_columns(plan.parts)):
        value = pl.col(column).cast(pl.Float64)
        sums += [
            value.sum().alias(f"__s{index}"),
            value.count().cast(pl.Int64).alias(f"__n{index}"),
        ]
    if plan.by:
        return per_user.group_by(list(plan.by)).agg(sums)
    return per_user.select(sums)


def _per_user_parts(plan: _Plan, recs: pl.DataFrame, truth: pl.DataFrame) -> pl.DataFrame:
    """Per (by..., user): the final values, or the part columns the aggregation reads."""
    compute = _evaluate_polars if plan.per_user else per_user_parts
    options = {"per_user": True, **plan.options} if plan.per_user else plan.options
    with _marked_errors():
        return compute(recs, truth, list(plan.metrics), **options)


def _with_every_group(
    plan: _Plan, recs: pl.DataFrame, truth: pl.DataFrame
) -> tuple[pl.DataFrame, Any]:
    """Recs with one placeholder row for each global group missing from this bucket.

    The pipeline takes a model's groups from its recommendations; a model that
    recommended nothing to this bucket's users must still be judged on them (they
    score 0). A row for a placeholder user, who is in neither frame, makes the
    pipeline judge them; the placeholder's own row is removed from the result.
    """
    if plan.groups is None or truth.height == 0:
        return recs, None
    keys = list(plan.groups.columns)
    missing = plan.groups.join(recs.select(keys).unique(), on=keys, how="anti", nulls_equal=True)
    if missing.height == 0:
        return recs, None
    placeholder = _unused_id(recs.get_column(plan.user), truth.get_column(plan.user))
    item_dtype = recs.schema[plan.item]
    # any item will do: the placeholder user has no truth
    any_item: Any = "" if item_dtype == pl.String else 1
    rows = missing.with_columns(
        pl.lit(placeholder).cast(recs.schema[plan.user]).alias(plan.user),
        pl.lit(any_item).cast(item_dtype).alias(plan.item),
        pl.lit(1).cast(recs.schema[plan.position]).alias(plan.position),
    )
    return pl.concat([recs, rows.select(recs.columns)], how="vertical_relaxed"), placeholder


def _unused_id(recs_users: pl.Series, truth_users: pl.Series) -> int | str:
    """An id of the user column's type that no user of this bucket has."""
    dtype = recs_users.dtype
    columns = (recs_users, truth_users)
    if dtype.is_integer() and truth_users.dtype.is_integer():
        bounds = [
            int(cast("int", value))
            for users in columns
            for value in (users.min(), users.max())
            if value is not None
        ]
        if not bounds:
            return 0
        integer = cast("Any", dtype)  # an integer dtype knows its range
        top, bottom = pl.select(integer.max().alias("top"), integer.min().alias("bottom")).row(0)
        if max(bounds) < top:
            return max(bounds) + 1
        if min(bounds) > bottom:
            return min(bounds) - 1
    elif dtype == pl.String and truth_users.dtype == pl.String:
        tops = [str(users.max()) for users in columns if users.drop_nulls().len()]
        # a string with the largest one as its prefix sorts after it: nobody has it
        return f"{max(tops)}\x00" if tops else ""
    raise TypeError(
        f"recs column {recs_users.name!r} (user) has dtype {dtype}: evaluating models side "
        "by side on Spark needs integer or string user ids"
    )


def _combine(partials: DataFrame, by: Sequence[str], parts: Sequence[AggregationPart]) -> DataFrame:
    """The buckets' sums added up per ``by`` group, then each metric's final step."""
    columns = _part_columns(parts)
    sums = [F.sum(f"__s{index}").alias(f"__s{index}") for index in range(len(columns))]
    counts = [F.sum(f"__n{index}").alias(f"__n{index}") for index in range(len(columns))]
    grouped = partials.groupBy(*(_col(name) for name in by)) if by else partials.groupBy()
    totals = grouped.agg(*sums, *counts)
    finals: list[Column] = []
    index = {column: position for position, column in enumerate(columns)}
    for part in parts:
        first = index[part.columns[0]]
        total, count = F.col(f"__s{first}"), F.col(f"__n{first}")
        if part.kind == "mean":
            value = F.when(count > 0, total / count)
        elif part.kind == "pooled":
            den = F.col(f"__s{index[part.columns[1]]}")
            # no evaluated user: null like every other mean, not 0/0
            value = F.when(den > 0, total / den)
        elif part.kind == "geometric_mean":
            value = F.when(count > 0, F.exp(total / count))
        elif part.kind == "sum":
            value = total
        else:  # pragma: no cover - refused before the job (_refuse_group_measures)
            raise ValueError(f"unknown aggregation kind {part.kind!r} for {part.label!r}")
        finals.append(value.cast("double").alias(part.label))
    result = totals.select(*(_col(name) for name in by), *finals)
    return result.orderBy(*(_col(name).asc_nulls_first() for name in by)) if by else result


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
            raise
        kind = ValueError if found.group(1) == "ValueError" else TypeError
        raise kind(found.group(2) + _ONE_BUCKET_NOTE) from None


@contextmanager
def _quiet_pandas_warning() -> Iterator[None]:
    # pyspark checks the pandas version when an Arrow UDF is declared and warns about
    # pandas 3; these Arrow UDFs never touch pandas
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message="PySpark does not yet fully support pandas", category=FutureWarning
        )
        yield
