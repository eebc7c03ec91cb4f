"""``fmbench migrate``: the database's schema and data migrations, listed and applied.

Schema migrations are the numbered ``.sql`` files beside ingest; the data
migrations re-derive runs judged by an older analysis version from their stored
originals, and keep the originals a database stored raw gzipped. Each is applied
in its own transaction.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from fmbench.analysis.run import ANALYSIS_VERSION
from fmbench.errors import DatabaseError
from fmbench.ingest.rederive import applied_data_migrations, rederive_stale
from fmbench.ingest.stored_originals import gzip_raw_originals, raw_original_count
from fmbench.storage.db import (
    _open,
    _writer_intent,
    applied_versions,
    apply_migration,
    default_db_path,
    migrations,
    pending_migrations,
    stale_run_count,
)


@dataclass(frozen=True)
class MigrationEntry:
    kind: Literal["schema", "data"]
    name: str
    """``0004_analysis_version`` for a schema migration, ``analysis version 2`` for a data migration."""
    applied_at: datetime | None
    detail: str = ""

    @property
    def applied(self) -> bool:
        return self.applied_at is not None

    def __str__(self) -> str:
        state = f"applied {self.applied_at:%Y-%m-%d %H:%M:%S}" if self.applied_at else "pending"
        return f"{self.kind:<6}  {self.name:<26}  {state}{'  ' + self.detail if self.detail else ''}".rstrip()

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "name": self.name,
            "applied": self.applied,
            "appliedAt": self.applied_at.isoformat() if self.applied_at else None,
            "detail": self.detail,
        }


@dataclass
class MigrationReport:
    entries: list[MigrationEntry] = field(default_factory=list)
    applied_now: list[str] = field(default_factory=list)

    @property
    def pending(self) -> list[MigrationEntry]:
        return [e for e in self.entries if not e.applied]

    def describe(self) -> str:
        return "\n".join(str(e) for e in self.entries)


ORIGINALS_GZIPPED = "originals gzipped"
"""The data migration that keeps the originals a database stored raw (before schema migration 6) gzipped."""


def _status(con: Any, path: Any) -> MigrationReport:

    pending = {m.version for m in pending_migrations(con, path)}
    applied = applied_versions(con)
    report = MigrationReport()
    for m in migrations():
        at = None if m.version in pending else applied[m.version][1]
        report.entries.append(MigrationEntry("schema", f"{m.version:04d}_{m.name}", at))
    for version, count, at in applied_data_migrations(con):
        report.entries.append(
            MigrationEntry("data", f"analysis version {version}", at, f"{count} run(s) re-derived")
        )
    stale = stale_run_count(con)
    if stale:
        report.entries.append(
            MigrationEntry(
                "data",
                f"analysis version {ANALYSIS_VERSION}",
                None,
                f"{stale} run(s) to re-derive from their stored originals",
            )
        )
    raw = raw_original_count(con)
    if raw:
        report.entries.append(
            MigrationEntry("data", ORIGINALS_GZIPPED, None, f"{raw} original file(s) stored raw, to keep gzipped")
        )
    return report


def _existing(db: str | os.PathLike[str] | None) -> Any:
    path = default_db_path(db)
    if not path.exists():
        raise DatabaseError(f"{path}: no such database; nothing to migrate (`fmbench ingest PATH...` creates one)")
    return path


def migration_status(db: str | os.PathLike[str] | None = None) -> MigrationReport:
    """Every migration the database has had and every one it still needs; changes nothing."""
    path = _existing(db)
    con = _open(path, True, 10.0)
    try:
        return _status(con, path)
    finally:
        con.close()


def migrate_database(db: str | os.PathLike[str] | None = None) -> MigrationReport:
    """Apply every pending migration, each in its own transaction; report what was applied."""

    path = _existing(db)
    applied_now: list[str] = []
    with _writer_intent(path, 10.0):
        con = _open(path, False, 10.0)
        try:
            for m in pending_migrations(con, path):
                apply_migration(con, m)
                applied_now.append(f"schema {m.version:04d}_{m.name}")
            count = rederive_stale(con)
            if count:
                applied_now.append(f"data analysis version {ANALYSIS_VERSION} ({count} run(s) re-derived)")
            gzipped = gzip_raw_originals(con)
            if gzipped.files or gzipped.left_raw:
                applied_now.append(f"data {ORIGINALS_GZIPPED} ({gzipped})")
            report = _status(con, path)
        finally:
            con.close()
    report.applied_now = applied_now
    return report
