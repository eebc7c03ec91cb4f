"""Watch a folder for result files and ingest what appears, while ``serve`` runs.

The watcher polls (no platform file-event API needed), waits until a file's
size and time stop changing, and ingests it in a child process: the server's
own read-only connections and the writer never share a process, and a file
that crashes the reader cannot take the server down. Bad files are reported
in the terminal and on the diagnostics page.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fmbench.runfile.annotations import is_sidecar
from fmbench.runfile.reader import DEFAULT_MAX_BYTES, DEFAULT_MAX_TRIALS
from fmbench.runfile.user_files import is_special

POLL_SECONDS = 1.0


def _snapshot(folder: Path) -> dict[Path, tuple[int, int]]:
    out = {}
    for p in folder.rglob("*"):
        # a FIFO or a device is listed too: the ingest names it as not a regular file, never opening it
        if (p.is_file() or is_special(p)) and (p.suffix == ".json" or is_sidecar(p)):
            try:
                st = p.stat()
            except OSError:
                continue
            out[p] = (st.st_size, st.st_mtime_ns)
    return out


def _run_file(path: Path) -> Path | None:
    """The run file a changed path belongs to (a sidecar re-ingests its run)."""
    if is_sidecar(path):
        stem = path.name.rsplit(".meta.", 1)[0]
        candidate = path.with_name(stem + ".json")
        return candidate if candidate.exists() else None
    return path


def ingest_in_child(
    paths: list[Path],
    db: Path,
    project: Path | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_trials: int = DEFAULT_MAX_TRIALS,
) -> list[dict[str, Any]]:
    """``project``: the project folder whose revision registry the runs are assigned with."""
    in_project = ["--project", str(project)] if project is not None else []
    result = subprocess.run(
        # -P: never let the working directory (a checkout's own fmbench/ folder) shadow the installed package
        [sys.executable, "-P", "-m", "fmbench", "ingest", *in_project, "--db", str(db), "--max-bytes", str(max_bytes),
         "--max-trials", str(max_trials), "--json", *map(str, paths)],
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        return list(json.loads(result.stdout)["outcomes"])
    except (ValueError, KeyError):
        message = (result.stderr or result.stdout).strip().splitlines()
        return [{"path": str(p), "status": "error", "message": message[-1] if message else "ingest failed"} for p in paths]


def watch_once(
    folder: Path,
    db: Path,
    seen: dict[Path, tuple[int, int]],
    pending: dict[Path, tuple[int, int]],
    project: Path | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_trials: int = DEFAULT_MAX_TRIALS,
) -> list[dict[str, Any]]:
    """One poll: ingest files that appeared or changed and have since stopped changing (none larger than ``max_bytes``)."""
    now = _snapshot(folder)
    ready = []
    for path, stamp in now.items():
        if seen.get(path) == stamp:
            continue
        if pending.get(path) == stamp:  # unchanged for one poll: the writer is done
            ready.append(path)
        else:
            pending[path] = stamp
    runs = sorted({r for r in (_run_file(p) for p in ready) if r is not None})
    outcomes = ingest_in_child(runs, db, project, max_bytes, max_trials) if runs else []
    for path in ready:
        seen[path] = now[path]
        pending.pop(path, None)
    return outcomes


def poll_in_thread(
    name: str,
    poll: Callable[[], Any],
    failed: Callable[[Exception], Any],
    interval: float = POLL_SECONDS,
    stop: threading.Event | None = None,
) -> threading.Thread:
    """Call ``poll`` in a daemon thread named ``name``, then again ``interval`` seconds after each call returns, until
    ``stop`` is set (without one, for as long as the process runs). An exception a poll raises is handed to
    ``failed`` and the polling goes on: a watcher reports and keeps going, it never stops the server."""
    stopping = stop if stop is not None else threading.Event()

    def loop() -> None:
        while not stopping.is_set():
            try:
                poll()
            except Exception as exc:  # the watcher reports and keeps going; it never stops the server
                failed(exc)
            stopping.wait(interval)

    thread = threading.Thread(target=loop, name=name, daemon=True)
    thread.start()
    return thread


def start_watcher(
    folder: Path,
    db: Path,
    diagnostics: Any,
    *,
    echo: Callable[[str], Any] = print,
    interval: float = POLL_SECONDS,
    project: Path | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_trials: int = DEFAULT_MAX_TRIALS,
    stop: threading.Event | None = None,
) -> threading.Thread:
    """Start polling ``folder`` in a daemon thread (until ``stop`` is set); files already there are ingested first."""
    folder.mkdir(parents=True, exist_ok=True)
    seen: dict[Path, tuple[int, int]] = {}
    pending: dict[Path, tuple[int, int]] = {}

    def poll() -> None:
        for o in watch_once(folder, db, seen, pending, project, max_bytes, max_trials):
            name = Path(o["path"]).name
            diagnostics.add(o["status"], name, o.get("message", ""))
            if o["status"] == "error":
                echo(f"watch: {o['message']}")
            elif o["status"] in ("ingested", "updated"):
                echo(f"watch: {o['status']} {name} (run {o.get('run_id')}, {o.get('verdict')})")

    def failed(exc: Exception) -> None:
        diagnostics.add("error", str(folder), f"watcher: {exc}")
        echo(f"watch: {exc}")

    return poll_in_thread("fmbench-watch", poll, failed, interval, stop)


# --- a project's runs folder -----------------------------------------------------------------------


def mirror_in_child(project: Path, db: Path, max_bytes: int = DEFAULT_MAX_BYTES,
                    max_trials: int = DEFAULT_MAX_TRIALS) -> list[str]:
    """Make ``db`` hold exactly the project's runs folder (new, changed and removed files), in a child process as
    the watcher ingests; the lines it printed, one a change."""
    result = subprocess.run(
        # -P: never let the working directory (a checkout's own fmbench/ folder) shadow the installed package
        [sys.executable, "-P", "-m", "fmbench", "mirror", "--project", str(project), "--db", str(db),
         "--max-bytes", str(max_bytes), "--max-trials", str(max_trials)],
        capture_output=True, text=True, check=False,
    )
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    if result.returncode != 0:
        lines += [line for line in result.stderr.strip().splitlines()[-1:]] or ["mirroring the runs folder failed"]
    return lines


def mirror_once(project: Path, runs: Path, db: Path, state: dict[str, Any], max_bytes: int = DEFAULT_MAX_BYTES,
                max_trials: int = DEFAULT_MAX_TRIALS) -> list[str]:
    """One poll of the runs folder: once what it holds has changed and then stayed the same for a poll, mirror it.
    ``state`` holds the folder as last mirrored (``"seen"``) and as last polled (``"pending"``)."""
    now = _snapshot(runs) if runs.is_dir() else {}
    if "seen" not in state:
        state["seen"] = now  # the folder as serve mirrored it before it started
        return []
    if now == state["seen"]:
        state.pop("pending", None)
        return []
    if state.get("pending") != now:  # still being written: wait for it to stop changing
        state["pending"] = now
        return []
    state["seen"] = now
    state.pop("pending", None)
    return mirror_in_child(project, db, max_bytes, max_trials)


def start_runs_watcher(
    project: Path,
    runs: Path,
    db: Path,
    diagnostics: Any,
    *,
    echo: Callable[[str], Any] = print,
    interval: float = POLL_SECONDS,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_trials: int = DEFAULT_MAX_TRIALS,
    stop: threading.Event | None = None,
) -> threading.Thread:
    """Poll a project's runs folder in a daemon thread (until ``stop`` is set) and mirror each change into the
    database (a file added, changed or removed), saying each in the server's log."""
    state: dict[str, Any] = {}

    def poll() -> None:
        for line in mirror_once(project, runs, db, state, max_bytes, max_trials):
            diagnostics.add("mirrored", str(runs), line)
            echo(f"runs: {line}")

    def failed(exc: Exception) -> None:
        diagnostics.add("error", str(runs), f"runs watcher: {exc}")
        echo(f"runs: {exc}")

    return poll_in_thread("fmbench-runs", poll, failed, interval, stop)
