"""Rank fusion: several runs of scored lists combined into one, as ranx names the methods.

:func:`fuse` normalises each run's scores per (user, run), combines them per
(user, item) and ranks the result; :func:`optimize_fusion` searches the weights
of ``wsum`` (or RRF's ``k``) over a grid in one lazy plan keyed by the grid
point and evaluates every point at once. Definitions: ranx 0.3 (Bassani
2022), ``ranx/fusion`` and ``ranx/normalization``, checked against it in
``tests/analysis/test_fusion.py``.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, cast, overload

import polars as pl

from polars_rankmetrics import _validation as v
from polars_rankmetrics._frames import AnyFrame, read, runs_caller
from polars_rankmetrics._measures._registry import Direction
from polars_rankmetrics._names import check_column_names
from polars_rankmetrics.analysis import _fusion
from polars_rankmetrics.analysis._direction import directions, require
from polars_rankmetrics.conventions import FusionMethod, FusionNorm
from polars_rankmetrics.options import ConventionOptions

if sys.version_info >= (3, 11):
    from typing import Unpack
else:  # pragma: no cover - Python 3.10
    from typing_extensions import Unpack

__all__ = [
    "METHODS",
    "NORMS",
    "FusionMethod",
    "FusionNorm",
    "FusionOptimum",
    "fuse",
    "optimize_fusion",
]

METHODS: Final[tuple[FusionMethod, ...]] = tuple(_fusion.METHODS)
"""The fusion methods, spelt as ranx's ``fuse(method=...)`` spells them."""

NORMS: Final[tuple[FusionNorm, ...]] = _fusion.NORMS
"""The normalisations (besides ``None``), spelt as ranx's ``fuse(norm=...)`` spells them."""


# ---------------------------------------------------------------- the inputs


@dataclass(frozen=True)
class _Runs:
    """Every run as one long lazy frame, whether they are in memory, and their checks."""

    frame: pl.LazyFrame
    names: tuple[Any, ...] | None  # a dict's keys in order; None for a long frame
    in_memory: bool
    checks: list[v.DataCheck]


def _roles(run: str, keys: Sequence[str], item: str, score: str) -> dict[str, str]:
    """The column of each role, refused unless each is a distinct column name."""
    *by, user = keys
    roles = {"run": run, **{f"by[{i}]": name for i, name in enumerate(by)}}
    roles.update(user=user, item=item, score=score)
    check_column_names(**roles)
    if len(set(roles.values())) < len(roles):
        raise ValueError(f"the column roles must name distinct columns, got {roles}")
    if "rank" in (*keys, item):
        raise ValueError(
            f"the result adds a column 'rank', which the roles already name ({roles}): "
            "rename that column first"
        )
    return roles


def _read_dict(
    runs: Mapping[Any, pl.DataFrame | pl.LazyFrame],
    roles: Mapping[str, str],
    *,
    run: str,
    score: str,
) -> pl.LazyFrame:
    """A dict of runs (Polars frames, read by the face) as one long frame."""
    if not runs:
        raise ValueError("runs is an empty dict: give at least one run (name -> frame)")
    frames: list[pl.LazyFrame] = []
    first: tuple[Any, Any, pl.Schema] | None = None
    ids = [column for role, column in roles.items() if role not in ("run", "score")]
    for name, frame in runs.items():
        if not isinstance(name, (str, int)) or isinstance(name, bool):
            raise TypeError(
                f"run names (the dict's keys) must be strings or integers, got {v.shorten(name)}"
            )
        lazy = frame.lazy()
        schema = lazy.collect_schema()
        v.require_columns(
            schema, {r: c for r, c in roles.items() if r != "run"}, frame=f"run {name!r}"
        )
        if run in schema:
            raise ValueError(
                f"run {name!r} has a column {run!r}, the name fuse gives the run column "
                "(run=): rename it or pass run=... to name the run column otherwise"
            )
        v.require_numeric(schema, score, frame=f"run {name!r}", role="score")
        first = first or (name, frame, schema)
        for column in ids:
            if schema[column] != first[2][column]:
                raise TypeError(
                    f"column {column!r} is {schema[column]} in run {name!r} but "
                    f"{first[2][column]} in run {first[0]!r}: give every run the same "
                    f"dtype, e.g. pl.col({column!r}).cast(pl.{first[2][column]})"
                )
        frames.append(lazy.select(pl.lit(name).alias(run), *ids, pl.col(score).cast(pl.Float64)))
    return pl.concat(frames, how="vertical")


