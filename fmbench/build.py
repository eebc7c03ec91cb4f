"""The static build: every page and data file of the site, written atomically, and only what changed.

Pages are rendered into a staging folder beside the output; only when every
page has rendered does the staging folder replace the previous site. A build
that fails part-way leaves the previous output exactly as it was.

A manifest beside the pages records, per output file, its content hash and
the fingerprint of its inputs: the runs it reads (see
:mod:`fmbench.views.inputs`) and the site's code, templates, assets and
settings. A rebuild renders only the files whose inputs changed; the others
are carried over as they are (hard links, so their bytes and times do not
change). A rebuild whose inputs did not change at all renders and writes
nothing. A page's footer time is when its data last changed (the newest
ingest of the runs it reads), so the same data always gives the same bytes.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from fmbench import __version__
from fmbench.dataset import open_database
from fmbench.db import schema_version
from fmbench.errors import FmbenchError
from fmbench.filters import Filters
from fmbench.regression_cache import build_regressions
from fmbench.render import Renderer, SiteIdentity, asset_files, normalize_base_url
from fmbench.revisions import Registry
from fmbench.tolerance import DEFAULT_TOLERANCE, Tolerance
from fmbench.views import DataKind, PageKind, SiteContext, everything, render_page, site_context
from fmbench.views.inputs import RunIndex
from fmbench.write_errors import as_write_error, writing

MANIFEST = ".fmbench-manifest.json"
MANIFEST_FORMAT = 2
ORIGINALS = ("gzip", "link", "copy")
"""How the site carries the original run files; ``gzip`` is the default (see :class:`fmbench.views.site.SiteContext`)."""
PUBLISHING_LIMIT = 10**9
"""GitHub Pages refuses a site larger than this (1 GB): the build warns past it."""


class BuildError(FmbenchError):
    """The site could not be built; the previous output is unchanged."""


@dataclass
class BuildReport:
    out: Path
    pages: int = 0
    data_files: int = 0
    assets: int = 0
    bytes_total: int = 0
    changed: list[str] = field(default_factory=list)
    """Files whose bytes are new or different."""
    removed: list[str] = field(default_factory=list)
    rendered: list[str] = field(default_factory=list)
    """Files rendered because their inputs changed (the others were carried over without rendering)."""
    seconds: float = 0.0
    seconds_by_kind: dict[str, float] = field(default_factory=dict)
    """Time spent rendering (and writing) each kind of output (where a build's time goes)."""
    largest_run_page: tuple[str, int] | None = None
    regression_devices: list[str] = field(default_factory=list)
    """The devices (hardware models) whose regression report this build computed; the others' were the previous
    build's (see :mod:`fmbench.regression_cache`)."""
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
    files: dict[str, str] = field(default_factory=dict)
    sizes: dict[str, int] = field(default_factory=dict)
    inputs: dict[str, str] = field(default_factory=dict)
    counts: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        doc = {
            "format": MANIFEST_FORMAT, "settings": self.settings, "runs": self.runs, "counts": self.counts,
            "files": self.files, "sizes": self.sizes, "inputs": self.inputs,
        }
        return json.dumps(doc, indent=0, sort_keys=True)


def _read_manifest(out: Path) -> Manifest:
    try:
        doc = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return Manifest()
    if not isinstance(doc, dict) or doc.get("format") != MANIFEST_FORMAT:
        return Manifest()
    parts = {k: doc.get(k) for k in ("files", "sizes", "inputs", "counts")}
    if not all(isinstance(v, dict) for v in parts.values()):
        return Manifest()
    return Manifest(str(doc.get("settings", "")), str(doc.get("runs", "")), **parts)  # type: ignore[arg-type]


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


def plan(site: SiteContext, index: RunIndex, settings: str) -> list[Output]:
    """Every output file with the fingerprint of its inputs, in the order it is best rendered in.

    A run's pages and data files come together, so its trials are read once for all of them;
    original run files come last, read from the database a few at a time.
    """
    outputs = []
    for path, kind, params in everything(site):
        runs = kind.inputs(index, params)
        link = site.source_links.get(params["run_id"]) if kind.name == "run" else None
        digest = hashlib.sha256(
            json.dumps(
                [settings, kind.name, params, index.fingerprint(runs), *([link] if link else [])], sort_keys=True, default=str
            ).encode()
        ).hexdigest()
        outputs.append(Output(output_file(path), kind, params, runs, digest))
    order = {id(o): i for i, o in enumerate(outputs)}
    return sorted(
        outputs, key=lambda o: (o.kind.name in _ORIGINAL_KINDS, str(o.params.get("run_id", "")), order[id(o)])
    )


def _test_kill(stage: str) -> None:
    """Crash-safety test hook: ``FMBENCH_TEST_BUILD_KILL_AT=<stage>`` kills the build there.

    ``render``: after three files are rendered; ``staging``: with every file in
    the staging folder but no manifest yet; ``swap``: between the two renames.
    """
    if os.environ.get("FMBENCH_TEST_BUILD_KILL_AT") == stage:
        os.kill(os.getpid(), 9)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def recover_killed_builds(out_dir: Path) -> None:
    """Clear what a killed build left beside ``out_dir``: staging folders, and a retired site.

    A build killed between its two renames leaves no output and the previous
    site as ``.<out>.previous-<pid>``: that site is put back. Folders of builds
    still running (their process is alive) are left alone.
    """
    for prefix in (f".{out_dir.name}.previous-", f".{out_dir.name}.staging-"):
        for leftover in sorted(out_dir.parent.glob(f"{prefix}*")):
            pid = leftover.name.removeprefix(prefix)
            if not pid.isdigit() or int(pid) == os.getpid() or _pid_alive(int(pid)):
                continue
            if prefix.endswith("previous-") and not out_dir.exists():
                leftover.rename(out_dir)
            else:
                shutil.rmtree(leftover, ignore_errors=True)


def _render(site: SiteContext, index: RunIndex, o: Output) -> bytes:
    if isinstance(o.kind, PageKind):
        return render_page(site, o.kind, Filters.none(), data_as_of=index.newest_ingest(o.runs), **o.params).encode("utf-8")
    return o.kind.produce(site, Filters.none(), **o.params)


_ORIGINAL_KINDS = ("source", "source_gzip")


def _sources_in_bulk(site: SiteContext, wanted: list[Output]) -> Iterator[tuple[Output, bytes]]:
    from fmbench.views.data import gzip_original, source_files

    by_run = {o.params["run_id"]: o for o in wanted}
    for run_id, _, content in source_files(site, list(by_run)):
        o = by_run[run_id]
        yield o, gzip_original(content) if o.kind.name == "source_gzip" else content


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
) -> BuildReport:
    """Build the site into ``out`` from a database (or a Parquet dataset folder), rendering only what changed.

    ``identity``, ``methodology`` and ``source_links``: the publisher's site identity, methodology notes and
    links to the run files in their repository (a project's).
    ``originals``: how the site carries the original run files, one of :data:`ORIGINALS`: ``gzip`` (each gzipped,
    byte-identical once decompressed, its SHA-256 shown), ``link`` (to ``source_links``, no copy) or ``copy``.
    A report's ``warnings`` say when the site passes 1 GB (GitHub Pages' limit).
    The previous site stays intact if anything fails.
    """
    if originals not in ORIGINALS:
        raise BuildError(f"originals: {originals!r} is not a policy; use one of {', '.join(ORIGINALS)}")
    started = time.perf_counter()
    out_dir = Path(out)
    with writing(out_dir, "the site (clearing what a killed build left)"):
        recover_killed_builds(out_dir)
    previous = _read_manifest(out_dir) if out_dir.is_dir() else Manifest()
    report = BuildReport(out=out_dir)
    renderer = Renderer(mode="static", base_url=base_url, identity=identity)
    with open_database(db) as con:
        site = site_context(con, renderer, registry, methodology)
        site.source_links = dict(source_links or {})
        site.tolerance = tolerance
        site.bulk = True
        site.originals = originals
        index = RunIndex.read(con)
        settings = settings_fingerprint(
            base_url, site.registry, renderer.identity.fingerprint() + "\x00" + methodology
            + ("" if tolerance == DEFAULT_TOLERANCE else f"\x00{tolerance}")
            + ("" if originals == "gzip" else f"\x00originals={originals}")
        )
        if site.source_links:  # a moved run file changes its run's page only, through that page's own inputs
            settings_links = hashlib.sha256(json.dumps(site.source_links, sort_keys=True).encode()).hexdigest()
        else:
            settings_links = ""
        if (
            out_dir.is_dir() and previous.settings == settings and previous.runs == index.all_fingerprint
            and previous.counts.get("links", "") == settings_links
        ):
            _count(report, previous)
            _warn_size(report)
            report.seconds = time.perf_counter() - started
            return report  # nothing it is made from changed: nothing to render, nothing to write
        regressions = build_regressions(con, index, out_dir, settings=settings, tolerance=tolerance)
        site.memo["regressions"] = regressions.report
        report.regression_devices = regressions.recomputed
        outputs = plan(site, index, settings)
        manifest = Manifest(settings=settings, runs=index.all_fingerprint)
        staging = out_dir.with_name(f".{out_dir.name}.staging-{os.getpid()}")
        if staging.exists():
            shutil.rmtree(staging)
        try:
            _stage(site, index, outputs, previous, manifest, out_dir, staging, report)
            manifest.counts["links"] = settings_links
            report.removed = sorted(set(previous.files) - set(manifest.files))
            _count(report, manifest)
            if out_dir.is_dir() and not report.changed and not report.removed:
                # Same bytes everywhere: keep the site as it is and remember the new inputs.
                shutil.rmtree(staging)
                regressions.save(out_dir)
                _write_atomically(out_dir / MANIFEST, manifest.to_json())
            else:
                _test_kill("staging")
                regressions.save(staging)
                (staging / MANIFEST).write_text(manifest.to_json(), encoding="utf-8")
                _swap(staging, out_dir)
        except BaseException as exc:
            refused = as_write_error(exc, out_dir, "the site") if isinstance(exc, Exception) else None
            shutil.rmtree(staging, ignore_errors=True)
            if refused is not None and refused is not exc:
                raise refused from None
            raise
    _warn_size(report)
    report.seconds = time.perf_counter() - started
    return report


