"""Gini index of rank-discounted exposure over the catalog: who gets the attention.

    exposure_gini(p=0.5)@k = Σ_{j=1..n} (2j - n - 1) x_(j) / (n Σ x)

Notes
-----
As ``gini@k`` (:mod:`.gini`), with x_i the attention the lists give item i
rather than their number: x_i = Σ over the lists holding i within k of
p^(r - 1) at its rank r (RBP patience p, Moffat & Zobel 2008), 0 for a
catalog item never shown, sorted ascending; n the catalog size
(``items=``). p = 1 is ``gini@k``. A top slot weighs more than a bottom
one, so a model that shows the long tail only at the bottom of its lists
is more concentrated here than in ``gini@k``. Null when nothing is shown;
one value per ``by`` group. On Spark each bucket emits its items' x_i, Spark
adds them, and the driver sorts them and finishes the same formula.

References
----------
Fleder & Hosanagar, Management Science 2009 (Gini of exposure); Singh &
Joachims, "Fairness of exposure in rankings", KDD 2018 (position-based
exposure).
"""

from __future__ import annotations

from polars_rankmetrics._measures._registry import Param
from polars_rankmetrics._measures.lists._hooks import OfGroup
from polars_rankmetrics._measures.lists._register import register_list
from polars_rankmetrics._measures.lists._shared import check_patience
from polars_rankmetrics._measures.lists.gini import gini_of

__all__ = ["EXPOSURE_GINI"]

EXPOSURE_GINI = register_list(
    "exposure_gini",
    OfGroup(gini_of, reads=frozenset({"shown", "total", "ranked"}), patience="p"),
    direction="lower",
    doc="exposure_gini(p=0.5)@k = gini of x_i = sum over lists of p^(r_i - 1), over the catalog",
    reads=frozenset({"catalog"}),
    params=(Param("p", float, 0.5, "RBP patience: attention p^(r - 1) at rank r", check_patience),),
)
