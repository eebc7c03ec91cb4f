"""The Parquet dataset: exported partitioned by device and OS build, read back as the same tables, the same site."""

from __future__ import annotations

import filecmp
import json
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from fmbench.cli import main
from fmbench.errors import DatabaseError
from fmbench.ingest import ingest_paths
from fmbench.native.store import ingest_artifacts
from fmbench.publish.build import build_site
from fmbench.serving.serve import create_app
from fmbench.storage.dataset import DATASET_FILE, export_parquet, open_database
from fmbench.storage.db import schema_version

from sitebuild import purpose_db
from testdata import FIXTURES, REPO, RUNS

REPLAYS = REPO / "fixtures" / "replays"


MAC_RUNS = (
    "macbook-pro-m5-macos27-26a5353q-on-device-quick-2026-06-19",  # legacy format
    "macbook-pro-m5-macos27-26a5361b-on-device-agentic-2026-09-24",  # the replays link to it
    "macbook-pro-m5-macos27-26a5361b-on-device-performance-2026-10-27",
    "macbook-pro-m5-macos27-26a5378f-on-device-performance-2026-11-04",  # a comparison with the one above
    "macbook-pro-m5-macos27-26a5378f-pcc-quick-2026-11-08",  # PCC, with a sidecar
    "macbook-pro-m5-macos26-25b78-on-device-quick-2026-11-02",  # another OS generation
)


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The purpose-written runs (hostile text included), Mac runs of the fixture corpus (legacy, PCC with a
    sidecar, a comparison, two OS generations) and the Evaluations replays linked to one of them."""
    path = purpose_db(tmp_path_factory.mktemp("parquet") / "db.duckdb")
    runs = [FIXTURES / f"{name}.json" for name in MAC_RUNS]
    assert ingest_paths(runs, path).ok
    ingest_artifacts([REPLAYS], path)
    return path


@pytest.fixture(scope="module")
def dataset(db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dataset") / "dataset"
    export_parquet(db, out)
    return out


def _files(folder: Path) -> dict[str, Path]:
    return {str(p.relative_to(folder)): p for p in sorted(folder.rglob("*")) if p.is_file()}


def test_runs_and_their_tables_are_partitioned_by_device_and_os_build_and_small_tables_are_single_files(
    dataset: Path,
) -> None:
    meta = json.loads((dataset / DATASET_FILE).read_text(encoding="utf-8"))
    assert meta["schema_version"] == schema_version()
    layouts = {table: info["layout"] for table, info in meta["tables"].items()}
    for table in ("runs", "sources", "trials", "check_results", "scenario_figures", "annotations"):
        assert layouts[table] == "hive", table
    assert layouts["evaluations"] == "file"
    assert (dataset / "runs" / "device=Mac17%2C2" / "build=26A5378f").is_dir()
    assert (dataset / "evaluations.parquet").is_file()
    assert meta["tables"]["evaluations"]["rows"] > 0


def test_every_table_reads_back_with_the_same_rows_and_column_types(db: Path, dataset: Path) -> None:
    with open_database(dataset) as view, duckdb.connect(str(db), read_only=True) as table:
        names = [n for (n,) in table.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main' ORDER BY 1").fetchall()]
        for name in names:
            columns = table.execute(f"SELECT * FROM {name} LIMIT 0").description
            assert view.execute(f"SELECT * FROM {name} LIMIT 0").description == columns, name
            keys = ", ".join(str(i + 1) for i in range(len(columns)))
            mine = table.execute(f"SELECT * FROM {name} ORDER BY {keys}").fetchall()
            assert view.execute(f"SELECT * FROM {name} ORDER BY {keys}").fetchall() == mine, name


def test_a_site_built_from_the_parquet_export_equals_the_site_built_from_the_database(
    db: Path, dataset: Path, tmp_path: Path
) -> None:
    from_db, from_parquet = tmp_path / "db-site", tmp_path / "parquet-site"
    build_site(db, from_db)
    build_site(dataset, from_parquet)
    a, b = _files(from_db), _files(from_parquet)
    assert a.keys() == b.keys()
    different = [f for f in a if not filecmp.cmp(a[f], b[f], shallow=False)]
    assert different == []


def test_a_site_built_from_the_parquet_export_by_worker_processes_equals_the_site_built_from_the_database(
    db: Path, dataset: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import fmbench.publish.build

    monkeypatch.setattr(fmbench.publish.build, "PARALLEL_MIN_TRIAL_PAGES", 1)  # workers however small the build
    from_db, from_parquet = tmp_path / "db-site", tmp_path / "parquet-site"
    build_site(db, from_db, jobs=1)
    assert build_site(dataset, from_parquet, jobs=2).workers == 2
    a, b = _files(from_db), _files(from_parquet)
    assert a.keys() == b.keys()
    assert [f for f in a if not filecmp.cmp(a[f], b[f], shallow=False)] == []


def test_serve_answers_from_the_parquet_dataset_as_from_the_database(db: Path, dataset: Path) -> None:
    host = {"Host": "127.0.0.1:8000"}
    from_db = create_app(db).test_client()
    from_parquet = create_app(parquet=dataset).test_client()
    for path in ("/api/runs", "/runs/", "/compare/"):
        a, b = from_db.get(path, headers=host), from_parquet.get(path, headers=host)
        assert a.status_code == b.status_code == 200
        if path.startswith("/api/"):
            assert a.get_json() == b.get_json()


def test_a_dataset_written_by_a_newer_fmbench_is_refused_with_a_message_to_upgrade(dataset: Path, tmp_path: Path) -> None:
    newer = tmp_path / "newer"
    newer.mkdir()
    meta = json.loads((dataset / DATASET_FILE).read_text(encoding="utf-8"))
    meta["schema_version"] = schema_version() + 1
    (newer / DATASET_FILE).write_text(json.dumps(meta), encoding="utf-8")
    with pytest.raises(DatabaseError, match="upgrade fmbench"), open_database(newer):
        pass


def test_a_folder_without_the_dataset_description_is_not_read_as_one(tmp_path: Path) -> None:
    (tmp_path / "runs").mkdir()
    with pytest.raises(DatabaseError, match="not an fmbench Parquet dataset"), open_database(tmp_path):
        pass


def test_export_will_not_replace_a_folder_that_is_not_a_dataset(db: Path, tmp_path: Path) -> None:
    (tmp_path / "mine.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(DatabaseError, match="not an fmbench Parquet dataset"):
        export_parquet(db, tmp_path)
    assert (tmp_path / "mine.txt").read_text(encoding="utf-8") == "keep me"


def test_the_export_and_build_commands_take_a_parquet_folder(tmp_path: Path) -> None:
    db = tmp_path / "one.duckdb"
    assert ingest_paths([RUNS / "purpose-current.json"], db).ok
    runner = CliRunner()
    exported = runner.invoke(main, ["export", "--db", str(db), "--parquet", str(tmp_path / "ds")])
    assert exported.exit_code == 0, exported.output
    assert "written to" in exported.output
    built = runner.invoke(main, ["build", "--parquet", str(tmp_path / "ds"), "--out", str(tmp_path / "site")])
    assert built.exit_code == 0, built.output
    assert (tmp_path / "site" / "index.html").is_file()
    both = runner.invoke(main, ["build", "--parquet", str(tmp_path / "ds"), "--db", str(db)])
    assert both.exit_code != 0 and "not both" in both.output
