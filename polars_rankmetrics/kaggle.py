"""Kaggle-style submission and solution files: readers, competition presets, scoring.

Two layouts exist:

* **wide**: one row per id, the predictions in one space-separated field,
  e.g. ``customer_id,prediction`` / ``000058a1...,0706016001 0372860002``;
* **long**: one row per (id, prediction); the order of an id's rows is the
  rank (``SearchId,PropertyId``).

:func:`read_submission` turns either into the long ``(user, item, rank)``
frame and :func:`read_solution` into ``(user, item[, rel])``; ids stay strings
(leading zeros matter). :func:`score_submission` scores a pair of files with a
metric string (``"map@12"``) or a competition preset, which carries the
competition's published rule for which users are averaged:

* ``hm`` (H&M): MAP@12 with D = min(m, 12), over the customers with at least
  one purchase; a customer without a prediction scores 0.
* ``santander``: MAP@7 with D = min(m, 7), over every row of the solution; a
  customer without added products scores 0 (and counts).
* ``otto``: 0.10 R_clicks + 0.30 R_carts + 0.60 R_orders, each a recall@20
  pooled over sessions, sum(hits) / sum(min(20, |truth|)); predictions are
  cut at 20 before they are matched.
* ``expedia``: NDCG@38, gain 2^rel - 1 with rel 5 booked, 1 clicked, 0 else,
  over every search of the solution.
* ``airbnb``: NDCG@5, gain 2^rel - 1 (the booked country has rel 1), over
  every user of the solution.

Every preset reads a wide or a long solution (H&M's ``customer_id,article_id``
built from the transactions); ``user=`` and ``item=`` name other columns.

A prediction repeated within one id keeps its first position and the later
copy still uses up its slot (``duplicates="first"``; Kaggle's ``apk`` and
OTTO's evaluator both behave so), and a warning says how many ids repeat one;
``duplicates="error"`` refuses it. Every warning is one line per cause, in
the files' own names (:class:`SubmissionWarning`). A file with a header but
no rows and a UTF-16 or UTF-32 file are refused.
"""

from __future__ import annotations

import difflib
import io
import os
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NamedTuple, TypeAlias, cast, overload

import polars as pl

from polars_rankmetrics._frames import read
from polars_rankmetrics._kaggle_csv import (
    Cells,
    Duplicates,
    Example,
    Layout,
    Names,
    Source,
    Table,
    item_lists,
    read_cells,
    read_table,
    refuse,
)
from polars_rankmetrics._pipeline.overlap import (
    MIN_IDS,
    MIN_USER_SHARE,
    WEAK_ID_SHARE,
    IdOverlapWarning,
    key_overlap,
)
from polars_rankmetrics._sums import exact_mean, fixed_point
from polars_rankmetrics._textfiles import LINENO, FileSource, read_bytes, source_name
from polars_rankmetrics._validation import shorten
from polars_rankmetrics.evaluation import evaluate, parse_metric
from polars_rankmetrics.metrics import Denominator, Gain

__all__ = [
    "PRESETS",
    "KagglePreset",
    "SubmissionWarning",
    "read_solution",
    "read_submission",
    "score_submission",
]

Users = Literal["with_truth", "solution"]
UnknownIds = Literal["warn", "ignore", "error"]
Submission: TypeAlias = "FileSource | pl.DataFrame | pl.LazyFrame | Any"
"""A CSV file (path, bytes, open file) or a frame of any kind (Polars, pandas, Arrow)."""


def _file_or_frame(source: Submission, what: str) -> Submission:
    """A file as it is; a frame of any kind as a Polars one (the frame boundary reads it)."""
    if isinstance(source, (str, os.PathLike, bytes, io.IOBase)):
        return source
    return read(source, name=what, also="a path, bytes, an open file, or ")


class SubmissionWarning(UserWarning):
    """Something in the files that lowers the score: one warning per cause.

    Ids in one file that the other lacks, files that share (almost) no ids or
    items (leading zeros lost), item lists separated by commas, repeated
    predictions; each scored as the preset's rules say.
    """


@dataclass(frozen=True)
class KagglePreset:
    """A competition's file layout and scoring rules.

    Attributes
    ----------
    name, title
        Short key (``"hm"``) and the competition's name.
    metric
        :func:`polars_rankmetrics.evaluate` metric string, e.g. ``"map@12"``.
    user, item
        Submission header: the id column and the prediction column.
    layout
        ``"wide"`` (space-separated predictions) or ``"long"`` (row order = rank).
    solution_user, solution_item
        Accepted names of the solution's id and item columns (first match wins).
    users
        Which users the mean runs over: ``"with_truth"`` (users of the solution
        with a relevant item) or ``"solution"`` (every id of the solution).
    gain, denominator
        NDCG gain and AP denominator.
    relevance_from
        Solution columns that make the graded relevance, each with its grade:
        an item's relevance is the largest grade whose column is non-zero
        (Expedia: booked 5, clicked 1). Used when the solution has them.
    weights
        Per-type weights when the id is ``<session>_<type>`` (OTTO).
    repeats
        How the competition's scorer counts an item predicted twice for one
        id, in words (the warning about repeats quotes it).
    """

    name: str
    title: str
    metric: str
    user: str
    item: str
    layout: Literal["wide", "long"]
    solution_user: tuple[str, ...]
    solution_item: tuple[str, ...]
    users: Users = "with_truth"
    gain: Gain = "linear"
    denominator: Denominator = "min_k"
    relevance_from: tuple[tuple[str, float], ...] = ()
    weights: tuple[tuple[str, float], ...] = ()
    repeats: str = ""


