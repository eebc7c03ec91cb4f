"""Operator annotations: facts a run file cannot hold, kept in a sidecar beside it.

``<run>.meta.yaml`` beside ``<run>.json`` may give the connection type and
approximate location of a PCC run, evidence of the PCC entitlement, a note,
and corrections. They are shown beside the run's own data and never rewrite it.
"""

from __future__ import annotations

import difflib
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from fmbench.errors import AnnotationError
from fmbench.runfile.user_files import FileTooLarge, UnreadableFile, is_special, read_bytes

SIDECAR_SUFFIXES = (".meta.yaml", ".meta.yml")
SIDECAR_KEYS: dict[str, str] = {
    "connection": "How a PCC run reached the service (`wifi`, `ethernet`, `cellular`, ...): text. A PCC run needs it "
                  "to be publishable.",
    "location": "The approximate place a PCC run was measured from (`Amsterdam, NL`): text. A PCC run needs it to be "
                "publishable.",
    "entitlement": "Evidence of the PCC entitlement (`present: verified with codesign`); text starting `missing`, "
                   "`absent`, `no `, `none` or `lacking` judges the run invalid.",
    "note": "Free text shown on the run page.",
    "corrections": "A list of corrections of recorded fields, each a mapping of `field` (a JSON path such as "
                   "`environment.deviceName`), `value` and `reason`; shown beside the recorded value, never "
                   "rewriting the file.",
    "simulator": "`true` or `false`: the operator's word on whether the run was measured in a Simulator; it decides. "
                 "Needs `evidence` beside it.",
    "evidence": "How the operator knows what `simulator` says (`run in Xcode's iPhone 17 Pro simulator`): text.",
}
"""Every key a sidecar may hold, and what it means (docs/reference/sidecars.md is generated from it)."""
_KNOWN = tuple(SIDECAR_KEYS)

MAX_SIDECAR_BYTES = 256 * 1024
"""A sidecar is a few lines an operator typed; a quarter of a megabyte is not one."""
MAX_SIDECAR_DEPTH = 32
"""How deeply a sidecar may nest lists and mappings (it needs three levels)."""


class _Refused(Exception):
    def __init__(self, message: str, mark: Any) -> None:
        super().__init__(message)
        self.message = message
        self.mark = mark


class _SidecarLoader(yaml.SafeLoader):
    """YAML's safe subset, less what a sidecar never needs and an attacker would use.

    Aliases (``*name``) are refused: each one repeats a whole subtree, so a few
    hundred bytes of nested aliases expand to gigabytes ("billion laughs").
    Nesting is bounded, so a deep file cannot exhaust the parser's recursion.
    Unknown tags stay refused, as in ``safe_load``.
    """

    depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise _Refused(f"YAML aliases (*{event.anchor}) are not accepted in a sidecar (write each value out)", event.start_mark)
        self.depth += 1
        try:
            if self.depth > MAX_SIDECAR_DEPTH:
                raise _Refused(f"nested more than {MAX_SIDECAR_DEPTH} levels deep", self.peek_event().start_mark)
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


def _too_big(file_name: str, size: int) -> AnnotationError:
    return AnnotationError(
        f"{file_name}: {size:,} bytes is larger than the {MAX_SIDECAR_BYTES:,}-byte limit for a sidecar; "
        "shorten it (a sidecar holds a few annotations)"
    )


def read_sidecar(path: Path) -> bytes:
    """A sidecar's bytes, refused past :data:`MAX_SIDECAR_BYTES` without reading more than that."""
    try:
        return read_bytes(path, MAX_SIDECAR_BYTES)
    except FileTooLarge as exc:
        raise _too_big(path.name, exc.size) from None
    except UnreadableFile as exc:  # a FIFO or a device: named, never opened in a way that blocks
        raise AnnotationError(f"{path.name}: {exc.reason}") from None


@dataclass(frozen=True)
class Correction:
    field: str
    value: str
    reason: str


@dataclass(frozen=True)
class Annotations:
    file_name: str
    sha256: str
    connection: str | None = None
    location: str | None = None
    entitlement: str | None = None
    note: str | None = None
    corrections: tuple[Correction, ...] = ()
    simulator: bool | None = None
    """``simulator: true|false``: the operator's word on where the run was measured; it decides."""
    simulator_evidence: str | None = None
    """``evidence:``, required beside ``simulator:``: how the operator knows."""
    extra: dict[str, Any] = field(default_factory=dict)
    problems: tuple[str, ...] = ()
    """What the publisher is told, one line each: the sidecar could not be read (every field above is then not
    recorded, and the run is published all the same), or a key is unknown (named with the nearest known key)."""
    unreadable: bool = False

    @property
    def entitlement_missing(self) -> bool:
        text = (self.entitlement or "").strip().lower()
        return text.startswith(("missing", "absent", "no ", "none", "lacking"))


def sidecar_for(run_path: Path) -> Path | None:
    """The sidecar beside a run file, if there is one."""
    stem = run_path.name.removesuffix(".json")
    for suffix in SIDECAR_SUFFIXES:
        candidate = run_path.with_name(stem + suffix)
        if candidate.is_file() or is_special(candidate):  # a FIFO or device is named by read_sidecar
            return candidate
    return None


