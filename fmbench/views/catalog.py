"""Devices across OS builds, and scenarios across devices and builds."""

from __future__ import annotations

import itertools
import statistics
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from fmbench import urls
from fmbench.analysis import display as d
from fmbench.analysis import figure_catalog as fc
from fmbench.analysis.configuration import ROUTE, config_key, config_label
from fmbench.analysis.os_builds import build_sort_key
from fmbench.runfile import vocabulary as vocab
from fmbench.runfile.names import from_visible, name_findings
from fmbench.storage.queries import ordered_scenarios, scenario_order, token_sources
from fmbench.views import catalog_queries as q
from fmbench.views import charts
from fmbench.views import distributions as dist
from fmbench.views.blocks import Cell, Chart, Column, FilterForm, Row, Table
from fmbench.views.common import (
    device_key,
    figure_cells,
    figure_columns,
    figure_keys,
    os_label,
    os_name,
    run_link,
    verdict_cell,
)
from fmbench.views.comparisons import build_pairs
from fmbench.views.device_charts import DRAWN_WORKLOADS, Trend, Workload, device_charts
from fmbench.views.filters import Filters, filter_form, run_attrs
from fmbench.views.page import Page
from fmbench.views.pcc_figures import pcc_speed, with_pcc_speed
from fmbench.views.runs import empty_text, runs_table
from fmbench.views.site import SiteContext

ATTEMPT_RULE = (
    "Where a build has several runs of one configuration, the run it stands on on every page is shown: the newest "
    "publishable one, an exploratory one only where none is publishable (attempt rule: latest). Invalid runs never "
    "appear here."
)


# --- devices ------------------------------------------------------------------------------


@dataclass(frozen=True)
class DevicesPage(Page):
    template: ClassVar[str] = "devices.html"
    nav_active: ClassVar[str] = "devices"
    filters: FilterForm
    devices: Table


NAME_WARNING = "may pass for another device's name"
"""The devices index's mark on a device whose name or hardware model reads like another (its findings in the
mark's tooltip)."""


def _name_warning(r: dict[str, Any]) -> Cell | str:
    """The mark of a device whose name or hardware model (stored as shown: hidden characters as ``<U+XXXX>``)
    holds invisible characters or look-alike letters (:func:`fmbench.runfile.names.name_findings`); blank for
    a plain one."""
    shown = dict.fromkeys(v for v in (r["name"], r["key"]) if v)
    findings = [f for v in shown if not v.isascii() or "<U+" in v for f in name_findings(from_visible(v))]
    return Cell(NAME_WARNING, title="; ".join(findings)) if findings else ""


def devices_page(site: SiteContext, filters: Filters) -> DevicesPage:
    found = q.devices(site.con, filters)
    warnings = [_name_warning(r) for r in found]
    flagged = any(warnings)  # the column only where a name needs it
    table = Table(
        "devices",
        "Devices (by hardware model)",
        [
            Column("device", "Device"),
            Column("hardware", "Hardware model"),
            *([Column("name_warning", "Name", help="Invisible characters or letters of another script that look "
                      "like Latin ones: two devices that read alike")] if flagged else []),
            Column("systems", "OS"),
            Column("builds", "OS builds"),
            Column("runs", "Runs", True),
            Column("publishable", "Publishable", True),
            Column("latest", "Newest run (UTC)"),
        ],
        [
            Row(
                [
                    Cell(r["name"], href=site.url(site.paths.device(r["key"]))),
                    r["key"],
                    *([warning] if flagged else []),
                    ", ".join(os_name({"system_name": s, "hardware_model": r["key"]}) for s in r["systems"].split(", "))
                    if r["systems"] else None,
                    r["builds"],
                    d.count(r["runs"]),
                    d.count(r["publishable"]),
                    f"{r['latest']:%Y-%m-%d}",
                ],
                {"device": r["key"]},
            )
            for r, warning in zip(found, warnings, strict=True)
        ],
    )
    return DevicesPage("Devices", filter_form(site.con, site.url(urls.devices()), filters, fields=["os_build", "device", "route", "suite"], noun="devices"), table)


