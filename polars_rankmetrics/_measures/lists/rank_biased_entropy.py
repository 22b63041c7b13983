"""Rank-biased entropy (LensKit's ``RankBiasedEntropy``): how many categories one list spreads over.

    rank_biased_entropy(p=0.85, epsilon=1e-6)@k = mean over lists of
        -Σ_c q_c log2 q_c,  q_c = (v_c + ε) / Σ_d (v_d + ε),
        v_c = Σ over the list's catalog items i within k of p^(r_i - 1) s_ic

Notes
-----
Per list, over its top-k items: item i at rank r_i weighs p^(r_i - 1) (the
geometric rank weight of RBP, patience p, LensKit's ``GeometricRankWeight``,
default 0.85), and an item with m categories gives 1/m of that weight to each
(``items=``, ``category=``; LensKit's category matrix normalised as a
distribution). ε (``epsilon``, default 1e-6, LensKit's constant) is added to
*every* category of the catalog, shown or not, so a list of one category has a
small positive entropy and the distribution is defined over the same C
categories for every list. In bits; at most log2 C. ``p=1`` weighs every rank
alike: LensKit's ``Entropy``. ``epsilon=0`` gives the plain Shannon entropy of
the shown categories. A list with nothing within k has no value and is not
counted (LensKit: NaN). Every recommended item must be in the catalog with a
category (refused otherwise, as for ILD).

The weight reads the item's rank in the list (given, or from the scores under
``ties``): ranks 1..n with no gap, as LensKit's ``ItemList``, give LensKit's
value; with gaps the weight is that of the rank given.

Computed per list as Σ over the n shown categories of -q_c ln q_c plus
(C - n) times the term of q = ε / S for the unshown ones, S = V + C ε with
V = Σ_c v_c, then divided by ln 2. The sums run exactly (fixed point): the rows
reach them in any order and the value is the same to the last bit. The curve
uses ``ln S - (1/S) Σ_c (v_c + ε) ln(v_c + ε)``, adding down the list the
change of (v + ε) ln(v + ε) of the categories whose v grows at each rank
(equal to the value within 1e-15 or so: the two differ only by rounding).

Direction ``"higher"``: more diverse lists. The exposure of the items over all
the lists (one value per group) is ``entropy(p)@k``.

References
----------
Shannon, "A mathematical theory of communication", 1948; Moffat & Zobel,
"Rank-biased precision for measurement of retrieval effectiveness", TOIS 2008
(the rank weight); LensKit (github.com/lenskit/lkpy,
``src/lenskit/metrics/ranking/_entropy.py``: ``RankBiasedEntropy``,
``Entropy``, ``matrix_column_entropy``).
"""

from __future__ import annotations

import math

import polars as pl

from polars_rankmetrics._measures._registry import Param
from polars_rankmetrics._measures.lists._exposure import x_log_x
from polars_rankmetrics._measures.lists._hooks import (
    LIST_CODE,
    Coded,
    CurveFrames,
    ListRequest,
    PerList,
)
from polars_rankmetrics._measures.lists._register import register_list
from polars_rankmetrics._measures.lists._shared import (
    CAT,
    CAT_CODE,
    KEY,
    W,
    attention,
    check_patience,
    high,
    item_categories,
    pack,
)
from polars_rankmetrics._names import PREFIX
from polars_rankmetrics._sums import exact_sums

__all__ = ["RANK_BIASED_ENTROPY"]

_V = f"{PREFIX}v"  # a category's weight in the list
_TOTAL = f"{PREFIX}total"  # V: the list's weight over its categories
_SHOWN = f"{PREFIX}shown"  # n: the list's categories with v > 0
_C = f"{PREFIX}categories"  # C: the catalog's categories


def _check_epsilon(value: float) -> float:
    if not (math.isfinite(value) and value >= 0.0):
        raise ValueError(
            f"rank_biased_entropy's epsilon (added to every category's weight) must be a "
            f"finite number >= 0, got {value!r}"
        )
    return value


def _entropy_bits(
    total: pl.Expr, shown: pl.Expr, xlogx: pl.Expr, categories: pl.Expr, epsilon: float
) -> pl.Expr:
    """-Σ_c q_c log2 q_c over C categories from V, n and Σ_shown (v + ε) ln(v + ε)."""
    s = total + categories * epsilon
    unshown = (categories - shown) * (epsilon * math.log(epsilon) if epsilon > 0 else 0.0)
    return pl.when(total > 0).then((s.log() - (xlogx + unshown) / s) / math.log(2.0))


def _catalog_categories(table: pl.LazyFrame, column: str) -> pl.LazyFrame:
    """One row: C, the number of distinct categories of the catalog (Float64)."""
    return table.select(pl.col(column).n_unique().cast(pl.Float64).alias(_C))


