"""Ingest: whole files or nothing, the same bytes once, bad files reported while good ones land."""

from __future__ import annotations

import gzip
import json
import shutil
import subprocess
from pathlib import Path

import duckdb
import pytest

from fmbench.errors import DatabaseError
from fmbench.ingest import ingest_paths, writable
from fmbench.ingest.writer import CHILD_TABLES
from fmbench.storage.db import connect, schema_version
from fmbench.storage.originals import gzip_original, original_bytes

from stopping import child
from testdata import BAD, RUNS


def _count(db: Path, table: str) -> int:
    con = duckdb.connect(str(db), read_only=True)
    try:
        row = con.execute(f"SELECT count(*) FROM {table}").fetchone()
        return int(row[0]) if row else 0
    finally:
        con.close()


def test_a_batch_with_bad_files_lands_the_good_ones_and_names_each_error(tmp_path: Path, db_path: Path) -> None:
    batch = tmp_path / "batch"
    shutil.copytree(BAD, batch)
    shutil.copy(RUNS / "purpose-current.json", batch / "good.json")
    report = ingest_paths([batch], db_path)
    by_file = {Path(o.path).name: o for o in report.outcomes}
    assert by_file["good.json"].status == "ingested"
    assert {n for n, o in by_file.items() if o.status == "error"} == {
        "truncated.json", "wrong-type.json", "missing-field.json", "not-a-run.json", "empty.json"
    }
    assert by_file["wrong-type.json"].message == (
        "wrong-type.json: trials[3].metrics.duration: expected a number, found '4.0'"
    )
    assert not report.ok
    assert _count(db_path, "runs") == 1
    assert _count(db_path, "trials") == 10


def test_ingesting_the_same_bytes_twice_adds_nothing(db_path: Path) -> None:
    tables = ("sources", "runs", "trials", "check_results", "failures", "scenario_figures", "verdict_reasons")
    first = ingest_paths([RUNS / "purpose-current.json"], db_path)
    before = {t: _count(db_path, t) for t in tables}
    second = ingest_paths([RUNS / "purpose-current.json", RUNS], db_path)
    assert [o.status for o in first.outcomes] == ["ingested"]
    assert second.outcomes[0].status == "duplicate"
    assert before["runs"] == 1 and before["trials"] == 10 and before["failures"] == 2
    after = {t: _count(db_path, t) for t in tables}
    in_folder = len(list(RUNS.glob("*.json")))
    assert after["runs"] == in_folder  # the folder added the other files, nothing twice
    assert after["sources"] == in_folder


def test_the_original_bytes_come_back_byte_identical(db_path: Path) -> None:
    source = RUNS / "purpose-current.json"
    ingest_paths([source], db_path)
    with connect(db_path, read_only=True) as con:
        row = con.execute("SELECT content, encoding, file_name, size_bytes FROM sources").fetchone()
    assert row is not None
    assert original_bytes(row[0], row[1], "sources.content") == source.read_bytes()
    assert row[2] == "purpose-current.json" and row[3] == source.stat().st_size


def test_a_new_file_is_stored_as_the_gzip_the_site_carries(db_path: Path) -> None:
    # One gzip of each original: the ingest keeps it, a site's `gzip` originals are those bytes, and any gzip
    # reader gives the file back.
    source = RUNS / "purpose-current.json"
    ingest_paths([source], db_path)
    with connect(db_path, read_only=True) as con:
        stored, encoding = con.execute("SELECT content, encoding FROM sources").fetchone()
    assert encoding == "gzip"
    assert bytes(stored) == gzip_original(source.read_bytes())
    assert gzip.decompress(bytes(stored)) == source.read_bytes()
    assert len(stored) < source.stat().st_size / 4


def test_the_seed_and_figures_are_stored_exactly(db_path: Path) -> None:
    ingest_paths([RUNS / "purpose-current.json"], db_path)
    with connect(db_path, read_only=True) as con:
        seed = con.execute("SELECT random_seed FROM runs").fetchone()
        ttft = con.execute(
            "SELECT ttft_median, ttft_p90, task_success FROM scenario_figures WHERE scenario_id = 'task-capture'"
        ).fetchone()
    assert seed == (18446744073709551615,)
    assert ttft == (0.2, 0.4, 0.4)


