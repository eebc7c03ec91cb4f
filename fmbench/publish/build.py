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

import functools
import hashlib
import json
import multiprocessing
import os
import shutil
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path

import duckdb

from fmbench import __version__, processes
from fmbench.analysis.revisions import Registry
from fmbench.analysis.tolerance import DEFAULT_TOLERANCE, Tolerance
from fmbench.comparison import cache as comparison_cache
from fmbench.comparison.caches import Caches
from fmbench.processes import NO_CHECKPOINTS, Checkpoints
from fmbench.publish import state as build_state
from fmbench.publish import workers as bw
from fmbench.publish.regression_cache import BuildRegressions, build_regressions
from fmbench.publish.staging import (
    MANIFEST_FORMAT,
    RUN_KINDS,
    BuildError,
    BuildReport,
    Manifest,
    Output,
    Progress,
    Stager,
    in_order,
    plan,
)
from fmbench.publish.staging import (
    output_file as output_file,  # re-exported: where a page's file is, as callers of the build name it
)
from fmbench.storage.dataset import open_database
from fmbench.storage.db import schema_version
from fmbench.views import DATA, PAGES, SiteContext
from fmbench.views.inputs import RunIndex
from fmbench.views.render import SiteIdentity, asset_files
from fmbench.write_errors import as_write_error, writing

MANIFEST = build_state.MANIFEST_FILE
"""The manifest's name in the build's records folder (:func:`fmbench.publish.state.state_folder`)."""
PATCH_JOURNAL = ".fmbench-patch.json"
"""Written into the staging folder of a patching build once every file is staged: the files it removes, the
manifest to write once they are in place and where. Its presence says the staged files are to be moved into the
output, by this build or, if it was killed, the next. (The staging folder is never the site: it is only patched in.)"""
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


def code_digest() -> str:
    """The digest of everything besides the data that shapes the bytes of a page (:func:`_code_files`)."""
    h = hashlib.sha256()
    for path in _code_files():
        h.update(path.name.encode("utf-8") + b"\x00")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


@dataclass(frozen=True)
class Settings:
    """The inputs every output of a build shares: when one of them changes, every file is rendered again."""

    version: str
    """fmbench's version."""
    schema: int
    """The database's schema version."""
    code: str
    """fmbench's code, templates, site sources and assets (:func:`code_digest`)."""
    base_url: str
    registry: str
    """The registry's revisions, as ``repr`` writes them."""
    identity: str
    """The publisher's site identity (:meth:`fmbench.views.render.SiteIdentity.fingerprint`)."""
    methodology: str
    """The publisher's methodology notes."""
    tolerance: Tolerance
    originals: str
    """How the site carries the original run files (one of :data:`ORIGINALS`)."""
    paths: str
    """Where the runs' files are, as the site names them (empty: nowhere recorded)."""

    @classmethod
    def of(cls, site: SiteContext, methodology: str, tolerance: Tolerance, originals: str) -> Settings:
        """The settings of a build of ``site`` (its renderer has the base URL and the identity)."""
        return cls(
            __version__, schema_version(), code_digest(), site.renderer.base_url,
            repr(site.registry.revisions), site.renderer.identity.fingerprint(), methodology, tolerance, originals,
            site.paths.fingerprint(),
        )

    def fingerprint(self) -> str:
        """One digest of every field: what a manifest and the caches keep to know whether they still apply."""
        fields = json.dumps(asdict(self), sort_keys=True, ensure_ascii=False)
        return hashlib.sha256(fields.encode("utf-8")).hexdigest()


