"""The static build: every page and data file of the site, written atomically, and only what changed.

Pages are rendered into a staging folder beside the output; nothing in the
output changes until every page has rendered. A build that fails part-way
leaves the previous output exactly as it was.

How the staged files then reach the output depends on what changed:

- **The settings** (fmbench itself, its templates and assets, the base URL,
  the registry, the publisher's identity): every file is rendered again, so
  the staging folder holds the whole site and replaces the output with two
  renames.
- **Only data** (runs added, changed or removed): the staging folder holds
  the files whose bytes changed and nothing else, and the build *patches* the
  output. It first writes a journal into the staging folder (the commit
  point), then moves each staged file into place, removes the files the site
  no longer has and puts the new manifest in last. A build killed before the
  journal leaves the output as it was; one killed (or failed) after it is finished by the
  next build, which moves in what is left. So a site of a few thousand
  folders is not copied (as links) and deleted for every run added.

A manifest records, per output file, its content hash and
the fingerprint of its inputs: the runs it reads (see
:mod:`fmbench.views.inputs`) and the site's code, templates, assets and
settings. A rebuild renders only the files whose inputs changed; the others
are carried over as they are (left in place by a patching build, hard-linked
into a whole new site otherwise), so their bytes and times do not change. A rebuild whose inputs did not change at all renders and writes
nothing. A page's footer time is when its data last changed (the newest
ingest of the runs it reads), so the same data always gives the same bytes.

The manifest and the caches are the build's own records, not pages: they are
kept beside the database, one folder per output folder
(:mod:`fmbench.publish.state`), never in the site. The manifest is replaced by a
stub that claims the output but lists no file before the output changes, and
written whole once it has: a build killed in between leaves no manifest that
describes another site, so the next build renders everything. A rebuild whose
output folder no longer holds the files its manifest lists (emptied, or a file
removed by hand) renders again what is missing.
"""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import shutil
import time
from collections.abc import Callable, Collection, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any

from fmbench import __version__, processes
from fmbench.analysis.revisions import Registry
from fmbench.analysis.tolerance import DEFAULT_TOLERANCE, Tolerance
from fmbench.comparison import cache as comparison_cache
from fmbench.comparison.caches import Caches
from fmbench.errors import FmbenchError
from fmbench.publish import state as build_state
from fmbench.publish import workers as bw
from fmbench.publish.regression_cache import BuildRegressions, build_regressions
from fmbench.storage.dataset import open_database
from fmbench.storage.db import schema_version
from fmbench.views import DATA, PAGES, DataKind, PageKind, SiteContext
from fmbench.views import inputs as I
from fmbench.views.inputs import RunIndex
from fmbench.views.render import SiteIdentity, asset_files, normalize_base_url
from fmbench.write_errors import as_write_error, writing

Progress = Callable[[str, int, int], None]
"""``progress(stage, done, total)`` (see :func:`build_site`)."""

MANIFEST = build_state.MANIFEST_FILE
"""The manifest's name in the build's records folder (:func:`fmbench.publish.state.state_folder`)."""
PATCH_JOURNAL = ".fmbench-patch.json"
"""Written into the staging folder of a patching build once every file is staged: the files it removes, the
manifest to write once they are in place and where. Its presence says the staged files are to be moved into the
output, by this build or, if it was killed, the next. (The staging folder is never the site: it is only patched in.)"""
MANIFEST_FORMAT = 3
RECORDS = "the build's records (its manifest and caches)"
"""What a refused write of the records folder says it was writing."""
ORIGINALS = ("gzip", "link", "copy")
"""How the site carries the original run files; ``gzip`` is the default (see :class:`fmbench.views.site.SiteContext`)."""
PUBLISHING_LIMIT = 10**9
FILE_COUNT_LIMIT = 20_000
"""The most files a site holds before static hosts that cap the count (Cloudflare Pages, for one) refuse it."""
"""GitHub Pages refuses a site larger than this (1 GB): the build warns past it."""
PARALLEL_MIN_TRIAL_PAGES = 20
"""Below this many trials pages to render (one a run and scenario, each with its trial data: a few runs, a few
seconds' work), a build renders in one process: starting workers (each imports fmbench and opens the database)
would cost more than it saves."""
POOLED_SITE_PAGES = ("scenario",)
"""Site-wide pages the workers render besides the runs' files: those that share nothing with the other pages.
The rest the parent renders meanwhile: the regression report, computed once, and the comparison pages, whose
resampled intervals it shares with the report (:mod:`fmbench.analysis.stats` keeps them per process: with the device
comparisons in workers, the large corpus's build took 144 CPU-seconds against about 120), and the quick indexes."""


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


