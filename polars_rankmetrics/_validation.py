"""Input checks and their error messages.

Two kinds of checks live here:

* **Schema checks** (missing columns, dtypes, key compatibility, ``k``) run
  eagerly on ``collect_schema()``, which costs nothing even for a lazy query.
* **Data checks** (nulls, NaN, duplicates, non-positive ranks) are Polars
  expressions that become part of the query itself. :func:`guard` attaches
  them to the result, so a lazy query stays lazy and the error is raised when
  it is collected, with the offending row in the message.

Every message names the frame, the column, the number of rows involved and
one example row, so that the user can find the problem in their data.
"""

from __future__ import annotations

import difflib
import numbers
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import polars as pl

__all__ = [
    "DataCheck",
    "Probe",
    "as_int",
    "as_number",
    "check_cutoff",
    "check_literal",
    "check_no_name_clash",
    "duplicate_check",
    "float_key_check",
    "guard",
    "integer_holder",
    "key_dtype",
    "may_repeat",
    "nan_check",
    "null_checks",
    "require_columns",
    "require_integer",
    "require_numeric",
    "score_columns",
    "shorten",
    "tie_key",
    "unify_key_dtypes",
]

_GUARD_PREFIX = "__prm_check_"
_ROW_MARKER = "__prm_row"
_PROBE_PREFIX = "__prm_probe_"

# the most characters of one value a message quotes (an id can be megabytes long)
SHOWN_CHARACTERS = 40


def shorten(value: object, *, limit: int = SHOWN_CHARACTERS) -> str:
    """``repr(value)``, cut to about ``limit`` characters with the length it had.

    Every message that quotes a value the user passed (an id, a parameter, a
    column label) goes through this, so a 5 MB id gives a short message.

    Examples
    --------
    >>> shorten("abc")
    "'abc'"
    >>> shorten("x" * 1000)
    "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx... (1002 characters)"
    """
    text = repr(value)
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... ({len(text)} characters)"


def _is_bool(value: object) -> bool:
    # bool is an int subclass and numpy's bool has no __index__; neither is a number here
    return isinstance(value, bool) or type(value).__name__ in ("bool", "bool_")


def as_int(value: object, *, what: str) -> int:
    """``value`` as a Python ``int`` if it is an integer (``int``, ``np.int64``...), else raise.

    Booleans are refused: ``True`` as a cutoff is a mistake, not 1.

    Examples
    --------
    >>> import numpy as np
    >>> as_int(np.int64(10), what="k")
    10
    >>> as_int(True, what="k")
    Traceback (most recent call last):
    ...
    TypeError: k must be an integer, got True (bool)
    """
    if not _is_bool(value) and isinstance(value, numbers.Integral):
        return int(value)
    raise TypeError(f"{what} must be an integer, got {shorten(value)} ({type(value).__name__})")


def as_number(value: object, *, what: str) -> float:
    """``value`` as a Python ``float`` if it is a real number (``int``, ``np.float32``...).

    Booleans are refused, as by :func:`as_int`.

    Examples
    --------
    >>> import numpy as np
    >>> as_number(np.float32(0.5), what="relevance_level")
    0.5
    """
    if not _is_bool(value) and isinstance(value, numbers.Real):
        return float(value)
    raise TypeError(f"{what} must be a number, got {shorten(value)} ({type(value).__name__})")


def _names(names: Sequence[str], *, most: int = 12) -> str:
    shown = ", ".join(shorten(name) for name in names[:most])
    more = f", ... ({len(names)} columns)" if len(names) > most else ""
    return f"[{shown}{more}]"


def require_columns(
    schema: pl.Schema,
    columns: Mapping[str, str],
    *,
    frame: str,
    advice: Mapping[str, str] | None = None,
) -> None:
    """Raise ``ValueError`` naming every role whose column ``schema`` lacks.

    ``columns`` maps a role (``"user"``, ``"score"``, ...) to the column name the
    caller asked for; the message lists the columns that do exist and suggests
    the closest name. ``advice`` maps a role to the sentence that ends the
    message when that role's column is missing (in place of the generic one).
    """
    missing = {role: name for role, name in columns.items() if name not in schema}
    if not missing:
        return
    parts = []
    for role, name in missing.items():
        hint = difflib.get_close_matches(name, list(schema.names()), n=1)
        suggestion = f" (did you mean {shorten(hint[0])}?)" if hint else ""
        parts.append(f"column {shorten(name)} for {role}={shorten(name)}{suggestion}")
    given = [(advice or {})[role] for role in missing if role in (advice or {})]
    closing = f"Pass the right name with the keyword of that role, e.g. {next(iter(missing))}=..."
    if given:
        closing = given[0]
    raise ValueError(
        f"{frame} is missing {', '.join(parts)}; it has columns {_names(schema.names())}. "
        + closing
    )


