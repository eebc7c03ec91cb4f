"""The build's units, each called on its own: recover, plan, render, stage, commit (or keep), abandon.

:func:`fmbench.publish.build.build_site` runs them in turn; test_crash_safety.py and test_parallel_build.py
kill and fail whole builds between them.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from fmbench.analysis.tolerance import DEFAULT_TOLERANCE, Tolerance
from fmbench.ingest import ingest_paths
from fmbench.processes import NO_CHECKPOINTS, Checkpoints
from fmbench.publish import workers as bw
from fmbench.publish.build import (
    MANIFEST,
    PATCH_JOURNAL,
    Build,
    BuildError,
    BuildReport,
    Rendered,
    Settings,
    abandon,
    build_site,
    commit,
    keep_site,
    open_build,
    plan_build,
    read_previous,
    recover_killed_builds,
    render,
    stage,
)
from fmbench.publish.state import state_folder
from fmbench.storage.dataset import open_database
from fmbench.write_errors import DiskFullError

from testdata import RUNS


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("units") / "units.duckdb"
    assert ingest_paths([RUNS / "purpose-current.json", RUNS / "purpose-hand-edited.json"], path).ok
    return path


def _snapshot(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@contextmanager
def _opened(db: Path, out: Path, base_url: str = "/", checkpoints: Checkpoints = NO_CHECKPOINTS) -> Iterator[Build]:
    """A build of ``db`` into ``out`` as build_site opens it, in this process alone."""
    made = bw.SiteSettings(
        os.fspath(db), base_url, datetime(2026, 1, 2, tzinfo=UTC), None, None, "", {}, DEFAULT_TOLERANCE, "gzip"
    )
    with open_database(db) as con:
        yield open_build(con, made, read_previous(db, out), out, jobs=1, checkpoints=checkpoints)


def _rendered(build: Build, staging: Path) -> tuple[Rendered, BuildReport]:
    report = BuildReport(out=build.out_dir)
    return render(build, plan_build(build), staging, report), report


def _staging(out: Path) -> Path:
    return out.with_name(f".{out.name}.staging-test")


# --- the settings every file shares --------------------------------------------------------------------------

_SETTINGS = Settings("1.0", 7, "code", "/", "{}", "identity", "", DEFAULT_TOLERANCE, "gzip", "")


def test_the_settings_fingerprint_changes_with_each_setting_and_only_with_them() -> None:
    changed = [
        replace(_SETTINGS, version="1.1"), replace(_SETTINGS, schema=8), replace(_SETTINGS, code="other code"),
        replace(_SETTINGS, base_url="/sub/"), replace(_SETTINGS, registry="{'abc': 1}"),
        replace(_SETTINGS, identity="another"), replace(_SETTINGS, methodology="notes"),
        replace(_SETTINGS, tolerance=Tolerance(latency=0.1)), replace(_SETTINGS, originals="copy"),
        replace(_SETTINGS, paths="runs/"),
    ]
    fingerprints = {settings.fingerprint() for settings in changed}
    assert len(fingerprints) == len(changed) and _SETTINGS.fingerprint() not in fingerprints
    assert replace(_SETTINGS).fingerprint() == _SETTINGS.fingerprint()


def test_the_settings_fingerprint_tells_apart_text_moved_from_one_setting_to_the_next() -> None:
    # Joined strings could not: "a" + separator + "" and "" + separator + "a" read the same once split wrong.
    one = replace(_SETTINGS, identity="x\x00notes", methodology="")
    other = replace(_SETTINGS, identity="x", methodology="notes")
    assert one.fingerprint() != other.fingerprint()


def test_a_build_s_settings_are_read_off_its_site(db: Path, tmp_path: Path) -> None:
    with _opened(db, tmp_path / "site", "/a/") as a, _opened(db, tmp_path / "site", "/b/") as b:
        assert a.settings != b.settings
    with _opened(db, tmp_path / "site", "/a/") as again:
        assert again.settings == a.settings


# --- what the previous build left, and the plan ------------------------------------------------------------


def test_reading_the_previous_build_of_a_new_folder_finds_nothing_and_a_built_one_its_manifest(
    db: Path, tmp_path: Path
) -> None:
    out = tmp_path / "site"
    fresh = read_previous(db, out)
    assert fresh.manifest.files == {} and not fresh.ours
    build_site(db, out)
    built = read_previous(db, out)
    assert built.ours and built.records == state_folder(db, out)
    assert set(built.manifest.files) == set(_snapshot(out))


def test_a_folder_fmbench_did_not_write_is_not_ours(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    out.mkdir()
    (out / "index.html").write_text("<p>someone's own site</p>", encoding="utf-8")
    assert not read_previous(db, out).ours


def test_the_plan_renders_all_of_a_first_build_nothing_of_an_unchanged_one_and_patches_a_damaged_one(
    db: Path, tmp_path: Path
) -> None:
    out = tmp_path / "site"
    with _opened(db, out) as build:
        first = plan_build(build)
    assert not first.nothing and not first.patch
    build_site(db, out, base_url="/")
    with _opened(db, out) as build:
        assert plan_build(build).nothing
    with _opened(db, out, "/elsewhere/") as build:
        moved = plan_build(build)
    assert not moved.nothing and not moved.patch  # a new setting: a whole new site
    (out / "methodology" / "index.html").unlink()
    with _opened(db, out) as build:
        damaged = plan_build(build)
    assert not damaged.nothing and damaged.patch  # same settings: only what is missing is put back


# --- render, stage, commit ---------------------------------------------------------------------------------


def test_rendering_a_first_build_stages_every_file_and_leaves_no_output(db: Path, tmp_path: Path) -> None:
    out, staging = tmp_path / "site", _staging(tmp_path / "site")
    with _opened(db, out) as build:
        rendered, report = _rendered(build, staging)
    assert not out.exists()
    assert set(_snapshot(staging)) == set(rendered.manifest.files) and rendered.carried == 0
    assert sorted(report.rendered + [f for f in rendered.manifest.files if f.startswith("assets/")]) == sorted(
        rendered.manifest.files
    )
    assert report.pages and report.changed


def test_a_patching_render_stages_only_the_files_whose_bytes_change(db: Path, tmp_path: Path) -> None:
    out, staging = tmp_path / "site", _staging(tmp_path / "site")
    build_site(db, out)
    (out / "methodology" / "index.html").unlink()
    with _opened(db, out) as build:
        rendered, report = _rendered(build, staging)
    assert _snapshot(staging) == {"methodology/index.html": rendered.manifest.files["methodology/index.html"]}
    assert rendered.carried > 0 and report.rendered == ["methodology/index.html"]


def test_staging_a_whole_site_leaves_the_output_as_it_was_and_its_manifest_a_stub(db: Path, tmp_path: Path) -> None:
    out, staging = tmp_path / "site", _staging(tmp_path / "site")
    build_site(db, out, base_url="/first/")
    before = _snapshot(out)
    with _opened(db, out, "/second/") as build:
        rendered, report = _rendered(build, staging)
        stage(build, plan_build(build), rendered, staging, report.removed)
    assert _snapshot(out) == before
    manifest = json.loads((state_folder(db, out) / MANIFEST).read_text(encoding="utf-8"))
    assert manifest["output"] and manifest["files"] == {}  # claims the folder, lists nothing: the next build renders all
    assert not (staging / PATCH_JOURNAL).exists()


def test_staging_a_patch_writes_its_journal_and_the_manifest_to_put_in_last(db: Path, tmp_path: Path) -> None:
    out, staging = tmp_path / "site", _staging(tmp_path / "site")
    build_site(db, out)
    (out / "methodology" / "index.html").unlink()
    before = _snapshot(out)
    with _opened(db, out) as build:
        rendered, report = _rendered(build, staging)
        stage(build, plan_build(build), rendered, staging, report.removed)
    assert _snapshot(out) == before
    journal = json.loads((staging / PATCH_JOURNAL).read_text(encoding="utf-8"))
    assert journal["removed"] == []
    assert json.loads(Path(journal["manifest"]).read_text(encoding="utf-8"))["files"] == rendered.manifest.files


def test_staging_refuses_a_folder_fmbench_did_not_write(db: Path, tmp_path: Path) -> None:
    out, staging = tmp_path / "site", _staging(tmp_path / "site")
    out.mkdir()
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    with _opened(db, out) as build:
        rendered, report = _rendered(build, staging)
        with pytest.raises(BuildError, match="was not written by fmbench build"):
            stage(build, plan_build(build), rendered, staging, report.removed)
    assert (out / "notes.txt").read_text(encoding="utf-8") == "mine"


def test_committing_a_whole_site_swaps_it_in_and_writes_its_manifest(db: Path, tmp_path: Path) -> None:
    out, staging = tmp_path / "site", _staging(tmp_path / "site")
    build_site(db, out, base_url="/first/")
    with _opened(db, out, "/second/") as build:
        rendered, report = _rendered(build, staging)
        changes = plan_build(build)
        stage(build, changes, rendered, staging, report.removed)
        commit(build, changes, rendered, staging)
    assert not staging.exists() and not [p for p in tmp_path.iterdir() if ".previous-" in p.name]
    assert 'href="/second/runs/"' in (out / "index.html").read_text(encoding="utf-8")
    assert read_previous(db, out).manifest.files == rendered.manifest.files


def test_committing_a_patch_moves_the_staged_files_in_and_the_manifest_last(db: Path, tmp_path: Path) -> None:
    out, staging = tmp_path / "site", _staging(tmp_path / "site")
    build_site(db, out)
    whole = _snapshot(out)
    (out / "methodology" / "index.html").unlink()
    with _opened(db, out) as build:
        rendered, report = _rendered(build, staging)
        changes = plan_build(build)
        stage(build, changes, rendered, staging, report.removed)
        commit(build, changes, rendered, staging)
    assert _snapshot(out) == whole and not staging.exists()
    assert read_previous(db, out).manifest.files == rendered.manifest.files


def test_keeping_the_site_drops_the_staging_folder_and_records_the_new_manifest(db: Path, tmp_path: Path) -> None:
    out, staging = tmp_path / "site", _staging(tmp_path / "site")
    build_site(db, out)
    before = _snapshot(out)
    recorded = state_folder(db, out) / MANIFEST
    manifest = json.loads(recorded.read_text(encoding="utf-8"))
    recorded.write_text(json.dumps(manifest | {"settings": "another fmbench's"}), encoding="utf-8")  # all rendered
    with _opened(db, out) as build:
        rendered, report = _rendered(build, staging)
        assert report.changed == [] and report.removed == []  # the same bytes as the site's
        keep_site(build, rendered, staging)
    assert not staging.exists() and _snapshot(out) == before
    assert read_previous(db, out).manifest.files == rendered.manifest.files


# --- abandon and recover -----------------------------------------------------------------------------------


def test_abandoning_removes_an_uncommitted_staging_folder_and_keeps_a_committed_one(tmp_path: Path) -> None:
    out = tmp_path / "site"
    uncommitted, committed = tmp_path / ".site.staging-1", tmp_path / ".site.staging-2"
    for folder in (uncommitted, committed):
        folder.mkdir()
        (folder / "page.html").write_text("staged", encoding="utf-8")
    (committed / PATCH_JOURNAL).write_text("{}", encoding="utf-8")
    failure = BuildError("failed")
    assert abandon(uncommitted, out, failure) is None  # raised as it is
    assert abandon(committed, out, failure) is None
    assert not uncommitted.exists() and committed.is_dir()


def test_abandoning_after_a_refused_write_gives_the_one_line_error_to_raise(tmp_path: Path) -> None:
    refused = abandon(tmp_path / ".site.staging-1", tmp_path / "site", OSError(errno.ENOSPC, "No space left"))
    assert isinstance(refused, DiskFullError) and "free some space" in str(refused)


def _dead_pid() -> int:
    """The id of a process that has ended."""
    done = subprocess.Popen([sys.executable, "-c", "pass"])
    done.wait()
    return done.pid


def test_recovering_puts_back_a_retired_site_and_clears_a_dead_build_s_staging_folder(tmp_path: Path) -> None:
    out = tmp_path / "site"
    pid = _dead_pid()
    retired, staging = tmp_path / f".site.previous-{pid}", tmp_path / f".site.staging-{pid}"
    retired.mkdir()
    (retired / "index.html").write_text("the previous site", encoding="utf-8")
    staging.mkdir()
    (staging / "index.html").write_text("half a build", encoding="utf-8")

    recover_killed_builds(out)

    assert (out / "index.html").read_text(encoding="utf-8") == "the previous site"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_recovering_finishes_a_dead_build_s_committed_patch(tmp_path: Path) -> None:
    out = tmp_path / "site"
    out.mkdir()
    (out / "gone.html").write_text("removed by the patch", encoding="utf-8")
    staging = tmp_path / f".site.staging-{_dead_pid()}"
    (staging / "runs").mkdir(parents=True)
    (staging / "runs" / "index.html").write_text("patched in", encoding="utf-8")
    pending = tmp_path / f"{MANIFEST}.pending"
    pending.write_text("{}", encoding="utf-8")
    journal = {"removed": ["gone.html"], "manifest": os.fspath(pending)}
    (staging / PATCH_JOURNAL).write_text(json.dumps(journal), encoding="utf-8")

    recover_killed_builds(out)

    assert _snapshot(out) == {"runs/index.html": hashlib.sha256(b"patched in").hexdigest()}
    assert not staging.exists() and (tmp_path / MANIFEST).is_file() and not pending.exists()


# --- checkpoints -------------------------------------------------------------------------------------------


class _Recorded(Checkpoints):
    def __init__(self) -> None:
        self.stages: list[str] = []

    def reached(self, stage: str) -> None:
        if not self.stages or self.stages[-1] != stage:
            self.stages.append(stage)


def test_a_build_tells_its_checkpoints_each_stage_it_reaches_in_order(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    first, second, patched = _Recorded(), _Recorded(), _Recorded()
    build_site(db, out, checkpoints=first)
    build_site(db, out, base_url="/elsewhere/", checkpoints=second)
    (out / "methodology" / "index.html").unlink()
    build_site(db, out, base_url="/elsewhere/", checkpoints=patched)
    assert first.stages == ["render", "staging"]  # no site to swap out: the staging folder is renamed into place
    assert second.stages == ["render", "staging", "swap"]
    assert patched.stages == ["render", "staging", "patch"]

