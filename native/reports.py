"""What the ``native`` commands print: inspections, sample listings, comparisons.

Each report is built by one function from a path and renders itself as text
or JSON; the command line only chooses the rendering.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fmbench.analysis.display import terminal_value as _t

from .compare import Comparison
from .differences import EMPTY_EXPECTED_NOTE, RowIssues, evaluation_issues
from .errors import ArtifactError
from .model import Evaluation, Row
from .profiles import MetricProfile, profile_metrics
from .reader import DEFAULT_LIMITS, ReadLimits, read_artifacts


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.6g}"


def profile_line(profile: MetricProfile) -> str:
    """One profile as text: counts, the labelled pass rate when judged, then the numeric statistics."""
    text = (
        f"{_t(profile.name)}: n={profile.count} pass={profile.passed} fail={profile.failed}"
        f" ignore={profile.ignored} score={profile.scored}"
    )
    if profile.pass_rate is not None:
        text += f" pass rate={profile.pass_rate:.1%}"
    text += f" values={profile.numeric_count}"
    if profile.numeric_count:
        text += (
            f" mean={_number(profile.mean)} median={_number(profile.median)}"
            f" min={_number(profile.minimum)} max={_number(profile.maximum)}"
            f" sd={_number(profile.standard_deviation)}"
        )
    return text


@dataclass
class Inspection:
    evaluation: Evaluation
    profiles: list[MetricProfile]

    def to_dict(self) -> dict[str, Any]:
        return {**self.evaluation.to_dict(), "profiles": [p.to_dict() for p in self.profiles]}

    def to_text(self) -> str:
        ev = self.evaluation
        lines = [_t(ev.location)]
        lines.append(
            f"  kind         {'model judge (secondary evidence)' if ev.is_judge else 'deterministic'}"
        )
        lines.append(f"  sha256       {ev.sha256}")
        lines.append(f"  evaluation   {_t(ev.evaluation_id or 'not recorded')}")
        lines.append(f"  result       {_t(ev.result_id or 'not recorded')}")
        duration = f" ({_number(ev.duration_ms)} ms)" if ev.duration_ms is not None else ""
        lines.append(
            f"  time         {_t(ev.start_time or 'not recorded')} to {_t(ev.end_time or 'not recorded')}{duration}"
        )
        for key in sorted(ev.info):
            lines.append(f"  info         {_t(key)}: {_t(ev.info[key])}")
        if ev.manifest is not None:
            lines.append(f"  test         {_t(ev.manifest.test_identifier or 'not recorded')}")
            lines.append(f"  attachment   {_t(ev.manifest.attachment_name or 'not recorded')}")
        lines.append(f"  rows         {len(ev.rows)}")
        if ev.extra:
            lines.append(f"  unknown keys {_t(', '.join(sorted(ev.extra)))}")
        lines.append("  summary")
        if not ev.summary:
            lines.append("    (none)")
        for entry in ev.summary:
            lines.append(f"    {_t(entry.label)}: {_number(entry.value)}")
        lines.append("  metrics")
        for profile in self.profiles:
            lines.append(
                "    " + profile_line(profile)
            )
            for rationale in profile.rationales:
                lines.append(f"      {rationale.count} x {_t(rationale.rationale)}")
        return "\n".join(lines)


    def summary_dict(self) -> dict[str, Any]:
        """Metadata and aggregates only (``inspect --summary-only``)."""
        return self.evaluation.to_dict()

    def summary_text(self) -> str:
        return self.to_text().split("\n  metrics\n", 1)[0]


@dataclass
class InspectionReport:
    inspections: list[Inspection] = field(default_factory=list)
    errors: list[ArtifactError] = field(default_factory=list)

    def to_json(self) -> str:
        body = {
            "documents": [inspection.to_dict() for inspection in self.inspections],
            "errors": [str(error) for error in self.errors],
        }
        return json.dumps(body, indent=2, sort_keys=True, ensure_ascii=False)

    def to_text(self) -> str:
        return "\n\n".join(inspection.to_text() for inspection in self.inspections)

    def summary_json(self) -> str:
        body = {
            "documents": [inspection.summary_dict() for inspection in self.inspections],
            "errors": [str(error) for error in self.errors],
        }
        return json.dumps(body, indent=2, sort_keys=True, ensure_ascii=False)

    def summary_text(self) -> str:
        return "\n\n".join(inspection.summary_text() for inspection in self.inspections)


def inspect_path(path: Path | str, limits: ReadLimits = DEFAULT_LIMITS) -> InspectionReport:
    """Metadata, summary and metric profiles of every result under ``path``."""
    result = read_artifacts([path], limits)
    inspections = [Inspection(ev, profile_metrics(ev)) for ev in result.documents]
    return InspectionReport(inspections, result.errors)


def _sample_line(row: dict[str, Any]) -> str:
    marks = []
    for name, metric in row["metrics"].items():
        short = name.removeprefix("FoundationModelsBench ")
        if metric["kind"] == "score":
            shown = _number(metric.get("value"))
        elif metric["kind"] == "pass" and metric.get("value") is False:
            shown = "fail"
        else:
            shown = metric["kind"]
        marks.append(f"{_t(short)}={_t(shown)}")
    where = _t(row["source"]) + (f" line {row['line']}" if row["line"] is not None else "")
    return f"{where} #{row['index']} {_t(row['recordID'] or '-')}  " + "  ".join(marks)


def _jsonl_line(row: dict[str, Any]) -> str:
    return json.dumps(row, sort_keys=True, ensure_ascii=False)


@dataclass
class SampleListing:
    rows: list[dict[str, Any]] = field(default_factory=list)
    errors: list[ArtifactError] = field(default_factory=list)

    def to_text(self) -> str:
        return "\n".join(map(_sample_line, self.rows))


@dataclass
class SampleStream:
    """The rows of the documents read, normalized one at a time as they are written (never all at once: a
    command that only passes rows through holds one normalized row, not every one)."""

    documents: list[Evaluation]
    only_failures: bool = False
    metric: str | None = None
    kind: str | None = None
    errors: list[ArtifactError] = field(default_factory=list)

    def rows(self) -> Iterator[dict[str, Any]]:
        for ev in self.documents:
            order = {name: position for position, name in enumerate(ev.metric_names)}
            for row in ev.rows:
                if not _row_matches(row, only_failures=self.only_failures, metric=self.metric, kind=self.kind):
                    continue
                normalized = {"source": ev.source_name, "line": ev.line, "isJudge": ev.is_judge}
                normalized.update(row.to_dict())
                metrics = normalized["metrics"]
                normalized["metrics"] = {name: metrics[name] for name in sorted(metrics, key=order.__getitem__)}
                yield normalized

    def lines(self, *, jsonl: bool = False) -> Iterator[str]:
        """Each row as one line of text (or of JSON Lines), made when it is asked for."""
        return map(_jsonl_line if jsonl else _sample_line, self.rows())


SAMPLE_KINDS = ("pass", "fail", "score", "ignore")
"""What ``samples --kind`` accepts: ``fail`` also matches a ``pass`` whose value is false."""


def _row_matches(row: Row, *, only_failures: bool, metric: str | None, kind: str | None) -> bool:
    metrics = [m for m in row.metrics if metric is None or m.name == metric]
    if metric is not None and not metrics:
        return False
    if only_failures and not any(m.fails for m in metrics):
        return False
    if kind is not None:
        if kind == "fail":
            return any(m.fails for m in metrics)
        if kind == "pass":
            return any(m.passes for m in metrics)
        return any(m.kind == kind for m in metrics)
    return True


def list_samples(
    path: Path | str,
    *,
    only_failures: bool = False,
    metric: str | None = None,
    kind: str | None = None,
    limits: ReadLimits = DEFAULT_LIMITS,
) -> SampleListing:
    """One normalized row per result row, with the file (and line) it came from.

    ``only_failures`` keeps rows that failed a metric (the named one, with
    ``metric``); ``metric`` keeps rows that have that metric column; ``kind``
    keeps rows where a metric (the named one) has that kind, ``fail``
    including a ``pass`` with value false and ``pass`` excluding it.
    """
    stream = stream_samples(path, only_failures=only_failures, metric=metric, kind=kind, limits=limits)
    return SampleListing(list(stream.rows()), stream.errors)


def stream_samples(
    path: Path | str,
    *,
    only_failures: bool = False,
    metric: str | None = None,
    kind: str | None = None,
    limits: ReadLimits = DEFAULT_LIMITS,
) -> SampleStream:
    """What :func:`list_samples` lists, as a stream: the documents read (and the errors met), each row
    normalized only when the stream reaches it (``native samples`` writes each line as it is made)."""
    result = read_artifacts([path], limits, lazy=True)  # rows made again as written, never all kept
    return SampleStream(result.documents, only_failures, metric, kind, result.errors)


def comparison_text(comparison: Comparison) -> str:
    """A readable comparison; verdicts appear only where a direction policy is stated."""
    lines = [
        f"baseline   {_t(comparison.baseline.location)}",
        f"candidate  {_t(comparison.candidate.location)}",
        "",
    ]
    for delta in comparison.paired:
        relative = f" ({delta.relative_delta:+.2%})" if delta.relative_delta is not None else ""
        change = f"{delta.delta:+.6g}" if delta.delta is not None else "n/a"
        verdict = f"  {delta.verdict} ({delta.direction} is better)" if delta.verdict else ""
        lines.append(
            f"{_t(delta.label)}: {_number(delta.baseline)} -> {_number(delta.candidate)}  delta {change}{relative}{verdict}"
        )
    for title, entries in (
        ("only in baseline", comparison.baseline_only),
        ("only in candidate", comparison.candidate_only),
    ):
        for entry in entries:
            lines.append(f"{title}: {_t(entry.label)} = {_number(entry.value)}")
    for outcome in comparison.gates:
        lines.append(f"gate {outcome.status.upper()}: {_t(outcome.rule.text)}: {_t(outcome.message)}")
    return "\n".join(lines)


@dataclass
class EvaluationReport:
    """``native report``: profiles as xceval computes them, then the rows with issues."""

    evaluation: Evaluation
    profiles: list[MetricProfile]
    issues: list[RowIssues]

    def to_dict(self) -> dict[str, Any]:
        ev = self.evaluation
        return {
            "source": ev.source_name,
            "line": ev.line,
            "evaluationID": ev.evaluation_id,
            "resultID": ev.result_id,
            "isJudge": ev.is_judge,
            "rowCount": len(ev.rows),
            "metrics": [profile.to_dict() for profile in self.profiles],
            "issues": [issue.to_dict() for issue in self.issues],
            "notes": [EMPTY_EXPECTED_NOTE],
        }

    def to_text(self) -> str:
        ev = self.evaluation
        lines = [_t(ev.location), f"  rows {len(ev.rows)}", "  metrics (as xceval computes them)"]
        lines.extend("    " + profile_line(profile) for profile in self.profiles)
        lines.append(f"  issues ({len(self.issues)} rows)")
        for issue in self.issues:
            head = f"    #{issue.index} {_t(issue.record_id or '-')}"
            if issue.failed_metrics:
                head += "  failed: " + _t(", ".join(issue.failed_metrics))
            lines.append(head)
            for difference in issue.differences:
                lines.append(f"      {_t(difference.to_text())}")
        lines.append(f"  note: {EMPTY_EXPECTED_NOTE}")
        return "\n".join(lines)


@dataclass
class ReportSet:
    reports: list[EvaluationReport] = field(default_factory=list)
    errors: list[ArtifactError] = field(default_factory=list)

    def to_json(self) -> str:
        body = {
            "reports": [report.to_dict() for report in self.reports],
            "errors": [str(error) for error in self.errors],
        }
        return json.dumps(body, indent=2, sort_keys=True, ensure_ascii=False)

    def to_text(self) -> str:
        return "\n\n".join(report.to_text() for report in self.reports)


def report_evaluation(evaluation: Evaluation) -> EvaluationReport:
    return EvaluationReport(evaluation, profile_metrics(evaluation), evaluation_issues(evaluation))


def report_path(path: Path | str, limits: ReadLimits = DEFAULT_LIMITS) -> ReportSet:
    """The report of every result under ``path``; unreadable ones are collected as errors."""
    result = read_artifacts([path], limits)
    return ReportSet([report_evaluation(ev) for ev in result.documents], result.errors)
