"""A built-in synthetic sample that looks like a small e-commerce log.

``sample_data()`` returns one :class:`Sample`: a training history with
timestamps, the held-out truth after a time split (graded 1 view, 2 cart,
3 purchase), an item catalogue with categories, users with segments, and the
top-N lists of four recommenders of visibly different quality. It is generated
in about a second with NumPy and Polars from one seed, so every machine sees
the same numbers; no file ships with the package.

How the data is made:

* **Items** have a Zipf-like popularity (weight ``rank ** -1.1``, item ids
  shuffled against the popularity order) and one or two of ``n_categories``
  categories (about one item in five has two); each also has a few latent
  taste factors.
* **Users** have a log-normal activity (a handful of events for most, hundreds
  for a few), a favourite mix of categories (Dirichlet), latent taste factors
  and a sign-up date: late sign-ups have little or no history at the split.
* **Events**: each user interacts with distinct items drawn without
  replacement (Gumbel-top-k) with probability proportional to popularity x
  category affinity x taste match, at times spread uniformly between sign-up
  and the end of the log. The deeper the match, the likelier a cart or a
  purchase. Events before ``split_time`` are the training history; the events
  after it are the truth.
* **Recommenders** score every item the user has no history with and keep the
  top ``n_recs``:

  - ``popularity``: events per item in the four weeks before the split (many
    ties);
  - ``item_knn``: item-item cosine co-occurrence over the history (users
    without history get the popular items);
  - ``two_tower``: the generator's own tastes seen through noise, as a
    well-fitted factor model would learn them (the strongest);
  - ``random``: uniform scores rounded to two decimals (ties).

On the default sample the order on ``map@10``, ``ndcg@10`` and ``recall@20``
is ``two_tower`` > ``item_knn`` > ``popularity`` > ``random`` over all users;
for the ``new`` segment (0-2 history items) ``popularity`` beats ``item_knn``,
which has little to go on. ``tests/test_sample.py`` checks both.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

if TYPE_CHECKING:
    import numpy as np

__all__ = ["Sample", "sample_data"]

_START = dt.datetime(2024, 1, 1)
_DAYS = 91  # the log covers January to March 2024
_SPLIT_DAY = 77  # the last two weeks are held out
_CATEGORIES = (
    "books", "music", "film", "games", "toys", "garden", "kitchen", "sports",
    "beauty", "fashion", "electronics", "pets", "office", "travel", "baby", "food",
)  # fmt: skip
_EVENTS = ("view", "cart", "purchase")
_N_FACTORS = 8


@dataclass(frozen=True)
class Sample:
    """The frames of the built-in sample (see :func:`sample_data`).

    Attributes
    ----------
    recs
        ``model`` (String), ``user`` (Int64), ``item`` (Int64), ``score``
        (Float64): each model's top ``n_recs`` for every user, best first;
        ties in ``score`` are left for the ``ties`` rule to break.
    truth
        ``user``, ``item``, ``rel`` (Int64: 1 view, 2 cart, 3 purchase): what
        each user did after ``split_time``, the deepest event per item. Users
        with no event after the split have no row.
    interactions
        ``user``, ``item``, ``timestamp`` (Datetime), ``event`` (String:
        ``"view"``, ``"cart"`` or ``"purchase"``): the training history before
        ``split_time``, one row per (user, item), sorted by user and time.
    items
        ``item``, ``categories`` (List[String], one or two), ``popularity``
        (UInt32: events in the training history).
    users
        ``user``, ``signup`` (Datetime), ``n_history`` (UInt32: items in the
        training history), ``segment`` (String: ``"new"`` for 0-2 history
        items, ``"casual"`` for 3-19, ``"active"`` for 20 or more).
    split_time
        The time split: ``interactions`` are before it, ``truth`` after.
    """

    recs: pl.DataFrame
    truth: pl.DataFrame
    interactions: pl.DataFrame
    items: pl.DataFrame
    users: pl.DataFrame
    split_time: dt.datetime


def _top_n(scores: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Column indices and scores of each row's ``n`` largest, ties by item id descending."""
    import numpy as np  # noqa: PLC0415 (imported on use: `import polars_rankmetrics` stays light)

    # the package's default tie rule (item id descending) also decides who makes the cut at n:
    # take every column tied with the n-th largest, then sort those few by (score, id) descending
    n_cols = scores.shape[1]
    threshold = -np.partition(-scores, n - 1, axis=1)[:, n - 1 : n]
    width = min(n_cols, int((scores >= threshold).sum(axis=1).max()))
    candidates = np.argpartition(-scores, width - 1, axis=1)[:, :width]
    values = np.take_along_axis(scores, candidates, axis=1)
    order = np.lexsort((-candidates, -values), axis=1)[:, :n]
    columns = np.take_along_axis(candidates, order, axis=1)
    return columns, np.take_along_axis(scores, columns, axis=1)


