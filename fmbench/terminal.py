"""The command line's one way to print: whatever it prints, a terminal shows and never acts on.

Run files, sidecars and databases carry text a publisher did not write (a device name, a failure
message, a file name). Every command prints through :func:`echo` (or raises :func:`user_error`), so
an escape sequence in such text (an OSC 52 clipboard write, a colour, a cursor move) or a bidi
override reaches the terminal as visible escapes (:func:`fmbench.analysis.display.terminal_text`). A value
put on a line of a table or report is escaped whole with :func:`fmbench.analysis.display.terminal_value`,
so a newline in it cannot start a forged line.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click

from fmbench.analysis.display import terminal_text, terminal_value
from fmbench.errors import FmbenchError
from fmbench.redaction import redact

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress

VERBOSITY = "fmbench.verbosity"
"""Where ``-q``/``-v`` (:func:`fmbench.cli_options.verbosity_options`) leave their choice: the click context's
``meta``, which every nested context shares (so ``fmbench -q build`` and ``fmbench build -q`` say the same)."""


def verbosity() -> int:
    """-1 with ``-q``, 1 with ``-v``, else 0 (outside a command too)."""
    ctx = click.get_current_context(silent=True)
    return int(ctx.meta.get(VERBOSITY, 0)) if ctx is not None else 0


def info(text: str = "", *, err: bool = False) -> None:
    """An informational line (what was written, what is done): printed unless ``-q``."""
    if verbosity() >= 0:
        echo(text, err=err)


def informer() -> Callable[[str], None]:
    """:func:`info` with this command's choice taken now, for a library function that prints from other threads
    too (the click context is per thread)."""
    return echo if verbosity() >= 0 else _silent


def _silent(_: str) -> None:
    pass


def detail(text: str = "", *, err: bool = False) -> None:
    """A line of detail: printed only with ``-v``."""
    if verbosity() > 0:
        echo(text, err=err)


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
        error = user_error(exc)
        if exc.excerpt:  # the place in the input, under the message: lines with a caret, never a literal "\n"
            error.message += "\n" + terminal_text(exc.excerpt)
        raise error from None


def text_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A table, one line per row, laid out by rich (columns as wide as their widest cell on screen, a wide character
    counted as two), a line of dashes under the headers; a cell's control characters (a newline too) are escaped
    and never read as markup, and no cell is wrapped or cut."""
    # slow to import (rich): only a command that prints a table needs it
    from rich.box import Box
    from rich.cells import cell_len
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    cells = [[("" if v is None else terminal_value(v)) for v in row] for row in rows]
    table = Table(box=_dashed_head(Box), show_edge=False, pad_edge=False, padding=(0, 1, 0, 0), collapse_padding=True)
    for header in headers:
        table.add_column(Text(header), no_wrap=True, overflow="ignore")
    for row in cells:
        table.add_row(*(Text(v) for v in row))
    widths = [max([cell_len(h)] + [cell_len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    out = io.StringIO()
    console = Console(file=out, width=sum(widths) + 2 * len(widths) + 1, color_system=None, force_terminal=False,
                      highlight=False, markup=False, emoji=False, soft_wrap=False)
    console.print(table)
    return "\n".join(line.rstrip() for line in out.getvalue().splitlines())


def _dashed_head(box: Any) -> Any:
    """rich's ``Box`` (given, as rich is imported only for a table) of no lines but dashes under the headers;
    columns two spaces apart (the divider and a cell's right padding). No lines but dashes under the headers; columns two spaces apart (the divider and a cell's right padding)."""
    return box("    \n    \n -  \n    \n    \n    \n    \n    \n", ascii=True)


def progress_bar(label: str, console: Console) -> Progress:
    """A transient progress bar that fits the terminal: the label, the count done of the total and the time left
    keep their width; the bar shrinks to what is left, and the current file's name is cut with an ellipsis (at 80
    columns the count is never squeezed)."""
    # slow to import (rich): only a progress bar on a terminal needs it
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )
    from rich.table import Column

    return Progress(
        TextColumn(label, table_column=Column(no_wrap=True, min_width=len(label))),
        BarColumn(bar_width=None, table_column=Column(ratio=1, min_width=10)),
        MofNCompleteColumn(table_column=Column(no_wrap=True, min_width=13, justify="right")),
        TimeRemainingColumn(table_column=Column(no_wrap=True, min_width=7)),
        # a file's name is shown, never read as markup, and cut to the room left
        TextColumn("{task.description}", markup=False,
                   table_column=Column(no_wrap=True, overflow="ellipsis", max_width=32)),
        console=console,
        transient=True,
    )
