"""The DuckDB file: where it is, opening it, and its schema version.

The schema lives in ``ingest/schema/NNNN_name.sql``. Each migration is applied
once, in order, inside a transaction, and recorded in ``fmbench_migrations``.
After the schema, a data migration re-derives, from the stored original bytes,
every run whose figures and verdict an older analysis version derived
(:mod:`fmbench.ingest.rederive`). Commands that write open the database through
:func:`fmbench.ingest.writable`, which migrates as it opens: storage is below the
analysis that re-derives, so the data migration is handed to :func:`connect`, never
imported here. Read-only opens refuse an older database and say to run
``fmbench migrate``.
A database written by a newer fmbench is refused with a message that says to
upgrade.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import duckdb

from fmbench import DISTRIBUTION
from fmbench.analysis.run import ANALYSIS_VERSION
from fmbench.errors import DamagedDatabaseError, DatabaseBusyError, DatabaseError
from fmbench.runfile.user_files import NotRegularFile, open_regular
from fmbench.write_errors import as_write_error, writing

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: readers and writers meet only DuckDB's own lock
    fcntl = None  # type: ignore[assignment]

DEFAULT_DB = "fmbench.duckdb"
ENV_DB = "FMBENCH_DB"
WRITER_SUFFIX = ".writer"
_MIGRATION_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


@dataclass(frozen=True)
class Migration:
    version: int
    name: str
    sql: str


def default_db_path(given: str | os.PathLike[str] | None = None) -> Path:
    """``--db``, else ``$FMBENCH_DB``, else ``./fmbench.duckdb``."""
    if given:
        return Path(given)
    env = os.environ.get(ENV_DB)
    return Path(env) if env else Path(DEFAULT_DB)


def migrations() -> list[Migration]:
    folder = resources.files("fmbench.ingest").joinpath("schema")
    found = []
    for entry in folder.iterdir():
        match = _MIGRATION_NAME.match(entry.name)
        if match:
            found.append(Migration(int(match.group(1)), match.group(2), entry.read_text(encoding="utf-8")))
    found.sort(key=lambda m: m.version)
    for before, m in itertools.pairwise(found):
        if m.version == before.version:
            raise DatabaseError(
                f"two schema migrations share number {m.version:04d}: {before.name}.sql and {m.name}.sql"
            )
    if found and found[0].version != 1:
        raise DatabaseError(f"schema migrations start at 0001: found {found[0].version:04d}_{found[0].name}.sql")
    return found


def schema_version() -> int:
    return migrations()[-1].version


def _is_lock_error(exc: Exception) -> bool:
    text = str(exc).lower()
    return "lock" in text or "being used by another process" in text or "conflicting" in text


def writer_intent_path(db_path: Path) -> Path:
    """The file a writer holds locked beside the database while it waits for it and writes."""
    return db_path.with_name(db_path.name + WRITER_SUFFIX)


_intent_marks: dict[Path, int] = {}
"""Databases this process writes, with the intent file's time when it took it."""


def writer_waiting(db_path: Path) -> bool:
    """True while another process writes the database or waits to; it is also told a reader waits.

    DuckDB lets one writing process or many reading ones open a file. Readers
    that keep opening it would starve a writer, so a writer first takes an
    advisory lock on ``<db>.writer`` and readers stop opening the database
    while that lock is held (the lock dies with its process: nothing stale).
    A waiting reader touches the file, which is how the writer knows to step
    aside between run files (:func:`readers_waiting`).
    """
    if fcntl is None:
        return False
    try:
        fd = os.open(writer_intent_path(db_path), os.O_RDONLY)
    except OSError:
        return False
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            with contextlib.suppress(OSError):
                os.utime(fd)
            return True
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def readers_waiting(db_path: str | os.PathLike[str] | None) -> bool:
    """True when a reader has asked for the database this process is writing since it took it."""
    path = default_db_path(db_path)
    mark = _intent_marks.get(path)
    if mark is None:
        return False
    try:
        return os.stat(writer_intent_path(path)).st_mtime_ns != mark
    except OSError:
        return False