# ml_metrics' apk, Kaggle's MAP@K: "if p in actual and p not in predicted[:i]", after the cut
_APK = "as Kaggle's apk scores MAP@K"
_HM = KagglePreset(
    name="hm",
    title="H&M Personalized Fashion Recommendations",
    metric="map@12",
    user="customer_id",
    item="prediction",
    layout="wide",
    solution_user=("customer_id",),
    # a long solution built from the transactions: one row per purchase
    solution_item=("prediction", "article_id"),
    # "customers that did not make any purchase during test period are excluded"
    users="with_truth",
    repeats=_APK,
)
_SANTANDER = KagglePreset(
    name="santander",
    title="Santander Product Recommendation",
    metric="map@7",
    user="ncodpers",
    item="added_products",
    layout="wide",
    solution_user=("ncodpers",),
    solution_item=("added_products",),
    # |U| counts every (customer, time point) row; with no added product AP is 0
    users="solution",
    repeats=_APK,
)
_OTTO = KagglePreset(
    name="otto",
    title="OTTO Multi-Objective Recommender System",
    metric="pooled_recall@20",
    user="session_type",
    item="labels",
    layout="wide",
    solution_user=("session_type",),
    solution_item=("labels",),
    # score = 0.10 R_clicks + 0.30 R_carts + 0.60 R_orders, each pooled over sessions
    weights=(("clicks", 0.10), ("carts", 0.30), ("orders", 0.60)),
    # the evaluator: hits = len(set(labels[:20]) & truth)
    repeats="as OTTO's evaluator counts (the set of the first 20 predictions)",
)
_EXPEDIA = KagglePreset(
    name="expedia",
    title="Personalize Expedia Hotel Searches - ICDM 2013",
    metric="ndcg@38",
    user="SearchId",
    item="PropertyId",
    layout="long",
    solution_user=("SearchId", "srch_id"),
    solution_item=("PropertyId", "prop_id"),
    # "NDCG@38 calculated per query and averaged over all queries"; 5 booked, 1 clicked
    users="solution",
    gain="exponential",
    relevance_from=(("booking_bool", 5.0), ("click_bool", 1.0)),
)
_AIRBNB = KagglePreset(
    name="airbnb",
    title="Airbnb New User Bookings",
    metric="ndcg@5",
    user="id",
    item="country",
    layout="long",
    solution_user=("id",),
    solution_item=("country", "country_destination"),
    # the booked country has relevance 1; DCG uses 2^rel - 1
    users="solution",
    gain="exponential",
)
PRESETS: dict[str, KagglePreset] = {
    preset.name: preset for preset in (_HM, _SANTANDER, _OTTO, _EXPEDIA, _AIRBNB)
}
"""The competition presets by name."""


def read_submission(
    source: FileSource,
    *,
    user: str | None = None,
    item: str | None = None,
    layout: Layout = "auto",
    duplicates: Duplicates = "first",
) -> pl.DataFrame:
    r"""Read a Kaggle submission into the long ``(user, item, rank)`` frame.

    Parameters
    ----------
    source
        Path, bytes or open file of a CSV with a header.
    user, item
        Header names of the id and prediction columns; ``None``: the first and
        the second column.
    layout
        ``"wide"``: one row per id, predictions space-separated in one field
        (rank = position in the field). ``"long"``: one row per prediction
        (rank = order of the id's rows). ``"auto"`` (default): long when an id
        repeats, else wide (the two agree when every row holds one item).
    duplicates
        An item predicted twice for one id: ``"first"`` (default) keeps the
        first copy at its position, and the repeat still uses up its slot, as
        Kaggle's ``apk`` and OTTO's evaluator count; ``"error"`` refuses it.

    Returns
    -------
    Columns ``user``, ``item`` (String, ids kept as written: leading zeros
    stay) and ``rank`` (UInt32, 1 = top), in file order. An id with an empty
    prediction has no rows.

    Raises
    ------
    ValueError
        Naming the file, the line number and the line: a missing column, a
        line with the wrong number of fields, an empty id, an id listed twice
        in the wide layout. Naming the file: a header without rows, a UTF-16
        or UTF-32 file (save it as UTF-8).

    Examples
    --------
    >>> from polars_rankmetrics.kaggle import read_submission
    >>> read_submission(b"customer_id,prediction\n0001,0706 0372 0706 0999\n0002,\n")
    shape: (3, 3)
    ┌──────┬──────┬──────┐
    │ user ┆ item ┆ rank │
    │ ---  ┆ ---  ┆ ---  │
    │ str  ┆ str  ┆ u32  │
    ╞══════╪══════╪══════╡
    │ 0001 ┆ 0706 ┆ 1    │
    │ 0001 ┆ 0372 ┆ 2    │
    │ 0001 ┆ 0999 ┆ 4    │
    └──────┴──────┴──────┘
    """
    table = read_table(
        _file_or_frame(source, "submission"),
        what="submission",
        user=user,
        item=item,
        layout=layout,
        duplicates=duplicates,
        line_numbers=False,
    )
    return table.rows.select("user", "item", "rank")


