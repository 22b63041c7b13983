"""trec_eval's measures as Polars expressions, one function per measure family.

Each family function takes the plan being built (:class:`Plan`) and the
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

__all__ = ["FAMILIES", "KEYS", "Plan", "Request"]

KEYS = ["_run", "_user"]
MIN_GEO_MEAN = 0.00001  # trec_eval's floor before the log of gm_map and gm_bpref
INFAP_EPSILON = 0.00001

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
    log_scale: set[str] = field(default_factory=set)

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


def _cumulative(flag: pl.Expr) -> pl.Expr:
    return flag.cast(pl.Int64).cum_sum().over(KEYS).cast(pl.Float64)


def hits_at(cutoff: pl.Expr | float) -> pl.Expr:
    """Relevant documents at ranks <= cutoff."""
    return (rel & (rank <= cutoff)).sum().cast(pl.Float64)


def _when_positive(test: pl.Expr, value: pl.Expr) -> pl.Expr:
    return pl.when(test > 0).then(value).otherwise(0.0)


# ---------------------------------------------------------------- counts and sets


def counts(plan: Plan, request: Request) -> None:
    """num_q, num_ret, num_rel, num_rel_ret, num_nonrel_judged_ret."""
    name = request.names[0]
    plan.value(
        name,
        {
            "num_q": pl.lit(1.0),
            "num_ret": num_ret,
            "num_rel": R,
            "num_rel_ret": num_rel_ret,
            "num_nonrel_judged_ret": ((code >= 0) & ~rel).sum().cast(pl.Float64),
        }[request.family],
    )


def set_measures(plan: Plan, request: Request) -> None:
    """set_P, set_relative_P, set_recall, set_map, set_F: the retrieved set, unranked."""
    name = request.names[0]
    r, n = num_rel_ret, num_ret
    if request.family == "set_P":
        plan.value(name, _when_positive(n, r / n))
    elif request.family == "set_relative_P":
        plan.value(name, _when_positive(pl.min_horizontal(n, R), r / pl.min_horizontal(n, R)))
    elif request.family == "set_recall":
        plan.value(name, _when_positive(R, r / R))
    elif request.family == "set_map":
        plan.value(name, _when_positive(n * R, r * r / (n * R)))
    else:  # set_F
        beta = request.values[0]
        precision, recall = r / n, r / R
        f = (beta + 1.0) * precision * recall / (beta * precision + recall)
        plan.value(name, _when_positive(r, f))


def utility(plan: Plan, request: Request) -> None:
    """A * rel_ret + b * nonrel_ret + c * rel_not_ret + d * nonrel_not_ret."""
    if len(request.values) != 4:
        raise ValueError(
            f"utility takes 4 coefficients (e.g. utility.1,-1,0,0), got {len(request.values)}"
        )
    a, b, c, d = request.values
    r, n = num_rel_ret, num_ret
    # trec_eval's collection size (-N) is 0 unless given
    plan.value(request.names[0], a * r + b * (n - r) + c * (R - r) + d * (r - n - R))


# ---------------------------------------------------------------- ranked, binary


def average_precision(plan: Plan, cutoff: float | None = None) -> pl.Expr:
    """Sum of precision at each relevant document (to the cutoff) over all relevant."""
    plan.row("_found", _cumulative(rel))
    take = rel if cutoff is None else rel & (rank <= cutoff)
    total = (found / rank).filter(take).sum()
    return pl.when(take.any()).then(total / R).otherwise(0.0)


def map_family(plan: Plan, request: Request) -> None:
    """map, gm_map (log of AP, floored), map_cut_k."""
    if request.family == "map":
        plan.value(request.names[0], average_precision(plan))
    elif request.family == "gm_map":
        ap = average_precision(plan)
        plan.value(request.names[0], pl.max_horizontal(ap, MIN_GEO_MEAN).log())
        plan.log_scale.add(request.names[0])
    else:
        for name, k in zip(request.names, request.cutoffs, strict=True):
            plan.value(name, _when_positive(R, average_precision(plan, k)))


def precision_family(plan: Plan, request: Request) -> None:
    """P_k, recall_k, relative_P_k, success_k, unj_k: counts in the top k."""
    for name, k in zip(request.names, request.cutoffs, strict=True):
        hits = hits_at(k)
        if request.family == "P":
            value = hits / k
        elif request.family == "recall":
            value = _when_positive(R, hits / R)
        elif request.family == "relative_P":
            value = _when_positive(R, hits / pl.min_horizontal(R, k))
        elif request.family == "success":
            value = (hits > 0).cast(pl.Float64)
        else:  # unj: documents without a judgement in the top k
            value = ((code < 0) & (rank <= k)).sum().cast(pl.Float64) / k
        plan.value(name, value)


def r_precision(plan: Plan, request: Request) -> None:
    """Rprec: precision at R (relevant in the top min(R, num_ret), over R)."""
    look = pl.min_horizontal(num_ret, R)
    plan.value(request.names[0], _when_positive(look, hits_at(look) / R))


def rprec_mult(plan: Plan, request: Request) -> None:
    """Rprec_mult_x: precision at floor(x * R + 0.9) documents."""
    for name, fraction in zip(request.names, request.cutoffs, strict=True):
        cutoff = (fraction * R + 0.9).floor()
        plan.value(name, _when_positive(cutoff, hits_at(cutoff) / cutoff))


def recip_rank(plan: Plan, request: Request) -> None:
    """1 / rank of the first relevant document."""
    plan.value(request.names[0], (1.0 / rank.filter(rel).min()).fill_null(0.0))


def _interpolated(plan: Plan, fraction: float) -> pl.Expr:
    """Interpolated precision at recall ``fraction``.

    The best precision at or after the lround(fraction * R)-th relevant document
    (the first for 0); 0 past the relevant documents retrieved.
    """
    plan.row("_found", _cumulative(rel))
    wanted = pl.max_horizontal((fraction * R).round(0, mode="half_away_from_zero"), 1.0)
    return (found / rank).filter(rel & (found >= wanted)).max().fill_null(0.0)


def iprec_family(plan: Plan, request: Request) -> None:
    """iprec_at_recall_x and 11pt_avg (mean over the recall levels)."""
    if request.family == "iprec_at_recall":
        for name, fraction in zip(request.names, request.cutoffs, strict=True):
            plan.value(name, _interpolated(plan, fraction))
        return
    if not request.values:
        raise ValueError("11pt_avg needs at least one recall level")
    # trec_eval walks the levels in ascending order (they are given that way)
    levels = sorted(request.values)
    plan.value(
        request.names[0], pl.sum_horizontal([_interpolated(plan, x) for x in levels]) / len(levels)
    )


def _judged_flags(plan: Plan) -> tuple[pl.Expr, pl.Expr, pl.Expr]:
    """Relevant judged rows, judged non-relevant seen so far, pooled-unjudged seen so far."""
    nonrel = (code >= 0) & ~rel
    nonrel_seen = plan.row("_nonrel_seen", _cumulative(nonrel))
    unjudged_seen = plan.row("_unjudged_seen", _cumulative(code == -2))
    return judged_rel, nonrel_seen, unjudged_seen


def bpref(plan: Plan, request: Request) -> None:
    """Bpref and gm_bpref (its log, for the geometric mean).

    Each relevant document adds 1 - min(judged non-relevant above it, R) /
    min(judged non-relevant, R); the sum is divided by R.
    """
    relevant, nonrel_seen, _ = _judged_flags(plan)
    nonrel_all = pl.col("_NN").first().cast(pl.Float64)
    share = pl.min_horizontal(nonrel_seen, R) / pl.min_horizontal(nonrel_all, R)
    term = pl.when(nonrel_seen > 0).then(1.0 - share).otherwise(1.0)
    total = term.filter(relevant).sum()
    value = pl.when(R > 0).then(total / R).otherwise(total)
    if request.family == "gm_bpref":
        value = pl.max_horizontal(value, MIN_GEO_MEAN).log()
        plan.log_scale.add(request.names[0])
    plan.value(request.names[0], value)


def inf_ap(plan: Plan, request: Request) -> None:
    """InfAP (Yilmaz & Aslam): AP estimated from a judged sample of the pool."""
    relevant, nonrel_seen, unjudged_seen = _judged_flags(plan)
    rel_seen = plan.row("_jrel_seen", _cumulative(judged_rel))
    j = rank - 1.0
    above = (rel_seen - 1.0 + nonrel_seen + unjudged_seen) / j
    share = (rel_seen - 1.0 + INFAP_EPSILON) / (rel_seen - 1.0 + nonrel_seen + 2 * INFAP_EPSILON)
    term = pl.when(j == 0).then(1.0).otherwise(1.0 / (j + 1.0) + (j / (j + 1.0)) * above * share)
    total = term.filter(relevant).sum()
    plan.value(request.names[0], pl.when(R > 0).then(total / R).otherwise(total))


def bin_g(plan: Plan, request: Request) -> None:
    """binG: 1 / log2(2 + non-relevant above) per relevant document, over R."""
    plan.row("_found", _cumulative(rel))
    total = (1.0 / (2.0 + rank - found).log(2)).filter(rel).sum()
    plan.value(request.names[0], pl.when(rel.any()).then(total / R).otherwise(0.0))


def relstring(plan: Plan, request: Request) -> None:
    """Relstring: one character per document of the top N.

    The grade, '>' above 9, '-' not in the qrels, '.' pooled but unjudged.
    """
    length = max(int(request.values[0]), 0) if request.values else 10
    char = plan.row(
        "_char",
        pl.when(code > 9)
        .then(pl.lit(">"))
        .when(code >= 0)
        .then(code.cast(pl.String))
        .when(code == -1)
        .then(pl.lit("-"))
        .when(code == -2)
        .then(pl.lit("."))
        .otherwise(pl.lit("<")),
    )
    plan.text[request.names[0]] = plan.agg(f"={request.names[0]}", char.head(length).str.join(""))


# ---------------------------------------------------------------- graded: the ndcg family


def _gain_expr(pairs: tuple[tuple[str, float], ...], column: pl.Expr) -> pl.Expr:
    """Gain of a grade: the grade itself unless a 'grade=gain' parameter sets it."""
    custom = _custom_gains(pairs)
    expr = column.cast(pl.Float64)
    for grade, gain in custom.items():
        expr = pl.when(column == grade).then(pl.lit(gain)).otherwise(expr)
    return expr


def _custom_gains(pairs: tuple[tuple[str, float], ...]) -> dict[int, float]:
    custom: dict[int, float] = {}
    for key, gain in pairs:
        text = key[1:] if key[:1] in "+-" else key
        if text.isdigit():  # trec_eval ignores other names (rbp's 'p')
            custom.setdefault(int(key), gain)
    return custom


def _gain_key(pairs: tuple[tuple[str, float], ...]) -> str:
    custom = _custom_gains(pairs)
    return "_".join(f"{k}:{v!r}" for k, v in sorted(custom.items())) or "default"


def _row_gain(plan: Plan, pairs: tuple[tuple[str, float], ...]) -> tuple[str, pl.Expr]:
    key = _gain_key(pairs)
    gain = plan.row(f"_gain[{key}]", pl.when(code < 0).then(0.0).otherwise(_gain_expr(pairs, code)))
    return key, gain


def _ideal(plan: Plan, pairs: tuple[tuple[str, float], ...]) -> pl.LazyFrame:
    """The ideal ranking of each query.

    Judged documents of positive gain, gain descending, with position ``_pos``
    and running sums of discounted gain and of cost (gain, at least 1).
    """
    gain = _gain_expr(pairs, pl.col("_grade"))
    ideal = (
        plan.judged.filter(pl.col("_grade") >= 0)
        .select("_user", gain.alias("_ig"))
        .filter(pl.col("_ig") > 0)
        .sort("_user", "_ig", descending=[False, True])
        .with_columns(_pos=pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over("_user"))
    )
    return ideal.with_columns(
        _idcg=(pl.col("_ig") / (pl.col("_pos") + 1).cast(pl.Float64).log(2))
        .cum_sum()
        .over("_user"),
        _cost=pl.max_horizontal(pl.col("_ig"), 1.0).cum_sum().over("_user"),
    )


def _ideal_totals(
    plan: Plan, key: str, pairs: tuple[tuple[str, float], ...]
) -> tuple[pl.Expr, ...]:
    """Per query: positions of positive gain, ideal DCG, total ideal gain (joined after)."""
    names = (f"_npos[{key}]", f"_itot[{key}]", f"_isum[{key}]")

    def join(frame: pl.LazyFrame, _queries: pl.LazyFrame) -> pl.LazyFrame:
        totals = (
            _ideal(plan, pairs)
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


def _ideal_at_rows(
    plan: Plan, key: str, pairs: tuple[tuple[str, float], ...]
) -> tuple[pl.Expr, pl.Expr, pl.Expr]:
    """Per row: positive-gain positions of the query, ideal DCG and cost there.

    Looked up at min(rank, positions) (row joins; only ndcg_rel and G need them).
    """
    names = (f"_rnpos[{key}]", f"_ridcg[{key}]", f"_rcost[{key}]")

    def join(rows: pl.LazyFrame) -> pl.LazyFrame:
        ideal = _ideal(plan, pairs)
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


def ndcg_family(plan: Plan, request: Request) -> None:
    """dcg, ideal_dcg, ndcg, ndcg_rel, Rndcg and G with trec_eval's gains."""
    key, gain = _row_gain(plan, request.pairs)
    discounted = gain / (rank + 1.0).log(2)
    dcg = plan.agg(f"_dcg[{key}]", discounted.filter(gain != 0).sum())
    npos, idcg, ideal_sum = _ideal_totals(plan, key, request.pairs)
    name = request.names[0]
    family = request.family
    if family == "dcg":
        plan.final[name] = dcg
    elif family == "ideal_dcg":
        plan.final[name] = idcg
    elif family == "ndcg":
        plan.final[name] = pl.when(idcg > 0).then(dcg / idcg).otherwise(0.0)
    elif family == "ndcg_rel":
        running = plan.row(f"_dcgcum[{key}]", discounted.cum_sum().over(KEYS))
        _, idcg_at, _ = _ideal_at_rows(plan, key, request.pairs)
        at_rel = plan.agg(f"_ndcgrel[{key}]", (running / idcg_at).filter(gain > 0).sum())
        n_rel_ret = plan.agg(f"_nposret[{key}]", (gain > 0).sum().cast(pl.Float64))
        total = at_rel + (npos - n_rel_ret) * dcg / idcg
        plan.final[name] = pl.when((npos > 0) & (total > 0)).then(total / npos).otherwise(0.0)
    elif family == "G":
        results = plan.row(f"_gcum[{key}]", gain.cum_sum().over(KEYS))
        npos_row, _, cost_at = _ideal_at_rows(plan, key, request.pairs)
        # past the ideal's positive gains every position costs 1
        cost = cost_at.fill_null(0.0) + pl.max_horizontal(rank - npos_row, 0.0)
        term = (gain / (2.0 + cost - results).log(2)).filter(gain != 0).sum()
        g = plan.agg(f"_G[{key}]", term)
        plan.final[name] = pl.when(ideal_sum > 0).then(g / ideal_sum).otherwise(0.0)
    else:
        _rndcg(plan, request, key=key, discounted=discounted, npos=npos, dcg=dcg, idcg=idcg)


