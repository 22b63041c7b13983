"""Which batch brought each user, for the ``Evaluator``: a user in two batches is refused.

A batch holds whole users; a user whose rows came in two batches would be
evaluated as two half users, a wrong number without an error. So every user
(its key columns: the user and the ``by`` columns the truth shares) is kept
with its batch, and a batch bringing one already kept is refused, naming the
user and both batches.

Two ways to keep them, the same answers:

* a table indexed by the id, when the key is the user alone and its ids are
  integers from 0 up to 4 times the rows seen (a model's row indices, the
  usual case): each batch is checked by a gather over its rows and recorded by
  a scatter, without finding its distinct users;
* otherwise, each batch's distinct keys and a set of their 64-bit hashes (a
  hash seen before is confirmed by joining the keys with every user kept, so
  a collision refuses nothing).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import numpy as np
import numpy.typing as npt
import polars as pl

from polars_rankmetrics._names import PREFIX

__all__ = ["BATCH", "UsersByBatch"]

BATCH = f"{PREFIX}batch"  # the column of the batch that brought the user
_NEW = f"{BATCH}_new"  # the batch bringing it again, in a refusal
# the table's size: 4 bytes per id up to the largest id, kept while that id is below
# _IDS_PER_ROW ids per row seen or below _FLOOR ids (4 MiB). Rows seen bound the users
# (each has one at least): ids from 0 to the users' count fit whenever a batch holds a
# quarter of the users with their rows, and sparse ids cost at most 16 bytes a row seen,
# no more than the rows themselves held in memory (a user and an item id, 8 bytes each)
_IDS_PER_ROW = 4
_FLOOR = 1 << 20
# the integer types NumPy holds (not the 128-bit ones)
_TABLE_DTYPES = frozenset({
    pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16, pl.UInt32, pl.UInt64
})  # fmt: skip

Owners = npt.NDArray[np.uint32]


class UsersByBatch:
    """The users kept and their batch (numbered from 1): in a table by id, or as frames."""

    def __init__(self) -> None:
        self._key: str | None = None  # the table's key column (None: no user kept yet)
        self._owners: Owners | None = np.zeros(0, np.uint32)  # None: the frames instead
        self._frames: list[pl.DataFrame] = []  # (keys..., BATCH) per batch
        self._hashes: set[int] = set()  # of the frames' keys (:func:`_hashes`)
        self._rows_seen = 0

    def add_batch(self, frames: Sequence[pl.DataFrame], keys: list[str], batch: int) -> None:
        """Keep the users of a batch's frames (recs, truth); one kept before is refused."""
        self._rows_seen += sum(frame.height for frame in frames)
        ids = self._table_ids(frames, keys)
        if ids is not None:
            self._add_to_table(ids, batch)
            return
        self._to_frames()
        users = _distinct_keys(frames, keys).with_columns(pl.lit(batch, pl.UInt32).alias(BATCH))
        self._add_frame(users)

    def add(self, users: pl.DataFrame) -> None:
        """Keep ``users`` (keys..., :data:`BATCH`): another evaluator's, or a saved state's."""
        keys = [name for name in users.columns if name != BATCH]
        self._rows_seen += users.height  # a user kept had a row at least
        ids = self._table_ids([users], keys)
        if ids is None:
            self._to_frames()
            self._add_frame(users)
            return
        if not ids:
            return
        owners = self._grown(int(ids[0].max()))
        _refuse_kept(self._table_again(owners, ids[0], users.get_column(BATCH).to_numpy()))
        owners[ids[0]] = users.get_column(BATCH).to_numpy()

    def forget(self, batch: int) -> None:
        """Drop the users of a refused batch (they may come again)."""
        if self._owners is not None:
            self._owners[self._owners == batch] = 0
            return
        self._frames = [frame.filter(pl.col(BATCH) != batch) for frame in self._frames]
        self._hashes = {h for frame in self._frames for h in _hashes(frame.drop(BATCH))}

    def frame(self) -> pl.DataFrame | None:
        """Every user kept with its batch (keys..., :data:`BATCH`); ``None`` when none."""
        if self._owners is not None:
            if self._key is None:
                return None
            ids = np.flatnonzero(self._owners)
            return pl.DataFrame({self._key: ids, BATCH: self._owners[ids]})
        return pl.concat(self._frames, how="vertical_relaxed") if self._frames else None

    def _table_ids(
        self, frames: Sequence[pl.DataFrame], keys: list[str]
    ) -> list[npt.NDArray[np.integer]] | None:
        """The frames' user ids as arrays, when the table can keep them; else ``None``."""
        if self._owners is None or len(keys) != 1 or self._key not in (None, keys[0]):
            return None
        limit = max(_FLOOR, _IDS_PER_ROW * self._rows_seen)
        columns = [frame.get_column(keys[0]) for frame in frames if frame.height]
        if any(column.dtype not in _TABLE_DTYPES or column.null_count() for column in columns):
            return None
        ids = [column.to_numpy() for column in columns]
        if any(one.min() < 0 or one.max() >= limit for one in ids):
            return None
        self._key = keys[0]
        return ids

    def _grown(self, largest: int) -> Owners:
        """The table, large enough for the id ``largest``."""
        owners = cast("Owners", self._owners)
        if largest >= owners.size:
            grown = np.zeros(max(largest + 1, 2 * owners.size), np.uint32)
            grown[: owners.size] = owners
            self._owners = owners = grown
        return owners

    def _add_to_table(self, ids: list[npt.NDArray[np.integer]], batch: int) -> None:
        if not ids:
            return
        owners = self._grown(max(int(one.max()) for one in ids))
        # every row checked before any is recorded: the batch's own users repeat in its rows
        every = ids[0] if len(ids) == 1 else np.concatenate(ids)
        _refuse_kept(self._table_again(owners, every, batch))
        owners[every] = batch

    def _table_again(
        self, owners: Owners, ids: npt.NDArray[np.integer], batch: int | npt.NDArray[np.uint32]
    ) -> pl.DataFrame:
        """The ids kept before (key, :data:`BATCH`, the new batch): none, almost always."""
        if not owners[ids].any():
            return pl.DataFrame()
        kept = owners[ids] != 0
        again = pl.DataFrame({
            cast("str", self._key): ids[kept],
            BATCH: owners[ids[kept]],
            _NEW: batch[kept] if isinstance(batch, np.ndarray) else np.full(kept.sum(), batch),
        })  # fmt: skip
        return again.unique()

    def _to_frames(self) -> None:
        """Keep the users as frames from now on (the table's users moved into one)."""
        if self._owners is None:
            return
        users = self.frame()
        self._owners = None
        if users is not None:
            self._frames = [users]
            self._hashes = set(_hashes(users.drop(BATCH)))

    def _add_frame(self, users: pl.DataFrame) -> None:
        """Keep distinct ``users`` (keys..., :data:`BATCH`), refused if one was kept before.

        The keys' hashes are added to the set first, in time proportional to the
        batch: when the set grows by fewer than them, a hash was there before (a
        repeated user, or a collision) and the keys are joined with every user
        kept. A refused batch's hashes stay in the set: they cost a join later,
        never a refusal.
        """
        on = [name for name in users.columns if name != BATCH]
        hashes = _hashes(users.select(on))
        before = len(self._hashes)
        self._hashes.update(hashes)
        if self._frames and len(self._hashes) - before < len(hashes):
            kept = pl.concat(self._frames, how="vertical_relaxed")
            _refuse_kept(kept.join(users, on=on, how="inner", suffix="_new"))
        self._frames.append(users)


