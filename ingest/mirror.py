"""A project's database as a mirror of its runs folder.

Before a project's site is built, the database is made to hold exactly the
run files of the runs folder: a file not stored yet is ingested, a run whose
file (by name) now holds other bytes is replaced by them, a run whose file is
gone is dropped, and a run whose sidecar changed or went away is judged again
with the sidecar as it is. Each change is one line of the report. The runs'
suite revisions are then assigned again from the publisher's registry, which
may have changed since they were ingested.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import duckdb

from fmbench.analysis.display import terminal_value
from fmbench.analysis.revisions import Registry
from fmbench.ingest import FileOutcome, collect_run_files, ingest_paths, writable
from fmbench.ingest.writer import CHILD_TABLES
from fmbench.native.linking import relink
from fmbench.runfile.annotations import sidecar_for
from fmbench.runfile.reader import DEFAULT_MAX_BYTES, DEFAULT_MAX_TRIALS
from fmbench.runfile.user_files import UnreadableFile, sha256_of

Change = Literal["ingested", "replaced", "dropped", "re-annotated", "error"]


@dataclass(frozen=True)
class MirrorLine:
    change: Change
    file: str
    run_id: str | None
    message: str = ""
    line: int | None = None
    """Where an error is in the file's text (broken JSON), else ``None``."""
    column: int | None = None

    def describe(self) -> str:
        """One line: a file name or message with a line break in it cannot forge another."""
        name, message = terminal_value(self.file), terminal_value(self.message)
        what = {
            "ingested": f"ingested {name} (run {self.run_id})",
            "replaced": f"replaced {name}: its file changed (now run {self.run_id})",
            "dropped": f"dropped {name} (run {self.run_id}): its file is gone from the runs folder",
            "re-annotated": f"re-annotated {name} (run {self.run_id}): its sidecar changed",
            "error": f"error {message}",
        }[self.change]
        return what


@dataclass
class MirrorReport:
    lines: list[MirrorLine] = field(default_factory=list)
    revisions_reassigned: int = 0
    unchanged: int = 0
    files: dict[str, str] = field(default_factory=dict)
    """Each run file of the runs folder by its SHA-256, as the lines name it (relative to the runs folder)."""
    duplicates: list[tuple[str, str]] = field(default_factory=list)
    """Files left out because another file of the runs folder holds the same bytes: (left out, the one used)."""

    def describe_lines(self, *, errors: bool = True) -> list[str]:
        """One line per change (and the errors, unless ``errors`` is false), then how many runs changed revision."""
        lines = [line.describe() for line in self.lines if errors or line.change != "error"]
        if self.revisions_reassigned:
            lines.append(f"{self.revisions_reassigned} run(s) assigned another suite revision from the registry")
        return lines

    @property
    def ok(self) -> bool:
        return not any(line.change == "error" for line in self.lines)

    @property
    def changed(self) -> bool:
        return any(line.change != "error" for line in self.lines) or self.revisions_reassigned > 0


def _sha(path: Path) -> str:
    return sha256_of(path)  # streamed: a file over the size limit is refused by ingest, never read whole here


UNREADABLE_SIDECAR = "(unreadable)"
"""What a sidecar that cannot be hashed (a FIFO, a device, gone) counts as: never the stored one, so its run
is ingested again and the ingest names it."""


def _sidecar_sha(path: Path) -> str | None:
    sidecar = sidecar_for(path)
    if sidecar is None:
        return None
    try:
        return _sha(sidecar)
    except (UnreadableFile, OSError):
        return UNREADABLE_SIDECAR


def drop_run(con: duckdb.DuckDBPyConnection, run_id: str, sha256: str) -> None:
    """Remove a run, its child rows, its annotations and its original file, in one transaction."""

    con.execute("BEGIN TRANSACTION")
    try:
        for table in CHILD_TABLES:
            con.execute(f"DELETE FROM {table} WHERE run_id = ?", [run_id])
        con.execute("DELETE FROM runs WHERE run_id = ?", [run_id])
        con.execute("DELETE FROM sources WHERE sha256 = ?", [sha256])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def reassign_revisions(con: duckdb.DuckDBPyConnection, registry: Registry) -> int:
    """Assign every stored run the revision ``registry`` gives it now; return how many runs changed."""
    changed = 0
    rows = con.execute(
        "SELECT run_id, benchmark_commit, fixture_fingerprint, revision_id, revision_status, revision_basis FROM runs"
    ).fetchall()
    for run_id, commit, fingerprint, revision_id, status, basis in rows:
        a = registry.assign(commit, fingerprint)
        if (a.revision_id, a.status, a.basis) != (revision_id, status, basis):
            con.execute(
                "UPDATE runs SET revision_id = ?, revision_status = ?, revision_basis = ? WHERE run_id = ?",
                [a.revision_id, a.status, a.basis, run_id],
            )
            changed += 1
    return changed


def _stored(db: Path) -> tuple[dict[str, tuple[str, str]], dict[str, str | None]]:
    """Stored runs by source SHA-256 (run id, file name), and each run's sidecar SHA-256."""
    with writable(db) as con:
        runs = {
            sha: (run_id, name)
            for sha, run_id, name in con.execute("SELECT source_sha256, run_id, file_name FROM runs").fetchall()
        }
        sidecars = dict(con.execute("SELECT run_id, sha256 FROM annotations").fetchall())
    return runs, sidecars


