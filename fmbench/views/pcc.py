"""Private Cloud Compute as a service over time: availability, failures, quota, fallback."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from fmbench import urls
from fmbench.analysis import display as d
from fmbench.analysis.configuration import ROUTE, config_label, pcc_setup_label
from fmbench.analysis.figures import distribution
from fmbench.runfile import vocabulary as vocab
from fmbench.views import charts
from fmbench.views import pcc_queries as q
from fmbench.views.blocks import Cell, Chart, Column, FilterForm, Row, Table
from fmbench.views.common import os_label, quota_text, run_link, verdict_cell
from fmbench.views.filters import Filters, filter_form, run_attrs
from fmbench.views.markdown_render import markdown_as_text
from fmbench.views.page import Page
from fmbench.views.pcc_routes import CAVEAT, RoutePair, route_pairs
from fmbench.views.site import SiteContext


def _kinds_text(kinds: dict[str, int]) -> str:
    """A run's measured failures by kind in words: ``Network 2, Quota 1``; failures whose kind the file does not
    record are counted as such, never shown as a kind called "not recorded"."""
    parts = [f"{vocab.label('failureKind', k)} {n:,}" for k, n in kinds.items() if k != "not recorded"]
    if kinds.get("not recorded"):
        parts.append(f"{d.plural(kinds['not recorded'], 'failure')} of a kind the file does not record")
    return ", ".join(parts) or "none"

@dataclass(frozen=True)
class PccPage(Page):
    template: ClassVar[str] = "pcc.html"
    nav_active: ClassVar[str] = "pcc"
    filters: FilterForm
    availability: Table
    failure_kinds: Table
    fallback_trials: Table
    connections: Table
    charts: list[Chart]
    routes: list[RoutePair]
    """Per workload, on-device and PCC side by side in two columns, never one ranking (:mod:`fmbench.views.pcc_routes`)."""
    routes_caveat: str


def _series(r: dict[str, Any]) -> str:
    """A time series' name: the device and the whole configuration, so no series pools two of them; the route left
    out (every series of the page is PCC) so the legend stays short enough to read on a phone."""
    route = ROUTE.show(r[ROUTE.key]) or r[ROUTE.key]
    return f"{r['hardware_model'] or r['device_name']} · {config_label(r).removeprefix(route + ' · ')}"


def pcc_page(site: SiteContext, filters: Filters) -> PccPage:
    con = site.con
    found = q.pcc_runs(con, filters)
    run_ids = [r["run_id"] for r in found]
    kinds = q.failure_kinds(con, run_ids)
    fallbacks = q.fallback_counts(con, run_ids)
    return PccPage(
        title="Private Cloud Compute",
        routes=route_pairs(site),
        routes_caveat=CAVEAT,
        filters=filter_form(
            con,
            site.url(urls.pcc()),
            filters,
            fields=["os_build", "device", "suite", "revision", "verdict"],
            scope=("r.route = 'privateCloudCompute'", []),
            noun="rows",
        ),
        availability=_availability_table([_availability_row(site, r, kinds, fallbacks) for r in found]),
        failure_kinds=_failure_kinds_table(site, found, kinds),
        fallback_trials=_fallback_table(site, found, q.fallback_trials(con, run_ids)),
        connections=_connections_table(site, found),
        charts=_charts(site, found, fallbacks),
    )


def _availability_row(
    site: SiteContext, r: dict[str, Any], kinds: dict[str, dict[str, int]], fallbacks: dict[str, int],
) -> Row:
    """A PCC run's row: when, where, its configuration, its requests and how many answered, its failures by kind,
    its quota before and after, its fallback trials and its verdict."""
    attempts = r["trial_count"] + r["failure_count"]
    success = r["trial_count"] / attempts if attempts else None
    return Row(
        [
            run_link(r, site.url, f"{r['started_at']:%Y-%m-%d %H:%M}"),
            r["device_name"],
            os_label(r),
            pcc_setup_label(r),
            vocab.label("suite", r["suite"]),
            d.count(attempts),
            Cell(d.percent(success), reason="no measured request", sort=success),
            _kinds_text(kinds.get(r["run_id"], {})),
            *(
                Cell(
                    quota_text(r[f"quota_{when}_status"], r[f"quota_{when}_approaching"],
                               r[f"quota_{when}_reached"], r[f"quota_{when}_reset"]),
                    reason="no quota snapshot",
                )
                for when in ("before", "after")
            ),
            d.count(fallbacks.get(r["run_id"], 0)),
            verdict_cell(r["verdict"], site.url),
        ],
        run_attrs(r),
    )


def _availability_table(rows: list[Row]) -> Table:
    return Table(
        "pcc-runs",
        "PCC runs over time: availability, failures, quota and fallback (fallback enabled and disabled are separate configurations)",
        [
            Column("run", "Run (UTC)"),
            Column("device", "Device"),
            Column("os", "OS (build)"),
            Column("config", "Configuration"),
            Column("suite", "Suite"),
            Column("attempts", "Requests", True),
            Column("success", "Execution success", True),
            Column("kinds", "Failures by kind"),
            Column("qb", "Quota before"),
            Column("qa", "Quota after"),
            Column("fallback", "Fallback trials", True),
            Column("verdict", "Verdict"),
        ],
        rows,
        "No PCC run matches these filters.",
    )


def _charts(site: SiteContext, found: list[dict[str, Any]], fallbacks: dict[str, int]) -> list[Chart]:
    """Execution success and median TTFT over time, a series per device and configuration (invalid runs left out)."""
    series: dict[str, tuple[list[str], list[float | None]]] = {}
    exploratory: dict[str, list[bool]] = {}
    for r in found:
        if r["verdict"] != "invalid":
            attempts = r["trial_count"] + r["failure_count"]
            xs, ys = series.setdefault(_series(r), ([], []))
            xs.append(f"{r['started_at']:%Y-%m-%dT%H:%M:%S}")
            ys.append(r["trial_count"] / attempts if attempts else None)
            exploratory.setdefault(_series(r), []).append(r["verdict"] == "exploratory")
    flags = [exploratory[name] for name in sorted(series)]  # both charts draw the same runs, in the same order
    first_token_times = q.pcc_first_token_times(site.con, [r["run_id"] for r in found if r["verdict"] != "invalid"])
    ttft_series: dict[str, tuple[list[str], list[float | None]]] = {}
    for r in found:
        if r["verdict"] == "invalid":
            continue
        xs, ys = ttft_series.setdefault(_series(r), ([], []))
        xs.append(f"{r['started_at']:%Y-%m-%dT%H:%M:%S}")
        ys.append(distribution(first_token_times.get(r["run_id"], [])).median)
    chart_list = []
    if series:
        chart_list.append(
            charts.time_series(
                "pcc-availability",
                "PCC execution success over time (requests that answered / all measured requests)",
                [(name, xs, ys) for name, (xs, ys) in sorted(series.items())],
                value_title="Execution success",
                fmt=d.percent,
                what="Execution success",
                rate=True,
                exploratory=flags,
            )
        )
    if ttft_series:
        chart_list.append(
            charts.time_series(
                "pcc-ttft",
                "PCC time to first token over time: median over every trial PCC answered (service latency, never on a "
                "device-speed axis); " + _fell_back_text(sum(fallbacks.get(r["run_id"], 0) for r in found
                                                               if r["verdict"] != "invalid")),
                [(name, xs, ys) for name, (xs, ys) in sorted(ttft_series.items())],
                value_title="Median TTFT (seconds)",
                fmt=d.seconds,
                what="TTFT",
                exploratory=flags,
            )
        )
    return chart_list


def _failure_kinds_table(site: SiteContext, found: list[dict[str, Any]], kinds: dict[str, dict[str, int]]) -> Table:
    return Table(
        "pcc-failure-kinds",
        "Failures by kind (availability and quota failures are counted, not dropped)",
        [Column("run", "Run"), Column("kind", "Kind"), Column("n", "Failures", True)],
        [
            Row([run_link(r, site.url), vocab.label("failureKind", k) if k != "not recorded" else Cell(None, reason="the run file records no kind"), d.count(n)], run_attrs(r))
            for r in found
            for k, n in kinds.get(r["run_id"], {}).items()
        ],
        "No PCC request failed.",
    )


def _fallback_table(site: SiteContext, found: list[dict[str, Any]], fallback_trials: list[dict[str, Any]]) -> Table:
    by_id = {r["run_id"]: r for r in found}
    return Table(
        "pcc-fallback-trials",
        "Fallback trials: requested PCC, executed on-device",
        [
            Column("run", "Run"),
            Column("scenario", "Scenario"),
            Column("sample", "Sample"),
            Column("iteration", "Iteration", True),
            Column("requested", "Requested"),
            Column("executed", "Executed"),
            Column("reason", "Reason"),
        ],
        [
            Row(
                [
                    run_link(by_id[t["run_id"]], site.url),
                    t["scenario_id"],
                    t["sample_id"],
                    str(t["iteration"]),
                    vocab.label("route", t["requested_model"]),
                    vocab.label("route", t["executed_model"]),
                    Cell(t["fallback_reason"], reason="no reason recorded"),
                ],
                run_attrs(by_id[t["run_id"]]),
            )
            for t in fallback_trials
        ],
        "No trial fell back.",
    )


def _connections_table(site: SiteContext, found: list[dict[str, Any]]) -> Table:
    return Table(
        "pcc-connections",
        "Connection notes from operator annotations",
        [
            Column("run", "Run"),
            Column("connection", "Connection"),
            Column("location", "Approximate location"),
            Column("entitlement", "Entitlement"),
            Column("note", "Note"),
        ],
        [
            Row(
                [
                    run_link(r, site.url),
                    Cell(r["connection"], reason="not given by the operator"),
                    Cell(r["location"], reason="not given by the operator"),
                    Cell(r["entitlement"], reason="not given by the operator"),
                    Cell(None if r["note"] is None else markdown_as_text(r["note"]), reason="no note"),
                ],
                run_attrs(r),
            )
            for r in found
        ],
    )


def _fell_back_text(n: int) -> str:
    if not n:
        return "no trial fell back to the on-device model"
    return f"{n} trial(s) that fell back to the on-device model left out"