def read_solution(
    source: FileSource,
    *,
    user: str | None = None,
    item: str | None = None,
    relevance: str | None = None,
    layout: Layout = "auto",
) -> pl.DataFrame:
    r"""Read a Kaggle solution (the truth) into the long ``(user, item[, rel])`` frame.

    Parameters
    ----------
    source
        Path, bytes or open file of a CSV with a header, wide or long like a
        submission.
    user, item
        Header names of the id and item columns; ``None``: first and second.
    relevance
        Header name of a graded relevance column (long layout); ``None``:
        every listed item is relevant and no ``rel`` column is returned.
    layout
        As in :func:`read_submission`; a relevance column implies ``"long"``.

    Returns
    -------
    Columns ``user``, ``item`` (String) and, with ``relevance``, ``rel``
    (Float64). An item listed twice for an id counts once. Ids listed with no
    item have no rows: they matter only to the ``"solution"`` user rule of
    :func:`score_submission`.

    Examples
    --------
    >>> from polars_rankmetrics.kaggle import read_solution
    >>> read_solution(b"ncodpers,added_products\n15889,ind_recibo_ult1 ind_nomina_ult1\n15890,\n")
    shape: (2, 2)
    ┌───────┬─────────────────┐
    │ user  ┆ item            │
    │ ---   ┆ ---             │
    │ str   ┆ str             │
    ╞═══════╪═════════════════╡
    │ 15889 ┆ ind_recibo_ult1 │
    │ 15889 ┆ ind_nomina_ult1 │
    └───────┴─────────────────┘
    """
    table = read_table(
        _file_or_frame(source, "solution"),
        what="solution",
        user=user,
        item=item,
        layout=layout,
        duplicates="first",
        relevance=relevance,
        line_numbers=False,
    )
    columns = ["user", "item", *(["rel"] if relevance is not None else [])]
    return table.rows.select(columns)


# ---------------------------------------------------------------- scoring


def _resolve(metric: str | None, preset: str | KagglePreset | None) -> KagglePreset | None:
    if (metric is None) == (preset is None):
        raise ValueError(
            f"give exactly one of metric= (e.g. 'map@12') or preset= (one of {sorted(PRESETS)})"
        )
    if preset is None or isinstance(preset, KagglePreset):
        return preset
    if preset not in PRESETS:
        hint = difflib.get_close_matches(str(preset), list(PRESETS), n=1)
        suggestion = f"; did you mean {hint[0]!r}?" if hint else ""
        raise ValueError(f"unknown preset {preset!r}{suggestion} (known: {sorted(PRESETS)})")
    return PRESETS[preset]


@dataclass(frozen=True)
class _Side:
    """One file, as the warnings name it: its name, its column names, its distinct ids."""

    name: str
    columns: tuple[str, str]  # the file's names of its id and item columns
    ids: pl.DataFrame  # ``user``: the distinct ids
    commas: Example | None = None


def _named_column(sub: _Side, sol: _Side, index: int) -> str:
    """The column's name in both files' words: ``customer_id``, or ``SearchId/srch_id``."""
    ours, theirs = sub.columns[index], sol.columns[index]
    return ours if ours == theirs else f"{ours}/{theirs}"


def _check_ids(sub: _Side, sol: _Side, population: pl.DataFrame, unknown_ids: UnknownIds) -> int:
    """Report ids only one file has; return how many submission ids the solution lacks.

    ``population`` holds the distinct ids scored.
    """
    extra = sub.ids.join(sol.ids, on="user", how="anti")["user"]
    absent = population.join(sub.ids, on="user", how="anti")["user"]
    _report_ids(sub, sol, extra, absent, unknown_ids)
    return extra.len()


def _report_ids(
    sub: _Side, sol: _Side, extra: pl.Series, absent: pl.Series, unknown_ids: UnknownIds
) -> None:
    """Warn about (or refuse) the ids only one file has: one line for one cause.

    ``extra``: submission ids the solution lacks (ignored); ``absent``: scored
    solution ids the submission lacks (they score 0). ``unknown_ids`` says
    how: ``"warn"``, ``"ignore"`` or ``"error"``. A submission sharing
    (almost) no id with the solution (ids that lost their leading zeros, the
    wrong file) is one cause: one warning with examples and both counts,
    whatever ``unknown_ids`` says (``"error"`` refuses it).
    """
    problems = []
    if extra.len():
        problems.append(
            f"{sub.name}: {extra.len()} id(s) are not in the solution {sol.name} and are "
            f"ignored, e.g. {extra.sort().head(3).to_list()}"
        )
    if absent.len():
        problems.append(
            f"{sub.name}: {absent.len()} scored id(s) of the solution {sol.name} have no "
            f"row in the submission and score 0, e.g. {absent.sort().head(3).to_list()}"
        )
    # key_overlap's share from the counts at hand; its full report (examples, leading
    # zeros) only when it is shown
    smaller = min(sub.ids.height, sol.ids.height)
    poor = bool(smaller) and (sub.ids.height - extra.len()) / smaller < WEAK_ID_SHARE
    if poor:
        column = _named_column(sub, sol, 0)
        overlap = key_overlap(
            sub.ids.rename({"user": column}),
            sol.ids.rename({"user": column}),
            column,
            left_name=sub.name,
            right_name=sol.name,
        )
        outcome = [
            *([f"the {extra.len()} only in {sub.name} are ignored"] if extra.len() else []),
            *([f"the {absent.len()} scored of {sol.name} score 0"] if absent.len() else []),
        ]
        problems = [f"{_sentence(overlap.message)} Of the {column} ids, {' and '.join(outcome)}"]
    if problems and unknown_ids == "error":
        raise ValueError("; ".join(problems) + " (unknown_ids='error')")
    if poor or unknown_ids == "warn":
        for problem in problems:
            warnings.warn(problem, SubmissionWarning, stacklevel=5)


