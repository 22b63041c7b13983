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
from dataclasses import dataclass
from typing import Any

import polars as pl

__all__ = [
    "DataCheck",
    "check_cutoff",
    "check_literal",
    "check_no_name_clash",
    "duplicate_check",
    "guard",
    "nan_check",
    "null_checks",
    "require_columns",
    "require_integer",
    "require_numeric",
    "unify_key_dtypes",
]

_GUARD_PREFIX = "__prm_check_"
_ROW_MARKER = "__prm_row"


def require_columns(schema: pl.Schema, columns: Mapping[str, str], *, frame: str) -> None:
    """Raise ``ValueError`` naming every role whose column ``schema`` lacks.

    ``columns`` maps a role (``"user"``, ``"score"``, ...) to the column name the
    caller asked for; the message lists the columns that do exist and suggests
    the closest name.
    """
    missing = {role: name for role, name in columns.items() if name not in schema}
    if not missing:
        return
    parts = []
    for role, name in missing.items():
        hint = difflib.get_close_matches(name, list(schema.names()), n=1)
        suggestion = f" (did you mean {hint[0]!r}?)" if hint else ""
        parts.append(f"column {name!r} for {role}={name!r}{suggestion}")
    raise ValueError(
        f"{frame} is missing {', '.join(parts)}; it has columns {list(schema.names())}. "
        f"Pass the right name with the keyword of that role, e.g. {next(iter(missing))}=..."
    )


def require_integer(schema: pl.Schema, column: str, *, frame: str, role: str) -> None:
    """Raise ``TypeError`` unless ``column`` holds integers (ranks are positions)."""
    dtype = schema[column]
    if not dtype.is_integer():
        raise TypeError(
            f"{frame} column {column!r} ({role}) must hold integer positions (1 = top), "
            f"but its dtype is {dtype}. Cast it, e.g. pl.col({column!r}).cast(pl.Int64), "
            "or pass score= to derive ranks from a score column."
        )


def require_numeric(schema: pl.Schema, column: str, *, frame: str, role: str) -> None:
    """Raise ``TypeError`` unless ``column`` is numeric (scores, relevance grades)."""
    dtype = schema[column]
    if not (dtype.is_numeric() or dtype == pl.Boolean):
        raise TypeError(
            f"{frame} column {column!r} ({role}) must be numeric, but its dtype is {dtype}."
        )


def check_cutoff(k: object, *, what: str = "k") -> int | None:
    """Return ``k`` if it is ``None`` or an integer >= 1, else raise."""
    if k is None:
        return None
    # NumPy integers are integers too (numbers.Integral); bool is not a cutoff
    if isinstance(k, bool) or not isinstance(k, numbers.Integral):
        raise TypeError(f"{what} must be a positive integer or None, got {k!r}")
    if k < 1:
        raise ValueError(f"{what} must be >= 1 (positions start at 1), got {k}")
    return int(k)


def check_literal(value: object, allowed: Sequence[str], *, name: str) -> None:
    """Raise ``ValueError`` if ``value`` is not one of ``allowed`` (suggesting the closest)."""
    if value in allowed:
        return
    hint = difflib.get_close_matches(str(value), list(allowed), n=1)
    suggestion = f"; did you mean {hint[0]!r}?" if hint else ""
    raise ValueError(f"{name} must be one of {list(allowed)}, got {value!r}{suggestion}")


def check_no_name_clash(schema: pl.Schema, names: Iterable[str], *, frame: str) -> None:
    """Raise ``ValueError`` if the output would overwrite one of the user's columns."""
    clash = [name for name in names if name in schema]
    if clash:
        raise ValueError(
            f"{frame} already has column(s) {clash}, which this step would add; "
            "rename or drop them first."
        )


def _key_family(dtype: pl.DataType) -> str:
    if dtype in (pl.String, pl.Categorical) or isinstance(dtype, (pl.Categorical, pl.Enum)):
        return "string"
    if dtype.is_integer():
        return "integer"
    return str(dtype)


def unify_key_dtypes(
    recs: pl.LazyFrame,
    truth: pl.LazyFrame,
    keys: Sequence[str],
    *,
    recs_schema: pl.Schema,
    truth_schema: pl.Schema,
) -> tuple[pl.LazyFrame, pl.LazyFrame]:
    """Cast join keys of both frames to one dtype, or refuse keys that cannot match.

    String, Categorical and Enum keys are joined as String; integers of any width
    as Int64. Anything else must have the same dtype on both sides. A string key
    against an integer key is refused: the join would find nothing and every
    score would silently be 0.
    """
    recs_casts: list[pl.Expr] = []
    truth_casts: list[pl.Expr] = []
    for key in keys:
        left, right = recs_schema[key], truth_schema[key]
        if left == right and not isinstance(left, (pl.Categorical, pl.Enum)):
            continue
        family_left, family_right = _key_family(left), _key_family(right)
        if family_left != family_right:
            raise TypeError(
                f"key column {key!r} has dtype {left} in recs but {right} in truth; "
                "these can never match, so every metric would silently be 0. Cast one "
                f"side, e.g. truth.with_columns(pl.col({key!r}).cast(pl.{left}))."
            )
        target: pl.DataType = pl.String() if family_left == "string" else pl.Int64()
        recs_casts.append(pl.col(key).cast(target))
        truth_casts.append(pl.col(key).cast(target))
    if recs_casts:
        recs = recs.with_columns(recs_casts)
        truth = truth.with_columns(truth_casts)
    return recs, truth


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
        Columns shown for the example row.
    screen
        A cheap scalar, false only when no row can be bad; the rows are then
        searched for ``bad`` ones only when some screen of their frame fires.
        Duplicate checks always have one (they need every row at once anyway).
        Row-by-row checks (nulls, NaN, ranks below 1) have one only for frames
        in memory; on a lazy scan they are counted as the rows stream by
        (``None``), since waiting for a screen would hold every row first.
    """

    bad: pl.Expr
    message: str
    show: tuple[str, ...]
    screen: pl.Expr | None = None


def _check_columns(index: int, check: DataCheck) -> list[pl.Expr]:
    # a null is its own problem (null_checks), not also a NaN or a rank below 1
    bad = check.bad.fill_null(value=False)
    # one scalar per shown column: a struct of whole columns would be built for every row
    example = [pl.col(name).filter(bad).first() for name in check.show]
    return [
        bad.sum().alias(f"{_GUARD_PREFIX}{index}_n"),
        pl.struct(example).alias(f"{_GUARD_PREFIX}{index}_row"),
    ]


def summary(
    frame: pl.LazyFrame, checks: Sequence[DataCheck], *, first_index: int = 0
) -> pl.LazyFrame:
    """One row: each check's count of bad rows and an example, searched only if screened in."""
    columns = [
        column
        for index, check in enumerate(checks, start=first_index)
        for column in _check_columns(index, check)
    ]
    screens = [check.screen for check in checks]
    if any(screen is None for screen in screens):
        return frame.select(columns)
    return frame.filter(pl.any_horizontal(screens)).select(columns)


