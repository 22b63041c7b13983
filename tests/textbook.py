"""A slow, obviously-correct reference for every metric ``evaluate`` supports.

Written straight from ``shared/METRICS.md`` and the contract in the docstring of
:func:`polars_rankmetrics.evaluate`, with dicts and loops only and never from
the package's code: the property tests (``test_properties.py``) check the
package against it. Speed does not matter here; being readable against the
formulas does.

One user's data is two dicts: ``positions`` (item -> position, 1 = top; the
ranked list, possibly with gaps) and ``grades`` (item -> graded relevance of
every judged item). ``k=None`` means the whole list.

The worked examples of METRICS.md, checked against this module (they run as
doctests, so the reference is itself tested against the spec):

>>> truth = {"B": 1, "D": 1, "Z": 1}
>>> first, second = at(["A", "B", "C", "D", "E"]), at(["A", "C", "E", "B", "D"])
>>> rel = relevant_items(truth)
>>> round(average_precision(first, rel, 5, "min_k"), 6), round(average_precision(second, rel, 5, "relevant"), 6)
(0.333333, 0.216667)
>>> round(average_precision(first, rel, 5, "hits"), 6), round(average_precision(second, rel, 5, "hits"), 6)
(0.5, 0.325)
>>> round((ndcg(first, truth, 5, "linear") + ndcg(second, truth, 5, "linear")) / 2, 6)
0.440919
>>> pattern = at_pattern([1, 1, 1, 0, 1, 0, 1, 0, 0, 1])
>>> rel = relevant_items(pattern_truth(pattern))
>>> [round(average_precision(pattern, rel, k, "hits"), 6) for k in (5, 7, 9, 10)]
[0.95, 0.902857, 0.902857, 0.852381]
>>> [round(precision(pattern, rel, k), 6) for k in (3, 5, 7, 10)]
[1.0, 0.8, 0.714286, 0.6]
>>> pattern = at_pattern([1, 0, 1, 0, 1])
>>> round(average_precision(pattern, relevant_items(pattern_truth(pattern)), 5, "hits"), 6)
0.755556
>>> pattern = at_pattern([0, 1, 0, 1, 1])
>>> round(average_precision(pattern, relevant_items(pattern_truth(pattern)), 5, "hits"), 6)
0.533333
>>> pattern = at_pattern([1, 0, 1, 0, 0, 1, 0, 0, 1, 1])
>>> round(average_precision(pattern, relevant_items(pattern_truth(pattern)), 10, "relevant"), 6)
0.622222
>>> pattern = at_pattern([0, 1, 0, 0, 1, 0, 1, 0, 0, 0])
>>> round(average_precision(pattern, relevant_items(pattern_truth(pattern)), 10, "relevant"), 6)
0.442857
>>> grades = {"g3": 3, "g2": 2, "g1": 1}
>>> ranked = at(["g1", "g2", "g3"])
>>> round(ndcg(ranked, grades, 3, "linear"), 6), round(ndcg(ranked, grades, 3, "exponential"), 6)
(0.789998, 0.680606)
>>> six = at_pattern([1, 0, 1, 0, 1])
>>> rel = relevant_items(pattern_truth(six, unseen=3))
>>> [round(average_precision(six, rel, 5, d), 6) for d in ("relevant", "min_k", "hits")]
[0.377778, 0.453333, 0.755556]
>>> q1 = at([9, 2, 1])
>>> truth5 = relevant_items({1: 1, 2: 1, 3: 1, 4: 1, 5: 1})
>>> [round(precision(q1, truth5, k), 6) for k in (1, 2, 3)], [recall(q1, truth5, k) for k in (1, 2, 3)]
([0.0, 0.5, 0.666667], [0.0, 0.2, 0.4])
>>> [round(average_precision(q1, truth5, 3, d), 6) for d in ("hits", "relevant", "min_k")]
[0.583333, 0.233333, 0.388889]
>>> q2 = at([1, 7, 8])
>>> [round(precision(q2, truth5, k), 6) for k in (1, 2, 3)], [recall(q2, truth5, k) for k in (1, 2, 3)]
([1.0, 0.5, 0.333333], [0.2, 0.2, 0.2])
>>> [round(average_precision(q2, truth5, 3, d), 6) for d in ("hits", "relevant", "min_k")]
[1.0, 0.2, 0.333333]

Example 5 (MRR, Hits@k, Mean Rank) and the means of example 1:

>>> lists = [at_pattern([0, 0, 1]), at_pattern([0, 1]), at_pattern([1])]
>>> rels = [relevant_items(pattern_truth(lst)) for lst in lists]
>>> round(sum(reciprocal_rank(lst, r, None) for lst, r in zip(lists, rels)) / 3, 6)
0.611111
>>> [round(sum(hit_rate(lst, r, k) for lst, r in zip(lists, rels)) / 3, 6) for k in (1, 3)]
[0.333333, 1.0]
>>> recs = [{"user": u, "item": i, "rank": p} for u, items in
...         (("u1", "ABCDE"), ("u2", "ACEBD")) for p, i in enumerate(items, 1)]
>>> truth = [{"user": u, "item": i} for u in ("u1", "u2") for i in "BDZ"]
>>> evaluate(recs, truth, ["user", "item"], ["map@5", "ndcg@5", "mrr", "precision@5", "recall@5"])
[{'map@5': 0.275, 'ndcg@5': 0.44091..., 'mrr': 0.375, 'precision@5': 0.4, 'recall@5': 0.66666...}]
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from typing import Any

Positions = Mapping[Hashable, int]
Grades = Mapping[Hashable, float]

ALIASES = {"hits": "hit_rate", "ap": "map", "rr": "mrr"}
# a convention left at (equal to) its default is filled by the preset
DEFAULTS = {
    "denominator": "min_k",
    "gain": "linear",
    "ties": "item_desc",
    "users_without_recs": None,
    "users_without_truth": None,
}
PRESETS: dict[str, dict[str, Any]] = {
    "default": {"users_without_recs": "zero", "users_without_truth": "exclude"},
    # trec_eval without -c: AP over all relevant, only queries with a run, and a
    # judged query without relevant documents scores 0 (its tie rule is the default)
    "trec": {
        "denominator": "relevant",
        "users_without_recs": "exclude",
        "users_without_truth": "judged",
    },
}


# --- helpers for writing ranked lists by hand -----------------------------------------


def at(items: Iterable[Hashable]) -> dict[Hashable, int]:
    """Positions 1, 2, ... of ``items`` in the order given."""
    return {item: position for position, item in enumerate(items, start=1)}


def at_pattern(pattern: Sequence[int]) -> dict[Hashable, int]:
    """A list whose relevant positions follow a 0/1 pattern; relevant items are named r<i>."""
    return {(f"r{i}" if flag else f"n{i}"): i for i, flag in enumerate(pattern, start=1)}


def pattern_truth(positions: Positions, unseen: int = 0) -> dict[Hashable, float]:
    """Truth of an ``at_pattern`` list: its r<i> items plus ``unseen`` relevant items never shown."""
    truth: dict[Hashable, float] = {item: 1 for item in positions if str(item).startswith("r")}
    truth.update({f"unseen{j}": 1 for j in range(unseen)})
    return truth


# --- one user ---------------------------------------------------------------------------


def relevant_items(grades: Grades, level: float | None = None) -> set[Hashable]:
    """R_u: the items with rel > 0 (and rel >= the relevance level when one is given)."""
    return {item for item, g in grades.items() if g > 0 and (level is None or g >= level)}


def shown(position: int, k: int | None) -> bool:
    return k is None or position <= k


def last_position(positions: Positions, k: int | None) -> int:
    """The last position a metric at cutoff k reads (the end of the list when k is None)."""
    return max(positions.values(), default=0) if k is None else k


def item_at(positions: Positions) -> dict[int, Hashable]:
    return {position: item for item, position in positions.items()}


def hits(positions: Positions, relevant: set[Hashable], k: int | None) -> int:
    """Number of relevant items at positions 1..k."""
    count = 0
    for item in relevant:
        if item in positions and shown(positions[item], k):
            count += 1
    return count


def precision(positions: Positions, relevant: set[Hashable], k: int) -> float:
    """|relevant in 1..k| / k: missing slots are misses."""
    return hits(positions, relevant, k) / k


def recall(positions: Positions, relevant: set[Hashable], k: int | None) -> float:
    """|relevant in 1..k| / m_u."""
    return hits(positions, relevant, k) / len(relevant)


def f1(positions: Positions, relevant: set[Hashable], k: int) -> float:
    """Harmonic mean of precision@k and recall@k, 0 when both are 0."""
    p, r = precision(positions, relevant, k), recall(positions, relevant, k)
    return 0.0 if p + r == 0 else 2 * p * r / (p + r)


def hit_rate(positions: Positions, relevant: set[Hashable], k: int | None) -> float:
    """1 if any of positions 1..k is relevant, else 0."""
    return 1.0 if hits(positions, relevant, k) > 0 else 0.0


def first_relevant_rank(
    positions: Positions, relevant: set[Hashable], k: int | None = None
) -> int | None:
    """Position of the first relevant item within 1..k; None if there is none."""
    found = [positions[item] for item in relevant if item in positions]
    found = [position for position in found if shown(position, k)]
    return min(found) if found else None


def reciprocal_rank(positions: Positions, relevant: set[Hashable], k: int | None) -> float:
    """1 / (position of the first relevant item within 1..k), 0 if none."""
    first = first_relevant_rank(positions, relevant, k)
    return 0.0 if first is None else 1.0 / first


def average_precision(
    positions: Positions, relevant: set[Hashable], k: int | None, denominator: str
) -> float:
    """(1/D) * sum_{i=1..k} P@i * rel(i), D from the denominator rule."""
    by_position = item_at(positions)
    total = 0.0
    for i in range(1, last_position(positions, k) + 1):
        if by_position.get(i) in relevant:
            # P@i with the list cut at i (never at k)
            total += hits(positions, relevant, i) / i
    m = len(relevant)
    if denominator == "relevant":
        d = m
    elif denominator == "min_k":
        d = m if k is None else min(m, k)
    elif denominator == "hits":
        d = hits(positions, relevant, k)
    elif denominator == "k":
        # RecTools divide_by_k=True, RePlay: AP@K = (1/K) sum P@i rel(i)
        assert k is not None
        d = k
    else:
        raise ValueError(denominator)
    return 0.0 if d == 0 else total / d


def gain_of(grade: float, gain: str) -> float:
    """Linear r or exponential 2^r - 1; relevance <= 0 gains nothing."""
    if grade <= 0:
        return 0.0
    if gain == "linear":
        return float(grade)
    if gain == "exponential":
        return 2.0**grade - 1.0
    raise ValueError(gain)


def dcg(positions: Positions, grades: Grades, k: int | None, gain: str) -> float:
    """sum_{i=1..k} gain(g(i)) / log2(i + 1); g = 0 for unjudged items."""
    by_position = item_at(positions)
    total = 0.0
    for i in range(1, last_position(positions, k) + 1):
        item = by_position.get(i)
        grade = grades.get(item, 0.0) if i in by_position else 0.0
        total += gain_of(grade, gain) / math.log2(i + 1)
    return total


def idcg(grades: Grades, k: int | None, gain: str) -> float:
    """DCG of the user's truth grades sorted descending, cut at k (from the truth)."""
    ideal = sorted((g for g in grades.values() if g > 0), reverse=True)
    if k is not None:
        ideal = ideal[:k]
    return sum(gain_of(g, gain) / math.log2(i + 1) for i, g in enumerate(ideal, start=1))


