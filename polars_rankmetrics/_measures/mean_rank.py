"""Mean rank: the position of the first relevant item, averaged over users who have one.

``first_u = min{i : rel_u(i) = 1}`` over the whole list (no cutoff);
``mean_rank`` is the mean of ``first_u`` over the users whose first relevant
item was recommended.

Notes
-----
A user without a relevant recommendation has no position: it is left out of the
mean (null per user), not counted as 0 or as the list length. Relevance is
binary: a truth item is relevant when its grade is > 0 (and >=
``relevance_level`` when one is given); grades are not read otherwise. Ties:
ranks come given or from scores under ``ties`` (trec_eval's item id descending
by default); ``ties="average"`` is refused.

References
----------
The package's reference definitions (``METRICS.md``: ``first_relevant_rank``,
whose mean is Mean Rank, MR).
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from polars_rankmetrics._measures._registry import Context, Measure, register
from polars_rankmetrics._measures.reciprocal_rank import first_hit


def _finals(ctx: Context) -> Mapping[str, pl.Expr]:
    # null where nothing relevant was recommended: such users are not averaged
    return {"": pl.col(ctx.name("first")).cast(pl.Float64)}


MEAN_RANK = register(
    Measure(
        name="mean_rank",
        direction="lower",
        cutoff="none",
        hit_partials=first_hit,
        finals=_finals,
        fill=None,
        doc="position of the first relevant item; the mean runs over users who have one",
    )
)
