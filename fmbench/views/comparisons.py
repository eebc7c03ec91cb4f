"""OS-build comparison pages, their index, and (with the regression detector) the regressions page and feed."""

from __future__ import annotations

import itertools
import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, ClassVar

import duckdb

from fmbench import charts, urls
from fmbench import display as d
from fmbench.blocks import Banner, Cell, Chart, Column, FilterForm, Row, Table
from fmbench.compare import Comparison, ComparisonRefused, compare_selected
from fmbench.errors import FilterError, NotFoundError
from fmbench.filters import Filters, filter_form
from fmbench.selection import ATTEMPT_RULES, SideSpec, select_side
from fmbench.views import comparison_queries as q
from fmbench.views.catalog import config_label
from fmbench.views.common import run_link
from fmbench.views.page import Page
from fmbench.views.site import SiteContext

_CONFIG_KEYS = (
    ("route", "route"),
    ("suite", "suite"),
    ("session", "session_mode"),
    ("reasoning", "reasoning_level"),
    ("fallback", "fallback_mode"),
    ("connectivity", "connectivity"),
)


def _evidence(site: SiteContext, device: str | None = None) -> list[dict[str, Any]]:
    """Runs that may be compared (never an invalid one), oldest first."""
    return q.comparable_runs(site.con, device)


def _config(r: dict[str, Any]) -> tuple[Any, ...]:
    return (*(r[c] for _, c in _CONFIG_KEYS), r["generation"])


def build_order(found: list[dict[str, Any]]) -> list[str]:
    """A device's OS builds in the order they were first measured."""
    order: list[str] = []
    for r in found:
        if r["os_build"] not in order:
            order.append(r["os_build"])
    return order


def regression_report(site: SiteContext) -> Any:
    """Every build step of every device and configuration, computed once per build or request."""
    from fmbench.regressions import find_build_changes

    return site.once("regressions", lambda: find_build_changes(site.con, tolerance=site.tolerance))


def build_pairs(site: SiteContext) -> list[tuple[str, str, str]]:
    """(device, baseline build, candidate build) for every comparison page the site publishes.

    Every pair of a device's OS builds that share a configuration, the baseline
    being the build that appeared first (so every step the regression detector
    takes, and every OS 26 build against every OS 27 build, compared strictly).
    """
    return site.once("build_pairs", lambda: _all_build_pairs(site))


def _all_build_pairs(site: SiteContext) -> list[tuple[str, str, str]]:
    pairs: list[tuple[str, str, str]] = []
    for step in regression_report(site).steps:
        pair = (step.group.hardware_model, step.baseline_build, step.candidate_build)
        if pair not in pairs:
            pairs.append(pair)
    found = _evidence(site)
    for device, members in itertools.groupby(sorted(found, key=lambda r: r["hardware_model"]), key=lambda r: r["hardware_model"]):
        runs = sorted(members, key=lambda r: (r["started_at"], r["run_id"]))
        configs: dict[str, set[tuple[Any, ...]]] = {}
        for r in runs:
            configs.setdefault(r["os_build"], set()).add(_config(r))
        for a, b in itertools.combinations(build_order(runs), 2):
            if configs[a] & configs[b] and (device, a, b) not in pairs and (device, b, a) not in pairs:
                pairs.append((device, a, b))
    return pairs


def _shared_configs(runs: list[dict[str, Any]], a: str, b: str) -> list[tuple[Any, ...]]:
    ca = {_config(r) for r in runs if r["os_build"] == a}
    cb = {_config(r) for r in runs if r["os_build"] == b}
    return sorted(ca & cb, key=str)


def comparison_instances(site: SiteContext) -> list[dict[str, Any]]:
    return [{"device": urls.slug(dv), "baseline": a, "candidate": b} for dv, a, b in build_pairs(site)]


# --- one comparison ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ComparisonSection:
    heading: str
    label: str
    title: str
    rule: str
    baseline_runs: list[Cell]
    candidate_runs: list[Cell]
    differences: Table
    caveats: list[Banner]
    dropped: list[str]
    speed_note: str | None
    table: Table | None
    charts: list[Chart]
    methods: list[str]
    refused: str | None = None


