"""The ``fmbench`` command: each command parses its arguments and calls one library function.

Domain errors become one-line messages here and nowhere else.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from fmbench import __version__
from fmbench.analysis.display import terminal_value
from fmbench.cli_options import MAX_BYTES_OPTION, MAX_TRIALS_OPTION, verbosity_options
from fmbench.redaction import address_problem, redact
from fmbench.terminal import (
    detail,
    echo,
    info,
    informer,
    progress_bar,
    text_table,
    user_error,
    user_errors,
    verbosity,
)

if TYPE_CHECKING:
    from fmbench.project import Project

DB_OPTION = click.option(
    "--db",
    "db",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="DuckDB file (default: $FMBENCH_DB, else the project's database, else ./fmbench.duckdb).",
)


def _remember_project(ctx: click.Context, _: click.Parameter, value: Path | None) -> Path | None:
    if value is not None:
        ctx.meta["fmbench.project"] = value
    return value


PROJECT_OPTION = click.option(
    "--project",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    expose_value=False,
    is_eager=True,
    callback=_remember_project,
    help="The project folder (holding fmbench.toml); default: found from the current folder upward.",
)


def _project() -> Project | None:
    """The project of ``--project``, else the one around the current folder, else none."""
    # slow to import (duckdb, Jinja, pyarrow behind it): only the command that runs loads it
    from fmbench.project import discover_project

    with user_errors():
        return discover_project(click.get_current_context().meta.get("fmbench.project"))


def _db(db: Path | None, project: Project | None) -> Path | None:
    """``--db``, then ``$FMBENCH_DB``, then the project's database, then the default."""
    return project.database_for(db) if project is not None else db


def _registry(project: Project | None) -> Any:
    if project is None:
        return None
    with user_errors():
        return project.registry()


def _progress_reporter(enabled: bool) -> tuple[Callable[[int, int, str], None] | None, Callable[[], None]]:
    """A progress bar on stderr for long batches; nothing when stderr is not a terminal."""
    if not enabled or not sys.stderr.isatty():
        return None, lambda: None
    # slow to import (rich): only a progress bar on a terminal needs it
    from rich.console import Console

    progress = progress_bar("ingesting", Console(stderr=True))
    task = progress.add_task("", total=None)
    progress.start()

    def update(done: int, total: int, name: str) -> None:
        progress.update(task, completed=done, total=total, description=terminal_value(name))

    return update, progress.stop


def _stage_reporter(enabled: bool) -> tuple[Callable[[str, int, int], None] | None, Callable[[], None]]:
    """A build's progress on stderr, a bar a stage (``resampling`` devices, then ``rendering`` files), each taken
    away when the next starts; nothing when stderr is not a terminal."""
    if not enabled or not sys.stderr.isatty():
        return None, lambda: None
    # slow to import (rich): only a progress bar on a terminal needs it
    from rich.console import Console

    console = Console(stderr=True)
    shown: dict[str, Any] = {}

    def stop() -> None:
        bar = shown.pop("bar", None)
        if bar is not None:
            bar.stop()

    def update(stage: str, done: int, total: int) -> None:
        if shown.get("stage") != stage:
            stop()
            bar = progress_bar(stage, console)
            unit = "devices" if stage == "resampling" else "files"
            shown.update(stage=stage, bar=bar, task=bar.add_task(unit, total=total))
            bar.start()
        shown["bar"].update(shown["task"], completed=done, total=total)

    return update, stop


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="fmbench")
@PROJECT_OPTION
@verbosity_options()
def main() -> None:
    """Publish FoundationModelsBench runs: ingest, check, summarize, build and serve.

    Start a results site of your own with `fmbench init DIR`; in that folder (or
    below it, or with --project DIR) every command uses its settings.
    """


@main.command()
@click.argument("folder", type=click.Path(file_okay=True, path_type=Path))
@click.option("--title", default=None, help="The site's title (default: FoundationModelsBench results).")
@click.option("--site-url", default=None, metavar="URL",
              help="The address the site is published at (default: from the folder's GitHub remote, if any).")
@verbosity_options(quiet="Print only warnings and errors.", verbose="Also say where the project is and how the workflow "
                   "installs fmbench.")
