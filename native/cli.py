"""``fmbench native …``: the command group the core command line attaches.

Each command parses its arguments and calls one library function; an
:class:`ArtifactError` becomes a one-line error message.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import click

from fmbench.cli_options import MAX_BYTES_OPTION, MAX_TRIALS_OPTION, verbosity_options
from fmbench.runfile.reader import DEFAULT_MAX_BYTES
from fmbench.terminal import echo, text_table, user_error, user_errors, verbosity

from .compare import compare_files
from .errors import ArtifactError, GateRuleError
from .reader import DEFAULT_MAX_ROWS, ReadLimits, raw_document
from .replay import write_replay
from .reports import SAMPLE_KINDS, comparison_text, inspect_path, report_path, stream_samples


def _fail_on(errors: Sequence[ArtifactError]) -> None:
    """Report unreadable artifacts after the readable ones were shown."""
    if not errors:
        return
    if len(errors) == 1:
        raise user_error(errors[0])
    for error in errors:
        echo(f"Error: {error}", err=True)
    raise user_error(f"{len(errors)} artifacts could not be read")


_EXISTING = click.Path(exists=True, path_type=Path)


def _read_limits(command: Callable[..., None]) -> Callable[..., None]:
    """``--max-bytes`` and ``--max-rows`` on a command that reads result files, handed to it as ``limits``."""

    @click.option(
        "--max-bytes", "artifact_bytes", type=click.IntRange(min=1), default=DEFAULT_MAX_BYTES, show_default=True,
        help="Refuse a result file larger than this (counted while it is read).",
    )
    @click.option(
        "--max-rows", type=click.IntRange(min=1), default=DEFAULT_MAX_ROWS, show_default=True,
        help="Refuse a result file of more rows than this (all its documents together).",
    )
    @functools.wraps(command)
    def wrapped(*args: Any, artifact_bytes: int, max_rows: int, **kwargs: Any) -> None:
        command(*args, limits=ReadLimits(artifact_bytes, max_rows), **kwargs)

    return wrapped


@click.group(name="native")
@verbosity_options()
def native() -> None:
    """Apple Evaluations artifacts (.xcevalresult): inspect, list, compare, replay, ingest."""


@native.command("inspect")
@click.argument("file", type=_EXISTING)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.option("--raw-json", is_flag=True, help="Print the document exactly as stored, byte for byte.")
@click.option("--summary-only", is_flag=True, help="Only metadata and aggregates, no metric profiles.")
@_read_limits
@verbosity_options()
def inspect_command(file: Path, as_json: bool, raw_json: bool, summary_only: bool, limits: ReadLimits) -> None:
    """Metadata, summary metrics and per-metric profiles of FILE (or a folder).

    Profiles follow xceval's conventions (Booleans are not numeric, the median
    of an even count averages the two middle values, sample variance).
    """
    if raw_json and (summary_only or as_json):
        raise click.UsageError("--raw-json prints the stored document alone; drop --json and --summary-only")
    if raw_json:
        with user_errors():
            content = raw_document(file, limits)
        click.echo(content, nl=False)  # bytes go to the binary stream unchanged
        return
    report = inspect_path(file, limits)
    if summary_only:
        output = report.summary_json() if as_json else report.summary_text()
    else:
        output = report.to_json() if as_json else report.to_text()
    if output:
        echo(output)
    _fail_on(report.errors)


@native.command("samples")
@click.argument("file", type=_EXISTING)
@click.option("--jsonl", is_flag=True, help="One JSON object per row.")
@click.option("--only-failures", is_flag=True, help="Only rows that failed a metric (the --metric one, if given).")
@click.option("--metric", metavar="NAME", default=None, help="Only rows with this metric column.")
@click.option(
    "--kind",
    type=click.Choice(SAMPLE_KINDS),
    default=None,
    help="Only rows where a metric (the --metric one, if given) has this kind; fail includes a pass whose value is false.",
)
@_read_limits
@verbosity_options()
def samples_command(
    file: Path, jsonl: bool, only_failures: bool, metric: str | None, kind: str | None, limits: ReadLimits
) -> None:
    """One normalized row per line."""
    stream = stream_samples(file, only_failures=only_failures, metric=metric, kind=kind, limits=limits)
    for line in stream.lines(jsonl=jsonl):  # each row written as it is made, never every row at once
        echo(line)
    _fail_on(stream.errors)


@native.command("report")
@click.argument("file", type=_EXISTING)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@_read_limits
@verbosity_options()
def report_command(file: Path, as_json: bool, limits: ReadLimits) -> None:
    """Per-metric profiles as xceval computes them, then the rows with issues.

    Issues are failed metrics and differences between the response and
    Expected at JSON paths. An empty Expected is no expectation (xceval
    compares "" and so reports false mismatches on FoundationModelsBench replays).
    """
    reports = report_path(file, limits)
    output = reports.to_json() if as_json else reports.to_text()
    if output:
        echo(output)
    _fail_on(reports.errors)


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
@_read_limits
@verbosity_options()
def compare_command(
    ctx: click.Context, baseline: Path, candidate: Path, as_json: bool, gates: tuple[str, ...], limits: ReadLimits
) -> None:
    """Compare summary metrics of BASELINE and CANDIDATE; exit 1 when a gate fails."""
    with user_errors():
        try:
            comparison = compare_files(baseline, candidate, gates=gates, limits=limits)
        except GateRuleError as error:
            raise click.BadParameter(str(error), param_hint="--gate") from None
    if as_json:
        echo(json.dumps(comparison.to_dict(), indent=2, sort_keys=True, ensure_ascii=False))
    else:
        echo(comparison_text(comparison))
    if not comparison.gates_passed:
        failed = sum(not outcome.passed for outcome in comparison.gates)
        echo(f"Error: {failed} of {len(comparison.gates)} gates did not pass", err=True)
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
@MAX_BYTES_OPTION
@MAX_TRIALS_OPTION
@verbosity_options()
def replay_command(run: Path, output_dir: Path, max_bytes: int, max_trials: int) -> None:
    """Write the deterministic replay artifact of a recorded RUN file."""

    with user_errors():
        path = write_replay(run, output_dir, max_bytes=max_bytes, max_trials=max_trials)
    echo(str(path))


@native.command("ingest")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option(
    "--db",
    "db",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="DuckDB file (default: $FMBENCH_DB, else ./fmbench.duckdb).",
)
@_read_limits
@verbosity_options(quiet="Print only the documents that errored, and the totals.")
def ingest_command(paths: tuple[Path, ...], db: Path | None, limits: ReadLimits) -> None:
    """Ingest result documents (files, JSON Lines, exported folders) into the database.

    Rows are linked to the ingested trials their recordID names. A file that
    cannot be read is reported with its place; the rest still lands. Exits 1
    if any document errored.
    """

    # slow to import (duckdb, Jinja, pyarrow behind it): only the command that runs loads it
    from .store import ingest_artifacts

    with user_errors():
        report = ingest_artifacts(paths, db, limits)
    shown = [o for o in report.outcomes if verbosity() >= 0 or o.status == "error"]
    if shown:
        echo(
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
                    for outcome in shown
                ],
            )
        )
    echo(
        f"{report.count('ingested')} ingested, {report.count('duplicate')} skipped as duplicates, "
        f"{report.count('error')} errored"
    )
    if not report.ok:
        raise SystemExit(1)


@native.command("validate")
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--strict", is_flag=True, help="Unknown fields, columns and kinds are errors, not notes.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@click.pass_context
@_read_limits
@verbosity_options()
def validate_command(
    ctx: click.Context, paths: tuple[Path, ...], strict: bool, as_json: bool, limits: ReadLimits
) -> None:
    """Check the structure of result files (folders recursively); exit 1 on an error.

    Unknown fields are notes, since later versions of the format may add them;
    --strict makes them errors. Each finding names the file and the place.
    """
    # slow to import (duckdb, Jinja, pyarrow behind it): only the command that runs loads it
    from .validation import validate_paths

    report = validate_paths(list(paths), strict=strict, limits=limits)
    if as_json:
        echo(report.to_json())
    else:
        for finding in report.findings:
            echo(str(finding), err=finding.severity == "error")
        echo(
            f"{report.documents} documents checked, {len(report.errors)} errors, "
            f"{len(report.findings) - len(report.errors)} notes"
        )
    if not report.ok:
        ctx.exit(1)


@native.command("list")
@click.argument("path", type=_EXISTING)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
@_read_limits
@verbosity_options()
def list_command(path: Path, as_json: bool, limits: ReadLimits) -> None:
    """Every result in a file, JSON Lines collection or folder (recursively, with its manifest)."""

    # slow to import (duckdb, Jinja, pyarrow behind it): only the command that runs loads it
    from .result_sets import list_results

    listing = list_results(path, limits)
    if as_json:
        echo(listing.to_json())
    elif listing.results:
        echo(
            text_table(
                ["source", "evaluation", "result", "start", "end", "rows", "test"],
                [
                    (
                        item.source + (f" line {item.line}" if item.line is not None else ""),
                        item.evaluation_id or "not recorded",
                        item.result_id or "not recorded",
                        item.start_time or "not recorded",
                        item.end_time or "not recorded",
                        item.row_count,
                        item.test_identifier or "-",
                    )
                    for item in listing.results
                ],
            )
        )
    _fail_on(listing.errors)


@native.command("convert")
@click.argument("source", type=_EXISTING)
@click.argument("target", type=click.Path(path_type=Path))
@click.option("--force", is_flag=True, default=False,
              help="Replace an existing file of TARGET that holds something else (by default it is refused, named, "
              "and nothing is written).")
@_read_limits
@verbosity_options()
def convert_command(source: Path, target: Path, force: bool, limits: ReadLimits) -> None:
    """Convert between a result document (.xcevalresult), JSON Lines (.jsonl) and a folder.

    A TARGET ending in .jsonl gets one document per line; one ending in
    .xcevalresult gets the single document; any other TARGET is a folder with
    one file per result, named by its result id. An existing file is replaced
    only when it already holds what would be written, or with --force.
    """
    # slow to import (duckdb, Jinja, pyarrow behind it): only the command that runs loads it
    from .result_sets import convert

    with user_errors():
        written = convert(source, target, force=force, limits=limits)
    for path in written:
        echo(str(path))


@native.command("pipeline")
@click.argument("config", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--set", "assignments", multiple=True, metavar="KEY=VALUE", help="Value of ${KEY} in the manifest. Repeatable.")
@click.option(
    "--step-timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=1800.0,
    show_default=True,
    help="Seconds each step may run.",
)
@click.option("--force", is_flag=True, help="Replace the artifacts folder if it exists.")
@click.option("--json", "as_json", is_flag=True, help="Print the pipeline report as JSON.")
@click.pass_context
@verbosity_options()
def pipeline_command(
    ctx: click.Context,
    config: Path,
    assignments: tuple[str, ...],
    step_timeout: float,
    force: bool,
    as_json: bool,
) -> None:
    """Run an xceval pipeline manifest (xceval.pipeline/v1): steps, then one analysis folder.

    Exits 1 when a step or a gate fails. A manifest that requires Xcode is
    refused on a machine without it.
    """
    # slow to import (duckdb, Jinja, pyarrow behind it): only the command that runs loads it
    from .pipeline import parse_settings, run_pipeline

    with user_errors():
        outcome = run_pipeline(
            config, parse_settings(assignments), step_timeout=step_timeout, force=force
        )
    if as_json:
        echo(json.dumps(outcome.to_dict(), indent=2, sort_keys=True, ensure_ascii=False))
    else:
        echo(outcome.to_text())
    if not outcome.passed:
        ctx.exit(1)