def device_instances(site: SiteContext) -> list[dict[str, Any]]:
    return [{"device": site.paths.devices.of(k)} for k in q.device_keys(site.con)]


@dataclass(frozen=True)
class ConfigSection:
    label: str
    builds: list[str]
    table: Table
    trend: Trend | None
    """What the page's charts draw of it: only where the configuration was measured on two builds or more."""
    service: bool
    anchor: str = ""
    """The section's fragment id, for the configuration picker at the top of the page."""
    variation: Table | None = None
    """Run-to-run variation: where one OS build has two runs of the configuration or more, the spread of their
    headline figures per scenario (``None``: no build has)."""


@dataclass(frozen=True)
class DevicePage(Page):
    template: ClassVar[str] = "device.html"
    nav_active: ClassVar[str] = "devices"
    device: str
    hardware_model: str
    filters: FilterForm
    runs: Table
    sections: list[ConfigSection]
    attempt_rule: str
    compare_links: list[Cell]
    """Every published comparison of two of this device's builds."""
    configs: list[Cell]
    """The configuration picker: one link per section (its label and how many builds measured it)."""
    charts: list[Chart] = field(default_factory=list)
    """One chart a figure and route (:func:`~fmbench.views.device_charts.device_charts`): each configuration measured
    on two OS builds or more drawn across them, on-device and PCC never on one axis."""
    single_build: list[Cell] = field(default_factory=list)
    """The configurations measured on one OS build only, each linked to its section: no trend to draw, their figures
    in their table."""


def _build_order(found: list[dict[str, Any]]) -> list[str]:
    """The runs' OS builds in version order (:func:`~fmbench.analysis.os_builds.build_sort_key`; not by run date, which
    mixes OS generations), a build not recorded last."""
    builds = {r["os_build"] for r in found}
    order = sorted((b for b in builds if b), key=build_sort_key)
    return order + (["not recorded"] if None in builds or "" in builds else [])


def _with_sources_and_pcc_speed(
    site: SiteContext, figures: dict[str, list[dict[str, Any]]], latest: dict[str, dict[str, Any]]
) -> dict[str, list[dict[str, Any]]]:
    """Each scenario row with its token count source; a PCC run's speed and memory over the trials PCC answered."""
    run_ids = list(figures)
    sources = token_sources(site.con, run_ids)
    pcc_ids = [r["run_id"] for r in latest.values() if r["route"] == "privateCloudCompute"]
    speeds = pcc_speed(site.con, pcc_ids)
    out = {}
    for run_id, rows_ in figures.items():
        out[run_id] = [
            {
                **(with_pcc_speed(f, speeds.get((run_id, f["scenario_id"]))) if run_id in pcc_ids else f),
                "token_count_source": sources.scenario(run_id, f["scenario_id"]),
            }
            for f in rows_
        ]
    return out


def _fell_back_note(figures: Any) -> str:
    n = sum(f.get("pcc_fell_back", 0) for f in figures)
    return (f" (PCC latency, throughput and memory over the trials PCC answered; {n} trial(s) that fell back to "
            "the on-device model left out of them)") if n else ""


