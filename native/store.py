"""Evaluations result documents into the DuckDB database, beside the runs they replay.

:func:`ingest_artifacts` reads files, JSON Lines and exported folders with
:func:`fmbench.native.read_artifacts` and writes each result document in one
transaction to ``evaluations``, ``evaluation_rows``,
``evaluation_metric_values`` and ``evaluation_summary_metrics`` (schema
``ingest/schema/0002_native.sql``), through Arrow bulk inserts. A document is
keyed by the SHA-256 of its file (plus ``:<line>`` for JSON Lines): the same
bytes land once. A document that cannot be read is reported with its file,
line and place, and the rest of the batch still lands.

Rows are linked to trials inside the same transaction; runs ingested later
are linked by :func:`fmbench.native.linking.relink`, which ``fmbench ingest``
calls at the end of every batch.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import duckdb
import pyarrow as pa

from fmbench.ingest import writable
from fmbench.runfile.user_files import UnreadableFile, open_regular
from fmbench.storage.db import default_db_path
from fmbench.write_errors import as_write_error, writing

from .errors import ArtifactError
from .linking import relink
from .model import Evaluation, MetricValue, Row, SummaryMetric
from .reader import DEFAULT_LIMITS, ReadLimits, read_artifacts

Status = Literal["ingested", "duplicate", "error"]

SOURCE_SHA_KEY = "Source SHA-256"
"""The ``evaluationInfo`` key of a replay that names the run file it was written from."""

_METRIC_KEYS = frozenset({"evaluatorKind", "kind", "value", "rationale"})
_SUMMARY_KEYS = frozenset({"group", "operation", "value"})
_OPERATION_KEYS = frozenset({"metric", "type"})
_BATCH_NAME = "_fmbench_native_batch"
_ARROW_TYPES = {
    "VARCHAR": pa.string(),
    "INTEGER": pa.int32(),
    "BIGINT": pa.int64(),
    "DOUBLE": pa.float64(),
    "BOOLEAN": pa.bool_(),
    "TIMESTAMP": pa.timestamp("us"),
    "BLOB": pa.binary(),
}

Columns = dict[str, list[Any]]


@dataclass(frozen=True)
class ArtifactOutcome:
    """What happened to one result document (or to a file that gave none)."""

    path: str
    status: Status
    line: int | None = None
    evaluation_key: str | None = None
    is_judge: bool | None = None
    row_count: int = 0
    linked_row_count: int = 0
    message: str = ""

    @property
    def location(self) -> str:
        """The file's name, with the line for a JSON Lines document."""
        name = Path(self.path).name
        return name if self.line is None else f"{name} line {self.line}"


@dataclass
class ArtifactIngestReport:
    outcomes: list[ArtifactOutcome] = field(default_factory=list)

    def count(self, status: Status) -> int:
        return sum(1 for outcome in self.outcomes if outcome.status == status)

    @property
    def ok(self) -> bool:
        return self.count("error") == 0


def evaluation_key(sha256: str, line: int | None) -> str:
    """``<sha256>`` for a whole file, ``<sha256>:<line>`` for one line of JSON Lines."""
    return sha256 if line is None else f"{sha256}:{line}"


# --- writing -----------------------------------------------------------------------------


