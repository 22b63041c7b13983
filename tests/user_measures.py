"""Measures written outside the package, as a user writes them (polars_rankmetrics.measures).

Importing this module registers them; the cross-surface test
(``tests/test_one_number.py``) then runs them on every surface, the command
line loads this file with ``--measures`` and Spark's workers receive them with
the plan. Each covers one part of the public measure API:

* ``dhits``: a sum over the hits reading ``relevant``, ``position`` and m_u;
* ``judged_share``: sums over the judgements and over every list row (a
  measure a user without a relevant item leaves out: ``fill=None``);
* ``weighted_precision(w=1)``: a parameter, and a value reading k;
* ``pooled_hits``: a pooled aggregation (sum of numerators / sum of denominators);
* ``graded_rbp(p=0.8)``: grades, and a parameter in the term;
* ``relevant_position``: lower is better, null for a user without a hit;
* ``total_gain``: a sum over users, and ``relevant_above``.
"""

from __future__ import annotations

import polars as pl

from polars_rankmetrics.measures import Measure, Param, Row, Sum, User, power, register_measure


def _credit(row: Row) -> pl.Expr:
    return pl.when(row.relevant).then(1.0 / row.position)


DHITS = register_measure(
    Measure(
        "dhits",
        sums={"credit": Sum("hits", _credit)},
        value=lambda user: user.sum("credit") / user.n_relevant,
        direction="higher",
        doc="dhits@k = (1/m_u) sum over relevant i <= k of 1 / i",
    )
)

JUDGED_SHARE = register_measure(
    Measure(
        "judged_share",
        sums={
            "judged": Sum("judgements", lambda row: row.grade >= 0),
            "shown": Sum("list", 1.0),
        },
        value=lambda user: pl.when(user.sum("shown") > 0).then(
            user.sum("judged") / user.sum("shown")
        ),
        direction="none",
        fill=None,
        doc="judged_share@k = recommended items judged (grade >= 0) in the top k / items shown",
    )
)


def _check_weight(w: float) -> float:
    if not w > 0:
        raise ValueError(f"weighted_precision's w must be > 0, got {w}")
    return w


WEIGHTED_PRECISION = register_measure(
    Measure(
        "weighted_precision",
        sums={"hits": Sum("hits", lambda row: row.relevant)},
        value=lambda user: user.number("w") * user.sum("hits") / user.k,
        direction="higher",
        cutoff="required",
        params=[Param("w", 1.0, doc="a weight", check=_check_weight)],
        doc="weighted_precision(w=1)@k = w hits@k / k",
    )
)


def _pooled(user: User) -> tuple[pl.Expr, pl.Expr]:
    return user.sum("hits"), pl.min_horizontal(user.n_relevant, user.k).cast(pl.Float64)


POOLED_HITS = register_measure(
    Measure(
        "pooled_hits",
        sums={"hits": Sum("hits", lambda row: row.relevant)},
        value=_pooled,
        direction="higher",
        cutoff="required",
        aggregation="pooled",
        doc="pooled_hits@k = sum of hits@k / sum of min(k, m_u)",
    )
)


def _graded(row: Row) -> pl.Expr:
    return row.grade * power(row.number("p"), row.position - 1)


GRADED_RBP = register_measure(
    Measure(
        "graded_rbp",
        sums={"gain": Sum("hits", _graded)},
        value=lambda user: (1 - user.number("p")) * user.sum("gain"),
        direction="higher",
        params=[Param("p", 0.8, doc="persistence")],
        doc="graded_rbp(p=0.8)@k = (1 - p) sum over hits i <= k of grade_i p^(i-1)",
    )
)

RELEVANT_POSITION = register_measure(
    Measure(
        "relevant_position",
        sums={
            "positions": Sum("hits", lambda row: pl.when(row.relevant).then(row.position)),
            "found": Sum("hits", lambda row: row.relevant),
        },
        value=lambda user: pl.when(user.sum("found") > 0).then(
            user.sum("positions") / user.sum("found")
        ),
        direction="lower",
        fill=None,
        doc="relevant_position@k = mean position of the relevant items in the top k",
    )
)

TOTAL_GAIN = register_measure(
    Measure(
        "total_gain",
        sums={"gain": Sum("hits", lambda row: pl.when(row.relevant).then(row.relevant_above))},
        value=lambda user: user.sum("gain"),
        direction="higher",
        aggregation="sum",
        doc="total_gain@k = sum over users of sum over relevant i <= k of (relevant at or above i)",
    )
)
