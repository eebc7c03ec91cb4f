"""A store of per-side bootstrap resamples on disk, shared by every process that reads one database.

The cluster bootstrap of :mod:`fmbench.analysis.stats` draws :data:`~fmbench.analysis.stats.RESAMPLES`
resamples of one side of a comparison, seeded from a digest of the side's
values, so what it finds for a side (the resampled quantiles ``qs``, or the
resampled means) is a function of that digest alone. :mod:`fmbench.analysis.stats`
memoizes it per process; this store keeps it across processes, so a build, the
next (incremental) build and ``fmbench serve`` over the same database resample a
side only the first time any of them meets its values.

**Keys.** An entry's name is a digest of everything its content depends on:
the side's digest, which result (the tuple of quantile levels, or the mean),
the number of resamples and :data:`ALGORITHM`, a version of the draw that is
bumped whenever the draw (or what is derived from it) changes. A side whose
values change has a new digest, so nothing is ever invalidated: an entry is
either exactly right or never asked for again. The entry repeats its key in its
header, and a reader checks it.

A side paired by sample with the other side of its comparison
(:mod:`fmbench.analysis.pairing`) is resampled with the sample draw both sides
share, and its digest is another one: a digest of its values, of the sample ids
both sides ran and of where its runs hold them. So its paired and unpaired
resamples are two entries of one layout, and an fmbench that never paired
asks only for the unpaired ones, which are the same bits as ever: pairing
changed neither :data:`FORMAT` nor :data:`ALGORITHM`.

**Exact, and small.** A resampled quantile is always one of the side's own
values, so a quantile entry holds, per level and per resample, the index of
that value among the side's sorted values (16-bit when the side has fewer than
32,767 values, else 32-bit) and the reader looks the values up: the same
float64 bits as resampling. A mean of 0/1 outcomes (a rate) is a whole number
of successes over a whole count of trials, so its entry holds the integer sums
and counts and the reader divides them as the resampling does (the same
rounding, the same bits); any other mean is stored as its float64 values.

**An entry is a NumPy ``.npz`` file** (what :func:`numpy.savez_compressed`
writes, deflated at level 1: the median and p90 of 4,000 resamples of a side of
about 1,000 trials take about 6 KB instead of 16): ``key.npy``, the entry's key
as bytes (:data:`FORMAT`, :data:`ALGORITHM`, the side's digest, the levels...),
then ``a0.npy``, ``a1.npy``... its arrays, one-dimensional integers or float64
only. It is read strictly, never with pickle: each member's CRC is checked, its
``.npy`` header must describe exactly the bytes that follow, and a file that is
truncated, corrupt, of another format version or another key, or whose indices
fall outside the side, is ignored and the side resampled again (and the entry
written again).

**Where.** Beside the database: ``<database file name>.resamples/`` in the
folder that holds the file (so ``fmbench build`` and ``fmbench serve`` on one
database share it), or ``<dataset folder name>.resamples/`` beside a local
Parquet dataset (:mod:`fmbench.storage.dataset`); a remote dataset gets no store. The
entries are spread over 256 subfolders by the first two hex digits of their
names.

**Concurrency and failure.** Each entry is written to a temporary file in its
subfolder and moved into place with :func:`os.replace`, so a reader (another
worker process of a parallel build, another thread of the server) sees a whole
entry or none; two writers of one entry write the same bytes. A store that
cannot be written (a read-only folder, a full disk) is still read, and the
process keeps working in memory from then on: the store never fails a build or
a request.

**Bounded.** Reading an entry sets its modification time to now. A build that
renders every page (nothing carried over from a previous site) reads every
entry the site needs, so at its end it removes the entries it did not touch
(those modified before it started, less a second for coarse file times). An
incremental build reads only what it renders and removes nothing. The store
thus holds the entries of the last full build and of what was computed since.

**One owner.** The store is held by a :class:`Resamples`, which also keeps the
sides met in memory: the build, each build worker, the server's application
factory and ``fmbench compare`` each make one for their database
(:func:`store_for`) and hand it down through the comparisons they make
(:class:`fmbench.comparison.caches.Caches`); there is no store of the process. Code that is
given none (a test calling :mod:`fmbench.analysis.stats` directly) resamples every time.
"""

from __future__ import annotations

import hashlib
import io
import os
import struct
import threading
import zipfile
from contextlib import suppress
from pathlib import Path
from typing import Any

from fmbench.storage.dataset import is_remote
from fmbench.storage.db import default_db_path

