"""The ingest step: run files (and their sidecars) into the DuckDB database.

Each file is read, validated, judged and written in one transaction: it lands
whole or not at all. The same bytes twice add nothing. A bad file is reported
with its place and the rest of the batch goes on.
"""

from __future__ import annotations

import contextlib
import functools
import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import duckdb

from fmbench.analysis.revisions import Registry, load_registry
from fmbench.errors import AnnotationError, FmbenchError
from fmbench.native.linking import relink
from fmbench.processes import NO_CHECKPOINTS, Checkpoints
from fmbench.runfile.annotations import is_sidecar
from fmbench.runfile.reader import DEFAULT_MAX_BYTES, DEFAULT_MAX_TRIALS
from fmbench.runfile.record import run_id_for
from fmbench.runfile.user_files import is_special, special_reason
from fmbench.storage.db import default_db_path, readers_waiting
from fmbench.write_errors import as_write_error

from .prepare import (
    Failed,
    Known,
    Prepared,
    PreparedRun,
    Preparer,
    default_workers,
    prepare,
    stored_snapshot,
)
from .rederive import writable
from .writer import BULK_CHECKPOINT_THRESHOLD, Writer, write_prepared

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
    line: int | None = None
    """Where an error is in the file's text (broken JSON), else ``None``."""
    column: int | None = None
    warnings: tuple[str, ...] = ()
    """Lines about the run's sidecar (unreadable, or an unknown key); the run was written all the same."""


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
            candidates = sorted(
                q for q in p.rglob("*") if q.suffix in RUN_SUFFIXES and q.name not in _NOT_RUNS and not is_sidecar(q)
            )
            found += [q for q in candidates if q.is_file()]
            missing += [  # a FIFO or a device in the folder: named, skipped, never opened
                FileOutcome(str(q), "error", message=f"{q}: {special_reason(q)}; skipped")
                for q in candidates
                if is_special(q)
            ]
        elif p.is_file():
            found.append(p)
        elif is_special(p):
            missing.append(FileOutcome(str(p), "error", message=f"{p}: {special_reason(p)}"))
        else:
            missing.append(FileOutcome(str(p), "error", message=f"{p}: no such file or folder"))
    return found, missing


def _stored_annotation_sha(con: duckdb.DuckDBPyConnection, run_id: str) -> str | None:
    row = con.execute("SELECT sha256 FROM annotations WHERE run_id = ?", [run_id]).fetchone()
    return row[0] if row else None


def _file_checkpoint(checkpoints: Checkpoints, file_name: str) -> Callable[[str], None]:
    """The writer's checkpoint for one file: each stage it reaches told to ``checkpoints`` as ``FILE NAME:STAGE``."""
    return functools.partial(_reached_in, checkpoints, file_name)


def _reached_in(checkpoints: Checkpoints, file_name: str, stage: str) -> None:
    checkpoints.reached(f"{file_name}:{stage}")


def _stored(con: duckdb.DuckDBPyConnection, sha256: str) -> tuple[bool, str | None]:
    """Whether these bytes are stored, and the SHA-256 of the sidecar stored with them."""
    if not con.execute("SELECT 1 FROM sources WHERE sha256 = ?", [sha256]).fetchone():
        return False, None
    return True, _stored_annotation_sha(con, run_id_for(sha256))


def land(
    con: duckdb.DuckDBPyConnection,
    writer: Writer,
    path: Path,
    prepared: Prepared,
    *,
    registry: Registry,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_trials: int | None = DEFAULT_MAX_TRIALS,
    checkpoints: Checkpoints = NO_CHECKPOINTS,
) -> FileOutcome:
    """Write a prepared file, deciding against the database as it is now (it may have changed since).

    ``checkpoints`` is told ``FILE NAME:STAGE`` as the file's rows are written (see :func:`ingest_paths`).
    """
    name = str(path)
    if isinstance(prepared, Failed):
        return FileOutcome(name, "error", message=prepared.message, line=prepared.line, column=prepared.column)
    run_id = run_id_for(prepared.sha256)
    exists, stored_sidecar = _stored(con, prepared.sha256)
    if exists and (prepared.annotation_sha is None or prepared.annotation_sha == stored_sidecar):
        verdict = con.execute("SELECT verdict FROM runs WHERE run_id = ?", [run_id]).fetchone()
        return FileOutcome(name, "duplicate", run_id, verdict[0] if verdict else None, "same bytes already ingested")
    if isinstance(prepared, Known):  # stored when the batch began, gone or re-annotated since: judge it now
        fresh = prepare(path, registry, max_bytes, writer.schemas(), max_trials=max_trials)
        return land(
            con, writer, path, fresh, registry=registry, max_bytes=max_bytes, max_trials=max_trials,
            checkpoints=checkpoints,
        )
    checkpoint = _file_checkpoint(checkpoints, path.name)
    try:
        write_prepared(writer, prepared, replace=exists, checkpoint=checkpoint)
    except (duckdb.OutOfMemoryException, duckdb.TransactionException) as exc:
        # More than the cap was needed (a big database's indexes, say) and the file was rolled back whole
        # (at the commit DuckDB says so as a failed transaction): prepare it again and write it with
        # DuckDB's own limit.
        if isinstance(exc, duckdb.TransactionException) and "could not allocate" not in str(exc):
            raise
        again = prepare(path, registry, max_bytes, writer.schemas(), max_trials=max_trials)
        if not isinstance(again, PreparedRun):
            return land(
                con, writer, path, again, registry=registry, max_bytes=max_bytes, max_trials=max_trials,
                checkpoints=checkpoints,
            )
        write_prepared(writer, again, replace=exists, checkpoint=checkpoint, cap_memory=False)
    if exists:
        return FileOutcome(name, "updated", run_id, prepared.verdict, "annotations updated", warnings=prepared.warnings)
    return FileOutcome(name, "ingested", run_id, prepared.verdict, warnings=prepared.warnings)


