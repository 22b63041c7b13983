"""Altair charts of the package's result frames.

Each function takes one of the package's own frames (metric curves, a
comparison of systems, per-user scores, recommendations with the training
interactions) and returns an Altair chart: restyle it with Altair's own
methods (``.properties(...)``, ``.configure_*(...)``) and save it with
``chart.save("fig.png")``, ``.svg``, ``.pdf`` or ``.html`` (PNG, SVG and PDF
go through ``vl-convert-python``).

Needs Altair and vl-convert-python: ``pip install altair vl-convert-python``
(the ``plot`` extra, ``pip install ".[plot]"`` in the repository). The frames
may be of any kind the package takes (Polars eager or lazy, pandas, Arrow);
the aggregation behind each chart runs in Polars and only the few rows drawn
reach Altair.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, cast

import polars as pl

from polars_rankmetrics._frames import collected, read
from polars_rankmetrics._measures import canonical, lookup
from polars_rankmetrics.analysis.comparison import RESULT_COLUMNS
from polars_rankmetrics.analysis.reporting import method_words

if TYPE_CHECKING:
    import altair

__all__ = [
    "plot_comparison",
    "plot_curves",
    "plot_distribution",
    "plot_long_tail",
    "plot_segments",
]

# one palette for every chart: a system keeps its colour from chart to chart (in sorted order)
_SCHEME = "tableau10"
_WIDTH = 260
_HEIGHT = 180


def _altair() -> Any:
    """Import Altair, or say which extra installs it."""
    try:
        import altair as alt  # noqa: PLC0415 (optional dependency, imported on use)
    except ImportError as exc:
        raise ImportError(
            "the plot functions need Altair and vl-convert-python: "
            "pip install altair vl-convert-python (the package's plot extra)"
        ) from exc
    return alt


def _frame(frame: Any, name: str) -> pl.DataFrame:
    """A Polars DataFrame from any frame (read by :mod:`polars_rankmetrics._frames`)."""
    return collected(read(frame, name=name))


def _require(frame: pl.DataFrame, columns: Sequence[str], name: str, example: str) -> None:
    missing = [column for column in columns if column not in frame.columns]
    if missing:
        raise ValueError(
            f"{name} has no column {', '.join(repr(c) for c in missing)} "
            f"(it has {frame.columns}, {frame.height} rows); expected e.g. {example}"
        )
    if frame.is_empty():
        raise ValueError(f"{name} has no rows: there is nothing to plot")


_PER_USER = "the per-user frame of evaluate(..., per_user=True)"


def _metric_column(frame: pl.DataFrame, metric: str, name: str) -> None:
    _require(frame, [metric], name, _PER_USER)
    if not frame.schema[metric].is_numeric():
        raise TypeError(
            f"{name} column {metric!r} must be numeric (a metric of evaluate(per_user=True)); "
            f"it is {frame.schema[metric]}"
        )


def _color(alt: Any, field: str, title: str, domain: Sequence[str], *, legend: bool = True) -> Any:
    scale = alt.Scale(scheme=_SCHEME, domain=list(domain))
    if legend:
        return alt.Color(f"{field}:N", title=title, scale=scale)
    return alt.Color(f"{field}:N", title=title, scale=scale, legend=None)


def _interval_tooltips(alt: Any) -> list[Any]:
    """The tooltips of a mean with its interval (the columns of :func:`_mean_interval`)."""
    return [
        alt.Tooltip("mean:Q", format=".4f"),
        alt.Tooltip("ci_low:Q", format=".4f"),
        alt.Tooltip("ci_high:Q", format=".4f"),
    ]


def _label(columns: Sequence[str]) -> pl.Expr:
    """One text label from several columns (``a=1 | b=x``)."""
    return pl.concat_str(
        [pl.format(f"{column}={{}}", pl.col(column)) for column in columns], separator=" | "
    )


def _systems(data: pl.DataFrame, system: str, by: str | Sequence[str] | None) -> pl.DataFrame:
    """``system`` as text, with the other ``by`` columns folded into its label."""
    others = [by] if isinstance(by, str) else list(by or [])
    _require(data, [system, *others], "per_user", "the per-user frame of evaluate(..., by=...)")
    if not others:
        return data.with_columns(pl.col(system).cast(pl.String))
    return data.with_columns(_label([system, *others]).alias(system))


def _one_value_per_group(label: str) -> bool:
    """A measure of all the lists together (coverage...), not a mean over users."""
    name = canonical(label.partition("(")[0].partition("@")[0])
    return name is not None and lookup(name).aggregation == "group"


def plot_curves(
    frame: Any,
    *,
    color: str = "model",
    metric: str = "metric",
    k: str = "k",
    value: str = "value",
    title: str | None = None,
    independent_y: bool = True,
    unit: str = "users",
) -> altair.FacetChart:
    """Metric@k curves: one line per system, one panel per metric, interval bands if present.

    Parameters
    ----------
    frame
        A curves frame: one row per (system, metric, k) with columns ``color``
        (the system), ``metric``, ``k``, ``value`` and, optionally,
        ``ci_low`` and ``ci_high`` (drawn as a band). Any other column is
        folded into the colour label (``model=knn | fold=1``). Without a
        ``color`` column (the curves of one system) each panel has one line.
    color, metric, k, value
        Column names.
    title
        Chart title; by default it names what is compared.
    independent_y
        Give each metric its own y scale (metrics such as precision and recall
        move in opposite directions with ``k``).
    unit
        What the per-user values are of, in the axis titles: ``"users"``
        (default) or, for TREC runs, ``"queries"``.

    Returns
    -------
    altair.FacetChart
        Restyle with ``.properties(...)``, save with ``.save("fig.png")``.

    Examples
    --------
    >>> import polars as pl
    >>> from polars_rankmetrics.analysis.plots import plot_curves
    >>> curves = pl.DataFrame({
    ...     "model": ["pop", "pop", "knn", "knn"], "metric": ["ndcg"] * 4,
    ...     "k": [5, 10, 5, 10], "value": [0.20, 0.24, 0.31, 0.35],
    ... })
    >>> chart = plot_curves(curves)
    >>> chart.to_dict()["spec"]["layer"][-1]["encoding"]["x"]["title"]
    'cutoff k (list length)'
    """
    alt = _altair()
    data = _frame(frame, "frame")
    _require(data, [metric, k, value], "frame", "the frame of curves(...)")
    one_system = color not in data.columns
    if one_system:
        # curves of one system (no by column): one line per metric panel
        data = data.with_columns(pl.lit(f"all {unit}").alias(color))
    extra = [c for c in data.columns if c not in {color, metric, k, value, "ci_low", "ci_high"}]
    if extra:
        data = data.with_columns(_label([color, *extra]).alias(color))
    systems = sorted(data[color].cast(pl.String).unique().to_list())
    data = data.with_columns(pl.col(color).cast(pl.String))
    x = alt.X(f"{k}:Q", title="cutoff k (list length)", axis=alt.Axis(tickMinStep=1))
    metrics = data[metric].unique(maintain_order=True).to_list()
    # coverage, gini and personalization are one value per system, not a mean over users
    groupwise = [name for name in metrics if _one_value_per_group(str(name))]
    y_title = f"mean over {unit}" if not groupwise else f"value (mean over {unit} or per system)"
    y = alt.Y(f"{value}:Q", title=y_title, scale=alt.Scale(zero=False))
    # one legend for bands and lines (a layer without a legend would drop it), drawn opaque
    colour = alt.Color(
        f"{color}:N",
        title=color,
        scale=alt.Scale(scheme=_SCHEME, domain=systems),
        legend=alt.Legend(symbolOpacity=1, symbolStrokeWidth=2),
    )
    tooltip = [color, metric, k, alt.Tooltip(f"{value}:Q", format=".4f")]
    layers = []
    has_band = {"ci_low", "ci_high"} <= set(data.columns) and data["ci_low"].null_count() < len(
        data
    )
    if has_band:
        tooltip += [
            alt.Tooltip("ci_low:Q", format=".4f", title="interval low"),
            alt.Tooltip("ci_high:Q", format=".4f", title="interval high"),
        ]
        layers.append(
            alt.Chart()
            .mark_area(opacity=0.18)
            .encode(
                x=x,
                y=alt.Y("ci_low:Q", title=y_title),
                y2="ci_high:Q",
                color=colour,
            )
        )
    layers.append(
        alt.Chart()
        .mark_line(point=True, strokeWidth=2)
        .encode(x=x, y=y, color=colour, tooltip=tooltip)
    )
    chart = (
        alt.layer(*layers, data=data)
        .properties(width=_WIDTH, height=_HEIGHT)
        .facet(
            column=alt.Column(
                f"{metric}:N", title=None, sort=metrics, header=alt.Header(labelFontSize=13)
            )
        )
        .properties(
            title=title
            or "Metrics by cutoff k"
            + ("" if one_system else f", by {color}")
            + (" (bands: confidence intervals)" if has_band else "")
        )
    )
    if independent_y:
        chart = chart.resolve_scale(y="independent")
    return cast("altair.FacetChart", chart)


def plot_comparison(
    frame: Any,
    *,
    system: str = "system",
    metric: str = "metric",
    title: str | None = None,
    unit: str = "users",
) -> altair.HConcatChart:
    """Systems side by side: each mean with its interval, and each difference from the baseline.

    Left: the mean of each metric per system with its confidence interval.
    Right: each system's difference from the baseline (the rows whose ``diff``
    is null) with its interval, a line at 0, and the significant differences
    (``significant``, after the multiple-comparison correction) filled and
    coloured. A comparison of every pair (``compare(...)`` without a baseline,
    or with a list of baselines: a ``baseline`` column) shows one row per
    pair on the right, ``system - baseline``.

    Parameters
    ----------
    frame
        A comparison frame: columns ``system``, ``metric``, ``n``, ``mean``,
        ``ci_low``, ``ci_high``, ``diff``, ``diff_ci_low``, ``diff_ci_high``,
        ``p_adjusted`` and ``significant`` (``effect_size`` and ``p_value``
        are shown in tooltips when present). Any other column (a fold, a
        segment) is folded into the row label with the metric.
    system, metric
        Column names.
    title
        Chart title; by default it names the baseline.
    unit
        What the per-user values are of, in the axis titles: ``"users"``
        (default) or, for TREC runs, ``"queries"``.

    Returns
    -------
    altair.HConcatChart

    Examples
    --------
    >>> import polars as pl
    >>> from polars_rankmetrics.analysis.plots import plot_comparison
    >>> compare = pl.DataFrame({
    ...     "system": ["pop", "knn"], "metric": ["ndcg@10"] * 2, "n": [500, 500],
    ...     "mean": [0.20, 0.25], "ci_low": [0.18, 0.23], "ci_high": [0.22, 0.27],
    ...     "diff": [None, 0.05], "diff_ci_low": [None, 0.03], "diff_ci_high": [None, 0.07],
    ...     "p_adjusted": [None, 0.001], "significant": [None, True],
    ... })
    >>> plot_comparison(compare).to_dict()["title"]["text"]
    "Systems compared with the baseline 'pop'"

    The subtitle states how the comparison was made, from the method columns
    ``compare`` writes (a frame without them, as this one, gets generic words):

    >>> plot_comparison(compare).to_dict()["title"]["subtitle"]
    'means and differences with intervals; filled: adjusted p < alpha'

    """
    alt = _altair()
    data = _frame(frame, "frame")
    needed = [
        system, metric, "n", "mean", "ci_low", "ci_high",
        "diff", "diff_ci_low", "diff_ci_high", "p_adjusted", "significant",
    ]  # fmt: skip
    _require(data, needed, "frame", "the frame of compare(...)")
    if data.schema["significant"] not in (pl.Boolean, pl.Null):
        raise TypeError(
            f"frame column 'significant' must be Boolean (adjusted p < alpha); "
            f"it is {data.schema['significant']}"
        )
    # every column compare writes is known; any other one is a group (by) column. A
    # ``baseline`` column (every pair, or a list of baselines) names each row's other system
    pairwise = "baseline" in data.columns
    known = {*needed, *RESULT_COLUMNS, "baseline"}
    extra = [c for c in data.columns if c not in known]
    data = _panels(data, system, metric, extra)
    if pairwise:
        means_data, diffs, against = _pairs(data, system, [*extra, metric])
    else:
        means_data, diffs = data, data.with_columns(_row=pl.col(system))
        baselines = data.filter(pl.col("diff").is_null())[system].unique().sort().to_list()
        against = f"from {', '.join(repr(b) for b in baselines) or '(none)'}"
    systems = sorted(data[system].unique().to_list())
    # an explicit domain keeps the rows of both panels aligned (the baseline has no difference)
    y = alt.Y(f"{system}:N", title=None, sort=systems, scale=alt.Scale(domain=systems))
    rows = diffs["_row"].unique(maintain_order=True).to_list() if pairwise else systems
    y_diff = alt.Y("_row:N", title=None, sort=rows, scale=alt.Scale(domain=rows))
    row = _panel_rows(alt, data["_panel"].unique(maintain_order=True).to_list())
    tooltip = [system, metric, *extra, "n", *_interval_tooltips(alt)]
    diff_tooltip = _difference_tooltip(alt, tooltip, data.columns, pairwise=pairwise)

    means = _means_layer(alt, y, system, systems, tooltip, unit=unit)
    verdict = alt.Color(
        "_verdict:N",
        title="difference",
        scale=alt.Scale(domain=["significant", "not significant"], range=["#111111", "#999999"]),
        legend=None,  # the fill's legend shows both: filled when significant, hollow when not
    )
    diffs = diffs.with_columns(zero=pl.lit(0.0))
    base_diff = alt.Chart().encode(y=y_diff)
    # the baseline's own row has no difference: it is labelled at 0 (pairs have no such row)
    labels = [
        base_diff.mark_text(
            text="baseline", align="left", dx=6, fontStyle="italic", color="#555555"
        )
        .encode(x="zero:Q")
        .transform_filter("!isValid(datum.diff)")
    ]
    differences = alt.layer(
        alt.Chart()
        .mark_rule(color="black", strokeDash=[4, 3])
        .encode(x=alt.X("zero:Q", title=f"difference {against} (with interval)")),
        base_diff.mark_rule(strokeWidth=2).encode(
            x="diff_ci_low:Q", x2="diff_ci_high:Q", color=verdict
        ),
        base_diff.mark_point(size=80).encode(
            x="diff:Q",
            color=verdict,
            fill=alt.Fill(
                "_verdict:N",
                title="difference",
                scale=alt.Scale(
                    domain=["significant", "not significant"], range=["#111111", "white"]
                ),
                legend=alt.Legend(symbolStrokeColor="#555555", symbolOpacity=1),
            ),
            tooltip=diff_tooltip,
        ),
        *([] if pairwise else labels),
    ).properties(width=_WIDTH, height=alt.Step(22))
    chart = alt.hconcat(
        means.facet(row=row, data=means_data).resolve_scale(x="independent"),
        differences.facet(row=row, data=diffs).resolve_scale(x="independent"),
        title=alt.TitleParams(
            title or _comparison_title(against),
            subtitle=method_words(data),
            subtitleColor="#555555",
        ),
    ).resolve_scale(color="independent")
    return cast("altair.HConcatChart", chart)


_EVERY_PAIR = "of each pair, system - other"


def _pairs(
    data: pl.DataFrame, system: str, panel: Sequence[str]
) -> tuple[pl.DataFrame, pl.DataFrame, str]:
    """The means and the differences of a comparison with a ``baseline`` column.

    Each system's mean comes from its own row (``baseline`` null; with a list
    of baselines only those have one) or else its first pair; each pair's row
    is drawn as ``system - baseline``. Also the words of the difference axis.
    """
    other = pl.col("baseline").cast(pl.String)
    means = data.sort(other.is_not_null(), maintain_order=True).unique(
        [*panel, system], keep="first", maintain_order=True
    )
    pairs = data.filter(other.is_not_null()).with_columns(
        _row=pl.format("{} - {}", pl.col(system), other)
    )
    listed = data.filter(other.is_null())[system].unique().sort().to_list()
    every = set(listed) == set(data[system].unique().to_list())
    against = _EVERY_PAIR if every else f"from {', '.join(repr(b) for b in listed)}"
    return means, pairs, against


def plot_distribution(
    per_user: Any,
    metric: str,
    *,
    system: str = "model",
    by: str | Sequence[str] | None = None,
    title: str | None = None,
    unit: str = "users",
) -> altair.HConcatChart:
    """How a metric is spread over users: the share at 0, and the non-zero values per system.

    Per-user ranking metrics pile up at 0 (no relevant item in the list), so
    a box plot of every value hides most of the picture. Left: the share of
    users at exactly 0 per system, with the mean over all users in the
    tooltip. Right: a box plot (whiskers at 1.5 IQR) of the users with a
    non-zero value, and their mean as a black tick. When no user is at 0 (a
    measure such as ``novelty@k`` never is), the share panel would be empty:
    only the box plot of every user is drawn.

    Parameters
    ----------
    per_user
        The frame of ``evaluate(..., per_user=True)``: the ``by`` columns,
        ``user``, one Float64 column per metric. Null values (users without
        relevant truth under ``users_without_truth="exclude"``) are left out.
    metric
        The metric column to show, e.g. ``"ndcg@10"``.
    system
        The column naming the systems.
    by
        Other grouping columns of ``per_user`` (a fold, a time split): each
        combination gets its own row, labelled ``model=knn | fold=1``.
        Without them, the rows of every group are pooled per system.
    title
        Chart title; by default it names the metric.
    unit
        What the per-user values are of, in the axis titles: ``"users"``
        (default) or, for TREC runs, ``"queries"``.

    Returns
    -------
    altair.HConcatChart

    Examples
    --------
    >>> import polars as pl
    >>> from polars_rankmetrics.analysis.plots import plot_distribution
    >>> per_user = pl.DataFrame({
    ...     "model": ["pop"] * 3 + ["knn"] * 3, "user": [1, 2, 3] * 2,
    ...     "ndcg@10": [0.0, 0.0, 0.5, 0.0, 0.4, 0.9],
    ... })
    >>> plot_distribution(per_user, "ndcg@10").to_dict()["title"]
    'ndcg@10 per user, by model'
    """
    alt = _altair()
    data = _frame(per_user, "per_user")
    _metric_column(data, metric, "per_user")
    data = _systems(data, system, by).filter(pl.col(metric).is_not_null())
    systems = sorted(data[system].unique().to_list())
    zeros = (
        data.group_by(system)
        .agg(
            users=pl.len(),
            at_zero=(pl.col(metric) == 0).mean(),
            n_zero=(pl.col(metric) == 0).sum(),
            mean=pl.col(metric).mean(),
        )
        .sort(system)
    )
    y = alt.Y(f"{system}:N", title=None, sort=systems)
    colour = _color(alt, system, system, systems)
    share = alt.layer(
        alt.Chart()
        .mark_bar()
        .encode(
            y=y,
            x=alt.X(
                "at_zero:Q",
                title=f"share of {unit} with {metric} = 0",
                axis=alt.Axis(format="%", values=[0, 0.25, 0.5, 0.75, 1]),
                scale=alt.Scale(domain=[0, 1]),
            ),
            color=colour,
            tooltip=[
                system,
                alt.Tooltip("users:Q", title=unit),
                "n_zero",
                alt.Tooltip("at_zero:Q", format=".1%", title="share at 0"),
                alt.Tooltip("mean:Q", format=".4f", title=f"mean {metric} (all {unit})"),
            ],
        ),
        alt.Chart()
        .mark_text(align="left", dx=4)
        .encode(y=y, x="at_zero:Q", text=alt.Text("at_zero:Q", format=".0%")),
        data=zeros,
    ).properties(width=_WIDTH * 0.7, height=alt.Step(28), title=f"{unit} at 0")
    nonzero = data.filter(pl.col(metric) != 0).select(system, metric)
    # no user at 0 at all: an all-empty share panel says nothing, so the box plot stands alone
    any_zero = bool(zeros["n_zero"].sum())
    users = f"{metric} of {unit} above 0" if any_zero else metric
    x = alt.X(f"{metric}:Q", title=users)
    boxes = alt.layer(
        alt.Chart()
        .mark_boxplot(extent=1.5, size=16, opacity=0.8)
        .encode(y=y, x=x, color=_color(alt, system, system, systems, legend=False)),
        alt.Chart()
        .mark_tick(color="black", thickness=2, size=22)
        .encode(y=y, x=alt.X(f"mean({metric}):Q", title=users)),
        data=nonzero,
    ).properties(
        width=_WIDTH * (1.3 if any_zero else 2.0),
        height=alt.Step(28),
        title=f"{unit} above 0 (tick: mean)" if any_zero else f"all {unit} (tick: mean)",
    )
    chart = alt.hconcat(
        *([share, boxes] if any_zero else [boxes]), title=title or f"{metric} per user, by {system}"
    ).resolve_scale(color="shared")
    return cast("altair.HConcatChart", chart)


def _mean_interval(metric: str, z: float) -> list[pl.Expr]:
    sem = pl.col(metric).std() / pl.len().sqrt()
    return [
        pl.len().alias("n"),
        pl.col(metric).mean().alias("mean"),
        (pl.col(metric).mean() - z * sem).alias("ci_low"),
        (pl.col(metric).mean() + z * sem).alias("ci_high"),
    ]


def plot_segments(
    per_user: Any,
    metric: str,
    segments: Any,
    *,
    segment: str = "segment",
    system: str = "model",
    by: str | Sequence[str] | None = None,
    user: str = "user",
    order: Sequence[str] | None = None,
    confidence: float = 0.95,
    title: str | None = None,
) -> altair.LayerChart:
    """A metric by user segment: each system's mean per segment with its confidence interval.

    The interval is the normal one, ``mean ± z * sd / sqrt(n)`` over the
    users of the segment (``z`` = 1.96 for 95%); each segment's label gives
    its number of users.

    Parameters
    ----------
    per_user
        The frame of ``evaluate(..., per_user=True)``.
    metric
        The metric column, e.g. ``"ndcg@10"``.
    segments
        One row per user: columns ``user`` and ``segment`` (e.g. the
        ``users`` frame of :func:`polars_rankmetrics.sample_data`). Users of
        ``per_user`` without a segment are left out.
    segment, system, user
        Column names.
    by
        Other grouping columns of ``per_user`` (a fold): folded into the
        system's label (``model=knn | fold=1``), one mark each.
    order
        Segments from left to right; by default in sorted order (or the order
        of an Enum column).
    confidence
        Level of the intervals.
    title
        Chart title; by default it names the metric.

    Returns
    -------
    altair.LayerChart

    Examples
    --------
    >>> import polars as pl
    >>> from polars_rankmetrics.analysis.plots import plot_segments
    >>> per_user = pl.DataFrame({
    ...     "model": ["pop"] * 4 + ["knn"] * 4, "user": [1, 2, 3, 4] * 2,
    ...     "ndcg@10": [0.1, 0.3, 0.0, 0.2, 0.4, 0.2, 0.5, 0.3],
    ... })
    >>> segments = pl.DataFrame({"user": [1, 2, 3, 4], "segment": ["new", "new", "old", "old"]})
    >>> plot_segments(per_user, "ndcg@10", segments).to_dict()["title"]
    'Mean ndcg@10 by segment and model (95% confidence intervals)'
    """
    alt = _altair()
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1 (e.g. 0.95); got {confidence}")
    data = _frame(per_user, "per_user")
    groups = _frame(segments, "segments")
    _metric_column(data, metric, "per_user")
    _require(data, [user], "per_user", _PER_USER)
    data = _systems(data, system, by)
    _require(groups, [user, segment], "segments", "a frame with one row per user and a segment")
    duplicated = groups.filter(pl.col(user).is_duplicated())
    if not duplicated.is_empty():
        raise ValueError(
            f"segments has {duplicated.height} rows for users that appear more than once "
            f"(e.g. {duplicated.row(0, named=True)}); give each user one segment"
        )
    if order is None:
        dtype = groups.schema[segment]
        order = (
            list(dtype.categories)
            if isinstance(dtype, pl.Enum)
            else sorted(groups[segment].cast(pl.String).unique().drop_nulls().to_list())
        )
    if data.schema[user] != groups.schema[user]:
        raise TypeError(
            f"per_user and segments have different {user!r} types ({data.schema[user]} and "
            f"{groups.schema[user]}): cast one to the other, e.g. "
            f"segments.with_columns(pl.col({user!r}).cast(pl.{data.schema[user]}))"
        )
    z = _normal_quantile(0.5 + confidence / 2)
    joined = data.filter(pl.col(metric).is_not_null()).join(
        groups.select(user, pl.col(segment).cast(pl.String)), on=user, how="inner"
    )
    summary = (
        joined.group_by(segment, system)
        .agg(_mean_interval(metric, z))
        .join(
            joined.group_by(segment).agg(pl.col(user).n_unique().alias("_users")),
            on=segment,
        )
        .with_columns(_label=pl.format("{} (n={})", pl.col(segment), pl.col("_users")))
        .sort(segment, system)
    )
    labels = dict(summary.select(segment, "_label").unique().iter_rows())
    sort = [labels[s] for s in order if s in labels]
    systems = sorted(summary[system].unique().to_list())
    x = alt.X("_label:N", title=f"{segment} (users)", sort=sort, axis=alt.Axis(labelAngle=0))
    offset = alt.XOffset(f"{system}:N", sort=systems)
    colour = _color(alt, system, system, systems)
    percent = f"{confidence:.0%}"
    chart = alt.layer(
        alt.Chart()
        .mark_rule(strokeWidth=2)
        .encode(
            x=x,
            xOffset=offset,
            y=alt.Y("ci_low:Q", title=f"mean {metric} ({percent} interval)"),
            y2="ci_high:Q",
            color=colour,
        ),
        alt.Chart()
        .mark_point(filled=True, size=80)
        .encode(
            x=x,
            xOffset=offset,
            y="mean:Q",
            color=colour,
            tooltip=[segment, system, "n", *_interval_tooltips(alt)],
        ),
        data=summary,
    ).properties(
        width=max(300, 30 * len(systems) * len(sort)),
        height=_HEIGHT * 1.4,
        title=title or f"Mean {metric} by {segment} and {system} ({percent} confidence intervals)",
    )
    return cast("altair.LayerChart", chart)


def _normal_quantile(p: float) -> float:
    """The standard normal quantile (Acklam's rational approximation, error < 1.2e-9)."""
    a = (-39.69683028665376, 220.9460984245205, -275.9285104469687,
         138.3577518672690, -30.66479806614716, 2.506628277459239)  # fmt: skip
    b = (-54.47609879822406, 161.5858368580409, -155.6989798598866,
         66.80131188771972, -13.28068155288572)  # fmt: skip
    c = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838,
         -2.549732539343734, 4.374664141464968, 2.938163982698783)  # fmt: skip
    d = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996, 3.754408661907416)
    low = 0.02425
    if p < low or p > 1 - low:
        q = math.sqrt(-2 * math.log(p if p < low else 1 - p))
        value = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / (
            (((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1
        )
        return value if p < low else -value
    q = p - 0.5
    r = q * q
    return (
        (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5])
        * q
        / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
    )


def plot_long_tail(
    recs: Any,
    interactions: Any,
    *,
    item: str = "item",
    system: str = "model",
    user: str = "user",
    rank: str = "rank",
    score: str | None = "score",
    k: int | None = None,
    bins: int = 20,
    title: str | None = None,
) -> altair.LayerChart:
    """Exposure against item popularity: how much each system recommends the long tail.

    Items are ranked by their number of training interactions (1 = most
    popular; items never interacted with come last) and grouped into
    ``bins`` log-spaced bins of that rank. Each line is the share of a
    system's recommendation slots that go to one item of the bin (slots to
    the bin / items in the bin / all slots); the dashed grey line is the
    same share for the training interactions, so a system above it in the
    head over-recommends popular items. Both axes are logarithmic.

    Parameters
    ----------
    recs
        Long-format recommendations with ``system``, ``user``, ``item`` and
        ``rank`` or ``score`` columns.
    interactions
        The training interactions: one row per event, column ``item``.
    item, system, user, rank, score
        Column names; ``rank`` is used when present, else ranks come from
        ``score`` (with the default tie rule).
    k
        Count only each list's top ``k``; by default the whole list.
    bins
        Number of log-spaced popularity-rank bins.
    title
        Chart title.

    Returns
    -------
    altair.LayerChart

    Examples
    --------
    >>> import polars_rankmetrics as prm
    >>> from polars_rankmetrics.analysis.plots import plot_long_tail
    >>> sample = prm.sample_data(n_users=200, n_items=100)
    >>> chart = plot_long_tail(sample.recs, sample.interactions, k=10)
    >>> chart.to_dict()["layer"][0]["encoding"]["x"]["scale"]
    {'type': 'log'}
    """
    alt = _altair()
    from polars_rankmetrics.ranking import positions  # noqa: PLC0415 (plots is a leaf module)

    if bins < 1:
        raise ValueError(f"bins must be at least 1; got {bins}")
    recommended = _frame(recs, "recs")
    history = _frame(interactions, "interactions")
    _require(recommended, [system, user, item], "recs", "the recommendations given to evaluate")
    _require(history, [item], "interactions", "the training interactions, one row per event")
    if k is not None:
        if rank not in recommended.columns and (score is None or score not in recommended.columns):
            raise ValueError(
                f"k={k} needs a {rank!r} or a score column in recs to cut the lists; "
                f"recs has {recommended.columns}"
            )
        recommended = positions(
            recommended,
            k,
            user=user,
            item=item,
            rank=rank,
            score=None if rank in recommended.columns else score,
            by=system,
        )
    if recommended.schema[item] != history.schema[item]:
        raise TypeError(
            f"recs and interactions have different {item!r} types "
            f"({recommended.schema[item]} and {history.schema[item]}); cast one to the other"
        )
    items = (
        pl.concat(
            [
                history.group_by(item).agg(events=pl.len()),
                recommended.select(item).unique().with_columns(events=pl.lit(0, pl.UInt32)),
            ]
        )
        .group_by(item)
        .agg(pl.col("events").max())
        .with_columns(
            popularity_rank=pl.struct(pl.col("events"), pl.col(item))
            .rank("ordinal", descending=True)
            .cast(pl.Int64)
        )
    )
    n_items = items.height
    # the starts of at most `bins` log-spaced bins (n^(i/bins), i < bins: each below n),
    # and the end past the last item
    edges = sorted({math.floor(n_items ** (i / bins)) for i in range(bins)} | {n_items + 1})
    starts = pl.DataFrame({"bin_start": edges[:-1]}, schema={"bin_start": pl.Int64})
    # each item falls in the bin with the largest start <= its rank
    items = items.sort("popularity_rank").join_asof(
        starts, left_on="popularity_rank", right_on="bin_start", strategy="backward"
    )
    sizes = items.group_by("bin_start").agg(
        items_in_bin=pl.len(), bin_end=pl.col("popularity_rank").max()
    )
    slots = (
        recommended.with_columns(pl.col(system).cast(pl.String))
        .join(items.select(item, "bin_start"), on=item)
        .group_by(system, "bin_start")
        .agg(slots=pl.len())
    )
    training = (
        items.group_by("bin_start")
        .agg(slots=pl.col("events").sum())
        .with_columns(pl.lit("training interactions").alias(system))
    )
    shares = (
        pl.concat([slots, training.select(system, "bin_start", "slots")], how="vertical_relaxed")
        .join(sizes, on="bin_start")
        .with_columns(
            share=pl.col("slots") / pl.col("items_in_bin") / pl.col("slots").sum().over(system),
            middle=(pl.col("bin_start") * pl.col("bin_end")).sqrt(),
        )
        .filter(pl.col("share") > 0)
        .sort(system, "bin_start")
    )
    systems = sorted(recommended[system].unique().to_list())
    x = alt.X(
        "middle:Q",
        title="item popularity rank in the training interactions (1 = most popular, log)",
        scale=alt.Scale(type="log"),
    )
    y = alt.Y(
        "share:Q",
        title="share of the recommendations, per item (log)",
        scale=alt.Scale(type="log"),
        axis=alt.Axis(format="~%"),
    )
    tooltip = [
        system,
        alt.Tooltip("bin_start:Q", title="popularity rank from"),
        alt.Tooltip("bin_end:Q", title="popularity rank to"),
        "items_in_bin",
        "slots",
        alt.Tooltip("share:Q", format=".2e"),
    ]
    cut = f"top {k}" if k is not None else "whole lists"
    chart = alt.layer(
        alt.Chart(shares.filter(pl.col(system) != "training interactions"))
        .mark_line(point=True, strokeWidth=2)
        .encode(x=x, y=y, color=_color(alt, system, system, systems), tooltip=tooltip),
        alt.Chart(shares.filter(pl.col(system) == "training interactions"))
        .mark_line(color="#555555", strokeDash=[6, 4], strokeWidth=2)
        .encode(x=x, y=y, tooltip=tooltip),
    ).properties(
        width=_WIDTH * 1.8,
        height=_HEIGHT * 1.6,
        title=alt.TitleParams(
            title or f"Exposure by item popularity ({cut}), by {system}",
            subtitle="dashed grey: the training interactions' own share per item",
        ),
    )
    return cast("altair.LayerChart", chart)


def _panels(data: pl.DataFrame, system: str, metric: str, extra: list[str]) -> pl.DataFrame:
    """The comparison with its chart columns: the group, the panel, each row's verdict."""
    row_label = _label(extra).alias("_group") if extra else pl.lit("").alias("_group")
    return data.with_columns(
        pl.col(system).cast(pl.String),
        row_label,
        _panel=(pl.col(metric) + pl.lit(" | ") + _label(extra)) if extra else pl.col(metric),
        _verdict=pl.when(pl.col("diff").is_null())
        .then(pl.lit("baseline"))
        .when(pl.col("significant").fill_null(False))
        .then(pl.lit("significant"))
        .otherwise(pl.lit("not significant")),
    )


def _difference_tooltip(
    alt: Any, tooltip: list[Any], columns: list[str], *, pairwise: bool
) -> list[Any]:
    """A difference's tooltip: the system's, the pair, the difference and its test."""
    tests = [
        alt.Tooltip(c, format=".3g")
        for c in ("effect_size", "p_value", "p_adjusted")
        if c in columns
    ]
    return [
        *tooltip,
        *(["baseline"] if pairwise else []),
        *(["n_paired"] if "n_paired" in columns else []),
        alt.Tooltip("diff:Q", format="+.4f"),
        alt.Tooltip("diff_ci_low:Q", format="+.4f"),
        alt.Tooltip("diff_ci_high:Q", format="+.4f"),
        *tests,
        "significant",
    ]


def _panel_rows(alt: Any, panels: list[str]) -> Any:
    """One row of panels per metric (and group), in the comparison's order."""
    return alt.Row(
        "_panel:N",
        title=None,
        sort=panels,
        header=alt.Header(labelAngle=0, labelAlign="left", labelFontSize=12),
    )


def _comparison_title(against: str) -> str:
    """The default title: every pair, or the baseline(s) the systems are compared with."""
    named = against.removeprefix("from ")
    if against == _EVERY_PAIR:
        return "Every pair of systems compared"
    return f"Systems compared with the baseline{'s' if ', ' in named else ''} {named}"


def _means_layer(
    alt: Any, y: Any, system: str, systems: list[Any], tooltip: list[Any], *, unit: str
) -> Any:
    """Each system's mean with its confidence interval, one row per system."""
    base = alt.Chart().encode(y=y)
    return alt.layer(
        base.mark_rule(strokeWidth=2).encode(
            x=alt.X(
                "ci_low:Q",
                title=f"mean over {unit} (with confidence interval)",
                axis=alt.Axis(labelFlush=False),
            ),
            x2="ci_high:Q",
            color=_color(alt, system, system, systems),
        ),
        base.mark_point(filled=True, size=70).encode(
            x="mean:Q", color=_color(alt, system, system, systems), tooltip=tooltip
        ),
    ).properties(width=_WIDTH, height=alt.Step(22))
