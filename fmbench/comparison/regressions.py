"""OS-build regressions: what changed from one OS build to the next, per device and workload.

Detection:

- Runs judged invalid never take part. Publishable and exploratory runs do;
  a change that rests on an exploratory run is flagged as such.
- Runs are grouped by device (hardware model), OS generation,
  configuration and suite revision (:class:`fmbench.analysis.configuration.Group`,
  :data:`fmbench.analysis.configuration.GROUP_FIELDS`). OS generations are separate release
  lines: an OS 26 build measured between two OS 27 betas is not "the build
  before" the second beta (OS 26 vs OS 27 is a strict-mode comparison of its
  own, see :mod:`fmbench.comparison.compare`). Runs without a hardware model cannot be
  placed on a device and are left out (and counted).
- **Build order**: within a group, OS builds are put in version order
  (:func:`fmbench.analysis.os_builds.build_sort_key`), never by the date a
  build was measured: a build measured late is still compared with the build
  before it in version.
- Each build of a configuration stands on its evidence
  (:mod:`fmbench.comparison.evidence`: its publishable runs of one suite revision by
  the attempt rule, default ``latest``; its exploratory runs only where it has no
  publishable one), the same runs its comparison page section shows; a build is
  compared with the previous one whose evidence is of the same group (and so the
  same suite revision) by the comparison engine
  (:func:`fmbench.comparison.compare.compare_selected`).
- Samples whose outcome changed (:attr:`RegressionReport.sample_changes`) are
  listed beside the figures, each group of a workload's samples that changed the
  same way once.
- A change is listed when its interval excludes zero **and** its size passes
  the practical threshold (:mod:`fmbench.analysis.tolerance`: 5 % for latency,
  throughput and memory, 5 points for rates, unless the project sets others);
  any other figure is within tolerance or inconclusive, and not listed.
  The intervals of one build step are Bonferroni-adjusted over every figure
  tested in it, so the chance that a step lists any change that is only noise
  stays below ``1 − family_confidence``; noise is never called a regression.
- Every such change is listed with its size, direction and verdict;
  :attr:`RegressionReport.regressions` are the ones whose verdict is worse.

:func:`atom_feed` writes the regressions as an Atom 1.0 feed with stable
``tag:`` ids and links to the comparison pages at
``compare/<hardware_model>/<baseline_build>..<candidate_build>/`` (see
:func:`fmbench.urls.comparison`).
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal, Protocol
from urllib.parse import quote, urlsplit
from xml.etree import ElementTree as ET

import duckdb

from fmbench import urls
from fmbench.analysis import stats
from fmbench.analysis.configuration import Group
from fmbench.analysis.os_builds import build_sort_key
from fmbench.analysis.tolerance import DEFAULT_TOLERANCE, Tolerance
from fmbench.comparison.caches import Caches
from fmbench.comparison.compare import Comparison, ComparisonRefused, compare_selected
from fmbench.comparison.evidence import Configuration, Evidence, evidence_of
from fmbench.comparison.results import FigureComparison, ScenarioComparison
from fmbench.comparison.sample_changes import SampleHeadline, headline_groups
from fmbench.comparison.selection import AttemptRule, RunInfo, fetch_runs
from fmbench.comparison.text import (
    confidence_text,
    delta_text,
    interval_text,
    relative_text,
    value_text,
)
from fmbench.storage.db import connect

BUILD_ORDER_RULE = (
    "Within one device, OS generation and configuration, builds are put in version order (major number, train "
    "letter, build number, suffix), never by the date measured; each build is compared with the one before it."
)
ATOM_NS = "http://www.w3.org/2005/Atom"
TAG_DATE = "2026"
"""The date in every ``tag:`` URI this module writes; fixed so that ids never change."""


def comparison_path(hardware_model: str, baseline_build: str, candidate_build: str, anchor: str = "") -> str:
    """The site path of a build-to-build comparison page, relative to the site root
    (``compare/<hardware_model>/<baseline_build>..<candidate_build>/``, as :mod:`fmbench.urls` writes it) when no
    other device or build name collides with these; the site's pages and feed link through its
    :class:`fmbench.urls.SitePaths`."""
    return urls.comparison(hardware_model, baseline_build, candidate_build, anchor)


@dataclass(frozen=True)
class BuildStep:
    """One build compared with the build before it, in one group."""

    group: Group
    device_name: str
    baseline_build: str
    candidate_build: str
    baseline_first_seen: datetime
    candidate_first_seen: datetime
    comparison: Comparison | None
    refused: str | None = None
    anchor: str = ""
    """The configuration's section on the comparison page (:func:`fmbench.urls.configuration_anchor`)."""

    @property
    def path(self) -> str:
        """The comparison page's section that shows this step, with the same runs and numbers."""
        return comparison_path(self.group.hardware_model, self.baseline_build, self.candidate_build, self.anchor)

    @property
    def exploratory(self) -> bool:
        if self.comparison is None:
            return False
        runs = (*self.comparison.baseline.runs, *self.comparison.candidate.runs)
        return any(r.verdict == "exploratory" for r in runs)

    def to_json(self) -> dict[str, Any]:
        return {
            "group": self.group.to_json(),
            "device_name": self.device_name,
            "baseline_build": self.baseline_build,
            "candidate_build": self.candidate_build,
            "baseline_first_seen": _rfc3339(self.baseline_first_seen),
            "candidate_first_seen": _rfc3339(self.candidate_first_seen),
            "path": self.path,
            "exploratory": self.exploratory,
            "refused": self.refused,
            "changes": len(_changes_of(self)),
        }


