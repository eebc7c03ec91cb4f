"""The suite revision registry and the assignment of a run to its revision."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Literal

import yaml

from fmbench.errors import RegistryError, source_excerpt
from fmbench.runfile.user_files import FileTooLarge, UnreadableFile, read_text

RevisionStatus = Literal["current", "superseded", "unknown"]


@dataclass(frozen=True)
class Revision:
    id: str
    date: dt.date
    title: str
    summary: str
    changes: tuple[str, ...]
    reason: str
    benchmark_commits: tuple[str, ...]
    fixture_fingerprints: tuple[str, ...]
    current: bool

    @property
    def status(self) -> RevisionStatus:
        return "current" if self.current else "superseded"


@dataclass(frozen=True)
class Assignment:
    revision_id: str | None
    status: RevisionStatus
    basis: str
    """How it was assigned: ``benchmark commit``, ``fixture fingerprint``, or why it could not be."""


@dataclass(frozen=True)
class Registry:
    revisions: tuple[Revision, ...]
    source: str = "fmbench/data/revisions.yaml"
    _by_id: dict[str, Revision] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        self._by_id.update({r.id: r for r in self.revisions})

    @property
    def current(self) -> Revision:
        return next(r for r in self.revisions if r.current)

    def get(self, revision_id: str | None) -> Revision | None:
        return self._by_id.get(revision_id) if revision_id else None

    def assign(self, commit: str | None, fingerprint: str | None) -> Assignment:
        """By benchmark commit first, then by fixture fingerprint; otherwise unknown."""
        if commit:
            for r in self.revisions:
                if any(commit.startswith(c) or c.startswith(commit) for c in r.benchmark_commits):
                    return Assignment(r.id, r.status, "benchmark commit")
        if fingerprint:  # a corpus unchanged across revisions belongs to the newest that lists it
            for r in sorted(self.revisions, key=lambda r: r.date, reverse=True):
                if fingerprint in r.fixture_fingerprints:
                    return Assignment(r.id, r.status, "fixture fingerprint")
        why = (
            f"benchmark commit {commit} and fixture fingerprint {fingerprint} are in no revision"
            if commit
            else f"no benchmark commit recorded; fixture fingerprint {fingerprint} is in no revision"
        )
        return Assignment(None, "unknown", why)


REGISTRY_KEYS: dict[str, str] = {
    "format": "The version of the file's layout; 1.",
    "revisions": "The list of revisions, each a mapping of the keys below.",
}
"""The top-level keys of a ``revisions.yaml``."""

REVISION_KEYS: dict[str, str] = {
    "id": "Required. The revision's id, shown on every page that names it (`2026.07`).",
    "date": "Required. The day the revision began, as a YAML date (`2026-07-02`).",
    "title": "Required. Its title, text.",
    "summary": "Required. A paragraph on what the revision is, text.",
    "changes": "A list of what changed from the revision before, each text.",
    "reason": "Required. Why the task set changed, text.",
    "benchmark_commits": "The benchmark commits measured on it: a run is assigned the revision whose list holds the "
                         "commit it recorded (`environment.foundationModelsBenchCommit`), matched by prefix.",
    "fixture_fingerprints": "Fingerprints of the benchmark's fixture set (the run's trials' samples), which assign a "
                            "run whose commit is in no revision's list, or that recorded none.",
    "current": "`true` for exactly one revision, the current one; runs on the others carry a \"superseded\" banner.",
}
"""Every key of a revision entry, and what it means (docs/reference/revisions.md is generated from it)."""


def _text(entry: dict[str, Any], key: str, where: str) -> str:
    value = entry.get(key)
    if not isinstance(value, str) or not value.strip():
        raise RegistryError(f"{where}.{key}: expected text; add it to the revision entry")
    return value.strip()


MAX_REGISTRY_BYTES = 4 * 1024 * 1024
"""A registry holds a few lines a revision; four megabytes is thousands of revisions."""
MAX_REGISTRY_DEPTH = 32
"""How deeply a registry may nest lists and mappings (it needs four levels)."""


class _TooDeep(Exception):
    def __init__(self, mark: Any) -> None:
        super().__init__("too deep")
        self.mark = mark


class _RegistryLoader(yaml.SafeLoader):
    """YAML's safe subset with its nesting bounded: composing a node is recursive, so a file nested
    100,000 levels deep would exhaust Python's recursion before it was refused."""

    depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        self.depth += 1
        try:
            if self.depth > MAX_REGISTRY_DEPTH:
                raise _TooDeep(self.peek_event().start_mark)
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