@dataclass(frozen=True)
class ComparisonPage(Page):
    template: ClassVar[str] = "comparison.html"
    nav_active: ClassVar[str] = "compare"
    uses_charts: ClassVar[bool] = True
    device: str
    baseline: str
    candidate: str
    strict: bool
    rule: str
    sections: list[ComparisonSection]
    other_rules: list[Cell]


def _spec(device: str, build: str, config: dict[str, Any]) -> SideSpec:
    filters = [("device", device), ("os_build", build)]
    filters += [(key, config[col]) for key, col in _CONFIG_KEYS if config.get(col) is not None]
    text = " ".join(f"{k}={v}" for k, v in filters)
    return SideSpec(text=text, kind="filter", filters=tuple(filters))


def _fmt(unit: str) -> Any:
    return {
        "rate": d.percent,
        "score": d.percent,
        "seconds": d.seconds,
        "tokens/s": d.rate,
        "bytes": d.mebibytes,
    }.get(unit, lambda v: None if v is None else f"{v:g}")


def _delta_fmt(unit: str) -> Any:
    if unit in ("rate", "score"):
        return lambda v: None if v is None else f"{v * 100:+.1f} pts"
    if unit == "seconds":
        return lambda v: None if v is None else f"{v:+.3f} s"
    if unit == "bytes":
        return lambda v: None if v is None else f"{v / 2**20:+,.0f} MiB"
    return lambda v: None if v is None else f"{v:+.2f}"


_UNTESTED = {"not tested": "not tested", "too few trials": "not tested", "not comparable": "not compared"}
"""What an interval cell says where nothing was tested (never "not recorded": the values may be there)."""
_TONE = {"better": "better", "worse": "worse", "no detectable change": "nochange", "within tolerance": "nochange"}


def _relative(v: float | None) -> str | None:
    return None if v is None else f"{v * 100:+.1f}%"


def _absent(text: str) -> str | None:
    """A side's missing value: ``None`` (shown as not recorded) unless it is something else, such as
    no measured trial."""
    return None if text == d.NOT_RECORDED else text


def _figure_table(cmp: Comparison, table_id: str, heading: str) -> Table:
    """``heading``: the configuration, which names the table apart from the page's other sections' tables."""
    columns = [
        Column("scenario", "Scenario"),
        Column("figure", "Figure"),
        Column("better", "Better is", help="The direction that counts as an improvement, stated per figure"),
        Column("baseline", "Baseline", True),
        Column("candidate", "Candidate", True),
        Column("delta", "Delta", True, "candidate − baseline"),
        Column("relative", "Relative", True),
        Column("interval", "Interval", True),
        Column("verdict", "Verdict"),
    ]
    out = []
    for s in cmp.scenarios:
        for f in s.figures:
            fmt, dfmt = _fmt(f.unit), _delta_fmt(f.unit)
            interval = f"{dfmt(f.interval.low)} to {dfmt(f.interval.high)}" if f.interval else None
            out.append(
                Row(
                    [
                        s.title,
                        f.label,
                        f.better,
                        Cell(fmt(f.baseline) if f.baseline is not None else _absent(f.baseline_absent),
                             reason="not recorded on the baseline"),
                        Cell(fmt(f.candidate) if f.candidate is not None else _absent(f.candidate_absent),
                             reason="not recorded on the candidate"),
                        Cell(dfmt(f.delta), reason=f.note or "no delta"),
                        Cell(_relative(f.relative_delta), reason="no relative delta (a side is missing or the baseline is 0)"),
                        Cell(interval, reason=f.note or ("a maximum is shown, not tested" if f.unit == "bytes" else "no interval"))
                        if interval is not None or f.verdict not in _UNTESTED
                        else Cell(_UNTESTED[f.verdict], title=f.note),
                        Cell(f"{f.verdict} ({f.note})" if f.verdict == "within tolerance" else f.verdict,
                             tone=_TONE.get(f.verdict, "neutral"), title=f.note),
                    ]
                )
            )
    return Table(table_id, f"{heading}: per scenario, baseline, candidate, change and its interval", columns, out)


