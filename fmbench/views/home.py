"""The home page, methodology, suite revisions and the data index."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from markupsafe import Markup

from fmbench import urls
from fmbench.analysis import display as d
from fmbench.analysis import figure_catalog as fc
from fmbench.analysis.configuration import SESSION_MODE, config_key, config_label
from fmbench.analysis.revisions import Revision
from fmbench.comparison.history_changes import HistoryChange, newest_first
from fmbench.runfile import vocabulary as vocab
from fmbench.views import home_queries as q
from fmbench.views.blocks import Cell, Column, FilterForm, Link, Row, Table
from fmbench.views.catalog_queries import figures_by_run
from fmbench.views.common import (
    Url,
    device_key,
    figure_cells,
    figure_columns,
    figure_keys,
    os_label,
    retitled_change,
    revision_cell,
    run_link,
    verdict_cell,
)
from fmbench.views.filters import Filters, filter_form, run_attrs
from fmbench.views.home_answers import Answer, answers
from fmbench.views.markdown_render import render_markdown
from fmbench.views.methodology import contents, fmbench_methodology, merge_methodology
from fmbench.views.page import Page
from fmbench.views.pcc_figures import pcc_speed, with_pcc_speed
from fmbench.views.runs import runs_table
from fmbench.views.site import SiteContext


@dataclass(frozen=True)
class Stat:
    value: str
    label: str
    """What is counted, in the number the value takes (``1 device``, ``3 devices``)."""
    href: str | None = None


@dataclass(frozen=True)
class ConfigFigures:
    """One configuration of a device: its newest run that is not invalid and that run's headline figures."""

    label: str
    """The configuration in a few words (route, suite, session, ...)."""
    verdict: Cell
    """Publishable or exploratory, as a badge linking to how runs are judged."""
    exploratory: bool
    """Shown as measured and labelled, never ranked."""
    service: bool
    """A Private Cloud Compute run: network and server included, never ranked with on-device speed."""
    run: Cell
    os: Cell
    note: str | None
    """What a reader needs beside the figures (a PCC run's: network and server included, fallbacks left out)."""
    figures: Table
    """A row per workload in the run file's order (never sorted by a figure), the catalog's headline columns."""


@dataclass(frozen=True)
class DeviceFigures:
    device: Cell
    configs: list[ConfigFigures]


@dataclass(frozen=True)
class HomePage(Page):
    template: ClassVar[str] = "home.html"
    nav_active: ClassVar[str] = "home"
    answers: list[Answer]
    """Per workload, the fastest publishable device(s) on-device with ties said, and PCC's figures apart: the
    page's first screen (:mod:`fmbench.views.home_answers`)."""
    stats: list[Stat]
    newest: list[DeviceFigures]
    """Each device's newest figures, a block per configuration (exploratory runs included, labelled)."""
    newest_empty: str
    """What the page says in their place when there are none."""
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


HEADLINE_TABLE: fc.Table = "build"
"""The catalog's table of headline figures (task success, median TTFT, median output tokens/s): the home page
shows the columns an OS build's headline shows."""

NO_RUN = "No run has been ingested yet: once fmbench ingest has read a run file, its figures appear here."
NO_FIGURES = ("This database holds no runs and no figures: its tables of runs and derived figures are missing "
              "(fmbench migrate brings a database up to this fmbench).")
ONLY_INVALID = "Every run ingested so far is invalid as evidence, so no figure is shown here (see Runs)."


def _standing(site: SiteContext, newest: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each newest run replaced by the run its build's evidence stands on (:mod:`fmbench.comparison.evidence`: the
    publishable one where the newest is exploratory, say), so home shows what that build's comparisons show."""
    index = site.evidence()
    chosen = {}
    for r in newest:
        if r["hardware_model"] is None or r["os_build"] is None:
            continue
        found = index.cell(r["hardware_model"], r["os_build"], config_key(r))
        if found is not None and found.run_ids[-1] != r["run_id"]:
            chosen[r["run_id"]] = found.run_ids[-1]
    rows = q.runs_by_id(site.con, list(chosen.values()))
    return [rows.get(chosen.get(r["run_id"], ""), r) for r in newest]


def _newest(site: SiteContext) -> list[DeviceFigures]:
    """Per device, the run its newest build of each configuration stands on (:func:`_standing`), with that run's
    headline figures per workload; a PCC run's speed from the trials PCC answered (those that fell back are counted, left out)."""
    found = _standing(site, q.newest_run_per_device_configuration(site.con))
    figures = figures_by_run(site.con, [r["run_id"] for r in found])
    speeds = pcc_speed(site.con, [r["run_id"] for r in found if r["route"] == "privateCloudCompute"])
    keys = figure_keys(HEADLINE_TABLE)
    devices: dict[str, DeviceFigures] = {}
    for i, r in enumerate(found):
        key = device_key(r)
        if key not in devices:
            devices[key] = DeviceFigures(Cell(f"{r['device_name']} ({key})", href=site.url(site.paths.device(key))), [])
        service = r["route"] == "privateCloudCompute"
        shown = [
            with_pcc_speed(f, speeds.get((r["run_id"], f["scenario_id"]))) if service else f
            for f in figures.get(r["run_id"], [])
        ]
        fell_back = sum(f.get("pcc_fell_back", 0) for f in shown)
        label = config_label(r)
        verdict = verdict_cell(r["verdict"], site.url)
        caption = (f"{r['device_name']} ({key}), {label}: headline figures of its {r['verdict']} run of "
                   f"{r['started_at']:%Y-%m-%d}")
        note = None
        if service:
            note = "PCC: network and server included"
            if fell_back:
                note += f"; {d.plural(fell_back, 'trial')} that fell back to the on-device model left out of its speed"
            caption += f" ({note})"
        table = Table(
            f"newest-{i}",
            caption,
            [Column("scenario", "Workload"), *figure_columns(keys)],
            [
                Row([Cell(site.scenario_title(f["scenario_id"], f["title"]), title=f["scenario_id"]), *figure_cells(f, keys)])
                for f in shown
            ],
            "This run holds no workload.",
        )
        os_cell = Cell(os_label(r), href=site.url(site.paths.build(r["os_build"]))) if r["os_build"] else Cell(os_label(r))
        devices[key].configs.append(
            ConfigFigures(
                label, verdict, r["verdict"] == "exploratory", service,
                run_link(r, site.url, f"{r['started_at']:%Y-%m-%d}"), os_cell, note, table,
            )
        )
    return list(devices.values())


