"""Hostile things to read: a FIFO, /dev/zero, a device, a file larger than it says, nesting without end.

Every file a user names goes through one guard (``fmbench/runfile/user_files.py``): a regular file or a
one-line refusal, an open that never blocks, a size bounded while reading. The commands that could hang
run as real processes under a timeout and a memory cap, so a regression fails here instead of hanging the
suite or eating the machine.
"""

from __future__ import annotations

import os
import re
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from fmbench.cli import main
from fmbench.project import load_project
from fmbench.runfile.user_files import FileTooLarge, NotRegularFile, read_bytes
from fmbench.scaffold import init_project
from fmbench.storage.db import connect

from testdata import RUNS

RUN = RUNS / "purpose-current.json"
OTHER = RUNS / "purpose-hand-edited.json"
MEMORY_CAP = 1536 * 1024 * 1024
"""What a command run here may map: far above fmbench's need, far below /dev/zero read whole."""


def _capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


def run_cli(*args: str | Path, cwd: Path | None = None, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    """``fmbench ARGS`` as a real process, under a memory cap, killed after ``timeout`` seconds (a test
    that meets a blocking open fails with ``TimeoutExpired`` instead of hanging)."""
    return subprocess.run(
        [sys.executable, "-P", "-m", "fmbench", *map(str, args)],
        capture_output=True, text=True, timeout=timeout, check=False, cwd=cwd, preexec_fn=_capped,
    )


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 1, (result.returncode, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    return lines[0]


def _stored_files(db: Path) -> list[str]:
    with connect(db, read_only=True) as con:
        return sorted(name for (name,) in con.execute("SELECT file_name FROM runs").fetchall())


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "pipe.json"
    os.mkfifo(path)
    return path


# --- summarize ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("through_a_link", [False, True], ids=["named", "linked"])
def test_summarize_of_dev_zero_is_refused_in_one_line_as_not_a_regular_file(tmp_path: Path, through_a_link: bool) -> None:
    target = Path("/dev/zero")
    if through_a_link:
        target = tmp_path / "run.json"
        target.symlink_to("/dev/zero")
    line = one_line_error(run_cli("summarize", target, timeout=60))
    assert f"Error: {target.name}: (file): not a regular file (a character device)" in line


def test_summarize_of_a_fifo_is_refused_at_once_without_waiting_for_a_writer(fifo: Path) -> None:
    line = one_line_error(run_cli("summarize", fifo, timeout=60))
    assert "pipe.json: (file): not a regular file (a FIFO (named pipe))" in line


def test_the_size_limit_holds_while_reading_a_file_whose_size_says_zero(tmp_path: Path) -> None:
    """/proc files are regular files whose st_size is 0 whatever they hold: the limit is counted on the
    bytes read, not taken from the file's size."""
    proc = Path("/proc/self/maps")
    assert proc.stat().st_size == 0
    with pytest.raises(FileTooLarge) as refused:
        read_bytes(proc, 64)
    assert refused.value.size == 65 and refused.value.limit == 64
    code = CliRunner().invoke(main, ["summarize", str(proc), "--max-bytes", "64"])
    assert code.exit_code == 1
    assert "maps: (file): 65 bytes is larger than the 64-byte limit for a run file; raise it with --max-bytes" in code.output


def test_the_guard_refuses_a_fifo_a_device_and_a_folder_without_opening_them_for_long(tmp_path: Path, fifo: Path) -> None:
    for path, kind in ((fifo, "a FIFO (named pipe)"), (Path("/dev/zero"), "a character device"), (tmp_path, "a folder")):
        with pytest.raises(NotRegularFile, match=re.escape(f"not a regular file ({kind})")):
            read_bytes(path, 1024)


# --- ingest and validate --------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["ingest", "validate"])
def test_ingest_and_validate_name_a_fifo_and_dev_zero_as_not_regular_files_and_go_on(
    tmp_path: Path, fifo: Path, command: str
) -> None:
    good = tmp_path / "good.json"
    shutil.copy(RUN, good)
    args: list[str | Path] = [command, fifo, "/dev/zero", good]
    if command == "ingest":
        args += ["--db", tmp_path / "x.duckdb"]
    result = run_cli(*args, timeout=120)
    assert result.returncode == 1, result.stderr
    out = result.stdout
    assert "pipe.json: not a regular file (a FIFO (named pipe))" in out, out
    assert "/dev/zero: not a regular file (a character device)" in out, out
    assert "no such file or folder" not in out
    if command == "ingest":
        assert _stored_files(tmp_path / "x.duckdb") == ["good.json"]


def test_a_fifo_and_a_device_link_in_a_runs_folder_are_named_one_line_each_and_the_rest_is_ingested(tmp_path: Path) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    shutil.copy(RUN, folder / "a.json")
    os.mkfifo(folder / "b.json")
    (folder / "c.json").symlink_to("/dev/zero")
    shutil.copy(OTHER, folder / "d.json")
    db = tmp_path / "x.duckdb"
    result = run_cli("ingest", folder, "--db", db, timeout=120)
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert sum("b.json: not a regular file (a FIFO (named pipe)); skipped" in line for line in lines) == 1, result.stdout
    assert sum("c.json: not a regular file (a character device); skipped" in line for line in lines) == 1, result.stdout
    assert _stored_files(db) == ["a.json", "d.json"]


@pytest.mark.parametrize("sidecar_kind", ["fifo", "device"])
def test_a_fifo_or_a_device_as_a_sidecar_is_named_in_one_line_and_the_batch_goes_on(tmp_path: Path, sidecar_kind: str) -> None:
    folder = tmp_path / "runs"
    folder.mkdir()
    shutil.copy(RUN, folder / "a.json")
    sidecar = folder / "a.meta.yaml"
    if sidecar_kind == "fifo":
        os.mkfifo(sidecar)
    else:
        sidecar.symlink_to("/dev/zero")
    shutil.copy(OTHER, folder / "b.json")
    db = tmp_path / "x.duckdb"
    result = run_cli("ingest", folder, "--db", db, timeout=120)
    kind = "a FIFO (named pipe)" if sidecar_kind == "fifo" else "a character device"
    named = [line for line in result.stdout.splitlines() if f"a.meta.yaml: not a regular file ({kind})" in line]
    assert len(named) == 1, result.stdout
    assert "b.json" in _stored_files(db)


def test_a_project_build_names_a_fifo_in_its_runs_folder_and_publishes_the_rest(tmp_path: Path) -> None:
    root = init_project(tmp_path / "results", title="Hostile reading").root
    shutil.copy(RUN, root / "runs" / RUN.name)
    os.mkfifo(root / "runs" / "stuck.json")
    result = run_cli("build", "--project", root, timeout=240)
    assert result.returncode == 0, result.stderr
    assert "stuck.json: not a regular file (a FIFO (named pipe)); skipped" in result.stdout + result.stderr
    assert _stored_files(root / "fmbench.duckdb") == [RUN.name]
    assert (load_project(root).output / "index.html").is_file()
