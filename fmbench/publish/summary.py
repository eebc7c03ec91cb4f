"""What a build tells its publisher at the end: what the site holds, and what needs their attention.

:func:`summarize_build` reads it from the database the site was built from
(and, in a project, from what mirroring the runs folder found): how many runs
are publishable, exploratory and invalid; every run file that could not be read
(refused: not on the site) with the reader's whole message; every file left
out (the same bytes as another file of the runs folder); every benchmark commit
that no revision of the registry holds, with the files that record it and the
key a publisher adds it to; and whether the project's ``methodology.md`` still
holds the placeholder text ``fmbench init`` wrote (which the site leaves out).

The summary is plain data. It is shown three ways: one line each for a
terminal (:meth:`BuildSummary.lines`; a message's line breaks are escaped, so
every file stays one line), as GitHub Actions workflow commands
(:meth:`BuildSummary.workflow_commands`: an ``::error`` annotation per refused
file, a ``::warning`` per other finding) and as Markdown for a job's step
summary (:meth:`BuildSummary.markdown`). A file's name and a parser's message
come from the run files, so each form escapes them for where it goes.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from fmbench.ingest import collect_run_files
from fmbench.runfile.annotations import read_annotations, sidecar_for
from fmbench.runfile.names import from_visible, name_findings
from fmbench.storage.dataset import open_database
from fmbench.write_errors import writing

if TYPE_CHECKING:
    from fmbench.analysis.revisions import Registry
    from fmbench.ingest.mirror import MirrorReport
    from fmbench.publish.build import BuildReport
    from fmbench.views.methodology import PublisherNotes

VERDICTS = ("publishable", "exploratory", "invalid")


class Project(Protocol):
    """What the summary reads of a project (a :class:`fmbench.project.Project`, a command above this layer that
    calls :func:`summarize_build`): its folders, its registry's file and its methodology notes."""

    @property
    def root(self) -> Path: ...
    @property
    def runs_dir(self) -> Path: ...
    @property
    def revisions_file(self) -> Path: ...
    @property
    def methodology_file(self) -> Path: ...
    def methodology_notes(self) -> PublisherNotes: ...


@dataclass(frozen=True)
class RefusedFile:
    """A run file that could not be read: it is not on the site."""

    file: str
    """Relative to the project's folder (``runs/broken.json``)."""
    message: str
    """The reader's whole message, without the file's name."""
    line: int | None = None
    column: int | None = None


@dataclass(frozen=True)
class SkippedFile:
    """A file of the runs folder left out of the site, and why."""

    file: str
    reason: str


@dataclass(frozen=True)
class SidecarProblem:
    """A sidecar of the runs folder that cannot be read (its run is on the site with the sidecar's fields not
    recorded) or that holds a key fmbench does not know."""

    file: str
    """Relative to the project's folder (``runs/a.meta.yaml``)."""
    message: str


@dataclass(frozen=True)
class UnknownCommit:
    """A benchmark commit that no revision of the registry holds (``None``: the runs recorded no commit)."""

    commit: str | None
    files: tuple[str, ...]


@dataclass(frozen=True)
class NameFinding:
    """A device name or hardware model that reads like another (invisible characters, a look-alike script)."""

    field: str
    """``device name`` or ``hardware model``."""
    message: str
    """What makes it read like another, the name shown with its invisible characters as ``<U+XXXX>``."""
    files: tuple[str, ...]


