"""Who gets the exposure: group shares, expected exposure, the TREC Fair 2022 score.

Three functions beside the per-user measures ``awrf@k`` and ``ndkl@k``
(:mod:`polars_rankmetrics._measures.lists.fairness`), for reports that need
more than a mean per list:

* :func:`group_exposure`: each item group's share of the attention all the
  lists give, beside its share of the catalog, and the gap between groups;
* :func:`expected_exposure`: EE-L, EE-D and EE-R (Diaz et al., CIKM 2020)
  from several sampled rankings per user;
* :func:`trec_fair_score`: AWRF x nDCG per query, as the TREC Fair Ranking
  2022 evaluation script computes it.

Definitions and caveats: ``docs/exposure-fairness.md``.

Every float sum here adds rows that come out of joins (the lists with the
catalog, the samples with the truth), whose order the streaming engine does
not keep: they are exact sums in fixed point
(:func:`polars_rankmetrics._sums.exact_sums`), but for the few rows of one
``by`` group's exposures (:func:`polars_rankmetrics._sums.ordered_sum`, added
in an order the data fixes), and the means over users are exact
(:func:`polars_rankmetrics._sums.exact_mean`), so every call gives the same
bits.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import polars as pl

from polars_rankmetrics import _validation as v
from polars_rankmetrics._frames import AnyFrame, ArrowStream, Eager, Polars, eager_caller
from polars_rankmetrics._measures.lists._shared import W, attention, check_patience
from polars_rankmetrics._pipeline.inputs import as_list
from polars_rankmetrics._pipeline.lists import unify_keys
from polars_rankmetrics._powers import power
from polars_rankmetrics._sums import exact_mean, exact_sums, fixed_point, ordered_sum

__all__ = ["expected_exposure", "group_exposure", "trec_fair_score"]

_A = "__prm_attention"
_E = "__prm_e"
_T = "__prm_target"
_TOTAL = "__prm_total"


def _lazy(frame: object, name: str) -> pl.LazyFrame:
    if isinstance(frame, pl.DataFrame):
        return frame.lazy()
    if isinstance(frame, pl.LazyFrame):
        return frame
    raise TypeError(f"{name} must be a polars DataFrame or LazyFrame, got {type(frame).__name__}")


def _check_k(k: int | None) -> None:
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k < 1):
        raise ValueError(f"k must be a positive integer or None (the whole list), got {k!r}")


def _check_p(p: object, *, upper: bool = True) -> float:
    if isinstance(p, bool) or not isinstance(p, (int, float)) or math.isnan(p):
        raise TypeError(f"p must be a number in (0, 1], got {p!r}")
    value = check_patience(float(p))
    if not upper and value == 1.0:
        raise ValueError("p must be below 1 here: the ideal exposure p^b (1 - p^m) / (m (1 - p))")
    return value


def _check_ranks(frame: pl.LazyFrame, rank: str, keys: Sequence[str]) -> None:
    """Ranks are positive integers, once per list: refused with one offending row."""
    dtype = frame.collect_schema()[rank]
    if not dtype.is_integer():
        raise TypeError(
            f"column {rank!r} (rank) must hold integer ranks (1 = top), got {dtype}; "
            "rank scores first with prm.positions"
        )
    bad = frame.filter(
        pl.col(rank).is_null() | (pl.col(rank) < 1) | pl.len().over([*keys, rank]).gt(1)
    ).collect()
    if bad.height:
        raise ValueError(
            f"column {rank!r} (rank) has {bad.height} row(s) that are null, below 1 or "
            f"repeated within a list, e.g. {bad.row(0, named=True)}"
        )


def _memberships(
    items: pl.LazyFrame, item: str, group: str, weight: str | None = None
) -> pl.LazyFrame:
    """One row per (item, group) with the item's share W of the group.

    ``items``: one row per item with a label or a list of labels, or a long
    frame, one row per (item, group); ``weight``: a column of membership
    weights (>= 0), normalised to sum to 1 per item; without it each of an
    item's m distinct groups gets 1/m.
    """
    schema = items.collect_schema()
    roles = {"item": item, "group": group}
    if weight is not None:
        roles["weight"] = weight
    v.require_columns(schema, roles, frame="items")
    if isinstance(schema[group], pl.List) and weight is not None:
        raise ValueError(
            f"weight= reads one weight per row: give items as a long frame, one row per "
            f"(item, group), not a list column {group!r}, e.g. items.explode({group!r})"
        )
    if weight is not None:
        v.require_numeric(schema, weight, frame="items", role="weight")
    if isinstance(schema[group], pl.List):
        # explode() drops an empty list: the item would then look missing from the catalog
        empty = items.filter(pl.col(group).list.len() == 0).select(item, group).collect()
        if empty.height:
            raise ValueError(
                f"items column {group!r} (group) has {empty.height} item(s) with an empty "
                f"list of groups, e.g. {empty.row(0, named=True)}; give each item at least "
                "one group (e.g. 'unknown')"
            )
    value = pl.lit(1.0) if weight is None else pl.col(weight).cast(pl.Float64)
    rows = items.select(item, pl.col(group), value.alias(W))
    if isinstance(schema[group], pl.List):
        rows = rows.with_columns(pl.col(group).list.unique()).explode(group)
    rows = rows.with_columns(pl.col(group).cast(pl.String))
    bad = rows.filter(
        pl.col(item).is_null() | pl.col(group).is_null() | pl.col(W).is_null() | (pl.col(W) < 0)
    ).collect()
    if bad.height:
        raise ValueError(
            f"items has {bad.height} row(s) with a null item or group, or a null or negative "
            f"weight, e.g. {bad.row(0, named=True)}"
        )
    if weight is not None:
        _refuse_non_finite(items, weight, "items", "weight", [item, group, weight])
    repeated = rows.group_by(item, group).len().filter(pl.col("len") > 1).collect()
    if repeated.height and weight is not None:
        raise ValueError(
            f"items has {repeated.height} (item, group) pair(s) on several rows, e.g. "
            f"{repeated.row(0, named=True)}: one weight per item and group"
        )
    rows = rows.unique([item, group]) if weight is None else rows
    empty = rows.group_by(item).agg(pl.col(W).sum()).filter(pl.col(W) <= 0).collect()
    if empty.height:
        raise ValueError(
            f"items has {empty.height} item(s) whose weights sum to 0, e.g. "
            f"{empty.row(0, named=True)}"
        )
    if weight is None:
        # each row is 1.0: the sum (the item's m groups) is exact in any order
        return rows.with_columns(pl.col(W) / pl.col(W).sum().over(item))
    # the weights given come out of explode() in no fixed order: exact sums
    totals = exact_sums(rows, [item], {_TOTAL: pl.col(W)})
    return (
        rows.join(totals, on=item, how="left").with_columns(pl.col(W) / pl.col(_TOTAL)).drop(_TOTAL)
    )


def _refuse_non_finite(
    frame: pl.LazyFrame, column: str, name: str, role: str, show: Sequence[str]
) -> None:
    """Refuse NaN and infinite values of a numeric column, with the count and a row."""
    value = pl.col(column).cast(pl.Float64)
    bad = frame.filter(value.is_nan() | value.is_infinite()).select(show).collect()
    if bad.height:
        raise ValueError(
            f"{name} column {v.shorten(column)} ({role}) has {bad.height} NaN or infinite "
            f"value(s), e.g. {bad.row(0, named=True)}: it must be a finite number"
        )


def _same_key_dtypes(
    frames: dict[str, pl.LazyFrame], keys: Sequence[str]
) -> dict[str, pl.LazyFrame]:
    """The frames with each key in one dtype, or a TypeError naming the frame that differs."""
    return unify_keys({name: (lf, lf.collect_schema()) for name, lf in frames.items()}, keys)


def _targets(pairs: pl.LazyFrame, item: str, group: str) -> pl.LazyFrame:
    n = pairs.select(pl.col(item).n_unique().cast(pl.Float64).alias("__prm_n"))
    return (
        exact_sums(pairs, [group], {_T: pl.col(W)})
        .join(n, how="cross")
        .select(group, (pl.col(_T) / pl.col("__prm_n")).alias(_T))
    )


def _missing(shown: pl.LazyFrame, pairs: pl.LazyFrame, item: str) -> None:
    missing = shown.select(item).unique().join(pairs, on=item, how="anti").collect()
    if missing.height:
        raise ValueError(
            f"{missing.height} distinct item(s) of the recommended items are missing from "
            f"the item catalog (items=), e.g. {missing.row(0, named=True)}; add them to it"
        )


def group_exposure(
    recs: Eager | pl.LazyFrame | ArrowStream,
    items: AnyFrame,
    *,
    group: str,
    weight: str | None = None,
    p: float = 0.5,
    k: int | None = None,
    user: str = "user",
    item: str = "item",
    rank: str = "rank",
    by: str | Sequence[str] | None = None,
) -> Eager:
    """Each item group's share of the lists' attention beside its share of the catalog.

    With attention p^(r - 1) at rank r (r <= k) and w_ig the share of item
    i in group g (1/m for an item of m groups)::

        share_g  = Σ_lists Σ_{r<=k} p^(r-1) w_(r)g / Σ_lists Σ_{r<=k} p^(r-1)
        target_g = Σ_i w_ig / n                          (n catalog items)
        gap      = max_g (share_g - target_g) - min_g (share_g - target_g)

    Parameters
    ----------
    recs
        One row per (user, item) with an integer ``rank`` (1 = top). Any
        frame, as are ``items`` (see :func:`polars_rankmetrics.evaluate`).
    items
        The catalog: one row per item with the ``group`` column (a label or
        a list of labels), or a long frame, one row per (item, group).
    group
        Column of ``items`` holding each item's group(s).
    weight
        Column of the long frame ``items`` with each membership's weight
        (>= 0; normalised to sum to 1 per item). ``None``: an item of m
        groups is 1/m in each.
    p
        RBP patience, in (0, 1]: 1 counts every shown item alike.
    k
        Keep ranks 1..k (``None``: the whole list).
    user, item, rank
        Column roles.
    by
        Columns evaluated side by side (models, ...).

    Returns
    -------
    Eager
        A pandas DataFrame for pandas ``recs``, else a Polars DataFrame (for a
        LazyFrame or an Arrow object too). One row per (by..., group of the
        catalog): ``exposure`` (the summed attention), ``share``, ``target``,
        ``difference`` (share - target), ``ratio`` (share / target) and
        ``gap`` (the same on every row of a ``by`` group), sorted by ``by``
        and group.

    Notes
    -----
    The shares pool every list's attention (a longer list weighs more), as
    the group exposure of Singh & Joachims (KDD 2018) and of TREC Fair's
    exposure metrics does; ``awrf@k`` is the per-list counterpart. A group
    of the catalog never shown has share 0. The gap is 0 when every group
    gets its catalog share. Without any attention (no list within ``k``)
    the shares, differences and gap are null, and a group of target 0 (every
    membership of weight 0) has a null ratio. Weights must be finite
    numbers: NaN or infinite ones are refused with a row.

    References
    ----------
    Singh & Joachims, "Fairness of exposure in rankings", KDD 2018.
    Moffat & Zobel, "Rank-biased precision", TOIS 2008 (the attention model).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankmetrics as prm
    >>> recs = pl.DataFrame({"user": [1, 1, 2], "item": ["a", "c", "a"], "rank": [1, 2, 1]})
    >>> items = pl.DataFrame({"item": ["a", "b", "c", "d"], "side": ["x", "x", "y", "y"]})
    >>> prm.group_exposure(recs, items, group="side").select("side", "share", "target", "gap")
    shape: (2, 4)
    ┌──────┬───────┬────────┬─────┐
    │ side ┆ share ┆ target ┆ gap │
    │ ---  ┆ ---   ┆ ---    ┆ --- │
    │ str  ┆ f64   ┆ f64    ┆ f64 │
    ╞══════╪═══════╪════════╪═════╡
    │ x    ┆ 0.8   ┆ 0.5    ┆ 0.6 │
    │ y    ┆ 0.2   ┆ 0.5    ┆ 0.6 │
    └──────┴───────┴────────┴─────┘
    """
    patience = _check_p(p)
    _check_k(k)
    keys = as_list(by)
    call = eager_caller(recs, name="recs")
    lists, catalog = _lazy(call.frame, "recs"), _lazy(call.read(items, name="items"), "items")
    v.require_columns(
        lists.collect_schema(),
        {"user": user, "item": item, "rank": rank, **{f"by[{i}]": b for i, b in enumerate(keys)}},
        frame="recs",
    )
    _check_ranks(lists, rank, [*keys, user])
    same = _same_key_dtypes({"recs": lists, "items": catalog}, [item])
    lists, catalog = same["recs"], same["items"]
    pairs = _memberships(catalog, item, group, weight)
    if k is not None:
        lists = lists.filter(pl.col(rank) <= k)
    _missing(lists, pairs, item)
    shown = exact_sums(
        lists.select(*keys, item, attention(pl.col(rank), patience).alias(_A)).join(pairs, on=item),
        [*keys, group],
        {"exposure": pl.col(_A) * pl.col(W)},
    )
    targets = _targets(pairs, item, group)
    frame = lists.select(keys).unique() if keys else pl.LazyFrame({"__prm_one": [1]})
    grid = frame.join(targets, how="cross")
    joined = (
        grid.join(shown, on=[*keys, group], how="left")
        if keys
        else grid.join(shown, on=group, how="left")
    )
    summed = ordered_sum(pl.col("exposure"))
    total = summed.over(keys) if keys else summed
    difference = pl.col("share") - pl.col("target")
    spread = (
        (difference.max() - difference.min()).over(keys)
        if keys
        else (difference.max() - difference.min())
    )
    # no attention at all (no list within k): the shares are undefined, null
    share = pl.when(total > 0).then(pl.col("exposure") / total)
    # a group whose every membership weighs 0 has target 0: no ratio
    ratio = pl.when(pl.col("target") > 0).then(pl.col("share") / pl.col("target"))
    result = (
        joined.with_columns(pl.col("exposure").fill_null(0.0), pl.col(_T).alias("target"))
        .with_columns(share.alias("share"))
        .with_columns(difference.alias("difference"), ratio.alias("ratio"), spread.alias("gap"))
        .select(*keys, group, "exposure", "share", "target", "difference", "ratio", "gap")
        .sort([*keys, group])
    )
    return call.back(result)


def _ideal_exposure(
    truth: pl.LazyFrame, keys: list[str], grade: pl.Expr, p: float, k: int | None
) -> pl.LazyFrame:
    """e*_i: an item's mean exposure over the ideal rankings (tied grades in any order).

    With b the items of a higher grade and m those of the item's grade, the
    ideal rankings put them at positions b + 1..b + m in every order, so
    each gets the mean of p^(r - 1) there: (p^b - p^min(b + m, k)) / (m (1 - p)),
    0 past the cutoff (Diaz et al. 2020, eq. 6; expeval's ``target``).
    """
    rel = pl.col("__prm_grade")
    levels = (
        truth.with_columns(grade.alias("__prm_grade"))
        .filter(rel > 0)
        .with_columns(
            pl.len().over([*keys, "__prm_grade"]).cast(pl.Float64).alias("__prm_m"),
            # items of a strictly higher grade
            (
                pl.col("__prm_grade").rank("max", descending=True).over(keys).cast(pl.Float64)
                - pl.len().over([*keys, "__prm_grade"]).cast(pl.Float64)
            ).alias("__prm_b"),
        )
    )
    b, m = pl.col("__prm_b"), pl.col("__prm_m")
    end = b + m if k is None else pl.min_horizontal(b + m, pl.lit(float(k)))
    start = b if k is None else pl.min_horizontal(b, pl.lit(float(k)))
    return levels.with_columns(((power(p, start) - power(p, end)) / (m * (1.0 - p))).alias(_T))


def expected_exposure(
    recs: Eager | pl.LazyFrame | ArrowStream,
    truth: AnyFrame,
    *,
    sample: str = "sample",
    p: float = 0.5,
    k: int | None = None,
    user: str = "user",
    item: str = "item",
    rank: str = "rank",
    relevance: str | None = None,
    by: str | Sequence[str] | None = None,
    per_user: bool = False,
) -> Eager:
    """Expected exposure of stochastic rankings: EE-L, EE-D and EE-R (Diaz et al., CIKM 2020).

    Each user has several sampled rankings (the ``sample`` column). With
    attention p^(r - 1) at rank r (r <= k), an item's expected exposure is
    its mean attention over the user's S samples, e_i = (1/S) Σ_s p^(r_s(i) - 1),
    and its target e*_i the mean over the ideal rankings, which order the
    relevant items by grade and tied grades in every order::

        e*_i  = (p^b - p^(b + m)) / (m (1 - p))    b: items of a higher grade, m: of its grade
        EE-D  = ||e||^2                 disparity (lower: exposure spread more evenly)
        EE-R  = 2 e . e*                relevance (higher: exposure on relevant items)
        EE-L  = ||e - e*||^2 = EE-D - EE-R + ||e*||^2   loss (0: the ideal)

    Parameters
    ----------
    recs
        One row per (sample, user, item) with an integer ``rank`` (1 = top).
        Any frame, as is ``truth`` (see :func:`polars_rankmetrics.evaluate`).
    truth
        One row per relevant (user, item), with a grade column
        ``relevance`` (``None``: every row has grade 1); grades <= 0 are not
        relevant and have target 0. A grade that is not a number, or null,
        NaN or infinite, is refused.
    sample
        Column of ``recs`` naming the sampled ranking.
    p
        RBP patience, in (0, 1) (expeval's default 0.5).
    k
        Keep ranks 1..k, in the samples and in the ideal rankings
        (``None``: whole lists, as expeval).
    user, item, rank, relevance, by
        Column roles, as in :func:`polars_rankmetrics.evaluate`.
    per_user
        ``True``: one row per (by..., user); ``False``: their means per
        ``by`` group, with ``users``, the number of users averaged.

    Returns
    -------
    Eager
        Columns ``ee_l``, ``ee_d``, ``ee_r``: a pandas DataFrame for pandas
        ``recs``, else a Polars DataFrame.

    Notes
    -----
    Users counted: those with at least one relevant item in ``truth``
    (expeval skips the others); one without any sample has e = 0 (EE-D 0,
    EE-R 0, EE-L ||e*||^2). A ``by`` group is evaluated on every user of
    the truth. Unnormalised values: expeval's ``-U`` output gives
    ``disparity`` = EE-D, ``relevance`` = EE-R / 2 and ``difference`` =
    EE-L, with its RBP user model (``-u rbp``). Items of a sample not in
    the truth count in e (and in EE-D and EE-L) with target 0.

    References
    ----------
    Diaz, Mitra, Ekstrand, Biega & Carterette, "Evaluating stochastic
    rankings with expected exposure", CIKM 2020; reference code
    https://github.com/diazf/expeval.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankmetrics as prm
    >>> recs = pl.DataFrame({
    ...     "sample": [1, 1, 2, 2], "user": [1, 1, 1, 1],
    ...     "item": ["a", "b", "b", "a"], "rank": [1, 2, 1, 2],
    ... })
    >>> truth = pl.DataFrame({"user": [1, 1], "item": ["a", "b"]})
    >>> prm.expected_exposure(recs, truth, per_user=True)
    shape: (1, 4)
    ┌──────┬──────┬───────┬──────┐
    │ user ┆ ee_l ┆ ee_d  ┆ ee_r │
    │ ---  ┆ ---  ┆ ---   ┆ ---  │
    │ i64  ┆ f64  ┆ f64   ┆ f64  │
    ╞══════╪══════╪═══════╪══════╡
    │ 1    ┆ 0.0  ┆ 1.125 ┆ 2.25 │
    └──────┴──────┴───────┴──────┘
    """
    patience = _check_p(p, upper=False)
    _check_k(k)
    if not isinstance(per_user, bool):
        raise TypeError(f"per_user must be True or False, got {per_user!r}")
    keys = as_list(by)
    call = eager_caller(recs, name="recs")
    runs, judged = _lazy(call.frame, "recs"), _lazy(call.read(truth, name="truth"), "truth")
    roles = {"sample": sample, "user": user, "item": item, "rank": rank}
    _check_samples(runs, judged, roles, keys, relevance=relevance)
    same = _same_key_dtypes({"recs": runs, "truth": judged}, [user, item])
    runs, judged = same["recs"], same["truth"]
    list_keys = [*keys, user]
    if k is not None:
        runs = runs.filter(pl.col(rank) <= k)
    samples = runs.group_by(list_keys).agg(pl.col(sample).n_unique().alias("__prm_s"))
    exposure = exact_sums(
        runs.join(samples, on=list_keys),
        [*list_keys, item],
        {_E: attention(pl.col(rank), patience) / pl.col("__prm_s").cast(pl.Float64)},
    )
    grade = pl.lit(1.0) if relevance is None else pl.col(relevance).cast(pl.Float64)
    ideal = _ideal_exposure(
        judged.select(user, item, grade.alias("__prm_rel")).unique([user, item]),
        [user],
        pl.col("__prm_rel"),
        patience,
        k,
    ).select(user, item, _T)
    # every user with a relevant item, in every by group
    groups = runs.select(keys).unique() if keys else None
    users = ideal.select(user).unique()
    population = users if groups is None else groups.join(users, how="cross")
    targets = population.join(ideal, on=user)
    both = (
        targets.join(exposure, on=[*list_keys, item], how="full", coalesce=True)
        .join(population, on=list_keys, how="semi")
        .with_columns(pl.col(_E).fill_null(0.0), pl.col(_T).fill_null(0.0))
    )
    e, target = pl.col(_E), pl.col(_T)
    values = exact_sums(
        both,
        list_keys,
        {"ee_l": (e - target) ** 2, "ee_d": e**2, "ee_r": 2.0 * e * target},
    )
    return call.back(
        _per_user_or_means(values, ("ee_l", "ee_d", "ee_r"), keys, list_keys, per_user=per_user)
    )


def _check_grades(
    truth: pl.LazyFrame, schema: pl.Schema, relevance: str, show: Sequence[str]
) -> None:
    """Grades are numbers, none null, NaN or infinite (``evaluate`` refuses them too)."""
    v.require_numeric(schema, relevance, frame="truth", role="relevance")
    nulls = truth.filter(pl.col(relevance).is_null()).select(show).collect()
    if nulls.height:
        raise ValueError(
            f"truth column {v.shorten(relevance)} (relevance) has {nulls.height} null "
            f"value(s), e.g. {nulls.row(0, named=True)}"
        )
    _refuse_non_finite(truth, relevance, "truth", "relevance", show)


def _discount(position: pl.Expr) -> pl.Expr:
    """TREC Fair 2022's discount: 1 / log2(max(r, 2)) (ranks 1 and 2 both get 1)."""
    return 1.0 / pl.max_horizontal(position.cast(pl.Float64), pl.lit(2.0)).log(2)


def trec_fair_score(
    recs: Eager | pl.LazyFrame | ArrowStream,
    truth: AnyFrame,
    items: AnyFrame,
    *,
    group: str,
    weight: str | None = None,
    target: AnyFrame | None = None,
    user: str = "user",
    item: str = "item",
    rank: str = "rank",
    by: str | Sequence[str] | None = None,
    target_len: int = 500,
    per_user: bool = False,
) -> Eager:
    """The TREC Fair Ranking 2022 task 1 score, AWRF x nDCG, as its evaluation script computes it.

    With the discount δ(r) = 1 / log2(max(r, 2)) (ranks 1 and 2 both 1)::

        nDCG  = Σ_r δ(r) rel_(r) / Σ_{r=1..min(target_len, R)} δ(r)   binary rel, R relevant
        d_g   = Σ_r δ(r) w_(r)g / Σ_r δ(r)          over the items of the catalog
        AWRF  = 1 - JSD(d ‖ t)                     natural logarithm (1 - distance^2)
        score = AWRF x nDCG

    Parameters
    ----------
    recs
        One row per (query ``user``, item) with an integer ``rank``; at
        most ``target_len`` per query. Any frame, as are ``truth``, ``items``
        and ``target`` (see :func:`polars_rankmetrics.evaluate`): the result is
        a pandas DataFrame for pandas ``recs``, else a Polars DataFrame.
    truth
        One row per relevant (user, item).
    items
        The catalog: one row per item with the ``group`` column (a label or
        a list of labels, each 1/m), or a long frame, one row per (item,
        group), as the track's page alignments.
    group
        Column of ``items`` holding each item's group(s).
    weight
        Column of the long frame ``items`` with each membership's weight
        (the alignment; normalised to sum to 1 per item, as the track's
        alignment rows do, "unknown" included). ``None``: 1/m each.
    target
        The target distribution: a frame (``group``, ``target``) or, per
        query, (``user``, ``group``, ``target``); ``None``: the catalog's
        group shares. Normalised to sum to 1 (per query).
    user, item, rank, by
        Column roles.
    target_len
        The ranking length the ideal nDCG assumes (the script's 500).
    per_user
        ``True``: one row per (by..., user) with ``ndcg``, ``awrf``,
        ``score``; ``False``: their means per ``by`` group (the script's
        run scores).

    Notes
    -----
    Matches ``wptrec.metrics.AWRFMetric`` of fair-trec/trec2022-fair-public
    for one fairness dimension: the attention is the log discount above, not
    the p^(r - 1) of ``awrf@k``; items missing from ``items`` are left out
    of the group distribution (the script's unknown pages) but count in
    nDCG; scipy's ``jensenshannon`` uses the natural logarithm and the
    script returns 1 - distance squared, i.e. 1 - the divergence. A list
    without any item of ``items`` has no group distribution: its AWRF and
    score are null (left out of the means), as with an empty catalog. A
    target share that is null, negative, NaN or infinite, a target summing
    to 0, or a per-query target without some query of ``recs`` is refused.
    Queries
    counted: every query with a list (a query with relevant items and no
    list is not scored, as the script groups by the run's rows). The
    intersectional targets of the track (several dimensions combined) are
    one group column of their combinations here.

    References
    ----------
    Ekstrand, McDonald, Raj & Johnson, "Overview of the TREC 2022 Fair
    Ranking Track", TREC 2022; https://github.com/fair-trec/trec2022-fair-public.
    Sapiezynski, Zeng, Robertson, Mislove & Wilson, "Quantifying the impact
    of user attention on fair group representation in ranked lists", WWW 2019.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankmetrics as prm
    >>> recs = pl.DataFrame({"user": [1, 1, 1], "item": ["a", "b", "c"], "rank": [1, 2, 3]})
    >>> truth = pl.DataFrame({"user": [1, 1], "item": ["a", "c"]})
    >>> items = pl.DataFrame({"item": ["a", "b", "c", "d"], "side": ["x", "x", "y", "y"]})
    >>> prm.trec_fair_score(recs, truth, items, group="side")
    shape: (1, 4)
    ┌──────────┬────────┬──────────┬───────┐
    │ ndcg     ┆ awrf   ┆ score    ┆ users │
    │ ---      ┆ ---    ┆ ---      ┆ ---   │
    │ f64      ┆ f64    ┆ f64      ┆ u32   │
    ╞══════════╪════════╪══════════╪═══════╡
    │ 0.815465 ┆ 0.9631 ┆ 0.785374 ┆ 1     │
    └──────────┴────────┴──────────┴───────┘
    """
    if isinstance(target_len, bool) or not isinstance(target_len, int) or target_len < 1:
        raise ValueError(f"target_len must be a positive integer, got {target_len!r}")
    if not isinstance(per_user, bool):
        raise TypeError(f"per_user must be True or False, got {per_user!r}")
    keys = as_list(by)
    list_keys = [*keys, user]
    call = eager_caller(recs, name="recs")
    runs, judged = _lazy(call.frame, "recs"), _lazy(call.read(truth, name="truth"), "truth")
    catalog, goal = _lazy(call.read(items, name="items"), "items"), call.read(target, name="target")
    v.require_columns(
        runs.collect_schema(),
        {"user": user, "item": item, "rank": rank, **{f"by[{i}]": b for i, b in enumerate(keys)}},
        frame="recs",
    )
    v.require_columns(judged.collect_schema(), {"user": user, "item": item}, frame="truth")
    _check_ranks(runs, rank, list_keys)
    same = _same_key_dtypes({"recs": runs, "truth": judged, "items": catalog}, [user, item])
    runs, judged, catalog = same["recs"], same["truth"], same["items"]
    longest = runs.group_by(list_keys).len().select(pl.col("len").max()).collect().item()
    if longest is not None and longest > target_len:
        raise ValueError(
            f"a query has {longest} ranked items, more than target_len={target_len} "
            "(the script refuses such runs)"
        )
    pairs = _memberships(catalog, item, group, weight)
    # the ranking's positions 1..n (the script discounts by the row's place in the run)
    ranked = runs.select(*list_keys, item, rank).with_columns(
        pl.col(rank).rank("ordinal").over(list_keys).alias("__prm_pos")
    )
    ndcg = _fair_ndcg(ranked, judged, list_keys, user=user, item=item, target_len=target_len)
    awrf = _fair_awrf(ranked, pairs, goal, list_keys, user=user, item=item, group=group)
    scored = (
        ndcg.join(awrf, on=list_keys, how="left")
        .with_columns(pl.col("ndcg").fill_null(0.0))
        .with_columns((pl.col("ndcg") * pl.col("awrf")).alias("score"))
    )
    return call.back(
        _per_user_or_means(scored, ("ndcg", "awrf", "score"), keys, list_keys, per_user=per_user)
    )


def _goal(
    target: Polars | None, pairs: pl.LazyFrame, item: str, group: str, user: str
) -> pl.LazyFrame:
    """The target shares (group, _T[, user]), normalised to sum to 1 (per query)."""
    if target is None:
        return _targets(pairs, item, group)
    frame = _lazy(target, "target")
    schema = frame.collect_schema()
    v.require_columns(schema, {"group": group, "target": "target"}, frame="target")
    per_query = user in schema
    keys = [user] if per_query else []
    v.require_numeric(schema, "target", frame="target", role="target share")
    goal = frame.select(*keys, pl.col(group).cast(pl.String), pl.col("target").cast(pl.Float64))
    bad = goal.filter(pl.col("target").is_null() | (pl.col("target") < 0)).collect()
    if bad.height:
        raise ValueError(
            f"target has {bad.height} row(s) with a null or negative share, e.g. "
            f"{bad.row(0, named=True)}"
        )
    _refuse_non_finite(goal, "target", "target", "target share", [*keys, group, "target"])
    totals = exact_sums(goal, keys, {_TOTAL: pl.col("target")})
    # the shares are normalised to sum to 1: a sum of 0 would give 0 / 0
    zero = totals.filter(pl.col(_TOTAL).fill_null(0.0) <= 0).collect()
    if zero.height or not (keys or totals.collect().height):
        where = (
            f" for {zero.height} query(ies), e.g. {zero.select(keys).row(0, named=True)}"
            if keys
            else ""
        )
        raise ValueError(
            f"target's shares sum to 0{where}: they are normalised to sum to 1, so give some "
            "group a positive share"
        )
    joined = goal.join(totals, on=keys, how="left") if keys else goal.join(totals, how="cross")
    return joined.select(*keys, group, (pl.col("target") / pl.col(_TOTAL)).alias(_T))


def _per_query_goal(goals: pl.LazyFrame, queries: pl.LazyFrame, user: str) -> pl.LazyFrame:
    """Each query's target shares; a per-query target must give every query of recs some."""
    if user not in goals.collect_schema():
        return queries.join(goals, how="cross")
    same = _same_key_dtypes({"recs": queries, "target": goals}, [user])
    queries, goals = same["recs"], same["target"]
    lacking = queries.select(user).unique().join(goals, on=user, how="anti").collect()
    if lacking.height:
        raise ValueError(
            f"target gives no shares for {lacking.height} query(ies) of recs, e.g. "
            f"{lacking.row(0, named=True)}: a per-query target needs a row for every query "
            f"(the column {v.shorten(user)})"
        )
    return queries.join(goals, on=user, how="inner")


def _per_user_or_means(
    values: pl.LazyFrame,
    columns: tuple[str, ...],
    keys: list[str],
    list_keys: list[str],
    *,
    per_user: bool,
) -> pl.DataFrame:
    """The per-user rows (sorted), or each column's mean per ``keys`` group with ``users``.

    The means are exact (fixed point, scaled over all the users, as ``evaluate``'s): the
    users' rows come out of joins in no fixed order.
    """
    if per_user:
        return values.sort(list_keys).collect()
    means = [exact_mean(name) for name in columns]
    counted = pl.len().alias("users")
    scaled = values.with_columns(fixed_point(columns))
    result = (
        scaled.group_by(keys).agg(*means, counted).sort(keys)
        if keys
        else scaled.select(*means, counted)
    )
    return result.collect()


def _fair_ndcg(
    ranked: pl.LazyFrame,
    judged: pl.LazyFrame,
    list_keys: list[str],
    *,
    user: str,
    item: str,
    target_len: int,
) -> pl.LazyFrame:
    """Each ranking's NDCG as the TREC Fair script scores it (binary; ideal cut at target_len)."""
    relevant = judged.select(user, item).unique().with_columns(pl.lit(1.0).alias("__prm_rel"))
    n_relevant = relevant.group_by(user).agg(pl.len().alias("__prm_r"))
    gains = ranked.join(relevant, on=[user, item], how="left").with_columns(
        pl.col("__prm_rel").fill_null(0.0)
    )
    ideal = n_relevant.with_columns(
        pl.int_ranges(1, pl.min_horizontal(pl.col("__prm_r"), pl.lit(target_len)) + 1)
        .list.eval(_discount(pl.element()))
        .list.sum()
        .alias("__prm_idcg")
    ).select(user, "__prm_idcg")
    return (
        exact_sums(
            gains, list_keys, {"__prm_dcg": _discount(pl.col("__prm_pos")) * pl.col("__prm_rel")}
        )
        .join(ideal, on=user, how="left")
        .select(*list_keys, (pl.col("__prm_dcg") / pl.col("__prm_idcg")).alias("ndcg"))
    )


def _fair_awrf(
    ranked: pl.LazyFrame,
    pairs: pl.LazyFrame,
    goal: Polars | None,
    list_keys: list[str],
    *,
    user: str,
    item: str,
    group: str,
) -> pl.LazyFrame:
    """Each ranking's AWRF against its target, over the attention its known items get."""
    known = ranked.join(pairs, on=item, how="inner").with_columns(
        _discount(pl.col("__prm_pos")).alias(_A)
    )
    # the attention over the known items only (the script drops unknown pages' discounts)
    totals = exact_sums(known.unique([*list_keys, item]), list_keys, {"__t": pl.col(_A)})
    shares = (
        exact_sums(known, [*list_keys, group], {"__prm_d": pl.col(_A) * pl.col(W)})
        .join(totals, on=list_keys)
        .with_columns(pl.col("__prm_d") / pl.col("__t"))
    )
    goals = _goal(goal, pairs, item, group, user)
    per_query = _per_query_goal(goals, ranked.select(list_keys).unique(), user)
    both = per_query.join(shares, on=[*list_keys, group], how="full", coalesce=True).with_columns(
        pl.col("__prm_d").fill_null(0.0), pl.col(_T).fill_null(0.0)
    )
    d, t = pl.col("__prm_d"), pl.col(_T)
    mid = (d + t) / 2.0
    half = pl.when(d > 0).then(d * (d / mid).log()).otherwise(0.0) + pl.when(t > 0).then(
        t * (t / mid).log()
    ).otherwise(0.0)
    return (
        exact_sums(both, list_keys, {"awrf": half})
        .with_columns((1.0 - (0.5 * pl.col("awrf")).clip(lower_bound=0.0)).alias("awrf"))
        # a list without any catalog item has no group distribution: its AWRF is null, as
        # with an empty catalog (not the 1 - ln 2 / 2 of an all-zero d against t)
        .join(totals.select(list_keys), on=list_keys, how="semi")
    )


def _check_samples(
    runs: pl.LazyFrame,
    judged: pl.LazyFrame,
    roles: dict[str, str],
    keys: list[str],
    *,
    relevance: str | None,
) -> None:
    """The columns of the sampled rankings and of the truth, the grades and the ranks."""
    user, item, rank, sample = roles["user"], roles["item"], roles["rank"], roles["sample"]
    by = {f"by[{i}]": b for i, b in enumerate(keys)}
    v.require_columns(runs.collect_schema(), {**roles, **by}, frame="recs")
    truth_roles = {"user": user, "item": item}
    if relevance is not None:
        truth_roles["relevance"] = relevance
    truth_schema = judged.collect_schema()
    v.require_columns(truth_schema, truth_roles, frame="truth")
    if relevance is not None:
        _check_grades(judged, truth_schema, relevance, [user, item, relevance])
    _check_ranks(runs, rank, [*keys, user, sample])