def _sentence(text: str) -> str:
    """``text`` ending a sentence (a question stays one)."""
    return text if text.endswith(("?", ".")) else text + "."


def _check_items(
    sub: _Side,
    sol: _Side,
    hits: int,
    scored: int,
    rows: Callable[[], tuple[pl.DataFrame, pl.DataFrame]],
) -> None:
    """Warn when the files' items cannot match: cells with commas, or (almost) no shared item.

    ``hits`` of the ``scored`` ids have a value above 0: when they are at
    least 1% of the ids (the overlap rule of :mod:`polars_rankmetrics._pipeline.overlap`),
    items do match and nothing is looked at. Else ``rows()`` gives each
    file's rows (an ``item`` column) and the distinct items are compared as
    text: fewer than 10% of the smaller side's matching warns, with how many
    would match without leading zeros. Below 10 distinct items a disjoint pair
    happens by chance, and only leading zeros are worth a word.
    """
    for side in (sub, sol):
        if side.commas is not None:
            # the cause of every miss: said once, and no overlap warning for its consequence
            _warn_commas(side)
    if sub.commas is not None or sol.commas is not None:
        return
    if hits and hits >= MIN_USER_SHARE * scored:
        return
    sub_rows, sol_rows = rows()
    column = _named_column(sub, sol, 1)
    overlap = key_overlap(
        sub_rows.select(pl.col("item").alias(column)),
        sol_rows.select(pl.col("item").alias(column)),
        column,
        left_name=sub.name,
        right_name=sol.name,
    )
    found = overlap.columns[0]
    zeros = found.n_matched_without_leading_zeros > found.n_matched
    if overlap.poor and (zeros or min(found.n_left, found.n_right) >= MIN_IDS):
        message = f"{_sentence(overlap.message)} (Almost) no predicted item is in the solution"
        message = message.replace(" id(s) of ", " item(s) of ", 1)
        warnings.warn(message, SubmissionWarning, stacklevel=4)


def _warn_commas(side: _Side) -> None:
    commas = cast("Example", side.commas)
    user, item = side.columns
    warnings.warn(
        f"{side.name}: {commas.count} {user} value(s) have {item!r} items separated by "
        f"commas (e.g. line {commas.lineno}: {shorten(commas.item)}); Kaggle separates "
        "them by spaces, so each such list is read as one item that matches nothing",
        SubmissionWarning,
        stacklevel=5,
    )


def _warn_repeats(
    name: str, columns: tuple[str, str], repeats: Example | None, preset: KagglePreset | None
) -> None:
    """Say once how many ids predict an item twice, and how the repeats were scored."""
    if repeats is None:
        return
    rule = f", {preset.repeats}" if preset is not None and preset.repeats else ""
    user, item = columns
    warnings.warn(
        f"{name}: {repeats.count} {user} value(s) list an item more than once in {item!r} "
        f"(e.g. line {repeats.lineno}: {shorten(repeats.item)} again for "
        f"{shorten(repeats.user)}): the first copy counts at its position and each repeat "
        f"scores nothing but uses up its slot{rule}; duplicates='error' refuses them",
        SubmissionWarning,
        stacklevel=4,
    )


def _typed(source: Source, ids: pl.DataFrame, types: list[str]) -> pl.DataFrame:
    """OTTO ids are ``<session>_<type>``: ``ids`` with a ``type`` column, refusing unknown ones."""
    user = pl.col("user")
    # literal suffix tests, no regex per id: "<at least one character>_<type>"
    kind = pl.lit(None, dtype=pl.String)
    for name in reversed(types):
        suffix = f"_{name}"
        matches = user.str.ends_with(suffix) & (user.str.len_bytes() > len(suffix))
        kind = pl.when(matches).then(pl.lit(name)).otherwise(kind)
    typed = ids.with_columns(kind.alias("type"))
    refuse(
        source,
        typed,
        pl.col("type").is_null(),
        f"the id is not '<session>_<type>' with a type in {types}",
    )
    return typed


@overload
def score_submission(
    submission: Submission,
    solution: Submission,
    metric: str | None = None,
    *,
    preset: str | KagglePreset | None = None,
    layout: Layout = "auto",
    solution_layout: Layout = "auto",
    user: str | None = None,
    item: str | None = None,
    relevance: str | None = None,
    users: Users | None = None,
    duplicates: Duplicates = "first",
    unknown_ids: UnknownIds = "warn",
    per_user: Literal[False] = False,
) -> float: ...