@dataclass
class BuildSummary:
    publishable: int = 0
    exploratory: int = 0
    invalid: int = 0
    refused: list[RefusedFile] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)
    sidecars: list[SidecarProblem] = field(default_factory=list)
    unknown_commits: list[UnknownCommit] = field(default_factory=list)
    names: list[NameFinding] = field(default_factory=list)
    """Device names and hardware models that may pass for another's (flagged on their runs' pages too)."""
    registry: str = ""
    """The project's registry file (``revisions.yaml``); empty outside a project (fmbench's own registry)."""
    current_revision: str | None = None
    methodology_file: str = ""
    """The project's methodology notes (``methodology.md``); empty outside a project."""
    methodology_template: tuple[str, ...] = ()
    """The headings of the placeholder sections ``fmbench init`` wrote that the notes still hold (left out)."""
    strict: bool = False
    """Whether a refused file or a sidecar problem fails the build (``--strict`` or ``[publishing] strict``)."""

    @property
    def runs(self) -> int:
        return self.publishable + self.exploratory + self.invalid

    @property
    def failed(self) -> bool:
        """Whether the build exits 1: a file was refused, or a sidecar has a problem, and the build is strict."""
        return self.strict and bool(self.refused or self.sidecars)

    # --- findings, each once, in the publisher's words ------------------------------------------------

    def counts(self) -> str:
        return (
            f"{self.runs} run{'' if self.runs == 1 else 's'} on the site: {self.publishable} publishable, "
            f"{self.exploratory} exploratory, {self.invalid} invalid"
        )

    def refusal(self, refused: RefusedFile) -> str:
        return f"{refused.file}: {refused.message}"

    def unknown(self, unknown: UnknownCommit) -> str:
        files = ", ".join(unknown.files)
        if unknown.commit is None:
            return (
                f"{files}: no benchmark commit recorded, so no revision of {self.registry or 'the registry'} can hold "
                f"{'them' if len(unknown.files) > 1 else 'it'}; the site shows the revision as unknown"
            )
        current = f"the current one, id {self.current_revision}" if self.current_revision else "the current one"
        key = (
            f'add "{unknown.commit}" to the benchmark_commits list of the revision it was measured on ({current}, '
            "if the benchmark's task set has not changed since)"
        )
        if self.registry:
            return f"benchmark commit {unknown.commit} ({files}) is in no revision of {self.registry}: {key}, or add a revision for it"
        return (
            f"benchmark commit {unknown.commit} ({files}) is in no revision of fmbench's own registry: in a project "
            f"(fmbench init), {key} in its revisions.yaml, or add a revision for it"
        )

    def name(self, finding: NameFinding) -> str:
        return f"{', '.join(finding.files)}: {finding.field}: {finding.message}"

    def methodology(self) -> str:
        sections = ", ".join(f'"{h}"' for h in self.methodology_template)
        return (
            f"{self.methodology_file} still holds the template text fmbench init wrote "
            f"(section{'s' if len(self.methodology_template) > 1 else ''} {sections}); the site leaves it out "
            "and shows fmbench's methodology alone until you replace it with your own notes"
        )

    # --- a terminal ---------------------------------------------------------------------------------

    def lines(self) -> list[str]:
        """The summary for a terminal, one line per finding (each file's message on one line)."""
        out = [f"summary: {self.counts()}"]
        if self.refused:
            refused = len(self.refused)
            out.append(
                f"refused: {refused} file{'' if refused == 1 else 's'} could not be read and "
                f"{'is' if refused == 1 else 'are'} not on the site"
                + (" (--strict: the build fails)" if self.strict else "")
            )
            out += [f"  {one_line(self.refusal(r))}" for r in self.refused]
        out += [f"skipped: {one_line(s.file)}: {one_line(s.reason)}" for s in self.skipped]
        strict = " (--strict: the build fails)" if self.strict else ""
        out += [f"sidecar: {one_line(p.file)}: {one_line(p.message)}{strict}" for p in self.sidecars]
        out += [f"unknown revision: {one_line(self.unknown(u))}" for u in self.unknown_commits]
        out += [f"look-alike name: {one_line(self.name(n))}" for n in self.names]
        if self.methodology_template:
            out.append(f"warning: {one_line(self.methodology())}")
        return out

    def to_json(self) -> dict[str, Any]:
        """The summary as data, for ``fmbench build --json``."""
        return {
            "runs": self.runs, "publishable": self.publishable, "exploratory": self.exploratory,
            "invalid": self.invalid,
            "refused": [{"file": r.file, "message": r.message, "line": r.line, "column": r.column} for r in self.refused],
            "skipped": [{"file": s.file, "reason": s.reason} for s in self.skipped],
            "sidecars": [{"file": p.file, "message": p.message} for p in self.sidecars],
            "unknownCommits": [{"commit": u.commit, "files": list(u.files), "message": self.unknown(u)}
                               for u in self.unknown_commits],
            "methodologyTemplate": list(self.methodology_template),
            "strict": self.strict,
            "failed": self.failed,
        }

    # --- GitHub Actions -----------------------------------------------------------------------------

    def workflow_commands(self) -> list[str]:
        """An ``::error`` annotation for each refused file (with its line and column where known) and a
        ``::warning`` for each other finding, escaped as GitHub Actions reads workflow commands."""
        out = []
        for r in self.refused:
            props = {"file": r.file, "line": r.line, "col": r.column, "title": "Run file not published"}
            out.append(_command("error", props, r.message))
        for s in self.skipped:
            out.append(_command("warning", {"file": s.file, "title": "Run file left out"}, s.reason))
        for p in self.sidecars:
            out.append(_command("error" if self.strict else "warning", {"file": p.file, "title": "Sidecar"}, p.message))
        for u in self.unknown_commits:
            out.append(_command("warning", {"file": u.files[0], "title": "Revision unknown"}, self.unknown(u)))
        for n in self.names:
            out.append(_command("warning", {"file": n.files[0], "title": "Look-alike device name"}, self.name(n)))
        if self.methodology_template:
            props = {"file": self.methodology_file, "title": "Template methodology notes"}
            out.append(_command("warning", props, self.methodology()))
        return out

    def markdown(self) -> str:
        """The summary as Markdown, for ``$GITHUB_STEP_SUMMARY``."""
        out = [
            "## fmbench build", "",
            "| runs on the site | publishable | exploratory | invalid |",
            "| ---: | ---: | ---: | ---: |",
            f"| {self.runs} | {self.publishable} | {self.exploratory} | {self.invalid} |", "",
        ]
        if self.refused:
            out += [f"### Refused: {len(self.refused)} file(s) not on the site", ""]
            out += [f"- {md(r.file)}: {md(r.message)}" for r in self.refused]
            out.append("")
        if self.skipped:
            out += ["### Left out", ""]
            out += [f"- {md(s.file)}: {md(s.reason)}" for s in self.skipped]
            out.append("")
        if self.sidecars:
            out += ["### Sidecars", ""]
            out += [f"- {md(p.file)}: {md(p.message)}" for p in self.sidecars]
            out.append("")
        if self.unknown_commits:
            out += ["### Commits in no revision", ""]
            out += [f"- {md(self.unknown(u))}" for u in self.unknown_commits]
            out.append("")
        if self.names:
            out += ["### Look-alike device names", ""]
            out += [f"- {md(self.name(n))}" for n in self.names]
            out.append("")
        if self.methodology_template:
            out += ["### Methodology notes", "", f"- {md(self.methodology())}", ""]
        if not (
            self.refused or self.skipped or self.sidecars or self.unknown_commits or self.names
            or self.methodology_template
        ):
            out += ["Nothing needs your attention.", ""]
        return "\n".join(out)