class _Tables:
    """Arrow bulk inserts typed by the database's own column types."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con
        self._schemas: dict[str, dict[str, pa.DataType]] = {}

    def _types(self, table: str) -> dict[str, pa.DataType]:
        if table not in self._schemas:
            found = self.con.execute(
                "SELECT column_name, data_type FROM information_schema.columns "
                "WHERE table_name = ? ORDER BY ordinal_position",
                [table],
            ).fetchall()
            self._schemas[table] = {name: _ARROW_TYPES[kind] for name, kind in found}
        return self._schemas[table]

    def insert(self, table: str, columns: Columns) -> None:
        if not columns or not next(iter(columns.values())):
            return
        types = self._types(table)
        batch = pa.table(
            {name: pa.array(values, type=types[name]) for name, values in columns.items()}
        )
        self.con.register(_BATCH_NAME, batch)
        try:
            names = ", ".join(f'"{name}"' for name in columns)  # names from this module only
            self.con.execute(f"INSERT INTO {table} ({names}) SELECT {names} FROM {_BATCH_NAME}")
        finally:
            self.con.unregister(_BATCH_NAME)


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _json_or_none(value: Any) -> str | None:
    return _json(value) if value else None


def _columns(rows: list[dict[str, Any]]) -> Columns:
    if not rows:
        return {}
    return {key: [row[key] for row in rows] for key in rows[0]}


def _source_sha(info: dict[str, str]) -> str | None:
    value = info.get(SOURCE_SHA_KEY)
    return value.strip().lower() if value and value.strip() else None


def evaluation_row(document: Evaluation, content: bytes, ingested_at: datetime) -> dict[str, Any]:
    """The ``evaluations`` row of a document (the file name only, never its folder)."""
    return {
        "evaluation_key": evaluation_key(document.sha256, document.line),
        "sha256": document.sha256,
        "line": document.line,
        "file_name": document.source_name,
        "evaluation_id": document.evaluation_id,
        "result_id": document.result_id,
        "start_time": document.start_time,
        "end_time": document.end_time,
        "duration_ms": document.duration_ms,
        "info_json": _json(document.info),
        "report_metadata_json": _json(document.report_metadata),
        "extra_json": _json_or_none(document.extra),
        "source_run_sha256": _source_sha(document.info),
        "test_identifier": document.manifest.test_identifier if document.manifest else None,
        "attachment_name": document.manifest.attachment_name if document.manifest else None,
        "is_judge": document.is_judge,
        "row_count": len(document.rows),
        "content": content,
        "ingested_at": ingested_at,
    }


def _row(key: str, row: Row) -> dict[str, Any]:
    response = row.response
    return {
        "evaluation_key": key,
        "row_index": row.index,
        "input_json": _json(row.input) if row.input_raw is not None else None,
        "record_id": row.record_id,
        "response_type": response.type_name if response is not None else None,
        "response_json": _json(response.raw) if response is not None else None,
        "expected_json": _json(row.expected) if row.expected is not None else None,
        "extra_json": _json_or_none(row.extra),
    }


def _metric_extra(metric: MetricValue) -> dict[str, Any]:
    """Keys of a metric column this schema has no column for, and values it could not type."""
    raw = metric.raw
    extra = {key: value for key, value in raw.items() if key not in _METRIC_KEYS}
    if "value" in raw and raw["value"] is not None and metric.value is None:
        extra["value"] = raw["value"]
    for key in ("evaluatorKind", "rationale"):
        if key in raw and raw[key] is not None and not isinstance(raw[key], str):
            extra[key] = raw[key]
    return extra


def _metric(key: str, row_index: int, ordinal: int, metric: MetricValue) -> dict[str, Any]:
    value = metric.value
    aggregate = metric.numeric
    if aggregate is not None and not math.isfinite(aggregate):
        aggregate = None
    return {
        "evaluation_key": key,
        "row_index": row_index,
        "ordinal": ordinal,
        "metric": metric.name,
        "evaluator_kind": metric.evaluator_kind,
        "kind": metric.kind,
        "value_bool": value if isinstance(value, bool) else None,
        "value_number": value if isinstance(value, float) else None,
        "aggregate_value": aggregate,
        "rationale": metric.rationale,
        "extra_json": _json_or_none(_metric_extra(metric)),
    }


def _summary_extra(entry: SummaryMetric) -> dict[str, Any]:
    raw = entry.raw
    extra = {key: value for key, value in raw.items() if key not in _SUMMARY_KEYS}
    operation = raw.get("operation")
    if operation is not None and (
        not isinstance(operation, dict | str)
        or (isinstance(operation, dict) and set(operation) - _OPERATION_KEYS)
    ):
        extra["operation"] = operation
    if raw.get("group") is not None and entry.group is None:
        extra["group"] = raw["group"]
    if raw.get("value") is not None and entry.value is None:
        extra["value"] = raw["value"]
    return extra


def _summary(key: str, ordinal: int, entry: SummaryMetric) -> dict[str, Any]:
    return {
        "evaluation_key": key,
        "ordinal": ordinal,
        "name": entry.name,
        "group_name": entry.group,
        "operation_type": entry.operation_type,
        "source_metric": entry.source_metric,
        "occurrence": entry.occurrence,
        "value": entry.value,
        "extra_json": _json_or_none(_summary_extra(entry)),
    }


def _linked_count(con: duckdb.DuckDBPyConnection, key: str) -> int:
    found = con.execute(
        "SELECT count(linked_run_id) FROM evaluation_rows WHERE evaluation_key = ?", [key]
    ).fetchone()
    return int(found[0]) if found else 0


def store_evaluation(
    tables: _Tables, document: Evaluation, content: bytes, path: str
) -> ArtifactOutcome:
    """Write one document and link its rows in one transaction; a duplicate adds nothing."""
    con = tables.con
    key = evaluation_key(document.sha256, document.line)
    base = {
        "path": path,
        "line": document.line,
        "evaluation_key": key,
        "is_judge": document.is_judge,
        "row_count": len(document.rows),
    }
    if con.execute("SELECT 1 FROM evaluations WHERE evaluation_key = ?", [key]).fetchone():
        return ArtifactOutcome(
            status="duplicate",
            linked_row_count=_linked_count(con, key),
            message="same bytes already ingested",
            **base,
        )
    now = datetime.now(UTC).replace(tzinfo=None)
    con.execute("BEGIN TRANSACTION")
    try:
        tables.insert(
            "evaluations", {k: [v] for k, v in evaluation_row(document, content, now).items()}
        )
        tables.insert("evaluation_rows", _columns([_row(key, row) for row in document.rows]))
        tables.insert(
            "evaluation_metric_values",
            _columns(
                [
                    _metric(key, row.index, ordinal, metric)
                    for row in document.rows
                    for ordinal, metric in enumerate(row.metrics)
                ]
            ),
        )
        tables.insert(
            "evaluation_summary_metrics",
            _columns(
                [_summary(key, ordinal, entry) for ordinal, entry in enumerate(document.summary)]
            ),
        )
        relink(con, key)
        linked = _linked_count(con, key)
        con.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(duckdb.TransactionException):  # a commit that failed has ended it already
            con.execute("ROLLBACK")
        raise
    return ArtifactOutcome(status="ingested", linked_row_count=linked, **base)


# --- reading the original bytes back -------------------------------------------------------


class _Contents:
    """The original bytes of each document, read once per file and checked against its hash."""

    def __init__(self) -> None:
        self._files: dict[Path, bytes] = {}

    def of(self, document: Evaluation) -> bytes:
        path = document.path
        if path not in self._files:
            try:
                with open_regular(path) as f:  # its hash is checked: a changed file is refused below
                    self._files[path] = f.read()
            except (OSError, UnreadableFile) as error:
                raise ArtifactError(
                    path, f"cannot be read again ({getattr(error, 'reason', None) or error.strerror}); check it and ingest it again"
                ) from None
        data = self._files[path]
        if hashlib.sha256(data).hexdigest() != document.sha256:
            raise ArtifactError(
                path, "changed while it was being ingested; ingest it again once it is written"
            )
        if document.line is None:
            return data
        text = data.decode("utf-8-sig")
        return text.split("\n")[(document.line or 1) - 1].encode("utf-8")


def ingest_artifacts(
    paths: Iterable[str | os.PathLike[str]],
    db: str | os.PathLike[str] | None = None,
    limits: ReadLimits = DEFAULT_LIMITS,
) -> ArtifactIngestReport:
    """Ingest result documents under ``paths`` into the database; report each one.

    Outcomes are ordered by file and line. A file (or line) that cannot be read
    is an ``error`` outcome naming it; the other documents still land.
    """
    given = [Path(path) for path in paths]
    result = read_artifacts(given, limits)
    outcomes: list[ArtifactOutcome] = [
        ArtifactOutcome(
            path=str(error.path),
            status="error",
            line=error.line,
            message=f"{error}; fix or remove it and ingest it again",
        )
        for error in result.errors
    ]
    contents = _Contents()
    with writable(db) as con:
        tables = _Tables(con)
        for document in result.documents:
            try:
                outcomes.append(
                    store_evaluation(tables, document, contents.of(document), str(document.path))
                )
            except ArtifactError as error:
                outcomes.append(
                    ArtifactOutcome(
                        path=str(document.path),
                        status="error",
                        line=document.line,
                        message=str(error),
                    )
                )
            except (duckdb.Error, pa.ArrowException) as error:
                refused = as_write_error(error, default_db_path(db), f"{document.location} into the database")
                if refused is not None:  # a full disk or a read-only place: the rest would fail the same way
                    raise refused from None
                outcomes.append(
                    ArtifactOutcome(
                        path=str(document.path),
                        status="error",
                        line=document.line,
                        message=(
                            f"{document.location}: not stored, the database is unchanged for it "
                            f"({error}); try again"
                        ),
                    )
                )
        with writing(default_db_path(db), "the database's checkpoint (its log folded into the file)"):
            con.execute("CHECKPOINT")
    outcomes.sort(key=lambda outcome: (outcome.path, outcome.line or 0))
    return ArtifactIngestReport(outcomes)
