"""A comparison as text and Markdown: its values, deltas and intervals as a reader sees them."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

from fmbench.analysis import configuration, detectable
from fmbench.analysis import display as d
from fmbench.analysis import figure_catalog as fc
from fmbench.analysis.display import confidence_text
from fmbench.analysis.figures import token_counting
from fmbench.comparison.sample_changes import headline_groups
from fmbench.comparison.selection import ids_text
from fmbench.runfile import vocabulary as vocab

if TYPE_CHECKING:
    from fmbench.analysis.tolerance import Tolerance
    from fmbench.comparison.rules import Caveat, Difference
    from fmbench.comparison.sample_changes import SampleChange, SampleChanges, SampleSide
    from fmbench.comparison.scenario_results import (
        DroppedScenario,
        FigureComparison,
        ScenarioComparison,
    )
    from fmbench.comparison.selection import RunInfo, Side


class Comparison(Protocol):
    """What the text of a comparison reads of it: a :class:`fmbench.comparison.results.Comparison`, which words
    itself with this module (so this module names it by what it reads, not by an import of its module)."""

    @property
    def title(self) -> str: ...
    @property
    def label(self) -> str: ...
    @property
    def verdict_sentence(self) -> str: ...
    @property
    def rule_description(self) -> str: ...
    @property
    def strict_os(self) -> bool: ...
    @property
    def baseline(self) -> Side: ...
    @property
    def candidate(self) -> Side: ...
    @property
    def differences(self) -> tuple[Difference, ...]: ...
    @property
    def expected_differences(self) -> tuple[Difference, ...]: ...
    @property
    def caveats(self) -> tuple[Caveat, ...]: ...
    @property
    def dropped(self) -> tuple[DroppedScenario, ...]: ...
    @property
    def scenarios(self) -> tuple[ScenarioComparison, ...]: ...
    @property
    def method_notes(self) -> tuple[str, ...]: ...
    @property
    def tolerance(self) -> Tolerance: ...
    @property
    def sample_changes(self) -> SampleChanges | None: ...


def _value(unit: str, value: float | None) -> str:
    if value is None:
        return d.NOT_RECORDED
    return fc.format_value(unit, value) or ""


_signed = fc.format_change


def delta_text(f: FigureComparison) -> str:
    return "—" if f.delta is None else _signed(f.unit, f.delta)


def relative_text(f: FigureComparison) -> str:
    return "—" if f.relative_delta is None else f"{fc.signed(f.relative_delta * 100, '+.1f')}%"


def interval_text(f: FigureComparison) -> str:
    if f.interval is None:
        return "—"
    return f"[{_signed(f.unit, f.interval.low)}, {_signed(f.unit, f.interval.high)}]"


def detectable_cell(f: FigureComparison) -> str:
    """The smallest detectable change as a table shows it (``—`` without an interval)."""
    return detectable.detectable_text(f.unit, f.smallest_detectable_change) or "—"


def passed_text(side: SampleSide) -> str:
    """``20/20 passed``: a sample's passed trials of its attempts on one side."""
    return f"{side.passed}/{side.trials} passed"


def checks_text(side: SampleSide) -> str:
    """The checks that failed on one side of a sample, with how many trials each."""
    parts = [f"{c.label} ({c.failed}/{side.trials})" for c in side.failing_checks]
    if side.failed_requests:
        parts.append(f"{side.failed_requests} request(s) failed")
    return "; ".join(parts) or "none"


def sample_changes_summary(c: Comparison) -> str:
    """One sentence: how many samples changed of how many tested, and by which test."""
    found = c.sample_changes
    if found is None:
        return "Samples were not tested."
    failing = sum(x.direction == "newly failing" for x in found.changes)
    return (
        f"{len(found.changes)} of {found.tested} sample(s) tested changed beyond chance ({failing} newly failing, "
        f"{len(found.changes) - failing} newly passing): {found.method}, family-wise "
        f"{confidence_text(found.confidence)}."
    )


def _sample_lines(x: SampleChange, t: Any) -> list[str]:
    return [
        f"  {x.direction}: {t(x.title)} ({t(x.scenario_id)}) · sample {t(x.sample_id)} · "
        f"{passed_text(x.baseline)} → {passed_text(x.candidate)} · adjusted p {x.adjusted_p_value:.2g}",
        f"    failing checks: baseline {t(checks_text(x.baseline))}; candidate {t(checks_text(x.candidate))}",
        f"    baseline response: {t(x.baseline.response) if x.baseline.response is not None else 'no trial'}",
        f"    candidate response: {t(x.candidate.response) if x.candidate.response is not None else 'no trial'}",
    ]


