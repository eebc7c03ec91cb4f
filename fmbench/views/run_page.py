"""One run's page: its conditions, figures, failures, charts, trials by scenario and any Evaluations replay."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import duckdb

from fmbench import urls
from fmbench.analysis import display as d
from fmbench.analysis import figure_catalog as fc
from fmbench.analysis.configuration import (
    CHOICES,
    HARDWARE_MODEL,
    OLDER_FORMAT,
    OS_BUILD,
    REPETITIONS,
    REVISION_ID,
    ROUTE,
    SESSION_MODE,
    SUITE,
    WARMUP_COUNT,
)
from fmbench.analysis.figures import token_count_source
from fmbench.runfile import vocabulary as vocab
from fmbench.views import charts
from fmbench.views import distributions as dist
from fmbench.views import run_queries as q
from fmbench.views.blocks import (
    Banner,
    Cell,
    Chart,
    Column,
    Condition,
    Link,
    Row,
    Table,
)
from fmbench.views.common import (
    Url,
    figure_cells,
    figure_columns,
    figure_keys,
    os_name,
    quota_text,
    revision_banner,
    revision_cell,
    route_cell,
    run_title,
    token_source_cell,
    verdict_cell,
)
from fmbench.views.filters import Filters
from fmbench.views.markdown_render import markdown_as_text
from fmbench.views.page import Page
from fmbench.views.pcc_figures import by_executed_model
from fmbench.views.replay import replay_section
from fmbench.views.site import SiteContext
from fmbench.views.trial_details import ToolCallDetail, run_trials

_LEGACY_REASON = "the older (June 2026) run-file format does not record this"
_GENERATION_WORDS = {"legacy": f"{OLDER_FORMAT} (June 2026)", "current": "current run-file format"}


@dataclass(frozen=True)
class ScenarioTrials:
    scenario_id: str
    title: str
    trial_count: int
    failure_count: int
    href: str
    """The scenario's trials page (its summary and failing trials; every trial laid out from ``data_href``)."""
    data_href: str
    """The scenario's trials as data (gzipped JSON): "Show here" lays them out in the run page (``trials.js``)."""

    @property
    def trials_text(self) -> str:
        """``5 trials``, ``5 trials, 1 failure``."""
        text = d.plural(self.trial_count, "trial")
        return f"{text}, {d.plural(self.failure_count, 'failure')}" if self.failure_count else text


@dataclass(frozen=True)
class RunPage(Page):
    template: ClassVar[str] = "run.html"
    nav_active: ClassVar[str] = "runs"
    run_id: str
    verdict: Cell
    verdict_banner: Banner | None
    revision_banner: Banner | None
    glance: list[Condition]
    """The conditions a reader checks first (device, OS, route, session, suite, revision, trials, warmups,
    repetitions), at the top; :attr:`conditions` holds every one."""
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
    own_names: list[Condition] = field(default_factory=list)
    """Workloads this run's file names otherwise than the site does (the site's name: the newest run's title)."""
    distributions: Table | None = None
    """Per scenario, the full distribution of each per-trial figure (:mod:`fmbench.views.distributions`)."""
    trial_charts: list[Chart] = field(default_factory=list)
    """The trials of the headline figures, every trial as a point with the median and p90 per scenario."""
    agentic: Table | None = None
    """Agentic scenarios' final-state and tool-trajectory pass rates, apart."""
    executed_models: Table | None = None
    """Speed and memory per executed model of the scenarios whose trials ran on more than one."""


def _simulator_text(run: dict[str, Any]) -> str:
    answer = "yes" if run["is_simulator"] else "no"
    evidence = run.get("simulator_evidence")
    return f"{answer}: {evidence}" if evidence else answer


def samples_text(run: dict[str, Any], samples: dict[str, int]) -> str | None:
    """Samples per scenario: the file's sample limit (``all`` without one); for a file that does not record it (the
    older format), the distinct samples each scenario's trials ran, counted, and said to be counted."""
    if run["generation"] != "legacy":
        return "all" if run["sample_limit"] is None else str(run["sample_limit"])
    if not samples:
        return None
    low, high = min(samples.values()), max(samples.values())
    each = f"{low:,}" if low == high else f"{low:,} to {high:,}"
    total = sum(samples.values())
    return (f"{each} (counted from the trials: {d.plural(total, 'sample')} in {d.plural(len(samples), 'scenario')}; "
            "the file does not record a limit)")


