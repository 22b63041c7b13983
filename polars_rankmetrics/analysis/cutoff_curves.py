"""``curves``: metric@k for every k in one pass over the ranked lists.

Every measure with a cutoff owns its curve step
(:class:`polars_rankmetrics._measures._curve.CurveStep`): a few per-user
states, each a running sum (or maximum) of per-row terms down the list, and
the per-user value as a formula of those states, of k and of m_u. So a
user's value changes only at the positions of its rows (found items, judged
rows, ideal positions, and every position up to a per-user horizon where
the formula reads k, such as AP's ``min(m_u, k)``); a divisor that grows
with k for ever (precision's k) is evaluated at each requested k directly.
Here, one loop over the requested measures reads those hooks: each user's
value at each of its change points goes to fixed point (the exact rule of
:func:`polars_rankmetrics._sums.fixed_point_column`), the integer steps of the values are
summed per position, and their running sums, read at each requested k, give
the sums over users. The work is bounded by the rows and the longest list,
never by the value of k; nothing here names a measure.

Which users count comes from :func:`polars_rankmetrics.per_user_parts` at
the largest k (the users whose parts are defined there), and a user whose
value is null at a smaller k is left out there, as ``evaluate`` leaves it.

The measures of the lists themselves (novelty, ILD, coverage, ...) are drawn
by :mod:`polars_rankmetrics.analysis._list_curves`, by running sums over
positions too; evaluate at the largest k checks their inputs. This module is
the face (its arguments checked, its frames and options read once into typed
specs); the engine is :mod:`polars_rankmetrics.analysis._curves`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, cast

import numpy as np

from polars_rankmetrics._frames import AnyFrame, ArrowStream, Frame, caller
from polars_rankmetrics._measures import all_measures, lookup
from polars_rankmetrics._measures._registry import Measure
from polars_rankmetrics._pipeline.plan import specs
from polars_rankmetrics.analysis._curves import drawn_curves, how_drawn
from polars_rankmetrics.conventions import Conventions
from polars_rankmetrics.evaluation import parse_metric
from polars_rankmetrics.options import EvaluateOptions, Unpack, read

__all__ = ["curves"]

_MAX_K = 2**63 - 1  # k is an Int64 column


def _is_integer(value: object) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _check_ks(k: object) -> list[int]:
    """The cutoffs, sorted and unique: a Python or NumPy integer, or an iterable of them."""
    if _is_integer(k):
        values: list[object] = [k]
    elif isinstance(k, (str, bytes)) or not isinstance(k, Iterable):
        raise TypeError(
            f"k must be an integer or an iterable of integers (e.g. range(1, 101)), got {k!r} "
            f"({type(k).__name__})"
        )
    else:
        values = list(k)
    if not values:
        raise ValueError("k is empty: give the cutoffs, e.g. k=range(1, 101)")
    for value in values:
        if not _is_integer(value):
            raise TypeError(
                f"every k must be an integer, got {value!r} ({type(value).__name__}) in k"
            )
        if cast("int", value) < 1:
            raise ValueError(f"every k must be at least 1, got {value}")
        if cast("int", value) > _MAX_K:
            raise ValueError(f"every k must be below 2^63 (an Int64 column), got {value}")
    return sorted({int(cast("int", value)) for value in values})


def _drawable() -> list[str]:
    """The names of every measure ``curves`` draws, in registration order."""
    return [m.name for m in all_measures() if m.cutoff != "none" and how_drawn(m) is not None]


def _check_metrics(metrics: str | Sequence[str]) -> list[tuple[str, Measure]]:
    """(label as given, its measure) per requested curve."""
    labels = [metrics] if isinstance(metrics, str) else list(metrics)
    if not labels:
        raise ValueError(f"metrics is empty: ask for at least one of {_drawable()}")
    chosen = []
    for label in labels:
        if not isinstance(label, str):
            raise TypeError(f"a metric must be a name like 'ndcg', got {label!r}")
        if "@" in label:
            raise ValueError(
                f"curves takes metric names without a cutoff ({label!r}): the cutoffs are "
                f"k=..., e.g. curves(recs, truth, ['ndcg'], k=range(1, 101))"
            )
        try:
            spec = parse_metric(f"{label}@1")
        except ValueError:
            parse_metric(label)  # an unknown name: evaluate's message, with a suggestion
            spec = None
        measure = lookup(parse_metric(label).name) if spec is None else lookup(spec.name)
        if spec is None or measure.cutoff == "none":
            raise ValueError(
                f"curves cannot draw {label!r}: {measure.name} has no cutoff to vary; "
                f"curves draws every measure with a cutoff: {_drawable()}"
            )
        if how_drawn(measure) is None:
            raise ValueError(
                f"curves cannot draw {label!r}: {measure.name} declares no curve step; call "
                "evaluate with one metric string per cutoff instead"
            )
        chosen.append((label, measure))
    names = [label for label, _ in chosen]
    repeated = sorted({name for name in names if names.count(name) > 1})
    if repeated:
        raise ValueError(f"metric(s) {repeated} requested twice")
    return chosen


def curves(
    recs: Frame | ArrowStream,
    truth: AnyFrame | None,
    metrics: str | Sequence[str],
    *,
    k: int | np.integer[Any] | Iterable[int | np.integer[Any]] = range(1, 101),
    ci: float | None = None,
    **options: Unpack[EvaluateOptions],
) -> Frame:
    """Metric@k curves: the mean of each metric at every cutoff k, in one pass.

    Parameters
    ----------
    recs, truth
        As for :func:`polars_rankmetrics.evaluate` (any frame: Polars, pandas,
        Arrow). ``truth`` may be ``None`` when every metric describes the
        lists themselves (novelty, ...).
    metrics
        Metric names as ``evaluate`` spells them, without the cutoff: every
        measure that has one (``precision``, ``map``, ``ndcg``, ``err``,
        ``judged``, ``gm_map``, ..., and the measures of the lists themselves
        such as ``novelty`` or ``coverage``), parameters in the name
        (``"rbp(p=0.9)"``, ``"fbeta(beta=2)"``). Metrics without a cutoff to
        vary (``r_precision``, ``mean_rank``) are refused.
    k
        The cutoffs: a Python or NumPy integer, or an iterable of them, e.g.
        ``range(1, 101)`` (the default), ``[5, 10, 20]`` or
        ``np.arange(1, 21)``.
    ci
        ``None`` (default) or a confidence level in (0, 1): adds ``ci_low``
        and ``ci_high``, the t-interval of the mean over users
        (mean +- t_{(1+ci)/2, n-1} s / sqrt(n)); null where the metric is not
        a mean over users (pooled recall, the geometric means ``gm_map`` and
        ``gm_bpref``, ``coverage``, ``gini``, ``personalization``) and where
        fewer than 2 users count.
    **options
        Every option of ``evaluate`` (:class:`polars_rankmetrics.EvaluateOptions`):
        the column roles and groups, the conventions, and the inputs of the
        measures of the lists themselves (the training history for novelty,
        arp, long_tail, calibration; the item catalog for coverage, gini,
        ild, calibration and its category column for ild, calibration).
        Refused, naming the metrics asked for: ``ties="average"``,
        ``ideal="k"``, ``unjudged="remove"``, ``nonpositive_scores="drop"``
        and ``user_sets="strict"``, which change the lists or the ideal
        with k (``evaluate`` with one metric string per cutoff computes them).

    Returns
    -------
    A long frame of the kind ``recs`` is (as for ``evaluate``: lazy stays
    lazy, pandas in, pandas out, Arrow in, Polars DataFrame out): the ``by``
    columns, ``metric`` (String, the name as given), ``k`` (Int64) and
    ``value`` (Float64, equal to ``evaluate(..., [f"{metric}@{k}"])``), plus
    ``ci_low`` and ``ci_high`` (Float64) with ``ci``; sorted by group, metric
    (as requested) and k.

    Notes
    -----
    Every convention of ``evaluate`` applies unchanged (AP denominator,
    gains, ties from scores, graded relevance and its level, which users
    count), except those that change the lists or the ideal with k
    (``ties="average"``, ``ideal="k"``, ``unjudged="remove"``,
    ``nonpositive_scores="drop"``, ``user_sets="strict"``), which are refused.
    Each measure declares its curve step: running sums (or maxima) down the
    list (hits, the AP sum, the ERR cascade, judged rows, the ideal DCG over
    the ideal list) and the per-user value as their formula. A user's value
    changes only at its rows and, where the formula reads k (AP's
    ``min(m_u, k)``), at each position up to m_u; a divisor that grows with
    k for ever (precision's k, F1's k + m_u) is applied at each requested k
    to the sums of the users with the same m_u. The steps of each user's
    value are summed in fixed point, so each value is ``evaluate``'s exact
    mean (the same bits where the per-user values are computed alike). The
    work is bounded by the rows and the longest list, not by the largest k.
    Each measure combines its users as in ``evaluate``: a mean, a geometric
    mean (the exponential of the mean of the floored logs), or pooled sums.

    The per-user measures of the lists (novelty, arp, long_tail, ild,
    calibration) change only at the ranks a list holds: each list gets its
    value at each of its ranks from running sums over the list (the items'
    terms over k_u; ILD's pair similarities over k_u (k_u - 1) / 2, null
    below two items; calibration's per-category counts of q), and the sums
    over users are running sums of that value's steps; a user counts from
    the first k where its value is defined, as in ``evaluate`` at that k.
    Coverage counts an item from the first k a list shows it,
    personalization follows the exposure counts as they grow, Gini sorts
    the exposures at each requested k; these three have no interval. No
    pair of users is ever built.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankmetrics as prm
    >>> recs = pl.DataFrame({
    ...     "user": [1, 1, 1, 2, 2, 2],
    ...     "item": ["a", "b", "c", "a", "b", "c"],
    ...     "rank": [1, 2, 3] * 2,
    ... })
    >>> truth = pl.DataFrame({"user": [1, 2, 2], "item": ["b", "a", "c"]})
    >>> prm.curves(recs, truth, ["recall", "mrr"], k=[1, 2, 3])
    shape: (6, 3)
    ┌────────┬─────┬───────┐
    │ metric ┆ k   ┆ value │
    │ ---    ┆ --- ┆ ---   │
    │ str    ┆ i64 ┆ f64   │
    ╞════════╪═════╪═══════╡
    │ recall ┆ 1   ┆ 0.25  │
    │ recall ┆ 2   ┆ 0.75  │
    │ recall ┆ 3   ┆ 1.0   │
    │ mrr    ┆ 1   ┆ 0.5   │
    │ mrr    ┆ 2   ┆ 0.75  │
    │ mrr    ┆ 3   ┆ 0.75  │
    └────────┴─────┴───────┘

    User 1 finds its one item at 2, user 2 its two items at 1 and 3: recall@1
    = (0 + 1/2) / 2, recall@2 = (1 + 1/2) / 2, recall@3 = 1; RR is 0 then 1/2
    for user 1 and 1 for user 2: mrr@1 = 1/2, mrr@2 = (1/2 + 1) / 2.

    The measures of the lists themselves need no truth:

    >>> train = pl.DataFrame({"user": [1, 2, 3, 3], "item": ["a", "a", "a", "c"]})
    >>> catalog = pl.DataFrame({"item": ["a", "b", "c"], "genre": ["x", "x", "y"]})
    >>> prm.curves(
    ...     recs, None, ["ild", "coverage"], k=[1, 2, 3], interactions=train,
    ...     items=catalog, category="genre",
    ... )
    shape: (6, 3)
    ┌──────────┬─────┬──────────┐
    │ metric   ┆ k   ┆ value    │
    │ ---      ┆ --- ┆ ---      │
    │ str      ┆ i64 ┆ f64      │
    ╞══════════╪═════╪══════════╡
    │ ild      ┆ 1   ┆ null     │
    │ ild      ┆ 2   ┆ 0.0      │
    │ ild      ┆ 3   ┆ 0.666667 │
    │ coverage ┆ 1   ┆ 0.333333 │
    │ coverage ┆ 2   ┆ 0.666667 │
    │ coverage ┆ 3   ┆ 1.0      │
    └──────────┴─────┴──────────┘

    Both lists are a, b, c (genres x, x, y): ILD needs two items; at k = 2
    a and b share their genre (distance 0), at k = 3 two of the three pairs
    differ: 2/3. Coverage: one, two, then all three catalog items.
    """
    chosen = _check_metrics(metrics)
    ks = _check_ks(k)
    judged = [label for label, m in chosen if how_drawn(m) in {"step", "evaluated"}]
    if truth is None and judged:
        lists = [m.name for m in all_measures() if how_drawn(m) == "lists"]
        raise ValueError(
            f"curves cannot draw {judged} without truth: pass truth= (it may be None only "
            f"when every metric describes the lists themselves: {sorted(lists)})"
        )
    if ci is not None and (
        isinstance(ci, bool) or not isinstance(ci, (int, float)) or not 0 < ci < 1
    ):
        raise ValueError(f"ci must be None or a number between 0 and 1, e.g. 0.95, got {ci!r}")
    call = caller(recs, name="recs")
    roles, resolved, described = specs(call.read_options(read(options, function="curves")))
    _check_supported(resolved, [label for label, _ in chosen])
    truth_frame = call.read(truth, name="truth")
    drawn = drawn_curves(
        call.frame, truth_frame, chosen, ks=ks, roles=roles, conv=resolved, described=described,
        ci=ci,
    )  # fmt: skip
    return call.back(drawn)


def _check_supported(conventions: Conventions, labels: list[str]) -> None:
    """Refuse the conventions whose running sums the curves do not implement (never a guess).

    Each changes the lists or the ideal with k or before ranking, for every measure alike.
    """
    unsupported = {
        "ties": ("average",),
        "ideal": ("k",),
        "unjudged": ("remove",),
        "nonpositive_scores": ("drop",),
        "user_sets": ("strict",),
    }
    for name, values in unsupported.items():
        if getattr(conventions, name) in values:
            raise ValueError(
                f"curves does not implement {name}={getattr(conventions, name)!r} (asked "
                f"for {', '.join(labels)}): call evaluate with one metric string per cutoff "
                "instead (e.g. 'ndcg@5,10,20')"
            )