# words of the columns a model writes its scores in (score, pred, prediction, prob, logit...)
_SCORE_WORDS = ("score", "pred", "prob", "logit", "similarity", "rating")


def score_columns(schema: pl.Schema, *, taken: Iterable[str]) -> list[str]:
    """The numeric columns of ``schema`` that look like scores, likeliest first.

    Named like one (``score``, ``pred``, ``prob``...; ``score`` itself first),
    else any float column; never the ``taken`` ones (ids, groups).

    Examples
    --------
    >>> schema = pl.Schema({"user": pl.Int64, "item": pl.Int64, "pred_score": pl.Float64})
    >>> score_columns(schema, taken=["user", "item"])
    ['pred_score']
    """
    skip = set(taken)
    numeric = [
        name
        for name, dtype in schema.items()
        if name not in skip and dtype.is_numeric() and name.lower() != "rank"
    ]
    named = [name for name in numeric if any(word in name.lower() for word in _SCORE_WORDS)]
    found = named or [name for name in numeric if schema[name].is_float()]
    return sorted(found, key=lambda name: name.lower() != "score")


def require_integer(schema: pl.Schema, column: str, *, frame: str, role: str) -> None:
    """Raise ``TypeError`` unless ``column`` holds integers (ranks are positions)."""
    dtype = schema[column]
    if not dtype.is_integer():
        raise TypeError(
            f"{frame} column {shorten(column)} ({role}) must hold integer positions (1 = top), "
            f"but its dtype is {dtype}. Cast it, e.g. pl.col({shorten(column)}).cast(pl.Int64), "
            "or pass score= to derive ranks from a score column."
        )


def require_numeric(schema: pl.Schema, column: str, *, frame: str, role: str) -> None:
    """Raise ``TypeError`` unless ``column`` is numeric (scores, relevance grades)."""
    dtype = schema[column]
    if not (dtype.is_numeric() or dtype == pl.Boolean):
        raise TypeError(
            f"{frame} column {shorten(column)} ({role}) must be numeric, but its dtype is {dtype}."
        )


def check_cutoff(k: object, *, what: str = "k") -> int | None:
    """Return ``k`` if it is ``None`` or an integer >= 1, else raise."""
    if k is None:
        return None
    if _is_bool(k) or not isinstance(k, numbers.Integral):
        raise TypeError(
            f"{what} must be a positive integer or None, got {shorten(k)} ({type(k).__name__})"
        )
    if k < 1:
        raise ValueError(f"{what} must be >= 1 (positions start at 1), got {shorten(k)}")
    return int(k)


def check_literal(value: object, allowed: Sequence[str], *, name: str) -> None:
    """Raise ``ValueError`` if ``value`` is not one of ``allowed`` (suggesting the closest)."""
    if value in allowed:
        return
    hint = difflib.get_close_matches(str(value), list(allowed), n=1)
    suggestion = f"; did you mean {shorten(hint[0])}?" if hint else ""
    raise ValueError(f"{name} must be one of {list(allowed)}, got {shorten(value)}{suggestion}")


def check_no_name_clash(schema: pl.Schema, names: Iterable[str], *, frame: str) -> None:
    """Raise ``ValueError`` if the output would overwrite one of the user's columns."""
    clash = [name for name in names if name in schema]
    if clash:
        raise ValueError(
            f"{frame} already has column(s) {clash}, which this step would add; "
            "rename or drop them first."
        )


_SIGNED: dict[type[pl.DataType], int] = {
    pl.Int8: 8,
    pl.Int16: 16,
    pl.Int32: 32,
    pl.Int64: 64,
    pl.Int128: 128,
}
_UNSIGNED: dict[type[pl.DataType], int] = {
    pl.UInt8: 8,
    pl.UInt16: 16,
    pl.UInt32: 32,
    pl.UInt64: 64,
    pl.UInt128: 128,
}
_SIGNED_OF_WIDTH = {bits: dtype for dtype, bits in _SIGNED.items()}
_UNSIGNED_OF_WIDTH = {bits: dtype for dtype, bits in _UNSIGNED.items()}