@overload
def score_submission(
    submission: Submission,
    solution: Submission,
    metric: str | None = None,
    *,
    preset: str | KagglePreset | None = None,
    layout: Layout = "auto",
    solution_layout: Layout = "auto",
    user: str | None = None,
    item: str | None = None,
    relevance: str | None = None,
    users: Users | None = None,
    duplicates: Duplicates = "first",
    unknown_ids: UnknownIds = "warn",
    per_user: Literal[True],
) -> pl.DataFrame: ...


def score_submission(
    submission: Submission,
    solution: Submission,
    metric: str | None = None,
    *,
    preset: str | KagglePreset | None = None,
    layout: Layout = "auto",
    solution_layout: Layout = "auto",
    user: str | None = None,
    item: str | None = None,
    relevance: str | None = None,
    users: Users | None = None,
    duplicates: Duplicates = "first",
    unknown_ids: UnknownIds = "warn",
    per_user: bool = False,
) -> float | pl.DataFrame:
    r"""Score a submission against a solution, as the leaderboard would.

    Parameters
    ----------
    submission, solution
        CSV files (path, bytes or open file) or frames of any kind (Polars
        eager or lazy, pandas, Arrow: a pyarrow Table, a DuckDB relation...)
        with the same columns as the files. The solution may be wide
        like the submission or long; for ``preset="otto"`` it may also be the
        official ``test_labels`` JSONL (``{"session": 1, "labels": {"clicks":
        5, "carts": [...], "orders": [...]}}`` per line).
    metric
        A :func:`polars_rankmetrics.evaluate` metric string (``"map@12"``,
        ``"ndcg@5"``, ``"recall@20"``); the files' first two columns are the id
        and the items. Exclusive with ``preset``.
    preset
        A competition from :data:`PRESETS` (``"hm"``, ``"santander"``,
        ``"otto"``, ``"expedia"``, ``"airbnb"``): its header names, layout,
        metric and rules.
    layout, solution_layout
        ``"auto"``, ``"wide"`` or ``"long"`` (see :func:`read_submission`).
        Every preset reads a wide or a long solution: one row per id with
        space-separated items, or one row per (id, item), such as H&M's
        ``customer_id,article_id`` built from the transactions.
    user, item
        Header names of the id and item columns, looked up first in each file;
        a file without such a column keeps the preset's names (without a
        preset: its first or second column). ``item="article"`` reads a
        solution ``customer_id,article`` beside a ``customer_id,prediction``
        submission. A name neither file has is refused.
    relevance
        Graded relevance column of a long solution (metric mode).
    users
        Which ids the mean runs over: ``"with_truth"`` (default for a metric:
        ids of the solution with a relevant item, as H&M) or ``"solution"``
        (every id of the solution, those without a relevant item scoring 0,
        as Santander). An id missing from the submission scores 0 either way.
    duplicates
        Repeated predictions for one id: ``"first"`` (default) keeps the first
        copy at its position and the repeat scores nothing but still uses up
        its slot, as Kaggle's ``apk`` scores H&M's and Santander's MAP@K and
        OTTO's evaluator its recall@20 (a warning says how many ids repeat an
        item); ``"error"`` refuses them.
    unknown_ids
        Ids that only one side has (submission ids the solution lacks are
        ignored; scored solution ids the submission lacks score 0):
        ``"warn"`` (default) with their count and examples, ``"ignore"``, or
        ``"error"`` to refuse the pair. Whatever the choice, a submission that
        shares (almost) no id with the solution is warned about.
    per_user
        ``False`` (default): the score. ``True``: a frame with one row per
        scored id and its value (``user`` and the metric; for OTTO ``user``,
        ``type``, ``hits``, ``denominator`` = min(20, \|truth\|) and
        ``recall``), sorted by ``user``.

    Returns
    -------
    The score (Float64 mean over the users, or the preset's combination), or
    with ``per_user=True`` the per-id frame.

    Raises
    ------
    ValueError
        Naming the file: a file with a header but no rows, a UTF-16 or UTF-32
        file (save it as UTF-8), a bad line (with its number), a missing
        column.

    Warns
    -----
    SubmissionWarning
        One line per cause, in the files' own names (file and column names),
        with a count and examples: submission ids the solution lacks (they
        are ignored); solution ids the submission lacks (they score 0); files
        that share (almost) no ids or items, with how many would match without
        leading zeros (one warning for the cause, not one per consequence);
        item cells holding commas (Kaggle separates items by spaces, so each
        list is one item that matches nothing); ids that predict an item more
        than once (see ``duplicates``).

    Examples
    --------
    Customer 01 bought {B, Z} and 02 bought {A}; 03 bought nothing:

    >>> from polars_rankmetrics.kaggle import score_submission
    >>> sub = b"customer_id,prediction\n01,A B C\n02,C A\n03,A\n"
    >>> sol = b"customer_id,prediction\n01,B Z\n02,A\n03,\n"
    >>> score_submission(sub, sol, preset="hm")  # (1/2 / 2 + (1/2) / 1) / 2
    0.375
    >>> score_submission(sub, sol, "map@12", users="solution")  # 03 counts, as Santander
    0.25
    >>> score_submission(sub, sol, preset="hm", per_user=True)
    shape: (2, 2)
    ┌──────┬────────┐
    │ user ┆ map@12 │
    │ ---  ┆ ---    │
    │ str  ┆ f64    │
    ╞══════╪════════╡
    │ 01   ┆ 0.25   │
    │ 02   ┆ 0.5    │
    └──────┴────────┘
    """
    scored = _scored(
        _file_or_frame(submission, "submission"),
        _file_or_frame(solution, "solution"),
        metric,
        preset=preset,
        layout=layout,
        solution_layout=solution_layout,
        user=user,
        item=item,
        relevance=relevance,
        users=users,
        duplicates=duplicates,
        unknown_ids=unknown_ids,
    )
    return scored.table if per_user else scored.score