def init(folder: Path, title: str | None, site_url: str | None) -> None:
    """Make FOLDER a results project: settings, revision registry, methodology notes, runs/ and a Pages workflow."""
    # slow to import (duckdb, Jinja, pyarrow behind it): only the command that runs loads it
    from fmbench.scaffold import init_project

    with user_errors():
        report = init_project(folder, title=title, site_url=site_url)
    for path in report.files:
        info(f"wrote {path.relative_to(report.root)}")
    if report.install_warning:
        echo(f"warning: {report.install_warning}", err=True)
    info(
        f"project ready in {report.root}: copy run files into runs/, then `fmbench build` (and `fmbench serve` "
        "to preview); push to GitHub to publish"
        + ("" if report.site_url else "; set site.site_url in fmbench.toml to the address it will be published at")
    )


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@DB_OPTION
@MAX_BYTES_OPTION
@MAX_TRIALS_OPTION
@click.option("--json", "as_json", is_flag=True, help="Print the outcome of every file as JSON.")
@PROJECT_OPTION
@verbosity_options(quiet="Print only errors and the totals (no progress bar).",
                   verbose="Name each file by its whole path, not its name alone.")
def ingest(paths: tuple[Path, ...], db: Path | None, max_bytes: int, max_trials: int, as_json: bool) -> None:
    """Ingest run files (and folders of them, recursively) into the database.

    A file that cannot be read is reported with its place; the rest of the
    batch still lands. Exits 1 if any file errored.
    """
    # slow to import (duckdb, Jinja, pyarrow behind it): only the command that runs loads it
    from fmbench.ingest import ingest_paths

    quiet, verbose = verbosity() < 0, verbosity() > 0
    project = _project()
    registry = _registry(project)
    update, stop = _progress_reporter(not quiet and not as_json)
    try:
        with user_errors():
            report = ingest_paths(
                list(paths), _db(db, project), registry=registry, max_bytes=max_bytes, progress=update,
                max_trials=max_trials,
            )
    finally:
        stop()
    if as_json:
        echo(json.dumps({"outcomes": [o.__dict__ for o in report.outcomes]}, indent=2))
        sys.exit(0 if report.ok else 1)
    shown = [o for o in report.outcomes if not quiet or o.status == "error"]
    if shown:
        echo(
            text_table(
                ["status", "run", "verdict", "file", "detail"],
                [(o.status, o.run_id or "-", o.verdict or "-", o.path if verbose else Path(o.path).name, o.message)
                 for o in shown],
            )
        )
    for o in report.outcomes:
        for warning in o.warnings:
            echo(f"warning: {warning}", err=True)
    echo(
        f"{report.count('ingested')} ingested, {report.count('updated')} updated, "
        f"{report.count('duplicate')} skipped as duplicates, {report.count('error')} errored"
    )
    if not report.ok:
        sys.exit(1)


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="One JSON object per file, in a list.")
@MAX_BYTES_OPTION
@MAX_TRIALS_OPTION
@PROJECT_OPTION
@verbosity_options(quiet="Print only the files that cannot be read, or whose sidecar cannot be read.")
def validate(paths: tuple[Path, ...], as_json: bool, max_bytes: int, max_trials: int) -> None:
    """Check run files without a database: generation, errors, verdict, summary mismatches, sidecar problems.

    Exits 1 when a file, or its sidecar, cannot be read; an unknown sidecar key is listed but passes.
    """
    # slow to import (duckdb, Jinja, pyarrow behind it): only the command that runs loads it
    from fmbench.ingest.validate import validate_paths

    registry = _registry(_project())
    with user_errors():
        results = validate_paths(list(paths), max_bytes=max_bytes, registry=registry, max_trials=max_trials)
    if as_json:
        echo(json.dumps([r.to_json() for r in results], indent=2, ensure_ascii=False))
    else:
        for r in results:
            if verbosity() >= 0 or not r.readable or r.sidecar_unreadable:
                echo(r.describe())
    if any(not r.readable or r.sidecar_unreadable for r in results):
        sys.exit(1)


