"""The runs list: every run that matches the filters, newest first."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import duckdb

from fmbench import urls
from fmbench.analysis import display as d
from fmbench.analysis.configuration import SESSION_MODE
from fmbench.runfile import vocabulary as vocab
from fmbench.views.blocks import (
    Cell,
    Column,
    FilterForm,
    Row,
    Table,
)
from fmbench.views.common import (
    RUN_COLUMNS,
    Url,
    device_key,
    os_label,
    revision_cell,
    route_cell,
    rows,
    run_link,
    verdict_cell,
)
from fmbench.views.filters import Filters, filter_form, run_attrs
from fmbench.views.page import Page
from fmbench.views.site import SiteContext

NO_RUNS = "No runs yet."
NO_MATCH = "No run matches these filters."


def empty_text(filters: Filters) -> str:
    """What an empty runs table says: that no run matches, only when some filter was applied."""
    return NO_MATCH if filters.values else NO_RUNS


@dataclass(frozen=True)
class RunsPage(Page):
    template: ClassVar[str] = "runs.html"
    nav_active: ClassVar[str] = "runs"
    filters: FilterForm
    runs: Table


def runs_table(
    run_rows: list[dict[str, Any]], url: Url, table_id: str = "runs", caption: str = "Runs", *, paths: urls.SitePaths,
    empty: str = NO_RUNS,
) -> Table:
    """The runs as a table; ``empty``: what it says when there is none (:data:`NO_MATCH` when filters chose none).

    A run is named by its date, device and OS build (its first column, kept in view when the table scrolls) and
    judged next to it (its verdict, the second column, in view on a phone); its id comes last."""
    columns = [
        Column("run", "Run"),
        Column("verdict", "Verdict"),
        Column("route", "Route"),
        Column("suite", "Suite"),
        Column("session", "Session"),
        Column("revision", "Revision"),
        Column("trials", "Trials", True),
        Column("failures", "Failures", True, "Measured failures; warmup failures are diagnostics and not counted"),
        Column("device", "Device"),
        Column("os", "OS (build)"),
        Column("started", "Started (UTC)"),
        Column("id", "Run id"),
    ]
    table_rows = [
        Row(
            [
                run_link(r, url, run_name(r)),
                verdict_cell(r["verdict"], url),
                route_cell(r["route"]),
                vocab.label("suite", r["suite"]),
                SESSION_MODE.show(r[SESSION_MODE.key]),
                revision_cell(r, url),
                d.count(r["trial_count"]),
                d.count(r["failure_count"]),
                Cell(r["device_name"], href=url(paths.device(device_key(r))), title=r.get("hardware_model")),
                os_label(r),
                f"{r['started_at']:%Y-%m-%d %H:%M}",
                r["run_id"],
            ],
            run_attrs(r),
        )
        for r in run_rows
    ]
    return Table(table_id, caption, columns, table_rows, empty)


def run_name(run: dict[str, Any]) -> str:
    """A run as a reader names it: "2026-11-03 · iPhone 17 Pro · 24A5264n" (its date, device and OS build)."""
    return f"{run['started_at']:%Y-%m-%d} · {run['device_name']} · {run['os_build'] or 'build not recorded'}"


def filtered_runs(con: duckdb.DuckDBPyConnection, filters: Filters) -> list[dict[str, Any]]:
    """The runs that match the filters, newest first (computed in DuckDB with bound parameters)."""
    where, params = filters.where()
    return rows(con, f"SELECT {RUN_COLUMNS} FROM runs r WHERE {where} ORDER BY r.started_at DESC, r.run_id", params)


def runs_page(site: SiteContext, filters: Filters) -> RunsPage:
    con, url = site.con, site.url
    found = filtered_runs(con, filters)
    return RunsPage(
        title="Runs",
        filters=filter_form(con, url(urls.runs()), filters),
        runs=runs_table(found, url, caption=f"{d.plural(len(found), 'run')}, newest first", paths=site.paths,
                        empty=empty_text(filters)),
    )
