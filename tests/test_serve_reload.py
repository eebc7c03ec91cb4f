"""``serve`` in a project reads ``fmbench.toml``, ``revisions.yaml`` and ``methodology.md`` again when they change,
without a restart, and says so in its log; a settings file that no longer reads keeps the settings before. Its
watchers poll their folders, mirror or ingest what changed, and report a failed poll and keep going."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

from fmbench.ingest import ingest_paths
from fmbench.project import load_project
from fmbench.scaffold import init_project
from fmbench.serving.serve import Diagnostics, create_app
from fmbench.serving.watch import poll_in_thread, start_watcher

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


def test_a_watcher_poll_that_fails_is_reported_and_the_polling_goes_on_until_stopped() -> None:
    polls: list[int] = []
    failures: list[str] = []
    third = threading.Event()

    def poll() -> None:
        polls.append(len(polls) + 1)
        if len(polls) == 1:
            raise OSError("the folder went away for a moment")
        if len(polls) == 3:
            third.set()

    stop = threading.Event()
    thread = poll_in_thread("fmbench-test-poll", poll, lambda exc: failures.append(str(exc)), 0.01, stop)
    try:
        assert third.wait(30), "the polling stopped after the failed poll"
    finally:
        stop.set()
        thread.join(30)
    assert not thread.is_alive()
    assert failures == ["the folder went away for a moment"]
    assert thread.daemon and thread.name == "fmbench-test-poll"


def test_the_folder_watcher_ingests_the_files_already_there_and_says_each_in_the_log_and_on_diagnostics(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "watched"
    folder.mkdir()
    shutil.copyfile(FIXTURES / RUN, folder / RUN)
    (folder / "broken.json").write_text("{", encoding="utf-8")
    diagnostics = Diagnostics()
    said: list[str] = []
    both = threading.Event()

    def echo(line: str) -> None:
        said.append(line)
        if len(said) == 2:
            both.set()

    stop = threading.Event()
    thread = start_watcher(folder, tmp_path / "results.duckdb", diagnostics, echo=echo, interval=0.05, stop=stop)
    try:
        assert both.wait(120), f"the watcher said {said}"
    finally:
        stop.set()
        thread.join(120)
    assert not thread.is_alive()
    ingested = [line for line in said if line.startswith(f"watch: ingested {RUN} (run ")]
    refused = [line for line in said if line.startswith("watch: ") and "broken.json" in line]
    assert len(ingested) == 1 and len(refused) == 1, said
    events = {(e["status"], e["file"]) for e in diagnostics.snapshot()}
    assert ("ingested", RUN) in events and ("error", "broken.json") in events
