"""Every page and data file of the site: which view makes it, at which path, from which runs.

The static build enumerates these and writes each one; ``serve`` answers a
request by finding the kind for its path and calling the same view. That is
the one rendering path: a change to a view or template shows in both.

Every view is imported here and called as ``view(site, filters, **params)``; a
page view returns a :class:`~fmbench.views.page.Page`, which names its template.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import duckdb

from fmbench import urls
from fmbench.analysis.revisions import Registry, load_registry
from fmbench.views import (
    builds,
    catalog,
    comparisons,
    coverage,
    data,
    device_comparisons,
    home,
    leaderboards,
    pcc,
    run_page,
    runs,
    search,
    trials,
)
from fmbench.views import inputs as I
from fmbench.views.filters import FIELDS, Filters
from fmbench.views.page import Page
from fmbench.views.render import NavEntry, Renderer
from fmbench.views.site import SiteContext

_SEGMENT = r"[A-Za-z0-9,._-]+"


def _filled(route: str) -> Callable[..., str]:
    """The path of a kind whose parameters are already path segments (from :class:`fmbench.urls.SitePaths`): its
    route with each ``{parameter}`` filled in."""

    def path(**params: Any) -> str:
        return re.sub(r"\{([a-z_]+)(?::int)?\}", lambda m: str(params[m.group(1)]), route)

    return path


def _pattern(template: str) -> re.Pattern[str]:
    """``runs/{run_id}/`` -> a regex with a named group per parameter (``{page:int}`` for numbers)."""
    out = ""
    for literal, name in re.findall(r"([^{]*)(?:\{([a-z_:]+)\})?", template):
        out += re.escape(literal)
        if name:
            key, _, kind = name.partition(":")
            out += f"(?P<{key}>[0-9]+)" if kind == "int" else f"(?P<{key}>{_SEGMENT})"
    return re.compile(f"^{out}$")


@dataclass(frozen=True)
class PageKind:
    name: str
    path: Callable[..., str] | None
    """The page's path from its parameters; ``None``: its route filled in (parameters that are path segments)."""
    view: Callable[..., Page]
    """``(site, filters, **params) -> Page``; the page context names its own template."""
    instances: Callable[[SiteContext], list[dict[str, Any]]]
    filters: tuple[str, ...] = ()
    """The filter fields the page accepts as query parameters (empty: none)."""
    route: str = ""
    """The path with ``{parameter}`` placeholders, for resolving a request to this kind."""
    options: tuple[str, ...] = ()
    """Query parameters the live page takes besides filters (passed to the view as keywords)."""
    inputs: Callable[[I.RunIndex, dict[str, Any]], I.Inputs] = I.every_run
    """The runs one page reads (``None``: every run), for incremental builds (see :mod:`fmbench.views.inputs`)."""
    nav: str = ""
    """Its label in the site's navigation (a kind of one page only; empty: not in it). A page marks the entry of
    its class's ``nav_active``, a kind's name."""

    def __post_init__(self) -> None:
        if self.path is None:
            object.__setattr__(self, "path", _filled(self.route))

    @property
    def pattern(self) -> re.Pattern[str]:
        return _pattern(self.route)


@dataclass(frozen=True)
class DataKind:
    name: str
    path: Callable[..., str] | None
    """As :attr:`PageKind.path`."""
    produce: Callable[..., bytes]
    instances: Callable[[SiteContext], list[dict[str, Any]]]
    content_type: str
    route: str = ""
    inputs: Callable[[I.RunIndex, dict[str, Any]], I.Inputs] = I.every_run
    """The runs one file reads (``None``: every run), for incremental builds."""

    def __post_init__(self) -> None:
        if self.path is None:
            object.__setattr__(self, "path", _filled(self.route))

    @property
    def pattern(self) -> re.Pattern[str]:
        return _pattern(self.route)


def _single(_: SiteContext) -> list[dict[str, Any]]:
    return [{}]


def _run_ids(site: SiteContext) -> list[dict[str, Any]]:
    return [{"run_id": r} for (r,) in site.con.execute("SELECT run_id FROM runs ORDER BY run_id").fetchall()]