class OnStep:
    """Where a listed change sits: the device and the two builds of its step (``step``, a field of the class), for
    a step's changes here and a history's change points (:class:`fmbench.comparison.history_changes.HistoryChange`)."""

    step: BuildStep

    @property
    def hardware_model(self) -> str:
        return self.step.group.hardware_model

    @property
    def baseline_build(self) -> str:
        return self.step.baseline_build

    @property
    def candidate_build(self) -> str:
        return self.step.candidate_build

    @property
    def exploratory(self) -> bool:
        return self.step.exploratory

    @property
    def path(self) -> str:
        return self.step.path


@dataclass(frozen=True)
class BuildChange(OnStep):
    """A figure called better or worse between two consecutive builds: its interval lies beyond zero and its size
    passes the practical threshold."""

    step: BuildStep
    scenario: ScenarioComparison
    figure: FigureComparison

    @property
    def verdict(self) -> str:
        """``worse`` (a regression) or ``better``."""
        return self.figure.verdict

    @property
    def is_regression(self) -> bool:
        return self.figure.verdict == "worse"

    @property
    def scenario_id(self) -> str:
        return self.scenario.scenario_id

    @property
    def direction(self) -> Literal["increased", "decreased"]:
        assert self.figure.interval is not None
        return "increased" if self.figure.interval.sign > 0 else "decreased"

    @property
    def caveats(self) -> tuple[str, ...]:
        assert self.step.comparison is not None
        return tuple(c.message for c in self.step.comparison.caveats)

    def tag_specific(self) -> str:
        return "/".join(
            [
                "fmbench", "build-change", quote(self.hardware_model, safe=","),
                f"{quote(self.baseline_build, safe='')}..{quote(self.candidate_build, safe='')}",
                self.step.group.slug, quote(self.scenario.scenario_id, safe=""), self.figure.key,
            ]
        )

    def headline(self) -> str:
        word = "Regression" if self.is_regression else "Improvement"
        flag = " (exploratory)" if self.exploratory else ""
        f = self.figure
        size = f"{abs(f.relative_delta) * 100:.1f}%" if f.relative_delta is not None else delta_text(f)
        return (
            f"{word}{flag}: {f.label} of {self.scenario.title} {self.direction} {size} "
            f"on {self.step.device_name} ({self.hardware_model}), {self.baseline_build} → {self.candidate_build}"
        )

    def describe(self) -> str:
        f = self.figure
        assert f.interval is not None
        rule = self.step.comparison.rule_description if self.step.comparison else ""
        text = (
            f"{f.label} of {self.scenario.title} ({self.scenario.scenario_id}) {self.direction} from "
            f"{value_text(f, 'baseline')} on build {self.baseline_build} to {value_text(f, 'candidate')} on build "
            f"{self.candidate_build}: {delta_text(f)} ({relative_text(f)}), "
            f"{confidence_text(f.interval.confidence)} interval {interval_text(f)}. "
            f"{f.better.capitalize()} is better, so this is {f.verdict}. "
            f"Device {self.step.device_name} ({self.hardware_model}); {self.step.group.describe()}. "
            f"Attempt rule: {rule}."
        )
        if self.exploratory:
            text += " Rests on an exploratory run: not a stable ranking."
        return text

    def to_json(self) -> dict[str, Any]:
        comparison = self.step.comparison
        assert comparison is not None
        return {
            "hardware_model": self.hardware_model,
            "device_name": self.step.device_name,
            "group": self.step.group.to_json(),
            "baseline_build": self.baseline_build,
            "candidate_build": self.candidate_build,
            "baseline_run_ids": list(comparison.baseline.run_ids),
            "candidate_run_ids": list(comparison.candidate.run_ids),
            "candidate_first_seen": _rfc3339(self.step.candidate_first_seen),
            "scenario_id": self.scenario.scenario_id,
            "scenario_title": self.scenario.title,
            "figure": self.figure.to_json(),
            "verdict": self.verdict,
            "direction": self.direction,
            "exploratory": self.exploratory,
            "caveats": list(self.caveats),
            "rule": comparison.rule,
            "path": self.path,
            "summary": self.describe(),
        }


