"""Writing files into a folder a user named, never replacing a file fmbench did not write.

``fmbench export --originals DIR`` (and ``--trials-csv DIR``) and ``fmbench native convert`` write files under
names of their own into a place the user chose, where the user's own files may already be: one edited since the
last export, or an unrelated file under the same name. Every such write goes through :func:`place_files`, which
replaces an existing file only when

- it already holds exactly the bytes to be written (nothing changes), or
- it still holds the bytes fmbench wrote there last, as the writer's record says (its SHA-256), or
- the user said so (``--force``).

Otherwise nothing at all is written and the error names the file (:class:`UnownedFileError`). Every file is first
written whole somewhere else (a staging folder or a temporary file beside it) and checked before any is moved into
place, so a refusal leaves the folder exactly as it was.

**The record** of what was written (the name and SHA-256 of each file) is kept outside the folder written into,
never in a published folder: for an export, beside the database (``<database file name>.written/``, one JSON
file per output folder, :func:`record_beside`). ``native convert`` has no database and keeps none: it compares
with the bytes it would write, so converting the same source again over its own output works. A record that
cannot be read is treated as empty, and one that cannot be written (a database on a read-only file system) is
left as it was: either way the worst case is a refusal that ``--force`` answers, never a lost file.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path

from fmbench.errors import FmbenchError
from fmbench.write_errors import writing

RECORD_SUFFIX = ".written"
RECORD_FORMAT = 1


class UnownedFileError(FmbenchError):
    """A file to be written exists and fmbench did not write it (or it changed since): nothing was written."""

    def __init__(self, paths: Sequence[Path], folder: Path) -> None:
        self.paths = list(paths)
        more = len(self.paths) - 1
        also = f" (and {more} more file{'s' if more > 1 else ''} like it)" if more else ""
        super().__init__(
            f"{self.paths[0]}: exists and is not a file fmbench wrote, or was changed since{also}; nothing was written "
            f"into {folder}; move it away, or pass --force to replace it"
        )


def record_beside(db: str | os.PathLike[str], folder: str | os.PathLike[str]) -> Path:
    """The record of what was written into ``folder`` from the database ``db``: ``<db>.written/<name>-<digest>.json``."""
    source = Path(os.path.abspath(db))
    target = Path(os.path.abspath(folder))
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", target.name).strip(".-") or "folder"
    digest = hashlib.sha256(target.as_posix().encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return source.with_name(source.name + RECORD_SUFFIX) / f"{name}-{digest}.json"


def file_sha256(path: Path) -> str:
    """The SHA-256 of a file, read a block at a time."""
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while block := stream.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def _read_record(record: Path | None, folder: Path) -> dict[str, str]:
    if record is None:
        return {}
    try:
        doc = json.loads(record.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(doc, dict) or doc.get("format") != RECORD_FORMAT or doc.get("folder") != folder.as_posix():
        return {}
    files = doc.get("files")
    return {k: v for k, v in files.items() if isinstance(k, str) and isinstance(v, str)} if isinstance(files, dict) else {}


def _write_record(record: Path, folder: Path, files: dict[str, str]) -> None:
    text = json.dumps({"format": RECORD_FORMAT, "folder": folder.as_posix(), "files": files}, indent=1, sort_keys=True)
    temporary = record.with_name(f".{record.name}.{os.getpid()}.tmp")
    try:
        record.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_text(text + "\n", encoding="utf-8")
        os.replace(temporary, record)
    except OSError:
        pass  # a record that cannot be written costs a refusal later (answered by --force), never a file
    finally:
        with contextlib.suppress(OSError):
            temporary.unlink()


def _owned(target: Path, staged_sha: str, recorded: str | None) -> bool:
    """Whether ``target`` (which exists) may be replaced without ``--force``."""
    try:
        mode = target.lstat().st_mode
    except FileNotFoundError:
        return True
    if not stat.S_ISREG(mode):
        return False  # a link, a folder, a FIFO, a device: never fmbench's
    try:
        found = file_sha256(target)
    except OSError:
        return False
    return found in (staged_sha, recorded)


def place_files(
    folder: str | os.PathLike[str],
    staged: Sequence[tuple[str, Path]],
    *,
    record: Path | None,
    force: bool = False,
    what: str = "a file",
) -> list[Path]:
    """Move each staged file (``(name, whole file elsewhere on the same file system)``) to ``folder / name``; return
    the paths written. Raises :class:`UnownedFileError`, having moved nothing, when a file to be replaced is not
    fmbench's (see the module's text) and ``force`` is off; a folder in the way is refused even with ``force``."""
    where = Path(os.path.abspath(folder))
    known = _read_record(record, where)
    hashes: dict[str, str] = {}
    refused: list[Path] = []
    for name, source in staged:
        target = Path(folder) / name
        hashes[name] = file_sha256(source)
        in_the_way = target.is_dir() and not target.is_symlink()
        if in_the_way or (not force and not _owned(target, hashes[name], known.get(name))):
            refused.append(target)
    if refused:
        raise UnownedFileError(refused, Path(folder))
    written: list[Path] = []
    try:
        for name, source in staged:
            target = Path(folder) / name
            with writing(target, what):
                os.replace(source, target)
            known[name] = hashes[name]
            written.append(target)
    finally:
        if record is not None and written:
            _write_record(record, where, known)
    return written
