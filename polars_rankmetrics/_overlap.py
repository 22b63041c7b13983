"""How many ids two frames share: the check behind "these files do not match" warnings.

Recommendations scored against a truth that shares (almost) none of their ids
give a confident 0.0: ids read as ``1.0`` on one side and ``1`` on the other,
leading zeros lost on a round trip through a spreadsheet, the wrong file.
:func:`key_overlap` counts, for each key column, the distinct values of each
side and those both sides have, keeps one example of each side's unmatched
values and writes a message; it reads only the distinct keys, so it is cheap
next to the evaluation itself. The command line and :func:`evaluate` both
call it and warn when :attr:`KeyOverlap.poor` holds.
"""

# ruff: noqa: E501  (the doctest shows a dataclass repr on one line)
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

__all__ = ["ColumnOverlap", "KeyOverlap", "key_overlap"]

_WEAK_SHARE = 0.1
"""Below this share of the smaller side's distinct values matched, a column is "poor"."""


@dataclass(frozen=True)
class ColumnOverlap:
    """Distinct values of one key column on each side and how many both sides have."""

    column: str
    n_left: int
    n_right: int
    n_matched: int
    left_only_example: str | None
    right_only_example: str | None
    n_matched_without_leading_zeros: int

    @property
    def share(self) -> float:
        """Matched values over the smaller side's distinct values (1.0 when a side is empty)."""
        smaller = min(self.n_left, self.n_right)
        return self.n_matched / smaller if smaller else 1.0


@dataclass(frozen=True)
class KeyOverlap:
    """The overlap of every key column; :attr:`message` says it in one line."""

    left_name: str
    right_name: str
    columns: tuple[ColumnOverlap, ...]
    threshold: float = _WEAK_SHARE

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
                examples.append(f"{c.left_only_example!r} only in {self.left_name}")
            if c.right_only_example is not None:
                examples.append(f"{c.right_only_example!r} only in {self.right_name}")
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


def _distinct_text(frame: pl.LazyFrame | pl.DataFrame, column: str) -> pl.LazyFrame:
    # compared as text so that a dtype mismatch still gives counts rather than an error
    return frame.lazy().select(pl.col(column).cast(pl.String).alias("key")).drop_nulls().unique()


def _strip_zeros(keys: pl.LazyFrame) -> pl.LazyFrame:
    stripped = pl.col("key").str.strip_chars_start("0")
    return keys.select(pl.when(stripped == "").then(pl.lit("0")).otherwise(stripped).alias("key"))


def key_overlap(
    left: pl.LazyFrame | pl.DataFrame,
    right: pl.LazyFrame | pl.DataFrame,
    keys: str | Sequence[str],
    *,
    left_name: str = "recs",
    right_name: str = "truth",
    threshold: float = _WEAK_SHARE,
) -> KeyOverlap:
    """Count the distinct key values two frames share, column by column.

    Parameters
    ----------
    left, right
        Frames (eager or lazy) holding every column of ``keys``.
    keys
        Key columns compared one by one (``["user", "item"]``); values are
        compared as text.
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
    >>> found.columns[0]
    ColumnOverlap(column='user', n_left=2, n_right=2, n_matched=0, left_only_example='1', right_only_example='001', n_matched_without_leading_zeros=2)
    >>> for part in found.message.split("; "):
    ...     print(part)
    recs and truth share few ids: 0 of 2 user id(s) of recs and of 2 of truth match (e.g. '1' only in recs, '001' only in truth)
    2 would match without leading zeros: did one file lose them (a spreadsheet, a number column)?
    """
    columns = [keys] if isinstance(keys, str) else list(keys)
    found = []
    for column in columns:
        lhs, rhs = _distinct_text(left, column), _distinct_text(right, column)
        left_only = lhs.join(rhs, on="key", how="anti").sort("key").head(1)
        right_only = rhs.join(lhs, on="key", how="anti").sort("key").head(1)
        loose = _strip_zeros(lhs).unique().join(_strip_zeros(rhs).unique(), on="key", how="semi")
        n_left, n_right, n_matched, n_loose, l_ex, r_ex = pl.collect_all([
            lhs.select(pl.len()),
            rhs.select(pl.len()),
            lhs.join(rhs, on="key", how="semi").select(pl.len()),
            loose.select(pl.len()),
            left_only,
            right_only,
        ])  # fmt: skip
        found.append(
            ColumnOverlap(
                column=column,
                n_left=int(n_left.item()),
                n_right=int(n_right.item()),
                n_matched=int(n_matched.item()),
                left_only_example=l_ex["key"][0] if l_ex.height else None,
                right_only_example=r_ex["key"][0] if r_ex.height else None,
                n_matched_without_leading_zeros=int(n_loose.item()),
            )
        )
    return KeyOverlap(left_name, right_name, tuple(found), threshold)