def _long_recs(model: str, columns: np.ndarray, scores: np.ndarray) -> pl.DataFrame:
    import numpy as np  # noqa: PLC0415

    n_users, n = columns.shape
    return pl.DataFrame(
        {
            "model": np.full(n_users * n, model),
            "user": np.repeat(np.arange(n_users, dtype=np.int64), n),
            "item": columns.reshape(-1).astype(np.int64),
            "score": scores.reshape(-1).astype(np.float64),
        }
    ).filter(pl.col("score").is_finite())


def _recommend(
    seen: np.ndarray,
    log_popularity: np.ndarray,
    affinity: np.ndarray,
    taste: np.ndarray,
    recent: np.ndarray,
    *,
    rng: np.random.Generator,
    n_recs: int,
) -> pl.DataFrame:
    """The four models' top ``n_recs`` among the items each user has not seen."""
    import numpy as np  # noqa: PLC0415

    counts = seen.sum(axis=0).astype(np.float64)
    unseen = np.where(seen, -np.inf, 0.0)
    # item-item cosine over the history; cold users fall back to popularity
    seen_float = seen.astype(np.float32)
    norms = np.sqrt(counts).astype(np.float32) + 1e-6
    cooccurrence = (seen_float.T @ seen_float) / norms[:, None] / norms[None, :]
    np.fill_diagonal(cooccurrence, 0.0)
    knn = (seen_float @ cooccurrence).astype(np.float64)
    knn = np.round(knn + 1e-4 * counts[None, :] / max(counts.max(), 1.0), 4)
    # a factor model that learned the generator's tastes through noise
    two_tower = (
        0.7 * log_popularity[None, :] + affinity + 0.8 * (taste + rng.normal(0.0, 0.6, taste.shape))
    )
    scores = {
        "popularity": np.broadcast_to(recent, unseen.shape),
        "item_knn": knn,
        "two_tower": np.round(two_tower, 3),
        "random": np.round(rng.random(unseen.shape), 2),
    }
    return pl.concat(
        [_long_recs(name, *_top_n(score + unseen, n_recs)) for name, score in scores.items()]
    )


def _items_and_users(
    primary: np.ndarray,
    secondary: np.ndarray,
    counts: np.ndarray,
    signup_day: np.ndarray,
    n_history: np.ndarray,
) -> tuple[pl.DataFrame, pl.DataFrame]:
    import numpy as np  # noqa: PLC0415

    n_items, n_users = primary.size, signup_day.size
    items = pl.DataFrame(
        {
            "item": np.arange(n_items, dtype=np.int64),
            "primary": np.asarray(_CATEGORIES)[primary],
            "secondary": np.asarray(_CATEGORIES)[secondary],
            "popularity": counts.astype(np.uint32),
        }
    ).select(
        "item",
        categories=pl.concat_list("primary", "secondary").list.unique(maintain_order=True),
        popularity="popularity",
    )
    users = pl.DataFrame(
        {
            "user": np.arange(n_users, dtype=np.int64),
            "signup_day": signup_day,
            "n_history": n_history.astype(np.uint32),
        }
    ).select(
        "user",
        signup=pl.lit(_START) + pl.duration(seconds=(pl.col("signup_day") * 86_400).round()),
        n_history="n_history",
        segment=pl.when(pl.col("n_history") <= 2)
        .then(pl.lit("new"))
        .when(pl.col("n_history") < 20)
        .then(pl.lit("casual"))
        .otherwise(pl.lit("active")),
    )
    return items, users