def recover_killed_builds(out_dir: Path, checkpoints: Checkpoints = NO_CHECKPOINTS) -> None:
    """Recover: clear what a killed build left beside ``out_dir``: staging folders, and a retired site.

    A build killed between its two renames leaves no output and the previous
    site as ``.<out>.previous-<pid>``: that site is put back. A patching build
    killed (or failed) after its journal was written is finished: its staged files
    are moved in (``checkpoints`` told ``patch`` once the first is). Folders of builds
    still running (their process is alive) are left alone.
    """
    for prefix in (f".{out_dir.name}.previous-", f".{out_dir.name}.staging-"):
        for leftover in sorted(out_dir.parent.glob(f"{prefix}*")):
            pid = leftover.name.removeprefix(prefix)
            if not pid.isdigit():
                continue
            committed = (leftover / PATCH_JOURNAL).is_file() and out_dir.is_dir()
            if committed and int(pid) == os.getpid():
                _apply_patch(leftover, out_dir, checkpoints)  # an earlier build of this process failed while patching
                continue
            if int(pid) == os.getpid() or processes.alive(int(pid)):
                continue
            if prefix.endswith("previous-") and not out_dir.exists():
                leftover.rename(out_dir)
            elif committed:
                _apply_patch(leftover, out_dir, checkpoints)  # killed while patching the site: finish what it committed to
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
    checkpoints: Checkpoints = NO_CHECKPOINTS,
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
    ``checkpoints`` is told each stage the build reaches: ``render`` before each file rendered is recorded,
    ``staging`` with every file staged and nothing of the output or its records changed yet, ``swap`` between
    the two renames, ``patch`` once a patching build moved its first file in, and, in each worker process (it
    gets a copy), ``worker`` as a task starts. The build runs its units in turn: :func:`recover_killed_builds`,
    :func:`plan_build`, :func:`render`, :func:`stage` and :func:`commit` (or :func:`keep_site`).
    A report's ``warnings`` say when the site passes 1 GB (GitHub Pages' limit).
    The previous site stays intact if anything fails.
    """
    _check_arguments(originals, jobs)
    started, began = time.perf_counter(), time.time()
    out_dir = Path(out)
    with writing(out_dir, "the site (clearing what a killed build left)"):
        recover_killed_builds(out_dir, checkpoints)
    previous = read_previous(db, out_dir)
    report = BuildReport(out=out_dir)
    made = bw.SiteSettings(
        None if db is None else os.fspath(db), base_url, datetime.now(UTC), identity, registry, methodology,
        dict(source_links or {}), tolerance, originals,
    )
    with open_database(db) as con:
        build = open_build(con, made, previous, out_dir, jobs=jobs, progress=progress, checkpoints=checkpoints)
        changes = plan_build(build)
        if changes.nothing:  # nothing it is made from changed: nothing to render, nothing to write
            build_state.remove_legacy(out_dir)
            _count(report, previous.manifest)
        else:
            _transact(build, changes, report, began)
    _warn_size(report)
    report.seconds = time.perf_counter() - started
    return report


def _check_arguments(originals: str, jobs: int | None) -> None:
    if originals not in ORIGINALS:
        raise BuildError(f"originals: {originals!r} is not a policy; use one of {', '.join(ORIGINALS)}")
    if jobs is not None and jobs < 1:
        raise BuildError(f"jobs: {jobs} is not a number of processes; give 1 or more")


@dataclass(frozen=True)
class Previous:
    """What the previous build of an output folder left: its records folder, manifest and whether it is ours."""

    records: Path
    """The build's records folder (:func:`fmbench.publish.state.records_folder`)."""
    output: str
    """The output folder as the records name it (:func:`fmbench.publish.state.output_key`)."""
    manifest: Manifest
    """The previous build's manifest; an empty one when there is none (or no output folder)."""
    ours: bool
    """Whether the output folder is a site fmbench built (a manifest, an earlier version's, or its home page)."""


def read_previous(db: str | os.PathLike[str] | None, out_dir: Path) -> Previous:
    """What the previous build of ``out_dir`` from ``db`` left (its records folder made if need be)."""
    records, output = build_state.records_folder(db, out_dir), build_state.output_key(db, out_dir)
    recorded = _read_manifest(records, output)
    ours = recorded is not None or build_state.holds_legacy_manifest(out_dir) or _looks_built(out_dir)
    manifest = recorded if recorded is not None and out_dir.is_dir() else Manifest(output=output)
    return Previous(records, output, manifest, ours)


@dataclass(frozen=True)
class Build:
    """One build's inputs, as its units are given them."""

    out_dir: Path
    previous: Previous
    con: duckdb.DuckDBPyConnection
    site: SiteContext
    """The site every page of this process is rendered with; its caches are this build's."""
    index: RunIndex
    made: bw.SiteSettings
    """What every process makes its site context from."""
    settings: str
    """The fingerprint of the build's :class:`Settings`."""
    jobs: int | None = None
    progress: Progress | None = None
    checkpoints: Checkpoints = NO_CHECKPOINTS


def open_build(
    con: duckdb.DuckDBPyConnection,
    made: bw.SiteSettings,
    previous: Previous,
    out_dir: Path,
    *,
    jobs: int | None = None,
    progress: Progress | None = None,
    checkpoints: Checkpoints = NO_CHECKPOINTS,
) -> Build:
    """A build of the site ``made`` says from the open database ``con`` into ``out_dir`` (see :func:`build_site`
    for ``jobs``, ``progress`` and ``checkpoints``): its site context, with caches of its own, and its inputs."""
    site = bw.make_site(con, made, Caches.beside(made.db))  # its caches reach every comparison the build makes
    index = RunIndex.read(con, site.paths)
    settings = Settings.of(site, made.methodology, made.tolerance, made.originals).fingerprint()
    return Build(out_dir, previous, con, site, index, made, settings, jobs, progress, checkpoints)


