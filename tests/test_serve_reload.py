"""``serve`` in a project reads ``fmbench.toml``, ``revisions.yaml`` and ``methodology.md`` again when they change,
without a restart, and says so in its log; a settings file that no longer reads keeps the settings before."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from fmbench.ingest import ingest_paths
from fmbench.project import load_project
from fmbench.scaffold import init_project
from fmbench.serving.serve import create_app

from testdata import FIXTURES

RUN = "iphone-17-pro-ios27-24a5256a-on-device-performance-2026-10-29.json"


def touch_later(path: Path, text: str) -> None:
    """Write ``text``, its modification time a second on (a file system's clock can be coarse)."""
    before = path.stat().st_mtime_ns
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(before + 10**9, before + 10**9))


def test_serve_reloads_the_settings_registry_and_notes_and_logs_each_change(tmp_path: Path) -> None:
    init_project(tmp_path / "p", title="Before the edit")
    project = load_project(tmp_path / "p")
    shutil.copyfile(FIXTURES / RUN, project.runs_dir / RUN)
    assert ingest_paths([project.runs_dir / RUN], project.database, registry=project.registry()).ok
    app = create_app(project.database, project=project)
    said: list[str] = []
    app.config["FMBENCH_ECHO"] = said.append
    client = app.test_client()

    def page(path: str = "/") -> str:
        response = client.get(path, headers={"Host": "127.0.0.1:8000"})
        assert response.status_code == 200, response.status_code
        return response.get_data(as_text=True)

    assert 'og:site_name" content="Before the edit"' in page() and said == []

    toml = project.file
    touch_later(toml, toml.read_text(encoding="utf-8").replace('title = "Before the edit"', 'title = "After the edit"'))
    assert 'og:site_name" content="After the edit"' in page()
    assert said == [f"reload: {toml} changed; its settings apply from this request on"]

    touch_later(toml, toml.read_text(encoding="utf-8").replace("[site]", "[site]\nunknown_key = 1"))
    assert 'og:site_name" content="After the edit"' in page()  # the settings before are kept
    assert said[-1].startswith(f"reload: {toml} not reloaded, the settings before are kept: {toml}: site.unknown_key")
    assert len(said) == 2
    page()
    assert len(said) == 2  # said once

    notes = project.methodology_file
    touch_later(notes, "# How these runs were made\n\nOn a bench in a cool room, the devices charged.\n")
    assert "On a bench in a cool room" in page("/methodology/")
    assert said[-1] == f"reload: {notes} changed; pages show it from this request on"


def test_the_runs_watcher_mirrors_a_file_added_and_then_removed_once_it_stops_changing(tmp_path: Path) -> None:
    from fmbench.serving.watch import mirror_once

    init_project(tmp_path / "p")
    project = load_project(tmp_path / "p")
    state: dict[str, object] = {}
    assert mirror_once(project.root, project.runs_dir, project.database, state) == []  # as serve mirrored it
    shutil.copyfile(FIXTURES / RUN, project.runs_dir / RUN)
    assert mirror_once(project.root, project.runs_dir, project.database, state) == []  # seen once: maybe mid-write
    (added,) = mirror_once(project.root, project.runs_dir, project.database, state)
    assert added.startswith(f"ingested {RUN} (run ")
    assert mirror_once(project.root, project.runs_dir, project.database, state) == []  # nothing new
    (project.runs_dir / RUN).unlink()
    assert mirror_once(project.root, project.runs_dir, project.database, state) == []
    (dropped,) = mirror_once(project.root, project.runs_dir, project.database, state)
    assert dropped.startswith(f"dropped {RUN} (run ") and dropped.endswith("its file is gone from the runs folder")
