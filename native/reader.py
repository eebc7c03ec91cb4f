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

from .document import json_error_text, parse_document
from .errors import ArtifactError
from .json_text import load_json
from .manifest import MANIFEST_NAME, Manifest, read_manifest
from .model import Evaluation, ManifestEntry

ARTIFACT_SUFFIX = ".xcevalresult"
JSON_LINES_SUFFIX = ".jsonl"
FOLDER_SUFFIXES = frozenset({ARTIFACT_SUFFIX, JSON_LINES_SUFFIX})
"""Files read when a folder is walked."""
LISTED_SUFFIXES = frozenset({ARTIFACT_SUFFIX, JSON_LINES_SUFFIX, ".json"})
"""Files read when a manifest lists them (other attachments are skipped)."""


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

    def __init__(self) -> None:
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
        self.result.extend(read_file(path, manifest=self.entries.get(key)))


def read_artifacts(paths: Iterable[Path | str]) -> ReadResult:
    """Read every result document under ``paths`` (files and folders).

    Problems are collected as :class:`ArtifactError` in ``errors``; the other
    files are still read. A file reached twice is read once.
    """
    batch = _Batch()
    for given in paths:
        path = Path(given)
        if path.is_dir():
            files = batch.folder_files(path)
        elif path.is_file() and path.name == MANIFEST_NAME:
            files = batch.listed_files(batch.manifest(path))
        elif path.is_file():
            files = [path]
        else:
            batch.result.errors.append(ArtifactError(path, "no such file or folder"))
            continue
        for file in files:
            batch.read_file(file)
    return batch.result


def read_file(path: Path, *, manifest: ManifestEntry | None = None) -> ReadResult:
    """Read one file: a JSON document, or JSON Lines when the suffix is ``.jsonl``."""
    result = ReadResult()
    try:
        content = path.read_bytes()
    except OSError as error:
        result.errors.append(ArtifactError(path, f"cannot read ({error.strerror})"))
        return result
    sha256 = hashlib.sha256(content).hexdigest()
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        result.errors.append(ArtifactError(path, f"not UTF-8 text (byte {error.start})"))
        return result

    if path.suffix.lower() == JSON_LINES_SUFFIX:
        _read_lines(text, path, sha256, manifest, result)
        return result
    try:
        data = load_json(text)
    except json.JSONDecodeError as error:
        result.errors.append(ArtifactError(path, json_error_text(error)))
        return result
    try:
        result.documents.append(parse_document(data, path=path, sha256=sha256, manifest=manifest))
    except ArtifactError as error:
        result.errors.append(error)
    return result


def _read_lines(
    text: str,
    path: Path,
    sha256: str,
    manifest: ManifestEntry | None,
    result: ReadResult,
) -> None:
    found = False
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        found = True
        try:
            data = load_json(line)
        except json.JSONDecodeError as error:
            result.errors.append(ArtifactError(path, json_error_text(error), line=number))
            continue
        try:
            result.documents.append(
                parse_document(data, path=path, sha256=sha256, line=number, manifest=manifest)
            )
        except ArtifactError as error:
            result.errors.append(error)
    if not found:
        result.errors.append(ArtifactError(path, "empty: no evaluation results"))


def read_evaluation(path: Path | str) -> Evaluation:
    """Read exactly one evaluation result; raise :class:`ArtifactError` otherwise."""
    result = read_artifacts([path])
    if result.errors:
        raise result.errors[0]
    if len(result.documents) != 1:
        raise ArtifactError(
            Path(path), f"holds {len(result.documents)} evaluation results where one was expected"
        )
    return result.documents[0]


def raw_document(path: Path | str) -> bytes:
    """The bytes of one stored result file, unchanged, after checking it reads as one.

    Raises :class:`ArtifactError` for a folder or a file that is not a result.
    """
    path = Path(path)
    if not path.is_file():
        raise ArtifactError(path, "not a file: --raw-json prints one stored document")
    result = read_file(path)
    if result.errors:
        raise result.errors[0]
    return path.read_bytes()
