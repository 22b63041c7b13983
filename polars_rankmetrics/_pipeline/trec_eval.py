"""trec_eval's measures over runs and qrels, and its printed layout.

:func:`trec_eval` computes every measure trec_eval 10.0 computes from a TREC
run and qrels (``map``, ``P_5``, ``bpref``, ``infAP``, ``ndcg_rel``,
``relstring``...) per query and for ``all``, from the frames of
:func:`polars_rankmetrics.trec.read_trec_run` and
:func:`polars_rankmetrics.trec.read_trec_qrels`; :func:`format_trec_eval` prints
them in trec_eval's layout. The measure table is the registry's: each family
is a :class:`polars_rankmetrics._measures.TrecFamily` declared in the
:mod:`polars_rankmetrics._measures` module of its formula (the plan it fills is
:mod:`polars_rankmetrics._measures._trec_plan`); this module parses ``-m``
arguments, prepares the ranked, judged rows and averages, and names no measure.
All three public functions are re-exported by :mod:`polars_rankmetrics.trec`,
where they are documented for users.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from polars_rankmetrics._frames import AnyFrame, ArrowStream, Eager, collected, eager_caller, read
from polars_rankmetrics._measures import trec_families, trec_family
from polars_rankmetrics._measures._trec_plan import KEYS, Plan, Request
from polars_rankmetrics._sums import exact_mean, fixed_point
from polars_rankmetrics._textfiles import require_frame_columns
from polars_rankmetrics.conventions import check_level

__all__ = ["TrecMeasure", "format_trec_eval", "parse_trec_measures", "trec_eval"]

_SETS = ("official", "all_trec", "set")  # trec_eval's nicknames for sets of measures


# trec_eval's measure table (measures.c) is the registry's trec_eval families: print
# order, how parameters are parsed, defaults, the "all" summary, the sets naming them
def _nicknames() -> dict[str, list[str]]:
    families = trec_families()
    return {nick: [name for name, f in families.items() if nick in f.sets] for nick in _SETS}


def _counts() -> set[str]:
    """The measures printed as integers: those summed over queries."""
    return {name for name, f in trec_families().items() if f.summary in ("sum", "sum_qrels")}


def _flat() -> re.Pattern[str]:
    """Flat names such as P_5, for the families with integer cutoffs."""
    cut = [name for name, f in trec_families().items() if f.params == "cut_long"]
    return re.compile(f"({'|'.join(map(re.escape, cut))})_(\\d+)")


_BOGUS_DOCNO = "ceci_nest_pas_un_docno"


@dataclass(frozen=True)
class TrecMeasure:
    """One value trec_eval prints: its name, family and parameter.

    Attributes
    ----------
    name
        As trec_eval prints it: ``"map"``, ``"P_5"``, ``"iprec_at_recall_0.10"``,
        ``"ndcg_1=3,2=9"``.
    family
        trec_eval's measure: ``"P"``, ``"iprec_at_recall"``, ``"ndcg"``.
    cutoff
        The cutoff (``P_5``: 5, ``Rprec_mult_0.20``: 0.2), or None.
    metric
        The :func:`polars_rankmetrics.evaluate` metric string with the same value
        under ``conventions="trec"`` (``"precision@5"``, ``"mrr"``), or None.
    params
        The parameter text of a parameterised measure (``"2,-1,0,0"`` for
        ``utility_2,-1,0,0``), or None.
    """

    name: str
    family: str
    cutoff: int | float | None
    metric: str | None
    params: str | None = None


def _known() -> str:
    return ", ".join([*trec_families(), *_SETS])


def _leading_int(text: str, spec: str) -> int:
    # trec_eval reads cutoffs with atol: the leading integer (23.4 -> 23)
    match = re.match(r"\s*([+-]?\d+)", text)
    if not match:
        raise ValueError(f"cannot read cutoff {text!r} in measure {spec!r}")
    value = int(match.group(1))
    if value < 1:
        raise ValueError(f"cutoffs must be >= 1, got {text!r} in measure {spec!r}")
    return value


def _leading_float(text: str, spec: str) -> float:
    # trec_eval reads real parameters with atof: the leading number (.25 -> 0.25)
    match = re.match(r"\s*([+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)", text)
    if not match:
        raise ValueError(f"cannot read number {text!r} in measure {spec!r}")
    return float(match.group(1))


def _requests(measures: str | Sequence[str] | None) -> list[Request]:
    """trec_eval's -m handling: nicknames, cutoffs, parameters; print order."""
    given = (
        ["official"]
        if measures is None
        else [measures]
        if isinstance(measures, str)
        else list(measures)
    )
    if not given:
        raise ValueError(f"no measure given; known measures: {_known()}")
    table, nicknames, flat_names = trec_families(), _nicknames(), _flat()
    marked: set[str] = set()
    cutoffs: dict[str, set[float]] = {}
    params: dict[str, str] = {}
    for spec in given:
        family, dot, raw = spec.partition(".")
        flat = flat_names.fullmatch(spec)
        if flat:
            family, dot, raw = flat.group(1), ".", flat.group(2)
        if family in nicknames and not dot:
            marked.update(nicknames[family])
            continue
        if family not in table:
            raise ValueError(f"unknown trec_eval measure {spec!r}; known measures: {_known()}")
        kind = table[family].params
        if dot and not raw:
            raise ValueError(f"measure {spec!r} has an empty parameter list")
        if dot and kind == "none":
            raise ValueError(f"trec_eval measure {family!r} takes no parameters, got {spec!r}")
        marked.add(family)
        if not dot:
            continue
        if kind == "cut_long":
            values = [float(_leading_int(part, spec)) for part in raw.split(",")]
        elif kind == "cut_double":
            values = [_leading_float(part, spec) for part in raw.split(",")]
        else:
            # trec_eval keeps the first parameter list given for a measure
            params.setdefault(family, raw)
            continue
        if len(set(values)) < len(values):
            raise ValueError(f"duplicate cutoffs in measure {spec!r}")
        # cutoff lists given in several -m arguments are merged (trec_eval keeps the first)
        cutoffs.setdefault(family, set()).update(values)
    return [
        _request(family, cutoffs.get(family), params.get(family))
        for family in table
        if family in marked
    ]