def _read_runs(
    runs: pl.DataFrame | pl.LazyFrame | Mapping[Any, pl.DataFrame | pl.LazyFrame],
    *,
    run: str,
    keys: Sequence[str],
    item: str,
    score: str,
) -> _Runs:
    """The runs as one long frame (run, keys..., item, score Float64), and its data checks."""
    roles = _roles(run, keys, item, score)
    names: tuple[Any, ...] | None = None
    if isinstance(runs, Mapping):
        long = _read_dict(runs, roles, run=run, score=score)
        names = tuple(runs)
        in_memory = not any(isinstance(frame, pl.LazyFrame) for frame in runs.values())
    else:
        in_memory = isinstance(runs, pl.DataFrame)
        lazy = runs.lazy()
        schema = lazy.collect_schema()
        v.require_columns(schema, roles, frame="runs")
        v.require_numeric(schema, score, frame="runs", role="score")
        run_column = pl.col(run)
        if isinstance(schema[run], (pl.Categorical, pl.Enum)):
            run_column = run_column.cast(pl.String)  # compared with the weights' names as text
        long = lazy.select(run_column, *keys, item, pl.col(score).cast(pl.Float64))
    show = (run, *keys, item, score)
    checks = v.null_checks("runs", roles, in_memory=in_memory, show=show)
    finite = pl.col(score).is_finite()
    checks.append(
        v.DataCheck(
            bad=~finite,
            message=f"runs column {v.shorten(score)} (score) has {{n}} NaN or infinite value(s)",
            show=show,
            screen=(~finite).any() if in_memory else None,
            row_wise=True,
        )
    )
    hint = ": a run lists an item once per user; keep one row of each (e.g. its best score)"
    checks.append(v.duplicate_check("runs", [run, *keys, item], show, hint, in_memory=in_memory))
    return _Runs(long, names, in_memory, checks)


def _number(value: object, *, what: str) -> float:
    number = v.as_number(value, what=what)
    if not math.isfinite(number):
        raise ValueError(f"{what} must be a finite number, got {number}")
    return number


def _weights_table(
    weights: Mapping[Any, object] | Sequence[object], names: tuple[Any, ...] | None
) -> dict[Any, float]:
    """The weights by run name, from a mapping or (for a dict of runs) a sequence in its order."""
    if isinstance(weights, Mapping):
        if names is not None:
            unknown = [name for name in weights if name not in names]
            if unknown:
                raise ValueError(
                    f"weights names run {v.shorten(unknown[0])}, which is not one of the runs "
                    f"{list(names)}"
                )
            missing = [name for name in names if name not in weights]
            if missing:
                raise ValueError(
                    f"weights gives no weight to run {v.shorten(missing[0])} "
                    f"({len(missing)} run(s) without one): give every run a weight"
                )
        return {name: _number(w, what=f"weights[{name!r}]") for name, w in weights.items()}
    if isinstance(weights, (str, bytes)) or not isinstance(weights, Sequence):
        raise TypeError(
            f"weights must be a mapping run name -> weight (or, for a dict of runs, a sequence "
            f"in the dict's order), got {type(weights).__name__}"
        )
    if names is None:
        raise TypeError(
            "weights for a long frame of runs must be a mapping run name -> weight: the "
            "frame's runs have no order a sequence could follow"
        )
    if len(weights) != len(names):
        raise ValueError(f"weights has {len(weights)} value(s) for {len(names)} runs {list(names)}")
    return {
        name: _number(w, what=f"weights[{i}]")
        for i, (name, w) in enumerate(zip(names, weights, strict=True))
    }