def _run_scenarios(site: SiteContext) -> list[dict[str, Any]]:
    return [
        {"run_id": r, "scenario": site.paths.scenarios.of(s)}
        for r, s in site.con.execute("SELECT run_id, scenario_id FROM scenario_figures ORDER BY run_id, ordinal").fetchall()
    ]


def _sources(site: SiteContext) -> list[dict[str, Any]]:
    """The original run files the site carries as they were ingested (the ``copy`` originals policy)."""
    return _originals(site) if site.originals == "copy" else []


def _sources_gzip(site: SiteContext) -> list[dict[str, Any]]:
    """The original run files the site carries gzipped (the ``gzip`` originals policy, the default)."""
    return _originals(site) if site.originals == "gzip" else []


def _originals(site: SiteContext) -> list[dict[str, Any]]:
    return [
        {"run_id": r, "file_name": urls.source_segment(f)}
        for r, f in site.con.execute("SELECT run_id, file_name FROM runs ORDER BY run_id").fetchall()
    ]


ALL_FILTERS = tuple(FIELDS)

PAGES: tuple[PageKind, ...] = (
    PageKind("home", urls.home, home.home_page, _single, route="", nav="Home"),
    PageKind(
        "methodology", urls.methodology, home.methodology_page, _single,
        route="methodology/", inputs=I.no_run, nav="Methodology",
    ),
    PageKind(
        "revisions", urls.revisions, home.revisions_page, _single, route="revisions/", nav="Revisions"
    ),
    PageKind("data", urls.data, home.data_page, _single, ALL_FILTERS, route="data/", nav="Data"),
    PageKind("runs", urls.runs, runs.runs_page, _single, ALL_FILTERS, route="runs/", nav="Runs"),
    PageKind("run", urls.run, run_page.run_page, _run_ids, route="runs/{run_id}/", inputs=I.the_run),
    PageKind(
        "trials", None, trials.trials_page, _run_scenarios, route="runs/{run_id}/trials/{scenario}/",
        inputs=I.the_run_and_its_earlier_builds,
    ),
    PageKind(
        "devices", urls.devices, catalog.devices_page, _single,
        ("os_build", "device", "route", "suite"), route="devices/", nav="Devices",
    ),
    PageKind(
        "device",
        None,
        catalog.device_page,
        catalog.device_instances,
        ("os_build", "route", "suite", "revision", "verdict"),
        route="devices/{device}/",
        inputs=I.device_runs,
    ),
    PageKind(
        "scenarios", urls.scenarios, catalog.scenarios_page, _single,
        route="scenarios/", nav="Scenarios",
    ),
    PageKind(
        "scenario",
        None,
        catalog.scenario_page,
        catalog.scenario_instances,
        ALL_FILTERS,
        route="scenarios/{scenario}/",
        inputs=I.scenario_runs,
    ),
    PageKind(
        "leaderboards", urls.leaderboards, leaderboards.leaderboards_page, _single, route="leaderboards/",
        nav="Leaderboards",
    ),
    PageKind(
        "leaderboard_category",
        None,
        leaderboards.category_page,
        leaderboards.category_instances,
        route="leaderboards/category/{category}/",
        inputs=I.category_runs,
    ),
    PageKind(
        "leaderboard",
        None,
        leaderboards.leaderboard_page,
        leaderboards.leaderboard_instances,
        route="leaderboards/{scenario}/",
        inputs=I.leaderboard_runs,
    ),
    PageKind("coverage", urls.coverage, coverage.coverage_page, _single, route="coverage/", nav="Coverage"),
    PageKind(
        "pcc", urls.pcc, pcc.pcc_page, _single,
        ("os_build", "device", "suite", "revision", "verdict"), route="pcc/", nav="PCC",
    ),
    PageKind(
        "compare_index",
        urls.compare_index,
        comparisons.compare_index_page,
        _single,
        ("os_build", "device", "route", "suite"),
        route="compare/",
        nav="Compare",
    ),
    PageKind(
        "device_comparison",
        None,
        device_comparisons.device_comparison_page,
        device_comparisons.device_comparison_instances,
        route="compare/devices/{device_a}..{device_b}/{generation}/",
        inputs=I.device_pair_runs,
    ),
    PageKind(
        "comparison",
        None,
        comparisons.comparison_page,
        comparisons.comparison_instances,
        route="compare/{device}/{baseline}..{candidate}/",
        options=("rule", "strict"),
        inputs=I.comparison_runs,
    ),
    PageKind("builds", urls.builds, builds.builds_page, _single, route="builds/", nav="OS builds"),
    PageKind(
        "build", None, builds.build_page, builds.build_instances, route="builds/{build}/",
        inputs=I.build_runs,
    ),
    PageKind(
        "regressions",
        urls.regressions,
        comparisons.regressions_page,
        _single,
        ("device",),
        route="regressions/",
        nav="Regressions",
    ),
    PageKind(
        "search", urls.search, search.search_page, _single, route="search/", options=("q",), inputs=I.no_run,
        nav="Search",
    ),
)

