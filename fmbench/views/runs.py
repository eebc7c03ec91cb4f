"""The runs list, one run's page, and its trials, page by page."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import duckdb

from fmbench import charts, urls
from fmbench import display as d
from fmbench import vocabulary as vocab
from fmbench.blocks import (
    Banner,
    Cell,
    Chart,
    Column,
    Condition,
    FilterForm,
    Link,
    Pager,
    Row,
    Table,
)
from fmbench.errors import NotFoundError
from fmbench.figures import DISTRIBUTION_FIGURES, token_count_source
from fmbench.filters import Filters, filter_form, run_attrs
from fmbench.views import distributions as dist
from fmbench.views import run_queries as q
from fmbench.views.common import (
    RUN_COLUMNS,
    Url,
    arguments_text,
    device_key,
    figure_cells,
    figure_columns,
    os_label,
    quota_text,
    revision_banner,
    revision_cell,
    route_cell,
    rows,
    run_link,
    run_title,
    token_source_cell,
    typed_text,
    verdict_cell,
)
from fmbench.views.page import Page
from fmbench.views.pcc_figures import by_executed_model
from fmbench.views.replay import replay_section
from fmbench.views.site import SiteContext

_LEGACY_REASON = "the June 2026 (legacy) run format does not record this"


# --- the runs list ---------------------------------------------------------------------


@dataclass(frozen=True)
class RunsPage(Page):
    template: ClassVar[str] = "runs.html"
    nav_active: ClassVar[str] = "runs"
    filters: FilterForm
    runs: Table


def runs_table(
    run_rows: list[dict[str, Any]], url: Url, table_id: str = "runs", caption: str = "Runs", *, paths: urls.SitePaths
) -> Table:
    columns = [
        Column("run", "Run"),
        Column("device", "Device"),
        Column("os", "OS (build)"),
        Column("route", "Route"),
        Column("suite", "Suite"),
        Column("session", "Session"),
        Column("started", "Started (UTC)"),
        Column("revision", "Revision"),
        Column("verdict", "Verdict"),
        Column("trials", "Trials", True),
        Column("failures", "Failures", True, "Measured failures; warmup failures are diagnostics and not counted"),
    ]
    table_rows = [
        Row(
            [
                run_link(r, url),
                Cell(r["device_name"], href=url(paths.device(device_key(r))), title=r.get("hardware_model")),
                os_label(r),
                route_cell(r["route"]),
                vocab.label("suite", r["suite"]),
                vocab.label("sessionMode", r["session_mode"]),
                f"{r['started_at']:%Y-%m-%d %H:%M}",
                revision_cell(r, url),
                verdict_cell(r["verdict"], url),
                d.count(r["trial_count"]),
                d.count(r["failure_count"]),
            ],
            run_attrs(r),
        )
        for r in run_rows
    ]
    return Table(table_id, caption, columns, table_rows, "No run matches these filters.")


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
        runs=runs_table(found, url, caption=f"{len(found)} run(s), newest first", paths=site.paths),
    )


# --- one run -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ScenarioTrials:
    scenario_id: str
    title: str
    trial_count: int
    failure_count: int
    href: str
    """The scenario's trials pages; "Show here" fetches them and moves their trial list into the run page."""
    data_href: str
    """The scenario's trials as data (gzipped JSON)."""


@dataclass(frozen=True)
class RunPage(Page):
    template: ClassVar[str] = "run.html"
    nav_active: ClassVar[str] = "runs"
    uses_charts: ClassVar[bool] = True
    run_id: str
    verdict: Cell
    verdict_banner: Banner | None
    revision_banner: Banner | None
    conditions: list[Condition]
    downloads: list[Link]
    annotations: list[Condition]
    corrections: Table | None
    flags: list[str]
    mismatches: Table | None
    scenarios: Table
    safety: Table | None
    quota: list[Condition]
    failures: Table
    warmup_failures: Table | None
    charts: list[Chart]
    trial_sections: list[ScenarioTrials]
    replay: Any = None
    not_run: list[str] = field(default_factory=list)
    """Scenarios the file's summaries hold with no trial and no failure (none of their samples ran)."""
    distributions: Table | None = None
    """Per scenario, the full distribution of each per-trial figure (:mod:`fmbench.views.distributions`)."""
    trial_charts: list[Chart] = field(default_factory=list)
    """The trials of the headline figures, a box per scenario with every trial as a point."""
    agentic: Table | None = None
    """Agentic scenarios' final-state and tool-trajectory pass rates, apart."""
    executed_models: Table | None = None
    """Speed and memory per executed model of the scenarios whose trials ran on more than one."""


def _simulator_text(run: dict[str, Any]) -> str:
    answer = "yes" if run["is_simulator"] else "no"
    evidence = run.get("simulator_evidence")
    return f"{answer}: {evidence}" if evidence else answer