@dataclass(frozen=True)
class BuildPlan:
    """What changed since the previous build, and so what this one does."""

    runs: str
    """The fingerprint of every run (:attr:`fmbench.views.inputs.RunIndex.all_fingerprint`)."""
    links: str
    """The digest of the links to the run files (empty: none)."""
    nothing: bool
    """Nothing the site is made from changed and the output still holds every file: nothing to render or write."""
    patch: bool
    """Only data changed: the staging folder gets the files whose bytes change, and they patch the site."""


def plan_build(build: Build) -> BuildPlan:
    """Plan: compare the build's settings, runs and links with the previous build's."""
    # A moved run file changes its run's page only, through that page's own inputs; the digest notices the move.
    source_links = build.site.source_links
    links = hashlib.sha256(json.dumps(source_links, sort_keys=True).encode()).hexdigest() if source_links else ""
    manifest, out_dir, runs = build.previous.manifest, build.out_dir, build.index.all_fingerprint
    same_settings = out_dir.is_dir() and manifest.settings == build.settings
    nothing = (
        same_settings and manifest.runs == runs and manifest.counts.get("links", "") == links
        and _intact(out_dir, manifest)
    )
    return BuildPlan(runs, links, nothing, same_settings and bool(manifest.files))


@dataclass(frozen=True)
class Rendered:
    """What :func:`render` put into the staging folder: the new manifest, the regression report's parts, the
    comparisons, and how many files it carried over from the previous site unrendered."""

    manifest: Manifest
    regressions: BuildRegressions
    comparisons: comparison_cache.ComparisonCache
    """The comparisons the pages used (read from the previous build's, or worked out)."""
    carried: int


def _transact(build: Build, changes: BuildPlan, report: BuildReport, began: float) -> None:
    """Render, stage and commit into a staging folder of this process; anything that fails leaves the previous
    site as it was (or, once a patch is committed, for the next build to finish)."""
    staging = build.out_dir.with_name(f".{build.out_dir.name}.staging-{os.getpid()}")
    if staging.exists():
        shutil.rmtree(staging)
    try:
        rendered = render(build, changes, staging, report)
        if build.out_dir.is_dir() and not report.changed and not report.removed:
            keep_site(build, rendered, staging)
        else:
            stage(build, changes, rendered, staging, report.removed)
            commit(build, changes, rendered, staging)
        build_state.remove_legacy(build.out_dir)
        store = build.site.caches.resamples.store
        if store is not None and not rendered.carried:
            # Everything was rendered, so every entry the site needs was read or written since the start:
            # the rest belong to sides no page has any more.
            report.resamples_removed = store.sweep(began)
    except BaseException as exc:
        refused = abandon(staging, build.out_dir, exc)
        if refused is not None:
            raise refused from None
        raise
    report.resamples_drawn = build.site.caches.resamples.drawn
    report.comparisons_reused, report.comparisons_made = rendered.comparisons.hits, rendered.comparisons.misses


def render(build: Build, changes: BuildPlan, staging: Path, report: BuildReport) -> Rendered:
    """Render: fill a new ``staging`` folder with the files whose inputs changed (the rest carried over: linked
    from the previous site, or left in place when patching), in worker processes for a big build."""
    # The comparisons the previous build made, for those whose runs are the same (a new settings fingerprint
    # changes every key, so nothing of another fmbench's is read).
    fingerprints = {run_id: facts.fingerprint for run_id, facts in build.index.runs.items()}
    comparisons = build.site.caches.comparisons = comparison_cache.ComparisonCache.read(
        build.previous.records, build.settings, fingerprints
    )
    previous = build.previous.manifest
    manifest = Manifest(settings=build.settings, runs=changes.runs, output=build.previous.output)
    filler = Stager(
        build.site, build.index, previous, manifest, build.out_dir, staging, report, patch=changes.patch,
        progress=build.progress, checkpoints=build.checkpoints,
    )
    staging.mkdir(parents=True)
    # The runs' files first: enumerating them is quick, and in a parallel build the workers start on them
    # while this process works out the rest (the regression report first of all).
    pooled = plan(build.site, build.index, build.settings, (*RUN_KINDS, *POOLED_SITE_PAGES))
    workers = report.workers = _workers(build.jobs, [o for o in pooled if not filler.reusable(o)])
    parent = functools.partial(_parent_outputs, build)
    if workers:
        regressions = filler.in_parallel(workers, build.made, pooled, parent)
    else:
        regressions, outputs = parent()
        filler.serially(in_order(pooled + outputs))
    report.regression_devices = regressions.recomputed
    filler.finish()
    manifest.counts["links"] = changes.links
    report.removed = sorted(set(previous.files) - set(manifest.files))
    _count(report, manifest)
    return Rendered(manifest, regressions, comparisons, filler.carried)


