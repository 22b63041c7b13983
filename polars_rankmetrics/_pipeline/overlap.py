"""Whether two frames speak of the same users and items: one count, two warnings.

Ids that lost their leading zeros, were read as ``1.0`` on one side and ``1``
on the other, or come from another id space, match nothing: every score is
then a confident 0. One count serves every check here
(:func:`_column_counts`): per key column, the distinct values of each side,
how many both sides have, and the smallest unmatched value of each side,
read from the distinct keys only (cheap next to the evaluation itself).
Two readers of that count speak to two audiences:

* the API (:func:`id_overlap`, :func:`check_overlap`, and
  :func:`warn_if_disjoint`, the :class:`IdOverlapWarning` that
  :func:`polars_rankmetrics.evaluate` raises for frames in memory) compares
  ids as ``evaluate`` does (key dtypes unified) and calls it "almost no
  overlap" (:attr:`IdOverlap.suspicious`) when

  * the truth has at least :data:`MIN_IDS` (10) distinct users and fewer than
    1% of them (:data:`MIN_USER_SHARE`) have any recommendation, none at all
    included; or
  * the truth has at least 10 distinct items and none of them is recommended
    to anyone.

  Both need both frames non-empty. Below 10 distinct ids, disjoint sets
  happen by chance in small, valid examples and say little about the ids.
  Normal data, where many users simply have no hit, is far from either: their
  users are recommended something, and popular truth items are recommended
  to someone.
* files (the command line, Kaggle submissions: :func:`key_overlap`) compare
  ids as text, as the files wrote them, and warn when a key column matches
  less than 10% of its smaller side (:attr:`KeyOverlap.poor`), adding how
  many would match without leading zeros (a spreadsheet round trip).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from polars_rankmetrics import _validation as v
from polars_rankmetrics._frames import AnyFrame, read
from polars_rankmetrics._names import check_column_names

__all__ = [
    "MIN_IDS",
    "MIN_USER_SHARE",
    "SCREEN_ROWS",
    "SCREEN_USER_SHARE",
    "ColumnOverlap",
    "IdOverlap",
    "IdOverlapWarning",
    "KeyOverlap",
    "check_overlap",
    "clearly_overlapping",
    "id_overlap",
    "key_overlap",
    "warn_if_disjoint",
    "warn_if_disjoint_frames",
]

# fewer truth users than this share with a recommendation: the ids probably differ
MIN_USER_SHARE = 0.01
# fewer distinct truth ids than this (users; items) are too few to tell
MIN_IDS = 10


class IdOverlapWarning(UserWarning):
    """The recommendations and the truth share (almost) no user or item ids.

    Every score is then (nearly) 0. Turn it into an error with
    ``warnings.simplefilter("error", prm.IdOverlapWarning)``, or silence it
    with ``"ignore"``.
    """


@dataclass(frozen=True)
class IdOverlap:
    """How many distinct users and items the recommendations and the truth share.

    Attributes
    ----------
    recs_users, truth_users
        Distinct users of each frame.
    matched_users
        Truth users with at least one recommendation.
    recs_items, truth_items
        Distinct items of each frame.
    matched_items
        Truth items recommended to at least one user.
    truth_user_example, recs_user_example, truth_item_example, recs_item_example
        The smallest id of each side that the other side lacks (``None`` when
        every id matches).
    """

    recs_users: int
    truth_users: int
    matched_users: int
    recs_items: int
    truth_items: int
    matched_items: int
    truth_user_example: Any = None
    recs_user_example: Any = None
    truth_item_example: Any = None
    recs_item_example: Any = None

    @property
    def suspicious(self) -> bool:
        """Almost no overlap: < 1% of truth users recommended anything, or no truth item.

        Each rule counts only with at least ``MIN_IDS`` distinct truth ids of its kind.
        """
        if not (self.recs_users and self.truth_users):
            return False
        few_users = (
            self.truth_users >= MIN_IDS and self.matched_users < MIN_USER_SHARE * self.truth_users
        )
        no_items = self.truth_items >= MIN_IDS and self.matched_items == 0
        return few_users or no_items

    @property
    def message(self) -> str:
        """The counts and one unmatched id of each side, in words."""
        share = self.matched_users / self.truth_users if self.truth_users else 0.0
        examples = [
            f"{side} {role} {v.shorten(example)}"
            for side, role, example in (
                ("truth", "user", self.truth_user_example),
                ("recs", "user", self.recs_user_example),
                ("truth", "item", self.truth_item_example),
                ("recs", "item", self.recs_item_example),
            )
            if example is not None
        ]
        unmatched = f"; unmatched ids, e.g. {', '.join(examples)}" if examples else ""
        return (
            f"{self.matched_users} of {self.truth_users} truth users ({share:.1%}) have a "
            f"recommendation ({self.recs_users} recs users), and {self.matched_items} of "
            f"{self.truth_items} truth items are recommended ({self.recs_items} recs items)"
            f"{unmatched}"
        )


@dataclass(frozen=True)
class ColumnOverlap:
    """Distinct values of one key column on each side and how many both sides have."""

    column: str
    n_left: int
    n_right: int
    n_matched: int
    left_only_example: Any
    right_only_example: Any
    n_matched_without_leading_zeros: int

    @property
    def share(self) -> float:
        """Matched values over the smaller side's distinct values (1.0 when a side is empty)."""
        smaller = min(self.n_left, self.n_right)
        return self.n_matched / smaller if smaller else 1.0