def ndcg(positions: Positions, grades: Grades, k: int | None, gain: str) -> float:
    """dcg@k / idcg@k, 0 when idcg is 0."""
    ideal = idcg(grades, k, gain)
    return 0.0 if ideal == 0 else dcg(positions, grades, k, gain) / ideal


def r_precision(positions: Positions, relevant: set[Hashable]) -> float:
    """Precision at position m_u."""
    return precision(positions, relevant, len(relevant))


def pooled_parts(positions: Positions, relevant: set[Hashable], k: int) -> tuple[int, int]:
    """OTTO pooled recall's (numerator, denominator) for one user: hits@k, min(k, m_u)."""
    return hits(positions, relevant, k), min(k, len(relevant))


# --- metric strings --------------------------------------------------------------------


def parse(label: str) -> tuple[str, int | None]:
    """``"ndcg@10"`` -> ("ndcg", 10); ``"mrr"`` -> ("mrr", None); aliases resolved."""
    match = re.fullmatch(r"\s*([A-Za-z_]\w*)\s*(?:@\s*(\d+))?\s*", label)
    if match is None:
        raise ValueError(label)
    name = match.group(1).lower()
    k = int(match.group(2)) if match.group(2) else None
    return ALIASES.get(name, name), k


def user_scores(
    positions: Positions,
    grades: Grades,
    labels: Sequence[str],
    *,
    level: float | None,
    denominator: str,
    gain: str,
) -> dict[str, Any]:
    """Every requested metric for one user with at least one relevant item.

    pooled_recall labels map to their (hits, cap) pair; the caller divides.
    """
    relevant = relevant_items(grades, level)
    assert relevant, "metrics are undefined for a user without relevant items"
    out: dict[str, Any] = {}
    for label in labels:
        name, k = parse(label)
        if name == "precision":
            assert k is not None
            out[label] = precision(positions, relevant, k)
        elif name == "recall":
            out[label] = recall(positions, relevant, k)
        elif name == "f1":
            assert k is not None
            out[label] = f1(positions, relevant, k)
        elif name == "hit_rate":
            out[label] = hit_rate(positions, relevant, k)
        elif name == "map":
            out[label] = average_precision(positions, relevant, k, denominator)
        elif name == "mrr":
            out[label] = reciprocal_rank(positions, relevant, k)
        elif name == "ndcg":
            out[label] = ndcg(positions, grades, k, gain)
        elif name == "dcg":
            out[label] = dcg(positions, grades, k, gain)
        elif name == "r_precision":
            out[label] = r_precision(positions, relevant)
        elif name == "mean_rank":
            first = first_relevant_rank(positions, relevant)
            out[label] = None if first is None else float(first)
        elif name == "pooled_recall":
            assert k is not None
            out[label] = pooled_parts(positions, relevant, k)
        else:
            raise ValueError(label)
    return out


