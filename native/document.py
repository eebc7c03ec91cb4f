"""Turn one decoded evaluation result document into an :class:`Evaluation`.

Pure: no file access. Every problem is an :class:`ArtifactError` that names
the file, the line (JSON Lines) and the JSON path inside the document.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from .errors import ArtifactError
from .json_text import TextRows, load_json
from .model import (
    Evaluation,
    ManifestEntry,
    MetricValue,
    Response,
    Row,
    StreamedRows,
    SummaryMetric,
    looks_like_judge,
)

KNOWN_TOP_LEVEL_KEYS = frozenset(
    {
        "evaluationID",
        "resultID",
        "startTime",
        "endTime",
        "durationInMilliseconds",
        "evaluationInfo",
        "reportMetadata",
        "results",
        "summary",
    }
)
"""Top-level keys the format documents; any other key is kept in ``extra``."""

INPUT_COLUMN = "Input"
RESPONSE_COLUMN = "Response"
EXPECTED_COLUMN = "Expected"


class _Locator:
    """Builds errors for one document (file, optional line)."""

    def __init__(self, path: Path, line: int | None) -> None:
        self.path = path
        self.line = line

    def error(self, message: str, where: str | None = None) -> ArtifactError:
        return ArtifactError(self.path, message, line=self.line, where=where)


def json_error_text(error: json.JSONDecodeError) -> str:
    """``not JSON (Expecting value at line 1 column 1)``."""
    return f"not JSON ({error.msg} at line {error.lineno} column {error.colno})"


def parse_document(
    data: Any,
    *,
    path: Path,
    sha256: str,
    line: int | None = None,
    manifest: ManifestEntry | None = None,
) -> Evaluation:
    """Interpret a decoded JSON value as an evaluation result document."""
    locate = _Locator(path, line)
    if not isinstance(data, dict):
        raise locate.error("not a JSON object: not an evaluation result")
    results = data.get("results")
    if not isinstance(results, list | TextRows):
        raise locate.error('no "results" array: not an evaluation result')

    rows: list[Row] | StreamedRows
    if isinstance(results, TextRows):
        rows = _streamed_rows(results, locate)
    else:
        rows = [_parse_row(index, item, locate) for index, item in enumerate(results)]
    summary = _parse_summary(data.get("summary"), locate)
    info = _parse_info(data.get("evaluationInfo"), locate)
    report_metadata = data.get("reportMetadata")
    if report_metadata is None:
        report_metadata = {}
    if not isinstance(report_metadata, dict):
        raise locate.error("not an object", "reportMetadata")

    return Evaluation(
        path=path,
        sha256=sha256,
        evaluation_id=_optional_text(data.get("evaluationID")),
        result_id=_optional_text(data.get("resultID")),
        start_time=_optional_text(data.get("startTime")),
        end_time=_optional_text(data.get("endTime")),
        duration_ms=_optional_number(
            data.get("durationInMilliseconds"), "durationInMilliseconds", locate
        ),
        info=info,
        report_metadata=report_metadata,
        rows=rows,
        summary=summary,
        extra={key: value for key, value in data.items() if key not in KNOWN_TOP_LEVEL_KEYS},
        line=line,
        manifest=manifest,
        is_judge=looks_like_judge(rows, summary),
    )


def _streamed_rows(results: TextRows, locate: _Locator) -> StreamedRows:
    """Every row checked now (the first bad one raises, naming its place) and made again, one at a time,
    whenever the rows are iterated; only the metric names and a judge evaluator are kept from this pass."""
    names: dict[str, None] = {}
    judge = False
    for index, item in enumerate(results):
        for metric in _parse_row(index, item, locate).metrics:
            names.setdefault(metric.name, None)
            judge = judge or metric.evaluator_kind not in (None, "custom")

    def make() -> Iterator[Row]:
        return (_parse_row(index, item, locate) for index, item in enumerate(results))

    return StreamedRows(len(results), make, list(names), judge)


def _optional_text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value)


def _optional_number(value: Any, where: str, locate: _Locator) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise locate.error("not a number", where)
    return float(value)


def _parse_info(value: Any, locate: _Locator) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise locate.error("not an object", "evaluationInfo")
    return {
        str(key): item if isinstance(item, str) else json.dumps(item) for key, item in value.items()
    }


def _parse_row(index: int, item: Any, locate: _Locator) -> Row:
    where = f"results[{index}]"
    if not isinstance(item, dict):
        raise locate.error("not an object", where)

    input_raw, decoded_input = _parse_input(
        item.get(INPUT_COLUMN), f"{where}.{INPUT_COLUMN}", locate
    )
    record_id = None
    if isinstance(decoded_input, dict):
        record = decoded_input.get("recordID")
        if isinstance(record, str | int) and not isinstance(record, bool):
            record_id = str(record)

    metrics: list[MetricValue] = []
    extra: dict[str, Any] = {}
    for column, value in item.items():
        if column in (INPUT_COLUMN, RESPONSE_COLUMN, EXPECTED_COLUMN):
            continue
        if isinstance(value, dict) and isinstance(value.get("kind"), str):
            metrics.append(_parse_metric(column, value))
        else:
            extra[column] = value

    return Row(
        index=index,
        input_raw=input_raw,
        input=decoded_input,
        record_id=record_id,
        response=parse_response(item.get(RESPONSE_COLUMN)) if RESPONSE_COLUMN in item else None,
        expected=item.get(EXPECTED_COLUMN),
        metrics=metrics,
        extra=extra,
    )


def _parse_input(value: Any, where: str, locate: _Locator) -> tuple[str | None, Any]:
    """The Input column holds JSON inside a string: decode it a second time."""
    if value is None:
        return None, None
    if isinstance(value, dict | list):
        # Already structured (not what the format says, but unambiguous).
        return json.dumps(value, sort_keys=True, ensure_ascii=False), value
    if not isinstance(value, str):
        raise locate.error("not a string holding JSON", where)
    try:
        return value, load_json(value)
    except json.JSONDecodeError as error:
        raise locate.error(json_error_text(error), where) from None


def parse_response(value: Any) -> Response:
    """The ``Response`` column, its value decoded once more when it holds an encoded object or array."""
    if isinstance(value, dict):
        type_name = value.get("typeName")
        stored = value.get("value")
        type_text = type_name if isinstance(type_name, str) else None
    else:
        type_text, stored = None, value
    decoded, was_decoded = _decode_structured(stored)
    return Response(
        type_name=type_text, value_raw=stored, value=decoded, decoded=was_decoded, raw=value
    )


def _decode_structured(value: Any) -> tuple[Any, bool]:
    """Decode a string that is the JSON encoding of an object or array."""
    if not isinstance(value, str):
        return value, False
    text = value.strip()
    if not text or text[0] not in "{[":
        return value, False
    try:
        decoded = load_json(text)
    except json.JSONDecodeError:
        return value, False
    if isinstance(decoded, dict | list):
        return decoded, True
    return value, False


def _parse_metric(name: str, column: dict[str, Any]) -> MetricValue:
    raw_value = column.get("value")
    value: bool | float | None
    if isinstance(raw_value, bool):
        value = raw_value
    elif isinstance(raw_value, int | float):
        value = float(raw_value)
    else:
        value = None
    evaluator_kind = column.get("evaluatorKind")
    rationale = column.get("rationale")
    return MetricValue(
        name=name,
        kind=column["kind"],
        value=value,
        evaluator_kind=evaluator_kind if isinstance(evaluator_kind, str) else None,
        rationale=rationale if isinstance(rationale, str) else None,
        raw=column,
    )


def _parse_summary(value: Any, locate: _Locator) -> list[SummaryMetric]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise locate.error("not an array", "summary")
    seen: Counter[tuple[str, str | None, str | None, str | None]] = Counter()
    entries: list[SummaryMetric] = []
    for index, item in enumerate(value):
        if not isinstance(item, dict):
            raise locate.error("not an object", f"summary[{index}]")
        for name, body in item.items():
            where = f"summary[{index}].{name}"
            if not isinstance(body, dict):
                raise locate.error("not an object", where)
            group = body.get("group")
            operation = body.get("operation")
            operation_type: Any = None
            source_metric: Any = None
            if isinstance(operation, dict):
                operation_type = operation.get("type")
                source_metric = operation.get("metric")
            elif isinstance(operation, str):
                operation_type = operation
            key = (
                name,
                group if isinstance(group, str) else None,
                operation_type if isinstance(operation_type, str) else None,
                source_metric if isinstance(source_metric, str) else None,
            )
            raw_value = body.get("value")
            number: float | None = None
            if isinstance(raw_value, int | float) and not isinstance(raw_value, bool):
                number = float(raw_value)
            entries.append(
                SummaryMetric(
                    name=key[0],
                    group=key[1],
                    operation_type=key[2],
                    source_metric=key[3],
                    occurrence=seen[key],
                    value=number,
                    raw=body,
                )
            )
            seen[key] += 1
    return entries