ALGORITHM = 2
"""Version of the draw in :func:`fmbench.analysis.stats._resample` and of what is derived from it (1: trials drawn again
inside each drawn sample; 2: each drawn sample with all its trials as measured): bump it when either
changes, and every entry written before is simply never asked for again."""
FORMAT = 2
"""Version of an entry's layout (1: a binary layout of fmbench's own, whose files a full build sweeps away)."""
MAGIC = b"FMBRSMP\x00"
SUFFIX = ".resamples"
ENTRY = ".npz"
SWEEP_SLACK = 1.0
"""Seconds before a full build's start from which an entry counts as used: file times may be coarser than the clock."""

COMPRESSION = 1
"""Deflate level of an entry's arrays: about a third of their size (rank indices repeat their high bytes), at about
0.2 ms a write; higher levels gain 1 %."""
MAX_PAYLOAD = 4 * 2**20
"""An entry's arrays inflate to at most this (a few levels of 4,000 resamples are under 100 KB): more is no entry."""
_HEADER = struct.Struct("<8sHHI16sIB")  # magic, format, algorithm, resamples, side digest, values, levels
_DTYPES = {("i", 2): "<i2", ("i", 4): "<i4", ("i", 8): "<i8", ("f", 8): "<f8"}
"""What an entry's arrays may be (as stored: little-endian)."""
_KEY = "key"

Which = tuple[float, ...] | str
"""What an entry holds for a side: the quantile levels, or ``"mean"``."""


class ResampleStore:
    """The entries of one folder (see the module's documentation)."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)
        self.writable = True
        self.reads = 0
        self.writes = 0
        self.ignored = 0
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"ResampleStore({str(self.folder)!r})"

    # --- naming --------------------------------------------------------------------------------------

    @staticmethod
    def _key(digest: bytes, which: Which, n_values: int, resamples: int) -> bytes:
        levels: tuple[float, ...] = () if isinstance(which, str) else which
        return _HEADER.pack(MAGIC, FORMAT, ALGORITHM, resamples, digest, n_values, len(levels)) + struct.pack(
            f"<{len(levels)}d", *levels
        ) + (b"m" if isinstance(which, str) else b"q")

    def path(self, key: bytes) -> Path:
        name = hashlib.blake2b(key, digest_size=20).hexdigest()
        return self.folder / name[:2] / (name[2:] + ENTRY)

    # --- reading -------------------------------------------------------------------------------------

    def load(self, digest: bytes, which: Which, n_values: int, resamples: int) -> list[Any] | None:
        """The arrays stored for this key, or ``None`` (absent, unreadable, or not a valid entry of this key)."""
        # slow to import (numpy): only the resampling needs it
        import numpy as np

        key = self._key(digest, which, n_values, resamples)
        path = self.path(key)
        try:
            data = path.read_bytes()
        except OSError:
            return None
        arrays = _parse(data, key, np)
        if arrays is None:
            with self._lock:
                self.ignored += 1
            return None
        with suppress(OSError):
            os.utime(path)  # used: a full build keeps it
        with self._lock:
            self.reads += 1
        return arrays

    # --- writing -------------------------------------------------------------------------------------

    def save(self, digest: bytes, which: Which, n_values: int, resamples: int, arrays: list[Any]) -> None:
        """Write an entry (atomically); a store that cannot be written is left alone from then on."""
        if not self.writable:
            return
        # slow to import (numpy): only the resampling needs it
        import numpy as np

        key = self._key(digest, which, n_values, resamples)
        members = {_KEY: np.frombuffer(key, dtype=np.uint8)}
        for i, array in enumerate(arrays):
            flat = array.reshape(-1)  # a quantile entry's levels one after the other
            members[f"a{i}"] = flat.astype(_DTYPES[(array.dtype.kind, array.dtype.itemsize)], copy=False)
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=COMPRESSION) as archive:
            for name, array in members.items():  # as numpy.savez_compressed writes them, at our level
                with archive.open(f"{name}.npy", "w") as member:
                    np.lib.format.write_array(member, array, allow_pickle=False)
        body = buffer.getvalue()
        path = self.path(key)
        temp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            temp.write_bytes(body)
            os.replace(temp, path)
        except OSError:
            self.writable = False  # read-only, full, or gone: keep working in memory
            with suppress(OSError):
                temp.unlink()
            return
        with self._lock:
            self.writes += 1

    # --- bounding ------------------------------------------------------------------------------------

    def sweep(self, since: float) -> int:
        """Remove the entries (and stray temporary files) not read or written since ``since`` (a
        :func:`time.time`), less :data:`SWEEP_SLACK`; the number removed. Never raises."""
        removed = 0
        cutoff = since - SWEEP_SLACK
        try:
            shards = [p for p in self.folder.iterdir() if p.is_dir() and len(p.name) == 2]
        except OSError:
            return 0
        for shard in shards:
            try:
                entries = list(os.scandir(shard))
            except OSError:
                continue
            for entry in entries:
                try:
                    if entry.stat(follow_symlinks=False).st_mtime < cutoff:
                        os.unlink(entry.path)
                        removed += 1
                except OSError:
                    continue
        return removed

    def size(self) -> tuple[int, int]:
        """``(entries, bytes)`` on disk."""
        count = total = 0
        for path in self.folder.glob(f"??/*{ENTRY}"):
            try:
                total += path.stat().st_size
                count += 1
            except OSError:
                continue
        return count, total


def _parse(data: bytes, key: bytes, np: Any) -> list[Any] | None:
    """The arrays of an entry whose bytes are ``data``, if it is a whole ``.npz`` of this version and of ``key``."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
            names = [m.filename for m in members]
            if names != [f"{_KEY}.npy", *(f"a{i}.npy" for i in range(len(names) - 1))]:
                return None
            if sum(m.file_size for m in members) > MAX_PAYLOAD:
                return None
            found = []
            for member in members:
                with archive.open(member) as f:
                    raw = f.read(MAX_PAYLOAD + 1)  # to its end: the member's CRC is checked there
                array = _npy(raw, np)
                if array is None:
                    return None
                found.append(array)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError, NotImplementedError):
        return None
    if found[0].dtype != np.uint8 or found[0].tobytes() != key:
        return None
    arrays = found[1:]
    if any((a.dtype.kind, a.dtype.itemsize) not in _DTYPES for a in arrays):
        return None
    return arrays


