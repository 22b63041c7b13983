"""A slow, obviously-correct reference for the AUC family, with loops over pairs and points.

Written from the definitions (Hanley & McNeil's pair count, McClish's
standardised partial area, RecTools' pAUC@k and pAp@k formulas), never from
the package's code. One user is a list of candidates ``(item, position,
score)`` and the set of its relevant items.

>>> ranked = [("a", 1, 0.9), ("b", 2, 0.8), ("c", 3, 0.8), ("d", 4, 0.1)]
>>> auc(ranked, {"a", "c"}, ties="position")  # pairs won: a>b, a>d, c>d of 4
0.75
>>> auc(ranked, {"a", "c"}, ties="score")  # c ties b: that pair counts one half
0.875
>>> # ROC (0, 0) (0, 1/2) (1/2, 1) (1, 1): area 3/8 up to 1/2, (1 + (3/8 - 1/8) / (3/8)) / 2
>>> round(partial_auc(ranked, {"a", "c"}, max_fpr=0.5), 12)
0.833333333333
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Sequence

Candidate = tuple[Hashable, int, float]


def _classes(
    candidates: Sequence[Candidate], relevant: set[Hashable]
) -> tuple[list[Candidate], list[Candidate]]:
    positives = [c for c in candidates if c[0] in relevant]
    negatives = [c for c in candidates if c[0] not in relevant]
    return positives, negatives


def auc(candidates: Sequence[Candidate], relevant: set[Hashable], ties: str) -> float | None:
    """The share of (positive, negative) pairs ordered right; ``None`` with one class only.

    ``ties="position"``: the better position wins (ties already broken);
    ``"score"``: the higher score wins and equal scores count one half.
    """
    positives, negatives = _classes(candidates, relevant)
    if not positives or not negatives:
        return None
    won = 0.0
    for _, position, score in positives:
        for _, other_position, other_score in negatives:
            if ties == "position":
                won += 1.0 if position < other_position else 0.0
            elif score > other_score:
                won += 1.0
            elif score == other_score:
                won += 0.5
    return won / (len(positives) * len(negatives))


def roc_points(
    candidates: Sequence[Candidate], relevant: set[Hashable], ties: str
) -> list[tuple[float, float]]:
    """The ROC curve's corners (fpr, tpr) from (0, 0): one point per distinct threshold."""
    positives, negatives = _classes(candidates, relevant)

    def key(candidate: Candidate) -> float:
        # a better position is a higher threshold, as a higher score is
        return -candidate[1] if ties == "position" else candidate[2]

    thresholds = sorted({key(c) for c in candidates}, reverse=True)
    points = [(0.0, 0.0)]
    for threshold in thresholds:
        above_pos = sum(1 for c in positives if key(c) >= threshold)
        above_neg = sum(1 for c in negatives if key(c) >= threshold)
        points.append((above_neg / len(negatives), above_pos / len(positives)))
    return points


def partial_auc(
    candidates: Sequence[Candidate], relevant: set[Hashable], max_fpr: float, ties: str = "score"
) -> float | None:
    """McClish's standardised area under the ROC polyline for fpr in [0, max_fpr]."""
    positives, negatives = _classes(candidates, relevant)
    if not positives or not negatives:
        return None
    points = roc_points(candidates, relevant, ties)
    area = 0.0
    for (x0, y0), (x1, y1) in itertools.pairwise(points):
        if x0 >= max_fpr:
            break
        # a segment that crosses max_fpr stops there, its height interpolated linearly
        x_end = min(x1, max_fpr)
        y_end = y1 if x1 <= max_fpr else y0 + (y1 - y0) * (max_fpr - x0) / (x1 - x0)
        area += (x_end - x0) * (y0 + y_end) / 2
    least, most = max_fpr**2 / 2, max_fpr
    return 0.5 * (1 + (area - least) / (most - least))


def _slots(positions: dict[Hashable, int], relevant: set[Hashable]) -> tuple[list[int], list[int]]:
    """Positions of the recommended positives, and of the negatives (empty slots included)."""
    last = max(positions.values(), default=0)
    taken = {position: item for item, position in positions.items()}
    positive = sorted(p for item, p in positions.items() if item in relevant)
    negative = [p for p in range(1, last + 1) if p not in taken or taken[p] not in relevant]
    return positive, negative


def pauc(positions: dict[Hashable, int], relevant: set[Hashable], k: int) -> float | None:
    """RecTools' pAUC@k: all positives against the top k negatives, over k m_u.

    A list with fewer than k negatives is padded with negatives below it; an
    unrecommended positive ranks below all of them.
    """
    if not relevant:
        return None
    positive, negative = _slots(positions, relevant)
    top = (negative + [float("inf")] * k)[:k]
    won = sum(1 for p in positive for n in top if p < n)
    return won / (k * len(relevant))


def pap(positions: dict[Hashable, int], relevant: set[Hashable], k: int) -> float | None:
    """RecTools' pAp@k: the top min(m_u, k) positives against the top k negatives."""
    if not relevant:
        return None
    positive, negative = _slots(positions, relevant)
    beta = min(len(relevant), k)
    top = (negative + [float("inf")] * k)[:k]
    won = sum(1 for p in positive[:beta] for n in top if p < n)
    return won / (k * beta)