class _Scored(NamedTuple):
    score: float
    table: pl.DataFrame  # one row per scored id: ``user`` and the values
    user_column: str  # the submission's name of its id column (``customer_id``)


def _score(
    submission: Submission, solution: Submission, metric: str | None, **options: Any
) -> tuple[float, pl.DataFrame]:
    """The score and the per-id table of :func:`score_submission`, from one evaluation."""
    scored = _scored(submission, solution, metric, **options)
    return scored.score, scored.table


def _names(named: str | None, preset: tuple[str, ...] | str | None) -> Names:
    """The header names to look for: ``named`` first, then the preset's (or the position)."""
    if named is None:
        return preset
    if preset is None:
        return (named, None)
    return (named, *((preset,) if isinstance(preset, str) else preset))


def _check_named(role: str, named: str | None, index: int, *files: Table | Cells) -> None:
    """Refuse a column name (``user=``, ``item=``) that no file has."""
    if named is None or any(file.columns[index] == named for file in files):
        return
    where = " nor ".join(f"{file.source.name} (columns {list(file.header)})" for file in files)
    raise ValueError(f"neither {where} has a column {named!r} ({role}={named!r})")


def _scored(
    submission: Submission,
    solution: Submission,
    metric: str | None,
    *,
    preset: str | KagglePreset | None,
    layout: Layout = "auto",
    solution_layout: Layout = "auto",
    user: str | None = None,
    item: str | None = None,
    relevance: str | None = None,
    users: Users | None = None,
    duplicates: Duplicates = "first",
    unknown_ids: UnknownIds = "warn",
) -> _Scored:
    """The score and the per-id table of :func:`score_submission`, from one evaluation.

    The score is derived from the per-id values (their mean, or OTTO's pooled
    sums), so ``rankmetrics kaggle --per-user`` evaluates once.
    """
    chosen = _resolve(metric, preset)
    spec = parse_metric(chosen.metric if chosen else str(metric))
    if unknown_ids not in ("warn", "ignore", "error"):
        raise ValueError(f"unknown_ids must be 'warn', 'ignore' or 'error', got {unknown_ids!r}")
    if chosen is not None and chosen.weights:
        return _score_by_type(
            submission,
            solution,
            chosen,
            spec.k or 20,
            solution_layout=solution_layout,
            user=user,
            item=item,
            relevance=relevance,
            duplicates=duplicates,
            unknown_ids=unknown_ids,
        )
    sub = read_table(
        submission,
        what="submission",
        user=_names(user, chosen.user if chosen else None),
        item=_names(item, chosen.item if chosen else None),
        layout=chosen.layout if chosen else layout,
        duplicates=duplicates,
    )
    sol = read_table(
        solution,
        what="solution",
        user=_names(user, chosen.solution_user if chosen else None),
        item=_names(item, chosen.solution_item if chosen else None),
        layout=solution_layout,
        duplicates="first",
        relevance=relevance,
        relevance_from=chosen.relevance_from if chosen else (),
    )
    _check_named("user", user, 0, sub, sol)
    _check_named("item", item, 1, sub, sol)
    rule = users or (chosen.users if chosen else "with_truth")
    if rule not in ("with_truth", "solution"):
        raise ValueError(f"users must be 'with_truth' or 'solution', got {rule!r}")
    truth = _truth(sol)
    if rule == "solution":
        population = sol.ids.select("user").unique()
    else:
        population = _relevant(truth).select("user").unique()
    if population.height == 0:
        raise ValueError(f"{sol.name}: no id to average over under users={rule!r}")
    sub_side = _Side(sub.name, sub.columns, sub.ids.select("user").unique(), sub.commas)
    sol_side = _Side(sol.name, sol.columns, sol.ids.select("user").unique(), sol.commas)
    extra = _check_ids(sub_side, sol_side, population, unknown_ids)
    recs = sub.rows
    if extra:
        # filter on line numbers (integers): cheaper than joining every row on its id
        known = sub.ids.join(sol_side.ids, on="user", how="semi")[LINENO]
        recs = recs.filter(pl.col(LINENO).is_in(known.implode()))
    with warnings.catch_warnings():
        # the checks here speak of the two files in their own words (evaluate's of recs/truth)
        warnings.simplefilter("ignore", IdOverlapWarning)
        scored = evaluate(
            recs.drop(LINENO),
            truth,
            spec.label,
            relevance="rel" if "rel" in truth.columns else None,
            per_user=True,
            gain=chosen.gain if chosen else "linear",
            denominator=chosen.denominator if chosen else "min_k",
        )
    # users the evaluation leaves out (no relevant item, no prediction) score 0 here
    table = (
        population.join(scored, on="user", how="left")
        .select("user", pl.col(spec.label).fill_null(0.0))
        .sort("user")
    )
    hits = table.select((pl.col(spec.label) > 0).sum()).item()
    _check_items(sub_side, sol_side, hits, table.height, lambda: (sub.rows, sol.rows))
    _warn_repeats(sub.name, sub.columns, sub.repeats, chosen)
    mean = table.with_columns(fixed_point([spec.label])).select(exact_mean(spec.label))
    return _Scored(float(mean.item()), table, sub.columns[0])


