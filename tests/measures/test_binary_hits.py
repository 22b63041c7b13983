"""A truth without a relevance column finds its hits by a semi join: the same numbers.

Every truth row then has grade 1, so ``evaluate`` keeps the recommendations
whose key is in the truth (a semi join) and sets the grade and label a hit
would take from its truth row as constants. A truth with a relevance column
takes the inner join that pairs each hit with its truth row. The two sides of
that gate are compared here on the same data: the truth as it is, and the
truth with a relevance column of ones, under integer ids (one packed join
key), String ids (the ids joined as they are), ``by`` groups shared with the
truth and only in the recs, lazy frames, relevance levels at and above 1,
scores with ``ties="average"``, and ``duplicates="first"``.

The hits are sorted by (user, position) for AP's running count of hits; with
one integer user, no ``by`` and a finite cut, on one Int128
``user * (cut + 1) + position`` instead. The last test compares that with the
sort on the columns (a ``by`` column of one value) at extreme user ids.
"""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polars.testing import assert_frame_equal

import polars_rankmetrics as prm

# every table a hit row feeds: hit index (AP), first hit (RR, mean rank), grades (DCG,
# ERR's largest grade), m_u beside the hits (R-precision), pooled sums, judged lists
METRICS = [
    "map@3",
    "ndcg@3",
    "dcg@3",
    "mrr",
    "recall@3",
    "precision@2",
    "f1@3",
    "hit_rate@2",
    "n_relevant_retrieved@3",
    "pooled_recall@3",
    "r_precision",
    "mean_rank",
    "err@3",
    "judged@3",
]
TIE_METRICS = ["map@3", "ndcg@3", "mrr@3", "recall@3", "precision@2"]


@st.composite
def frames(draw: st.DrawFn) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Recs with ranks and scores (distinct items per list), a truth with distinct rows."""
    recs_rows = []
    for fold in (0, 1):
        for user in range(3):
            items = draw(st.lists(st.integers(0, 6), unique=True, max_size=5))
            scores = draw(st.lists(st.integers(0, 3), min_size=len(items), max_size=len(items)))
            for position, (item, score) in enumerate(zip(items, scores, strict=True), 1):
                recs_rows.append((fold, user, item, position, float(score)))
    pairs = draw(
        st.lists(
            st.tuples(st.integers(0, 1), st.integers(0, 3), st.integers(0, 6)),
            unique=True,
            min_size=1,
            max_size=14,
        )
    )
    recs = pl.DataFrame(
        recs_rows,
        schema={
            "fold": pl.Int64,
            "user": pl.Int64,
            "item": pl.Int64,
            "rank": pl.Int64,
            "score": pl.Float64,
        },
        orient="row",
    )
    truth = pl.DataFrame(pairs, schema=["fold", "user", "item"], orient="row")
    return recs, truth


def both_sides(
    recs: pl.DataFrame | pl.LazyFrame,
    truth: pl.DataFrame | pl.LazyFrame,
    metrics: list[str],
    **kw: object,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The per-user values without a relevance column and with one of ones."""
    graded = truth.with_columns(pl.lit(1, pl.Int64).alias("rel"))
    binary = prm.evaluate(recs, truth, metrics, per_user=True, **kw)  # type: ignore[arg-type]
    ones = prm.evaluate(recs, graded, metrics, per_user=True, relevance="rel", **kw)  # type: ignore[arg-type]
    if isinstance(binary, pl.LazyFrame):
        binary, ones = binary.collect(), ones.collect()
    return binary, ones


@settings(max_examples=25, deadline=None)
@given(
    data=frames(),
    level=st.sampled_from([None, 1.0, 2.0]),
    users_without_truth=st.sampled_from(["exclude", "judged"]),
    by=st.sampled_from([None, "fold", "model"]),
    text_ids=st.booleans(),
    lazy=st.booleans(),
)
def test_semi_join_matches_the_inner_join(
    data: tuple[pl.DataFrame, pl.DataFrame],
    level: float | None,
    users_without_truth: str,
    by: str | None,
    text_ids: bool,
    lazy: bool,
) -> None:
    recs, truth = data
    if by == "model":
        # a group only the recs have: the truth is shared by both models
        recs = pl.concat([recs.with_columns(model=pl.lit(m)) for m in ("a", "b")])
        truth = truth.filter(pl.col("fold") == 0).drop("fold")
        recs = recs.filter(pl.col("fold") == 0).drop("fold")
    elif by is None:
        recs = recs.filter(pl.col("fold") == 0).drop("fold")
        truth = truth.filter(pl.col("fold") == 0).drop("fold")
    recs = recs.drop("score")
    if text_ids:
        recs = recs.with_columns(pl.col("user", "item").cast(pl.String))
        truth = truth.with_columns(pl.col("user", "item").cast(pl.String))
    binary, ones = both_sides(
        recs.lazy() if lazy else recs,
        truth.lazy() if lazy else truth,
        METRICS,
        by=by,
        relevance_level=level,
        users_without_truth=users_without_truth,
    )
    assert_frame_equal(binary, ones)


