"""The list of changes `/regressions/`, its feed and home show: change points over each build history, and the
samples whose outcome changed, each family under its own false-discovery control.

- **Figures.** Every series of :func:`fmbench.comparison.build_history.read_histories` (each build's runs from the
  one selection of evidence, :mod:`fmbench.comparison.evidence`; builds in version order) is searched for change
  points and the list of every test is held at one false-discovery level
  (:func:`fmbench.analysis.changepoints.changes_over_history`). A change point kept is listed with the build where
  the figure moved, its size and interval (the builds before it against the builds after it, up to the next change
  points), the runs on each side, and a link to the comparison of the two builds around it: the build-to-build step
  of the same device and configuration (:class:`fmbench.comparison.regressions.BuildStep`), whose page section
  shows those two builds.
- **Samples.** Each build step's per-sample exact tests flag the samples whose outcome changed (Holm within the
  step, :mod:`fmbench.comparison.sample_changes`); every sample test of every step then enters a family of its
  own, under the Benjamini–Hochberg procedure at the same level. A step keeps only its flagged samples' p-values,
  so its other tests enter with a p-value of 1: a conservative stand-in (raising a p-value never adds a
  discovery), and a sample is listed only when both its step and the list keep it.

:meth:`ChangeList.listed` is the one selection home, `/regressions/` and the feed show: the same entries, with
the same numbers on each.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any
from urllib.parse import quote

import duckdb

from fmbench import urls
from fmbench.analysis.changepoints import (
    DEFAULT_LEVEL,
    ChangePoint,
    Decision,
    History,
    Hypothesis,
    Settings,
    changes_over_history,
    method_statement,
)
from fmbench.comparison.build_history import BuildHistory, read_histories
from fmbench.comparison.caches import Caches
from fmbench.comparison.evidence import EvidenceIndex
from fmbench.comparison.regressions import BuildSampleChange, BuildStep, OnStep, RegressionReport
from fmbench.comparison.sample_changes import SampleChange, SampleChanges, headline_groups
from fmbench.comparison.selection import AttemptRule


def _number(value: float | None, unit: str) -> str:
    """A level as a reader sees it: a rate in percent, seconds to the millisecond."""
    if value is None:
        return "not recorded"
    if unit in ("rate", "score"):
        return f"{value * 100:.1f}%"
    if unit == "seconds":
        return f"{value:.3f} s"
    if unit == "bytes":
        return f"{value / 2**20:,.0f} MiB"
    return f"{value:.2f} {unit}"


def _shift(value: float | None, unit: str) -> str:
    if value is None:
        return "not recorded"
    if unit in ("rate", "score"):
        return f"{value * 100:+.1f} pts"
    if unit == "seconds":
        return f"{value:+.3f} s"
    if unit == "bytes":
        return f"{value / 2**20:+,.0f} MiB"
    return f"{value:+.2f} {unit}"


@dataclass(frozen=True)
class HistoryChange(OnStep):
    """A change point kept by the list: one figure of one workload moved at ``candidate_build``. Its step's
    device and builds are the change point's own (the step is looked up by them)."""

    history: BuildHistory
    decision: Decision[ChangePoint]
    step: BuildStep
    """The build-to-build step from the build before the change to the build of it (same device and
    configuration): what the change links to."""
    title: str
    """The workload's name on the site."""

    @property
    def point(self) -> ChangePoint:
        return self.decision.subject

    @property
    def scenario_id(self) -> str:
        return self.history.scenario_id

    @property
    def is_regression(self) -> bool:
        delta = self.point.delta or 0.0
        return delta > 0 if self.history.figure.better == "lower" else delta < 0

    @property
    def verdict(self) -> str:
        return "worse" if self.is_regression else "better"

    @property
    def runs_before(self) -> tuple[str, ...]:
        return self.history.runs_of(self.point.before)

    @property
    def runs_after(self) -> tuple[str, ...]:
        return self.history.runs_of(self.point.after)

    def size_text(self) -> str:
        """The change's size: relative where the old level is not zero, else in the figure's unit."""
        relative = self.point.relative
        if relative is not None and self.history.figure.unit not in ("rate", "score"):
            return f"{relative * 100:+.1f}%"
        return _shift(self.point.delta, self.history.figure.unit)

    def interval_text(self) -> str:
        if self.point.interval is None:
            return "not tested"
        low, high = self.point.interval
        unit = self.history.figure.unit
        return f"{_shift(low, unit)} to {_shift(high, unit)}"

    def levels_text(self) -> str:
        unit = self.history.figure.unit
        return f"{_number(self.point.before_value, unit)} → {_number(self.point.after_value, unit)}"

    def tag_specific(self) -> str:
        return "/".join(
            [
                "fmbench", "change-point", quote(self.hardware_model, safe=","),
                quote(self.candidate_build, safe=""), self.history.group.slug,
                quote(self.history.group.revision_id or "", safe=""), quote(self.scenario_id, safe=""),
                self.history.figure.key,
            ]
        )

    def headline(self) -> str:
        word = "Regression" if self.is_regression else "Improvement"
        flag = " (exploratory)" if self.exploratory else ""
        return (
            f"{word}{flag}: {self.history.figure.label} of {self.title} moved {self.size_text()} "
            f"({self.levels_text()}) at {self.candidate_build} on {self.history.device_name} "
            f"({self.hardware_model}), after {self.baseline_build}"
        )

    def describe(self) -> str:
        p = self.point
        text = (
            f"{self.history.figure.label} of {self.title} ({self.scenario_id}) moved at build {p.build}, after "
            f"{p.previous_build}: {self.levels_text()}, {_shift(p.delta, self.history.figure.unit)} "
            f"({self.size_text()}), interval {self.interval_text()}, over {p.samples} samples measured on both "
            f"sides. Builds before: {', '.join(p.before)} ({len(self.runs_before)} runs); builds after: "
            f"{', '.join(p.after)} ({len(self.runs_after)} runs). Adjusted p-value {self.decision.adjusted:.3g}. "
            f"Device {self.history.device_name} ({self.hardware_model}); {self.history.group.describe()}."
        )
        if self.exploratory:
            text += " Rests on an exploratory run: not a stable ranking."
        return text

    def to_json(self) -> dict[str, Any]:
        return {
            **self.point.to_json(),
            "hardware_model": self.hardware_model,
            "device_name": self.history.device_name,
            "group": self.history.group.to_json(),
            "scenario_id": self.scenario_id,
            "scenario_title": self.title,
            "figure": self.history.figure.key,
            "verdict": self.verdict,
            "exploratory": self.exploratory,
            "runs_before": list(self.runs_before),
            "runs_after": list(self.runs_after),
            "adjusted_p_value": self.decision.adjusted,
            "path": self.path,
            "summary": self.describe(),
        }