# --- escaping -------------------------------------------------------------------------------------------


def one_line(text: str) -> str:
    """``text`` on one line: its line breaks written as ``\\n`` and ``\\r``."""
    return text.replace("\r", "\\r").replace("\n", "\\n")


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _command(name: str, properties: dict[str, str | int | None], message: str) -> str:
    props = ",".join(f"{k}={_escape_property(str(v))}" for k, v in properties.items() if v is not None and v != "")
    return f"::{name}{' ' + props if props else ''}::{_escape_data(message)}"


_MARKDOWN_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~&:])")


def md(text: str) -> str:
    """``text`` as literal Markdown text on one line: every character Markdown (or HTML) could read is
    backslash-escaped, so a file name or message shows as written and is never markup."""
    return _MARKDOWN_SPECIAL.sub(r"\\\1", one_line(text))


# --- reading it -----------------------------------------------------------------------------------------


def _named(project: Project | None, shown: str) -> str:
    """A runs-folder file (as the mirror names it) as a path relative to the project's folder."""
    if project is None:
        return shown
    path = project.runs_dir / shown
    try:
        return path.relative_to(project.root).as_posix()
    except ValueError:
        return os.fspath(path)


def _without_name(message: str, file: str) -> str:
    """The reader's message without the file's name it starts with (the summary names the file in full)."""
    name = Path(file).name
    return message[len(name) + 2:] if message.startswith(name + ": ") else message