def _request(family: str, cutoffs: set[float] | None, raw: str | None) -> Request:
    kind, default = trec_family(family).params, trec_family(family).defaults
    if kind == "cut_long":
        cuts = tuple(sorted(cutoffs or default))
        return Request(family, tuple(f"{family}_{int(c)}" for c in cuts), cutoffs=cuts)
    if kind == "cut_double":
        cuts = tuple(sorted(cutoffs or default))
        return Request(family, tuple(f"{family}_{c:3.2f}" for c in cuts), cutoffs=cuts)
    name = family if raw is None else f"{family}_{raw}"
    if kind == "p_double":
        values = default if raw is None else tuple(_leading_float(p, name) for p in raw.split(","))
        return Request(family, (name,), values=values)
    if kind == "p_pair":
        pairs: list[tuple[str, float]] = []
        for part in (raw or "").split(",") if raw else []:
            key, eq, value = part.partition("=")
            if not eq or not key:
                raise ValueError(f"malformed name=value parameters in measure {name!r}")
            pairs.append((key, _leading_float(value, name)))
        return Request(family, (name,), pairs=tuple(pairs))
    return Request(family, (name,))


def parse_trec_measures(measures: str | Sequence[str] | None = None) -> list[TrecMeasure]:
    """Parse trec_eval ``-m`` arguments into the values trec_eval prints, in its order.

    Parameters
    ----------
    measures
        Names as trec_eval takes them: ``"map"``, ``"P"`` (default cutoffs),
        ``"P.5,10"`` (cutoffs; ``"ndcg_cut.23.4"`` truncates to 23 as trec_eval
        does), ``"iprec_at_recall..10,.5"``, ``"utility.2,-1,0,0"``,
        ``"ndcg.1=3,2=9"`` (gains), ``"rbp.p=0.8"``, the sets ``"official"``
        (the default), ``"all_trec"`` and ``"set"``; flat names such as
        ``"P_5"`` are accepted too. ``None``: ``"official"``.

    Returns
    -------
    One :class:`TrecMeasure` per printed value, in trec_eval's table order,
    cutoffs ascending.

    Raises
    ------
    ValueError
        An unknown measure (the message lists the known ones), parameters on a
        measure that takes none, an unreadable or non-positive cutoff.

    Notes
    -----
    Cutoff lists given for one measure in several arguments are merged
    (trec_eval keeps only the first); for parameterised measures the first
    parameter list is used, as in trec_eval. Every measure of trec_eval's
    ``all_trec`` set is supported, and ``dcg`` and ``ideal_dcg``; the
    preference (``prefs_*``) and judgement-group (``*_avgjg``) measures, which
    need other qrels formats, are not.

    Examples
    --------
    >>> from polars_rankmetrics.trec import parse_trec_measures
    >>> [m.name for m in parse_trec_measures(["ndcg_cut.10", "map", "P.5,3", "bpref"])]
    ['map', 'bpref', 'P_3', 'P_5', 'ndcg_cut_10']
    >>> parse_trec_measures("success_5")
    [TrecMeasure(name='success_5', family='success', cutoff=5, metric='hit_rate@5', params=None)]
    >>> [m.name for m in parse_trec_measures(["Rprec_mult.5.0,0.2", "utility.2,-1,0,0"])]
    ['Rprec_mult_0.20', 'Rprec_mult_5.00', 'utility_2,-1,0,0']
    """
    out = []
    for request in _requests(measures):
        family = trec_family(request.family)
        if family.params in ("cut_long", "cut_double"):
            for name, cut in zip(request.names, request.cutoffs, strict=True):
                cutoff: int | float = int(cut) if family.params == "cut_long" else cut
                metric = family.metric.format(k=cutoff) if family.metric else None
                out.append(TrecMeasure(name, request.family, cutoff, metric))
        else:
            name = request.names[0]
            raw = name[len(request.family) + 1 :] if name != request.family else None
            metric = family.metric if raw is None else None
            out.append(TrecMeasure(name, request.family, None, metric, raw))
    return out