def _key_family(dtype: pl.DataType) -> str:
    if dtype == pl.String or isinstance(dtype, (pl.Categorical, pl.Enum)):
        return "string"
    # float ids are integer ids that went through a float column (pandas: an integer
    # column with a missing value); they are compared as integers
    if dtype.is_integer() or dtype.is_float():
        return "integer"
    return str(dtype)


def _as_integer(dtype: pl.DataType) -> tuple[bool, int]:
    """(signed, bits) of an integer dtype; a float stands for an Int64."""
    if dtype.is_float():
        return True, 64
    if dtype.base_type() in _SIGNED:
        return True, _SIGNED[dtype.base_type()]
    return False, _UNSIGNED[dtype.base_type()]


def integer_holder(left: pl.DataType, right: pl.DataType) -> pl.DataType:
    """The narrowest integer dtype holding every value of both (String beyond 128 bits).

    Both signed or both unsigned: the wider one. Mixed: a signed type wider than
    the unsigned one (UInt64 with Int64: Int128), so that no id overflows and
    ids equal as numbers are equal keys. UInt128 with a signed type has no
    integer holder; both are then compared as their decimal text, which is
    also exact.

    Examples
    --------
    >>> integer_holder(pl.UInt64(), pl.Int64())
    Int128
    >>> integer_holder(pl.UInt8(), pl.Int32())
    Int32
    >>> integer_holder(pl.Float64(), pl.UInt16())
    Int64
    """
    (left_signed, left_bits), (right_signed, right_bits) = _as_integer(left), _as_integer(right)
    if left_signed == right_signed:
        table = _SIGNED_OF_WIDTH if left_signed else _UNSIGNED_OF_WIDTH
        return table[max(left_bits, right_bits)]()
    signed_bits, unsigned_bits = (left_bits, right_bits) if left_signed else (right_bits, left_bits)
    bits = max(signed_bits, 2 * unsigned_bits)
    return _SIGNED_OF_WIDTH[bits]() if bits in _SIGNED_OF_WIDTH else pl.String()


def key_dtype(
    left: pl.DataType,
    right: pl.DataType,
    *,
    key: str,
    frames: tuple[str, str] = ("recs", "truth"),
    outcome: str = "every metric would silently be 0",
) -> pl.DataType | None:
    """The dtype both sides of join key ``key`` are compared in (``None``: as they are).

    The rule, for dtype ``left`` in the frame ``frames[0]`` (the recs) and
    ``right`` in ``frames[1]`` (the truth):

    * String, Categorical and Enum compare as String (by their text);
    * integers of any width and signedness compare by value, in
      :func:`integer_holder`; float columns count as integer ids (they must
      hold whole numbers, checked by :func:`float_key_check`);
    * any other dtype must be the same on both sides;
    * anything else (a string against an integer...) is refused with a
      ``TypeError``: the join would find nothing and every score would
      silently be 0. The message names both frames and what would follow
      (``outcome``), and suggests casting the second frame, the one that differs.
    """
    family_left, family_right = _key_family(left), _key_family(right)
    if family_left != family_right:
        first, second = frames
        raise TypeError(
            f"key column {shorten(key)} has dtype {left} in {first} but {right} in {second}; "
            f"these can never match, so {outcome}. Cast one side, e.g. "
            f"{second}.with_columns(pl.col({shorten(key)}).cast(pl.{left}))."
        )
    if family_left == "string":
        return None if left == right == pl.String else pl.String()
    if family_left == "integer":
        target = integer_holder(left, right)
        return None if left == right == target else target
    return None


def _key_cast(dtype: pl.DataType, key: str, target: pl.DataType) -> pl.Expr:
    column = pl.col(key)
    if dtype.is_float() and target != pl.String:
        # only whole numbers are ids; others (and values out of range) become null,
        # which float_key_check reports on the input
        return pl.when(column == column.floor()).then(column).cast(target, strict=False)
    if dtype.is_float():
        return (
            pl.when(column == column.floor())
            .then(column.cast(pl.Int128, strict=False))
            .cast(pl.String)
        )
    return column.cast(target)


