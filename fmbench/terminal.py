"""The command line's one way to print: whatever it prints, a terminal shows and never acts on.

Run files, sidecars and databases carry text a publisher did not write (a device name, a failure
message, a file name). Every command prints through :func:`echo` (or raises :func:`user_error`), so
an escape sequence in such text (an OSC 52 clipboard write, a colour, a cursor move) or a bidi
override reaches the terminal as visible escapes (:func:`fmbench.display.terminal_text`). A value
put on a line of a table or report is escaped whole with :func:`fmbench.display.terminal_value`,
so a newline in it cannot start a forged line.
"""

from __future__ import annotations

import click

from fmbench.display import terminal_text, terminal_value


def echo(text: str = "", *, err: bool = False, nl: bool = True) -> None:
    """Print ``text`` (lines of output, or JSON) with every control character but its line breaks and tabs
    escaped; in JSON the escapes are JSON's own, so it reads as the same value."""
    click.echo(terminal_text(text), err=err, nl=nl)


def user_error(message: object) -> click.ClickException:
    """A one-line error for click to print (``Error: ...``, exit status 1), its control characters escaped."""
    return click.ClickException(terminal_value(message))
