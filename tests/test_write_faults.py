"""Faults a real machine has: a full disk and a read-only file system, on real (small) tmpfs mounts.

Each command that writes stops with one line naming the path, what it was
writing and (for a full disk) the space left, and exits 1; the database still
verifies, the previous site or export is as it was, and the same command run
again after space is freed completes with no clean-up by hand. The permission
cases use a read-only mount: root ignores a folder's mode bits, so ``chmod``
would prove nothing.
"""

from __future__ import annotations

import errno
import hashlib
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import duckdb
import pytest

from fmbench.ingest import collect_run_files, ingest_paths
from fmbench.ingest.verify import verify_database
from fmbench.write_errors import DiskFullError, NotWritableError, as_write_error, human_bytes

from testdata import FIXTURES, REPO, RUNS

MiB = 2**20
REPLAYS = REPO / "fixtures" / "replays"


def _mount(where: Path, size: int) -> None:
    where.mkdir(parents=True, exist_ok=True)
    result = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root and CAP_SYS_ADMIN): {result.stderr.strip()}")


def _remount(where: Path, options: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{options}", str(where)], check=True)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Callable[[str, int], Path]]:
    """Mount small tmpfs file systems under the test's folder; all are unmounted afterwards."""
    mounted: list[Path] = []

    def mount(name: str, size: int) -> Path:
        where = tmp_path / name
        _mount(where, size)
        mounted.append(where)
        return where

    yield mount
    for where in reversed(mounted):
        subprocess.run(["umount", "-l", str(where)], check=False)


def _fill(disk: Path, leave: int) -> Path:
    """A file that leaves about ``leave`` bytes free on the disk."""
    filler = disk / "filler"
    free = _free(disk)
    with filler.open("wb") as f:
        block = b"\0" * MiB
        remaining = max(free - leave, 0)
        while remaining > 0:
            f.write(block[: min(remaining, MiB)])
            remaining -= min(remaining, MiB)
    return filler


def _free(disk: Path) -> int:
    return shutil.disk_usage(disk).free


def fmbench(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """The real command, in its own process: what a user sees on stderr, tracebacks included."""
    return subprocess.run(
        [sys.executable, "-P", "-m", "fmbench", *map(str, args)], capture_output=True, text=True, check=False
    )


def _one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ")
    return lines[0]


def _snapshot(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*")) if p.is_file()}


def _dotfiles(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


SITE_LEFT_FREE = 64 * 1024
"""What the full-disk build tests leave free: far less than the pages a new ``--base-url`` rewrites."""


def _fill_below_the_pages(disk: Path, site: Path) -> Path:
    """Fill the disk so that the site's pages (every one links through the base URL) cannot be written again.

    Assets and data files are the same bytes under another base URL, so the build links them from the previous
    site; only the pages take new space. The check fails loudly should the pages ever shrink to fit what is left.
    """
    pages = sum(p.stat().st_size for p in site.rglob("*.html"))
    assert pages > 4 * SITE_LEFT_FREE, f"the site's pages ({pages:,} bytes) would fit the space left: the test proves nothing"
    return _fill(disk, SITE_LEFT_FREE)


@pytest.fixture(scope="module")
def purpose_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("faults") / "purpose.duckdb"
    assert ingest_paths([RUNS], path).ok
    return path


# --- the translation itself ---------------------------------------------------------------


def test_a_refused_write_hidden_behind_duckdbs_failed_rollback_is_found_and_named(tmp_path: Path) -> None:
    try:
        try:
            raise duckdb.TransactionException('Failed to commit: Could not write file "x.wal": No space left on device')
        except duckdb.TransactionException:
            raise duckdb.TransactionException("cannot rollback - no transaction is active") from None
    except duckdb.TransactionException as exc:
        error = as_write_error(exc, tmp_path / "db.duckdb", "a run file into the database")
    assert isinstance(error, DiskFullError)
    assert str(error).startswith(f"{tmp_path / 'db.duckdb'}: no space left on the device (")
    assert "free) while writing a run file into the database; free some space" in str(error)
    assert as_write_error(ValueError("no"), tmp_path, "x") is None
    assert as_write_error(OSError(errno.ENOENT, "gone"), tmp_path, "x") is None
    refused = as_write_error(OSError(errno.EROFS, "Read-only file system"), tmp_path / "site", "the site")
    assert isinstance(refused, NotWritableError)
    assert str(refused) == (
        f"{tmp_path / 'site'}: the file system is read-only while writing the site; "
        "choose a place you can write to, or make this one writable"
    )
    assert human_bytes(512) == "512 bytes" and human_bytes(3 * MiB // 2) == "1.5 MiB"


# --- a full disk ----------------------------------------------------------------------------------


@pytest.mark.skipif(not FIXTURES.is_dir(), reason="the fixture corpus is not in this checkout")
def test_an_ingest_that_fills_the_disk_is_one_line_keeps_a_database_that_verifies_and_completes_once_space_is_freed(
    small_disk: Callable[[str, int], Path],
) -> None:
    disk = small_disk("disk", 64 * MiB)
    db = disk / "fmbench.duckdb"
    assert ingest_paths([RUNS], db).ok
    filler = _fill(disk, 512 * 1024)

    line = _one_line_error(fmbench("ingest", "-q", FIXTURES, "--db", db))

    assert line.startswith(f"Error: {db}: no space left on the device (")
    assert " free) while writing " in line and " into the database; free some space and run the same command again" in line
    assert "cannot rollback" not in line
    report = verify_database(db)
    assert report.ok and report.runs >= 4, report.describe()

    filler.unlink()
    again = fmbench("ingest", "-q", FIXTURES, "--db", db)
    assert again.returncode == 0, again.stderr
    assert "0 errored" in again.stdout
    final = verify_database(db)
    every_run = {hashlib.sha256(f.read_bytes()).digest() for f in collect_run_files([RUNS, FIXTURES])[0]}
    assert final.ok and final.runs == len(every_run)
    assert sorted(p.name for p in disk.iterdir()) == ["fmbench.duckdb"]


def test_an_ingest_into_a_new_database_on_a_full_disk_is_one_line(small_disk: Callable[[str, int], Path]) -> None:
    disk = small_disk("full", 4 * MiB)
    _fill(disk, 0)
    db = disk / "new.duckdb"

    line = _one_line_error(fmbench("ingest", RUNS, "--db", db))

    assert line.startswith(f"Error: {db}: no space left on the device (")
    assert "while writing the database" in line


@pytest.mark.skipif(not REPLAYS.is_dir(), reason="the fixture replays are not in this checkout")
def test_a_native_ingest_that_fills_the_disk_is_one_line_keeps_a_database_that_verifies_and_completes_once_space_is_freed(
    small_disk: Callable[[str, int], Path],
) -> None:
    disk = small_disk("native-disk", 32 * MiB)
    db = disk / "fmbench.duckdb"
    assert ingest_paths([RUNS], db).ok
    filler = _fill(disk, 64 * 1024)

    line = _one_line_error(fmbench("native", "ingest", REPLAYS, "--db", db))

    assert line.startswith(f"Error: {db}: no space left on the device (")
    assert " into the database; free some space and run the same command again" in line
    assert verify_database(db).ok

    filler.unlink()
    again = fmbench("native", "ingest", REPLAYS, "--db", db)
    assert again.returncode == 0, again.stderr
    assert "0 errored" in again.stdout
    assert verify_database(db).ok


def test_a_build_that_fills_the_disk_is_one_line_leaves_the_previous_site_and_completes_once_space_is_freed(
    small_disk: Callable[[str, int], Path], purpose_db: Path
) -> None:
    disk = small_disk("site-disk", 40 * MiB)
    out = disk / "site"
    assert fmbench("build", "--db", purpose_db, "--out", out).returncode == 0
    before = _snapshot(out)
    filler = _fill_below_the_pages(disk, out)

    line = _one_line_error(fmbench("build", "--db", purpose_db, "--out", out, "--base-url", "/moved/"))

    assert line.startswith(f"Error: {out}: no space left on the device (")
    assert "free) while writing the site; free some space and run the same command again" in line
    assert _snapshot(out) == before
    assert _dotfiles(disk) == []  # no staging folder left behind

    filler.unlink()
    assert fmbench("build", "--db", purpose_db, "--out", out, "--base-url", "/moved/").returncode == 0
    assert _snapshot(out) != before
    assert 'href="/moved/' in (out / "index.html").read_text(encoding="utf-8")
    assert _dotfiles(disk) == []


_PARALLEL_FMBENCH = "import fmbench.publish.build as b; b.PARALLEL_MIN_TRIAL_PAGES = 1; from fmbench.cli import main; main()"
"""``fmbench`` with workers for any build that renders something (the purpose-built runs are too few to start them)."""


def test_a_parallel_build_that_fills_the_disk_is_one_line_naming_the_site_and_leaves_the_previous_one(
    small_disk: Callable[[str, int], Path], purpose_db: Path
) -> None:
    disk = small_disk("parallel-site-disk", 40 * MiB)
    out = disk / "site"

    def build(*args: str | Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-P", "-c", _PARALLEL_FMBENCH, "build", "--db", str(purpose_db), "--out", str(out),
             "--jobs", "2", *map(str, args)],
            capture_output=True, text=True, check=False,
        )

    assert build().returncode == 0
    before = _snapshot(out)
    filler = _fill_below_the_pages(disk, out)

    line = _one_line_error(build("--base-url", "/moved/"))  # the workers write most of the files

    assert line.startswith(f"Error: {out}: no space left on the device (")
    assert "free) while writing the site; free some space and run the same command again" in line
    assert _snapshot(out) == before
    assert _dotfiles(disk) == []

    filler.unlink()
    assert build("--base-url", "/moved/").returncode == 0
    assert 'href="/moved/' in (out / "index.html").read_text(encoding="utf-8")
    assert _dotfiles(disk) == []


def test_a_parquet_export_that_fills_the_disk_is_one_line_leaves_the_previous_export_and_completes_once_space_is_freed(
    small_disk: Callable[[str, int], Path], purpose_db: Path
) -> None:
    disk = small_disk("parquet-disk", 4 * MiB)
    out = disk / "dataset"
    assert fmbench("export", "--db", purpose_db, "--parquet", out).returncode == 0
    before = _snapshot(out)
    filler = _fill(disk, 64 * 1024)

    line = _one_line_error(fmbench("export", "--db", purpose_db, "--parquet", out))

    assert line.startswith(f"Error: {out}: no space left on the device (")
    assert "while writing the Parquet dataset; free some space" in line
    assert _snapshot(out) == before
    assert _dotfiles(disk) == []

    filler.unlink()
    assert fmbench("export", "--db", purpose_db, "--parquet", out).returncode == 0
    assert _dotfiles(disk) == []


def test_an_export_of_originals_that_fills_the_disk_is_one_line_writes_no_partial_file_and_completes_once_space_is_freed(
    small_disk: Callable[[str, int], Path], purpose_db: Path
) -> None:
    disk = small_disk("originals-disk", 2 * MiB)
    out = disk / "originals"
    filler = _fill(disk, 600 * 1024)

    line = _one_line_error(fmbench("export", "--db", purpose_db, "--originals", out))

    assert line.startswith(f"Error: {out}/")
    assert "no space left on the device (" in line and "while writing an exported original; free some space" in line
    originals = {p.name: p.read_bytes() for p in RUNS.iterdir() if p.is_file()}
    for written in out.iterdir():  # what was written is whole; nothing half-written, no temporary file
        assert not written.name.startswith(".")
        assert written.read_bytes() == originals[written.name]

    filler.unlink()
    assert fmbench("export", "--db", purpose_db, "--originals", out).returncode == 0
    assert {p.name: p.read_bytes() for p in out.iterdir()} == originals


# --- no permission: a read-only file system ----------------------------------------------------------


@pytest.fixture
def read_only_disk(small_disk: Callable[[str, int], Path], purpose_db: Path) -> Path:
    """A read-only mount holding a copy of the database."""
    disk = small_disk("read-only", 32 * MiB)
    (disk / "fmbench.duckdb").write_bytes(purpose_db.read_bytes())
    _remount(disk, "ro")
    return disk


def test_every_writing_command_on_a_read_only_file_system_is_one_line_naming_the_path(
    read_only_disk: Path, purpose_db: Path
) -> None:
    disk = read_only_disk
    run = RUNS / "purpose-current.json"
    cases = {
        "ingest": (("ingest", run, "--db", disk / "fmbench.duckdb"), disk / "fmbench.duckdb", "the database"),
        "new database": (("ingest", run, "--db", disk / "new.duckdb"), disk / "new.duckdb", "the database"),
        "build": (("build", "--db", purpose_db, "--out", disk / "site"), disk / "site", "the site"),
        "parquet": (("export", "--db", purpose_db, "--parquet", disk / "pq"), disk / "pq", "the Parquet dataset"),
        "originals": (("export", "--db", purpose_db, "--originals", disk / "orig"), disk / "orig", "the export folder"),
        "replay": (
            ("native", "replay", run, "--output", disk / "replays"),
            disk / "replays" / "purpose-current.xcevalresult",
            "the replay artifact",
        ),
    }
    for name, (args, path, what) in cases.items():
        line = _one_line_error(fmbench(*args))
        assert line.startswith(f"Error: {path}: the file system is read-only while writing {what}"), (name, line)
        assert line.endswith("choose a place you can write to, or make this one writable"), (name, line)
    _remount(disk, "rw")
    assert sorted(p.name for p in disk.iterdir()) == ["fmbench.duckdb"]
    assert verify_database(disk / "fmbench.duckdb").ok


def test_a_database_on_a_read_only_file_system_can_still_be_read(read_only_disk: Path, tmp_path: Path) -> None:
    db = read_only_disk / "fmbench.duckdb"
    assert fmbench("runs", "--db", db).returncode == 0
    assert verify_database(db).ok
    assert fmbench("build", "--db", db, "--out", tmp_path / "site").returncode == 0
    # The build's records could not go beside the database: they are beside the site, never in it.
    assert (tmp_path / ".site.fmbench-build" / "manifest.json").is_file()
    assert not [p for p in (tmp_path / "site").rglob("*") if p.name.startswith(".")]
    again = fmbench("build", "--db", db, "--out", tmp_path / "site")
    assert again.returncode == 0 and " 0 rendered, 0 changed, 0 removed" in again.stdout


# --- fmbench init ----------------------------------------------------------------------------

_INIT_WHAT = {
    "fmbench.toml": "the project settings",
    "revisions.yaml": "the suite-revision registry",
    "methodology.md": "the methodology notes",
    "README.md": "the runs folder's README",
    "publish.yml": "the Pages workflow",
    ".gitignore": "the .gitignore",
}


def test_an_init_that_fills_the_disk_is_one_line_leaves_nothing_of_the_project_and_completes_once_space_is_freed(
    small_disk: Callable[[str, int], Path],
) -> None:
    disk = small_disk("init-disk", 4 * MiB)
    filler = _fill(disk, 8 * 1024)  # room for a file or two of the project, not for all of it
    project = disk / "results"

    line = _one_line_error(fmbench("init", project, "--title", "Lab results"))

    assert line.startswith(f"Error: {project}/"), line
    written = Path(line.removeprefix("Error: ").split(": ", 1)[0])
    assert ": no space left on the device (" in line and "free) while writing " in line
    assert f"while writing {_INIT_WHAT[written.name]}; free some space and run the same command again" in line
    assert sorted(p.name for p in disk.iterdir()) == ["filler"]  # no file, no folder of the project left

    filler.unlink()
    done = fmbench("init", project, "--title", "Lab results")
    assert done.returncode == 0, done.stderr
    assert 'title = "Lab results"' in (project / "fmbench.toml").read_text(encoding="utf-8")
    assert (project / ".github" / "workflows" / "publish.yml").is_file()


def test_an_init_on_a_read_only_file_system_is_one_line_naming_the_path_and_writes_nothing(
    small_disk: Callable[[str, int], Path],
) -> None:
    disk = small_disk("init-read-only", 4 * MiB)
    (disk / "existing").mkdir()
    _remount(disk, "ro")

    for project, named in ((disk / "results", disk / "results"), (disk / "existing", disk / "existing" / "fmbench.toml")):
        line = _one_line_error(fmbench("init", project))
        what = "the project folder" if named == project else "the project settings"
        assert line == (
            f"Error: {named}: the file system is read-only while writing {what}; "
            "choose a place you can write to, or make this one writable"
        ), line
    _remount(disk, "rw")
    assert sorted(p.name for p in disk.rglob("*")) == ["existing"]


# --- serve on a read-only file system ---------------------------------------------------------


def test_serve_reads_a_database_on_a_read_only_file_system_and_watch_is_one_line(
    read_only_disk: Path, purpose_db: Path, tmp_path: Path
) -> None:
    import json
    import urllib.request

    from browser_support import fmbench_server, free_port

    db = read_only_disk / "fmbench.duckdb"
    with fmbench_server(db) as url:  # no --watch: every request opens the database read-only
        with urllib.request.urlopen(url, timeout=10) as response:
            assert response.status == 200
        with urllib.request.urlopen(url + "api/runs", timeout=10) as response:
            runs = json.loads(response.read())["runs"]
        with duckdb.connect(str(purpose_db), read_only=True) as con:
            stored = {name for (name,) in con.execute("SELECT file_name FROM runs").fetchall()}
        assert stored and {r["file_name"] for r in runs} == stored
        with urllib.request.urlopen(f"{url}runs/{runs[0]['run_id']}/", timeout=10) as response:
            assert response.status == 200

    watched = tmp_path / "watched"
    watched.mkdir()
    done = subprocess.run(
        [sys.executable, "-P", "-m", "fmbench", "serve", "--db", str(db), "--watch", str(watched),
         "--port", str(free_port())],
        capture_output=True, text=True, check=False, timeout=60,
    )
    assert _one_line_error(done) == (
        f"Error: {db}: the file system is read-only while writing the database; "
        "choose a place you can write to, or make this one writable"
    )