def zero_scores(
    labels: Sequence[str], positions: Positions, grades: Grades, gain: str
) -> dict[str, Any]:
    """A user without relevant items counted by the policy: 0 on every binary metric, no
    first relevant rank (mean_rank skips the user) and nothing to pool (0 hits of 0).

    NDCG and DCG read the raw grades (trec_eval -l): a user whose grades are all
    below the relevance level still gains from them; with no positive grade, 0.
    """
    out: dict[str, Any] = {}
    for label in labels:
        name, k = parse(label)
        if name == "mean_rank":
            out[label] = None
        elif name == "pooled_recall":
            out[label] = (0, 0)
        elif name == "ndcg" and idcg(grades, k, gain) > 0:
            out[label] = ndcg(positions, grades, k, gain)
        elif name == "dcg":
            out[label] = dcg(positions, grades, k, gain)
        else:
            out[label] = 0.0
    return out


# --- ranked lists ----------------------------------------------------------------------


def rank_items(rows: Sequence[tuple[Hashable, Any]], ties: str) -> list[Hashable]:
    """Items of one list ordered by score descending (compared as float64), ties by rule.

    ``rows`` are (item, score) in input order. item_desc: trec_eval (score desc,
    then item id desc); item_asc: item id ascending; input: stable input order.
    """
    indexed = [(float(score), item, n) for n, (item, score) in enumerate(rows)]
    if ties == "item_desc":
        # (score, item) descending; equal pairs (a repeated item) keep input order
        ordered = sorted(indexed, key=lambda row: (row[0], row[1]), reverse=True)
    elif ties == "item_asc":
        ordered = sorted(indexed, key=lambda row: (-row[0], row[1]))
    elif ties == "input":
        ordered = sorted(indexed, key=lambda row: -row[0])
    else:
        raise ValueError(ties)
    return [row[1] for row in ordered]