def _conditions(
    run: dict[str, Any], executed: list[tuple[str, int]], url: Url, offline: tuple[int, int] = (0, 0),
    token_source: str | None = None, samples: dict[str, int] | None = None,
) -> list[Condition]:
    legacy = run["generation"] == "legacy"

    def c(label: str, value: Any, reason: str | None = None, *, legacy_field: bool = False) -> Condition:
        if value is None:
            why = _LEGACY_REASON if (legacy and legacy_field) else (reason or "not recorded in the run file")
            return Condition(label, None, why)
        return Condition(label, value)

    executed_text = ", ".join(f"{vocab.label('route', m)} ({d.plural(n, 'trial')})" for m, n in executed) or None
    samples_shown = samples_text(run, samples or {})
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
        c("Samples per scenario", samples_shown, "no trial ran, so no sample can be counted", legacy_field=True),
        *(c(f.label, f.show(run[f.key]), legacy_field=True) for f in CHOICES),
        *(  # only a run on a verified offline path: elsewhere every trial's offline success is "no"
            [c(
                "Offline success",
                f"{offline[0]:,} of {d.plural(offline[1], 'trial')}" if offline[1] else None,
                "no trial records it" if run["trial_count"] else "no measured trial",
                legacy_field=True,
            )] if run["connectivity"] == "offline" else []
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
        c("Fixture version", run["fixture_fingerprint"], "the run file records no fingerprint of its fixtures"),
        c("Started (UTC)", d.iso(run["started_at"])),
        c("Ended (UTC)", d.iso(run["ended_at"])),
        c("Run-file format", _GENERATION_WORDS.get(run["generation"], run["generation"])),
        c("Source file", run["file_name"]),
        c("Source SHA-256", run["source_sha256"]),
    ]


