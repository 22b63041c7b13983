"""Beyond-accuracy measures of recommendation lists: ``list_metrics``.

Coverage, novelty, popularity bias (ARP, long-tail share), concentration of
exposure (Gini), personalization, intra-list diversity and calibration,
computed from the top-k lists, the training interactions and an item
catalog; no truth is needed. The measures and their plans are
:mod:`polars_rankmetrics._measures.lists`; this module checks the inputs and
reads the measures' declarations (``inputs``, the ``lists`` hook) only.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Sequence
from typing import cast

import polars as pl

from polars_rankmetrics._frames import ArrowStream, Frame, caller
from polars_rankmetrics._measures import all_measures, canonical, lookup
from polars_rankmetrics._measures import lists as ba
from polars_rankmetrics._measures._registry import Measure
from polars_rankmetrics._measures.lists._hooks import OfGroup
from polars_rankmetrics._pipeline.inputs import Duplicates, Ties
from polars_rankmetrics._pipeline.inputs import ListInputs as InputSpec
from polars_rankmetrics._pipeline.lists import Asked, check_inputs_given
from polars_rankmetrics._pipeline.parse import metric_spec
from polars_rankmetrics.evaluation import evaluate
from polars_rankmetrics.options import EvaluateOptions, ListInputs, Unpack, read_inputs

__all__ = ["list_metrics"]

_NAME = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)")
_WRITTEN = re.compile(r"\(([^()]*)\)")


def _list_names() -> list[str]:
    return [m.name for m in all_measures() if m.lists is not None]


def _parse_one(text: object, keywords: dict[str, float]) -> Asked:
    """``"name@k"``, ``"name"`` or ``"name(param=value)@k"`` for a measure of the lists.

    A parameter not written in the string takes ``list_metrics``' keyword of
    the same name (``head_share``, ``alpha``) when it has one.
    """
    if not isinstance(text, str):
        raise TypeError(f"a measure must be a string like 'novelty@10', got {text!r}")
    match = _NAME.match(text)
    found = canonical(match.group(1)) if match else None
    if match is not None and (found is None or lookup(found).lists is None):
        known = _list_names()
        hint = difflib.get_close_matches(match.group(1).lower(), known, n=1)
        suggestion = f"; did you mean {hint[0]!r}?" if hint else ""
        raise ValueError(
            f"unknown measure {match.group(1)!r} in {text!r}{suggestion} (known: {known})"
        )
    spec = metric_spec(text)
    written = _WRITTEN.search(text)
    given = (
        {part.partition("=")[0].strip() for part in written.group(1).split(",")}
        if written
        else set()
    )
    params = {
        name: keywords[name] if name in keywords and name not in given else value
        for name, value in spec.params
    }
    return ba.ListRequest(text, spec.k, params), lookup(spec.name)


def _written(request: ba.ListRequest, measure: Measure) -> str:
    """The metric string of ``request`` with every parameter written in (the keywords' too)."""
    params = ",".join(
        f"{name}={value}" for name, value in request.params.items() if value is not None
    )
    written = measure.name + (f"({params})" if params else "")
    return written if request.k is None else f"{written}@{request.k}"


def _parse_all(metrics: str | Sequence[str], keywords: dict[str, float]) -> list[Asked]:
    texts = [metrics] if isinstance(metrics, str) else list(metrics)
    asked = [_parse_one(text, keywords) for text in texts]
    if not asked:
        raise ValueError("metrics is empty: ask for at least one, e.g. ['coverage@10']")
    labels = [request.label for request, _ in asked]
    repeated = sorted({label for label in labels if labels.count(label) > 1})
    if repeated:
        raise ValueError(f"measure(s) {repeated} requested twice")
    return asked


def list_metrics(
    recs: Frame | ArrowStream,
    metrics: str | Sequence[str],
    *,
    user: str = "user",
    item: str = "item",
    rank: str = "rank",
    score: str | None = None,
    by: str | Sequence[str] | None = None,
    per_user: bool = False,
    ties: Ties = "item_desc",
    duplicates: Duplicates = "error",
    head_share: float = 0.2,
    alpha: float = 0.01,
    **inputs: Unpack[ListInputs],
) -> Frame:
    """Beyond-accuracy measures of the top-k lists: coverage, novelty, diversity, ...

    With k_u the length of u's list within positions 1..k, c_i the number of
    distinct users with item i in ``interactions``, N their number of
    distinct users, and x_i the number of users whose list holds item i:

    ============================  ================================================
    ``coverage@k``                distinct items in any list / catalog size n
    ``novelty@k``                 mean_u (1/k_u) Σ_i -log2(max(c_i, 1) / N)
    ``arp@k``                     mean_u (1/k_u) Σ_i c_i
    ``long_tail@k``               mean_u share of the list outside the head
    ``gini@k``                    Σ_j (2j - n - 1) x_(j) / (n Σ x), x ascending
    ``personalization@k``         1 - Σ_i x_i (x_i - 1) / 2 / (U (U - 1) / 2 · k)
    ``ild@k``                     mean_u mean over item pairs of 1 - Jaccard(cats)
    ``calibration@k``             mean_u KL(p_u ‖ (1 - alpha) q_u + alpha p_u)
    ``awrf(p=0.5)@k``             mean_u 1 - JS(attention's group shares ‖ catalog's)
    ``ndkl@k``                    mean_u (1/Z) Σ_i KL(top-i group shares ‖ catalog's) / log2(i+1)
    ``exposure_gini(p=0.5)@k``    gini@k of x_i = Σ_lists p^(r_i - 1)
    ============================  ================================================

    Parameters
    ----------
    recs
        Long-format recommendations: one row per (user, item) with a ``rank``
        (1 = top) or a ``score`` (higher is better). Any frame (see
        :func:`polars_rankmetrics.evaluate`), as are ``interactions`` and ``items``.
    metrics
        ``"name@k"`` or ``"name"`` (the whole list) strings from the table
        above, with parameters as :func:`polars_rankmetrics.evaluate` reads
        them (``"arp(popularity=interactions)@10"``: c_i counts interaction
        rows, as RecTools' ``AvgRecPopularity``; default ``users``); each
        becomes a Float64 column named exactly as given.
    user, item, rank, score
        Column roles, as in :func:`polars_rankmetrics.evaluate`.
    by
        Columns evaluated side by side (model, fold, ...).
    per_user
        ``True``: one row per (by..., user) with the per-user measures
        (novelty, arp, long_tail, ild, calibration); group measures are then
        refused. ``False``: their means and the group measures, one row per
        ``by`` group.
    ties, duplicates
        As in :func:`polars_rankmetrics.positions`. Every repeat changes these
        measures, so a repeated (user, item), or a repeated position with
        ranks given, is an error by default.
    head_share
        Long tail (unless written in the metric string): the head is the
        shortest prefix of the items sorted by c_i descending (ties: item
        ascending) whose Σ c_i reaches this share of Σ c_i (0 to 1, default 0.2).
    alpha
        Calibration (unless written in the metric string): the share of p
        mixed into q (0 < alpha <= 1, default 0.01), which keeps the
        divergence finite.
    **inputs
        What the measures read besides the lists
        (:class:`polars_rankmetrics.options.ListInputs`), as
        :func:`polars_rankmetrics.evaluate` takes them, each below.

    Other Parameters
    ----------------
    interactions : frame or None, default None
        The training history, one row per (user, item) (repeats count once), for the measures
        that read it (the measures of the lists' popularity: novelty, arp, long_tail, surprisal;
        calibration; estimated propensities; serendipity's popularity ranks). ``by`` columns it
        also has (folds) give each group its own history; the others (models) share it.
    items : frame or None, default None
        The item catalog, one row per item, with the ``item`` column and the columns
        ``category``, ``group``, ``group_weight`` and ``propensity`` name, for the measures that
        read it (coverage, gini, ild, calibration, the exposure-fairness measures, serendipity:
        the catalog's size). Every listed item must be in it; one catalog serves every ``by``
        group.
    category : str or None, default None
        The column of ``items`` holding each item's category (String, Categorical, Enum or
        integer) or a List of them (ild, calibration).
    propensity : str or None, default None
        The column of ``items`` (one propensity per item) or of the truth (one per relevant
        pair) holding each relevant pair's probability of being observed, in (0, 1], for the
        debiased measures (``ips_*``, ``snips_*``). ``None``: estimated from ``interactions`` as
        ``(n_i / max_j n_j)^((gamma + 1) / 2)``.
    group : str or None, default None
        The column of ``items`` holding each item's group, a label or a list of labels, for the
        exposure-fairness measures (``awrf``, ``ndkl``).
    group_weight : str or None, default None
        The column of ``items`` with each item's weights in its groups: a list beside the list
        of ``group``, normalised per item. ``None``: an equal split.
    subtopic : str or None, default "subtopic"
        The column of the truth holding each row's subtopic (intent) for the diversity measures
        (``alpha_ndcg``, ``err_ia``, ``nrbp``, ``p_ia``, ``map_ia``, ``strec``...): the truth
        then has one row per (user, subtopic, item), TREC's diversity qrels ``topic subtopic
        docno judgment``. The other measures of the call read one row per (user, item), its
        largest grade. ``None``: ``"subtopic"``.

    Returns
    -------
    A frame of the kind ``recs`` is (a LazyFrame stays lazy; pandas in,
    pandas out; Arrow in, Polars DataFrame out: see
    :func:`polars_rankmetrics.evaluate`). Errors in the data are raised when
    it is collected.

    Notes
    -----
    Users counted: every (by..., user) with at least one recommendation
    within the cut (``metric@k`` keeps positions 1..k; a list shorter than k
    counts with its k_u); ``ild`` only lists with k_u >= 2 and
    ``calibration`` only users that have interactions. U in personalization
    is the number of those users; without a cutoff personalization compares
    lists at the longest list's length, and it is null for fewer than two
    users. A ``by`` group without any list within the largest cutoff has no
    row; without ``by``, the one row is then null throughout. Items absent
    from the interactions have c_i = 0 (novelty counts
    them as seen once) and are never in the head. An item with m categories
    gives 1/m to each in calibration; ILD compares category sets (one
    category is a set of one). Repeated interaction rows count once in c_i,
    N and p. Definitions: ``METRICS.md``; calibration follows Steck (2018),
    "Calibrated recommendations".

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankmetrics as prm
    >>> recs = pl.DataFrame({
    ...     "user": [1, 1, 2, 2],
    ...     "item": ["a", "b", "a", "c"],
    ...     "rank": [1, 2, 1, 2],
    ... })
    >>> train = pl.DataFrame({"user": [1, 2, 3, 3], "item": ["a", "a", "a", "c"]})
    >>> catalog = pl.DataFrame({"item": ["a", "b", "c", "d"], "genre": ["x", "x", "y", "y"]})
    >>> prm.list_metrics(
    ...     recs, ["coverage@2", "novelty@2", "ild@2", "personalization@2"],
    ...     interactions=train, items=catalog, category="genre",
    ... )
    shape: (1, 4)
    ┌────────────┬───────────┬───────┬───────────────────┐
    │ coverage@2 ┆ novelty@2 ┆ ild@2 ┆ personalization@2 │
    │ ---        ┆ ---       ┆ ---   ┆ ---               │
    │ f64        ┆ f64       ┆ f64   ┆ f64               │
    ╞════════════╪═══════════╪═══════╪═══════════════════╡
    │ 0.75       ┆ 0.792481  ┆ 0.5   ┆ 0.5               │
    └────────────┴───────────┴───────┴───────────────────┘
    """
    _check_parameters(head_share, alpha)
    measures = _parse_all(metrics, {"head_share": float(head_share), "alpha": float(alpha)})
    if not isinstance(per_user, bool):
        raise TypeError(f"per_user must be True or False, got {per_user!r}")
    if per_user:
        # one value of all the lists together (coverage, Gini, ...): no user's own
        whole = [r.label for r, m in measures if isinstance(m.lists, OfGroup)]
        if whole:
            raise ValueError(
                f"{whole} describe a whole group of lists, not one user: ask for them "
                "with per_user=False"
            )
    given = read_inputs(inputs, function="list_metrics")
    check_inputs_given(measures, InputSpec(**given))
    # evaluate computes them (the list plan, no truth): each metric string with the
    # keywords' parameters written in, the result's columns named as asked (two strings
    # asking the same, entropy@2 and entropy(p=1)@2, are computed once and both kept)
    asked = {request.label: _written(request, measure) for request, measure in measures}
    computed = list(dict.fromkeys(asked.values()))
    call = caller(recs, name="recs")
    # the frames among the inputs read in Polars (a pandas history with pandas recs, ...)
    roles = {"user": user, "item": item, "rank": rank, "score": score, "by": by}
    options = call.read_options(
        cast("EvaluateOptions", {**given, **roles, "ties": ties, "duplicates": duplicates})
    )
    result = evaluate(call.frame, None, computed, per_user=per_user, **options)
    keys = [name for name in result.collect_schema().names() if name not in computed]
    named = [pl.col(written).alias(label) for label, written in asked.items()]
    return call.back(result.select(*keys, *named))


def _check_parameters(head_share: object, alpha: object) -> None:
    for name, value in (("head_share", head_share), ("alpha", alpha)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"{name} must be a number, got {value!r}")
        if math.isnan(value):
            raise ValueError(f"{name} must be a number, got NaN")
    if not 0.0 <= float(head_share) <= 1.0:  # type: ignore[arg-type]
        raise ValueError(f"head_share must be between 0 and 1, got {head_share}")
    if not 0.0 < float(alpha) <= 1.0:  # type: ignore[arg-type]
        raise ValueError(
            f"alpha must be in (0, 1] (0 makes the divergence infinite where a list "
            f"misses a category of the history), got {alpha}"
        )
