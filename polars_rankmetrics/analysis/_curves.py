"""The curves' engine: metric@k for every k in one pass over the ranked lists.

:func:`drawn_curves` is what :func:`polars_rankmetrics.curves` runs once it
has read its frames and options into typed specs. Every measure with a cutoff
owns its curve step (:class:`polars_rankmetrics._measures._curve.CurveStep`):
a few per-user states, each a running sum (or maximum) of per-row terms down
the list, and the per-user value as a formula of those states, of k and of
m_u. Each user's value at each of its change points goes to fixed point (the
exact rule of :func:`polars_rankmetrics._sums.fixed_point_column`), the
integer steps of the values are summed per position, and their running sums,
read at each requested k, give the sums over users. Nothing here names a
measure. The measures of the lists themselves are drawn by
:mod:`polars_rankmetrics.analysis._list_curves`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np
import polars as pl

from polars_rankmetrics import _formulas as formula
from polars_rankmetrics._measures._curve import CURVE_LIST, CurveStep, CurveTable
from polars_rankmetrics._measures._registry import (
    GRADE,
    HIT_INDEX,
    MAX_GRADE,
    N_NONRELEVANT,
    N_RELEVANT,
    NONRELEVANT_ABOVE,
    RELEVANT,
    RELEVANT_ABOVE,
    UNJUDGED_ABOVE,
    Context,
    Measure,
    part_column,
)
from polars_rankmetrics._pipeline.aggregate import FINISH, POLARS, Totals
from polars_rankmetrics._pipeline.inputs import ListInputs, RecsSpec, Roles, Ties
from polars_rankmetrics._pipeline.parse import metric_spec
from polars_rankmetrics._pipeline.plan import guarded_parts
from polars_rankmetrics._pipeline.propensity import item_propensities, join_keys
from polars_rankmetrics._pipeline.rank_cut import lengths_in_rank_order, with_positions
from polars_rankmetrics._sums import exact_sums, fixed_point_column
from polars_rankmetrics.analysis._list_curves import POS, ListCurve, list_curves
from polars_rankmetrics.conventions import Conventions

__all__ = ["drawn_curves", "how_drawn"]

_K = "k"
_ONE = "__prm_curve_one"  # the one group when there is no ``by``


def how_drawn(measure: Measure) -> str | None:
    """How ``curves`` draws ``measure``, or ``None`` (it has no cutoff to vary).

    ``"lists"`` (the measures of the lists themselves), ``"step"`` (a curve
    hook: every k in one pass) or ``"evaluated"`` (a measure with a cutoff but
    no step, such as the diversity measures over subtopic rows: evaluated at
    each k, one plan per k).
    """
    if measure.lists is not None:
        return "lists"
    if measure.curve is not None:
        return "step"
    return "evaluated" if measure.cutoff != "none" else None


def drawn_curves(
    recs: pl.DataFrame | pl.LazyFrame,
    truth: pl.DataFrame | pl.LazyFrame | None,
    chosen: list[tuple[str, Measure]],
    *,
    ks: list[int],
    roles: Roles,
    conv: Conventions,
    described: ListInputs,
    ci: float | None,
) -> pl.LazyFrame:
    """``by..., metric, k, value[, ci_low, ci_high]`` of every chosen curve at the ks.

    ``chosen``: each curve's label (a metric string without ``@k``) and
    measure; the frames are Polars, the options read into typed specs.
    """
    user, item, by = roles.user, roles.item, list(roles.by)
    top = max(ks)
    stepped = [(label, m) for label, m in chosen if how_drawn(m) == "step"]
    lists = [
        ListCurve(label, m, dict(metric_spec(f"{label}@1").params))
        for label, m in chosen
        if how_drawn(m) == "lists"
    ]
    # who counts, per metric: the users whose parts evaluate defines at the largest k (it
    # checks the lists that far, and the inputs of the measures of the lists)
    requested = [f"{label}@{top}" for label, _ in chosen]
    population = guarded_parts(recs, truth, requested, roles, conv, described=described)
    in_memory = isinstance(recs, pl.DataFrame)
    if in_memory:
        # the checks run now, as evaluate's in memory; every curve reads the population
        population = population.collect().lazy()
    in_memory = isinstance(recs, pl.DataFrame)
    ranked = _ranked_lists(
        recs, by=by, user=user, item=item, rank=roles.rank, score=roles.score, conv=conv, top=top
    )
    if in_memory:
        ranked = ranked.collect().lazy()
    groups = (
        population.select(by).unique() if by else pl.LazyFrame({_ONE: [1]}, schema={_ONE: pl.Int32})
    )
    pieces: dict[str, pl.LazyFrame] = {}
    if stepped:
        weighted = [label for label, m in stepped if "propensity" in m.inputs]
        tables = _Tables(
            ranked, truth, population, by=by, user=user, item=item,
            relevance=roles.relevance, conv=conv, top=top, hold=in_memory,
            propensity=described if weighted else None, weighted=weighted,
        )  # fmt: skip
        for label, measure in stepped:
            pieces[label] = _curve(
                label, measure, tables, groups=groups, ks=ks, top=top, conv=conv, ci=ci
            )
    for label, measure in chosen:
        if how_drawn(measure) == "evaluated":
            pieces[label] = _evaluated_curve(
                recs, truth, label, measure, ks=ks, roles=roles, conv=conv,
                described=described, ci=ci,
            )  # fmt: skip
    if lists:
        pieces.update(
            list_curves(
                ranked, lists, groups=groups, by=by, user=user, item=item, top=top, ci=ci,
                described=described, wanted=ks, t_quantile=_t_quantile, hold=in_memory,
            )
        )  # fmt: skip
    result = pl.concat([pieces[label] for label, _ in chosen], how="vertical")
    wanted = pl.LazyFrame({_K: ks}, schema={_K: pl.Int64})
    order = {label: index for index, (label, _) in enumerate(chosen)}
    result = result.join(wanted, on=_K, how="semi").with_columns(
        pl.col("metric").replace_strict(order, return_dtype=pl.Int64).alias("__order")
    )
    return result.sort([*by, "__order", _K]).drop("__order")


def _evaluated_curve(
    recs: pl.DataFrame | pl.LazyFrame,
    truth: pl.DataFrame | pl.LazyFrame | None,
    label: str,
    measure: Measure,
    *,
    ks: list[int],
    roles: Roles,
    conv: Conventions,
    described: ListInputs,
    ci: float | None,
) -> pl.LazyFrame:
    """The curve of a measure without a step: its per-user parts at each k, aggregated.

    The same users and the same aggregation as ``evaluate`` at each k (one
    plan per k, so slower than a step's single pass).
    """
    by = list(roles.by)
    parts = [
        _Part(suffix, squared=ci is not None and measure.aggregation == "mean")
        for suffix in measure.suffixes
    ]
    frames = []
    for k in ks:
        name = f"{label}@{k}"
        per_user = guarded_parts(recs, truth, [name], roles, conv, described=described)
        frames.append(
            per_user.select(
                *by,
                pl.lit(k, pl.Int64).alias(_K),
                *(pl.col(part_column(name, p.suffix)).alias(p.column("v")) for p in parts),
            )
        )
    values = pl.concat(frames, how="vertical")
    counted = pl.all_horizontal(pl.col(p.column("v")).is_not_null() for p in parts)
    terms = {p.column("s"): pl.col(p.column("v")) for p in parts}
    terms.update({p.column("s2"): pl.col(p.column("v")).pow(2) for p in parts if p.squared})
    # exact sums: the per-user values come out of the plans in no fixed order
    sums = exact_sums(
        values.filter(counted), [*by, _K], terms, also=[pl.len().alias("__prm_curve_n")]
    )
    return _finish(sums, measure, parts, by=by, label=label, ci=ci)


def _ranked_lists(
    frame: pl.DataFrame | pl.LazyFrame,
    *,
    by: list[str],
    user: str,
    item: str,
    rank: str,
    score: str | None,
    conv: Conventions,
    top: int,
) -> pl.LazyFrame:
    """The lists cut to ``top``, ranked as evaluate ranks them (by..., user, item, POS)."""
    spec = RecsSpec(user, item, rank if score is None else POS, score, tuple(by),
                    cast("Ties", conv.ties), conv.duplicates)  # fmt: skip
    keep = list(dict.fromkeys([*by, user, item, score or rank]))
    ranked = with_positions(
        frame.lazy().select(keep), spec, top, run_lengths=lengths_in_rank_order(frame, spec)
    )
    return ranked.select(*by, user, item, pl.col(spec.rank).cast(pl.Int64).alias(POS))


class _Tables:
    """The curve tables (:mod:`polars_rankmetrics._measures._curve`), built on first use.

    Every table is keyed by :data:`CURVE_LIST`, one integer per row of the
    population (the users evaluate counts for some metric), sorted by it and
    the position, with :data:`N_RELEVANT` on every row.
    """

    def __init__(
        self,
        ranked: pl.LazyFrame,
        truth: Any,
        population: pl.LazyFrame,
        *,
        by: list[str],
        user: str,
        item: str,
        relevance: str | None,
        conv: Conventions,
        top: int,
        hold: bool,
        propensity: ListInputs | None = None,
        weighted: Sequence[str] = (),
    ) -> None:
        self.keys = [*by, user]
        self.top, self.conv, self.hold = top, conv, hold
        truth_lf = truth.lazy() if isinstance(truth, pl.DataFrame) else cast("pl.LazyFrame", truth)
        recs_schema, truth_schema = ranked.collect_schema(), truth_lf.collect_schema()
        self.truth_keys = [*(name for name in by if name in truth_schema), user]
        self.item = item
        # evaluate (called first) has checked the key dtypes: join them in the recs' dtypes
        truth_lf = truth_lf.with_columns(
            pl.col(name).cast(recs_schema[name])
            for name in [*self.truth_keys, item]
            if truth_schema[name] != recs_schema[name]
        )
        grade = pl.lit(1.0) if relevance is None else pl.col(relevance).cast(pl.Float64)
        relevant = pl.col(GRADE) > 0
        if conv.relevance_level is not None:
            # trec_eval -l: binary measures count grades >= level; gains keep every grade
            relevant = relevant & (pl.col(GRADE) >= conv.relevance_level)
        self.truth = truth_lf.select(*self.truth_keys, item, grade.alias(GRADE)).with_columns(
            relevant.alias(RELEVANT)
        )
        counts = self.truth.group_by(self.truth_keys).agg(
            pl.col(RELEVANT).sum().cast(pl.Int64).alias(N_RELEVANT),
            ((pl.col(GRADE) >= 0) & ~pl.col(RELEVANT)).sum().cast(pl.Int64).alias(N_NONRELEVANT),
        )
        # the population's rows, numbered: the parts say who counts for each metric
        self.numbered = self._keep(population.with_row_index(CURVE_LIST))
        self.users = self._keep(
            self.numbered.select(CURVE_LIST, *self.keys)
            .join(counts, on=self.truth_keys, how="left", maintain_order="left")
            .with_columns(pl.col(N_RELEVANT, N_NONRELEVANT).fill_null(0))
        )
        self.ranked = ranked.join(
            self.users.select(*self.keys, CURVE_LIST, N_RELEVANT, N_NONRELEVANT),
            on=self.keys,
            how="inner",
        )
        self._built: dict[CurveTable, pl.LazyFrame] = {}
        # the debiased measures' propensities, joined to the hits and the truth rows as
        # evaluate joins them (checked there: per_user_parts ran first with the same inputs)
        self.propensities: pl.LazyFrame | None = None
        if propensity is not None:
            self.propensities, _checks = item_propensities(
                propensity, truth=truth_lf, truth_keys=self.truth_keys, relevance=relevance,
                item=item, labels=list(weighted),
            )  # fmt: skip

    def _keep(self, frame: pl.LazyFrame) -> pl.LazyFrame:
        return frame.collect().lazy() if self.hold else frame.cache()

    def _weighted(self, rows: pl.LazyFrame) -> pl.LazyFrame:
        """``rows`` with each item's propensity columns, when a measure reads them."""
        if self.propensities is None:
            return rows
        return rows.join(self.propensities, on=join_keys(self.propensities), how="left")

    def __getitem__(self, name: CurveTable) -> pl.LazyFrame:
        if name not in self._built:
            self._built[name] = self._keep(self._build(name))
        return self._built[name]

    def _build(self, name: CurveTable) -> pl.LazyFrame:
        on = [*self.truth_keys, self.item]
        order = [CURVE_LIST, POS]
        if name == "ideal":
            # the user's positive grades by gain descending (a gain table need not follow the
            # grade), as positions 1, 2, ...
            gain = formula.gain(pl.col(GRADE), self.conv.gain)
            place = gain.rank("ordinal", descending=True).over(self.truth_keys)
            ideal = (
                self.truth.filter(pl.col(GRADE) > 0)
                .with_columns(place.cast(pl.Int64).alias(POS))
                .filter(pl.col(POS) <= self.top)
                .drop(self.item)
            )
            # one copy per group only the recs have (model), as evaluate judges each on it
            users = self.users.select(*self.keys, CURVE_LIST, N_RELEVANT)
            return users.join(ideal, on=self.truth_keys, how="inner").sort(order)
        if name == "list":
            joined = self.ranked.join(self.truth, on=on, how="left").with_columns(
                pl.col(RELEVANT).fill_null(value=False)
            )
            return joined.sort(order)
        if name == "truth":
            # the user's relevant truth, all at position 1: per-user constants from k = 1 on
            users = self.users.select(*self.keys, CURVE_LIST, N_RELEVANT)
            rows = users.join(self.truth.filter(pl.col(GRADE) > 0), on=self.truth_keys)
            return self._weighted(rows.with_columns(pl.lit(1, pl.Int64).alias(POS))).sort(order)
        if name == "hits":
            hits = self._weighted(
                self.ranked.join(self.truth.filter(pl.col(GRADE) > 0), on=on, how="inner")
            )
            largest = self.truth.select(
                pl.col(GRADE).filter(pl.col(GRADE) > 0).max().alias(MAX_GRADE)
            )
            found = pl.col(RELEVANT).cast(pl.UInt32).cum_sum().over(CURVE_LIST)
            return hits.sort(order).with_columns(found.alias(HIT_INDEX)).join(largest, how="cross")
        # the judgements: every recommended truth row, with running counts down the list
        rows = self.ranked.join(self.truth, on=on, how="inner").sort(order)
        nonrelevant = (pl.col(GRADE) >= 0) & ~pl.col(RELEVANT)

        def running(flag: pl.Expr) -> pl.Expr:
            return flag.cast(pl.UInt32).cum_sum().over(CURVE_LIST)

        return rows.with_columns(
            running(pl.col(RELEVANT)).alias(RELEVANT_ABOVE),
            running(nonrelevant).alias(NONRELEVANT_ABOVE),
            running(pl.col(GRADE) < 0).alias(UNJUDGED_ABOVE),
        )


@dataclass(frozen=True)
class _Part:
    """One part column of a curve (``""``, ``"num"``, ``"log"``...) and its square's."""

    suffix: str
    squared: bool  # also its sum of squares (the interval of a mean)

    def column(self, what: str) -> str:
        return f"__prm_curve_{what}|{self.suffix}"


def _curve(
    label: str,
    measure: Measure,
    tables: _Tables,
    *,
    groups: pl.LazyFrame,
    ks: list[int],
    top: int,
    conv: Conventions,
    ci: float | None,
) -> pl.LazyFrame:
    """``by..., metric, k, value[, ci_low, ci_high]`` of one measure at the requested ks."""
    spec = metric_spec(f"{label}@{top}")
    ctx = Context(None, dict(spec.params), conv, rank=POS)
    if measure.curve is None:  # _check_metrics let only measures with a step through
        raise ValueError(f"{measure.name} declares no curve step")
    step = measure.curve(ctx)
    if measure.aggregation == "group":
        raise ValueError(f"curves cannot draw {label!r}: one value per group has no user steps")
    by = [name for name in tables.keys if name != tables.keys[-1]]
    parts = [
        _Part(suffix, squared=ci is not None and measure.aggregation == "mean")
        for suffix in measure.suffixes
    ]
    # the users evaluate counts for this metric at the largest k: all its parts defined
    defined = pl.all_horizontal(
        pl.col(part_column(spec.label, suffix)).is_not_null() for suffix in measure.suffixes
    )
    ids = tables.numbered.filter(defined).select(CURVE_LIST)
    counted = tables.users.join(ids, on=CURVE_LIST, how="semi")
    if not by:
        counted = counted.with_columns(pl.lit(1, pl.Int32).alias(_ONE))
    values = _values(step, measure, parts, tables, counted, top=top)
    sums = _running_sums(values, step, parts, by=by or [_ONE], groups=groups, ks=ks)
    return _finish(sums, measure, parts, by=by, label=label, ci=ci)


# the tables with several rows at one position of a list (see _Tables._build)
_SHARED_POSITIONS: frozenset[CurveTable] = frozenset({"truth"})


def _values(
    step: CurveStep,
    measure: Measure,
    parts: list[_Part],
    tables: _Tables,
    counted: pl.LazyFrame,
    *,
    top: int,
) -> pl.LazyFrame:
    """Per counted user and change point: the steps of each part, in fixed point.

    A change point is a position with a row of a table the states read, every
    position up to the horizon, and position 1 (the value before any row).
    """
    names = [state.name for state in step.states]
    pieces = []
    for table in step.tables:
        # the terms over the whole table, in list order (their windows run down the list)
        terms = tables[table].select(
            CURVE_LIST,
            POS,
            *(
                (state.term if state.table == table else pl.lit(None))
                .cast(pl.Float64)
                .alias(state.name)
                for state in step.states
            ),
        )
        pieces.append(terms.join(counted.select(CURVE_LIST), on=CURVE_LIST, how="semi"))
    if step.horizon is None:
        ticks = counted.select(CURVE_LIST, pl.lit(1, pl.Int64).alias(POS))
    else:
        one, cut = pl.lit(1, pl.Int64), pl.lit(top, pl.Int64)
        last = pl.min_horizontal(pl.max_horizontal(step.horizon.cast(pl.Int64), one), cut)
        ticks = counted.select(
            CURVE_LIST, pl.int_ranges(one, last + 1, dtype=pl.Int64).alias(POS)
        ).explode(POS)
    pieces.append(ticks.with_columns(pl.lit(None, pl.Float64).alias(name) for name in names))
    # the truth table holds several rows at one position (all at position 1), which come
    # out of joins in no fixed order: sorted by their terms too, the running sums add them
    # in an order the data fixes (rows equal in every column are alike). The other tables
    # hold one row per position: the longer sort would only cost time (about 1.3x)
    shared = [*names] if any(table in _SHARED_POSITIONS for table in step.tables) else []
    rows = pl.concat(pieces, how="vertical").sort(CURVE_LIST, POS, *shared)

    def running(name: str, how: str) -> pl.Expr:
        term = pl.col(name).fill_null(0.0)
        return (term.cum_sum() if how == "sum" else term.cum_max()).over(CURVE_LIST)

    rows = rows.with_columns(running(state.name, state.how) for state in step.states)
    # the states after a position are those of its last row
    same = (pl.col(CURVE_LIST) == pl.col(CURVE_LIST).shift(-1)) & (
        pl.col(POS) == pl.col(POS).shift(-1)
    )
    rows = rows.filter(~same.fill_null(value=False)).join(
        counted, on=CURVE_LIST, how="left", maintain_order="left"
    )
    expressions = step.value(pl.col(POS))
    filled = []
    for part in parts:
        column = expressions[part.suffix].cast(pl.Float64)
        column = column if measure.fill is None else column.fill_null(measure.fill)
        filled.append(column.alias(part.column("v")))
    rows = rows.with_columns(filled)
    counts = pl.all_horizontal(pl.col(part.column("v")).is_not_null() for part in parts)
    rows = rows.with_columns(counts.alias("__prm_curve_in"))
    fixed = []
    for part in parts:
        v = pl.col(part.column("v"))
        fixed.extend(fixed_point_column(v, part.column("s")))
        if part.squared:
            fixed.extend(fixed_point_column(v * v, part.column("s2")))
    rows = rows.with_columns(fixed)
    inside = pl.col("__prm_curve_in")
    same_list = pl.col(CURVE_LIST) == pl.col(CURVE_LIST).shift(1)

    def change(x: pl.Expr) -> pl.Expr:
        x = pl.when(inside).then(x).otherwise(0)
        before = pl.when(same_list).then(x.shift(1)).otherwise(0)
        return x - before

    steps = [change(inside.cast(pl.Int64)).alias("__prm_curve_dn")]
    for part in parts:
        for what in ("s", "s2") if part.squared else ("s",):
            steps.append(change(pl.col(part.column(what))).alias(part.column("d" + what)))
    return rows.with_columns(steps)


def _running_sums(
    values: pl.LazyFrame,
    step: CurveStep,
    parts: list[_Part],
    *,
    by: list[str],
    groups: pl.LazyFrame,
    ks: list[int],
) -> pl.LazyFrame:
    """Per (by..., k): the counted users (``n``) and, per part, the sum of the part over them.

    The steps of the fixed-point values, summed per position, run down the
    positions; each requested k reads the running sums at its last position.
    With a divisor, the users are grouped by m_u (the divisor reads it): each
    group's sum is divided at k, and the groups summed in fixed point.
    """
    cells = [*by, N_RELEVANT] if step.divisor is not None else list(by)
    sums = ["__prm_curve_dn"]
    scales = []
    for part in parts:
        for what in ("s", "s2") if part.squared else ("s",):
            sums.append(part.column("d" + what))
            scales.append(f"{part.column(what)}|scale")
    per_position = values.group_by([*cells, POS]).agg(pl.col(sums).sum()).sort(POS)
    running = per_position.with_columns(pl.col(sums).cum_sum().over(cells))
    wanted = pl.LazyFrame({_K: ks}, schema={_K: pl.Int64})
    grid = values.select(cells).unique().join(wanted, how="cross").sort(_K)
    at_k = grid.join_asof(
        running, left_on=_K, right_on=POS, by=cells, strategy="backward",
        # both sides are sorted by the key above; with by groups Polars cannot check it
        check_sortedness=False,
    ).join(values.select(pl.col(scales).first()), how="cross")  # fmt: skip
    divisor = None if step.divisor is None else step.divisor(pl.col(_K).cast(pl.Float64))
    totals = []
    for part in parts:
        for what in ("s", "s2") if part.squared else ("s",):
            total = pl.col(part.column("d" + what)).fill_null(0).cast(pl.Float64)
            total = total / pl.col(f"{part.column(what)}|scale")
            if divisor is not None:
                total = total / (divisor if what == "s" else divisor * divisor)
            totals.append(total.alias(part.column(what)))
    at_k = at_k.select(
        *by, _K, pl.col("__prm_curve_dn").fill_null(0).alias("__prm_curve_n"), *totals
    )
    names = [name for part in parts for name in _part_sums(part)]
    if divisor is None:
        combined = at_k
    else:
        # one row per (group, k, m_u): sum the groups exactly, in any order
        at_k = at_k.with_columns(
            column
            for name in names
            for column in fixed_point_column(pl.col(name), f"{name}|f", [*by, _K])
        )
        combined = at_k.group_by([*by, _K]).agg(
            pl.col("__prm_curve_n").sum(),
            *(
                (
                    pl.col(f"{name}|f").sum().cast(pl.Float64) / pl.col(f"{name}|f|scale").first()
                ).alias(name)
                for name in names
            ),
        )
    return groups.join(wanted, how="cross").join(combined, on=[*by, _K], how="left")


def _part_sums(part: _Part) -> list[str]:
    return [part.column(what) for what in (("s", "s2") if part.squared else ("s",))]


def _finish(
    sums: pl.LazyFrame,
    measure: Measure,
    parts: list[_Part],
    *,
    by: list[str],
    label: str,
    ci: float | None,
) -> pl.LazyFrame:
    """The measure's own aggregation of the sums at each k, and its interval for a mean."""
    n = pl.col("__prm_curve_n").fill_null(0)
    total = {part.suffix: pl.col(part.column("s")).fill_null(0.0) for part in parts}
    mean: dict[str, pl.Expr] = {
        suffix: pl.when(n > 0).then(value / n) for suffix, value in total.items()
    }
    kind = measure.aggregation
    # the kind's own formula (the one evaluate and Spark finish with), from the sums of
    # the parts over the counted users and their number
    totals = Totals(tuple(total[part.suffix] for part in parts), tuple(n for _ in parts))
    value = FINISH[kind](POLARS, totals)
    columns: list[pl.Expr] = [
        *(pl.col(name) for name in by),
        pl.lit(label).alias("metric"),
        pl.col(_K),
        value.alias("value"),
    ]
    if ci is None:
        return sums.select(columns)
    if kind != "mean":
        # not a mean over users: no interval
        nothing = pl.lit(None, pl.Float64)
        return sums.select(*columns, nothing.alias("ci_low"), nothing.alias("ci_high"))
    (part,) = parts
    n_float = n.cast(pl.Float64)
    squares = pl.col(part.column("s2")).fill_null(0.0)
    variance = ((squares - n_float * mean[""] * mean[""]) / (n_float - 1)).clip(lower_bound=0.0)
    half = _t_quantile(n, ci) * variance.sqrt() / n_float.sqrt()
    defined = n >= 2
    return sums.select(
        *columns,
        pl.when(defined).then(mean[""] - half).alias("ci_low"),
        pl.when(defined).then(mean[""] + half).alias("ci_high"),
    )


def _t_quantile(n: pl.Expr, ci: float) -> pl.Expr:
    """t_{(1+ci)/2, n-1} per row (null below 2 users), from scipy on the few distinct n."""

    def quantiles(counts: pl.Series) -> pl.Series:
        from scipy import stats  # noqa: PLC0415 - only the interval needs it

        values = counts.cast(pl.Float64).to_numpy()
        quantile = stats.t.ppf((1 + ci) / 2, np.maximum(values - 1, 1))
        return pl.Series(np.where(values >= 2, quantile, math.nan)).fill_nan(None)

    return n.map_batches(quantiles, return_dtype=pl.Float64)