@contextmanager
def _writer_intent(path: Path, wait: float) -> Iterator[None]:
    """Hold ``<db>.writer`` locked for as long as this writer waits for and holds the database."""
    if fcntl is None:
        yield
        return
    intent = writer_intent_path(path)
    deadline = time.monotonic() + wait
    while True:
        try:
            fd = os.open(intent, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:  # a read-only folder: no announcement, DuckDB's own lock still applies
            yield
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            if os.fstat(fd).st_ino == os.stat(intent).st_ino:
                break  # ours, and still the file at that name (the last holder removes it)
        except OSError:
            pass
        os.close(fd)
        if time.monotonic() >= deadline:
            raise DatabaseBusyError(
                f"{path}: the database is in use by another fmbench process; try again in a moment"
            )
        time.sleep(0.02)
    _intent_marks[path] = os.fstat(fd).st_mtime_ns
    try:
        yield
    finally:
        _intent_marks.pop(path, None)
        with contextlib.suppress(OSError):
            os.unlink(intent)
        os.close(fd)


SAFE_CONFIG: dict[str, Any] = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}
"""The configuration of every DuckDB connection fmbench opens: DuckDB never installs or loads an extension
of its own accord (a SQLite file given as ``--db`` would otherwise have it download ``sqlite_scanner``), so
no command reaches the network; reading object storage registers its filesystem explicitly
(:func:`fmbench.storage.dataset.register_object_storage`)."""

DUCKDB_MAGIC = b"DUCK"
"""Bytes 8 to 12 of every DuckDB database file."""
SQLITE_MAGIC = b"SQLite format 3\x00"


def open_duckdb(database: str = ":memory:", *, read_only: bool = False) -> duckdb.DuckDBPyConnection:
    """A DuckDB connection with :data:`SAFE_CONFIG`: the one place fmbench calls ``duckdb.connect``."""
    return duckdb.connect(database, read_only=read_only, config=dict(SAFE_CONFIG))


def check_database_file(path: Path) -> None:
    """Refuse, before DuckDB opens it, a ``--db`` that is not a regular file (DuckDB's open of a FIFO waits
    for a writer forever) or whose header is not DuckDB's (a SQLite file, a text file). A path that does not
    exist, and a file too short to have a header, are left to DuckDB (a writer creates the first)."""
    try:
        with open_regular(path) as f:
            head = f.read(16)
    except NotRegularFile as exc:
        raise DatabaseError(f"{path}: {exc.reason.split(';')[0]}; point --db at an fmbench database file") from None
    except OSError:
        return
    if len(head) >= 12 and head[8:12] != DUCKDB_MAGIC:
        what = " (it is a SQLite database)" if head.startswith(SQLITE_MAGIC) else ""
        raise DatabaseError(
            f"{path}: not a DuckDB database file{what}; point --db at an fmbench database (or another, new file name)"
        )


def _open(path: Path, read_only: bool, wait: float) -> duckdb.DuckDBPyConnection:
    check_database_file(path)
    deadline = time.monotonic() + wait
    delay = 0.02
    while True:
        try:
            if read_only and writer_waiting(path):
                raise duckdb.IOException("Could not set lock on file: a writer is waiting")
            return open_duckdb(str(path), read_only=read_only)
        except duckdb.IOException as exc:
            if not _is_lock_error(exc):
                refused = None if read_only else as_write_error(exc, path, "the database")
                if refused is not None:
                    raise refused from None
                raise DatabaseError(_unopenable(path, exc)) from None
            if time.monotonic() >= deadline:
                raise DatabaseBusyError(
                    f"{path}: the database is in use by another fmbench process; try again in a moment"
                ) from None
            time.sleep(delay)
            delay = min(delay * 2, 0.1)
        except duckdb.Error as exc:
            raise DatabaseError(_unopenable(path, exc, opened=False)) from None


