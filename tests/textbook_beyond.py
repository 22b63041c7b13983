"""Slow, plain-Python beyond-accuracy measures, written from METRICS.md alone.

Independent of the package: no Polars, every pair of users and of items is
built explicitly. One group (model, fold) at a time:

* ``lists``: user -> [(item, rank), ...] (ranks given, any order);
* ``history``: [(user, item), ...] training interactions, repeats allowed;
* ``catalog``: item -> frozenset of categories (a single category is a set of one).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence

Lists = Mapping[object, Sequence[tuple[object, int]]]
History = Sequence[tuple[object, object]]
Catalog = Mapping[object, frozenset[object]]

USER_MEASURES = (
    "novelty", "arp", "long_tail", "ild", "calibration", "surprisal", "rank_biased_entropy",
)  # fmt: skip


def parameters(name: str) -> tuple[str, dict[str, float]]:
    """``"entropy(p=0.85)"`` -> ``("entropy", {"p": 0.85})``."""
    base, _, rest = name.partition("(")
    pairs = [part.split("=") for part in rest.rstrip(")").split(",") if part.strip()]
    return base, {key.strip(): float(value) for key, value in pairs}


def top(lists: Lists, k: int | None) -> dict[object, list[object]]:
    """Each user's items at positions 1..k in rank order; users with an empty cut dropped."""
    out = {}
    for user, rows in lists.items():
        kept = [
            item for item, rank in sorted(rows, key=lambda row: row[1]) if k is None or rank <= k
        ]
        if kept:
            out[user] = kept
    return out


def popularity(history: History) -> tuple[dict[object, int], int]:
    """c_i (distinct users per item) and N (distinct users)."""
    users_of: dict[object, set[object]] = {}
    for user, item in history:
        users_of.setdefault(item, set()).add(user)
    return {item: len(users) for item, users in users_of.items()}, len({u for u, _ in history})


def head(history: History, share: float) -> set[object]:
    """Shortest prefix of items by c_i descending (ties: item ascending) reaching share of Σ c_i."""
    c, _ = popularity(history)
    total = sum(c.values())
    chosen: set[object] = set()
    running = 0
    for item in sorted(c, key=lambda i: (-c[i], i)):
        if running >= share * total:
            break
        chosen.add(item)
        running += c[item]
    return chosen


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def per_user(
    name: str,
    k: int | None,
    lists: Lists,
    history: History,
    catalog: Catalog,
    *,
    head_share: float = 0.2,
    alpha: float = 0.01,
) -> dict[object, float | None]:
    """The per-user value of ``name`` for every user with a non-empty list within 1..k."""
    name, params = parameters(name)
    cut = top(lists, k)
    c, n = popularity(history)
    out: dict[object, float | None] = {}
    for user, items in cut.items():
        if name == "rank_biased_entropy":
            out[user] = _rank_biased_entropy(
                [(i, r) for i, r in lists[user] if k is None or r <= k],
                catalog,
                patience=params.get("p", 0.85),
                epsilon=params.get("epsilon", 1e-6),
            )
        elif name == "novelty":
            out[user] = (
                _mean([-math.log2(max(c.get(i, 0), 1) / n) for i in items]) if n > 0 else None
            )
        elif name == "surprisal":
            # RePlay: log2(N / u_i) / log2(N), a cold item as seen by one user
            out[user] = (
                _mean([math.log2(n / max(c.get(i, 0), 1)) / math.log2(n) for i in items])
                if n > 1
                else None
            )
        elif name == "arp":
            out[user] = _mean([float(c.get(i, 0)) for i in items])
        elif name == "long_tail":
            heads = head(history, head_share)
            out[user] = _mean([0.0 if i in heads else 1.0 for i in items])
        elif name == "ild":
            if len(items) < 2:
                out[user] = None
                continue
            distances = []
            for a, b in itertools.combinations(items, 2):
                ca, cb = catalog[a], catalog[b]
                distances.append(1.0 - len(ca & cb) / len(ca | cb))
            out[user] = _mean(distances)
        elif name == "calibration":
            seen = sorted({i for u, i in history if u == user}, key=repr)
            if not seen:
                out[user] = None
                continue
            p = _distribution(seen, catalog)
            q = _distribution(items, catalog)
            out[user] = sum(
                pc * math.log(pc / ((1 - alpha) * q.get(cat, 0.0) + alpha * pc))
                for cat, pc in p.items()
            )
        else:
            raise ValueError(name)
    return out


def _rank_biased_entropy(
    rows: Sequence[tuple[object, int]], catalog: Catalog, *, patience: float, epsilon: float
) -> float | None:
    """LensKit's RankBiasedEntropy of one list: bits, over every category of the catalog.

    Each catalog item at rank r gives p^(r - 1) / m to each of its m categories;
    every category gets epsilon more; None without a catalog item.
    """
    every = sorted({cat for categories in catalog.values() for cat in categories}, key=repr)
    weight = dict.fromkeys(every, 0.0)
    shown = False
    for item, rank in rows:
        if item not in catalog:
            continue
        shown = True
        for cat in catalog[item]:
            weight[cat] += patience ** (rank - 1) / len(catalog[item])
    if not shown:
        return None
    smoothed = [w + epsilon for w in weight.values()]
    total = sum(smoothed)
    return -sum(w / total * math.log2(w / total) for w in smoothed if w > 0)


def _distribution(items: Sequence[object], catalog: Catalog) -> dict[object, float]:
    shares: dict[object, float] = {}
    for item in items:
        categories = catalog[item]
        for category in categories:
            shares[category] = shares.get(category, 0.0) + 1.0 / len(categories) / len(items)
    return shares


def group_value(
    name: str,
    k: int | None,
    lists: Lists,
    history: History,
    catalog: Catalog,
    *,
    head_share: float = 0.2,
    alpha: float = 0.01,
) -> float | None:
    """One group's value: the mean of a per-user measure, or a group measure."""
    base, params = parameters(name)
    if base in USER_MEASURES:
        values = per_user(
            name, k, lists, history, catalog, head_share=head_share, alpha=alpha
        ).values()
        return _mean([value for value in values if value is not None])
    cut = top(lists, k)
    if name == "coverage":
        shown = {item for items in cut.values() for item in items}
        return len(shown) / len(catalog)
    if name == "gini":
        x = sorted(sum(item in items for items in cut.values()) for item in catalog)
        n, total = len(x), sum(x)
        if total == 0:
            return None
        return sum((2 * j - n - 1) * xj for j, xj in enumerate(x, start=1)) / (n * total)
    if base == "entropy":
        # each item's share of the top-k slots of the group's lists (with a patience p: a
        # slot at rank r weighs p^(r - 1)); natural log
        patience = params.get("p", 1.0)
        weight: dict[object, float] = {}
        for rows in lists.values():
            for item, rank in rows:
                if k is None or rank <= k:
                    weight[item] = weight.get(item, 0.0) + patience ** (rank - 1)
        total = sum(weight.values())
        if total == 0:
            return None
        return -sum(w / total * math.log(w / total) for w in weight.values())
    if name == "personalization":
        users = list(cut)
        if len(users) < 2:
            return None
        width = k if k is not None else max(len(items) for items in cut.values())
        overlaps = [
            len(set(cut[a]) & set(cut[b])) / width for a, b in itertools.combinations(users, 2)
        ]
        return 1.0 - sum(overlaps) / len(overlaps)
    raise ValueError(name)
