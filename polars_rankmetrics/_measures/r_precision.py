"""R-precision: precision at the user's own number of relevant items, m_u.

``R-prec = |{i <= m_u : rel_u(i) = 1}| / m_u``: precision at cutoff ``m_u``,
which is also the recall there.

Notes
-----
The cutoff is the user's own ``m_u``: the metric takes no ``@k``; a list
shorter than ``m_u`` misses the empty slots. Relevance is binary: a truth item
is relevant when its grade is > 0 (and >= ``relevance_level`` when one is
given); grades are not read otherwise. Ties: ranks come given or from scores
under ``ties`` (trec_eval's item id descending by default); ``ties="average"``
is refused. Users: every user ``evaluate`` counts (a relevant truth item; see
the ``users_without_recs`` and ``users_without_truth`` conventions); a counted
user without recommendations scores 0, and the metric is their mean.

References
----------
Buckley & Voorhees, "Evaluating evaluation measure stability" (SIGIR 2000);
trec_eval 10.0 ``m_Rprec.c``.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from polars_rankmetrics import _formulas as formula
from polars_rankmetrics._measures._registry import (
    N_RELEVANT,
    RELEVANT,
    Context,
    Measure,
    Partial,
    register,
)


def _partials(ctx: Context) -> list[Partial]:
    within_m = pl.col(RELEVANT) & (pl.col(ctx.rank) <= pl.col(N_RELEVANT))
    return [Partial(ctx.name("rprec"), within_m.sum())]


def _finals(ctx: Context) -> Mapping[str, pl.Expr]:
    n_relevant = pl.col(N_RELEVANT)
    value = formula.r_precision(pl.col(ctx.name("rprec")), n_relevant)
    return {"": formula.defined(value, n_relevant)}


R_PRECISION = register(
    Measure(
        name="r_precision",
        cutoff="none",
        inputs=frozenset({"hits", "n_relevant_on_hits"}),
        hit_partials=_partials,
        finals=_finals,
        doc="R-precision = relevant items within positions 1..m_u, / m_u",
    )
)