def _npy(raw: bytes, np: Any) -> Any:
    """The one-dimensional array of a ``.npy`` file's bytes, if its header describes exactly the bytes after it."""
    f = io.BytesIO(raw)
    version = np.lib.format.read_magic(f)
    if version == (1, 0):
        shape, _, dtype = np.lib.format.read_array_header_1_0(f)
    elif version == (2, 0):
        shape, _, dtype = np.lib.format.read_array_header_2_0(f)
    else:
        return None
    if len(shape) != 1 or dtype.hasobject or dtype.str not in ("|u1", *_DTYPES.values()):
        return None
    if len(raw) - f.tell() != shape[0] * dtype.itemsize:
        return None
    return np.frombuffer(raw, dtype=dtype, count=shape[0], offset=f.tell())


# --- what one owner has resampled --------------------------------------------------------------


class Resamples:
    """The resampled sides one owner (a build, a build worker, a server, one ``fmbench compare``) has met: the
    last :data:`MEMORY` in memory, and ``store`` (the store beside its database) when it has one.

    It is created by that owner and handed down to :mod:`fmbench.analysis.stats` through the comparisons
    (:func:`fmbench.comparison.compare.compare_selected`'s ``caches``); nothing is kept between two owners but ``store``'s files.
    """

    MEMORY = 4096
    """Sides' results kept in memory (a few KB each): a build meets each side about three times."""

    def __init__(self, store: ResampleStore | None = None) -> None:
        self.store = store
        self.drawn = 0
        """How many times a side was resampled (neither in memory nor in ``store``)."""
        self._memory: dict[tuple[bytes, Which], Any] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"Resamples({self.store!r})"

    def recall(self, digest: bytes, which: Which) -> Any:
        """What was kept in memory for a side's ``which``, or ``None``."""
        return self._memory.get((digest, which))

    def remember(self, digest: bytes, which: Which, found: Any, *, drawn: bool = False) -> None:
        """Keep ``found`` in memory (the oldest goes first when full); ``drawn``: it was resampled just now."""
        with self._lock:
            self.drawn += drawn
            while self._memory and len(self._memory) >= self.MEMORY:
                del self._memory[next(iter(self._memory))]
            self._memory[(digest, which)] = found


def location(source: str | os.PathLike[str] | None) -> Path | None:
    """Where the store of a database file or Parquet dataset folder lives (``None`` for a remote dataset)."""

    if source is not None and is_remote(source):
        return None
    path = Path(default_db_path(source)).absolute()
    return path.with_name(path.name + SUFFIX)


def store_for(source: str | os.PathLike[str] | None) -> ResampleStore | None:
    """The store beside a database file or local Parquet dataset, or ``None`` when it has no place."""
    folder = location(source)
    return None if folder is None else ResampleStore(folder)