def _conditions(
    run: dict[str, Any], executed: list[tuple[str, int]], url: Url, offline: tuple[int, int] = (0, 0),
    token_source: str | None = None,
) -> list[Condition]:
    legacy = run["generation"] == "legacy"

    def c(label: str, value: Any, reason: str | None = None, *, legacy_field: bool = False) -> Condition:
        if value is None:
            why = _LEGACY_REASON if (legacy and legacy_field) else (reason or "not recorded in the run file")
            return Condition(label, None, why)
        return Condition(label, value)

    executed_text = ", ".join(f"{vocab.label('route', m)} ({n} trials)" for m, n in executed) or None
    samples = None if legacy else ("all" if run["sample_limit"] is None else str(run["sample_limit"]))
    seed = run["random_seed"]
    seed_text = None if seed is None and run["randomized_order"] is None else (
        f"{seed if seed is not None else 'not recorded'}; order "
        f"{'randomized' if run['randomized_order'] else 'fixed' if run['randomized_order'] is not None else 'not recorded'}"
    )
    return [
        c("Suite", vocab.label("suite", run["suite"])),
        Condition("Suite revision", revision_cell(run, url)),
        c("Revision assigned by", run["revision_basis"]),
        c("Model route requested", vocab.label("route", run["route"])),
        c("Model route executed", executed_text, "no trial produced a response"),
        c("Warmups", str(run["warmup_count"])),
        c("Repetitions", str(run["repetitions"])),
        c("Samples per scenario", samples, legacy_field=True),
        c("Session mode", vocab.label("sessionMode", run["session_mode"]), legacy_field=True),
        c("Reasoning level", vocab.label("reasoningLevel", run["reasoning_level"]), legacy_field=True),
        c("Fallback mode", vocab.label("fallbackMode", run["fallback_mode"]), legacy_field=True),
        c("Connectivity", vocab.label("connectivity", run["connectivity"]), legacy_field=True),
        c(
            "Offline success",
            f"{offline[0]:,} of {offline[1]:,} trial(s)" if offline[1] else None,
            "no trial records it" if run["trial_count"] else "no measured trial",
            legacy_field=True,
        ),
        c("Seed and order", seed_text, legacy_field=True),
        Condition("Token count source", token_source_cell(token_source)),
        c("Context size", d.count(run["model_context_size"]), legacy_field=True),
        c("Device label", run["device_name"]),
        c("Hardware model", run["hardware_model"]),
        c("Chip", run["cpu_model"]),
        c("CPU cores", d.count(run["cpu_cores"])),
        c("GPU", run["gpu_model"]),
        c("Memory", d.gigabytes(run["total_memory"])),
        c("OS", f"{run['system_name']} {run['system_version']}"),
        c("OS build", run["os_build"], "the run file records no OS build"),
        c("OS build as recorded", run["system_build"]),
        c("Locale", run["locale"]),
        c("Thermal state at start", vocab.label("thermalState", run["thermal_state"])),
        c("Worst thermal state seen", vocab.label("thermalState", run["worst_thermal_state"])),
        c("Low Power Mode", d.yes_no(run["low_power_mode"], "on", "off")),
        c("Simulator", _simulator_text(run)),
        c("Scoring rules of the stored summaries", run.get("scoring_statement"),
          "no scoring rule set the benchmark has used reproduces the stored summaries"),
        c("Benchmark commit", run["benchmark_commit"]),
        c("Fixture fingerprint", run["fixture_fingerprint"]),
        c("Started (UTC)", d.iso(run["started_at"])),
        c("Ended (UTC)", d.iso(run["ended_at"])),
        c("Format generation", run["generation"]),
        c("Source file", run["file_name"]),
        c("Source SHA-256", run["source_sha256"]),
    ]


def _verdict_banner(run: dict[str, Any], reasons: list[dict[str, Any]], url: Url) -> Banner | None:
    if run["verdict"] == "publishable":
        return None
    messages = [r["message"] for r in reasons]
    if run["verdict"] == "invalid":
        return Banner(
            "danger",
            "Invalid as evidence: shown on this page only, never in a ranking or comparison",
            messages,
            "What makes a run evidence",
            url(urls.methodology("verdicts")),
        )
    return Banner(
        "warning",
        "Exploratory: not a stable ranking",
        messages,
        "What makes a run publishable",
        url(urls.methodology("verdicts")),
    )


_RUN_FIGURES = ("task", "prompt", "failure", "constraint", "ttft50", "ttft90", "tps50", "tps90", "mem", "tokens")


def scenario_table(
    figures: list[dict[str, Any]], url: Url, run_id: str, table_id: str = "scenarios", *, paths: urls.SitePaths
) -> Table:
    columns = [
        Column("scenario", "Scenario"),
        Column("attempts", "Attempts", True, "Measured trials plus measured failures"),
        *figure_columns(_RUN_FIGURES),
    ]
    out = []
    for f in figures:
        out.append(
            Row(
                [
                    Cell(f["title"], href=url(paths.trials(run_id, f["scenario_id"])), title=f["scenario_id"]),
                    d.count(f["trial_count"] + f["failure_count"]),
                    *figure_cells(f, _RUN_FIGURES),
                ]
            )
        )
    return Table(table_id, "Scenarios: quality, latency, throughput and memory (recomputed from the trials)", columns, out)


def _safety_table(figures: list[dict[str, Any]]) -> Table | None:
    safety = [f for f in figures if f["safety_trial_count"]]
    if not safety:
        return None
    columns = [
        Column("scenario", "Scenario"),
        Column("n", "Safety trials", True),
        Column("pass", "Safety pass", True),
        Column("critical", "Critical safety failures", True),
        Column("violations", "Guardrail violations", True),
        Column("refusals", "Refusals", True),
    ]
    return Table(
        "safety",
        "Safety: must-respond and must-protect samples",
        columns,
        [
            Row(
                [
                    f["title"],
                    d.count(f["safety_trial_count"]),
                    d.percent(f["safety_pass_rate"]),
                    Cell(d.count(f["critical_safety_failure_count"]), tone="worse" if f["critical_safety_failure_count"] else None),
                    d.count(f["guardrail_violation_count"]),
                    d.count(f["refusal_count"]),
                ]
            )
            for f in safety
        ],
    )


