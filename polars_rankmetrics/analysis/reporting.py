"""``report``: a comparison as a table for a paper or a pull request.

Reads the frame of :func:`polars_rankmetrics.compare` (or
:func:`polars_rankmetrics.compare_per_user`): one row per system (and group),
one column per metric, each cell the mean with its interval and a mark where
the difference is significant. Markdown, LaTeX and HTML strings; in a
notebook the :class:`Report` object shows itself as a table.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass
from typing import Any, Literal

import polars as pl

from polars_rankmetrics._frames import collected, read

__all__ = ["Report", "report"]

Format = Literal["markdown", "latex", "html", "csv", "json"]
FORMATS: tuple[Format, ...] = ("markdown", "latex", "html", "csv", "json")

_ABOVE, _BELOW = "†", "‡"
# a metric with no declared direction is marked by value: above or below, not better or worse
_HIGHER, _LOWER = "↑", "↓"
_LATEX_MARKS = {
    _ABOVE: r"\textsuperscript{\dag}",
    _BELOW: r"\textsuperscript{\ddag}",
    _HIGHER: r"\textsuperscript{$\uparrow$}",
    _LOWER: r"\textsuperscript{$\downarrow$}",
}
_REQUIRED = ("system", "metric", "n", "mean", "ci_low", "ci_high", "diff", "significant")


@dataclass(frozen=True)
class Report:
    """A comparison as a systems x metrics table, with its legend.

    Attributes
    ----------
    header
        Column titles: the ``by`` columns, ``system``, then one per metric.
    rows
        Cell texts, one list per (group, system), in the comparison's order.
    marks
        Per row, per metric: the significance mark of the cell (``""``, ``"†"``
        significantly better, ``"‡"`` significantly worse, ``"↑"``/``"↓"``
        significantly above/below for a metric without a declared direction,
        or the letters of the systems it is significantly better than).
    legend
        One sentence that says what the cells and the marks mean.
    comparison
        The frame the report was made from.
    """

    header: list[str]
    rows: list[list[str]]
    marks: list[list[str]]
    legend: str
    comparison: pl.DataFrame

    def to_markdown(self) -> str:
        """The table in GitHub Markdown, the legend below it."""
        cells = [
            [*row[: self._first_metric], *self._marked(index, "text")]
            for index, row in enumerate(self.rows)
        ]
        lines = [
            "| " + " | ".join(_markdown_escape(title) for title in self.header) + " |",
            "|" + "|".join(
                "---" if column < self._first_metric else "---:"
                for column in range(len(self.header))
            ) + "|",
        ]  # fmt: skip
        lines += ["| " + " | ".join(_markdown_escape(c) for c in row) + " |" for row in cells]
        return "\n".join(lines) + "\n\n" + self.legend

    def to_latex(self) -> str:
        """A ``booktabs`` tabular with the legend as a comment-free note below it."""
        columns = "l" * self._first_metric + "r" * (len(self.header) - self._first_metric)
        lines = [
            rf"\begin{{tabular}}{{{columns}}}",
            r"\toprule",
            " & ".join(_latex_escape(title) for title in self.header) + r" \\",
            r"\midrule",
        ]
        for index, row in enumerate(self.rows):
            keys = [_latex_escape(cell) for cell in row[: self._first_metric]]
            lines.append(" & ".join([*keys, *self._marked(index, "latex")]) + r" \\")
        lines += [r"\bottomrule", r"\end{tabular}"]
        legend = self.legend
        for mark in _LATEX_MARKS:
            legend = legend.replace(mark, "MARK" + str(ord(mark)))
        legend = _latex_escape(legend)
        for mark, command in _LATEX_MARKS.items():
            legend = legend.replace("MARK" + str(ord(mark)), command)
        return "\n".join(lines) + "\n\n" + legend

    def to_html(self) -> str:
        """An HTML table with the legend in its caption."""
        head = "".join(f"<th>{html.escape(title)}</th>" for title in self.header)
        body = []
        for index, row in enumerate(self.rows):
            keys = row[: self._first_metric]
            cells = [f"<td>{html.escape(cell)}</td>" for cell in keys]
            cells += [
                f'<td style="text-align:right">{html.escape(cell)}'
                + (f"<sup>{html.escape(mark)}</sup>" if mark else "")
                + "</td>"
                for cell, mark in zip(row[self._first_metric :], self.marks[index], strict=True)
            ]
            body.append("<tr>" + "".join(cells) + "</tr>")
        return (
            f"<table><caption>{html.escape(self.legend)}</caption>"
            f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
        )

    def _repr_markdown_(self) -> str:
        return self.to_markdown()

    def _repr_html_(self) -> str:
        return self.to_html()

    def __str__(self) -> str:
        return self.to_markdown()

    @property
    def _first_metric(self) -> int:
        # the key columns (by..., system) come before the metrics
        return len(self.header) - (len(self.marks[0]) if self.marks else 0)

    def _marked(self, index: int, kind: str) -> list[str]:
        cells = self.rows[index][self._first_metric :]
        marks = self.marks[index]
        if kind == "latex":
            return [
                _latex_escape(cell) + _LATEX_MARKS.get(mark, _latex_letters(mark))
                for cell, mark in zip(cells, marks, strict=True)
            ]
        return [
            cell + (mark if mark in _LATEX_MARKS or not mark else f"<sup>{mark}</sup>")
            for cell, mark in zip(cells, marks, strict=True)
        ]


def _letters(index: int) -> str:
    """The label of the system at ``index``: a, b, ..., z, aa, ab, ... (never a symbol)."""
    label = ""
    index += 1
    while index:
        index, remainder = divmod(index - 1, 26)
        label = chr(ord("a") + remainder) + label
    return label


def _latex_letters(mark: str) -> str:
    return rf"\textsuperscript{{{mark}}}" if mark else ""


def _markdown_escape(text: str) -> str:
    return text.replace("|", r"\|")


def _latex_escape(text: str) -> str:
    replacements = {
        "\\": r"\textbackslash{}",
        "&": r"\&",
        "%": r"\%",
        "$": r"\$",
        "#": r"\#",
        "_": r"\_",
        "{": r"\{",
        "}": r"\}",
        "~": r"\textasciitilde{}",
        "^": r"\textasciicircum{}",
        # in text mode the OT1 font prints < and > as inverted ! and ?
        "<": r"\textless{}",
        ">": r"\textgreater{}",
    }
    return "".join(replacements.get(char, char) for char in text)


def _number(value: float | None, digits: int) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value:.{digits}f}"


def report(
    comparison: Any,
    *,
    format: Format | None = None,
    digits: int = 3,
    intervals: bool = True,
) -> Report | str:
    """A comparison as a table: systems x metrics, mean [interval], significance marks.

    Parameters
    ----------
    comparison
        The frame of :func:`polars_rankmetrics.compare` or
        :func:`polars_rankmetrics.compare_per_user` (any frame: Polars,
        pandas, Arrow).
    format
        ``None``: a :class:`Report` (shown as a table in a notebook; its
        ``to_markdown``, ``to_latex``, ``to_html`` give strings).
        ``"markdown"``, ``"latex"``, ``"html"``: that string. ``"csv"``,
        ``"json"``: the comparison frame itself in that format.
    digits
        Decimals of the means and intervals.
    intervals
        Show ``[ci_low, ci_high]`` after each mean.

    Returns
    -------
    A :class:`Report`, or a string when ``format`` is given.

    Notes
    -----
    Against a baseline, a cell is marked † when the system is significantly
    better than the baseline, ‡ when significantly worse (``significant`` of
    the comparison: adjusted p < alpha), better by the metric's direction
    (the comparison's ``direction`` column: a lower ``fallout@10`` or
    ``mean_rank`` is better). A metric without a declared direction is marked
    by value instead, ↑ significantly above and ↓ below. For every pair
    (``baseline=None``) the systems get letters a, b, c... in the order of
    the table, and a cell carries the letters of the systems it is
    significantly better than (above, without a direction). Means and
    intervals are those of the system's own row in the comparison (against a
    baseline: over the users paired with it). With a one-sided or
    equivalence ``hypothesis``, † marks the systems shown superior,
    non-inferior or equivalent (there is no ‡). The legend states which way
    is better for each metric and how the comparison was made, from the
    comparison's method columns: the interval's level and method, the test
    and its sides (and margin), the correction, alpha and the resamples, and n.

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankmetrics as prm
    >>> scores = pl.DataFrame({
    ...     "model": ["bm25"] * 5 + ["neural"] * 5,
    ...     "user": [1, 2, 3, 4, 5] * 2,
    ...     "ap": [0.1, 0.2, 0.3, 0.2, 0.1, 0.5, 0.7, 0.6, 0.6, 0.5],
    ... })
    >>> cmp = prm.compare_per_user(scores, baseline="bm25")
    >>> print(prm.report(cmp, format="markdown"))
    | system | ap |
    |---|---:|
    | bm25 | 0.180 [0.076, 0.284] |
    | neural | 0.580 [0.476, 0.684]† |
    <BLANKLINE>
    Mean [95% t-interval] over 5 users. † significantly better than bm25, ‡ significantly
    worse; higher is better: ap (paired t-test, two-sided; Holm-adjusted p < 0.05).
    """
    if format is not None and format not in FORMATS:
        raise ValueError(f"unknown format {format!r}: use one of {list(FORMATS)} or None")
    if isinstance(digits, bool) or not isinstance(digits, int) or digits < 0:
        raise ValueError(f"digits must be a non-negative integer, got {digits!r}")
    frame = _as_polars(comparison)
    if format == "csv":
        return frame.write_csv()
    if format == "json":
        return frame.write_json()
    built = _build(frame, digits=digits, intervals=intervals)
    if format == "markdown":
        return built.to_markdown()
    if format == "latex":
        return built.to_latex()
    if format == "html":
        return built.to_html()
    return built


def _as_polars(comparison: Any) -> pl.DataFrame:
    frame = collected(read(comparison, name="comparison (the frame of prm.compare)"))
    missing = [name for name in _REQUIRED if name not in frame.columns]
    if missing:
        raise ValueError(
            f"report needs the frame of prm.compare(...): column(s) {missing} are missing; "
            f"columns are {frame.columns}"
        )
    return frame


def _build(frame: pl.DataFrame, *, digits: int, intervals: bool) -> Report:
    method = _Method.of(frame)
    pairs = "baseline" in frame.columns
    position = frame.columns.index("system")
    by = frame.columns[:position]
    metrics = frame.get_column("metric").unique(maintain_order=True).to_list()
    own = frame.filter(pl.col("baseline").is_null()) if pairs else frame
    systems_in_order = own.get_column("system").unique(maintain_order=True).to_list()
    letters = {name: _letters(index) for index, name in enumerate(systems_in_order)}
    # one n for every cell: the legend says it; else each cell says its own
    same_n = own.get_column("n").n_unique() <= 1
    cells: dict[tuple[Any, ...], dict[str, str]] = {}
    marks: dict[tuple[Any, ...], dict[str, str]] = {}
    directions = _directions(frame)
    for row in own.iter_rows(named=True):
        key = (*(row[name] for name in by), row["system"])
        text = _number(row["mean"], digits)
        if intervals and row["ci_low"] is not None:
            text += f" [{_number(row['ci_low'], digits)}, {_number(row['ci_high'], digits)}]"
        if not same_n:
            text += f" (n={row['n']})"
        cells.setdefault(key, {})[row["metric"]] = text
        marks.setdefault(key, {}).setdefault(row["metric"], "")
        if not pairs and row["significant"]:
            marks[key][row["metric"]] = _mark(row, directions, directional=method.directional)
    baseline_name = None
    if pairs:
        pair_marks = _pair_marks(frame, by, letters, method.directional, directions)
        for key, by_metric in pair_marks.items():
            marks.setdefault(key, {}).update(by_metric)
    else:
        # compare puts the baseline's own row first in every (group, metric)
        baseline_name = frame.get_column("system")[0] if frame.height else None
    header = [*by, "system", *metrics]
    rows = []
    row_marks = []
    for key, values in cells.items():
        rows.append([*(str(part) for part in key), *(values.get(m, "-") for m in metrics)])
        row_marks.append([marks.get(key, {}).get(m, "") for m in metrics])
    users = "users" if not same_n or own.is_empty() else f"{own.get_column('n')[0]} users"
    interval = f" [{method.interval}]" if intervals else ""
    what = f"Mean{interval} over {users}."
    if not same_n:
        what += " n: the users of each cell."
    if pairs:
        named = ", ".join(f"{letters[name]} = {name}" for name in systems_in_order)
        sides = _sides(metrics, directions, by_value="letters mark the higher")
        legend = f"{what} Letters: {method.above('that system')}; {sides} ({method.rule}); {named}."
    else:
        legend = _baseline_legend(what, method, baseline_name, metrics, directions)
    return Report(header, rows, row_marks, legend, frame)


def _baseline_legend(
    what: str,
    method: _Method,
    baseline: Any,
    metrics: list[str],
    directions: dict[str, str | None],
) -> str:
    against = baseline if baseline is not None else "the baseline"
    marks_text = f"{_ABOVE} {method.above(against)}"
    if not method.directional:
        marks_text += f", {_BELOW} significantly worse"
    sides = _sides(metrics, directions, by_value=f"{_HIGHER}/{_LOWER} significantly above/below")
    return f"{what} {marks_text}; {sides}\n({method.rule})."


def _directions(frame: pl.DataFrame) -> dict[str, str | None]:
    """Each metric's direction, from the comparison's ``direction`` column (absent: none)."""
    if "direction" not in frame.columns:
        return {}
    found = frame.select("metric", "direction").unique(subset="metric", keep="first")
    return dict(found.iter_rows())


def _sign(metric: str, directions: dict[str, str | None]) -> float | None:
    return {"higher": 1.0, "lower": -1.0}.get(directions.get(metric) or "none")


def _mark(row: dict[str, Any], directions: dict[str, str | None], *, directional: bool) -> str:
    """The mark of a significant comparison with the baseline: better, worse, above, below."""
    if directional:  # shown superior, non-inferior or equivalent: the decision read the sign
        return _ABOVE
    sign = _sign(row["metric"], directions)
    if sign is None:
        return _HIGHER if row["diff"] > 0 else _LOWER
    return _ABOVE if sign * row["diff"] > 0 else _BELOW


def _sides(metrics: list[str], directions: dict[str, str | None], *, by_value: str) -> str:
    """Which way is better, per metric: "higher is better: ndcg@10; lower is better: fallout@10".

    ``by_value``: how the marks read a metric without a declared direction.
    """
    groups: dict[str, list[str]] = {}
    for metric in metrics:
        words = {"higher": "higher is better", "lower": "lower is better"}.get(
            directions.get(metric) or "none", f"no better side declared ({by_value})"
        )
        groups.setdefault(words, []).append(metric)
    return "; ".join(f"{words}: {', '.join(names)}" for words, names in groups.items())


_TESTS = {
    "t": "paired t-test",
    "randomization": "paired randomization test",
    "wilcoxon": "Wilcoxon signed-rank test",
    "tukey_hsd": "randomized Tukey HSD",
}
_CORRECTIONS = {
    "holm": "Holm-adjusted",
    "bonferroni": "Bonferroni-adjusted",
    "bh": "Benjamini-Hochberg-adjusted",
    "none": "unadjusted",
}


def method_words(comparison: pl.DataFrame) -> str:
    """How a comparison was made, in words (a chart's subtitle): interval, test, rule.

    >>> import polars as pl
    >>> import polars_rankmetrics as prm
    >>> scores = pl.DataFrame({"model": ["a"] * 3 + ["b"] * 3, "user": [1, 2, 3] * 2,
    ...                        "ap": [0.1, 0.2, 0.3, 0.3, 0.5, 0.4]})
    >>> for part in method_words(prm.compare_per_user(scores, baseline="a")).split("; "):
    ...     print(part)
    means and differences with 95% t-intervals
    filled: paired t-test, two-sided
    Holm-adjusted p < 0.05
    """
    method = _Method.of(comparison)
    return f"means and differences with {method.interval}s; filled: {method.rule}"


def _number_words(value: float) -> str:
    return f"{value:g}"


@dataclass(frozen=True)
class _Method:
    """What the legend says of how the comparison was made (compare's method columns)."""

    interval: str
    rule: str
    hypothesis: str
    margin: float | None

    @property
    def directional(self) -> bool:
        return self.hypothesis in ("superiority", "noninferiority", "equivalence")

    def above(self, against: str) -> str:
        if self.hypothesis == "noninferiority":
            return f"shown non-inferior to {against} (margin {_number_words(self.margin or 0)})"
        if self.hypothesis == "equivalence":
            return f"shown equivalent to {against} (within +-{_number_words(self.margin or 0)})"
        if self.hypothesis == "superiority":
            return f"shown superior to {against}"
        return f"significantly better than {against}"

    @classmethod
    def of(cls, frame: pl.DataFrame) -> _Method:
        """From the method columns; a frame without them (made by hand) gets the generic words."""

        def first(column: str) -> Any:
            if column not in frame.columns or frame.is_empty():
                return None
            return frame.get_column(column)[0]

        level, how, resamples = first("ci"), first("ci_method"), first("n_resamples")
        interval = "interval"
        if level is not None and how is not None:
            kind = "t-interval" if how == "t" else "percentile bootstrap interval"
            interval = f"{_number_words(100 * level)}% {kind}"
            if how == "bootstrap" and resamples is not None:
                interval += f", {resamples:,} resamples"
        test, hypothesis, alpha = first("test"), first("hypothesis") or "difference", first("alpha")
        correction, margin = first("correction"), first("margin")
        if test is None or alpha is None:
            return cls(interval, "adjusted p < alpha", hypothesis, margin)
        words = _TESTS.get(test, str(test))
        if test in ("randomization", "tukey_hsd") and resamples is not None:
            words += f", B = {resamples:,}"
        sides = {
            "difference": "two-sided",
            "superiority": "one-sided, H0: mean difference <= 0",
            "noninferiority": f"one-sided, H0: mean difference <= -{_number_words(margin or 0)}",
            "equivalence": f"TOST against +-{_number_words(margin or 0)}",
        }.get(hypothesis, hypothesis)
        if test == "tukey_hsd":
            adjusted = f"family-adjusted p < {_number_words(alpha)}"
        else:
            adjusted = f"{_CORRECTIONS.get(correction, str(correction))} p < {_number_words(alpha)}"
        return cls(interval, f"{words}, {sides}; {adjusted}", hypothesis, margin)


def _pair_marks(
    frame: pl.DataFrame,
    by: list[str],
    letters: dict[Any, str],
    directional: bool,
    directions: dict[str, str | None],
) -> dict[tuple[Any, ...], dict[str, str]]:
    """Every pair: per (group, system) and metric, the labels of the systems it beats.

    ``directional``: the test decided about ``system`` against ``baseline``
    (superiority, non-inferiority, equivalence), so ``system`` carries the mark.
    Otherwise the better of the two by the metric's direction does (the higher
    one where none is declared).
    """
    beaten: dict[tuple[Any, ...], dict[str, list[Any]]] = {}
    significant = frame.filter(pl.col("baseline").is_not_null() & pl.col("significant"))
    for row in significant.iter_rows(named=True):
        sign = _sign(row["metric"], directions) or 1.0
        winner, loser = (
            (row["system"], row["baseline"])
            if directional or sign * row["diff"] > 0
            else (row["baseline"], row["system"])
        )
        key = (*(row[name] for name in by), winner)
        beaten.setdefault(key, {}).setdefault(row["metric"], []).append(loser)
    marks: dict[tuple[Any, ...], dict[str, str]] = {}
    for key, by_metric in beaten.items():
        for metric, losers in by_metric.items():
            labels = [label for name, label in letters.items() if name in losers]
            # one letter each: "ab"; past z (aa, ab, ...) they need a separator
            separator = "" if all(len(label) == 1 for label in labels) else ","
            marks.setdefault(key, {})[metric] = separator.join(labels)
    return marks
