"""The database as a Parquet dataset, and reading either one: past one machine.

``fmbench export --parquet DIR`` writes every table as Parquet. Runs and the
tables of a run (trials, checks, failures, figures, the original files, …)
are partitioned Hive-style by device (hardware model) and OS build; the
Evaluations tables are single files. ``fmbench-dataset.json`` at the top
says which fmbench schema version wrote it::

    DIR/fmbench-dataset.json
    DIR/runs/device=Mac17%2C2/build=26A5378f/data_0.parquet
    DIR/trials/device=Mac17%2C2/build=26A5378f/data_0.parquet
    …
    DIR/evaluations.parquet

(``device`` is the hardware model, ``build`` the OS build, ``unknown`` when a
run does not record it; DuckDB percent-encodes other characters.) Every
partitioned table also holds one empty file under ``device=_/build=_`` that
carries its columns, so a table with no rows still reads as a table.

:func:`open_database` opens a DuckDB file read-only, or a dataset folder (or
``s3://``, ``gs://``, ``az://`` or other fsspec location, read through fsspec registered with DuckDB, so no
DuckDB extension is downloaded at run time) as an
in-memory DuckDB with one view per table over ``read_parquet(…,
hive_partitioning = true)``: the views read exactly like the tables, so every
page, query and command runs on either unchanged.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

from fmbench import DISTRIBUTION, __version__
from fmbench.errors import DatabaseError
from fmbench.redaction import has_credentials, library_message, redact
from fmbench.storage.db import connect, schema_version
from fmbench.write_errors import as_write_error, writing

DATASET_FILE = "fmbench-dataset.json"
DATASET_FORMAT = 1
PARTITION_KEYS = ("device", "build")
SCHEMA_PARTITION = "device=_/build=_"
"""Where each partitioned table keeps its empty file of columns."""
REMOTE_PREFIXES = ("s3://", "s3a://", "gs://", "gcs://", "r2://", "az://", "abfss://", "http://", "https://")
STORAGE_EXTRA = f"pip install '{DISTRIBUTION}[s3]'"
"""What a reader of object storage installs: fsspec with the S3 driver (other schemes take their own driver)."""
_FSSPEC_PROTOCOL = {"s3a": "s3", "r2": "s3", "gcs": "gs", "abfss": "abfs"}
"""Prefixes that are another name for an fsspec protocol (an R2 bucket is S3 at its own endpoint)."""

_RUN_KEY = {"runs": "run_id", "sources": "sha256"}
"""How a partitioned table finds its run (every other partitioned table has ``run_id``)."""


def is_remote(location: str | os.PathLike[str]) -> bool:
    return str(location).startswith(REMOTE_PREFIXES)


def is_dataset(location: str | os.PathLike[str] | None) -> bool:
    """A Parquet dataset folder (or a remote prefix), rather than a DuckDB file."""
    if location is None:
        return False
    return is_remote(location) or Path(location).is_dir()


def _tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    return [
        t
        for (t,) in con.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' AND table_type = 'BASE TABLE' "
            "ORDER BY table_name"
        ).fetchall()
    ]


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    return [
        c
        for (c,) in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = 'main' AND table_name = ? "
            "ORDER BY ordinal_position",
            [table],
        ).fetchall()
    ]


def _partitioned(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    return table in _RUN_KEY or "run_id" in _columns(con, table)


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _literal(text: str) -> str:
    """A file path as a SQL string literal (COPY … TO takes no bound parameter)."""
    return "'" + text.replace("'", "''") + "'"


_SCHEME_LIKE = re.compile(r"[A-Za-z][A-Za-z0-9+.-]+:/")
"""A location that names a scheme (``s3:/bucket``, ``S3://``): never taken as a local folder of that name."""


def export_parquet(db: str | os.PathLike[str] | None, out: str | os.PathLike[str]) -> dict[str, Any]:
    """Write the database as a Parquet dataset into ``out`` (replaced whole, or left as it was on failure), or
    into object storage when ``out`` is an ``s3://`` (or other fsspec) location (:func:`export_to_storage`).

    Returns what :data:`DATASET_FILE` says: the schema version and each table's layout and row count.
    """
    if is_remote(out):
        return export_to_storage(db, str(out))
    if isinstance(out, str) and _SCHEME_LIKE.match(out):
        raise DatabaseError(
            f"{redact(out)}: not a location fmbench writes to (a local folder, or one of "
            f"{', '.join(REMOTE_PREFIXES)}); a folder of this name is not made"
        )
    out_dir = Path(out)
    if out_dir.exists() and not (out_dir / DATASET_FILE).is_file() and (not out_dir.is_dir() or any(out_dir.iterdir())):
        raise DatabaseError(f"{out_dir}: exists and is not an fmbench Parquet dataset; choose another folder")
    staging = out_dir.with_name(f".{out_dir.name}.export-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    with writing(out_dir, "the Parquet dataset (creating its staging folder)"):
        staging.mkdir(parents=True)
    try:
        with connect(db, read_only=True) as con:
            con.execute("SET enable_progress_bar = false")
            meta: dict[str, Any] = {
                "format": DATASET_FORMAT,
                "schema_version": schema_version(),
                "fmbench_version": __version__,
                "partition_keys": list(PARTITION_KEYS),
                "tables": {},
            }
            for table in _tables(con):
                meta["tables"][table] = _export_table(con, table, staging)
        (staging / DATASET_FILE).write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        if out_dir.exists():
            retired = out_dir.with_name(f".{out_dir.name}.retired-{os.getpid()}")
            out_dir.rename(retired)
            staging.rename(out_dir)
            shutil.rmtree(retired, ignore_errors=True)
        else:
            staging.rename(out_dir)
    except BaseException as exc:
        refused = as_write_error(exc, out_dir, "the Parquet dataset") if isinstance(exc, Exception) else None
        shutil.rmtree(staging, ignore_errors=True)
        if refused is not None and refused is not exc:
            raise refused from None
        raise
    return meta


def export_to_storage(db: str | os.PathLike[str] | None, location: str) -> dict[str, Any]:
    """Write the database as a Parquet dataset under a prefix of object storage, through fsspec (the ``s3`` extra).

    The dataset is written whole into a local temporary folder first, then uploaded: the data files, then the files
    a previous export left there and this one did not write are removed, then :data:`DATASET_FILE` last, so a
    reader never finds a description before its files. Object storage has no rename: a reader that lists the
    prefix during the upload may see some files of each export. A prefix holding objects but no
    :data:`DATASET_FILE` is not fmbench's and is refused, as a local folder is.
    """
    filesystem, spelled = object_storage(location, "writing")
    root = spelled.rstrip("/")
    shown = redact(location)
    try:
        existing = set(filesystem.find(root))
    except FileNotFoundError:
        existing = set()
    except Exception as exc:  # the driver's own errors (botocore's, aiohttp's) have no common base
        raise DatabaseError(f"{shown}: cannot be listed: {library_message(exc)}") from None
    bare = _without_protocol(root)
    existing = {_without_protocol(key) for key in existing}
    if existing and f"{bare}/{DATASET_FILE}" not in existing:
        raise DatabaseError(f"{shown}: holds objects and is not an fmbench Parquet dataset; choose another prefix")
    with tempfile.TemporaryDirectory(prefix="fmbench-export-") as scratch:
        local = Path(scratch) / "dataset"
        meta = export_parquet(db, local)
        files = sorted(p.relative_to(local).as_posix() for p in local.rglob("*") if p.is_file())
        data = [f for f in files if f != DATASET_FILE]
        try:
            for name in data:
                filesystem.put_file(str(local / name), f"{root}/{name}")
            stale = sorted(existing - {f"{bare}/{name}" for name in files} - {f"{bare}/{DATASET_FILE}"})
            if stale:
                filesystem.rm([_with_protocol(spelled, key) for key in stale])
            filesystem.put_file(str(local / DATASET_FILE), f"{root}/{DATASET_FILE}")
        except Exception as exc:  # the driver's own errors (botocore's, aiohttp's) have no common base
            raise DatabaseError(f"{shown}: the Parquet dataset could not be written: {library_message(exc)}") from None
    return meta


def _without_protocol(key: str) -> str:
    return key.split("://", 1)[1] if "://" in key else key


def _with_protocol(spelled: str, key: str) -> str:
    return f"{_scheme(spelled)}://{key}"


def _export_table(con: duckdb.DuckDBPyConnection, table: str, staging: Path) -> dict[str, Any]:
    rows = con.execute(f"SELECT count(*) FROM {_quote(table)}").fetchone()
    count = int(rows[0]) if rows else 0
    columns = _columns(con, table)
    if not _partitioned(con, table):
        target = staging / f"{table}.parquet"
        order = ", ".join(_quote(c) for c in columns)
        con.execute(
            f"COPY (SELECT * FROM {_quote(table)} ORDER BY {order}) TO {_literal(str(target))} (FORMAT parquet)"
        )
        return {"layout": "file", "path": target.name, "rows": count}
    folder = staging / table
    key = _RUN_KEY.get(table, "run_id")
    join = "r.source_sha256" if table == "sources" else "r.run_id"
    source = f"{_quote(table)} t" if table != "runs" else "runs t"
    select = (
        f"SELECT t.*, coalesce(r.hardware_model, 'unknown') AS device, coalesce(r.os_build, 'unknown') AS build "
        f"FROM {source} JOIN runs r ON {join} = t.{_quote(key)}"
    )
    if count:
        order = ", ".join("t." + _quote(c) for c in columns if c != "content")
        con.execute(
            f"COPY ({select} ORDER BY {order}) TO {_literal(str(folder))} (FORMAT parquet, PARTITION_BY (device, build))"
        )
    schema_file = folder / SCHEMA_PARTITION / "columns.parquet"
    schema_file.parent.mkdir(parents=True, exist_ok=True)
    con.execute(f"COPY (SELECT * FROM {_quote(table)} LIMIT 0) TO {_literal(str(schema_file))} (FORMAT parquet)")
    return {"layout": "hive", "path": table, "partition_keys": list(PARTITION_KEYS), "rows": count}


# --- reading ---------------------------------------------------------------------------------------


def _join(location: str, *parts: str) -> str:
    return location.rstrip("/") + "/" + "/".join(parts) if is_remote(location) else str(Path(location, *parts))


def read_metadata(location: str | os.PathLike[str], con: duckdb.DuckDBPyConnection | None = None) -> dict[str, Any]:
    """The dataset's :data:`DATASET_FILE`, checked against this fmbench's schema version."""
    where = str(location)
    path = _join(where, DATASET_FILE)
    try:
        if is_remote(where):
            assert con is not None
            found = con.execute("SELECT content FROM read_text(?)", [path]).fetchone()
            text = found[0] if found else ""
        else:
            text = Path(path).read_text(encoding="utf-8")
        meta = json.loads(text)
    except (OSError, ValueError, duckdb.Error) as exc:
        raise DatabaseError(
            f"{redact(where)}: not an fmbench Parquet dataset (no readable {DATASET_FILE}: {library_message(exc)}); "
            "write one with `fmbench export --parquet DIR`"
        ) from None
    where = redact(where)
    if not isinstance(meta, dict) or not isinstance(meta.get("tables"), dict):
        raise DatabaseError(f"{where}: {DATASET_FILE} is not an fmbench dataset description")
    version = meta.get("schema_version")
    if not isinstance(version, int):
        raise DatabaseError(f"{where}: {DATASET_FILE} names no schema version")
    latest = schema_version()
    if version > latest:
        raise DatabaseError(
            f"{where}: this dataset has schema version {version}, newer than this fmbench knows ({latest}); "
            f"upgrade fmbench (pip install --upgrade {DISTRIBUTION}) to read it"
        )
    if version < latest:
        raise DatabaseError(
            f"{where}: this dataset has schema version {version}, older than this fmbench's ({latest}); "
            "export it again from the database with this fmbench (`fmbench export --parquet DIR`)"
        )
    return meta


def _scheme(location: str) -> str:
    return location.split("://", 1)[0]


def register_object_storage(con: duckdb.DuckDBPyConnection, location: str) -> str:
    """Make ``con`` read ``location`` through an fsspec filesystem, and return the location in the spelling
    that filesystem answers to (``r2://b/x`` is read as ``s3://b/x``).

    The filesystem takes its credentials and endpoint from the environment as the driver defines (for S3 the
    standard AWS variables, ``AWS_ENDPOINT_URL`` included, and the shared config files); DuckDB's own httpfs is
    never installed, so a machine without internet access reads a bucket it can reach.
    """
    filesystem, spelled = object_storage(location, "reading")
    con.register_filesystem(filesystem)
    return spelled


def object_storage(location: str, doing: str = "reading") -> tuple[Any, str]:
    """The fsspec filesystem of a remote ``location`` and the location as it spells it (``r2://`` is ``s3://``).

    A location that names a user or password is refused (masked in the message): credentials come from where the
    driver reads them (for S3 the AWS variables or a profile), never from a location a command line shows.
    """
    scheme = _scheme(location)
    protocol = _FSSPEC_PROTOCOL.get(scheme, scheme)
    if has_credentials(location):
        raise DatabaseError(
            f"{redact(location)}: a location holding credentials is refused (they would be shown wherever the "
            "location is); give them as the storage's driver reads them, for S3 AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY or a profile"
        )
    try:
        # fsspec and its drivers are the optional [s3] extra: only a reader of object storage needs them.
        import fsspec

        filesystem = fsspec.filesystem(protocol)
    except ImportError as exc:
        raise DatabaseError(
            f"{redact(location)}: {doing} {scheme}:// needs fsspec and its {protocol} driver ({library_message(exc)}); "
            f"install them with {STORAGE_EXTRA}"
        ) from None
    except ValueError as exc:
        raise DatabaseError(f"{redact(location)}: no filesystem reads {scheme}:// locations ({library_message(exc)})") from None
    return filesystem, protocol + location[len(scheme) :]


def attach_dataset(con: duckdb.DuckDBPyConnection, location: str | os.PathLike[str]) -> dict[str, Any]:
    """Create, in ``con``, one view per table of the dataset, named and shaped like the table."""
    where = str(location)
    if is_remote(where):
        where = register_object_storage(con, where)
    meta = read_metadata(where, con)
    con.execute("SET parquet_metadata_cache = true")
    try:
        _create_views(con, where, meta)
    except (OSError, duckdb.Error) as exc:
        raise DatabaseError(
            f"{redact(location)}: the dataset's files could not be listed or read: {library_message(exc)}"
        ) from None
    return meta


def _create_views(con: duckdb.DuckDBPyConnection, where: str, meta: dict[str, Any]) -> None:
    for table, info in sorted(meta["tables"].items()):
        if info.get("layout") == "hive":
            # The files are listed once, here, rather than globbed by every query (a dataset does not change).
            pattern = _join(where, str(info["path"]), "**", "*.parquet")
            files = sorted(f for (f,) in con.execute("SELECT file FROM glob(?)", [pattern]).fetchall())
            listing = ", ".join(_literal(f) for f in files)
            source = (
                f"SELECT * EXCLUDE ({', '.join(PARTITION_KEYS)}) FROM read_parquet([{listing}], "
                "hive_partitioning = true, hive_types_autocast = false)"
            )
        else:
            source = f"SELECT * FROM read_parquet({_literal(_join(where, str(info['path'])))})"
        con.execute(f"CREATE OR REPLACE VIEW {_quote(table)} AS {source}")


def dataset_connection(location: str | os.PathLike[str]) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB whose tables are views over the dataset (the caller closes it)."""
    con = duckdb.connect(":memory:")
    try:
        con.execute("SET enable_progress_bar = false")
        attach_dataset(con, location)
    except BaseException:
        con.close()
        raise
    return con


@contextmanager
def open_database(source: str | os.PathLike[str] | None, *, wait: float = 10.0) -> Iterator[duckdb.DuckDBPyConnection]:
    """Read-only access to a DuckDB file (``--db``, ``$FMBENCH_DB``, ``./fmbench.duckdb``) or a Parquet dataset."""
    if is_dataset(source):
        assert source is not None
        con = dataset_connection(source)
        try:
            yield con
        finally:
            con.close()
    else:
        with connect(source, read_only=True, wait=wait) as con:
            con.execute("SET enable_progress_bar = false")  # a long scan would print one over the command's output
            yield con
