"""Older databases: `fmbench migrate` lists and applies schema and data migrations; writers migrate as
they open; readers say to run `fmbench migrate`; an upgraded database verifies clean."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from fmbench.analysis.run import ANALYSIS_VERSION, analyze_file
from fmbench.cli import main
from fmbench.ingest import ingest_paths
from fmbench.ingest.prepare import prepared_from
from fmbench.ingest.writer import Writer, write_prepared
from fmbench.storage.db import migrations, schema_version
from fmbench.storage.originals import gzip_original, original_bytes

from testdata import JUDGING, RUNS

RULES_B = JUDGING / "purpose-rules-b-no-commit.json"
SIMULATOR = JUDGING / "purpose-simulator.json"
CURRENT = RUNS / "purpose-current.json"
FILES = (RULES_B, SIMULATOR, CURRENT)


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def old_database(path: Path, versions: set[int]) -> None:
    """A database as an fmbench before analysis versions left it: only the given schema migrations,
    and the verdicts its rules gave (a run under rules B was "edited by hand"; a Simulator run that
    names its simulated model was a device run)."""
    con = duckdb.connect(str(path))
    con.execute(
        "CREATE TABLE fmbench_migrations (version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL)"
    )
    for m in migrations():
        if m.version in versions:
            con.execute(m.sql)
            con.execute("INSERT INTO fmbench_migrations VALUES (?, ?, now()::TIMESTAMP)", [m.version, m.name])
    writer = Writer(con)
    ids = {}
    for f in FILES:
        analysis = analyze_file(f)
        write_prepared(writer, prepared_from(analysis, f.read_bytes(), None, writer.schemas()))
        ids[f] = analysis.record.run_id
        if 6 not in versions:  # such an fmbench stored each file's own bytes
            con.execute("UPDATE sources SET content = ? WHERE sha256 = ?", [f.read_bytes(), analysis.record.sha256])
    b, sim = ids[RULES_B], ids[SIMULATOR]
    con.execute("UPDATE runs SET verdict = 'invalid' WHERE run_id = ?", [b])
    con.execute(
        "INSERT INTO verdict_reasons VALUES (?, 99, 'invalid', 'summary-mismatch', "
        "'The stored summaries disagree with the trials: the file was edited by hand.')",
        [b],
    )
    con.execute(
        "INSERT INTO summary_mismatches VALUES (?, 'task-capture', 'meanConstraintScore', '0.7', '0.8333')", [b]
    )
    con.execute("UPDATE runs SET verdict = 'exploratory', is_simulator = false WHERE run_id = ?", [sim])
    con.execute("DELETE FROM verdict_reasons WHERE run_id = ? AND code = 'simulator'", [sim])
    con.close()


def _raw_mib(files: tuple[Path, ...]) -> str:
    return f"{sum(f.stat().st_size for f in files) / 2**20:,.1f}"


def _gzipped_mib(files: tuple[Path, ...]) -> str:
    return f"{sum(len(gzip_original(f.read_bytes())) for f in files) / 2**20:,.1f}"


def _sources(db: Path) -> dict[str, tuple[bytes, str]]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        columns = {row[0] for row in con.execute("SELECT column_name FROM information_schema.columns "
                                                 "WHERE table_name = 'sources'").fetchall()}
        encoding = "encoding" if "encoding" in columns else "'identity'"  # before schema migration 6: raw bytes
        return {sha: (bytes(content), kept) for sha, content, kept in
                con.execute(f"SELECT sha256, content, {encoding} FROM sources").fetchall()}
    finally:
        con.close()


def _verdicts(db: Path) -> dict[str, str]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return dict(con.execute("SELECT file_name, verdict FROM runs").fetchall())
    finally:
        con.close()


def test_a_schema_1_database_is_upgraded_by_fmbench_migrate_and_then_verifies(tmp_path: Path) -> None:
    db = tmp_path / "schema1.duckdb"
    old_database(db, {1})

    code, out = invoke("migrate", "--db", str(db), "--list")
    assert code == 0
    lines = out.splitlines()
    later = [f"{m.version:04d}_{m.name}" for m in migrations()[1:]]
    assert lines[0].startswith("schema  0001_initial") and "applied" in lines[0]
    assert [line.split() for line in lines[1 : 1 + len(later)]] == [["schema", name, "pending"] for name in later]
    data = lines[1 + len(later)]
    assert data.startswith(f"data    analysis version {ANALYSIS_VERSION}")
    assert data.endswith("pending  3 run(s) to re-derive from their stored originals")
    gzipped = lines[2 + len(later)]
    assert gzipped.startswith("data    originals gzipped ")
    assert gzipped.endswith("pending  3 original file(s) stored raw, to keep gzipped")
    assert lines[-1] == f"{len(later) + 2} pending: run `fmbench migrate` to apply them"
    assert _verdicts(db)["purpose-rules-b-no-commit.json"] == "invalid"  # --list changes nothing

    code, out = invoke("migrate", "--db", str(db))
    assert code == 0
    assert out.splitlines() == [
        *(f"applied schema {name}" for name in later),
        f"applied data analysis version {ANALYSIS_VERSION} (3 run(s) re-derived)",
        f"applied data originals gzipped (3 file(s), {_raw_mib(FILES)} MiB stored as {_gzipped_mib(FILES)} MiB)",
        "the database is up to date",
    ]
    code, out = invoke("migrate", "--db", str(db), "--list")
    assert code == 0 and "pending" not in out.replace("nothing pending", "")
    assert out.splitlines()[-1] == "nothing pending"
    assert f"data    analysis version {ANALYSIS_VERSION}" in out and "3 run(s) re-derived" in out

    code, out = invoke("verify", "--db", str(db))
    assert code == 0, out
    verdicts = _verdicts(db)
    assert verdicts["purpose-rules-b-no-commit.json"] == "exploratory"
    assert verdicts["purpose-simulator.json"] == "invalid"
    code, out = invoke("migrate", "--db", str(db))
    assert code == 0 and out == "nothing to migrate: the database is up to date\n"


def test_a_database_written_before_analysis_versions_opens_rederives_and_verifies_clean(tmp_path: Path) -> None:
    db = tmp_path / "before.duckdb"
    old_database(db, {1, 2})

    # Readers refuse it in one line and say what to do.
    for args in (["runs", "--db", str(db)], ["build", "--db", str(db), "--out", str(tmp_path / "site")],
                 ["verify", "--db", str(db)]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 1, args
        message = result.output.strip()
        assert "\n" not in message and "run `fmbench migrate`" in message and "schema version 2" in message

    # A writer migrates as it opens: re-ingesting the same bytes re-derives them and adds nothing.
    report = ingest_paths(list(FILES), db)
    assert [o.status for o in report.outcomes] == ["duplicate"] * 3
    assert {o.verdict for o in report.outcomes if o.path.endswith("purpose-rules-b-no-commit.json")} == {"exploratory"}
    code, out = invoke("verify", "--db", str(db))
    assert code == 0, out
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute(
            "SELECT file_name, analysis_version, scoring_rules, scoring_statement, is_simulator FROM runs ORDER BY file_name"
        ).fetchall()
        reasons = con.execute("SELECT count(*) FROM verdict_reasons WHERE code = 'summary-mismatch'").fetchone()
        mismatches = con.execute("SELECT count(*) FROM summary_mismatches").fetchone()
    finally:
        con.close()
    assert rows == [
        ("purpose-current.json", ANALYSIS_VERSION, "D", "stored under rules D, current, since 4e9fa34", False),
        ("purpose-rules-b-no-commit.json", ANALYSIS_VERSION, "B", "stored under rules B, before 60b596e", False),
        ("purpose-simulator.json", ANALYSIS_VERSION, "D", "stored under rules D, current, since 4e9fa34", True),
    ]
    assert reasons == (0,) and mismatches == (0,)


def test_a_reingest_of_identical_bytes_after_the_migration_writes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "again.duckdb"
    old_database(db, {1, 2})
    assert invoke("migrate", "--db", str(db))[0] == 0
    con = duckdb.connect(str(db), read_only=True)
    stamps = con.execute("SELECT run_id, ingested_at FROM runs ORDER BY run_id").fetchall()
    con.close()
    report = ingest_paths(list(FILES), db)
    assert [o.status for o in report.outcomes] == ["duplicate"] * 3
    con = duckdb.connect(str(db), read_only=True)
    assert con.execute("SELECT run_id, ingested_at FROM runs ORDER BY run_id").fetchall() == stamps
    assert con.execute("SELECT count(*) FROM fmbench_data_migrations").fetchone() == (1,)
    con.close()


_PER_TRIAL_TABLES = ("trials", "check_results", "failures", "tool_calls", "final_state")


def _table_contents(db: Path) -> dict[str, tuple[list[tuple[str, str, bool]], list[tuple[object, ...]]]]:
    """Each per-trial table's columns (name, type, nullable) and every row, in order."""
    con = duckdb.connect(str(db), read_only=True)
    try:
        return {
            table: (
                con.execute(
                    "SELECT column_name, data_type, is_nullable FROM duckdb_columns() WHERE table_name = ? "
                    "ORDER BY column_index",
                    [table],
                ).fetchall(),
                con.execute(f"SELECT * FROM {table}").fetchall(),
            )
            for table in _PER_TRIAL_TABLES
        }
    finally:
        con.close()