def _section(
    site: SiteContext, label: str, latest: dict[str, dict[str, Any]], builds: list[str], key: str,
    figures: dict[str, list[dict[str, Any]]],
) -> ConfigSection:
    """One configuration's section; ``figures``: the scenario rows of (at least) its runs, as
    :func:`_with_sources_and_pcc_speed` gives them."""
    by = {(b, f["scenario_id"]): f for b in builds if b in latest for f in figures.get(latest[b]["run_id"], [])}
    titles: dict[str, str] = {}
    for b in builds:
        for f in figures.get(latest[b]["run_id"], []) if b in latest else []:
            titles.setdefault(f["scenario_id"], site.scenario_title(f["scenario_id"], f["title"]))
    listed = [(r["run_id"], f["ordinal"], f["scenario_id"]) for r in latest.values() for f in figures.get(r["run_id"], [])]
    started = {r["run_id"]: r["started_at"] for r in latest.values()}
    ordered = [(sid, titles[sid]) for sid in scenario_order(listed, started)]
    trend = len([b for b in builds if b in latest]) >= 2
    keys = figure_keys("device" if trend else "device-one-build")
    table_rows = []
    for sid, title in ordered:
        for b in builds:
            f = by.get((b, sid))
            if f is None:
                continue
            run = latest[b]
            table_rows.append(
                Row(
                    [
                        title,
                        b,
                        run_link(run, site.url),
                        verdict_cell(run["verdict"], site.url),
                        *figure_cells(f, (*keys, "tokens")),
                    ],
                    run_attrs(run),
                )
            )
    service = next(iter(latest.values()))["route"] == "privateCloudCompute"
    table = Table(
        f"builds-{key}",
        (f"{label}: quality and latency per OS build, side by side" if trend
         else f"{label}: measured on one OS build, so no trend to draw") + _fell_back_note(by.values()),
        [
            Column("scenario", "Scenario"),
            Column("build", "OS build"),
            Column("run", "Run"),
            Column("verdict", "Verdict"),
            *figure_columns((*keys, "tokens")),
        ],
        table_rows,
    )
    if not trend:
        return ConfigSection(label, builds, table, None, service, key)
    measured = [b for b in builds if b in latest]
    workloads = {}
    for chart in fc.CATALOG.charts:
        median, p90 = fc.CATALOG.charted(chart)
        workloads[chart.id] = [
            Workload(title, {b: (by[(b, sid)][median.stored], by[(b, sid)][p90.stored]) if (b, sid) in by
                             else (None, None) for b in measured})
            for sid, title in ordered[:DRAWN_WORKLOADS]
        ]
    route = ROUTE.show(next(iter(latest.values()))["route"]) or ""
    return ConfigSection(label, builds, table, Trend(
        label.removeprefix(route + " · "), service, measured,
        frozenset(b for b in measured if latest[b]["verdict"] == "exploratory"), workloads,
        max(0, len(ordered) - DRAWN_WORKLOADS),
    ), service, key)


VARIATION_TABLE: fc.Table = "device-one-build"
"""The headline figures whose spread across runs of one build a device page shows (the columns of this table)."""


def _spread(f: fc.Figure, values: list[float]) -> Cell:
    """The spread of one figure's values over a build's runs: the lowest to the highest, and their SD."""
    if len(values) < 2:
        return Cell(None, reason="recorded in fewer than two of the runs")
    return Cell(f"{f.format(min(values))} – {f.format(max(values))} (SD {f.format(statistics.stdev(values))})",
                title=f"lowest – highest of {len(values)} runs, and their standard deviation")


def _variation(
    label: str, key: str, members: list[dict[str, Any]], figures: dict[str, list[dict[str, Any]]],
) -> Table | None:
    """Run-to-run variation of one configuration: per OS build with two runs of it or more, per scenario, the spread of
    each headline figure over the runs; ``None`` where every build has one run."""
    by_build: dict[str, list[dict[str, Any]]] = {}
    for r in sorted(members, key=lambda r: r["started_at"]):
        by_build.setdefault(r["os_build"] or "not recorded", []).append(r)
    repeated = {b: runs for b, runs in by_build.items() if len(runs) >= 2}
    if not repeated:
        return None
    keys = figure_keys(VARIATION_TABLE)
    shown = [fc.CATALOG.column(k) for k in keys]
    rows_ = []
    for build, runs in repeated.items():
        per_scenario: dict[str, list[dict[str, Any]]] = {}
        titles: dict[str, str] = {}
        for r in runs:
            for f in figures.get(r["run_id"], []):
                per_scenario.setdefault(f["scenario_id"], []).append(f)
                titles.setdefault(f["scenario_id"], f["title"])
        for sid, found in per_scenario.items():
            cells: list[Any] = [titles[sid], build, d.count(len(found))]
            for f in shown:
                measured = [row for row in found if row["trial_count"] or f.attempts]
                cells.append(_spread(f, [row[f.stored or f.key] for row in measured
                                         if row[f.stored or f.key] is not None]))
            shared = run_attrs(runs[-1])  # what the build's runs of one configuration share (not their verdicts)
            rows_.append(Row(cells, {k: shared[k] for k in ("os_build", "device", "route", "suite")}))
    return Table(
        f"variation-{key}",
        f"{label}: run-to-run variation, where one OS build has several runs (lowest to highest of the runs' "
        "figures, and their standard deviation)",
        [Column("scenario", "Scenario"), Column("build", "OS build"), Column("runs", "Runs", True),
         *[Column(k, f.heading, True, f"{f.help + '; ' if f.help else ''}lowest – highest over the runs")
           for k, f in zip(keys, shown, strict=True)]],
        rows_,
    )