def _warn_size(report: BuildReport) -> None:
    if report.bytes_total > PUBLISHING_LIMIT:
        report.warnings.append(
            f"{report.out}: the site is {report.bytes_total / 1e9:.2f} GB, over the 1 GB GitHub Pages publishes; "
            "set [publishing] originals = \"gzip\" or \"link\" (or pass --originals) to make it smaller"
        )


def _stage(
    site: SiteContext,
    index: RunIndex,
    outputs: list[Output],
    previous: Manifest,
    manifest: Manifest,
    out_dir: Path,
    staging: Path,
    report: BuildReport,
) -> None:
    """Fill the staging folder: outputs whose inputs are unchanged are linked from the previous site, the rest rendered."""
    fail_after = int(os.environ.get("FMBENCH_TEST_BUILD_FAIL_AFTER", "0") or 0)
    kinds: dict[str, str] = {}

    def place(file: str, content: bytes | None, inputs: str | None) -> None:
        target = staging / file
        target.parent.mkdir(parents=True, exist_ok=True)
        old = out_dir / file
        if content is None:  # carried over: same inputs, same bytes
            os.link(old, target)
            manifest.files[file], manifest.sizes[file] = previous.files[file], previous.sizes[file]
        else:
            digest = hashlib.sha256(content).hexdigest()
            if previous.files.get(file) == digest and old.is_file():
                os.link(old, target)  # rendered again to the same bytes: keep the file (and its time) as it is
            else:
                target.write_bytes(content)
                report.changed.append(file)
            manifest.files[file], manifest.sizes[file] = digest, len(content)
        if inputs is not None:
            manifest.inputs[file] = inputs

    def before_render() -> None:
        done = len(report.rendered)
        if fail_after and done >= fail_after:
            raise BuildError(f"build interrupted after {fail_after} files (test hook)")
        if done == 3:
            _test_kill("render")

    def reusable(o: Output) -> bool:
        return (
            previous.inputs.get(o.file) == o.inputs
            and o.file in previous.files
            and o.file in previous.sizes
            and (out_dir / o.file).is_file()
        )

    sources: list[Output] = []
    for o in outputs:
        kinds[o.file] = "page" if isinstance(o.kind, PageKind) else "data"
        if o.kind.name == "run":
            kinds[o.file] = "run"
        if reusable(o):
            place(o.file, None, o.inputs)
        elif o.kind.name in _ORIGINAL_KINDS:
            sources.append(o)
        else:
            before_render()
            started = time.perf_counter()
            place(o.file, _render(site, index, o), o.inputs)
            report.rendered.append(o.file)
            report.seconds_by_kind[o.kind.name] = report.seconds_by_kind.get(o.kind.name, 0.0) + time.perf_counter() - started
    started = time.perf_counter()
    for o, content in _sources_in_bulk(site, sources):
        before_render()
        place(o.file, content, o.inputs)
        report.rendered.append(o.file)
    if sources:
        report.seconds_by_kind[sources[0].kind.name] = time.perf_counter() - started
    for name, source in site.renderer.assets.items():
        kinds[f"assets/{name}"] = "asset"
        place(f"assets/{name}", source.read_bytes(), None)
    runs = {f: manifest.sizes[f] for f, k in kinds.items() if k == "run"}
    largest = max(runs.items(), key=lambda kv: (kv[1], kv[0])) if runs else None
    manifest.counts = {
        "pages": sum(1 for k in kinds.values() if k in ("page", "run")),
        "data_files": sum(1 for k in kinds.values() if k == "data"),
        "assets": sum(1 for k in kinds.values() if k == "asset"),
        "largest_run_page": [largest[0].removesuffix("index.html"), largest[1]] if largest else None,
    }


def _count(report: BuildReport, manifest: Manifest) -> None:
    counts = manifest.counts
    report.pages = int(counts.get("pages", 0))
    report.data_files = int(counts.get("data_files", 0))
    report.assets = int(counts.get("assets", 0))
    report.bytes_total = sum(manifest.sizes.values())
    largest = counts.get("largest_run_page")
    report.largest_run_page = (str(largest[0]), int(largest[1])) if largest else None


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
    if out_dir.is_dir() and not (out_dir / MANIFEST).exists() and any(out_dir.iterdir()):
        raise BuildError(
            f"{out_dir}: exists and was not written by fmbench build; choose another --out or remove it"
        )
    retired = out_dir.with_name(f".{out_dir.name}.previous-{os.getpid()}")
    out_dir.rename(retired)
    try:
        _test_kill("swap")
        staging.rename(out_dir)
    except BaseException:
        retired.rename(out_dir)
        raise
    shutil.rmtree(retired, ignore_errors=True)