def _check_method(method: object, norm: object) -> None:
    v.check_literal(method, METHODS, name="method")
    if norm is not None:
        v.check_literal(norm, NORMS, name="norm")


# ---------------------------------------------------------------- fuse


@overload
def fuse(
    runs: pl.LazyFrame | Mapping[Any, pl.LazyFrame], *, method: FusionMethod = ...,
    norm: FusionNorm | None = ..., weights: Mapping[Any, float] | Sequence[float] | None = ...,
    k: float | None = ..., run: str = ..., user: str = ..., item: str = ..., score: str = ...,
    by: str | Sequence[str] | None = ...,
) -> pl.LazyFrame: ...  # fmt: skip
@overload
def fuse(
    runs: pl.DataFrame | Mapping[Any, pl.DataFrame], *, method: FusionMethod = ...,
    norm: FusionNorm | None = ..., weights: Mapping[Any, float] | Sequence[float] | None = ...,
    k: float | None = ..., run: str = ..., user: str = ..., item: str = ..., score: str = ...,
    by: str | Sequence[str] | None = ...,
) -> pl.DataFrame: ...  # fmt: skip
@overload
def fuse(
    runs: Any, *, method: FusionMethod = ..., norm: FusionNorm | None = ...,
    weights: Mapping[Any, float] | Sequence[float] | None = ..., k: float | None = ...,
    run: str = ..., user: str = ..., item: str = ..., score: str = ...,
    by: str | Sequence[str] | None = ...,
) -> Any: ...  # fmt: skip
def fuse(
    runs: Any,
    *,
    method: FusionMethod = "rrf",
    norm: FusionNorm | None = "min-max",
    weights: Mapping[Any, float] | Sequence[float] | None = None,
    k: float | None = None,
    run: str = "run",
    user: str = "user",
    item: str = "item",
    score: str = "score",
    by: str | Sequence[str] | None = None,
) -> Any:
    r"""Fuse several runs (scored lists per user) into one ranked run.

    Each run's scores are normalised within each of its lists (one per user),
    then combined per (user, item) by ``method``; the fused lists are ranked
    by the fused score.

    Parameters
    ----------
    runs
        One long frame with a ``run`` column naming the run of each row, or a
        dict run name -> frame. Each frame has one row per (user, item) it
        lists with a numeric ``score`` (higher is better). Any frame (Polars,
        pandas, Arrow: see :func:`polars_rankmetrics.evaluate`); a lazy input
        gives a lazy result.
    method
        ``"rrf"`` (default), ``"sum"``, ``"mnz"``, ``"anz"``, ``"max"``,
        ``"min"``, ``"med"``, ``"wsum"``, ``"bordafuse"``, ``"isr"`` or
        ``"log_isr"``, as ranx names them (formulas in Notes).
    norm
        ``"min-max"`` (default, as ranx's ``fuse``), ``"max"``, ``"sum"``,
        ``"zmuv"``, ``"rank"`` or ``None``, applied per (user, run) before the
        scores are combined. It changes nothing for the methods that read
        positions (``rrf``, ``isr``, ``log_isr``, ``bordafuse``).
    weights
        ``wsum`` only (and required there): run name -> weight, or for a dict
        of runs a sequence in the dict's order.
    k
        ``rrf`` only: the constant of :math:`1 / (k + p)`; ``None`` means 60
        (Cormack et al. 2009).
    run, user, item, score
        Column roles. The result names its columns ``user``, ``item``,
        ``score`` as given here and adds ``rank``.
    by
        Columns whose groups are fused separately (folds, ...), as ``by``
        everywhere; the runs of a group are fused per (group, user).

    Returns
    -------
    One row per (by..., user, item) listed by some run: ``score`` (Float64,
    the fused score) and ``rank`` (UInt32, 1 = top), sorted by by..., user
    and rank. Of the kind given, as for ``evaluate`` (a dict: lazy if any of
    its frames is lazy, pandas if all are pandas, else a Polars DataFrame).
    ``evaluate``, ``compare`` and the writers take
    it as it is.

    Raises
    ------
    ValueError, TypeError
        A missing column, a non-numeric score, a null key or score, a NaN or
        infinite score, an item listed twice in one (run, user) list (when a
        lazy result is collected), an unknown method or norm, ``weights``
        missing for ``wsum`` or given to another method, ``k`` given to a
        method other than ``rrf``.

    Notes
    -----
    With :math:`s_r(d)` the normalised score of item :math:`d` in run
    :math:`r`'s list for the user, :math:`p_r(d)` its position (1 = top) in
    that list, :math:`R_d` the runs that list :math:`d` and :math:`R` all runs:

    * ``sum``: :math:`\sum_{r \in R_d} s_r(d)` (a run that does not list the
      item adds 0); ``wsum``: :math:`\sum_{r \in R_d} w_r s_r(d)`;
    * ``mnz``: :math:`|R_d| \sum_{r \in R_d} s_r(d)`; ``anz``: the sum over
      :math:`|R_d|`; ``max``, ``min``, ``med``: the largest, smallest and
      median of :math:`s_r(d)` over :math:`R_d` (Fox & Shaw 1993);
    * ``rrf``: :math:`\sum_{r \in R_d} 1 / (k + p_r(d))` (Cormack et al. 2009);
    * ``isr``: :math:`|R_d| \sum_{r \in R_d} 1 / p_r(d)^2`; ``log_isr``:
      :math:`\ln |R_d| \sum_{r \in R_d} 1 / p_r(d)^2`, 0 for an item one run
      lists (Mourão et al. 2015);
    * ``bordafuse``: with :math:`c` the items some run lists for the user and
      :math:`n_r` the length of run :math:`r`'s list, run :math:`r` gives
      :math:`c - p_r(d) + 1` points, or :math:`(c - n_r + 1) / 2` when it does
      not list :math:`d` (Aslam & Montague 2001); a run with no list for the
      user lists nothing (:math:`n_r = 0`).

    The normalisations, per (user, run) list :math:`S` (ranx's, each
    denominator floored at :math:`10^{-9}`, so a list of equal scores becomes
    zeros): ``min-max`` :math:`(s - \min S) / (\max S - \min S)`; ``max``
    :math:`s / \max S`; ``sum`` :math:`(s - \min S) / \sum_{t \in S} (t - \min
    S)`; ``zmuv`` :math:`(s - \bar S) / \sigma_S` (population deviation);
    ``rank`` :math:`1 - (p - 1) / |S|`.

    Positions are 1..n by score descending; equal scores, in a run's list and
    in the fused list, are ordered by the item id descending (trec_eval's rule
    and the package's default ``ties``), so ``rank`` agrees with what
    ``evaluate(..., score=score)`` derives from the fused scores. Scores are
    compared as floats: sums of the same terms in another order can differ in
    the last bit (the streaming engine may add them in another order), and so
    can the order of two mathematically equal sums of three or more terms
    (RRF: 1/61 + 1/62 + 1/63 in two orders). Unlike ranx, the runs need not
    list the same users: every user some run lists is fused.

    References
    ----------
    Fox & Shaw (1993), Combination of multiple searches, TREC-2. Aslam &
    Montague (2001), Models for metasearch, SIGIR. Cormack, Clarke & Buettcher
    (2009), Reciprocal rank fusion outperforms Condorcet and individual rank
    learning methods, SIGIR. Mourão, Martins & Magalhães (2015), Multimodal
    medical information retrieval with unsupervised rank fusion, CMIG 39.
    Bassani & Romelli (2022), ranx.fuse and ranx.normalize, CIKM.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankmetrics as prm
    >>> runs = pl.DataFrame({
    ...     "run": ["bm25"] * 3 + ["dense"] * 2,
    ...     "user": [1, 1, 1, 1, 1],
    ...     "item": ["a", "b", "c", "b", "d"],
    ...     "score": [3.0, 2.0, 1.0, 0.9, 0.8],
    ... })
    >>> prm.fuse(runs, method="rrf", k=1)
    shape: (4, 4)
    ┌──────┬──────┬──────────┬──────┐
    │ user ┆ item ┆ score    ┆ rank │
    │ ---  ┆ ---  ┆ ---      ┆ ---  │
    │ i64  ┆ str  ┆ f64      ┆ u32  │
    ╞══════╪══════╪══════════╪══════╡
    │ 1    ┆ b    ┆ 0.833333 ┆ 1    │
    │ 1    ┆ a    ┆ 0.5      ┆ 2    │
    │ 1    ┆ d    ┆ 0.333333 ┆ 3    │
    │ 1    ┆ c    ┆ 0.25     ┆ 4    │
    └──────┴──────┴──────────┴──────┘

    ``b`` is 2nd in bm25 and 1st in dense: 1/(1+2) + 1/(1+1). With CombSUM of
    min-max normalised scores, ``b`` gets 0.5 + 1 and ``d`` 0 + 0:

    >>> prm.fuse(runs, method="sum", norm="min-max").get_column("score").to_list()
    [1.5, 1.0, 0.0, 0.0]
    """
    recipe = _recipe(method, norm, weights=weights, k=k)
    groups = [*_as_list(by), user]
    polars_runs, call = runs_caller(runs, name="runs")
    given = _read_runs(polars_runs, run=run, keys=groups, item=item, score=score)
    frame = _fusion.contributions(
        given.frame, method=recipe, norm=norm, run=run, groups=groups, item=item, score=score
    )
    checked = [(given.frame, given.checks)]
    if weights is not None:
        frame = frame.with_columns(
            _weight_column(run, _weights_table(weights, given.names)).alias(_fusion.WEIGHT)
        )
        checked.append((frame, [_weight_check(run, groups, item)]))
    if recipe.parameter == "k":
        frame = frame.with_columns(
            pl.lit(_fusion.RRF_K if k is None else _check_k(k)).alias(_fusion.K)
        )
    result = _fusion.fused(
        frame, method=recipe, groups=groups, item=item, score=score,
        tie=_fusion.tie_order(given.frame, item),
    )  # fmt: skip
    return call.back(v.guard(result, checked))


