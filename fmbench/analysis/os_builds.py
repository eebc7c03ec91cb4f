"""OS builds in version order, from their ids alone.

An Apple build id is the OS's major number, a letter for its update (A, then B, ...), a build number and, on a
seed (beta), a lower-case letter: ``26A5353q``, ``26A5378f`` (seeds of the first release of OS 27), ``25B78``
(the B update of OS 26). In version order a major comes before the next, an update before the next letter, an
update's seeds before its release (their numbers are larger: a seed's ``5378`` before a release's ``362``), and
builds of one kind by number. Run dates do not give this order: an older OS's update is often measured after a
newer OS's seed.
"""

from __future__ import annotations

import re

_BUILD = re.compile(r"(\d+)([A-Z])(\d+)([a-z]?)")


def version_key(build: str | None) -> tuple[int, int, str, int, int, str]:
    """Sorts OS build ids in version order; an id not of Apple's shape (or none) after every one that is, by name."""
    found = _BUILD.fullmatch(build or "")
    if found is None:
        return (1, 0, build or "", 0, 0, "")
    major, update, number, seed = found.groups()
    return (0, int(major), update, 0 if seed else 1, int(number), seed)