def mirror_runs(
    runs_dir: Path,
    db: str | os.PathLike[str],
    registry: Registry,
    *,
    echo: Callable[[str], Any] | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_trials: int | None = DEFAULT_MAX_TRIALS,
    progress: Callable[[int, int, str], None] | None = None,
) -> MirrorReport:
    """Make the database hold exactly the run files of ``runs_dir`` (see the module's text).

    ``progress(done, total, name)`` is called as the files to ingest are (a terminal's progress bar).

    ``max_bytes``: a run file larger than this is refused (an error line naming the limit), as ingest refuses it;
    so is one of more than ``max_trials`` trials.
    """

    db_path = Path(db)
    files, skipped = collect_run_files([runs_dir])
    stored, sidecars = _stored(db_path)
    report = MirrorReport()
    wanted, left_out, unreadable = _hash_run_files(files, [(Path(o.path), o.message) for o in skipped])
    gone = {sha: stored[sha] for sha in stored.keys() - wanted.keys()}
    fresh, again, report.unchanged = _new_and_re_annotated(wanted, stored, sidecars)

    report.files = {sha: _shown(path, runs_dir) for sha, path in wanted.items()}
    for path, message in unreadable:
        shown = _shown(path, runs_dir)
        report.lines.append(MirrorLine("error", shown, None, message.replace(str(path), shown, 1)))
    report.duplicates = [(_shown(path, runs_dir), _shown(wanted[sha], runs_dir)) for path, sha in left_out]

    replaced, gone = _pair_replacements(fresh, gone)
    dropping = [*replaced.values(), *((run_id, sha) for sha, (run_id, _) in gone.items())]
    dropping += [(run_id, sha) for _, run_id, sha in again]
    if dropping:
        with writable(db_path) as con:
            for run_id, sha in dropping:
                drop_run(con, run_id, sha)
    for run_id, name in sorted(gone.values(), key=lambda v: v[1]):
        report.lines.append(MirrorLine("dropped", name, run_id))
    batch = [*fresh, *(path for path, _, _ in again)]
    if batch:
        outcome = ingest_paths(batch, db_path, registry=registry, max_bytes=max_bytes, max_trials=max_trials,
                               progress=progress)
        report.lines += _ingest_lines(batch, outcome.outcomes, replaced, fresh, runs_dir)
    with writable(db_path) as con:
        report.revisions_reassigned = reassign_revisions(con, registry)
        if dropping:

            relink(con)  # Evaluations rows that pointed at a dropped run's trials
    if echo is not None:
        for text in report.describe_lines():
            echo(text)
    return report


def _shown(path: Path, runs_dir: Path) -> str:
    """A run file as the report names it: relative to the runs folder when it is inside it."""
    return path.relative_to(runs_dir).as_posix() if path.is_relative_to(runs_dir) else str(path)


def _hash_run_files(
    files: list[Path], unreadable: list[tuple[Path, str]]
) -> tuple[dict[str, Path], list[tuple[Path, str]], list[tuple[Path, str]]]:
    """The run files by SHA-256 (the first of several with the same bytes), the others left out with their
    SHA-256, and ``unreadable`` with the files that could not be hashed added, each with its message."""
    wanted: dict[str, Path] = {}
    left_out: list[tuple[Path, str]] = []
    unreadable = list(unreadable)
    for path in files:
        try:
            sha = _sha(path)
        except (UnreadableFile, OSError) as exc:  # swapped or gone since it was listed
            unreadable.append((path, f"{path}: {exc.reason if isinstance(exc, UnreadableFile) else exc.strerror}"))
            continue
        if wanted.setdefault(sha, path) is not path:
            left_out.append((path, sha))
    return wanted, left_out, unreadable


def _new_and_re_annotated(
    wanted: dict[str, Path], stored: dict[str, tuple[str, str]], sidecars: dict[str, str | None]
) -> tuple[list[Path], list[tuple[Path, str, str]], int]:
    """The files not stored yet, the stored ones whose sidecar changed (path, run id, SHA-256), and how many
    stored ones are unchanged."""
    fresh: list[Path] = []
    again: list[tuple[Path, str, str]] = []
    unchanged = 0
    for sha, path in wanted.items():
        if sha not in stored:
            fresh.append(path)
            continue
        run_id = stored[sha][0]
        if _sidecar_sha(path) != sidecars.get(run_id):
            again.append((path, run_id, sha))
        else:
            unchanged += 1
    return fresh, again, unchanged


def _pair_replacements(
    fresh: list[Path], gone: dict[str, tuple[str, str]]
) -> tuple[dict[Path, tuple[str, str]], dict[str, tuple[str, str]]]:
    """Each new file that takes the place of a gone run of its file name (its run id and SHA-256; the oldest
    stored first when several are gone), and the gone runs no new file replaces."""
    gone = dict(gone)
    gone_by_name: dict[str, list[str]] = {}
    for sha, (_, name) in gone.items():
        gone_by_name.setdefault(name, []).append(sha)
    replaced: dict[Path, tuple[str, str]] = {}
    for path in fresh:
        olds = gone_by_name.get(path.name)
        if olds:
            old_sha = olds.pop(0)
            replaced[path] = (gone.pop(old_sha)[0], old_sha)
    return replaced, gone


def _ingest_lines(
    batch: list[Path], outcomes: list[FileOutcome], replaced: dict[Path, tuple[str, str]], fresh: list[Path], runs_dir: Path
) -> list[MirrorLine]:
    """The report's line for each file ingested: an error, a replacement, a new run or a re-annotated one."""
    by_path = {o.path: o for o in outcomes}
    lines: list[MirrorLine] = []
    for path in batch:
        o = by_path.get(str(path))
        if o is None:
            continue
        shown = _shown(path, runs_dir)
        if o.status == "error":
            lines.append(MirrorLine("error", shown, None, o.message, o.line, o.column))
        elif path in replaced:
            lines.append(MirrorLine("replaced", shown, o.run_id))
        elif path in fresh:
            lines.append(MirrorLine("ingested", shown, o.run_id))
        else:
            lines.append(MirrorLine("re-annotated", shown, o.run_id))
    return lines
