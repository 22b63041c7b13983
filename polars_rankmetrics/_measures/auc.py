"""The AUC family: ROC AUC per user over its candidates, GAUC, and RecTools' pAUC@k and pAp@k.

A user's **candidates** are the items of its list (every position, no cutoff):
the **positives** are those with a relevant truth row (grade > 0, and at least
``relevance_level``), the **negatives** the rest. With ``P`` positives, ``N``
negatives and, for the i-th positive, ``s_i`` negatives ranked above it,

``auc = 1 - sum_i s_i / (P N)``,

the chance that a random positive is ranked above a random negative
(Mann-Whitney; scikit-learn's ``roc_auc_score`` of the user's labels and
scores, torchmetrics' ``RetrievalAUROC``). A user with ``P = 0`` or ``N = 0``
has no AUC (null) and is left out of the mean, as is a user without a list;
``per_user=True`` shows them as null, and the mean is over the users with both.

``auc(max_fpr=t)`` (``0 < t <= 1``) is scikit-learn's standardised partial
AUC (McClish 1989): the area ``A_t`` under the ROC curve for false-positive
rates ``0..t``, ``A_t = sum_i g(t N - s_i) / (P N)``, rescaled as
``(1 + (A_t - t^2/2) / (t - t^2/2)) / 2``; ``t = 1`` is the AUC itself. The
ROC curve of a list moves right ``1/N`` per negative and up ``1/P`` per
positive, so positive i contributes ``g(u) = max(u, 0)`` (in units of ``1/N``).

``gauc`` is the users' AUCs weighted by their number of candidates ``n_u``
(impressions), ``sum_u n_u auc_u / sum_u n_u`` over the users with both
classes (Zhou et al., KDD 2018, "Deep Interest Network"; the weights of users
left out are left out too): a ratio of sums, so ``compare`` refuses it.
``gauc(weight=positives)`` weights each user by its positives ``P`` instead,
as RecBole's ``GAUC`` does (with mean ranks for ties: ``ties="average"``).

``pauc@k`` and ``pap@k`` are RecTools' ``PartialAUC(k)`` and ``PAP(k)`` (Shi
et al. 2020, Hiranandani et al. 2020), read from positions: the negatives
above a positive at position ``r``, the j-th positive of its list, are
``s = r - j`` (an empty given rank counts as a negative, as RecTools'
``outer_merge_reco`` fills the ranks). With ``m_u`` the user's relevant truth
items, recommended or not,

``pauc@k = sum_{positives with s < k} (k - s) / (k m_u)``

(its top k negatives against all its positives: a positive below the k-th
negative, or not recommended, scores 0, and a list with fewer than k
negatives counts the missing ones below every positive: RecTools'
``insufficient_handling="ignore"``), and

``pap@k = sum_{positives with s < k and j <= k} (k - s) / (k min(m_u, k))``

(its top k negatives against its top ``min(m_u, k)`` positives). The cutoff
counts negatives, not positions: both read the whole list (they declare
``reads_past_cutoff``), and ``curves`` cannot draw them (their value at k
reads positions past k). A counted user (a relevant truth item) without a
list scores 0; a user without relevant truth is left out.

Notes
-----
Ties. ``auc`` and ``gauc`` count a tied positive-negative pair (equal
scores) one half, scikit-learn's and torchmetrics' convention (the ROC curve
crosses a tie group on its diagonal), under every ``ties`` rule: the rule
orders equal scores for the measures that read positions, the AUC reads the
groups of equal scores (input ``"score_ties"``). A tie group of ``n``
candidates, ``r`` of them positive, starting at position ``a`` behind ``R``
positives gives each of its positives ``s = a - 1 - R`` negatives above and
``d = n - r`` tied ones, and ``g(u) = min(u_+, d)^2 / (2 d) + max(u - d, 0)``.
For the full AUC this is the expectation over the orders of the tied
candidates; for ``max_fpr < 1`` it is scikit-learn's interpolated curve (the
expectation would differ where ``t`` falls inside a tie group). Given ranks
never tie. ``pauc``/``pap`` read ranks as RecTools does (the tie rule's
positions) and refuse ``ties="average"``.

Given ranks: positions are as given, so an empty slot (rank 9 with nothing
at 1..8) counts as a negative candidate, for ``auc``'s ``N`` and ``gauc``'s
weight too; with scores, positions are 1..n.

References
----------
Hanley & McNeil, "The meaning and use of the area under a ROC curve"
(Radiology 1982); McClish, "Analyzing a portion of the ROC curve" (Medical
Decision Making 1989); Zhou et al., "Deep Interest Network for click-through
rate prediction" (KDD 2018); Shi, Hiranandani et al., "Rich-item
recommendations for rich-users" (arXiv 2001.10495); Hiranandani et al.,
"Optimization and analysis of the pAp@k metric for recommender systems"
(ICML 2020); scikit-learn ``roc_auc_score``; torchmetrics
``RetrievalAUROC``; RecTools ``rectools.metrics.auc``.

Examples
--------
User 1 ranks a, b, c, d (b and c tie; a and c relevant); user 2 has only
relevant candidates, so it has no AUC (null) and the means leave it out:

>>> import polars as pl
>>> import polars_rankmetrics as prm
>>> recs = pl.DataFrame({
...     "user": [1, 1, 1, 1, 2],
...     "item": ["a", "b", "c", "d", "e"],
...     "score": [0.9, 0.8, 0.8, 0.1, 0.5],
... })
>>> truth = pl.DataFrame({"user": [1, 1, 2], "item": ["a", "c", "e"]})
>>> metrics = ["auc", "gauc", "auc(max_fpr=0.5)"]
>>> prm.evaluate(recs, truth, metrics, score="score", per_user=True).sort("user")
shape: (2, 4)
┌──────┬───────┬───────┬──────────────────┐
│ user ┆ auc   ┆ gauc  ┆ auc(max_fpr=0.5) │
│ ---  ┆ ---   ┆ ---   ┆ ---              │
│ i64  ┆ f64   ┆ f64   ┆ f64              │
╞══════╪═══════╪═══════╪══════════════════╡
│ 1    ┆ 0.875 ┆ 0.875 ┆ 0.833333         │
│ 2    ┆ null  ┆ null  ┆ null             │
└──────┴───────┴───────┴──────────────────┘
>>> prm.evaluate(recs, truth, ["pauc@1", "pap@1"], score="score", per_user=True).sort("user")
shape: (2, 3)
┌──────┬────────┬───────┐
│ user ┆ pauc@1 ┆ pap@1 │
│ ---  ┆ ---    ┆ ---   │
│ i64  ┆ f64    ┆ f64   │
╞══════╪════════╪═══════╡
│ 1    ┆ 1.0    ┆ 1.0   │
│ 2    ┆ 1.0    ┆ 1.0   │
└──────┴────────┴───────┘
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import polars as pl

from polars_rankmetrics import _formulas as formula
from polars_rankmetrics._measures._registry import (
    LIST_LENGTH,
    N_RELEVANT,
    RELEVANT,
    TIE_RELEVANT,
    TIE_RELEVANT_ABOVE,
    TIE_SIZE,
    TIE_START,
    Context,
    Measure,
    Param,
    Partial,
    register,
)


def _check_max_fpr(value: float) -> float:
    if not (math.isfinite(value) and 0 < value <= 1):
        raise ValueError(f"auc's max_fpr must be a number in (0, 1], got {value!r}")
    return value


def _positive_rows() -> pl.Expr:
    """The relevant rows of the hits table (every position: these measures read no cut)."""
    return pl.col(RELEVANT).fill_null(value=False)


def _roc_area(max_fpr: float) -> pl.Expr:
    """The list's area under its ROC curve up to ``max_fpr``, over ``P N`` (null: one class)."""
    positives = _positive_rows()
    n_positive = positives.sum().cast(pl.Float64)
    n_negative = pl.col(LIST_LENGTH).first().cast(pl.Float64) - n_positive
    start = pl.col(TIE_START).filter(positives).cast(pl.Float64)  # a
    size = pl.col(TIE_SIZE).filter(positives).cast(pl.Float64)  # n
    if max_fpr == 1:
        # the whole curve: sum_i (N - s_i - d_i / 2) = P N - sum_i (a_i - 1 + n_i / 2) + P^2 / 2
        # (over the positives, R_i + r_i / 2 sums to P^2 / 2: Mann-Whitney's mid-ranks), so
        # no rank per list. Every term is a multiple of 1/2: the sums are exact
        below = (start - 1.0 + size / 2.0).sum()
        area = n_positive * n_negative - below + n_positive * n_positive / 2.0
    else:
        # R: the positives of better groups; r: the group's positives (itself included)
        better = pl.col(TIE_RELEVANT_ABOVE).filter(positives).cast(pl.Float64)
        in_group = pl.col(TIE_RELEVANT).filter(positives).cast(pl.Float64)
        reach = max_fpr * n_negative - (start - 1.0 - better)  # u, in units of 1/N
        tied = size - in_group  # d
        # the diagonal across the tie group: a ramp of width d (0: a vertical step)
        ramp = reach.clip(lower_bound=0.0, upper_bound=tied).pow(2) / (2.0 * tied)
        reached = (
            pl.when(tied > 0)
            .then(ramp + (reach - tied).clip(lower_bound=0.0))
            .otherwise(reach.clip(lower_bound=0.0))
        )
        # fractional terms: summed in one order (the rows reach the aggregation in any)
        area = reached.sort().sum()
    return pl.when((n_positive > 0) & (n_negative > 0)).then(area / (n_positive * n_negative))