def _delta_charts(cmp: Comparison, key: str) -> list[Chart]:
    if not cmp.speed_comparable or not cmp.scenarios:
        return []
    out = []
    for fig_key, title, axis in (
        ("ttft_median", "Change in median TTFT", "Seconds (negative is faster)"),
        ("tps_median", "Change in median output tokens/s", "Tokens per second (positive is faster)"),
        ("task_success", "Change in task success", "Percentage points"),
    ):
        figs = [s.figure(fig_key) for s in cmp.scenarios]
        scale = 100.0 if fig_key == "task_success" else 1.0
        out.append(
            charts.deltas_with_intervals(
                f"{fig_key}-{key}",
                title,
                [s.title for s in cmp.scenarios],
                # a change that is not compared (tokens counted on one side, estimated on the other) is not drawn
                [None if f.delta is None or f.verdict == "not comparable" else f.delta * scale for f in figs],
                [None if f.interval is None else f.interval.low * scale for f in figs],
                [None if f.interval is None else f.interval.high * scale for f in figs],
                value_title=axis,
                fmt=(lambda v: None if v is None else f"{v:+.3f}"),
                verdicts=[f.verdict for f in figs],
            )
        )
    return out


def _section(site: SiteContext, device: str, baseline: str, candidate: str, config: dict[str, Any],
             rule: str, strict: bool, key: str, con: duckdb.DuckDBPyConnection | None = None) -> ComparisonSection:
    """``con``: the connection to read with (a thread's own cursor), the site's by default."""
    heading = config_label(config)
    con = site.con if con is None else con
    try:
        catalog = site.run_catalog()
        b = select_side(con, _spec(device, baseline, config), rule, catalog)  # type: ignore[arg-type]
        c = select_side(con, _spec(device, candidate, config), rule, catalog)  # type: ignore[arg-type]
        cmp = compare_selected(con, b, c, strict_os=strict, multiplicity="bonferroni", tolerance=site.tolerance)
    except ComparisonRefused as exc:
        return ComparisonSection(heading, "Refused", heading, rule, [], [], Table(f"diff-{key}", "", [], []),
                                 [], [], None, None, [], [], refused=str(exc))
    differences = Table(
        f"diff-{key}",
        f"{heading}: every condition that differs between the sides",
        [Column("condition", "Condition"), Column("baseline", "Baseline"), Column("candidate", "Candidate")],
        [Row([x.label, x.baseline, x.candidate]) for x in cmp.differences],
        "No condition differs.",
    )
    caveats = [Banner("warning", "Caveat", c.message) for c in cmp.caveats]
    return ComparisonSection(
        heading=heading,
        label=cmp.label,
        title=cmp.title,
        rule=cmp.rule_description,
        baseline_runs=[run_link({"run_id": r.run_id, "file_name": r.run_id}, site.url, f"{r.run_id} ({r.verdict})") for r in cmp.baseline.runs],
        candidate_runs=[run_link({"run_id": r.run_id, "file_name": r.run_id}, site.url, f"{r.run_id} ({r.verdict})") for r in cmp.candidate.runs],
        differences=differences,
        caveats=caveats,
        dropped=[f"{x.title}: {x.reason}" for x in cmp.dropped],
        speed_note=None if cmp.speed_comparable else "Speed figures are shown per side only: PCC includes the network and the server.",
        table=_figure_table(cmp, f"figures-{key}", heading),
        charts=_delta_charts(cmp, key),
        methods=list(cmp.method_notes),
    )


def _device_for_slug(site: SiteContext, device_slug: str) -> str:
    for key in q.hardware_models(site.con):
        if urls.slug(key) == device_slug:
            return key
    raise NotFoundError(f"no device {device_slug!r}")


