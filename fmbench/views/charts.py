"""Plotly figures as plain JSON, each with the table of the same numbers beside it.

Honest by construction:

- a value that was not recorded leaves a gap (``null``) and the chart's note says so; it is never plotted
  as 0; a chart with no value at all is not drawn and gets no card (:attr:`~fmbench.views.blocks.Chart.blank`):
  the page names it once, in words, beside the charts it draws; a chart of one value says it as a number;
- every chart says what its marks mean (:attr:`~fmbench.views.blocks.Chart.marks`, its caption), taken
  with its axis title and whether its value axis starts at zero from the figure catalog's chart spec
  (:class:`fmbench.analysis.figure_catalog.Chart`, :class:`~fmbench.analysis.figure_catalog.DeltaChart`);
- a value axis of a rate or a throughput starts at zero; a time axis with one instant is a category, never
  sub-millisecond ticks; titles are short, margins automatic, ticks few enough not to collide.

Figures carry only their data (the chart library is a shared asset), so they stay small. :func:`axis` and
:func:`chart` are the pieces to build another kind of chart from (a quality-against-speed scatter, say).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from fmbench.analysis import figure_catalog as fc
from fmbench.views.blocks import Chart, Column, Row, Table

Fmt = Callable[[float | None], str | None]

MEDIAN_P90_MARKS = "Dot: median; whisker: to the p90."
TRIALS_MARKS = "Small dots: one trial each; large dot: median; whisker: to the p90. The axis starts at 0."


@dataclass(frozen=True)
class Series:
    name: str
    medians: Sequence[float | None]
    p90s: Sequence[float | None]
    exploratory: Sequence[bool] = ()
    """Per label, whether its value comes from an exploratory run (drawn as an open dot, apart from a publishable
    run's filled one); empty: none does."""


EXPLORATORY_MARKS = " Filled dot: a publishable run; open dot: an exploratory run, never ranked."


def axis(title: str, *, from_zero: bool = False, percent: bool = False, category: bool = False,
         reversed_: bool = False) -> dict[str, Any]:
    """One axis: a short title, margins that make room for its ticks, few ticks (they never collide on a
    phone); a value axis from zero when asked (a rate's axis, in percent, from 0 to 100%)."""
    out: dict[str, Any] = {"title": {"text": title, "standoff": 8}, "automargin": True}
    if category:
        out["type"] = "category"
    else:
        out["nticks"] = 6
    if from_zero:
        out["rangemode"] = "tozero"
    if percent:
        out["tickformat"] = ".0%"
        if from_zero:
            out["range"] = [0, 1.05]
            out.pop("rangemode")
    if reversed_:
        out["autorange"] = "reversed"
    return out


def layout(x: dict[str, Any], y: dict[str, Any], *, height: int | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "xaxis": x,
        "yaxis": y,
        "margin": {"l": 10, "r": 10, "t": 10, "b": 10},
        "hovermode": "closest",
        "dragmode": False,
    }
    if height:
        out["height"] = height
    return out


def chart(
    chart_id: str,
    title: str,
    traces: list[dict[str, Any]],
    figure_layout: dict[str, Any],
    table: Table,
    *,
    marks: str,
    has_data: bool,
    empty: str,
    note: str | None = None,
    alt: str | None = None,
    value_said: bool = False,
) -> Chart:
    """A chart, or when ``has_data`` is false the ``empty`` sentence in its place (no traces, no axes);
    ``value_said``: that sentence says the chart's one value (else the chart is blank: it gets no card)."""
    if not has_data:
        return Chart(id=chart_id, title=title, figure_json={}, table=table, alt=alt, marks=None, empty=empty,
                     value_said=value_said)
    return Chart(
        id=chart_id,
        title=title,
        figure_json={"data": traces, "layout": figure_layout},
        table=table,
        note=note,
        alt=alt,
        marks=marks,
    )


def _missing_note(labels: Sequence[str], series: Sequence[Series], what: str) -> str | None:
    """What the chart leaves out, and only that: each series' labels with no median (a series drawn at a label is
    never said to be not recorded there)."""
    def listed(found: Sequence[str]) -> str:
        return ", ".join(found[:6]) + (f" and {len(found) - 6} more" if len(found) > 6 else "")

    gaps = [(s.name, [labels[i] for i, v in enumerate(s.medians) if v is None]) for s in series]
    gaps = [(name, found) for name, found in gaps if found]
    if not gaps:
        return None
    if len(series) == 1 or not all(name for name, _ in gaps):
        shown = listed(sorted({label for _, found in gaps for label in found}))
    else:
        shown = "; ".join(f"{name} on {listed(found)}" for name, found in gaps)
    return f"{what} not recorded for {shown}: left as a gap, not plotted as 0."


def _median_p90_trace(s: Series, labels: Sequence[str], horizontal: bool, *, legend: bool) -> dict:
    """One series' medians as dots with a one-sided whisker to its p90s; exploratory points open."""
    upper = [None if (m is None or p is None) else p - m for m, p in zip(s.medians, s.p90s, strict=True)]
    error = {"type": "data", "array": upper, "arrayminus": [0] * len(upper), "symmetric": False, "visible": True}
    trace: dict = {
        "type": "scatter",
        "mode": "markers",
        # a series' own name in the legend (its caption says what dot and whisker are, once for all)
        "name": s.name or "median (whisker to p90)",
        "text": list(labels),
        "hoverinfo": "x+y+name",
        "marker": {"size": 9},
        "showlegend": legend,
    }
    if any(s.exploratory):
        trace["marker"] = {"size": 9, "symbol": ["circle-open" if e else "circle" for e in s.exploratory]}
    if horizontal:
        trace.update({"x": list(s.medians), "y": list(labels), "error_x": error})
    else:
        trace.update({"x": list(labels), "y": list(s.medians), "error_y": error, "mode": "lines+markers"})
    return trace


def _median_p90_table(
    labels: Sequence[str], series: Sequence[Series], label_title: str, fmt: Fmt
) -> tuple[list[Column], list[Row]]:
    """The chart's values as a table: a row per label, a median and a p90 column per series."""
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
    return columns, rows


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
    spec: fc.Chart | None = None,
) -> Chart:
    """Medians as points with the p90 drawn as a one-sided whisker above (or right of) each median.

    ``spec``: the catalog's chart this one draws (its axis title, whether the axis starts at zero, what the
    marks mean); without one, a value axis from zero and the plain reading of the marks."""
    value_title = spec.axis if spec else value_title
    from_zero = spec.from_zero if spec else True
    traces = [_median_p90_trace(s, labels, horizontal, legend=len(series) > 1) for s in series]
    if horizontal:
        height = max(200, 90 + 34 * len(labels))
        figure_layout = layout(axis(value_title, from_zero=from_zero), axis(label_title, category=True, reversed_=True),
                               height=height)
    else:
        figure_layout = layout(axis(label_title, category=True), axis(value_title, from_zero=from_zero), height=340)
    columns, rows = _median_p90_table(labels, series, label_title, fmt)
    has_data = any(m is not None for s in series for m in s.medians)
    points = [(s, labels[i], m, s.p90s[i]) for s in series for i, m in enumerate(s.medians) if m is not None]
    if len(points) == 1:  # one value: said as a number, not drawn as a lone dot on an axis of its own
        s, label, median, p90 = points[0]
        name = f"{s.name}, " if s.name else ""
        return chart(
            chart_id, title, [], {}, Table(f"{chart_id}-table", title, columns, rows), marks="", has_data=False,
            empty=f"One value, said rather than drawn: {name}{label}: median {fmt(median)}, p90 "
                  f"{fmt(p90) or 'not recorded'}.",
            alt=f"{title}: one value", value_said=True,
        )
    return chart(
        chart_id,
        title,
        traces,
        figure_layout,
        Table(f"{chart_id}-table", title, columns, rows),
        marks=(spec.marks if spec else MEDIAN_P90_MARKS) + (
            EXPLORATORY_MARKS if any(any(s.exploratory) for s in series) else ""
        ),
        has_data=has_data,
        empty=f"{what} was not recorded for {_these(label_title)}, so there is nothing to chart.",
        note=_missing_note(labels, series, what),
        alt=f"{title}: median and 90th percentile per {label_title.lower()}",
    )


