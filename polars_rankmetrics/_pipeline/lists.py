"""The list plan: the measures of the lists themselves (coverage, novelty...), checked, planned.

:func:`plan_lists` checks the interactions and the catalog the requested
measures read and builds their plans from the hooks
(:mod:`polars_rankmetrics._measures.lists`); :func:`list_parts` puts them
beside ``evaluate``'s per-user parts. ``list_metrics`` and ``curves`` read
the same checks.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import polars as pl

from polars_rankmetrics import _validation as v
from polars_rankmetrics._measures import lists as ba
from polars_rankmetrics._measures._registry import Input, Measure, part_column
from polars_rankmetrics._measures.lists import ListRequest
from polars_rankmetrics._pipeline.inputs import ListInputs, RecsSpec, Request, to_lazy
from polars_rankmetrics.options import INPUTS

__all__ = [
    "Asked",
    "ListPlan",
    "catalog_frame",
    "check_inputs_given",
    "float_key_checks",
    "history_frame",
    "in_memory",
    "list_parts",
    "plan_lists",
    "unify_keys",
    "wanting",
]

_MISSING = "__prm_missing"

# one requested measure of the lists: what its plan reads, and its registry record
Asked = tuple[ba.ListRequest, Measure]


def list_parts(
    parts: pl.LazyFrame | None,
    ranked: pl.LazyFrame,
    spec: RecsSpec,
    requests: Sequence[Request],
    described: ListInputs,
) -> tuple[pl.LazyFrame, list[tuple[pl.LazyFrame, list[v.DataCheck]]]]:
    """Add the measures of the lists themselves to the per-user parts.

    Their users are the users with a list in the cut, whatever the truth: the
    rows of ``parts`` (users judged on the truth) and those users are joined
    in full, each metric null on the rows of users it does not count, which
    every aggregation skips. A group measure's value is written on every row
    of its group.
    """
    # each measure's plan column is ctx.name(<its name>), which its finals read
    measures = {
        request.ctx.name(request.measure.name): (
            ListRequest(request.ctx.name(request.measure.name), request.ctx.k, request.ctx.params),
            request.measure,
        )
        for request in requests
    }
    plan = plan_lists(
        ranked,
        list(measures.values()),
        by=spec.by,
        user=spec.user,
        item=spec.item,
        rank=spec.rank,
        described=described,
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


def _key_family(dtype: pl.DataType) -> str:
    if isinstance(dtype, (pl.String, pl.Categorical, pl.Enum)):
        return "string"
    if dtype.is_integer():
        return "integer"
    return str(dtype)


def unify_keys(
    frames: dict[str, tuple[pl.LazyFrame, pl.Schema]], keys: Sequence[str]
) -> dict[str, pl.LazyFrame]:
    """Give each key column one dtype across the frames that have it, or refuse.

    String, Categorical and Enum ids are joined as String, integers of any
    width as Int64; anything else must have the same dtype everywhere. A
    string id against an integer id is refused: nothing would ever match.
    """
    casts: dict[str, list[pl.Expr]] = {name: [] for name in frames}
    for key in keys:
        holders = {name: schema[key] for name, (_, schema) in frames.items() if key in schema}
        dtypes = list(holders.values())
        first_name, first = next(iter(holders.items()))
        for name, dtype in holders.items():
            if _key_family(dtype) != _key_family(first):
                raise TypeError(
                    f"key column {key!r} has dtype {first} in {first_name} but {dtype} in "
                    f"{name}; these can never match, so every {key!r} of {name} would look "
                    "unknown. "
                    f"Cast one side, e.g. {name}.with_columns(pl.col({key!r}).cast(pl.{first}))."
                )
        same = all(dtype == first for dtype in dtypes)
        if same and not isinstance(first, (pl.Categorical, pl.Enum)):
            continue
        family = _key_family(first)
        if family not in ("string", "integer"):
            # same family but not the same dtype: e.g. Float32 against Float64
            target: pl.DataType = pl.Float64()
        else:
            target = pl.String() if family == "string" else pl.Int64()
        for name in holders:
            casts[name].append(pl.col(key).cast(target))
    return {
        name: lf.with_columns(casts[name]) if casts[name] else lf
        for name, (lf, _) in frames.items()
    }


def _check_category_dtype(schema: pl.Schema, category: str, role: str = "category") -> bool:
    """Raise unless the category (or group) column holds labels; return whether it holds lists."""
    dtype = schema[category]
    inner = dtype.inner if isinstance(dtype, pl.List) else dtype
    ok = isinstance(inner, (pl.String, pl.Categorical, pl.Enum)) or inner.is_integer()
    if not ok:
        raise TypeError(
            f"items column {category!r} ({role}) must hold a {role} label (String, "
            "Categorical, Enum or integer) or a List of them, but its dtype is "
            f"{dtype}. Cast it, e.g. pl.col({category!r}).cast(pl.String)."
        )
    return isinstance(dtype, pl.List)


def float_key_checks(
    frame: str, schema: pl.Schema, columns: dict[str, str], show: Sequence[str], *, in_memory: bool
) -> list[v.DataCheck]:
    return [
        v.nan_check(frame, name, role, show, in_memory=in_memory)
        for role, name in columns.items()
        if schema[name].is_float()
    ]


def wanting(asked: Sequence[Asked], *inputs: Input) -> list[str]:
    """The names of the measures asked for that read every one of ``inputs``."""
    return sorted({m.name for _, m in asked if set(inputs) <= m.inputs})


def check_inputs_given(asked: Sequence[Asked], described: ListInputs) -> None:
    """Refuse a measure's input left out, or an option given without the one it needs.

    From the declarations (:data:`polars_rankmetrics.options.INPUTS`): each
    input says which registry input its measures declare (``reads``),
    whether they need it given, and what it needs itself (``needs``).
    """
    given = {option.name: getattr(described, option.name) for option in INPUTS}
    problems = [
        f"{', '.join(asking)} need {option.name}=: {option.what}"
        for option in INPUTS
        if option.reads is not None
        and option.required
        and given.get(option.name) is None
        and (asking := wanting(asked, cast("Input", option.reads)))
    ]
    if problems:
        raise ValueError("missing input: " + "; ".join(problems))
    for option in INPUTS:
        for needed in option.needs:
            if given.get(option.name) is not None and given.get(needed) is None:
                raise ValueError(
                    f"{option.name}= names {option.what}, which needs {needed}=, "
                    f"but no {needed}= was given"
                )


@dataclass(frozen=True)
class ListPlan:
    """The plans of some beyond-accuracy measures over one ranked cut.

    ``users``: one row per list (by..., user) with a Float64 column per
    per-user measure (``None`` when none was asked for); ``groups``: one row
    per ``by`` group (one row without ``by``) with a column per group
    measure; ``checks``: the data checks of the interactions and the catalog.
    """

    users: pl.LazyFrame | None
    groups: pl.LazyFrame | None
    checks: list[tuple[pl.LazyFrame, list[v.DataCheck]]]


def plan_lists(
    lists: pl.LazyFrame,
    measures: Sequence[Asked],
    *,
    by: Sequence[str],
    user: str,
    item: str,
    rank: str,
    described: ListInputs,
) -> ListPlan:
    """Check the interactions and the catalog and build the measures' plans.

    ``lists`` is the ranked cut (``by..., user, item, rank``) to the largest
    cutoff of ``measures``, already checked (nulls, repeats); ``described``:
    the inputs beside the lists. Both :func:`list_metrics` and
    :func:`polars_rankmetrics.evaluate` call this.
    """
    check_inputs_given(measures, described)
    interactions, items, category = described.interactions, described.items, described.category
    group, group_weight = described.group, described.group_weight
    spec = RecsSpec(user, item, rank, None, tuple(by))
    frames: dict[str, tuple[pl.LazyFrame, pl.Schema]] = {"recs": (lists, lists.collect_schema())}
    shared: tuple[str, ...] = ()
    if wanting(measures, "interactions") and interactions is not None:
        frames["interactions"] = history_frame(interactions, spec)
        shared = tuple(name for name in spec.by if name in frames["interactions"][1])
    if wanting(measures, "catalog") and items is not None:
        frames["items"] = catalog_frame(items, item, category, group, group_weight)
    unified = unify_keys(frames, [*shared, user, item])
    lists = unified["recs"]
    checks: list[tuple[pl.LazyFrame, list[v.DataCheck]]] = []
    history = unified.get("interactions")
    if history is not None:
        checks += _history_checks(
            history, frames["interactions"][1], spec, shared, in_memory=in_memory(interactions)
        )
    catalog = unified.get("items")
    if catalog is not None:
        catalog, catalog_checks = _catalog(
            catalog,
            frames["items"][1],
            item,
            category,
            group,
            group_weight=group_weight,
            in_memory=in_memory(items),
        )
        checks += catalog_checks
        checks.append(_missing_check(lists.select(item).unique(), catalog, item, "recs"))
        # a measure of the history's categories: the interactions' items must be known too
        if wanting(measures, "interactions", "catalog") and history is not None:
            checks.append(
                _missing_check(history.select(item).unique(), catalog, item, "interactions")
            )
    keys = ba.Keys(tuple(by), user, item, rank, shared)
    hooks = [(request, measure.lists) for request, measure in measures if measure.lists]
    user_measures = ba.user_requests(hooks)
    group_measures = ba.group_requests(hooks)
    users = (
        ba.per_user(
            lists,
            user_measures,
            keys,
            interactions=history,
            items=catalog,
            category=category,
            group=group,
            group_weight=group_weight,
        )
        if user_measures
        else None
    )
    groups = ba.per_group(lists, group_measures, keys, items=catalog) if group_measures else None
    return ListPlan(users, groups, checks)


def history_frame(interactions: object, spec: RecsSpec) -> tuple[pl.LazyFrame, pl.Schema]:
    """The interactions' key columns (shared ``by``, user, item), lazy, and their schema."""
    history = to_lazy(interactions, name="interactions")
    schema = history.collect_schema()
    v.require_columns(schema, {"user": spec.user, "item": spec.item}, frame="interactions")
    shared = [name for name in spec.by if name in schema]
    history = history.select(*shared, spec.user, spec.item)
    return history, history.collect_schema()


