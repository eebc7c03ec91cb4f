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
