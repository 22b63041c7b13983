"""A power of a constant has the same bits on one row as on many (:mod:`polars_rankmetrics._powers`).

Polars raises a one-element exponent of 2 to 9 by repeated multiplication and
a longer one with ``pow``: before :func:`power`, RBP's weight of a user with
one relevant item in the top 10 changed in its last bit between a call on the
user alone and a call on many users, and now and then between identical calls.
"""

from __future__ import annotations

import math

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import polars_rankmetrics as prm
from polars_rankmetrics._powers import power

BASES = [0.8, 0.3, 0.7, 0.95, 0.5, 0.9999, 1.0, 0.0]


@pytest.mark.parametrize("base", BASES)
def test_each_power_is_the_c_librarys_pow_on_one_row_and_on_many(base: float) -> None:
    exponents = [float(n) for n in range(40)] + [0.5, 2.5, 11.25, -1.0, -3.0]
    want = [math.pow(base, e) if base or e >= 0 else math.inf for e in exponents]
    many = pl.DataFrame({"e": exponents}).select(power(base, pl.col("e"))).to_series().to_list()
    assert many == want
    for exponent, value in zip(exponents, want, strict=True):
        alone = pl.DataFrame({"e": [exponent]}).select(power(base, pl.col("e"))).item()
        assert alone == value, exponent


def test_one_row_groups_and_missing_exponents() -> None:
    frame = pl.DataFrame({"g": [1, 2, 2, 3, 4], "e": [4.0, 4.0, 7.0, None, float("nan")]})
    sums = frame.group_by("g", maintain_order=True).agg(power(0.8, pl.col("e")).sum().alias("w"))
    assert sums.get_column("w").to_list()[:2] == [
        math.pow(0.8, 4),
        math.pow(0.8, 4) + math.pow(0.8, 7),
    ]
    values = frame.select(power(0.8, pl.col("e"))).to_series().to_list()
    assert values[3] is None
    assert math.isnan(values[4])


MEASURES = [
    "rbp@10", "rbp_resid@10", "rbp(p=0.95)@10", "nrbp(alpha=0.3,beta=0.8)",
    "nnrbp(alpha=0.3,beta=0.8)", "alpha_ndcg(alpha=0.3)@10", "err_ia(alpha=0.3)@10",
]  # fmt: skip


def test_a_user_alone_and_among_many_gets_the_same_bits() -> None:
    # one relevant item at rank 5 (subtopic 1) and one at rank 8 (subtopics 1 and 2): one or
    # two hit rows, weights p^4 and p^7 (2 to 9: Polars' repeated multiplication on one row)
    recs = pl.DataFrame({"user": "u", "item": list("abcdefgh"), "rank": range(1, 9)})
    truth = pl.DataFrame(
        {"user": "u", "subtopic": ["1", "1", "2"], "item": ["e", "h", "h"], "rel": 1}
    )
    copies = [f"u{n}" for n in range(60)]
    many_recs = pl.concat([recs.with_columns(user=pl.lit(u)) for u in copies])
    many_truth = pl.concat([truth.with_columns(user=pl.lit(u)) for u in copies])
    options = {"relevance": "rel", "subtopic": "subtopic"}
    for single in (True, False):
        keep = truth.head(1) if single else truth
        kept = many_truth.filter(pl.col("item") == "e") if single else many_truth
        alone = prm.evaluate(recs, keep, MEASURES, per_user=True, **options)
        among = prm.evaluate(many_recs, kept, MEASURES, per_user=True, **options)
        for user in copies:
            mine = among.filter(pl.col("user") == user).with_columns(user=pl.lit("u"))
            assert_frame_equal(mine, alone, check_exact=True)
    rbp = prm.evaluate(recs, truth.head(1), ["rbp@10"], relevance="rel").item()
    assert rbp == (1.0 - 0.8) * math.pow(0.8, 4)
