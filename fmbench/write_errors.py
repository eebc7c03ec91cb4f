"""A write the machine refused: a full disk, a read-only file system, no permission.

Every command that writes (ingest, build, export, ``native replay``, …) turns
the operating system's refusal into a :class:`WriteError` here, and nowhere
else: one line naming the path, what was being written and, for a full disk,
how much space is left. DuckDB reports the same refusals as its own errors
with the system's text; they are recognised by that text. A refusal may also
hide behind a second error raised while handling it (DuckDB's "cannot
rollback - no transaction is active" after a commit that could not be
written): the chain of exceptions is searched too.
"""

from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from fmbench.errors import FmbenchError

_FULL = frozenset({errno.ENOSPC, errno.EDQUOT})
_REFUSED = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})

_DUCKDB_TEXT = (
    ("no space left on device", errno.ENOSPC),
    ("disk quota exceeded", errno.EDQUOT),
    ("read-only file system", errno.EROFS),
    ("permission denied", errno.EACCES),
    ("operation not permitted", errno.EPERM),
)


class WriteError(FmbenchError):
    """Something could not be written. Names the path, what was being written, why, and what to do."""

    def __init__(self, path: str | os.PathLike[str], what: str, reason: str, advice: str, note: str = "") -> None:
        self.path = Path(path)
        self.what = what
        self.reason = reason
        self.advice = advice
        super().__init__(f"{self.path}: {reason} while writing {what}; {advice}" + (f" ({note})" if note else ""))


class DiskFullError(WriteError):
    """The disk (or the user's quota) is full."""

    def __init__(self, path: str | os.PathLike[str], what: str, free_bytes: int | None, note: str = "") -> None:
        self.free_bytes = free_bytes
        free = "free space unknown" if free_bytes is None else f"{human_bytes(free_bytes)} free"
        super().__init__(
            path, what, f"no space left on the device ({free})", "free some space and run the same command again", note
        )


class NotWritableError(WriteError):
    """The place is on a read-only file system, or this user may not write there."""

    def __init__(self, path: str | os.PathLike[str], what: str, code: int, note: str = "") -> None:
        self.code = code
        reason = "the file system is read-only" if code == errno.EROFS else "permission denied"
        super().__init__(path, what, reason, "choose a place you can write to, or make this one writable", note)


def human_bytes(n: int) -> str:
    """``1536`` -> ``1.5 KiB``."""
    size = float(n)
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{n:,} bytes" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024
    raise AssertionError("unreachable")


def free_space(path: str | os.PathLike[str]) -> int | None:
    """Bytes this user may still write on the file system holding ``path`` (or its nearest existing folder)."""
    place = Path(os.path.abspath(path))
    while not place.exists() and place != place.parent:
        place = place.parent
    try:
        return shutil.disk_usage(place).free
    except OSError:
        return None


def refusal(exc: BaseException | None) -> int | None:
    """The errno of a refused write in ``exc`` or in the exceptions it was raised from or while handling."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno in _FULL | _REFUSED:
            return exc.errno
        if isinstance(exc, duckdb.Error):
            text = str(exc).lower()
            for phrase, code in _DUCKDB_TEXT:
                if phrase in text:
                    return code
        exc = exc.__cause__ or exc.__context__
    return None


def as_write_error(
    exc: BaseException, path: str | os.PathLike[str], what: str, *, note: str = ""
) -> WriteError | None:
    """``exc`` as a :class:`WriteError` about ``path``, or ``None`` when it is not a refused write.

    ``note`` adds what the user should know besides (what was written before the refusal).
    """
    if isinstance(exc, WriteError):
        return exc
    code = refusal(exc)
    if code is None:
        return None
    if code in _FULL:
        return DiskFullError(path, what, free_space(path), note)
    return NotWritableError(path, what, code, note)


@contextmanager
def writing(path: str | os.PathLike[str], what: str, *, note: str = "") -> Iterator[None]:
    """Turn a refused write inside the block into a :class:`WriteError` about ``path``; other errors pass."""
    try:
        yield
    except Exception as exc:
        error = as_write_error(exc, path, what, note=note)
        if error is None or error is exc:
            raise
        raise error from None