def _labels(category: str | None, group: str | None) -> dict[str, str]:
    """The catalog's label columns by role (``category``, ``group``), those given."""
    return {role: name for role, name in (("category", category), ("group", group)) if name}


def catalog_frame(
    items: object,
    item: str,
    category: str | None,
    group: str | None = None,
    group_weight: str | None = None,
) -> tuple[pl.LazyFrame, pl.Schema]:
    """The catalog's item (and category, group, group weight) columns, lazy, and their schema."""
    catalog = to_lazy(items, name="items")
    schema = catalog.collect_schema()
    labels = _labels(category, group)
    weights = {} if group_weight is None else {"group_weight": group_weight}
    v.require_columns(schema, {"item": item, **labels, **weights}, frame="items")
    for role, name in labels.items():
        if name == item:
            raise ValueError(f"{role} must be a column other than the item column")
        _check_category_dtype(schema, name, role)
    if group is not None and group_weight is not None:
        _check_weight_dtype(schema, group, group_weight)
    catalog = catalog.select(item, *dict.fromkeys([*labels.values(), *weights.values()]))
    return catalog, catalog.collect_schema()


def _check_weight_dtype(schema: pl.Schema, group: str, weight: str) -> None:
    """Raise unless the weights are numbers, a List of them beside a List of groups."""
    dtype, groups = schema[weight], schema[group]
    inner = dtype.inner if isinstance(dtype, pl.List) else dtype
    if isinstance(dtype, pl.List) != isinstance(groups, pl.List) or not inner.is_numeric():
        shape = "a List of numbers" if isinstance(groups, pl.List) else "a number"
        raise TypeError(
            f"items column {weight!r} (group_weight) must hold {shape}, one weight per group "
            f"of {group!r} ({groups}), but its dtype is {dtype}"
        )