def _recipe(method: object, norm: object, *, weights: object, k: object) -> _fusion.Method:
    """The method's record; the name, the norm and the parameters it reads (only those) checked."""
    _check_method(method, norm)
    recipe = _fusion.METHODS[cast("FusionMethod", method)]
    for parameter, value in (("weights", weights), ("k", k)):
        if value is not None and recipe.parameter != parameter:
            reader = next(r.name for r in _fusion.METHODS.values() if r.parameter == parameter)
            raise ValueError(
                f"{parameter}= is read by method={reader!r} only, not by method={method!r}"
            )
    if recipe.parameter == "weights" and weights is None:
        raise ValueError(f"method={method!r} needs weights= (run name -> weight)")
    return recipe


def _as_list(columns: str | Sequence[str] | None) -> list[str]:
    if columns is None:
        return []
    if isinstance(columns, str):
        return [columns]
    return list(columns)


def _check_k(k: object) -> float:
    value = _number(k, what="k")
    if value < 0:
        raise ValueError(f"k must be >= 0 (RRF adds it to positions 1, 2, ...), got {value}")
    return value


def _weight_column(run: str, weight_of: Mapping[Any, float]) -> pl.Expr:
    return pl.col(run).replace_strict(
        list(weight_of), list(weight_of.values()), default=None, return_dtype=pl.Float64
    )