def _auc(max_fpr: float) -> pl.Expr:
    """The AUC, or sklearn's McClish-standardised partial AUC for ``max_fpr < 1``."""
    area = _roc_area(max_fpr)
    if max_fpr == 1:
        return area
    least, most = max_fpr * max_fpr / 2.0, max_fpr
    return 0.5 * (1.0 + (area - least) / (most - least))


def _max_fpr(ctx: Context) -> float:
    value = ctx.number("max_fpr")
    return 1.0 if value is None else float(value)


def _auc_partials(ctx: Context) -> list[Partial]:
    return [Partial(ctx.name("auc"), _auc(_max_fpr(ctx)), fill=None)]


def _auc_finals(ctx: Context) -> Mapping[str, pl.Expr]:
    return {"": pl.col(ctx.name("auc"))}


def _gauc_partials(ctx: Context) -> list[Partial]:
    auc = _auc(1.0)
    if ctx.params["weight"] == "positives":
        # RecBole's GAUC: each user weighted by its positives
        weight = _positive_rows().sum().cast(pl.Float64)
    else:
        weight = pl.col(LIST_LENGTH).first().cast(pl.Float64)
    n_positive = _positive_rows().sum()
    both = (n_positive > 0) & (pl.col(LIST_LENGTH).first() > n_positive)
    return [
        Partial(ctx.name("auc"), auc, fill=None),
        # a user without an AUC (one class) carries no weight
        Partial(ctx.name("weight"), pl.when(both).then(weight), fill=None),
    ]


