"""Read evaluation results from files and folders; a bad file never stops a batch.

Accepted inputs:

- ``*.xcevalresult``: one JSON result document;
- ``*.jsonl``: JSON Lines, one result document per non-blank line (errors
  give the 1-based line number);
- folders, walked recursively (hidden names skipped). A ``manifest.json``
  from ``xcrun xcresulttool export evaluations`` adds the test identifier
  and attachment name to each exported file it lists, and files it lists
  with a ``.json`` suffix are read as results too;
- a ``manifest.json`` named directly: the files it lists.

Every document carries the SHA-256 of its file's bytes (for JSON Lines, the
whole file's).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from fmbench.runfile.reader import DEFAULT_MAX_BYTES
from fmbench.runfile.user_files import FileTooLarge, UnreadableFile, is_special, read_bytes

from .document import json_error_text, parse_document
from .errors import ArtifactError
from .json_text import TextRows, TooManyRows, load_document
from .manifest import MANIFEST_NAME, Manifest, read_manifest
from .model import Evaluation, ManifestEntry

ARTIFACT_SUFFIX = ".xcevalresult"
JSON_LINES_SUFFIX = ".jsonl"
FOLDER_SUFFIXES = frozenset({ARTIFACT_SUFFIX, JSON_LINES_SUFFIX})
"""Files read when a folder is walked."""
LISTED_SUFFIXES = frozenset({ARTIFACT_SUFFIX, JSON_LINES_SUFFIX, ".json"})
"""Files read when a manifest lists them (other attachments are skipped)."""


DEFAULT_MAX_ROWS = 100_000
"""Rows one result file may hold: a full FoundationModelsBench run replays to a few thousand. A row costs
hundreds of bytes once read, whatever its size in the file, so the byte limit alone does not bound memory."""


@dataclass(frozen=True)
class ReadLimits:
    """How much of a result file is read: its bytes (checked while reading) and its rows (all its documents'
    together, counted before any row is built). ``--max-bytes`` and ``--max-rows`` on the native commands."""

    max_bytes: int = DEFAULT_MAX_BYTES
    max_rows: int = DEFAULT_MAX_ROWS


DEFAULT_LIMITS = ReadLimits()


@dataclass
class ReadResult:
    """The documents that were read and the errors met on the way, in order."""

    documents: list[Evaluation] = field(default_factory=list)
    errors: list[ArtifactError] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.errors

    def extend(self, other: ReadResult) -> None:
        self.documents.extend(other.documents)
        self.errors.extend(other.errors)


class _Batch:
    """State of one ``read_artifacts`` call: manifests met and files already read."""

    def __init__(self, limits: ReadLimits, lazy: bool = False) -> None:
        self.limits = limits
        self.lazy = lazy
        self.result = ReadResult()
        self.manifests: dict[Path, Manifest] = {}
        self.entries: dict[Path, ManifestEntry] = {}
        self.read: set[Path] = set()

    def manifest(self, path: Path) -> Manifest:
        key = path.resolve()
        if key not in self.manifests:
            manifest = read_manifest(path)
            self.manifests[key] = manifest
            self.entries.update(manifest.entries)
            self.result.errors.extend(manifest.errors)
        return self.manifests[key]

    def folder_files(self, folder: Path) -> list[Path]:
        files: list[Path] = []
        manifests: list[Manifest] = []
        for directory, subfolders, names in os.walk(folder):
            subfolders[:] = sorted(name for name in subfolders if not name.startswith("."))
            for name in sorted(names):
                if name.startswith("."):
                    continue
                path = Path(directory) / name
                if name == MANIFEST_NAME:
                    manifests.append(self.manifest(path))
                elif path.suffix.lower() in FOLDER_SUFFIXES:
                    files.append(path)
        for manifest in manifests:
            files.extend(self.listed_files(manifest))
        return files

    @staticmethod
    def listed_files(manifest: Manifest) -> list[Path]:
        return [path for path in manifest.files if path.suffix.lower() in LISTED_SUFFIXES]

    def read_file(self, path: Path) -> None:
        key = path.resolve()
        if key in self.read:
            return
        self.read.add(key)
        beside = path.parent / MANIFEST_NAME
        if beside.is_file():
            self.manifest(beside)
        self.result.extend(read_file(path, manifest=self.entries.get(key), limits=self.limits, lazy=self.lazy))


def read_artifacts(
    paths: Iterable[Path | str], limits: ReadLimits = DEFAULT_LIMITS, *, lazy: bool = False
) -> ReadResult:
    """Read every result document under ``paths`` (files and folders).

    Problems are collected as :class:`ArtifactError` in ``errors``; the other
    files are still read. A file reached twice is read once. With ``lazy`` each
    document's rows are :class:`~native.model.StreamedRows` over the file's text
    (every row still checked here): memory bounded by the files' sizes, for
    commands that only pass rows through.
    """
    batch = _Batch(limits, lazy)
    for given in paths:
        path = Path(given)
        if path.is_dir():
            files = batch.folder_files(path)
        elif path.is_file() and path.name == MANIFEST_NAME:
            files = batch.listed_files(batch.manifest(path))
        elif path.is_file() or is_special(path):  # a FIFO or a device is named by read_file, never opened
            files = [path]
        else:
            batch.result.errors.append(ArtifactError(path, "no such file or folder"))
            continue
        for file in files:
            batch.read_file(file)
    return batch.result


def artifact_text(path: Path, limits: ReadLimits = DEFAULT_LIMITS) -> tuple[str, str]:
    """A result file's text and the SHA-256 of its bytes, through the guard every user-named file goes
    through: a regular file, at most ``limits.max_bytes`` read; anything else is an :class:`ArtifactError`."""
    try:
        content = read_bytes(path, limits.max_bytes)
    except FileTooLarge as error:
        raise ArtifactError(
            path, f"{error.size:,} bytes is larger than the {limits.max_bytes:,}-byte limit for a result file; "
            "raise it with --max-bytes if this really is one"
        ) from None
    except UnreadableFile as error:
        raise ArtifactError(path, error.reason) from None
    except OSError as error:
        raise ArtifactError(path, f"cannot read ({error.strerror})") from None
    try:
        return content.decode("utf-8-sig"), hashlib.sha256(content).hexdigest()
    except UnicodeDecodeError as error:
        raise ArtifactError(path, f"not UTF-8 text (byte {error.start})") from None


def decode_document(
    text: str, path: Path, limits: ReadLimits, line: int | None = None, before: int = 0, *, lazy: bool = False
) -> object:
    """One document's JSON, its rows refused past ``limits.max_rows`` (less the ``before`` rows earlier lines
    of the file held) before more are kept; every refusal an :class:`ArtifactError` naming the file and line.
    With ``lazy`` its ``results`` are a :class:`~native.json_text.TextRows` over ``text``."""
    try:
        return load_document(text, limits.max_rows - before, lazy=lazy)
    except TooManyRows as error:
        raise _too_many_rows(path, before + error.rows, limits.max_rows, line) from None
    except json.JSONDecodeError as error:
        raise ArtifactError(path, json_error_text(error), line=line) from None


def read_file(
    path: Path, *, manifest: ManifestEntry | None = None, limits: ReadLimits = DEFAULT_LIMITS, lazy: bool = False
) -> ReadResult:
    """Read one file: a JSON document, or JSON Lines when the suffix is ``.jsonl``; within ``limits``."""
    result = ReadResult()
    try:
        text, sha256 = artifact_text(path, limits)
    except ArtifactError as error:
        result.errors.append(error)
        return result

    if path.suffix.lower() == JSON_LINES_SUFFIX:
        _read_lines(text, path, sha256, manifest, result, limits, lazy)
        return result
    try:
        data = decode_document(text, path, limits, lazy=lazy)
        del text  # the decoded document is all that is needed from here (lazy: its rows hold the text)
        result.documents.append(parse_document(data, path=path, sha256=sha256, manifest=manifest))
    except ArtifactError as error:
        result.errors.append(error)
    return result


def _row_count(data: object) -> int:
    results = data.get("results") if isinstance(data, dict) else None
    return len(results) if isinstance(results, list | TextRows) else 0


def _too_many_rows(path: Path, rows: int, limit: int, line: int | None = None) -> ArtifactError:
    return ArtifactError(
        path, f"{rows:,} rows is more than the {limit:,}-row limit for a result file; "
        "raise it with --max-rows if this really is one", line=line,
    )


def _read_lines(
    text: str,
    path: Path,
    sha256: str,
    manifest: ManifestEntry | None,
    result: ReadResult,
    limits: ReadLimits = DEFAULT_LIMITS,
    lazy: bool = False,
) -> None:
    found = False
    rows = 0
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        found = True
        try:
            data = decode_document(line, path, limits, number, rows, lazy=lazy)
        except ArtifactError as error:
            result.errors.append(error)
            if "-row limit" in error.message:  # the file's documents together: the rest is not read
                return
            continue
        rows += _row_count(data)
        try:
            result.documents.append(
                parse_document(data, path=path, sha256=sha256, line=number, manifest=manifest)
            )
        except ArtifactError as error:
            result.errors.append(error)
    if not found:
        result.errors.append(ArtifactError(path, "empty: no evaluation results"))


def read_evaluation(path: Path | str, limits: ReadLimits = DEFAULT_LIMITS) -> Evaluation:
    """Read exactly one evaluation result; raise :class:`ArtifactError` otherwise."""
    result = read_artifacts([path], limits)
    if result.errors:
        raise result.errors[0]
    if len(result.documents) != 1:
        raise ArtifactError(
            Path(path), f"holds {len(result.documents)} evaluation results where one was expected"
        )
    return result.documents[0]


def raw_document(path: Path | str, limits: ReadLimits = DEFAULT_LIMITS) -> bytes:
    """The bytes of one stored result file, unchanged, after checking it reads as one.

    Raises :class:`ArtifactError` for a folder or a file that is not a result.
    """
    path = Path(path)
    if not path.is_file():
        raise ArtifactError(path, "not a file: --raw-json prints one stored document")
    result = read_file(path, limits=limits)
    if result.errors:
        raise result.errors[0]
    try:
        return read_bytes(path, limits.max_bytes)
    except (UnreadableFile, OSError) as error:  # changed since it was read
        raise ArtifactError(path, f"cannot read ({error})") from None