@main.command()
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "fmt", flag_value="json", help="The run and its recomputed scenario figures as JSON.")
@click.option("--markdown", "fmt", flag_value="markdown", help="The runner's own Markdown report, byte for byte.")
@MAX_BYTES_OPTION
@MAX_TRIALS_OPTION
@PROJECT_OPTION
@verbosity_options(quiet="Print the summary alone: no warning about the run's sidecar.")
def summarize(file: Path, fmt: str | None, max_bytes: int, max_trials: int) -> None:
    """Print a run's conditions, verdict and recomputed per-scenario figures."""
    # slow to import (duckdb, Jinja, pyarrow behind it): only the command that runs loads it
    from fmbench.analysis.report import markdown_summary, summary_json, text_summary
    from fmbench.analysis.run import analyze_file

    registry = _registry(_project())
    with user_errors():
        analysis = analyze_file(file, registry=registry, max_bytes=max_bytes, max_trials=max_trials)
    for problem in analysis.annotations.problems if analysis.annotations else ():
        info(f"warning: {problem}", err=True)
    if fmt == "json":
        echo(json.dumps(summary_json(analysis), indent=2, ensure_ascii=False))
    elif fmt == "markdown":
        echo(markdown_summary(analysis), nl=False)  # the runner's file ends without a newline
    else:
        echo(text_summary(analysis))


@main.command()
@DB_OPTION
@click.option("--json", "as_json", is_flag=True, help="A JSON list instead of a table.")
@PROJECT_OPTION
@verbosity_options(quiet="Print the table alone, without the count under it.")
def runs(db: Path | None, as_json: bool) -> None:
    """List the ingested runs, one per source file."""
    # slow to import (duckdb, Jinja, pyarrow behind it): only the command that runs loads it
    from fmbench.storage.queries import list_runs

    project = _project()
    with user_errors():
        rows = list_runs(_db(db, project))
    if as_json:
        echo(json.dumps([r.to_json() for r in rows], indent=2, ensure_ascii=False))
        return
    echo(
        text_table(
            ["run", "device", "hardware", "os build", "route", "suite", "started", "revision", "verdict"],
            [
                (
                    r.run_id,
                    r.device_name,
                    r.hardware_model or "not recorded",
                    r.os_build or "not recorded",
                    r.route,
                    r.suite,
                    r.started_at.strftime("%Y-%m-%d %H:%M"),
                    f"{r.revision_id or 'unknown'} ({r.revision_status})",
                    r.verdict,
                )
                for r in rows
            ],
        )
    )
    info(f"{len(rows)} run(s)")


PARQUET_OPTION = click.option(
    "--parquet",
    "parquet",
    default=None,
    metavar="DIR",
    help="Read a Parquet dataset (a folder, or an s3:// prefix) written by `fmbench export --parquet` "
    "instead of the DuckDB file.",
)


def _source(db: Path | None, parquet: str | None) -> Path | str | None:
    """The database to read: ``--parquet`` or ``--db`` (not both)."""
    if parquet is not None and db is not None:
        raise click.UsageError("give --db or --parquet, not both")
    return parquet if parquet is not None else db


