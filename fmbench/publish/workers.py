"""Rendering the site's files, in this process or in worker processes that share the machine's cores.

The static build (:mod:`fmbench.publish.build`) hands out :class:`Job` lists: a whole
run (its page, trial pages, trial data, trials CSV and figures), so each run's
trials are read from the database once; a share of the original run files,
read in one pass over the table that holds them (DuckDB reads one stored file
by scanning the column of all of them); or one site-wide page that needs
nothing the build's other pages compute. A worker opens the database (or
Parquet dataset) read-only with its own :class:`~fmbench.views.site.SiteContext`,
made exactly as the parent's (:func:`make_site`), writes each file straight
into the staging folder and returns what the parent's manifest needs: the
file, its SHA-256, its size and whether its bytes are new.

Workers are started with ``spawn``: DuckDB runs threads, and a process forked
from one that has opened a database may hang on a lock held by a thread that
was not copied (a worker is ready in about 0.7 CPU-seconds: fmbench imported,
the database opened). They are not niced: measured on the large corpus on a
shared machine, niced workers were the last to finish (the parent waited 34
to 55 s for them after its own pages), and unniced ones finished before the
parent (the build 148 s against 173 s at a similar load).
"""

from __future__ import annotations

import gc
import hashlib
import multiprocessing
import os
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb

from fmbench.analysis.revisions import Registry
from fmbench.analysis.tolerance import Tolerance
from fmbench.comparison.caches import Caches
from fmbench.errors import FmbenchError
from fmbench.processes import NO_CHECKPOINTS, Checkpoints
from fmbench.storage.dataset import open_database
from fmbench.storage.originals import gzipped_original, original_bytes
from fmbench.views import (
    DATA,
    NAVIGATION,
    PAGES,
    DataKind,
    PageKind,
    SiteContext,
    render_page,
    site_context,
)
from fmbench.views.data import source_files
from fmbench.views.filters import Filters
from fmbench.views.render import Renderer, SiteIdentity
from fmbench.views.run_queries import RunData
from fmbench.write_errors import refusal

ORIGINAL_KINDS = ("source", "source_gzip")
PARENT_WATCH_SECONDS = 1.0
"""How often an idle worker looks whether its build still runs (a task looks before each file it writes)."""
KINDS: dict[str, PageKind | DataKind] = {k.name: k for k in (*PAGES, *DATA)}


@dataclass(frozen=True)
class SiteSettings:
    """What makes a site context: the same in the parent and in every worker, so every file gets the same bytes."""

    db: str | None
    base_url: str
    generated_at: datetime
    identity: SiteIdentity | None
    registry: Registry | None
    methodology: str
    source_links: dict[str, str]
    tolerance: Tolerance
    originals: str


def make_site(con: duckdb.DuckDBPyConnection, settings: SiteSettings, caches: Caches | None = None) -> SiteContext:
    """The site a build (``caches``: its own) or a build worker renders with; a worker's caches are its own, with
    the build's resample store (shared through its files)."""
    renderer = Renderer(
        mode="static", base_url=settings.base_url, generated_at=settings.generated_at, identity=settings.identity,
        navigation=NAVIGATION,
    )
    site = site_context(con, renderer, settings.registry, settings.methodology)
    site.source_links = dict(settings.source_links)
    site.tolerance = settings.tolerance
    site.run_data = RunData(con, every_run=True)  # a build asks about every run at once
    site.originals = settings.originals
    site.caches = Caches.beside(settings.db) if caches is None else caches
    return site


@dataclass(frozen=True)
class Job:
    """One file to render: its kind and parameters, its footer time, and its hash in the previous site's manifest."""

    file: str
    kind: str
    params: dict[str, Any]
    data_as_of: datetime | None
    previous: str | None


@dataclass(frozen=True)
class Written:
    file: str
    digest: str
    size: int
    changed: bool
    """False when the previous site had the same bytes: the file is then its hard link."""


@dataclass
class Done:
    """What a list of jobs wrote, and the seconds each kind of file took."""

    written: list[Written] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)


def render(site: SiteContext, job: Job) -> bytes:
    kind = KINDS[job.kind]
    if isinstance(kind, PageKind):
        return render_page(site, kind, Filters.none(), data_as_of=job.data_as_of, **job.params).encode("utf-8")
    return kind.produce(site, Filters.none(), **job.params)


def originals(site: SiteContext, jobs: list[Job]) -> Iterator[tuple[Job, bytes]]:
    """The original run files of ``jobs``, as the site carries them, read in one pass over the stored files."""

    by_run = {j.params["run_id"]: j for j in jobs}
    for run_id, name, stored, encoding in source_files(site, list(by_run)):
        job = by_run[run_id]
        where = f"{name} (run {run_id})"
        yield job, (gzipped_original if job.kind == "source_gzip" else original_bytes)(stored, encoding, where)


