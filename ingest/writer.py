"""Writing prepared runs into the database: bulk inserts through Arrow, one run in one transaction, memory capped.

Both the ingest (:mod:`fmbench.ingest`) and the data migration (:mod:`fmbench.ingest.rederive`) write through it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from datetime import UTC, datetime

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from fmbench.storage.originals import STORED_ENCODING

from . import rows as R
from .prepare import RUN_TABLES, PreparedRun, table_schemas, to_arrow

BULK_CHECKPOINT_THRESHOLD = "2GB"
"""While a batch is written, DuckDB folds its log into the file at most once per this much log.

Its default (16 MB) folds after nearly every large run file, and each fold rewrites every
primary-key index, so a batch slowed down as the database grew; the batch checkpoints once at
its end (and whenever it steps aside for readers) instead. The log is durable either way.

Each fold also compresses again every row group that gained rows since the last one, whole:
``sources`` keeps every stored file in one row group, so a fold in the middle of a batch
compresses all the originals stored so far a second time at its end. With 1 GB, a batch of 200
runs (836 MB of run files, about 1.2 GB of log) folded once on the way: 3 CPU seconds more for
the writer, 250 MiB more at its peak and a database file a fifth larger, for nothing. 2 GB
keeps a batch of about 1.4 GB of run files to its one fold at the end; a bigger one folds every
2 GB of log, so what DuckDB holds until a fold stays bounded.
"""


class Writer:
    """Bulk inserts through Arrow, typed by the database's own column types.

    It also caps DuckDB's memory while a file is written (see :func:`write_memory_limit`).
    A writer that ``holds`` its cap keeps it between the files of a batch and
    sets it again only when a file needs more, or much less, than the cap in
    force: each ``SET memory_limit`` makes DuckDB hand back the memory it had
    cached, which the next file then takes from the system again (about a
    fifth of the writer's CPU when it was set and reset around every file).
    Then a file is written under at most its own limit + :data:`CAP_SLACK`.
    The first file of a batch is written under exactly its own limit, as a
    single file always is; :meth:`release_cap` gives DuckDB its own settings back.
    """

    def __init__(self, con: duckdb.DuckDBPyConnection, *, hold_cap: bool = False) -> None:
        self.con = con
        self._schemas: dict[str, pa.Schema] = {}
        self.hold_cap = hold_cap
        self._cap: int | None = None
        self._restore: tuple[str, int] | None = None

    def cap_memory(self, size: int, largest: int = 0) -> None:
        """Cap DuckDB's memory for writing a run file of ``size`` bytes whose longest value is ``largest``
        bytes, with one thread."""
        con = self.con
        held = con.execute("SELECT coalesce(sum(memory_usage_bytes), 0) FROM duckdb_memory()").fetchone()
        need = max(1, int(held[0] if held else 0) + write_memory_limit(size, largest))
        if self._restore is None:
            found = con.execute("SELECT current_setting('memory_limit'), current_setting('threads')").fetchone()
            assert found is not None
            self._restore = (str(found[0]), int(found[1]))
            con.execute("SET threads = 1")
            limit = need
        elif self._cap is not None and need <= self._cap <= need + CAP_SLACK:
            return
        else:
            limit = need + CAP_SLACK if self.hold_cap else need
        con.execute(f"SET memory_limit = '{limit}B'")
        self._cap = limit

    def release_cap(self) -> None:
        """DuckDB's own memory limit and threads again (nothing if no cap is in force)."""
        if self._restore is None:
            return
        limit, threads = self._restore
        self._restore = self._cap = None
        # The setting reads back rounded ("18.8 GiB"): DuckDB's own default is restored exactly, another
        # limit as it read.
        self.con.execute("RESET memory_limit")
        found = self.con.execute("SELECT current_setting('memory_limit')").fetchone()
        if found is None or found[0] != limit:
            self.con.execute(f"SET memory_limit = '{limit}'")
        self.con.execute(f"SET threads = {threads}")

    def schema(self, table: str) -> pa.Schema:
        if table not in self._schemas:
            self._schemas.update(table_schemas(self.con, [table]))
        return self._schemas[table]

    def schemas(self) -> dict[str, pa.Schema]:
        for table in ("sources", *RUN_TABLES):
            self.schema(table)
        return dict(self._schemas)

    def insert_table(self, table: str, arrow: pa.Table) -> None:
        """Append a table laid out as ``table``'s columns, in their order (see :func:`to_arrow`).

        DuckDB reads the rows by their Python name (a replacement scan of this frame's local): about
        half a millisecond less per statement than a relation made with ``from_arrow``, which a run's
        dozen small tables pay on every file.
        """
        if arrow.num_rows:
            fmbench_rows = arrow.to_reader()  # noqa: F841 (read by DuckDB by its name)
            self.con.execute(f"INSERT INTO {table} SELECT * FROM fmbench_rows")

    def insert(self, table: str, columns: R.Columns) -> None:
        if not columns or not next(iter(columns.values())):
            return
        self.insert_table(table, to_arrow(columns, self.schema(table)))


CHILD_TABLES = (*tuple(name for name, _ in R.TABLES), "annotations")


def _delete_run(con: duckdb.DuckDBPyConnection, run_id: str) -> None:
    for table in CHILD_TABLES:
        con.execute(f"DELETE FROM {table} WHERE run_id = ?", [run_id])
    con.execute("DELETE FROM runs WHERE run_id = ?", [run_id])


def _stamped(table: pa.Table, ingested_at: datetime) -> pa.Table:
    i = table.schema.get_field_index("ingested_at")
    return table.set_column(i, table.schema.field(i), pa.array([ingested_at] * table.num_rows, pa.timestamp("us")))


WRITE_MEMORY_FLOOR = 64 * 2**20
CAP_SLACK = 64 * 2**20
"""How far above a file's own limit a batch's writer may leave the cap in force (see :class:`Writer`)."""


def write_memory_limit(size: int, largest: int = 0) -> int:
    """What DuckDB may take, beyond what it already holds, while one run file of ``size`` bytes is written.

    With its default limit (most of the machine's memory) and a thread per core
    DuckDB kept a big run's rows in its buffers: writing a 24 MiB file took
    about 120 MiB more than with this limit and one thread. The limit grows
    with the file (the stored file is one value of its size). Twice the size
    was needed while the per-trial tables kept primary-key indexes; without
    them DuckDB writes a big run's rows straight to the file and, given twice
    the size, held about 35 MiB more of a 23.5 MiB file than with once.

    A value longer than a block is written at the commit into one allocation
    of its own size while the transaction still holds it: a 64 MiB response
    needed 64 MiB beyond the file's limit ("could not allocate block of size
    64.0 MiB"), so the longest value of the run (``largest``, see
    :func:`longest_value`) is added once.
    """
    return size + largest + WRITE_MEMORY_FLOOR


def longest_value(tables: Iterable[pa.Table]) -> int:
    """The length in bytes of the longest string or binary value in ``tables`` (0 if none)."""
    longest = 0
    for table in tables:
        for column in table.columns:
            kind = column.type
            if pa.types.is_string(kind) or pa.types.is_binary(kind) or pa.types.is_large_string(kind):
                found = pc.max(pc.binary_length(column)).as_py()
                longest = max(longest, found or 0)
    return longest


def _source_table(schema: pa.Schema, run: PreparedRun, now: datetime) -> pa.Table:
    """The ``sources`` row, its ``content`` column over the stored file's bytes (not a copy of them)."""
    content = pa.Array.from_buffers(
        pa.binary(), 1, [None, pa.array([0, len(run.stored)], pa.int32()).buffers()[1], pa.py_buffer(run.stored)]
    )
    values = {
        "sha256": pa.array([run.sha256], pa.string()),
        "file_name": pa.array([run.file_name], pa.string()),
        "size_bytes": pa.array([run.size], schema.field("size_bytes").type),
        "content": content,
        "ingested_at": pa.array([now], pa.timestamp("us")),
        "encoding": pa.array([STORED_ENCODING], pa.string()),
    }
    return pa.Table.from_arrays([values[f.name] for f in schema], schema=schema)


def write_prepared(
    writer: Writer,
    run: PreparedRun,
    *,
    replace: bool = False,
    checkpoint: Callable[[str], None] | None = None,
    transaction: bool = True,
    cap_memory: bool = True,
) -> None:
    """Write one prepared run in one transaction (its child tables are handed over: ``run`` is written once).

    ``transaction=False`` writes inside the caller's transaction (a data migration re-derives many
    runs in one). In its own transaction DuckDB's memory is capped (see :func:`write_memory_limit`)
    unless ``cap_memory`` is false.
    """
    con = writer.con
    now = datetime.now(UTC).replace(tzinfo=None)
    tick = checkpoint or (lambda _stage: None)
    capped = transaction and cap_memory
    if capped:
        writer.cap_memory(run.size, longest_value(run.tables.values()))
    elif transaction:
        writer.release_cap()  # written with DuckDB's own limit
    if transaction:
        con.execute("BEGIN TRANSACTION")
    try:
        if replace:
            _delete_run(con, run.run_id)
        else:
            writer.insert_table("sources", _source_table(writer.schema("sources"), run, now))
            tick("sources")
        writer.insert_table("runs", _stamped(run.tables["runs"], now))
        tick("runs")
        for table, _ in R.TABLES:
            if table in run.tables:
                # Handed to DuckDB, the Arrow copy is not needed again: let it go now (a big run's peak memory).
                writer.insert_table(table, run.tables.pop(table))
            tick(table)
        if "annotations" in run.tables:
            writer.insert_table("annotations", _stamped(run.tables["annotations"], now))
            tick("annotations")
        if transaction:
            con.execute("COMMIT")
    except BaseException:
        if transaction:
            _roll_back(con)
        raise
    finally:
        if capped and not writer.hold_cap:
            writer.release_cap()


def _roll_back(con: duckdb.DuckDBPyConnection) -> None:
    """Undo the open transaction; a commit that failed (a full disk) has already ended it.

    Then DuckDB has rolled back itself and says "no transaction is active": the
    first error is the one to report.
    """
    with contextlib.suppress(duckdb.TransactionException):
        con.execute("ROLLBACK")
