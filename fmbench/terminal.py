"""The command line's one way to print: whatever it prints, a terminal shows and never acts on.

Run files, sidecars and databases carry text a publisher did not write (a device name, a failure
message, a file name). Every command prints through :func:`echo` (or raises :func:`user_error`), so
an escape sequence in such text (an OSC 52 clipboard write, a colour, a cursor move) or a bidi
override reaches the terminal as visible escapes (:func:`fmbench.analysis.display.terminal_text`). A value
put on a line of a table or report is escaped whole with :func:`fmbench.analysis.display.terminal_value`,
so a newline in it cannot start a forged line.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import click

from fmbench.analysis.display import terminal_text, terminal_value
from fmbench.errors import FmbenchError
from fmbench.redaction import redact


def echo(text: str = "", *, err: bool = False, nl: bool = True) -> None:
    """Print ``text`` (lines of output, or JSON) with every control character but its line breaks and tabs
    escaped; in JSON the escapes are JSON's own, so it reads as the same value."""
    click.echo(terminal_text(text), err=err, nl=nl)


def user_error(message: object) -> click.ClickException:
    """A one-line error for click to print (``Error: ...``, exit status 1), its control characters escaped and
    any credentials in it masked (:func:`fmbench.redaction.redact`)."""
    return click.ClickException(redact(terminal_value(message)))


@contextmanager
def user_errors() -> Iterator[None]:
    """Turn fmbench's own errors into a one-line message and exit status 1."""
    try:
        yield
    except FmbenchError as exc:
        raise user_error(exc) from None


def text_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A table, one line per row: a cell's control characters (a newline too) are escaped."""
    cells = [[("" if v is None else terminal_value(v)) for v in row] for row in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()]
    lines.append("  ".join("-" * w for w in widths))
    for r in cells:
        lines.append("  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip())
    return "\n".join(lines)
