"""Command-line options that ``fmbench`` and ``fmbench native`` share, each written once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

import click

from fmbench.runfile.reader import DEFAULT_MAX_BYTES, DEFAULT_MAX_TRIALS
from fmbench.terminal import VERBOSITY

F = TypeVar("F", bound=Callable[..., Any])

MAX_BYTES_OPTION = click.option(
    "--max-bytes",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_BYTES,
    show_default=True,
    help="Refuse a run file larger than this.",
)

MAX_TRIALS_OPTION = click.option(
    "--max-trials",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_TRIALS,
    show_default=True,
    help="Refuse a run file with more trials (or failures, or summaries) than this.",
)

def _choose_verbosity(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    if not value:
        return value
    level = 1 if param.name == "verbose" else -1
    if ctx.meta.get(VERBOSITY, level) != level:
        raise click.UsageError("give --quiet or --verbose, not both", ctx)
    ctx.meta[VERBOSITY] = level
    return value


def verbosity_options(
    quiet: str = "Print no progress and no informational lines: only the results, warnings and errors.",
    verbose: str = "Also print the detail of what the command does.",
) -> Callable[[F], F]:
    """``-q``/``--quiet`` and ``-v``/``--verbose``, read back with :func:`fmbench.terminal.verbosity` (errors are
    printed whatever they say); ``quiet`` and ``verbose``: what they do for this command, for its help."""

    def decorate(command: F) -> F:
        command = click.option("--verbose", "-v", is_flag=True, expose_value=False, callback=_choose_verbosity,
                               help=verbose)(command)
        return click.option("--quiet", "-q", is_flag=True, expose_value=False, callback=_choose_verbosity,
                            help=quiet)(command)

    return decorate
