"""The build in worker processes: the same site byte for byte as one process, with the same crash safety.

The fixture corpus is far below the amount of work that starts workers, so these
tests lower the threshold (``PARALLEL_MIN_TRIAL_PAGES``) to make a small build
render in parallel.
"""

from __future__ import annotations

import filecmp
import functools
import gzip
import hashlib
import os
import subprocess
import time
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

import fmbench.project
import fmbench.publish.build
from fmbench.cli import main
from fmbench.ingest import ingest_paths
from fmbench.publish.build import MANIFEST, BuildError, build_site
from fmbench.publish.state import state_folder
from fmbench.storage.originals import original_bytes

from stopping import FailAfter, KillAt, child
from testdata import FIXTURES, RUNS


def _files(folder: Path) -> dict[str, Path]:
    return {str(p.relative_to(folder)): p for p in sorted(folder.rglob("*")) if p.is_file()}


def _different(a: Path, b: Path) -> list[str]:
    fa, fb = _files(a), _files(b)
    assert fa.keys() == fb.keys()
    return [f for f in fa if not filecmp.cmp(fa[f], fb[f], shallow=False)]


def _snapshot(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.rglob("*")) if p.is_file()}


def _leftovers(out: Path) -> list[str]:
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}."))


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The purpose-written runs and the fixture corpus: every kind of page, legacy files and PCC runs among them."""
    path = tmp_path_factory.mktemp("parallel") / "db.duckdb"
    assert ingest_paths([RUNS, FIXTURES], path).ok
    return path


@pytest.fixture
def parallel(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any build with something to render uses workers."""
    monkeypatch.setattr(fmbench.publish.build, "PARALLEL_MIN_TRIAL_PAGES", 1)


@pytest.mark.skipif(not FIXTURES.is_dir(), reason="the fixture corpus is not in this checkout")
def test_a_site_rendered_by_workers_is_byte_for_byte_the_site_rendered_in_one_process(
    db: Path, tmp_path: Path, parallel: None
) -> None:
    serial = build_site(db, tmp_path / "serial", jobs=1)
    both = build_site(db, tmp_path / "parallel", jobs=2)

    assert serial.workers == 0 and both.workers == 2
    assert _different(tmp_path / "serial", tmp_path / "parallel") == []  # the manifest included
    assert sorted(serial.rendered) == sorted(both.rendered) and sorted(serial.changed) == sorted(both.changed)
    assert (serial.pages, serial.data_files, serial.assets, serial.bytes_total, serial.largest_run_page) == (
        both.pages, both.data_files, both.assets, both.bytes_total, both.largest_run_page
    )
    assert {"run", "trials", "trials_json", "source_gzip", "comparison"} <= set(both.seconds_by_kind)
    with duckdb.connect(str(db), read_only=True) as con:
        originals = {run_id: (name, original_bytes(content, encoding, name)) for run_id, name, content, encoding in con.execute(
            "SELECT r.run_id, r.file_name, s.content, s.encoding FROM runs r JOIN sources s ON s.sha256 = r.source_sha256"
        ).fetchall()}
    for run_id, (name, content) in originals.items():  # every original, gzipped by a worker, is the file ingested
        assert gzip.decompress((tmp_path / "parallel" / "data" / "runs" / run_id / f"{name}.gz").read_bytes()) == content


@pytest.mark.skipif(not FIXTURES.is_dir(), reason="the fixture corpus is not in this checkout")
def test_a_parallel_rebuild_renders_only_what_changed_and_ends_where_a_fresh_build_does(
    tmp_path: Path, parallel: None
) -> None:
    db = tmp_path / "db.duckdb"
    iphone = sorted(FIXTURES.glob("iphone-17-pro-*.json"))
    held_back = iphone[-1]
    assert ingest_paths(iphone[:-1], db).ok
    site = tmp_path / "site"
    build_site(db, site, jobs=2)
    assert build_site(db, site, jobs=2).rendered == []  # nothing changed: nothing rendered, no worker started

    assert ingest_paths([held_back], db).ok
    again = build_site(db, site, jobs=2)
    with duckdb.connect(str(db), read_only=True) as con:
        (run_id,) = con.execute("SELECT run_id FROM runs WHERE file_name = ?", [held_back.name]).fetchone()
    assert again.workers == 2
    assert f"runs/{run_id}/index.html" in again.rendered
    assert not [f for f in again.rendered if f.startswith("runs/") and f != "runs/index.html" and run_id not in f]
    fresh = build_site(db, tmp_path / "fresh", jobs=1)
    assert fresh.workers == 0
    assert _different(site, tmp_path / "fresh") == []


def test_a_small_build_renders_in_one_process_whatever_jobs_says(tmp_path: Path) -> None:
    db = tmp_path / "db.duckdb"
    assert ingest_paths([RUNS / "purpose-current.json", RUNS / "purpose-hand-edited.json"], db).ok
    report = build_site(db, tmp_path / "site", jobs=8)
    assert report.workers == 0 and report.rendered


