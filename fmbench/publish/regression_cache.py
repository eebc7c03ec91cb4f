"""The static build's regression report, kept per device between builds.

The regression report (:mod:`fmbench.comparison.regressions`) compares every build step
of every device; the regressions page, its feed and the list of comparisons
need all of it. A device's steps read that device's runs only, so a rebuild
after one run was added recomputes that run's device and takes every other
device's steps from the previous build.

The previous build's steps are kept in a file beside the build manifest, among
the build's records beside the database (:data:`CACHE_FILE`,
:mod:`fmbench.publish.state`), one part per device, each under a key: a digest of the
fingerprints of the device's runs (:mod:`fmbench.views.inputs`: bytes, ingest
time, verdict, revision, sidecar), of the site's settings (fmbench's code,
templates, registry and the rest, see :class:`fmbench.publish.build.Settings`),
of the practical threshold, the attempt rule and the confidence. A part whose
key differs, or a file that cannot be read, is recomputed, so the report is
always the one a build from scratch makes. The file is JSON with a format
version (a file of another version is not read); each device's steps are read
back as fmbench's report classes and nothing else (:mod:`fmbench.storage.cache_json`),
never unpickled, since a records folder can come from elsewhere (a restored CI
cache, a copied project).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from fmbench.analysis import stats
from fmbench.analysis.tolerance import Tolerance
from fmbench.comparison.cache import COMPARISON_CLASSES
from fmbench.comparison.caches import Caches
from fmbench.comparison.regressions import (
    BuildStep,
    Group,
    RegressionReport,
    assemble_report,
    comparable_runs,
    device_steps,
    runs_by_device,
)
from fmbench.comparison.selection import AttemptRule
from fmbench.storage.cache_json import Codec
from fmbench.views.inputs import RunIndex

CACHE_FILE = "regressions.json"
"""In the build's records folder (:func:`fmbench.publish.state.state_folder`), never in the site."""
CACHE_FORMAT = 2
"""Version of the file and its parts (1 was a pickle, never read): a file of any other version is not read."""
LEGACY_FILE = "regressions.pickle"
"""What a build before :data:`CACHE_FORMAT` 2 kept: removed, never read."""
CODEC = Codec((*COMPARISON_CLASSES, BuildStep, Group))


@dataclass
class BuildRegressions:
    """The report a build uses, which devices it recomputed, and what the next build can reuse."""

    report: RegressionReport
    recomputed: list[str]
    """The hardware models whose steps were computed by this build (the others were reused)."""
    parts: dict[str, tuple[str, str]] = field(default_factory=dict)
    """Hardware model -> (key, its steps as JSON text)."""

    def to_bytes(self) -> bytes:
        parts = {d: {"key": self.parts[d][0], "steps": self.parts[d][1]} for d in sorted(self.parts)}
        return json.dumps({"format": CACHE_FORMAT, "parts": parts}, separators=(",", ":")).encode()

    def save(self, folder: Path) -> None:
        """Write the parts beside the manifest in ``folder``, replacing the file whole."""
        path = folder / CACHE_FILE
        temporary = path.with_name(f".{path.name}.{os.getpid()}")
        try:
            temporary.write_bytes(self.to_bytes())
            os.replace(temporary, path)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
        (folder / LEGACY_FILE).unlink(missing_ok=True)


def _read(folder: Path) -> dict[str, tuple[str, str]]:
    try:
        doc = json.loads((folder / CACHE_FILE).read_bytes())
    except (OSError, ValueError, RecursionError):  # missing or unreadable: everything is recomputed
        return {}
    if not isinstance(doc, dict) or doc.get("format") != CACHE_FORMAT or not isinstance(doc.get("parts"), dict):
        return {}
    return {
        d: (part["key"], part["steps"]) for d, part in doc["parts"].items()
        if isinstance(d, str) and isinstance(part, dict)
        and isinstance(part.get("key"), str) and isinstance(part.get("steps"), str)
    }


def device_key(run_fingerprints: Iterable[str], settings: str, tolerance: Tolerance, rule: str, confidence: float) -> str:
    """What a device's steps are made from: its runs' fingerprints and everything else that shapes them."""
    parts = [CACHE_FORMAT, settings, repr(tolerance), rule, repr(confidence), sorted(run_fingerprints)]
    return hashlib.sha256(json.dumps(parts).encode("utf-8")).hexdigest()


def build_regressions(
    con: duckdb.DuckDBPyConnection,
    index: RunIndex,
    previous: Path,
    caches: Caches | None = None,
    *,
    settings: str,
    tolerance: Tolerance,
    rule: AttemptRule = "latest",
    family_confidence: float = stats.DEFAULT_CONFIDENCE,
    progress: Callable[[int, int], None] | None = None,
) -> BuildRegressions:
    """The regression report of every device, reusing each device's steps from the build whose records are in
    ``previous`` (:func:`fmbench.publish.state.state_folder`) where the device's key is unchanged. ``caches``: the
    build's, handed to each comparison (see :func:`fmbench.comparison.compare.compare_selected`).
    ``progress(done, total)``: called as each device to work out is done."""
    kept = _read(previous) if previous.is_dir() else {}
    fingerprints: dict[str, list[str]] = {}
    for facts in index.runs.values():
        if facts.hardware_model is not None:
            fingerprints.setdefault(facts.hardware_model, []).append(f"{facts.run_id}={facts.fingerprint}")
    runs = comparable_runs(con)
    steps, parts, recomputed = {}, {}, []
    todo: dict[str, tuple[str, list[Any]]] = {}
    for device, device_runs in runs_by_device(runs).items():
        key = device_key(fingerprints.get(device, []), settings, tolerance, rule, family_confidence)
        found = kept.get(device)
        if found is not None and found[0] == key:
            try:
                loaded = CODEC.loads(found[1])
            except ValueError:  # a damaged part, or of classes a report is not made of: computed again
                loaded = None
            if isinstance(loaded, list) and all(isinstance(step, BuildStep) for step in loaded):
                steps[device] = loaded
                parts[device] = found
                continue
        todo[device] = (key, device_runs)

    def compute(device: str, own: duckdb.DuckDBPyConnection) -> list[Any]:
        return device_steps(own, todo[device][1], rule=rule, family_confidence=family_confidence, tolerance=tolerance,
                            caches=caches)

    # Each device's steps are mostly resampling (numpy, which lets go of the GIL): devices on a thread each, as
    # many as cores, while the build's workers render the runs; each reads with a cursor of its own, made here
    # (a connection serves one call at a time).
    threads = min(len(todo), os.cpu_count() or 1)
    if threads > 1:
        cursors = [con.cursor() for _ in todo]
        try:
            with ThreadPoolExecutor(max_workers=threads) as pool:
                computed = {}
                for device, found in zip(todo, pool.map(compute, todo, cursors), strict=True):
                    computed[device] = found
                    if progress is not None:
                        progress(len(computed), len(todo))
        finally:
            for cursor in cursors:
                cursor.close()
    else:
        computed = {}
        for device in todo:
            computed[device] = compute(device, con)
            if progress is not None:
                progress(len(computed), len(todo))
    for device, (key, _) in todo.items():
        steps[device] = computed[device]
        parts[device] = (key, CODEC.dumps(steps[device]))
        recomputed.append(device)
    skipped = sum(1 for r in runs if r.hardware_model is None)
    report = assemble_report(steps, rule=rule, family_confidence=family_confidence, skipped_without_hardware=skipped)
    return BuildRegressions(report, sorted(recomputed), parts)
