"""Catalog coverage: the share of the catalog that any top-k list shows.

    coverage@k = |{i : x_i > 0}| / n

Notes
-----
with x_i the number of lists whose top k holds item i and n the number of
catalog items (``items=``). One value per ``by`` group, not a mean over
users; null for a group without a list. A list item missing from the catalog is
refused.

References
----------
Ge, Delgado-Battenfeld & Jannach, "Beyond accuracy: evaluating recommender systems by coverage and
serendipity", RecSys 2010 (catalog coverage).
"""

from __future__ import annotations

import polars as pl

from polars_rankmetrics._measures.lists._hooks import Exposure, OfGroup
from polars_rankmetrics._measures.lists._register import register_list

__all__ = ["COVERAGE"]


def _value(x: Exposure) -> pl.Expr:
    return x.shown / x.catalog


COVERAGE = register_list(
    "coverage",
    OfGroup(_value, reads=frozenset({"shown"})),
    direction="higher",
    doc="coverage@k = distinct items in the top-k lists / catalog size",
    reads=frozenset({"catalog"}),
)
