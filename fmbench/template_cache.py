"""Compiled templates kept between processes, so a build's workers and an incremental build do not compile
every template again (about 0.3 CPU-seconds a process).

Jinja's own file cache, in its private per-user folder of the temporary directory (made ``0700`` and
checked to be the user's own before use). Each entry is Python code compiled from one template; it is
used only while the template's source is unchanged (Jinja checks a checksum of it) and only by the same
code generator: the file names carry a digest of fmbench's version, Jinja's version and the source of
:mod:`fmbench.render`, which defines how templates compile. A cache that cannot be made or written
never fails a page: the template is compiled, as without a cache.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
from pathlib import Path

import jinja2
from jinja2.bccache import Bucket

from fmbench import __version__

_PREFIX = "fmbench-templates-"


@functools.cache
def generator_digest() -> str:
    """What the compiled code depends on besides the template's own source."""
    from fmbench import render

    h = hashlib.sha256()
    h.update(f"{__version__}|{jinja2.__version__}|".encode())
    h.update(Path(render.__file__).read_bytes())
    return h.hexdigest()[:16]


class TemplateCache(jinja2.FileSystemBytecodeCache):
    """Jinja's file cache of compiled templates, keyed to this generator; failures to write are ignored."""

    def __init__(self, directory: str | os.PathLike[str] | None = None, digest: str | None = None) -> None:
        self.digest = digest or generator_digest()
        super().__init__(None if directory is None else str(directory), f"{_PREFIX}{self.digest}-%s.cache")
        self._swept = False

    def load_bytecode(self, bucket: Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except (OSError, EOFError, ValueError, TypeError):
            bucket.reset()  # an unreadable entry: compiled again, and written over

    def dump_bytecode(self, bucket: Bucket) -> None:
        if not self._swept:
            self._swept = True
            self.sweep()
        with contextlib.suppress(OSError):  # a full disk or a read-only folder: the page is rendered all the same
            super().dump_bytecode(bucket)

    def sweep(self) -> int:
        """Remove entries another generator (an older fmbench or Jinja) left; how many were removed."""
        removed = 0
        current = f"{_PREFIX}{self.digest}-"
        try:
            names = os.listdir(self.directory)
        except OSError:
            return 0
        for name in names:
            if name.startswith(_PREFIX) and not name.startswith(current) and name.endswith(".cache"):
                try:
                    os.remove(os.path.join(self.directory, name))
                    removed += 1
                except OSError:
                    pass
        return removed


def template_cache() -> TemplateCache | None:
    """The user's cache of compiled templates, or ``None`` where no safe folder can be had (or
    ``FMBENCH_TEMPLATE_CACHE=off``)."""
    if os.environ.get("FMBENCH_TEMPLATE_CACHE", "").lower() in ("0", "off", "no", "false"):
        return None
    try:
        return TemplateCache()
    except (OSError, RuntimeError):
        return None
