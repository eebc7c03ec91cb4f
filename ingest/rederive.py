"""The data migration: re-derive runs judged by an older analysis version from their stored originals.

A run's figures, verdict, scoring rule set and Simulator judgement are derived
data; ``runs.analysis_version`` records which version of fmbench's rules
derived them. When the rules change (:data:`fmbench.analysis.run.ANALYSIS_VERSION`),
every older run is analysed again from ``sources.content`` and its stored
sidecar and rewritten, all in one transaction, so that ``fmbench verify``
reports a difference only for real corruption.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager

import duckdb

from fmbench.analysis.revisions import load_registry
from fmbench.analysis.run import ANALYSIS_VERSION, analyze_bytes
from fmbench.errors import DatabaseError, FmbenchError
from fmbench.ingest.prepare import prepared_from
from fmbench.ingest.writer import Writer, write_prepared
from fmbench.runfile.annotations import Annotations, annotations_from
from fmbench.storage.db import connect, has_column, stale_where
from fmbench.storage.originals import original_bytes


def applied_data_migrations(con: duckdb.DuckDBPyConnection) -> list[tuple[int, int, object]]:
    """Recorded data migrations: (analysis version, runs re-derived, applied at)."""
    if not has_column(con, "fmbench_data_migrations", "analysis_version"):
        return []
    return [
        (int(v), int(n), at)
        for v, n, at in con.execute(
            "SELECT analysis_version, runs_rederived, applied_at FROM fmbench_data_migrations ORDER BY analysis_version"
        ).fetchall()
    ]


def _stored_annotations(con: duckdb.DuckDBPyConnection, run_id: str) -> tuple[Annotations | None, bytes | None]:
    row = con.execute("SELECT file_name, sha256, content FROM annotations WHERE run_id = ?", [run_id]).fetchone()
    if row is None:
        return None, None
    name, sha, content = str(row[0]), str(row[1]), bytes(row[2])
    # Refused by today's rules (or never readable): kept byte for byte, judged without it, as the ingest does.
    return annotations_from(content, name, sha), content


def rederive_stale(con: duckdb.DuckDBPyConnection) -> int:
    """Re-derive every run of an older analysis version, in one transaction; return how many."""
    if not has_column(con, "runs", "analysis_version"):
        return 0  # the schema migration that records versions comes first
    stale = con.execute(
        f"SELECT r.run_id, r.file_name, r.source_sha256 FROM runs r WHERE {stale_where(con)} ORDER BY r.run_id"
    ).fetchall()
    if not stale:
        return 0

    registry = load_registry()
    writer = Writer(con)
    schemas = writer.schemas()
    con.execute("BEGIN TRANSACTION")
    try:
        for run_id, file_name, sha in stale:
            row = con.execute("SELECT content, encoding FROM sources WHERE sha256 = ?", [sha]).fetchone()
            if row is None:
                raise DatabaseError(f"run {run_id} ({file_name}) has no stored source to re-derive it from")
            data = original_bytes(row[0], row[1], f"{file_name} (run {run_id})")
            annotations, sidecar = _stored_annotations(con, run_id)
            try:
                analysis = analyze_bytes(
                    data, file_name, registry=registry, annotations=annotations, max_bytes=max(len(data), 1),
                    max_trials=None,  # stored once already: a run ingested with the limit raised stays re-derivable
                )
            except FmbenchError:
                # The stored source no longer reads as a run: its rows stay as they were (verify names it).
                con.execute("UPDATE runs SET analysis_version = ? WHERE run_id = ?", [ANALYSIS_VERSION, run_id])
                continue
            write_prepared(writer, prepared_from(analysis, data, sidecar, schemas), replace=True, transaction=False)
        con.execute(
            "INSERT OR REPLACE INTO fmbench_data_migrations VALUES (?, ?, now()::TIMESTAMP)",
            [ANALYSIS_VERSION, len(stale)],
        )
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return len(stale)


@contextmanager
def writable(path: str | os.PathLike[str] | None = None, *, wait: float = 10.0) -> Iterator[duckdb.DuckDBPyConnection]:
    """Open the database for writing: created if missing, its schema migrated and its stale runs re-derived."""
    with connect(path, wait=wait, data_migration=rederive_stale) as con:
        yield con
