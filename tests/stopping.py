"""Checkpoints that stop an ingest or a build at a stage, and the child processes the crash tests kill with them.

The library reads no environment variable for this: a test passes a :class:`~fmbench.processes.Checkpoints` to
``ingest_paths`` or ``build_site``. To be killed, the call runs in a child Python (:func:`child`), which imports
this module from the tests folder; a build's worker processes are spawned with the same ``sys.path``, so the
checkpoints it hands them unpickle there too.
"""

from __future__ import annotations

import os
import signal
import sys
from datetime import UTC, datetime
from pathlib import Path

import fmbench.publish.build as build
from fmbench.analysis.tolerance import DEFAULT_TOLERANCE
from fmbench.ingest import ingest_paths
from fmbench.processes import Checkpoints
from fmbench.publish import workers as bw
from fmbench.publish.build import BuildError

TESTS = Path(__file__).resolve().parent


class KillAt(Checkpoints):
    """SIGKILLs the process the ``at``-th time it reaches ``stage`` (in a build's workers: each worker's own count)."""

    def __init__(self, stage: str, at: int = 1) -> None:
        self.stage, self.at, self.seen = stage, at, 0

    def reached(self, stage: str) -> None:
        if stage == self.stage:
            self.seen += 1
            if self.seen >= self.at:
                os.kill(os.getpid(), signal.SIGKILL)


class FailAfter(Checkpoints):
    """Fails a build with a :class:`BuildError` once ``files`` files are rendered."""

    def __init__(self, files: int) -> None:
        self.files, self.rendered = files, 0

    def reached(self, stage: str) -> None:
        if stage != "render":
            return
        if self.rendered >= self.files:
            raise BuildError(f"build interrupted after {self.files} files (test checkpoint)")
        self.rendered += 1


class RaiseAt(Checkpoints):
    """Raises ``error`` the first time the step reaches ``stage``."""

    def __init__(self, stage: str, error: BaseException) -> None:
        self.stage, self.error = stage, error

    def reached(self, stage: str) -> None:
        if stage == self.stage:
            raise self.error


def child(job: str, *args: str | int | os.PathLike[str]) -> list[str]:
    """The command of a child Python that runs ``job`` (see :func:`_main`) with ``args``."""
    code = f"import sys; sys.path.insert(0, {os.fspath(TESTS)!r}); import stopping; stopping._main()"
    return [sys.executable, "-P", "-c", code, job, *(str(a) if isinstance(a, int) else os.fspath(a) for a in args)]


def _main() -> None:
    """In the child: ``build DB OUT BASE_URL STAGE AT``, ``parallel-build DB OUT BASE_URL STAGE AT`` (two workers,
    however few pages) or ``ingest PATH DB STAGE``, each killed by :class:`KillAt` at ``STAGE``; or
    ``idle-workers DB STAGING``, killed with its workers idle."""
    job, *args = sys.argv[1:]
    if job == "idle-workers":
        _idle_workers(*args)
        return
    if job == "ingest":
        path, db, stage = args
        ingest_paths([path], db, checkpoints=KillAt(stage))
        return
    db, out, base_url, stage, at = args
    jobs = None
    if job == "parallel-build":
        build.PARALLEL_MIN_TRIAL_PAGES, jobs = 1, 2
    build.build_site(db, out, base_url=base_url, jobs=jobs, checkpoints=KillAt(stage, int(at)))


def _idle_workers(db: str, out: str) -> None:
    """Two build workers, both started and one of them done with a page, waiting for the next task when this
    process (their build) is SIGKILLed."""
    made = bw.SiteSettings(db, "/", datetime.now(UTC), None, None, "", {}, DEFAULT_TOLERANCE, "gzip")
    staging = Path(out)
    staging.mkdir()
    pool = bw.start_pool(2, made, staging, staging)
    pending = [bw.work(pool, [bw.Job("methodology/index.html", "methodology", {}, None, None)]) for _ in range(2)]
    for future in pending:
        future.result()
    os.kill(os.getpid(), signal.SIGKILL)
