"""A run file made ready to write: read, validated, judged and laid out as Arrow tables.

Preparing is the Python half of an ingest (pydantic validation, the figures,
the rows); writing is DuckDB's. A big batch prepares files in worker
processes while the parent writes the ones before them, each still in its own
transaction and in the order given; a small batch (or one file) prepares in
process. Either way the same functions run, so the database holds the same
rows.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from fmbench.analysis.revisions import Registry
from fmbench.analysis.run import RunAnalysis, analyze_bytes, read_annotations_for
from fmbench.errors import AnnotationError, FmbenchError, RunFileError
from fmbench.runfile.annotations import Annotations
from fmbench.runfile.reader import DEFAULT_MAX_TRIALS, gc_paused
from fmbench.runfile.user_files import read_run_file
from fmbench.storage.originals import stored_form

from . import rows as R

ARROW_TYPES = {
    "VARCHAR": pa.string(),
    "INTEGER": pa.int32(),
    "BIGINT": pa.int64(),
    "UBIGINT": pa.uint64(),
    "DOUBLE": pa.float64(),
    "BOOLEAN": pa.bool_(),
    "TIMESTAMP": pa.timestamp("us"),
    "BLOB": pa.binary(),
}

RUN_TABLES = ("runs", *(name for name, _ in R.TABLES), "annotations")
"""The tables one run file fills, in the order they are written (``sources`` aside)."""

Schemas = Mapping[str, pa.Schema]

PARALLEL_MIN_FILES = 4
PARALLEL_MIN_BYTES = 32 * 2**20
"""Below this much work, starting worker processes costs more than it saves."""


def table_schemas(con: duckdb.DuckDBPyConnection, tables: Sequence[str] = ("sources", *RUN_TABLES)) -> dict[str, pa.Schema]:
    """Each table's columns, in order, as Arrow types (the database's own column types)."""
    out: dict[str, pa.Schema] = {}
    for table in tables:
        cols = con.execute(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_name = ? AND table_schema = 'main' ORDER BY ordinal_position",
            [table],
        ).fetchall()
        out[table] = pa.schema([(name, ARROW_TYPES[kind]) for name, kind in cols])
    return out


_UTC = pa.timestamp("us", tz="UTC")
_POOL = pa.system_memory_pool()
"""Arrow's buffers come from malloc, which hands memory back once DuckDB holds the rows; the default
pool keeps it, which raised the peak of ingesting one big run by about 40 MB."""


def _array(values: list[Any], kind: pa.DataType) -> pa.Array:
    if pa.types.is_timestamp(kind):
        # Zone-aware times become UTC and naive ones are taken as UTC, exactly as rows.utc() does; the
        # values are then read as naive (the same microseconds: no cast, and no pyarrow.compute to import).
        return pa.array(values, type=_UTC, memory_pool=_POOL).view(kind)
    return pa.array(values, type=kind, memory_pool=_POOL)


def to_arrow(columns: R.Columns, schema: pa.Schema) -> pa.Table:
    """Columns as a table with every column of ``schema``, in its order (absent columns are null)."""
    n = len(next(iter(columns.values()))) if columns else 0
    arrays = [
        _array(columns[f.name], f.type) if f.name in columns else pa.nulls(n, type=f.type, memory_pool=_POOL)
        for f in schema
    ]
    return pa.Table.from_arrays(arrays, schema=schema)


# --- results --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Failed:
    """The file cannot be ingested; ``message`` says why and where (``line`` and ``column`` too, for broken JSON)."""

    message: str
    line: int | None = None
    column: int | None = None

    @classmethod
    def of(cls, exc: Exception) -> Failed:
        line, column = exc.position if isinstance(exc, RunFileError) else (None, None)
        return cls(str(exc), line, column)


@dataclass(frozen=True)
class Known:
    """These bytes (with this sidecar) were in the database when the batch started: nothing was analyzed."""

    sha256: str
    annotation_sha: str | None


@dataclass(frozen=True)
class PreparedRun:
    """A judged run, ready to write: every table's rows (``ingested_at`` is set when it is written).

    ``stored`` is the file as the database keeps it (gzipped, :func:`fmbench.storage.originals.stored_form`);
    ``size`` is the file's own size.
    """

    run_id: str
    sha256: str
    file_name: str
    verdict: str
    stored: bytes
    size: int
    sidecar: bytes | None
    annotation_sha: str | None
    tables: dict[str, pa.Table]
    warnings: tuple[str, ...] = ()
    """Lines about its sidecar (unreadable, or an unknown key): the run is written all the same."""

    def __reduce__(self) -> tuple[Any, ...]:
        """Handed from a worker with each table as one Arrow IPC stream: a straight copy of its buffers
        (pickling a table walks every array, on both sides, at about three times the CPU)."""
        fields = (
            self.run_id, self.sha256, self.file_name, self.verdict, self.stored, self.size, self.sidecar,
            self.annotation_sha,
        )
        streams = {name: _stream(t) for name, t in self.tables.items()}
        return (_prepared_from_streams, (*fields, streams, self.warnings))


def _stream(table: pa.Table) -> pa.Buffer:
    sink = pa.BufferOutputStream(memory_pool=_POOL)
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    return sink.getvalue()


def _prepared_from_streams(
    run_id: str, sha256: str, file_name: str, verdict: str, stored: bytes, size: int, sidecar: bytes | None,
    annotation_sha: str | None, streams: dict[str, pa.Buffer], warnings: tuple[str, ...] = (),
) -> PreparedRun:
    tables = {name: pa.ipc.open_stream(stream).read_all() for name, stream in streams.items()}
    return PreparedRun(run_id, sha256, file_name, verdict, stored, size, sidecar, annotation_sha, tables, warnings)


Prepared = PreparedRun | Known | Failed


@dataclass(frozen=True)
class _Read:
    data: bytes
    sha256: str
    annotations: Annotations | None
    sidecar: bytes | None


def read_file(path: Path, max_bytes: int) -> _Read | Failed:
    """The file's bytes, their SHA-256 and its sidecar; a file that cannot be read is :class:`Failed`."""
    try:
        data = read_run_file(path, max_bytes)
        annotations, sidecar = read_annotations_for(path)
        return _Read(data, hashlib.sha256(data).hexdigest(), annotations, sidecar)
    except (FmbenchError, AnnotationError) as exc:
        return Failed.of(exc)
    except OSError as exc:
        return Failed(f"{path.name}: cannot be read: {exc.strerror}")