# ---------------------------------------------------------------- evaluation


def _refuse_repeats(frame: pl.DataFrame, keys: list[str], what: str, shown: list[str]) -> None:
    # a screen on 64-bit hashes of the keys; the rows are searched only when it fires
    if frame.select(pl.struct(keys).hash().n_unique()).item() == frame.height:
        return
    repeated = frame.filter(pl.len().over(keys) > 1)
    if repeated.height:
        example = dict(zip(shown, repeated.row(0), strict=False))
        raise ValueError(
            f"{what}: {repeated.height} rows repeat a (query, document) pair, which "
            f"trec_eval refuses; e.g. {example}"
        )


def trec_eval(
    qrels: AnyFrame,
    run: Eager | pl.LazyFrame | ArrowStream,
    measures: str | Sequence[str] | None = None,
    *,
    per_query: bool = False,
    complete: bool = False,
    relevance_level: float = 1,
    runs: str | None = None,
    user: str = "user",
    item: str = "item",
    score: str | None = "score",
    rank: str = "rank",
    relevance: str | None = "rel",
    tag: str | None = "tag",
) -> Eager:
    r"""Compute trec_eval's measures for one or more runs against qrels.

    Every measure of trec_eval 10.0's ``all_trec`` set (``map``, ``gm_map``,
    ``bpref``, ``infAP``, ``iprec_at_recall``, ``Rprec_mult``, ``utility``,
    ``ndcg_rel``, ``Rndcg``, ``G``, ``relstring``, ``set_F``, ``rbp``, ``unj``...)
    with trec_eval's parameters, per query and for ``all``; definitions and
    conventions are in ``docs/trec-measures.md``.

    Parameters
    ----------
    qrels, run
        Frames as :func:`read_trec_qrels` and :func:`read_trec_run` return them,
        of any kind (Polars, pandas, Arrow: see :func:`polars_rankmetrics.evaluate`).
    measures
        trec_eval ``-m`` arguments (see :func:`parse_trec_measures`); ``None``:
        trec_eval's default (``official``) set.
    per_query
        trec_eval ``-q``: also one row per query and measure.
    complete
        trec_eval ``-c``: every query of the qrels counts; a query a run lacks is
        evaluated as trec_eval does, as one unjudged document (so it scores 0
        on every measure but ``num_rel`` and a ``utility`` with parameters).
    relevance_level
        trec_eval ``-l``: the lowest grade the binary measures count as
        relevant. The ndcg family, ``rbp`` and ``relstring`` keep the raw grades.
    runs
        Column of ``run`` naming the run of each row, to evaluate several runs
        at once (one block of rows per run, in the order they first appear).
        ``None``: ``run`` is one run.
    user, item, score, rank, relevance
        Column roles. ``score=None`` orders each query by the ``rank`` column
        instead of the score; ``relevance=None`` makes every qrels row grade 1.
    tag
        Column holding the run's tag (trec_eval's ``runid``); ``None`` or
        missing: the run's name from ``runs``, else an empty ``runid``.

    Returns
    -------
    A pandas DataFrame for a pandas ``run``, else a Polars DataFrame (for a
    LazyFrame or an Arrow object too). Columns ``runs`` (when given),
    ``measure``, ``query`` (the query id, or ``"all"``), ``value`` (Float64;
    null for ``runid`` and ``relstring``) and ``text`` (the ``runid`` tag and
    ``relstring`` characters; null otherwise), in trec_eval's print order:
    per run, the per-query rows (queries in byte order, measures in
    trec_eval's table order), then the ``all`` rows.
    ``all`` is the mean over the evaluated queries; counts are sums, ``num_q``
    their number, ``gm_map`` and ``gm_bpref`` geometric means
    (``exp(mean(log(max(x, 0.00001))))``).

    Raises
    ------
    ValueError
        A missing column, an unknown measure, a (query, document) pair twice,
        a score that is null or NaN, or a run that shares no query with the
        qrels.

    Notes
    -----
    Ranking: score descending, ties by document id descending (byte order),
    as trec_eval; the rank column is ignored unless ``score=None``. Evaluated
    queries: those of the qrels (any judgement, even only non-relevant) that
    the run has, or every qrels query with ``complete`` (trec_eval 10.0 itself
    stops with an error when a qrels query has no results and ``-c`` is not
    given; trec_eval 9 and pytrec_eval skip it, as here). Documents the qrels
    list with a negative grade are "pooled but unjudged" (``infAP``,
    ``bpref``, ``relstring`` '.'). ``runid`` is the ``tag`` of the run's last
    row (trec_eval prints the tag of the file's last line).

    Examples
    --------
    >>> from polars_rankmetrics.trec import read_trec_qrels, read_trec_run, trec_eval
    >>> qrels = read_trec_qrels(b"q1 0 d1 1\nq1 0 d2 1\nq1 0 d4 0\nq2 0 d5 1\n")
    >>> run = read_trec_run(b"q1 Q0 d1 1 0.9 r\nq1 Q0 d3 2 0.8 r\nq1 Q0 d2 3 0.7 r\n")
    >>> trec_eval(qrels, run, ["map", "P.2", "bpref", "relstring", "num_q"], per_query=True)
    shape: (8, 4)
    ┌───────────┬───────┬──────────┬──────┐
    │ measure   ┆ query ┆ value    ┆ text │
    │ ---       ┆ ---   ┆ ---      ┆ ---  │
    │ str       ┆ str   ┆ f64      ┆ str  │
    ╞═══════════╪═══════╪══════════╪══════╡
    │ map       ┆ q1    ┆ 0.833333 ┆ null │
    │ bpref     ┆ q1    ┆ 1.0      ┆ null │
    │ P_2       ┆ q1    ┆ 0.5      ┆ null │
    │ relstring ┆ q1    ┆ null     ┆ 1-1  │
    │ num_q     ┆ all   ┆ 1.0      ┆ null │
    │ map       ┆ all   ┆ 0.833333 ┆ null │
    │ bpref     ┆ all   ┆ 1.0      ┆ null │
    │ P_2       ┆ all   ┆ 0.5      ┆ null │
    └───────────┴───────┴──────────┴──────┘

    With ``complete=True`` (trec_eval ``-c``), q2, which the run lacks, counts as 0:

    >>> trec_eval(qrels, run, "map", complete=True)["value"].round(6).to_list()
    [0.416667]
    """
    requests = _requests(measures)
    level = check_level(relevance_level)
    if level is None:
        raise TypeError("relevance_level must be a number (trec_eval -l), got None")
    call = eager_caller(run, name="run")
    judged, ranked = _inputs(
        collected(call.read(qrels, name="qrels")),
        collected(call.frame),
        runs=runs,
        user=user,
        item=item,
        position=score if score is not None else rank,
        scored=score is not None,
        relevance=relevance,
        tag=tag,
    )
    if not ranked.height:
        raise ValueError(
            "the run has no rows (trec_eval: no queries with both results and relevance info)"
        )
    run_names = ranked.select(pl.col("_run").unique(maintain_order=True))["_run"].to_list()
    run_ids = dict(ranked.group_by("_run").agg(pl.col("_tag").last()).iter_rows())
    queries = judged.select(pl.col("_user").unique())
    evaluated = ranked.select("_run", "_user").unique().join(queries, on="_user", how="semi")
    missing = pl.DataFrame(schema={"_run": pl.String, "_user": pl.String})
    if complete:
        every = pl.DataFrame({"_run": run_names}).join(queries, how="cross")
        missing = every.join(evaluated, on=["_run", "_user"], how="anti")
    for name in run_names:
        if not (evaluated["_run"] == name).any() and not (missing["_run"] == name).any():
            shown = f"run {name!r}" if runs else "the run"
            raise ValueError(
                f"{shown} has no query in common with the qrels (trec_eval: no queries "
                "with both results and relevance info)"
            )
    rows = _ranked_rows(judged, ranked, missing, level=level, scored=score is not None)
    plan = Plan(judged.lazy(), level)
    for request in requests:
        compute = trec_family(request.family).compute
        if compute is not None:
            compute(plan, request)
    table = _reset_missing(_query_table(plan, rows, requests), requests)
    return call.back(
        _long_table(
            table,
            requests,
            judged,
            run_names=run_names,
            run_ids={name: run_ids.get(name) or (name if runs else "") for name in run_names},
            per_query=per_query,
            complete=complete,
            runs=runs,
        )
    )