def is_sidecar(path: Path) -> bool:
    return path.name.endswith(SIDECAR_SUFFIXES)


def _optional_text(doc: dict[str, Any], key: str, file_name: str) -> str | None:
    value = doc.get(key)
    if value is None:
        return None
    if not isinstance(value, (str, int, float)):
        raise AnnotationError(f"{file_name}: {key}: expected text")
    return str(value)


def _simulator(doc: dict[str, Any], file_name: str) -> tuple[bool | None, str | None]:
    """``simulator: true|false`` and the ``evidence:`` it must come with."""
    if "simulator" not in doc:
        return None, _optional_text(doc, "evidence", file_name)
    value = doc["simulator"]
    if not isinstance(value, bool):
        raise AnnotationError(f"{file_name}: simulator: expected true or false, found {value!r}")
    evidence = _optional_text(doc, "evidence", file_name)
    if evidence is None or not evidence.strip():
        raise AnnotationError(
            f"{file_name}: simulator: {str(value).lower()} needs evidence: beside it "
            "(how you know, e.g. evidence: run in Xcode's iPhone 17 Pro simulator)"
        )
    return value, " ".join(evidence.split())


def unknown_key(key: object, file_name: str) -> str:
    """The line for a key a sidecar does not know: the nearest known key (difflib), else every known key."""
    near = difflib.get_close_matches(str(key), _KNOWN, n=1, cutoff=0.6)
    hint = f"did you mean {near[0]!r}?" if near else f"the known keys are {', '.join(_KNOWN)}"
    return f"{file_name}: unknown key {str(key)!r}, ignored ({hint})"


def unreadable_annotations(file_name: str, sha256: str, reason: str) -> Annotations:
    """A sidecar that cannot be read: nothing of it recorded, and ``reason`` the line that says so."""
    return Annotations(
        file_name=file_name, sha256=sha256, unreadable=True,
        problems=(f"{reason} (the run is published with its sidecar's fields not recorded)",),
    )


def annotations_from(data: bytes, file_name: str, sha256: str) -> Annotations:
    """:func:`parse_annotations`, except that a sidecar that cannot be read records nothing and says why."""
    try:
        return parse_annotations(data, file_name, sha256)
    except AnnotationError as exc:
        return unreadable_annotations(file_name, sha256, str(exc))


def read_annotations(path: Path) -> tuple[Annotations, bytes | None]:
    """A sidecar's annotations and bytes; one that cannot be read (too big, unreadable, not a sidecar's YAML)
    gives annotations that record nothing and name the problem, never an error that would drop its run."""
    try:
        data = read_sidecar(path)
    except AnnotationError as exc:
        return unreadable_annotations(path.name, "", str(exc)), None
    except OSError as exc:
        return unreadable_annotations(path.name, "", f"{path.name}: cannot be read: {exc.strerror or exc}"), None
    return annotations_from(data, path.name, hashlib.sha256(data).hexdigest()), data


def parse_annotations(data: bytes, file_name: str, sha256: str) -> Annotations:
    if len(data) > MAX_SIDECAR_BYTES:
        raise _too_big(file_name, len(data))
    try:
        doc = yaml.load(data.decode("utf-8"), Loader=_SidecarLoader) if data.strip() else {}
    except _Refused as exc:
        mark = exc.mark
        raise AnnotationError(
            f"{file_name}: line {mark.line + 1}, column {mark.column + 1}: {exc.message}; fix the sidecar or remove it"
        ) from None
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        where = ""
        mark = getattr(exc, "problem_mark", None)
        if mark is not None:
            where = f" at line {mark.line + 1}, column {mark.column + 1}"
        raise AnnotationError(f"{file_name}: not valid YAML{where}; fix the sidecar or remove it") from None
    if not isinstance(doc, dict):
        raise AnnotationError(f"{file_name}: expected a mapping of connection, location, entitlement, note, corrections")
    corrections = []
    raw = doc.get("corrections") or []
    if not isinstance(raw, list):
        raise AnnotationError(f"{file_name}: corrections: expected a list of {{field, value, reason}}")
    for i, item in enumerate(raw):
        if not isinstance(item, dict) or "field" not in item:
            raise AnnotationError(f"{file_name}: corrections[{i}]: expected a mapping with field, value and reason")
        corrections.append(
            Correction(str(item["field"]), str(item.get("value", "")), str(item.get("reason", "")))
        )
    simulator, evidence = _simulator(doc, file_name)
    return Annotations(
        file_name=file_name,
        sha256=sha256,
        connection=_optional_text(doc, "connection", file_name),
        location=_optional_text(doc, "location", file_name),
        entitlement=_optional_text(doc, "entitlement", file_name),
        note=_optional_text(doc, "note", file_name),
        corrections=tuple(corrections),
        simulator=simulator,
        simulator_evidence=evidence,
        extra={k: v for k, v in doc.items() if k not in _KNOWN},
        problems=tuple(unknown_key(k, file_name) for k in doc if k not in _KNOWN),
    )
