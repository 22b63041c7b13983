"""A built-in synthetic sample that looks like a small e-commerce log.

``sample_data()`` returns one :class:`Sample`: a training history with
timestamps, the held-out truth after a time split (graded 1 view, 2 cart,
3 purchase), an item catalogue with categories, users with segments, and the
top-N lists of four recommenders of visibly different quality. It is generated
in about a second with NumPy and Polars from one seed, so every machine sees
the same numbers; no file ships with the package. The users x items matrices
are made a chunk of users at a time, so memory grows with the rows returned
(about 4 KB a user with 1,000 items); the chunks consume the random stream
in the order one draw for every user would, so they change no number.

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
which has little to go on. ``tests/formats/test_sample.py`` checks both.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

from polars_rankmetrics._progress import Steps, stage

if TYPE_CHECKING:
    from collections.abc import Callable

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


_MODELS = ("popularity", "item_knn", "two_tower", "random")
_CHUNK_CELLS = 2_000_000
"""Users x items scored at once: a chunk of users is generated, then only its rows are kept.

The default sample (2,000 users x 1,000 items) is one chunk. Each chunk's
matrices take about 10 x 8 bytes x ``_CHUNK_CELLS`` (160 MB), whatever the
number of users; the frames returned grow with their rows alone.
"""


class _Lists:
    """One model's top-n lists, filled a chunk of users at a time into arrays of the full size."""

    def __init__(self, n_users: int, n: int) -> None:
        import numpy as np  # noqa: PLC0415

        self.n = n
        self.item = np.empty(n_users * n, dtype=np.int64)
        self.score = np.empty(n_users * n, dtype=np.float64)

    def put(self, first_user: int, scores: np.ndarray) -> None:
        columns, values = _top_n(scores, self.n)
        rows = slice(first_user * self.n, first_user * self.n + columns.size)
        self.item[rows] = columns.reshape(-1)
        self.score[rows] = values.reshape(-1)

    def frame(self, model: str) -> pl.DataFrame:
        import numpy as np  # noqa: PLC0415

        n_rows = self.item.size
        frame = pl.DataFrame(
            {
                "model": pl.repeat(model, n_rows, dtype=pl.String, eager=True),
                "user": np.repeat(np.arange(n_rows // self.n, dtype=np.int64), self.n),
                "item": self.item,
                "score": self.score,
            }
        )
        # a user who has seen nearly every item gets fewer than n unseen ones
        return frame if np.isfinite(self.score).all() else frame.filter(pl.col("score").is_finite())


@dataclass(frozen=True)
class _World:
    """The items' and users' traits, from which the users x items matrices come a chunk at a time.

    Each random draw over users x items takes its chunks in user order, so the
    stream is consumed as by one draw for every user: the numbers do not
    depend on the chunks.
    """

    log_popularity: np.ndarray
    item_in_category: np.ndarray
    item_factors: np.ndarray
    category_taste: np.ndarray
    user_factors: np.ndarray
    chunks: list[tuple[int, int]]

    def likes(self, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
        """Category affinity and taste match of users ``lo..hi`` for every item (log scale)."""
        import numpy as np  # noqa: PLC0415

        affinity = np.log(self.category_taste[lo:hi] @ self.item_in_category.T + 1e-3)
        taste = self.user_factors[lo:hi] @ self.item_factors.T / np.sqrt(_N_FACTORS)
        return affinity, taste


def _events(
    world: _World,
    n_events: np.ndarray,
    signup_day: np.ndarray,
    rng: np.random.Generator,
    tick: Callable[[int], None],
) -> pl.DataFrame:
    """Each user's distinct items (Gumbel-top-k by utility), with their day and depth."""
    import numpy as np  # noqa: PLC0415

    max_events = int(n_events.max())
    picked: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    for lo, hi in world.chunks:
        # utility: popularity x category affinity x taste match (log scale)
        affinity, taste = world.likes(lo, hi)
        utility = world.log_popularity[None, :] + 1.3 * affinity + 0.8 * taste
        drawn = utility + rng.gumbel(size=utility.shape)
        del utility
        chosen, _ = _top_n(drawn, max_events)
        del drawn
        keep = np.arange(max_events)[None, :] < n_events[lo:hi, None]
        rows = np.broadcast_to(np.arange(hi - lo)[:, None], chosen.shape)[keep]
        columns = chosen[keep]
        match = taste[rows, columns] + affinity[rows, columns] / 4
        picked.append((rows + lo, columns, match))
        tick(hi)
    users_of, items_of, match = (np.concatenate(part) for part in zip(*picked, strict=True))
    del picked
    day = signup_day[users_of] + rng.random(users_of.size) * (_DAYS - signup_day[users_of])
    # deeper events for better matches: P(cart or purchase) rises with the taste match
    depth = 1 / (1 + np.exp(-(match - 1.0) * 1.5))
    del match
    level = 1 + (rng.random(users_of.size) < depth) + (rng.random(users_of.size) < depth / 3)
    return pl.DataFrame(
        {
            "user": users_of.astype(np.int64),
            "item": items_of.astype(np.int64),
            "day": day,
            "rel": level.astype(np.int64),
        }
    )


def _recommend(
    world: _World,
    history: pl.DataFrame,
    n_recs: int,
    rng: np.random.Generator,
    tick: Callable[[int], None],
) -> tuple[pl.DataFrame, np.ndarray, np.ndarray]:
    """The four models' top ``n_recs`` among the items each user has not seen.

    Also each item's and each user's number of history events.
    """
    import numpy as np  # noqa: PLC0415

    n_users, n_items = world.category_taste.shape[0], world.log_popularity.size
    # the history in user order (events are drawn user by user): a chunk's rows are a slice
    seen_user = history["user"].to_numpy()
    seen_item = history["item"].to_numpy()
    bounds = np.searchsorted(seen_user, [lo for lo, _ in world.chunks] + [n_users])

    def seen_of(index: int) -> np.ndarray:
        """Which items each user of chunk ``index`` has in the history (users x items)."""
        lo, hi = world.chunks[index]
        rows = slice(bounds[index], bounds[index + 1])
        seen = np.zeros((hi - lo, n_items), dtype=bool)
        seen[seen_user[rows] - lo, seen_item[rows]] = True
        return seen

    counts = np.bincount(seen_item, minlength=n_items).astype(np.float64)
    n_history = np.bincount(seen_user, minlength=n_users)
    # the popularity model counts the last four weeks only (trending items; small counts tie)
    recent_items = history.filter(pl.col("day") >= _SPLIT_DAY - 28)["item"].to_numpy()
    recent = np.bincount(recent_items, minlength=n_items).astype(np.float64)

    # item-item cosine over the history; cold users fall back to popularity (co-occurrence
    # counts are whole numbers: exact in float32 whatever the chunks)
    cooccurrence = np.zeros((n_items, n_items), dtype=np.float32)
    for index in range(len(world.chunks)):
        seen_float = seen_of(index).astype(np.float32)
        cooccurrence += seen_float.T @ seen_float
        tick(world.chunks[index][1])
    norms = np.sqrt(counts).astype(np.float32) + 1e-6
    cooccurrence = cooccurrence / norms[:, None] / norms[None, :]
    np.fill_diagonal(cooccurrence, 0.0)

    lists = {model: _Lists(n_users, n_recs) for model in _MODELS}
    for index, (lo, hi) in enumerate(world.chunks):
        seen = seen_of(index)
        unseen = np.where(seen, -np.inf, 0.0)
        lists["popularity"].put(lo, recent[None, :] + unseen)
        knn = (seen.astype(np.float32) @ cooccurrence).astype(np.float64)
        knn = np.round(knn + 1e-4 * counts[None, :] / max(counts.max(), 1.0), 4)
        lists["item_knn"].put(lo, knn + unseen)
        # a factor model that learned the generator's tastes through noise
        affinity, taste = world.likes(lo, hi)
        noise = rng.normal(0.0, 0.6, taste.shape)
        two_tower = 0.7 * world.log_popularity[None, :] + affinity + 0.8 * (taste + noise)
        lists["two_tower"].put(lo, np.round(two_tower, 3) + unseen)
        tick(n_users + hi)
    # the random model's draws come after every user's noise above (the stream's order)
    for index, (lo, hi) in enumerate(world.chunks):
        unseen = np.where(seen_of(index), -np.inf, 0.0)
        lists["random"].put(lo, np.round(rng.random(unseen.shape), 2) + unseen)
        tick(2 * n_users + hi)
    recs = pl.concat([lists.pop(model).frame(model) for model in _MODELS])
    return recs, counts, n_history


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


def _world(
    rng: np.random.Generator, n_users: int, n_items: int, n_categories: int
) -> tuple[_World, np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """The items' and users' hidden traits, drawn from ``rng`` in a fixed order.

    Returns the world, each user's number of events and sign-up day, and each
    item's primary and secondary category.
    """
    import numpy as np  # noqa: PLC0415

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

    # the users x items matrices a chunk of users at a time: memory grows with the rows
    size = max(1, _CHUNK_CELLS // n_items)
    chunks = [(lo, min(lo + size, n_users)) for lo in range(0, n_users, size)]
    world = _World(
        log_popularity, item_in_category, item_factors, category_taste, user_factors, chunks
    )
    return world, n_events, signup_day, (primary, secondary)


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
        Size of the sample; the default generates in about a second. A
        million users take about 4 GB (the frames returned) and minutes.
    n_categories
        Number of item categories (at most 16).
    n_recs
        Length of each model's list per user.
    seed
        The same seed gives the same frames.

        Its stages, and every few seconds their progress, are logged to the
        ``polars_rankmetrics`` logger at level INFO (``rankmetrics demo
        --progress`` shows them).

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
    world, n_events, signup_day, (primary, secondary) = _world(rng, n_users, n_items, n_categories)
    # a large sample takes minutes: each part logs its progress (rankmetrics demo --progress)
    events_of = f"the sample's events of {n_users:,} users"
    with stage(events_of):
        events = _events(world, n_events, signup_day, rng, Steps(events_of, n_users))
    split_time = _START + dt.timedelta(days=_SPLIT_DAY)
    history = events.filter(pl.col("day") < _SPLIT_DAY)
    truth = events.filter(pl.col("day") >= _SPLIT_DAY).select("user", "item", "rel")
    del events
    interactions = history.sort("user", "day").select(
        "user",
        "item",
        timestamp=(pl.lit(_START) + pl.duration(seconds=(pl.col("day") * 86_400).round())),
        event=pl.col("rel").replace_strict(
            {i + 1: name for i, name in enumerate(_EVENTS)}, return_dtype=pl.String
        ),
    )
    lists_of = "the four recommenders' lists"
    with stage(lists_of):
        # three passes over the users: co-occurrences, the scored lists, the random model
        recs, counts, n_history = _recommend(
            world, history, n_recs, rng, Steps(lists_of, 3 * n_users)
        )
    del history
    items, users = _items_and_users(primary, secondary, counts, signup_day, n_history)
    return Sample(
        recs=recs,
        truth=truth.sort("user", "item"),
        interactions=interactions,
        items=items,
        users=users,
        split_time=split_time,
    )
