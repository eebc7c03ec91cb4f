"""The ingest step: run files (and their sidecars) into the DuckDB database.

Each file is read, validated, judged and written in one transaction: it lands
whole or not at all. The same bytes twice add nothing. A bad file is reported
with its place and the rest of the batch goes on.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import duckdb
import pyarrow as pa

from fmbench.analysis import RunAnalysis, analyze_bytes, read_annotations_for
from fmbench.annotations import is_sidecar
from fmbench.db import connect, readers_waiting
from fmbench.errors import AnnotationError, FmbenchError, Problem, RunFileError
from fmbench.native.linking import relink
from fmbench.reader import DEFAULT_MAX_BYTES
from fmbench.record import run_id_for
from fmbench.revisions import Registry, load_registry

from . import rows as R

Status = Literal["ingested", "duplicate", "updated", "error"]

RUN_SUFFIXES = (".json",)
READER_WINDOW_SECONDS = 0.25
"""How long a batch steps aside, between two files, when ``serve``'s readers are waiting."""
_NOT_RUNS = frozenset({"manifest.json", "package.json"})


@dataclass(frozen=True)
class FileOutcome:
    path: str
    status: Status
    run_id: str | None = None
    verdict: str | None = None
    message: str = ""


@dataclass
class IngestReport:
    outcomes: list[FileOutcome] = field(default_factory=list)

    def count(self, status: Status) -> int:
        return sum(1 for o in self.outcomes if o.status == status)

    @property
    def ok(self) -> bool:
        return self.count("error") == 0


def collect_run_files(paths: Iterable[str | os.PathLike[str]]) -> tuple[list[Path], list[FileOutcome]]:
    """Files named directly, and every ``*.json`` below folders (recursively, sorted)."""
    found: list[Path] = []
    missing: list[FileOutcome] = []
    for given in paths:
        p = Path(given)
        if p.is_dir():
            found += sorted(
                q
                for q in p.rglob("*")
                if q.is_file() and q.suffix in RUN_SUFFIXES and q.name not in _NOT_RUNS and not is_sidecar(q)
            )
        elif p.is_file():
            found.append(p)
        else:
            missing.append(FileOutcome(str(p), "error", message=f"{p}: no such file or folder"))
    return found, missing


# --- writing ---------------------------------------------------------------------------

_ARROW_TYPES = {
    "VARCHAR": pa.string(),
    "INTEGER": pa.int32(),
    "BIGINT": pa.int64(),
    "UBIGINT": pa.uint64(),
    "DOUBLE": pa.float64(),
    "BOOLEAN": pa.bool_(),
    "TIMESTAMP": pa.timestamp("us"),
    "BLOB": pa.binary(),
}