def test_a_hand_edited_summary_is_recorded_per_field_and_judged_invalid(db_path: Path) -> None:
    report = ingest_paths([RUNS / "purpose-hand-edited.json"], db_path)
    assert report.outcomes[0].verdict == "invalid"
    with connect(db_path, read_only=True) as con:
        mismatches = con.execute("SELECT scenario_id, field, stored_json, recomputed_json FROM summary_mismatches").fetchall()
        codes = [r[0] for r in con.execute("SELECT code FROM verdict_reasons WHERE level = 'invalid'").fetchall()]
    assert mismatches == [("task-capture", "promptPassRate", "1.0", "0.5")]
    assert codes == ["summary-mismatch"]


def test_a_file_declaring_more_repetitions_than_it_holds_is_invalid(db_path: Path) -> None:
    report = ingest_paths([RUNS / "purpose-declares-more-repetitions.json"], db_path)
    assert report.outcomes[0].verdict == "invalid"


def test_a_database_from_a_newer_fmbench_is_refused_with_a_message_to_upgrade(db_path: Path) -> None:
    ingest_paths([RUNS / "purpose-current.json"], db_path)
    con = duckdb.connect(str(db_path))
    con.execute("INSERT INTO fmbench_migrations VALUES (?, 'from_the_future', now()::TIMESTAMP)", [schema_version() + 1])
    con.close()
    with pytest.raises(DatabaseError, match="upgrade fmbench"), writable(db_path):
        pass


STAGES = ("sources", "runs", *CHILD_TABLES)
"""Every point a checkpoint can kill the ingest at: after each table of a run is written."""


def _every_table_count(db: Path) -> dict[str, int]:
    with connect(db, read_only=True) as con:
        return {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("sources", "runs", *CHILD_TABLES)}


@pytest.fixture(scope="module")
def kill_batch(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, int], dict[str, int]]:
    """A good first file and a second one with rows for every table; the counts after each lands."""
    root = tmp_path_factory.mktemp("kill")
    batch = root / "batch"
    batch.mkdir()
    shutil.copy(RUNS / "purpose-current.json", batch / "a-first.json")
    doc = json.loads((RUNS / "purpose-current.json").read_bytes())
    doc["trials"][0]["toolCalls"] = [{"name": "createReminder", "arguments": {"title": {"string": {"_0": "x"}}}}]
    doc["trials"][0]["finalState"] = {"values": {"reminders.count": {"integer": {"_0": 1}}}}
    doc["summaries"][0]["promptPassRate"] = 1  # a stored summary that disagrees: a mismatch row
    (batch / "b-second.json").write_text(json.dumps(doc, indent=2), encoding="utf-8")
    (batch / "b-second.meta.yaml").write_text("connection: wifi\nnote: second\n", encoding="utf-8")
    first = root / "first.duckdb"
    assert ingest_paths([batch / "a-first.json"], first).ok
    both = root / "both.duckdb"
    assert ingest_paths([batch], both).ok
    after_first, after_both = _every_table_count(first), _every_table_count(both)
    assert all(after_both[t] > after_first[t] for t in after_both), "the second file must write every table"
    return batch, after_first, after_both


@pytest.fixture(scope="module")
def killed(kill_batch: tuple[Path, dict[str, int], dict[str, int]], tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, int]]:
    """One ingest of the batch per stage, each SIGKILLed there by its checkpoints (four at a time)."""
    batch = kill_batch[0]
    root = tmp_path_factory.mktemp("killed")
    done: dict[str, tuple[Path, int]] = {}
    for i in range(0, len(STAGES), 4):
        running = {
            stage: subprocess.Popen(child("ingest", batch, root / f"{stage}.duckdb", f"b-second.json:{stage}"))
            for stage in STAGES[i : i + 4]
        }
        done |= {stage: (root / f"{stage}.duckdb", proc.wait(timeout=120)) for stage, proc in running.items()}
    return done