def positions_from_scores(
    rows: Sequence[tuple[Hashable, Any]], ties: str, duplicates: str
) -> dict[Hashable, int]:
    """Positions 1..n from scores; with duplicates="first" an item keeps its best one
    and the list is re-numbered."""
    positions: dict[Hashable, int] = {}
    for item in rank_items(rows, ties):
        if item in positions:
            if duplicates != "first":
                raise ValueError(f"item {item!r} recommended twice")
            continue
        positions[item] = len(positions) + 1
    return positions


def positions_from_ranks(
    rows: Sequence[tuple[Hashable, int]], duplicates: str
) -> dict[Hashable, int]:
    """Positions as given (gaps stay gaps); duplicates="first" keeps an item's best one."""
    positions: dict[Hashable, int] = {}
    for item, position in rows:
        if item in positions:
            if duplicates != "first":
                raise ValueError(f"item {item!r} recommended twice")
            positions[item] = min(positions[item], position)
        else:
            positions[item] = position
    return positions


# --- evaluate --------------------------------------------------------------------------


def resolve(conventions: str, **given: Any) -> dict[str, Any]:
    """A preset fills each convention left at (equal to) its default."""
    preset = PRESETS[conventions]
    return {
        name: preset.get(name, value) if value == DEFAULTS[name] else value
        for name, value in given.items()
    }