def _unopenable(path: Path, exc: duckdb.Error, *, opened: bool = True) -> str:
    """Why DuckDB could not open ``path``, and what to do about it (``opened``: the file was read, DuckDB's
    input/output error; else another DuckDB error)."""
    text = str(exc)
    lowered = text.lower()
    if "not a valid duckdb database" in lowered:
        return f"{path}: not a DuckDB database file; point --db at an fmbench database (or another, new file name)"
    if "replaying wal" in lowered or "corrupt wal" in lowered:
        log = path.with_name(path.name + ".wal")
        detail = text.rsplit(": ", 1)[-1].strip().rstrip(".")
        return (
            f"{path}: the log of a write that did not finish ({log.name}) cannot be replayed ({detail}); "
            f"move {log.name} out of the folder (keep it: it may hold the last writes) and run `fmbench verify` "
            "to check what the database holds, then ingest again what is missing"
        )
    if is_damage(exc):
        return str(damaged(path, exc, "the database"))
    if is_truncation(exc):
        return str(truncated(path, "the database"))
    if not opened:  # DuckDB could not read the file as a database at all
        return f"{path}: not a DuckDB database fmbench can open ({text}); point --db at another file"
    return f"{path}: cannot open the database: {text}"


def is_damage(exc: BaseException) -> bool:
    """True for DuckDB's report of a block whose checksum fails (bytes of the file changed under it)."""
    return isinstance(exc, duckdb.Error) and "corrupt database file" in str(exc).lower()


def damaged(path: str | os.PathLike[str], exc: BaseException, what: str) -> DamagedDatabaseError:
    """The one-line error for ``what`` (a source, a table, the database) held in a damaged block of ``path``."""
    detail = str(exc).split(": ", 1)[-1].strip().rstrip(".")
    return DamagedDatabaseError(
        f"{path}: {what} cannot be read: a block of the database file is damaged ({detail}); restore the file "
        "from a backup, or move it aside and ingest the run files again (`fmbench ingest runs/`, or "
        "`fmbench build` in a project) to rebuild it"
    )


def is_truncation(exc: BaseException) -> bool:
    """True for DuckDB's report of a read past the file's end: the file was cut short."""
    return isinstance(exc, duckdb.Error) and "could not read enough bytes from file" in str(exc).lower()


def truncated(path: str | os.PathLike[str], what: str) -> DamagedDatabaseError:
    """The one-line error for ``what`` held past the end of a database file that was cut short."""
    try:
        size = f"{os.stat(path).st_size:,} bytes"
    except OSError:
        size = "gone"
    return DamagedDatabaseError(
        f"{path}: {what} cannot be read: the database file is cut short ({size}; it ends before the data it "
        "lists), truncated by a copy or a disk that filled up; restore the whole file from a backup, or move it "
        "aside and ingest the run files again (`fmbench ingest runs/`, or `fmbench build` in a project) to "
        "rebuild it"
    )


@contextmanager
def reading(path: str | os.PathLike[str], what: str) -> Iterator[None]:
    """Turn DuckDB's report of a damaged block, or of a file cut short, met while reading ``what`` into
    :class:`DamagedDatabaseError`."""
    try:
        yield
    except duckdb.Error as exc:
        if is_truncation(exc):
            raise truncated(path, what) from None
        if not is_damage(exc):
            raise
        raise damaged(path, exc, what) from None