@pytest.mark.parametrize("stage", STAGES)
def test_an_ingest_killed_at_any_stage_leaves_earlier_files_whole_no_trace_of_the_interrupted_one_and_reruns_clean(
    kill_batch: tuple[Path, dict[str, int], dict[str, int]], killed: dict[str, tuple[Path, int]], stage: str
) -> None:
    batch, after_first, after_both = kill_batch
    db, returncode = killed[stage]
    assert returncode == -9, f"not killed at {stage}"
    with connect(db, read_only=True) as con:  # still openable, at the current schema version
        assert con.execute("SELECT file_name FROM runs").fetchall() == [("a-first.json",)]
    assert _every_table_count(db) == after_first
    again = ingest_paths([batch], db)
    assert [o.status for o in again.outcomes] == ["duplicate", "ingested"]
    assert _every_table_count(db) == after_both


def test_a_file_that_needs_more_than_the_write_memory_cap_is_written_again_uncapped_and_whole(
    db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import fmbench.ingest as ingest
    import fmbench.ingest.writer as writer

    run = RUNS / "purpose-current.json"
    monkeypatch.setattr(writer, "write_memory_limit", lambda size, largest=0: -(2**40))  # a limit DuckDB cannot write a row under
    prepared = []
    prepare = ingest.prepare
    monkeypatch.setattr(ingest, "prepare", lambda *a, **k: prepared.append(1) or prepare(*a, **k))
    report = ingest_paths([run], db_path, workers=0)
    assert [o.status for o in report.outcomes] == ["ingested"], report.outcomes
    assert len(prepared) == 2, "the capped write should have run out of memory and been done again"
    with connect(db_path, read_only=True) as con:
        assert original_bytes(*con.execute("SELECT content, encoding FROM sources").fetchone(), "") == run.read_bytes()
        assert con.execute("SELECT count(*) FROM sources").fetchone() == (1,)
        assert con.execute("SELECT count(*) FROM trials").fetchone()[0] > 0


def test_a_batch_writer_keeps_its_memory_cap_between_files_and_gives_duckdb_its_settings_back(db_path: Path) -> None:
    from fmbench.analysis.revisions import load_registry
    from fmbench.ingest.prepare import PreparedRun, prepare
    from fmbench.ingest.writer import Writer, write_prepared
    from fmbench.runfile.reader import DEFAULT_MAX_BYTES

    settings = "SELECT current_setting('memory_limit'), current_setting('threads')"
    registry = load_registry()
    with writable(db_path) as con:
        own = con.execute(settings).fetchone()
        writer = Writer(con, hold_cap=True)
        limits = []
        for name in ("purpose-current.json", "hostile-text.json", "purpose-declares-more-repetitions.json"):
            prepared = prepare(RUNS / name, registry, DEFAULT_MAX_BYTES, writer.schemas())
            assert isinstance(prepared, PreparedRun)
            write_prepared(writer, prepared)
            limit, threads = con.execute(settings).fetchone()
            assert limit != own[0] and int(threads) == 1, "a cap is in force between the files of a batch"
            limits.append(limit)
        # The first file is written under exactly its own limit; a raised cap leaves room for the next small files.
        assert limits[1] == limits[2], "a third small file is written under the cap already in force"
        writer.release_cap()
        assert con.execute(settings).fetchone() == own

        single = Writer(con)
        prepared = prepare(RUNS / "purpose-hand-edited.json", registry, DEFAULT_MAX_BYTES, single.schemas())
        assert isinstance(prepared, PreparedRun)
        write_prepared(single, prepared)
        assert con.execute(settings).fetchone() == own, "a lone file's writer gives the settings back at once"
        assert con.execute("SELECT count(*) FROM runs").fetchone() == (4,)


def test_a_writable_open_without_the_data_migration_is_refused(tmp_path: Path) -> None:
    """Storage sits below the analysis that re-derives runs: a writer opens through fmbench.ingest.writable."""
    with pytest.raises(TypeError, match=r"fmbench\.ingest\.writable"), connect(tmp_path / "db.duckdb"):
        pass
    assert not (tmp_path / "db.duckdb").exists()
