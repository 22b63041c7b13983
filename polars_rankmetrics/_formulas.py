"""Each metric as one formula of per-user partial sums: the single source of truth.

A per-user metric needs only a few numbers about the user: how many relevant
items were found within the cutoff (``hits``), the position of the first one
(``first``), the sum of ``j / position`` over the found items (``precision_sum``,
the j-th found item at position i contributes P@i = j / i), the discounted
gain of the found items (``dcg``), the ideal DCG and the user's number of
relevant items (``n_relevant``, m_u).

:mod:`polars_rankmetrics.metrics` gathers these partial sums from a labeled
frame inside ``group_by(...).agg(...)``; :func:`polars_rankmetrics.evaluate`
gathers them from a join of the hits with per-user truth statistics, which is
much cheaper. Both then apply the formulas below, so a metric is defined once.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import polars as pl

Denominator = Literal["min_k", "relevant", "hits", "k"]
Gain = Literal["linear", "exponential"]
# a custom gain per grade (trec_eval -mndcg.1=3,2=9): (grade, gain) pairs, grades ascending
GainTable = tuple[tuple[float, float], ...]
GainSpec = Gain | GainTable


def discount(position: pl.Expr) -> pl.Expr:
    """``log2(position + 1)``: the DCG discount of a 1-based position."""
    return (position.cast(pl.Float64) + 1.0).log(2)


def gain(grade: pl.Expr, kind: GainSpec) -> pl.Expr:
    """``grade`` (linear), ``2^grade - 1`` (exponential) or a table's; grades <= 0 gain nothing.

    A table of ``(grade, gain)`` pairs gives the listed grades their gain and
    every other grade its own value, as trec_eval's ``-mndcg.1=3,2=9`` does
    (its ``setup_gains``: an unlisted level's gain is the level itself).
    """
    grade = grade.cast(pl.Float64).clip(lower_bound=0.0)
    if isinstance(kind, tuple):
        if not kind:
            return grade
        grades = pl.Series([level for level, _ in kind], dtype=pl.Float64)
        gains = pl.Series([value for _, value in kind], dtype=pl.Float64)
        return grade.replace(grades, gains)
    return grade if kind == "linear" else pl.lit(2.0).pow(grade) - 1.0


def gain_order(table: GainSpec, grades: Sequence[float]) -> list[float]:
    """``grades`` ordered by their gain, highest first (the ideal list's order).

    The linear and exponential gains grow with the grade; a table need not
    (``1=3,2=9`` puts grade 2 before grade 3), so the ideal list sorts by gain.
    """
    if not isinstance(table, tuple):
        return sorted(grades, reverse=True)
    mapped = dict(table)
    return sorted(grades, key=lambda g: (mapped.get(g, max(g, 0.0)), g), reverse=True)


def gain_label(kind: GainSpec) -> str:
    """How a gain convention is written in messages: ``linear`` or ``{1: 3.0, 2: 9.0}``."""
    if isinstance(kind, tuple):
        return "{" + ", ".join(f"{level:g}: {value:g}" for level, value in kind) + "}"
    return kind


def ideal_dcg(
    levels: Sequence[tuple[pl.Expr, pl.Expr]], k: int, longest: int | None = None
) -> pl.Expr:
    """The ideal DCG@k of a user from the number of items at each grade.

    ``levels`` pairs each grade's gain with the user's count of items at that
    grade, grades in descending order. The ideal list puts the items of the
    highest grade first, so a grade whose items follow ``start`` items of
    higher grades fills positions ``start + 1 .. start + count`` and adds
    ``gain * sum 1 / log2(i + 1)`` over those of them within 1..k: a difference
    of two entries of a table of prefix sums of the discounts. No item needs a
    position. ``longest``: no user has more items than this, so the table needs
    only ``min(k, longest) + 1`` entries (a huge k costs nothing).
    """
    size = k if longest is None else min(k, longest)
    prefix_sums = [0.0]
    for position in range(1, size + 1):
        prefix_sums.append(prefix_sums[-1] + 1.0 / math.log2(position + 1))
    table = pl.lit(pl.Series(prefix_sums))
    total = pl.lit(0.0)
    start: pl.Expr = pl.lit(0, dtype=pl.UInt32)
    for level_gain, count in levels:
        end = start + count
        filled = table.gather(pl.min_horizontal(end, pl.lit(size))) - table.gather(
            pl.min_horizontal(start, pl.lit(size))
        )
        # a grade whose items all fall past k adds nothing (also not inf * 0 = NaN)
        total = total + pl.when(filled > 0).then(level_gain * filled).otherwise(0.0)
        start = end
    return total


def discount_sum(k: int) -> float:
    """``sum_{i=1..k} 1 / log2(i + 1)``: the DCG of k items of gain 1 (RecTools' ideal)."""
    return math.fsum(1.0 / math.log2(position + 1) for position in range(1, k + 1))


# Gains above this are refused: a sum of up to 1e8 of them stays finite in float64.
GAIN_LIMIT = 1e300


def defined(value: pl.Expr, n_relevant: pl.Expr) -> pl.Expr:
    """Null for users without a relevant item, where the metric is undefined."""
    return pl.when(n_relevant > 0).then(value.cast(pl.Float64))


def precision(hits: pl.Expr, k: int) -> pl.Expr:
    """``hits / k``: missing slots of a short list count as misses."""
    return divided_by_constant(hits.cast(pl.Float64), k)


def divided_by_constant(value: pl.Expr, constant: float) -> pl.Expr:
    """``value / constant`` with the same bits for every row.

    Polars divides a column by a constant as a product with its reciprocal
    but a single value exactly (pola-rs/polars#20038: by design), so
    ``h / k`` could differ in the last bit between a user alone in a chunk
    and the others. The product with ``1 / constant`` is one operation on
    both paths.
    """
    return value * (1.0 / float(constant))


def recall(hits: pl.Expr, n_relevant: pl.Expr) -> pl.Expr:
    """``hits / m_u``."""
    return hits.cast(pl.Float64) / n_relevant


def f1(hits: pl.Expr, n_relevant: pl.Expr, k: int) -> pl.Expr:
    """``2PR / (P + R)``, which with P = h/k and R = h/m is ``2h / (k + m)`` (0 at h = 0)."""
    return fbeta(hits, n_relevant, k, 1.0)


def fbeta(hits: pl.Expr, n_relevant: pl.Expr, k: int, beta: float) -> pl.Expr:
    """``(1 + b^2) P R / (b^2 P + R)`` = ``(1 + b^2) h / (b^2 m + k)`` (0 at h = 0).

    ``k`` enters as a float: an integer k beyond 64 bits does not fit a Polars
    integer (and k + m must not overflow).
    """
    weight = beta * beta
    denominator = weight * n_relevant.cast(pl.Float64) + float(k)
    return (1.0 + weight) * hits.cast(pl.Float64) / denominator


def hit_rate(hits: pl.Expr) -> pl.Expr:
    """1 if anything relevant was found, else 0."""
    return (hits > 0).cast(pl.Float64)


def reciprocal_rank(first: pl.Expr) -> pl.Expr:
    """``1 / first`` position, 0 when nothing relevant was found."""
    return (1.0 / first.cast(pl.Float64)).fill_null(0.0)


def precision_at_hit(hit_index: pl.Expr, position: pl.Expr) -> pl.Expr:
    """P@i of a found item: its place j among the found items over its position i.

    The term AP sums over the found items (``precision_sum``), in every plan
    that computes AP: ``evaluate``'s hits table, the public expression, the
    curve steps and trec_eval's per-query plan.
    """
    return hit_index.cast(pl.Float64) / position.cast(pl.Float64)


def average_precision(
    precision_sum: pl.Expr,
    hits: pl.Expr,
    n_relevant: pl.Expr,
    k: int | pl.Expr | None,
    denominator: Denominator,
) -> pl.Expr:
    """``precision_sum / D`` with D = min(m_u, k), m_u, hits or k (0 when D is 0).

    ``k`` may be an expression (a column of cutoffs, as ``curves`` reads it).
    """
    cutoff = k if isinstance(k, pl.Expr) else pl.lit(k)
    if denominator == "k":
        if k is None:
            raise ValueError(
                "denominator='k' divides AP by the cutoff: ask for 'map@k' (e.g. 'map@10'), "
                "not 'map'"
            )
        divisor = cutoff.cast(pl.Float64) if isinstance(k, pl.Expr) else pl.lit(float(k))
    elif denominator == "relevant":
        divisor = n_relevant
    elif denominator == "min_k":
        divisor = n_relevant if k is None else pl.min_horizontal(n_relevant, cutoff)
    else:
        divisor = hits
    return pl.when(divisor > 0).then(precision_sum / divisor).otherwise(0.0)


def _tied_offsets(count: pl.Expr) -> pl.Expr:
    """The list ``[0.0, 1.0, ..., count - 1]`` per row (empty for count <= 0)."""
    count = count.cast(pl.Int64)
    return pl.int_ranges(0, pl.max_horizontal(count, pl.lit(0, pl.Int64))).cast(pl.List(pl.Float64))


def tied_first_hit(
    start: pl.Expr, size: pl.Expr, relevant: pl.Expr, k: int | None
) -> tuple[pl.Expr, pl.Expr]:
    """Expected hit rate@k and RR@k over the orders of the first tied group holding a hit.

    The group of ``n`` equal scores fills positions ``a .. a + n - 1`` and holds
    ``r`` relevant items (no relevant item comes before it). Over its ``n!``
    orders, the first ``t`` places hold no relevant item with chance
    ``prod_{i<t} (n - r - i) / (n - i)``, so:

    * hit rate@k = 1 - that chance for the ``c = clip(k - a + 1, 0, n)`` places
      within k (1 when the whole group is within k, 0 when it starts after k);
    * RR@k = ``sum_j P(first relevant at place j) / (a + j - 1)`` over places
      ``j <= min(n - r + 1, k - a + 1)``, with ``P(j) = prod_{i<j-1} (n - r - i)
      / (n - i) * r / (n - j + 1)``.

    Null where ``a`` is null (no relevant item in the list).
    """
    a, n, r = (expr.cast(pl.Float64) for expr in (start, size, relevant))
    shown = n if k is None else (float(k) - a + 1.0).clip(0.0, None)
    shown = pl.min_horizontal(shown, n)
    # past n - r + 1 places a relevant item is certain: the factors stop at the first 0
    places = pl.min_horizontal(n - r + 1.0, shown)
    offsets = _tied_offsets(places)
    none_yet = (n - r - offsets) / (n - offsets)
    # exp(sum(log)): the product, 1 for no factor; a zero factor gives exp(-inf) = 0
    miss = none_yet.list.eval(pl.element().log().sum()).list.first().exp()
    hit = pl.when(a.is_not_null()).then(1.0 - miss)
    clear = none_yet.list.eval(pl.element().cum_prod().shift(1, fill_value=1.0))
    terms = clear * r / (n - offsets) / (a + offsets)
    rr = pl.when(a.is_not_null()).then(terms.list.sum())
    return hit, rr


def ndcg(dcg: pl.Expr, ideal_dcg: pl.Expr) -> pl.Expr:
    """``dcg / idcg``; null without any positive grade (idcg = 0)."""
    return pl.when(ideal_dcg > 0).then(dcg / ideal_dcg)


def r_precision(hits_within_m: pl.Expr, n_relevant: pl.Expr) -> pl.Expr:
    """Relevant items within positions 1..m_u, over m_u."""
    return hits_within_m.cast(pl.Float64) / n_relevant
