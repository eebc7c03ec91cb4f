"""The static build: every page and data file of the site, written atomically.

Pages are rendered into a staging folder beside the output; only when every
page has rendered does the staging folder replace the previous site. A build
that fails part-way leaves the previous output exactly as it was. A manifest
of content hashes records what each file holds, so a rebuild that changes
nothing writes nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from fmbench.db import connect
from fmbench.errors import FmbenchError
from fmbench.filters import Filters
from fmbench.render import Renderer, asset_files
from fmbench.revisions import Registry
from fmbench.views import DataKind, PageKind, everything, render_page, site_context

MANIFEST = ".fmbench-manifest.json"
MANIFEST_FORMAT = 1


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
    removed: list[str] = field(default_factory=list)
    seconds: float = 0.0
    largest_run_page: tuple[str, int] | None = None

    @property
    def files(self) -> int:
        return self.pages + self.data_files + self.assets


def output_file(path: str) -> str:
    """A page path (``runs/abc/``) as the file that holds it (``runs/abc/index.html``)."""
    return path + "index.html" if path == "" or path.endswith("/") else path


def _read_manifest(out: Path) -> dict[str, str]:
    try:
        doc = json.loads((out / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if doc.get("format") != MANIFEST_FORMAT:
        return {}
    files = doc.get("files")
    return files if isinstance(files, dict) else {}


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


def render_all(
    db: str | os.PathLike[str] | None, base_url: str, registry: Registry | None = None
) -> tuple[dict[str, bytes], BuildReport]:
    """Every output file of the site, in memory, by relative path."""
    files: dict[str, bytes] = {}
    report = BuildReport(out=Path("."))
    fail_after = int(os.environ.get("FMBENCH_TEST_BUILD_FAIL_AFTER", "0") or 0)
    renderer = Renderer(mode="static", base_url=base_url)
    with connect(db, read_only=True) as con:
        site = site_context(con, renderer, registry)
        for path, kind, params in everything(site):
            if fail_after and report.pages + report.data_files >= fail_after:
                raise BuildError(f"build interrupted after {fail_after} files (test hook)")
            if report.pages + report.data_files == 3:
                _test_kill("render")
            if isinstance(kind, PageKind):
                content = render_page(site, kind, Filters.none(), **params).encode("utf-8")
                report.pages += 1
                if kind.name == "run" and (report.largest_run_page is None or len(content) > report.largest_run_page[1]):
                    report.largest_run_page = (path, len(content))
            else:
                assert isinstance(kind, DataKind)
                content = kind.produce(site, Filters.none(), **params)
                report.data_files += 1
            files[output_file(path)] = content
    for name, source in asset_files().items():
        files[f"assets/{name}"] = source.read_bytes()
        report.assets += 1
    return files, report


def build_site(
    db: str | os.PathLike[str] | None,
    out: str | os.PathLike[str] = "_site",
    *,
    base_url: str = "/",
    registry: Registry | None = None,
) -> BuildReport:
    """Build the whole site into ``out``; the previous site stays intact if anything fails."""
    started = time.perf_counter()
    out_dir = Path(out)
    recover_killed_builds(out_dir)
    files, report = render_all(db, base_url, registry)
    report.out = out_dir
    hashes = {path: hashlib.sha256(content).hexdigest() for path, content in files.items()}
    report.bytes_total = sum(len(c) for c in files.values())
    previous = _read_manifest(out_dir) if out_dir.is_dir() else {}
    report.changed = sorted(p for p, h in hashes.items() if previous.get(p) != h)
    report.removed = sorted(set(previous) - set(hashes))
    if out_dir.is_dir() and not report.changed and not report.removed:
        report.seconds = time.perf_counter() - started
        return report
    staging = out_dir.with_name(f".{out_dir.name}.staging-{os.getpid()}")
    if staging.exists():
        shutil.rmtree(staging)
    try:
        for path, content in files.items():
            target = staging / path
            unchanged = out_dir / path
            target.parent.mkdir(parents=True, exist_ok=True)
            if previous.get(path) == hashes[path] and unchanged.is_file():
                os.link(unchanged, target)  # same bytes: keep the file (and its time) as it is
            else:
                target.write_bytes(content)
        _test_kill("staging")
        manifest = {"format": MANIFEST_FORMAT, "files": hashes}
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=0, sort_keys=True), encoding="utf-8")
        _swap(staging, out_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    report.seconds = time.perf_counter() - started
    return report


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