def _gauc_finals(ctx: Context) -> Mapping[str, pl.Expr]:
    weight = pl.col(ctx.name("weight"))
    return {"num": pl.col(ctx.name("auc")) * weight, "den": weight}


def _gauc_value(parts: Mapping[str, pl.Expr]) -> pl.Expr:
    return parts["num"] / parts["den"]


def _rectools_gain(ctx: Context, *, top_positives: bool) -> pl.Expr:
    """RecTools' numerator: ``sum (k - s)`` over the positives with ``s < k`` (and ``j <= k``)."""
    k = float(ctx.cutoff())
    positives = _positive_rows()
    position = pl.col(ctx.rank).filter(positives)
    # j: the positive's place among its list's positives (positions are distinct here)
    index = position.rank("ordinal").cast(pl.Float64)
    above = position.cast(pl.Float64) - index  # s = r - j
    kept = above < k
    if top_positives:
        kept = kept & (index <= k)
    return (k - above).filter(kept).sum()


def _pauc_partials(ctx: Context) -> list[Partial]:
    return [Partial(ctx.name("pauc"), _rectools_gain(ctx, top_positives=False))]


def _pauc_finals(ctx: Context) -> Mapping[str, pl.Expr]:
    n_relevant = pl.col(N_RELEVANT)
    value = pl.col(ctx.name("pauc")) / (float(ctx.cutoff()) * n_relevant)
    return {"": formula.defined(value, n_relevant)}


