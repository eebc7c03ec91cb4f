"""``fmbench native …``: the command group the core command line attaches.

Each command parses its arguments and calls one library function; an
:class:`ArtifactError` becomes a one-line error message.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import click

from fmbench.errors import FmbenchError
from fmbench.reader import DEFAULT_MAX_BYTES

from .compare import compare_files
from .errors import ArtifactError, GateRuleError
from .replay import write_replay
from .reports import comparison_text, inspect_path, list_samples


@contextmanager
def _as_click_errors() -> Iterator[None]:
    try:
        yield
    except FmbenchError as error:
        raise click.ClickException(str(error)) from None


def _fail_on(errors: Sequence[ArtifactError]) -> None:
    """Report unreadable artifacts after the readable ones were shown."""
    if not errors:
        return
    if len(errors) == 1:
        raise click.ClickException(str(errors[0]))
    for error in errors:
        click.echo(f"Error: {error}", err=True)
    raise click.ClickException(f"{len(errors)} artifacts could not be read")


_EXISTING = click.Path(exists=True, path_type=Path)


@click.group(name="native")
def native() -> None:
    """Apple Evaluations artifacts (.xcevalresult): inspect, list, compare, replay, ingest."""


@native.command("inspect")
@click.argument("file", type=_EXISTING)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
def inspect_command(file: Path, as_json: bool) -> None:
    """Metadata, summary metrics and per-metric profiles of FILE (or a folder)."""
    report = inspect_path(file)
    output = report.to_json() if as_json else report.to_text()
    if output:
        click.echo(output)
    _fail_on(report.errors)


@native.command("samples")
@click.argument("file", type=_EXISTING)
@click.option("--jsonl", is_flag=True, help="One JSON object per row.")
def samples_command(file: Path, jsonl: bool) -> None:
    """One normalized row per line."""
    listing = list_samples(file)
    output = listing.to_jsonl() if jsonl else listing.to_text()
    if output:
        click.echo(output)
    _fail_on(listing.errors)


@native.command("compare")
@click.argument("baseline", type=_EXISTING)
@click.argument("candidate", type=_EXISTING)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.option(
    "--gate",
    "gates",
    multiple=True,
    metavar="RULE",
    help='A rule on the candidate, e.g. "FoundationModelsBench Prompt Pass >= 0.9" '
    'or "FoundationModelsBench TTFT Seconds delta <= 0.05". Repeatable.',
)
@click.pass_context
def compare_command(
    ctx: click.Context, baseline: Path, candidate: Path, as_json: bool, gates: tuple[str, ...]
) -> None:
    """Compare summary metrics of BASELINE and CANDIDATE; exit 1 when a gate fails."""
    with _as_click_errors():
        try:
            comparison = compare_files(baseline, candidate, gates=gates)
        except GateRuleError as error:
            raise click.BadParameter(str(error), param_hint="--gate") from None
    if as_json:
        click.echo(json.dumps(comparison.to_dict(), indent=2, sort_keys=True, ensure_ascii=False))
    else:
        click.echo(comparison_text(comparison))
    if not comparison.gates_passed:
        failed = sum(not outcome.passed for outcome in comparison.gates)
        click.echo(f"Error: {failed} of {len(comparison.gates)} gates did not pass", err=True)
        ctx.exit(1)


@native.command("replay")
@click.argument("run", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--output",
    "output_dir",
    required=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder for <run stem>.xcevalresult (created if missing).",
)
@click.option(
    "--max-bytes",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_BYTES,
    show_default=True,
    help="Refuse a run file larger than this.",
)
def replay_command(run: Path, output_dir: Path, max_bytes: int) -> None:
    """Write the deterministic replay artifact of a recorded RUN file."""
    from fmbench.cli import user_errors

    with _as_click_errors(), user_errors():
        path = write_replay(run, output_dir, max_bytes=max_bytes)
    click.echo(str(path))


@native.command("ingest")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--db",
    "db",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="DuckDB file (default: $FMBENCH_DB, else ./fmbench.duckdb).",
)
def ingest_command(paths: tuple[Path, ...], db: Path | None) -> None:
    """Ingest result documents (files, JSON Lines, exported folders) into the database.

    Rows are linked to the ingested trials their recordID names. A file that
    cannot be read is reported with its place; the rest still lands. Exits 1
    if any document errored.
    """
    from fmbench.cli import text_table, user_errors

    from .store import ingest_artifacts

    with user_errors():
        report = ingest_artifacts(paths, db)
    if report.outcomes:
        click.echo(
            text_table(
                ["status", "document", "kind", "rows", "linked", "detail"],
                [
                    (
                        outcome.status,
                        outcome.location,
                        "-"
                        if outcome.is_judge is None
                        else ("model judge" if outcome.is_judge else "deterministic"),
                        outcome.row_count if outcome.status != "error" else "-",
                        outcome.linked_row_count if outcome.status != "error" else "-",
                        outcome.message,
                    )
                    for outcome in report.outcomes
                ],
            )
        )
    click.echo(
        f"{report.count('ingested')} ingested, {report.count('duplicate')} skipped as duplicates, "
        f"{report.count('error')} errored"
    )
    if not report.ok:
        raise SystemExit(1)