def comparison_page(
    site: SiteContext, filters: Filters, device: str, baseline: str, candidate: str,
    rule: str = "latest", strict: bool | None = None,
) -> ComparisonPage:
    key = _device_for_slug(site, device)
    if rule not in ATTEMPT_RULES:
        raise FilterError(f"unknown attempt rule {rule!r}; use one of {', '.join(ATTEMPT_RULES)}")
    runs = _evidence(site, key)
    builds = {r["os_build"] for r in runs}
    for build in (baseline, candidate):
        if build not in builds:
            raise NotFoundError(f"no run that is evidence on {key} with OS build {build!r}")
    generation = {r["os_build"]: r["os_generation"] for r in runs}
    if strict is None:
        strict = generation[baseline] != generation[candidate]
    shared = _shared_configs(runs, baseline, candidate)
    by_config = {_config(r): r for r in runs}
    jobs = [(by_config[cfg], f"s{i}") for i, cfg in enumerate(shared)]
    workers = min(len(jobs), os.cpu_count() or 1)
    if site.renderer.mode != "serve" or workers < 2:
        sections = [_section(site, key, baseline, candidate, config, rule, strict, k) for config, k in jobs]
    else:
        # A page rendered on request: its configurations' resampling (numpy, which lets go of the GIL) on
        # every core, each thread reading with a cursor of its own. The static build renders pages side by
        # side instead.
        def one(job: tuple[dict[str, Any], str]) -> ComparisonSection:
            with site.con.cursor() as con:
                return _section(site, key, baseline, candidate, job[0], rule, strict, job[1], con)

        with ThreadPoolExecutor(max_workers=workers) as pool:
            sections = list(pool.map(one, jobs))
    name = runs[0]["device_name"] if runs else key
    here = site.url(urls.comparison(key, baseline, candidate))
    return ComparisonPage(
        title=f"{name} ({key}): OS build {baseline} → {candidate}",
        device=key,
        baseline=baseline,
        candidate=candidate,
        strict=strict,
        rule=rule,
        sections=sections,
        other_rules=[Cell(r, href=f"{here}?rule={r}") for r in ATTEMPT_RULES if r != rule] if site.renderer.mode == "serve" else [],
    )


def build_comparison(site: SiteContext, args: dict[str, str]) -> Any:
    """The API's comparison: one device, two builds, optionally one route and suite."""
    key = args["device"]
    rule = args.get("rule", "latest")
    if rule not in ATTEMPT_RULES:
        raise FilterError(f"unknown attempt rule {rule!r}; use one of {', '.join(ATTEMPT_RULES)}")
    runs = _evidence(site, key)
    shared = _shared_configs(runs, args["baseline"], args["candidate"])
    by_config = {_config(r): r for r in runs}
    wanted = [
        by_config[c] for c in shared
        if args.get("route") in (None, by_config[c]["route"]) and args.get("suite") in (None, by_config[c]["suite"])
    ]
    if not wanted:
        raise NotFoundError(
            f"no configuration of {key} was measured on both {args['baseline']} and {args['candidate']}"
        )
    strict = args.get("strict", "") in ("1", "true", "yes")

    class _Result:
        def __init__(self, items: list[tuple[dict[str, Any], Comparison]]) -> None:
            self.items = items

        def to_json(self) -> dict[str, Any]:
            return {
                "device": key,
                "baseline": args["baseline"],
                "candidate": args["candidate"],
                "comparisons": [
                    {"configuration": config_label(cfg), **cmp.to_json()} for cfg, cmp in self.items
                ],
            }

    items = []
    for cfg in wanted:
        b = select_side(site.con, _spec(key, args["baseline"], cfg), rule)  # type: ignore[arg-type]
        c = select_side(site.con, _spec(key, args["candidate"], cfg), rule)  # type: ignore[arg-type]
        items.append((cfg, compare_selected(site.con, b, c, strict_os=strict, multiplicity="bonferroni",
                                            tolerance=site.tolerance)))
    return _Result(items)


# --- the index ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CompareIndexPage(Page):
    template: ClassVar[str] = "compare_index.html"
    nav_active: ClassVar[str] = "compare"
    filters: FilterForm
    pairs: Table
    picker: dict[str, Any]
    """Every device, its configurations and the builds each was measured on, in order of first appearance:
    what the picker script chooses from (written into the page, so it works without a server)."""
    measured_once: Table
    device_pairs: Table