def _weight_check(run: str, groups: Sequence[str], item: str) -> v.DataCheck:
    missing = pl.col(_fusion.WEIGHT).is_null()
    return v.DataCheck(
        bad=missing,
        message="weights gives no weight to the run of {n} row(s): give every run a weight",
        show=(run, *groups, item),
        row_wise=True,
    )


# ---------------------------------------------------------------- optimize_fusion


@dataclass(frozen=True)
class FusionOptimum:
    """What :func:`optimize_fusion` found: the best setting and every grid point's score.

    Attributes
    ----------
    method, norm, metric
        As given.
    runs
        The run names, in the order of every ``weights`` list.
    best
        The best setting, as :func:`fuse` takes it: ``{"weights": {run: w}}``
        (``wsum``) or ``{"k": k}`` (``rrf``).
    best_score
        The metric of the fused run with that setting.
    grid
        One row per grid point: ``grid`` (its number, in the order given),
        ``weights`` (List[Float64], in the order of ``runs``) or ``k``, and the
        metric's column; in grid order.
    """

    method: str
    norm: str | None
    metric: str
    runs: tuple[Any, ...]
    best: dict[str, Any]
    best_score: float
    grid: pl.DataFrame


def _simplex(n_runs: int, step: float) -> list[tuple[float, ...]]:
    """Every weight vector of multiples of ``step`` that sum to 1 (ranx's grid for wsum).

    In lexicographic order of the multiples (as a filter of itertools.product
    gives them), built directly: the product has (1 / step + 1)^runs vectors
    (1e9 for step 0.001 and 3 runs), the grid only C(1 / step + runs - 1, runs - 1).
    """
    if not 0 < step <= 1:
        raise ValueError(
            f"step must be in (0, 1], the spacing of the default wsum grid of weights that "
            f"sum to 1 (0.1, 0.25, ...), got {step}"
        )
    parts = round(1 / step)
    if not math.isclose(parts * step, 1.0):
        raise ValueError(f"step must divide 1 into whole parts (0.1, 0.25, ...), got {step}")
    return [tuple(round(c * step, 12) for c in point) for point in _compositions(parts, n_runs)]