def device_page(site: SiteContext, filters: Filters, device: str) -> DevicePage:
    key = site.paths.devices.named(device, "device")
    found = q.device_runs(site.con, key, filters)
    name = found[0]["device_name"] if found else key
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for r in found:
        if r["verdict"] != "invalid":
            groups.setdefault(config_key(r), []).append(r)
    published = set(build_pairs(site))  # link only the comparisons the site has a page for
    sections = []
    compare_links: list[Cell] = []
    configs = []
    index = site.evidence()
    for configuration, members in sorted(groups.items(), key=lambda kv: config_label(kv[1][0])):
        latest: dict[str, dict[str, Any]] = {}
        for r in sorted(members, key=lambda r: r["started_at"]):
            latest[r["os_build"] or "not recorded"] = r
        by_id = {r["run_id"]: r for r in members}
        for build in list(latest):  # the run each build stands on on every page, where the filters kept it
            evidence = index.cell(key, build, configuration)
            if evidence is not None and evidence.run_ids[-1] in by_id:
                latest[build] = by_id[evidence.run_ids[-1]]
        configs.append((members, latest))
    # Every section's scenario rows in one query each, rather than a few queries per section.
    shown = {r["run_id"]: r for _, latest in configs for r in latest.values()}
    # and every run of a build that has several of one configuration: their spread is shown
    for members, _ in configs:
        builds_of = [r["os_build"] for r in members]
        shown.update({r["run_id"]: r for r in members if builds_of.count(r["os_build"]) >= 2})
    figures = _with_sources_and_pcc_speed(site, q.figures_by_run(site.con, list(shown)), shown)
    for i, (members, latest) in enumerate(configs):
        builds = _build_order(members)
        section = _section(site, config_label(members[0]), latest, builds, f"c{i}", figures)
        sections.append(replace(section, variation=_variation(section.label, f"c{i}", members, figures)))
        real = [b for b in builds if b != "not recorded"]
        for a, b in itertools.combinations(real, 2):
            if (key, b, a) in published:
                a, b = b, a
            link = Cell(f"{a} → {b} ({config_label(members[0])})",
                        href=site.url(site.paths.comparison(key, a, b, urls.configuration_anchor(config_key(members[0])))))
            if (key, a, b) in published and link not in compare_links:
                compare_links.append(link)
    return DevicePage(
        title=f"{name} ({key})",
        device=name,
        hardware_model=key,
        filters=filter_form(
            site.con,
            site.url(site.paths.device(key)),
            filters,
            fields=["os_build", "route", "suite", "revision", "verdict"],
            scope=(q.DEVICE_SCOPE, [key]),
            noun="rows",
        ),
        runs=runs_table(found, site.url, "device-runs", f"Runs on {name}", paths=site.paths, empty=empty_text(filters)),
        sections=sections,
        charts=device_charts([s.trend for s in sections if s.trend is not None]),
        single_build=[Cell(s.label, href=f"#{s.anchor}") for s in sections if s.trend is None],
        attempt_rule=ATTEMPT_RULE,
        compare_links=compare_links,
        configs=[
            Cell(s.label, href=f"#{s.anchor}",
                 title=f"{len(s.builds)} OS build" + ("s" if len(s.builds) != 1 else ""))
            for s in sections
        ],
    )