def _rndcg(
    plan: Plan,
    request: Request,
    *,
    key: str,
    discounted: pl.Expr,
    npos: pl.Expr,
    dcg: pl.Expr,
    idcg: pl.Expr,
) -> None:
    """Rndcg: mean ndcg at each position where the ideal gain changes."""
    running = plan.row(f"_dcgcum[{key}]", discounted.cum_sum().over(KEYS))
    points, total = f"_rn_points[{key}]", f"_rn_total[{key}]"
    pairs = request.pairs

    def join(frame: pl.LazyFrame, rows: pl.LazyFrame) -> pl.LazyFrame:
        ideal = _ideal(plan, pairs)
        # the last position of each run of equal ideal gain (the last one included)
        ends = ideal.filter(
            pl.col("_ig") != pl.col("_ig").shift(-1, fill_value=0.0).over("_user")
        ).select("_user", pl.col("_pos").alias("_end"), pl.col("_idcg").alias("_end_idcg"))
        lengths = rows.group_by(KEYS).agg(pl.len().cast(pl.Int64).alias("_n"))
        at = (
            lengths.join(ends, on="_user")
            .with_columns(_at=pl.min_horizontal("_end", "_n"))
            .join(
                rows.select(
                    *KEYS, pl.col("_rank").cast(pl.Int64).alias("_at"), running.alias("_d")
                ),
                on=[*KEYS, "_at"],
                how="left",
            )
            .group_by(KEYS)
            .agg(
                (pl.col("_d").fill_null(0.0) / pl.col("_end_idcg")).sum().alias(total),
                pl.len().cast(pl.Float64).alias(points),
            )
        )
        return frame.join(at, on=KEYS, how="left").with_columns(
            pl.col(total, points).fill_null(0.0)
        )

    plan.after.setdefault(f"rndcg[{key}]", join)
    n = plan.agg("_n_ret", num_ret)
    # trec_eval adds the end of the list when it lies past the ideal's positive gains
    tail = (npos + 1.0 < n) & (npos > 0) & (idcg > 0)
    total_all = pl.col(total) + pl.when(tail).then(dcg / idcg).otherwise(0.0)
    points_all = pl.col(points) + tail.cast(pl.Float64)
    value = pl.when(pl.col("_R_q") > 0).then(total_all / points_all).otherwise(0.0)
    plan.agg("_R_q", R)
    plan.final[request.names[0]] = value


