"""Filling a build's staging folder: the site's files to be, each with the fingerprint of its inputs (:func:`plan`),
each carried over from the previous site or rendered, in this process or in worker processes (:class:`Stager`),
and what the build records of them (:class:`Manifest`, :class:`BuildReport`).

The build itself (:mod:`fmbench.publish.build`) decides what to stage and commits it.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Collection
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fmbench.errors import FmbenchError
from fmbench.processes import NO_CHECKPOINTS, Checkpoints
from fmbench.publish import workers as bw
from fmbench.publish.regression_cache import BuildRegressions
from fmbench.views import DATA, PAGES, DataKind, PageKind, SiteContext
from fmbench.views import inputs as I
from fmbench.views.inputs import RunIndex

Progress = Callable[[str, int, int], None]
"""``progress(stage, done, total)`` (see :func:`fmbench.publish.build.build_site`)."""
MANIFEST_FORMAT = 3


class BuildError(FmbenchError):
    """The site could not be built; the previous output is unchanged."""


@dataclass
class BuildReport:
    out: Path
    pages: int = 0
    data_files: int = 0
    assets: int = 0
    bytes_total: int = 0
    files_total: int = 0
    """Every file of the site: pages, data files and assets."""
    changed: list[str] = field(default_factory=list)
    """Files whose bytes are new or different."""
    removed: list[str] = field(default_factory=list)
    rendered: list[str] = field(default_factory=list)
    """Files rendered because their inputs changed (the others were carried over without rendering)."""
    seconds: float = 0.0
    seconds_by_kind: dict[str, float] = field(default_factory=dict)
    """Time spent rendering (and writing) each kind of output (where a build's time goes), summed over the
    processes that rendered."""
    workers: int = 0
    """Worker processes that rendered beside this one (0: this process rendered everything)."""
    seconds_waiting: float = 0.0
    """How long this process waited for its workers once its own pages were rendered."""
    largest_run_page: tuple[str, int] | None = None
    regression_devices: list[str] = field(default_factory=list)
    """The devices (hardware models) whose regression report this build computed; the others' were the previous
    build's (see :mod:`fmbench.publish.regression_cache`)."""
    resamples_drawn: int = 0
    """Sides this process resampled (the others' resamples were found in memory or in the resample store,
    :mod:`fmbench.comparison.resample_store`); a worker's are not counted."""
    resamples_removed: int = 0
    """Entries a full build removed from the resample store because no page used them any more."""
    comparisons_reused: int = 0
    """Comparisons this process took from the comparison cache (see :mod:`fmbench.comparison.cache`): the previous
    build's, or one a regression step of this build worked out."""
    comparisons_made: int = 0
    """Comparisons this process worked out."""
    warnings: list[str] = field(default_factory=list)
    """One line each: what a publisher should know about the built site (such as its size past 1 GB)."""

    @property
    def files(self) -> int:
        return self.pages + self.data_files + self.assets


def output_file(path: str) -> str:
    """A page path (``runs/abc/``) as the file that holds it (``runs/abc/index.html``)."""
    return path + "index.html" if path == "" or path.endswith("/") else path


@dataclass
class Manifest:
    """What the previous build wrote: each file's hash, size and inputs, and the inputs of the whole site."""

    settings: str = ""
    runs: str = ""
    output: str = ""
    """The output folder it describes (:func:`fmbench.publish.state.output_key`)."""
    files: dict[str, str] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)
    inputs: dict[str, str] = field(default_factory=dict)
    counts: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        doc = {
            "format": MANIFEST_FORMAT, "settings": self.settings, "runs": self.runs, "output": self.output,
            "counts": self.counts, "files": self.files, "sizes": self.sizes, "inputs": self.inputs,
        }
        return json.dumps(doc, indent=0, sort_keys=True)


@dataclass(frozen=True)
class Output:
    """One file of the site to be: what makes it and what it reads."""

    file: str
    kind: PageKind | DataKind
    params: dict[str, Any]
    runs: Collection[str] | None
    inputs: str


def plan(site: SiteContext, index: RunIndex, settings: str, kinds: Collection[str] | None = None) -> list[Output]:
    """Every output file (of ``kinds``, else of every kind) with the fingerprint of its inputs, in the order it is
    best rendered in.

    A run's pages and data files come together, so its trials are read once for all of them;
    original run files come last, read from the database a few at a time.
    """
    outputs = []
    for kind in (*PAGES, *DATA):
        if kinds is not None and kind.name not in kinds:
            continue
        for params in kind.instances(site):
            runs = kind.inputs(index, params)
            link = site.source_links.get(params["run_id"]) if kind.name == "run" else None
            digest = hashlib.sha256(
                json.dumps(
                    [settings, kind.name, params, index.fingerprint(runs), *([link] if link else [])],
                    sort_keys=True, default=str,
                ).encode()
            ).hexdigest()
            outputs.append(Output(output_file(kind.path(**params)), kind, params, runs, digest))
    return in_order(outputs)