class _Writer:
    """Bulk inserts through Arrow, typed by the database's own column types."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con
        self._schemas: dict[str, pa.Schema] = {}

    def schema(self, table: str) -> pa.Schema:
        if table not in self._schemas:
            cols = self.con.execute(
                "SELECT column_name, data_type FROM information_schema.columns "
                "WHERE table_name = ? ORDER BY ordinal_position",
                [table],
            ).fetchall()
            self._schemas[table] = pa.schema([(name, _ARROW_TYPES[kind]) for name, kind in cols])
        return self._schemas[table]

    def insert(self, table: str, columns: R.Columns) -> None:
        if not columns or not next(iter(columns.values())):
            return
        schema = self.schema(table)
        arrow = pa.table({name: pa.array(columns[name], type=schema.field(name).type) for name in columns})
        self.con.register("_fmbench_batch", arrow)
        try:
            names = ", ".join(f'"{n}"' for n in columns)  # column names come from our own code
            self.con.execute(f"INSERT INTO {table} ({names}) SELECT {names} FROM _fmbench_batch")
        finally:
            self.con.unregister("_fmbench_batch")

    def insert_row(self, table: str, row: dict[str, Any]) -> None:
        self.insert(table, {k: [v] for k, v in row.items()})


CHILD_TABLES = (*tuple(name for name, _ in R.TABLES), "annotations")


def _delete_run(con: duckdb.DuckDBPyConnection, run_id: str) -> None:
    for table in CHILD_TABLES:
        con.execute(f"DELETE FROM {table} WHERE run_id = ?", [run_id])
    con.execute("DELETE FROM runs WHERE run_id = ?", [run_id])


def write_run(
    writer: _Writer,
    analysis: RunAnalysis,
    data: bytes,
    sidecar: bytes | None,
    *,
    replace: bool = False,
    checkpoint: Callable[[str], None] | None = None,
) -> None:
    """Write one judged run in one transaction."""
    con = writer.con
    now = datetime.now(UTC).replace(tzinfo=None)
    tick = checkpoint or (lambda _stage: None)
    con.execute("BEGIN TRANSACTION")
    try:
        if replace:
            _delete_run(con, analysis.record.run_id)
        else:
            writer.insert_row(
                "sources",
                {
                    "sha256": analysis.record.sha256,
                    "file_name": analysis.record.file_name,
                    "size_bytes": len(data),
                    "content": data,
                    "ingested_at": now,
                },
            )
            tick("sources")
        writer.insert_row("runs", R.run_row(analysis, now))
        tick("runs")
        for table, build in R.TABLES:
            writer.insert(table, build(analysis))
            tick(table)
        if sidecar is not None:
            row = R.annotation_row(analysis, sidecar, now)
            if row:
                writer.insert_row("annotations", row)
                tick("annotations")
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def _stored_annotation_sha(con: duckdb.DuckDBPyConnection, run_id: str) -> str | None:
    row = con.execute("SELECT sha256 FROM annotations WHERE run_id = ?", [run_id]).fetchone()
    return row[0] if row else None


def _test_checkpoint(file_name: str) -> Callable[[str], None] | None:
    """Crash-safety test hook: ``FMBENCH_TEST_KILL_AT=<file name>:<stage>`` kills the process there."""
    spec = os.environ.get("FMBENCH_TEST_KILL_AT")
    if not spec:
        return None
    target_file, _, target_stage = spec.rpartition(":")
    if target_file != file_name:
        return None

    def checkpoint(stage: str) -> None:
        if stage == target_stage:
            os.kill(os.getpid(), 9)

    return checkpoint


def ingest_file(
    con: duckdb.DuckDBPyConnection,
    path: Path,
    *,
    registry: Registry,
    max_bytes: int = DEFAULT_MAX_BYTES,
    writer: _Writer | None = None,
) -> FileOutcome:
    """Ingest one run file and its sidecar; never raises for bad data, reports it."""
    writer = writer or _Writer(con)
    name = str(path)
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise RunFileError(
                path.name,
                [
                    Problem(
                        "(file)",
                        f"{size:,} bytes is larger than the {max_bytes:,}-byte limit for a run file; "
                        "raise it with --max-bytes if this really is one run",
                    )
                ],
            )
        data = path.read_bytes()
        sha = hashlib.sha256(data).hexdigest()
        annotations, sidecar = read_annotations_for(path)
        run_id = run_id_for(sha)
        exists = con.execute("SELECT 1 FROM sources WHERE sha256 = ?", [sha]).fetchone()
        if exists:
            stored_sidecar = _stored_annotation_sha(con, run_id)
            new_sidecar = annotations.sha256 if annotations else None
            if new_sidecar is None or new_sidecar == stored_sidecar:
                verdict = con.execute("SELECT verdict FROM runs WHERE run_id = ?", [run_id]).fetchone()
                return FileOutcome(name, "duplicate", run_id, verdict[0] if verdict else None, "same bytes already ingested")
            analysis = analyze_bytes(data, path.name, registry=registry, annotations=annotations, max_bytes=max_bytes)
            write_run(writer, analysis, data, sidecar, replace=True, checkpoint=_test_checkpoint(path.name))
            return FileOutcome(name, "updated", run_id, analysis.verdict.level, "annotations updated")
        analysis = analyze_bytes(data, path.name, registry=registry, annotations=annotations, max_bytes=max_bytes)
        write_run(writer, analysis, data, sidecar, checkpoint=_test_checkpoint(path.name))
        return FileOutcome(name, "ingested", run_id, analysis.verdict.level)
    except (FmbenchError, AnnotationError) as exc:
        return FileOutcome(name, "error", message=str(exc))
    except OSError as exc:
        return FileOutcome(name, "error", message=f"{path.name}: cannot be read: {exc.strerror}")


def ingest_paths(
    paths: Sequence[str | os.PathLike[str]],
    db: str | os.PathLike[str] | None = None,
    *,
    registry: Registry | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    progress: Callable[[int, int, str], None] | None = None,
) -> IngestReport:
    """Ingest files and folders into the database; return what happened to each file."""
    registry = registry or load_registry()
    files, report_missing = collect_run_files(paths)
    report = IngestReport(list(report_missing))
    done = 0
    while True:
        with connect(db) as con:
            writer = _Writer(con)
            while done < len(files):
                path = files[done]
                report.outcomes.append(ingest_file(con, path, registry=registry, max_bytes=max_bytes, writer=writer))
                done += 1
                if progress:
                    progress(done, len(files), path.name)
                if done < len(files) and readers_waiting(db):
                    break  # let `serve`'s readers in between two files, then carry on
            else:
                relink(con)
                con.execute("CHECKPOINT")
                return report
        time.sleep(READER_WINDOW_SECONDS)
