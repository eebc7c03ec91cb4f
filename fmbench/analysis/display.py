"""How a figure reads: one formatter per kind of number, shared by every output.

``None`` means "not recorded" and is never rendered as 0; callers decide how
absence looks (the site shows a "not recorded" marker, Markdown the words).
"""

from __future__ import annotations

import re
from datetime import datetime

from fmbench.runfile.names import hidden, visible

NOT_RECORDED = "not recorded"


def percent(value: float | None, digits: int = 1) -> str | None:
    return None if value is None else f"{value * 100:.{digits}f}%"


def seconds(value: float | None, digits: int = 3, space: bool = True) -> str | None:
    return None if value is None else f"{value:.{digits}f}{' ' if space else ''}s"


def rate(value: float | None, digits: int = 2) -> str | None:
    """Tokens (or characters) per second."""
    return None if value is None else f"{value:.{digits}f}"


def mebibytes(value: float | None) -> str | None:
    return None if value is None else f"{value / 2**20:,.0f} MiB"


def gigabytes(value: int | None) -> str | None:
    return None if value is None else f"{value / 2**30:.0f} GB"


def count(value: int | None) -> str | None:
    return None if value is None else f"{value:,}"


def confidence_text(confidence: float) -> str:
    """``95%``, ``99.95%``: a confidence level as a reader sees it."""
    text = f"{confidence * 100:.4f}".rstrip("0").rstrip(".")
    return f"{text}%"


def plural(n: int, one: str, many: str | None = None) -> str:
    """``1 trial``, ``5 trials``, ``1,024 trials``: a count with its noun in the right number (never "trial(s)")."""
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


def iso(value: datetime | None) -> str | None:
    return None if value is None else value.strftime("%Y-%m-%dT%H:%M:%SZ")


def yes_no(value: bool | None, yes: str = "yes", no: str = "no") -> str | None:
    return None if value is None else (yes if value else no)


def or_not_recorded(text: str | None) -> str:
    return NOT_RECORDED if text is None else text


# What a terminal would act on rather than show: C0 controls, DEL and C1 controls (ESC, CSI, OSC and the
# rest: an OSC 52 sequence writes the clipboard). They are escaped as JSON escapes them (``\\n``, ``\\u001b``).
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f]")
_LINE_CONTROLS = re.compile("[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f]|\r(?!\n)")
# Every other character that draws nothing or changes how the text around it reads (a zero-width space, the
# bidirectional embeddings, overrides and isolates, the line and paragraph separators, a no-break space, a tag
# character...), told by :func:`fmbench.runfile.names.hidden`; only a character past ASCII can be one.
_PAST_ASCII = re.compile("[^\x00-\x7f]")
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


def _escaped(match: re.Match[str]) -> str:
    char = match.group()
    return _SHORT.get(char) or f"\\u{ord(char):04x}"


_LOCALE_SPACES = frozenset("\u00a0\u2009\u202f")
"""The no-break, thin and narrow no-break spaces locales put in numbers ("66,7\u00a0%", "1\u202f250"): a report's
composed text keeps them (they show as a space); a value from a file still shows them as ``<U+00A0>``."""


def _json_escaped_if_hidden(match: re.Match[str]) -> str:
    char = match.group()
    if not hidden(char) or char in _LOCALE_SPACES:
        return char
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000  # past the Basic Multilingual Plane, JSON writes a surrogate pair
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def terminal_value(value: object) -> str:
    """One value from a file (a name, a title, a message) as a terminal shows it: on one line, every control
    character escaped as JSON escapes it (``\\n``, ``\\t``, ``\\u001b``...), and every other invisible or
    bidirectional character written as ``<U+200B>``, as pages show it (:func:`fmbench.runfile.names.visible`):
    a name holding a zero-width space reads differently from the name without it, and a right-to-left
    override cannot reorder what follows."""
    return visible(_CONTROLS.sub(_escaped, str(value)))


def terminal_text(text: str) -> str:
    """Composed output (lines of a table or report, or JSON) as the command line prints it: its line
    breaks and tabs kept, every other control character escaped as :func:`terminal_value` does, and any
    invisible or bidirectional character left in it escaped as JSON does (``\\u200b``), so JSON reads back
    as the same value and text shows the character as an escape, never acting on it."""
    text = _LINE_CONTROLS.sub(_escaped, text)
    return text if text.isascii() else _PAST_ASCII.sub(_json_escaped_if_hidden, text)
