"""Hostile things to read: a FIFO, /dev/zero, a device, a file larger than it says, nesting without end.

Every file a user names goes through one guard (``fmbench/runfile/user_files.py``): a regular file or a
one-line refusal, an open that never blocks, a size bounded while reading. The commands that could hang
run as real processes under a timeout and a memory cap, so a regression fails here instead of hanging the
suite or eating the machine.
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner

from fmbench.cli import main
from fmbench.native.reader import ReadLimits, read_artifacts
from fmbench.project import ProjectError, load_project, toml_too_deep
from fmbench.runfile.user_files import FileTooLarge, NotRegularFile, read_bytes
from fmbench.scaffold import init_project
from fmbench.storage.db import connect

from browser_support import fmbench_server
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


def test_native_replay_of_dev_zero_and_of_a_fifo_is_one_line_and_writes_nothing(tmp_path: Path, fifo: Path) -> None:
    out = tmp_path / "out"
    for source, kind in ((Path("/dev/zero"), "a character device"), (fifo, "a FIFO (named pipe)")):
        line = one_line_error(run_cli("native", "replay", source, "--output", out, timeout=60))
        assert f"{source}: not a regular file ({kind})" in line, line
    assert not out.exists() or list(out.iterdir()) == []


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
    # a sidecar that cannot be read is a warning (on stderr) and its run is published without its fields
    named = [line for line in result.stderr.splitlines() if f"a.meta.yaml: not a regular file ({kind})" in line]
    assert len(named) == 1, result.stderr
    assert result.returncode == 0
    assert {"a.json", "b.json"} <= set(_stored_files(db))


def test_serve_watch_names_a_fifo_dropped_in_its_folder_and_ingests_the_file_beside_it(tmp_path: Path) -> None:
    watch = tmp_path / "watched"
    watch.mkdir()
    db = tmp_path / "served.duckdb"
    with fmbench_server(db, watch) as url:
        os.mkfifo(watch / "stuck.json")
        shutil.copy(RUN, watch / "good.json")
        deadline = time.monotonic() + 60
        page = ""
        while time.monotonic() < deadline and not ("stuck.json" in page and "good.json" in page):
            time.sleep(0.5)
            with urllib.request.urlopen(url + "diagnostics/", timeout=5) as response:
                page = response.read().decode("utf-8")
    assert "stuck.json: not a regular file (a FIFO (named pipe))" in page, "the watcher never named the FIFO"
    assert _stored_files(db) == ["good.json"]


def test_a_project_build_names_a_fifo_in_its_runs_folder_and_publishes_the_rest(tmp_path: Path) -> None:
    root = init_project(tmp_path / "results", title="Hostile reading").root
    shutil.copy(RUN, root / "runs" / RUN.name)
    os.mkfifo(root / "runs" / "stuck.json")
    result = run_cli("build", "--project", root, timeout=240)
    assert result.returncode == 0, result.stderr
    assert "stuck.json: not a regular file (a FIFO (named pipe)); skipped" in result.stdout + result.stderr
    assert _stored_files(root / "fmbench.duckdb") == [RUN.name]
    assert (load_project(root).output / "index.html").is_file()


# --- a project's own files: nesting without end, a methodology too long to render -------------------------


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project built once, so that ``runs`` has a database to list."""
    root = init_project(tmp_path / "results", title="Hostile reading").root
    shutil.copy(RUN, root / "runs" / RUN.name)
    assert run_cli("build", "--project", root, timeout=240).returncode == 0
    return root


def test_a_revisions_file_nested_100000_deep_is_one_line_naming_the_file_and_place(project: Path) -> None:
    (project / "revisions.yaml").write_text("revisions:\n  - " + "[" * 100_000 + "]" * 100_000 + "\n", encoding="utf-8")
    for args in (("build", "--project", project), ("validate", project / "runs" / RUN.name)):
        line = one_line_error(run_cli(*args, cwd=project, timeout=120))
        assert "RecursionError" not in line
        assert f"{project / 'revisions.yaml'}: line 2, column " in line, line
        assert "nested more than 32 levels deep" in line, line