Listed = HistoryChange | BuildSampleChange


@dataclass(frozen=True)
class ChangeList:
    """What the site lists as changes over its build histories, and the level it controls them at."""

    history: History
    changes: tuple[HistoryChange, ...]
    """Every change point kept, in the order of the series (device, configuration, workload, figure), then build."""
    sample_changes: tuple[BuildSampleChange, ...]
    """Every group of samples kept in its own family."""

    @property
    def level(self) -> float:
        return self.history.level

    @property
    def statement(self) -> str:
        """The sentence that states the method and the false-discovery level (`/regressions/` shows it)."""
        return method_statement(self.level)

    def listed(self) -> list[Listed]:
        """The one selection home, `/regressions/` and the feed show: every change point, then every sample group."""
        return [*self.changes, *self.sample_changes]

    def regressions(self) -> list[Listed]:
        return [c for c in self.listed() if c.is_regression]

    def to_json(self) -> dict[str, Any]:
        return {
            **self.history.to_json(),
            "changes": [c.to_json() for c in self.changes],
            "sample_changes": [c.to_json() for c in self.sample_changes],
        }


def _sample_hypotheses(report: RegressionReport) -> list[Hypothesis[object]]:
    found: list[Hypothesis[object]] = []
    for step in report.steps:
        samples = step.comparison.sample_changes if step.comparison is not None else None
        if samples is None:
            continue
        for change in samples.changes:
            found.append(Hypothesis((step, change), change.p_value))
        found += [Hypothesis(None, 1.0)] * max(samples.tested - len(samples.changes), 0)
    return found


def _kept_samples(report: RegressionReport, kept: Sequence[object]) -> list[BuildSampleChange]:
    by_step: dict[int, list[SampleChange]] = {}
    for subject in kept:
        if subject is None:
            continue
        step, change = subject  # type: ignore[misc]
        by_step.setdefault(id(step), []).append(change)
    out: list[BuildSampleChange] = []
    for step in report.steps:
        mine = by_step.get(id(step))
        if not mine or step.comparison is None or step.comparison.sample_changes is None:
            continue
        found = step.comparison.sample_changes
        out += [BuildSampleChange(step, g) for g in
                headline_groups(SampleChanges(found.tested, found.confidence, tuple(mine)))]
    return out


def list_changes(
    con: duckdb.DuckDBPyConnection,
    report: RegressionReport,
    *,
    rule: AttemptRule = "latest",
    level: float = DEFAULT_LEVEL,
    index: EvidenceIndex | None = None,
    caches: Caches | None = None,
    settings: Settings | None = None,
    titles: dict[str, str] | None = None,
) -> ChangeList:
    """The change points of every build history and the samples whose outcome changed, each family held at
    false-discovery ``level``; ``report``: the build-to-build steps a change links to (made from the same
    evidence, so each change point's two builds are one of its steps)."""
    histories = read_histories(con, rule=rule, caches=caches, index=index)
    history = changes_over_history(
        [h.series for h in histories], samples=_sample_hypotheses(report), level=level, settings=settings
    )
    steps = {(s.group, s.anchor, s.baseline_build, s.candidate_build): s for s in report.steps}
    changes: list[HistoryChange] = []
    for decision in history.change_points:
        point = decision.subject
        for found in histories:
            if found.series.key != point.key or point.build not in found.series.builds:
                continue
            anchor = urls.configuration_anchor(found.configuration)
            step = steps.get((found.group, anchor, point.previous_build, point.build))
            if step is None:  # no comparison of the two builds around it: nothing a reader could check it on
                continue
            title = (titles or {}).get(found.scenario_id) or _title_of(step, found.scenario_id)
            changes.append(HistoryChange(found, decision, step, title))
            break
    samples = _kept_samples(report, [d.subject for d in history.sample_changes])
    return ChangeList(history, tuple(changes), tuple(samples))


def _title_of(step: BuildStep, scenario_id: str) -> str:
    if step.comparison is not None:
        for s in step.comparison.scenarios:
            if s.scenario_id == scenario_id:
                return s.title
    return scenario_id


def newest_first(listed: Sequence[Listed]) -> list[Listed]:
    """Newest candidate build first (by when its first run started), as home and the feed put them; within one
    build the samples whose outcome changed come before the figures that moved, as a comparison's headline names
    them, so a build with many moved figures never pushes its changed samples off a short list."""
    def order(c: Listed) -> tuple[datetime, bool]:
        return c.step.candidate_first_seen, isinstance(c, BuildSampleChange)
    return sorted(listed, key=order, reverse=True)