def test_a_parallel_build_that_fails_part_way_leaves_the_previous_site_and_no_staging_folder(
    db: Path, tmp_path: Path, parallel: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "site"
    build_site(db, out, base_url="/first/", jobs=1)
    before = _snapshot(out)
    with pytest.raises(BuildError, match="interrupted after 40 files"):
        build_site(db, out, base_url="/second/", jobs=2, checkpoints=FailAfter(40))
    assert _snapshot(out) == before
    assert _leftovers(out) == []


def test_a_parallel_build_killed_part_way_leaves_the_previous_site_and_its_workers_stop(
    db: Path, tmp_path: Path
) -> None:
    out = tmp_path / "site"
    build_site(db, out, base_url="/first/", jobs=1)
    before = _snapshot(out)

    marker = f"FMBENCH_TEST_MARK={tmp_path}"
    env = dict(os.environ, FMBENCH_TEST_MARK=str(tmp_path))  # marks the killed build's processes, workers and all
    killed = subprocess.run(child("parallel-build", db, out, "/other/", "render", 4), env=env, check=False)

    assert killed.returncode == -9
    assert _snapshot(out) == before
    assert [n.rsplit("-", 1)[0] for n in _leftovers(out)] == [".site.staging"]
    deadline = time.monotonic() + 120  # generous: a busy machine starts and stops processes slowly
    while _processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _processes_with(marker) == []  # the workers of the killed build stopped
    report = build_site(db, out, base_url="/second/", jobs=1)
    assert report.changed and _leftovers(out) == []
    assert 'href="/second/runs/"' in (out / "index.html").read_text(encoding="utf-8")


@pytest.mark.skipif(not FIXTURES.is_dir(), reason="the fixture corpus is not in this checkout")
def test_a_worker_killed_part_way_fails_the_build_in_one_line_and_leaves_the_previous_site(
    db: Path, tmp_path: Path, parallel: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "site"
    build_site(db, out, base_url="/first/", jobs=1)
    before = _snapshot(out)
    killing = KillAt("worker")  # pickled to each worker, which kills itself on its first task

    with pytest.raises(BuildError, match="worker process of the build stopped before it finished") as raised:
        build_site(db, out, base_url="/second/", jobs=2, checkpoints=killing)
    assert "\n" not in str(raised.value) and "--jobs 1" in str(raised.value)
    assert _snapshot(out) == before
    assert _leftovers(out) == []

    # The command's build, with the same checkpoints: its workers die the same way.
    monkeypatch.setattr(fmbench.project, "build_site", functools.partial(build_site, checkpoints=killing))
    result = CliRunner().invoke(main, ["build", "--db", str(db), "--out", str(out), "--jobs", "2"])
    assert result.exit_code == 1
    assert result.output.count("\n") == 1 and "worker process of the build stopped" in result.output
    assert _snapshot(out) == before

    monkeypatch.undo()
    report = build_site(db, out, base_url="/second/", jobs=1)  # as the message says
    assert report.changed and _leftovers(out) == []


def test_build_workers_waiting_for_a_task_stop_when_their_build_is_killed(db: Path, tmp_path: Path) -> None:
    marker = f"FMBENCH_TEST_MARK={tmp_path}"
    env = dict(os.environ, FMBENCH_TEST_MARK=str(tmp_path))  # marks the killed process's workers
    killed = subprocess.run(child("idle-workers", db, tmp_path / "staging"), env=env, check=False)

    assert killed.returncode == -9
    deadline = time.monotonic() + 60  # each looks every second; a busy machine is slow to end processes
    while _processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _processes_with(marker) == []


def _processes_with(marker: str) -> list[int]:
    """Processes whose environment holds ``marker`` (the killed build's workers inherit it)."""
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and marker.encode() in (proc / "environ").read_bytes().split(b"\0"):
                found.append(int(proc.name))
        except OSError:
            continue
    return found


def test_jobs_must_be_at_least_one(db: Path, tmp_path: Path) -> None:
    with pytest.raises(BuildError, match="jobs: 0 is not a number of processes"):
        build_site(db, tmp_path / "site", jobs=0)
    result = CliRunner().invoke(main, ["build", "--db", str(db), "--out", str(tmp_path / "site"), "--jobs", "0"])
    assert result.exit_code == 2
    assert "--jobs" in result.output and "0 is not in the range x>=1" in result.output
    assert not (tmp_path / "site").exists()


def test_the_build_command_takes_jobs(db: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["build", "--db", str(db), "--out", str(tmp_path / "site"), "--jobs", "1"])
    assert result.exit_code == 0, result.output
    assert (state_folder(db, tmp_path / "site") / MANIFEST).is_file()


def test_every_file_made_for_one_run_is_a_workers_task() -> None:
    """A page or data file under a run's own path is rendered with its run in a worker, whatever else it reads
    (a trials page also reads the device's earlier builds): were it left to the parent, a build of many runs
    would render its heaviest pages in one process."""
    from fmbench.views import DATA, PAGES  # the registry the build plans from

    per_run = {k.name for k in (*PAGES, *DATA) if "{run_id}" in k.route}
    assert {"run", "trials"} <= per_run
    assert per_run <= set(fmbench.publish.build.RUN_KINDS)
