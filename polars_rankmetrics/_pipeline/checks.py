"""What is refused: the schemas of recs and truth, and the data checks on their rows.

Schema checks raise when the plan is built; data checks
(:class:`polars_rankmetrics._validation.DataCheck`) run with the query
(:func:`polars_rankmetrics._validation.guard`), on the rows each check needs:
every row, the top-k cut, the ranked lists or the hit rows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import polars as pl

from polars_rankmetrics import _formulas as formula
from polars_rankmetrics import _measures as registry
from polars_rankmetrics import _validation as v
from polars_rankmetrics._names import PREFIX
from polars_rankmetrics._pipeline.inputs import (
    DUPLICATES,
    TIES,
    RecsSpec,
    Request,
    Roles,
    TruthSpec,
    to_lazy,
)
from polars_rankmetrics._pipeline.parse import MetricSpec
from polars_rankmetrics._pipeline.rank_cut import largest_cutoff
from polars_rankmetrics._pipeline.truth import MAX_TABLE
from polars_rankmetrics.conventions import Conventions


def check_recs_schema(schema: pl.Schema, spec: RecsSpec) -> None:
    """Schema-level checks of a recommendations frame (cheap; raise at call time)."""
    v.check_literal(spec.ties, TIES, name="ties")
    v.check_literal(spec.duplicates, DUPLICATES, name="duplicates")
    roles = {"user": spec.user, "item": spec.item}
    roles.update({f"by[{i}]": name for i, name in enumerate(spec.by)})
    advice = {}
    if spec.score is not None:
        roles["score"] = spec.score
    else:
        roles["rank"] = spec.rank
        # the commonest first call: scores and no ranks, with no score= to say so
        scores = v.score_columns(schema, taken=[spec.user, spec.item, *spec.by])
        if scores:
            advice["rank"] = (
                f"{v.shorten(scores[0])} looks like a score: pass score={v.shorten(scores[0])} "
                "to rank each user's items by it (highest first), or rank=... to name a column "
                "of positions"
            )
    v.require_columns(schema, roles, frame="recs", advice=advice)
    if spec.score is not None:
        v.require_numeric(schema, spec.score, frame="recs", role="score")
    else:
        v.require_integer(schema, spec.rank, frame="recs", role="rank")


def recs_checks(spec: RecsSpec, schema: pl.Schema, *, in_memory: bool = False) -> list[v.DataCheck]:
    """Data checks on the whole recommendations frame (nulls, NaN, rank < 1).

    ``in_memory``: the frame is in memory, so each check gets a screen (see
    :class:`polars_rankmetrics._validation.DataCheck`).
    """
    position = spec.score if spec.score is not None else spec.rank
    columns = {"user": spec.user, "item": spec.item}
    columns.update({f"by[{i}]": name for i, name in enumerate(spec.by)})
    columns["score" if spec.score is not None else "rank"] = position
    show = tuple(dict.fromkeys([*spec.by, spec.user, spec.item, position]))
    checks = v.null_checks("recs", columns, in_memory=in_memory)
    if spec.score is not None:
        if schema[spec.score].is_float():
            checks.append(v.nan_check("recs", spec.score, "score", show, in_memory=in_memory))
    else:
        checks.append(_rank_below_one_check(spec.rank, show, in_memory=in_memory))
    return checks


def _rank_below_one_check(rank: str, show: Sequence[str], *, in_memory: bool) -> v.DataCheck:
    return v.DataCheck(
        bad=pl.col(rank) < 1,
        message=f"recs column {v.shorten(rank)} (rank) has {{n}} value(s) below 1 "
        "(positions start at 1)",
        show=tuple(show),
        screen=pl.col(rank).min() < 1 if in_memory else None,
        row_wise=True,
    )


def cut_checks(
    recs: pl.LazyFrame,
    cut: pl.LazyFrame,
    spec: RecsSpec,
    *,
    in_memory: bool = False,
    given: pl.LazyFrame | None = None,
) -> list[tuple[pl.LazyFrame, list[v.DataCheck]]]:
    """:func:`recs_checks` for given ranks and a finite cutoff, on the rows that are read.

    With ranks given, a row ranked below the largest cutoff changes no number,
    whatever its user or item: those are checked for nulls in the top-k cut
    (the rows the main plan reads, so a lazy scan does not decode the id
    columns a second time for the checks), ranks below 1 too (they are in the
    cut). A null rank could be anywhere, and a ``by`` value of any row adds
    its group: those columns alone are read over every row, the example row
    named by the row's index in ``recs``. ``given``: the recommendations as
    the caller gave them, when ``recs`` cast float ids to integers (a
    fractional id is null after the cast, and refused as what it is by
    :func:`polars_rankmetrics._validation.float_key_check`): those id columns
    are checked for nulls there, so that no null is reported that the input
    does not hold.
    """
    show = tuple(dict.fromkeys([*spec.by, spec.user, spec.item, spec.rank]))
    ids = {"user": spec.user, "item": spec.item}
    cast = {} if given is None else _cast_floats(given, recs, ids)
    uncast = {role: name for role, name in ids.items() if role not in cast}
    in_cut = v.null_checks("recs", uncast, in_memory=in_memory, show=show)
    in_cut.append(_rank_below_one_check(spec.rank, show, in_memory=in_memory))
    everywhere = {f"by[{i}]": name for i, name in enumerate(spec.by)}
    everywhere["rank"] = spec.rank
    row = next(name for name in ("row", "row_index", f"{PREFIX}row") if name not in show)
    rows = recs.select(*dict.fromkeys(everywhere.values())).with_row_index(row)
    on_every_row = v.null_checks(
        "recs", everywhere, in_memory=in_memory, show=(row, *dict.fromkeys(everywhere.values()))
    )
    checks = [(cut, in_cut), (rows, on_every_row)]
    if given is not None and cast:
        checks.append((given, v.null_checks("recs", cast, in_memory=in_memory, show=show)))
    return checks


def _cast_floats(given: pl.LazyFrame, recs: pl.LazyFrame, ids: dict[str, str]) -> dict[str, str]:
    """The id columns (role -> name) ``given`` holds as floats and ``recs`` as integers."""
    before, after = given.collect_schema(), recs.collect_schema()
    return {
        role: name
        for role, name in ids.items()
        if before[name].is_float() and not after[name].is_float()
    }


def list_checks(
    ranked: pl.LazyFrame,
    spec: RecsSpec,
    *,
    positions: bool = True,
    in_memory: bool = False,
    by_position: bool = False,
) -> list[tuple[pl.LazyFrame, list[v.DataCheck]]]:
    """Checks of ranked lists: each item once per list and, if asked, each position once.

    Score-derived positions are distinct by construction, so only given ranks
    are checked for repeats. ``in_memory``: ``ranked`` comes from a frame in
    memory (see :func:`polars_rankmetrics._validation.duplicate_check`).
    ``by_position``: ``ranked`` comes in no fixed row order (the top k ranked
    from scores), so a repeat's example row is the offending row of the
    first list (by its key) at its best position.
    """
    show = (*spec.list_keys, spec.item, spec.rank)
    checks = []
    if spec.duplicates == "error":
        checks.append(
            v.duplicate_check(
                "recs",
                [*spec.list_keys, spec.item],
                show,
                hint=": an item is recommended twice in one list (missing by=...? "
                "or pass duplicates='first' to keep its best position)",
                in_memory=in_memory,
            )
        )
    if positions and spec.score is None:
        checks.append(position_check(spec, in_memory=in_memory))
    if by_position:
        checks = [replace(one, example_order=(*spec.list_keys, spec.rank)) for one in checks]
    return [(ranked, checks)]


def position_check(spec: RecsSpec, *, in_memory: bool = False) -> v.DataCheck:
    """Two items at one position make P@i and AP ambiguous.

    Only distinct items at one position are bad: the hit rows of
    ``evaluate`` repeat a recommendation whose truth row is repeated, which is
    the truth's problem (its own duplicate check names it), not the recs'.
    """
    check = v.duplicate_check(
        "recs",
        [*spec.list_keys, spec.rank],
        (*spec.list_keys, spec.item, spec.rank),
        hint=": two items share one position in a list (missing by=...?)",
        in_memory=in_memory,
    )
    # a row repeated whole (same item, same position) is not two items at one position;
    # no window here: the bad rows are searched for only when the hash screen fires
    shared = pl.struct([*spec.list_keys, spec.rank]).is_duplicated()
    repeated = pl.struct([*spec.list_keys, spec.item, spec.rank]).is_duplicated()
    return replace(check, bad=shared & ~repeated)


def hit_checks(spec: RecsSpec, row: str, *, in_memory: bool = False) -> list[v.DataCheck]:
    """The list checks of ``evaluate`` on its hit rows, for given ranks and hits measures.

    The hit rows are the relevant truth items recommended within the cut,
    each with the recommendation row it came from (its index in the cut,
    column ``row``). With given ranks a measure that reads only the hits sees
    a repeated item only if the item is relevant: a repeated non-relevant item
    takes no position from anyone and is never read. So here an item repeated
    in one list is refused only when it is relevant (and within the cut), and
    two items at one position only when both are relevant (a non-relevant item
    beside a relevant one changes no count of relevant items above a position).

    A truth row repeated (the truth's own check names it) also repeats its hit
    row, from one recommendation row: that is not a repeat of the recs.

    Each error's example row is the offending hit row that comes first in the
    cut (smallest ``row``), whatever order the join returns the rows in.
    """
    keys = [*spec.list_keys, spec.item]
    check = v.duplicate_check(
        "recs",
        keys,
        (*keys, spec.rank),
        hint=": a relevant item is recommended twice in one list (missing by=...? "
        "or pass duplicates='first' to keep its best position)",
        in_memory=in_memory,
    )
    # two hit rows of one item from distinct recommendation rows
    repeated = pl.struct(keys).is_duplicated() & ~pl.struct([*keys, row]).is_duplicated()
    checks = [replace(check, bad=repeated)] if spec.duplicates == "error" else []
    checks.append(position_check(spec, in_memory=in_memory))
    # the hit rows come from a join, in no fixed order: each example is the offending
    # row that comes first in the cut, the same in every run
    return [replace(one, example_order=(row,)) for one in checks]


def check_truth_schema(schema: pl.Schema, spec: TruthSpec) -> None:
    """Schema-level checks of a truth frame."""
    roles = {"user": spec.user, "item": spec.item}
    if spec.relevance is not None:
        roles["relevance"] = spec.relevance
    if spec.subtopic is not None:
        roles["subtopic"] = spec.subtopic
    v.require_columns(schema, roles, frame="truth")
    if spec.relevance is not None:
        v.require_numeric(schema, spec.relevance, frame="truth", role="relevance")
    level = spec.relevance_level
    if level is not None and not math.isfinite(level):
        # NaN compares false with every grade: every metric would silently be null
        raise ValueError(f"relevance_level must be a finite number, got {level!r}")


def truth_checks(
    lf: pl.LazyFrame, spec: TruthSpec, schema: pl.Schema, *, in_memory: bool = False
) -> list[tuple[pl.LazyFrame, list[v.DataCheck]]]:
    """Data checks on the truth: no nulls or NaN, each (user, item) judged once.

    ``in_memory``: ``lf`` reads a frame in memory (see
    :func:`polars_rankmetrics._validation.duplicate_check`).
    """
    # subtopic judgements: one row per (user, subtopic, item)
    subtopic = [] if spec.subtopic is None else [spec.subtopic]
    keys = [*spec.shared_by, spec.user, *subtopic, spec.item]
    columns = {"user": spec.user, "item": spec.item}
    columns.update({f"by[{i}]": name for i, name in enumerate(spec.shared_by)})
    if spec.subtopic is not None:
        columns["subtopic"] = spec.subtopic
    show = tuple(keys)
    if spec.relevance is not None:
        columns["relevance"] = spec.relevance
        show = (*keys, spec.relevance)
    checks = v.null_checks("truth", columns, in_memory=in_memory)
    if spec.relevance is not None and schema[spec.relevance].is_float():
        checks.append(v.nan_check("truth", spec.relevance, "relevance", show, in_memory=in_memory))
    duplicates = v.duplicate_check(
        "truth", keys, show, hint=": judge each item once", in_memory=in_memory
    )
    # on a scan the row-by-row checks stream while the duplicate check waits for its screen
    return [(lf, checks), (lf, [duplicates])]


def prepare(
    recs: pl.DataFrame | pl.LazyFrame,
    truth: pl.DataFrame | pl.LazyFrame,
    recs_spec: RecsSpec,
    truth_spec_args: tuple[str | None, float | None],
    *,
    recs_row_checks: bool = True,
    subtopic: str | None = None,
) -> tuple[pl.LazyFrame, pl.LazyFrame, TruthSpec, list[tuple[pl.LazyFrame, list[v.DataCheck]]]]:
    """Validate both frames' schemas and return them lazy, with key dtypes unified.

    The key-dtype rule is :func:`polars_rankmetrics._validation.key_dtype`
    (documented in :func:`polars_rankmetrics.ranking.relevance`'s Notes and
    docs/DESIGN.md); the data checks read the frames as given, so that their
    example rows show the user's values.

    Returns the recommendations, the truth, the truth spec (``by`` columns
    present in both frames become part of the join key) and the data checks
    of both inputs for :func:`polars_rankmetrics._validation.guard`.
    ``recs_row_checks=False`` leaves out :func:`recs_checks` (the caller checks
    the rows its measures read instead: :func:`cut_checks`). ``subtopic``: the
    truth's subtopic column, when a requested measure reads subtopic judgements.
    """
    recs_lf = to_lazy(recs, name="recs")
    truth_lf = to_lazy(truth, name="truth")
    recs_schema = recs_lf.collect_schema()
    truth_schema = truth_lf.collect_schema()
    check_recs_schema(recs_schema, recs_spec)
    relevance_column, level = truth_spec_args
    if level is not None:
        level = v.as_number(level, what="relevance_level")
    shared_by = tuple(name for name in recs_spec.by if name in truth_schema)
    truth_spec = TruthSpec(
        recs_spec.user, recs_spec.item, relevance_column, level, shared_by, subtopic
    )
    check_truth_schema(truth_schema, truth_spec)
    keys = [*shared_by, recs_spec.user, recs_spec.item]
    given_recs, given_truth = recs_lf, truth_lf
    recs_lf, truth_lf, recs_key_checks, truth_key_checks = v.unify_key_dtypes(
        recs_lf, truth_lf, keys, recs_schema=recs_schema, truth_schema=truth_schema
    )
    # the data checks read the frames as given: the example rows show the user's values
    recs_in_memory = isinstance(recs, pl.DataFrame)
    row_checks = recs_checks(recs_spec, recs_schema, in_memory=recs_in_memory)
    checks = [
        (given_recs, row_checks if recs_row_checks else []),
        *truth_checks(
            given_truth, truth_spec, truth_schema, in_memory=isinstance(truth, pl.DataFrame)
        ),
        (given_recs, recs_key_checks),
        (given_truth, truth_key_checks),
    ]
    return recs_lf, truth_lf, truth_spec, checks


def recs_alone(
    recs: pl.DataFrame | pl.LazyFrame, spec: RecsSpec, *, row_checks: bool
) -> tuple[pl.LazyFrame, list[tuple[pl.LazyFrame, list[v.DataCheck]]]]:
    """The recs lazy with their checks, when no truth is read (the list measures alone)."""
    recs_lf = to_lazy(recs, name="recs")
    schema = recs_lf.collect_schema()
    check_recs_schema(schema, spec)
    in_memory = isinstance(recs, pl.DataFrame)
    return recs_lf, [
        (recs_lf, recs_checks(spec, schema, in_memory=in_memory) if row_checks else [])
    ]


def gain_check(roles: Roles, conv: Conventions, *, in_memory: bool) -> v.DataCheck:
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


def truthless_names() -> list[str]:
    return [m.name for m in registry.all_measures() if "beyond_accuracy" in m.inputs]


def check_ideal(requests: Sequence[Request], conv: Conventions) -> None:
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
        if k > MAX_TABLE:
            raise ValueError(
                f"ideal='k' sums k discounts: the cutoff of {request.spec.label!r} must be at "
                f"most {MAX_TABLE}"
            )


def check_tie_average(requests: Sequence[Request], roles: Roles) -> None:
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


def row_checks_on_cut(score: str | None, conv: Conventions, specs: Sequence[MetricSpec]) -> bool:
    """Whether the recs' row checks can look at the top-k cut (:func:`cut_checks`).

    Given ranks (no ranking reads every row), no tie groups, no rows removed
    before the cut (``unjudged="remove"`` renumbers), and a finite cutoff.
    """
    return (
        score is None
        and conv.ties != "average"
        and conv.unjudged != "remove"
        and largest_cutoff(specs) is not None
    )