@dataclass(frozen=True)
class BuildSampleChange(OnStep):
    """Samples of one workload whose outcome changed the same way between two consecutive builds (per-sample exact
    tests, Holm-corrected over the step's samples: :mod:`fmbench.comparison.sample_changes`)."""

    step: BuildStep
    samples: SampleHeadline

    @property
    def scenario_id(self) -> str:
        return self.samples.scenario_id

    @property
    def is_regression(self) -> bool:
        return self.samples.worse

    def tag_specific(self) -> str:
        return "/".join(
            [
                "fmbench", "build-samples", quote(self.hardware_model, safe=","),
                f"{quote(self.baseline_build, safe='')}..{quote(self.candidate_build, safe='')}",
                self.step.group.slug, quote(self.scenario_id, safe=""), quote(self.samples.outcome, safe=""),
            ]
        )

    def headline(self) -> str:
        word = "Regression" if self.is_regression else "Improvement"
        flag = " (exploratory)" if self.exploratory else ""
        return (f"{word}{flag}: {self.samples.text()} on {self.step.device_name} ({self.hardware_model}), "
                f"{self.baseline_build} → {self.candidate_build}")

    def to_json(self) -> dict[str, Any]:
        return {
            "hardware_model": self.hardware_model,
            "device_name": self.step.device_name,
            "group": self.step.group.to_json(),
            "baseline_build": self.baseline_build,
            "candidate_build": self.candidate_build,
            "scenario_id": self.scenario_id,
            "scenario_title": self.samples.title,
            "outcome": self.samples.outcome,
            "samples": self.samples.samples,
            "verdict": "worse" if self.is_regression else "better",
            "exploratory": self.exploratory,
            "path": self.path,
            "summary": self.describe(),
        }

    def describe(self) -> str:
        text = (f"{self.samples.text()} on build {self.candidate_build} against build {self.baseline_build}: each "
                f"sample's trials compared with Fisher's exact test, Holm-corrected over the samples tested. "
                f"Device {self.step.device_name} ({self.hardware_model}); {self.step.group.describe()}.")
        if self.exploratory:
            text += " Rests on an exploratory run: not a stable ranking."
        return text


def _samples_of(step: BuildStep) -> list[BuildSampleChange]:
    if step.comparison is None:
        return []
    return [BuildSampleChange(step, g) for g in headline_groups(step.comparison.sample_changes)]


def _changes_of(step: BuildStep) -> list[BuildChange]:
    if step.comparison is None:
        return []
    return [BuildChange(step, s, f) for s, f in step.comparison.changes()]


@dataclass(frozen=True)
class RegressionReport:
    steps: tuple[BuildStep, ...]
    """Every build compared with its predecessor, in group order then build order."""
    changes: tuple[BuildChange, ...]
    """Every change whose interval excludes zero and passes the practical threshold (regressions and improvements)."""
    rule: AttemptRule
    family_confidence: float
    skipped_without_hardware: int
    build_order: str = BUILD_ORDER_RULE

    @property
    def regressions(self) -> tuple[BuildChange, ...]:
        return tuple(c for c in self.changes if c.is_regression)

    @property
    def improvements(self) -> tuple[BuildChange, ...]:
        return tuple(c for c in self.changes if not c.is_regression)

    @property
    def sample_changes(self) -> tuple[BuildSampleChange, ...]:
        """Every step's samples whose outcome changed, grouped by workload and how, biggest first in each step."""
        return tuple(c for s in self.steps for c in _samples_of(s))

    def to_json(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "family_confidence": self.family_confidence,
            "build_order": self.build_order,
            "skipped_without_hardware": self.skipped_without_hardware,
            "steps": [s.to_json() for s in self.steps],
            "changes": [c.to_json() for c in self.changes],
            "sample_changes": [c.to_json() for c in self.sample_changes],
        }


