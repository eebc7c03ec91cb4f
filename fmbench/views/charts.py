"""Plotly figures as plain JSON, each with the table of the same numbers beside it.

A value that was not recorded leaves a gap (``null``) and the chart's note
says so; it is never plotted as 0. Figures carry only their data (the chart
library is a shared asset), so they stay small.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from fmbench.views.blocks import Chart, Column, Row, Table

Fmt = Callable[[float | None], str | None]


@dataclass(frozen=True)
class Series:
    name: str
    medians: Sequence[float | None]
    p90s: Sequence[float | None]


def _layout(x_title: str, y_title: str, *, horizontal: bool = False, height: int | None = None) -> dict:
    layout: dict = {
        "xaxis": {"title": {"text": x_title}, "automargin": True},
        "yaxis": {"title": {"text": y_title}, "automargin": True},
        "margin": {"l": 10, "r": 10, "t": 10, "b": 10},
        "hovermode": "closest",
    }
    if horizontal:
        layout["yaxis"]["autorange"] = "reversed"
        layout["yaxis"]["type"] = "category"
    else:
        layout["xaxis"]["type"] = "category"
    if height:
        layout["height"] = height
    return layout


def _missing_note(labels: Sequence[str], series: Sequence[Series], what: str) -> str | None:
    missing = sorted(
        {f"{labels[i]}" for s in series for i, v in enumerate(s.medians) if v is None}
    )
    if not missing:
        return None
    shown = ", ".join(missing[:6]) + (f" and {len(missing) - 6} more" if len(missing) > 6 else "")
    return f"{what} not recorded for {shown}: left as a gap, not plotted as 0."


def median_p90(
    chart_id: str,
    title: str,
    labels: Sequence[str],
    series: Sequence[Series],
    *,
    value_title: str,
    label_title: str,
    fmt: Fmt,
    horizontal: bool = True,
    what: str = "Values",
) -> Chart:
    """Medians as points with the p90 drawn as a one-sided bar above (or right of) each median."""
    traces = []
    for s in series:
        upper = [None if (m is None or p is None) else p - m for m, p in zip(s.medians, s.p90s, strict=True)]
        error = {"type": "data", "array": upper, "arrayminus": [0] * len(upper), "symmetric": False, "visible": True}
        trace: dict = {
            "type": "scatter",
            "mode": "markers",
            "name": f"{s.name} median (bar to p90)" if s.name else "median (bar to p90)",
            "text": list(labels),
            "hoverinfo": "x+y+name",
        }
        if horizontal:
            trace.update({"x": list(s.medians), "y": list(labels), "error_x": error})
        else:
            trace.update({"x": list(labels), "y": list(s.medians), "error_y": error, "mode": "lines+markers"})
        traces.append(trace)
    height = max(220, 40 + 32 * len(labels)) if horizontal else 360
    layout = (
        _layout(value_title, label_title, horizontal=True, height=height)
        if horizontal
        else _layout(label_title, value_title, height=height)
    )
    columns = [Column("label", label_title)]
    for s in series:
        prefix = f"{s.name} " if s.name else ""
        columns += [Column(f"{prefix}median", f"{prefix}median", True), Column(f"{prefix}p90", f"{prefix}p90", True)]
    rows = []
    for i, label in enumerate(labels):
        cells: list = [label]
        for s in series:
            cells += [fmt(s.medians[i]), fmt(s.p90s[i])]
        rows.append(Row(cells))
    return Chart(
        id=chart_id,
        title=title,
        figure_json={"data": traces, "layout": layout},
        table=Table(f"{chart_id}-table", title, columns, rows),
        note=_missing_note(labels, series, what),
        alt=f"{title}: median and 90th percentile per {label_title.lower()}",
    )


def time_series(
    chart_id: str,
    title: str,
    series: Sequence[tuple[str, Sequence[str], Sequence[float | None]]],
    *,
    value_title: str,
    fmt: Fmt,
    what: str = "Values",
) -> Chart:
    """Points over time, one trace per named configuration (kept apart, never pooled)."""
    traces = [
        {"type": "scatter", "mode": "lines+markers", "name": name, "x": list(xs), "y": list(ys), "connectgaps": False}
        for name, xs, ys in series
    ]
    layout = _layout("Run start (UTC)", value_title)
    layout["xaxis"]["type"] = "date"
    rows = [Row([name, x, fmt(y)]) for name, xs, ys in series for x, y in zip(xs, ys, strict=True)]
    gaps = sum(1 for _, _, ys in series for y in ys if y is None)
    return Chart(
        id=chart_id,
        title=title,
        figure_json={"data": traces, "layout": layout},
        table=Table(
            f"{chart_id}-table",
            title,
            [Column("series", "Configuration"), Column("x", "Run start (UTC)"), Column("y", value_title, True)],
            rows,
        ),
        note=f"{what} not recorded for {gaps} point(s): left as gaps, not plotted as 0." if gaps else None,
    )


def deltas_with_intervals(
    chart_id: str,
    title: str,
    labels: Sequence[str],
    deltas: Sequence[float | None],
    lows: Sequence[float | None],
    highs: Sequence[float | None],
    *,
    value_title: str,
    fmt: Fmt,
    verdicts: Sequence[str],
) -> Chart:
    """Candidate − baseline per scenario, with each interval as an error bar around its point."""
    plus = [None if (d is None or h is None) else h - d for d, h in zip(deltas, highs, strict=True)]
    minus = [None if (d is None or lo is None) else d - lo for d, lo in zip(deltas, lows, strict=True)]
    trace = {
        "type": "scatter",
        "mode": "markers",
        "name": "candidate − baseline (bar: interval)",
        "x": list(deltas),
        "y": list(labels),
        "error_x": {"type": "data", "array": plus, "arrayminus": minus, "symmetric": False, "visible": True},
        "hoverinfo": "x+y",
    }
    zero = {"type": "line", "x0": 0, "x1": 0, "yref": "paper", "y0": 0, "y1": 1, "line": {"dash": "dot", "width": 1}}
    layout = _layout(value_title, "Scenario", horizontal=True, height=max(220, 40 + 32 * len(labels)))
    layout["shapes"] = [zero]
    rows = [
        Row([label, fmt(d), fmt(lo), fmt(h), v])
        for label, d, lo, h, v in zip(labels, deltas, lows, highs, verdicts, strict=True)
    ]
    missing = [label for label, d in zip(labels, deltas, strict=True) if d is None]
    return Chart(
        id=chart_id,
        title=title,
        figure_json={"data": [trace], "layout": layout},
        table=Table(
            f"{chart_id}-table",
            title,
            [
                Column("scenario", "Scenario"),
                Column("delta", "Delta", True),
                Column("low", "Interval low", True),
                Column("high", "Interval high", True),
                Column("verdict", "Verdict"),
            ],
            rows,
        ),
        note=(f"No delta for {', '.join(missing)}: a side did not record it (left out, not plotted as 0)." if missing else None),
        alt=f"{title}: change per scenario with its interval",
    )


@dataclass(frozen=True)
class Point:
    """One entry of a quality × speed chart: its label, latency (x), quality (y) and whether it is on the
    Pareto front (:func:`fmbench.analysis.ranking.pareto_front`)."""

    label: str
    latency: float | None
    quality: float | None
    front: bool


def quality_speed(
    chart_id: str,
    title: str,
    points: Sequence[Point],
    *,
    latency_title: str,
    quality_title: str,
    latency_fmt: Fmt,
    quality_fmt: Fmt,
    what: str = "Values",
) -> Chart:
    """Quality against latency, one point per entry, the Pareto front drawn as a line through its points (a point
    missing either value is left out and named in the note, never plotted as 0)."""
    drawn = [p for p in points if p.latency is not None and p.quality is not None]
    front = sorted((p for p in drawn if p.front), key=lambda p: (p.latency, -(p.quality or 0.0)))
    others = [p for p in drawn if not p.front]
    traces: list[dict] = []
    if others:
        traces.append({
            "type": "scatter", "mode": "markers", "name": "behind the front",
            "x": [p.latency for p in others], "y": [p.quality for p in others], "text": [p.label for p in others],
            "hoverinfo": "x+y+text", "marker": {"symbol": "circle-open", "size": 10},
        })
    if front:
        traces.append({
            "type": "scatter", "mode": "lines+markers", "name": "Pareto front (no device both faster and better)",
            "x": [p.latency for p in front], "y": [p.quality for p in front], "text": [p.label for p in front],
            "hoverinfo": "x+y+text", "marker": {"symbol": "diamond", "size": 12}, "line": {"dash": "dot"},
        })
    layout = _layout(latency_title, quality_title)
    layout["xaxis"]["rangemode"] = "tozero"
    layout["yaxis"]["range"] = [0, 1.05]
    layout["yaxis"]["tickformat"] = ".0%"
    layout["height"] = 360
    missing = [p.label for p in points if p.latency is None or p.quality is None]
    return Chart(
        id=chart_id,
        title=title,
        figure_json={"data": traces, "layout": layout},
        table=Table(
            f"{chart_id}-table",
            title,
            [Column("label", "Device"), Column("latency", latency_title, True), Column("quality", quality_title, True),
             Column("front", "On the Pareto front")],
            [Row([p.label, latency_fmt(p.latency), quality_fmt(p.quality), "yes" if p.front else "no"]) for p in points],
        ),
        note=(f"{what} not recorded for {', '.join(missing)}: left out, not plotted as 0." if missing else None),
        alt=f"{title}: one point per device, the Pareto front marked",
    )