def sample_data(
    n_users: int = 2_000,
    n_items: int = 1_000,
    *,
    n_categories: int = 12,
    n_recs: int = 20,
    seed: int = 0,
) -> Sample:
    """Generate the built-in sample: a history, the truth after a time split, four models.

    Parameters
    ----------
    n_users, n_items
        Size of the sample; the default generates in about a second.
    n_categories
        Number of item categories (at most 16).
    n_recs
        Length of each model's list per user.
    seed
        The same seed gives the same frames.

    Returns
    -------
    Sample
        A frozen dataclass with the frames ``recs``, ``truth``,
        ``interactions``, ``items``, ``users`` and ``split_time``; the
        attributes of :class:`Sample` list their columns.

    Notes
    -----
    With the defaults: 2,000 users (about 250 new, 1,300 casual, 450 active),
    1,000 items, about 28,000 history events, 11,700 truth rows for about
    1,800 users, and 160,000 recommendation rows. The models'
    order (``two_tower`` > ``item_knn`` > ``popularity`` > ``random`` on MAP,
    NDCG and recall) is tested; see the module docstring for how each is made.

    Examples
    --------
    >>> import polars_rankmetrics as prm
    >>> sample = prm.sample_data(n_users=300, n_items=200)
    >>> sample.recs.columns, sample.truth.columns
    (['model', 'user', 'item', 'score'], ['user', 'item', 'rel'])
    >>> prm.evaluate(
    ...     sample.recs, sample.truth, ["ndcg@10"], score="score", relevance="rel", by="model"
    ... ).sort("ndcg@10", descending=True)["model"].to_list()
    ['two_tower', 'item_knn', 'popularity', 'random']
    """
    if n_users < 1 or n_items < n_recs or n_recs < 1:
        raise ValueError(
            f"sample_data needs n_users >= 1 and n_items >= n_recs >= 1; got n_users={n_users}, "
            f"n_items={n_items}, n_recs={n_recs} (e.g. sample_data(n_users=500, n_items=300))"
        )
    if not 1 <= n_categories <= len(_CATEGORIES):
        raise ValueError(
            f"n_categories must be between 1 and {len(_CATEGORIES)}; got {n_categories}"
        )
    import numpy as np  # noqa: PLC0415

    rng = np.random.default_rng(seed)

    # items: Zipf-like popularity over a shuffled id order, one or two categories, tastes
    popularity_order = rng.permutation(n_items)
    log_popularity = np.empty(n_items)
    log_popularity[popularity_order] = -1.1 * np.log(np.arange(1, n_items + 1))
    primary = rng.integers(0, n_categories, n_items)
    secondary = np.where(rng.random(n_items) < 0.2, rng.integers(0, n_categories, n_items), primary)
    item_in_category = np.zeros((n_items, n_categories))
    item_in_category[np.arange(n_items), primary] = 1.0
    item_in_category[np.arange(n_items), secondary] = 1.0
    item_factors = rng.normal(0.0, 1.0, (n_items, _N_FACTORS))

    # users: log-normal activity, a favourite mix of categories, tastes, a sign-up day
    n_events = np.clip(np.rint(np.exp(rng.normal(2.6, 0.9, n_users))), 1, n_items // 2)
    category_taste = rng.dirichlet(np.full(n_categories, 0.3), n_users)
    user_factors = rng.normal(0.0, 1.0, (n_users, _N_FACTORS))
    # most users signed up early; a fifth signed up in the last month (little history)
    signup_day = np.where(
        rng.random(n_users) < 0.8, rng.uniform(0, 45, n_users), rng.uniform(45, _DAYS, n_users)
    )

    # what each user likes: popularity x category affinity x taste match (log scale)
    affinity = np.log(category_taste @ item_in_category.T + 1e-3)
    taste = user_factors @ item_factors.T / np.sqrt(_N_FACTORS)
    utility = log_popularity[None, :] + 1.3 * affinity + 0.8 * taste

    # Gumbel-top-k: each user's distinct items, drawn without replacement by utility
    drawn = utility + rng.gumbel(size=utility.shape)
    max_events = int(n_events.max())
    chosen, _ = _top_n(drawn, max_events)
    keep = np.arange(max_events)[None, :] < n_events[:, None]
    users_of = np.broadcast_to(np.arange(n_users)[:, None], chosen.shape)[keep]
    items_of = chosen[keep]
    day = signup_day[users_of] + rng.random(users_of.size) * (_DAYS - signup_day[users_of])
    # deeper events for better matches: P(cart or purchase) rises with the taste match
    match = taste[users_of, items_of] + affinity[users_of, items_of] / 4
    depth = 1 / (1 + np.exp(-(match - 1.0) * 1.5))
    level = 1 + (rng.random(users_of.size) < depth) + (rng.random(users_of.size) < depth / 3)

    events = pl.DataFrame(
        {
            "user": users_of.astype(np.int64),
            "item": items_of.astype(np.int64),
            "day": day,
            "rel": level.astype(np.int64),
        }
    )
    split_time = _START + dt.timedelta(days=_SPLIT_DAY)
    history = events.filter(pl.col("day") < _SPLIT_DAY)
    truth = events.filter(pl.col("day") >= _SPLIT_DAY).select("user", "item", "rel")
    interactions = history.sort("user", "day").select(
        "user",
        "item",
        timestamp=(pl.lit(_START) + pl.duration(seconds=(pl.col("day") * 86_400).round())),
        event=pl.col("rel").replace_strict(
            {i + 1: name for i, name in enumerate(_EVENTS)}, return_dtype=pl.String
        ),
    )

    seen = np.zeros((n_users, n_items), dtype=bool)
    seen[history["user"].to_numpy(), history["item"].to_numpy()] = True
    counts = seen.sum(axis=0).astype(np.float64)
    # the popularity model counts the last four weeks only (trending items; small counts tie)
    recent_items = history.filter(pl.col("day") >= _SPLIT_DAY - 28)["item"].to_numpy()
    recent = np.bincount(recent_items, minlength=n_items).astype(np.float64)
    n_history = seen.sum(axis=1)

    recs = _recommend(seen, log_popularity, affinity, taste, recent, rng=rng, n_recs=n_recs)
    items, users = _items_and_users(primary, secondary, counts, signup_day, n_history)
    return Sample(
        recs=recs,
        truth=truth.sort("user", "item"),
        interactions=interactions,
        items=items,
        users=users,
        split_time=split_time,
    )