def compare_choices(site: SiteContext) -> tuple[dict[str, Any], Table]:
    """The picker's index, and the configurations measured on one build only (listed, with nothing to compare)."""
    found = _evidence(site)
    devices = []
    once = []
    for device, members in itertools.groupby(sorted(found, key=lambda r: r["hardware_model"]), key=lambda r: r["hardware_model"]):
        runs = sorted(members, key=lambda r: (r["started_at"], r["run_id"]))
        order = build_order(runs)
        configs: dict[tuple[Any, ...], dict[str, Any]] = {}
        for r in runs:
            configs.setdefault(_config(r), {"label": config_label(r), "builds": set(), "first": r})["builds"].add(r["os_build"])
        generation = {r["os_build"]: r["os_generation"] for r in runs}
        entries = []
        for c in sorted(configs.values(), key=lambda c: c["label"]):
            builds = [b for b in order if b in c["builds"]]
            entries.append({
                "label": c["label"],
                "builds": [{"build": b, "slug": urls.slug(b), "generation": generation[b]} for b in builds],
            })
            if len(builds) == 1:
                r = c["first"]
                once.append(Row([f"{r['device_name']} ({device})", c["label"],
                                 Cell(builds[0], href=site.url(urls.build(builds[0])))]))
        published = [f"{urls.slug(a)}..{urls.slug(b)}" for dv, a, b in build_pairs(site) if dv == device]
        devices.append({"key": device, "name": runs[0]["device_name"], "slug": urls.slug(device), "configs": entries,
                        "pairs": published})
    return (
        {"base": site.url(urls.compare_index()), "devices": devices},
        Table(
            "measured-once",
            "Configurations measured on one OS build only (nothing to compare with yet)",
            [Column("device", "Device"), Column("config", "Configuration"), Column("build", "OS build")],
            once,
            "Every configuration was measured on two builds or more.",
        ),
    )


def compare_index_page(site: SiteContext, filters: Filters) -> CompareIndexPage:
    from fmbench.views.device_comparisons import device_comparisons_table

    found = _evidence(site)
    names = {r["hardware_model"]: r["device_name"] for r in found}
    table_rows = []
    for device, a, b in build_pairs(site):
        runs = [r for r in found if r["hardware_model"] == device]
        configs = _shared_configs(runs, a, b)
        by_config = {_config(r): r for r in runs}
        gen = {r["os_build"]: r["os_generation"] for r in runs}
        routes = sorted({by_config[c]["route"] for c in configs})
        suites = sorted({by_config[c]["suite"] for c in configs})
        table_rows.append(
            Row(
                [
                    Cell(f"{a} → {b}", href=site.url(urls.comparison(device, a, b))),
                    f"{names.get(device, device)} ({device})",
                    f"OS {gen[a]} → OS {gen[b]}" + (" (strict: shared workloads only)" if gen[a] != gen[b] else ""),
                    "; ".join(config_label(by_config[c]) for c in configs),
                ],
                {"device": device, "os_build": b, "route": routes[0] if len(routes) == 1 else None,
                 "suite": suites[0] if len(suites) == 1 else None},
            )
        )
    return CompareIndexPage(
        "Compare OS builds",
        filter_form(site.con, site.url(urls.compare_index()), filters, fields=["os_build", "device", "route", "suite"],
                    scope=("r.verdict <> 'invalid'", []), noun="comparisons"),
        Table(
            "comparisons",
            "Baseline → candidate OS builds per device, for every configuration measured on both",
            [Column("pair", "Builds"), Column("device", "Device"), Column("generation", "OS"), Column("configs", "Configurations")],
            table_rows,
            "No device has two OS builds measured with the same configuration yet.",
        ),
        *compare_choices(site),
        device_comparisons_table(site),
    )




