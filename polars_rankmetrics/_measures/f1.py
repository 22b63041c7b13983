"""F1@k: the harmonic mean of precision@k and recall@k.

``F1@k = 2 P R / (P + R) = 2 h / (k + m_u)`` with ``h`` the relevant items in
the top k, ``P = h / k`` and ``R = h / m_u``; 0 when ``h = 0``.

Notes
-----
Its precision divides by k (a short list's missing slots are misses), so a
cutoff is required; ``fbeta(beta=1)@k`` is the same number. Relevance is
binary: a truth item is relevant when its grade is > 0 (and >=
``relevance_level`` when one is given); grades are not read otherwise. Ties:
ranks come given or from scores under ``ties`` (trec_eval's item id descending
by default); ``ties="average"`` gives the exact expectation over the orders of
tied items (McSherry & Najork 2008). Users: every user ``evaluate`` counts (a
relevant truth item; see the ``users_without_recs`` and ``users_without_truth``
conventions); a counted user without recommendations scores 0, and the metric
is their mean.

References
----------
van Rijsbergen, *Information Retrieval* (1979), chapter 7 (the F measure);
ranx ``f1``.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from polars_rankmetrics import _formulas as formula
from polars_rankmetrics._measures._curve import CurveStep
from polars_rankmetrics._measures._registry import N_RELEVANT, Context, Measure, register
from polars_rankmetrics._measures.fbeta import fbeta_curve
from polars_rankmetrics._measures.precision import hit_count


def _finals(ctx: Context) -> Mapping[str, pl.Expr]:
    n_relevant = pl.col(N_RELEVANT)
    value = formula.f1(pl.col(ctx.name("hits")), n_relevant, ctx.cutoff())
    return {"": formula.defined(value, n_relevant)}


def _curve(ctx: Context) -> CurveStep:
    return fbeta_curve(ctx, 1.0)


F1 = register(
    Measure(
        name="f1",
        direction="higher",
        tie_average=True,
        cutoff="required",
        hit_partials=hit_count,
        finals=_finals,
        curve=_curve,
        doc="f1@k = 2 P R / (P + R) = 2 hits@k / (k + m_u) (0 without a hit)",
    )
)
