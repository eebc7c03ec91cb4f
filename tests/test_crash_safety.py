"""Killed with SIGKILL part-way, a build leaves the previous site exactly as it was; the next build cleans up.

(The ingest's crash safety, stage by stage, is in test_ingest.py.)
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fmbench.build import BuildError, build_site
from fmbench.ingest import ingest_paths

from testdata import RUNS

_BUILD = "import sys; from fmbench.build import build_site; build_site(sys.argv[1], sys.argv[2], base_url=sys.argv[3])"


def _snapshot(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _leftovers(out: Path) -> list[str]:
    return sorted(p.name for p in out.parent.iterdir() if p.name.startswith(f".{out.name}."))


def _killed_build(db: Path, out: Path, stage: str) -> None:
    env = dict(os.environ, FMBENCH_TEST_BUILD_KILL_AT=stage)
    result = subprocess.run([sys.executable, "-P", "-c", _BUILD, str(db), str(out), "/other/"], env=env, check=False)
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
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "site"
    build_site(db, out, base_url="/first/")
    before = _snapshot(out)

    _killed_build(db, out, "swap")

    assert not out.exists()  # the one instant a kill can hit: the old site is retired, not lost
    (retired,) = [out.parent / n for n in _leftovers(out) if ".previous-" in n]
    assert _snapshot(retired) == before
    monkeypatch.setenv("FMBENCH_TEST_BUILD_FAIL_AFTER", "2")
    with pytest.raises(BuildError):
        build_site(db, out, base_url="/second/")
    assert _snapshot(out) == before
    assert _leftovers(out) == []


def test_a_staging_folder_of_a_build_still_running_is_left_alone(db: Path, tmp_path: Path) -> None:
    out = tmp_path / "site"
    running = tmp_path / f".site.staging-{os.getppid()}"
    running.mkdir()
    (running / "page.html").write_text("in progress", encoding="utf-8")
    build_site(db, out)
    assert (running / "page.html").read_text(encoding="utf-8") == "in progress"
