"""Personalization: one minus the mean overlap of two users' top-k lists.

    personalization@k = 1 - (Σ_i x_i (x_i - 1) / 2) / (U (U - 1) / 2 · k)

Notes
-----
Over the U users with a list within k: Σ_i C(x_i, 2) counts the pairs of
lists sharing item i, so the numerator is the total overlap over all
U (U - 1) / 2 pairs of users (exact, no sampling, no pair built). Without a
cutoff the lists are compared at the longest list's length. Null for fewer
than two users. One value per ``by`` group.

References
----------
The overlap form of Zhou et al., "Solving the apparent diversity-accuracy dilemma of recommender
systems", PNAS 2010 (personalization, 1 - mean inter-list overlap).
"""

from __future__ import annotations

import polars as pl

from polars_rankmetrics._measures.lists._hooks import Exposure, OfGroup
from polars_rankmetrics._measures.lists._register import register_list

__all__ = ["PERSONALIZATION"]


def _value(x: Exposure) -> pl.Expr:
    all_pairs = x.users * (x.users - 1.0) / 2.0 * x.length
    return pl.when(x.users >= 2).then(1.0 - x.pairs / all_pairs)


PERSONALIZATION = register_list(
    "personalization",
    OfGroup(_value, reads=frozenset({"pairs", "users"})),
    direction="higher",
    doc="personalization@k = 1 - sum_i x_i (x_i - 1) / 2 / (U (U - 1) / 2 k)",
)
