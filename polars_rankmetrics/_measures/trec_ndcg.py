"""trec_eval's graded measures, the ndcg family, for ``rankmetrics trec``.

``dcg``, ``ideal_dcg``, ``ndcg``, ``ndcg_rel``, ``Rndcg`` and ``G`` with
trec_eval's gains (the grade, or ``ndcg.grade=gain,...``), and ``ndcg_cut_k``
(grades >= 1 as gains), as trec_eval 10.0 computes them (``m_*.c``); formulas
in ``docs/trec-measures.md``:

    dcg = Σ_{r=1..n} g_r / log2(r + 1),  ndcg = dcg / ideal_dcg

with g_r the gain of the document at rank r and ideal_dcg the dcg of the
judged documents sorted by gain.

Notes
-----
Gains are the grades unless ``ndcg.grade=gain,...`` maps them (gains may
be 0 or negative); unjudged documents gain 0; the ideal ranking holds the
judged documents of positive gain, gain descending. A query with
ideal_dcg = 0 has ndcg 0. ``ndcg`` and ``ndcg_cut_k`` name the ``evaluate``
metric strings with the same value under ``conventions="trec"``.

References
----------
Järvelin & Kekäläinen, "Cumulated gain-based evaluation of IR techniques",
TOIS 2002; trec_eval 10.0 ``m_ndcg.c``, ``m_ndcg_cut.c``, ``m_ndcg_rel.c``,
``m_Rndcg.c``, ``m_G.c``.
"""

from __future__ import annotations

import polars as pl

from polars_rankmetrics import _formulas as formula
from polars_rankmetrics._measures._registry import TrecFamily, register_trec
from polars_rankmetrics._measures._trec_plan import (
    KEYS,
    Plan,
    R,
    Request,
    code,
    ideal_at_rows,
    ideal_ranking,
    ideal_totals,
    num_ret,
    rank,
    row_gain,
)


def ndcg_family(plan: Plan, request: Request) -> None:
    """dcg, ideal_dcg, ndcg, ndcg_rel, Rndcg and G with trec_eval's gains."""
    key, gain = row_gain(plan, request.pairs)
    discounted = gain / formula.discount(rank)
    dcg = plan.agg(f"_dcg[{key}]", discounted.filter(gain != 0).sum())
    npos, idcg, ideal_sum = ideal_totals(plan, key, request.pairs)
    name = request.names[0]
    family = request.family
    if family == "dcg":
        plan.final[name] = dcg
    elif family == "ideal_dcg":
        plan.final[name] = idcg
    elif family == "ndcg":
        plan.final[name] = formula.ndcg(dcg, idcg).fill_null(0.0)
    elif family == "ndcg_rel":
        running = plan.row(f"_dcgcum[{key}]", discounted.cum_sum().over(KEYS))
        _, idcg_at, _ = ideal_at_rows(plan, key, request.pairs)
        at_rel = plan.agg(f"_ndcgrel[{key}]", (running / idcg_at).filter(gain > 0).sum())
        n_rel_ret = plan.agg(f"_nposret[{key}]", (gain > 0).sum().cast(pl.Float64))
        total = at_rel + (npos - n_rel_ret) * dcg / idcg
        plan.final[name] = pl.when((npos > 0) & (total > 0)).then(total / npos).otherwise(0.0)
    elif family == "G":
        results = plan.row(f"_gcum[{key}]", gain.cum_sum().over(KEYS))
        npos_row, _, cost_at = ideal_at_rows(plan, key, request.pairs)
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
        ideal = ideal_ranking(plan, pairs)
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
            f"_dcgcut{k}", (code / formula.discount(rank)).filter((code > 0) & (rank <= k)).sum()
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
                    (pl.col("_g") / formula.discount(pl.col("_pos")))
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
        # trec_eval prints the DCG itself when the ideal DCG is 0
        plan.final[name] = pl.coalesce(formula.ndcg(dcg, ideal), dcg)


register_trec(TrecFamily("G", 20, ndcg_family, "p_pair"))
register_trec(TrecFamily("dcg", 21, ndcg_family, "p_pair", sets=()))
register_trec(TrecFamily("ideal_dcg", 22, ndcg_family, "p_pair", sets=()))
register_trec(TrecFamily("ndcg", 23, ndcg_family, "p_pair", metric="ndcg"))
register_trec(TrecFamily("ndcg_rel", 24, ndcg_family, "p_pair"))
register_trec(TrecFamily("Rndcg", 25, ndcg_family, "p_pair"))
register_trec(
    TrecFamily(
        "ndcg_cut", 26, ndcg_cut, "cut_long",
        (5.0, 10.0, 15.0, 20.0, 30.0, 100.0, 200.0, 500.0, 1000.0), metric="ndcg@{k}",
    )
)  # fmt: skip
