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