def summarize_build(
    source: str | os.PathLike[str] | None,
    *,
    registry: Registry | None = None,
    mirrored: MirrorReport | None = None,
    project: Project | None = None,
    strict: bool = False,
) -> BuildSummary:
    """The summary of a site built from ``source`` (a database or dataset): its runs' verdicts and the runs whose
    commit no revision holds; with ``mirrored`` (what mirroring the runs folder did) the files refused or left out;
    with ``project`` files named relative to it and its methodology notes checked."""
    summary = BuildSummary(strict=strict)
    if project is not None:
        summary.registry = _relative(project, project.revisions_file)
        summary.methodology_file = _relative(project, project.methodology_file)
        summary.methodology_template = project.methodology_notes().template_sections
    if registry is not None:
        summary.current_revision = registry.current.id
    files = mirrored.files if mirrored is not None else {}
    with open_database(source) as con:
        for verdict, count in con.execute("SELECT verdict, count(*) FROM runs GROUP BY verdict").fetchall():
            if verdict in VERDICTS:
                setattr(summary, verdict, int(count))
        unknown: dict[str | None, list[str]] = {}
        rows = con.execute(
            "SELECT benchmark_commit, file_name, source_sha256 FROM runs WHERE revision_id IS NULL "
            "ORDER BY benchmark_commit NULLS LAST, file_name"
        ).fetchall()
        names = con.execute(
            "SELECT device_name, hardware_model, file_name, source_sha256 FROM runs WHERE NOT "
            "(regexp_full_match(device_name, '[ -~]*') AND regexp_full_match(coalesce(hardware_model, ''), '[ -~]*')) "
            "OR contains(device_name, '<U+') OR contains(coalesce(hardware_model, ''), '<U+') ORDER BY file_name"
        ).fetchall()
    for commit, file_name, sha in rows:
        shown = files.get(sha)
        unknown.setdefault(commit or None, []).append(_named(project, shown) if shown else file_name)
    summary.unknown_commits = [UnknownCommit(c, tuple(sorted(f))) for c, f in unknown.items()]
    summary.names = _name_findings(
        [(device, hardware, _named(project, files[sha]) if sha in files else file_name)
         for device, hardware, file_name, sha in names]
    )
    if mirrored is not None:
        for line in mirrored.lines:
            if line.change == "error":
                file = _named(project, line.file)
                summary.refused.append(RefusedFile(file, _without_name(line.message, line.file), line.line, line.column))
        summary.sidecars = _sidecar_problems(project)
        for left_out, used in mirrored.duplicates:
            summary.skipped.append(
                SkippedFile(_named(project, left_out), f"the same bytes as {_named(project, used)}, published once")
            )
    return summary


def _name_findings(runs: list[tuple[str, str | None, str]]) -> list[NameFinding]:
    """Each device name and hardware model (as stored: shown) that reads like another, with its runs' files."""
    found: dict[tuple[str, str], list[str]] = {}
    for device, hardware, file in runs:
        for what, shown in (("device name", device), ("hardware model", hardware)):
            if shown:
                for message in name_findings(from_visible(shown)):
                    found.setdefault((what, message), []).append(file)
    return [NameFinding(what, message, tuple(sorted(files))) for (what, message), files in found.items()]


def _sidecar_problems(project: Project | None) -> list[SidecarProblem]:
    """Every sidecar problem of the project's runs folder, read afresh each build (a run stored before still says
    what its sidecar lacks)."""
    if project is None or not project.runs_dir.is_dir():
        return []
    found = []
    files, _ = collect_run_files([project.runs_dir])
    for path in files:
        sidecar = sidecar_for(path)
        if sidecar is None:
            continue
        shown = _relative(project, sidecar)
        for problem in read_annotations(sidecar)[0].problems:
            found.append(SidecarProblem(shown, _without_name(problem, sidecar.name)))
    return found


def build_json(report: BuildReport, summary: BuildSummary, mirrored: MirrorReport | None = None,
               warnings: tuple[str, ...] = ()) -> dict[str, Any]:
    """What ``fmbench build --json`` prints: what mirroring the runs folder changed, the site written and the
    summary, and every warning line."""
    return {
        "mirrored": [{"change": line.change, "file": line.file, "runId": line.run_id, "message": line.message}
                     for line in (mirrored.lines if mirrored is not None else ())],
        "site": {
            "out": os.fspath(report.out), "pages": report.pages, "dataFiles": report.data_files,
            "assets": report.assets, "bytes": report.bytes_total, "rendered": len(report.rendered),
            "changed": len(report.changed), "removed": len(report.removed), "seconds": round(report.seconds, 3),
            "largestRunPage": ({"path": report.largest_run_page[0], "bytes": report.largest_run_page[1]}
                               if report.largest_run_page else None),
        },
        "summary": summary.to_json(),
        "warnings": [*warnings, *report.warnings],
    }


def _relative(project: Project, path: Path) -> str:
    try:
        return path.relative_to(project.root).as_posix()
    except ValueError:
        return os.fspath(path)


def report_to_github(summary: BuildSummary, echo: Callable[[str], Any], environ: Mapping[str, str]) -> None:
    """Under GitHub Actions (``GITHUB_ACTIONS=true``): print the workflow commands with ``echo`` and append the
    Markdown summary to the file ``$GITHUB_STEP_SUMMARY`` names. Elsewhere, nothing."""
    if environ.get("GITHUB_ACTIONS") != "true":
        return
    for command in summary.workflow_commands():
        echo(command)
    target = environ.get("GITHUB_STEP_SUMMARY")
    if target:
        with writing(target, "the job's step summary ($GITHUB_STEP_SUMMARY)"), open(target, "a", encoding="utf-8") as f:
            f.write(summary.markdown() + "\n")