def value_text(f: FigureComparison, side: Literal["baseline", "candidate"]) -> str:
    value = f.baseline if side == "baseline" else f.candidate
    if value is None:
        return f.baseline_absent if side == "baseline" else f.candidate_absent
    return _value(f.unit, value)


CHANGED = ("worse", "better")
"""The verdicts of a change beyond the practical threshold (the order a verdict sentence counts the unnamed ones)."""
NOT_PAST_THRESHOLD = ("within tolerance", "inconclusive")
"""The verdicts of a tested figure whose change was not shown beyond the practical threshold: its interval lies
inside it (within tolerance), or these runs cannot tell (inconclusive). Only the first says the figure did not
change."""
NAMED_CHANGES = 3
"""How many changes a verdict sentence names; the others it counts."""


def past_threshold(f: FigureComparison, tolerance: Tolerance) -> float:
    """How big a change is in its own practical threshold's units (2.0: twice the threshold), the one scale on which
    changes of every kind are ordered: a rate's change in points against the rate threshold, a time's, throughput's
    or memory's relative change against theirs (infinite from a baseline of 0, as :func:`~fmbench.analysis.tolerance.judge`
    counts it)."""
    threshold, relative = tolerance.for_unit(f.unit)
    if relative:
        size = abs(f.relative_delta) if f.relative_delta is not None else math.inf
    else:
        size = abs(f.delta) if f.delta is not None else 0.0
    return size / threshold if threshold > 0 else size


def _size(f: FigureComparison) -> str:
    """How big a change is: percentage points for a rate, else relative (the change itself when the baseline
    is 0)."""
    if f.unit in ("rate", "score") and f.delta is not None:
        return f"{abs(f.delta) * 100:.1f} points"
    if f.relative_delta is not None:
        size = abs(f.relative_delta) * 100
        return f"{size:.0f}%" if size >= 10 else f"{size:.1f}%"
    return "—" if f.delta is None else _signed(f.unit, abs(f.delta)).lstrip("+")


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def sample_clauses(parts: Sequence[tuple[str | None, Comparison]]) -> list[str]:
    """What a comparison's headline says first: the samples whose outcome changed, by workload and how, the biggest
    group first over every configuration ("2 samples of Natural-language task capture now fail every trial")."""
    found = [(g, label) for label, c in parts for g in headline_groups(c.sample_changes)]
    found.sort(key=lambda x: -x[0].size)
    return [g.text(label) for g, label in found]


def evidence_clauses(parts: Sequence[tuple[str | None, Comparison]]) -> list[str]:
    """What a headline says last about the runs it stands on: a comparison on exploratory runs says so."""
    out = []
    for label, c in parts:
        sides = [name for name, side in (("baseline", c.baseline), ("candidate", c.candidate))
                 if any(r.verdict == "exploratory" for r in side.runs)]
        if sides:
            where = f" ({label})" if label else ""
            out.append(f"the {' and the '.join(sides)}{where} stand{'s' if len(sides) == 1 else ''} on exploratory "
                       "runs, not a stable ranking")
    return out


