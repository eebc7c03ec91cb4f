"""A device page's charts: one chart a figure and route, each configuration measured on two OS builds or more drawn
on it across the builds (a trace per workload of it), on-device and PCC never on one axis."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from fmbench.analysis import figure_catalog as fc
from fmbench.analysis.os_builds import build_sort_key
from fmbench.views import charts
from fmbench.views.blocks import Chart, Column, Row, Table

NOT_RECORDED = "not recorded"
"""The label of a run's OS build that its file does not record: drawn last, after every build in version order."""

DRAWN_WORKLOADS = 8
"""The most workloads of one configuration a chart draws (its first ones in the page's order)."""

PCC_MARKS = (" PCC's figures are a service's, network and server included: they get this chart of their own, never "
             "an on-device axis.")


@dataclass(frozen=True)
class Workload:
    """One workload of a configuration on one chart: its title and, per OS build the configuration was measured on,
    the median and p90 of the chart's figure (``None``: not recorded)."""

    title: str
    values: dict[str, tuple[float | None, float | None]]


@dataclass(frozen=True)
class Trend:
    """One configuration measured on two OS builds or more, as the device's charts draw it."""

    name: str
    """The configuration's label without its route (a chart is of one route, its title says which)."""
    service: bool
    """A PCC configuration (its figures include the network and the server)."""
    builds: Sequence[str]
    """The OS builds it was measured on, in version order."""
    exploratory: frozenset[str]
    """The builds whose run it stands on there is exploratory (an open dot)."""
    workloads: dict[str, list[Workload]]
    """Per catalog chart id, its workloads in the page's order (at most :data:`DRAWN_WORKLOADS` of them)."""
    more: int = 0
    """How many more workloads it measured than the charts draw (they are in its section's table)."""


def in_order(builds: set[str]) -> list[str]:
    """OS builds in version order (never by the date measured), a build not recorded last."""
    return sorted((b for b in builds if b != NOT_RECORDED), key=build_sort_key) + (
        [NOT_RECORDED] if NOT_RECORDED in builds else [])


def _listed(found: Sequence[str]) -> str:
    return ", ".join(found[:6]) + (f" and {len(found) - 6} more" if len(found) > 6 else "")


def _route_chart(spec: fc.Chart, trends: Sequence[Trend], service: bool) -> Chart:
    """One figure's chart of one route: every configuration's workloads as traces over the union of their builds."""
    median, p90 = fc.CATALOG.charted(spec)
    builds = in_order({b for t in trends for b in t.builds})
    route = "PCC" if service else "on-device"
    one = len(trends) == 1
    series: list[charts.Series] = []
    rows: list[Row] = []
    gaps: list[str] = []
    for t in trends:
        for w in t.workloads.get(spec.id, []):
            name = w.title if one else f"{t.name} · {w.title}"
            pairs = [w.values.get(b, (None, None)) for b in builds]
            series.append(charts.Series(name, [m for m, _ in pairs], [p for _, p in pairs],
                                        [b in t.exploratory for b in builds]))
            rows += [Row([name, b, median.format(w.values[b][0]), p90.format(w.values[b][1])])
                     for b in t.builds if b in w.values]
            missing = [b for b in t.builds if w.values.get(b, (None, None))[0] is None]
            if missing:
                gaps.append(f"{name} on {_listed(missing)}")
    named = f": {trends[0].name}" + (f" · {series[0].name}" if len(series) == 1 else "") if one else ""
    title = (f"{spec.name} across OS builds, {route}{named}"
             + (" (PCC service: network and server included)" if service else ""))
    chart_id = f"{spec.id}-{'pcc' if service else 'on-device'}"
    drawn = charts.median_p90(chart_id, title, builds, series, value_title=spec.axis, label_title="OS build",
                              fmt=median.format, horizontal=False, what=spec.what, spec=spec)
    table = Table(f"{chart_id}-table", title,
                  [Column("series", "Workload" if one else "Configuration · workload"), Column("build", "OS build"),
                   Column("median", "Median", True), Column("p90", "p90", True)], rows)
    if not drawn.figure_json:
        return replace(drawn, table=table)
    layout = drawn.figure_json["layout"]
    x = {**layout["xaxis"], "categoryorder": "array", "categoryarray": builds}
    unmeasured = any(set(t.builds) != set(builds) for t in trends)
    note = " ".join(filter(None, [
        f"{spec.what} not recorded for {'; '.join(gaps)}: left as a gap, not plotted as 0." if gaps else "",
        "A configuration has no point on an OS build it was not measured on." if unmeasured else "",
        *(f"{t.name}: its first {DRAWN_WORKLOADS} workloads drawn, {t.more} more in its section's table." for t in trends
          if t.more),
    ])) or None
    if not one:
        marks = " A trace: one workload of one configuration, its dots beside the other traces' at each OS build."
    elif len(series) > 1:
        marks = " A trace: one workload, its dots beside the other traces' at each OS build."
    else:
        marks = ""
    # several traces: each its own slot within an OS build's column, so their dots and whiskers never hide each other
    grouped = {"scattermode": "group", "scattergap": 0.3} if len(series) > 1 else {}
    return replace(drawn, figure_json={**drawn.figure_json, "layout": {**layout, "xaxis": x, **grouped}},
                   table=table, note=note,
                   marks=(drawn.marks or "") + marks + (PCC_MARKS if service else ""))


def device_charts(trends: Sequence[Trend]) -> list[Chart]:
    """The device's charts: per catalog chart, one of its on-device configurations and one of its PCC ones (each
    only where a configuration of that route was measured on two OS builds or more)."""
    out = []
    for spec in fc.CATALOG.charts:
        for service in (False, True):
            of_route = [t for t in trends if t.service == service]
            if of_route:
                out.append(_route_chart(spec, of_route, service))
    return out