@main.command()
@DB_OPTION
@PARQUET_OPTION
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder to write the site into, replaced atomically (default: the project's, else ./_site).")
@click.option("--base-url", default=None,
              help="Sub-path (or absolute URL) the site is served under (default: the path of the project's "
              "site_url, else /).")
@click.option("--originals", type=click.Choice(["gzip", "link", "copy"]), default=None,
              help="How the site carries the original run files: gzip (default: byte-identical once decompressed), "
              "link (to the project's repository, no copy) or copy. Overrides the project's [publishing] originals.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
              help="Processes that render at once (default: the machine's cores; 1: one process). A build with "
              "little to render uses one whatever this says.")
@click.option("--strict", is_flag=True,
              help="Exit 1 when a run file cannot be read, or a sidecar cannot be read or holds an unknown key (the "
              "site is built all the same); the project's [publishing] strict = true does the same.")
@click.option("--json", "as_json", is_flag=True,
              help="Print what the build did as one JSON object (the files mirrored, the site, the summary, the "
              "warnings) instead of lines.")
@PROJECT_OPTION
@verbosity_options(quiet="Print only warnings, errors and the summary's findings (no progress bars).",
                   verbose="Also print every file the build rendered.")
@MAX_BYTES_OPTION
@MAX_TRIALS_OPTION
def build(
    db: Path | None, parquet: str | None, out: Path | None, base_url: str | None, originals: str | None,
    jobs: int | None, strict: bool, as_json: bool, max_bytes: int, max_trials: int,
) -> None:
    """Build the static site from the database, rendering only the pages whose inputs changed.

    In a project, the database is first made to hold exactly the runs folder's files
    (each file ingested, replaced or dropped is named), then the site is built with
    the project's title, registry and methodology notes; --max-bytes and --max-trials limit the run files it
    ingests.
    A run file that cannot be read is left out and named in full; the build still exits 0 unless --strict.

    It ends with a summary: the runs publishable, exploratory and invalid, the files refused or left
    out, the benchmark commits no revision of the registry holds (and where to add them), and
    methodology notes that still hold fmbench init's template. Under GitHub Actions each finding is
    also an annotation and the summary goes to $GITHUB_STEP_SUMMARY.
    """
    # slow to import (duckdb, Jinja, pyarrow behind it): only the command that runs loads it
    from fmbench.project import run_build

    _source(db, parquet)  # refuses --db with --parquet
    problem = None if base_url is None else address_problem(base_url)
    if problem:
        raise click.UsageError(f"--base-url: {problem}")
    project = _project()
    talk = not (verbosity() < 0 or as_json)
    bars = _BuildBars(talk, mirroring=project is not None)
    with user_errors():
        try:
            built = run_build(
                project, db=db, parquet=parquet, out=out, base_url=base_url,
                originals=originals, strict=strict, jobs=jobs, echo=echo if talk else None, max_bytes=max_bytes,
                max_trials=max_trials, progress=bars.ingest, build_progress=bars.build,
            )
        finally:
            bars.stop()
    _report_build(built, as_json=as_json, talk=talk)


class _BuildBars:
    """A build's progress on a terminal: a bar for the ingest of new files (a project's mirroring), then a bar a
    stage of the build (see :func:`_stage_reporter`); nothing when stderr is not a terminal."""

    def __init__(self, enabled: bool, *, mirroring: bool) -> None:
        self._ingesting, self._stop_ingesting = _progress_reporter(enabled and mirroring)
        self._stages, self._stop_stages = _stage_reporter(enabled)

    @property
    def ingest(self) -> Callable[[int, int, str], None] | None:
        return None if self._ingesting is None else self._ingested

    @property
    def build(self) -> Callable[[str, int, int], None] | None:
        return None if self._stages is None else self._built

    def _ingested(self, done: int, total: int, name: str) -> None:
        if self._ingesting is not None:
            self._ingesting(done, total, name)
        if done >= total:
            self._stop_ingesting()  # the bar goes once the files are in, before the pages render

    def _built(self, stage: str, done: int, total: int) -> None:
        self._stop_ingesting()  # the ingest's bar goes first (it stays up when mirroring had nothing to ingest)
        if self._stages is not None:
            self._stages(stage, done, total)

    def stop(self) -> None:
        self._stop_ingesting()
        self._stop_stages()


def _report_build(built: Any, *, as_json: bool, talk: bool) -> None:
    """What ``fmbench build`` prints of a :class:`fmbench.project.ProjectBuild`; exit 1 when its summary fails."""
    # slow to import (duckdb, Jinja, pyarrow behind it): only the command that runs loads it
    from fmbench.publish.summary import build_json, report_to_github

    report, summary = built.report, built.summary
    install_warnings = (built.install_warning,) if built.install_warning else ()
    if as_json:
        echo(json.dumps(build_json(report, summary, built.mirrored, install_warnings), indent=2, ensure_ascii=False))
        with user_errors():  # the annotations on stderr, so that stdout stays one JSON object
            report_to_github(summary, lambda line: echo(line, err=True), os.environ)
        if summary.failed:
            sys.exit(1)
        return
    if verbosity() > 0:
        for path in report.rendered:
            echo(f"rendered {path}")
    if talk:
        echo(
            f"{report.pages} pages, {report.data_files} data files, {report.assets} assets in {report.out} "
            f"({report.bytes_total / 2**20:.1f} MiB, {len(report.rendered)} rendered, {len(report.changed)} changed, "
            f"{len(report.removed)} removed, {report.seconds:.1f} s)"
        )
        if report.largest_run_page:
            path, size = report.largest_run_page
            echo(f"largest run page: {path} ({size / 1024:.0f} KiB)")
    for warning in [*install_warnings, *report.warnings]:
        echo(f"warning: {warning}", err=True)
    lines = summary.lines()
    for line in lines if talk else lines[1:]:  # quiet: the findings, without the counts
        echo(line)
    with user_errors():
        report_to_github(summary, echo, os.environ)
    if summary.failed:
        sys.exit(1)


@main.command()
@DB_OPTION
@PARQUET_OPTION
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on (loopback by default).")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(1, 65535))
@click.option("--watch", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Ingest result files (and sidecars) that appear in this folder.")
@click.option("--no-warm-up", "no_warm_up", is_flag=True,
              help="Do not make the comparison pages in the background after starting (each is made on its first request).")
@PROJECT_OPTION
@MAX_BYTES_OPTION
@MAX_TRIALS_OPTION
@verbosity_options(quiet="Do not name the run files mirrored before it starts (the server's log is printed as ever).")
def serve(
    db: Path | None, parquet: str | None, host: str, port: int, watch: Path | None, no_warm_up: bool,
    max_bytes: int, max_trials: int,
) -> None:
    """Serve the site live from the database or a Parquet dataset (a real WSGI server; never a debugger).

    In a project, the runs folder is mirrored into the database first and again whenever a file in it
    is added, changed or removed, and edits to the project's fmbench.toml, methodology notes and
    revision registry show on the next request; each is said in the log.
    """
    # slow to import (duckdb, Jinja, pyarrow behind it): only the command that runs loads it
    from fmbench.serving.serve import run_server

    _source(db, parquet)
    project = _project()
    with user_errors():
        if project is not None and parquet is None:
            # slow to import (duckdb, Jinja, pyarrow behind it): only the command that runs loads it
            from fmbench.ingest.mirror import mirror_runs

            mirror_runs(
                project.require_runs_dir(), project.database_for(db), project.registry(), echo=informer(),
                max_bytes=max_bytes, max_trials=max_trials,
            )
        run_server(
            _db(db, project), host=host, port=port, watch=watch, echo=echo, parquet=parquet,
            project=project, max_bytes=max_bytes, max_trials=max_trials, warm_up=not no_warm_up,
        )


@main.command(hidden=True)
@DB_OPTION
@PROJECT_OPTION
@MAX_BYTES_OPTION
@MAX_TRIALS_OPTION
@verbosity_options(quiet="Print nothing but errors.")
def mirror(db: Path | None, max_bytes: int, max_trials: int) -> None:
    """Make the project's database hold exactly its runs folder, one line a change (what serve's runs watcher runs
    in a child process; hidden: build and serve do it themselves)."""
    # slow to import (duckdb, Jinja, pyarrow behind it): only the command that runs loads it
    from fmbench.ingest.mirror import mirror_runs

    project = _project()
    if project is None:
        raise user_error("fmbench mirror needs a project (fmbench.toml here or above, or --project DIR)")
    with user_errors():
        report = mirror_runs(project.require_runs_dir(), project.database_for(db), project.registry(),
                             max_bytes=max_bytes, max_trials=max_trials)
    for line in report.describe_lines():
        info(line)


@main.command()
@DB_OPTION
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=Path("_site"), show_default=True)
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=click.IntRange(1, 65535))
@click.option("--no-serve", is_flag=True, help="Ingest and build, then stop.")
@verbosity_options(quiet="Print nothing but errors (the server's address included).")
def demo(db: Path | None, out: Path, host: str, port: int, no_serve: bool) -> None:
    """The main job in one command: ingest the bundled fixtures into a fresh database, build, serve.

    The database (the embedded default unless --db is given) is recreated, so the
    demo refuses one that holds runs other than the bundled fixtures.
    """
    # slow to import (duckdb, Jinja, pyarrow behind it): only the command that runs loads it
    from fmbench.demo import run_demo
    from fmbench.storage.db import default_db_path

    with user_errors():
        run_demo(default_db_path(db), out, host=host, port=port, serve=not no_serve, echo=informer())


