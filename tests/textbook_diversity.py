"""Slow, plain-Python diversity measures, written from the papers' formulas alone.

Independent of the package: no Polars. One topic at a time:

* ``ranking``: the documents in rank order (position 1 first);
* ``judged``: subtopic -> the set of documents relevant to it (judgment >= 1);
  subtopics without a relevant document are not in it.

The ideal ranking is the greedy one of Clarke et al. (2008), as ndeval builds
it: the document of largest novelty-discounted gain at each step, equal gains
to the largest document id.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

Judged = Mapping[str, frozenset[str]]


def gains(ranking: Sequence[str], judged: Judged, alpha: float) -> list[float]:
    """g_r = sum_s J(d_r, s) (1 - alpha)^{C_s(r - 1)} at each position."""
    seen = dict.fromkeys(judged, 0)
    out = []
    for doc in ranking:
        total = 0.0
        for subtopic, docs in judged.items():
            if doc in docs:
                total += (1.0 - alpha) ** seen[subtopic]
                seen[subtopic] += 1
        out.append(total)
    return out


def ideal(judged: Judged, alpha: float) -> list[str]:
    """The greedy ideal ranking of every relevant document."""
    pool = sorted({doc for docs in judged.values() for doc in docs})
    seen = dict.fromkeys(judged, 0)
    ranking: list[str] = []
    while pool:
        best, best_gain = "", -1.0
        for doc in pool:
            gain = sum((1.0 - alpha) ** seen[s] for s, docs in judged.items() if doc in docs)
            if gain > best_gain or (gain == best_gain and doc > best):
                best, best_gain = doc, gain
        pool.remove(best)
        ranking.append(best)
        for subtopic, docs in judged.items():
            if best in docs:
                seen[subtopic] += 1
    return ranking


def _dcg(g: Sequence[float], k: int) -> float:
    return sum(value / math.log2(r + 1) for r, value in enumerate(g[:k], start=1))


def _err(g: Sequence[float], k: int) -> float:
    return sum(value / r for r, value in enumerate(g[:k], start=1))


def _ideal_ideal(n: int, alpha: float, k: int, discount: str) -> float:
    """ndeval's normaliser: every subtopic covered at every rank (1 at k = 1)."""
    if k == 1:
        return 1.0
    weight = (lambda r: 1 / math.log2(r + 1)) if discount == "log" else (lambda r: 1 / r)
    return n * sum((1 - alpha) ** (r - 1) * weight(r) for r in range(1, k + 1))


def measures(
    ranking: Sequence[str], judged: Judged, k: int, *, alpha: float = 0.5, beta: float = 0.5
) -> dict[str, float]:
    """Every diversity measure of one topic (0 for a topic without relevant subtopics)."""
    names = ["alpha_dcg", "alpha_ndcg", "err_ia", "nerr_ia", "nrbp", "nnrbp", "p_ia", "map_ia"]
    n = len(judged)
    if n == 0:
        return dict.fromkeys([*names, "strec"], 0.0)
    g, best = gains(ranking, judged, alpha), gains(ideal(judged, alpha), judged, alpha)
    rbp = sum(value * beta ** (r - 1) for r, value in enumerate(g, start=1))
    ideal_rbp = sum(value * beta ** (r - 1) for r, value in enumerate(best, start=1))
    top = ranking[:k]
    ap = 0.0
    for docs in judged.values():
        found, total = 0, 0.0
        for r, doc in enumerate(ranking, start=1):
            if doc in docs:
                found += 1
                total += found / r
        ap += total / len(docs)
    return {
        "alpha_dcg": _dcg(g, k) / _ideal_ideal(n, alpha, k, "log"),
        "alpha_ndcg": _dcg(g, k) / _dcg(best, k) if _dcg(g, k) > 0 else 0.0,
        "err_ia": _err(g, k) / _ideal_ideal(n, alpha, k, "reciprocal"),
        "nerr_ia": _err(g, k) / _err(best, k) if _err(g, k) > 0 else 0.0,
        "nrbp": (1 - (1 - alpha) * beta) / n * rbp,
        "nnrbp": rbp / ideal_rbp,
        "p_ia": sum(doc in docs for doc in top for docs in judged.values()) / (k * n),
        "map_ia": ap / n,
        "strec": sum(any(doc in docs for doc in top) for docs in judged.values()) / n,
    }