def _refuse_kept(again: pl.DataFrame) -> None:
    """Refuse the users of ``again`` (keys..., :data:`BATCH`, the new batch) if any."""
    if not again.height:
        return
    on = [name for name in again.columns if name not in (BATCH, _NEW)]
    # the smallest key of the first batch bringing users again: the same message every run
    first = again.sort([_NEW, *on]).row(0, named=True)
    who = ", ".join(f"{name}={first[name]!r}" for name in on)
    count = again.filter(pl.col(_NEW) == first[_NEW]).height
    many = f"{count:,} users of batch {{}} were" if count > 1 else "a user of batch {} was"
    raise ValueError(
        f"{many.format(first[_NEW])} already added in an earlier batch: "
        f"{who} (batch {first[BATCH]}); a batch holds whole users, every row of each "
        "in one batch"
    )


def _distinct_keys(frames: Sequence[pl.DataFrame], keys: list[str]) -> pl.DataFrame:
    """The frames' distinct users (their key columns)."""
    together = pl.concat([frame.select(keys) for frame in frames], how="vertical_relaxed")
    if len(keys) == 1:
        # one column's distinct values, in their order, cost less than a frame's distinct
        # rows (100 batches of 127,000 string ids: 0.16 s against 0.26 s)
        return together.to_series().unique(maintain_order=True).to_frame()
    return together.unique()


def _hashes(keys: pl.DataFrame) -> list[int]:
    """A 64-bit hash of each row of user keys, the same for equal ids of any integer type."""
    canonical = [
        pl.col(name).cast(pl.Int128) if dtype.is_integer() else pl.col(name).cast(pl.String)
        for name, dtype in keys.schema.items()
    ]
    return cast("list[int]", keys.select(canonical).hash_rows(seed=0).to_list())