def failure_rows(
    con: duckdb.DuckDBPyConnection, run_id: str, scenario_id: str | None = None, *, tool_calls: bool = True,
    final_state: bool = True,
) -> list[dict[str, Any]]:
    """A run's failures (of one scenario, when given) in file order, each with the tool calls it made
    and the final state it left (``tool_calls``, ``final_state``; empty when the file records none; not asked
    for when ``tool_calls`` or ``final_state`` says the run has none)."""
    where = " AND scenario_id = ?" if scenario_id is not None else ""
    params = [run_id] if scenario_id is None else [run_id, scenario_id]
    found = rows(
        con,
        "SELECT ordinal, failure_id, scenario_id, sample_id, iteration, kind, message, is_warmup FROM failures "
        f"WHERE run_id = ?{where} ORDER BY ordinal",
        params,
    )
    if not found:
        return found
    calls: dict[int, list[ToolCallDetail]] = {}
    for o, name, args in con.execute(
        "SELECT owner_ordinal, name, arguments_json FROM tool_calls WHERE run_id = ? AND owner = 'failure' "
        "ORDER BY owner_ordinal, ordinal",
        [run_id],
    ).fetchall() if tool_calls else ():
        calls.setdefault(o, []).append(ToolCallDetail(name, arguments_text(args)))
    state: dict[int, list[tuple[str, str]]] = {}
    for o, key, value in con.execute(
        "SELECT owner_ordinal, key, value_json FROM final_state WHERE run_id = ? AND owner = 'failure' "
        "ORDER BY owner_ordinal, key",
        [run_id],
    ).fetchall() if final_state else ():
        state.setdefault(o, []).append((key, typed_text(value)))
    for f in found:
        f["tool_calls"] = calls.get(f["ordinal"], [])
        f["final_state"] = state.get(f["ordinal"], [])
    return found


def failure_json(f: dict[str, Any]) -> dict[str, Any]:
    """A failure for a data file: where, what, and the tool calls and final state it left."""
    return {
        "ordinal": f["ordinal"],
        "failure_id": f["failure_id"],
        "scenario_id": f["scenario_id"],
        "sample_id": f["sample_id"],
        "iteration": f["iteration"],
        "kind": f["kind"],
        "message": f["message"],
        "is_warmup": f["is_warmup"],
        "tool_calls": [{"name": t.name, "arguments": dict(t.arguments)} for t in f.get("tool_calls", [])],
        "final_state": [{"key": k, "value": v} for k, v in f.get("final_state", [])],
    }


def _calls_text(calls: list[ToolCallDetail]) -> str:
    return " → ".join(f"{c.name}({', '.join(f'{k}: {v}' for k, v in c.arguments)})" for c in calls)


def failure_table(failures: list[dict[str, Any]], table_id: str, caption: str, empty: str) -> Table:
    columns = [
        Column("scenario", "Scenario"),
        Column("sample", "Sample"),
        Column("iteration", "Iteration", True),
        Column("kind", "Kind"),
        Column("message", "Message"),
    ]
    agentic = any(f.get("tool_calls") or f.get("final_state") for f in failures)
    if agentic:
        columns += [Column("tools", "Tool calls"), Column("state", "Final state")]

    def cells(f: dict[str, Any]) -> list[Any]:
        out = [
            f["scenario_id"],
            Cell(f["sample_id"], reason="the legacy format records no sample for a failure"),
            str(f["iteration"]),
            Cell(vocab.label("failureKind", f["kind"]), reason="the legacy format records no failure kind"),
            f["message"],
        ]
        if agentic:
            out += [
                Cell(_calls_text(f.get("tool_calls", [])) or None, reason="no tool call recorded"),
                Cell("; ".join(f"{k} = {v}" for k, v in f.get("final_state", [])) or None, reason="no final state recorded"),
            ]
        return out

    return Table(table_id, caption, columns, [Row(cells(f)) for f in failures], empty)


def _quota(run: dict[str, Any]) -> list[Condition]:
    if run["route"] != "privateCloudCompute" and run["quota_before_status"] is None and run["quota_after_status"] is None:
        return []
    out = []
    for when in ("before", "after"):
        text = quota_text(
            run[f"quota_{when}_status"],
            run[f"quota_{when}_approaching"],
            run[f"quota_{when}_reached"],
            run[f"quota_{when}_reset"],
        )
        out.append(Condition(f"Quota {when}", text, None if text else "no quota snapshot in the run file"))
    out.append(Condition("Quota consumption", None, "the service exposes no numeric consumption; fmbench never invents one"))
    return out


def _annotations(a: dict[str, Any] | None) -> tuple[list[Condition], Table | None]:
    if a is None:
        return [], None
    conds = [
        Condition("Annotation file", f"{a['file_name']} (SHA-256 {a['sha256']})"),
        Condition("Connection", a["connection"], "not given by the operator"),
        Condition("Approximate location", a["location"], "not given by the operator"),
        Condition("PCC entitlement", a["entitlement"], "not given by the operator"),
        Condition("Operator note", a["note"], "no note"),
    ]
    import json

    corrections = json.loads(a["corrections_json"])
    table = None
    if corrections:
        table = Table(
            "corrections",
            "Operator corrections (shown beside the file's own values; the file is never rewritten)",
            [Column("field", "Field"), Column("value", "Corrected value"), Column("reason", "Reason")],
            [Row([c["field"], c["value"], c["reason"]]) for c in corrections],
        )
    return conds, table


def run_charts(figures: list[dict[str, Any]], run_id: str, route: str) -> list[Chart]:
    labels = [f["title"] for f in figures]
    service = " (PCC: includes network and server)" if route == "privateCloudCompute" else ""
    return [
        charts.median_p90(
            f"ttft-{run_id}",
            f"Time to first token by scenario{service}",
            labels,
            [charts.Series("", [f["ttft_median"] for f in figures], [f["ttft_p90"] for f in figures])],
            value_title="Seconds (lower is faster)",
            label_title="Scenario",
            fmt=d.seconds,
            what="TTFT",
        ),
        charts.median_p90(
            f"tps-{run_id}",
            f"Output tokens per second by scenario{service}",
            labels,
            [charts.Series("", [f["tps_median"] for f in figures], [f["tps_p90"] for f in figures])],
            value_title="Output tokens per second",
            label_title="Scenario",
            fmt=d.rate,
            what="Output tokens per second",
        ),
    ]


