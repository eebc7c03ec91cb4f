"""Listing and converting result documents: single files, JSON Lines collections, folders.

``list_results`` names every result under a path (folders recursively, with
an exported ``manifest.json``) with its ids, times and row count.
``convert`` moves documents between a result file (``.xcevalresult``), a
JSON Lines collection (``.jsonl``, one document per line) and a folder (one
file per result, named by its result id). A round trip is equal as JSON, not
byte for byte (indentation and key spacing change).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fmbench.owned_files import place_files
from fmbench.runfile.user_files import is_special

from .document import parse_document
from .errors import ArtifactError
from .json_text import TextRows
from .reader import (
    ARTIFACT_SUFFIX,
    DEFAULT_LIMITS,
    JSON_LINES_SUFFIX,
    ReadLimits,
    artifact_text,
    decode_document,
    read_artifacts,
)


@dataclass(frozen=True)
class ListedResult:
    source: str
    line: int | None
    evaluation_id: str | None
    result_id: str | None
    start_time: str | None
    end_time: str | None
    row_count: int
    is_judge: bool
    test_identifier: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "line": self.line,
            "evaluationID": self.evaluation_id,
            "resultID": self.result_id,
            "startTime": self.start_time,
            "endTime": self.end_time,
            "rowCount": self.row_count,
            "isJudge": self.is_judge,
            "testIdentifier": self.test_identifier,
        }


@dataclass
class ResultListing:
    results: list[ListedResult] = field(default_factory=list)
    errors: list[ArtifactError] = field(default_factory=list)

    def to_json(self) -> str:
        body = {"results": [r.to_dict() for r in self.results], "errors": [str(e) for e in self.errors]}
        return json.dumps(body, indent=2, sort_keys=True, ensure_ascii=False)


def list_results(path: Path | str, limits: ReadLimits = DEFAULT_LIMITS) -> ResultListing:
    """Every result under ``path`` (file, JSON Lines or folder, recursively); bad ones become errors."""
    read = read_artifacts([path], limits)
    listed = [
        ListedResult(
            source=str(ev.path),
            line=ev.line,
            evaluation_id=ev.evaluation_id,
            result_id=ev.result_id,
            start_time=ev.start_time,
            end_time=ev.end_time,
            row_count=len(ev.rows),
            is_judge=ev.is_judge,
            test_identifier=ev.manifest.test_identifier if ev.manifest else None,
        )
        for ev in read.documents
    ]
    return ResultListing(listed, read.errors)


@dataclass(frozen=True)
class StoredDocument:
    """A result document as decoded JSON, with where it came from."""

    path: Path
    line: int | None
    data: dict[str, Any]


def _documents_in_file(path: Path, limits: ReadLimits) -> list[StoredDocument]:
    text, _ = artifact_text(path, limits)
    if path.suffix.lower() == JSON_LINES_SUFFIX:
        pieces = [(n, line) for n, line in enumerate(text.split("\n"), start=1) if line.strip()]
    else:
        pieces = [(None, text)]
    out: list[StoredDocument] = []
    rows = 0
    for line, piece in pieces:
        # rows kept as text, made again as they are written: a conversion holds the files' text, not their rows
        data = decode_document(piece, path, limits, line, rows, lazy=True)  # raises with file and place
        results = data.get("results") if isinstance(data, dict) else None
        rows += len(results) if isinstance(results, list | TextRows) else 0
        parse_document(data, path=path, sha256="", line=line)  # raises with file and place
        out.append(StoredDocument(path, line, data))
    return out


def read_documents(path: Path | str, limits: ReadLimits = DEFAULT_LIMITS) -> list[StoredDocument]:
    """The decoded documents of a file or folder; the first bad one raises :class:`ArtifactError`."""
    path = Path(path)
    if path.is_dir():
        files = sorted(
            p
            for p in path.rglob("*")
            if (p.is_file() or is_special(p)) and p.suffix.lower() in (ARTIFACT_SUFFIX, JSON_LINES_SUFFIX)
        )
    elif path.is_file() or is_special(path):  # a FIFO or a device is named by artifact_text, never opened
        files = [path]
    else:
        raise ArtifactError(path, "no such file or folder")
    documents: list[StoredDocument] = []
    for file in files:
        documents.extend(_documents_in_file(file, limits))
    if not documents:
        raise ArtifactError(path, "holds no evaluation results")
    return documents


_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def result_file_name(data: dict[str, Any], ordinal: int) -> str:
    """``<resultID>.xcevalresult`` (unsafe characters replaced); ``result-<n>`` without an id."""
    result_id = data.get("resultID")
    stem = _UNSAFE.sub("_", result_id).strip("._") if isinstance(result_id, str) else ""
    return f"{stem or f'result-{ordinal}'}{ARTIFACT_SUFFIX}"


def _stage(folder: Path, name: str, text: Iterable[str]) -> Path:
    """``text`` (its pieces, each written as it is made) into a hidden temporary file of ``folder``, to be
    moved to ``name`` once checked."""
    folder.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.writelines(text)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return Path(temporary)


def _write_all(folder: Path, files: list[tuple[str, Iterable[str]]], force: bool) -> list[Path]:
    """Write every ``(name, text)`` into ``folder``, or none: a file there that fmbench would not write is
    refused, naming it, unless ``force`` (:func:`fmbench.owned_files.place_files`; no record is kept, so an
    existing file is replaced only when it already holds what is written)."""
    staged: list[tuple[str, Path]] = []
    try:
        for name, text in files:
            staged.append((name, _stage(folder, name, text)))
        return place_files(folder, staged, record=None, force=force, what="a converted result")
    finally:
        for _, temporary in staged:
            temporary.unlink(missing_ok=True)


def convert(
    source: Path | str, target: Path | str, *, force: bool = False, limits: ReadLimits = DEFAULT_LIMITS
) -> list[Path]:
    """Convert between a result file, a JSON Lines collection and a folder; return the files written.

    The target's form follows its name: ``.jsonl`` a collection,
    ``.xcevalresult`` one document (the source must hold exactly one), any
    other name a folder with one file per result named by its result id.
    Every source document is checked before anything is written, and an
    existing file is replaced only when it holds what would be written, or
    with ``force`` (else :class:`fmbench.owned_files.UnownedFileError` names it).
    """
    source, target = Path(source), Path(target)
    documents = read_documents(source, limits)
    suffix = target.suffix.lower()
    if suffix == JSON_LINES_SUFFIX:
        lines = (piece for d in documents for piece in (*_compact(d.data), "\n"))
        return _write_all(target.parent, [(target.name, lines)], force)
    if suffix == ARTIFACT_SUFFIX:
        if len(documents) != 1:
            raise ArtifactError(
                source,
                f"holds {len(documents)} results: convert it into a folder or a .jsonl file, not one {ARTIFACT_SUFFIX}",
            )
        return _write_all(target.parent, [(target.name, _indented(documents[0].data))], force)
    if target.exists() and not target.is_dir():
        raise ArtifactError(target, f"is a file: name a folder, a .jsonl or a {ARTIFACT_SUFFIX} file to convert into")
    names: dict[str, int] = {}
    planned: list[tuple[str, Iterable[str]]] = []
    for ordinal, document in enumerate(documents, start=1):
        name = result_file_name(document.data, ordinal)
        names[name] = names.get(name, 0) + 1
        if names[name] > 1:
            name = name.removesuffix(ARTIFACT_SUFFIX) + f"-{names[name]}{ARTIFACT_SUFFIX}"
        planned.append((name, _indented(document.data)))
    return _write_all(target, planned, force)


def _compact(data: dict[str, Any]) -> Iterator[str]:
    """``json.dumps(data, separators=(",", ":"))`` in pieces, one row of ``results`` at a time."""
    for number, (key, value) in enumerate(data.items()):
        yield ("," if number else "{") + json.dumps(key, ensure_ascii=False) + ":"
        if isinstance(value, TextRows):
            yield "["
            for position, row in enumerate(value):
                yield ("," if position else "") + json.dumps(row, ensure_ascii=False, separators=(",", ":"))
            yield "]"
        else:
            yield json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    yield "}" if data else "{}"


def _indented(data: dict[str, Any]) -> Iterator[str]:
    """``json.dumps(data, indent=2)`` and a newline, in pieces, one row of ``results`` at a time (a JSON
    string holds no raw newline, so indenting a value's text one level deeper is prefixing its lines)."""
    for number, (key, value) in enumerate(data.items()):
        yield (",\n  " if number else "{\n  ") + json.dumps(key, ensure_ascii=False) + ": "
        if isinstance(value, TextRows) and len(value):
            for position, row in enumerate(value):
                text = json.dumps(row, indent=2, ensure_ascii=False).replace("\n", "\n    ")
                yield (",\n    " if position else "[\n    ") + text
            yield "\n  ]"
        elif isinstance(value, TextRows):
            yield "[]"
        else:
            yield json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n  ")
    yield "\n}\n" if data else "{}\n"
