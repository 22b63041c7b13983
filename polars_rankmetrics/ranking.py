"""Rank positions from scores, the top-k cut, and relevance labels from the truth.

The public functions :func:`positions` and :func:`relevance` are the first two
steps of an evaluation written by hand; :mod:`polars_rankmetrics.evaluate`
runs the same steps inside its plan (:mod:`polars_rankmetrics._pipeline`:
``rank_cut``, ``checks``, ``truth``). Everything is written once on
``LazyFrame``; a ``DataFrame`` goes ``lazy() ... collect()``.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from polars_rankmetrics import _validation as v
from polars_rankmetrics._frames import AnyFrame, ArrowStream, Frame, caller
from polars_rankmetrics._names import PREFIX, check_no_reserved, check_roles
from polars_rankmetrics._pipeline.checks import check_recs_schema, list_checks, prepare, recs_checks
from polars_rankmetrics._pipeline.inputs import (
    Duplicates,
    RecsSpec,
    Ties,
    as_list,
    to_lazy,
)
from polars_rankmetrics._pipeline.population import expand_over_groups
from polars_rankmetrics._pipeline.rank_cut import lengths_in_rank_order, with_positions
from polars_rankmetrics._pipeline.truth import labeled_truth
from polars_rankmetrics.options import PositionOptions, Unpack, read_positions

__all__ = ["Duplicates", "Ties", "positions", "relevance"]

IS_RELEVANT = "is_relevant"
IDEAL_RANK = "ideal_rank"
N_RELEVANT = "n_relevant"
# the input's row order, given back to the top-k ranking from scores (positions)
_INPUT_ROW = f"{PREFIX}input_row"


def positions(
    recs: Frame | ArrowStream,
    k: int | None = None,
    **options: Unpack[PositionOptions],
) -> Frame:
    """Rank positions per user (1 = top), optionally cut to the top k.

    Parameters
    ----------
    recs
        Long-format recommendations, one row per (user, item).
    k
        Keep positions 1..k; ``None`` keeps every row.
    **options
        The column roles, the tie order and the repeats policy
        (:class:`polars_rankmetrics.options.PositionOptions`), each below.

    Other Parameters
    ----------------
    user : str, default "user"
        The column of the user (query, customer, session) in every frame.
    item : str, default "item"
        The column of the item (document, product) in every frame.
    rank : str, default "rank"
        The column of ``recs`` holding each item's position, 1 at the top (read when ``score``
        is ``None``; with ``score``, the name of the positions derived).
    score : str or None, default None
        The column to rank by, higher is better, compared as float64. ``rank`` is then the
        column written (overwritten if present); ``None``: the ranks in ``rank`` are read and
        checked.
    ties : {"item_desc", "item_asc", "input"}, default "item_desc"
        How equal scores are ordered: ``"item_desc"`` (trec_eval: item id descending),
        ``"item_asc"`` (item id ascending), ``"input"`` (the order of the rows). Item ids
        compare by value.
    duplicates : {"error", "first"}, default "error"
        A (user, item) recommended twice: ``"error"`` or ``"first"`` (keep its best position;
        score-derived ranks are then re-numbered).
    by : str, sequence of str or None, default None
        Columns that identify separate lists besides the user (model, fold...).

    Returns
    -------
    The frame with the rank column (UInt32 when derived), in the input row
    order, of the kind ``recs`` is (as for :func:`polars_rankmetrics.evaluate`;
    a pandas result has a fresh index: ``polars_rankmetrics.pandas.positions``
    keeps the input's index labels).

    Notes
    -----
    The tie rule is the same here, in :func:`polars_rankmetrics.evaluate`
    and for every id dtype: equal scores are ordered by the item id's value,
    as text for String, Categorical and Enum ids (an Enum's category order
    is ignored; trec_eval compares docnos as strings), as a number for
    integer and float ids. Given ranks may be integers of any width (a rank
    above 2^32 stays exact); ``k`` is a Python or NumPy integer.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankmetrics as prm
    >>> recs = pl.DataFrame({
    ...     "user": [1, 1, 1, 2],
    ...     "item": ["a", "b", "c", "a"],
    ...     "score": [0.2, 0.9, 0.2, 0.5],
    ... })
    >>> recs.rank.positions(score="score", k=2).sort("user", "rank")
    shape: (3, 4)
    ┌──────┬──────┬───────┬──────┐
    │ user ┆ item ┆ score ┆ rank │
    │ ---  ┆ ---  ┆ ---   ┆ ---  │
    │ i64  ┆ str  ┆ f64   ┆ u32  │
    ╞══════╪══════╪═══════╪══════╡
    │ 1    ┆ b    ┆ 0.9   ┆ 1    │
    │ 1    ┆ c    ┆ 0.2   ┆ 2    │
    │ 2    ┆ a    ┆ 0.5   ┆ 1    │
    └──────┴──────┴───────┴──────┘
    """
    k = v.check_cutoff(k)
    given = read_positions(options, function="positions")
    user, item, rank, score = given["user"], given["item"], given["rank"], given["score"]
    call = caller(recs, name="recs")
    frame = call.frame
    lf = to_lazy(frame, name="recs")
    by = tuple(as_list(given["by"]))
    spec: RecsSpec = RecsSpec(user, item, rank, score, by, given["ties"], given["duplicates"])
    schema = lf.collect_schema()
    # with a score, rank is the column written: it must not overwrite another role
    check_roles(user=user, item=item, by=spec.by, recs_only={"rank": rank, "score": score})
    check_no_reserved(schema.names(), frame="recs")
    check_recs_schema(schema, spec)
    run_lengths = lengths_in_rank_order(frame, spec)
    # the top-k ranking from scores hands its rows back in no particular order: number
    # the input's rows to give them back in it
    reorder = score is not None and k is not None
    ranked: pl.LazyFrame = with_positions(
        lf.with_row_index(_INPUT_ROW) if reorder else lf, spec, k, run_lengths=run_lengths
    )
    if reorder:
        ranked = ranked.sort(_INPUT_ROW).drop(_INPUT_ROW)
    in_memory = isinstance(frame, pl.DataFrame)
    lists: list[tuple[pl.LazyFrame, list[v.DataCheck]]] = list_checks(
        ranked, spec, in_memory=in_memory
    )
    checked = v.guard(ranked, [(lf, recs_checks(spec, schema, in_memory=in_memory)), *lists])
    return call.back(checked)


def relevance(
    recs: Frame | ArrowStream,
    truth: AnyFrame,
    *,
    user: str = "user",
    item: str = "item",
    rank: str = "rank",
    relevance: str | None = None,
    relevance_level: float | None = None,
    by: str | Sequence[str] | None = None,
) -> Frame:
    """Label ranked recommendations with the truth: the input of the metric expressions.

    Returns every recommendation row plus, for each user, one row per relevant
    truth item that was not recommended (its ``rank`` and other recommendation
    columns null), so that ``group_by(user).agg(prm.<metric>(k))`` sees each
    user's whole truth. Added columns:

    * ``rel`` (or the name given as ``relevance``): Float64 graded relevance,
      0.0 for unjudged items and relevance <= 0;
    * ``is_relevant``: Boolean, ``rel > 0`` and ``rel >= relevance_level``;
    * ``n_relevant``: UInt32, the user's number of relevant items (``m_u``);
    * ``ideal_rank``: UInt32, the item's position in the user's ideal list
      (truth grades descending; null for items with no positive grade), which
      :func:`polars_rankmetrics.ndcg` reads for the ideal DCG.

    The result is a frame of the kind ``recs`` is (as for
    :func:`polars_rankmetrics.evaluate`).

    Parameters
    ----------
    recs
        Ranked recommendations (see :func:`positions`).
    truth
        One row per judged (user, item); any frame (see ``evaluate``).
    relevance
        Truth column with graded relevance; ``None``: every truth row has rel 1.
    relevance_level
        Minimum grade counted as relevant by the binary metrics (trec_eval
        ``-l``); graded NDCG still uses the raw grades.
    by
        List-identifying columns besides the user. Those also in ``truth``
        join with it (folds); those only in ``recs`` (models) share the truth.

    Notes
    -----
    Key columns (user, item and shared ``by`` columns) are compared by value,
    with one rule everywhere: String, Categorical and Enum ids as their
    text; integer ids of any width and signedness as numbers, in a dtype
    holding both sides (UInt64 against Int64: Int128, so no id overflows);
    float ids as integers (they must be whole numbers: pandas stores an
    integer column with a missing value as float64). A string id against a
    numeric id is refused with a ``TypeError``: nothing could match and every
    score would silently be 0. The key columns of the result have the
    compared dtype.

    Users of the truth without recommendations appear with null ranks and so
    score 0; users without relevant truth get ``n_relevant = 0`` and null
    metrics. Rows are sorted by (by..., user, rank, item) with unrecommended
    items last.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankmetrics as prm
    >>> ranked = pl.DataFrame({"user": [1, 1], "item": ["a", "b"], "rank": [1, 2]})
    >>> truth = pl.DataFrame({"user": [1, 1, 2], "item": ["b", "z", "y"]})
    >>> labeled = ranked.rank.relevance(truth)
    >>> labeled
    shape: (4, 7)
    ┌──────┬──────┬──────┬─────┬─────────────┬────────────┬────────────┐
    │ user ┆ item ┆ rank ┆ rel ┆ is_relevant ┆ n_relevant ┆ ideal_rank │
    │ ---  ┆ ---  ┆ ---  ┆ --- ┆ ---         ┆ ---        ┆ ---        │
    │ i64  ┆ str  ┆ i64  ┆ f64 ┆ bool        ┆ u32        ┆ u32        │
    ╞══════╪══════╪══════╪═════╪═════════════╪════════════╪════════════╡
    │ 1    ┆ a    ┆ 1    ┆ 0.0 ┆ false       ┆ 2          ┆ null       │
    │ 1    ┆ b    ┆ 2    ┆ 1.0 ┆ true        ┆ 2          ┆ 1          │
    │ 1    ┆ z    ┆ null ┆ 1.0 ┆ true        ┆ 2          ┆ 2          │
    │ 2    ┆ y    ┆ null ┆ 1.0 ┆ true        ┆ 1          ┆ 1          │
    └──────┴──────┴──────┴─────┴─────────────┴────────────┴────────────┘
    >>> labeled.group_by("user").agg(prm.average_precision(2), prm.ndcg(2)).sort("user")
    shape: (2, 3)
    ┌──────┬─────────────────────┬──────────┐
    │ user ┆ average_precision@2 ┆ ndcg@2   │
    │ ---  ┆ ---                 ┆ ---      │
    │ i64  ┆ f64                 ┆ f64      │
    ╞══════╪═════════════════════╪══════════╡
    │ 1    ┆ 0.25                ┆ 0.386853 │
    │ 2    ┆ 0.0                 ┆ 0.0      │
    └──────┴─────────────────────┴──────────┘
    """
    spec: RecsSpec = RecsSpec(user, item, rank, None, tuple(as_list(by)))
    check_roles(
        user=user,
        item=item,
        by=spec.by,
        recs_only={"rank": rank},
        truth_only={"relevance": relevance},
    )
    if relevance in (IS_RELEVANT, N_RELEVANT, IDEAL_RANK):
        raise ValueError(
            f"relevance={relevance!r} is the name of a column this step adds; "
            "rename the truth's relevance column"
        )
    call = caller(recs, name="recs")
    recs_lf, truth_lf, truth_spec, checks = prepare(
        call.frame, call.read(truth, name="truth"), spec, (relevance, relevance_level)
    )
    schema = recs_lf.collect_schema()
    check_no_reserved(schema.names(), frame="recs")
    added = [truth_spec.grade, IS_RELEVANT, N_RELEVANT, IDEAL_RANK]
    v.check_no_name_clash(schema, added, frame="recs")
    recs_only_by = [name for name in spec.by if name not in truth_spec.shared_by]
    relevant_truth = expand_over_groups(
        labeled_truth(truth_lf, truth_spec, names=(truth_spec.grade, IS_RELEVANT, IDEAL_RANK)),
        recs_lf,
        recs_only_by,
        truth_spec.shared_by,
    )
    keys = [*spec.by, user, item]
    labeled = (
        recs_lf.join(relevant_truth, on=keys, how="full", coalesce=True)
        .with_columns(
            pl.col(truth_spec.grade).fill_null(0.0),
            pl.col(IS_RELEVANT).fill_null(value=False),
        )
        .with_columns(
            pl.col(IS_RELEVANT).sum().over(spec.list_keys).cast(pl.UInt32).alias(N_RELEVANT)
        )
        .select(*schema.names(), *added)
        .sort([*spec.list_keys, rank, item], nulls_last=True)
    )
    checks.extend(list_checks(recs_lf, spec, in_memory=isinstance(call.frame, pl.DataFrame)))
    return call.back(v.guard(labeled, checks))