def find_build_changes(
    con: duckdb.DuckDBPyConnection,
    *,
    rule: AttemptRule = "latest",
    family_confidence: float = stats.DEFAULT_CONFIDENCE,
    hardware_model: str | None = None,
    tolerance: Tolerance = DEFAULT_TOLERANCE,
    caches: Caches | None = None,
) -> RegressionReport:
    """Compare every OS build with the previous one, per device and configuration, on an open database
    (``caches``: the caller's, see :func:`fmbench.comparison.compare.compare_selected`)."""
    runs = comparable_runs(con, hardware_model)
    steps = {
        device: device_steps(con, device_runs, rule=rule, family_confidence=family_confidence, tolerance=tolerance,
                             caches=caches)
        for device, device_runs in runs_by_device(runs).items()
    }
    return assemble_report(steps, rule=rule, family_confidence=family_confidence, skipped_without_hardware=sum(
        1 for r in runs if r.hardware_model is None
    ))


def comparable_runs(con: duckdb.DuckDBPyConnection, hardware_model: str | None = None) -> list[RunInfo]:
    """The runs the detector reads: never an invalid one, and only runs with an OS build (of one device, if given)."""
    where = "verdict <> 'invalid' AND os_build IS NOT NULL"
    params: list[Any] = []
    if hardware_model is not None:
        where += " AND hardware_model = ?"
        params.append(hardware_model)
    return fetch_runs(con, where, params)


def runs_by_device(runs: Iterable[RunInfo]) -> dict[str, list[RunInfo]]:
    """The runs placed on a device (a hardware model), by device, in the order given."""
    out: dict[str, list[RunInfo]] = {}
    for r in runs:
        if r.hardware_model is not None and r.os_build is not None:
            out.setdefault(r.hardware_model, []).append(r)
    return out


def _group_key(group: Group) -> tuple[str, ...]:
    return tuple("" if v is None else str(v) for v in group.to_json().values())


def device_steps(
    con: duckdb.DuckDBPyConnection,
    runs: list[RunInfo],
    *,
    rule: AttemptRule = "latest",
    family_confidence: float = stats.DEFAULT_CONFIDENCE,
    tolerance: Tolerance = DEFAULT_TOLERANCE,
    caches: Caches | None = None,
) -> list[BuildStep]:
    """Every build step of one device's runs (see :func:`runs_by_device`), in group order then build order.

    Each build of a configuration stands on its evidence (:mod:`fmbench.comparison.evidence`: publishable runs of one
    suite revision, exploratory ones only where it has none), the same the comparison page shows; the builds whose
    evidence shares a group (and so a suite revision) are put in version order and each compared with the one before it.
    A device's steps read its own runs only, so a report can be put together from devices computed apart."""
    index = evidence_of(runs)
    groups: dict[tuple[Group, Configuration], list[Evidence]] = {}
    for device in index.devices():
        for found in index.device_cells(device, rule):
            groups.setdefault((Group.of(found.runs[-1]), found.configuration), []).append(found)
    steps: list[BuildStep] = []
    for key in sorted(groups, key=lambda k: (_group_key(k[0]), str(k[1]))):
        ordered = sorted(groups[key], key=lambda e: build_sort_key(e.os_build))
        for previous, current in itertools.pairwise(ordered):
            steps.append(_step(con, key[0], previous, current, family_confidence, tolerance, caches))
    return steps


def assemble_report(
    steps_by_device: dict[str, list[BuildStep]],
    *,
    rule: AttemptRule,
    family_confidence: float,
    skipped_without_hardware: int,
) -> RegressionReport:
    """One report from each device's steps: devices in order of their hardware model, as the groups sort."""
    steps = [s for device in sorted(steps_by_device) for s in steps_by_device[device]]
    changes = tuple(c for s in steps for c in _changes_of(s))
    return RegressionReport(tuple(steps), changes, rule, family_confidence, skipped_without_hardware)


def _step(
    con: duckdb.DuckDBPyConnection,
    group: Group,
    baseline: Evidence,
    candidate: Evidence,
    family_confidence: float,
    tolerance: Tolerance = DEFAULT_TOLERANCE,
    caches: Caches | None = None,
) -> BuildStep:
    comparison: Comparison | None = None
    refused = None
    try:
        comparison = compare_selected(
            con, baseline.side, candidate.side, confidence=family_confidence, multiplicity="bonferroni",
            tolerance=tolerance, caches=caches,
        )
    except ComparisonRefused as exc:
        refused = exc.reason
    return BuildStep(
        group=group,
        device_name=candidate.device_name,
        baseline_build=baseline.os_build,
        candidate_build=candidate.os_build,
        baseline_first_seen=baseline.first_seen,
        candidate_first_seen=candidate.first_seen,
        comparison=comparison,
        refused=refused,
        anchor=urls.configuration_anchor(baseline.configuration),
    )


