"""What the ``native`` commands print: inspections, sample listings, comparisons.

Each report is built by one function from a path and renders itself as text
or JSON; the command line only chooses the rendering.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .compare import Comparison
from .errors import ArtifactError
from .model import Evaluation
from .profiles import MetricProfile, profile_metrics
from .reader import read_artifacts


def _number(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.6g}"


@dataclass
class Inspection:
    evaluation: Evaluation
    profiles: list[MetricProfile]

    def to_dict(self) -> dict[str, Any]:
        return {**self.evaluation.to_dict(), "profiles": [p.to_dict() for p in self.profiles]}

    def to_text(self) -> str:
        ev = self.evaluation
        lines = [ev.location]
        lines.append(
            f"  kind         {'model judge (secondary evidence)' if ev.is_judge else 'deterministic'}"
        )
        lines.append(f"  sha256       {ev.sha256}")
        lines.append(f"  evaluation   {ev.evaluation_id or 'not recorded'}")
        lines.append(f"  result       {ev.result_id or 'not recorded'}")
        duration = f" ({_number(ev.duration_ms)} ms)" if ev.duration_ms is not None else ""
        lines.append(
            f"  time         {ev.start_time or 'not recorded'} to {ev.end_time or 'not recorded'}{duration}"
        )
        for key in sorted(ev.info):
            lines.append(f"  info         {key}: {ev.info[key]}")
        if ev.manifest is not None:
            lines.append(f"  test         {ev.manifest.test_identifier or 'not recorded'}")
            lines.append(f"  attachment   {ev.manifest.attachment_name or 'not recorded'}")
        lines.append(f"  rows         {len(ev.rows)}")
        if ev.extra:
            lines.append(f"  unknown keys {', '.join(sorted(ev.extra))}")
        lines.append("  summary")
        if not ev.summary:
            lines.append("    (none)")
        for entry in ev.summary:
            lines.append(f"    {entry.label}: {_number(entry.value)}")
        lines.append("  metrics")
        for profile in self.profiles:
            lines.append(
                f"    {profile.name}: n={profile.count} pass={profile.passed} fail={profile.failed}"
                f" ignore={profile.ignored} values={profile.numeric_count}"
                f" mean={_number(profile.mean)} median={_number(profile.median)}"
                f" p90={_number(profile.p90)} sd={_number(profile.standard_deviation)}"
            )
            for rationale in profile.rationales:
                lines.append(f"      {rationale.count} x {rationale.rationale}")
        return "\n".join(lines)


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


def inspect_path(path: Path | str) -> InspectionReport:
    """Metadata, summary and metric profiles of every result under ``path``."""
    result = read_artifacts([path])
    inspections = [Inspection(ev, profile_metrics(ev)) for ev in result.documents]
    return InspectionReport(inspections, result.errors)


@dataclass
class SampleListing:
    rows: list[dict[str, Any]] = field(default_factory=list)
    errors: list[ArtifactError] = field(default_factory=list)

    def to_jsonl(self) -> str:
        return "\n".join(json.dumps(row, sort_keys=True, ensure_ascii=False) for row in self.rows)

    def to_text(self) -> str:
        lines: list[str] = []
        for row in self.rows:
            marks = []
            for name, metric in row["metrics"].items():
                short = name.removeprefix("FoundationModelsBench ")
                if metric["kind"] == "score":
                    shown = _number(metric.get("value"))
                elif metric["kind"] == "pass" and metric.get("value") is False:
                    shown = "fail"
                else:
                    shown = metric["kind"]
                marks.append(f"{short}={shown}")
            where = row["source"] + (f" line {row['line']}" if row["line"] is not None else "")
            lines.append(f"{where} #{row['index']} {row['recordID'] or '-'}  " + "  ".join(marks))
        return "\n".join(lines)


def list_samples(path: Path | str) -> SampleListing:
    """One normalized row per result row, with the file (and line) it came from."""
    result = read_artifacts([path])
    rows: list[dict[str, Any]] = []
    for ev in result.documents:
        order = {name: position for position, name in enumerate(ev.metric_names)}
        for row in ev.rows:
            normalized = {"source": ev.source_name, "line": ev.line, "isJudge": ev.is_judge}
            normalized.update(row.to_dict())
            metrics = normalized["metrics"]
            normalized["metrics"] = {
                name: metrics[name] for name in sorted(metrics, key=order.__getitem__)
            }
            rows.append(normalized)
    return SampleListing(rows, result.errors)


def comparison_text(comparison: Comparison) -> str:
    """A readable comparison; verdicts appear only where a direction policy is stated."""
    lines = [
        f"baseline   {comparison.baseline.location}",
        f"candidate  {comparison.candidate.location}",
        "",
    ]
    for delta in comparison.paired:
        relative = f" ({delta.relative_delta:+.2%})" if delta.relative_delta is not None else ""
        change = f"{delta.delta:+.6g}" if delta.delta is not None else "n/a"
        verdict = f"  {delta.verdict} ({delta.direction} is better)" if delta.verdict else ""
        lines.append(
            f"{delta.label}: {_number(delta.baseline)} -> {_number(delta.candidate)}  delta {change}{relative}{verdict}"
        )
    for title, entries in (
        ("only in baseline", comparison.baseline_only),
        ("only in candidate", comparison.candidate_only),
    ):
        for entry in entries:
            lines.append(f"{title}: {entry.label} = {_number(entry.value)}")
    for outcome in comparison.gates:
        lines.append(f"gate {outcome.status.upper()}: {outcome.rule.text}: {outcome.message}")
    return "\n".join(lines)
