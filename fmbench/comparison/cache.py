"""The static build's comparisons, kept between builds.

A comparison (:func:`fmbench.comparison.compare.compare_selected`) reads its two sides'
trials and works out every figure's interval: most of what an incremental build
spends when it renders the comparison pages, device comparisons and regression
steps of a run's device again. Most comparisons on those pages do not involve
the run that was added (another configuration, another build), so the build
keeps each comparison it makes in a file beside its manifest, among the build's
records beside the database (:data:`CACHE_FILE`, :mod:`fmbench.publish.state`),
and takes it from there next time.

An entry's key is a digest of everything the comparison is made from: each
side's selector, attempt rule, the runs it used and the runs it matched, each
with its fingerprint (:mod:`fmbench.views.inputs`: the file's bytes, ingest
time, verdict, revision, sidecar), the options (strict OS mode, confidence,
multiplicity, practical threshold) and the site's settings (fmbench's code,
templates, registry and the rest, see :class:`fmbench.publish.build.Settings`).
A run whose fingerprint is not known, a missing key, or an entry that cannot be
read is worked out again, so a comparison is always the one a build from scratch
makes. What is kept is the comparison without its two sides, which the caller
selected anyway and which are put back in.

The file is JSON (:mod:`fmbench.storage.cache_json`: each entry is read back as
fmbench's comparison classes and nothing else, never unpickled), with a format
version: a file of another version is not read. Beside the entries it records
which output file used which entries; an entry is kept while a file of the site
uses it: the files a build rendered, with the entries they used, and the files it
carried over, with the entries they used when they were rendered. So the file
holds exactly the entries a build from scratch would write, byte for byte.
The regression report's steps of a device whose runs changed take their
comparisons from it too (only pages keep an entry); since a comparison is always
handed out as the cache gives it back, a step is kept as the same JSON whether
its comparison was worked out or taken from here.

A build makes one cache and hands it down explicitly (:class:`fmbench.comparison.caches.Caches`,
through its site to :func:`fmbench.comparison.compare.compare_selected`); no module holds one.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any, TypeVar, cast

from fmbench.analysis.stats import Interval
from fmbench.analysis.tolerance import Tolerance
from fmbench.comparison.results import (
    Comparison,
    DroppedScenario,
    FigureComparison,
    ScenarioComparison,
)
from fmbench.comparison.rules import Caveat, Difference
from fmbench.comparison.sample_changes import FailingCheck, SampleChange, SampleChanges, SampleSide
from fmbench.comparison.selection import RunInfo, Side, SideSpec
from fmbench.storage.cache_json import Codec

T = TypeVar("T")

CACHE_FILE = "comparisons.json"
"""In the build's records folder (:func:`fmbench.publish.state.state_folder`), never in the site."""
CACHE_FORMAT = 2
"""Version of the file and its entries (1 was a pickle, never read): a file of any other version is not read."""
LEGACY_FILE = "comparisons.pickle"
"""What a build before :data:`CACHE_FORMAT` 2 kept: removed, never read."""
COMPARISON_CLASSES: tuple[type, ...] = (
    Comparison, Difference, Caveat, ScenarioComparison, FigureComparison, DroppedScenario, Interval, Tolerance,
    Side, SideSpec, RunInfo, SampleChanges, SampleChange, SampleSide, FailingCheck,
)
"""What a kept comparison (and its sides, in a regression step) is made of."""
CODEC = Codec(COMPARISON_CLASSES)


