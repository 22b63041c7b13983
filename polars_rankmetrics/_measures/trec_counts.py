"""trec_eval's counts, its set measures and utility, for ``rankmetrics trec``.

- ``runid``: the run's tag; ``num_q``: evaluated queries; ``num_ret``:
  retrieved documents; ``num_rel``: relevant documents (R); ``num_rel_ret``:
  relevant retrieved; ``num_nonrel_judged_ret``: judged non-relevant retrieved.
  Summed over queries for ``all``.
- The retrieved set, unranked (r relevant retrieved of n retrieved):
  set_P = r / n, set_relative_P = r / min(n, R), set_recall = r / R,
  set_map = r^2 / (n R), set_F = (beta + 1) P R / (beta P + R)
  (``set_F.beta``, default 1).
- utility = a r + b (n - r) + c (R - r) + d (r - n - R) (``utility.a,b,c,d``).

Notes
-----
As trec_eval: relevant means a grade >= its relevance level (``-l``, default
1); a query without relevant documents is skipped unless ``-c`` asks for
every query of the qrels; a query the run skipped counts 0 under ``-c``.
trec_eval's collection size is 0, so utility's d term reads r - n - R.
Formulas of every measure in ``docs/trec-measures.md``.

References
----------
trec_eval 10.0 (usnistgov/trec_eval), ``m_num_q.c`` ... ``m_set_F.c``,
``m_utility.c``.
"""

from __future__ import annotations

import polars as pl

from polars_rankmetrics._measures._registry import TrecFamily, register_trec
from polars_rankmetrics._measures._trec_plan import (
    Plan,
    R,
    Request,
    code,
    num_rel_ret,
    num_ret,
    rel,
    when_positive,
)

_OFFICIAL = ("official", "all_trec", "set")


def counts(plan: Plan, request: Request) -> None:
    """num_q, num_ret, num_rel, num_rel_ret, num_nonrel_judged_ret."""
    plan.value(
        request.names[0],
        {
            "num_q": pl.lit(1.0),
            "num_ret": num_ret,
            "num_rel": R,
            "num_rel_ret": num_rel_ret,
            "num_nonrel_judged_ret": ((code >= 0) & ~rel).sum().cast(pl.Float64),
        }[request.family],
    )


register_trec(TrecFamily("runid", 0, None, summary="runid", per_query=False, sets=_OFFICIAL))
register_trec(TrecFamily("num_q", 1, counts, summary="sum", per_query=False, sets=_OFFICIAL))
register_trec(TrecFamily("num_ret", 2, counts, summary="sum", sets=_OFFICIAL, missing=0.0))
register_trec(TrecFamily("num_rel", 3, counts, summary="sum_qrels", sets=_OFFICIAL))
register_trec(TrecFamily("num_rel_ret", 4, counts, summary="sum", sets=_OFFICIAL))
register_trec(TrecFamily("num_nonrel_judged_ret", 35, counts, summary="sum"))


def set_measures(plan: Plan, request: Request) -> None:
    """set_P, set_relative_P, set_recall, set_map, set_F: the retrieved set, unranked."""
    name = request.names[0]
    r, n = num_rel_ret, num_ret
    if request.family == "set_P":
        plan.value(name, when_positive(n, r / n))
    elif request.family == "set_relative_P":
        plan.value(name, when_positive(pl.min_horizontal(n, R), r / pl.min_horizontal(n, R)))
    elif request.family == "set_recall":
        plan.value(name, when_positive(R, r / R))
    elif request.family == "set_map":
        plan.value(name, when_positive(n * R, r * r / (n * R)))
    else:  # set_F
        beta = request.values[0]
        precision, recall = r / n, r / R
        f = (beta + 1.0) * precision * recall / (beta * precision + recall)
        plan.value(name, when_positive(r, f))


_SETS = ("all_trec", "set")
register_trec(TrecFamily("set_P", 30, set_measures, sets=_SETS))
register_trec(TrecFamily("set_relative_P", 31, set_measures, sets=_SETS))
register_trec(TrecFamily("set_recall", 32, set_measures, sets=_SETS))
register_trec(TrecFamily("set_map", 33, set_measures, sets=_SETS))
register_trec(TrecFamily("set_F", 34, set_measures, "p_double", (1.0,), sets=_SETS))


def utility(plan: Plan, request: Request) -> None:
    """A * rel_ret + b * nonrel_ret + c * rel_not_ret + d * nonrel_not_ret."""
    if len(request.values) != 4:
        raise ValueError(
            f"utility takes 4 coefficients (e.g. utility.1,-1,0,0), got {len(request.values)}"
        )
    a, b, c, d = request.values
    r, n = num_rel_ret, num_ret
    # trec_eval's collection size (-N) is 0 unless given
    plan.value(request.names[0], a * r + b * (n - r) + c * (R - r) + d * (r - n - R))


register_trec(
    TrecFamily("utility", 17, utility, "p_double", (1.0, -1.0, 0.0, 0.0), sets=_SETS, missing=0.0)
)
