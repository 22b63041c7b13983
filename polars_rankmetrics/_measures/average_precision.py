"""Average precision (``map@k``, ``ap@k``): the mean of P@i over the relevant hits.

``AP@k = sum_{relevant i <= k} P@i / D`` with D set by the ``denominator``
convention: ``min(m_u, k)`` (Kaggle), ``m_u`` (trec_eval) or the hits.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from polars_rankmetrics import _formulas as formula
from polars_rankmetrics._measures._registry import (
    HIT_INDEX,
    N_RELEVANT,
    Context,
    Measure,
    Partial,
    register,
)
from polars_rankmetrics._measures.precision import hit_count


def _partials(ctx: Context) -> list[Partial]:
    # the j-th relevant hit (in rank order) at position i contributes P@i = j / i
    precision_sum = (pl.col(HIT_INDEX) / pl.col(ctx.rank)).filter(ctx.hits()).sum()
    return [*hit_count(ctx), Partial(ctx.name("ap"), precision_sum)]


def _finals(ctx: Context) -> Mapping[str, pl.Expr]:
    n_relevant = pl.col(N_RELEVANT)
    value = formula.average_precision(
        pl.col(ctx.name("ap")),
        pl.col(ctx.name("hits")),
        n_relevant,
        ctx.k,
        ctx.conventions.denominator,
    )
    return {"": formula.defined(value, n_relevant)}


AVERAGE_PRECISION = register(
    Measure(
        name="map",
        aliases=("ap",),
        inputs=frozenset({"hits", "hit_index"}),
        hit_partials=_partials,
        finals=_finals,
        doc="AP@k = sum of P@i over relevant i <= k, / min(m_u, k), m_u or hits "
        "(denominator convention); MAP is its mean",
    )
)
