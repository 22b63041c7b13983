"""A built-in synthetic sample: one interaction log and several recommenders of different quality.

Pure Polars and deterministic (pseudo-random numbers come from hashing), so the
demo needs nothing beyond the package and gives the same numbers everywhere.

How the data is made:

* items have a Zipf-like popularity and one of a few genres; each user has a
  favourite genre;
* each user's interactions are drawn without replacement with probability
  proportional to popularity x genre affinity (the Gumbel-top-k trick); the
  last fifth of them (by a pseudo time) is the held-out truth, graded 1-3
  (view, cart, purchase);
* recommenders score every item the user did not interact with in training
  and keep their top ``n_recs``: ``affinity`` (the generator's own affinity
  plus noise: the best), ``genre_popularity``, ``popularity`` and ``random``.
"""

from __future__ import annotations

import polars as pl

__all__ = ["sample_data"]

_MAX_HASH = float(2**64)


def _uniform(*columns: pl.Expr | str, seed: int) -> pl.Expr:
    """A deterministic pseudo-uniform number in (0, 1) per row, from hashing ``columns``."""
    hashed = pl.struct(*columns).hash(seed=seed).cast(pl.Float64)
    return (hashed + 0.5) / _MAX_HASH


def _gumbel(*columns: pl.Expr | str, seed: int) -> pl.Expr:
    return -(-_uniform(*columns, seed=seed).log()).log()


def sample_data(
    n_users: int = 2_000,
    n_items: int = 500,
    *,
    n_genres: int = 8,
    interactions_per_user: int = 25,
    n_recs: int = 20,
    seed: int = 0,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Generate recommendations of four models and the held-out truth.

    Returns
    -------
    recs
        Columns ``model``, ``user``, ``item``, ``score``: the top ``n_recs``
        of each model for every user.
    truth
        Columns ``user``, ``item``, ``rel`` (1 view, 2 cart, 3 purchase).

    Examples
    --------
    >>> from polars_rankmetrics.sample import sample_data
    >>> recs, truth = sample_data(n_users=100, n_items=200)
    >>> recs.columns, truth.columns
    (['model', 'user', 'item', 'score'], ['user', 'item', 'rel'])
    >>> sorted(recs["model"].unique())
    ['affinity', 'genre_popularity', 'popularity', 'random']
    """
    users = pl.LazyFrame({"user": pl.int_range(n_users, eager=True, dtype=pl.Int64)})
    users = users.with_columns(favourite=pl.col("user").hash(seed=seed) % n_genres)
    items = pl.LazyFrame({"item": pl.int_range(n_items, eager=True, dtype=pl.Int64)})
    items = items.with_columns(
        genre=pl.col("item").hash(seed=seed + 1) % n_genres,
        # Zipf-like popularity: log weight of the item at popularity rank r is -0.9 log r
        log_popularity=-0.9 * (pl.col("item") + 1).cast(pl.Float64).log(),
    )
    pairs = users.join(items, how="cross").with_columns(
        affinity=pl.col("log_popularity")
        + pl.when(pl.col("genre") == pl.col("favourite")).then(2.5).otherwise(0.0)
    )
    draw = pl.col("affinity") + _gumbel("user", "item", seed=seed + 2)
    log = pairs.filter(
        draw.rank("ordinal", descending=True).over("user") <= interactions_per_user
    ).with_columns(
        time=_uniform("user", "item", seed=seed + 3),
    )
    held_out = pl.col("time").rank("ordinal", descending=True).over("user")
    n_test = max(1, interactions_per_user // 5)
    log = log.with_columns(is_test=held_out <= n_test)
    train = log.filter(~pl.col("is_test"))
    grade = _uniform("user", "item", seed=seed + 4)
    truth = log.filter(pl.col("is_test")).select(
        "user",
        "item",
        rel=pl.when(grade < 0.6).then(1).when(grade < 0.9).then(2).otherwise(3).cast(pl.Int64),
    )

    item_counts = train.group_by("item").agg(popularity=pl.len().cast(pl.Float64))
    user_genre = (
        train.group_by("user", "genre")
        .agg(n=pl.len())
        .sort("user", "n", "genre", descending=[False, True, False])
        .group_by("user", maintain_order=True)
        .agg(top_genre=pl.col("genre").first())
    )
    candidates = (
        pairs.join(train.select("user", "item"), on=["user", "item"], how="anti")
        .join(item_counts, on="item", how="left")
        .join(user_genre, on="user", how="left")
        .with_columns(pl.col("popularity").fill_null(0.0))
    )
    noise = _uniform("user", "item", seed=seed + 5)
    scores = {
        "affinity": pl.col("affinity") + 0.5 * _gumbel("user", "item", seed=seed + 6),
        "genre_popularity": pl.col("popularity")
        * pl.when(pl.col("genre") == pl.col("top_genre")).then(4.0).otherwise(1.0)
        + noise,
        "popularity": pl.col("popularity") + noise,
        "random": noise,
    }
    recs = pl.concat(
        [
            candidates.select(
                pl.lit(name).alias("model"), "user", "item", score.alias("score")
            ).filter(pl.col("score").rank("ordinal", descending=True).over("user") <= n_recs)
            for name, score in scores.items()
        ]
    )
    return (
        recs.sort("model", "user", "score", descending=[False, False, True]).collect(),
        truth.sort("user", "item").collect(),
    )