def _compositions(total: int, size: int) -> Iterator[tuple[int, ...]]:
    """Every tuple of ``size`` integers >= 0 that sum to ``total``, in lexicographic order."""
    if size == 1:
        yield (total,)
        return
    for first in range(total + 1):
        for rest in _compositions(total - first, size - 1):
            yield (first, *rest)


def optimize_fusion(
    runs: Any,
    truth: AnyFrame,
    *,
    method: Literal["wsum", "rrf"] = "wsum",
    norm: FusionNorm | None = "min-max",
    metric: str = "ndcg@10",
    grid: Sequence[Any] | None = None,
    step: float = 0.1,
    run: str = "run",
    user: str = "user",
    item: str = "item",
    score: str = "score",
    relevance: str | None = None,
    direction: Direction | None = None,
    **conventions: Unpack[ConventionOptions],
) -> FusionOptimum:
    """The weights of ``wsum`` (or RRF's ``k``) that optimise a metric, by grid search.

    Every grid point's fused run is built in one lazy plan keyed by the grid
    point and evaluated at once (:func:`polars_rankmetrics.evaluate` with
    ``by`` the grid point), not one evaluation per point.

    Parameters
    ----------
    runs
        As for :func:`fuse`.
    truth
        One row per judged (user, item), as for ``evaluate`` (any frame).
    method
        ``"wsum"`` (default; the weights are searched) or ``"rrf"`` (``k``).
    norm
        As for :func:`fuse`.
    metric
        One metric string as ``evaluate`` takes it (``"ndcg@10"``, default).
    grid
        ``wsum``: a sequence of weight settings, each a mapping run -> weight
        or a sequence in the order of the runs (a dict's order; for a long
        frame the run names sorted); default every vector of multiples of
        ``step`` that sums to 1, as ranx. ``rrf``: a sequence of ``k``;
        default 10, 20, ..., 100, as ranx.
    step
        The spacing of the default ``wsum`` grid (0.1): in (0, 1], dividing
        1 into whole parts.
    run, user, item, score
        As for :func:`fuse`; ``user`` and ``item`` also name the truth's.
    relevance
        The truth's graded relevance column (``None``: every truth row is
        relevant with grade 1).
    direction
        ``"higher"`` or ``"lower"``: which value of ``metric`` is best.
        Default: the measure's declared direction (the highest NDCG, the
        lowest ``mean_rank`` or ``fallout``); a descriptive measure
        (``arp@10``, ``novelty@10``) is refused without it.
    **conventions
        The conventions of ``evaluate``
        (:class:`polars_rankmetrics.ConventionOptions`), forwarded to it.

    Returns
    -------
    FusionOptimum
        The best setting (the metric's best value by its direction: the first
        in grid order among equal best scores;
        ranx keeps the last), its score and every grid point's score (``grid``,
        a Polars DataFrame whatever the kind of ``runs``).

    Notes
    -----
    The grid multiplies the rows: a grid of G points evaluates G fused runs
    (the default ``wsum`` grid has 66 points for 3 runs and 286 for 4). A
    metric null at every grid point (a truth without any relevant item) is
    refused: there is nothing to optimise.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankmetrics as prm
    >>> runs = pl.DataFrame({
    ...     "run": ["a"] * 4 + ["b"] * 4,
    ...     "user": [1, 1, 2, 2] * 2,
    ...     "item": ["x", "y", "x", "y", "x", "y", "x", "y"],
    ...     "score": [0.9, 0.1, 0.2, 0.8, 0.1, 0.9, 0.7, 0.3],
    ... })
    >>> truth = pl.DataFrame({"user": [1, 2], "item": ["x", "y"]})
    >>> found = prm.optimize_fusion(runs, truth, metric="mrr", step=0.5)
    >>> found.best, found.best_score
    ({'weights': {'a': 1.0, 'b': 0.0}}, 1.0)
    >>> found.grid
    shape: (3, 3)
    ┌──────┬────────────┬──────┐
    │ grid ┆ weights    ┆ mrr  │
    │ ---  ┆ ---        ┆ ---  │
    │ u32  ┆ list[f64]  ┆ f64  │
    ╞══════╪════════════╪══════╡
    │ 0    ┆ [0.0, 1.0] ┆ 0.5  │
    │ 1    ┆ [0.5, 0.5] ┆ 0.75 │
    │ 2    ┆ [1.0, 0.0] ┆ 1.0  │
    └──────┴────────────┴──────┘
    """
    from polars_rankmetrics.evaluation import evaluate  # noqa: PLC0415 - cycle

    label, better = _optimised(metric, direction, method=method, norm=norm)
    polars_runs, _ = runs_caller(runs, name="runs")
    truth_frame = read(truth, name="truth")
    given = _read_runs(polars_runs, run=run, keys=[user], item=item, score=score)
    names = given.names
    if names is None:
        found = given.frame.select(pl.col(run).unique().sort()).collect().to_series()
        names = tuple(found.to_list())
    key = next(
        name for name in ("grid", "grid_point", "grid_key") if name not in (user, item, score)
    )
    recipe = _fusion.METHODS[method]
    frame = _fusion.contributions(
        given.frame, method=recipe, norm=norm, run=run, groups=[user], item=item, score=score
    )
    if method == "wsum":
        points = _simplex(len(names), _number(step, what="step")) if grid is None else grid
        settings, expanded = _weights_grid(
            frame, points, names, run=run, key=key, run_dtype=given.frame.collect_schema()[run]
        )
    else:
        settings, expanded = _k_grid(frame, grid, key=key)
    if not settings.height:
        raise ValueError("grid is empty: give at least one setting")
    fused = _fusion.fused(
        expanded, method=recipe, groups=[key, user], item=item, score=score,
        tie=_fusion.tie_order(given.frame, item),
    )  # fmt: skip
    guarded = v.guard(fused, [(given.frame, given.checks)])
    scores = evaluate(
        guarded, truth_frame, label, by=key, user=user, item=item, rank="rank",
        relevance=relevance, **conventions,
    )  # fmt: skip
    table_scores = settings.join(scores.collect().select(key, label), on=key, how="left").sort(key)
    if key != "grid":
        table_scores = table_scores.rename({key: "grid"})
    best_row = _best_row(table_scores, label, better)
    best: dict[str, Any] = (
        {"weights": dict(zip(names, best_row["weights"], strict=True))}
        if method == "wsum"
        else {"k": _as_k(best_row["k"])}
    )
    return FusionOptimum(
        method=method, norm=norm, metric=label, runs=names, best=best,
        best_score=float(best_row[label]), grid=table_scores,
    )  # fmt: skip


