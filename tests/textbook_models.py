"""Slow, plain-Python user models and beyond-accuracy measures, from their papers alone.

Independent of the package (no Polars): the C/W/L user models INST and INSQ
written as Moffat et al. define them (the continuation C(i), the weights
W(i) normalised over the depth), and the per-list and per-group measures of
exposure, surprise and category entropy.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


def cwl_rate(gains: Mapping[int, float], target: float, depth: int, *, adaptive: bool) -> float:
    """Σ_i W(i) g_i over positions 1..depth: ``gains`` maps a position to its gain in [0, 1].

    C(i) = ((i + T + T_i - 1) / (i + T + T_i))^2 with T_i = T - Σ_{j<=i} g_j
    (INST), or T_i = T (INSQ); W(i) = Π_{j<i} C(j) / Σ_m Π_{j<m} C(j).
    """
    vector = [gains.get(position, 0.0) for position in range(1, depth + 1)]
    reach = []  # Π_{j<i} C(j) for i = 1..depth
    product, seen = 1.0, 0.0
    for i, gain in enumerate(vector, start=1):
        reach.append(product)
        seen += gain
        remaining = target - seen if adaptive else target
        product *= ((i + target + remaining - 1.0) / (i + target + remaining)) ** 2
    return sum(w * g for w, g in zip(reach, vector, strict=True)) / sum(reach)


def entropy(counts: Sequence[float]) -> float | None:
    """-Σ p ln p of the shares of positive ``counts``; None when they sum to 0."""
    total = sum(counts)
    if total <= 0:
        return None
    return -sum(c / total * math.log(c / total) for c in counts if c > 0)


def serendipity(
    ranked: Sequence[tuple[object, int]],
    relevant: set[object],
    history: Sequence[tuple[object, object]],
    catalog_size: int,
    k: int | None,
) -> float | None:
    """RecTools' serendipity of one list: (1/k_u) Σ_relevant max(p_u(r) - p(i), 0).

    ``ranked``: (item, rank) rows; popularity ranks are dense over the distinct
    users per item in ``history``, 1 = the most users; None for an empty cut.
    """
    users_of: dict[object, set[object]] = {}
    for user, item in history:
        users_of.setdefault(item, set()).add(user)
    counts = sorted({len(users) for users in users_of.values()}, reverse=True)
    popularity_rank = {item: counts.index(len(users)) + 1 for item, users in users_of.items()}
    rows = [(item, rank) for item, rank in ranked if k is None or rank <= k]
    if not rows:
        return None
    n = catalog_size
    total = 0.0
    for item, rank in rows:
        if item not in relevant:
            continue
        for_user = (n + 1 - rank) / n
        pop = popularity_rank.get(item)
        for_anyone = (n + 1 - pop) / n if pop is not None else 0.0
        total += max(for_user - for_anyone, 0.0)
    return total / len(rows)
