"""The one way fmbench opens a file a user named: run files, sidecars, settings, the revision registry,
methodology notes, Evaluations artifacts and ``summarize``'s file all come through here.

A user may name anything: a FIFO (opening it for reading would wait for a writer forever), ``/dev/zero``
(which never ends, whatever its size says), a device, a socket, or a regular file that grows while it is
read. So a path is looked at before it is opened (``stat``), opened without blocking (``O_NONBLOCK``), and
looked at again through the opened descriptor (``fstat``), which closes the race of a file swapped between
the two. Its size is then bounded while it is read, never only from ``st_size``.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import BinaryIO

from fmbench.errors import FmbenchError, Problem, RunFileError

CHUNK = 1024 * 1024
"""How much one ``read`` asks for: a file is read to its limit in pieces, never in one allocation past it."""


class UnreadableFile(FmbenchError):
    """A file a user named that fmbench will not read: not a regular file, too large, or not readable."""

    def __init__(self, path: str | os.PathLike[str], reason: str) -> None:
        self.path = Path(path)
        self.reason = reason
        super().__init__(f"{self.path}: {reason}")


class NotRegularFile(UnreadableFile):
    """A FIFO, a device, a socket or a folder where a file was expected."""


class FileTooLarge(UnreadableFile):
    """A file past its limit. ``size`` is its size as far as it was read (at least ``limit`` + 1)."""

    def __init__(self, path: str | os.PathLike[str], size: int, limit: int) -> None:
        self.size = size
        self.limit = limit
        super().__init__(path, f"{size:,} bytes is larger than the {limit:,}-byte limit")


def kind_of(mode: int) -> str:
    """What a file that is not a regular one is, in a reader's words."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def not_regular(path: str | os.PathLike[str], mode: int) -> NotRegularFile:
    return NotRegularFile(path, f"not a regular file ({kind_of(mode)}); name a file fmbench can read")


def is_special(path: Path) -> bool:
    """True for a path that exists but is neither a regular file nor a folder (a FIFO, a device, a socket),
    following symbolic links; a broken link, a missing path or one that cannot be looked at is not."""
    try:
        mode = path.stat().st_mode
    except (OSError, ValueError):
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def check_regular(path: str | os.PathLike[str]) -> os.stat_result:
    """``path``'s status, refused with :class:`NotRegularFile` unless it is a regular file (links followed).
    An ``OSError`` (missing, no permission, a name too long) is left to the caller."""
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise not_regular(path, st.st_mode)
    return st


@contextmanager
def open_regular(path: str | os.PathLike[str]) -> Iterator[BinaryIO]:
    """``path`` opened for reading in binary, only if it is a regular file; no open ever blocks."""
    check_regular(path)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # swapped for something else between the stat and the open
            raise not_regular(path, st.st_mode)
        os.set_blocking(fd, True)
        f = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with f:
        yield f


def read_within(f: BinaryIO, path: str | os.PathLike[str], limit: int) -> bytes:
    """The rest of an opened file, refused with :class:`FileTooLarge` past ``limit`` bytes, read no further
    than one byte past it whatever the file's size says."""
    size = os.fstat(f.fileno()).st_size
    if size > limit:
        raise FileTooLarge(path, size, limit)
    parts: list[bytes] = []
    total = 0
    while total <= limit:
        piece = f.read(min(CHUNK, limit + 1 - total))
        if not piece:
            break
        parts.append(piece)
        total += len(piece)
    if total > limit:
        raise FileTooLarge(path, max(total, os.fstat(f.fileno()).st_size), limit)
    return b"".join(parts)


def read_bytes(path: str | os.PathLike[str], limit: int) -> bytes:
    """A regular file's bytes, at most ``limit`` of them (else :class:`FileTooLarge`); anything but a regular
    file is :class:`NotRegularFile`. An ``OSError`` opening or reading it is left to the caller."""
    with open_regular(path) as f:
        return read_within(f, path, limit)


def read_text(path: str | os.PathLike[str], limit: int, encoding: str = "utf-8") -> str:
    """:func:`read_bytes` decoded (a ``UnicodeDecodeError`` is left to the caller)."""
    return read_bytes(path, limit).decode(encoding)


def run_file_limit_message(size: int, max_bytes: int) -> str:
    return (
        f"{size:,} bytes is larger than the {max_bytes:,}-byte limit for a run file; "
        "raise it with --max-bytes if this really is one run"
    )


def read_run_file(path: Path, max_bytes: int) -> bytes:
    """A run file's bytes, or :class:`RunFileError` naming it: not a regular file, over ``max_bytes`` (read
    no further than the limit), or not readable."""
    try:
        return read_bytes(path, max_bytes)
    except FileTooLarge as exc:
        raise RunFileError(path.name, [Problem("(file)", run_file_limit_message(exc.size, max_bytes))]) from None
    except UnreadableFile as exc:
        raise RunFileError(path.name, [Problem("(file)", exc.reason)]) from None
    except OSError as exc:
        raise RunFileError(path.name, [Problem("(file)", f"cannot be read: {exc.strerror}")]) from None


def sha256_of(path: str | os.PathLike[str]) -> str:
    """A regular file's SHA-256, streamed (any size, a constant memory); anything else is
    :class:`NotRegularFile`."""
    with open_regular(path) as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def special_reason(path: str | os.PathLike[str]) -> str:
    """Why a path :func:`is_special` finds is not read: "not a regular file (a FIFO (named pipe))"."""
    try:
        return f"not a regular file ({kind_of(os.stat(path).st_mode)})"
    except OSError:
        return "not a regular file"



def is_regular_file(path: str | os.PathLike[str]) -> bool:
    """True for a regular file (links followed); False for anything else, and for a name the system cannot
    even look up (too long, a NUL in it), where ``Path.is_file`` raises."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False