def float_key_check(frame: str, key: str, target: pl.DataType, show: Sequence[str]) -> DataCheck:
    """A float key column compared as integers must hold whole numbers in range."""
    value = pl.col(key)
    return DataCheck(
        bad=value.is_not_null() & _key_cast(pl.Float64(), key, target).is_null(),
        message=f"{frame} column {shorten(key)} holds float ids, which are compared as "
        f"integers ({target}), but {{n}} value(s) are not whole numbers in its range",
        show=tuple(show),
        row_wise=True,
    )


def unify_key_dtypes(
    recs: pl.LazyFrame,
    truth: pl.LazyFrame,
    keys: Sequence[str],
    *,
    recs_schema: pl.Schema,
    truth_schema: pl.Schema,
) -> tuple[pl.LazyFrame, pl.LazyFrame, list[DataCheck], list[DataCheck]]:
    """Cast join keys of both frames to one dtype (:func:`key_dtype`), or refuse them.

    Returns both frames cast and the data checks of the inputs the casts need
    (float ids must be whole numbers): the recs' and the truth's, to run on
    the frames as given.
    """
    recs_casts: list[pl.Expr] = []
    truth_casts: list[pl.Expr] = []
    recs_checks: list[DataCheck] = []
    truth_checks: list[DataCheck] = []
    for key in keys:
        left, right = recs_schema[key], truth_schema[key]
        target = key_dtype(left, right, key=key)
        if target is None:
            continue
        for dtype, casts, checks, frame in (
            (left, recs_casts, recs_checks, "recs"),
            (right, truth_casts, truth_checks, "truth"),
        ):
            if dtype != target:
                casts.append(_key_cast(dtype, key, target).alias(key))
            if dtype.is_float():
                checks.append(float_key_check(frame, key, target, keys))
    if recs_casts:
        recs = recs.with_columns(recs_casts)
    if truth_casts:
        truth = truth.with_columns(truth_casts)
    return recs, truth, recs_checks, truth_checks


def tie_key(item: str, dtype: pl.DataType) -> pl.Expr:
    """The value equal scores are ordered by: the item id's value, the same for every dtype.

    Text for String, Categorical and Enum ids (an Enum's own order is the
    order of its categories, which differs from one frame to the next), the
    number for numeric ids: trec_eval compares docnos as strings. Ids of any
    other dtype compare in their own order.
    """
    if isinstance(dtype, (pl.Categorical, pl.Enum)):
        return pl.col(item).cast(pl.String)
    return pl.col(item)


@dataclass(frozen=True)
class DataCheck:
    """One data condition that must hold, evaluated inside the query.

    Attributes
    ----------
    bad
        Boolean expression, true on each offending row.
    message
        What is wrong, e.g. ``"recs column 'item' has {n} null value(s)"``;
        ``{n}`` is replaced by the number of offending rows.
    show
        Columns shown for the example row (none: a check of the whole frame,
        such as "it has no rows", shows no row).
    screen
        A cheap scalar, false only when no row can be bad; the rows are then
        searched for ``bad`` ones only when some screen of their frame fires.
        Duplicate checks always have one (they need every row at once anyway).
        Row-by-row checks (nulls, NaN, ranks below 1) have one only for frames
        in memory; on a lazy scan they are counted as the rows stream by
        (``None``), since waiting for a screen would hold every row first.
    search
        The frame narrowed to the rows that can be bad, in their order, with
        every row a bad row's verdict depends on: ``bad`` on the narrowed
        frame is true exactly on the frame's bad rows. The check is then
        counted on those rows alone (the search is its own screen). For a
        duplicate check in memory: the rows whose key hash repeats, usually
        none, so a refusal costs about what valid input does.

    row_wise
        ``bad`` of a row reads that row alone (a null, a NaN, a rank below 1),
        so the frame's rows can be filtered on it first: on a Parquet scan the
        filter goes into the reader, which skips every row group whose
        statistics show no bad value (10 million rows: 2.5 ms instead of 0.8 s
        of decoding the columns).
    example_order
        The example row is the bad row that comes first in the order of these
        columns (the first, then the next among equals ...) rather than in
        the frame's row order, for frames whose row order is not fixed
        (``evaluate``'s hit rows, a join's output; its top k ranked from
        scores). The columns should tell the bad rows apart.
    """

    bad: pl.Expr
    message: str
    show: tuple[str, ...]
    screen: pl.Expr | None = None
    search: Callable[[pl.LazyFrame], pl.LazyFrame] | None = None
    row_wise: bool = False
    example_order: tuple[str, ...] | None = None