def _truth(sol: Table) -> pl.DataFrame:
    return sol.rows.select("user", "item", *(["rel"] if "rel" in sol.rows.columns else []))


def _relevant(truth: pl.DataFrame) -> pl.DataFrame:
    return truth.filter(pl.col("rel") > 0) if "rel" in truth.columns else truth


def _score_by_type(
    submission: Submission,
    solution: Submission,
    preset: KagglePreset,
    k: int,
    *,
    solution_layout: Layout,
    user: str | None,
    item: str | None,
    relevance: str | None,
    duplicates: Duplicates,
    unknown_ids: UnknownIds,
) -> _Scored:
    """OTTO: recall@k pooled over the sessions of each type, then the weighted sum.

    Pooled recall@k is sum(hits) / sum(min(k, |truth|)) over the sessions of a
    type: these two sums, and no mean of per-session ratios. Each side stays
    one row per id with its items as a list (``str.split``, nothing exploded):
    the hits of a session are the distinct items its top ``k`` shares with its
    truth, a set intersection of two short lists. One join of the two files'
    ids pairs the rows and finds the ids only one side has.
    """
    types = [name for name, _ in preset.weights]
    sub_cells = read_cells(
        submission,
        what="submission",
        user=_names(user, preset.user),
        item=_names(item, preset.item),
        layout=preset.layout,
        duplicates=duplicates,
    )
    sub = _Side(sub_cells.source.name, sub_cells.columns, pl.DataFrame(), sub_cells.commas)
    # the top k with repeats keeping their slot, as OTTO's evaluator cuts before matching
    predicted = item_lists(sub_cells, k)
    if _is_jsonl(solution):
        sol_name, listed = _read_otto_labels(cast("FileSource", solution), types)
        _check_named("user", user, 0, sub_cells)
        _check_named("item", item, 1, sub_cells)
        sol = _Side(sol_name, (preset.user, preset.item), pl.DataFrame())
        _typed(sub_cells.source, predicted.select(LINENO, "user"), types)
    else:
        sol_cells = read_cells(
            solution,
            what="solution",
            user=_names(user, preset.solution_user),
            item=_names(item, preset.solution_item),
            layout=solution_layout,
            duplicates="first",
            relevance=relevance,
            relevance_from=preset.relevance_from,
        )
        _check_named("user", user, 0, sub_cells, sol_cells)
        _check_named("item", item, 1, sub_cells, sol_cells)
        sol = _Side(sol_cells.source.name, sol_cells.columns, pl.DataFrame(), sol_cells.commas)
        _typed(sub_cells.source, predicted.select(LINENO, "user"), types)
        sol_ids = _typed(sol_cells.source, sol_cells.data.select(LINENO, "user"), types)
        listed = item_lists(sol_cells)
        if sol_cells.wide:
            listed = listed.with_columns(sol_ids["type"])
        else:
            kinds = sol_ids.select("user", "type").unique("user", keep="first")
            listed = listed.join(kinds, on="user", how="left", maintain_order="left")
    # listed: one row per distinct solution id (user, type, items); predicted: one row per
    # distinct submission id (wide ids never repeat)
    pairs = (
        listed.select("user", pl.int_range(pl.len(), dtype=pl.UInt32).alias("__s"))
        .join(
            predicted.select("user", pl.int_range(pl.len(), dtype=pl.UInt32).alias("__p")),
            on="user",
            how="full",
            coalesce=True,
        )
        .sort("__s", nulls_last=True)
    )
    n_sol = listed.height
    extra = pairs["user"].slice(n_sol).drop_nulls()
    truth = listed.with_columns(pairs["__p"].head(n_sol)).filter(pl.col("items").list.len() > 0)
    _report_ids(
        _Side(sub.name, sub.columns, predicted.select("user")),
        _Side(sol.name, sol.columns, listed.select("user")),
        extra,
        truth.filter(pl.col("__p").is_null())["user"],
        unknown_ids,
    )
    hits = pl.col("__predicted").list.set_intersection(pl.col("items")).list.len().fill_null(0)
    denominator = pl.min_horizontal(pl.col("items").list.n_unique(), pl.lit(k))
    table = (
        truth.with_columns(predicted["items"].gather(truth["__p"]).alias("__predicted"))
        .select(
            "user",
            "type",
            hits.cast(pl.UInt32).alias("hits"),
            denominator.cast(pl.UInt32).alias("denominator"),
        )
        .with_columns((pl.col("hits") / pl.col("denominator")).alias("recall"))
        .sort("user")
    )

    def rows() -> tuple[pl.DataFrame, pl.DataFrame]:
        # only when (almost) no session has a hit: the lists exploded
        item = pl.col("items").explode().drop_nulls().alias("item")
        return predicted.select(item), listed.select(item)

    _check_items(sub, sol, table.select((pl.col("hits") > 0).sum()).item(), table.height, rows)
    listed_items = pl.col("items")
    repeated = predicted.filter(listed_items.list.n_unique() < listed_items.list.len())
    if repeated.height:
        lineno, session, items = repeated.sort(LINENO).select(LINENO, "user", "items").row(0)
        twice = next(i for n, i in enumerate(items) if i in items[:n])
        example = Example(repeated.height, lineno, session, twice)
        _warn_repeats(sub.name, sub.columns, example, preset)
    pooled = table.group_by("type").agg(pl.col("hits").sum() / pl.col("denominator").sum())
    recalls = dict(pooled.iter_rows())
    score = float(sum(weight * (recalls.get(name) or 0.0) for name, weight in preset.weights))
    return _Scored(score, table, sub.columns[0])