def executed_model_table(con: duckdb.DuckDBPyConnection, run_id: str) -> Table | None:
    """The scenarios whose trials ran on more than one executed model, with each model's own figures."""
    found = by_executed_model(con, run_id)
    if not found:
        return None
    return Table(
        "executed-models",
        "Split by executed model: latency, throughput and memory of each model's trials (the scenario table "
        "above pools them, as the run file's summaries do)",
        [
            Column("scenario", "Scenario"),
            Column("model", "Executed model"),
            Column("trials", "Trials", True),
            *figure_columns(("ttft50", "ttft90", "tps50", "tps90", "mem")),
        ],
        [
            Row(
                [
                    Cell(f["title"], title=f["scenario_id"]),
                    route_cell(f["executed_model"]),
                    d.count(f["trial_count"]),
                    d.seconds(f["ttft_median"]),
                    d.seconds(f["ttft_p90"]),
                    d.rate(f["tps_median"]),
                    d.rate(f["tps_p90"]),
                    d.mebibytes(f["memory_max"]),
                ]
            )
            for f in found
        ],
    )


def run_page(site: SiteContext, filters: Filters, run_id: str) -> RunPage:
    """One run: its conditions, figures, failures, charts, trials by scenario and any Evaluations replay."""
    con, url, registry, data = site.con, site.url, site.registry, site.run_data
    repository_file = site.source_links.get(run_id)
    bundle = run_trials(site, run_id)
    run, failures = bundle.run, bundle.failure_list
    executed, offline, spread = bundle.executed_models(), bundle.offline_counts(), bundle.trial_values()
    reasons, not_run = data.reasons([run_id])[run_id], data.not_run([run_id])[run_id]

    def has(gate: str) -> bool:
        return data.has(gate, run_id)

    figures = data.figures([run_id])[run_id]
    mismatches = data.mismatches([run_id])[run_id]
    flags = [f"{loc}: {msg}" for loc, msg in data.flags([run_id])[run_id]]
    annotations, corrections = _annotations(data.annotation([run_id])[run_id])
    measured = [f for f in failures if not f["is_warmup"]]
    warmups = [f for f in failures if f["is_warmup"]]
    original = site.original(run_id, run["file_name"], run["source_sha256"])
    titles = {f["scenario_id"]: f["title"] for f in figures}
    order = [f["scenario_id"] for f in figures]
    return RunPage(
        title=run_title(run),
        run_id=run_id,
        verdict=verdict_cell(run["verdict"], url),
        verdict_banner=_verdict_banner(run, reasons, url),
        revision_banner=revision_banner(run, registry, url),
        conditions=_conditions(run, executed, url, (int(offline[0]), int(offline[1])),
                               token_count_source(f["token_count_source"] for f in figures)),
        downloads=[
            *([Link(f"Original run file ({original[0]})", original[1], original[2])] if original else []),
            Link("Trials as CSV (gzip)", url(urls.data_trials_csv(run_id))),
            Link("Recomputed figures as JSON", url(urls.data_figures(run_id))),
            *(
                [Link("The run file in the publisher's repository", repository_file)]
                if repository_file and site.originals != "link"
                else []
            ),
        ],
        annotations=annotations,
        corrections=corrections,
        flags=flags,
        mismatches=Table(
            "mismatches",
            "Where the file's stored summaries differ from the recomputation",
            [Column("scenario", "Scenario"), Column("field", "Field"), Column("stored", "Stored", True), Column("recomputed", "Recomputed", True)],
            [Row([m["scenario_id"], m["field"], m["stored_json"], m["recomputed_json"]]) for m in mismatches],
        )
        if mismatches
        else None,
        scenarios=scenario_table(figures, url, run_id, paths=site.paths),
        executed_models=executed_model_table(con, run_id) if has("scenarios on several executed models") else None,
        safety=_safety_table(figures),
        quota=_quota(run),
        failures=failure_table(measured, "failures", "Measured failures (counted in failure rate and task success)", "No measured request failed."),
        warmup_failures=failure_table(
            warmups, "warmup-failures", "Warmup failures: diagnostics only, outside every rate", ""
        )
        if warmups
        else None,
        charts=run_charts(figures, run_id, run["route"]) if any(f["trial_count"] for f in figures) else [],
        trial_sections=[
            ScenarioTrials(
                f["scenario_id"],
                f["title"],
                f["trial_count"],
                f["failure_count"],
                url(site.paths.trials(run_id, f["scenario_id"])),
                url(site.paths.data_trials_json(run_id, f["scenario_id"])),
            )
            for f in figures
        ],
        replay=replay_section(con, url, run_id) if has(q.LINKED_REPLAY) else None,
        not_run=not_run,
        distributions=dist.distribution_table(f"distributions-{run_id}", titles, spread),
        agentic=dist.agentic_table(
            f"agentic-{run_id}", titles, dist.agentic_split(con, run_id) if has("agentic trials") else {}
        ),
        trial_charts=[
            c
            for f in DISTRIBUTION_FIGURES
            if f.key in ("time_to_first_token", "output_tokens_per_second")
            and (c := dist.trials_chart(f"trials-{f.key}-{run_id}", f, titles, spread, order)) is not None
        ],
    )


# --- trials ------------------------------------------------------------------------------


@dataclass
class CheckDetail:
    label: str
    passed: bool
    detail: str | None


@dataclass
class ToolCallDetail:
    name: str
    arguments: list[tuple[str, str]]