def _check_columns(index: int, check: DataCheck) -> list[pl.Expr]:
    # a null is its own problem (null_checks), not also a NaN or a rank below 1
    bad = check.bad.fill_null(value=False)

    # one scalar per shown column: a struct of whole columns would be built for every row
    def first_bad(name: str) -> pl.Expr:
        column = pl.col(name).filter(bad)
        if check.example_order is not None:
            # rows in no fixed order (a join's output): the bad row first in these columns,
            # sorted among the bad rows alone (a few), so that the example is stable
            column = column.sort_by([pl.col(key).filter(bad) for key in check.example_order])
        return column.first()

    example = [first_bad(name) for name in check.show]
    # a check of a whole frame (it has no rows...) shows no example row
    row = pl.struct(example) if example else pl.lit(None, dtype=pl.Struct({"": pl.Null}))
    return [
        bad.sum().alias(f"{_GUARD_PREFIX}{index}_n"),
        row.alias(f"{_GUARD_PREFIX}{index}_row"),
    ]


def summary(
    frame: pl.LazyFrame, checks: Sequence[DataCheck], *, first_index: int = 0
) -> pl.LazyFrame:
    """One row: each check's count of bad rows and an example, searched only if screened in.

    A check with a ``search`` is counted on the rows its search keeps; the
    others together, on every row of ``frame`` or only when a screen fires.
    """
    numbered = list(enumerate(checks, start=first_index))
    plain = [(index, check) for index, check in numbered if check.search is None]
    parts = [
        check.search(frame).select(_check_columns(index, check))
        for index, check in numbered
        if check.search is not None
    ]
    if plain or not parts:
        columns = [column for index, check in plain for column in _check_columns(index, check)]
        screens = [check.screen for _, check in plain]
        if any(screen is None for screen in screens) and all(c.row_wise for _, c in plain):
            # a row-wise check counts the same on the rows some check finds bad, and
            # a filter reaches a scan's reader (Parquet statistics skip clean row groups)
            bad_rows = pl.any_horizontal(check.bad.fill_null(value=False) for _, check in plain)
            parts.insert(0, frame.filter(bad_rows).select(columns))
        elif any(screen is None for screen in screens):
            parts.insert(0, frame.select(columns))
        else:
            parts.insert(0, frame.filter(pl.any_horizontal(screens)).select(columns))
    return parts[0] if len(parts) == 1 else pl.concat(parts, how="horizontal")


def _format_row(row: Mapping[str, Any] | None) -> str:
    if row is None:
        return ""
    return "; example row: " + ", ".join(f"{k}={shorten(v)}" for k, v in row.items())


def _raise_if_bad(
    messages: list[str], result_columns: list[str], probes: Sequence[Probe]
) -> Callable[..., pl.DataFrame]:
    def check(frame: pl.DataFrame) -> pl.DataFrame:
        for index, probe in enumerate(probes):
            prefix = f"{_PROBE_PREFIX}{index}_"
            probe.values.update(
                {
                    name.removeprefix(prefix): frame[name][0]
                    for name in frame.columns
                    if name.startswith(prefix)
                }
            )
        problems = []
        for index, message in enumerate(messages):
            count_column = f"{_GUARD_PREFIX}{index}_n"
            count = frame[count_column][0] if frame.height else 0
            if count:
                row = frame[f"{_GUARD_PREFIX}{index}_row"][0]
                problems.append(message.format(n=count) + _format_row(row))
        if problems:
            raise ValueError("invalid input:\n- " + "\n- ".join(problems))
        return frame.filter(pl.col(_ROW_MARKER).is_not_null()).select(result_columns)

    return check


@dataclass(frozen=True)
class Probe:
    """A few values computed in the query of a result, read once it has run.

    ``frame`` has one row; when the guarded query runs, :func:`guard` copies its
    columns into ``values`` (name to value). A fact the query finds on its way
    (how many users have a hit) then costs no second pass over the data.
    """

    frame: pl.LazyFrame
    values: dict[str, Any] = field(default_factory=dict)