def _history_checks(
    history: pl.LazyFrame,
    schema: pl.Schema,
    spec: RecsSpec,
    shared: Sequence[str],
    *,
    in_memory: bool,
) -> list[tuple[pl.LazyFrame, list[v.DataCheck]]]:
    columns = {"user": spec.user, "item": spec.item}
    columns.update({f"by[{i}]": name for i, name in enumerate(shared)})
    show = [*shared, spec.user, spec.item]
    keys = {"user": spec.user, "item": spec.item}
    return [
        (
            history,
            [
                *v.null_checks("interactions", columns, in_memory=in_memory),
                *float_key_checks("interactions", schema, keys, show, in_memory=in_memory),
            ],
        )
    ]


def in_memory(frame: object) -> bool:
    return isinstance(frame, pl.DataFrame)


def _catalog(
    catalog: pl.LazyFrame,
    schema: pl.Schema,
    item: str,
    category: str | None,
    group: str | None = None,
    *,
    group_weight: str | None = None,
    in_memory: bool,
) -> tuple[pl.LazyFrame, list[tuple[pl.LazyFrame, list[v.DataCheck]]]]:
    """The catalog with categories and groups as String (or List of String), and its checks."""
    labels = _labels(category, group)
    weights = [] if group_weight is None else [group_weight]
    show = [item, *dict.fromkeys([*labels.values(), *weights])]
    checks = [
        *v.null_checks("items", {"item": item}, in_memory=in_memory),
        *float_key_checks("items", schema, {"item": item}, show, in_memory=in_memory),
    ]
    for role, name in labels.items():
        dtype = schema[name]
        multi = isinstance(dtype, pl.List)
        inner = dtype.inner if isinstance(dtype, pl.List) else dtype
        if isinstance(inner, (pl.Categorical, pl.Enum)):
            # labels compare as text: two Enums with other orders still agree
            target = pl.List(pl.String) if multi else pl.String
            catalog = catalog.with_columns(pl.col(name).cast(target))
        column = pl.col(name)
        empty = (
            column.is_null()
            | (column.list.len() == 0)
            | column.list.eval(pl.element().is_null().any()).list.first()
            if multi
            else column.is_null()
        )
        checks.append(
            v.DataCheck(
                bad=empty,
                message=f"items column {name!r} ({role}) has {{n}} item(s) without "
                f"a {role} (null, an empty list or a null in the list); give them one, "
                "e.g. 'unknown'",
                show=tuple(show),
            )
        )
    if group is not None and group_weight is not None:
        checks.append(_weight_check(schema, group, group_weight, show))
    duplicates = v.duplicate_check(
        "items",
        [item],
        show,
        hint=": one row per item; put several categories in a list column, e.g. "
        f"items.group_by({item!r}).agg(pl.col(<category>))",
        in_memory=in_memory,
    )
    return catalog, [(catalog, checks), (catalog, [duplicates])]


