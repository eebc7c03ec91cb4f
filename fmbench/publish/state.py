"""Where a static build keeps its own records: beside the database, never in the site it builds.

A build remembers, for each output folder, what it wrote there: its manifest
(:class:`fmbench.publish.build.Manifest`), the regression report's parts
(:mod:`fmbench.publish.regression_cache`) and the comparisons its pages used
(:mod:`fmbench.comparison.cache`). None of it is part of the site: a static host
serves every file of the output folder, and the caches are the build's own (JSON
records of what it worked out, read back as data only). So they
live in ``<database file name>.builds/`` beside the database (as the resample
store lives in ``<database file name>.resamples/``, :mod:`fmbench.comparison.resample_store`),
or ``<dataset folder name>.builds/`` beside a local Parquet dataset, with one
folder for each output folder the database was built into. A remote dataset has
no folder of its own here, and a database in a folder that cannot be written
(a read-only file system) none that can be written: their builds keep their
records beside the output folder instead (``.<output name>.fmbench-build/``, as
the staging folders are; :func:`records_folder`).

**One folder per output.** The folder is named for the output's path relative to
the database's folder (its last part and a digest of the whole), and its
manifest repeats that path: a build into another folder with the same database
reads no manifest of another site, and a project moved (or checked out
somewhere else, as CI does) with its database keeps its records. Deleting the
folder costs one full build.

**Upgrades.** Earlier versions kept these records in the output folder as
``.fmbench-manifest.json``, ``.fmbench-regressions.pickle`` and
``.fmbench-comparisons.pickle``; a build removes them (:func:`remove_legacy`).
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from fmbench.storage.dataset import is_remote
from fmbench.storage.db import default_db_path

SUFFIX = ".builds"
MANIFEST_FILE = "manifest.json"
REMOTE_SUFFIX = ".fmbench-build"
LEGACY_FILES = (".fmbench-manifest.json", ".fmbench-regressions.pickle", ".fmbench-comparisons.pickle")
"""What earlier versions kept in the output folder, removed from it by the next build."""


def output_key(db: str | os.PathLike[str] | None, out: str | os.PathLike[str]) -> str:
    """The output folder as the build's records name it: its path relative to the database's folder (POSIX
    separators), or its absolute path where there is no relative one (another drive, a remote dataset)."""
    target = Path(os.path.abspath(out))
    home = _database_home(db)
    if home is not None:
        try:
            return Path(os.path.relpath(target, home)).as_posix()
        except ValueError:  # another drive (Windows): no relative path
            pass
    return target.as_posix()


def _database_home(db: str | os.PathLike[str] | None) -> Path | None:
    """The folder that holds the database file (or the local dataset folder); ``None`` for a remote dataset."""
    if db is not None and is_remote(db):
        return None
    return Path(os.path.abspath(default_db_path(db))).parent


def state_folder(db: str | os.PathLike[str] | None, out: str | os.PathLike[str]) -> Path:
    """The folder that holds the build records of ``out`` built from ``db`` (see the module's text)."""
    key = output_key(db, out)
    if db is not None and is_remote(db):
        return beside_output(out)
    source = Path(os.path.abspath(default_db_path(db)))
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", Path(key).name).strip(".-") or "site"
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:12]
    return source.with_name(source.name + SUFFIX) / f"{name}-{digest}"


def beside_output(out: str | os.PathLike[str]) -> Path:
    """The records folder of a build whose database has no place for it: a sibling of the output folder."""
    target = Path(os.path.abspath(out))
    return target.with_name(f".{target.name}{REMOTE_SUFFIX}")


def records_folder(db: str | os.PathLike[str] | None, out: str | os.PathLike[str]) -> Path:
    """The folder a build of ``out`` from ``db`` keeps its records in, made if need be: :func:`state_folder`, or
    :func:`beside_output` when that cannot be made or written (a database on a read-only file system)."""
    folder = state_folder(db, out)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return beside_output(out)
    return folder if os.access(folder, os.W_OK) else beside_output(out)


def remove_legacy(out: Path) -> list[str]:
    """Remove the records an earlier version kept in the output folder; the names of those it removed."""
    removed = []
    for name in LEGACY_FILES:
        try:
            (out / name).unlink()
        except FileNotFoundError:
            continue
        removed.append(name)
    return removed


def holds_legacy_manifest(out: Path) -> bool:
    return (out / LEGACY_FILES[0]).is_file()
