"""trec_eval's measures over a run and qrels, and its printed layout.

:func:`trec_eval` computes ``map``, ``P_5``, ``ndcg_cut_10``, ``num_rel_ret``...
per query and for ``all`` as trec_eval 10.0 does, from the frames of
:func:`polars_rankmetrics.trec.read_trec_run` and
:func:`polars_rankmetrics.trec.read_trec_qrels`; :func:`format_trec_eval` prints
them in trec_eval's layout. All three are re-exported by
:mod:`polars_rankmetrics.trec`, where they are documented for users.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from polars_rankmetrics._textfiles import require_frame_columns
from polars_rankmetrics.evaluate import evaluate

__all__ = ["TrecMeasure", "format_trec_eval", "parse_trec_measures", "trec_eval"]


# trec_eval's measure table order (the order it prints), for the measures the package has
_ORDER = (
    "runid",
    "num_q",
    "num_ret",
    "num_rel",
    "num_rel_ret",
    "map",
    "Rprec",
    "recip_rank",
    "P",
    "recall",
    "ndcg",
    "ndcg_cut",
    "map_cut",
    "success",
)
_CUTOFF_FAMILIES = {
    "P": "precision",
    "recall": "recall",
    "ndcg_cut": "ndcg",
    "map_cut": "map",
    "success": "hit_rate",
}
_PLAIN = {"map": "map", "Rprec": "r_precision", "recip_rank": "mrr", "ndcg": "ndcg"}
_COUNTS = ("num_q", "num_ret", "num_rel", "num_rel_ret")
_DEFAULT_CUTOFFS = {"success": (1, 5, 10)}
_LONG_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
# the supported part of trec_eval's default ("official") set and of -m all_trec
_OFFICIAL = ("runid", *_COUNTS, "map", "Rprec", "recip_rank", "P")
_ALL_TREC = tuple(_ORDER)


@dataclass(frozen=True)
class TrecMeasure:
    """One trec_eval measure: its printed name and the package metric behind it.

    Attributes
    ----------
    name
        As trec_eval prints it: ``"map"``, ``"P_5"``, ``"ndcg_cut_10"``, ``"num_rel"``.
    family
        The measure without its cutoff: ``"P"``, ``"ndcg_cut"``, ``"num_rel"``.
    cutoff
        The cutoff, or None.
    metric
        The :func:`polars_rankmetrics.evaluate` metric string (``"precision@5"``,
        ``"ndcg@10"``, ``"mrr"``), or None for the counts and ``runid``.
    """

    name: str
    family: str
    cutoff: int | None
    metric: str | None


def _measure(family: str, cutoff: int | None) -> TrecMeasure:
    if cutoff is not None:
        base = _CUTOFF_FAMILIES[family]
        return TrecMeasure(f"{family}_{cutoff}", family, cutoff, f"{base}@{cutoff}")
    return TrecMeasure(family, family, None, _PLAIN.get(family))


def _parse_cutoffs(text: str, spec: str) -> list[int]:
    cutoffs = []
    for part in text.split(","):
        try:
            # trec_eval reads cutoffs as numbers and truncates them (23.4 -> 23)
            value = int(float(part))
        except ValueError:
            raise ValueError(f"cannot read cutoff {part!r} in measure {spec!r}") from None
        if value < 1:
            raise ValueError(f"cutoffs must be >= 1, got {part!r} in measure {spec!r}")
        cutoffs.append(value)
    return cutoffs


def parse_trec_measures(measures: str | Sequence[str] | None = None) -> list[TrecMeasure]:
    """Parse trec_eval ``-m`` arguments into measures, in the order trec_eval prints them.

    Parameters
    ----------
    measures
        Names as trec_eval takes them: ``"map"``, ``"P"`` (default cutoffs),
        ``"P.5,10"`` (cutoffs; ``"ndcg_cut.23.4"`` truncates to 23 as trec_eval
        does), ``"official"`` (the default set), ``"all_trec"``; flat names
        such as ``"P_5"`` are accepted too. ``None``: ``"official"``.

    Returns
    -------
    The measures, de-duplicated, cutoffs ascending, in trec_eval's table order.

    Notes
    -----
    Supported: ``runid``, ``num_q``, ``num_ret``, ``num_rel``, ``num_rel_ret``,
    ``map``, ``map_cut``, ``Rprec``, ``recip_rank``, ``P``, ``recall``, ``ndcg``,
    ``ndcg_cut`` and ``success``. ``"official"`` and ``"all_trec"`` expand to the
    supported part of trec_eval's sets (no ``bpref``, ``gm_map``, ``iprec_at_recall``...).

    Examples
    --------
    >>> [m.name for m in parse_trec_measures(["ndcg_cut.10", "map", "P.5,3"])]
    ['map', 'P_3', 'P_5', 'ndcg_cut_10']
    >>> parse_trec_measures("success_5")
    [TrecMeasure(name='success_5', family='success', cutoff=5, metric='hit_rate@5')]
    """
    given = (
        ["official"]
        if measures is None
        else [measures]
        if isinstance(measures, str)
        else list(measures)
    )
    chosen: dict[str, set[int | None]] = {}
    for spec in given:
        family, _, params = spec.partition(".")
        flat = re.fullmatch(r"(P|recall|ndcg_cut|map_cut|success)_(\d+)", spec)
        if flat:
            family, params = flat.group(1), flat.group(2)
        if family in ("official", "all_trec") and not params:
            for name in _OFFICIAL if family == "official" else _ALL_TREC:
                chosen.setdefault(name, set()).update(_default_cutoffs(name))
        elif family in _CUTOFF_FAMILIES:
            cutoffs = _parse_cutoffs(params, spec) if params else _default_cutoffs(family)
            chosen.setdefault(family, set()).update(cutoffs)
        elif family in _ORDER and not params:
            chosen.setdefault(family, set()).add(None)
        else:
            known = ", ".join(_ORDER)
            raise ValueError(
                f"unsupported trec_eval measure {spec!r}; supported: {known} "
                "(cutoff measures as 'P.5,10' or 'P_5'), 'official', 'all_trec'"
            )
    return [
        _measure(family, cutoff)
        for family in _ORDER
        if family in chosen
        for cutoff in sorted(chosen[family], key=lambda c: -1 if c is None else c)
    ]


def _default_cutoffs(family: str) -> list[int | None]:
    if family in _CUTOFF_FAMILIES:
        return list(_DEFAULT_CUTOFFS.get(family, _LONG_CUTOFFS))
    return [None]


# ---------------------------------------------------------------- evaluation


def _as_frame(frame: pl.DataFrame | pl.LazyFrame) -> pl.DataFrame:
    return frame.collect() if isinstance(frame, pl.LazyFrame) else frame


def trec_eval(
    qrels: pl.DataFrame | pl.LazyFrame,
    run: pl.DataFrame | pl.LazyFrame,
    measures: str | Sequence[str] | None = None,
    *,
    per_query: bool = False,
    complete: bool = False,
    relevance_level: float = 1,
    user: str = "user",
    item: str = "item",
    score: str | None = "score",
    rank: str = "rank",
    relevance: str | None = "rel",
) -> pl.DataFrame:
    r"""Compute trec_eval measures for a run against qrels, in trec_eval's layout.

    The rank-based measures come from :func:`polars_rankmetrics.evaluate` with
    ``conventions="trec"`` (AP over all relevant documents, ranks from the
    score with ties by document id descending); the counts (``num_q``,
    ``num_ret``, ``num_rel``, ``num_rel_ret``) are computed here.

    Parameters
    ----------
    qrels, run
        Frames as :func:`read_trec_qrels` and :func:`read_trec_run` return them.
    measures
        trec_eval ``-m`` names (see :func:`parse_trec_measures`); ``None``:
        the supported part of trec_eval's default set.
    per_query
        trec_eval ``-q``: also one row per query and measure.
    complete
        trec_eval ``-c``: average over every query of the qrels; a query the
        run lacks scores 0. Default: the queries of both the qrels and the run.
    relevance_level
        trec_eval ``-l``: the lowest grade the binary measures count as
        relevant. NDCG keeps the raw grades.
    user, item, score, rank, relevance
        Column roles. ``score=None`` ranks by the ``rank`` column instead of the
        score; ``relevance=None`` makes every qrels row relevant.

    Returns
    -------
    Columns ``measure``, ``query`` (the query id, or ``"all"`` for the summary)
    and ``value`` (Float64): per-query rows first (queries sorted, measures in
    trec_eval's order), then the ``all`` rows. ``all`` is the mean over the
    evaluated queries, except ``num_q`` (their number) and the other counts
    (sums). ``runid`` has no value and is left to :func:`format_trec_eval`.

    Notes
    -----
    Evaluated queries: those with at least one qrels line (judged, even if no
    document is relevant) and a run (or, with ``complete``, every query of the
    qrels). A query without relevant documents scores 0 on every measure and
    counts in the mean, as in trec_eval. Relevant means a grade > 0 and >= the
    level (trec_eval with ``-l`` <= 0 would also count judged non-relevant
    documents; that case is not reproduced).

    Examples
    --------
    >>> from polars_rankmetrics.trec import read_trec_qrels, read_trec_run
    >>> qrels = read_trec_qrels(b"q1 0 d1 1\nq1 0 d2 1\nq2 0 d5 1\n")
    >>> run = read_trec_run(b"q1 Q0 d1 1 0.9 r\nq1 Q0 d3 2 0.8 r\nq1 Q0 d2 3 0.7 r\n")
    >>> trec_eval(qrels, run, ["map", "P.2", "num_q"], per_query=True)
    shape: (5, 3)
    ┌─────────┬───────┬──────────┐
    │ measure ┆ query ┆ value    │
    │ ---     ┆ ---   ┆ ---      │
    │ str     ┆ str   ┆ f64      │
    ╞═════════╪═══════╪══════════╡
    │ map     ┆ q1    ┆ 0.833333 │
    │ P_2     ┆ q1    ┆ 0.5      │
    │ num_q   ┆ all   ┆ 1.0      │
    │ map     ┆ all   ┆ 0.833333 │
    │ P_2     ┆ all   ┆ 0.5      │
    └─────────┴───────┴──────────┘

    With ``complete=True`` (trec_eval ``-c``), q2, which the run lacks, counts as 0:

    >>> trec_eval(qrels, run, "map", complete=True)["value"].round(6).to_list()
    [0.416667]
    """
    chosen = [m for m in parse_trec_measures(measures) if m.family != "runid"]
    qrels_df = _as_frame(qrels)
    run_df = _as_frame(run)
    require_frame_columns(
        qrels_df,
        {"user": user, "item": item} | ({"relevance": relevance} if relevance else {}),
        "evaluate the qrels",
    )
    position = score if score is not None else rank
    require_frame_columns(
        run_df,
        {"user": user, "item": item, "score" if score else "rank": position},
        "evaluate the run",
    )
    # trec_eval compares ids as strings (ties: docno descending by strcmp)
    ids = [pl.col(user).cast(pl.String).alias("user"), pl.col(item).cast(pl.String).alias("item")]
    grade = pl.col(relevance).cast(pl.Float64) if relevance else pl.lit(1.0)
    judged = qrels_df.select(*ids, grade.alias("rel"))
    ranked = run_df.select(*ids, pl.col(position).alias(position))
    queries = judged.select("user").unique()
    if not complete:
        queries = queries.join(ranked.select("user").unique(), on="user", how="semi")
    ranked = ranked.join(queries, on="user", how="semi")

    relevant = judged.filter((pl.col("rel") > 0) & (pl.col("rel") >= relevance_level))
    table = (
        queries.join(ranked.group_by("user").agg(pl.len().alias("num_ret")), on="user", how="left")
        .join(relevant.group_by("user").agg(pl.len().alias("num_rel")), on="user", how="left")
        .join(
            ranked.join(relevant, on=["user", "item"], how="semi")
            .group_by("user")
            .agg(pl.len().alias("num_rel_ret")),
            on="user",
            how="left",
        )
    )
    metric_measures = [m for m in chosen if m.metric is not None]
    if metric_measures and ranked.height:
        scores = evaluate(
            ranked,
            judged,
            [m.metric for m in metric_measures if m.metric is not None],
            score=score,
            rank=position if score is None else "rank",
            relevance="rel",
            relevance_level=relevance_level,
            per_user=True,
            users_without_recs="zero" if complete else "exclude",
            conventions="trec",
        ).rename({m.metric: m.name for m in metric_measures if m.metric is not None})
        table = table.join(scores, on="user", how="left")
    missing = [pl.lit(0.0).alias(m.name) for m in metric_measures if m.name not in table.columns]
    table = table.with_columns(missing).with_columns(pl.exclude("user").fill_null(0))

    per_query_names = [m.name for m in chosen if m.family != "num_q"]
    means = [
        (pl.col(name).sum() if name in _COUNTS else pl.col(name).mean()).fill_null(0)
        for name in per_query_names
    ]
    summary = table.select(
        *([pl.len().alias("num_q")] if any(m.family == "num_q" for m in chosen) else []),
        *means,
    ).with_columns(pl.lit("all").alias("user"))
    order = {m.name: i for i, m in enumerate(chosen)}
    parts = [summary]
    # num_q alone has no per-query line (trec_eval -q prints it under "all" only)
    if per_query and per_query_names:
        parts.insert(0, table.select("user", *per_query_names).sort("user"))
    long = [
        part.with_columns(pl.exclude("user").cast(pl.Float64))
        .with_row_index("__query")
        .unpivot(index=["__query", "user"], variable_name="measure", value_name="value")
        .with_columns(pl.col("measure").replace_strict(order, return_dtype=pl.UInt32).alias("__m"))
        .sort("__query", "__m")
        .select("measure", pl.col("user").alias("query"), "value")
        for part in parts
    ]
    return pl.concat(long)


def format_trec_eval(table: pl.DataFrame, *, run_id: str | None = None) -> str:
    r"""Format :func:`trec_eval` rows as trec_eval prints them.

    One line per row, ``measure`` padded to 22 characters, a tab, the query,
    a tab and the value: counts as integers, everything else with 4 decimals.
    With ``run_id``, the ``runid`` line opens the ``all`` section.

    Examples
    --------
    >>> table = pl.DataFrame({
    ...     "measure": ["num_q", "map"], "query": ["all", "all"], "value": [3.0, 0.17854]
    ... })
    >>> print(format_trec_eval(table, run_id="STANDARD").replace("\t", " | "))
    runid                  | all | STANDARD
    num_q                  | all | 3
    map                    | all | 0.1785
    """
    lines = []
    wrote_runid = run_id is None
    for measure, query, value in table.select("measure", "query", "value").iter_rows():
        if not wrote_runid and query == "all":
            lines.append(f"{'runid':<22}\tall\t{run_id}")
            wrote_runid = True
        shown = f"{int(value)}" if measure in _COUNTS else f"{value:.4f}"
        lines.append(f"{measure:<22}\t{query}\t{shown}")
    if not wrote_runid:
        lines.append(f"{'runid':<22}\tall\t{run_id}")
    return "\n".join(lines) + ("\n" if lines else "")