def _latest_changes(site: SiteContext, limit: int = 8) -> list[Cell]:
    """The newest changes of the site's change list (:meth:`SiteContext.change_list`: the entries `/regressions/`
    and its feed show), newest candidate build first."""

    changes: list[Any] = newest_first(site.change_list().listed())[:limit]
    return [
        Cell(c.headline() if isinstance(c, HistoryChange) else retitled_change(c, site.scenario_title).headline(), href=site.url(site.paths.comparison(c.hardware_model, c.baseline_build, c.candidate_build, c.step.anchor)),
             tone="worse" if c.is_regression else "better")
        for c in changes
    ]


def home_page(site: SiteContext, filters: Filters) -> HomePage:
    url = site.url
    if not q.has_tables(site.con, "runs", "scenario_figures"):
        return _without_figures(site)
    found = q.run_counts(site.con)
    counts = found.by_verdict
    newest = _newest(site)
    return HomePage(
        title="Foundation Models benchmark results",
        answers=answers(site),
        stats=[
            Stat(d.count(found.runs) or "0", "run" if found.runs == 1 else "runs", url(urls.runs())),
            Stat(d.count(counts.get("publishable", 0)) or "0", "publishable", url(urls.runs()) + "?verdict=publishable"),
            Stat(d.count(counts.get("exploratory", 0)) or "0", "exploratory", url(urls.runs()) + "?verdict=exploratory"),
            Stat(d.count(counts.get("invalid", 0)) or "0", "invalid as evidence", url(urls.runs()) + "?verdict=invalid"),
            Stat(d.count(found.devices) or "0", "device" if found.devices == 1 else "devices", url(urls.devices())),
            Stat(d.count(found.os_builds) or "0", "OS build" if found.os_builds == 1 else "OS builds", url(urls.builds())),
            Stat(d.count(found.measured_trials) or "0", "measured trial" if found.measured_trials == 1 else "measured trials",
                 url(urls.data())),
        ],
        newest=newest,
        newest_empty=NO_RUN if not found.runs else ONLY_INVALID,
        changes=_latest_changes(site),
        on_device=_latest_table(site, "onDevice", "latest-on-device", "On-device: newest run per device, OS build and suite"),
        pcc=_latest_table(
            site,
            "privateCloudCompute",
            "latest-pcc",
            "Private Cloud Compute: newest run per device, OS build and suite (a service benchmark: never ranked with on-device speed)",
        ),
        sections=_sections(url),
    )


def _sections(url: Url) -> list[Link]:
    return [
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
    ]


def _without_figures(site: SiteContext) -> HomePage:
    """The home page of a database without its tables of runs and figures: it says so, in place of every figure."""
    url = site.url
    empty = Table("latest-on-device", "On-device: newest run per device, OS build and suite", [], [], NO_FIGURES)
    return HomePage(
        title="Foundation Models benchmark results",
        answers=[],
        stats=[],
        newest=[],
        newest_empty=NO_FIGURES,
        changes=[],
        on_device=empty,
        pcc=Table("latest-pcc", "Private Cloud Compute: newest run per device, OS build and suite", [], [], NO_FIGURES),
        sections=_sections(url),
    )


@dataclass(frozen=True)
class MethodologyPage(Page):
    template: ClassVar[str] = "methodology.html"
    nav_active: ClassVar[str] = "methodology"
    markdown_html: Markup
    contents: list[Link]
    """Every section of the page, linked by its heading's anchor, in order."""


def methodology_page(site: SiteContext, filters: Filters) -> MethodologyPage:

    source = fmbench_methodology()
    if site.methodology.strip():
        source = merge_methodology(source, site.methodology)
    html = render_markdown(source)
    return MethodologyPage("Methodology", html, [Link(text, f"#{anchor}") for anchor, text in contents(str(html))])


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
                            paths=site.paths, empty="No run was measured on this revision."),
        )
        for r in sorted(site.registry.revisions, key=lambda r: r.date, reverse=True)
    ]
    return RevisionsPage(
        "Suite revisions",
        entries,
        runs_table(by_revision.get(None, []), site.url, "revision-unknown", "Runs whose revision cannot be determined",
                   paths=site.paths, empty="Every run's revision is known."),
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