def ndcg_cut(plan: Plan, request: Request) -> None:
    """ndcg_cut_k: DCG of the grades in the top k over the ideal DCG at k (grades >= 1)."""
    for name, k in zip(request.names, request.cutoffs, strict=True):
        dcg = plan.agg(
            f"_dcgcut{k}", (code / (rank + 1.0).log(2)).filter((code > 0) & (rank <= k)).sum()
        )
        ideal_name = f"_idcgcut{k}"

        def join(
            frame: pl.LazyFrame, _rows: pl.LazyFrame, k: float = k, col: str = ideal_name
        ) -> pl.LazyFrame:
            ideal = (
                plan.judged.filter(pl.col("_grade") >= 1)
                .select("_user", pl.col("_grade").cast(pl.Float64).alias("_g"))
                .sort("_user", "_g", descending=[False, True])
                .with_columns(_pos=pl.int_range(1, pl.len() + 1).over("_user"))
                .group_by("_user")
                .agg(
                    (pl.col("_g") / (pl.col("_pos") + 1).cast(pl.Float64).log(2))
                    .filter(pl.col("_pos") <= k)
                    .sum()
                    .alias(col)
                )
            )
            return frame.join(ideal, on="_user", how="left").with_columns(
                pl.col(col).fill_null(0.0)
            )

        plan.after.setdefault(ideal_name, join)
        ideal = pl.col(ideal_name)
        plan.final[name] = pl.when(ideal > 0).then(dcg / ideal).otherwise(dcg)