def _value(request: ListRequest, coded: Coded) -> pl.LazyFrame:
    """Rank-biased entropy per list code, term by term (-q ln q, no cancellation near 0)."""
    p, epsilon = request.number("p"), request.number("epsilon")
    rank = coded.keys.rank
    weighted = coded.labeled.select(
        pack(LIST_CODE, CAT_CODE).alias(KEY), (pl.col(W) * attention(pl.col(rank), p)).alias(_V)
    )
    per_category = exact_sums(weighted, [KEY], {_V: pl.col(_V)}).select(
        high(KEY).alias(LIST_CODE), _V
    )
    per_list = exact_sums(
        per_category, [LIST_CODE], {_TOTAL: pl.col(_V)}, also=[pl.len().alias(_SHOWN)]
    ).join(_catalog_categories(coded.table, CAT_CODE), how="cross")
    s = pl.col(_TOTAL) + pl.col(_C) * epsilon
    shown = per_category.join(per_list.select(LIST_CODE, _TOTAL, _C), on=LIST_CODE, how="inner")
    terms = exact_sums(shown, [LIST_CODE], {"__prm_h": -x_log_x((pl.col(_V) + epsilon) / s)})
    # each of the C - n categories the list does not show has q = ε / S
    unshown = (pl.col(_C) - pl.col(_SHOWN)) * -x_log_x(epsilon / s)
    value = (pl.col("__prm_h") + unshown) / math.log(2.0)
    return terms.join(per_list, on=LIST_CODE, how="inner").select(
        LIST_CODE, value.alias(request.label)
    )


def _curve(request: ListRequest, frames: CurveFrames) -> pl.LazyFrame:
    """Rank-biased entropy at each position the list holds.

    Down the list only the categories of the item at a position change: their
    v grows, and Σ (v + ε) ln(v + ε) by the difference of the term before and
    after. These changes and the weights are added per position, then run down
    the list; the unshown categories count from C - n at each position.
    """
    if frames.catalog is None or frames.category is None:
        raise ValueError("rank_biased_entropy needs items with a category")
    p, epsilon = request.number("p"), request.number("epsilon")
    list_keys, position = frames.list_keys, frames.position
    weights = item_categories(frames.catalog, frames.item, frames.category).select(
        frames.item, CAT, W
    )
    # each (list, category) at the positions where its v grows, v running down the list
    before = pl.col(_V).shift(1).over([*list_keys, CAT]).fill_null(0.0)
    grows = (
        exact_sums(
            frames.rows.join(weights, on=frames.item, how="inner").with_columns(
                (pl.col(W) * attention(pl.col(position), p)).alias(_V)
            ),
            [*list_keys, CAT, position],
            {"__prm_dv": pl.col(_V)},
        )
        .sort([*list_keys, CAT, position])
        .with_columns(pl.col("__prm_dv").cum_sum().over([*list_keys, CAT]).alias(_V))
        .with_columns(
            (pl.int_range(pl.len()).over([*list_keys, CAT]) == 0)
            .cast(pl.Float64)
            .alias("__prm_new"),
            (x_log_x(pl.col(_V) + epsilon) - x_log_x(before + epsilon)).alias("__prm_dx"),
        )
    )
    # the changes at each position, summed exactly (several categories of one item)
    steps = exact_sums(
        grows,
        [*list_keys, position],
        {"__prm_dv": pl.col("__prm_dv"), "__prm_dx": pl.col("__prm_dx")},
        also=[pl.col("__prm_new").sum()],
    )
    # a category first shown at a position moves from ε ln ε (unshown) to its term: the
    # running Σ over shown categories of (v + ε) ln(v + ε) is the run of the changes plus
    # ε ln ε for each category shown so far
    base = epsilon * math.log(epsilon) if epsilon > 0 else 0.0
    running = [
        pl.col(c).fill_null(0.0).cum_sum().over(list_keys)
        for c in ("__prm_dv", "__prm_dx", "__prm_new")
    ]
    value = _entropy_bits(
        pl.col("__prm_dv"),
        pl.col("__prm_new"),
        pl.col("__prm_dx") + pl.col("__prm_new") * base,
        pl.col(_C),
        epsilon,
    )
    categories = _catalog_categories(weights, CAT)
    return (
        frames.steps.join(steps, on=[*list_keys, position], how="left", maintain_order="left")
        .with_columns(running)
        .join(categories, how="cross", maintain_order="left")
        .with_columns(value.alias(request.label))
        .drop("__prm_dv", "__prm_dx", "__prm_new", _C)
    )


RANK_BIASED_ENTROPY = register_list(
    "rank_biased_entropy",
    PerList(_value, _curve),
    direction="higher",
    doc="rank_biased_entropy(p=0.85, epsilon=1e-6)@k = mean over lists of -sum_c q_c log2 q_c, "
    "q_c from v_c + epsilon, v_c = sum over the list's items of p^(r - 1) / m_i (LensKit)",
    reads=frozenset({"catalog", "category"}),
    params=(
        Param("p", float, 0.85, "patience: item weight p^(r - 1) at rank r", check_patience),
        Param(
            "epsilon",
            float,
            1e-6,
            "added to every catalog category's weight (LensKit's smoothing)",
            _check_epsilon,
        ),
    ),
)
