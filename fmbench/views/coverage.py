"""Coverage: per suite revision, which devices were measured on which OS builds, and how their runs were judged.

One grid per suite revision and platform (a build number names a build of one platform: an iPhone and an iPad
may share one, a Mac never): a row per device of the platform, a column per OS build the platform was measured
on (in any revision, in order of first measurement), and in each cell the count of publishable, exploratory and
invalid runs, each linked to those runs. A cell with no run says "none": what a publisher should measure next.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from fmbench import urls
from fmbench.errors import FilterError
from fmbench.views import leaderboard_queries as q
from fmbench.views.blocks import Cell
from fmbench.views.builds import platform
from fmbench.views.filters import Filters
from fmbench.views.page import Page
from fmbench.views.site import SiteContext

VERDICTS = ("publishable", "exploratory", "invalid")
NOT_RECORDED_BUILD = "build not recorded"


@dataclass(frozen=True)
class CoverageCell:
    counts: list[Cell]
    """A count per verdict (publishable, exploratory, invalid), each linked to its runs when there are any; empty
    when the device has no run on the build in this revision."""

    @property
    def empty(self) -> bool:
        return not self.counts


@dataclass(frozen=True)
class CoverageRow:
    device: Cell
    cells: list[CoverageCell]


@dataclass(frozen=True)
class CoverageGrid:
    id: str
    revision: str
    platform: str
    builds: list[Cell]
    rows: list[CoverageRow]
    measured: int
    """Cells with a run."""
    publishable: int
    """Cells with a publishable run."""

    @property
    def caption(self) -> str:
        cells = len(self.rows) * len(self.builds)
        return (f"Suite revision {self.revision}, {self.platform}: {self.measured} of {cells} device × OS build "
                f"cell(s) measured, {self.publishable} with a publishable run")


@dataclass(frozen=True)
class CoveragePage(Page):
    template: ClassVar[str] = "coverage.html"
    nav_active: ClassVar[str] = "coverage"
    grids: list[CoverageGrid]
    leaderboards: str


def _runs_link(site: SiteContext, device: str, build: str | None, revision: str, verdict: str, run_id: str,
               n: int) -> str:
    """One run: its page; several: the runs page filtered to them (the device's page when a value is not one a
    filter takes)."""
    if n == 1:
        return site.url(urls.run(run_id))
    if build is None:  # the runs page cannot select "no build": the device's page lists them
        return site.url(site.paths.device(device))
    try:
        filters = Filters.parse({"device": device, "os_build": build, "revision": revision, "verdict": verdict})
    except FilterError:
        return site.url(site.paths.device(device))
    return site.url(urls.runs()) + "?" + filters.query_string()


def coverage_page(site: SiteContext, filters: Filters) -> CoveragePage:
    found = q.coverage_counts(site.con)
    platforms: dict[str, dict[str, Any]] = {}
    for r in found:
        p = platforms.setdefault(platform(r["hardware_model"], r["system_name"]), {"devices": {}, "builds": {}})
        p["devices"].setdefault(r["device"], r["device_name"])
        build = r["os_build"] or NOT_RECORDED_BUILD
        if build not in p["builds"] or r["first_started"] < p["builds"][build]:
            p["builds"][build] = r["first_started"]
    counts: dict[tuple[str, str, str, str], dict[str, Any]] = {}
    for r in found:
        counts[(r["revision"], r["device"], r["os_build"] or NOT_RECORDED_BUILD, r["verdict"])] = r
    revisions = sorted({r["revision"] for r in found}, key=_revision_order(site), reverse=True)
    grids = []
    for revision in revisions:
        for name in sorted(platforms):
            p = platforms[name]
            builds = sorted(p["builds"], key=lambda b: (p["builds"][b], b))
            devices = sorted(p["devices"], key=lambda k: (p["devices"][k], k))
            rows = []
            measured = publishable = 0
            for device in devices:
                cells = []
                for build in builds:
                    held = {v: counts.get((revision, device, build, v)) for v in VERDICTS}
                    if not any(held.values()):
                        cells.append(CoverageCell([]))
                        continue
                    measured += 1
                    publishable += held["publishable"] is not None
                    cells.append(CoverageCell([
                        Cell(f"0 {v}") if held[v] is None else Cell(
                            f"{held[v]['runs']} {v}", tone=v,
                            href=_runs_link(site, device, None if build == NOT_RECORDED_BUILD else build, revision, v,
                                            held[v]["run_id"], held[v]["runs"]))
                        for v in VERDICTS
                    ]))
                label = p["devices"][device]
                rows.append(CoverageRow(
                    Cell(f"{label} ({device})" if label != device else device, href=site.url(site.paths.device(device))),
                    cells))
            grids.append(CoverageGrid(
                f"coverage-{len(grids) + 1}", revision, name,
                [Cell(b) if b == NOT_RECORDED_BUILD else Cell(b, href=site.url(site.paths.build(b))) for b in builds],
                rows, measured, publishable,
            ))
    return CoveragePage("Coverage", grids, site.url(urls.leaderboards()))


def _revision_order(site: SiteContext) -> Any:
    """Revisions newest first by the registry's date; an unknown revision last."""
    dates = {r.id: r.date for r in site.registry.revisions}

    def key(revision: str) -> tuple[int, str, str]:
        date = dates.get(revision)
        return (0, "", revision) if date is None else (1, str(date), revision)

    return key