@main.command()
@click.argument("baseline")
@click.argument("candidate")
@DB_OPTION
@click.option("--json", "fmt", flag_value="json", help="The comparison as JSON.")
@click.option("--markdown", "fmt", flag_value="markdown", help="The comparison as Markdown.")
@click.option("--rule", type=click.Choice(["latest", "first", "pooled"]), default="latest", show_default=True,
              help="Which runs a side uses when several match it.")
@click.option("--strict-os", is_flag=True, help="Only the workloads both sides can run (strict OS 26 vs OS 27).")
@PROJECT_OPTION
@verbosity_options()
def compare(baseline: str, candidate: str, db: Path | None, fmt: str | None, rule: str, strict_os: bool) -> None:
    """Compare a baseline with a candidate: each a run id, a run file or a quoted filter expression
    such as "device=Mac17,2 os_build=26A5353q route=onDevice suite=performance session=cold".

    Prints the label, what differs, the caveats and the per-scenario figures
    with intervals. Exits 1 with a one-line message when the comparison is
    refused or a side cannot be read.
    """
    # slow to import (duckdb, Jinja, pyarrow behind it): only the command that runs loads it
    from fmbench.analysis.tolerance import DEFAULT_TOLERANCE, Tolerance
    from fmbench.comparison.compare import compare_runs, sides_are_files

    project = _project()
    # Two run files and no --db: compared in memory, no database needed.
    in_memory = db is None and sides_are_files(baseline, candidate)
    # Inside a project, its practical threshold ([publishing.practical_change]), as its site uses.
    tolerance = (
        Tolerance.of(project.config.publishing.practical_change) if project is not None else DEFAULT_TOLERANCE
    )
    with user_errors():
        result = compare_runs(baseline, candidate, None if in_memory else _db(db, project),  # type: ignore[arg-type]
                              rule=rule, strict_os=strict_os, registry=_registry(project) if in_memory else None,
                              tolerance=tolerance)
    if fmt == "json":
        echo(json.dumps(result.to_json(), indent=2, ensure_ascii=False))
    elif fmt == "markdown":
        echo(result.to_markdown(), nl=False)
    else:
        echo(result.to_text())