def _parent_outputs(build: Build) -> tuple[BuildRegressions, list[Output]]:
    """The regression report (each device's part reused from the previous build when its runs are the same),
    then the outputs this process renders; in a parallel build, while the workers start on the runs."""
    progress = None if build.progress is None else functools.partial(build.progress, "resampling")
    regressions = build_regressions(
        build.con, build.index, build.previous.records, build.site.caches, settings=build.settings,
        tolerance=build.made.tolerance, progress=progress,
    )
    build.site.keep_regressions(regressions.report)
    return regressions, plan(build.site, build.index, build.settings, _parent_kinds())


def keep_site(build: Build, rendered: Rendered, staging: Path) -> None:
    """Same bytes everywhere: keep the site as it is (the staging folder goes) and remember the new inputs."""
    shutil.rmtree(staging)
    records = build.previous.records
    with writing(records, RECORDS):
        records.mkdir(parents=True, exist_ok=True)
        _save_records(records, rendered.regressions, rendered.comparisons)
        _write_atomically(records / MANIFEST, rendered.manifest.to_json())


def stage(build: Build, changes: BuildPlan, rendered: Rendered, staging: Path, removed: list[str]) -> None:
    """Stage: make the staged files ready to commit, the output untouched: the manifest becomes a stub that claims
    the folder and lists nothing (a kill from here on makes the next build render it all again), the caches are
    saved and, for a patch, the journal written (the commit point: from here the next build finishes the patch).

    An output folder that is not empty and not fmbench's is refused.
    """
    build.checkpoints.reached("staging")
    out_dir, records = build.out_dir, build.previous.records
    if not changes.patch and not build.previous.ours and out_dir.is_dir() and any(out_dir.iterdir()):
        raise BuildError(f"{out_dir}: exists and was not written by fmbench build; choose another --out or remove it")
    with writing(records, RECORDS):
        records.mkdir(parents=True, exist_ok=True)
        _write_atomically(records / MANIFEST, Manifest(output=build.previous.output).to_json())
        _save_records(records, rendered.regressions, rendered.comparisons)
    if changes.patch:
        pending = records / f"{MANIFEST}.pending"
        with writing(records, RECORDS):
            _write_atomically(pending, rendered.manifest.to_json())
        journal = {"removed": removed, "manifest": os.fspath(pending.absolute())}
        _write_atomically(staging / PATCH_JOURNAL, json.dumps(journal))


def commit(build: Build, changes: BuildPlan, rendered: Rendered, staging: Path) -> None:
    """Commit: the staged files patch the output (:func:`_apply_patch`) or replace it whole (:func:`_swap`), and
    the new manifest goes in last."""
    if changes.patch:
        _apply_patch(staging, build.out_dir, build.checkpoints)  # the journal says where the manifest goes
        return
    _swap(staging, build.out_dir, build.checkpoints)
    records = build.previous.records
    with writing(records, RECORDS):
        _write_atomically(records / MANIFEST, rendered.manifest.to_json())


def abandon(staging: Path, out_dir: Path, exc: BaseException) -> BaseException | None:
    """After a build failed with ``exc``: remove its staging folder unless its patch was committed (the next build
    finishes it, see :func:`recover_killed_builds`); the error to raise instead of ``exc``, if any (a refused
    write of the site as one line)."""
    refused = as_write_error(exc, out_dir, "the site") if isinstance(exc, Exception) else None
    if not (staging / PATCH_JOURNAL).is_file():
        shutil.rmtree(staging, ignore_errors=True)
    return refused if refused is not None and refused is not exc else None


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


def _swap(staging: Path, out_dir: Path, checkpoints: Checkpoints) -> None:
    """Put the staging folder in place of the output with two renames; the old site goes last."""
    if not out_dir.exists():
        staging.rename(out_dir)
        return
    retired = out_dir.with_name(f".{out_dir.name}.previous-{os.getpid()}")
    out_dir.rename(retired)
    try:
        checkpoints.reached("swap")
        staging.rename(out_dir)
    except BaseException:
        retired.rename(out_dir)
        raise
    shutil.rmtree(retired, ignore_errors=True)


def _apply_patch(staging: Path, out_dir: Path, checkpoints: Checkpoints) -> None:
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
            checkpoints.reached("patch")
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
