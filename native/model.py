"""What an Evaluations result document holds, as plain dataclasses.

The reader fills these from a ``.xcevalresult`` document; nothing here does
any input or output. Unknown keys and columns are kept (``extra``) so a later
version of the format loses nothing on the way through.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCHMARK_METRIC_PREFIX = "FoundationModelsBench"
"""Every deterministic replay metric of the benchmark starts with this."""

KNOWN_KINDS = ("pass", "fail", "score", "ignore")
"""Metric kinds the format documents; any other kind is kept as written."""

JUDGE_METRIC_WORDS = ("helpfulness", "clarity", "completeness")
"""Subjective criteria a model judge scores (never a benchmark metric)."""


@dataclass(frozen=True)
class MetricValue:
    """One metric column of one row, such as ``{"kind": "pass", "value": true}``."""

    name: str
    kind: str
    value: bool | float | None
    evaluator_kind: str | None = None
    rationale: str | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    @property
    def ignored(self) -> bool:
        return self.kind == "ignore"

    @property
    def fails(self) -> bool:
        """The row fails this metric: kind ``fail``, or kind ``pass`` with value false."""
        return self.kind == "fail" or (self.kind == "pass" and self.value is False)

    @property
    def passes(self) -> bool:
        return self.kind == "pass" and self.value is not False

    @property
    def numeric(self) -> float | None:
        """The value that enters an aggregate: pass 1, fail 0, a score its number.

        ``ignore`` rows, scores without a number and unknown kinds give ``None``
        and stay out of every aggregate.
        """
        if self.kind == "fail":
            return 0.0
        if self.kind == "pass":
            return 0.0 if self.value is False else 1.0
        if self.kind == "score" and self.value is not None:
            return float(self.value)
        return None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"kind": self.kind, "value": self.value}
        if self.evaluator_kind is not None:
            out["evaluatorKind"] = self.evaluator_kind
        if self.rationale is not None:
            out["rationale"] = self.rationale
        return out


@dataclass(frozen=True)
class Response:
    """The ``Response`` column: ``{"typeName": "String", "value": "…"}``.

    ``value_raw`` is the value as stored; ``value`` is the same value decoded
    once more when it is a JSON-encoded string of an object or array.
    """

    type_name: str | None
    value_raw: Any
    value: Any
    decoded: bool = False
    raw: Any = field(compare=False, repr=False, default=None)

    @property
    def empty(self) -> bool:
        return self.value_raw in (None, "")


@dataclass
class Row:
    """One entry of ``results``: the sample, the response and its metric columns."""

    index: int
    input_raw: str | None
    input: Any
    record_id: str | None
    response: Response | None
    expected: Any
    metrics: list[MetricValue]
    extra: dict[str, Any] = field(default_factory=dict)

    def metric(self, name: str) -> MetricValue | None:
        for metric in self.metrics:
            if metric.name == name:
                return metric
        return None

    @property
    def failed_metrics(self) -> list[MetricValue]:
        return [m for m in self.metrics if m.fails]

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready normalized row (one line of ``native samples --jsonl``)."""
        response: dict[str, Any] | None = None
        if self.response is not None:
            response = {"typeName": self.response.type_name, "value": self.response.value}
        return {
            "index": self.index,
            "recordID": self.record_id,
            "input": self.input,
            "response": response,
            "expected": self.expected,
            "metrics": {m.name: m.to_dict() for m in self.metrics},
            "extra": self.extra,
        }


class StreamedRows:
    """A document's rows made again each time they are iterated, never all kept: what a command that only
    passes rows through reads (``native samples``). Holds what the rest of a document's reading needs from
    every row, gathered while each was checked: the metric names in first-seen order and whether a metric
    column names a judge as its evaluator."""

    def __init__(
        self, count: int, make: Callable[[], Iterator[Row]], metric_names: list[str], judge_evaluator: bool
    ) -> None:
        self._count, self._make = count, make
        self.metric_names = metric_names
        self.judge_evaluator = judge_evaluator

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Row]:
        return self._make()


def identity_label(
    name: str, group: str | None, operation: str | None, source: str | None, occurrence: int
) -> str:
    """A readable summary identity: ``name [group] mean(source) #2``.

    The source metric is shown only when it differs from the name; the
    occurrence only from the second entry of the same identity on (1-based).
    """
    text = name
    if group:
        text += f" [{group}]"
    text += f" {operation or '?'}"
    if source and source != name:
        text += f"({source})"
    if occurrence:
        text += f" #{occurrence + 1}"
    return text


