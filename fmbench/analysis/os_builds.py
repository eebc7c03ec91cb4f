"""Apple OS builds in version order.

An Apple build string such as ``26A5353q`` reads, left to right:

- the **major** number (``26``), one per yearly release line;
- the **train** letter (``A`` for the ``.0`` release, ``B`` for ``.1``, …);
- the **build number** (``5353``). A seed (beta) build carries a leading variant digit on a four-digit number
  (``5`` for a developer seed: ``24A5264n`` is the 264th build of its train), so the train's release
  (``24A335``) comes after its betas although 335 < 5264. The order therefore compares the number less its
  variant digit first, then the variant digit (a plain build before a variant of the same count);
- an optional lower-case **suffix** letter (``q``), which Apple gives its seeds, or a respin of a build.

A train's seeds (a suffix letter, or a variant digit of 5 or more) come before its release (``26A5378f`` before ``26A362``, though 378 > 362), then each group by
the number less its variant digit, the variant digit and the suffix.

So ``25B78`` < ``26A5353q`` < ``26A5378f`` < ``26B5012a`` < ``26B5013b``, and ``24A5264n`` < ``24A335``. Build
strings of another shape cannot be placed: they come after every build that can, by their text. The order
never looks at when a build was measured.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

_BUILD = re.compile(r"^(?P<major>[0-9]{1,3})(?P<train>[A-Z])(?P<number>[0-9]{1,5})(?P<suffix>[a-z]?)$")


@dataclass(frozen=True)
class BuildVersion:
    """The parts of a build string that order it (see the module's text)."""

    major: int
    train: str
    count: int
    """The build number less a four-digit number's leading variant digit (``5353`` → ``353``)."""
    variant: int
    """That variant digit (``5`` for a seed), 0 for a number of three digits or fewer."""
    suffix: str
    """The respin letter, ``""`` when there is none."""


def parse_build(build: str) -> BuildVersion | None:
    """``26A5353q`` → ``BuildVersion(26, "A", 353, 5, "q")``; ``None`` for a string that is not an Apple build."""
    match = _BUILD.match(build.strip())
    if match is None:
        return None
    number = match["number"]
    count, variant = int(number), 0
    if len(number) >= 4:
        variant, count = int(number[: len(number) - 3]), int(number[-3:])
    return BuildVersion(int(match["major"]), match["train"], count, variant, match["suffix"])


def build_sort_key(build: str | None) -> tuple[int, tuple[int, str, int, int, int, str], str]:
    """A key that sorts builds in version order; builds that cannot be parsed (and ``None``) after all others,
    by their text."""
    version = parse_build(build) if build is not None else None
    if version is None:
        return (1, (0, "", 0, 0, 0, ""), build or "")
    release = 0 if version.suffix or version.variant >= 5 else 1  # a train's seeds before its release
    return (0, (version.major, version.train, release, version.count, version.variant, version.suffix), build or "")


def in_version_order(builds: Iterable[str | None]) -> list[str | None]:
    """The distinct ``builds`` in version order (see :func:`build_sort_key`)."""
    return sorted(dict.fromkeys(builds), key=build_sort_key)
