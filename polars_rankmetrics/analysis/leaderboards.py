"""``rank_correlation``: is the leaderboard stable? Kendall's tau and tau_AP between two orderings.

Two orderings of the same systems (by one metric on two collections, or by
two metrics on one) are compared pair by pair: Kendall's tau-b counts every
discordant pair alike; tau_AP (Yilmaz, Aslam & Robertson 2008) weighs a swap
near the top of the ordering more than one near the bottom.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Literal, cast

import polars as pl

from polars_rankmetrics._frames import collected, read

__all__ = ["rank_correlation"]

Method = Literal["kendall", "tau_ap"]
_METHODS: tuple[Method, ...] = ("kendall", "tau_ap")


def _scores(given: object, column: str | None, *, system: str, name: str) -> dict[Any, float]:
    """``{system: score}`` from a mapping or from a frame's system and metric columns."""
    if isinstance(given, Mapping):
        if column is not None:
            raise ValueError(
                f"{name} is a mapping {{system: score}}: it has no column {column!r} (metric=)"
            )
        pairs = list(given.items())
    else:
        pairs = _frame_pairs(given, column, system=system, name=name)
    scores: dict[Any, float] = {}
    for key, value in pairs:
        if key is None:
            raise ValueError(f"{name} has a null system")
        if key in scores:
            raise ValueError(f"{name} has system {key!r} twice: give one score per system")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"{name}'s score of system {key!r} must be a number, got {value!r}")
        if not math.isfinite(value):
            raise ValueError(f"{name}'s score of system {key!r} is {value}: give a finite number")
        scores[key] = float(value)
    return scores


def _read(given: Any, name: str) -> Any:
    """A frame of any kind in Polars; a mapping (or ``None``) as it is."""
    if given is None or isinstance(given, Mapping):
        return given
    return read(given, name=name, also="a mapping {system: score} or ")


def _frame_pairs(
    given: object, column: str | None, *, system: str, name: str
) -> list[tuple[Any, Any]]:
    frame = collected(cast("pl.DataFrame | pl.LazyFrame", given))  # read by the face
    if system not in frame.columns:
        raise ValueError(
            f"{name} has no system column {system!r} (system=); columns are {frame.columns}"
        )
    if column is None:
        numeric = [c for c, d in frame.schema.items() if c != system and d.is_numeric()]
        if len(numeric) != 1:
            raise ValueError(
                f"{name} has {len(numeric)} numeric columns besides {system!r} "
                f"({numeric}): name the metric column with metric="
            )
        column = numeric[0]
    if column not in frame.columns:
        raise ValueError(
            f"{name} has no metric column {column!r} (metric=); columns are {frame.columns}"
        )
    if not frame.schema[column].is_numeric():
        raise TypeError(f"{name} column {column!r} must be numeric, got {frame.schema[column]}")
    systems = frame.get_column(system).to_list()
    return list(zip(systems, frame.get_column(column).to_list(), strict=True))


def _columns(metric: str | Sequence[str] | None) -> tuple[str | None, str | None]:
    if metric is None or isinstance(metric, str):
        return metric, metric
    names = list(metric)
    if len(names) != 2 or not all(isinstance(name, str) for name in names):
        raise ValueError(
            f"metric must be a column name or a pair (reference's column, other's column), "
            f"got {metric!r}"
        )
    return names[0], names[1]


def _kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float:
    n = len(x)
    concordant = discordant = tied_x = tied_y = 0
    for i in range(n):
        for j in range(i + 1, n):
            dx, dy = x[i] - x[j], y[i] - y[j]
            if dx == 0 and dy == 0:
                continue
            if dx == 0:
                tied_x += 1
            elif dy == 0:
                tied_y += 1
            elif (dx > 0) == (dy > 0):
                concordant += 1
            else:
                discordant += 1
    denominator = math.sqrt((concordant + discordant + tied_x) * (concordant + discordant + tied_y))
    return (concordant - discordant) / denominator


def _tau_ap(reference: Sequence[float], other: Sequence[float]) -> float:
    """tau_AP walking down ``other``; its ties: the mean over their orders (tau_AP,a)."""
    n = len(other)
    total = 0.0
    above: list[int] = []  # the systems of the groups above
    for value in sorted(set(other), reverse=True):
        group = [index for index in range(n) if other[index] == value]
        p, t = len(above), len(group)
        # each member is at position p + 1 + k, k uniform in 0..t-1: E[1 / (position - 1)]
        spread = sum(1 / (p + k) for k in range(t) if p + k > 0) / t
        for index in group:
            correct = sum(1 for j in above if reference[j] > reference[index])
            total += correct * spread
        # within the group, the member at place k has k members above it, each above it
        # in the reference too with probability 1/2 over the orders of the group
        total += sum(k / 2 / (p + k) for k in range(1, t))
        above.extend(group)
    return 2 * total / (n - 1) - 1


