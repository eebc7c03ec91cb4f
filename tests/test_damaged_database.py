"""A database file with damaged bytes: one line naming what cannot be read and what to do, never a traceback.

The damage is real: the fixture corpus is ingested into a DuckDB file, checkpointed, and 16 bytes in the
middle of one stored original (found by its gzipped bytes, as the ingest stores it) are overwritten, so the
block holding it fails its checksum while the catalog still reads.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from fmbench.cli import main
from fmbench.ingest import ingest_paths
from fmbench.ingest.verify import ExportError, export_originals, verify_database
from fmbench.storage.originals import stored_form
from fmbench.storage.queries import list_runs

from testdata import FIXTURES, RUNS

DAMAGED_RUN = "iphone-17-pro-ios26-23b85-on-device-full-2026-10-31.json"
WHAT_TO_DO = "restore the file from a backup, or move it aside and ingest the run files again"


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def whole_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("damaged") / "whole.duckdb"
    report = ingest_paths([FIXTURES], db)
    assert report.ok
    con = duckdb.connect(str(db))
    con.execute("CHECKPOINT")
    con.close()
    return db


@pytest.fixture
def damaged_db(whole_db: Path, tmp_path: Path) -> Path:
    db = tmp_path / "damaged.duckdb"
    shutil.copy(whole_db, db)
    data = bytearray(db.read_bytes())
    stored = stored_form((FIXTURES / DAMAGED_RUN).read_bytes())
    assert len(stored) > 4096
    at = data.find(stored[256:320])
    assert at > 0 and data.count(stored[256:320]) == 1, "the stored original is not in the file as one piece"
    data[at + 1024 : at + 1040] = b"\xa5" * 16
    db.write_bytes(bytes(data))
    assert len(list_runs(db)) == len(list_runs(whole_db))  # the catalog still reads
    return db


def test_verify_names_every_run_it_cannot_read_and_checks_the_rest(damaged_db: Path) -> None:
    report = verify_database(damaged_db)
    unreadable = [d for d in report.differences if d.kind == "unreadable"]
    assert unreadable and unreadable == report.differences
    assert DAMAGED_RUN in {d.file_name for d in unreadable}
    assert len(unreadable) < report.sources == report.runs  # the runs in other blocks were read and match
    assert all("a block of the database file is damaged" in d.where and WHAT_TO_DO in d.where for d in unreadable)

    code, out = invoke("verify", "--db", str(damaged_db))
    assert code == 1 and "Traceback" not in out
    lines = out.splitlines()
    assert len(lines) == len(unreadable) + 1
    assert lines[-1] == f"{report.sources} source(s), {report.runs} run(s) checked: {len(unreadable)} difference(s)"
    assert any(line.startswith(DAMAGED_RUN) for line in lines)


def test_export_of_a_damaged_database_writes_nothing_and_names_the_file(damaged_db: Path, tmp_path: Path) -> None:
    out_dir = tmp_path / "export"
    with pytest.raises(ExportError) as raised:
        export_originals(damaged_db, out_dir)
    assert "cannot be read: a block of the database file is damaged" in str(raised.value)
    assert list(out_dir.iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["damaged.duckdb", "export"]  # no staging folder left

    code, out = invoke("export", "--originals", str(tmp_path / "cli-export"), "--db", str(damaged_db))
    assert code == 1 and "Traceback" not in out and len(out.strip().splitlines()) == 1
    assert out.startswith("Error: ") and "the stored original of " in out and WHAT_TO_DO in out
    assert "nothing was exported" in out
    assert list((tmp_path / "cli-export").iterdir()) == []


def test_export_of_a_whole_database_writes_every_file_and_leaves_no_staging_folder(
    whole_db: Path, tmp_path: Path
) -> None:
    written = export_originals(whole_db, tmp_path / "export")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export"]
    assert sorted(p.name for p in (tmp_path / "export").iterdir()) == sorted(p.name for p in written)
    assert sorted(p.name for p in written) == sorted(p.name for p in FIXTURES.iterdir())
    assert all(p.read_bytes() == (FIXTURES / p.name).read_bytes() for p in written)


def test_build_of_a_damaged_database_is_one_line_saying_what_to_do(damaged_db: Path, tmp_path: Path) -> None:
    code, out = invoke("build", "--db", str(damaged_db), "--out", str(tmp_path / "site"), "-j", "1")
    assert code == 1 and "Traceback" not in out
    assert len(out.strip().splitlines()) == 1 and out.startswith("Error: ")
    assert "a block of the database file is damaged" in out and WHAT_TO_DO in out
    assert not (tmp_path / "site").exists()


def _database_with_a_wal_left(db: Path) -> Path:
    """A database whose last write is only in its write-ahead log, as a process killed before its checkpoint leaves."""
    assert ingest_paths([RUNS / "purpose-current.json"], db).ok
    con = duckdb.connect(str(db))
    con.execute("PRAGMA disable_checkpoint_on_shutdown")
    con.execute("SET checkpoint_threshold = '1GB'")
    con.execute("CREATE TABLE logged_write AS SELECT range AS i FROM range(100)")
    con.execute("DROP TABLE logged_write")
    con.close()
    wal = db.with_name(db.name + ".wal")
    assert wal.stat().st_size > 64
    return wal


def test_a_wal_that_fails_its_checksum_says_to_move_it_aside_then_verify(tmp_path: Path) -> None:
    db = tmp_path / "logged.duckdb"
    wal = _database_with_a_wal_left(db)
    data = bytearray(wal.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 16] = b"\xee" * 16
    wal.write_bytes(bytes(data))
    for args in (["runs", "--db", str(db)], ["ingest", str(RUNS / "purpose-current.json"), "--db", str(db)]):
        code, out = invoke(*args)
        assert code == 1 and "Traceback" not in out and len(out.strip().splitlines()) == 1, out
        assert "logged.duckdb.wal" in out and "cannot be replayed" in out
        assert "move logged.duckdb.wal out of the folder" in out and "`fmbench verify`" in out
        assert "not a DuckDB database" not in out
    wal.rename(tmp_path / "kept.wal")  # what the message says to do: then the database opens as last checkpointed
    code, out = invoke("verify", "--db", str(db))
    assert code == 0 and "1 source(s), 1 run(s) checked: every source and figure matches" in out