def glance(run: dict[str, Any], url: Url, paths: urls.SitePaths) -> list[Condition]:
    """The run's conditions at a glance, each labelled as the configuration spec labels it where it lives there."""
    legacy = run["generation"] == "legacy"
    device = run[HARDWARE_MODEL.key] or run["device_name"]
    build = run[OS_BUILD.key]
    session = SESSION_MODE.show(run[SESSION_MODE.key])
    trials = d.plural(run["trial_count"], "measured trial")
    if run["failure_count"]:
        trials += f", {d.plural(run['failure_count'], 'measured failure')}"
    return [
        Condition("Device", Cell(f"{run['device_name']} ({device})", href=url(paths.device(device)))),
        Condition(
            "OS version and build",
            Cell(f"{os_name(run)} {run['system_version']}, build {build}", href=url(paths.build(build)))
            if build else f"{os_name(run)} {run['system_version']}, build not recorded",
        ),
        Condition(ROUTE.label, ROUTE.show(run[ROUTE.key])),
        Condition("Session", session, _LEGACY_REASON if legacy else "not recorded in the run file"),
        Condition(SUITE.label, SUITE.show(run[SUITE.key])),
        Condition(REVISION_ID.label, revision_cell(run, url)),
        Condition("Trials", trials),
        Condition(WARMUP_COUNT.label, d.count(run[WARMUP_COUNT.key])),
        Condition(REPETITIONS.label, d.count(run[REPETITIONS.key])),
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


def scenario_table(
    figures: list[dict[str, Any]], url: Url, run_id: str, table_id: str = "scenarios", *, paths: urls.SitePaths
) -> Table:
    columns = [
        Column("scenario", "Scenario"),
        Column("attempts", "Attempts", True, "Measured trials plus measured failures"),
        *figure_columns((*figure_keys("run"), "tokens")),
    ]
    out = []
    for f in figures:
        out.append(
            Row(
                [
                    Cell(f["title"], href=url(paths.trials(run_id, f["scenario_id"])), title=f["scenario_id"]),
                    d.count(f["trial_count"] + f["failure_count"]),
                    *figure_cells(f, (*figure_keys("run"), "tokens")),
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


def _calls_text(calls: list[ToolCallDetail]) -> str:
    return " → ".join(f"{c.name}({', '.join(f'{k}: {v}' for k, v in c.arguments)})" for c in calls)


def failure_table(failures: list[dict[str, Any]], table_id: str, caption: str, empty: str) -> Table:
    """One row per scenario, kind and message of the run's failures (and tool calls and final state, in an agentic
    run): how many, on which samples and iterations. A run's failures mostly repeat one another (a network
    failure's message is the same each time), so a row a failure made the reader count them."""
    agentic = any(f.get("tool_calls") or f.get("final_state") for f in failures)
    groups: dict[tuple[str, str | None, str | None, str | None, str | None], list[dict[str, Any]]] = {}
    for f in failures:
        key = (
            f["scenario_id"],
            vocab.label("failureKind", f["kind"]),
            f["message"],
            _calls_text(f.get("tool_calls", [])) or None if agentic else None,
            "; ".join(f"{k} = {v}" for k, v in f.get("final_state", [])) or None if agentic else None,
        )
        groups.setdefault(key, []).append(f)
    columns = [
        Column("scenario", "Scenario"),
        Column("kind", "Kind"),
        Column("message", "Message"),
        Column("count", "Failures", True),
        Column("sample", "Samples"),
        Column("iteration", "Iterations"),
    ]
    if agentic:
        columns += [Column("tools", "Tool calls"), Column("state", "Final state")]

    def cells(key: tuple[str, str | None, str | None, str | None, str | None], found: list[dict[str, Any]]) -> list[Any]:
        scenario, kind, message, tools, state = key
        samples = sorted({f["sample_id"] for f in found if f["sample_id"]})
        out = [
            scenario,
            Cell(kind, reason=f"the {OLDER_FORMAT} records no failure kind"),
            message,
            Cell(f"{len(found):,}", sort=len(found)),
            Cell(", ".join(samples) or None, reason=f"the {OLDER_FORMAT} records no sample for a failure"),
            Cell(", ".join(str(i) for i in sorted(f["iteration"] for f in found if f["iteration"] is not None)) or None,
                 reason="no iteration recorded"),
        ]
        if agentic:
            out += [Cell(tools, reason="no tool call recorded"), Cell(state, reason="no final state recorded")]
        return out

    ordered = sorted(groups.items(), key=lambda kv: (kv[0][0], -len(kv[1]), kv[0][1] or "", kv[0][2] or ""))
    return Table(table_id, caption, columns, [Row(cells(k, found)) for k, found in ordered], empty)


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
        Condition("Operator note", None if a["note"] is None else markdown_as_text(a["note"]), "no note"),
    ]

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
    """The catalog's charts of the run's scenarios: each median with a bar to its p90."""
    labels = [f["title"] for f in figures]
    service = " (PCC: includes network and server)" if route == "privateCloudCompute" else ""
    out = []
    for chart in fc.CATALOG.charts:
        median, p90 = fc.CATALOG.charted(chart)
        out.append(
            charts.median_p90(
                f"{chart.id}-{run_id}",
                f"{chart.name} by scenario{service}",
                labels,
                [charts.Series("", [f[median.stored] for f in figures], [f[p90.stored] for f in figures])],
                value_title=chart.axis,
                label_title="Scenario",
                fmt=median.format,
                what=chart.what,
                spec=chart,
            )
        )
    return out


def executed_model_table(
    con: duckdb.DuckDBPyConnection, run_id: str, title: Callable[[str, str], str] | None = None
) -> Table | None:
    """The scenarios whose trials ran on more than one executed model, with each model's own figures (``title``:
    a workload's one name on the site, from its id and the run's title of it)."""
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
            *figure_columns(figure_keys("executed-model")),
        ],
        [
            Row(
                [
                    Cell(title(f["scenario_id"], f["title"]) if title else f["title"], title=f["scenario_id"]),
                    route_cell(f["executed_model"]),
                    d.count(f["trial_count"]),
                    *figure_cells(f, figure_keys("executed-model")),
                ]
            )
            for f in found
        ],
    )


def run_page(site: SiteContext, filters: Filters, run_id: str) -> RunPage:
    """One run: its conditions, figures, failures, charts, trials by scenario and any Evaluations replay."""
    con, url, registry, data = site.con, site.url, site.registry, site.run_data
    bundle = run_trials(site, run_id)
    run, failures = bundle.run, bundle.failure_list
    executed, offline, spread = bundle.executed_models(), bundle.offline_counts(), bundle.trial_values()
    reasons, not_run = data.reasons([run_id])[run_id], data.not_run([run_id])[run_id]

    def has(gate: str) -> bool:
        return data.has(gate, run_id)

    stored = data.figures([run_id])[run_id]
    figures = [{**f, "title": site.scenario_title(f["scenario_id"], f["title"])} for f in stored]
    own_names = [
        Condition(named["title"], own["title"])
        for own, named in zip(stored, figures, strict=True)
        if own["title"] and own["title"] != named["title"]
    ]
    samples = _samples(bundle.column("scenario_id"), bundle.column("sample_id"))
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
        glance=glance(run, url, site.paths),
        conditions=_conditions(run, executed, url, (int(offline[0]), int(offline[1])),
                               token_count_source(f["token_count_source"] for f in figures),
                               {sid: len(found) for sid, found in samples.items()}),
        downloads=_downloads(site, run_id, original),
        annotations=annotations,
        corrections=corrections,
        flags=flags,
        mismatches=_mismatches_table(mismatches) if mismatches else None,
        scenarios=scenario_table(figures, url, run_id, paths=site.paths),
        executed_models=executed_model_table(con, run_id, site.scenario_title)
        if has("scenarios on several executed models") else None,
        safety=_safety_table(figures),
        quota=_quota(run),
        failures=failure_table(measured, "failures", "Measured failures by scenario, kind and message (counted in failure rate and task success)", "No measured request failed."),
        warmup_failures=failure_table(
            warmups, "warmup-failures", "Warmup failures by scenario, kind and message: diagnostics only, outside every rate", ""
        )
        if warmups
        else None,
        charts=run_charts(figures, run_id, run["route"]) if any(f["trial_count"] for f in figures) else [],
        trial_sections=_trial_sections(site, run_id, figures),
        replay=replay_section(con, url, run_id) if has(q.LINKED_REPLAY) else None,
        not_run=not_run,
        own_names=own_names,
        distributions=dist.distribution_table(f"distributions-{run_id}", titles, spread),
        agentic=dist.agentic_table(
            f"agentic-{run_id}", titles, dist.agentic_split(con, run_id) if has("agentic trials") else {}
        ),
        trial_charts=[
            c
            for f in fc.CATALOG.charted_metrics()
            if (c := dist.trials_chart(f"trials-{f.key}-{run_id}", f, titles, spread, order)) is not None
        ],
    )