def _read_manifest(state: Path, output: str) -> Manifest | None:
    """The manifest of the build of ``output`` whose records are in ``state``; ``None`` when there is none (an empty
    one when it cannot be read, or describes another folder: everything is rendered again)."""
    try:
        doc = json.loads((state / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return Manifest(output=output)
    if not isinstance(doc, dict) or doc.get("format") != MANIFEST_FORMAT or doc.get("output") != output:
        return Manifest(output=output)
    parts = {k: doc.get(k) for k in ("files", "sizes", "inputs", "counts")}
    if not all(isinstance(v, dict) for v in parts.values()):
        return Manifest(output=output)
    return Manifest(str(doc.get("settings", "")), str(doc.get("runs", "")), output, **parts)  # type: ignore[arg-type]


def _intact(out_dir: Path, manifest: Manifest) -> bool:
    """Whether ``out_dir`` still holds every file ``manifest`` lists, at its size (a plain stat of each)."""
    out = os.fspath(out_dir)
    for file, size in manifest.sizes.items():
        try:
            if os.stat(os.path.join(out, file)).st_size != size:
                return False
        except OSError:
            return False
    return len(manifest.sizes) == len(manifest.files) > 0


def _code_files() -> Iterator[Path]:
    """Everything besides the data that shapes the bytes of a page: code, templates, site sources and assets."""
    for package in ("fmbench", "fmbench.native", "fmbench.templates", "fmbench.site"):
        root = Path(str(resources.files(package)))
        yield from sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in (".py", ".html", ".xml", ".md", ".yaml", ".css", ".js"))
    yield from asset_files().values()


def settings_fingerprint(base_url: str, registry: Registry, publisher: str = "") -> str:
    """The inputs every output shares: fmbench's version, schema, code, templates and assets, the registry, the base URL,
    and the publisher's site identity and methodology notes (``publisher``)."""
    h = hashlib.sha256()
    for part in (__version__, str(schema_version()), normalize_base_url(base_url), repr(registry.revisions), publisher):
        h.update(part.encode("utf-8") + b"\x00")
    for path in _code_files():
        h.update(path.name.encode("utf-8") + b"\x00")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


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
    return _in_order(outputs)


def _in_order(outputs: list[Output]) -> list[Output]:
    order = {id(o): i for i, o in enumerate(outputs)}
    return sorted(
        outputs, key=lambda o: (o.kind.name in bw.ORIGINAL_KINDS, str(o.params.get("run_id", "")), order[id(o)])
    )


RUN_KINDS = tuple(k.name for k in (*PAGES, *DATA) if k.inputs in (I.the_run, I.the_run_and_its_earlier_builds))
"""The kinds of file made for one run (its page, trial pages and data files, its original): a worker's task. A
trials page also reads the device's earlier builds (its failing samples are set against them), still one run's."""


def _test_kill(stage: str) -> None:
    """Crash-safety test hook: ``FMBENCH_TEST_BUILD_KILL_AT=<stage>`` kills the build there.

    ``render``: after three files are rendered; ``staging``: with every file in
    the staging folder but no manifest yet; ``swap``: between the two renames;
    ``worker``: each worker process of a parallel build, on its first task.
    """
    if os.environ.get("FMBENCH_TEST_BUILD_KILL_AT") == stage:
        os.kill(os.getpid(), 9)


def recover_killed_builds(out_dir: Path) -> None:
    """Clear what a killed build left beside ``out_dir``: staging folders, and a retired site.

    A build killed between its two renames leaves no output and the previous
    site as ``.<out>.previous-<pid>``: that site is put back. A patching build
    killed (or failed) after its journal was written is finished: its staged files
    are moved in. Folders of builds still running (their process is alive) are left
    alone.
    """
    for prefix in (f".{out_dir.name}.previous-", f".{out_dir.name}.staging-"):
        for leftover in sorted(out_dir.parent.glob(f"{prefix}*")):
            pid = leftover.name.removeprefix(prefix)
            if not pid.isdigit():
                continue
            committed = (leftover / PATCH_JOURNAL).is_file() and out_dir.is_dir()
            if committed and int(pid) == os.getpid():
                _apply_patch(leftover, out_dir)  # an earlier build of this process failed while patching
                continue
            if int(pid) == os.getpid() or processes.alive(int(pid)):
                continue
            if prefix.endswith("previous-") and not out_dir.exists():
                leftover.rename(out_dir)
            elif (leftover / PATCH_JOURNAL).is_file() and out_dir.is_dir():
                _apply_patch(leftover, out_dir)  # killed while patching the site: finish what it committed to
            else:
                shutil.rmtree(leftover, ignore_errors=True)


def build_site(
    db: str | os.PathLike[str] | None,
    out: str | os.PathLike[str] = "_site",
    *,
    base_url: str = "/",
    registry: Registry | None = None,
    identity: SiteIdentity | None = None,
    methodology: str = "",
    source_links: dict[str, str] | None = None,
    tolerance: Tolerance = DEFAULT_TOLERANCE,
    originals: str = "gzip",
    jobs: int | None = None,
    progress: Progress | None = None,
) -> BuildReport:
    """Build the site into ``out`` from a database (or a Parquet dataset folder), rendering only what changed.

    ``identity``, ``methodology`` and ``source_links``: the publisher's site identity, methodology notes and
    links to the run files in their repository (a project's).
    ``originals``: how the site carries the original run files, one of :data:`ORIGINALS`: ``gzip`` (each gzipped,
    byte-identical once decompressed, its SHA-256 shown), ``link`` (to ``source_links``, no copy) or ``copy``.
    ``jobs``: processes that render at once (default: the machine's cores; 1: this process alone). A build with
    little to render (see :data:`PARALLEL_MIN_TRIAL_PAGES`) renders in this process whatever ``jobs`` says; the
    site is the same byte for byte either way.
    ``progress(stage, done, total)``: called as the build goes, ``resampling`` (devices whose regression steps
    are worked out, of those to work out) then ``rendering`` (files rendered, of those to render; the total grows
    by this process's pages once the regression report is done): a terminal's progress bar.
    A report's ``warnings`` say when the site passes 1 GB (GitHub Pages' limit).
    The previous site stays intact if anything fails.
    """
    if originals not in ORIGINALS:
        raise BuildError(f"originals: {originals!r} is not a policy; use one of {', '.join(ORIGINALS)}")
    if jobs is not None and jobs < 1:
        raise BuildError(f"jobs: {jobs} is not a number of processes; give 1 or more")
    started, began = time.perf_counter(), time.time()
    out_dir = Path(out)
    with writing(out_dir, "the site (clearing what a killed build left)"):
        recover_killed_builds(out_dir)
    state, output = build_state.records_folder(db, out_dir), build_state.output_key(db, out_dir)
    recorded = _read_manifest(state, output)
    ours = recorded is not None or build_state.holds_legacy_manifest(out_dir) or _looks_built(out_dir)
    previous = recorded if recorded is not None and out_dir.is_dir() else Manifest(output=output)
    report = BuildReport(out=out_dir)
    made = bw.SiteSettings(
        None if db is None else os.fspath(db), base_url, datetime.now(UTC), identity, registry, methodology,
        dict(source_links or {}), tolerance, originals,
    )
    caches = Caches.beside(db)  # this build's: handed to its site, and so to every comparison it makes
    store = caches.resamples.store
    with open_database(db) as con:
        site = bw.make_site(con, made, caches)
        index = RunIndex.read(con, site.paths)
        settings = settings_fingerprint(
            base_url, site.registry, site.renderer.identity.fingerprint() + "\x00" + methodology
            + ("" if tolerance == DEFAULT_TOLERANCE else f"\x00{tolerance}")
            + ("" if originals == "gzip" else f"\x00originals={originals}")
            + ("" if not site.paths.fingerprint() else f"\x00paths={site.paths.fingerprint()}")
        )
        if site.source_links:  # a moved run file changes its run's page only, through that page's own inputs
            settings_links = hashlib.sha256(json.dumps(site.source_links, sort_keys=True).encode()).hexdigest()
        else:
            settings_links = ""
        if (
            out_dir.is_dir() and previous.settings == settings and previous.runs == index.all_fingerprint
            and previous.counts.get("links", "") == settings_links and _intact(out_dir, previous)
        ):
            build_state.remove_legacy(out_dir)
            _count(report, previous)
            _warn_size(report)
            report.seconds = time.perf_counter() - started
            return report  # nothing it is made from changed: nothing to render, nothing to write
        kept: list[BuildRegressions] = []
        fingerprints = {run_id: facts.fingerprint for run_id, facts in index.runs.items()}
        # The comparisons the previous build made, for those whose runs are the same (a new settings fingerprint
        # changes every key, so nothing of another fmbench's is read).
        comparisons = caches.comparisons = comparison_cache.ComparisonCache.read(state, settings, fingerprints)

        def parent_outputs() -> list[Output]:
            """The regression report (each device's part reused from the previous build when its runs are the same),
            then the outputs this process renders; in a parallel build, while the workers start on the runs."""
            regressions = build_regressions(
                con, index, state, caches, settings=settings, tolerance=tolerance,
                progress=None if progress is None else lambda done, total: progress("resampling", done, total),
            )
            site.keep_regressions(regressions.report)
            report.regression_devices = regressions.recomputed
            kept.append(regressions)
            return plan(site, index, settings, _parent_kinds())

        manifest = Manifest(settings=settings, runs=index.all_fingerprint, output=output)
        staging = out_dir.with_name(f".{out_dir.name}.staging-{os.getpid()}")
        if staging.exists():
            shutil.rmtree(staging)
        # Only data changed: the staging folder gets the files whose bytes change, and they patch the site.
        patch = out_dir.is_dir() and previous.settings == settings and bool(previous.files)
        stage = _Stage(site, index, previous, manifest, out_dir, staging, report, patch=patch, progress=progress)
        try:
            staging.mkdir(parents=True)
            # The runs' files first: enumerating them is quick, and in a parallel build the workers start on them
            # while this process works out the rest (the regression report first of all).
            pooled = plan(site, index, settings, (*RUN_KINDS, *POOLED_SITE_PAGES))
            workers = report.workers = _workers(jobs, [o for o in pooled if not stage.reusable(o)])
            if workers:
                stage.in_parallel(workers, made, pooled, parent_outputs)
            else:
                stage.serially(_in_order(pooled + parent_outputs()))
            stage.finish()
            manifest.counts["links"] = settings_links
            report.removed = sorted(set(previous.files) - set(manifest.files))
            _count(report, manifest)
            if out_dir.is_dir() and not report.changed and not report.removed:
                # Same bytes everywhere: keep the site as it is and remember the new inputs.
                shutil.rmtree(staging)
                with writing(state, RECORDS):
                    state.mkdir(parents=True, exist_ok=True)
                    _save_records(state, kept[0], comparisons)
                    _write_atomically(state / MANIFEST, manifest.to_json())
            else:
                _test_kill("staging")
                if not patch and not ours and out_dir.is_dir() and any(out_dir.iterdir()):
                    raise BuildError(
                        f"{out_dir}: exists and was not written by fmbench build; choose another --out or remove it"
                    )
                with writing(state, RECORDS):
                    state.mkdir(parents=True, exist_ok=True)
                    # Until the output is the new site, no manifest describes it: a kill from here on leaves a
                    # manifest that claims the folder and lists nothing, so the next build renders it all again.
                    _write_atomically(state / MANIFEST, Manifest(output=output).to_json())
                    _save_records(state, kept[0], comparisons)
                if patch:
                    pending = state / f"{MANIFEST}.pending"
                    with writing(state, RECORDS):
                        _write_atomically(pending, manifest.to_json())
                    journal = {"removed": report.removed, "manifest": os.fspath(pending.absolute())}
                    _write_atomically(staging / PATCH_JOURNAL, json.dumps(journal))
                    _apply_patch(staging, out_dir)
                else:
                    _swap(staging, out_dir)
                    with writing(state, RECORDS):
                        _write_atomically(state / MANIFEST, manifest.to_json())
            build_state.remove_legacy(out_dir)
            if store is not None and not stage.carried:
                # Everything was rendered, so every entry the site needs was read or written since the start:
                # the rest belong to sides no page has any more.
                report.resamples_removed = store.sweep(began)
        except BaseException as exc:
            refused = as_write_error(exc, out_dir, "the site") if isinstance(exc, Exception) else None
            if not (staging / PATCH_JOURNAL).is_file():
                shutil.rmtree(staging, ignore_errors=True)
            # else the patch was committed: the next build moves in what is left (see recover_killed_builds)
            if refused is not None and refused is not exc:
                raise refused from None
            raise
    _warn_size(report)
    report.resamples_drawn = caches.resamples.drawn
    report.comparisons_reused, report.comparisons_made = comparisons.hits, comparisons.misses
    report.seconds = time.perf_counter() - started
    return report


def _parent_kinds() -> tuple[str, ...]:
    return tuple(k.name for k in (*PAGES, *DATA) if k.name not in RUN_KINDS and k.name not in POOLED_SITE_PAGES)


def _workers(jobs: int | None, to_render: list[Output]) -> int:
    """How many worker processes render: none for a small build (or in a worker process), else ``jobs``."""
    wanted = jobs if jobs is not None else os.cpu_count() or 1
    if wanted < 2 or multiprocessing.parent_process() is not None:
        return 0
    trial_pages = sum(1 for o in to_render if o.kind.name == "trials")
    return wanted if trial_pages >= PARALLEL_MIN_TRIAL_PAGES else 0


def _warn_size(report: BuildReport) -> None:
    if report.bytes_total > PUBLISHING_LIMIT:
        report.warnings.append(
            f"{report.out}: the site is {report.bytes_total / 1e9:.2f} GB, over the 1 GB GitHub Pages publishes; "
            "set [publishing] originals = \"gzip\" or \"link\" (or pass --originals) to make it smaller"
        )
    if report.files_total > FILE_COUNT_LIMIT:
        report.warnings.append(
            f"{report.out}: the site has {report.files_total:,} files, over the 20,000 a site of Cloudflare Pages may hold "
            "(other static hosts cap the count too); split the site by project or publish fewer runs"
        )


class _Stage:
    """Fills the staging folder: outputs whose inputs are unchanged are linked from the previous site, the rest
    rendered (in this process, or by workers that write into the folder and say what they wrote).

    A patching stage (``patch``) holds only the files whose bytes change: what is unchanged stays where it is.
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
    ) -> None:
        self.site, self.index, self.previous, self.manifest = site, index, previous, manifest
        self.progress, self.to_render = progress, 0
        self.out_dir, self.staging, self.report = out_dir, staging, report
        self.patch = patch
        self._out = os.fspath(out_dir)
        self.kinds: dict[str, str] = {}
        self.carried = 0
        self.fail_after = int(os.environ.get("FMBENCH_TEST_BUILD_FAIL_AFTER", "0") or 0)

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

    def before_render(self) -> None:
        done = len(self.report.rendered)
        if self.fail_after and done >= self.fail_after:
            raise BuildError(f"build interrupted after {self.fail_after} files (test hook)")
        if done == 3:
            _test_kill("render")

    def rendered(self, written: bw.Written, inputs: str) -> None:
        self.before_render()
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
        self.before_render()
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
            self.before_render()
            written = bw.write(self.staging, self.out_dir, job.file, content, job.previous, keep=self.patch)
            self.rendered(written, by_file[job.file].inputs)
        if sources:
            self.timed(sources[0].kind.name, time.perf_counter() - started)

    def in_parallel(
        self, workers: int, made: bw.SiteSettings, pooled: list[Output], rest: Callable[[], list[Output]]
    ) -> None:
        """Workers render whole runs (and :data:`POOLED_SITE_PAGES`) while this process renders the other pages."""
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
        pool = bw.start_pool(workers, made, self.out_dir, self.staging, keep=self.patch)
        pending: list[Future[bw.Done]] = []
        try:
            # The longest task first: the originals, read in one pass over the stored files (which holds them all in
            # memory at once, as DuckDB scans them: one such pass at a time), then the pages, then the runs.
            if sources:
                pending.append(bw.work(pool, sources, bulk_originals=True))
            pending += [bw.work(pool, [j]) for j in pages]
            pending += [bw.work(pool, jobs) for jobs in runs.values()]
            for o in self.sort(rest()):
                self.collect(pending, inputs, wait=False)
                self.render_here(o)
            started = time.perf_counter()
            self.collect(pending, inputs, wait=True)
            self.report.seconds_waiting = time.perf_counter() - started
        finally:
            _stop(pool)

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



def _count(report: BuildReport, manifest: Manifest) -> None:
    counts = manifest.counts
    report.pages = int(counts.get("pages", 0))
    report.data_files = int(counts.get("data_files", 0))
    report.assets = int(counts.get("assets", 0))
    report.bytes_total = sum(manifest.sizes.values())
    report.files_total = len(manifest.sizes)
    largest = counts.get("largest_run_page")
    report.largest_run_page = (str(largest[0]), int(largest[1])) if largest else None


def _save_records(state: Path, regressions: BuildRegressions, comparisons: comparison_cache.ComparisonCache) -> None:
    """The caches the next build reuses, into the build's records folder (made if need be)."""
    regressions.save(state)
    comparisons.save(state)


def _looks_built(out_dir: Path) -> bool:
    """Whether ``out_dir`` holds a site fmbench built (its home page names fmbench as its generator), for a site
    whose records are gone (the database and the folder beside it deleted)."""
    try:
        with (out_dir / "index.html").open("rb") as f:
            head = f.read(8192)
    except OSError:
        return False
    return b'<meta name="generator" content="fmbench ' in head


def _write_atomically(path: Path, text: str) -> None:
    temporary = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        temporary.write_text(text, encoding="utf-8")
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def _swap(staging: Path, out_dir: Path) -> None:
    """Put the staging folder in place of the output with two renames; the old site goes last."""
    if not out_dir.exists():
        staging.rename(out_dir)
        return
    retired = out_dir.with_name(f".{out_dir.name}.previous-{os.getpid()}")
    out_dir.rename(retired)
    try:
        _test_kill("swap")
        staging.rename(out_dir)
    except BaseException:
        retired.rename(out_dir)
        raise
    shutil.rmtree(retired, ignore_errors=True)


def _apply_patch(staging: Path, out_dir: Path) -> None:
    """Move a patching build's staged files into the output, remove what its journal lists, put the manifest in
    place last (among the build's records, where the journal says) and remove the staging folder. Each step can be
    done again: a build killed part-way is finished by the next one (see :func:`recover_killed_builds`)."""
    journal = json.loads((staging / PATCH_JOURNAL).read_text(encoding="utf-8"))
    staged = sorted(p for p in staging.rglob("*") if p.is_file() and p.relative_to(staging).as_posix() != PATCH_JOURNAL)
    for moved, source in enumerate(staged, 1):
        target = out_dir / source.relative_to(staging)
        target.parent.mkdir(parents=True, exist_ok=True)
        os.replace(source, target)
        if moved == 1:
            _test_kill("patch")
    for file in journal["removed"]:
        gone = out_dir / file
        gone.unlink(missing_ok=True)
        folder = gone.parent
        while folder != out_dir and folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
            folder = folder.parent
    pending = Path(journal.get("manifest") or "")
    if pending.name and pending.is_file():
        os.replace(pending, pending.with_name(MANIFEST))
    shutil.rmtree(staging)