@dataclass(frozen=True)
class Group:
    """One configuration's runs on a chart of runs: its name (the trace's, in the legend) and, per run, its label,
    median, p90 and whether the run is exploratory."""

    name: str
    labels: Sequence[str]
    medians: Sequence[float | None]
    p90s: Sequence[float | None]
    exploratory: Sequence[bool]


def runs_by_configuration(
    chart_id: str,
    title: str,
    groups: Sequence[Group],
    *,
    fmt: Fmt,
    what: str,
    spec: fc.Chart,
) -> Chart:
    """One chart of a figure over runs: a run a row (its label on the shared category axis), each configuration a
    trace of its own colour (never pooled, never a chart each), the p90 a whisker right of each median, an
    exploratory run an open dot. A run with no median is named in the note; one value in all is said, not drawn."""
    traces: list[dict[str, Any]] = []
    for g in groups:
        upper = [None if (m is None or p is None) else p - m for m, p in zip(g.medians, g.p90s, strict=True)]
        traces.append({
            "type": "scatter", "mode": "markers", "name": g.name, "x": list(g.medians), "y": list(g.labels),
            "error_x": {"type": "data", "array": upper, "arrayminus": [0] * len(upper), "symmetric": False,
                        "visible": True},
            "hoverinfo": "x+y+name",
            "marker": {"size": 9, "symbol": ["circle-open" if e else "circle" for e in g.exploratory]},
            "showlegend": len(groups) > 1,
        })
    labels = [label for g in groups for label in g.labels]
    figure_layout = layout(axis(spec.axis, from_zero=spec.from_zero), axis("Run", category=True, reversed_=True),
                           height=max(200, 90 + 34 * len(labels)))
    columns = [Column("config", "Configuration"), Column("label", "Run"), Column("median", "Median", True),
               Column("p90", "p90", True)]
    rows = [Row([g.name, label, fmt(m), fmt(p)])
            for g in groups for label, m, p in zip(g.labels, g.medians, g.p90s, strict=True)]
    table = Table(f"{chart_id}-table", title, columns, rows)
    points = [(g.name, label, m, p) for g in groups for label, m, p in zip(g.labels, g.medians, g.p90s, strict=True)
              if m is not None]
    if len(points) == 1:  # one value: said as a number, not drawn as a lone dot on an axis of its own
        name, label, median, p90 = points[0]
        return chart(chart_id, title, [], {}, table, marks="", has_data=False,
                     empty=f"One value, said rather than drawn: {name}, {label}: median {fmt(median)}, p90 "
                           f"{fmt(p90) or 'not recorded'}.",
                     alt=f"{title}: one value", value_said=True)
    missing = [label for g in groups for label, m in zip(g.labels, g.medians, strict=True) if m is None]
    exploratory = any(e for g in groups for e in g.exploratory)
    return chart(
        chart_id, title, traces, figure_layout, table,
        marks=spec.marks + (" Colour: the configuration." if len(groups) > 1 else "")
        + (EXPLORATORY_MARKS if exploratory else ""),
        has_data=bool(points),
        empty=f"{what} was not recorded for these runs, so there is nothing to chart.",
        note=(f"{what} not recorded for {', '.join(missing[:6])}"
              + (f" and {len(missing) - 6} more" if len(missing) > 6 else "") + ": left as a gap, not plotted as 0."
              if missing else None),
        alt=f"{title}: median and 90th percentile per run, a trace per configuration",
    )