def _inputs(
    qrels: pl.DataFrame,
    run: pl.DataFrame,
    *,
    runs: str | None,
    user: str,
    item: str,
    position: str,
    scored: bool,
    relevance: str | None,
    tag: str | None,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Checked qrels (_user, item, _grade) and run (_run, _user, item, _order, _tag)."""
    require_frame_columns(
        qrels,
        {"user": user, "item": item} | ({"relevance": relevance} if relevance else {}),
        "evaluate the qrels",
    )
    roles = {"user": user, "item": item, "score" if scored else "rank": position}
    require_frame_columns(run, roles | ({"runs": runs} if runs else {}), "evaluate the run")
    if relevance and not qrels.schema[relevance].is_integer():
        grades = qrels[relevance]
        if not grades.dtype.is_numeric() or (grades.cast(pl.Float64) % 1 != 0).any():
            raise ValueError(
                f"relevance column {relevance!r} must hold integer grades (trec_eval reads "
                f"integers), got {grades.dtype} values such as {grades.head(3).to_list()}"
            )
    bad = run.filter(pl.col(position).is_null() | pl.col(position).cast(pl.Float64).is_nan())
    if bad.height:
        raise ValueError(
            f"{'score' if scored else 'rank'} column {position!r}: {bad.height} rows are null "
            f"or NaN; e.g. {bad.row(0, named=True)}"
        )
    # trec_eval compares ids as strings (ties: docno descending by strcmp)
    judged = qrels.select(
        pl.col(user).cast(pl.String).alias("_user"),
        pl.col(item).cast(pl.String).alias("item"),
        (pl.col(relevance).cast(pl.Int64) if relevance else pl.lit(1, pl.Int64)).alias("_grade"),
    )
    _refuse_repeats(judged, ["_user", "item"], "qrels", ["query", "document", "grade"])
    has_tag = tag is not None and tag in run.columns
    ranked = run.select(
        (pl.col(runs).cast(pl.String) if runs else pl.lit("", pl.String)).alias("_run"),
        pl.col(user).cast(pl.String).alias("_user"),
        pl.col(item).cast(pl.String).alias("item"),
        pl.col(position).cast(pl.Float64).alias("_order"),
        (pl.col(tag).cast(pl.String) if has_tag and tag else pl.lit(None, pl.String)).alias("_tag"),
    )
    _refuse_repeats(ranked, ["_run", "_user", "item"], "run", ["run", "query", "document"])
    return judged, ranked


def _ranked_rows(
    judged: pl.DataFrame,
    ranked: pl.DataFrame,
    missing: pl.DataFrame,
    *,
    level: float,
    scored: bool,
) -> pl.LazyFrame:
    """One row per retrieved document of an evaluated query: rank, code, relevance."""
    rows = (
        ranked.lazy()
        .join(judged.lazy().select("_user").unique(), on="_user", how="semi")
        # trec_eval's order: score descending, then document id descending
        .sort(["_run", "_user", "_order", "item"], descending=[False, False, scored, True])
        .with_columns(
            _rank=pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over(KEYS),
            _missing=pl.lit(value=False),
        )
        .select(*KEYS, "item", "_rank", "_missing")
    )
    if missing.height:
        # trec_eval -c ranks a missing query as one document, then resets a few values
        bogus = missing.lazy().select(
            *KEYS,
            pl.lit(_BOGUS_DOCNO).alias("item"),
            pl.lit(1, pl.Int64).alias("_rank"),
            pl.lit(value=True).alias("_missing"),
        )
        rows = pl.concat([rows, bogus])
    grade = pl.col("_grade")
    stats = (
        judged.lazy()
        .group_by("_user")
        .agg(
            ((grade >= 0) & (grade >= level)).sum().alias("_R"),
            ((grade >= 0) & (grade < level)).sum().alias("_NN"),
            (grade.filter(grade >= 0).max() + 1).fill_null(0).alias("_L"),
        )
    )
    return (
        rows.join(judged.lazy(), on=["_user", "item"], how="left", maintain_order="left")
        .with_columns(
            _code=pl.when(grade.is_null())
            .then(-1)
            .when(grade < 0)
            .then(-2)
            .otherwise(grade)
            .cast(pl.Int64)
        )
        .with_columns(_rel=pl.col("_code") >= level)
        .join(stats, on="_user", how="left", maintain_order="left")
    )


def _query_table(plan: Plan, rows: pl.LazyFrame, requests: list[Request]) -> pl.DataFrame:
    """One row per (run, query), one column per printed name."""
    for join in plan.row_joins.values():
        rows = join(rows)
    if plan.row_joins:
        # the row columns are running sums down each ranked list
        rows = rows.sort(*KEYS, "_rank")
    for name, expr in plan.rows.items():
        rows = rows.with_columns(expr.alias(name))
    aggs = [expr.alias(name) for name, expr in plan.aggs.items()]
    frame = rows.group_by(KEYS).agg(*aggs, pl.col("_missing").first())
    for after in plan.after.values():
        frame = after(frame, rows)
    names = [
        name
        for request in requests
        for name in request.names
        if trec_family(request.family).compute is not None
    ]
    finals = {**plan.final, **plan.text}
    return frame.select(*KEYS, "_missing", *[finals[name].alias(name) for name in names]).collect()


def _reset_missing(table: pl.DataFrame, requests: list[Request]) -> pl.DataFrame:
    """trec_eval -c: after the stand-in ranking of a missing query, these are reset."""
    resets = [
        pl.when(pl.col("_missing")).then(pl.lit(reset)).otherwise(pl.col(name)).alias(name)
        for request in requests
        if (reset := trec_family(request.family).missing) is not None
        for name in request.names
        # trec_eval keeps the value of a measure given parameters (utility.2,0,0,0)
        if name == request.family or trec_family(request.family).params.startswith("cut")
    ]
    return table.with_columns(resets) if resets else table


def _long_table(
    table: pl.DataFrame,
    requests: list[Request],
    judged: pl.DataFrame,
    *,
    run_names: list[str],
    run_ids: dict[str, str | None],
    per_query: bool,
    complete: bool,
    runs: str | None,
) -> pl.DataFrame:
    order: list[tuple[str, str]] = [(r.family, name) for r in requests for name in r.names]
    summary = {name: trec_family(family).summary for family, name in order}
    text_names = {name for name, kind in summary.items() if kind == "text"}
    numeric = [name for name, kind in summary.items() if kind not in ("runid", "text")]
    # trec_eval -c counts every relevant qrels line for the total num_rel (grade > 0)
    all_relevant = float((judged["_grade"] > 0).sum())
    summaries = []
    for name in numeric:
        column = pl.col(name)
        if summary[name] == "sum_qrels" and complete:
            expr = pl.lit(all_relevant)
        elif summary[name] in ("sum", "sum_qrels"):
            expr = column.sum()
        elif summary[name] == "geometric_mean":  # the per-query values are logs
            expr = exact_mean(name).exp()
        else:
            expr = exact_mean(name)
        summaries.append(expr.alias(name))
    runs_order = pl.DataFrame({"_run": run_names}).with_row_index("_run_idx")
    averaged = [name for name in numeric if summary[name] in ("mean", "geometric_mean")]
    scaled = table.with_columns(fixed_point(averaged))
    totals = runs_order.join(
        scaled.group_by("_run").agg(summaries) if summaries else table.select("_run").unique(),
        on="_run",
        how="left",
    ).with_columns(_user=pl.lit("all"), _section=pl.lit(1, pl.UInt8))
    positions = {name: i for i, (_, name) in enumerate(order)}
    parts = [_unpivot(totals, [n for n in numeric if n in totals.columns], "value")]
    if "runid" in summary.values():
        parts.append(
            runs_order.with_columns(
                _user=pl.lit("all"),
                _section=pl.lit(1, pl.UInt8),
                measure=pl.lit("runid"),
                text=pl.col("_run").replace_strict(run_ids, return_dtype=pl.String),
            )
        )
    if per_query:
        detail = table.join(runs_order, on="_run").with_columns(_section=pl.lit(0, pl.UInt8))
        printed = [name for family, name in order if trec_family(family).per_query]
        parts.append(_unpivot(detail, [n for n in printed if n not in text_names], "value"))
        parts.append(_unpivot(detail, [n for n in printed if n in text_names], "text"))
    parts = [part for part in parts if part.height]
    if not parts:  # relstring alone, without per-query rows
        parts = [
            pl.DataFrame(
                schema={
                    "_run": pl.String,
                    "_run_idx": pl.UInt32,
                    "_user": pl.String,
                    "_section": pl.UInt8,
                    "measure": pl.String,
                }
            )
        ]
    long = (
        pl.concat(parts, how="diagonal_relaxed")
        .with_columns(_m=pl.col("measure").replace_strict(positions, return_dtype=pl.UInt32))
        .sort("_run_idx", "_section", "_user", "_m")
    )
    columns = [pl.col("measure"), pl.col("_user").alias("query")]
    return long.select(
        *([pl.col("_run").alias(runs)] if runs else []),
        *columns,
        (pl.col("value") if "value" in long.columns else pl.lit(None))
        .cast(pl.Float64)
        .alias("value"),
        (pl.col("text") if "text" in long.columns else pl.lit(None)).cast(pl.String).alias("text"),
    )


def _unpivot(frame: pl.DataFrame, names: list[str], value_name: str) -> pl.DataFrame:
    if not names:
        return pl.DataFrame()
    return frame.unpivot(
        on=names,
        index=["_run", "_run_idx", "_user", "_section"],
        variable_name="measure",
        value_name=value_name,
    )


def format_trec_eval(table: AnyFrame, *, run_id: str | None = None) -> str:
    r"""Format :func:`trec_eval` rows as trec_eval prints them.

    One line per row: ``measure`` padded to 22 characters, a tab, the query, a
    tab and the value: counts as integers, ``relstring`` in quotes, ``runid``
    as its tag, everything else with 4 decimals (``%6.4f``). Rows of several
    runs print one block after the other. ``run_id`` adds a ``runid`` line
    before the first ``all`` row when the table has none.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_rankmetrics.trec import format_trec_eval
    >>> table = pl.DataFrame({
    ...     "measure": ["num_q", "map"], "query": ["all", "all"], "value": [3.0, 0.17854]
    ... })
    >>> print(format_trec_eval(table, run_id="STANDARD").replace("\t", " | "))
    runid                  | all | STANDARD
    num_q                  | all | 3
    map                    | all | 0.1785
    """
    rows = collected(read(table, name="table"))
    has_text = "text" in rows.columns
    columns = ["measure", "query", "value", *(["text"] if has_text else [])]
    lines = []
    counts = _counts()
    wrote_runid = run_id is None or (rows["measure"] == "runid").any()
    for row in rows.select(columns).iter_rows():
        measure, query, value = row[0], row[1], row[2]
        text = row[3] if has_text else None
        if not wrote_runid and query == "all":
            lines.append(f"{'runid':<22}\tall\t{run_id}")
            wrote_runid = True
        if measure == "runid":
            shown = text or ""
        elif text is not None:
            shown = f"'{text}'"
        elif measure in counts:
            shown = f"{int(value)}"
        else:
            shown = f"{value:6.4f}"
        lines.append(f"{measure:<22}\t{query}\t{shown}")
    if not wrote_runid:
        lines.append(f"{'runid':<22}\tall\t{run_id}")
    return "\n".join(lines) + ("\n" if lines else "")
