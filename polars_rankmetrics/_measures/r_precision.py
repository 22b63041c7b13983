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
    TrecFamily,
    register,
    register_trec,
)
from polars_rankmetrics._measures._trec_plan import (
    OFFICIAL,
    Plan,
    R,
    Request,
    hits_at,
    num_ret,
    when_positive,
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
        direction="higher",
        cutoff="none",
        inputs=frozenset({"hits", "n_relevant_on_hits"}),
        hit_partials=_partials,
        finals=_finals,
        doc="R-precision = relevant items within positions 1..m_u, / m_u",
    )
)


# ---------------------------------------------------------------- trec_eval's twin


def _trec_r_precision(plan: Plan, request: Request) -> None:
    """Rprec: precision at R (relevant in the top min(R, num_ret), over R)."""
    look = pl.min_horizontal(num_ret, R)
    plan.value(request.names[0], when_positive(look, formula.r_precision(hits_at(look), R)))


register_trec(TrecFamily("Rprec", 7, _trec_r_precision, sets=OFFICIAL, metric="r_precision"))


def _trec_rprec_mult(plan: Plan, request: Request) -> None:
    """Rprec_mult_x: precision at floor(x * R + 0.9) documents."""
    for name, fraction in zip(request.names, request.cutoffs, strict=True):
        cutoff = (fraction * R + 0.9).floor()
        plan.value(name, when_positive(cutoff, hits_at(cutoff) / cutoff))


register_trec(
    TrecFamily(
        "Rprec_mult", 16, _trec_rprec_mult, "cut_double",
        (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0),
    )
)  # fmt: skip
