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

Denominator = Literal["min_k", "relevant", "hits"]
Gain = Literal["linear", "exponential"]


def discount(position: pl.Expr) -> pl.Expr:
    """``log2(position + 1)``: the DCG discount of a 1-based position."""
    return (position.cast(pl.Float64) + 1.0).log(2)


def gain(grade: pl.Expr, kind: Gain) -> pl.Expr:
    """``grade`` (linear) or ``2^grade - 1`` (exponential); grades <= 0 gain nothing."""
    grade = grade.cast(pl.Float64).clip(lower_bound=0.0)
    return grade if kind == "linear" else pl.lit(2.0).pow(grade) - 1.0


def ideal_dcg(levels: Sequence[tuple[pl.Expr, pl.Expr]], k: int) -> pl.Expr:
    """The ideal DCG@k of a user from the number of items at each grade.

    ``levels`` pairs each grade's gain with the user's count of items at that
    grade, grades in descending order. The ideal list puts the items of the
    highest grade first, so a grade whose items follow ``start`` items of
    higher grades fills positions ``start + 1 .. start + count`` and adds
    ``gain * sum 1 / log2(i + 1)`` over those of them within 1..k: a difference
    of two entries of a table of k + 1 prefix sums. No item needs a position.
    """
    prefix_sums = [0.0]
    for position in range(1, k + 1):
        prefix_sums.append(prefix_sums[-1] + 1.0 / math.log2(position + 1))
    table = pl.lit(pl.Series(prefix_sums))
    total = pl.lit(0.0)
    start: pl.Expr = pl.lit(0, dtype=pl.UInt32)
    for level_gain, count in levels:
        end = start + count
        filled = table.gather(pl.min_horizontal(end, pl.lit(k))) - table.gather(
            pl.min_horizontal(start, pl.lit(k))
        )
        # a grade whose items all fall past k adds nothing (also not inf * 0 = NaN)
        total = total + pl.when(filled > 0).then(level_gain * filled).otherwise(0.0)
        start = end
    return total


def defined(value: pl.Expr, n_relevant: pl.Expr) -> pl.Expr:
    """Null for users without a relevant item, where the metric is undefined."""
    return pl.when(n_relevant > 0).then(value.cast(pl.Float64))


def precision(hits: pl.Expr, k: int) -> pl.Expr:
    """``hits / k``: missing slots of a short list count as misses."""
    return hits.cast(pl.Float64) / float(k)


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


def average_precision(
    precision_sum: pl.Expr,
    hits: pl.Expr,
    n_relevant: pl.Expr,
    k: int | None,
    denominator: Denominator,
) -> pl.Expr:
    """``precision_sum / D`` with D = min(m_u, k), m_u or hits (0 when D is 0)."""
    if denominator == "relevant":
        divisor = n_relevant
    elif denominator == "min_k":
        divisor = n_relevant if k is None else pl.min_horizontal(n_relevant, pl.lit(k))
    else:
        divisor = hits
    return pl.when(divisor > 0).then(precision_sum / divisor).otherwise(0.0)


def ndcg(dcg: pl.Expr, ideal_dcg: pl.Expr) -> pl.Expr:
    """``dcg / idcg``; null without any positive grade (idcg = 0)."""
    return pl.when(ideal_dcg > 0).then(dcg / ideal_dcg)


def r_precision(hits_within_m: pl.Expr, n_relevant: pl.Expr) -> pl.Expr:
    """Relevant items within positions 1..m_u, over m_u."""
    return hits_within_m.cast(pl.Float64) / n_relevant