@main.command()
@DB_OPTION
@click.option("--json", "as_json", is_flag=True, help="The report as JSON.")
@PROJECT_OPTION
@verbosity_options()
def verify(db: Path | None, as_json: bool) -> None:
    """Check the database against the originals it keeps: every source's SHA-256, every run's
    figures and verdict recomputed. Prints every difference; exits 1 if there is any.
    """
    # slow to import (duckdb, Jinja, pyarrow behind it): only the command that runs loads it
    from fmbench.ingest.verify import verify_database

    project = _project()
    registry = _registry(project)
    with user_errors():
        report = verify_database(_db(db, project), registry=registry)
    echo(json.dumps(report.to_json(), indent=2, ensure_ascii=False) if as_json else report.describe())
    if not report.ok:
        sys.exit(1)


@main.command()
@DB_OPTION
@click.option("--list", "list_only", is_flag=True, help="List applied and pending migrations; change nothing.")
@click.option("--json", "as_json", is_flag=True, help="The migrations as JSON.")
@PROJECT_OPTION
@verbosity_options(quiet="Print nothing but errors when it migrates.",
                   verbose="After migrating, also list every migration and whether it is applied.")
def migrate(db: Path | None, list_only: bool, as_json: bool) -> None:
    """Bring an older database up to this fmbench: schema migrations, then re-deriving runs
    judged by older rules from their stored originals, then keeping originals stored raw
    gzipped, each in one transaction.

    In a project (this folder or one above it, or --project DIR) it is the project's database.
    """
    # slow to import (duckdb, Jinja, pyarrow behind it): only the command that runs loads it
    from fmbench.ingest.migrate import migrate_database, migration_status

    db = _db(db, _project())
    with user_errors():
        report = migration_status(db) if list_only else migrate_database(db)
    if as_json:
        echo(json.dumps(
            {"applied": report.applied_now, "migrations": [e.to_json() for e in report.entries]},
            indent=2, ensure_ascii=False,
        ))
        return
    if list_only:
        echo(report.describe())
        pending = len(report.pending)
        echo(f"{pending} pending: run `fmbench migrate` to apply them" if pending else "nothing pending")
        return
    for line in report.applied_now:
        info(f"applied {line}")
    info("the database is up to date" if report.applied_now else "nothing to migrate: the database is up to date")
    detail(report.describe())


