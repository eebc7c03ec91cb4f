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
from fmbench.db import connect

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
