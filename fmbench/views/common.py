"""Pieces every view uses: fetching rows as dicts, run titles, verdict and revision cells."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

import duckdb

from fmbench import urls
from fmbench.analysis import display as d
from fmbench.analysis import figure_catalog as fc
from fmbench.analysis.configuration import CHOICES, columns
from fmbench.analysis.figures import token_counting
from fmbench.analysis.revisions import Registry
from fmbench.comparison.regressions import BuildChange, BuildSampleChange
from fmbench.comparison.results import Comparison
from fmbench.errors import NotFoundError
from fmbench.runfile import vocabulary as vocab
from fmbench.views.blocks import Banner, Cell, Column

Url = Any  # the renderer's url() function: str -> str


def rows(con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
    cursor = con.execute(sql, list(params))
    names = [c[0] for c in cursor.description or []]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def one(con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any], what: str) -> dict[str, Any]:
    found = rows(con, sql, params)
    if not found:
        raise NotFoundError(f"no {what}")
    return found[0]


RUN_COLUMNS = (
    "r.run_id, r.file_name, r.generation, r.suite, r.route, r.device_name, r.hardware_model, "
    "r.system_name, r.system_version, r.os_build, r.os_generation, "
    f"{columns(CHOICES, 'r.')}, r.started_at, r.ended_at, r.revision_id, r.revision_status, "
    "r.verdict, r.trial_count, r.failure_count, r.warmup_failure_count, r.warmup_count, r.repetitions, "
    "r.sample_limit, r.random_seed, r.randomized_order, r.benchmark_commit, r.fixture_fingerprint, "
    "r.thermal_state, r.worst_thermal_state, r.quota_before_status, r.quota_after_status"
)


def device_key(run: dict[str, Any]) -> str:
    return run.get("hardware_model") or run["device_name"]


def os_name(run: dict[str, Any]) -> str:
    """The OS as people name it: the runner's name, but iPadOS on an iPad (its runner reports iOS), told from the
    hardware model."""
    if run["system_name"] == "iOS" and (run.get("hardware_model") or "").startswith("iPad"):
        return "iPadOS"
    return str(run["system_name"])


def os_label(run: dict[str, Any]) -> str:
    """``iPadOS 27.0 (24A5264n)``: the OS as people name it, its version and build."""
    build = run.get("os_build") or "build not recorded"
    return f"{os_name(run)} {run['system_version']} ({build})"


def run_title(run: dict[str, Any]) -> str:
    return (
        f"{run['device_name']} · {os_label(run)} · {vocab.label('route', run['route'])} · "
        f"{vocab.label('suite', run['suite'])} · {run['started_at']:%Y-%m-%d}"
    )


def verdict_cell(verdict: str, url: Url | None = None) -> Cell:
    label = {"publishable": "Publishable", "exploratory": "Exploratory", "invalid": "Invalid"}.get(verdict, verdict)
    return Cell(label, tone=verdict, href=url(urls.methodology("verdicts")) if url else None)


def revision_cell(run: dict[str, Any], url: Url) -> Cell:
    status = run["revision_status"]
    text = f"{run['revision_id']} ({status})" if run["revision_id"] else "unknown"
    return Cell(text, tone=status, href=url(urls.revisions()))


def route_cell(route: str) -> Cell:
    tone = "pcc" if route == "privateCloudCompute" else "ondevice" if route == "onDevice" else "neutral"
    return Cell(vocab.label("route", route), tone=tone)


def run_link(run: dict[str, Any], url: Url, text: str | None = None) -> Cell:
    return Cell(text or run["run_id"], href=url(urls.run(run["run_id"])), title=run["file_name"])


def revision_banner(run: dict[str, Any], registry: Registry, url: Url) -> Banner | None:
    """The superseded (or unknown) revision warning a run carries on every page that shows it alone."""
    status = run["revision_status"]
    if status == "current":
        return None
    if status == "superseded":
        rev = registry.get(run["revision_id"])
        summary = rev.summary if rev else None
        return Banner(
            "warning",
            f"Measured on superseded suite revision {run['revision_id']}"
            + (f" ({rev.title})" if rev else ""),
            summary,
            "All suite revisions",
            url(urls.revisions()),
        )
    return Banner(
        "warning",
        "Suite revision unknown",
        "Neither this run's benchmark commit nor its fixture fingerprint belongs to a revision in the "
        "registry, so its pass rates cannot be placed next to other runs' without care.",
        "All suite revisions",
        url(urls.revisions()),
    )


def typed_text(value_json: str) -> str:
    """``{"string": {"_0": "x"}}`` -> ``x``; other kinds as their JSON text."""
    value = json.loads(value_json)
    if isinstance(value, dict) and len(value) == 1:
        ((kind, payload),) = value.items()
        inner = payload.get("_0") if isinstance(payload, dict) else payload
        if kind == "string" and isinstance(inner, str):
            return inner
        return json.dumps(inner, ensure_ascii=False)
    return json.dumps(value, ensure_ascii=False)


def arguments_text(arguments_json: str) -> list[tuple[str, str]]:
    args = json.loads(arguments_json)
    return [(k, typed_text(json.dumps(v))) for k, v in sorted(args.items())]


# --- a scenario's figures as table columns (derived from the figure catalog for every table that shows them) ---

_TOKENS = Column("tokens", "Token count source", False,
                 "How tokens were counted: counted (session usage, system tokenizer) or estimated from characters")
"""Not a figure: how the scenario's trials counted tokens, shown beside the figures."""