class ComparisonCache:
    """Comparisons by key: those of the previous build (``kept``, JSON text) and those made since."""

    def __init__(
        self,
        settings: str,
        fingerprints: Mapping[str, str],
        kept: dict[str, str] | None = None,
        kept_files: dict[str, list[str]] | None = None,
    ) -> None:
        self.settings = settings
        self.fingerprints = fingerprints
        self.kept = dict(kept or {})
        self.kept_files = dict(kept_files or {})
        self.entries: dict[str, str] = {}
        """The entries this build has used: made, or taken from ``kept``."""
        self.files: dict[str, list[str]] = {}
        self._file: set[str] | None = None
        self.hits = 0
        self.misses = 0
        # An OrderedDict kept as a least-recently-used list, not functools.lru_cache: what is read depends on the
        # caller's connection (a thread's cursor), so the key (the side's runs) is not the function's arguments; and
        # not cachetools.LRUCache, a dependency for these few lines.
        self._sides: OrderedDict[tuple[str, ...], Any] = OrderedDict()
        self._lock = threading.Lock()
        """A page's sections may compare on threads of their own (:func:`fmbench.views.comparison_blocks.each_section`)."""

    SIDES_KEPT = 256
    """How many sides' trials :meth:`side_trials` keeps: a side of one run is read for each comparison of it
    (about three times in a build of the benchmark's corpus), and a side is a few megabytes at most."""

    def side_trials(self, run_ids: tuple[str, ...], load: Callable[[], T]) -> T:
        """What ``load`` reads of one side's runs, read once per build (the database does not change while a
        build reads it; what is kept is only read)."""
        with self._lock:
            found = self._sides.get(run_ids)
            if found is not None:
                self._sides.move_to_end(run_ids)
                return cast("T", found)
        found = load()  # two threads may both read a side: the same values, one kept
        with self._lock:
            self._sides[run_ids] = found
            while len(self._sides) > self.SIDES_KEPT:
                self._sides.popitem(last=False)
        return cast("T", found)

    @classmethod
    def read(cls, folder: Path, settings: str, fingerprints: Mapping[str, str]) -> ComparisonCache:
        """The cache a previous build left in ``folder`` (empty when there is none, or it cannot be read)."""
        entries, files = _read(folder) if folder.is_dir() else ({}, {})
        return cls(settings, fingerprints, entries, files)

    # --- keys ----------------------------------------------------------------------------------------

    def _side(self, side: Side) -> list[Any] | None:
        runs = [f"{r.run_id}={self.fingerprints.get(r.run_id)}" for r in side.runs]
        matched = [f"{r.run_id}={self.fingerprints.get(r.run_id)}" for r in side.matched]
        if any(x.endswith("=None") for x in (*runs, *matched)):
            return None
        spec = side.spec
        return [spec.text, spec.kind, [list(f) for f in spec.filters], side.rule, runs, matched]

    def key(self, baseline: Side, candidate: Side, **options: Any) -> str | None:
        """The key of comparing ``baseline`` with ``candidate`` with ``options``; ``None`` if it cannot be kept."""
        sides = [self._side(baseline), self._side(candidate)]
        if None in sides:
            return None
        parts = [CACHE_FORMAT, self.settings, sides, sorted((k, repr(v)) for k, v in options.items())]
        return hashlib.sha256(json.dumps(parts, default=str).encode("utf-8")).hexdigest()

    # --- entries -------------------------------------------------------------------------------------

    def get(self, key: str, baseline: Side, candidate: Side, *, made: bool = False) -> Comparison | None:
        """The kept comparison, with the caller's two sides; ``None`` to work it out. ``made``: the caller has just
        put it (it is not counted as taken from the cache)."""
        data = self.entries.get(key) or self.kept.get(key)
        try:
            found = None if data is None else CODEC.loads(data)
        except ValueError:  # a damaged entry, or one of classes a comparison is not made of: worked out again
            found = None
        with self._lock:
            if data is None or not isinstance(found, Comparison):
                self.misses += 0 if made else 1
                return None
            self.hits += 0 if made else 1
            self.entries[key] = data
            self._used(key)
        return replace(found, baseline=baseline, candidate=candidate)

    def put(self, key: str, comparison: Comparison) -> None:
        bare = replace(comparison, baseline=None, candidate=None)  # type: ignore[arg-type]
        data = CODEC.dumps(bare)
        with self._lock:
            self.entries[key] = data
            self._used(key)

    # --- which file used what ------------------------------------------------------------------------

    def _used(self, key: str) -> None:
        if self._file is not None:
            self._file.add(key)

    @contextmanager
    def rendering(self, file: str) -> Iterator[None]:
        """Record the entries used while ``file`` renders (all it used, when it renders whole)."""
        self._file = set()
        try:
            yield
            if self._file:
                self.files[file] = sorted(self._file)
        finally:
            self._file = None

    def carried(self, file: str) -> None:
        """``file`` was carried over from the previous build: the entries it used stay."""
        keys = self.kept_files.get(file)
        if keys and all(k in self.kept for k in keys):
            self.files[file] = keys
            for k in keys:
                self.entries.setdefault(k, self.kept[k])

    def save(self, folder: Path) -> None:
        """Write the entries the site's files use into ``folder``, replacing the file whole."""
        files = {f: self.files[f] for f in sorted(self.files)}
        keys = sorted({k for used in files.values() for k in used})
        doc = {"format": CACHE_FORMAT, "entries": {k: self.entries[k] for k in keys}, "files": files}
        path = folder / CACHE_FILE
        temporary = path.with_name(f".{path.name}.{os.getpid()}")
        try:
            temporary.write_text(json.dumps(doc, separators=(",", ":")), encoding="utf-8")
            os.replace(temporary, path)
        except BaseException:
            temporary.unlink(missing_ok=True)
            raise
        (folder / LEGACY_FILE).unlink(missing_ok=True)


def _read(folder: Path) -> tuple[dict[str, str], dict[str, list[str]]]:
    try:
        doc = json.loads((folder / CACHE_FILE).read_bytes())
    except (OSError, ValueError, RecursionError):  # missing or unreadable: everything is worked out again
        return {}, {}
    if not isinstance(doc, dict) or doc.get("format") != CACHE_FORMAT:
        return {}, {}
    entries, files = doc.get("entries"), doc.get("files")
    if not isinstance(entries, dict) or not isinstance(files, dict):
        return {}, {}
    return (
        {k: v for k, v in entries.items() if isinstance(k, str) and isinstance(v, str)},
        {f: keys for f, keys in files.items()
         if isinstance(f, str) and isinstance(keys, list) and all(isinstance(k, str) for k in keys)},
    )