def _has_table(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    row = con.execute(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = ? AND table_schema = 'main'", [name]
    ).fetchone()
    return bool(row and row[0])


def applied_versions(con: duckdb.DuckDBPyConnection) -> dict[int, tuple[str, Any]]:
    """The schema migrations the database records: version -> (name, applied at)."""
    if not _has_table(con, "fmbench_migrations"):
        tables = con.execute("SELECT count(*) FROM information_schema.tables").fetchone()
        if tables and tables[0]:
            raise DatabaseError("this DuckDB file holds tables but is not an fmbench database; use another --db")
        return {}
    rows = con.execute("SELECT version, name, applied_at FROM fmbench_migrations ORDER BY version").fetchall()
    return {int(v): (str(n), at) for v, n, at in rows}


def applied_version(con: duckdb.DuckDBPyConnection) -> int:
    """The newest schema migration the database records (0 for a new file)."""
    return max(applied_versions(con), default=0)


def _refuse_newer(applied: dict[int, tuple[str, Any]], known: list[Migration], path: Path) -> None:
    latest = known[-1].version
    newest = max(applied, default=0)
    if newest > latest:
        raise DatabaseError(
            f"{path}: this database has schema version {newest}, newer than this fmbench knows "
            f"({latest}); upgrade fmbench (pip install --upgrade {DISTRIBUTION}) to read it"
        )


def pending_migrations(con: duckdb.DuckDBPyConnection, path: Path) -> list[Migration]:
    """The schema migrations the database has not had, in order; refuses a newer database."""
    known = migrations()
    applied = applied_versions(con)
    _refuse_newer(applied, known, path)
    return [m for m in known if m.version not in applied]


def apply_migration(con: duckdb.DuckDBPyConnection, m: Migration) -> None:
    """One schema migration, and its record, in one transaction."""
    con.execute(
        "CREATE TABLE IF NOT EXISTS fmbench_migrations ("
        " version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL)"
    )
    con.execute("BEGIN TRANSACTION")
    try:
        con.execute(m.sql)
        con.execute("INSERT INTO fmbench_migrations VALUES (?, ?, now()::TIMESTAMP)", [m.version, m.name])
        con.execute("COMMIT")
    except Exception:
        con.execute("ROLLBACK")
        raise


DataMigration = Callable[[duckdb.DuckDBPyConnection], int]
"""Re-derives every run an older analysis version derived, in one transaction, and says how many
(:func:`fmbench.ingest.rederive.rederive_stale`)."""


def migrate(con: duckdb.DuckDBPyConnection, path: Path, data_migration: DataMigration) -> int:
    """Apply every pending schema migration, then the data migration; return the schema version reached."""
    for m in pending_migrations(con, path):
        apply_migration(con, m)
    data_migration(con)
    return schema_version()


def has_column(con: duckdb.DuckDBPyConnection, table: str, column: str) -> bool:
    row = con.execute(
        "SELECT count(*) FROM information_schema.columns WHERE table_name = ? AND column_name = ? "
        "AND table_schema = 'main'",
        [table, column],
    ).fetchone()
    return bool(row and row[0])


def stale_where(con: duckdb.DuckDBPyConnection) -> str:
    """The SQL condition of runs derived by an older analysis version (every run, before the column was recorded)."""
    if not has_column(con, "runs", "analysis_version"):
        return "TRUE"
    return f"(analysis_version IS NULL OR analysis_version < {int(ANALYSIS_VERSION)})"


def stale_run_count(con: duckdb.DuckDBPyConnection) -> int:
    """How many stored runs an older analysis version derived (0 for a database without runs)."""
    if not has_column(con, "runs", "run_id"):
        return 0
    row = con.execute(f"SELECT count(*) FROM runs WHERE {stale_where(con)}").fetchone()
    return int(row[0]) if row else 0


def check_version(con: duckdb.DuckDBPyConnection, path: Path) -> None:
    """Refuse, for a reader, a database from a newer fmbench or one that needs ``fmbench migrate``."""
    pending = pending_migrations(con, path)
    if pending:
        current = applied_version(con)
        raise DatabaseError(
            f"{path}: this database has schema version {current}, older than this fmbench's "
            f"({schema_version()}); run `fmbench migrate` to upgrade it"
        )

    stale = stale_run_count(con)
    if stale:
        raise DatabaseError(
            f"{path}: {stale} run(s) in this database were judged by an older fmbench; "
            "run `fmbench migrate` to re-derive them from their stored originals"
        )


@contextmanager
def connect(
    path: str | os.PathLike[str] | None = None,
    *,
    read_only: bool = False,
    wait: float = 10.0,
    data_migration: DataMigration | None = None,
) -> Iterator[duckdb.DuckDBPyConnection]:
    """Open the database. Writable opens create and migrate it (``data_migration`` re-derives what an older
    analysis derived: open through :func:`fmbench.ingest.writable`); read-only opens check its version."""
    if not read_only and data_migration is None:
        raise TypeError("a writable open needs the data migration: open it with fmbench.ingest.writable")
    db_path = default_db_path(path)
    if read_only and not db_path.exists():
        raise DatabaseError(f"{db_path}: no such database; run `fmbench ingest PATH...` first")
    with contextlib.nullcontext() if read_only else _writer_intent(db_path, wait), reading(db_path, "part of the database"):
        con = _open(db_path, read_only, wait)
        try:
            if read_only:
                check_version(con, db_path)
            else:
                with writing(db_path, "the database's schema"):
                    assert data_migration is not None
                    migrate(con, db_path, data_migration)
            yield con
        finally:
            con.close()
