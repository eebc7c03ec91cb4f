"""Killed with SIGKILL part-way, a build leaves the previous site exactly as it was; the next build cleans up.

(The ingest's crash safety, stage by stage, is in test_ingest.py.)
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest

import fmbench.publish.build
from fmbench.ingest import ingest_paths
from fmbench.publish.build import BuildError, build_site
from fmbench.publish.state import state_folder
from fmbench.write_errors import DiskFullError

from stopping import FailAfter, RaiseAt, child
from testdata import RUNS


def _snapshot(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _leftovers(out: Path) -> list[str]:
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}."))


def _killed_build(db: Path, out: Path, stage: str, base_url: str = "/other/") -> None:
    """A build of ``db`` into ``out`` SIGKILLed at ``stage`` (``render``: as its fourth file is recorded)."""
    result = subprocess.run(child("build", db, out, base_url, stage, 4 if stage == "render" else 1), check=False)
    assert result.returncode == -9, f"the build was not killed at {stage}"


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("crash") / "crash.duckdb"
    assert ingest_paths([RUNS / "purpose-current.json", RUNS / "purpose-hand-edited.json"], path).ok
    return path


@pytest.mark.parametrize("stage", ["render", "staging"])
def test_a_build_killed_part_way_leaves_the_previous_site_byte_identical_and_the_next_build_cleans_up(
    db: Path, tmp_path: Path, stage: str
) -> None:
    out = tmp_path / "site"
    build_site(db, out, base_url="/first/")
    before = _snapshot(out)

    _killed_build(db, out, stage)

    assert _snapshot(out) == before
    if stage == "staging":
        assert [n.rsplit("-", 1)[0] for n in _leftovers(out)] == [".site.staging"]
    report = build_site(db, out, base_url="/second/")
    assert report.changed
    assert _leftovers(out) == []
    assert 'href="/second/runs/"' in (out / "index.html").read_text(encoding="utf-8")


def test_a_build_killed_between_its_two_renames_gets_the_previous_site_back_from_the_next_build(
    db: Path, tmp_path: Path
) -> None:
    out = tmp_path / "site"
    build_site(db, out, base_url="/first/")
    before = _snapshot(out)

    _killed_build(db, out, "swap")

    assert not out.exists()  # the one instant a kill can hit: the old site is retired, not lost
    (retired,) = [out.parent / n for n in _leftovers(out) if ".previous-" in n]
    assert _snapshot(retired) == before
    with pytest.raises(BuildError):
        build_site(db, out, base_url="/second/", checkpoints=FailAfter(2))
    assert _snapshot(out) == before
    assert _leftovers(out) == []


def test_a_staging_folder_of_a_build_still_running_is_left_alone(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    running = tmp_path / f".site.staging-{os.getppid()}"
    running.mkdir()
    (running / "page.html").write_text("in progress", encoding="utf-8")
    build_site(db, out)
    assert (running / "page.html").read_text(encoding="utf-8") == "in progress"


# --- a data-only rebuild patches the site in place --------------------------------------------------------

_ADDED = "iphone-17-pro-ios27-24a5264n-pcc-quick-2026-11-02"


@pytest.fixture()
def grown(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """A site built from the iPhone runs, then one more run ingested: ``(db, site, the site's snapshot)``."""
    from testdata import iphone_runs_with_one_held_back

    base, later = iphone_runs_with_one_held_back(tmp_path, _ADDED)
    db = tmp_path / "db.duckdb"
    assert ingest_paths([base], db).ok
    out = tmp_path / "site"
    build_site(db, out)
    before = _snapshot(out)
    assert ingest_paths([later], db).ok
    return db, out, before


def _fresh_build(db: Path, tmp_path: Path) -> dict[str, str]:
    """The snapshot of a full build of ``db`` into a new folder: what a patched or recovered site must equal."""
    fresh = tmp_path / "fresh"
    build_site(db, fresh)
    return _snapshot(fresh)


def test_a_patching_build_killed_before_its_journal_leaves_the_site_byte_identical(
    grown: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    db, out, before = grown
    _killed_build(db, out, "staging", "/")  # every changed file staged, nothing moved in yet
    assert _snapshot(out) == before
    (staging,) = [out.parent / n for n in _leftovers(out)]
    assert not (staging / fmbench.publish.build.PATCH_JOURNAL).exists()

    build_site(db, out)
    assert _leftovers(out) == []
    assert _snapshot(out) == _fresh_build(db, tmp_path)


def test_a_patching_build_killed_after_its_journal_is_finished_by_the_next_build(
    grown: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    db, out, before = grown
    _killed_build(db, out, "patch", "/")  # killed after the first staged file was moved into the site
    (staging,) = [out.parent / n for n in _leftovers(out)]
    assert (staging / fmbench.publish.build.PATCH_JOURNAL).is_file()
    half = _snapshot(out)
    assert half != before
    state = state_folder(db, out)  # the manifest goes in last: until then it lists no file
    assert json.loads((state / fmbench.publish.build.MANIFEST).read_text(encoding="utf-8"))["files"] == {}

    report = build_site(db, out)  # finishes the patch first, then finds nothing left to do
    assert _leftovers(out) == []
    assert report.rendered == []
    assert _snapshot(out) == _fresh_build(db, tmp_path)


def test_a_data_only_rebuild_patches_the_site_in_place_and_a_new_setting_swaps_in_a_whole_site(
    grown: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    db, out, before = grown
    folder = out.stat().st_ino
    kept = {f: (out / f).stat().st_ino for f in before}

    report = build_site(db, out)

    assert out.stat().st_ino == folder  # the same folder, patched
    assert report.changed and _leftovers(out) == []
    unchanged = [f for f in before if f not in report.changed and (out / f).exists()]
    assert unchanged and all((out / f).stat().st_ino == kept[f] for f in unchanged)
    assert _snapshot(out) == _fresh_build(db, tmp_path)

    build_site(db, out, base_url="/elsewhere/")  # every page changes: a new folder replaces the site
    assert out.stat().st_ino != folder and _leftovers(out) == []


def test_a_patch_that_fails_after_its_journal_is_kept_and_finished_by_the_next_build(
    grown: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    db, out, before = grown

    disk_full = RaiseAt("patch", OSError(28, "No space left on device"))
    with pytest.raises(DiskFullError, match="free some space and run the same command again"):
        build_site(db, out, checkpoints=disk_full)  # failed after the first staged file was moved in
    (staging,) = [out.parent / n for n in _leftovers(out)]
    assert (staging / fmbench.publish.build.PATCH_JOURNAL).is_file()  # committed: kept for the next build
    assert _snapshot(out) != before

    report = build_site(db, out)
    assert _leftovers(out) == [] and report.rendered == []
    assert _snapshot(out) == _fresh_build(db, tmp_path)
