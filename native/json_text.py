"""Decoding the JSON text of result files with its nesting bounded.

Python's decoder recurses once per level: a file (or an ``Input`` or
``Response`` string) nested a few thousand levels deep ends in a
``RecursionError``, and one that still decodes can exhaust the stack of the
code that walks it later. Nothing Evaluations writes nests deeper than a few
levels, so text nested deeper than :data:`MAX_JSON_DEPTH` is refused before
it is decoded, as JSON that does not parse is: a ``json.JSONDecodeError``
naming the line and column where the limit was passed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

MAX_JSON_DEPTH = 256
"""The deepest nesting of objects and arrays decoded; a result document nests about six levels."""

_TO_BRACKET = re.compile(r'(?:[^"\[\]{}]++|"[^"\\]*+(?:\\.[^"\\]*+)*+")*+([\[\]{}])')
"""Text and whole strings up to the next bracket outside a string (never backtracks)."""


def nesting_too_deep(text: str, limit: int = MAX_JSON_DEPTH) -> int | None:
    """Where in ``text`` its nesting first passes ``limit`` levels, or ``None`` if it never does.

    One step per bracket outside a string; text that is not JSON stops the scan
    (the decoder then says what is wrong with it).
    """
    depth, pos, match = 0, 0, _TO_BRACKET.match
    while (found := match(text, pos)) is not None:
        if text[found.start(1)] in "[{":
            depth += 1
            if depth > limit:
                return found.start(1)
        else:
            depth -= 1
        pos = found.end()
    return None


def load_json(text: str) -> Any:
    """``json.loads(text)``, text nested deeper than :data:`MAX_JSON_DEPTH` refused as a ``JSONDecodeError``."""
    if text.count("[") + text.count("{") > MAX_JSON_DEPTH:  # fewer brackets cannot nest that deep
        at = nesting_too_deep(text)
        if at is not None:
            raise json.JSONDecodeError(f"nested more than {MAX_JSON_DEPTH} levels deep", text, at)
    try:
        return json.loads(text)
    except RecursionError:  # the stack was already deep where this was called
        raise json.JSONDecodeError("nested too deeply to decode", text, 0) from None


_SPACE = re.compile(r"[ \t\n\r]*")


class TooManyRows(ValueError):
    """A document's ``results`` array holds more than the limit; ``rows`` is how many it holds."""

    def __init__(self, rows: int) -> None:
        super().__init__(f"{rows} rows")
        self.rows = rows


class TextRows:
    """A document's ``results`` array kept as its text: each element is decoded when iteration reaches it and
    dropped after, so a command that passes rows through holds the file's text and one row, never every row
    decoded. Iterating again decodes again (the text was checked whole when it was counted)."""

    def __init__(self, text: str, start: int, count: int) -> None:
        self._text, self._start, self._count = text, start, count

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[Any]:
        decode, space, text = json.JSONDecoder().raw_decode, _SPACE.match, self._text
        pos = space(text, self._start + 1).end()
        for _ in range(self._count):
            value, pos = decode(text, pos)
            yield value
            pos = space(text, space(text, pos).end() + 1).end()  # past the comma (or the closing bracket)


def load_document(text: str, max_rows: int, *, lazy: bool = False) -> Any:
    """:func:`load_json` for a result document, its ``results`` array refused past ``max_rows`` elements
    before more than that many are kept (:class:`TooManyRows`): the decoded rows, not the file's bytes, are
    what a big artifact costs. The rest is counted, each element decoded and dropped. With ``lazy`` no row
    is kept: ``results`` is a :class:`TextRows` over ``text``, every element already decoded once (and
    checked) to count it."""
    if text.count("[") + text.count("{") > MAX_JSON_DEPTH:
        at = nesting_too_deep(text)
        if at is not None:
            raise json.JSONDecodeError(f"nested more than {MAX_JSON_DEPTH} levels deep", text, at)
    try:
        return _walk_document(text, max_rows, lazy)
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply to decode", text, 0) from None


def _walk_document(text: str, max_rows: int, lazy: bool = False) -> Any:
    """The top-level object key by key; anything unexpected is decoded by ``json.loads``, which gives the
    value (or the error, with its line and column) exactly as it would have."""
    decode, space = json.JSONDecoder().raw_decode, _SPACE.match
    pos = space(text, 0).end()
    if not text.startswith("{", pos):
        return json.loads(text)
    doc: dict[str, Any] = {}
    pos = space(text, pos + 1).end()
    if text.startswith("}", pos):
        return json.loads(text)
    while True:
        if not text.startswith('"', pos):
            return json.loads(text)
        key, pos = json.decoder.scanstring(text, pos + 1)
        pos = space(text, pos).end()
        if not text.startswith(":", pos):
            return json.loads(text)
        pos = space(text, pos + 1).end()
        if key == "results" and text.startswith("[", pos):
            start = pos
            doc[key], pos = _rows(text, pos, -1 if lazy else max_rows)
            if lazy:
                if doc[key] > max_rows:
                    raise TooManyRows(doc[key])
                doc[key] = TextRows(text, start, doc[key])
        else:
            doc[key], pos = decode(text, pos)
        pos = space(text, pos).end()
        if text.startswith(",", pos):
            pos = space(text, pos + 1).end()
            continue
        if text.startswith("}", pos) and space(text, pos + 1).end() == len(text):
            return doc
        return json.loads(text)


def _rows(text: str, pos: int, max_rows: int) -> tuple[Any, int]:
    """The elements of the array at ``pos`` (only how many when ``max_rows`` is -1) and where it ends."""
    decode, space = json.JSONDecoder().raw_decode, _SPACE.match
    rows: list[Any] = []
    count = 0
    pos = space(text, pos + 1).end()
    if text.startswith("]", pos):
        return (0 if max_rows < 0 else rows), pos + 1
    while True:
        value, pos = decode(text, pos)
        count += 1
        if count <= max_rows:
            rows.append(value)
        elif rows:
            rows = []  # over the limit: keep nothing more, only count
        pos = space(text, pos).end()
        if text.startswith(",", pos):
            pos = space(text, pos + 1).end()
            continue
        if text.startswith("]", pos) and max_rows < 0:
            return count, pos + 1
        if text.startswith("]", pos) and count > max_rows:
            raise TooManyRows(count)
        if text.startswith("]", pos):
            return rows, pos + 1
        json.loads(text)  # raises the decoder's own error at its place
        raise json.JSONDecodeError("expected ',' or ']'", text, pos)
