"""Command-line options that ``fmbench`` and ``fmbench native`` share, each written once."""

from __future__ import annotations

import click

from fmbench.runfile.reader import DEFAULT_MAX_BYTES, DEFAULT_MAX_TRIALS

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
