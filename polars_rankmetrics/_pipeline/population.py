"""Which users count: users without recs or truth, judged users, strict user sets.

The conventions ``users_without_recs``, ``users_without_truth`` and
``user_sets`` decide which (by..., user) a mean is over; a ``by`` group that
only the recommendations have (a model) shares the truth of the others.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import polars as pl

from polars_rankmetrics import _validation as v
from polars_rankmetrics._measures._registry import N_RELEVANT, part_column
from polars_rankmetrics._names import PREFIX
from polars_rankmetrics._pipeline.inputs import RecsSpec, Request, TruthSpec
from polars_rankmetrics.conventions import Conventions


def expand_over_groups(
    truth: pl.LazyFrame, recs: pl.LazyFrame, recs_only_by: Sequence[str], shared_by: Sequence[str]
) -> pl.LazyFrame:
    """Repeat the truth for every group (e.g. model) that only the recommendations have.

    Every model is judged against the same truth, so a user it skipped is still
    one of its users (scored 0).
    """
    if not recs_only_by:
        return truth
    groups = recs.select(*shared_by, *recs_only_by).unique()
    if shared_by:
        return truth.join(groups, on=list(shared_by), how="inner")
    return truth.join(groups, how="cross")


def with_every_group(
    recs: pl.DataFrame,
    truth: pl.DataFrame | None,
    groups: pl.DataFrame | None,
    *,
    roles: tuple[str, str, str],
    any_item: object = None,
) -> tuple[pl.DataFrame, int | str | None]:
    """Recs with one placeholder row for each group of ``groups`` missing from them.

    The pipeline takes a model's groups from its recommendations
    (:func:`expand_over_groups`); a model that recommended nothing to these
    users (a Spark bucket's, a batch's) must still be judged on them (they
    score 0 or are left out, as ``users_without_recs`` says). A row for a
    placeholder user, who is in neither frame, makes the pipeline judge them;
    the placeholder (returned beside, ``None`` without one) is for the caller
    to remove from the result. ``roles``: the (user, item, position) columns;
    ``any_item``: the placeholder's item (the placeholder has no truth, so any
    item will do; one of the catalog keeps the catalog checks quiet).
    """
    if groups is None or truth is None or truth.height == 0:
        return recs, None
    user, item, position = roles
    keys = list(groups.columns)
    missing = groups.join(recs.select(keys).unique(), on=keys, how="anti", nulls_equal=True)
    if missing.height == 0:
        return recs, None
    placeholder = unused_id(recs.get_column(user), truth.get_column(user))
    item_dtype = recs.schema[item]
    if any_item is None:
        any_item = "" if item_dtype == pl.String else 1
    rows = missing.with_columns(
        pl.lit(placeholder).cast(recs.schema[user]).alias(user),
        pl.lit(any_item).cast(item_dtype).alias(item),
        pl.lit(1).cast(recs.schema[position]).alias(position),
    )
    # the recs' other columns (none a role) are null on the placeholder's rows
    return pl.concat([recs, rows], how="diagonal_relaxed").select(recs.columns), placeholder


def unused_id(recs_users: pl.Series, truth_users: pl.Series) -> int | str:
    """An id of the user column's type that no user of either frame has."""
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
        "by side in parts (Spark buckets, batches) needs integer or string user ids"
    )


def judged_users(
    recs: pl.LazyFrame, truth: pl.LazyFrame, spec: RecsSpec, truth_spec: TruthSpec
) -> pl.LazyFrame:
    """Every (by..., user) with at least one truth row, whatever its grade."""
    recs_only_by = [name for name in spec.by if name not in truth_spec.shared_by]
    users = truth.select(*truth_spec.shared_by, spec.user).unique()
    judged = expand_over_groups(users, recs, recs_only_by, truth_spec.shared_by)
    return judged.select(spec.list_keys)


def user_sets_check(
    recs: pl.LazyFrame, truth: pl.LazyFrame, spec: RecsSpec, truth_spec: TruthSpec
) -> tuple[pl.LazyFrame, list[v.DataCheck]]:
    """``user_sets="strict"``: every list's user has truth rows and every truth user a list."""
    in_recs, in_truth = f"{PREFIX}in_recs", f"{PREFIX}in_truth"
    keys = spec.list_keys
    listed = recs.select(keys).unique().with_columns(pl.lit(value=True).alias(in_recs))
    judged = judged_users(recs, truth, spec, truth_spec).with_columns(
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


def counted_parts(
    partials: pl.LazyFrame,
    recs: pl.LazyFrame,
    judged: pl.LazyFrame,
    *,
    spec: RecsSpec,
    requests: Sequence[Request],
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