def rank_correlation(
    reference: Any,
    other: Any = None,
    *,
    metric: str | Sequence[str] | None = None,
    system: str = "model",
    method: Method = "kendall",
) -> float:
    """Correlation between two orderings of the same systems (higher score = ranked higher).

    Parameters
    ----------
    reference
        The reference ordering ("true" for tau_AP): a mapping ``{system: score}``
        or a frame (Polars, pandas, Arrow: see ``evaluate``) with a ``system`` column
        and a metric column, e.g. ``evaluate(..., by="model")`` on one collection.
    other
        The ordering compared with it, in the same form; ``None``: a second
        column of ``reference`` (``metric=(column, other_column)``).
    metric
        The metric column of both frames; a pair ``(reference's, other's)``
        for two columns; ``None``: the one numeric column besides ``system``.
    system
        The frames' column naming the systems.
    method
        ``"kendall"``: Kendall's tau-b (``scipy.stats.kendalltau``'s default;
        tied scores count as neither concordant nor discordant, and the
        denominator leaves them out). ``"tau_ap"``: Yilmaz et al.'s AP
        correlation of ``other`` against ``reference`` (asymmetric: the
        argument order of ircor's ``tauAP(x = true, y = estimated)``).

    Returns
    -------
    The coefficient, a float in [-1, 1].

    Notes
    -----
    With n systems, C concordant and D discordant pairs, and T_x, T_y the
    pairs tied in one ordering only:

    * ``tau_b = (C - D) / sqrt((C + D + T_x) (C + D + T_y))``;
    * ``tau_AP = 2 / (n - 1) sum_{i=2}^{n} C(i) / (i - 1) - 1``,

    where C(i) is the number of systems above position i of ``other``'s
    ordering that ``reference`` also ranks above the system at position i.
    tau_AP equals tau when the swaps are spread evenly, and is lower when
    they are at the top. Ties: the reference must have none (refused). Ties
    in ``other`` give the mean of tau_AP over every order of the tied
    systems (Urbano & Marrero 2017's tau_AP,a, for an ordering whose ties
    are uncertainty): a member of a group of t systems below p others is at
    position p + 1 + k with probability 1 / t, and two members are in the
    reference's order with probability 1 / 2. tau-b is undefined (refused)
    when every system has the same score in one ordering.

    Both orderings must rank the same systems: a system in one only is
    refused, as is fewer than two systems.

    References: Kendall (1945), "The treatment of ties in ranking problems";
    Yilmaz, Aslam & Robertson (2008), "A new rank correlation coefficient
    for information retrieval", SIGIR; Urbano & Marrero (2017), "The
    Treatment of Ties in AP Correlation", ICTIR.

    Examples
    --------
    >>> import polars_rankmetrics as prm
    >>> truth = {"A": 0.4, "B": 0.3, "C": 0.2, "D": 0.1}
    >>> top_swap = {"A": 0.3, "B": 0.4, "C": 0.2, "D": 0.1}
    >>> bottom_swap = {"A": 0.4, "B": 0.3, "C": 0.1, "D": 0.2}
    >>> prm.rank_correlation(truth, top_swap), prm.rank_correlation(truth, bottom_swap)
    (0.6666666666666666, 0.6666666666666666)
    >>> round(prm.rank_correlation(truth, top_swap, method="tau_ap"), 6)
    0.333333
    >>> round(prm.rank_correlation(truth, bottom_swap, method="tau_ap"), 6)
    0.777778

    By hand, the top swap (B A C D): C(2) = 0 (B is not above A in the
    reference), C(3) = 2, C(4) = 3, so tau_AP = 2/3 (0/1 + 2/2 + 3/3) - 1 = 1/3;
    the bottom swap (A B D C): 2/3 (1 + 2/2 + 2/3) - 1 = 7/9. One swap in six
    pairs gives tau = 4/6 either way.

    Two metrics of one ``evaluate`` frame:

    >>> import polars as pl
    >>> board = pl.DataFrame({"model": ["a", "b", "c"], "map@10": [0.3, 0.2, 0.1],
    ...                       "ndcg@10": [0.5, 0.6, 0.4]})
    >>> prm.rank_correlation(board, metric=("map@10", "ndcg@10"))
    0.3333333333333333
    """
    if method not in _METHODS:
        raise ValueError(f"method must be one of {list(_METHODS)}, got {method!r}")
    if not isinstance(system, str):
        raise TypeError(f"system must be a column name, got {system!r}")
    first, second = _columns(metric)
    reference, other = _read(reference, "reference"), _read(other, "other")
    if other is None:
        if isinstance(metric, str) or metric is None:
            raise ValueError(
                "with one frame, name its two columns: metric=(reference_column, other_column)"
            )
        other = reference
    a = _scores(reference, first, system=system, name="reference")
    b = _scores(other, second, system=system, name="other")
    only = [key for key in a if key not in b] + [key for key in b if key not in a]
    if only:
        raise ValueError(
            f"{len(only)} system(s) are in one ordering only, e.g. {only[0]!r}: both must rank "
            "the same systems"
        )
    systems = list(a)
    if len(systems) < 2:
        raise ValueError(f"a correlation needs at least two systems, got {len(systems)}")
    x = [a[key] for key in systems]
    y = [b[key] for key in systems]
    for name, values in (("reference", x), ("other", y)):
        if len(set(values)) == 1:
            raise ValueError(
                f"every system has the same score in {name}: the correlation is undefined"
            )
    if method == "tau_ap" and len(set(x)) < len(x):
        tied = next(key for key, value in zip(systems, x, strict=True) if x.count(value) > 1)
        raise ValueError(
            f"tau_AP needs a reference without ties, and reference ties system {tied!r} with "
            "another; use method='kendall' (tau-b handles ties)"
        )
    if method == "kendall":
        return _kendall_tau_b(x, y)
    return _tau_ap(x, y)
