"""Structure checks of result documents that stay forward-compatible.

An error is something no reader can use (not JSON, no ``results`` array, an
``Input`` that is not JSON, a metric without a kind …), named with the file,
the line (JSON Lines) and the JSON path. Something unknown (a top-level key,
a row column that is not a metric, a metric kind the format does not
document) is a note: later versions may add such things. ``strict`` turns
notes into errors.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from fmbench.runfile.user_files import is_special

from .document import KNOWN_TOP_LEVEL_KEYS, parse_document
from .errors import ArtifactError
from .model import KNOWN_KINDS
from .reader import (
    DEFAULT_LIMITS,
    FOLDER_SUFFIXES,
    JSON_LINES_SUFFIX,
    ReadLimits,
    artifact_text,
    decode_document,
)

Severity = Literal["error", "note"]
KNOWN_ROW_COLUMNS = frozenset({"Input", "Response", "Expected"})
KNOWN_METRIC_KEYS = frozenset({"evaluatorKind", "kind", "value", "rationale"})


@dataclass(frozen=True)
class Finding:
    severity: Severity
    path: Path
    line: int | None
    where: str | None
    message: str

    def __str__(self) -> str:
        parts = [str(self.path) + (f" line {self.line}" if self.line is not None else "")]
        if self.where:
            parts.append(self.where)
        parts.append(self.message)
        return f"{self.severity}: " + ": ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "severity": self.severity,
            "file": str(self.path),
            "line": self.line,
            "where": self.where,
            "message": self.message,
        }


@dataclass
class ValidationReport:
    findings: list[Finding] = field(default_factory=list)
    documents: int = 0

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity == "error"]

    @property
    def ok(self) -> bool:
        return not self.errors

    def to_json(self) -> str:
        body = {"documents": self.documents, "ok": self.ok, "findings": [f.to_dict() for f in self.findings]}
        return json.dumps(body, indent=2, sort_keys=True, ensure_ascii=False)


def _unknowns(data: dict[str, Any]) -> list[tuple[str, str]]:
    found = [(key, "unknown top-level key") for key in data if key not in KNOWN_TOP_LEVEL_KEYS]
    results = data.get("results")
    for index, row in enumerate(results if isinstance(results, list) else []):
        if not isinstance(row, dict):
            continue
        for column, value in row.items():
            where = f"results[{index}].{column}"
            if column in KNOWN_ROW_COLUMNS:
                continue
            if not (isinstance(value, dict) and isinstance(value.get("kind"), str)):
                found.append((where, "unknown column (not a metric)"))
                continue
            if value["kind"] not in KNOWN_KINDS:
                found.append((where, f"unknown metric kind {value['kind']!r}"))
            for key in value:
                if key not in KNOWN_METRIC_KEYS:
                    found.append((f"{where}.{key}", "unknown metric field"))
    return found


def _check_document(data: Any, path: Path, line: int | None, strict: bool, report: ValidationReport) -> None:
    report.documents += 1
    try:
        parse_document(data, path=path, sha256="", line=line)
    except ArtifactError as error:
        report.findings.append(Finding("error", path, line, error.where, error.message))
        return
    for where, message in _unknowns(data):
        report.findings.append(Finding("error" if strict else "note", path, line, where, message))


def _check_file(path: Path, strict: bool, report: ValidationReport, limits: ReadLimits) -> None:
    try:
        text, _ = artifact_text(path, limits)
    except ArtifactError as error:
        report.findings.append(Finding("error", path, None, None, error.message))
        return
    if path.suffix.lower() == JSON_LINES_SUFFIX:
        pieces = [(n, line) for n, line in enumerate(text.split("\n"), start=1) if line.strip()]
    else:
        pieces = [(None, text)]
    rows = 0
    for line, piece in pieces:
        try:
            data = decode_document(piece, path, limits, line, rows)
        except ArtifactError as error:
            report.findings.append(Finding("error", path, line, None, error.message))
            if "-row limit" in error.message:  # the file's documents together: the rest is not read
                return
            continue
        rows += len(data["results"]) if isinstance(data, dict) and isinstance(data.get("results"), list) else 0
        _check_document(data, path, line, strict, report)


def validate_paths(
    paths: list[Path | str], *, strict: bool = False, limits: ReadLimits = DEFAULT_LIMITS
) -> ValidationReport:
    """Check every result file under ``paths`` (folders recursively); a bad file never stops the rest."""
    report = ValidationReport()
    for given in paths:
        path = Path(given)
        if path.is_dir():
            files = sorted(  # a FIFO or a device among them is named, never opened
                p for p in path.rglob("*") if (p.is_file() or is_special(p)) and p.suffix.lower() in FOLDER_SUFFIXES
            )
        elif path.is_file() or is_special(path):  # a FIFO or a device is named, never opened
            files = [path]
        else:
            report.findings.append(Finding("error", path, None, None, "no such file or folder"))
            continue
        for file in files:
            _check_file(file, strict, report, limits)
    return report
