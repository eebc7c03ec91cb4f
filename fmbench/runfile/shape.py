"""The shape of a run file's JSON, found without building anything from it.

What reading may cost is bounded by the file's size and shape before pydantic parses it: how many JSON
values the file holds against what its size pays for, how many trials, failures and summaries it could
hold, and where each of those top-level arrays and its elements lie (so that they can be validated a
slice at a time). Every pass is a count in C or a walk from bracket to bracket that skips whole strings.
"""

from __future__ import annotations

import json
import re
from array import array
from collections.abc import Iterable
from dataclasses import dataclass

COUNTED_ARRAYS = ("trials", "failures", "summaries")
"""The run's top-level arrays that are counted and validated a slice at a time, in the models' order."""

_TO_BRACKET = re.compile(rb'(?:[^"\[\]{}]++|"[^"\\]*+(?:\\.[^"\\]*+)*+")*+([\[\]{}])')
"""Text and whole strings up to the next bracket outside a string (never backtracks)."""
_SPACE = re.compile(rb"[ \t\r\n]*+")
_STRING = re.compile(rb'"[^"\\]*+(?:\\.[^"\\]*+)*+"')
_TO_SEPARATOR = re.compile(rb'(?:[^"\[\]{},]++|"[^"\\]*+(?:\\.[^"\\]*+)*+")*+([\[\]{},])')
"""Text and whole strings up to the next bracket or comma outside a string (never backtracks)."""


@dataclass(frozen=True)
class ArrayExtent:
    """A top-level array of the run: its key, where it lies (``[`` to just after ``]``) and its elements'
    extents (each from its first byte to the comma or bracket after it)."""

    key: str
    start: int
    end: int
    starts: array[int]
    ends: array[int]
    """Machine integers: a million elements' extents take 16 MB, not the 72 MB of two lists of ints."""


class TooMany(Exception):
    """More elements in the array of ``key`` than the limit."""

    def __init__(self, key: str) -> None:
        self.key = key


def _value_end(data: bytes, pos: int) -> int | None:
    """The offset of the ``,``, ``]`` or ``}`` that ends the JSON value starting at ``pos`` (``None``: not JSON)."""
    depth = 0
    while (found := (_TO_SEPARATOR if depth == 0 else _TO_BRACKET).match(data, pos)) is not None:
        at = found.start(1)
        pos = found.end()
        bracket = data[at]
        if bracket in b"[{":
            depth += 1
        elif bracket in b"]}":
            if depth == 0:
                return at
            depth -= 1
        else:  # a comma at the value's own level
            return at
    return None


def _elements(data: bytes, key: str, pos: int, limit: int | None) -> ArrayExtent | None:
    """The array whose ``[`` is at ``pos``; raises :class:`TooMany` as soon as it passes ``limit`` elements."""
    start, pos = pos, _SPACE.match(data, pos + 1).end()  # type: ignore[union-attr]
    starts, ends = array("q"), array("q")
    if data[pos : pos + 1] == b"]":
        return ArrayExtent(key, start, pos + 1, starts, ends)
    while True:
        pos = _SPACE.match(data, pos).end()  # type: ignore[union-attr]
        if limit is not None and len(starts) >= limit:
            raise TooMany(key)
        end = _value_end(data, pos)
        if end is None or end == pos:
            return None
        starts.append(pos)
        ends.append(end)
        pos = end + 1
        if data[end] == 0x5D:  # ]
            return ArrayExtent(key, start, pos, starts, ends)
        if data[end] != 0x2C:  # a } closing an array
            return None


