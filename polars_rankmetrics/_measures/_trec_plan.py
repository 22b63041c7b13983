"""The per-query plan of trec_eval's measures, and the expressions families share.

Each trec_eval measure family is declared once, as a
:class:`polars_rankmetrics._measures._registry.TrecFamily` in the
:mod:`polars_rankmetrics._measures` module that holds its formula. Its
``compute`` function takes the plan being built (:class:`Plan`) and the
family's request (:class:`Request`: its cutoffs or parameters and the names it
prints) and adds what the family needs: row columns over the ranked rows of a
query, aggregations per (run, query), and side tables (the ideal ranking of the
judged documents) only when a family asks for them. The definitions follow
trec_eval 10.0's ``m_*.c`` files; ``docs/trec-measures.md`` states each formula.

The ranked rows carry, per (run, query) and in rank order:

- ``_rank``: the position (1 = top), trec_eval's order (score descending,
  document id descending), without gaps;
- ``_code``: the qrels grade of a judged document (>= 0), -2 for a document
  listed in the qrels with a negative grade (pooled, not judged), -1 for a
  document the qrels do not list;
- ``_rel``: ``_code >= level`` (the binary relevance of ``-l``);
- per-query scalars: ``_R`` (relevant judged documents), ``_NN`` (judged
  non-relevant documents), ``_L`` (highest judged grade + 1).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import polars as pl

from polars_rankmetrics import _formulas as formula

__all__ = [
    "KEYS",
    "LONG_CUTOFFS",
    "OFFICIAL",
    "Plan",
    "R",
    "Request",
    "code",
    "cumulative",
    "custom_gains",
    "found",
    "gain_expr",
    "hits_at",
    "ideal_at_rows",
    "ideal_ranking",
    "ideal_totals",
    "judged_flags",
    "judged_rel",
    "num_rel_ret",
    "num_ret",
    "persistence",
    "rank",
    "rel",
    "row_gain",
    "when_positive",
]

KEYS = ["_run", "_user"]
# the measure sets of trec_eval's -m official and all_trec, and its long list of cutoffs
OFFICIAL = ("official", "all_trec")
LONG_CUTOFFS = (5.0, 10.0, 15.0, 20.0, 30.0, 100.0, 200.0, 500.0, 1000.0)

rank = pl.col("_rank").cast(pl.Float64)
code = pl.col("_code")
rel = pl.col("_rel")
found = pl.col("_found")  # relevant documents at or above this row
R = pl.col("_R").first().cast(pl.Float64)
num_ret = pl.len().cast(pl.Float64)
judged_rel = (code >= 0) & rel
num_rel_ret = judged_rel.sum().cast(pl.Float64)


@dataclass(frozen=True)
class Request:
    """One requested measure family and what it prints.

    Attributes
    ----------
    family
        trec_eval's measure name: ``"P"``, ``"ndcg_cut"``, ``"utility"``.
    names
        The printed names, in print order (``P_5``, ``P_10``...).
    cutoffs
        Integer or real cutoffs, ascending, one per printed name.
    values
        Real parameters (``utility``, ``11pt_avg``, ``set_F``, ``relstring``).
    pairs
        ``name=value`` parameters (gains of the ndcg family, ``p`` of rbp).
    """

    family: str
    names: tuple[str, ...]
    cutoffs: tuple[float, ...] = ()
    values: tuple[float, ...] = ()
    pairs: tuple[tuple[str, float], ...] = ()


@dataclass
class Plan:
    """What the per-query evaluation needs, collected from the requested families.

    ``rows`` are row columns (windows over each ranked list), ``joins`` per-row
    lookups in side tables, ``aggs`` the aggregations per (run, query), ``after``
    side tables joined to the aggregated frame by (run, query) or by query, and
    ``final`` the expressions that give each printed name its value.
    """

    judged: pl.LazyFrame  # _user, item, _grade (every qrels line of the evaluated queries)
    level: float
    rows: dict[str, pl.Expr] = field(default_factory=dict)
    row_joins: dict[str, Callable[[pl.LazyFrame], pl.LazyFrame]] = field(default_factory=dict)
    aggs: dict[str, pl.Expr] = field(default_factory=dict)
    after: dict[str, Callable[[pl.LazyFrame, pl.LazyFrame], pl.LazyFrame]] = field(
        default_factory=dict
    )
    final: dict[str, pl.Expr] = field(default_factory=dict)
    text: dict[str, pl.Expr] = field(default_factory=dict)

    def row(self, name: str, expr: pl.Expr) -> pl.Expr:
        """A row column (computed once), for use in aggregations."""
        self.rows.setdefault(name, expr)
        return pl.col(name)

    def agg(self, name: str, expr: pl.Expr) -> pl.Expr:
        """An aggregated column per (run, query), for use in final expressions."""
        self.aggs.setdefault(name, expr)
        return pl.col(name)

    def value(self, name: str, expr: pl.Expr) -> None:
        """The printed value ``name``: an aggregation per (run, query)."""
        self.final[name] = self.agg(f"={name}", expr)


def cumulative(flag: pl.Expr) -> pl.Expr:
    """Rows flagged at or above this one, down each ranked list (a row column)."""
    return flag.cast(pl.Int64).cum_sum().over(KEYS).cast(pl.Float64)


def hits_at(cutoff: pl.Expr | float) -> pl.Expr:
    """Relevant documents at ranks <= cutoff."""
    return (rel & (rank <= cutoff)).sum().cast(pl.Float64)


def when_positive(test: pl.Expr, value: pl.Expr) -> pl.Expr:
    """``value`` where ``test > 0``, else 0 (trec_eval's guard against dividing by 0)."""
    return pl.when(test > 0).then(value).otherwise(0.0)


# ---------------------------------------------------------------- shared by several families


def judged_flags(plan: Plan) -> tuple[pl.Expr, pl.Expr, pl.Expr]:
    """Relevant judged rows, judged non-relevant seen so far, pooled-unjudged seen so far."""
    nonrel = (code >= 0) & ~rel
    nonrel_seen = plan.row("_nonrel_seen", cumulative(nonrel))
    unjudged_seen = plan.row("_unjudged_seen", cumulative(code == -2))
    return judged_rel, nonrel_seen, unjudged_seen


def gain_expr(pairs: tuple[tuple[str, float], ...], column: pl.Expr) -> pl.Expr:
    """Gain of a grade: the grade itself unless a 'grade=gain' parameter sets it."""
    custom = custom_gains(pairs)
    expr = column.cast(pl.Float64)
    for grade, gain in custom.items():
        expr = pl.when(column == grade).then(pl.lit(gain)).otherwise(expr)
    return expr


def custom_gains(pairs: tuple[tuple[str, float], ...]) -> dict[int, float]:
    """The ``grade=gain`` parameters of the ndcg family (and rbp), first one kept."""
    custom: dict[int, float] = {}
    for key, gain in pairs:
        text = key[1:] if key[:1] in "+-" else key
        if text.isdigit():  # trec_eval ignores other names (rbp's 'p')
            custom.setdefault(int(key), gain)
    return custom


def gain_key(pairs: tuple[tuple[str, float], ...]) -> str:
    """A column-name key for one gain table, shared by families with the same gains."""
    custom = custom_gains(pairs)
    return "_".join(f"{k}:{v!r}" for k, v in sorted(custom.items())) or "default"


def row_gain(plan: Plan, pairs: tuple[tuple[str, float], ...]) -> tuple[str, pl.Expr]:
    """The gain of each ranked row under ``pairs`` (0 for unjudged rows), and its key."""
    key = gain_key(pairs)
    gain = plan.row(f"_gain[{key}]", pl.when(code < 0).then(0.0).otherwise(gain_expr(pairs, code)))
    return key, gain


def ideal_ranking(plan: Plan, pairs: tuple[tuple[str, float], ...]) -> pl.LazyFrame:
    """The ideal ranking of each query.

    Judged documents of positive gain, gain descending, with position ``_pos``
    and running sums of discounted gain and of cost (gain, at least 1).
    """
    gain = gain_expr(pairs, pl.col("_grade"))
    ideal = (
        plan.judged.filter(pl.col("_grade") >= 0)
        .select("_user", gain.alias("_ig"))
        .filter(pl.col("_ig") > 0)
        .sort("_user", "_ig", descending=[False, True])
        .with_columns(_pos=pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over("_user"))
    )
    return ideal.with_columns(
        _idcg=(pl.col("_ig") / formula.discount(pl.col("_pos"))).cum_sum().over("_user"),
        _cost=pl.max_horizontal(pl.col("_ig"), 1.0).cum_sum().over("_user"),
    )


def ideal_totals(plan: Plan, key: str, pairs: tuple[tuple[str, float], ...]) -> tuple[pl.Expr, ...]:
    """Per query: positions of positive gain, ideal DCG, total ideal gain (joined after)."""
    names = (f"_npos[{key}]", f"_itot[{key}]", f"_isum[{key}]")

    def join(frame: pl.LazyFrame, _queries: pl.LazyFrame) -> pl.LazyFrame:
        totals = (
            ideal_ranking(plan, pairs)
            .group_by("_user")
            .agg(
                pl.len().cast(pl.Float64).alias(names[0]),
                pl.col("_idcg").last().alias(names[1]),
                pl.col("_ig").sum().alias(names[2]),
            )
        )
        return frame.join(totals, on="_user", how="left").with_columns(
            pl.col(list(names)).fill_null(0.0)
        )

    plan.after.setdefault(f"ideal[{key}]", join)
    return tuple(pl.col(name) for name in names)


def ideal_at_rows(
    plan: Plan, key: str, pairs: tuple[tuple[str, float], ...]
) -> tuple[pl.Expr, pl.Expr, pl.Expr]:
    """Per row: positive-gain positions of the query, ideal DCG and cost there.

    Looked up at min(rank, positions) (row joins; only ndcg_rel and G need them).
    """
    names = (f"_rnpos[{key}]", f"_ridcg[{key}]", f"_rcost[{key}]")

    def join(rows: pl.LazyFrame) -> pl.LazyFrame:
        ideal = ideal_ranking(plan, pairs)
        npos = ideal.group_by("_user").agg(pl.len().cast(pl.Int64).alias(names[0]))
        rows = rows.join(npos, on="_user", how="left").with_columns(pl.col(names[0]).fill_null(0))
        at = ideal.select(
            "_user",
            pl.col("_pos").alias("_ipos"),
            pl.col("_idcg").alias(names[1]),
            pl.col("_cost").alias(names[2]),
        )
        rows = rows.with_columns(
            _ipos=pl.min_horizontal(pl.col("_rank").cast(pl.Int64), pl.col(names[0]))
        )
        return rows.join(at, on=["_user", "_ipos"], how="left").drop("_ipos")

    plan.row_joins.setdefault(f"ideal_rows[{key}]", join)
    return tuple(pl.col(name) for name in names)  # type: ignore[return-value]


def persistence(pairs: tuple[tuple[str, float], ...]) -> float:
    """Rbp's ``p=`` parameter; trec_eval's default 0.9."""
    for key, value in pairs:
        if key == "p":
            return value
    return 0.9  # trec_eval's default persistence