def _as_k(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


def _weights_grid(
    frame: pl.LazyFrame,
    points: Sequence[Any],
    names: tuple[Any, ...],
    *,
    run: str,
    key: str,
    run_dtype: pl.DataType,
) -> tuple[pl.DataFrame, pl.LazyFrame]:
    """``wsum``'s grid: each point's weights, and the contributions weighted per point."""
    table = [_weights_table(point, names) for point in points]
    rows = [
        {run: name, key: index, _fusion.WEIGHT: point.get(name)}
        for index, point in enumerate(table)
        for name in names
    ]
    settings = pl.DataFrame(
        {key: range(len(table)), "weights": [[p.get(n) for n in names] for p in table]},
        schema={key: pl.UInt32, "weights": pl.List(pl.Float64)},
    )
    parameters = pl.DataFrame(
        rows, schema={run: run_dtype, key: pl.UInt32, _fusion.WEIGHT: pl.Float64}
    )
    return settings, frame.join(parameters.lazy(), on=run, how="inner")


def _k_grid(
    frame: pl.LazyFrame, grid: Sequence[Any] | None, *, key: str
) -> tuple[pl.DataFrame, pl.LazyFrame]:
    """RRF's grid of k (10, 20, ..., 100 by default, as ranx), each with every contribution."""
    values = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100] if grid is None else list(grid)
    ks = [_check_k(value) for value in values]
    settings = pl.DataFrame(
        {key: range(len(ks)), "k": ks}, schema={key: pl.UInt32, "k": pl.Float64}
    )
    return settings, frame.join(settings.lazy().rename({"k": _fusion.K}), how="cross")