def _distinct(frame: pl.LazyFrame, column: str) -> pl.LazyFrame:
    return frame.select(pl.col(column).drop_nulls().unique()).cache()


def _strip_zeros(keys: pl.LazyFrame, column: str) -> pl.LazyFrame:
    stripped = pl.col(column).str.strip_chars_start("0")
    return keys.select(pl.when(stripped == "").then(pl.lit("0")).otherwise(stripped).alias(column))


def _column_overlaps(
    left: pl.LazyFrame, right: pl.LazyFrame, columns: Sequence[str], *, leading_zeros: bool = False
) -> list[ColumnOverlap]:
    """Count the overlap of every column of ``columns``, in one query.

    Per column: the distinct ids of each side, how many both have, and the
    smallest id of each side the other lacks (the smallest: ``unique()`` has
    no order); with ``leading_zeros`` (String columns), also how many match
    once leading zeros are stripped.
    """
    queries = []
    for column in columns:
        ours, theirs = _distinct(left, column), _distinct(right, column)
        matched = loose = ours.join(theirs, on=column, how="semi")
        if leading_zeros:
            stripped = _strip_zeros(ours, column).unique()
            loose = stripped.join(_strip_zeros(theirs, column).unique(), on=column, how="semi")
        queries.append([
            ours.select(pl.len()),
            theirs.select(pl.len()),
            matched.select(pl.len()),
            ours.join(theirs, on=column, how="anti").select(pl.col(column).min()),
            theirs.join(ours, on=column, how="anti").select(pl.col(column).min()),
            loose.select(pl.len()),
        ])  # fmt: skip
    values = iter(frame.item() for frame in pl.collect_all([q for qs in queries for q in qs]))
    return [ColumnOverlap(column, *(next(values) for _ in range(6))) for column in columns]


def id_overlap(recs: pl.LazyFrame, truth: pl.LazyFrame, *, user: str, item: str) -> IdOverlap:
    """Count the shared users and items of two frames whose key dtypes are unified.

    Reads only the distinct users and items of each side (one query: four
    distinct-value scans, then joins of those small sets).
    """
    users, items = _column_overlaps(recs, truth, [user, item])
    return IdOverlap(
        recs_users=users.n_left,
        truth_users=users.n_right,
        matched_users=users.n_matched,
        recs_items=items.n_left,
        truth_items=items.n_right,
        matched_items=items.n_matched,
        truth_user_example=users.right_only_example,
        recs_user_example=users.left_only_example,
        truth_item_example=items.right_only_example,
        recs_item_example=items.left_only_example,
    )


# the truth rows the screen looks at, at most
SCREEN_ROWS = 20_000
# a sampled share of truth users with recommendations this high settles "not suspicious"
SCREEN_USER_SHARE = 2 * MIN_USER_SHARE