# ---------------------------------------------------------------- rank-biased precision


def _persistence(pairs: tuple[tuple[str, float], ...]) -> float:
    for key, value in pairs:
        if key == "p":
            return value
    return 0.9  # trec_eval's default persistence


def rbp(plan: Plan, request: Request) -> None:
    """Rank-biased precision and its residual.

    rbp: (1 - p) * sum of gain * p^(rank - 1), gains rescaled to [0, 1] per
    query; rbp_resid: the weight of the unjudged documents plus that of the
    rest of the list.
    """
    p = _persistence(request.pairs)
    weight = pl.lit(p).pow(rank - 1.0)
    name = request.names[0]
    if request.family == "rbp_resid":
        unjudged = code < 0
        resid = pl.lit(p).pow(num_ret) + (1.0 - p) * weight.filter(unjudged).sum()
        plan.value(name, pl.when(unjudged.any()).then(resid).otherwise(0.0))
        return
    custom = _custom_gains(request.pairs)
    levels = pl.col("_L").first()
    # trec_eval's gain table: every grade below _L (gain = grade unless set) and the
    # grades given; rescaled when a gain lies outside [0, 1]
    if custom:
        free = (
            pl.int_ranges(0, levels)
            .list.eval(pl.element().filter(~pl.element().is_in(list(custom))))
            .list.max()
        )
        high = pl.max_horizontal(free.cast(pl.Float64).fill_null(0.0), max(custom.values()), 0.0)
        low = pl.lit(min(0.0, *custom.values()))
    else:
        high = pl.max_horizontal((levels - 1).cast(pl.Float64), 0.0)
        low = pl.lit(0.0)
    gain = _gain_expr(request.pairs, code)
    scaled = pl.when((low < 0) | (high > 1)).then((gain - low) / (high - low)).otherwise(gain)
    scaled = pl.when(code < 0).then(0.0).otherwise(scaled)
    plan.value(name, (1.0 - p) * (scaled * weight).sum())