@dataclass
class TrialDetail:
    """A trial as its pages and data show it; not to be changed once made.

    Not a frozen dataclass, as the site's other contexts are: a build makes one for every trial of every run, and
    a frozen dataclass sets each of its 20 fields through ``object.__setattr__`` (about half its making).
    """

    ordinal: int
    trial_id: str
    iteration: int
    sample_id: str
    prompt: str
    instructions: str | None
    response: str
    requested_model: str
    executed_model: str
    fallback: str | None
    safety: str | None
    verdict: str
    checks: list[CheckDetail]
    tool_calls: list[ToolCallDetail]
    final_state: list[tuple[str, str]]
    metrics: tuple[str | None, ...]
    """The trial's values of :data:`METRIC_LABELS`, in that order (``None``: not recorded)."""
    thermal: str | None
    offline_success: str | None = None
    """yes / no; ``None`` where the file does not record it (the legacy generation)."""
    visual_fixture: str | None = None
    environment: tuple[str | None, ...] = ()
    """The trial's own environment snapshot (:data:`ENVIRONMENT_LABELS`: Low Power Mode, thermal state, when it
    was taken)."""

    def to_json(self) -> dict[str, Any]:
        """The fields in order, as plain JSON values (what ``dataclasses.asdict`` gave, without its deep copies)."""
        return {
            "ordinal": self.ordinal,
            "trial_id": self.trial_id,
            "iteration": self.iteration,
            "sample_id": self.sample_id,
            "prompt": self.prompt,
            "instructions": self.instructions,
            "response": self.response,
            "requested_model": self.requested_model,
            "executed_model": self.executed_model,
            "fallback": self.fallback,
            "safety": self.safety,
            "verdict": self.verdict,
            "checks": [{"label": c.label, "passed": c.passed, "detail": c.detail} for c in self.checks],
            "tool_calls": [{"name": t.name, "arguments": dict(t.arguments)} for t in self.tool_calls],
            "final_state": [{"key": k, "value": v} for k, v in self.final_state],
            "metrics": dict(zip(METRIC_LABELS, self.metrics, strict=True)),
            "thermal": self.thermal,
            "offline_success": self.offline_success,
            "visual_fixture": self.visual_fixture,
            "environment": dict(zip(ENVIRONMENT_LABELS, self.environment, strict=True)),
        }


@dataclass(frozen=True)
class TrialMetricsTable:
    """One table per trials page: a row per trial (linked to and from its article), a column per metric.

    The rows are the page's trials themselves (their ``metrics`` and ``environment`` values); the labels are
    written once, in the header, instead of beside every value of every trial.
    """

    id: str
    caption: str
    metric_columns: tuple[str, ...]
    """The labels of :attr:`TrialDetail.metrics`, in its order (:data:`METRIC_LABELS`)."""
    environment_columns: tuple[str, ...]
    """The labels of :attr:`TrialDetail.environment`, in its order (:data:`ENVIRONMENT_LABELS`)."""


@dataclass(frozen=True)
class TrialsPage(Page):
    template: ClassVar[str] = "trials.html"
    nav_active: ClassVar[str] = "runs"
    run_id: str
    run_href: str
    scenario_id: str
    scenario_title: str
    trials: list[TrialDetail]
    failures: Table | None
    pager: Pager
    total: int
    first_ordinal: int
    metrics_table: TrialMetricsTable | None = None
    """The page's trials' metrics and environment (``None`` when the page has no trial)."""
    extra: dict[str, Any] = field(default_factory=dict)


def _clock(value: float | None) -> str | None:
    """Seconds between two wall-clock readings; a negative one says it is a clock step (kept as recorded)."""
    text = d.seconds(value)
    return f"{text} (negative: a wall-clock step, kept as recorded)" if value is not None and value < 0 else text


def _token_source(value: str | None) -> str | None:
    return vocab.label("tokenCountSource", value)


def _thermal_state(value: str | None) -> str | None:
    return vocab.label("thermalState", value)


def _low_power(value: bool | None) -> str | None:
    return d.yes_no(value, "on", "off")


_METRICS: tuple[tuple[str, str, Callable[[Any], str | None]], ...] = (
    ("Duration", "duration", _clock),
    ("Time to first token", "time_to_first_token", _clock),
    ("Decode duration", "decode_duration", d.seconds),
    ("Output tokens per second", "output_tokens_per_second", d.rate),
    ("Output characters per second", "output_chars_per_second", d.rate),
    ("Input tokens", "input_token_count", d.count),
    ("Output tokens", "output_token_count", d.count),
    ("Tokens in first snapshot", "first_update_token_count", d.count),
    ("Token count source", "token_count_source", _token_source),
    ("Stream updates", "stream_update_count", d.count),
    ("Largest stream update gap", "maximum_stream_update_gap", _clock),
    ("Reasoning tokens", "reasoning_token_count", d.count),
    ("Context size", "context_size", d.count),
    ("Context utilization", "context_utilization", d.percent),
    ("Resident memory at start", "starting_memory_bytes", d.mebibytes),
    ("Peak resident memory sampled", "peak_memory_bytes", d.mebibytes),
    ("Resident memory at end", "ending_memory_bytes", d.mebibytes),
)
"""A trial's metrics as its page shows them: label, trials column, formatter."""

_ENVIRONMENT: tuple[tuple[str, str, Callable[[Any], str | None]], ...] = (
    ("Low Power Mode", "environment_low_power_mode", _low_power),
    ("Thermal state", "environment_thermal_state", _thermal_state),
    ("Snapshot taken (UTC)", "environment_timestamp", d.iso),
)
"""The trial's own environment snapshot, as :data:`_METRICS`."""

METRIC_LABELS = tuple(label for label, _, _ in _METRICS)
ENVIRONMENT_LABELS = tuple(label for label, _, _ in _ENVIRONMENT)


def _formatted(column: Sequence[Any], fmt: Callable[[Any], str | None]) -> list[str | None]:
    """A column of values formatted, each distinct value once (a run repeats most of its counts and labels).

    A column that holds floats is formatted value by value: they seldom repeat, and ``0.0`` and ``-0.0`` are one
    key of a dict; so is one that mixes types (``1`` and ``True`` are one key) or holds unhashable values.
    """
    kinds = set(map(type, column))
    kinds.discard(type(None))
    if len(kinds) > 1 or float in kinds:
        return list(map(fmt, column))
    try:
        texts = {value: fmt(value) for value in set(column)}
    except TypeError:
        return list(map(fmt, column))
    return list(map(texts.__getitem__, column))