def _these(label_title: str) -> str:
    plural = {"scenario": "scenarios", "workload": "workloads", "run": "runs", "os build": "OS builds",
              "build": "builds", "configuration": "configurations"}
    return "these " + plural.get(label_title.lower(), label_title.lower())


def time_series(
    chart_id: str,
    title: str,
    series: Sequence[tuple[str, Sequence[str], Sequence[float | None]]],
    *,
    value_title: str,
    fmt: Fmt,
    what: str = "Values",
    rate: bool = False,
    exploratory: Sequence[Sequence[bool]] = (),
) -> Chart:
    """Points over time, one trace per named configuration (kept apart, never pooled). ``rate``: the values are
    rates (0–1), drawn in percent on an axis from 0 to 100%. Fewer than two instants: each is a category of
    its own (a date axis of one instant would tick in fractions of a millisecond). ``exploratory``: per series,
    per point, whether its run is exploratory (an open dot, apart from a publishable run's filled one)."""
    instants = {x for _, xs, _ in series for x in xs}
    dated = len(instants) >= 2
    open_ = list(exploratory) or [[] for _ in series]
    traces = [
        {"type": "scatter", "mode": "lines+markers", "name": name,
         "x": list(xs) if dated else [x.replace("T", " ") + " UTC" for x in xs],
         "y": list(ys), "connectgaps": False,
         "marker": {"size": 8, "symbol": ["circle-open" if e else "circle" for e in flags]} if any(flags)
         else {"size": 8}}
        for (name, xs, ys), flags in zip(series, open_, strict=True)
    ]
    x = axis("Run start (UTC)" if dated else "Run start", category=not dated)
    if dated:
        x["type"] = "date"
    figure_layout = layout(x, axis(value_title, from_zero=True, percent=rate), height=320)
    rows = [Row([name, x_, fmt(y)]) for name, xs, ys in series for x_, y in zip(xs, ys, strict=True)]
    gaps = sum(1 for _, _, ys in series for y in ys if y is None)
    has_data = any(y is not None for _, _, ys in series for y in ys)
    lines = "; line: runs of one configuration, in time order" if any(len(xs) > 1 for _, xs, _ in series) else ""
    return chart(
        chart_id,
        title,
        traces,
        figure_layout,
        Table(
            f"{chart_id}-table",
            title,
            [Column("series", "Configuration"), Column("x", "Run start (UTC)"), Column("y", value_title, True)],
            rows,
        ),
        marks=f"Dot: one run at its start time{lines}. The axis starts at 0."
        + (EXPLORATORY_MARKS if any(any(flags) for flags in open_) else ""),
        has_data=has_data,
        empty=f"{what} was not recorded for these runs, so there is nothing to chart.",
        note=f"{what} not recorded for {gaps} point(s): left as gaps, not plotted as 0." if gaps else None,
        alt=f"{title}: one point per run over time",
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
    spec: fc.DeltaChart | None = None,
) -> Chart:
    """Candidate − baseline per scenario, with each interval as a whisker around its point; zero always in
    view (the dotted line: no change)."""
    value_title = spec.axis if spec else value_title
    plus = [None if (d is None or h is None) else h - d for d, h in zip(deltas, highs, strict=True)]
    minus = [None if (d is None or lo is None) else d - lo for d, lo in zip(deltas, lows, strict=True)]
    trace = {
        "type": "scatter",
        "mode": "markers",
        "name": "candidate − baseline (whisker: interval)",
        "x": list(deltas),
        "y": list(labels),
        "error_x": {"type": "data", "array": plus, "arrayminus": minus, "symmetric": False, "visible": True},
        "hoverinfo": "x+y",
        "marker": {"size": 9},
        "showlegend": False,
    }
    zero = {"type": "line", "x0": 0, "x1": 0, "yref": "paper", "y0": 0, "y1": 1, "line": {"dash": "dot", "width": 1}}
    figure_layout = layout(axis(value_title, from_zero=True), axis("Scenario", category=True, reversed_=True),
                           height=max(200, 90 + 34 * len(labels)))
    figure_layout["shapes"] = [zero]
    rows = [
        Row([label, fmt(d), fmt(lo), fmt(h), v])
        for label, d, lo, h, v in zip(labels, deltas, lows, highs, verdicts, strict=True)
    ]
    missing = [label for label, d in zip(labels, deltas, strict=True) if d is None]
    return chart(
        chart_id,
        title,
        [trace],
        figure_layout,
        Table(
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
        marks=spec.marks if spec else "Dot: candidate − baseline; whisker: its interval; dotted line: no change.",
        has_data=len(missing) < len(labels),
        empty="Neither side recorded this figure for a scenario both ran, so there is no change to chart.",
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
    widest = max((p.latency or 0.0 for p in drawn), default=0.0)

    def placed(ps: Sequence[Point]) -> list[str]:
        """Each name toward the plot's middle (left of a point in the right half, under a point in the upper half),
        so no name runs past the chart's edge."""
        return [f"{'bottom' if (p.quality or 0.0) > 0.5 else 'top'} {'left' if (p.latency or 0.0) > widest / 2 else 'right'}"
                for p in ps]

    front = sorted((p for p in drawn if p.front), key=lambda p: (p.latency, -(p.quality or 0.0)))
    others = [p for p in drawn if not p.front]
    traces: list[dict] = []
    if others:
        traces.append({
            "type": "scatter", "mode": "markers+text", "name": "behind the front",
            "x": [p.latency for p in others], "y": [p.quality for p in others], "text": [p.label for p in others],
            "textposition": placed(others), "cliponaxis": False,
            "hoverinfo": "x+y+text", "marker": {"symbol": "circle-open", "size": 10},
        })
    if front:
        traces.append({
            "type": "scatter", "mode": "lines+markers+text", "name": "Pareto front (no device both faster and better)",
            "x": [p.latency for p in front], "y": [p.quality for p in front], "text": [p.label for p in front],
            "textposition": placed(front), "cliponaxis": False,
            "hoverinfo": "x+y+text", "marker": {"symbol": "diamond", "size": 12}, "line": {"dash": "dot"},
        })
    missing = [p.label for p in points if p.latency is None or p.quality is None]
    return chart(
        chart_id,
        title,
        traces,
        layout(axis(latency_title, from_zero=True), axis(quality_title, from_zero=True, percent=True), height=360),
        Table(
            f"{chart_id}-table",
            title,
            [Column("label", "Device"), Column("latency", latency_title, True), Column("quality", quality_title, True),
             Column("front", "On the Pareto front")],
            [Row([p.label, latency_fmt(p.latency), quality_fmt(p.quality), "yes" if p.front else "no"]) for p in points],
        ),
        marks="Each point is one device's pooled runs, named beside it: its median TTFT across, its task success up; "
        "diamonds joined by the dotted line are the Pareto front (no other device is both faster and more successful).",
        has_data=bool(drawn),
        empty="No device on this board has both its TTFT and its task success recorded, so there is nothing to chart.",
        note=(f"{what} not recorded for {', '.join(missing)}: left out, not plotted as 0." if missing else None),
        alt=f"{title}: one point per device, the Pareto front marked",
    )
