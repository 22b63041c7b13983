"""Shannon entropy of exposure: how evenly the top-k slots of all the lists spread over items.

    entropy(p=1)@k = -Σ_i s_i ln s_i,  s_i = x_i / Σ_j x_j

Notes
-----
with x_i the number of lists whose top k holds item i, so s_i is item i's
share of all the top-k slots of the group's lists (a list shorter than k
fills fewer slots). With a patience p < 1 each slot weighs by its rank,
x_i = Σ over the lists holding i within k of p^(r - 1) at its rank r (the
geometric rank weight of RBP, Moffat & Zobel 2008): rank-biased exposure, a
top slot counting more than a bottom one. Natural log: 0 when every list shows the same single
item, ln n when n items share the slots equally (at most ln of the number of
slots, or of the catalog). Computed as ``ln S - (1/S) Σ_i x_i ln x_i`` with
S = Σ_i x_i, from the exposures alone: no catalog is needed (an item never
shown has p = 0 and adds nothing). Null when nothing is shown. One value per
``by`` group, not a mean over users; on Spark each bucket emits its items'
x_i, Spark adds them and the driver finishes the same formula, so the value
is the one of all the lists together.

Higher is more even exposure (direction ``"higher"``, as coverage; Gini is
its lower-is-better counterpart). It is the "Shannon entropy" of the
aggregate diversity literature, with slots counted over all lists. LensKit's
``Entropy`` and ``RankBiasedEntropy`` are per-list entropies of the items'
categories instead: ``rank_biased_entropy(p)@k`` here.

References
----------
Shannon, "A mathematical theory of communication", Bell System Technical
Journal 1948; Adomavicius & Kwon, "Improving aggregate recommendation
diversity using ranking-based techniques", IEEE TKDE 2012 (entropy of the
recommendation counts); Moffat & Zobel, "Rank-biased precision for
measurement of retrieval effectiveness", TOIS 2008 (the rank weight).
"""

from __future__ import annotations

import polars as pl

from polars_rankmetrics._measures._registry import Param
from polars_rankmetrics._measures.lists._hooks import Exposure, OfGroup
from polars_rankmetrics._measures.lists._register import register_list
from polars_rankmetrics._measures.lists._shared import check_patience

__all__ = ["ENTROPY", "entropy_of"]


def entropy_of(x: Exposure) -> pl.Expr:
    """``ln S - Σ x ln x / S`` of the exposures x_i (S = Σ x_i); null when nothing is shown."""
    return pl.when(x.total > 0).then(x.total.log() - x.xlogx / x.total)


ENTROPY = register_list(
    "entropy",
    OfGroup(entropy_of, reads=frozenset({"total", "xlogx"}), patience="p"),
    direction="higher",
    doc="entropy(p=1)@k = -sum_i s_i ln s_i, s_i = x_i / sum_j x_j: the items' shares of all "
    "top-k slots, a slot at rank r weighing p^(r - 1)",
    params=(Param("p", float, 1.0, "patience: a slot at rank r weighs p^(r - 1)", check_patience),),
)