def guard(
    result: pl.LazyFrame,
    checked: Sequence[tuple[pl.LazyFrame, Sequence[DataCheck]]],
    *,
    probes: Sequence[Probe] = (),
) -> pl.LazyFrame:
    """Return ``result`` with the data checks attached; it raises when collected if one fails.

    Each ``(frame, checks)`` pair reduces ``frame`` to one row of counts and
    example rows. These rows are set beside the result, a function that sees
    only that small frame raises ``ValueError`` with every failed check, and
    otherwise hands the result back unchanged. Nothing is collected here.

    Where every check of a pair has a screen, the counts and examples are
    computed on the rows of ``frame`` only when one of the screens fires:
    valid input, the usual case, pays for the screens alone.

    ``probes``: one-row frames whose values are handed back (:class:`Probe`).
    """
    checked = [(frame, list(checks)) for frame, checks in checked if checks]
    if not checked and not probes:
        return result
    messages: list[str] = []
    summaries: list[pl.LazyFrame] = []
    for frame, checks in checked:
        summaries.append(summary(frame, checks, first_index=len(messages)))
        messages.extend(check.message for check in checks)
    schema = result.collect_schema()
    marked = result.with_columns(pl.lit(value=True).alias(_ROW_MARKER))
    for index, probe in enumerate(probes):
        summaries.append(probe.frame.select(pl.all().name.prefix(f"{_PROBE_PREFIX}{index}_")))
    combined = pl.concat([marked, *summaries], how="horizontal_extend")
    return combined.map_batches(
        _raise_if_bad(messages, list(schema.names()), probes),
        schema=dict(schema),
        predicate_pushdown=False,
        projection_pushdown=False,
    )


def null_checks(
    frame: str,
    columns: Mapping[str, str],
    *,
    in_memory: bool = False,
    show: Sequence[str] | None = None,
) -> list[DataCheck]:
    """One check per column: no nulls allowed in ``columns`` (role -> name).

    With ``in_memory`` each has a screen: a column in memory knows its null
    count without a look at its values. ``show``: the example row's columns
    (default: ``columns``).
    """
    show = tuple(dict.fromkeys(columns.values() if show is None else show))
    return [
        DataCheck(
            bad=pl.col(name).is_null(),
            message=f"{frame} column {shorten(name)} ({role}) has {{n}} null value(s)",
            show=show,
            screen=pl.col(name).null_count() > 0 if in_memory else None,
            row_wise=True,
        )
        for role, name in columns.items()
    ]


def nan_check(
    frame: str, column: str, role: str, show: Sequence[str], *, in_memory: bool = False
) -> DataCheck:
    """Floats must not be NaN: NaN cannot be ordered or summed meaningfully.

    With ``in_memory`` a screen (any NaN at all) gates the search for the rows.
    """
    nan = pl.col(column).cast(pl.Float64).is_nan()
    return DataCheck(
        bad=nan,
        message=f"{frame} column {shorten(column)} ({role}) has {{n}} NaN value(s)",
        show=tuple(show),
        screen=nan.any() if in_memory else None,
        row_wise=True,
    )