@settings(max_examples=12, deadline=None)
@given(data=frames(), level=st.sampled_from([None, 2.0]))
def test_semi_join_matches_with_scores_and_tie_averages(
    data: tuple[pl.DataFrame, pl.DataFrame], level: float | None
) -> None:
    recs, truth = data
    recs = recs.filter(pl.col("fold") == 0).drop("fold", "rank")
    truth = truth.filter(pl.col("fold") == 0).drop("fold")
    for ties in ("item_desc", "average"):
        binary, ones = both_sides(
            recs, truth, TIE_METRICS, score="score", ties=ties, relevance_level=level
        )
        assert_frame_equal(binary, ones)


def test_semi_join_keeps_the_best_position_of_a_repeat() -> None:
    # duplicates="first" with given ranks: relevant item 2 at ranks 3 and 1 counts at 1
    recs = pl.DataFrame({"user": [1, 1, 1], "item": [5, 9, 2], "rank": [3, 2, 1]})
    recs = pl.concat([recs, pl.DataFrame({"user": [1], "item": [2], "rank": [3]})])
    truth = pl.DataFrame({"user": [1, 1], "item": [2, 5]})
    binary, ones = both_sides(recs, truth, ["map@3", "mrr@3"], duplicates="first")
    # item 2 at 1 (1/1) and item 5 at 3 (2/3), over min(3, 2) = 2 relevant items
    assert binary["map@3"].to_list() == pytest.approx([(1 + 2 / 3) / 2])
    assert_frame_equal(binary, ones)


@pytest.mark.parametrize("lazy", [False, True])
def test_semi_join_still_refuses_repeats(lazy: bool) -> None:
    recs = pl.DataFrame({"user": [1, 1], "item": [2, 3], "rank": [1, 2]})
    truth = pl.DataFrame({"user": [1, 1], "item": [2, 2]})

    def run(recs: pl.DataFrame, truth: pl.DataFrame) -> pl.DataFrame:
        got = prm.evaluate(recs.lazy() if lazy else recs, truth.lazy() if lazy else truth, "map@2")
        return got.collect() if isinstance(got, pl.LazyFrame) else got

    # a truth row twice: the semi join finds its hit once, the truth's check refuses it
    with pytest.raises(ValueError, match=r"truth has 2 rows with a duplicated \(user, item\)"):
        run(recs, truth)
    # a relevant item recommended twice in one list
    twice = pl.DataFrame({"user": [1, 1], "item": [2, 2], "rank": [1, 2]})
    with pytest.raises(ValueError, match=r"recs has 2 rows with a duplicated \(user, item\)"):
        run(twice, truth.head(1))


@pytest.mark.parametrize(
    ("dtype", "users"),
    [
        (pl.Int64, [-(2**63), -1, 0, 2**63 - 1]),
        (pl.UInt64, [0, 1, 2**63, 2**64 - 1]),
        (pl.Int8, [-128, -1, 0, 127]),
    ],
)
@pytest.mark.parametrize("relevance", [None, "rel"])
def test_one_sort_key_orders_as_user_and_position(
    dtype: pl.DataType, users: list[int], relevance: str | None
) -> None:
    # each user's hits given in scrambled order; AP reads the hits above each one
    rows = [(u, item, rank) for u in users for item, rank in [(3, 3), (1, 1), (2, 2), (4, 4)]]
    recs = pl.DataFrame(
        rows, schema={"user": dtype, "item": pl.Int64, "rank": pl.Int64}, orient="row"
    )
    recs = recs.reverse()
    truth = pl.DataFrame(
        [(u, item, 1) for u in users for item in (1, 3, 4)],
        schema={"user": dtype, "item": pl.Int64, "rel": pl.Int64},
        orient="row",
    )
    if relevance is None:
        truth = truth.drop("rel")
    metrics = ["map@4", "ndcg@4", "mrr@4"]
    got = prm.evaluate(recs, truth, metrics, per_user=True, relevance=relevance)
    model = pl.lit("a").alias("model")
    columns = prm.evaluate(
        recs.with_columns(model), truth, metrics, per_user=True, relevance=relevance, by="model"
    ).drop("model")
    assert_frame_equal(got, columns)
    # hits at 1, 3, 4 of 3 relevant items: AP = (1/1 + 2/3 + 3/4) / 3
    assert got["map@4"].to_list() == pytest.approx([(1 + 2 / 3 + 3 / 4) / 3] * len(users))