def _is_jsonl(source: Submission) -> bool:
    """Whether a solution is JSON lines (the OTTO labels), from its first non-blank byte."""
    if isinstance(source, bytes):
        return source.lstrip()[:1] == b"{"
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if path.suffix.lower() in (".jsonl", ".ndjson", ".json"):
            return True
        if path.is_file():
            with path.open("rb") as file:
                return file.read(256).lstrip()[:1] == b"{"
    return False


def _read_otto_labels(source: FileSource, types: list[str]) -> tuple[str, pl.DataFrame]:
    """The official OTTO ``test_labels`` JSONL: its name and one row per id.

    An id is ``<session>_<type>`` for every session and every type the file
    has, with ``type`` and ``items`` (the labels as text, a list; null when the
    session has none of the type). Ids follow the rule of every other format: integers as their
    digits, floats holding whole numbers as those integers, other floats refused.
    """
    _, data = read_bytes(source)
    name = source_name(source, "solution")
    try:
        frame = pl.read_ndjson(data, infer_schema_length=None)
    except pl.exceptions.PolarsError as error:
        raise ValueError(f"{name}: cannot be read as JSON lines: {error}") from None
    del data
    if "session" not in frame.columns or "labels" not in frame.columns:
        raise ValueError(
            f"{name}: expected OTTO labels, one JSON object per line with 'session' and "
            f"'labels'; found keys {frame.columns}"
        )
    labels = frame.schema["labels"]
    if not isinstance(labels, pl.Struct):
        raise ValueError(f"{name}: 'labels' must be an object such as {{\"clicks\": 5}}")
    frame = frame.with_row_index(LINENO, offset=1)
    no_session = frame.filter(pl.col("session").is_null())
    if no_session.height:
        raise ValueError(
            f"{name}, line {no_session[LINENO][0]}: no 'session' "
            f"({no_session.height} line(s) without one)"
        )
    session = _json_id_text(frame, pl.col("session"), name=name, what="'session'")
    fields = {field.name: field.dtype for field in labels.fields}
    parts = []
    for kind in types:
        if kind not in fields:
            continue
        value = pl.col("labels").struct.field(kind)
        # "clicks" holds one item, "carts" and "orders" lists
        items = (value if isinstance(fields[kind], pl.List) else pl.concat_list(value)).alias("i")
        items = items.list.drop_nulls()
        text = _json_id_text(frame, items, name=name, what=f"a {kind!r} label")
        parts.append(
            frame.select(
                pl.format("{}_{}", session, pl.lit(kind)).alias("user"),
                pl.lit(kind).alias("type"),
                text.alias("items"),
            )
        )
    if not parts:
        raise ValueError(f"{name}: the labels have none of the types {types}")
    listed = pl.concat(parts)
    if listed["user"].n_unique() != listed.height:
        # a session on several lines: the union of its labels
        listed = listed.group_by("user", maintain_order=True).agg(
            pl.col("type").first(), pl.col("items").explode().drop_nulls()
        )
    return name, listed


def _json_id_text(frame: pl.DataFrame, ids: pl.Expr, *, name: str, what: str) -> pl.Expr:
    """``ids`` (a column or a list column of ``frame``) as text, by the one id rule.

    Text stays as written; integers become their digits; floats that all hold
    whole numbers (an integer column that went through a float) become those
    integers, and any other float is refused with the count and an example.
    """
    dtype = frame.select(ids).to_series().dtype
    inner = dtype.inner if isinstance(dtype, pl.List) else dtype
    if inner == pl.String:
        return ids
    target = pl.List(pl.String) if isinstance(dtype, pl.List) else pl.String()
    if not inner.is_float():
        return ids.cast(target)
    values = frame.select(ids.explode() if isinstance(dtype, pl.List) else ids).to_series()
    values = values.drop_nulls()
    whole = values.is_finite() & (values == values.floor())
    if not whole.all():
        raise ValueError(
            f"{name}: {what} holds fractional numbers ({(~whole).sum()} value(s), e.g. "
            f"{values.filter(~whole)[0]}); ids must be whole numbers or text"
        )
    integers = pl.List(pl.Int64) if isinstance(dtype, pl.List) else pl.Int64()
    return ids.cast(integers).cast(target)