def prepared_from(analysis: RunAnalysis, data: bytes, sidecar: bytes | None, schemas: Schemas) -> PreparedRun:
    """A judged run as the Arrow tables it is written as."""
    tables = {"runs": to_arrow({k: [v] for k, v in R.run_row(analysis, None).items()}, schemas["runs"])}
    for table, columns in R.run_columns(analysis).items():
        if columns and next(iter(columns.values())):
            tables[table] = to_arrow(columns, schemas[table])
    if sidecar is not None:
        row = R.annotation_row(analysis, sidecar, None)
        if row:
            tables["annotations"] = to_arrow({k: [v] for k, v in row.items()}, schemas["annotations"])
    record = analysis.record
    return PreparedRun(
        run_id=record.run_id,
        sha256=record.sha256,
        file_name=record.file_name,
        verdict=analysis.verdict.level,
        stored=stored_form(data),
        size=len(data),
        sidecar=sidecar,
        annotation_sha=analysis.annotations.sha256 if analysis.annotations else None,
        tables=tables,
        warnings=analysis.annotations.problems if analysis.annotations else (),
    )


def prepare(
    path: Path,
    registry: Registry,
    max_bytes: int,
    schemas: Schemas,
    known: Callable[[str], tuple[bool, str | None]] | None = None,
    max_trials: int | None = DEFAULT_MAX_TRIALS,
) -> Prepared:
    """Read, validate, judge and lay out one run file (of at most ``max_trials`` trials).

    ``known(sha256)`` says whether those bytes are stored already, and with
    which sidecar; bytes stored with the same sidecar (or none given) are not
    analyzed again.
    """
    with gc_paused():
        # The analysis is freed as _prepare returns, before the collector runs again: it would otherwise
        # walk every object of the run once, to free them a moment later anyway.
        return _prepare(path, registry, max_bytes, schemas, known, max_trials)


def _prepare(
    path: Path,
    registry: Registry,
    max_bytes: int,
    schemas: Schemas,
    known: Callable[[str], tuple[bool, str | None]] | None,
    max_trials: int | None,
) -> Prepared:
    read = read_file(path, max_bytes)
    if isinstance(read, Failed):
        return read
    new_sidecar = read.annotations.sha256 if read.annotations else None
    if known is not None:
        stored, stored_sidecar = known(read.sha256)
        if stored and (new_sidecar is None or new_sidecar == stored_sidecar):
            return Known(read.sha256, new_sidecar)
    try:
        analysis = analyze_bytes(
            read.data, path.name, registry=registry, annotations=read.annotations, max_bytes=max_bytes,
            sha256=read.sha256, max_trials=max_trials,
        )
    except (FmbenchError, AnnotationError) as exc:
        return Failed.of(exc)
    return prepared_from(analysis, read.data, read.sidecar, schemas)