def verdict_sentence(parts: Sequence[tuple[str | None, Comparison]], refused: int = 0) -> str:
    """One sentence of a comparison's verdicts (of several, a page's configurations: each ``(label, comparison)``,
    the label naming the configuration a change is in, ``None`` for none): first the samples whose outcome changed,
    then the figures that got worse or better beyond the practical threshold, the biggest first across every kind
    (quality, latency, throughput, memory: by :func:`past_threshold`; the figure, the workload and the size, at most
    :data:`NAMED_CHANGES` named, the rest counted), how many figures stayed within tolerance and how many were
    inconclusive (never called unchanged), and how many were not tested; ``refused``: how many comparisons were
    refused."""
    named: list[str] = []
    counts = {verdict: 0 for verdict in CHANGED}
    within = inconclusive = untested = 0
    changes = [(label, c, s, f) for label, c in parts for s in c.scenarios for f in s.figures if f.verdict in CHANGED]
    changes.sort(key=lambda x: -past_threshold(x[3], x[1].tolerance))  # stable: equal sizes keep the page's order
    for label, _c, scenario, f in changes:
        if len(named) >= NAMED_CHANGES:
            counts[f.verdict] += 1  # counted, not named
        else:
            where = f"{scenario.title} ({label})" if label else scenario.title
            named.append(
                f"{f.label} of {where} got {_size(f)} {f.verdict} "
                f"({value_text(f, 'baseline')} → {value_text(f, 'candidate')})"
            )
    for _label, c in parts:
        for s in c.scenarios:
            within += sum(f.verdict == "within tolerance" for f in s.figures)
            inconclusive += sum(f.verdict == "inconclusive" for f in s.figures)
            untested += sum(f.verdict not in (*CHANGED, *NOT_PAST_THRESHOLD) for f in s.figures)
    clauses: list[str] = sample_clauses(parts)
    if named:
        clauses += named
        clauses += [f"{_plural(n, 'other figure', 'other figures')} got {verdict}" for verdict, n in counts.items() if n]
        if within:
            clauses.append(f"{_plural(within, 'other figure', 'other figures')} stayed within tolerance")
        if inconclusive:
            clauses.append(f"{inconclusive} {'was' if inconclusive == 1 else 'were'} inconclusive")
    elif within or inconclusive:
        rest = [f"{_plural(within, 'figure', 'figures')} stayed within tolerance"] if within else []
        rest += [f"{_plural(inconclusive, 'figure was', 'figures were')} inconclusive"] if inconclusive else []
        clauses.append(f"No figure got worse or better beyond the practical threshold: {', '.join(rest)}")
    elif parts:
        clauses.append("No figure got worse or better beyond the practical threshold")
    if untested:
        clauses.append(f"{untested} {'was' if untested == 1 else 'were'} not tested")
    if refused:
        clauses.append(f"{_plural(refused, 'comparison was', 'comparisons were')} refused")
    clauses += evidence_clauses(parts)
    if not clauses:
        return "Nothing was compared."
    return "; ".join(clauses) + "."


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").replace("<", "&lt;")


def _run_line(r: RunInfo) -> str:
    t = d.terminal_value  # a value from the file stays on its line: a newline in a device name cannot forge one
    return (
        f"{t(r.run_id)} · {t(r.file_name)} · {t(r.device_name)} ({t(r.hardware_model or d.NOT_RECORDED)}) · "
        f"{t(r.system_name)} {t(r.system_version)} build {t(r.os_build or d.NOT_RECORDED)} · "
        f"{configuration.ROUTE.value(r)} · {configuration.SUITE.value(r)} · "
        f"{configuration.SESSION_MODE.value(r) or 'session ' + d.NOT_RECORDED} · "
        f"tokens {_token_source_text(r.token_count_source)} · "
        f"started {d.iso(r.started_at)} · {r.verdict}"
    )


def _token_source_text(source: str | None) -> str:
    if source is None:
        return d.NOT_RECORDED
    if source == "mixed":
        return "mixed"
    kind = "estimated" if token_counting([source]) == "estimated" else "counted"
    return f"{kind} ({vocab.label('tokenCountSource', source)})"


def _side_lines(name: str, side: Side) -> list[str]:
    lines = [f"{name}: {side.spec.describe()} — {len(side.runs)} run(s) used of {len(side.matched)} matched"]
    lines += [f"  - {_run_line(r)}" for r in side.runs]
    if side.not_used:
        lines.append(f"  - not used under the attempt rule: {ids_text(side.not_used)}")
    if side.excluded_invalid:
        lines.append(f"  - left out as invalid evidence: {ids_text(side.excluded_invalid)}")
    return lines