def _best_row(table: pl.DataFrame, label: str, better: float) -> dict[str, Any]:
    """The first best grid point in grid order: the highest, or the lowest where lower is better."""
    values = table.get_column(label)
    if values.null_count() == values.len():
        raise ValueError(
            f"{label} is undefined (null) at every grid point: the truth gives no user a "
            "relevant item (is it empty, or are all its grades <= 0?), so there is nothing "
            "to optimise"
        )
    # arg_max() of a column Polars flags as sorted (a constant one) gives the last
    filled = (better * values).fill_null(-math.inf)
    return table.row(int(filled.eq(filled.max()).arg_true()[0]), named=True)


def _optimised(
    metric: str, direction: Direction | None, *, method: str, norm: str | None
) -> tuple[str, float]:
    """The metric's label and which way is better (+1, -1), the method and norm checked."""
    from polars_rankmetrics.evaluation import parse_metrics  # noqa: PLC0415 - cycle

    v.check_literal(method, ("wsum", "rrf"), name="method")
    if norm is not None:
        v.check_literal(norm, NORMS, name="norm")
    specs = parse_metrics(metric)
    if len(specs) != 1:
        raise ValueError(f"metric must be one metric string, got {metric!r} ({len(specs)} metrics)")
    label = specs[0].label
    better = require(
        label, directions([label], direction)[label], "optimize_fusion", per_metric=False
    )
    return label, better