# --- worker processes -----------------------------------------------------------------------

_worker: dict[str, Any] = {}
WORKER_NICENESS = 5
AHEAD = 3
"""Files prepared ahead of the writer, per worker: enough that a run of big files does not stall it."""


def _init_worker(
    registry: Registry, max_bytes: int, schemas: Schemas, known: dict[str, str | None],
    max_trials: int | None = DEFAULT_MAX_TRIALS,
) -> None:
    _worker.update(registry=registry, max_bytes=max_bytes, schemas=schemas, known=known, max_trials=max_trials)
    if hasattr(os, "nice"):
        # The writer is the batch's critical path; workers take the CPU it leaves.
        os.nice(WORKER_NICENESS)


def _known_in_snapshot(sha256: str) -> tuple[bool, str | None]:
    known: dict[str, str | None] = _worker["known"]
    return (sha256 in known), known.get(sha256)


def _prepare_in_worker(path: Path) -> Prepared:
    """One file prepared in a worker; it comes back to the writer through the pool (see :meth:`PreparedRun.__reduce__`)."""
    return prepare(
        path, _worker["registry"], _worker["max_bytes"], _worker["schemas"], _known_in_snapshot,
        max_trials=_worker["max_trials"],
    )


def default_workers(files: Sequence[Path]) -> int:
    """Worker processes for a batch: one per core for a big batch, none for a small one (or in a worker).

    Workers are started with ``spawn``: a script that ingests a big batch at import
    time must do so under ``if __name__ == "__main__":``, as for any process pool.
    """
    cores = os.cpu_count() or 1
    if cores < 2 or len(files) < PARALLEL_MIN_FILES or multiprocessing.parent_process() is not None:
        return 0
    total = 0
    for f in files:
        try:
            total += f.stat().st_size
        except OSError:
            continue
    return min(cores, 8) if total >= PARALLEL_MIN_BYTES else 0


def stored_snapshot(con: duckdb.DuckDBPyConnection) -> dict[str, str | None]:
    """SHA-256 of every stored run file with its sidecar's SHA-256 (``None`` without one)."""
    return dict(
        con.execute(
            "SELECT s.sha256, a.sha256 FROM sources s LEFT JOIN runs r ON r.source_sha256 = s.sha256 "
            "LEFT JOIN annotations a ON a.run_id = r.run_id"
        ).fetchall()
    )


class Preparer:
    """Prepares files ahead of the writer, in order, in ``workers`` processes (0: in this process, on demand)."""

    def __init__(
        self,
        files: Sequence[Path],
        *,
        registry: Registry,
        max_bytes: int,
        schemas: Schemas,
        workers: int,
        stored: dict[str, str | None],
        max_trials: int | None = DEFAULT_MAX_TRIALS,
    ) -> None:
        self.files = list(files)
        self.registry = registry
        self.max_bytes = max_bytes
        self.max_trials = max_trials
        self.schemas = schemas
        self.workers = workers
        self._pool: ProcessPoolExecutor | None = None
        self._pending: deque[Future[Prepared]] = deque()
        self._next = 0
        if workers > 0 and self.files:
            self._pool = ProcessPoolExecutor(
                max_workers=workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_init_worker,
                initargs=(registry, max_bytes, schemas, stored, max_trials),
            )

    def __enter__(self) -> Preparer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._pool is not None:
            for f in self._pending:
                f.cancel()
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def _fill(self) -> None:
        assert self._pool is not None
        while self._next < len(self.files) and len(self._pending) < AHEAD * self.workers:
            self._pending.append(self._pool.submit(_prepare_in_worker, self.files[self._next]))
            self._next += 1

    @property
    def parallel(self) -> bool:
        return self._pool is not None

    def take(self) -> Prepared:
        """The next file, prepared by a worker (files come back in the order given)."""
        if self._pool is None:
            raise RuntimeError("no worker processes: prepare in process with the live database")
        self._fill()
        future = self._pending.popleft()
        result = future.result()
        self._fill()
        return result