class Identified:
    """Summary entries (and pairs of them) named by (name, group, operation, source metric, occurrence)."""

    name: str
    group: str | None
    operation_type: str | None
    source_metric: str | None
    occurrence: int

    @property
    def identity(self) -> tuple[str, str | None, str | None, str | None, int]:
        return (self.name, self.group, self.operation_type, self.source_metric, self.occurrence)

    @property
    def label(self) -> str:
        return identity_label(*self.identity)

    def identity_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "group": self.group,
            "operation": self.operation_type,
            "metric": self.source_metric,
            "occurrence": self.occurrence,
        }


@dataclass(frozen=True)
class SummaryMetric(Identified):
    """One summary entry, identified by (name, group, operation, source metric, occurrence).

    ``occurrence`` counts the entries with the same other four parts that came
    before this one in the document (0 for the first).
    """

    name: str
    group: str | None
    operation_type: str | None
    source_metric: str | None
    occurrence: int
    value: float | None
    raw: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {**self.identity_dict(), "value": self.value}


@dataclass(frozen=True)
class ManifestEntry:
    """What ``xcresulttool export evaluations`` said about an exported file."""

    test_identifier: str | None
    attachment_name: str | None

    def to_dict(self) -> dict[str, Any]:
        return {"testIdentifier": self.test_identifier, "attachmentName": self.attachment_name}


@dataclass
class Evaluation:
    """One evaluation result document (one file, or one line of a JSON Lines file)."""

    path: Path
    sha256: str
    evaluation_id: str | None
    result_id: str | None
    start_time: str | None
    end_time: str | None
    duration_ms: float | None
    info: dict[str, str]
    report_metadata: dict[str, Any]
    rows: list[Row] | StreamedRows
    summary: list[SummaryMetric]
    extra: dict[str, Any] = field(default_factory=dict)
    line: int | None = None
    manifest: ManifestEntry | None = None
    is_judge: bool = False

    @property
    def source_name(self) -> str:
        """The file name (no folder), as shown to a reader."""
        return self.path.name

    @property
    def location(self) -> str:
        text = str(self.path)
        if self.line is not None:
            text += f" line {self.line}"
        return text

    @property
    def metric_names(self) -> list[str]:
        """Metric columns in display order: ``ColumnOrdering`` first, then as first seen."""
        seen: dict[str, None] = {}
        if isinstance(self.rows, StreamedRows):
            seen = dict.fromkeys(self.rows.metric_names)
        for row in self.rows if isinstance(self.rows, list) else ():
            for metric in row.metrics:
                seen.setdefault(metric.name, None)
        ordering = self.report_metadata.get("ColumnOrdering")
        ordered: list[str] = []
        if isinstance(ordering, list):
            ordered = [name for name in ordering if isinstance(name, str) and name in seen]
        return ordered + [name for name in seen if name not in ordered]

    def to_dict(self) -> dict[str, Any]:
        """Metadata and summary, JSON-ready (rows are listed by ``Row.to_dict``)."""
        return {
            "source": self.source_name,
            "line": self.line,
            "sha256": self.sha256,
            "evaluationID": self.evaluation_id,
            "resultID": self.result_id,
            "startTime": self.start_time,
            "endTime": self.end_time,
            "durationInMilliseconds": self.duration_ms,
            "evaluationInfo": self.info,
            "reportMetadata": self.report_metadata,
            "manifest": self.manifest.to_dict() if self.manifest else None,
            "isJudge": self.is_judge,
            "rowCount": len(self.rows),
            "summary": [s.to_dict() for s in self.summary],
            "extra": self.extra,
        }


def looks_like_judge(rows: list[Row] | StreamedRows, summary: list[SummaryMetric]) -> bool:
    """Whether a document holds subjective model-judge scores.

    True when any metric column has an ``evaluatorKind`` other than
    ``custom`` (``modelJudge``, ``llmJudge`` …), or when a metric or summary
    name outside the benchmark's ``FoundationModelsBench …`` names mentions
    helpfulness, clarity or completeness.
    """
    names: set[str] = set()
    if isinstance(rows, StreamedRows):
        if rows.judge_evaluator:
            return True
        names.update(rows.metric_names)
    for row in rows if isinstance(rows, list) else ():
        for metric in row.metrics:
            if metric.evaluator_kind not in (None, "custom"):
                return True
            names.add(metric.name)
    for entry in summary:
        names.add(entry.name)
        if entry.source_metric:
            names.add(entry.source_metric)
    for name in names:
        if name.startswith(BENCHMARK_METRIC_PREFIX):
            continue
        lowered = name.lower()
        if any(word in lowered for word in JUDGE_METRIC_WORDS):
            return True
    return False
