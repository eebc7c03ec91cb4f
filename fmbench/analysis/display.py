"""How a figure reads: one formatter per kind of number, shared by every output.

``None`` means "not recorded" and is never rendered as 0; callers decide how
absence looks (the site shows a "not recorded" marker, Markdown the words).
"""

from __future__ import annotations

import re
from datetime import datetime

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


def plural(n: int, one: str, many: str | None = None) -> str:
    """``1 trial``, ``5 trials``, ``1,024 trials``: a count with its noun in the right number (never "trial(s)")."""
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


def iso(value: datetime | None) -> str | None:
    return None if value is None else value.strftime("%Y-%m-%dT%H:%M:%SZ")


def yes_no(value: bool | None, yes: str = "yes", no: str = "no") -> str | None:
    return None if value is None else (yes if value else no)


def or_not_recorded(text: str | None) -> str:
    return NOT_RECORDED if text is None else text


# What a terminal would act on rather than show: C0 controls, DEL, C1 controls (ESC, CSI, OSC and the
# rest: an OSC 52 sequence writes the clipboard), the bidirectional embeddings, overrides and isolates
# (text that reads in another order than it is stored) and the line and paragraph separators.
_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
_LINE_CONTROLS = re.compile("[\x00-\x08\x0b-\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]"
                            "|\r(?!\n)")
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}


def _escaped(match: re.Match[str]) -> str:
    char = match.group()
    return _SHORT.get(char) or f"\\u{ord(char):04x}"


def terminal_value(value: object) -> str:
    """One value (a name, a message) as a terminal shows it: on one line, every control character escaped.

    The escapes (``\\n``, ``\\t``, ``\\u001b``...) are also JSON's, so escaped text stays valid inside JSON.
    """
    return _CONTROLS.sub(_escaped, str(value))


def terminal_text(text: str) -> str:
    """Composed output (lines of a table or report, or JSON) as the command line prints it: its line
    breaks and tabs kept, every other control character escaped as :func:`terminal_value` does."""
    return _LINE_CONTROLS.sub(_escaped, text)
