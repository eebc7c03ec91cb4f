"""The ``manifest.json`` written by ``xcrun xcresulttool export evaluations``.

The manifest is a JSON array of test records, each with the attachments that
were exported for it. Key names vary between Xcode versions, so several
spellings are accepted: a test record names its test in ``testIdentifier``
(or ``identifier``, ``testIdentifierURL``, ``testName``, ``name``) and lists
``attachments`` (or ``evaluations``, ``files``); an attachment names the
exported file in ``exportedFileName`` (or ``fileName``, ``filename``,
``path``, ``file``) and its display name in ``suggestedHumanReadableName``
(or ``name``, ``displayName``, ``humanReadableName``). A flat array of
attachments that carry their own test identifier is accepted too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fmbench.runfile.reader import DEFAULT_MAX_BYTES
from fmbench.runfile.user_files import UnreadableFile, read_bytes

from .document import json_error_text
from .errors import ArtifactError
from .json_text import load_json
from .model import ManifestEntry

MANIFEST_NAME = "manifest.json"

TEST_KEYS = ("testIdentifier", "identifier", "testIdentifierURL", "testName", "name")
ATTACHMENT_LIST_KEYS = ("attachments", "evaluations", "files")
FILE_KEYS = ("exportedFileName", "fileName", "filename", "path", "file")
NAME_KEYS = ("suggestedHumanReadableName", "name", "displayName", "humanReadableName")


@dataclass
class Manifest:
    """Exported files (resolved paths) and what the manifest said about each."""

    path: Path
    entries: dict[Path, ManifestEntry] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)
    """The exported files as the manifest names them (beside the manifest)."""
    errors: list[ArtifactError] = field(default_factory=list)


def _first_text(record: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = record.get(key)
        if isinstance(value, str) and value:
            return value
    return None


def read_manifest(path: Path) -> Manifest:
    """Read a manifest; problems become errors in the result, never exceptions."""
    manifest = Manifest(path=path)
    try:
        data = load_json(read_bytes(path, DEFAULT_MAX_BYTES).decode("utf-8-sig"))
    except UnreadableFile as error:  # a FIFO, a device, or past the limit: named, never read whole
        manifest.errors.append(ArtifactError(path, error.reason))
        return manifest
    except OSError as error:
        manifest.errors.append(ArtifactError(path, f"cannot read ({error.strerror})"))
        return manifest
    except UnicodeDecodeError:
        manifest.errors.append(ArtifactError(path, "not UTF-8 text"))
        return manifest
    except json.JSONDecodeError as error:
        manifest.errors.append(ArtifactError(path, json_error_text(error)))
        return manifest

    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        manifest.errors.append(ArtifactError(path, "not a JSON array of test records"))
        return manifest

    folder = path.parent
    for index, record in enumerate(data):
        where = f"[{index}]"
        if not isinstance(record, dict):
            manifest.errors.append(ArtifactError(path, "not an object", where=where))
            continue
        test = _first_text(record, TEST_KEYS)
        attachments: Any = None
        for key in ATTACHMENT_LIST_KEYS:
            if key in record:
                attachments = record[key]
                break
        if attachments is None and _first_text(record, FILE_KEYS):
            # A flat attachment record: its "name" is the attachment's, not the test's.
            test = _first_text(record, tuple(key for key in TEST_KEYS if key != "name"))
            attachments = [record]
        if not isinstance(attachments, list):
            manifest.errors.append(ArtifactError(path, "no attachments array", where=where))
            continue
        for position, attachment in enumerate(attachments):
            item_where = f"{where}.attachments[{position}]"
            if isinstance(attachment, str):
                file_name, display = attachment, None
            elif isinstance(attachment, dict):
                file_name = _first_text(attachment, FILE_KEYS)
                display = _first_text(attachment, NAME_KEYS)
            else:
                file_name, display = None, None
            if not file_name:
                manifest.errors.append(
                    ArtifactError(path, "attachment names no exported file", where=item_where)
                )
                continue
            target = (folder / file_name).resolve()
            if not target.is_file():
                manifest.errors.append(
                    ArtifactError(path, f"exported file {file_name!r} is missing", where=item_where)
                )
                continue
            manifest.entries[target] = ManifestEntry(test_identifier=test, attachment_name=display)
            manifest.files.append(folder / file_name)
    return manifest