@main.command()
@DB_OPTION
@click.option("--originals", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write every original run file (and sidecar) into this folder, byte-identical.")
@click.option("--parquet", "parquet", type=str, default=None, metavar="DIR|URL",
              help="Write the database as a Parquet dataset into this folder, or under an s3:// prefix through "
              "fsspec (the [s3] extra; credentials from the AWS variables or a profile), partitioned by device and "
              "OS build.")
@click.option("--trials-csv", "trials_csv", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Write every run's trials as CSV into this folder, one <run id>.trials.csv a run (the site holds "
              "its trials once, as gzipped JSON).")
@click.option("--force", is_flag=True, default=False,
              help="Replace a file of the --originals or --trials-csv folder that this export did not write, or "
              "that was edited since (by default such a file is refused, named, and nothing is written).")
@click.option("--json", "as_json", is_flag=True,
              help="Print what was written as one JSON object (each export's folder or location and its files, or "
              "the Parquet dataset's tables and rows) instead of lines.")
@PROJECT_OPTION
@verbosity_options(quiet="Print nothing but errors.", verbose="Also name every file written.")
def export(
    db: Path | None, originals: Path | None, parquet: str | None, trials_csv: Path | None, force: bool, as_json: bool
) -> None:
    """Export what the database holds."""
    if originals is None and parquet is None and trials_csv is None:
        raise click.UsageError("say what to export: --originals DIR, --parquet DIR and/or --trials-csv DIR")
    db = _db(db, _project())
    summary: dict[str, Any] = {}
    if trials_csv is not None:
        # slow to import (duckdb, Jinja behind it): only the command that runs loads it
        from fmbench.publish.trials_csv import export_trials_csv

        with user_errors():
            csv_files = export_trials_csv(db, trials_csv, force=force)
        summary["trials_csv"] = _written(trials_csv, csv_files, "trials CSV file(s)", as_json)
    if originals is not None:
        # slow to import (duckdb, Jinja, pyarrow behind it): only the command that runs loads it
        from fmbench.ingest.verify import export_originals

        with user_errors():
            written = export_originals(db, originals, force=force)
        summary["originals"] = _written(originals, written, "original file(s)", as_json)
    if parquet is not None:
        # slow to import (duckdb, Jinja, pyarrow behind it): only the command that runs loads it
        from fmbench.storage.dataset import export_parquet

        with user_errors():
            meta = export_parquet(db, parquet)
        tables = {name: int(t["rows"]) for name, t in sorted(meta["tables"].items())}
        rows = sum(tables.values())
        summary["parquet"] = {"location": redact(parquet), "schema_version": meta["schema_version"],
                              "rows": rows, "tables": tables}
        if not as_json:
            info(
                f"{len(tables)} table(s), {rows:,} row(s) written to {redact(parquet)} as Parquet "
                f"(schema version {meta['schema_version']})"
            )
            for name, count in tables.items():
                detail(f"  {name}: {count:,} row(s)")
    if as_json:
        echo(json.dumps(summary, indent=2, ensure_ascii=False))


def _written(folder: Path, files: list[Path], what: str, as_json: bool) -> dict[str, Any]:
    """An export's part of ``export --json`` (the folder and the files written in it, by their names there); said
    in a line (and a line a file with ``-v``) when not JSON."""
    names = sorted(os.path.relpath(f, folder) for f in files)
    if not as_json:
        info(f"{len(files)} {what} written to {folder}")
        for name in names:
            detail(f"  {name}")
    return {"folder": str(folder), "count": len(files), "files": names}


def _attach_groups() -> None:
    # slow to import (duckdb, Jinja, pyarrow behind it): only the command that runs loads it
    from fmbench.native.cli import native

    main.add_command(native)


_attach_groups()