def _weight_check(schema: pl.Schema, group: str, weight: str, show: Sequence[str]) -> v.DataCheck:
    """Weights: no null, none negative, one per group, a positive sum per item."""
    column = pl.col(weight).cast(
        pl.List(pl.Float64) if isinstance(schema[weight], pl.List) else pl.Float64
    )
    if isinstance(schema[weight], pl.List):
        element = pl.element()
        bad = (
            column.is_null()
            | (column.list.len() != pl.col(group).list.len())
            | column.list.eval(
                element.is_null() | (element < 0) | element.is_nan() | element.is_infinite()
            ).list.any()
            | (column.list.sum() <= 0)
        )
    else:
        bad = column.is_null() | (column <= 0) | column.is_nan() | column.is_infinite()
    return v.DataCheck(
        bad=bad,
        message=f"items column {weight!r} (group_weight) has {{n}} item(s) whose weights are "
        f"null, negative, NaN or infinite, not one per group of {group!r}, or sum to 0",
        show=tuple(show),
    )


def _missing_check(
    shown: pl.LazyFrame, catalog: pl.LazyFrame, item: str, frame: str
) -> tuple[pl.LazyFrame, list[v.DataCheck]]:
    """Items of ``shown`` (distinct item ids) that the catalog lacks."""
    missing = shown.join(catalog.select(item), on=item, how="anti").with_columns(
        pl.lit(value=True).alias(_MISSING)
    )
    what = "the recommended" if frame == "recs" else "the interactions'"
    return (
        missing,
        [
            v.DataCheck(
                bad=pl.col(_MISSING),
                message=f"{{n}} distinct item(s) of {what} items are missing from the item "
                "catalog (items=); add them to it",
                show=(item,),
            )
        ],
    )