def _format_row(row: Mapping[str, Any] | None) -> str:
    if row is None:
        return ""
    return "; example row: " + ", ".join(f"{k}={v!r}" for k, v in row.items())


def _raise_if_bad(messages: list[str], result_columns: list[str]) -> Callable[..., pl.DataFrame]:
    def check(frame: pl.DataFrame) -> pl.DataFrame:
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


def guard(
    result: pl.LazyFrame, checked: Sequence[tuple[pl.LazyFrame, Sequence[DataCheck]]]
) -> pl.LazyFrame:
    """Return ``result`` with the data checks attached; it raises when collected if one fails.

    Each ``(frame, checks)`` pair reduces ``frame`` to one row of counts and
    example rows. These rows are set beside the result, a function that sees
    only that small frame raises ``ValueError`` with every failed check, and
    otherwise hands the result back unchanged. Nothing is collected here.

    Where every check of a pair has a screen, the counts and examples are
    computed on the rows of ``frame`` only when one of the screens fires:
    valid input, the usual case, pays for the screens alone.
    """
    checked = [(frame, list(checks)) for frame, checks in checked if checks]
    if not checked:
        return result
    messages: list[str] = []
    summaries: list[pl.LazyFrame] = []
    for frame, checks in checked:
        summaries.append(summary(frame, checks, first_index=len(messages)))
        messages.extend(check.message for check in checks)
    schema = result.collect_schema()
    marked = result.with_columns(pl.lit(value=True).alias(_ROW_MARKER))
    combined = pl.concat([marked, *summaries], how="horizontal_extend")
    return combined.map_batches(
        _raise_if_bad(messages, list(schema.names())),
        schema=dict(schema),
        predicate_pushdown=False,
        projection_pushdown=False,
    )


def null_checks(
    frame: str, columns: Mapping[str, str], *, in_memory: bool = False
) -> list[DataCheck]:
    """One check per column: no nulls allowed in ``columns`` (role -> name).

    With ``in_memory`` each has a screen: a column in memory knows its null
    count without a look at its values.
    """
    show = tuple(dict.fromkeys(columns.values()))
    return [
        DataCheck(
            bad=pl.col(name).is_null(),
            message=f"{frame} column {name!r} ({role}) has {{n}} null value(s)",
            show=show,
            screen=pl.col(name).null_count() > 0 if in_memory else None,
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
        message=f"{frame} column {column!r} ({role}) has {{n}} NaN value(s)",
        show=tuple(show),
        screen=nan.any() if in_memory else None,
    )


def duplicate_check(
    frame: str, keys: Sequence[str], show: Sequence[str], hint: str, *, in_memory: bool = False
) -> DataCheck:
    """Each combination of ``keys`` may occur once.

    The screen looks for a repeat among 64-bit hashes of the keys, several
    times cheaper than finding the repeated rows: when no hash repeats no key
    does, and a hash collision only costs the exact search, which then finds
    nothing. With ``in_memory`` (the frame's rows are in memory already) the
    screen sorts the whole hash column at once, which on 10 million rows
    takes about half the time of the streaming engine's count of distinct
    values. On a lazy scan only that count is used: it streams (partial
    counts are merged), where a function of the whole column would make the
    engine hold every row first.
    """
    hashes = _key_hash(keys)
    repeats = (
        hashes.map_batches(_has_repeat, return_dtype=pl.Boolean, returns_scalar=True)
        if in_memory
        else pl.len() > hashes.n_unique()
    )
    return DataCheck(
        bad=pl.struct(list(keys)).is_duplicated(),
        message=f"{frame} has {{n}} rows with a duplicated ({', '.join(keys)}){hint}",
        show=tuple(show),
        screen=repeats,
    )


def _key_hash(keys: Sequence[str]) -> pl.Expr:
    # one hash per column, mixed by xor; distinct seeds keep (a, b) and (b, a) apart
    hashes = [pl.col(name).hash(seed=17 + 31 * position) for position, name in enumerate(keys)]
    mixed = hashes[0]
    for other in hashes[1:]:
        mixed = mixed ^ other
    return mixed


def _has_repeat(hashes: pl.Series) -> bool:
    # one sort and a comparison of neighbours
    ordered = hashes.sort()
    return bool((ordered.slice(1) == ordered.slice(0, max(len(ordered) - 1, 0))).any())
