"""``Evaluator``: metrics accumulated batch by batch, equal to one ``evaluate`` of them all.

A batch holds whole users: all their recommendations and all their truth.
Each user's parts (:func:`polars_rankmetrics.per_user_parts`) depend on that
user's rows alone, so the parts of every batch, put together, are exactly the
parts of one call on all the rows; :meth:`Evaluator.compute` combines them as
``evaluate`` does (:func:`polars_rankmetrics.aggregate`, sums in fixed point,
the same in any order), which is ``evaluate``'s number to the last bit.

What the state holds: one row of parts per user counted, and each user's id
with the batch that brought it (a user in two batches would be two half users:
refused; :mod:`polars_rankmetrics._batch_users`). The measures whose value is
one number of all the lists together (``coverage``, ``gini``,
``exposure_gini``, ``personalization``: aggregation ``"group"``) are refused
by name: a user's parts do not hold them. Frames among the options
(``interactions``, ``items``) are read once, when the evaluator is made.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import polars as pl

from polars_rankmetrics._batch_users import BATCH, UsersByBatch
from polars_rankmetrics._frames import AnyFrame, collected, read
from polars_rankmetrics._pipeline.aggregate import (
    aggregate_lf,
    decided_by_the_whole_truth,
    of_all_lists,
    per_user_values,
)
from polars_rankmetrics._pipeline.parse import MetricSpec, metric_specs
from polars_rankmetrics._pipeline.population import with_every_group
from polars_rankmetrics._version import package_version
from polars_rankmetrics.conventions import Conventions
from polars_rankmetrics.evaluation import per_user_parts
from polars_rankmetrics.options import FRAME_OPTIONS, EvaluateOptions, Unpack
from polars_rankmetrics.options import read as read_options

__all__ = ["Evaluator"]

_FORMAT = 1
_CONVENTIONS = "Conventions"  # the key of a Conventions object described in the settings


class Evaluator:
    """Accumulate metrics over batches of whole users; ``compute()`` equals ``evaluate`` on all.

    ``Evaluator(metrics, *, buffer_rows=4_000_000, **options)``: the metric
    strings and the keyword options of :func:`polars_rankmetrics.evaluate`
    (:class:`polars_rankmetrics.EvaluateOptions`), the same for every batch.
    Batches are held until they reach ``buffer_rows`` rows (recommendations
    and truth), then evaluated in one query (``0``: each as it comes; a query
    of a few million rows costs no more per row than one of all the rows, a
    smaller one more); a batch the data checks refuse is
    named when that query runs, at the latest by :meth:`compute`, and left
    out, the others kept.
    Metrics whose value is one number of all the lists together (aggregation
    ``"group"``: ``coverage@k``, ``gini@k``, ``exposure_gini@k``,
    ``personalization@k``) are refused by name, and with graded truth so is
    ``err@k`` without its ``max_grade`` (the whole truth's largest grade).

    Examples
    --------
    >>> import polars as pl
    >>> from polars_rankmetrics import Evaluator, evaluate
    >>> recs = pl.DataFrame({"user": [1, 1, 2, 2, 3], "item": ["a", "b", "a", "c", "b"],
    ...                      "rank": [1, 2, 1, 2, 1]})
    >>> truth = pl.DataFrame({"user": [1, 2, 3], "item": ["b", "a", "c"]})
    >>> ev = Evaluator(["mrr", "ndcg@2"])
    >>> for users in ([1, 2], [3]):
    ...     ev.update(recs.filter(pl.col("user").is_in(users)),
    ...               truth.filter(pl.col("user").is_in(users)))
    >>> ev.compute()
    shape: (1, 2)
    ┌─────┬──────────┐
    │ mrr ┆ ndcg@2   │
    │ --- ┆ ---      │
    │ f64 ┆ f64      │
    ╞═════╪══════════╡
    │ 0.5 ┆ 0.543643 │
    └─────┴──────────┘
    >>> ev.compute().equals(evaluate(recs, truth, ["mrr", "ndcg@2"]))
    True
    """

    def __init__(
        self,
        metrics: str | Sequence[str],
        *,
        buffer_rows: int = 4_000_000,
        **options: Unpack[EvaluateOptions],
    ) -> None:
        if isinstance(buffer_rows, bool) or not isinstance(buffer_rows, int) or buffer_rows < 0:
            raise ValueError(f"buffer_rows must be an integer >= 0; got {buffer_rows!r}")
        self._buffer_rows = buffer_rows
        self._specs = metric_specs(metrics)
        _refuse_group_measures(self._specs)
        given = read_options(options, function="Evaluator")
        if given.get("relevance") is not None:
            _refuse_undecided(self._specs)
        self._frames = {
            name: collected(read(given[name], name=name))  # type: ignore[literal-required]
            for name in FRAME_OPTIONS
            if given.get(name) is not None
        }
        self._settings = {n: v for n, v in given.items() if n not in FRAME_OPTIONS}
        self._options = cast("EvaluateOptions", {**options, **self._frames})
        self._state = _State()
        self._pending = _Pending()

    @property
    def metrics(self) -> list[str]:
        """The metric labels, in the order given."""
        return [spec.label for spec in self._specs]

    @property
    def batches(self) -> int:
        """How many batches were added and kept (merged evaluators' included)."""
        return self._state.batches - self._state.refused

    def update(self, recs: AnyFrame, truth: AnyFrame | None) -> None:
        """Add one batch: every row of its users, in the recommendations and in the truth.

        Any frame kind, as :func:`polars_rankmetrics.evaluate` takes. A user
        (within its ``by`` groups shared with the truth) already added in an
        earlier batch is refused with its id and both batch numbers.
        """
        recs_frame = collected(read(recs, name="recs"))
        truth_frame = None if truth is None else collected(read(truth, name="truth"))
        batch = self._state.batches + 1
        keys = self._key_columns(recs_frame, truth_frame)
        frames = [recs_frame] if truth_frame is None else [recs_frame, truth_frame]
        # the truth's users count when it has the keys (with by, a fold the recs alone have
        # is the recs' own group)
        held = [frame for frame in frames if all(name in frame.columns for name in keys)]
        self._state.users.add_batch(held, keys, batch)
        self._state.add(recs_frame.head(1))
        groups = self._recs_only_groups(recs_frame, truth_frame)
        self._pending.add(_Held(recs_frame, truth_frame, batch, groups))
        if self._pending.rows >= self._buffer_rows:
            self._flush()

    def _flush(self) -> None:
        """The parts of the batches held back, in one query (a query per batch costs more).

        Where that query refuses the data, each batch is evaluated alone: the
        good ones are kept, the first bad one is forgotten (its users may come
        again) and its error raised, naming it.
        """
        held = self._pending.take()
        if not held:
            return
        try:
            recs, truth = _together(held)
            self._state.parts.append(self._parts_of(recs, truth, [one.batch for one in held]))
            self._state.add_unit(held)
        except (ValueError, TypeError):
            refused = None
            for one in held:
                try:
                    self._state.parts.append(self._parts_of(one.recs, one.truth, [one.batch]))
                    self._state.add_unit([one])
                except (ValueError, TypeError) as exc:
                    self._state.forget(one.batch)
                    refused = refused or exc
            if refused is not None:
                raise refused from None
            raise

    def compute(self, *, per_user: bool = False) -> pl.DataFrame:
        """``evaluate(all recs, all truth, metrics, per_user=per_user, **options)``, exactly."""
        self._flush()
        if not self._state.parts:
            raise ValueError("the Evaluator has no batch yet: update() it with a batch first")
        parts = pl.concat([*self._state.parts, *self._without_recs()], how="vertical_relaxed")
        keys = [name for name in parts.columns if not _is_part(name, self._specs)]
        if per_user:
            return parts.lazy().select(*keys, *per_user_values(self._specs)).sort(keys).collect()
        return aggregate_lf(parts.lazy(), self._specs, _as_list(self._settings["by"])).collect()

    def merge(self, other: Evaluator) -> Evaluator:
        """Add another evaluator's batches (a data-parallel worker's); ``other`` is not changed.

        Both must evaluate the same metrics with the same options; a user in
        both is refused. Returns this evaluator.
        """
        if not isinstance(other, Evaluator):
            raise TypeError(f"merge takes another Evaluator; got {type(other).__name__}")
        _refuse_different(self._describe(), other._describe())
        other._flush()  # its numbers stay what they are: only when its parts are computed moves
        self._flush()
        self._state.merge(other._state)
        return self

    def save(self, path: str | Path) -> None:
        """Write the state to the new folder ``path`` (Arrow IPC files and its settings).

        The frames among the options are not written: :meth:`load` takes them
        again and checks they are the same. An existing ``path`` is refused.
        """
        folder = Path(path)
        if folder.exists():
            raise FileExistsError(
                f"{folder} exists: save() writes a new folder, overwriting nothing"
            )
        self._flush()
        folder.mkdir(parents=True)
        self._state.write(folder)
        settings = {
            **self._describe(),
            "batches": self._state.batches,
            "version": package_version(),
        }
        (folder / "settings.json").write_text(json.dumps(settings, indent=2) + "\n")

    @classmethod
    def load(cls, path: str | Path, **frames: AnyFrame) -> Evaluator:
        """An evaluator from a folder :meth:`save` wrote; the frame options given again."""
        folder = Path(path)
        settings = _settings_of(folder)
        options = cast("EvaluateOptions", {**_options_of(settings["options"]), **frames})
        loaded = cls(cast("list[str]", settings["metrics"]), **options)
        _refuse_different(settings, loaded._describe(), saved=folder)
        loaded._state = _State.read(folder, int(settings["batches"]))
        return loaded

    def _parts_of(
        self, recs: pl.DataFrame, truth: pl.DataFrame | None, batches: Sequence[int]
    ) -> pl.DataFrame:
        try:
            return collected(per_user_parts(recs, truth, self.metrics, **self._options))
        except (ValueError, TypeError) as exc:
            which = (
                f"batch {batches[0]}"
                if len(batches) == 1
                else f"batches {batches[0]}-{batches[-1]}"
            )
            exc.add_note(f"(in {which} of the Evaluator)")
            raise

    def _key_columns(self, recs: pl.DataFrame, truth: pl.DataFrame | None) -> list[str]:
        """The user column and the ``by`` columns the truth shares: whole users are these keys.

        Refused, naming it, when the recs lack one.
        """
        user = cast("str", self._settings["user"])
        by = _as_list(self._settings["by"])
        if truth is not None:
            by = [name for name in by if name in truth.columns]
        keys = [*by, user]
        missing = [name for name in keys if name not in recs.columns]
        if missing:
            raise ValueError(
                f"recs has no column {missing[0]!r} (the user or a by column of the Evaluator's "
                f"options); its columns: {recs.columns}"
            )
        return keys

    def _recs_only_groups(
        self, recs: pl.DataFrame, truth: pl.DataFrame | None
    ) -> tuple[pl.DataFrame, pl.DataFrame] | None:
        """The batch's (shared by..., recs-only by...) groups and its truth, when recs-only exist.

        ``evaluate`` judges a model on every truth user of the folds it has
        recommendations in: a batch whose recs lack a model that another batch
        has is completed with its truth at :meth:`compute`.
        """
        by = _as_list(self._settings["by"])
        shared = [name for name in by if truth is not None and name in truth.columns]
        if truth is None or len(shared) == len(by):
            return None
        return recs.select(*by).unique(), truth

    def _without_recs(self) -> list[pl.DataFrame]:
        """The parts of users of a unit for the groups (models) its recs lack but others have.

        A unit: the batches evaluated in one query (their groups are the union of theirs).
        """
        missing = self._state.missing_groups()
        if not missing:
            return []
        user = cast("str", self._settings["user"])
        position = cast("str", self._settings["score"] or self._settings["rank"])
        item = cast("str", self._settings["item"])
        example = self._state.recs_example
        # an item some batch recommended: it passed that batch's checks (a catalog's included)
        any_item = example.item(0, item) if example.height else None
        completed = []
        for batch, (groups, truth) in missing.items():
            recs, placeholder = with_every_group(
                example.clear(),
                truth,
                groups,
                roles=(user, item, position),
                any_item=any_item,
            )
            parts = self._parts_of(recs, truth, [batch])
            completed.append(parts.filter(pl.col(user).ne_missing(pl.lit(placeholder))))
        return completed

    def _describe(self) -> dict[str, Any]:
        frames = {name: _fingerprint(frame) for name, frame in self._frames.items()}
        return {
            "format": _FORMAT,
            "metrics": self.metrics,
            "options": _described_options(self._settings),
            "frames": frames,
        }


class _State:
    """What the batches left: parts, users (with their batch), groups and truths (see below).

    ``groups`` and ``truths``: per unit (the batches evaluated in one query, numbered
    by their first batch), the (by...) groups of its recs and its truth, kept only
    when some ``by`` column is the recs' own (a model), for
    :meth:`Evaluator._without_recs`. ``recs_example``: a row of the recs (their columns,
    and an item that passed a batch's checks).
    """

    def __init__(self) -> None:
        self.parts: list[pl.DataFrame] = []
        self.users = UsersByBatch()
        self.groups: list[pl.DataFrame] = []
        self.truths: list[pl.DataFrame] = []
        self.recs_example = pl.DataFrame()
        self.batches = 0  # the batches numbered so far
        self.refused = 0  # of which the data refused (forgotten)

    def add(self, recs_example: pl.DataFrame) -> None:
        """Count a batch whose users were kept (:meth:`UsersByBatch.add_batch`)."""
        self.batches += 1
        if recs_example.height or not self.recs_example.width:
            self.recs_example = recs_example

    def add_unit(self, held: Sequence[_Held]) -> None:
        """The groups and truth of batches evaluated in one query, when recs-only groups exist."""
        kept = [one.groups for one in held if one.groups is not None]
        if kept:
            unit = held[0].batch
            groups = pl.concat([g for g, _ in kept], how="vertical_relaxed").unique()
            self.groups.append(_numbered(groups, unit))
            self.truths.append(
                _numbered(pl.concat([t for _, t in kept], how="vertical_relaxed"), unit)
            )

    def forget(self, batch: int) -> None:
        """Drop what a refused batch left: its users."""
        self.refused += 1
        self.users.forget(batch)

    def merge(self, other: _State) -> None:
        shift = self.batches

        def moved(frames: list[pl.DataFrame]) -> list[pl.DataFrame]:
            return [frame.with_columns(pl.col(BATCH) + shift) for frame in frames]

        users = other.users.frame()
        if users is not None:
            self.users.add(moved([users])[0])
        self.parts.extend(other.parts)
        self.groups.extend(moved(other.groups))
        self.truths.extend(moved(other.truths))
        if not self.recs_example.height:
            self.recs_example = other.recs_example
        self.batches += other.batches

    def missing_groups(self) -> dict[int, tuple[pl.DataFrame, pl.DataFrame]]:
        """Per unit, the groups other units' recs have and its own lack, with its truth."""
        if not self.groups:
            return {}
        groups = pl.concat(self.groups, how="vertical_relaxed")
        every = groups.drop(BATCH).unique()
        keys = every.columns
        truths = pl.concat(self.truths, how="vertical_relaxed").partition_by(BATCH, as_dict=True)
        missing = {}
        for (batch,), truth in truths.items():
            own = groups.filter(pl.col(BATCH) == batch).drop(BATCH)
            lacked = every.join(own, on=keys, how="anti", nulls_equal=True)
            if lacked.height:
                missing[int(cast("int", batch))] = (lacked, truth.drop(BATCH))
        return missing

    def write(self, folder: Path) -> None:
        users = self.users.frame()
        for name, frames in (
            ("parts", self.parts),
            ("users", [] if users is None else [users]),
            ("groups", self.groups),
            ("truths", self.truths),
        ):
            if frames:
                pl.concat(frames, how="vertical_relaxed").write_ipc(folder / f"{name}.arrow")
        self.recs_example.write_ipc(folder / "recs_example.arrow")

    @classmethod
    def read(cls, folder: Path, batches: int) -> _State:
        state = cls()
        for name in ("parts", "groups", "truths"):
            path = folder / f"{name}.arrow"
            if path.exists():
                setattr(state, name, [pl.read_ipc(path)])
        if (folder / "users.arrow").exists():
            state.users.add(pl.read_ipc(folder / "users.arrow"))
        state.recs_example = pl.read_ipc(folder / "recs_example.arrow")
        state.batches = batches
        return state


@dataclass(frozen=True)
class _Held:
    """One batch added, not evaluated yet; ``groups``: see :meth:`Evaluator._recs_only_groups`."""

    recs: pl.DataFrame
    truth: pl.DataFrame | None
    batch: int
    groups: tuple[pl.DataFrame, pl.DataFrame] | None


class _Pending:
    """Batches added but not evaluated yet: their rows, until enough to be worth one query."""

    def __init__(self) -> None:
        self.held: list[_Held] = []
        self.rows = 0

    def add(self, held: _Held) -> None:
        self.held.append(held)
        self.rows += held.recs.height + (0 if held.truth is None else held.truth.height)

    def take(self) -> list[_Held]:
        """The held batches, the buffer emptied."""
        held, self.held, self.rows = self.held, [], 0
        return held


def _together(held: Sequence[_Held]) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    """Held batches as one recs frame and one truth frame (whole users: the same parts)."""
    recs = pl.concat([one.recs for one in held], how="vertical_relaxed")
    truths = [one.truth for one in held if one.truth is not None]
    if truths and len(truths) < len(held):
        raise ValueError(
            "batches of the Evaluator mix a truth and none: give the truth of every batch "
            "(an empty frame for a batch without)"
        )
    return recs, pl.concat(truths, how="vertical_relaxed") if truths else None


def _numbered(frame: pl.DataFrame, batch: int) -> pl.DataFrame:
    return frame.with_columns(pl.lit(batch, pl.UInt32).alias(BATCH))


def _refuse_group_measures(specs: Sequence[MetricSpec]) -> None:
    whole = of_all_lists(specs)
    if whole:
        raise ValueError(
            f"the Evaluator cannot accumulate {whole}: each is one number of all the lists "
            "together, which no user's parts hold; evaluate them on all "
            "the lists at once (evaluate, or spark.evaluate for data that a machine cannot hold)"
        )


def _refuse_undecided(specs: Sequence[MetricSpec]) -> None:
    undecided = decided_by_the_whole_truth(specs)
    if undecided:
        label, names = next(iter(undecided.items()))
        raise ValueError(
            f"the Evaluator cannot accumulate {list(undecided)}: {label} reads {names}, which "
            "the whole truth decides when not given (the largest grade), and a batch holds "
            f"part of it; give it in the metric, e.g. {label.split('@')[0]}"
            f"({names[0]}=4){'@' + label.split('@')[1] if '@' in label else ''}"
        )


def _described_options(settings: Mapping[str, Any]) -> dict[str, Any]:
    """The options as JSON holds them (a ``Conventions`` object as its fields)."""
    described = dict(settings)
    if isinstance(described.get("conventions"), Conventions):
        described["conventions"] = {_CONVENTIONS: dataclasses.asdict(described["conventions"])}
    return cast("dict[str, Any]", json.loads(json.dumps(described)))


def _options_of(described: Mapping[str, Any]) -> dict[str, Any]:
    """The options :func:`_described_options` described, a ``Conventions`` object rebuilt."""
    options = dict(described)
    conventions = options.get("conventions")
    if isinstance(conventions, dict) and _CONVENTIONS in conventions:
        options["conventions"] = Conventions(**conventions[_CONVENTIONS])
    return options


def _fingerprint(frame: pl.DataFrame) -> list[int]:
    # the same frame given again at load: same shape and same row hashes (a fixed seed)
    return [frame.height, frame.width, int(frame.hash_rows().sum())]


def _refuse_different(
    mine: dict[str, Any], theirs: dict[str, Any], saved: Path | None = None
) -> None:
    for field in ("format", "metrics", "options", "frames"):
        if mine.get(field) != theirs.get(field):
            where = f"the state saved in {saved}" if saved else "the other Evaluator"
            raise ValueError(
                f"{where} differs in its {field}: {mine.get(field)!r} here, "
                f"{theirs.get(field)!r} there; evaluators combine only with the same metrics, "
                "options and frames"
            )


def _settings_of(folder: Path) -> dict[str, Any]:
    try:
        settings = json.loads((folder / "settings.json").read_text())
    except FileNotFoundError as exc:
        raise FileNotFoundError(f"{folder} holds no saved Evaluator (no settings.json)") from exc
    if settings.get("format") != _FORMAT:
        raise ValueError(f"{folder} holds an Evaluator state of format {settings.get('format')}")
    return cast("dict[str, Any]", settings)


def _as_list(by: object) -> list[str]:
    if by is None:
        return []
    return [by] if isinstance(by, str) else list(cast("Sequence[str]", by))


def _is_part(name: str, specs: Sequence[MetricSpec]) -> bool:
    return any(name == spec.label or name.startswith(f"{spec.label}|") for spec in specs)