def ingest_file(
    con: duckdb.DuckDBPyConnection,
    path: Path,
    *,
    registry: Registry,
    max_bytes: int = DEFAULT_MAX_BYTES,
    writer: Writer | None = None,
    prepared: Prepared | None = None,
    max_trials: int | None = DEFAULT_MAX_TRIALS,
    checkpoints: Checkpoints = NO_CHECKPOINTS,
) -> FileOutcome:
    """Ingest one run file and its sidecar (``prepared`` already, or now); never raises for bad data, reports it."""
    writer = writer or Writer(con)
    try:
        if prepared is None:
            prepared = prepare(
                path, registry, max_bytes, writer.schemas(), known=lambda sha: _stored(con, sha), max_trials=max_trials
            )
        return land(
            con, writer, path, prepared, registry=registry, max_bytes=max_bytes, max_trials=max_trials,
            checkpoints=checkpoints,
        )
    except (FmbenchError, AnnotationError) as exc:
        failed = Failed.of(exc)
        return FileOutcome(str(path), "error", message=failed.message, line=failed.line, column=failed.column)
    except OSError as exc:
        return FileOutcome(str(path), "error", message=f"{path.name}: cannot be read: {exc.strerror}")


def ingest_paths(
    paths: Sequence[str | os.PathLike[str]],
    db: str | os.PathLike[str] | None = None,
    *,
    registry: Registry | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    progress: Callable[[int, int, str], None] | None = None,
    workers: int | None = None,
    max_trials: int | None = DEFAULT_MAX_TRIALS,
    checkpoints: Checkpoints = NO_CHECKPOINTS,
) -> IngestReport:
    """Ingest files and folders into the database; return what happened to each file.

    ``workers`` processes prepare files ahead of the writer (default: one per
    core for a big batch, none for a small one; 0 prepares in this process).
    Files are written one transaction each, in the order given, either way.
    ``checkpoints`` is told ``FILE NAME:STAGE`` at each stage of a file's one transaction (``sources``, ``runs``,
    each table after them, ``annotations``: see :func:`fmbench.ingest.writer.write_prepared`).
    """
    registry = registry or load_registry()
    files, report_missing = collect_run_files(paths)
    report = IngestReport(list(report_missing))
    n_workers = default_workers(files) if workers is None else workers
    preparer: Preparer | None = None
    done = 0
    writing = "the database"
    try:
        while True:
            with writable(db) as con:
                con.execute(f"SET checkpoint_threshold = '{BULK_CHECKPOINT_THRESHOLD}'")
                con.execute("SET enable_progress_bar = false")
                if n_workers:
                    con.execute("SET threads = 1")  # the other cores prepare files; one writes them
                writer = Writer(con, hold_cap=True)
                if preparer is None:
                    preparer = Preparer(
                        files, registry=registry, max_bytes=max_bytes, schemas=writer.schemas(),
                        workers=n_workers, stored=stored_snapshot(con) if n_workers else {}, max_trials=max_trials,
                    )
                try:
                    while done < len(files):
                        path = files[done]
                        ready = preparer.take() if preparer.parallel else None
                        writing = f"{path.name} into the database"
                        report.outcomes.append(
                            ingest_file(
                                con, path, registry=registry, max_bytes=max_bytes, writer=writer, prepared=ready,
                                max_trials=max_trials, checkpoints=checkpoints,
                            )
                        )
                        done += 1
                        if progress:
                            progress(done, len(files), path.name)
                        if done < len(files) and readers_waiting(db):
                            break  # let `serve`'s readers in between two files, then carry on
                finally:
                    with contextlib.suppress(duckdb.Error):  # a database that failed is closed anyway
                        writer.release_cap()
                if done >= len(files):
                    preparer.close()
                    con.execute("RESET threads")
                    writing = "the links between Evaluations rows and trials"
                    relink(con)
                    writing = "the database's checkpoint (its log folded into the file)"
                    con.execute("CHECKPOINT")
                    return report
            time.sleep(READER_WINDOW_SECONDS)
    except Exception as exc:
        landed = sum(1 for o in report.outcomes if o.status in ("ingested", "updated"))
        error = as_write_error(
            exc, default_db_path(db), writing,
            note=f"{landed} file(s) of this batch landed before it and stay; a second run skips them as duplicates",
        )
        if error is None:
            raise
        raise error from None
    finally:
        if preparer is not None:
            preparer.close()