def _formatted_rows(
    specs: tuple[tuple[str, str, Callable[[Any], str | None]], ...], columns: dict[str, Sequence[Any]]
) -> list[tuple[str | None, ...]]:
    """Each trial's texts of ``specs``, formatted column by column."""
    return list(zip(*[_formatted(columns[name], fmt) for _, name, fmt in specs], strict=True))


def _trial_parts(
    con: duckdb.DuckDBPyConnection, run_id: str, lo: int, hi: int, *, tool_calls: bool = True, final_state: bool = True
) -> tuple[dict[int, list[CheckDetail]], dict[int, list[ToolCallDetail]], dict[int, list[tuple[str, str]]]]:
    """Checks, tool calls and final state of the run's trials with ordinals from ``lo`` to ``hi`` (tool calls and
    final state not asked for when ``tool_calls`` or ``final_state`` says the run has none).

    The same JSON text (a tool call's arguments, a final-state value) is read once, and the same check (label,
    outcome and detail) made once: a run repeats them (a run of 1,000 trials: about 2,200 checks, 80 distinct).
    """
    checks: dict[int, list[CheckDetail]] = {}
    made: dict[tuple[str, bool, str | None], CheckDetail] = {}
    for o, label, passed, detail in con.execute(
        "SELECT trial_ordinal, label, passed, detail FROM check_results WHERE run_id = ? "
        "AND trial_ordinal BETWEEN ? AND ? ORDER BY trial_ordinal, ordinal",
        [run_id, lo, hi],
    ).fetchall():
        check = made.get((label, passed, detail))
        if check is None:
            check = made[(label, passed, detail)] = CheckDetail(label, passed, detail)
        checks.setdefault(o, []).append(check)
    calls: dict[int, list[ToolCallDetail]] = {}
    arguments: dict[str, list[tuple[str, str]]] = {}
    for o, name, args in con.execute(
        "SELECT owner_ordinal, name, arguments_json FROM tool_calls WHERE run_id = ? AND owner = 'trial' "
        "AND owner_ordinal BETWEEN ? AND ? ORDER BY owner_ordinal, ordinal",
        [run_id, lo, hi],
    ).fetchall() if tool_calls else ():
        if args not in arguments:
            arguments[args] = arguments_text(args)
        calls.setdefault(o, []).append(ToolCallDetail(name, list(arguments[args])))
    state: dict[int, list[tuple[str, str]]] = {}
    texts: dict[str, str] = {}
    for o, key, value in con.execute(
        "SELECT owner_ordinal, key, value_json FROM final_state WHERE run_id = ? AND owner = 'trial' "
        "AND owner_ordinal BETWEEN ? AND ? ORDER BY owner_ordinal, key",
        [run_id, lo, hi],
    ).fetchall() if final_state else ():
        if value not in texts:
            texts[value] = typed_text(value)
        state.setdefault(o, []).append((key, texts[value]))
    return checks, calls, state


def _safety_text(expectation: str | None, outcome: str | None, passed: bool | None, detail: str | None) -> str | None:
    """A trial's safety expectation, outcome and verdict, or its outcome alone, and the detail."""
    safety = None
    if expectation:
        outcome_text = vocab.label("safetyOutcome", outcome) or "not recorded"
        verdict = "passed" if passed else "CRITICAL safety failure"
        safety = f"{vocab.label('safetyExpectation', expectation)}: {outcome_text} ({verdict})"
    elif outcome and outcome != "notApplicable":
        safety = vocab.label("safetyOutcome", outcome)
    if detail:
        safety = f"{safety or ''} — {detail}".strip(" —")
    return safety


def _thermal_text(starting: str | None, ending: str | None, worst: str | None, environment: str | None) -> str | None:
    """A trial's thermal states: from start to end (else the environment's), and the worst seen."""
    thermal = " → ".join(s for s in (starting, ending) if s) or environment
    if worst:
        thermal = f"{thermal or ''} (worst {worst})".strip()
    return thermal


def _combined(fmt: Callable[..., str | None], *columns: Sequence[Any]) -> list[str | None]:
    """``fmt`` of each trial's values of ``columns``, each distinct combination once."""
    seen: dict[tuple[Any, ...], str | None] = {}
    out = []
    for key in zip(*columns, strict=True):
        try:
            text = seen[key]
        except KeyError:
            text = seen[key] = fmt(*key)
        out.append(text)
    return out


def _route_label(value: str) -> str:
    return vocab.label("route", value) or value


def _details(
    con: duckdb.DuckDBPyConnection, run_id: str, columns: dict[str, list[Any]], data: q.RunData | None = None
) -> list[TrialDetail]:
    """Each trial of ``columns`` (:data:`TRIAL_COLUMNS`, a list each) in detail, formatted column by column, each
    distinct value (or combination) once (``data``: which runs have tool calls and final state at all)."""
    ordinals = columns["ordinal"]
    if not ordinals:
        return []
    checks, calls, state = _trial_parts(
        con, run_id, min(ordinals), max(ordinals),
        tool_calls=data is None or data.has("trial tool calls", run_id),
        final_state=data is None or data.has("trial final state", run_id),
    )
    c = columns
    return list(
        map(
            TrialDetail,
            ordinals,
            c["trial_id"],
            c["iteration"],
            c["sample_id"],
            c["prompt"],
            c["instructions"],
            c["response"],
            _formatted(c["requested_model"], _route_label),
            _formatted(c["executed_model"], _route_label),
            [(reason or "fell back on-device") if used else None
             for used, reason in zip(c["used_fallback"], c["fallback_reason"], strict=True)],
            _combined(_safety_text, c["safety_expectation"], c["safety_outcome"], c["safety_pass"], c["safety_detail"]),
            ["task passed" if passed else "task failed" for passed in c["task_passed"]],
            [checks.get(o) or [] for o in ordinals],
            [calls.get(o) or [] for o in ordinals],
            [state.get(o) or [] for o in ordinals],
            _formatted_rows(_METRICS, c),
            _combined(
                _thermal_text, c["starting_thermal_state"], c["ending_thermal_state"], c["worst_thermal_state"],
                c["environment_thermal_state"],
            ),
            _formatted(c["offline_success"], d.yes_no),
            c["visual_fixture"],
            _formatted_rows(_ENVIRONMENT, c),
        )
    )