def top_level_arrays(data: bytes, limit: int | None, only: Iterable[str] = COUNTED_ARRAYS) -> list[ArrayExtent] | None:
    """The run's trials, failures and summaries arrays (every one, should a key repeat), found by one pass
    over the file's brackets that builds nothing; ``None`` if the file is not a JSON object this pass
    follows (pydantic then says what is wrong). Raises :class:`TooMany` past ``limit`` elements.

    Given ``only`` some of the keys, the pass ends once each of them has been met with no other
    occurrence of the key further on (no escape can spell it otherwise once ``\\u00`` is ruled out):
    the runner writes its keys sorted, so counting the summaries does not read the trials after them.
    """
    pending = set(only)
    pos = _SPACE.match(data).end()  # type: ignore[union-attr]
    if data[pos : pos + 1] != b"{":
        return None
    pos = _SPACE.match(data, pos + 1).end()  # type: ignore[union-attr]
    found: list[ArrayExtent] = []
    if data[pos : pos + 1] == b"}":
        return found
    while True:
        key = _STRING.match(data, pos)
        if key is None:
            return None
        name = key.group()[1:-1]
        pos = _SPACE.match(data, key.end()).end()  # type: ignore[union-attr]
        if data[pos : pos + 1] != b":":
            return None
        pos = _SPACE.match(data, pos + 1).end()  # type: ignore[union-attr]
        if b"\\" in name:
            try:
                name = json.loads(key.group()).encode("utf-8")
            except (ValueError, UnicodeEncodeError):
                return None
        text = name.decode("utf-8", "replace")
        if text in COUNTED_ARRAYS and data[pos : pos + 1] == b"[":
            elements = _elements(data, text, pos, limit)
            if elements is None:
                return None
            found.append(elements)
            pos = elements.end
            if text in pending and data.find(b'"' + name + b'"', pos) < 0:
                pending.discard(text)
                if not pending:
                    return found
        else:
            end = _value_end(data, pos)
            if end is None:
                return None
            pos = end
        pos = _SPACE.match(data, pos).end()  # type: ignore[union-attr]
        separator = data[pos : pos + 1]
        if separator == b"}":
            return found if not data[pos + 1 :].strip() else None
        if separator != b",":
            return None
        pos = _SPACE.match(data, pos + 1).end()  # type: ignore[union-attr]



VALUE_BYTES = 128
"""What one JSON value (a member of an object or array) may cost in memory while a file is validated:
pydantic parses the whole file into its own tree first (measured: 2,000,000 members of one object, 24 MiB,
took 230 MiB above the process's 150). A realistic run holds a value every 40 bytes or so, well within."""
_MEMORY_SLACK = 50 * 2**20
"""Of the promised 200 MiB, what is left once the process itself has started (about 150 MiB)."""


def value_allowance(size: int) -> int:
    """The most JSON values a file of ``size`` bytes may hold: what 5 times its size + the slack pays for."""
    return (5 * size + _MEMORY_SLACK) // VALUE_BYTES


def values_over_allowance(data: bytes) -> int | None:
    """The allowance of :func:`value_allowance` if ``data`` holds more JSON values than that, else ``None``.

    Counted first as every comma and opening bracket (in C; commas in strings count too, so it can only
    err high), and only if that passes the allowance, again outside strings, one step per value, no
    further than the allowance.
    """
    allowance = value_allowance(len(data))
    if data.count(b",") + data.count(b"[") + data.count(b"{") <= allowance:
        return None
    values, pos, match = 0, 0, _TO_SEPARATOR.match
    while (found := match(data, pos)) is not None:
        if data[found.start(1)] not in b"]}":
            values += 1
            if values > allowance:
                return allowance
        pos = found.end()
    return None


_ALWAYS_IN = {"trials": b'"metrics"', "failures": b'"message"', "summaries": b'"id"'}
"""A key every valid trial, failure and summary holds (both generations): how many times it occurs bounds
how many valid ones a file can hold."""


def may_hold_more(data: bytes, limit: int) -> list[str]:
    """Which of the trials, failures and summaries of ``data`` might be more than ``limit`` that pydantic would build.

    The runs' arrays stop at their first invalid element (``FailFast`` in :mod:`fmbench.runfile.models`), so only
    valid ones are built, and each holds its key of :data:`_ALWAYS_IN` (all of them an ``"id"``): counting
    those keys (in C, 25 ms for a 24 MiB file) settles it for nearly every file; only an array whose key
    occurs more than ``limit`` times, or any if a key could be spelled with an escape, is counted element
    by element.
    """
    if b"\\u00" in data:  # a key's ASCII letter spelled as an escape
        return list(COUNTED_ARRAYS)
    if data.count(_ALWAYS_IN["summaries"]) <= limit:  # every valid trial and failure holds an "id" too
        return []
    return [array for array, key in _ALWAYS_IN.items() if array == "summaries" or data.count(key) > limit]