def _pap_partials(ctx: Context) -> list[Partial]:
    return [Partial(ctx.name("pap"), _rectools_gain(ctx, top_positives=True))]


def _pap_finals(ctx: Context) -> Mapping[str, pl.Expr]:
    n_relevant = pl.col(N_RELEVANT)
    k = float(ctx.cutoff())
    top = pl.min_horizontal(n_relevant.cast(pl.Float64), pl.lit(k))
    return {"": formula.defined(pl.col(ctx.name("pap")) / (k * top), n_relevant)}


AUC = register(
    Measure(
        name="auc",
        direction="higher",
        cutoff="none",
        params=(
            Param(
                "max_fpr",
                float,
                1.0,
                "the false-positive rate up to which the partial AUC is standardised (McClish)",
                check=_check_max_fpr,
            ),
        ),
        inputs=frozenset({"hits", "list_length", "score_ties"}),
        repeats="list",
        hit_partials=_auc_partials,
        finals=_auc_finals,
        fill=None,
        tie_average=True,
        doc="auc = 1 - sum_i s_i / (P N) over the user's candidates (s_i: negatives above "
        "positive i, a tie counting one half); auc(max_fpr=t): sklearn's McClish-standardised "
        "partial AUC",
    )
)

GAUC = register(
    Measure(
        name="gauc",
        direction="higher",
        cutoff="none",
        params=(
            Param(
                "weight",
                str,
                "candidates",
                "each user's weight: its candidates (impressions, Zhou et al.) or its "
                "positives (RecBole)",
                choices=("candidates", "positives"),
            ),
        ),
        inputs=frozenset({"hits", "list_length", "score_ties"}),
        repeats="list",
        hit_partials=_gauc_partials,
        finals=_gauc_finals,
        aggregation="pooled",
        fill=None,
        per_user_value=_gauc_value,
        tie_average=True,
        doc="gauc = sum_u w_u auc_u / sum_u w_u over users with both classes, w_u the user's "
        "candidates (Zhou et al. 2018) or, weight=positives, its positives (RecBole)",
    )
)

PAUC = register(
    Measure(
        name="pauc",
        direction="higher",
        cutoff="required",
        inputs=frozenset({"hits"}),
        # the negatives above a positive are counted from positions: every row matters
        repeats="list",
        hit_partials=_pauc_partials,
        finals=_pauc_finals,
        reads_past_cutoff=True,
        doc="pauc@k = sum_{positives, s < k} (k - s) / (k m_u), s the negatives above "
        "(RecTools' PartialAUC)",
    )
)

PAP = register(
    Measure(
        name="pap",
        direction="higher",
        cutoff="required",
        inputs=frozenset({"hits"}),
        # the negatives above a positive are counted from positions: every row matters
        repeats="list",
        hit_partials=_pap_partials,
        finals=_pap_finals,
        reads_past_cutoff=True,
        doc="pap@k = sum_{positives j <= k, s < k} (k - s) / (k min(m_u, k)) (RecTools' PAP)",
    )
)