def write(
    staging: Path, out_dir: Path, file: str, content: bytes, previous: str | None, *, keep: bool = False
) -> Written:
    """Put a rendered file into the staging folder; the same bytes as the previous site's are linked, not written
    (``keep``: a patching build's, left where they are)."""
    target = staging / file
    if not staging.is_dir():  # removed: the build failed, or was killed and cleared by the next one
        raise FileNotFoundError(f"{staging}: the staging folder is gone")
    digest = hashlib.sha256(content).hexdigest()
    old = out_dir / file
    if previous == digest and old.is_file():
        if not keep:
            target.parent.mkdir(parents=True, exist_ok=True)
            os.link(old, target)  # rendered again to the same bytes: keep the file (and its time) as it is
        return Written(file, digest, len(content), False)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(content)
    return Written(file, digest, len(content), True)


# --- worker processes ---------------------------------------------------------------------------

_worker: dict[str, Any] = {}


def _init_worker(
    settings: SiteSettings, out_dir: Path, staging: Path, parent: int, keep: bool, checkpoints: Checkpoints
) -> None:
    threading.Thread(target=_watch_parent, args=(parent,), name="parent watch", daemon=True).start()
    stack = ExitStack()
    con = stack.enter_context(open_database(settings.db))
    con.execute("SET threads = 1")  # one core each: there are as many workers as cores
    _worker.update(
        stack=stack, site=make_site(con, settings), out_dir=out_dir, staging=staging, parent=parent, keep=keep,
        checkpoints=checkpoints,
    )


def _work(jobs: list[Job], bulk_originals: bool) -> Done:
    """A worker's task: render ``jobs`` (a run's files, a share of the originals or one page) into the staging folder.

    The cycle collector is paused for the task: rendering a run's pages makes hundreds of thousands of short-lived
    objects, and each collection it set off walked everything the run's trials hold (measured on the large
    corpus: about a tenth of a run's CPU seconds, a third of its trials pages'). What is left in cycles is
    collected after the task, once the collector runs again, so memory stays bounded by one run's (measured:
    the same peak as with the collector on).
    """
    site: SiteContext = _worker["site"]
    staging: Path = _worker["staging"]
    _worker["checkpoints"].reached("worker")
    done = Done()
    job = jobs[0]
    gc.disable()  # see _work's docstring
    try:
        if bulk_originals:
            started = time.perf_counter()
            for job, content in originals(site, jobs):
                _check_parent()
                done.written.append(write(staging, _worker["out_dir"], job.file, content, job.previous, keep=_worker["keep"]))
            done.seconds[jobs[0].kind] = time.perf_counter() - started
        else:
            for job in jobs:
                _check_parent()
                started = time.perf_counter()
                content = render(site, job)
                done.written.append(write(staging, _worker["out_dir"], job.file, content, job.previous, keep=_worker["keep"]))
                done.seconds[job.kind] = done.seconds.get(job.kind, 0.0) + time.perf_counter() - started
    except Exception as exc:
        # What crosses back to the parent must unpickle there: a refused write as the OSError it is,
        # fmbench's own errors as their one-line message.
        code = refusal(exc)
        if code is not None:
            raise OSError(code, os.strerror(code), str(staging / job.file)) from None
        if isinstance(exc, FmbenchError):
            raise FmbenchError(str(exc)) from None
        raise
    finally:
        site.forget_kept()  # one run's trials at a time
        gc.enable()
    return done


def _watch_parent(parent: int) -> None:
    """A worker waiting for a task when its build is killed stops too: it would wait for ever (the queue it reads
    from stays open, this worker holding both of its ends), keeping the database open."""
    while os.getppid() == parent:
        time.sleep(PARENT_WATCH_SECONDS)
    os._exit(1)


def _check_parent() -> None:
    """A worker whose build was killed stops: the next build clears the staging folder it would write into."""
    if os.getppid() != _worker["parent"]:
        os._exit(1)


def start_pool(
    workers: int, settings: SiteSettings, out_dir: Path, staging: Path, *, keep: bool = False,
    checkpoints: Checkpoints = NO_CHECKPOINTS,
) -> ProcessPoolExecutor:
    """Workers that render into ``staging`` (``keep``: a patching build's, see :func:`write`); each tells its copy
    of ``checkpoints`` (pickled to it) ``worker`` as it starts a task."""
    return ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_init_worker,
        initargs=(settings, out_dir, staging, os.getpid(), keep, checkpoints),
    )


def work(pool: ProcessPoolExecutor, jobs: list[Job], *, bulk_originals: bool = False) -> Any:
    """Hand ``jobs`` to a worker: a future of their :class:`Done`."""
    return pool.submit(_work, jobs, bulk_originals)