def test_migration_5_drops_the_per_trial_keys_and_keeps_every_row_column_and_not_null(tmp_path: Path) -> None:
    db = tmp_path / "keyed.duckdb"
    old_database(db, {1, 2, 3, 4})
    before = _table_contents(db)
    assert before["trials"][1] and before["check_results"][1]
    code, out = invoke("migrate", "--db", str(db))
    assert code == 0, out
    after = _table_contents(db)
    assert after == before
    con = duckdb.connect(str(db), read_only=True)
    try:
        keyed = con.execute(
            "SELECT DISTINCT table_name FROM duckdb_constraints() WHERE constraint_type = 'PRIMARY KEY'"
        ).fetchall()
        applied = con.execute("SELECT name FROM fmbench_migrations WHERE version = 5").fetchone()
    finally:
        con.close()
    assert applied == ("unkeyed_trial_rows",)
    assert not {t for (t,) in keyed} & set(_PER_TRIAL_TABLES)
    assert {"runs", "sources", "scenario_figures"} <= {t for (t,) in keyed}


def test_migrate_without_a_database_is_one_line_and_exit_1(tmp_path: Path) -> None:
    for args in (["migrate", "--db", str(tmp_path / "none.duckdb")], ["migrate", "--list", "--db", str(tmp_path / "none.duckdb")]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 1
        assert result.output.strip().count("\n") == 0 and "no such database" in result.output
    assert not (tmp_path / "none.duckdb").exists()


def test_migrate_refuses_a_database_from_a_newer_fmbench_with_a_message_to_upgrade(tmp_path: Path) -> None:
    db = tmp_path / "newer.duckdb"
    assert ingest_paths([CURRENT], db).ok
    con = duckdb.connect(str(db))
    con.execute("INSERT INTO fmbench_migrations VALUES (?, 'from_the_future', now()::TIMESTAMP)", [schema_version() + 1])
    con.close()
    for args in (["migrate", "--db", str(db)], ["migrate", "--list", "--db", str(db)], ["runs", "--db", str(db)]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 1, args
        assert "newer than this fmbench knows" in result.output and "upgrade fmbench" in result.output


def test_migrate_list_as_json_names_every_migration(tmp_path: Path) -> None:
    db = tmp_path / "fresh.duckdb"
    assert ingest_paths([CURRENT], db).ok
    code, out = invoke("migrate", "--db", str(db), "--list", "--json")
    assert code == 0
    doc = json.loads(out)
    assert [m["name"] for m in doc["migrations"]] == [f"{m.version:04d}_{m.name}" for m in migrations()]
    assert all(m["applied"] and m["kind"] == "schema" for m in doc["migrations"])


def test_a_sidecar_stored_before_is_reread_when_its_run_is_rederived(tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    run = folder / "declared.json"
    shutil.copyfile(JUDGING / "purpose-simulator-declared-device.json", run)
    shutil.copyfile(JUDGING / "purpose-simulator-declared-device.meta.yaml", folder / "declared.meta.yaml")
    db = tmp_path / "sidecar.duckdb"
    assert ingest_paths([folder], db).ok
    con = duckdb.connect(str(db))
    con.execute("UPDATE runs SET analysis_version = NULL, verdict = 'invalid', is_simulator = true")
    con.close()
    assert invoke("migrate", "--db", str(db))[0] == 0
    code, out = invoke("verify", "--db", str(db))
    assert code == 0, out
    con = duckdb.connect(str(db), read_only=True)
    try:
        simulator, evidence = con.execute("SELECT is_simulator, simulator_evidence FROM runs").fetchone()
        assert con.execute("SELECT count(*) FROM annotations").fetchone() == (1,)
    finally:
        con.close()
    assert simulator is False and "lab unit 2" in evidence


@pytest.mark.parametrize("versions", [{1}, {1, 2}])
def test_serve_refuses_an_older_database_in_one_line(tmp_path: Path, versions: set[int]) -> None:
    from fmbench.serving.serve import run_server

    db = tmp_path / "old.duckdb"
    old_database(db, versions)
    from fmbench.errors import DatabaseError

    with pytest.raises(DatabaseError, match="run `fmbench migrate`"):
        run_server(db, port=1)


def raw_database(db: Path) -> None:
    """A database whose originals an fmbench before schema migration 6 stored, raw, then brought to schema 6
    (which marks such rows ``identity``)."""
    assert ingest_paths(list(FILES), db).ok
    con = duckdb.connect(str(db))
    for f in FILES:
        con.execute("UPDATE sources SET content = ?, encoding = 'identity' WHERE sha256 = ?",
                    [f.read_bytes(), hashlib.sha256(f.read_bytes()).hexdigest()])
    con.close()


def test_fmbench_migrate_keeps_the_originals_stored_raw_gzipped_and_each_reads_back_exactly(tmp_path: Path) -> None:
    db = tmp_path / "raw.duckdb"
    raw_database(db)
    assert {encoding for _, encoding in _sources(db).values()} == {"identity"}
    code, out = invoke("migrate", "--db", str(db), "--list")
    assert code == 0 and out.splitlines()[-1] == "1 pending: run `fmbench migrate` to apply them"

    code, out = invoke("migrate", "--db", str(db))
    assert code == 0, out
    assert f"applied data originals gzipped (3 file(s), {_raw_mib(FILES)} MiB stored as {_gzipped_mib(FILES)} MiB)" in out
    stored = _sources(db)
    for f in FILES:
        content, encoding = stored[hashlib.sha256(f.read_bytes()).hexdigest()]
        assert encoding == "gzip" and content == gzip_original(f.read_bytes())  # what an ingest stores now
        assert original_bytes(content, encoding, f.name) == f.read_bytes()
    code, out = invoke("verify", "--db", str(db))
    assert code == 0, out
    code, out = invoke("migrate", "--db", str(db))
    assert code == 0 and out == "nothing to migrate: the database is up to date\n"


def test_a_raw_original_whose_bytes_no_longer_match_is_left_as_stored_for_verify_to_name(tmp_path: Path) -> None:
    db = tmp_path / "damaged.duckdb"
    raw_database(db)
    damaged = hashlib.sha256(CURRENT.read_bytes()).hexdigest()
    con = duckdb.connect(str(db))
    con.execute("UPDATE sources SET content = content || 'x'::BLOB WHERE sha256 = ?", [damaged])
    con.close()

    code, out = invoke("migrate", "--db", str(db))
    assert code == 0, out
    assert "(2 file(s)," in out and "1 left as stored, their bytes not their SHA-256's (see `fmbench verify`)" in out
    stored = _sources(db)
    assert stored[damaged] == (CURRENT.read_bytes() + b"x", "identity")
    assert sorted(encoding for _, encoding in stored.values()) == ["gzip", "gzip", "identity"]
    code, out = invoke("verify", "--db", str(db))
    assert code == 1 and "purpose-current.json" in out and "sha256" in out


def test_migrate_finds_the_projects_database_from_a_sub_folder_and_with_project(tmp_path: Path) -> None:
    import subprocess
    import sys

    def fmbench(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-P", "-m", "fmbench", *args], cwd=cwd, capture_output=True, text=True,
                              check=False, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}, timeout=300)

    assert fmbench(tmp_path, "init", "results").returncode == 0
    project = tmp_path / "results"
    (project / "fmbench.toml").write_text(
        (project / "fmbench.toml").read_text(encoding="utf-8").replace('database = "fmbench.duckdb"', 'database = "data/results.duckdb"'),
        encoding="utf-8",
    )
    (project / "data").mkdir()
    assert ingest_paths([CURRENT], project / "data" / "results.duckdb").ok
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for cwd, args in ((project / "runs", ()), (elsewhere, ("--project", str(project)))):
        listed = fmbench(cwd, "migrate", "--list", *args)
        assert listed.returncode == 0, listed.stderr
        assert listed.stdout.splitlines()[-1] == "nothing pending"
        done = fmbench(cwd, "migrate", *args)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == "nothing to migrate: the database is up to date"
    assert not (project / "runs" / "fmbench.duckdb").exists() and not (elsewhere / "fmbench.duckdb").exists()
    outside = fmbench(elsewhere, "migrate")
    assert outside.returncode == 1 and "no such database" in outside.stderr