def evaluate(
    recs: Sequence[Mapping[str, Any]],
    truth: Sequence[Mapping[str, Any]],
    truth_columns: Sequence[str],
    metrics: Sequence[str],
    *,
    user: str = "user",
    item: str = "item",
    rank: str = "rank",
    score: str | None = None,
    relevance: str | None = None,
    by: Sequence[str] = (),
    per_user: bool = False,
    denominator: str = "min_k",
    gain: str = "linear",
    ties: str = "item_desc",
    relevance_level: float | None = None,
    users_without_recs: str | None = None,
    users_without_truth: str | None = None,
    duplicates: str = "error",
    conventions: str = "default",
) -> list[dict[str, Any]]:
    """The textbook ``evaluate``: rows as dicts in, rows as dicts out.

    ``recs`` and ``truth`` are lists of row dicts (``truth_columns`` names the
    truth's columns, so that an empty truth still says which ``by`` columns it
    has). Per user: one dict per evaluated (by..., user), sorted by those keys.
    Means: one dict per ``by`` group that has an evaluated user (one dict, with
    None for undefined means, when there is no ``by``).

    Who is evaluated in a group: its users with a relevant item (those without
    recommendations only under users_without_recs="zero"); users without one
    score 0 and count under users_without_truth="judged" if they have truth
    rows, under "zero" if they have truth rows or recommendations (again only
    with recommendations under users_without_recs="exclude").
    """
    conv = resolve(
        conventions,
        denominator=denominator,
        gain=gain,
        ties=ties,
        users_without_recs=users_without_recs,
        users_without_truth=users_without_truth,
    )
    by = list(by)
    shared = [name for name in by if name in truth_columns]
    recs_only = [name for name in by if name not in truth_columns]

    # every ranked list: (by values..., user) -> its rows in input order
    lists: dict[tuple[Any, ...], list[tuple[Hashable, Any]]] = {}
    for row in recs:
        key = (*(row[name] for name in by), row[user])
        lists.setdefault(key, []).append((row[item], row[score] if score else row[rank]))
    ranked: dict[tuple[Any, ...], dict[Hashable, int]] = {}
    for key, rows in lists.items():
        if score is not None:
            ranked[key] = positions_from_scores(rows, conv["ties"], duplicates)
        else:
            ranked[key] = positions_from_ranks(rows, duplicates)

    # the truth: (shared by values..., user) -> {item: grade}
    judged: dict[tuple[Any, ...], dict[Hashable, float]] = {}
    for row in truth:
        key = (*(row[name] for name in shared), row[user])
        grade = 1.0 if relevance is None else float(row[relevance])
        judged.setdefault(key, {})[row[item]] = grade

    # the by groups: models (recs-only columns) share the truth of their folds
    groups: set[tuple[Any, ...]] = {key[:-1] for key in lists}
    if not recs_only:
        groups |= {key[:-1] for key in judged}

    def shared_part(group: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(value for name, value in zip(by, group, strict=True) if name in shared)

    labels = list(metrics)
    scored: dict[tuple[Any, ...], dict[str, Any]] = {}
    for group in groups:
        # who is in this group: users judged for its fold(s), users it recommended to
        judged_here = {
            truth_key[-1]: grades
            for truth_key, grades in judged.items()
            if truth_key[:-1] == shared_part(group)
        }
        recommended_here = {key[-1] for key in lists if key[:-1] == group}
        for u in set(judged_here) | recommended_here:
            key = (*group, u)
            if u not in recommended_here and conv["users_without_recs"] == "exclude":
                continue
            grades = judged_here.get(u, {})
            if relevant_items(grades, relevance_level):
                scored[key] = user_scores(
                    ranked.get(key, {}),
                    grades,
                    labels,
                    level=relevance_level,
                    denominator=conv["denominator"],
                    gain=conv["gain"],
                )
            # no relevant item: metrics are undefined; the policy decides
            elif conv["users_without_truth"] == "zero" or (
                conv["users_without_truth"] == "judged" and u in judged_here
            ):
                scored[key] = zero_scores(labels, ranked.get(key, {}), grades, conv["gain"])

    pooled = [label for label in labels if parse(label)[0] == "pooled_recall"]
    if per_user:
        out = []
        for key in sorted(scored):
            row = dict(zip([*by, user], key, strict=True))
            for label in labels:
                value = scored[key][label]
                if label in pooled:
                    found, cap = value
                    value = found / cap if cap > 0 else 0.0
                row[label] = value
            out.append(row)
        return out

    members: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for key, values in scored.items():
        members.setdefault(key[:-1], []).append(values)
    if not by:
        members.setdefault((), [])
    out = []
    for group in sorted(members):
        row = dict(zip(by, group, strict=True))
        for label in labels:
            values = [user_values[label] for user_values in members[group]]
            if label in pooled:
                cap = sum(part[1] for part in values)
                # sum(hits) / sum(min(k, m_u)): undefined when no user has a relevant item
                row[label] = sum(part[0] for part in values) / cap if cap > 0 else None
            else:
                defined = [value for value in values if value is not None]
                row[label] = sum(defined) / len(defined) if defined else None
        out.append(row)
    return out


# --- measures added with the registry ---------------------------------------------------


def fbeta(positions: Positions, relevant: set[Hashable], k: int, beta: float) -> float:
    """F-beta of precision@k and recall@k: (1 + b^2) P R / (b^2 P + R), 0 when both are 0."""
    p, r = precision(positions, relevant, k), recall(positions, relevant, k)
    weight = beta * beta
    return 0.0 if p + r == 0 else (1 + weight) * p * r / (weight * p + r)


def n_relevant_retrieved(positions: Positions, relevant: set[Hashable], k: int | None) -> float:
    """The count of relevant items at positions 1..k (ranx's hits@k)."""
    return float(hits(positions, relevant, k))


def err(positions: Positions, grades: Grades, k: int | None, max_grade: float) -> float:
    """Chapelle et al. 2009: sum_i (1/i) R(g_i) prod_{j<i} (1 - R(g_j)), R = (2^g - 1) / 2^gmax."""
    by_position = item_at(positions)
    total, reach = 0.0, 1.0
    for position in sorted(by_position):
        if not shown(position, k):
            break
        grade = min(max(grades.get(by_position[position], 0.0), 0.0), max_grade)
        stop = (2.0**grade - 1.0) / 2.0**max_grade
        total += reach * stop / position
        reach *= 1.0 - stop
    return total


def judged(positions: Positions, judged_items: set[Hashable], k: int | None) -> float | None:
    """Judged items among the top k, over min(k, list length) (ir_measures Judged@k)."""
    top = [item for item, position in positions.items() if shown(position, k)]
    if not top:
        return None
    return sum(item in judged_items for item in top) / len(top)


# --- peer conventions (issue 12) --------------------------------------------------------


def table_gain(grade: float, table: dict[float, float]) -> float:
    """trec_eval -mndcg.1=3,2=9: a listed grade's gain, else the grade itself; <= 0 gains 0."""
    if grade <= 0:
        return 0.0
    return table.get(grade, float(grade))


def any_gain(grade: float, gain: str | dict[float, float]) -> float:
    return table_gain(grade, gain) if isinstance(gain, dict) else gain_of(grade, gain)


def peer_ndcg(
    positions: Positions,
    grades: Grades,
    k: int | None,
    gain: str | dict[float, float],
    ideal: str,
) -> float | None:
    """NDCG@k with a gain table and either ideal: None where the ideal DCG is 0.

    ideal "truth": the user's gains sorted descending (trec_eval sorts its
    levels by gain, m_ndcg.c); "k": k copies of the user's largest gain
    (RecTools' NDCG, whose ideal is k relevant items).
    """
    by_position = item_at(positions)
    found = 0.0
    for i in range(1, last_position(positions, k) + 1):
        if i in by_position:
            found += any_gain(grades.get(by_position[i], 0.0), gain) / math.log2(i + 1)
    gains = sorted((any_gain(g, gain) for g in grades.values() if g > 0), reverse=True)
    if ideal == "truth":
        shown_gains = gains if k is None else gains[:k]
        best = sum(g / math.log2(i + 1) for i, g in enumerate(shown_gains, start=1))
    else:
        assert k is not None
        top = gains[0] if gains else 0.0
        best = sum(top / math.log2(i + 1) for i in range(1, k + 1))
    return None if best == 0 else found / best


def condensed(positions: Positions, grades: Grades) -> dict[Hashable, int]:
    """The list without its unjudged items, re-numbered 1, 2, ... (Sakai 2007).

    Unjudged: no truth row, or a negative grade (trec_eval: pooled but not judged).
    """
    kept = sorted((p, item) for item, p in positions.items() if grades.get(item, -1) >= 0)
    return {item: n for n, (_, item) in enumerate(kept, start=1)}


def retrieved_by_score(rows: Sequence[tuple[Hashable, float]], ties: str) -> list[Hashable]:
    """The items ranked from their scores, the scores <= 0 left out (not retrieved)."""
    return rank_items([(item, s) for item, s in rows if float(s) > 0], ties)


def tie_average(
    rows: Sequence[tuple[Hashable, float]],
    measure: Callable[[dict[Hashable, int]], float],
) -> float:
    """The mean of ``measure`` over every order of the items with equal scores (brute force).

    ``rows`` are (item, score) of one list; groups of equal scores (compared as
    float64) keep their place by score and are permuted within, each of the
    product of their orders counted once (McSherry & Najork 2008).
    """
    groups: dict[float, list[Hashable]] = {}
    for item, score in rows:
        groups.setdefault(float(score) + 0.0, []).append(item)
    ordered = [groups[score] for score in sorted(groups, reverse=True)]
    total, count = 0.0, 0
    for orders in itertools.product(*(itertools.permutations(group) for group in ordered)):
        listed = [item for group in orders for item in group]
        total += measure({item: n for n, item in enumerate(listed, start=1)})
        count += 1
    return total / count
