"""OS build pages: every build in order of first appearance, and what one build measured and changed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from fmbench import urls
from fmbench.analysis import display as d
from fmbench.analysis.configuration import config_key, config_label
from fmbench.comparison.regressions import BuildChange
from fmbench.views import build_queries as q
from fmbench.views.blocks import Cell, Column, Row, Table
from fmbench.views.catalog_queries import figures_by_run
from fmbench.views.common import (
    device_key,
    figure_cells,
    figure_columns,
    figure_keys,
    retitled_change,
    run_link,
    verdict_cell,
)
from fmbench.views.comparisons import regression_report
from fmbench.views.filters import Filters, run_attrs
from fmbench.views.page import Page
from fmbench.views.site import SiteContext

PLATFORMS = ("iOS", "iPadOS", "macOS", "visionOS", "watchOS", "tvOS")


def platform(hardware_model: str | None, system_name: str | None) -> str:
    """The platform a run was measured on. The runner reports an iPad's system as iOS, so the hardware model
    decides where it is recorded (``iPad…`` is iPadOS); otherwise the reported system name."""
    model = hardware_model or ""
    for prefix, name in (("iPad", "iPadOS"), ("iPhone", "iOS"), ("Mac", "macOS"), ("RealityDevice", "visionOS"),
                         ("Watch", "watchOS"), ("AppleTV", "tvOS")):
        if model.startswith(prefix):
            return name
    return system_name or "platform not recorded"


def _platform_order(name: str) -> tuple[int, str]:
    return (PLATFORMS.index(name) if name in PLATFORMS else len(PLATFORMS), name)


# --- every build ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlatformBuilds:
    platform: str
    table: Table


@dataclass(frozen=True)
class BuildsPage(Page):
    template: ClassVar[str] = "builds.html"
    nav_active: ClassVar[str] = "builds"
    platforms: list[PlatformBuilds]


def builds_page(site: SiteContext, filters: Filters) -> BuildsPage:
    found = q.build_appearances(site.con)
    per: dict[str, dict[str, list[dict[str, Any]]]] = {}
    for r in found:
        per.setdefault(platform(r["hardware_model"], r["system_name"]), {}).setdefault(r["os_build"], []).append(r)
    sections = []
    for name in sorted(per, key=_platform_order):
        table_rows = []
        for build, members in per[name].items():
            first = members[0]
            table_rows.append(
                Row(
                    [
                        Cell(build, href=site.url(site.paths.build(build))),
                        f"{name} {first['system_version']}",
                        f"{min(m['first_seen'] for m in members):%Y-%m-%d}",
                        ", ".join(f"{m['device_name']} ({m['device']})" for m in members),
                        d.count(sum(m["runs"] for m in members)),
                        d.count(sum(m["publishable"] for m in members)) or "0",
                    ],
                    {"os_build": build},
                )
            )
        sections.append(
            PlatformBuilds(
                name,
                Table(
                    f"builds-{urls.slug(name)}",
                    f"{name} builds, in order of first appearance",
                    [
                        Column("build", "OS build"),
                        Column("version", "Version"),
                        Column("first", "First measured (UTC)"),
                        Column("devices", "Devices"),
                        Column("runs", "Runs", True),
                        Column("publishable", "Publishable", True),
                    ],
                    table_rows,
                ),
            )
        )
    return BuildsPage("OS builds", sections)


def build_instances(site: SiteContext) -> list[dict[str, Any]]:
    return [{"build": site.paths.builds.of(b)} for b in q.os_builds(site.con)]


# --- one build -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class BuildChangeBlock:
    heading: str
    comparison: Cell
    changes: list[Cell]
    note: str | None


@dataclass(frozen=True)
class BuildPage(Page):
    template: ClassVar[str] = "build.html"
    nav_active: ClassVar[str] = "builds"
    os_build: str
    platforms: list[str]
    measured: Table
    figures: Table
    changes: list[BuildChangeBlock]
    first_builds: list[str]


def _standing(site: SiteContext, os_build: str, found: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    """Per device and configuration, the run the build stands on (:mod:`fmbench.comparison.evidence`, the one
    selection: the newest publishable run, an exploratory one only where none is publishable), the run its
    comparisons and home show; a run without a hardware model, which stands for no device, by the newest valid one."""
    index = site.evidence()
    by_id = {r["run_id"]: r for r in found}
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for r in found:
        if r["verdict"] == "invalid":
            continue
        evidence = index.cell(r["hardware_model"], os_build, config_key(r)) if r["hardware_model"] else None
        out[(device_key(r), config_label(r))] = by_id.get(evidence.run_ids[-1], r) if evidence else r
    return out


def _measured_table(site: SiteContext, os_build: str, found: list[dict[str, Any]]) -> Table:
    """Every run measured on the build, invalid ones included: its device, platform, configuration and verdict."""
    url = site.url
    return Table(
        "measured",
        f"Devices and configurations measured on {os_build} (every run, invalid ones included)",
        [
            Column("device", "Device"),
            Column("platform", "Platform"),
            Column("config", "Configuration"),
            Column("run", "Run (UTC)"),
            Column("verdict", "Verdict"),
            Column("trials", "Trials", True),
            Column("failures", "Failures", True),
        ],
        [
            Row(
                [
                    Cell(f"{r['device_name']} ({device_key(r)})", href=url(site.paths.device(device_key(r)))),
                    f"{platform(r['hardware_model'], r['system_name'])} {r['system_version']}",
                    config_label(r),
                    run_link(r, url, f"{r['started_at']:%Y-%m-%d %H:%M}"),
                    verdict_cell(r["verdict"], url),
                    d.count(r["trial_count"]),
                    d.count(r["failure_count"]),
                ],
                run_attrs(r),
            )
            for r in found
        ],
        "No run was measured on this build.",
    )


def _headline_table(site: SiteContext, newest: dict[tuple[str, str], dict[str, Any]]) -> Table:
    """Each workload's headline figures of the run the build stands on, per device and configuration."""
    figures = figures_by_run(site.con, [r["run_id"] for r in newest.values()])
    figure_rows = []
    for (device, label), r in sorted(newest.items()):
        for f in figures.get(r["run_id"], []):
            figure_rows.append(
                Row([f"{r['device_name']} ({device})", label, site.scenario_title(f["scenario_id"], f["title"]), *figure_cells(f, figure_keys("build"))], run_attrs(r))
            )
    return Table(
        "headline",
        "Headline figures per workload: per device and configuration, the run this build stands on on every page "
        "(the newest publishable one; an exploratory one only where none is publishable)",
        [Column("device", "Device"), Column("config", "Configuration"), Column("scenario", "Scenario"),
         *figure_columns(figure_keys("build"))],
        figure_rows,
        "No run on this build is evidence.",
    )