def _yaml_error(exc: yaml.YAMLError, data: str, source: str) -> RegistryError:
    """One line naming the file, the place and the problem; the lines at the place, with a caret, as its excerpt."""
    mark = getattr(exc, "problem_mark", None)
    context_mark = getattr(exc, "context_mark", None)
    problem = getattr(exc, "problem", None) or "cannot be parsed"
    context = getattr(exc, "context", None)
    if isinstance(exc, yaml.reader.ReaderError):  # a character YAML refuses: its place is an offset
        line = data.count("\n", 0, exc.position)
        mark = yaml.Mark(source, exc.position, line, exc.position - (data.rfind("\n", 0, exc.position) + 1), None, None)
        code = exc.character if isinstance(exc.character, int) else ord(exc.character)
        problem = f"the character U+{code:04X} is not allowed ({exc.reason})"
    if mark is None:
        return RegistryError(f"{source}: not valid YAML: {' '.join(str(exc).split())}")
    where = f"line {mark.line + 1}, column {mark.column + 1}"
    also = f" ({context} at line {context_mark.line + 1}, column {context_mark.column + 1})" if context and context_mark else ""
    error = RegistryError(f"{source}: not valid YAML at {where}: {problem}{also}")
    places = [(mark.line, mark.column)] + ([(context_mark.line, context_mark.column)] if context_mark else [])
    error.excerpt = source_excerpt(data, places)
    return error


def parse_registry(data: str, source: str) -> Registry:
    try:
        doc = yaml.load(data, Loader=_RegistryLoader)  # a SafeLoader, its nesting bounded
    except _TooDeep as exc:
        raise RegistryError(
            f"{source}: line {exc.mark.line + 1}, column {exc.mark.column + 1}: nested more than "
            f"{MAX_REGISTRY_DEPTH} levels deep; a revision entry needs four"
        ) from None
    except yaml.YAMLError as exc:
        raise _yaml_error(exc, data, source) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("revisions"), list):
        raise RegistryError(f"{source}: expected a mapping with a 'revisions' list")
    revisions = []
    for i, entry in enumerate(doc["revisions"]):
        where = f"{source}: revisions[{i}]"
        if not isinstance(entry, dict):
            raise RegistryError(f"{where}: expected a mapping")
        date = entry.get("date")
        if not isinstance(date, dt.date):
            raise RegistryError(f"{where}.date: expected a date such as 2026-11-02")
        revisions.append(
            Revision(
                id=str(entry.get("id") or ""),
                date=date,
                title=_text(entry, "title", where),
                summary=_text(entry, "summary", where),
                changes=tuple(str(c) for c in entry.get("changes") or ()),
                reason=_text(entry, "reason", where),
                benchmark_commits=tuple(str(c) for c in entry.get("benchmark_commits") or ()),
                fixture_fingerprints=tuple(str(c) for c in entry.get("fixture_fingerprints") or ()),
                current=bool(entry.get("current")),
            )
        )
        if not revisions[-1].id:
            raise RegistryError(f"{where}.id: every revision needs an id")
    if sum(r.current for r in revisions) != 1:
        raise RegistryError(f"{source}: exactly one revision must be marked current: true")
    return Registry(tuple(revisions), source)


def read_registry_text(path: Path) -> str:
    """A registry file's text, through the guard every user-named file goes through (a regular file, at most
    :data:`MAX_REGISTRY_BYTES`); every refusal is a :class:`RegistryError` naming it."""
    try:
        return read_text(path, MAX_REGISTRY_BYTES)
    except FileTooLarge as exc:
        raise RegistryError(f"{path}: {exc.reason} for a suite-revision registry") from None
    except UnreadableFile as exc:
        raise RegistryError(str(exc)) from None
    except UnicodeDecodeError:
        raise RegistryError(f"{path}: not UTF-8 text") from None
    except OSError as exc:
        raise RegistryError(f"{path}: cannot be read: {exc.strerror}") from None


PUBLIC_REGISTRY_SOURCE = "fmbench/data/revisions.yaml"
FIXTURES_REGISTRY_SOURCE = "site/revisions.yaml"


def public_registry_text() -> str:
    """The benchmark's real public revision history (what ``fmbench init`` seeds a project with)."""
    return resources.files("fmbench").joinpath("data", "revisions.yaml").read_text(encoding="utf-8")


def load_registry(path: Path | None = None) -> Registry:
    """The registry given, or the benchmark's public history shipped in ``fmbench/data/``.

    The bundled fixtures' fictional registry is never a default: only the demo (and tests of the
    fixture corpus) ask for it, through :func:`fixtures_registry`.
    """
    if path is not None:
        return parse_registry(read_registry_text(path), str(path))
    return parse_registry(public_registry_text(), PUBLIC_REGISTRY_SOURCE)


def fixtures_registry() -> Registry:
    """The bundled fixture corpus's registry (fictional revisions and commits): the demo's alone."""
    text = resources.files("fmbench.site").joinpath("revisions.yaml").read_text(encoding="utf-8")
    return parse_registry(text, FIXTURES_REGISTRY_SOURCE)