def test_a_settings_file_nested_5000_deep_is_one_line_naming_the_file_and_place(project: Path) -> None:
    settings = project / "fmbench.toml"
    settings.write_text(settings.read_text(encoding="utf-8") + "\n[extra]\ndeep = " + "[" * 5000 + "]" * 5000 + "\n", encoding="utf-8")
    line_no = settings.read_text(encoding="utf-8").splitlines().index("deep = " + "[" * 5000 + "]" * 5000) + 1
    for command in ("build", "runs"):
        line = one_line_error(run_cli(command, "--project", project, timeout=120))
        assert f"{settings}: line {line_no}, column 40: arrays and inline tables nested more than 32 levels deep" in line, line


def test_brackets_inside_toml_strings_and_comments_do_not_count_as_nesting() -> None:
    text = 'a = "[[[[[[" # [[[[[[[\nb = \'{{{{{{\'\nc = """\n[[[[[[\n"""\nd = [[1], {x = [2]}]\n'
    assert toml_too_deep(text, 3) is None
    assert toml_too_deep(text, 2) == (6, 16)


def test_a_methodology_file_over_its_limit_is_one_line_and_one_within_it_builds(project: Path) -> None:
    notes = project / "methodology.md"
    paragraph = "Each run is measured on a quiet device with the same prompts, and judged by the same rules.\n\n"
    notes.write_text(paragraph * (4 * 1024 * 1024 // len(paragraph)), encoding="utf-8")
    line = one_line_error(run_cli("build", "--project", project, timeout=120))
    assert f"{notes}: " in line and "bytes is larger than the 262,144-byte limit for methodology notes" in line, line
    notes.write_text(paragraph * 10, encoding="utf-8")
    assert run_cli("build", "--project", project, timeout=240).returncode == 0


def test_the_methodology_limit_is_a_project_setting_a_publisher_can_raise_or_lower(tmp_path: Path) -> None:
    root = init_project(tmp_path / "results", title="Long notes").root
    notes = root / "methodology.md"
    paragraph = "Each run is measured on a quiet device with the same prompts, and judged by the same rules.\n\n"
    notes.write_text(paragraph * (300 * 1024 // len(paragraph)), encoding="utf-8")  # 300 KiB: past the default
    with pytest.raises(ProjectError, match="larger than the 262,144-byte limit for methodology notes") as refused:
        load_project(root).methodology_notes()
    assert "raise [publishing] methodology_max_bytes in " in str(refused.value)
    settings = root / "fmbench.toml"
    default = settings.read_text(encoding="utf-8")
    assert "\nmethodology_max_bytes = 262144\n" in default  # fmbench init writes the key with its default
    settings.write_text(default.replace("methodology_max_bytes = 262144", "methodology_max_bytes = 524288"), encoding="utf-8")
    assert "quiet device" in load_project(root).methodology()
    settings.write_text(default.replace("methodology_max_bytes = 262144", "methodology_max_bytes = 1000"), encoding="utf-8")
    notes.write_text(paragraph * 20, encoding="utf-8")  # 1.8 KB: within the default, past this project's limit
    result = CliRunner().invoke(main, ["build", "--project", str(root)])
    assert result.exit_code == 1 and "larger than the 1,000-byte limit for methodology notes" in result.output, result.output
    assert len(result.output.strip().splitlines()) == 1, result.output
    settings.write_text(default.replace("methodology_max_bytes = 262144", "methodology_max_bytes = 0"), encoding="utf-8")
    with pytest.raises(ProjectError, match=r"publishing\.methodology_max_bytes"):
        load_project(root)


def test_a_fifo_as_a_projects_settings_revisions_or_methodology_is_one_line(project: Path) -> None:
    for name in ("methodology.md", "revisions.yaml", "fmbench.toml"):
        target = project / name
        kept = target.read_bytes()
        target.unlink()
        os.mkfifo(target)
        line = one_line_error(run_cli("build", "--project", project, timeout=60))
        assert f"{target}: not a regular file (a FIFO (named pipe))" in line, line
        target.unlink()
        target.write_bytes(kept)


# --- the database --------------------------------------------------------------------------------------------


def test_a_sqlite_file_as_db_is_not_a_duckdb_database_and_nothing_is_downloaded(tmp_path: Path) -> None:
    import sqlite3  # only this test makes a SQLite file

    db = tmp_path / "results.db"
    with sqlite3.connect(db) as con:
        con.execute("CREATE TABLE runs (id TEXT)")
    con.close()
    home = tmp_path / "home"
    home.mkdir()
    env = dict(os.environ, HOME=str(home))
    for args in (("runs", "--db", db), ("ingest", RUN, "--db", db), ("verify", "--db", db)):
        result = subprocess.run(
            [sys.executable, "-P", "-m", "fmbench", *map(str, args)], capture_output=True, text=True,
            timeout=60, check=False, env=env,
        )
        line = one_line_error(result)
        assert line == (
            f"Error: {db}: not a DuckDB database file (it is a SQLite database); "
            "point --db at an fmbench database (or another, new file name)"
        ), line
    assert not (home / ".duckdb").exists()  # where DuckDB would have installed sqlite_scanner


def test_every_duckdb_connection_has_extension_autoinstall_and_autoload_off() -> None:
    from fmbench.storage.db import open_duckdb  # the storage layer's one connect

    roots = [Path(__file__).parent.parent / part for part in ("fmbench", "ingest", "native")]
    callers = sorted(
        str(path) for root in roots for path in root.rglob("*.py") if "duckdb.connect(" in path.read_text(encoding="utf-8")
    )
    assert [Path(c).name for c in callers] == ["db.py"], callers
    con = open_duckdb()
    try:
        settings = dict(con.execute(
            "SELECT name, value FROM duckdb_settings() WHERE name IN ('autoinstall_known_extensions', 'autoload_known_extensions')"
        ).fetchall())
    finally:
        con.close()
    assert settings == {"autoinstall_known_extensions": "false", "autoload_known_extensions": "false"}


@pytest.mark.parametrize("cut", [20_000, 300_000], ids=["header-only", "part-way"])
def test_a_truncated_database_is_one_line_saying_what_is_wrong_and_what_to_do(tmp_path: Path, cut: int) -> None:
    whole = tmp_path / "whole.duckdb"
    assert CliRunner().invoke(main, ["ingest", str(RUN), "--db", str(whole)]).exit_code == 0
    cut_db = tmp_path / "cut.duckdb"
    cut_db.write_bytes(whole.read_bytes()[:cut])
    for args in (("runs", "--db", cut_db), ("verify", "--db", cut_db), ("ingest", OTHER, "--db", cut_db)):
        line = one_line_error(run_cli(*args, timeout=60))
        assert f"{cut_db}: " in line and f"the database file is cut short ({cut:,} bytes" in line, line
        assert "restore the whole file from a backup" in line


def test_a_fifo_as_db_is_refused_at_once(tmp_path: Path) -> None:
    db = tmp_path / "pipe.duckdb"
    os.mkfifo(db)
    for args in (("runs", "--db", db), ("ingest", RUN, "--db", db)):
        line = one_line_error(run_cli(*args, timeout=60))
        assert line == f"Error: {db}: not a regular file (a FIFO (named pipe)); point --db at an fmbench database file"


# --- compare ------------------------------------------------------------------------------------------------


def test_compare_of_a_filter_too_long_to_be_a_file_name_is_one_line(tmp_path: Path) -> None:
    db = tmp_path / "x.duckdb"
    assert CliRunner().invoke(main, ["ingest", str(RUN), "--db", str(db)]).exit_code == 0
    result = CliRunner().invoke(main, ["compare", "device=" + "a" * 300, "device=b", "--db", str(db)])
    assert result.exit_code == 1, result.output
    assert not isinstance(result.exception, OSError)
    assert result.output.startswith("Error: no ingested run matches device=aaa") and len(result.output.splitlines()) == 1


# --- Evaluations artifacts ---------------------------------------------------------------------------------


def write_big_artifact(path: Path, rows: int) -> Path:
    """A result document of ``rows`` small rows (about 50 bytes each), written as it is built."""
    with path.open("w", encoding="utf-8") as f:
        f.write('{"evaluationID": "E1", "resultID": "R1", "results": [')
        for i in range(rows):
            f.write(("," if i else "") + '{"Input": "{}", "Score": {"kind": "score", "value": ' + str(i % 2) + "}}")
        f.write("]}")
    return path


def _peak_mib(*args: str | Path) -> float:
    """``fmbench ARGS`` as its own process, its output thrown away; the peak resident memory of that process
    alone (its parent here is a fresh interpreter that does nothing else)."""
    measure = ("import resource, subprocess, sys\n"
               "code = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode\n"
               "print(code, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n")
    out = subprocess.run([sys.executable, "-c", measure, sys.executable, "-P", "-m", "fmbench", *map(str, args)],
                         capture_output=True, text=True, timeout=240, check=True)
    code, peak_kib = (int(x) for x in out.stdout.split())
    assert code == 0
    return peak_kib / 1024


def test_native_samples_writes_each_row_as_it_is_made_in_no_more_memory_than_reading_the_file(tmp_path: Path) -> None:
    """100,000 rows read whole (limits raised): ``samples`` (text and JSON Lines) peaks within 10% of ``inspect``,
    which reads the same rows and prints a few lines. Before, every row was normalized and every line joined
    before the first was written: 1.3 and 1.6 times as much at 200,000 rows (410 and 514 MiB against 321)."""
    artifact = write_big_artifact(tmp_path / "rows.xcevalresult", 100_000)
    limits = ("--max-bytes", str(artifact.stat().st_size), "--max-rows", "100000")
    reading = _peak_mib("native", "inspect", artifact, *limits)
    for output in ((), ("--jsonl",)):
        listing = _peak_mib("native", "samples", artifact, *output, *limits)
        assert listing <= reading * 1.1, (output, listing, reading)


@pytest.mark.parametrize(
    ("command", "output"),
    [
        (("samples",), None),
        (("samples", "--jsonl"), None),
        (("convert",), "out.jsonl"),
        (("convert",), "out.xcevalresult"),
        (("convert",), "folder"),
    ],
)
def test_samples_and_convert_pass_rows_through_in_memory_bounded_by_the_file_size(
    tmp_path: Path, command: tuple[str, ...], output: str | None
) -> None:
    """200,000 rows (11 MB, limits raised) cost at most 4 times the file's size more than 10 rows do: the
    file's text is kept and each row is made again as it is written. Before, every row's model was kept
    (about 1.3 KB a row against 56 bytes in the file): about 25 times the file's size for ``samples``, up to 35 for
    ``convert``."""
    rows = 200_000
    small = write_big_artifact(tmp_path / "small.xcevalresult", 10)
    big = write_big_artifact(tmp_path / "big.xcevalresult", rows)
    size = big.stat().st_size
    limits = ("--max-bytes", str(size), "--max-rows", str(rows))

    def peak(artifact: Path, name: str) -> float:
        target = () if output is None else (tmp_path / f"{name}-{output}",)
        return _peak_mib("native", *command, artifact, *target, *limits)

    baseline, reading = peak(small, "small"), peak(big, "big")
    assert reading - baseline <= 4 * size / 2**20, (baseline, reading, size)
    if output is not None:
        written = tmp_path / f"big-{output}"
        text = (written / "R1.xcevalresult" if output == "folder" else written).read_text(encoding="utf-8")
        assert json.loads(text) == json.loads(big.read_text(encoding="utf-8"))


def test_a_streamed_conversion_writes_what_json_dumps_writes(tmp_path: Path) -> None:
    """Written a row at a time, a conversion is still byte for byte what the whole document dumped gives."""
    rows = [{"Input": '{"recordID": "r1"}', "Score": {"kind": "score", "value": 1}}, {"Input": "{}", "x": [1, {"y": "é"}]}]
    documents = [
        {"resultID": "A", "summary": [{"m": {"value": 1}}], "results": rows, "reportMetadata": {}},
        {"resultID": "B", "results": []},
    ]
    lines = tmp_path / "two.jsonl"
    lines.write_text("".join(json.dumps(d) + "\n" for d in documents), encoding="utf-8")
    assert run_cli("native", "convert", lines, tmp_path / "back.jsonl").returncode == 0
    assert (tmp_path / "back.jsonl").read_text(encoding="utf-8") == "".join(
        json.dumps(d, ensure_ascii=False, separators=(",", ":")) + "\n" for d in documents
    )
    assert run_cli("native", "convert", lines, tmp_path / "folder").returncode == 0
    for document in documents:
        assert (tmp_path / "folder" / f"{document['resultID']}.xcevalresult").read_text(encoding="utf-8") == (
            json.dumps(document, indent=2, ensure_ascii=False) + "\n"
        )


@pytest.fixture(scope="module")
def million_rows(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_big_artifact(tmp_path_factory.mktemp("artifact") / "big.xcevalresult", 1_000_000)


@pytest.mark.parametrize("command", ["samples", "inspect", "report", "list", "validate", "ingest"])
def test_a_million_row_artifact_is_refused_by_the_byte_limit_in_one_line(million_rows: Path, tmp_path: Path, command: str) -> None:
    args: list[str | Path] = ["native", command, million_rows]
    if command == "ingest":
        args += ["--db", tmp_path / "x.duckdb"]
    result = run_cli(*args, timeout=120)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert (
        f"{million_rows.stat().st_size:,} bytes is larger than the 25,165,824-byte limit for a result file; "
        "raise it with --max-bytes" in result.stdout + result.stderr
    )


def test_a_million_row_artifact_within_the_byte_limit_is_refused_by_the_row_limit_in_bounded_memory(million_rows: Path) -> None:
    """Under a cap of 1.5 GB of address space (reading every row took 1.7 GB of memory): the rows past the
    limit are counted, never kept."""
    line = one_line_error(run_cli("native", "samples", million_rows, "--max-bytes", 10**8, timeout=180))
    assert line == (
        f"Error: {million_rows}: 1,000,000 rows is more than the 100,000-row limit for a result file; "
        "raise it with --max-rows if this really is one"
    )


def test_the_row_limit_counts_every_document_of_a_json_lines_file_and_names_the_line(tmp_path: Path) -> None:
    rows = ",".join(['{"Input": "{}"}'] * 3)
    lines = tmp_path / "three.jsonl"
    lines.write_text("".join(f'{{"resultID": "R{i}", "results": [{rows}]}}\n' for i in range(3)), encoding="utf-8")
    assert len(read_artifacts([lines], ReadLimits(max_rows=9)).documents) == 3
    read = read_artifacts([lines], ReadLimits(max_rows=8))
    assert [str(e) for e in read.errors] == [
        f"{lines} line 3: 9 rows is more than the 8-row limit for a result file; raise it with --max-rows if this really is one"
    ]
    assert len(read.documents) == 2


def test_a_fifo_and_dev_zero_as_artifacts_are_named_in_one_line_each(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    folder.mkdir()
    os.mkfifo(folder / "stuck.xcevalresult")
    (folder / "zero.xcevalresult").symlink_to("/dev/zero")
    os.mkfifo(folder / "manifest.json")
    listed = run_cli("native", "list", folder, timeout=60)
    assert "manifest.json: not a regular file (a FIFO (named pipe))" in listed.stdout + listed.stderr
    for command in ("list", "validate"):
        result = run_cli("native", command, folder, timeout=60)
        out = result.stdout + result.stderr
        assert result.returncode == 1 and "Traceback" not in out, out
        assert "stuck.xcevalresult: not a regular file (a FIFO (named pipe))" in out, out
        assert "zero.xcevalresult: not a regular file (a character device)" in out, out
    line = one_line_error(run_cli("native", "samples", "/dev/zero", timeout=60))
    assert line.startswith("Error: /dev/zero: not a regular file (a character device)"), line
