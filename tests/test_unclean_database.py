"""An unclean database: the log a crash leaves beside it, a log that is not its own, a file that is no database.

A write that stops (killed, power lost) leaves ``<db>.wal`` beside the file.
The next command opens the database with it, reading or writing; a log that
cannot be replayed, and a file that is not a DuckDB database at all, are one
line saying so and what to do.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from fmbench.cli import main
from fmbench.ingest import ingest_paths
from fmbench.ingest.verify import verify_database

from stopping import child
from testdata import RUNS


def invoke(*args: str | Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


def _killed_ingest(batch: Path, db: Path) -> None:
    """An ingest killed while writing its second file, after the first was committed: the log stays."""
    result = subprocess.run(
        child("ingest", batch, db, "b-second.json:runs"), capture_output=True, check=False,
    )
    assert result.returncode == -9
    assert db.with_name(db.name + ".wal").stat().st_size > 0


@pytest.fixture
def crashed(tmp_path: Path) -> Path:
    batch = tmp_path / "batch"
    batch.mkdir()
    shutil.copy(RUNS / "purpose-current.json", batch / "a-first.json")
    shutil.copy(RUNS / "purpose-hand-edited.json", batch / "b-second.json")
    db = tmp_path / "crashed.duckdb"
    _killed_ingest(batch, db)
    return db


def test_a_database_with_the_log_of_a_killed_ingest_opens_for_reading_and_for_writing(crashed: Path, tmp_path: Path) -> None:
    code, out = invoke("runs", "--db", crashed)
    assert code == 0 and out.strip().endswith("1 run(s)"), out
    assert verify_database(crashed).ok
    code, out = invoke("build", "--db", crashed, "--out", tmp_path / "site")
    assert code == 0, out

    code, out = invoke("ingest", "-q", tmp_path / "batch", "--db", crashed)
    assert code == 0 and "1 ingested" in out and "1 skipped as duplicates" in out, out
    report = verify_database(crashed)
    assert report.ok and report.runs == 2


def test_a_log_that_is_not_the_databases_own_is_refused_with_what_to_do(crashed: Path, tmp_path: Path) -> None:
    other = tmp_path / "other.duckdb"
    assert ingest_paths([RUNS / "purpose-current.json"], other).ok
    log = other.with_name("other.duckdb.wal")
    shutil.copy(crashed.with_name(crashed.name + ".wal"), log)

    for args in (("runs", "--db", other), ("ingest", RUNS / "purpose-hand-edited.json", "--db", other), ("verify", "--db", other)):
        code, out = invoke(*args)
        assert code == 1, (args, out)
        assert out.strip().splitlines() == [
            f"Error: {other}: the log of a write that did not finish (other.duckdb.wal) cannot be replayed "
            "(WAL does not match database file); move other.duckdb.wal out of the folder (keep it: it may hold "
            "the last writes) and run `fmbench verify` to check what the database holds, then ingest again what is missing"
        ], args

    log.rename(tmp_path / "kept.wal")  # what the message says to do
    code, out = invoke("verify", "--db", other)
    assert code == 0, out


def test_a_file_that_is_not_a_duckdb_database_is_named_as_such(tmp_path: Path) -> None:
    not_db = tmp_path / "notes.duckdb"
    not_db.write_text("these are my notes, not a database\n" * 200, encoding="utf-8")
    expected = f"Error: {not_db}: not a DuckDB database file; point --db at an fmbench database (or another, new file name)"
    for args in (
        ("runs", "--db", not_db),
        ("ingest", RUNS / "purpose-current.json", "--db", not_db),
        ("build", "--db", not_db, "--out", tmp_path / "site"),
        ("verify", "--db", not_db),
    ):
        code, out = invoke(*args)
        assert code == 1, (args, out)
        assert out.strip().splitlines() == [expected], args
    assert not_db.read_text(encoding="utf-8").startswith("these are my notes")