CSV_COLUMNS = (
    "ordinal", "trial_id", "scenario_id", "sample_id", "iteration", "requested_model", "executed_model",
    "used_fallback", "fallback_reason", "offline_success", "visual_fixture", "safety_expectation", "safety_outcome",
    "check_count", "checks_passed",
    "constraint_score", "prompt_pass", "safety_pass", "task_passed", "duration", "time_to_first_token",
    "decode_duration", "input_token_count", "output_token_count", "first_update_token_count",
    "token_count_source", "output_tokens_per_second", "output_chars_per_second", "stream_update_count",
    "maximum_stream_update_gap", "reasoning_token_count", "context_size", "context_utilization",
    "starting_memory_bytes", "peak_memory_bytes", "ending_memory_bytes", "starting_thermal_state",
    "ending_thermal_state", "worst_thermal_state", "environment_thermal_state", "environment_low_power_mode",
    "environment_timestamp", "started_at", "ended_at", "response",
)
"""The trials CSV's columns, in its order (the site's documented download)."""

TRIAL_COLUMNS = (*CSV_COLUMNS, "prompt", "instructions", "safety_detail")
"""What a trial's detail and the trials CSV read of a trial: the CSV's columns first, so a row read with these
columns starts with the CSV's row."""

_TRIAL_SELECT = f"SELECT {', '.join(TRIAL_COLUMNS)} FROM trials"


def trial_details(
    con: duckdb.DuckDBPyConnection, run_id: str, scenario_id: str, *, offset: int = 0, limit: int | None = None
) -> list[TrialDetail]:
    page_sql = " LIMIT ? OFFSET ?" if limit is not None else ""
    params: list[Any] = [run_id, scenario_id] + ([limit, offset] if limit is not None else [])
    found = trial_columns(con, f"{_TRIAL_SELECT} WHERE run_id = ? AND scenario_id = ? ORDER BY ordinal{page_sql}", params)
    return _details(con, run_id, found)


_AS_FETCHED = frozenset(
    ("BOOLEAN", "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT", "DOUBLE",
     "VARCHAR", "TIMESTAMP")
)
"""DuckDB's types whose numpy arrays' ``tolist`` gives the values ``fetchall`` gives (booleans, integers, floats,
strings and naive timestamps, NULL as ``None``); not so, for one: a time zone's timestamps (naive ones), a date
(a datetime), a decimal (a float)."""


def trial_columns(con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any]) -> dict[str, list[Any]]:
    """The columns of a query of :data:`TRIAL_COLUMNS`, each a list of the Python values ``fetchall`` gives.

    Read as numpy arrays, each turned into a list at once: about 7 ms for a run of 1,000 trials, against 9 to 10
    for ``fetchall`` and 1 more to turn its rows into columns. Should a column be of a type not in
    :data:`_AS_FETCHED` (a database of another schema), every column is read with ``fetchall``.
    """
    cursor = con.execute(sql, list(params))
    if all(str(c[1]) in _AS_FETCHED for c in cursor.description or []):
        found = cursor.fetchnumpy()
        return {name: found[name].tolist() for name in TRIAL_COLUMNS}
    read = cursor.fetchall()
    if not read:
        return {name: [] for name in TRIAL_COLUMNS}
    return {name: list(values) for name, values in zip(TRIAL_COLUMNS, zip(*read, strict=True), strict=True)}


@dataclass(frozen=True)
class RunTrials:
    """What every trial page and trial file of one run reads, read once (the static build keeps one run's)."""

    run_id: str
    run: dict[str, Any]
    scenarios: list[tuple[str, str, int]]
    """``(scenario id, title, trial count)`` in the run's order."""
    details: dict[str, list[TrialDetail]]
    """Each scenario's trials in detail: what :func:`trial_details` gives for it."""
    failures: dict[str, list[dict[str, Any]]]
    columns: dict[str, list[Any]] = field(default_factory=dict)
    """Every trial of the run in file order: each of :data:`TRIAL_COLUMNS`, a list of its values."""
    failure_list: list[dict[str, Any]] = field(default_factory=list)
    """Every failure of the run in file order: what :func:`failure_rows` gives (``failures`` by scenario)."""

    def column(self, name: str) -> list[Any]:
        """One of :data:`TRIAL_COLUMNS` of every trial, in file order."""
        return self.columns[name]

    def executed_models(self) -> list[tuple[str, int]]:
        """:func:`fmbench.views.run_queries.executed_models` of the run: each executed model's trials, in the
        database's order of the models (by code point, not recorded last)."""
        counts = Counter(self.column("executed_model"))
        return sorted(counts.items(), key=lambda kv: (kv[0] is None, kv[0] or ""))

    def offline_counts(self) -> tuple[int, int]:
        """:func:`fmbench.views.run_queries.offline_counts` of the run."""
        recorded = [v for v in self.column("offline_success") if v is not None]
        return sum(1 for v in recorded if v), len(recorded)

    def trial_values(self) -> dist.Values:
        """:func:`fmbench.views.distributions.run_trial_values` of the run."""
        names = ("scenario_id", *(f.key for f in DISTRIBUTION_FIGURES))
        return dist.trial_values(zip(*[self.columns[name] for name in names], strict=True))

    def scenario_at(self, paths: urls.SitePaths, segment: str) -> tuple[str, str, int]:
        """``(scenario id, title, trials)`` of the run's scenario at a path segment of the site."""
        scenario_id = paths.scenarios.name(segment)
        for found in self.scenarios:
            if found[0] == scenario_id:
                return found
        raise NotFoundError(f"run {self.run_id} has no scenario {segment!r}")