def duplicate_check(
    frame: str, keys: Sequence[str], show: Sequence[str], hint: str, *, in_memory: bool = False
) -> DataCheck:
    """Each combination of ``keys`` may occur once.

    The screen looks for a repeat among 64-bit hashes of the keys, several
    times cheaper than finding the repeated rows: when no hash repeats no key
    does. With ``in_memory`` (the frame's rows are in memory already) the
    screen sorts the whole hash column at once, which on 10 million rows
    takes about half the time of the streaming engine's count of distinct
    values. On a lazy scan only that count is used: it streams (partial
    counts are merged), where a function of the whole column would make the
    engine hold every row first.

    The exact search (``bad``: a struct of the keys, repeated) then runs, in
    memory, only on the rows whose hash repeats (the check's ``search``): the
    sort that screens also yields the repeated hashes, usually none. Equal
    keys hash alike, so every repeated row is among those rows, with all its
    repeats, and the count and the first example are those of the whole
    frame; a hash collision of distinct keys only adds rows that the exact
    search clears. ``bad`` may be replaced by a condition on repeats of
    ``keys`` plus more columns (see
    :func:`polars_rankmetrics._pipeline.checks.position_check`): such rows repeat
    ``keys`` too, so the search keeps them. On a lazy scan the search keeps,
    behind the streaming screen, the rows whose hash is repeated
    (``is_duplicated`` of the hash column, one pass over the same rows: a
    join of the repeated hashes back to the rows read the frame twice and
    made the engine compute the hit rows' join again). A refusal then costs
    1.1x a clean lazy call with a repeated relevant item, 1.4x with a
    repeated truth row (10M rows; the exact search over every row: 1.5x and
    2.5x).
    """
    hashes = _key_hash(keys)
    # a null key is refused by its own check (the null checks; float_key_check for a
    # float id that is no whole number, which the key's cast made null): its repeats
    # are no rows of the user's, so the search leaves them out
    known = pl.all_horizontal(pl.col(key).is_not_null() for key in keys)
    if not in_memory:
        repeats = pl.len() > hashes.n_unique()

        def lazy_search(rows: pl.LazyFrame) -> pl.LazyFrame:
            return rows.filter(repeats).filter(hashes.is_duplicated() & known)

        return DataCheck(
            bad=pl.struct(list(keys)).is_duplicated(),
            message=f"{frame} has {{n}} rows with a duplicated ({', '.join(keys)}){hint}",
            show=tuple(show),
            screen=repeats,
            search=lazy_search,
        )

    def search(rows: pl.LazyFrame) -> pl.LazyFrame:
        repeated = hashes.map_batches(_repeated_hash_rows, return_dtype=pl.Boolean)
        return rows.filter(repeated & known)

    return DataCheck(
        bad=pl.struct(list(keys)).is_duplicated(),
        message=f"{frame} has {{n}} rows with a duplicated ({', '.join(keys)}){hint}",
        show=tuple(show),
        screen=hashes.map_batches(_has_repeat, return_dtype=pl.Boolean, returns_scalar=True),
        search=search,
    )


def may_repeat(keys: Sequence[str]) -> pl.Expr:
    """True on every row whose ``keys`` occur more than once, and on few others.

    The rows whose 64-bit hash of ``keys`` repeats: one sort of the hashes
    (usually no neighbours are equal, and then nothing else is done). Equal
    keys hash alike, so every repeated row is marked; a collision of distinct
    keys marks rows whose keys do not repeat, which the caller must treat
    exactly. The whole column is read at once: for a frame in memory (or
    held, as the top k+1 of each list are).

    Examples
    --------
    >>> frame = pl.DataFrame({"user": [1, 1, 2, 1], "score": [0.5, 0.4, 0.5, 0.5]})
    >>> frame.select(may_repeat(["user", "score"])).to_series().to_list()
    [True, False, False, True]
    """
    return _key_hash(keys).map_batches(_repeated_hash_rows, return_dtype=pl.Boolean)


def _key_hash(keys: Sequence[str]) -> pl.Expr:
    # one hash per column, mixed by xor; distinct seeds keep (a, b) and (b, a) apart
    hashes = [pl.col(name).hash(seed=17 + 31 * position) for position, name in enumerate(keys)]
    mixed = hashes[0]
    for other in hashes[1:]:
        mixed = mixed ^ other
    return mixed


def _sorted_hashes(hashes: pl.Series) -> npt.NDArray[np.uint64]:
    # NumPy's sort of 64-bit integers is vectorised: on 18M hashes 0.18 s on one core, where
    # Polars' sort took 0.29 s on two
    return np.sort(hashes.to_numpy())


def _has_repeat(hashes: pl.Series) -> bool:
    # one sort and a comparison of neighbours
    ordered = _sorted_hashes(hashes)
    return bool(np.any(ordered[1:] == ordered[:-1]))


def _repeated_hash_rows(hashes: pl.Series) -> pl.Series:
    # true on the rows whose hash occurs more than once: one sort, and only when some
    # neighbours are equal (a repeat) a look-up of the few repeated values
    ordered = _sorted_hashes(hashes)
    same = ordered[1:] == ordered[:-1]
    if not same.any():
        return pl.repeat(value=False, n=len(hashes), eager=True)
    repeated = pl.Series(np.unique(ordered[1:][same]), dtype=hashes.dtype)
    return hashes.is_in(repeated.implode())
