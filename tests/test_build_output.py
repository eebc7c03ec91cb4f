"""``fmbench build`` talks like its peers: ``--json`` for a script, ``-q`` for the findings alone, ``-v`` for every
file rendered."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from testdata import FIXTURES

RUN = "iphone-17-pro-ios27-24a5256a-on-device-performance-2026-10-29.json"


def fmbench(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-P", "-m", "fmbench", *args], cwd=cwd, capture_output=True, text=True,
                          check=False, env={"PATH": "/usr/bin:/bin", "HOME": str(cwd)}, timeout=600)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    assert fmbench(tmp_path, "init", "p").returncode == 0
    shutil.copyfile(FIXTURES / RUN, tmp_path / "p" / "runs" / RUN)
    (tmp_path / "p" / "runs" / RUN.replace(".json", ".meta.yaml")).write_text("conection: wifi\n", encoding="utf-8")
    return tmp_path / "p"


def test_build_json_is_one_object_of_what_was_mirrored_the_site_and_the_summary(project: Path) -> None:
    done = fmbench(project, "build", "-j", "1", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["mirrored"] == [{"change": "ingested", "file": RUN, "runId": data["mirrored"][0]["runId"], "message": ""}]
    assert data["site"]["pages"] > 0 and data["site"]["out"] == str(project / "_site")
    assert data["summary"]["runs"] == 1 and data["summary"]["failed"] is False
    assert data["summary"]["sidecars"] == [{
        "file": f"runs/{RUN.replace('.json', '.meta.yaml')}",
        "message": "unknown key 'conection', ignored (did you mean 'connection'?)",
    }]
    strict = fmbench(project, "build", "-j", "1", "--json", "--strict")
    assert strict.returncode == 1 and json.loads(strict.stdout)["summary"]["failed"] is True


def test_build_quiet_prints_the_findings_alone_and_verbose_every_file_rendered(project: Path) -> None:
    quiet = fmbench(project, "build", "-j", "1", "-q")
    assert quiet.returncode == 0, quiet.stderr
    assert "ingested " not in quiet.stdout and " pages, " not in quiet.stdout and "summary: " not in quiet.stdout
    assert any(line.startswith("sidecar: runs/") for line in quiet.stdout.splitlines())
    (project / "methodology.md").write_text("# Ours\n\nOur notes.\n", encoding="utf-8")
    verbose = fmbench(project, "build", "-j", "1", "--verbose")
    assert verbose.returncode == 0, verbose.stderr
    rendered = [line for line in verbose.stdout.splitlines() if line.startswith("rendered ")]
    counted = re.search(r"\((?:[\d.]+ MiB), (\d+) rendered,", verbose.stdout)
    assert rendered and counted and len(rendered) == int(counted[1]), verbose.stdout
    both = fmbench(project, "build", "-q", "-v")
    assert both.returncode == 2 and "give --quiet or --verbose, not both" in both.stderr


def test_mirroring_a_projects_runs_folder_reports_its_progress_file_by_file(tmp_path: Path) -> None:
    from fmbench.ingest.mirror import mirror_runs
    from fmbench.project import load_project
    from fmbench.scaffold import init_project

    init_project(tmp_path / "p")
    project = load_project(tmp_path / "p")
    names = [RUN, "iphone-17-pro-ios27-24a5264n-on-device-performance-2026-11-03.json"]
    for name in names:
        shutil.copyfile(FIXTURES / name, project.runs_dir / name)
    seen: list[tuple[int, int, str]] = []
    mirror_runs(project.runs_dir, project.database, project.registry(),
                progress=lambda done, total, name: seen.append((done, total, name)))
    assert seen and seen[-1][:2] == (2, 2)
    assert {Path(name).name for _, _, name in seen} <= set(names)