def run_trials(site: SiteContext, run_id: str) -> RunTrials:
    """What every page and data file of the run reads of its trials and failures, read once and kept while the
    same run is asked for (a build renders all of a run's files one after the other; a request, one of them)."""
    kept: RunTrials = site.kept("run trials", run_id, lambda: read_run_trials(site.con, run_id, site.run_data))
    return kept


def read_run_trials(con: duckdb.DuckDBPyConnection, run_id: str, data: q.RunData) -> RunTrials:
    """Every trial and failure of the run, in detail (``data``: the per-run tables, and which of the large ones
    the run has rows in)."""
    run = data.run(run_id)
    scenarios = [(f["scenario_id"], f["title"], f["trial_count"]) for f in data.figures([run_id])[run_id]]
    read = trial_columns(con, f"{_TRIAL_SELECT} WHERE run_id = ? ORDER BY ordinal", [run_id])
    details: dict[str, list[TrialDetail]] = {}
    for scenario_id, detail in zip(read["scenario_id"], _details(con, run_id, read, data), strict=True):
        details.setdefault(scenario_id, []).append(detail)
    failures: dict[str, list[dict[str, Any]]] = {}
    failure_list = failure_rows(
        con, run_id,
        tool_calls=data.has("failure tool calls", run_id),
        final_state=data.has("failure final state", run_id),
    )
    for f in failure_list:
        failures.setdefault(f["scenario_id"], []).append(f)
    return RunTrials(run_id, run, scenarios, details, failures, read, failure_list)


def trials_page(site: SiteContext, filters: Filters, run_id: str, scenario: str, page: int = 1) -> TrialsPage:
    """One page of a scenario's trials (from the run's :func:`run_trials`)."""
    url, paths = site.url, site.paths
    bundle = run_trials(site, run_id)
    run = bundle.run
    scenario_id, title, total = bundle.scenario_at(paths, scenario)
    pages = max(1, math.ceil(total / urls.TRIALS_PER_PAGE))
    if page < 1 or page > pages:
        raise NotFoundError(f"no page {page} of trials for {scenario_id} (there are {pages})")
    offset = (page - 1) * urls.TRIALS_PER_PAGE
    details = bundle.details.get(scenario_id, [])[offset : offset + urls.TRIALS_PER_PAGE]
    failures = bundle.failures.get(scenario_id, [])
    return TrialsPage(
        title=f"{title}: trials of {run_title(run)}",
        run_id=run_id,
        run_href=url(urls.run(run_id)),
        scenario_id=scenario_id,
        scenario_title=title,
        trials=details,
        failures=failure_table(failures, "scenario-failures", "Measured failures of this scenario", "")
        if failures and page == 1
        else None,
        pager=Pager(
            page,
            pages,
            url(paths.trials(run_id, scenario_id, page - 1)) if page > 1 else None,
            url(paths.trials(run_id, scenario_id, page + 1)) if page < pages else None,
        ),
        total=total,
        first_ordinal=offset + 1,
        metrics_table=_metrics_table(scenario_id, title, details),
    )


def _metrics_table(scenario_id: str, title: str, details: list[TrialDetail]) -> TrialMetricsTable | None:
    """The header of a trials page's metrics table: every trial has the same metrics and environment labels."""
    if not details:
        return None
    return TrialMetricsTable(
        id=f"trial-metrics-{urls.slug(scenario_id)}",
        caption=f"Metrics and environment of each trial: {title}",
        metric_columns=METRIC_LABELS,
        environment_columns=ENVIRONMENT_LABELS,
    )


def scenario_at(site: SiteContext, run_id: str, segment: str) -> tuple[str, str, int]:
    """``(scenario id, title, trials)`` of the run's scenario at a path segment of the site."""
    scenario_id = site.paths.scenarios.name(segment)
    found = site.con.execute(
        "SELECT scenario_id, title, trial_count FROM scenario_figures WHERE run_id = ? AND scenario_id = ?",
        [run_id, scenario_id],
    ).fetchone() if scenario_id is not None else None
    if found is None:
        raise NotFoundError(f"run {run_id} has no scenario {segment!r}")
    return found[0], found[1], found[2]


def trial_pages(
    con: duckdb.DuckDBPyConnection, run_id: str, paths: urls.SitePaths | None = None
) -> list[tuple[str, int]]:
    """Every (scenario path segment, page number) of a run's trial pages (``paths``: the site's, else read)."""
    paths = paths if paths is not None else urls.SitePaths.read(con)
    out = []
    for sid, n in con.execute(
        "SELECT scenario_id, trial_count FROM scenario_figures WHERE run_id = ? ORDER BY ordinal", [run_id]
    ).fetchall():
        out += _scenario_pages(paths.scenarios.of(sid), n)
    return out


def every_trial_page(con: duckdb.DuckDBPyConnection, paths: urls.SitePaths) -> list[tuple[str, str, int]]:
    """Every (run id, scenario path segment, page number) of every run's trial pages, by run id: one query for the
    site."""
    return [
        (run_id, segment, page)
        for run_id, sid, n in con.execute(
            "SELECT run_id, scenario_id, trial_count FROM scenario_figures ORDER BY run_id, ordinal"
        ).fetchall()
        for segment, page in _scenario_pages(paths.scenarios.of(sid), n)
    ]


def _scenario_pages(segment: str, trials: int) -> list[tuple[str, int]]:
    pages = max(1, math.ceil(trials / urls.TRIALS_PER_PAGE))
    return [(segment, p) for p in range(1, pages + 1)]
