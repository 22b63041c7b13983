"""Gini index of exposure over the catalog: how unevenly the lists show the items.

    gini@k = Σ_{j=1..n} (2j - n - 1) x_(j) / (n Σ x)

Notes
-----
with x_i the number of lists whose top k holds item i (0 for a catalog item
never shown), sorted ascending, and n the catalog size (``items=``). The
items never shown sort first: with s items shown, z = n - s zeros, and the
shown ones at j = z + r, Σ (2j - n - 1) x_(j) = 2 Σ_r r x_(r) + (2z - n - 1) Σ x,
so only the shown items' ranks are needed. 0: every item equally exposed;
near 1: a few items take all. Null when nothing is shown. One value per
``by`` group.

References
----------
Fleder & Hosanagar, "Blockbuster culture's next
rise or fall", Management Science 2009.
"""

from __future__ import annotations

import polars as pl

from polars_rankmetrics._measures.lists._hooks import Exposure, OfGroup
from polars_rankmetrics._measures.lists._register import register_list

__all__ = ["GINI", "gini_of"]


def gini_of(x: Exposure) -> pl.Expr:
    """The Gini index from the exposure statistics (shown, total, ranked, catalog)."""
    zeros = x.catalog - x.shown
    n = x.catalog
    return pl.when(x.total > 0).then(
        (2.0 * x.ranked + (2.0 * zeros - n - 1.0) * x.total) / (n * x.total)
    )


GINI = register_list(
    "gini",
    OfGroup(gini_of, reads=frozenset({"shown", "total", "ranked"})),
    direction="lower",
    doc="gini@k = sum_j (2j - n - 1) x_(j) / (n sum x), exposures x over the catalog",
    reads=frozenset({"catalog"}),
)
