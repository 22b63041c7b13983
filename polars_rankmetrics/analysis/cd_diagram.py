"""``plot_critical_difference``: the critical-difference diagram of a Friedman test.

Needs the ``plot`` extra (Altair and vl-convert-python), as the charts of
:mod:`polars_rankmetrics.analysis.plots`.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, cast

from polars_rankmetrics._frames import collected, read
from polars_rankmetrics.analysis.friedman_nemenyi import FriedmanResult
from polars_rankmetrics.analysis.plots import _altair

if TYPE_CHECKING:
    import altair

__all__ = ["plot_critical_difference"]

_STEP = 1.0  # vertical distance between two label lines, in the chart's own units


def cliques(ranks: list[float], critical_difference: float) -> list[tuple[int, int]]:
    """Maximal runs (first, last) of systems sorted by rank whose ranks lie within the CD.

    Two or more systems each; a run inside another is left out (Demsar 2006, Fig. 1).
    """
    runs: list[tuple[int, int]] = []
    for first in range(len(ranks)):
        last = first
        while last + 1 < len(ranks) and ranks[last + 1] - ranks[first] <= critical_difference:
            last += 1
        if last > first and not any(last <= end for _, end in runs):
            runs.append((first, last))
    return runs


def plot_critical_difference(
    result: FriedmanResult, *, title: str | None = None, width: int = 480
) -> altair.LayerChart:
    """The critical-difference diagram of :func:`friedman`'s result (Demsar 2006).

    Systems sit on an axis of mean ranks (1 = best, on the left), each joined
    by a line to its name and mean rank: the better half on the left, the
    rest on the right. A thick bar joins each maximal group of systems whose
    mean ranks differ by at most the critical difference (not significantly
    different by Nemenyi's test); the CD itself is drawn above the axis.

    Parameters
    ----------
    result
        The result of :func:`polars_rankmetrics.analysis.friedman`.
    title
        Chart title; default names the test, N, alpha and which value ranks
        first (the highest, or the lowest of a lower-is-better metric).
    width
        Width of the rank axis in pixels (names are drawn beside it).

    Returns
    -------
    An Altair layer chart; ``chart.save("cd.png")`` (or ``.svg``, ``.pdf``, ``.html``).

    Examples
    --------
    >>> import polars as pl
    >>> import polars_rankmetrics as prm
    >>> means = pl.DataFrame({
    ...     "dataset": ["ml1m"] * 3 + ["lastfm"] * 3 + ["amazon"] * 3 + ["yelp"] * 3,
    ...     "model": ["bpr", "ease", "pop"] * 4,
    ...     "ndcg": [0.30, 0.35, 0.10, 0.20, 0.25, 0.05, 0.15, 0.12, 0.02, 0.40, 0.42, 0.20],
    ... })
    >>> chart = prm.plot_critical_difference(prm.friedman(means, "ndcg"))
    >>> type(chart).__name__
    'LayerChart'
    """
    if not isinstance(result, FriedmanResult):
        raise TypeError(
            f"plot_critical_difference takes the result of friedman(), got {type(result).__name__}"
        )
    alt = _altair()
    ranks = collected(read(result.mean_ranks, name="result.mean_ranks"))
    names = [str(name) for name in ranks.get_column("system").to_list()]
    values = ranks.get_column("mean_rank").to_list()
    k = len(names)
    cd = result.critical_difference
    half = math.ceil(k / 2)
    runs = cliques(values, cd)
    # label lines below the axis, the clique bars between them and the axis
    bar_depth = [-(0.6 + 0.45 * position) * _STEP for position in range(len(runs))]
    first_label = min(bar_depth, default=-0.3) - 0.8 * _STEP
    rows = _placed(names, values, first_label, half)
    systems = alt.Data(values=rows)
    x_scale = alt.Scale(domain=[1, k], nice=False, zero=False)
    x = alt.X("rank:Q", scale=x_scale, axis=None)
    y_scale = alt.Scale(domain=[first_label - (half - 1) * _STEP - 0.5, 2.2 * _STEP], nice=False)
    y = alt.Y("y:Q", scale=y_scale, axis=None)
    down = (
        alt.Chart(systems)
        .mark_rule(color="#444")
        .encode(x=x, y=alt.Y("zero:Q", scale=y_scale, axis=None), y2="y:Q")
        .transform_calculate(zero="0")
    )
    across = alt.Chart(systems).mark_rule(color="#444").encode(x=x, x2="edge:Q", y=y)
    axis_line, tick_marks, tick_labels = _rank_axis(alt, k, x, x_scale, y_scale)
    labels = [
        alt.Chart(systems)
        .transform_filter(alt.datum.side == side)
        .mark_text(align=align, dx=dx, fontSize=12)
        .encode(x=alt.X("edge:Q", scale=x_scale), y=y, text="label:N")
        for side, align, dx in (("left", "right", -6), ("right", "left", 6))
    ]
    bars = alt.Chart(
        alt.Data(
            values=[
                {"from": values[first], "to": values[last], "y": depth}
                for (first, last), depth in zip(runs, bar_depth, strict=True)
            ]
        )
    ).mark_rule(strokeWidth=4, color="black").encode(
        x=alt.X("from:Q", scale=x_scale), x2="to:Q", y=alt.Y("y:Q", scale=y_scale, axis=None)
    )  # fmt: skip
    cd_bar, cd_text = _cd_layers(alt, cd, x_scale, y_scale)
    heading = title or _heading(result)
    height = int(28 * (half + 2 + len(runs) / 2))
    layers = (axis_line, tick_marks, tick_labels, down, across, bars, cd_bar, cd_text, *labels)
    chart = alt.layer(*layers).properties(
        width=width, height=height, title=heading,
        padding={"left": 150, "right": 150, "top": 10, "bottom": 10},
    ).configure_view(stroke=None)  # fmt: skip
    return cast("altair.LayerChart", chart)


def _placed(names: list[str], values: list[float], first_label: float, half: int) -> list[Any]:
    """Each system's label row: the better half on the left, the rest on the right."""
    k = len(names)
    rows = []
    for position, (name, rank) in enumerate(zip(names, values, strict=True)):
        left = position < half
        depth = position if left else k - 1 - position
        y = first_label - depth * _STEP
        rows.append(
            {
                "system": name,
                "rank": rank,
                "y": y,
                "edge": 1.0 if left else float(k),
                "label": f"{name} ({rank:.2f})" if left else f"({rank:.2f}) {name}",
                "side": "left" if left else "right",
            }
        )
    return rows


def _rank_axis(alt: Any, k: int, x: Any, x_scale: Any, y_scale: Any) -> tuple[Any, Any, Any]:
    """The rank axis drawn by hand at y = 0 (so the systems' lines start on it), its ticks."""
    ticks = alt.Data(values=[{"rank": float(r), "text": str(r)} for r in range(1, k + 1)])
    axis_line = alt.Chart(alt.Data(values=[{"from": 1.0, "to": float(k), "y": 0.0}])).mark_rule(
        color="black"
    ).encode(
        x=alt.X("from:Q", scale=x_scale, axis=None), x2="to:Q",
        y=alt.Y("y:Q", scale=y_scale, axis=None),
    )  # fmt: skip
    tick_marks = alt.Chart(ticks).mark_rule(color="black").encode(
        x=x, y=alt.Y("zero:Q", scale=y_scale, axis=None), y2="top:Q"
    ).transform_calculate(zero="0", top=str(0.25 * _STEP))  # fmt: skip
    tick_labels = alt.Chart(ticks).mark_text(dy=-4, fontSize=11, baseline="bottom").encode(
        x=x, y=alt.Y("top:Q", scale=y_scale, axis=None), text="text:N"
    ).transform_calculate(top=str(0.25 * _STEP))  # fmt: skip
    return axis_line, tick_marks, tick_labels


def _cd_layers(alt: Any, cd: float, x_scale: Any, y_scale: Any) -> tuple[Any, Any]:
    """The critical difference drawn above the axis, with its value."""
    cd_row = [{"from": 1.0, "to": 1.0 + cd, "y": 1.6 * _STEP, "text": f"CD = {cd:.2f}"}]
    cd_bar = alt.Chart(alt.Data(values=cd_row)).mark_rule(strokeWidth=2).encode(
        x=alt.X("from:Q", scale=x_scale), x2="to:Q", y=alt.Y("y:Q", scale=y_scale, axis=None)
    )  # fmt: skip
    cd_text = alt.Chart(alt.Data(values=cd_row)).mark_text(dy=-9, fontSize=11).encode(
        x=alt.X("mid:Q", scale=x_scale), y=alt.Y("y:Q", scale=y_scale, axis=None), text="text:N"
    ).transform_calculate(mid="(datum.from + datum.to) / 2")  # fmt: skip
    return cd_bar, cd_text


def _heading(result: FriedmanResult) -> str:
    """The default title: the test, N, alpha, and which value ranks first."""
    # rank 1 is the best value: say which way that was, so a lower-is-better metric reads right
    better = "lowest" if result.direction == "lower" else "highest"
    ranked = f" of {result.metric}" if result.metric else ""
    return (
        f"Friedman p = {result.p_value:.3g}; Nemenyi CD at alpha = {result.alpha:g}, "
        f"N = {result.n_blocks}; rank 1 = the {better}{ranked}"
    )
