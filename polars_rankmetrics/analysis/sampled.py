"""Sampled metrics and their correction (Krichene & Rendle, KDD 2020).

A common shortcut ranks each user's held-out item among n items sampled from
the N - 1 others instead of the whole catalog. The metric read on that short
list (its *sampled rank* r, 1..n + 1) is not the metric of the full ranking
(full rank R, 1..N), not even in expectation, and it can order two systems
the wrong way round. Given R, r - 1 counts the sampled items among the R - 1
ranked above the held-out one: hypergeometric,

    P(r | R) = C(R - 1, r - 1) C(N - R, n - r + 1) / C(N - 1, n).

A corrected metric gives each sampled rank a value c_r and estimates the
full-ranking mean by the mean of c_{r_u} over users. Krichene & Rendle choose
c, with the full ranks taken uniform over 1..N (p(R) = 1 / N), as

- ``"cls"``: the bias only, constrained least squares:
  min_c sum_R p(R) (sum_r P(r | R) c_r - M(R))^2, with every c_r within the
  range of M;
- ``"bv"``: bias and variance, traded by gamma in [0, 1]:
  min_c sum_R p(R) [(E[c_r | R] - M(R))^2 + gamma Var(c_r | R)]
  (squared bias plus gamma times the variance, Var = E[c_r^2 | R] - E[c_r | R]^2),
  whose solution is c = ((1 - gamma) A'A + gamma diag(w))^-1 A'M with
  A = diag(p)^(1/2) P(r | R), M the metric's values over R, weighted alike,
  and w_r = sum_R p(R) P(r | R) (the paper's closed form); then clipped to
  the range of M. gamma = 0 is the least-squares fit of the bias, gamma = 1
  the posterior mean of M(R) given r.

M(R) is the measure's own value (from the engine, under the conventions
given) for one relevant item at full rank R: ``recall@k`` and ``hit_rate@k``
1[R <= k], ``ndcg@k`` 1[R <= k] / log2(R + 1), ``map@k`` and ``mrr@k``
1[R <= k] / R, ``precision@k`` 1[R <= k] / k. Since r <= R, a sampled rank
above k means a full rank above k: c_r there is M's value beyond the cutoff.

The coefficients depend only on (N, n, metric, correction, gamma) and are
solved once for each; the Gram matrix A'A is summed over blocks of full
ranks, so N in the millions needs memory for (n + 1)^2 numbers, not N (n + 1).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any, Literal, cast

import numpy as np
import polars as pl

from polars_rankmetrics._frames import AnyFrame, ArrowStream, Frame, caller, collected
from polars_rankmetrics._measures import lookup
from polars_rankmetrics._measures._catalog import reads_truth
from polars_rankmetrics._pipeline.sampled_probe import SampledMetricsWarning
from polars_rankmetrics._progress import stage
from polars_rankmetrics._sums import exact_mean, fixed_point
from polars_rankmetrics.analysis._stats import FloatArray
from polars_rankmetrics.evaluation import evaluate, parse_metric
from polars_rankmetrics.options import EvaluateOptions, Unpack, conventions_given, read

__all__ = ["Correction", "SampledMetricsWarning", "correction_coefficients", "sampled_metrics"]

Correction = Literal["bv", "cls"]

_RANK = "__prm_sampled_rank"
_FOUND = "__prm_sampled_found"
_ALL = "__prm_sampled_recall"
_LENGTH = "__prm_sampled_length"
_BLOCK = 4096  # full ranks per block of the Gram matrix


def sampled_metrics(
    recs: Frame | ArrowStream,
    truth: AnyFrame | None,
    metrics: str | Sequence[str],
    *,
    n_items: int,
    correction: Correction | None = "bv",
    gamma: float = 0.01,
    per_user: bool = False,
    **options: Unpack[EvaluateOptions],
) -> Frame:
    """Full-ranking metrics estimated from lists of sampled candidates.

    Each user's list holds their one relevant item and the n items sampled
    to rank it against (n + 1 rows, ranked by ``rank`` or ``score`` as in
    :func:`polars_rankmetrics.evaluate`). The sampled rank r_u of the
    relevant item goes through the correction of Krichene & Rendle (KDD
    2020): the estimate is the mean over users of c_{r_u}, the coefficients
    solved for the catalog size N (``n_items``), the sample size n, the
    metric and the correction (formulas in
    :mod:`polars_rankmetrics.analysis.sampled` and the docs page "Honest
    offline evaluation").

    Parameters
    ----------
    recs, truth
        As for ``evaluate`` (any frame: Polars, pandas, Arrow): one row per
        (user, candidate) with its rank or score, and the truth with one
        relevant item per user, found among that user's candidates.
    metrics
        Metric strings with a cutoff whose per-user values are averaged
        (``"recall@10"``, ``"ndcg@10"``, ``"map@10"``, ``"hit_rate@10"``,
        ``"mrr@10"``, ``"precision@10"``, ...).
    n_items
        N, the number of items the full ranking would rank (the catalog,
        the relevant one included).
    correction
        ``"bv"`` (default; bias-variance), ``"cls"`` (bias only, constrained
        least squares) or ``None``: the metric read on the sampled lists as
        they are (with a :class:`SampledMetricsWarning`).
    gamma
        The weight of the variance beside the squared bias in ``"bv"``'s
        objective, in [0, 1] (default 0.01, as Krichene & Rendle); 0 is the
        unconstrained least-squares fit of the bias, 1 the posterior mean.
    per_user
        ``True``: one row per (``by`` groups, user) with each metric's
        corrected per-user value c_{r_u}, ready for
        :func:`polars_rankmetrics.compare_per_user` (intervals, tests);
        ``False`` (default): their mean per ``by`` group, with ``n_users``.
    **options
        Every option of ``evaluate`` (roles, ``by``, conventions).

    Returns
    -------
    Frame
        A frame of the kind ``recs`` is (as for ``evaluate``: lazy stays lazy,
        pandas in, pandas out, Arrow in, Polars DataFrame out): the ``by``
        columns, ``n_users`` (or the user column with ``per_user=True``) and
        one column per metric.

    Notes
    -----
    The users counted are those with a list and a relevant item (a user
    with recommendations but without truth is left out, as ``evaluate``
    leaves them by default). A user whose relevant item is not among their
    candidates, or who has more than one relevant item, is refused: the
    correction is defined for one held-out item ranked among sampled
    negatives. Users may have lists of different lengths: each length has
    its own coefficients. The full ranks are taken uniform over 1..N (as
    Krichene & Rendle); the coefficients are clipped to the range of the
    metric's values (for recall, NDCG and AP that is [0, 1], the clip of
    the authors' experiments).

    References
    ----------
    Krichene & Rendle, "On sampled metrics for item recommendation",
    KDD 2020 (the corrections "CLS" and "BV").

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankmetrics as prm
    >>> recs = pl.DataFrame(
    ...     {"user": [1, 1, 1, 2, 2, 2], "item": ["a", "x", "y", "b", "x", "z"],
    ...      "rank": [1, 2, 3, 3, 1, 2]}
    ... )
    >>> truth = pl.DataFrame({"user": [1, 2], "item": ["a", "b"]})
    >>> prm.sampled_metrics(recs, truth, "recall@1", n_items=3, correction="cls")
    shape: (1, 2)
    ┌─────────┬──────────┐
    │ n_users ┆ recall@1 │
    │ ---     ┆ ---      │
    │ u32     ┆ f64      │
    ╞═════════╪══════════╡
    │ 2       ┆ 0.5      │
    └─────────┴──────────┘

    With the whole catalog as candidates (n = N - 1) every correction is
    the metric itself; with fewer, the sampled rank 1 stands for a range of
    full ranks, and its coefficient is below 1:

    >>> [round(c, 4) for c in prm.correction_coefficients("recall@1", n_items=100, n_sampled=9)]
    [0.364, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    """
    labels = _check_metrics(metrics)
    if isinstance(n_items, bool) or not isinstance(n_items, (int, np.integer)) or n_items < 2:
        raise ValueError(f"n_items must be an integer >= 2 (the catalog size), got {n_items!r}")
    n_items = int(n_items)
    _check_correction(correction, gamma)
    given = read(dict(options), function="sampled_metrics")
    user, item = given["user"], given["item"]
    by = [given["by"]] if isinstance(given["by"], str) else list(given["by"] or ())
    call = caller(recs, name="recs")
    truth_frame = call.read(truth, name="truth")
    if truth_frame is None:
        raise ValueError("sampled_metrics needs the truth: each user's one relevant item")
    eager = collected(call.frame)
    keys = [*by, user]
    # the engine gives the sampled rank (mean_rank of one relevant item is its position), the
    # relevant items found (must be 1) and all of them (recall 1 with one found: exactly one)
    with warnings.catch_warnings():
        # these lists are sampled by contract: the warning evaluate gives on them is ours
        warnings.simplefilter("ignore", SampledMetricsWarning)
        per = evaluate(
            eager,
            truth_frame,
            ["mean_rank", "n_relevant_retrieved", "recall", *labels],
            per_user=True,
            **call.read_options(options),
        ).rename({"mean_rank": _RANK, "n_relevant_retrieved": _FOUND, "recall": _ALL})
    lengths = eager.group_by(keys).agg(pl.col(item).n_unique().alias(_LENGTH))
    per = per.join(lengths, on=keys, how="left", nulls_equal=True)
    _check_one_relevant(per, keys, n_items)
    if correction is None:
        warnings.warn(
            f"sampled_metrics(correction=None) gives {labels} read on the sampled lists as "
            "they are: not consistent with the full-ranking metrics (they can order two "
            "systems the wrong way round); pass correction='bv' or 'cls' for an estimate",
            SampledMetricsWarning,
            stacklevel=2,
        )
        values = per.select(*keys, *labels)
    else:
        values = per.select(
            *keys,
            *(
                _corrected(
                    per, label, n_items, correction=correction, gamma=gamma, options=options
                ).alias(label)
                for label in labels
            ),
        )
    if per_user:
        result = values.sort(keys)
    else:
        # the users' rows come out of evaluate's joins in no fixed order: exact means (fixed
        # point, scaled over all the users, as evaluate's), the same bits on every call
        result = (
            values.with_columns(fixed_point(labels))
            .group_by(by or pl.lit(0).alias("__prm_one"))
            .agg(pl.len().alias("n_users"), *(exact_mean(label) for label in labels))
            .drop("__prm_one", strict=False)
            .sort(by or "n_users")
        )
    return call.back(result)


def correction_coefficients(
    metric: str,
    *,
    n_items: int,
    n_sampled: int,
    correction: Correction = "bv",
    gamma: float = 0.01,
    **conventions: Any,
) -> list[float]:
    """The corrected value c_r of each sampled rank r = 1..n + 1 for one metric.

    ``n_sampled`` is n, the sampled items each relevant one is ranked among;
    ``conventions`` are ``evaluate``'s convention options (they decide M(R),
    e.g. ``denominator`` for ``map@k``). See :func:`sampled_metrics`.

    >>> import polars_rankmetrics as prm
    >>> prm.correction_coefficients("ndcg@2", n_items=4, n_sampled=3, correction="cls")
    [1.0, 0.6309297535714574, 0.0, 0.0]
    """
    (label,) = _check_metrics([metric])
    _check_correction(correction, gamma)
    if isinstance(n_sampled, bool) or not isinstance(n_sampled, int) or n_sampled < 1:
        raise ValueError(f"n_sampled must be an integer >= 1, got {n_sampled!r}")
    if not isinstance(n_items, int) or n_items <= n_sampled:
        raise ValueError(f"n_items must be an integer above n_sampled={n_sampled}, got {n_items!r}")
    solved = _coefficients(
        label, n_items, n_sampled, correction=correction, gamma=gamma, conventions=conventions
    )
    return [float(c) for c in solved]


def _check_metrics(metrics: str | Sequence[str]) -> list[str]:
    labels = [metrics] if isinstance(metrics, str) else list(metrics)
    if not labels:
        raise ValueError("metrics is empty: ask for at least one, e.g. 'recall@10'")
    for label in labels:
        spec = parse_metric(label)  # an unknown name: evaluate's message, with a suggestion
        measure = lookup(spec.name)
        if spec.k is None:
            raise ValueError(
                f"sampled_metrics needs a cutoff on {label!r} (e.g. '{label}@10'): the correction "
                "reads the metric's value at every full rank, known beyond k only with one"
            )
        if not reads_truth(measure) or measure.aggregation != "mean":
            raise ValueError(
                f"sampled_metrics cannot correct {label!r}: it corrects means over users of a "
                f"per-user value read from the truth ({measure.name}'s users combine as "
                f"{measure.aggregation!r})"
            )
    repeated = sorted({label for label in labels if labels.count(label) > 1})
    if repeated:
        raise ValueError(f"metric(s) {repeated} requested twice")
    return labels


def _check_correction(correction: object, gamma: object) -> None:
    if correction not in ("bv", "cls", None):
        raise ValueError(f"correction must be 'bv', 'cls' or None, got {correction!r}")
    if (
        isinstance(gamma, bool)
        or not isinstance(gamma, (int, float))
        or not (0.0 <= float(gamma) <= 1.0)
    ):
        raise ValueError(f"gamma must be a number in [0, 1], got {gamma!r}")


def _check_one_relevant(per: pl.DataFrame, keys: list[str], n_items: int) -> None:
    def refuse(mask: pl.Expr, why: str) -> None:
        bad = per.filter(mask)
        if bad.height:
            example = bad.select(*keys, _LENGTH).row(0, named=True)
            raise ValueError(f"sampled_metrics: {bad.height} user(s) {why}, e.g. {example}")

    refuse(
        pl.col(_LENGTH).is_null() | (pl.col(_FOUND) < 1),
        "have no list holding their relevant item (each user's candidates must include it)",
    )
    refuse(
        (pl.col(_FOUND) > 1) | (pl.col(_ALL) < 1),
        "have more than one relevant item (the correction is for one held-out item per user)",
    )
    refuse(
        pl.col(_LENGTH) > n_items,
        f"have more candidates than n_items={n_items} (the catalog size)",
    )


def _corrected(
    per: pl.DataFrame,
    label: str,
    n_items: int,
    *,
    correction: Correction,
    gamma: float,
    options: EvaluateOptions,
) -> pl.Expr:
    """The per-user c_{r_u} of one metric, as an expression over ``per``."""
    conventions = {
        name: value
        for name, value in {
            **conventions_given(options),
            "conventions": options.get("conventions"),
        }.items()
        if value is not None
    }
    value = pl.lit(None, dtype=pl.Float64)
    for length in sorted(per.get_column(_LENGTH).unique().to_list()):
        c = _coefficients(
            label, n_items, length - 1, correction=correction, gamma=gamma, conventions=conventions
        )
        by_rank = (
            pl.col(_RANK)
            .cast(pl.Int64)
            .replace_strict(list(range(1, length + 1)), c.tolist(), return_dtype=pl.Float64)
        )
        value = pl.when(pl.col(_LENGTH) == length).then(by_rank).otherwise(value)
    return value


def _full_rank_values(label: str, n_items: int, conventions: dict[str, Any]) -> FloatArray:
    """M(R) for R = 1..N: the measure's value, one relevant item (grade 1) at full rank R.

    The engine computes it on k + 1 lists of k + 1 items (the relevant one
    at position min(R, k + 1)); beyond the cutoff the value no longer
    changes with R. The relevance level is left out: the held-out item is
    relevant by definition.
    """
    k = parse_metric(label).k
    if k is None:  # _check_metrics refuses metrics without a cutoff
        raise ValueError(f"{label!r} has no cutoff")
    depth = min(k + 1, n_items)
    users = np.repeat(np.arange(1, depth + 1), depth)
    positions = np.tile(np.arange(1, depth + 1), depth)
    recs = pl.DataFrame({"user": users, "item": positions, "rank": positions})
    truth = pl.DataFrame({"user": np.arange(1, depth + 1), "item": np.arange(1, depth + 1)})
    given = {name: value for name, value in conventions.items() if name != "relevance_level"}
    with warnings.catch_warnings():
        # one relevant item per list of equal length: it looks sampled, and is not a user's
        warnings.simplefilter("ignore", SampledMetricsWarning)
        per = evaluate(recs, truth, label, per_user=True, **given).sort("user")
    values = per.get_column(label).fill_null(0.0).to_numpy()
    full = np.full(n_items, values[-1], dtype=np.float64)
    full[: min(k, n_items)] = values[: min(k, n_items)]
    return full


_SOLVED: dict[tuple[object, ...], FloatArray] = {}


def _coefficients(
    label: str,
    n_items: int,
    n_sampled: int,
    *,
    correction: Correction,
    gamma: float,
    conventions: dict[str, Any],
) -> FloatArray:
    """c_1..c_{n+1} for one (metric, N, n, correction, gamma, conventions), solved once."""
    key = (label, n_items, n_sampled, correction, gamma, repr(sorted(conventions.items())))
    if key not in _SOLVED:
        if len(_SOLVED) > 256:
            _SOLVED.clear()
        what = (
            f"sampled_metrics: the {correction} correction of {label} (N={n_items}, n={n_sampled})"
        )
        with stage(what):
            _SOLVED[key] = _solve(
                label,
                n_items,
                n_sampled,
                correction=correction,
                gamma=gamma,
                conventions=conventions,
            )
    return _SOLVED[key]


def _solve(
    label: str,
    n_items: int,
    n_sampled: int,
    *,
    correction: Correction,
    gamma: float,
    conventions: dict[str, Any],
) -> FloatArray:
    metric = _full_rank_values(label, n_items, conventions)
    from scipy import stats  # noqa: PLC0415 - loaded on use: the import stays light

    k = cast("int", parse_metric(label).k)
    size = n_sampled + 1
    gram = np.zeros((size, size))
    target = np.zeros(size)
    mass = np.zeros(size)
    r = np.arange(size)
    weight = 1.0 / n_items  # p(R): the full ranks taken uniform
    for start in range(1, n_items + 1, _BLOCK):
        full = np.arange(start, min(start + _BLOCK, n_items + 1))
        # P(r - 1 of the n sampled among the R - 1 above | R), hypergeometric
        pmf = stats.hypergeom.pmf(r[None, :], n_items - 1, full[:, None] - 1, n_sampled)
        gram += weight * pmf.T @ pmf
        target += weight * pmf.T @ metric[full - 1]
        mass += weight * pmf.sum(axis=0)
    low, high = float(metric.min()), float(metric.max())
    if correction == "bv":
        system = (1.0 - gamma) * gram + gamma * np.diag(mass)
        solved = np.linalg.lstsq(system, target, rcond=None)[0]
    else:
        solved = _bounded_least_squares(gram, target, low, high)
    c = np.clip(solved, low, high)
    if n_items > k:  # r <= R: a sampled rank beyond the cutoff is a full rank beyond it
        c[min(k, size) :] = metric[-1]
    return cast("FloatArray", c)


def _bounded_least_squares(
    gram: FloatArray, target: FloatArray, low: float, high: float
) -> FloatArray:
    """Argmin over low <= c <= high of c'Gc - 2 h'c, from the Gram matrix G and h = A'M.

    ||A c - M||^2 = c'Gc - 2 h'c + const; with G = V diag(w) V' and L =
    diag(sqrt w) V', it is ||L c - d||^2 + const for d = diag(1 / sqrt w) V' h
    (h lies in the range of G): a bounded least-squares problem of size n + 1.
    """
    from scipy import optimize  # noqa: PLC0415 - loaded on use: the import stays light

    w, v = np.linalg.eigh(gram)
    keep = w > w.max() * 1e-15
    root = np.sqrt(w[keep])
    lhs = root[:, None] * v[:, keep].T
    rhs = (v[:, keep].T @ target) / root
    if math.isclose(low, high):
        return np.full(gram.shape[0], low)
    return cast("FloatArray", optimize.lsq_linear(lhs, rhs, bounds=(low, high), method="bvls").x)
