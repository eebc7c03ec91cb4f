"""Nothing lost: `fmbench verify` finds any change to what is stored; `fmbench export --originals` gives every byte back."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from fmbench.cli import main
from fmbench.ingest import ingest_paths
from fmbench.ingest.verify import export_originals, verify_database
from fmbench.runfile.record import run_id_for
from fmbench.storage.originals import gzip_original

from testdata import RUNS

CURRENT = RUNS / "purpose-current.json"


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.output


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "verify.duckdb"
    assert ingest_paths([RUNS], path).ok
    return path


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _write(db: Path, sql: str, params: list[object]) -> None:
    con = duckdb.connect(str(db))
    try:
        con.execute(sql, params)
    finally:
        con.close()


def test_verify_of_a_freshly_ingested_database_finds_nothing_and_exits_0(db: Path) -> None:
    code, out = invoke("verify", "--db", str(db))
    assert code == 0, out
    assert out.strip().endswith("4 source(s), 4 run(s) checked: every source and figure matches")
    code, out = invoke("verify", "--db", str(db), "--json")
    assert code == 0
    assert json.loads(out) == {"sources": 4, "runs": 4, "ok": True, "differences": []}


def test_one_flipped_byte_in_a_stored_source_is_reported_with_the_figures_it_changes(db: Path) -> None:
    data = CURRENT.read_bytes()
    at = data.index(b'"duration" : 1.0,') + len(b'"duration" : ')
    flipped = data[:at] + b"9" + data[at + 1 :]  # the first task-capture trial took 9 s, not 1 s
    _write(db, "UPDATE sources SET content = ? WHERE sha256 = ?", [gzip_original(flipped), _sha(CURRENT)])

    report = verify_database(db)
    assert not report.ok
    found = {(d.kind, d.where) for d in report.differences if d.file_name == "purpose-current.json"}
    assert ("sha256", "sources.content") in found
    assert ("figure", "task-capture.duration_max") in found
    assert ("figure", "task-capture.duration_mean") in found
    assert {d.file_name for d in report.differences} == {"purpose-current.json"}
    code, out = invoke("verify", "--db", str(db))
    assert code == 1
    assert f"purpose-current.json (run {run_id_for(_sha(CURRENT))}): sha256 sources.content" in out


def test_a_stored_source_that_no_longer_parses_is_reported_as_unreadable(db: Path) -> None:
    data = CURRENT.read_bytes()
    _write(db, "UPDATE sources SET content = ? WHERE sha256 = ?", [gzip_original(b"[" + data[1:]), _sha(CURRENT)])
    kinds = {d.kind for d in verify_database(db).differences}
    assert kinds == {"sha256", "unreadable"}


def test_a_stored_gzip_that_does_not_decompress_is_reported_and_the_other_sources_still_checked(db: Path) -> None:
    _write(db, "UPDATE sources SET content = ? WHERE sha256 = ?", [CURRENT.read_bytes(), _sha(CURRENT)])
    report = verify_database(db)
    assert report.sources == 4
    [found] = report.differences
    assert (found.file_name, found.kind) == ("purpose-current.json", "unreadable")
    assert "sources.content: the stored file does not decompress" in found.where
    assert "ingest the file again" in found.where


def test_a_source_stored_before_migration_6_is_read_as_its_raw_bytes(db: Path) -> None:
    # A database from before migration 6 keeps raw bytes with encoding 'identity': verified and exported alike.
    _write(db, "UPDATE sources SET content = ?, encoding = 'identity' WHERE sha256 = ?", [CURRENT.read_bytes(), _sha(CURRENT)])
    assert verify_database(db).ok


@pytest.mark.parametrize(
    ("sql", "where"),
    [
        ("UPDATE scenario_figures SET task_success = 0.99 WHERE scenario_id = 'task-capture' AND run_id = ?",
         "task-capture.task_success"),
        ("UPDATE scenario_figures SET ttft_p90 = NULL WHERE scenario_id = 'task-capture' AND run_id = ?",
         "task-capture.ttft_p90"),
        ("UPDATE runs SET verdict = 'publishable' WHERE run_id = ?", "runs.verdict"),
        ("DELETE FROM scenario_figures WHERE scenario_id = 'spatial-puzzle' AND run_id = ?", "spatial-puzzle"),
    ],
)
def test_a_stored_figure_or_verdict_that_differs_from_the_source_is_reported(db: Path, sql: str, where: str) -> None:
    run = run_id_for(_sha(CURRENT))
    _write(db, sql, [run])
    differences = verify_database(db).differences
    assert [(d.run_id, d.where) for d in differences] == [(run, where)]


def test_export_writes_every_original_and_sidecar_back_byte_identical_and_they_ingest_as_duplicates(
    db: Path, tmp_path: Path
) -> None:
    out = tmp_path / "originals"
    code, message = invoke("export", "--db", str(db), "--originals", str(out))
    assert code == 0, message
    inputs = sorted(p.name for p in RUNS.iterdir() if p.is_file())
    assert sorted(p.name for p in out.iterdir()) == inputs
    for name in inputs:
        assert (out / name).read_bytes() == (RUNS / name).read_bytes(), name
    again = ingest_paths([out], db)
    assert {o.status for o in again.outcomes} == {"duplicate"}


def test_export_of_two_runs_with_one_name_adds_the_run_id_to_each(tmp_path: Path) -> None:
    for folder, source in (("a", "purpose-current.json"), ("b", "purpose-hand-edited.json")):
        (tmp_path / folder).mkdir()
        shutil.copy(RUNS / source, tmp_path / folder / "run.json")
    db = tmp_path / "clash.duckdb"
    assert ingest_paths([tmp_path / "a", tmp_path / "b"], db).ok
    written = export_originals(db, tmp_path / "out")
    expected = {
        f"run-{run_id_for(_sha(RUNS / s))}.json": (RUNS / s).read_bytes()
        for s in ("purpose-current.json", "purpose-hand-edited.json")
    }
    assert {p.name: p.read_bytes() for p in written} == expected


def test_export_needs_to_be_told_what_to_export(db: Path) -> None:
    result = CliRunner().invoke(main, ["export", "--db", str(db)])
    assert result.exit_code == 2
    assert "--originals DIR" in result.output