# --- scenarios ----------------------------------------------------------------------------


@dataclass(frozen=True)
class ScenariosPage(Page):
    template: ClassVar[str] = "scenarios.html"
    nav_active: ClassVar[str] = "scenarios"
    scenarios: Table


def scenarios_page(site: SiteContext, filters: Filters) -> ScenariosPage:
    found = q.scenario_totals(site.con)
    order = ordered_scenarios(site.con, q.run_ids(site.con))
    place = {sid: i for i, sid in enumerate(order)}
    found.sort(key=lambda r: place.get(r["scenario_id"], len(place)))
    return ScenariosPage(
        "Scenarios",
        Table(
            "scenarios",
            "Workloads measured",
            [
                Column("scenario", "Scenario"),
                Column("title", "Title"),
                Column("category", "Category"),
                Column("runs", "Runs", True),
                Column("devices", "Devices", True),
                Column("builds", "OS builds", True),
                Column("trials", "Trials", True),
            ],
            [
                Row(
                    [
                        Cell(r["scenario_id"], href=site.url(site.paths.scenario(r["scenario_id"]))),
                        site.scenario_title(r["scenario_id"], r["title"]),
                        vocab.label("category", r["category"]),
                        d.count(r["runs"]),
                        d.count(r["devices"]),
                        d.count(r["builds"]),
                        d.count(int(r["trials"])),
                    ]
                )
                for r in found
            ],
        ),
    )


def scenario_instances(site: SiteContext) -> list[dict[str, Any]]:
    return [{"scenario": site.paths.scenarios.of(s)} for s in q.scenario_ids(site.con)]


@dataclass(frozen=True)
class ScenarioPage(Page):
    template: ClassVar[str] = "scenario.html"
    nav_active: ClassVar[str] = "scenarios"
    scenario_id: str
    category: str | None
    filters: FilterForm
    on_device: Table
    pcc: Table
    charts: list[Chart]
    excluded: int
    distributions: Table | None = None
    """Per run, the full distribution of each per-trial figure of this scenario."""
    trial_charts: list[Chart] = field(default_factory=list)
    """TTFT of every trial, with the median and p90 per run; on-device and PCC never on one axis."""
    leaderboard: str | None = None
    """The workload's leaderboard: its devices ranked."""


def _scenario_table(site: SiteContext, found: list[dict[str, Any]], table_id: str, caption: str) -> Table:
    return Table(
        table_id,
        caption,
        [
            Column("device", "Device"),
            Column("os", "OS (build)"),
            Column("config", "Configuration"),
            Column("run", "Run"),
            Column("verdict", "Verdict"),
            *figure_columns((*figure_keys("scenario"), "tokens")),
        ],
        [
            Row(
                [
                    Cell(r["device_name"], href=site.url(site.paths.device(device_key(r)))),
                    os_label(r),
                    config_label(r),
                    run_link(r, site.url, f"{r['started_at']:%Y-%m-%d}"),
                    verdict_cell(r["verdict"], site.url),
                    *figure_cells(r, (*figure_keys("scenario"), "tokens")),
                ],
                run_attrs(r),
            )
            for r in found
        ],
        "No run of this workload on this route matches.",
    )