def markdown(c: Comparison) -> str:
    lines = [f"# {_cell(c.title)}", "", f"**{_cell(c.verdict_sentence)}**", "",
             f"**{c.label}.** Attempt rule: {c.rule_description}."]
    if c.strict_os:
        lines.append("Strict OS 26 vs OS 27 mode: only the workloads both sides can run.")
    lines += ["", "## Runs", ""]
    for name, side in (("Baseline", c.baseline), ("Candidate", c.candidate)):
        first, *rest = _side_lines(name, side)
        lines.append(f"- {_cell(first)}")
        lines += [f"  {_cell(x)}" for x in rest]
    lines += ["", "## What differs", ""]
    if c.differences:
        lines += ["| Condition | Baseline | Candidate |", "| --- | --- | --- |"]
        lines += [f"| {_cell(x.label)} | {_cell(x.baseline)} | {_cell(x.candidate)} |" for x in c.differences]
    else:
        lines.append("Nothing but the runs themselves: every recorded condition is equal.")
    lines += ["", "## Caveats", ""]
    lines += [f"- {_cell(x.message)}" for x in c.caveats] or ["None."]
    lines += ["", "## Expected differences", "", "Any two runs differ in these; they do not explain a change.", ""]
    lines += ["| Condition | Baseline | Candidate |", "| --- | --- | --- |"]
    lines += [f"| {_cell(x.label)} | {_cell(x.baseline)} | {_cell(x.candidate)} |" for x in c.expected_differences]
    if c.dropped:
        lines += ["", "## Workloads left out", ""]
        lines += [f"- {_cell(x.title)} (`{x.scenario_id}`): {x.reason}" for x in c.dropped]
    lines += ["", "## Figures", ""]
    lines += [f"- {x}" for x in c.method_notes]
    lines += [
        "",
        "| Scenario | Figure | Better | Baseline | Candidate | Delta | Relative | Interval | Smallest detectable "
        "| Verdict |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | --- | ---: | --- |",
    ]
    for s in c.scenarios:
        for f in s.figures:
            verdict = f.verdict if f.note is None or f.verdict in ("better", "worse") else f"{f.verdict} ({f.note})"
            lines.append(
                f"| {_cell(s.title)} | {f.label} | {f.better} | {value_text(f, 'baseline')} "
                f"| {value_text(f, 'candidate')} | {delta_text(f)} | {relative_text(f)} | {interval_text(f)} "
                f"| {detectable_cell(f)} | {_cell(verdict)} |"
            )
    too_few = [f"- {_cell(s.title)}, {f.label}: {f.too_few_to_tell}" for s in c.scenarios for f in s.figures
               if f.too_few_to_tell]
    if too_few:
        lines += ["", *too_few]
    lines += ["", "## Samples whose outcome changed", "", sample_changes_summary(c)]
    for x in c.sample_changes.changes if c.sample_changes else ():
        lines += [
            "",
            f"### {x.direction.capitalize()}: {_cell(x.title)} (`{_cell(x.scenario_id)}`), sample "
            f"`{_cell(x.sample_id)}`",
            "",
            "| | Baseline | Candidate |",
            "| --- | --- | --- |",
            f"| Passed | {passed_text(x.baseline)} | {passed_text(x.candidate)} |",
            f"| Failing checks | {_cell(checks_text(x.baseline))} | {_cell(checks_text(x.candidate))} |",
            f"| A response | {_cell(x.baseline.response or 'no trial')} | {_cell(x.candidate.response or 'no trial')} |",
        ]
    return "\n".join(lines) + "\n"


def text(c: Comparison) -> str:
    t = d.terminal_value  # every value from the runs on its own line, control characters escaped
    lines = [t(c.title), t(c.verdict_sentence), f"attempt rule: {c.rule_description}"]
    if c.strict_os:
        lines.append("strict OS 26 vs OS 27 mode: only the workloads both sides can run")
    lines.append("")
    for name, side in (("baseline", c.baseline), ("candidate", c.candidate)):
        lines += _side_lines(name, side)
    lines += ["", "differs:"]
    lines += [f"  - {t(x)}" for x in c.differences] or ["  nothing but the runs themselves"]
    if c.caveats:
        lines += ["", "caveats:"]
        lines += [f"  ! {t(x.message)}" for x in c.caveats]
    lines += ["", "expected differences (any two runs differ in these):"]
    lines += [f"  - {t(x)}" for x in c.expected_differences]
    if c.dropped:
        lines += ["", "left out:"]
        lines += [f"  - {t(x.scenario_id)}: {t(x.reason)}" for x in c.dropped]
    lines += [""]
    lines += [f"  {x}" for x in c.method_notes]
    lines.append("")
    header = ("scenario", "figure", "better", "baseline", "candidate", "delta", "relative", "interval", "detectable",
              "verdict")
    rows = [
        (t(s.scenario_id), f.label, f.better, value_text(f, "baseline"), value_text(f, "candidate"), delta_text(f),
         relative_text(f), interval_text(f), detectable_cell(f), f.verdict)
        for s in c.scenarios
        for f in s.figures
    ]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(header)]
    lines.append("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip())
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    too_few = [f"  {t(s.scenario_id)}, {f.label}: {f.too_few_to_tell}" for s in c.scenarios for f in s.figures
               if f.too_few_to_tell]
    if too_few:
        lines += ["", *too_few]
    lines += ["", "samples whose outcome changed:", f"  {sample_changes_summary(c)}"]
    for x in c.sample_changes.changes if c.sample_changes else ():
        lines += _sample_lines(x, t)
    return "\n".join(lines)

