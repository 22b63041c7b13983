"""Rank-biased entropy of exposure: entropy@k with each top-k slot weighted by its rank.

    rank_biased_entropy(p=0.85)@k = -Σ_i q_i ln q_i,  q_i = x_i / Σ_j x_j

Notes
-----
As ``entropy@k`` (:mod:`.entropy`), with x_i the attention the lists give
item i rather than their number: x_i = Σ over the lists holding i within k
of p^(r - 1) at its rank r (the geometric rank weight of RBP, patience p,
Moffat & Zobel 2008; 0.85 is LensKit's default ``GeometricRankWeight``), so a
top slot counts more than a bottom one. p = 1 is ``entropy@k``. Natural
log (divide by ln 2 for bits). Computed as ``ln S - (1/S) Σ_i x_i ln x_i``,
S = Σ_i x_i; null when nothing is shown. One value per ``by`` group; on
Spark each bucket emits its items' x_i, Spark adds them and the driver
finishes the same formula.

Where LensKit differs: its ``RankBiasedEntropy`` (``lenskit.metrics``,
``_entropy.py``) weighs the same p^(r - 1) but over the *categories* of one
list's items (an item's categories share its weight), per list, in bits,
after adding 1e-6 to every category of the catalog; this measure is the
exposure over the items of all the lists together (the slots of a group),
the reading of rank-biased entropy as aggregate diversity. With one list
and one category per item the two agree up to the base and the smoothing.

References
----------
Shannon 1948; Moffat & Zobel, "Rank-biased precision for measurement of
retrieval effectiveness", TOIS 2008 (the rank weight); LensKit
(github.com/lenskit/lkpy, ``src/lenskit/metrics/ranking/_entropy.py``).
"""

from __future__ import annotations

from polars_rankmetrics._measures._registry import Param
from polars_rankmetrics._measures.lists._hooks import OfGroup
from polars_rankmetrics._measures.lists._register import register_list
from polars_rankmetrics._measures.lists.entropy import entropy_of
from polars_rankmetrics._measures.lists.fairness import check_patience

__all__ = ["RANK_BIASED_ENTROPY"]

RANK_BIASED_ENTROPY = register_list(
    "rank_biased_entropy",
    OfGroup(entropy_of, reads=frozenset({"total", "xlogx"}), patience="p"),
    direction="higher",
    doc="rank_biased_entropy(p=0.85)@k = -sum_i q_i ln q_i, q_i = x_i / sum_j x_j, "
    "x_i = sum over lists of p^(r_i - 1)",
    params=(Param("p", float, 0.85, "patience: slot weight p^(r - 1) at rank r", check_patience),),
)