def scenario_page(site: SiteContext, filters: Filters, scenario: str) -> ScenarioPage:
    scenario_id = site.paths.scenarios.named(scenario, "scenario")
    found = q.scenario_runs(site.con, scenario_id, filters)
    sources = token_sources(site.con, [r["run_id"] for r in found])
    found = [{**r, "token_count_source": sources.scenario(r["run_id"], scenario_id)} for r in found]
    on_device = [r for r in found if r["route"] == "onDevice"]
    # PCC speed and memory from the trials PCC answered; the fallbacks are counted and said.
    speeds = pcc_speed(site.con, [r["run_id"] for r in found if r["route"] == "privateCloudCompute"])
    pcc = [with_pcc_speed(r, speeds.get((r["run_id"], scenario_id))) for r in found if r["route"] == "privateCloudCompute"]
    fell_back = sum(r["pcc_fell_back"] for r in pcc)
    title = site.scenario_title(scenario_id, found[0]["title"] if found else None)
    chart_list = []
    ttft = fc.CATALOG.chart("ttft")  # a workload's runs are charted by time to first token
    median, p90 = fc.CATALOG.charted(ttft)
    for route_rows, label, suffix in (
        (on_device, "on-device", ""),
        (pcc, "pcc", " (PCC service: network and server included)"),
    ):
        # One chart a route, each configuration (fmbench.analysis.configuration.config_label) a trace: never pooled.
        configurations: dict[str, list[dict[str, Any]]] = {}
        for r in route_rows:
            configurations.setdefault(config_label(r), []).append(r)
        if not configurations:
            continue
        route = ROUTE.show(route_rows[0]["route"]) or route_rows[0]["route"]
        groups = [
            charts.Group(
                config.removeprefix(route + " · "),  # the chart is of one route: its traces need not say it
                [f"{r['device_name']} · {r['os_build'] or 'no build'} · {r['started_at']:%m-%d} · {r['run_id'][:6]}"
                 for r in config_rows],
                [r[median.stored] for r in config_rows],
                [r[p90.stored] for r in config_rows],
                [r["verdict"] == "exploratory" for r in config_rows],
            )
            for config, config_rows in configurations.items()
        ]
        chart_list.append(charts.runs_by_configuration(
            f"{ttft.id}-{label}", f"{ttft.name}, {'on-device' if not suffix else 'PCC'} runs by configuration{suffix}",
            groups, fmt=median.format, what=ttft.what, spec=ttft,
        ))
    run_label = {
        r["run_id"]: f"{r['device_name']} · {r['os_build'] or 'no build'} · {r['started_at']:%m-%d} · {r['run_id'][:6]}"
        for r in found
    }
    spread = dist.scenario_trial_values(site.con, scenario_id, [r["run_id"] for r in found])
    charted = fc.CATALOG.metric(median.source)
    trial_charts = [
        c
        for route_rows, label, suffix in ((on_device, "on-device", ", on-device"), (pcc, "pcc", ", PCC (service)"))
        if (c := dist.trials_chart(f"trials-{ttft.id}-{label}", charted, run_label, spread, [r["run_id"] for r in route_rows],
                                   per="run", suffix=suffix)) is not None
    ]
    return ScenarioPage(
        title=f"{title} ({scenario_id})",
        scenario_id=scenario_id,
        category=vocab.label("category", found[0]["category"]) if found else None,
        filters=filter_form(
            site.con,
            site.url(site.paths.scenario(scenario_id)),
            filters,
            scope=("r.run_id IN (SELECT run_id FROM scenario_figures WHERE scenario_id = ?)", [scenario_id]),
            noun="runs",
        ),
        on_device=_scenario_table(site, on_device, "scenario-on-device", "On-device runs of this workload"),
        pcc=_scenario_table(
            site, pcc, "scenario-pcc",
            "Private Cloud Compute runs of this workload (latency, throughput and memory over the trials PCC "
            f"answered; {fell_back} trial(s) that fell back to the on-device model left out of them)"
            if fell_back else "Private Cloud Compute runs of this workload",
        ),
        charts=chart_list,
        excluded=q.invalid_scenario_runs(site.con, scenario_id),
        distributions=dist.distribution_table(
            "scenario-distributions", run_label, spread, per="Run",
            caption="Distributions per run (nearest-rank median and p90, population standard deviation)",
        ),
        trial_charts=trial_charts,
        leaderboard=site.url(site.paths.leaderboard(scenario_id)),
    )