def _change_blocks(site: SiteContext, os_build: str) -> tuple[list[BuildChangeBlock], set[str]]:
    """What changed at the build, one block per regression step that ends on it (its comparison, the figures and
    samples that changed, or why nothing is listed), and the hardware models those steps compared."""
    url = site.url
    blocks = []
    compared: set[str] = set()
    for step in regression_report(site).steps:
        if step.candidate_build != os_build:
            continue
        compared.add(step.group.hardware_model)
        g = step.group
        label = config_label(g.to_json())
        changes = [] if step.comparison is None else [
            Cell(retitled_change(c, site.scenario_title).headline(), tone="worse" if c.is_regression else "better")
            for c in _step_changes(site, step)
        ]
        blocks.append(
            BuildChangeBlock(
                f"{step.device_name} ({g.hardware_model}): {label}",
                Cell(f"{step.baseline_build} → {step.candidate_build}",
                     href=url(site.paths.comparison(g.hardware_model, step.baseline_build, step.candidate_build, step.anchor))),
                changes,
                step.refused or (None if changes else "No figure got worse or better beyond the practical threshold, and no sample's outcome changed."),
            )
        )
    return blocks, compared


def build_page(site: SiteContext, filters: Filters, build: str) -> BuildPage:
    """One OS build: the runs measured on it, the headline figures it stands on, what changed at it, and the
    devices first measured on it."""
    os_build = site.paths.builds.named(build, "OS build")
    found = q.build_runs(site.con, os_build)
    newest = _standing(site, os_build, found)
    measured = _measured_table(site, os_build, found)
    headline = _headline_table(site, newest)
    blocks, compared = _change_blocks(site, os_build)
    first = sorted({f"{r['device_name']} ({device_key(r)})" for r in found
                    if r["verdict"] != "invalid" and device_key(r) not in compared})
    return BuildPage(
        title=f"OS build {os_build}",
        os_build=os_build,
        platforms=sorted({f"{platform(r['hardware_model'], r['system_name'])} {r['system_version']}" for r in found}),
        measured=measured,
        figures=headline,
        changes=blocks,
        first_builds=first,
    )


def _step_changes(site: SiteContext, step: Any) -> list[Any]:

    assert step.comparison is not None
    return [*(BuildChange(step, s, f) for s, f in step.comparison.changes()),
            *(c for c in regression_report(site).sample_changes if c.step is step)]