def detect_regressions(
    db: str | os.PathLike[str] | None = None,
    *,
    rule: AttemptRule = "latest",
    family_confidence: float = stats.DEFAULT_CONFIDENCE,
    hardware_model: str | None = None,
    tolerance: Tolerance = DEFAULT_TOLERANCE,
) -> RegressionReport:
    """Open the database read-only and find every build-to-build change."""
    with connect(db, read_only=True) as con:
        return find_build_changes(
            con, rule=rule, family_confidence=family_confidence, hardware_model=hardware_model, tolerance=tolerance
        )


# --- the Atom feed -----------------------------------------------------------------------


def _rfc3339(moment: datetime) -> str:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _authority(site_url: str) -> str:
    parts = urlsplit(site_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"site_url must be an absolute http(s) URL, not {site_url!r}")
    return parts.hostname


def _join(site_url: str, path: str) -> str:
    return site_url.rstrip("/") + "/" + path.lstrip("/")


_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")


def _xml_text(text: str) -> str:
    """Characters XML 1.0 cannot hold (a NUL in a title, say) become U+FFFD: the feed stays well formed."""
    return _NOT_XML.sub("\ufffd", text)


def _sub(parent: ET.Element, tag: str, text: str | None = None, **attributes: str) -> ET.Element:
    element = ET.SubElement(parent, f"{{{ATOM_NS}}}{tag}", {k: _xml_text(v) for k, v in attributes.items()})
    if text is not None:
        element.text = _xml_text(text)
    return element


class FeedEntry(Protocol):
    """What a feed entry is made of: a change between builds that names its build step."""

    step: BuildStep
    hardware_model: str
    scenario_id: str
    path: str

    def tag_specific(self) -> str: ...
    def headline(self) -> str: ...
    def describe(self) -> str: ...


def atom_feed(
    regressions: Iterable[FeedEntry],
    *,
    site_url: str,
    generated_at: datetime,
    title: str = "fmbench: OS-build regressions",
    feed_path: str | None = None,
    page_path: str | None = None,
    paths: urls.SitePaths | None = None,
) -> str:
    """An Atom 1.0 feed with one entry per change given (the site passes the regressions of its change list,
    :meth:`fmbench.comparison.history_changes.ChangeList.regressions`).

    ``site_url`` is the site's absolute root URL; entry links point at the
    comparison pages below it. Entry ids are ``tag:`` URIs built from the
    site's host, the device, the two builds, the configuration, the scenario
    and the figure, so the same change keeps the same id in every build of
    the feed. Entries are newest first (by the candidate build's first run).
    ``paths``: the site's path segments (:class:`fmbench.urls.SitePaths`), so an entry links where the site put the
    page (``None``: as if no name collided with another).
    """
    host = _authority(site_url)
    ET.register_namespace("", ATOM_NS)
    feed = ET.Element(f"{{{ATOM_NS}}}feed")
    _sub(feed, "id", f"tag:{host},{TAG_DATE}:fmbench/regressions")
    _sub(feed, "title", title)
    _sub(feed, "updated", _rfc3339(generated_at))
    author = _sub(feed, "author")
    _sub(author, "name", "fmbench")
    self_path = urls.regressions_feed() if feed_path is None else feed_path
    html_path = urls.regressions() if page_path is None else page_path
    _sub(feed, "link", rel="self", type="application/atom+xml", href=_join(site_url, self_path))
    _sub(feed, "link", rel="alternate", type="text/html", href=_join(site_url, html_path))
    _sub(feed, "generator", "fmbench")
    ordered = sorted(
        regressions,
        key=lambda c: (c.step.candidate_first_seen, c.hardware_model, c.tag_specific()),
        reverse=True,
    )
    seen: set[str] = set()
    for change in ordered:
        entry_id = f"tag:{host},{TAG_DATE}:{change.tag_specific()}"
        if entry_id in seen:
            continue
        seen.add(entry_id)
        entry = _sub(feed, "entry")
        _sub(entry, "id", entry_id)
        _sub(entry, "title", change.headline())
        _sub(entry, "updated", _rfc3339(change.step.candidate_first_seen))
        path = change.path if paths is None else paths.comparison(
            change.hardware_model, change.step.baseline_build, change.step.candidate_build, change.step.anchor
        )
        _sub(entry, "link", rel="alternate", type="text/html", href=_join(site_url, path))
        _sub(entry, "category", term=change.hardware_model)
        _sub(entry, "category", term=change.scenario_id)
        _sub(entry, "summary", change.describe(), type="text")
    ET.indent(feed)
    body = ET.tostring(feed, encoding="unicode")
    return f'<?xml version="1.0" encoding="utf-8"?>\n{body}\n'
