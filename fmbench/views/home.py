"""The home page, methodology, suite revisions and the data index."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from markupsafe import Markup

from fmbench import urls
from fmbench.analysis import display as d
from fmbench.analysis import figure_catalog as fc
from fmbench.analysis.configuration import SESSION_MODE, config_label
from fmbench.analysis.revisions import Revision
from fmbench.runfile import vocabulary as vocab
from fmbench.views import charts
from fmbench.views import home_queries as q
from fmbench.views.blocks import Cell, Chart, Column, FilterForm, Link, Row, Table
from fmbench.views.catalog_queries import figures_by_run
from fmbench.views.common import (
    device_key,
    os_label,
    revision_cell,
    run_link,
    verdict_cell,
)
from fmbench.views.comparisons import regression_report
from fmbench.views.filters import Filters, filter_form, run_attrs
from fmbench.views.markdown_render import render_markdown
from fmbench.views.methodology import fmbench_methodology, merge_methodology
from fmbench.views.page import Page
from fmbench.views.runs import runs_table
from fmbench.views.site import SiteContext


@dataclass(frozen=True)
class Stat:
    label: str
    value: str
    href: str | None = None


@dataclass(frozen=True)
class ConfigOverview:
    label: str
    run: Cell
    service: bool
    charts: list[Chart]


@dataclass(frozen=True)
class DeviceOverview:
    device: Cell
    build: Cell
    configs: list[ConfigOverview]


@dataclass(frozen=True)
class HomePage(Page):
    template: ClassVar[str] = "home.html"
    nav_active: ClassVar[str] = "home"
    uses_charts: ClassVar[bool] = True
    stats: list[Stat]
    overview: list[DeviceOverview]
    changes: list[Cell]
    on_device: Table
    pcc: Table
    sections: list[Link]


def _latest_table(site: SiteContext, route: str, table_id: str, caption: str) -> Table:
    found = q.newest_run_per_configuration(site.con, route)
    columns = [
        Column("device", "Device"),
        Column("os", "OS (build)"),
        Column("suite", "Suite"),
        Column("session", "Session"),
        Column("started", "Newest run (UTC)"),
        Column("verdict", "Verdict"),
        Column("revision", "Revision"),
        Column("trials", "Trials", True),
        Column("failures", "Failures", True),
    ]
    out = [
        Row(
            [
                Cell(r["device_name"], href=site.url(site.paths.device(device_key(r)))),
                os_label(r),
                vocab.label("suite", r["suite"]),
                SESSION_MODE.show(r[SESSION_MODE.key]),
                run_link(r, site.url, f"{r['started_at']:%Y-%m-%d %H:%M}"),
                verdict_cell(r["verdict"], site.url),
                revision_cell(r, site.url),
                d.count(r["trial_count"]),
                d.count(r["failure_count"]),
            ],
            run_attrs(r),
        )
        for r in found
    ]
    return Table(table_id, caption, columns, out, "No run on this route yet.")


def _overview(site: SiteContext) -> list[DeviceOverview]:
    """Each device's newest build with a publishable run: per configuration, median TTFT and output tokens/s
    per workload as small charts of their own (a PCC configuration never shares an axis with on-device)."""

    found = q.newest_publishable_build_runs(site.con)
    figures = figures_by_run(site.con, [r["run_id"] for r in found])
    devices: dict[str, DeviceOverview] = {}
    for i, r in enumerate(found):
        key = device_key(r)
        if key not in devices:
            devices[key] = DeviceOverview(
                Cell(f"{r['device_name']} ({key})", href=site.url(site.paths.device(key))),
                Cell(os_label(r), href=site.url(site.paths.build(r["os_build"]))),
                [],
            )
        label = config_label(r)
        service = r["route"] == "privateCloudCompute"
        measured = [f for f in figures.get(r["run_id"], [])]
        titles = [f["title"] for f in measured]
        suffix = " (PCC service: network and server included)" if service else ""
        small = [
            charts.median_p90(
                f"overview-{i}-{chart.id}",
                f"{chart.headline}{suffix}",
                titles,
                [charts.Series("", [f[median.stored] for f in measured], [f[p90.stored] for f in measured])],
                value_title=chart.axis,
                label_title="Workload",
                fmt=median.format,
                what=chart.headline,
            )
            for chart in fc.CATALOG.charts
            for median, p90 in [fc.CATALOG.charted(chart)]
        ]
        devices[key].configs.append(ConfigOverview(label, run_link(r, site.url, f"{r['started_at']:%Y-%m-%d}"), service, small))
    return list(devices.values())


def _latest_changes(site: SiteContext, limit: int = 8) -> list[Cell]:
    """The newest changes the regression report found between consecutive builds, newest candidate first."""

    changes: list[Any] = sorted(
        regression_report(site).changes, key=lambda c: c.step.candidate_first_seen, reverse=True
    )[:limit]
    return [
        Cell(c.headline(), href=site.url(site.paths.comparison(c.hardware_model, c.baseline_build, c.candidate_build)),
             tone="worse" if c.is_regression else "better")
        for c in changes
    ]


def home_page(site: SiteContext, filters: Filters) -> HomePage:
    found = q.run_counts(site.con)
    counts = found.by_verdict
    url = site.url
    return HomePage(
        title="Foundation Models benchmark results",
        stats=[
            Stat("runs", d.count(found.runs) or "0", url(urls.runs())),
            Stat("publishable", d.count(counts.get("publishable", 0)) or "0", url(urls.runs()) + "?verdict=publishable"),
            Stat("exploratory", d.count(counts.get("exploratory", 0)) or "0", url(urls.runs()) + "?verdict=exploratory"),
            Stat("invalid as evidence", d.count(counts.get("invalid", 0)) or "0", url(urls.runs()) + "?verdict=invalid"),
            Stat("devices", d.count(found.devices) or "0", url(urls.devices())),
            Stat("OS builds", d.count(found.os_builds) or "0", url(urls.builds())),
            Stat("measured trials", d.count(found.measured_trials) or "0", url(urls.data())),
        ],
        overview=_overview(site),
        changes=_latest_changes(site),
        on_device=_latest_table(site, "onDevice", "latest-on-device", "On-device: newest run per device, OS build and suite"),
        pcc=_latest_table(
            site,
            "privateCloudCompute",
            "latest-pcc",
            "Private Cloud Compute: newest run per device, OS build and suite (a service benchmark: never ranked with on-device speed)",
        ),
        sections=[
            Link("Runs", url(urls.runs()), "every run with its verdict, filterable by OS build"),
            Link("Devices", url(urls.devices()), "one device across OS builds"),
            Link("OS builds", url(urls.builds()), "what each build measured and changed"),
            Link("Scenarios", url(urls.scenarios()), "one workload across devices and builds"),
            Link("Private Cloud Compute", url(urls.pcc()), "the service over time"),
            Link("Compare OS builds", url(urls.compare_index()), "baseline vs candidate, with intervals"),
            Link("Regressions", url(urls.regressions()), "changes between builds that are not noise, with a feed"),
            Link("Suite revisions", url(urls.revisions()), "which set of tasks each pass rate belongs to"),
            Link("Methodology", url(urls.methodology()), "how every figure is measured and judged"),
            Link("Data", url(urls.data()), "original files, CSV and JSON"),
        ],
    )


@dataclass(frozen=True)
class MethodologyPage(Page):
    template: ClassVar[str] = "methodology.html"
    nav_active: ClassVar[str] = "methodology"
    markdown_html: Markup


def methodology_page(site: SiteContext, filters: Filters) -> MethodologyPage:

    source = fmbench_methodology()
    if site.methodology.strip():
        source = merge_methodology(source, site.methodology)
    return MethodologyPage("Methodology", render_markdown(source))


@dataclass(frozen=True)
class RevisionEntry:
    revision: Revision
    status: Cell
    runs: Table


@dataclass(frozen=True)
class RevisionsPage(Page):
    template: ClassVar[str] = "revisions.html"
    nav_active: ClassVar[str] = "revisions"
    entries: list[RevisionEntry]
    unknown_runs: Table


def revisions_page(site: SiteContext, filters: Filters) -> RevisionsPage:
    by_revision = q.runs_by_revision(site.con)
    entries = [
        RevisionEntry(
            revision=r,
            status=Cell("current" if r.current else "superseded", tone=r.status),
            runs=runs_table(by_revision.get(r.id, []), site.url, f"revision-{r.id}", f"Runs measured on revision {r.id}",
                            paths=site.paths),
        )
        for r in sorted(site.registry.revisions, key=lambda r: r.date, reverse=True)
    ]
    return RevisionsPage(
        "Suite revisions",
        entries,
        runs_table(by_revision.get(None, []), site.url, "revision-unknown", "Runs whose revision cannot be determined",
                   paths=site.paths),
    )


@dataclass(frozen=True)
class DataPage(Page):
    template: ClassVar[str] = "data.html"
    nav_active: ClassVar[str] = "data"
    filters: FilterForm
    files: Table
    index: list[Link]


def data_page(site: SiteContext, filters: Filters) -> DataPage:
    found = q.data_runs(site.con, filters)
    url = site.url
    table_rows = [
        Row(
            [
                run_link(r, url),
                Cell(original[0], href=original[1]) if (original := site.original(r["run_id"], r["file_name"], r["source_sha256"]))
                else Cell(r["file_name"]),
                Cell(r["source_sha256"][:16] + "…", title=r["source_sha256"]),
                Cell("by scenario (JSON, gzip)", href=url(urls.run(r["run_id"]) + "#trials-heading")),
                Cell("figures.json", href=url(urls.data_figures(r["run_id"]))),
                verdict_cell(r["verdict"], url),
            ],
            run_attrs(r),
        )
        for r in found
    ]
    return DataPage(
        "Data",
        filter_form(site.con, url(urls.data()), filters),
        Table(
            "data-files",
            "Every run's original file (gzipped, linked or as ingested: its SHA-256 is the original's), its trials and its recomputed figures",
            [
                Column("run", "Run"),
                Column("file", "Original file"),
                Column("sha", "SHA-256"),
                Column("csv", "Trials"),
                Column("json", "Figures"),
                Column("verdict", "Verdict"),
            ],
            table_rows,
        ),
        [
            Link("All runs with their figures (JSON)", url(urls.data_runs_index())),
            Link("Regressions feed (Atom)", url(urls.regressions_feed())),
        ],
    )