NAVIGATION_ORDER: tuple[str, ...] = (
    "home", "runs", "devices", "scenarios", "leaderboards", "builds", "coverage", "pcc", "compare_index",
    "regressions", "revisions", "methodology", "data", "search",
)
"""The kinds with a ``nav`` label, in the order a reader meets them in the navigation."""

NAVIGATION: tuple[NavEntry, ...] = tuple(
    NavEntry(kind.name, kind.nav, kind.path())
    for name in NAVIGATION_ORDER
    for kind in PAGES
    if kind.name == name and kind.nav
)
"""The site's navigation: every kind of the registry with a ``nav`` label (``base.html`` lays it out)."""

DATA: tuple[DataKind, ...] = (
    DataKind(
        "figures_json", urls.data_figures, data.figures_json, _run_ids, "application/json",
        route="data/runs/{run_id}/figures.json", inputs=I.the_run,
    ),
    DataKind(
        "trials_json", None, data.trials_json, _run_scenarios, "application/gzip",
        route="data/runs/{run_id}/trials/{scenario}.json.gz", inputs=I.the_run,
    ),
    DataKind(
        "source_gzip", None, data.source_gzip_bytes, _sources_gzip, "application/gzip",
        route="data/runs/{run_id}/{file_name}.gz", inputs=I.the_run,
    ),
    DataKind(
        "source", None, data.source_bytes, _sources, "application/json",
        route="data/runs/{run_id}/{file_name}", inputs=I.the_run,
    ),
    DataKind("runs_json", urls.data_runs_index, data.runs_json, _single, "application/json", route="data/runs.json"),
    DataKind(
        "search_index", urls.data_search_index, search.search_index, _single, "application/json",
        route="data/search.json",
    ),
    DataKind(
        "feed", urls.regressions_feed, comparisons.regressions_feed, _single, "application/atom+xml",
        route="regressions/feed.xml",
    ),
)


def resolve(path: str) -> tuple[PageKind | DataKind, dict[str, Any]] | None:
    """The kind and parameters of a site path (``runs/abc/``), or ``None``."""
    for kind in (*PAGES, *DATA):
        match = kind.pattern.match(path)
        if match:
            return kind, dict(match.groupdict())
    return None


def site_context(
    con: duckdb.DuckDBPyConnection, renderer: Renderer, registry: Registry | None = None, methodology: str = ""
) -> SiteContext:
    return SiteContext(con, renderer, registry or load_registry(), methodology=methodology)


def render_page(
    site: SiteContext, kind: PageKind, filters: Filters, *, data_as_of: datetime | bool | None = False, **params: Any
) -> str:
    """``data_as_of``: see :meth:`fmbench.views.render.Renderer.render` (the static build passes it)."""
    page = kind.view(site, filters, **params)
    return site.renderer.render(page.template, page, data_as_of=data_as_of)


def everything(site: SiteContext) -> Iterator[tuple[str, PageKind | DataKind, dict[str, Any]]]:
    """Every output path of the site with the kind and parameters that make it."""
    for kind in PAGES:
        for params in kind.instances(site):
            yield kind.path(**params), kind, params
    for kind in DATA:
        for params in kind.instances(site):
            yield kind.path(**params), kind, params