# --- regressions ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class RegressionsPage(Page):
    template: ClassVar[str] = "regressions.html"
    nav_active: ClassVar[str] = "regressions"
    filters: FilterForm
    regressions: Table
    improvements: Table
    steps: Table
    build_order: str
    rule: str
    confidence: str


def _change_rows(site: SiteContext, changes: Any, filters: Filters) -> list[Row]:
    device = filters.values.get("device")
    out = []
    for c in changes:
        if device and c.hardware_model != device:
            continue
        f = c.figure
        dfmt = _delta_fmt(f.unit)
        out.append(
            Row(
                [
                    Cell(f"{c.baseline_build} → {c.candidate_build}", href=site.url(c.path)),
                    f"{c.step.device_name} ({c.hardware_model})",
                    c.step.group.describe(),
                    c.scenario.title,
                    f.label,
                    dfmt(f.delta),
                    Cell(_relative(f.relative_delta), reason="baseline is 0"),
                    f"{dfmt(f.interval.low)} to {dfmt(f.interval.high)}" if f.interval else None,
                    Cell(f.verdict + (" (exploratory)" if c.exploratory else ""), tone=_TONE.get(f.verdict, "neutral")),
                ],
                {"device": c.hardware_model, "os_build": c.candidate_build},
            )
        )
    return out


_CHANGE_COLUMNS = [
    Column("builds", "Builds"),
    Column("device", "Device"),
    Column("config", "Configuration"),
    Column("scenario", "Scenario"),
    Column("figure", "Figure"),
    Column("delta", "Change", True),
    Column("relative", "Relative", True),
    Column("interval", "Interval", True),
    Column("verdict", "Verdict"),
]


def regressions_page(site: SiteContext, filters: Filters) -> RegressionsPage:
    from fmbench.compare import confidence_text

    report = regression_report(site)
    device = filters.values.get("device")
    steps = [s for s in report.steps if not device or s.group.hardware_model == device]
    return RegressionsPage(
        title="Regressions between OS builds",
        filters=filter_form(site.con, site.url(urls.regressions()), filters, fields=["device"],
                            scope=("r.verdict <> 'invalid'", []), noun="rows"),
        regressions=Table("regressions", "Regressions: changes for the worse whose interval excludes zero", _CHANGE_COLUMNS,
                          _change_rows(site, report.regressions, filters), "No regression detected."),
        improvements=Table("improvements", "Improvements: changes for the better whose interval excludes zero", _CHANGE_COLUMNS,
                           _change_rows(site, report.improvements, filters), "No improvement detected."),
        steps=Table(
            "steps",
            "Every build step compared (a step without a listed change showed no detectable change)",
            [Column("builds", "Builds"), Column("device", "Device"), Column("config", "Configuration"),
             Column("changes", "Changes", True), Column("note", "Note")],
            [
                Row(
                    [
                        Cell(f"{s.baseline_build} → {s.candidate_build}", href=site.url(s.path)),
                        f"{s.device_name} ({s.group.hardware_model})",
                        s.group.describe(),
                        str(len(s.comparison.changes()) if s.comparison else 0),
                        s.refused or ("rests on an exploratory run" if s.exploratory else ""),
                    ],
                    {"device": s.group.hardware_model, "os_build": s.candidate_build},
                )
                for s in steps
            ],
            "No device has two OS builds with the same configuration yet.",
        ),
        build_order=report.build_order,
        rule=report.rule,
        confidence=confidence_text(report.family_confidence),
    )


def regressions_feed(site: SiteContext, filters: Filters) -> bytes:
    from datetime import UTC, datetime

    from fmbench.regressions import atom_feed

    report = regression_report(site)
    base = site.renderer.base_url
    site_url = site.renderer.site.site_url or (base if base.startswith("http") else "http://localhost" + base)
    newest = q.newest_ingest(site.con)
    generated = newest.replace(tzinfo=UTC) if newest else datetime(2026, 1, 1, tzinfo=UTC)
    title = f"{site.renderer.site.title}: OS-build regressions"
    return atom_feed(report.regressions, site_url=site_url, generated_at=generated, title=title).encode("utf-8")