def _downloads(site: SiteContext, run_id: str, original: tuple[str, str, str] | None) -> list[Link]:
    """The run's files to download: its original (where the site keeps it), its recomputed figures and the file in
    the publisher's repository (where known and the site does not only link it)."""
    repository_file = site.source_links.get(run_id)
    return [
        *([Link(f"Original run file ({original[0]})", original[1], original[2])] if original else []),
        Link("Recomputed figures as JSON", site.url(urls.data_figures(run_id))),
        *(
            [Link("The run file in the publisher's repository", repository_file)]
            if repository_file and site.originals != "link"
            else []
        ),
    ]


def _mismatches_table(mismatches: list[dict[str, Any]]) -> Table:
    return Table(
        "mismatches",
        "Where the file's stored summaries differ from the recomputation",
        [Column("scenario", "Scenario"), Column("field", "Field"), Column("stored", "Stored", True), Column("recomputed", "Recomputed", True)],
        [Row([m["scenario_id"], m["field"], m["stored_json"], m["recomputed_json"]]) for m in mismatches],
    )


def _samples(scenario_ids: Sequence[str], sample_ids: Sequence[str]) -> dict[str, set[str]]:
    """Per scenario, the samples its trials ran."""
    samples: dict[str, set[str]] = {}
    for sid, sample in zip(scenario_ids, sample_ids, strict=True):
        samples.setdefault(sid, set()).add(sample)
    return samples


def _trial_sections(site: SiteContext, run_id: str, figures: list[dict[str, Any]]) -> list[ScenarioTrials]:
    return [
        ScenarioTrials(
            f["scenario_id"],
            f["title"],
            f["trial_count"],
            f["failure_count"],
            site.url(site.paths.trials(run_id, f["scenario_id"])),
            site.url(site.paths.data_trials_json(run_id, f["scenario_id"])),
        )
        for f in figures
    ]
