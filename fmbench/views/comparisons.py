"""OS-build comparison pages, their index, and (with the regression detector) the regressions page and feed."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, ClassVar

import duckdb

from fmbench import urls
from fmbench.analysis.configuration import config_key, config_label
from fmbench.comparison.compare import Comparison, ComparisonRefused, compare_selected
from fmbench.comparison.evidence import RULE, Configuration, configuration_values
from fmbench.comparison.history_changes import ChangeList, HistoryChange
from fmbench.comparison.regressions import atom_feed
from fmbench.comparison.selection import ATTEMPT_RULES, AttemptRule
from fmbench.comparison.text import confidence_text
from fmbench.errors import FilterError, NotFoundError
from fmbench.views import comparison_queries as q
from fmbench.views.blocks import Cell, Column, FilterForm, Row, Table
from fmbench.views.common import retitled, retitled_change
from fmbench.views.comparison_blocks import (
    VERDICT_TONE,
    ComparisonSection,
    compared_section,
    each_section,
    page_verdict,
    refused_section,
)
from fmbench.views.comparison_queries import build_order
from fmbench.views.device_comparisons import device_comparisons_table
from fmbench.views.filters import Filters, filter_form
from fmbench.views.page import Page
from fmbench.views.site import SiteContext


def _evidence(site: SiteContext, device: str | None = None) -> list[dict[str, Any]]:
    """Runs that may be compared (never an invalid one), oldest first."""
    return q.comparable_runs(site.con, device)


def regression_report(site: SiteContext) -> Any:
    """Every build step of every device and configuration, computed once per build or request."""

    return site.regressions()


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
            configs.setdefault(r["os_build"], set()).add(config_key(r))
        for a, b in itertools.combinations(build_order(runs), 2):
            if configs[a] & configs[b] and (device, a, b) not in pairs and (device, b, a) not in pairs:
                pairs.append((device, a, b))
    return pairs


def _shared_configs(runs: list[dict[str, Any]], a: str, b: str) -> list[tuple[Any, ...]]:
    ca = {config_key(r) for r in runs if r["os_build"] == a}
    cb = {config_key(r) for r in runs if r["os_build"] == b}
    return sorted(ca & cb, key=str)


def comparison_instances(site: SiteContext) -> list[dict[str, Any]]:
    paths = site.paths
    return [
        {"device": paths.devices.of(dv), "baseline": paths.builds.of(a), "candidate": paths.builds.of(b)}
        for dv, a, b in build_pairs(site)
    ]


# --- one comparison ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ComparisonPage(Page):
    template: ClassVar[str] = "comparison.html"
    nav_active: ClassVar[str] = "compare_index"
    device: str
    baseline: str
    candidate: str
    strict: bool
    rule: str
    verdict: str
    """The page's answer, laid out before anything else: its verdicts in one sentence (the samples whose outcome
    changed, then what got worse or better beyond the practical threshold, the biggest first, and how many figures
    stayed within tolerance or were inconclusive: :func:`fmbench.comparison.text.verdict_sentence`)."""
    sections: list[ComparisonSection]
    other_rules: list[Cell]


def _section(site: SiteContext, device: str, baseline: str, candidate: str, config: Configuration,
             rule: AttemptRule, strict: bool, con: duckdb.DuckDBPyConnection | None = None,
             listed: ChangeList | None = None) -> ComparisonSection:
    """One configuration's section, each side the runs its evidence stands on (:mod:`fmbench.comparison.evidence`),
    as the regression detector compares them; ``con``: the connection to read with (a thread's own cursor), the
    site's by default."""
    heading = config_label(configuration_values(config))
    key = urls.configuration_anchor(config)
    con = site.con if con is None else con
    index = site.evidence()
    b, c = index.cell(device, baseline, config, rule), index.cell(device, candidate, config, rule)
    assert b is not None and c is not None
    try:
        cmp = retitled(compare_selected(con, b.side, c.side, strict_os=strict, multiplicity="bonferroni",
                                        tolerance=site.tolerance, caches=site.caches), site.scenario_title)
    except ComparisonRefused as exc:
        return refused_section(heading, rule, key, exc, heading)
    section = compared_section(site, cmp, heading, heading, key)
    if listed is None:
        return section
    moved = [c.headline() for c in listed.changes
             if (c.hardware_model, c.baseline_build, c.candidate_build, c.step.anchor) == (device, baseline, candidate, key)]
    return replace(section, change_points=moved, change_statement=listed.statement if moved else "")


def _rule(rule: str) -> AttemptRule:
    if rule not in ATTEMPT_RULES:
        raise FilterError(f"unknown attempt rule {rule!r}; use one of {', '.join(ATTEMPT_RULES)}")
    return rule  # type: ignore[return-value]


def comparison_page(
    site: SiteContext, filters: Filters, device: str, baseline: str, candidate: str,
    rule: str = RULE, strict: bool | None = None,
) -> ComparisonPage:
    key = site.paths.devices.named(device, "device")
    baseline, candidate = site.paths.builds.named(baseline, "OS build"), site.paths.builds.named(candidate, "OS build")
    chosen = _rule(rule)
    index = site.evidence()
    builds = index.builds(key)
    for build in (baseline, candidate):
        if build not in builds:
            raise NotFoundError(f"no run that is evidence on {key} with OS build {build!r}")
    shared = sorted(index.shared(key, baseline, candidate), key=lambda c: (config_label(configuration_values(c)), str(c)))
    sides = [(index.cell(key, baseline, c, chosen), index.cell(key, candidate, c, chosen)) for c in shared]
    if strict is None:
        generation = {e.os_build: e.os_generation for pair in sides for e in pair if e is not None}
        strict = generation.get(baseline) != generation.get(candidate)
    # The change list stands each build on the "latest" rule's evidence; made here, on the request's own
    # connection, before the sections' threads start.
    listed = site.change_list() if chosen == "latest" else None
    sections = each_section(
        site, lambda con, cfg: _section(site, key, baseline, candidate, cfg, chosen, strict, con, listed), shared
    )
    names = [e.device_name for pair in sides for e in pair if e is not None]
    name = names[0] if names else key
    here = site.url(site.paths.comparison(key, baseline, candidate))
    return ComparisonPage(
        title=f"{name} ({key}): OS build {baseline} → {candidate}",
        device=key,
        baseline=baseline,
        candidate=candidate,
        strict=strict,
        rule=rule,
        verdict=page_verdict(sections),
        sections=sections,
        other_rules=[Cell(r, href=f"{here}?rule={r}") for r in ATTEMPT_RULES if r != rule] if site.renderer.mode == "serve" else [],
    )


def build_comparison(site: SiteContext, args: dict[str, str]) -> Any:
    """The API's comparison: one device, two builds, optionally one route and suite."""
    key = args["device"]
    rule = args.get("rule", RULE)
    runs = _evidence(site, key)
    shared = _shared_configs(runs, args["baseline"], args["candidate"])
    by_config = {config_key(r): r for r in runs}
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
    index = site.evidence()
    chosen = _rule(rule)
    for cfg in wanted:
        b = index.cell(key, args["baseline"], config_key(cfg), chosen)
        c = index.cell(key, args["candidate"], config_key(cfg), chosen)
        assert b is not None and c is not None
        items.append((cfg, compare_selected(site.con, b.side, c.side, strict_os=strict, multiplicity="bonferroni",
                                            tolerance=site.tolerance, caches=site.caches)))
    return _Result(items)


# --- the index ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CompareIndexPage(Page):
    template: ClassVar[str] = "compare_index.html"
    nav_active: ClassVar[str] = "compare_index"
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
            configs.setdefault(config_key(r), {"label": config_label(r), "builds": set(), "first": r})["builds"].add(r["os_build"])
        generation = {r["os_build"]: r["os_generation"] for r in runs}
        entries = []
        for c in sorted(configs.values(), key=lambda c: c["label"]):
            builds = [b for b in order if b in c["builds"]]
            entries.append({
                "label": c["label"],
                "builds": [{"build": b, "slug": site.paths.builds.of(b), "generation": generation[b]} for b in builds],
            })
            if len(builds) == 1:
                r = c["first"]
                once.append(Row([f"{r['device_name']} ({device})", c["label"],
                                 Cell(builds[0], href=site.url(site.paths.build(builds[0])))]))
        published = [
            f"{site.paths.builds.of(a)}..{site.paths.builds.of(b)}" for dv, a, b in build_pairs(site) if dv == device
        ]
        devices.append({"key": device, "name": runs[0]["device_name"], "slug": site.paths.devices.of(device), "configs": entries,
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
    found = _evidence(site)
    names = {r["hardware_model"]: r["device_name"] for r in found}
    table_rows = []
    for device, a, b in build_pairs(site):
        runs = [r for r in found if r["hardware_model"] == device]
        configs = _shared_configs(runs, a, b)
        by_config = {config_key(r): r for r in runs}
        gen = {r["os_build"]: r["os_generation"] for r in runs}
        routes = sorted({by_config[c]["route"] for c in configs})
        suites = sorted({by_config[c]["suite"] for c in configs})
        table_rows.append(
            Row(
                [
                    Cell(f"{a} → {b}", href=site.url(site.paths.comparison(device, a, b))),
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
    samples: Table
    """The samples whose outcome changed between two builds (each sample's exact test, Holm-corrected over a
    step's samples), grouped by workload and how."""
    steps: Table
    build_order: str
    rule: str
    confidence: str
    """The family-wise confidence of one build step's intervals (the steps' table and their comparison pages)."""
    statement: str
    """The change list's method and false-discovery level in one sentence
    (:func:`fmbench.analysis.changepoints.method_statement`)."""


def _change_rows(site: SiteContext, changes: list[HistoryChange], filters: Filters) -> list[Row]:
    """One row a change point: the two builds around it (linked to their comparison's section), what moved, its
    size and interval, the levels and the runs on each side."""
    device = filters.values.get("device")
    out = []
    for c in changes:
        if device and c.hardware_model != device:
            continue
        out.append(
            Row(
                [
                    Cell(f"{c.baseline_build} → {c.candidate_build}",
                         href=site.url(site.paths.comparison(c.hardware_model, c.baseline_build, c.candidate_build, c.step.anchor))),
                    f"{c.history.device_name} ({c.hardware_model})",
                    c.history.group.label(),
                    c.title,
                    c.history.figure.label,
                    c.size_text(),
                    c.interval_text(),
                    c.levels_text(),
                    f"{len(c.runs_before)} on {', '.join(c.point.before)} / {len(c.runs_after)} on {', '.join(c.point.after)}",
                    f"{c.decision.adjusted:.2g}",
                    Cell(c.verdict + (" (exploratory)" if c.exploratory else ""), tone=VERDICT_TONE.get(c.verdict, "neutral")),
                ],
                {"device": c.hardware_model, "os_build": c.candidate_build},
            )
        )
    return out


_CHANGE_COLUMNS = [
    Column("builds", "Moved at (after → at)"),
    Column("device", "Device"),
    Column("config", "Configuration"),
    Column("scenario", "Scenario"),
    Column("figure", "Figure"),
    Column("size", "Size", True),
    Column("interval", "Interval", True),
    Column("levels", "Before → after"),
    Column("runs", "Runs before / after"),
    Column("adjusted", "Adjusted p", True),
    Column("verdict", "Verdict"),
]


def regressions_page(site: SiteContext, filters: Filters) -> RegressionsPage:
    report = regression_report(site)
    listed = site.change_list()
    device = filters.values.get("device")
    steps = [s for s in report.steps if not device or s.group.hardware_model == device]
    return RegressionsPage(
        title="Regressions between OS builds",
        filters=filter_form(site.con, site.url(urls.regressions()), filters, fields=["device"],
                            scope=("r.verdict <> 'invalid'", []), noun="rows"),
        regressions=Table("regressions", "Regressions: builds where a figure moved for the worse", _CHANGE_COLUMNS,
                          _change_rows(site, [c for c in listed.changes if c.is_regression], filters),
                          "No regression detected."),
        improvements=Table("improvements", "Improvements: builds where a figure moved for the better", _CHANGE_COLUMNS,
                           _change_rows(site, [c for c in listed.changes if not c.is_regression], filters),
                           "No improvement detected."),
        samples=Table(
            "samples",
            "Samples whose outcome changed beyond chance (per-sample exact test, Holm-corrected over a step's samples, "
            "then the list's false-discovery control of its own)",
            [Column("builds", "Builds"), Column("device", "Device"), Column("config", "Configuration"),
             Column("samples", "Samples"), Column("verdict", "Verdict")],
            [
                Row(
                    [
                        Cell(f"{c.baseline_build} → {c.candidate_build}", href=site.url(site.paths.comparison(
                            c.hardware_model, c.baseline_build, c.candidate_build, c.step.anchor))),
                        f"{c.step.device_name} ({c.hardware_model})",
                        c.step.group.describe(),
                        retitled_change(c, site.scenario_title).samples.text(),  # type: ignore[union-attr]
                        Cell(("worse" if c.is_regression else "better") + (" (exploratory)" if c.exploratory else ""),
                             tone="worse" if c.is_regression else "better"),
                    ],
                    {"device": c.hardware_model, "os_build": c.candidate_build},
                )
                for c in listed.sample_changes if not device or c.hardware_model == device
            ],
            "No sample's outcome changed beyond chance.",
        ),
        steps=Table(
            "steps",
            "Every build step compared (a step without a listed change had none past the practical threshold)",
            [Column("builds", "Builds"), Column("device", "Device"), Column("config", "Configuration"),
             Column("changes", "Changes", True), Column("note", "Note")],
            [
                Row(
                    [
                        Cell(f"{s.baseline_build} → {s.candidate_build}",
                             href=site.url(site.paths.comparison(s.group.hardware_model, s.baseline_build, s.candidate_build, s.anchor))),
                        f"{s.device_name} ({s.group.hardware_model})",
                        s.group.label(),
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
        statement=listed.statement,
    )


def regressions_feed(site: SiteContext, filters: Filters) -> bytes:
    """The feed of the regressions `/regressions/` lists (change points and sample groups, the same entries)."""
    base = site.renderer.base_url
    site_url = site.renderer.site.site_url or (base if base.startswith("http") else "http://localhost" + base)
    newest = q.newest_ingest(site.con)
    generated = newest.replace(tzinfo=UTC) if newest else datetime(2026, 1, 1, tzinfo=UTC)
    title = f"{site.renderer.site.title}: OS-build regressions"
    return atom_feed(site.change_list().regressions(), site_url=site_url, generated_at=generated, title=title,
                     paths=site.paths).encode("utf-8")
