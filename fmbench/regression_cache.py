"""The static build's regression report, kept per device between builds.

The regression report (:mod:`fmbench.regressions`) compares every build step
of every device; the regressions page, its feed and the list of comparisons
need all of it. A device's steps read that device's runs only, so a rebuild
after one run was added recomputes that run's device and takes every other
device's steps from the previous build.

The previous build's steps are kept in a file beside the build manifest, among
the build's records beside the database (:data:`CACHE_FILE`,
:mod:`fmbench.build_state`), one part per device, each under a key: a digest of the
fingerprints of the device's runs (:mod:`fmbench.views.inputs`: bytes, ingest
time, verdict, revision, sidecar), of the site's settings (fmbench's code,
templates, registry and the rest, see :func:`fmbench.build.settings_fingerprint`),
of the practical threshold, the attempt rule and the confidence. A part whose
key differs, or a file that cannot be read, is recomputed, so the report is
always the one a build from scratch makes. The file holds pickled report
objects; it is read with an unpickler that makes nothing but fmbench's own
dataclasses and plain data (:mod:`fmbench.safe_pickle`), since a records folder can come from elsewhere (a
restored CI cache, a copied project).
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from fmbench import safe_pickle, stats
from fmbench.regressions import (
    RegressionReport,
    assemble_report,
    comparable_runs,
    device_steps,
    runs_by_device,
)
from fmbench.selection import AttemptRule
from fmbench.tolerance import Tolerance
from fmbench.views.inputs import RunIndex

CACHE_FILE = "regressions.pickle"
"""In the build's records folder (:func:`fmbench.build_state.state_folder`), never in the site."""
CACHE_FORMAT = 1
WHAT = "a regression report"


@dataclass
class BuildRegressions:
    """The report a build uses, which devices it recomputed, and what the next build can reuse."""

    report: RegressionReport
    recomputed: list[str]
    """The hardware models whose steps were computed by this build (the others were reused)."""
    parts: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    """Hardware model -> (key, pickled steps)."""

    def to_bytes(self) -> bytes:
        return pickle.dumps(
            {"format": CACHE_FORMAT, "parts": {d: self.parts[d] for d in sorted(self.parts)}}, protocol=5
        )

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


def _read(folder: Path) -> dict[str, tuple[str, bytes]]:
    try:
        doc = safe_pickle.loads((folder / CACHE_FILE).read_bytes(), WHAT)
    except Exception:  # missing, unreadable or from another format: everything is recomputed
        return {}
    if not isinstance(doc, dict) or doc.get("format") != CACHE_FORMAT or not isinstance(doc.get("parts"), dict):
        return {}
    return {
        d: part for d, part in doc["parts"].items()
        if isinstance(d, str) and isinstance(part, tuple) and len(part) == 2
        and isinstance(part[0], str) and isinstance(part[1], bytes)
    }


def device_key(run_fingerprints: Iterable[str], settings: str, tolerance: Tolerance, rule: str, confidence: float) -> str:
    """What a device's steps are made from: its runs' fingerprints and everything else that shapes them."""
    parts = [CACHE_FORMAT, settings, repr(tolerance), rule, repr(confidence), sorted(run_fingerprints)]
    return hashlib.sha256(json.dumps(parts).encode("utf-8")).hexdigest()


def build_regressions(
    con: duckdb.DuckDBPyConnection,
    index: RunIndex,
    previous: Path,
    *,
    settings: str,
    tolerance: Tolerance,
    rule: AttemptRule = "latest",
    family_confidence: float = stats.DEFAULT_CONFIDENCE,
) -> BuildRegressions:
    """The regression report of every device, reusing each device's steps from the build whose records are in
    ``previous`` (:func:`fmbench.build_state.state_folder`) where the device's key is unchanged."""
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
                steps[device] = safe_pickle.loads(found[1], WHAT)
                parts[device] = found
                continue
            except Exception:  # a damaged part is computed again
                pass
        todo[device] = (key, device_runs)

    def compute(device: str, own: duckdb.DuckDBPyConnection) -> list[Any]:
        return device_steps(own, todo[device][1], rule=rule, family_confidence=family_confidence, tolerance=tolerance)

    # Each device's steps are mostly resampling (numpy, which lets go of the GIL): devices on a thread each, as
    # many as cores, while the build's workers render the runs; each reads with a cursor of its own, made here
    # (a connection serves one call at a time).
    threads = min(len(todo), os.cpu_count() or 1)
    if threads > 1:
        cursors = [con.cursor() for _ in todo]
        try:
            with ThreadPoolExecutor(max_workers=threads) as pool:
                computed = dict(zip(todo, pool.map(compute, todo, cursors), strict=True))
        finally:
            for cursor in cursors:
                cursor.close()
    else:
        computed = {device: compute(device, con) for device in todo}
    for device, (key, _) in todo.items():
        steps[device] = computed[device]
        parts[device] = (key, pickle.dumps(steps[device], protocol=5))
        recomputed.append(device)
    skipped = sum(1 for r in runs if r.hardware_model is None)
    report = assemble_report(steps, rule=rule, family_confidence=family_confidence, skipped_without_hardware=skipped)
    return BuildRegressions(report, sorted(recomputed), parts)
