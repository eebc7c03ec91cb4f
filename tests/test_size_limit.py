"""The run-file size limit (``--max-bytes``) holds on every path a run file comes in by.

``validate``, ``ingest`` and ``summarize`` are covered in test_malformed_input.py;
here: the folder ``serve --watch`` ingests, ``native replay``, and the limit's
edge. Tested with the limit lowered, not with a huge file.
"""

from __future__ import annotations

import shutil
import time
import urllib.request
from pathlib import Path

from click.testing import CliRunner

from fmbench.cli import main
from fmbench.storage.db import connect

from browser_support import fmbench_server
from testdata import RUNS

RUN = RUNS / "purpose-current.json"


def _limit_message(size: int, limit: int) -> str:
    return (
        f"{size:,} bytes is larger than the {limit:,}-byte limit for a run file; "
        "raise it with --max-bytes if this really is one run"
    )


def test_serve_watch_refuses_a_dropped_file_over_its_max_bytes_and_says_so_on_the_diagnostics_page(tmp_path: Path) -> None:
    watch = tmp_path / "watched"
    watch.mkdir()
    db = tmp_path / "served.duckdb"
    limit = RUN.stat().st_size - 1
    with fmbench_server(db, watch, "--max-bytes", str(limit)) as url:
        shutil.copy(RUN, watch / "dropped.json")
        deadline = time.monotonic() + 30
        page = ""
        while time.monotonic() < deadline and "dropped.json" not in page:
            time.sleep(0.5)
            with urllib.request.urlopen(url + "diagnostics/", timeout=5) as response:
                page = response.read().decode("utf-8")
    assert "dropped.json" in page, "the watcher never reported the dropped file"
    assert _limit_message(RUN.stat().st_size, limit) in page
    with connect(db, read_only=True) as con:
        assert con.execute("SELECT count(*) FROM runs").fetchone() == (0,)


def test_native_replay_refuses_a_run_file_over_its_max_bytes(tmp_path: Path) -> None:
    size = RUN.stat().st_size
    result = CliRunner().invoke(main, ["native", "replay", str(RUN), "--output", str(tmp_path), "--max-bytes", "1000"])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [f"Error: {RUN}: {_limit_message(size, 1000)}"]
    assert list(tmp_path.iterdir()) == []

    result = CliRunner().invoke(main, ["native", "replay", str(RUN), "--output", str(tmp_path), "--max-bytes", str(size)])
    assert result.exit_code == 0, result.output
    assert [p.name for p in tmp_path.iterdir()] == ["purpose-current.xcevalresult"]


def test_a_file_of_exactly_the_limit_is_ingested_and_one_byte_over_is_refused(tmp_path: Path) -> None:
    size = RUN.stat().st_size
    db = str(tmp_path / "db.duckdb")
    result = CliRunner().invoke(main, ["ingest", str(RUN), "--db", db, "--max-bytes", str(size - 1)])
    assert result.exit_code == 1
    assert _limit_message(size, size - 1) in result.output
    result = CliRunner().invoke(main, ["ingest", str(RUN), "--db", db, "--max-bytes", str(size)])
    assert result.exit_code == 0 and "1 ingested" in result.output, result.output


def _project_with_the_run(tmp_path: Path) -> Path:
    from fmbench.scaffold import init_project

    root = init_project(tmp_path / "results", title="Size limit").root
    shutil.copy(RUN, root / "runs" / RUN.name)
    return root


def _stored_runs(db: Path) -> list[str]:
    with connect(db, read_only=True) as con:
        return [name for (name,) in con.execute("SELECT file_name FROM runs").fetchall()]


def test_a_project_build_refuses_a_run_file_in_its_runs_folder_over_max_bytes_and_names_it(tmp_path: Path) -> None:
    project = _project_with_the_run(tmp_path)
    size = RUN.stat().st_size
    limit = size - 1

    result = CliRunner().invoke(main, ["build", "--project", str(project), "--max-bytes", str(limit)])

    assert result.exit_code == 0, result.output  # the site is built without it
    refused = [line for line in result.output.splitlines() if line.startswith(f"  runs/{RUN.name}: ")]
    assert refused == [f"  runs/{RUN.name}: (file): {_limit_message(size, limit)}"]
    assert _stored_runs(project / "fmbench.duckdb") == []
    strict = CliRunner().invoke(main, ["build", "--project", str(project), "--max-bytes", str(limit), "--strict"])
    assert strict.exit_code == 1, strict.output

    result = CliRunner().invoke(main, ["build", "--project", str(project), "--max-bytes", str(size)])
    assert result.exit_code == 0, result.output
    assert f"ingested {RUN.name} (run " in result.output
    assert _stored_runs(project / "fmbench.duckdb") == [RUN.name]


def test_serve_in_a_project_mirrors_its_runs_folder_within_max_bytes(tmp_path: Path) -> None:
    project = _project_with_the_run(tmp_path)
    db = project / "fmbench.duckdb"
    size = RUN.stat().st_size
    with fmbench_server(db, None, "--project", str(project), "--max-bytes", str(size - 1)) as url:
        with urllib.request.urlopen(url, timeout=5) as response:
            assert response.status == 200
        assert _stored_runs(db) == []  # refused by the mirroring, as ingest refuses it
    with fmbench_server(db, None, "--project", str(project), "--max-bytes", str(size)) as url:
        with urllib.request.urlopen(url, timeout=5) as response:
            assert response.status == 200
        assert _stored_runs(db) == [RUN.name]


def test_a_file_over_the_default_limit_is_refused_by_ingest_with_the_limit_and_how_to_raise_it(tmp_path: Path) -> None:
    from fmbench.runfile.reader import DEFAULT_MAX_BYTES

    big = tmp_path / "big.json"
    with big.open("wb") as f:  # sparse: the limit is checked on the file's size, before a byte is read
        f.truncate(DEFAULT_MAX_BYTES + 1)
    result = CliRunner().invoke(main, ["ingest", str(big), "--db", str(tmp_path / "db.duckdb")])
    assert result.exit_code == 1
    assert _limit_message(DEFAULT_MAX_BYTES + 1, DEFAULT_MAX_BYTES) in result.output