def in_order(outputs: list[Output]) -> list[Output]:
    order = {id(o): i for i, o in enumerate(outputs)}
    return sorted(
        outputs, key=lambda o: (o.kind.name in bw.ORIGINAL_KINDS, str(o.params.get("run_id", "")), order[id(o)])
    )


RUN_KINDS = tuple(k.name for k in (*PAGES, *DATA) if k.inputs in (I.the_run, I.the_run_and_its_earlier_builds))
"""The kinds of file made for one run (its page, trial pages and data files, its original): a worker's task. A
trials page also reads the device's earlier builds (its failing samples are set against them), still one run's."""


class Stager:
    """Fills the staging folder: outputs whose inputs are unchanged are linked from the previous site, the rest
    rendered (in this process, or by workers that write into the folder and say what they wrote).

    A patching stage (``patch``) holds only the files whose bytes change: what is unchanged stays where it is.
    ``checkpoints`` is told ``render`` before each rendered file is recorded (see
    :func:`fmbench.publish.build.build_site`).
    """

    def __init__(
        self,
        site: SiteContext,
        index: RunIndex,
        previous: Manifest,
        manifest: Manifest,
        out_dir: Path,
        staging: Path,
        report: BuildReport,
        *,
        patch: bool = False,
        progress: Progress | None = None,
        checkpoints: Checkpoints = NO_CHECKPOINTS,
    ) -> None:
        self.site, self.index, self.previous, self.manifest = site, index, previous, manifest
        self.progress, self.to_render = progress, 0
        self.out_dir, self.staging, self.report = out_dir, staging, report
        self.patch = patch
        self._out = os.fspath(out_dir)
        self.kinds: dict[str, str] = {}
        self.carried = 0
        self.checkpoints = checkpoints

    def reusable(self, o: Output) -> bool:
        previous = self.previous
        return (
            previous.inputs.get(o.file) == o.inputs
            and o.file in previous.files
            and o.file in previous.sizes
            and os.path.isfile(os.path.join(self._out, o.file))  # a plain stat: this runs for every file of the site
        )

    def job(self, o: Output) -> bw.Job:
        data_as_of = self.index.newest_ingest(o.runs) if isinstance(o.kind, PageKind) else None
        return bw.Job(o.file, o.kind.name, o.params, data_as_of, self.previous.files.get(o.file))

    def carry_over(self, o: Output) -> None:
        """Same inputs, same bytes: the previous site's file (left where it is when patching)."""
        if not self.patch:
            target = self.staging / o.file
            target.parent.mkdir(parents=True, exist_ok=True)
            os.link(self.out_dir / o.file, target)
        self.manifest.files[o.file], self.manifest.sizes[o.file] = self.previous.files[o.file], self.previous.sizes[o.file]
        self.manifest.inputs[o.file] = o.inputs
        self.carried += 1
        cache = self.site.caches.comparisons
        if cache is not None:
            cache.carried(o.file)

    def record(self, written: bw.Written, inputs: str | None) -> None:
        if written.changed:
            self.report.changed.append(written.file)
        self.manifest.files[written.file], self.manifest.sizes[written.file] = written.digest, written.size
        if inputs is not None:
            self.manifest.inputs[written.file] = inputs

    def rendered(self, written: bw.Written, inputs: str) -> None:
        self.checkpoints.reached("render")
        self.record(written, inputs)
        self.report.rendered.append(written.file)
        if self.progress is not None:
            self.progress("rendering", len(self.report.rendered), self.to_render)

    def timed(self, kind: str, seconds: float) -> None:
        self.report.seconds_by_kind[kind] = self.report.seconds_by_kind.get(kind, 0.0) + seconds

    def sort(self, outputs: list[Output]) -> list[Output]:
        """Carry over what is reusable; the rest is to render."""
        todo = []
        for o in outputs:
            self.kinds[o.file] = "run" if o.kind.name == "run" else "page" if isinstance(o.kind, PageKind) else "data"
            if self.reusable(o):
                self.carry_over(o)
            else:
                todo.append(o)
        self.to_render += len(todo)
        return todo

    def render_here(self, o: Output) -> None:
        """Render one output in this process and place it in the staging folder."""
        started = time.perf_counter()
        job = self.job(o)
        cache = self.site.caches.comparisons
        with cache.rendering(o.file) if cache is not None else nullcontext():
            content = bw.render(self.site, job)
        self.rendered(bw.write(self.staging, self.out_dir, o.file, content, job.previous, keep=self.patch), o.inputs)
        self.timed(o.kind.name, time.perf_counter() - started)

    def serially(self, outputs: list[Output]) -> None:
        sources: list[Output] = []
        for o in self.sort(outputs):
            if o.kind.name in bw.ORIGINAL_KINDS:
                sources.append(o)
                continue
            self.render_here(o)
        started = time.perf_counter()
        by_file = {o.file: o for o in sources}
        for job, content in bw.originals(self.site, [self.job(o) for o in sources]):
            written = bw.write(self.staging, self.out_dir, job.file, content, job.previous, keep=self.patch)
            self.rendered(written, by_file[job.file].inputs)
        if sources:
            self.timed(sources[0].kind.name, time.perf_counter() - started)

    def in_parallel(
        self,
        workers: int,
        made: bw.SiteSettings,
        pooled: list[Output],
        rest: Callable[[], tuple[BuildRegressions, list[Output]]],
    ) -> BuildRegressions:
        """Workers render whole runs (and :data:`fmbench.publish.build.POOLED_SITE_PAGES`) while this process works
        out the regression report and renders the other pages (``rest``); the regression report."""
        todo = self.sort(pooled)
        inputs = {o.file: o.inputs for o in todo}
        sources = [self.job(o) for o in todo if o.kind.name in bw.ORIGINAL_KINDS]
        runs: dict[str, list[bw.Job]] = {}
        pages: list[bw.Job] = []
        for o in todo:
            if o.kind.name in bw.ORIGINAL_KINDS:
                continue
            if o.kind.name in RUN_KINDS:
                runs.setdefault(o.params["run_id"], []).append(self.job(o))
            else:
                pages.append(self.job(o))
        pool = bw.start_pool(workers, made, self.out_dir, self.staging, keep=self.patch, checkpoints=self.checkpoints)
        pending: list[Future[bw.Done]] = []
        try:
            # The longest task first: the originals, read in one pass over the stored files (which holds them all in
            # memory at once, as DuckDB scans them: one such pass at a time), then the pages, then the runs.
            if sources:
                pending.append(bw.work(pool, sources, bulk_originals=True))
            pending += [bw.work(pool, [j]) for j in pages]
            pending += [bw.work(pool, jobs) for jobs in runs.values()]
            regressions, outputs = rest()
            for o in self.sort(outputs):
                self.collect(pending, inputs, wait=False)
                self.render_here(o)
            started = time.perf_counter()
            self.collect(pending, inputs, wait=True)
            self.report.seconds_waiting = time.perf_counter() - started
        finally:
            _stop(pool)
        return regressions

    def collect(self, pending: list[Future[bw.Done]], inputs: dict[str, str], *, wait: bool) -> None:
        """Record what finished tasks wrote (all of them, with ``wait``); a task's error is raised here."""
        while pending:
            if not wait and not pending[0].done():
                ready = [f for f in pending if f.done()]
                if not ready:
                    return
                future = ready[0]
            else:
                future = pending[0]
            pending.remove(future)
            try:
                done = future.result()
            except BrokenProcessPool:
                raise BuildError(
                    "a worker process of the build stopped before it finished (killed, or out of memory?); "
                    "run the build again, with --jobs 1 to render in one process"
                ) from None
            for written in done.written:
                self.rendered(written, inputs[written.file])
            for kind, seconds in done.seconds.items():
                self.timed(kind, seconds)

    def finish(self) -> None:
        """The assets, and the counts the manifest keeps."""
        manifest, kinds = self.manifest, self.kinds
        for name, source in self.site.renderer.assets.items():
            kinds[f"assets/{name}"] = "asset"
            file = f"assets/{name}"
            previous = self.previous.files.get(file)
            self.record(bw.write(self.staging, self.out_dir, file, source.read_bytes(), previous, keep=self.patch), None)
        runs = {f: manifest.sizes[f] for f, k in kinds.items() if k == "run"}
        largest = max(runs.items(), key=lambda kv: (kv[1], kv[0])) if runs else None
        manifest.counts = {
            "pages": sum(1 for k in kinds.values() if k in ("page", "run")),
            "data_files": sum(1 for k in kinds.values() if k == "data"),
            "assets": sum(1 for k in kinds.values() if k == "asset"),
            "largest_run_page": [largest[0].removesuffix("index.html"), largest[1]] if largest else None,
        }


def _stop(pool: ProcessPoolExecutor) -> None:
    """Stop the workers: what is queued is dropped, a task under way is waited for (it writes into the staging
    folder, which is removed only after)."""
    pool.shutdown(wait=True, cancel_futures=True)
