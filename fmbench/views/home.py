"""The home page, methodology, suite revisions and the data index."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from markupsafe import Markup

from fmbench import display as d
from fmbench import urls
from fmbench import vocabulary as vocab
from fmbench.blocks import Cell, Column, FilterForm, Link, Row, Table
from fmbench.filters import Filters, filter_form, run_attrs
from fmbench.markdown_render import render_markdown
from fmbench.revisions import Revision
from fmbench.views.common import (
    RUN_COLUMNS,
    device_key,
    os_label,
    revision_cell,
    rows,
    run_link,
    verdict_cell,
)
from fmbench.views.page import Page
from fmbench.views.site import SiteContext


@dataclass(frozen=True)
class Stat:
    label: str
    value: str
    href: str | None = None


@dataclass(frozen=True)
class HomePage(Page):
    template: ClassVar[str] = "home.html"
    nav_active: ClassVar[str] = "home"
    stats: list[Stat]
    on_device: Table
    pcc: Table
    sections: list[Link]


def _latest_table(site: SiteContext, route: str, table_id: str, caption: str) -> Table:
    found = rows(
        site.con,
        f"SELECT {RUN_COLUMNS} FROM runs r WHERE r.route = ? AND r.verdict <> 'invalid' "
        "QUALIFY row_number() OVER (PARTITION BY coalesce(r.hardware_model, r.device_name), r.os_build, r.suite "
        "ORDER BY r.started_at DESC, r.run_id) = 1 "
        "ORDER BY r.device_name, r.os_generation, r.os_build, r.suite, r.run_id",
        [route],
    )
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
                Cell(r["device_name"], href=site.url(urls.device(device_key(r)))),
                os_label(r),
                vocab.label("suite", r["suite"]),
                vocab.label("sessionMode", r["session_mode"]),
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


def home_page(site: SiteContext, filters: Filters) -> HomePage:
    con = site.con
    counts = dict(con.execute("SELECT verdict, count(*) FROM runs GROUP BY 1").fetchall())
    total = sum(counts.values())
    devices = con.execute("SELECT count(DISTINCT coalesce(hardware_model, device_name)) FROM runs").fetchone()
    builds = con.execute("SELECT count(DISTINCT os_build) FROM runs").fetchone()
    trials = con.execute("SELECT coalesce(sum(trial_count), 0) FROM runs").fetchone()
    url = site.url
    return HomePage(
        title="Foundation Models benchmark results",
        stats=[
            Stat("runs", d.count(total) or "0", url(urls.runs())),
            Stat("publishable", d.count(counts.get("publishable", 0)) or "0", url(urls.runs()) + "?verdict=publishable"),
            Stat("exploratory", d.count(counts.get("exploratory", 0)) or "0", url(urls.runs()) + "?verdict=exploratory"),
            Stat("invalid as evidence", d.count(counts.get("invalid", 0)) or "0", url(urls.runs()) + "?verdict=invalid"),
            Stat("devices", d.count(devices[0] if devices else 0) or "0", url(urls.devices())),
            Stat("OS builds", d.count(builds[0] if builds else 0) or "0", url(urls.compare_index())),
            Stat("measured trials", d.count(int(trials[0]) if trials else 0) or "0", url(urls.data())),
        ],
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
    from fmbench.methodology import fmbench_methodology, merge_methodology

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


def _revision_runs(site: SiteContext, revision_id: str | None, table_id: str, caption: str) -> Table:
    from fmbench.views.runs import runs_table

    found = rows(
        site.con,
        f"SELECT {RUN_COLUMNS} FROM runs r WHERE r.revision_id IS NOT DISTINCT FROM ? ORDER BY r.started_at DESC, r.run_id",
        [revision_id],
    )
    return runs_table(found, site.url, table_id, caption)


def revisions_page(site: SiteContext, filters: Filters) -> RevisionsPage:
    entries = [
        RevisionEntry(
            revision=r,
            status=Cell("current" if r.current else "superseded", tone=r.status),
            runs=_revision_runs(site, r.id, f"revision-{r.id}", f"Runs measured on revision {r.id}"),
        )
        for r in sorted(site.registry.revisions, key=lambda r: r.date, reverse=True)
    ]
    return RevisionsPage(
        "Suite revisions",
        entries,
        _revision_runs(site, None, "revision-unknown", "Runs whose revision cannot be determined"),
    )


@dataclass(frozen=True)
class DataPage(Page):
    template: ClassVar[str] = "data.html"
    nav_active: ClassVar[str] = "data"
    filters: FilterForm
    files: Table
    index: list[Link]


def data_page(site: SiteContext, filters: Filters) -> DataPage:
    where, params = filters.where()
    found = rows(
        site.con,
        f"SELECT {RUN_COLUMNS}, r.source_sha256 FROM runs r WHERE {where} ORDER BY r.started_at DESC, r.run_id",
        params,
    )
    url = site.url
    table_rows = [
        Row(
            [
                run_link(r, url),
                Cell(r["file_name"], href=url(urls.data_source(r["run_id"], r["file_name"]))),
                Cell(r["source_sha256"][:16] + "…", title=r["source_sha256"]),
                Cell("trials.csv", href=url(urls.data_trials_csv(r["run_id"]))),
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
            "Every run's original file (byte-identical), its trials and its recomputed figures",
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