def figure_keys(table: fc.Table) -> tuple[str, ...]:
    """The column keys of the figures ``table`` shows (:meth:`fmbench.analysis.figure_catalog.Catalog.columns`)."""
    return fc.CATALOG.columns(table)


def figure_columns(keys: Sequence[str]) -> list[Column]:
    """The columns of the figures (by column key) and of the token count source (``tokens``)."""
    out = []
    for k in keys:
        if k == "tokens":
            out.append(_TOKENS)
            continue
        f = fc.CATALOG.column(k)
        out.append(Column(k, f.heading, True, f.help))
    return out


NO_MEASURED_TRIAL = "no measured trial"


def figure_cell(f: fc.Figure, row: dict[str, Any]) -> Any:
    """A figure's value of a ``scenario_figures`` row (its stored column), formatted, with the raw value as its sort
    key; an unrecorded value stays ``None``, with its reason where the figure has one."""
    raw = row[f.stored or f.key]
    return Cell(f.format(raw), reason=f.absent, sort=raw)


def figure_cells(f: dict[str, Any], keys: Sequence[str]) -> list[Any]:
    """A ``scenario_figures`` row's values, formatted; an unrecorded value stays ``None`` with its reason.

    A scenario whose every measured request failed has task success and failure
    rate (they count attempts) and says "no measured trial" for every figure a
    trial gives, never 0 s or 0 tok/s.
    """
    measured = bool(f["trial_count"])
    none = Cell(NO_MEASURED_TRIAL, title="every measured request of this scenario failed")
    out: list[Any] = []
    for k in keys:
        if k == "tokens":
            out.append(token_source_cell(f.get("token_count_source")) if measured else none)
            continue
        figure = fc.CATALOG.column(k)
        out.append(figure_cell(figure, f) if measured or figure.attempts else none)
    return out


def token_source_cell(source: str | None) -> Cell:
    """A token count source (of a run or a scenario) as a reader sees it: counted or estimated, or mixed."""
    if source is None:
        return Cell(None, reason="no trial records its token count source")
    if source == "mixed":
        return Cell("Mixed", title="the trials recorded more than one token count source: see each trial")
    kind = "estimated from characters" if token_counting([source]) == "estimated" else "counted"
    return Cell(f"{vocab.label('tokenCountSource', source)} ({kind})")


def quota_text(status: str | None, approaching: bool | None, reached: bool | None, reset: Any) -> str | None:
    """A PCC quota snapshot in words: status, whether the limit is near or reached, and when it resets."""
    if status is None:
        return None
    parts = [vocab.label("quotaStatus", status) or status]
    parts.append(
        "approaching the limit: not recorded" if approaching is None
        else f"approaching the limit: {'yes' if approaching else 'no'}"
    )
    parts.append("limit reached: not recorded" if reached is None else f"limit reached: {'yes' if reached else 'no'}")
    parts.append("reset date not recorded" if reset is None else f"resets {d.iso(reset)}")
    return "; ".join(parts)


# --- one name per workload --------------------------------------------------------------------------------

Titles = Callable[[str, str], str]
"""A workload's one name on the site from its id and a run's title of it (:meth:`SiteContext.scenario_title`)."""


def retitled(cmp: Comparison, title: Titles) -> Comparison:
    """A comparison whose scenarios (compared and dropped) carry their one name on the site: a comparison is
    kept between builds by its sides, and a newer run may since have renamed a workload."""
    return replace(
        cmp,
        scenarios=tuple(replace(s, title=title(s.scenario_id, s.title)) for s in cmp.scenarios),
        dropped=tuple(replace(x, title=title(x.scenario_id, x.title)) for x in cmp.dropped),
    )


def retitled_change(change: BuildChange | BuildSampleChange, title: Titles) -> BuildChange | BuildSampleChange:
    """A change between builds (of a figure or of samples) whose headline names its workload by its one name on
    the site."""
    if isinstance(change, BuildSampleChange):
        samples = change.samples
        return replace(change, samples=replace(samples, title=title(samples.scenario_id, samples.title)))
    return replace(change, scenario=replace(change.scenario, title=title(change.scenario.scenario_id, change.scenario.title)))