FAMILIES: dict[str, Callable[[Plan, Request], None]] = {
    "num_q": counts,
    "num_ret": counts,
    "num_rel": counts,
    "num_rel_ret": counts,
    "map": map_family,
    "gm_map": map_family,
    "Rprec": r_precision,
    "bpref": bpref,
    "recip_rank": recip_rank,
    "iprec_at_recall": iprec_family,
    "P": precision_family,
    "relstring": relstring,
    "recall": precision_family,
    "infAP": inf_ap,
    "gm_bpref": bpref,
    "Rprec_mult": rprec_mult,
    "utility": utility,
    "11pt_avg": iprec_family,
    "binG": bin_g,
    "G": ndcg_family,
    "dcg": ndcg_family,
    "ideal_dcg": ndcg_family,
    "ndcg": ndcg_family,
    "ndcg_rel": ndcg_family,
    "Rndcg": ndcg_family,
    "ndcg_cut": ndcg_cut,
    "map_cut": map_family,
    "relative_P": precision_family,
    "success": precision_family,
    "set_P": set_measures,
    "set_relative_P": set_measures,
    "set_recall": set_measures,
    "set_map": set_measures,
    "set_F": set_measures,
    "num_nonrel_judged_ret": counts,
    "rbp": rbp,
    "rbp_resid": rbp,
    "unj": precision_family,
}