def clearly_overlapping(recs: pl.LazyFrame, truth: pl.LazyFrame, *, user: str, item: str) -> bool:
    """A cheap screen: ``True`` when the frames certainly share enough ids.

    It takes every n-th truth row (about ``SCREEN_ROWS`` of them, all of a
    small truth), and looks up their distinct users and items in the
    recommendations: one probe of two recs columns against a small set,
    instead of the distinct values of every column. ``True`` when at least
    2% of the sampled users have a recommendation and some sampled item is
    recommended; then the exact rule (< 1%, no item) cannot plausibly hold.
    ``False`` says nothing: :func:`id_overlap` then decides exactly.
    """
    rows = truth.select(pl.len()).collect().item()
    if not rows:
        return True
    step = max(1, rows // SCREEN_ROWS)
    sample = truth.select(pl.col(user, item).gather_every(step)).collect()
    users = sample.get_column(user).drop_nulls().unique()
    items = sample.get_column(item).drop_nulls().unique()
    probe = recs.select(
        pl.col(user).filter(pl.col(user).is_in(users.implode())).n_unique().alias("users"),
        pl.col(item).is_in(items.implode()).any().alias("items"),
    ).collect()
    matched_users, any_item = probe.row(0)
    return bool(any_item) and matched_users >= SCREEN_USER_SHARE * users.len()


def warn_if_disjoint(
    recs: pl.LazyFrame, truth: pl.LazyFrame, *, user: str, item: str, stacklevel: int = 3
) -> IdOverlap | None:
    """Warn with :class:`IdOverlapWarning` when the two frames share almost no ids.

    Returns the exact counts when the screen (:func:`clearly_overlapping`)
    did not settle it, else ``None``.
    """
    if clearly_overlapping(recs, truth, user=user, item=item):
        return None
    overlap = id_overlap(recs, truth, user=user, item=item)
    if overlap.suspicious:
        warnings.warn(
            "recs and truth share almost no ids, so the scores are (nearly) all 0: "
            f"{overlap.message}. Are the ids of the same kind on both sides (leading "
            "zeros, an id mapping)? See prm.check_overlap(recs, truth).",
            IdOverlapWarning,
            stacklevel=stacklevel,
        )
    return overlap


def warn_if_disjoint_frames(
    recs: pl.DataFrame, truth: pl.DataFrame, *, user: str, item: str
) -> IdOverlap | None:
    """:func:`warn_if_disjoint` on two frames as given (ids compared as ``evaluate`` does)."""
    recs_lf, truth_lf = recs.lazy(), truth.lazy()
    recs_lf, truth_lf, _, _ = v.unify_key_dtypes(
        recs_lf,
        truth_lf,
        [user, item],
        recs_schema=recs.schema,
        truth_schema=truth.schema,
    )
    # the user's frame of the caller of ``evaluate`` is two frames up from here
    return warn_if_disjoint(recs_lf, truth_lf, user=user, item=item, stacklevel=4)


def check_overlap(
    recs: AnyFrame,
    truth: AnyFrame,
    *,
    user: str = "user",
    item: str = "item",
) -> IdOverlap:
    """How many users and items the recommendations and the truth share.

    Ids that do not match (leading zeros lost, another id space) make every
    score silently 0. :func:`polars_rankmetrics.evaluate` warns
    (:class:`IdOverlapWarning`) when frames in memory share almost no ids;
    it does not run a lazy query early to find out, so call this for
    LazyFrames. It reads the distinct users and items of each side only.

    Parameters
    ----------
    recs, truth
        Polars DataFrames or LazyFrames, pandas DataFrames, pyarrow Tables or
        any objects with ``__arrow_c_stream__`` (a DuckDB relation...).
    user, item
        Column roles, as in :func:`polars_rankmetrics.evaluate`.

    Returns
    -------
    IdOverlap
        The counts, an unmatched id of each side, ``suspicious`` (almost no
        overlap) and ``message``.

    Notes
    -----
    Ids compare as in ``evaluate`` (integers by value across widths, String,
    Categorical and Enum by their text). "Almost no overlap" means fewer
    than 1% of the truth's users have any recommendation, or no truth item
    is recommended to anyone; each rule applies once the truth has at least
    10 distinct ids of its kind (fewer say little), both frames non-empty.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankmetrics as prm
    >>> ids = [str(n) for n in range(1, 13)]
    >>> recs = pl.DataFrame({"user": ids, "item": ids, "rank": 1})
    >>> truth = pl.DataFrame({"user": [f"{n:0>3}" for n in ids], "item": ids})
    >>> overlap = prm.check_overlap(recs, truth)
    >>> overlap.matched_users, overlap.matched_items, overlap.suspicious
    (0, 12, True)
    >>> print(overlap.message)
    0 of 12 truth users (0.0%) have a recommendation (12 recs users), and 12 of 12 truth items are recommended (12 recs items); unmatched ids, e.g. truth user '001', recs user '1'
    """  # noqa: E501
    check_column_names(user=user, item=item)
    recs_lf = read(recs, name="recs").lazy()
    truth_lf = read(truth, name="truth").lazy()
    recs_schema, truth_schema = recs_lf.collect_schema(), truth_lf.collect_schema()
    v.require_columns(recs_schema, {"user": user, "item": item}, frame="recs")
    v.require_columns(truth_schema, {"user": user, "item": item}, frame="truth")
    recs_lf, truth_lf, _, _ = v.unify_key_dtypes(
        recs_lf, truth_lf, [user, item], recs_schema=recs_schema, truth_schema=truth_schema
    )
    return id_overlap(recs_lf, truth_lf, user=user, item=item)


# ------------------------------------------------------------------ files: ids as text

WEAK_ID_SHARE = 0.1
"""Below this share of the smaller side's distinct values matched, a column is "poor"."""


@dataclass(frozen=True)
class KeyOverlap:
    """The overlap of every key column; :attr:`message` says it in one line."""

    left_name: str
    right_name: str
    columns: tuple[ColumnOverlap, ...]
    threshold: float = WEAK_ID_SHARE

    @property
    def poor(self) -> bool:
        """True when some key column matches less than ``threshold`` of its smaller side."""
        return any(column.share < self.threshold for column in self.columns)

    @property
    def message(self) -> str:
        """One line: per column, matched counts and an unmatched example from each side."""
        parts = []
        for c in self.columns:
            text = (
                f"{c.n_matched} of {c.n_left} {c.column} id(s) of {self.left_name} and of "
                f"{c.n_right} of {self.right_name} match"
            )
            examples = []
            if c.left_only_example is not None:
                examples.append(f"{v.shorten(c.left_only_example)} only in {self.left_name}")
            if c.right_only_example is not None:
                examples.append(f"{v.shorten(c.right_only_example)} only in {self.right_name}")
            if examples:
                text += f" (e.g. {', '.join(examples)})"
            if c.n_matched_without_leading_zeros > c.n_matched:
                text += (
                    f"; {c.n_matched_without_leading_zeros} would match without leading "
                    "zeros: did one file lose them (a spreadsheet, a number column)?"
                )
            parts.append(text)
        head = f"{self.left_name} and {self.right_name} share few ids: " if self.poor else ""
        return head + "; ".join(parts)


def key_overlap(
    left: pl.LazyFrame | pl.DataFrame,
    right: pl.LazyFrame | pl.DataFrame,
    keys: str | Sequence[str],
    *,
    left_name: str = "recs",
    right_name: str = "truth",
    threshold: float = WEAK_ID_SHARE,
) -> KeyOverlap:
    """Count the distinct key values two frames share, column by column, as text.

    Parameters
    ----------
    left, right
        Frames (eager or lazy) holding every column of ``keys``.
    keys
        Key columns compared one by one (``["user", "item"]``); values are
        compared as text, so a dtype mismatch still gives counts.
    left_name, right_name
        How the message names the two sides (file names on the command line).
    threshold
        :attr:`KeyOverlap.poor` holds when a column matches fewer than this
        share of the smaller side's distinct values.

    Returns
    -------
    KeyOverlap
        Counts, one unmatched example of each side, and a one-line message.

    Examples
    --------
    >>> recs = pl.DataFrame({"user": ["1", "2"], "item": ["a", "b"]})
    >>> truth = pl.DataFrame({"user": ["001", "002"], "item": ["a", "c"]})
    >>> found = key_overlap(recs, truth, ["user"])
    >>> found.poor
    True
    >>> found.columns[0]  # doctest: +NORMALIZE_WHITESPACE
    ColumnOverlap(column='user', n_left=2, n_right=2, n_matched=0, left_only_example='1',
                  right_only_example='001', n_matched_without_leading_zeros=2)
    >>> for part in found.message.split("; "):
    ...     print(part)
    recs and truth share few ids: 0 of 2 user id(s) of recs and of 2 of truth match (e.g. '1' only in recs, '001' only in truth)
    2 would match without leading zeros: did one file lose them (a spreadsheet, a number column)?
    """  # noqa: E501
    columns = [keys] if isinstance(keys, str) else list(keys)
    as_text = [pl.col(column).cast(pl.String) for column in columns]
    found = _column_overlaps(
        left.lazy().select(as_text), right.lazy().select(as_text), columns, leading_zeros=True
    )
    return KeyOverlap(left_name, right_name, tuple(found), threshold)
