"""Subject-versus-expected differences and failed-metric issues of a result's rows.

The response value (the subject) and the ``Expected`` value are walked
together; each difference is reported at a JSON path (``$.tags``,
``$.tags[1]``, ``$.author.name``, ``$["odd key"]``), object keys visited in
sorted order, with xceval's kinds:

- ``type-mismatch``: different JSON types at the same path;
- ``value-mismatch``: same type, different value;
- ``array-count-mismatch``: arrays of different lengths (then the common
  items are compared, and the extra ones reported one by one);
- ``missing-from-subject``: a key or array item the expected value has and
  the subject lacks;
- ``unexpected-in-subject``: a key or array item only the subject has.

A value that is a JSON string holding an object or an array is decoded
first. A missing, ``null`` or empty-string Expected means no expectation, so
no differences: xceval compares ``""`` like any value and so reports a false
mismatch on every row of a FoundationModelsBench replay, which leaves
Expected empty on purpose.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from .json_text import load_json
from .model import Evaluation, Row

DifferenceKind = Literal[
    "type-mismatch",
    "value-mismatch",
    "array-count-mismatch",
    "missing-from-subject",
    "unexpected-in-subject",
]

EMPTY_EXPECTED_NOTE = (
    "An empty Expected is treated as no expectation: xceval compares an empty string like any "
    "value and so reports a false mismatch on every row of a FoundationModelsBench replay, which "
    "leaves Expected empty on purpose."
)

_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass(frozen=True)
class Difference:
    path: str
    kind: DifferenceKind
    subject: Any
    expected: Any

    def to_dict(self) -> dict[str, Any]:
        """The side a key or item is absent from has no entry (``null`` would be a value)."""
        out: dict[str, Any] = {"path": self.path, "kind": self.kind}
        if self.kind != "missing-from-subject":
            out["subject"] = self.subject
        if self.kind != "unexpected-in-subject":
            out["expected"] = self.expected
        return out

    def to_text(self) -> str:
        def shown(value: Any, absent: bool) -> str:
            return "absent" if absent else json.dumps(value, ensure_ascii=False)

        subject = shown(self.subject, self.kind == "missing-from-subject")
        expected = shown(self.expected, self.kind == "unexpected-in-subject")
        if self.kind == "array-count-mismatch":
            subject, expected = f"{self.subject} items", f"{self.expected} items"
        return f"{self.kind} at {self.path}: subject {subject}, expected {expected}"


def decode_structured(value: Any) -> Any:
    """A JSON string holding an object or an array, decoded; anything else unchanged."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if not text or text[0] not in "{[":
        return value
    try:
        decoded = load_json(text)
    except json.JSONDecodeError:
        return value
    return decoded if isinstance(decoded, dict | list) else value


def member_path(parent: str, key: str) -> str:
    """``$.name`` for a plain key, ``$["odd key"]`` otherwise."""
    if _PLAIN_KEY.match(key):
        return f"{parent}.{key}"
    return f"{parent}[{json.dumps(key, ensure_ascii=False)}]"


def _type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _walk(subject: Any, expected: Any, path: str, out: list[Difference]) -> None:
    if _type(subject) != _type(expected):
        out.append(Difference(path, "type-mismatch", subject, expected))
        return
    if isinstance(expected, dict):
        for key in sorted(set(subject) | set(expected)):
            where = member_path(path, key)
            if key not in subject:
                out.append(Difference(where, "missing-from-subject", None, expected[key]))
            elif key not in expected:
                out.append(Difference(where, "unexpected-in-subject", subject[key], None))
            else:
                _walk(subject[key], expected[key], where, out)
        return
    if isinstance(expected, list):
        if len(subject) != len(expected):
            out.append(Difference(path, "array-count-mismatch", len(subject), len(expected)))
        for index in range(max(len(subject), len(expected))):
            where = f"{path}[{index}]"
            if index >= len(subject):
                out.append(Difference(where, "missing-from-subject", None, expected[index]))
            elif index >= len(expected):
                out.append(Difference(where, "unexpected-in-subject", subject[index], None))
            else:
                _walk(subject[index], expected[index], where, out)
        return
    if subject != expected:
        out.append(Difference(path, "value-mismatch", subject, expected))


def has_expectation(expected: Any) -> bool:
    """False for a missing or ``null`` Expected and for an empty string."""
    return expected is not None and expected != ""


def differences(subject: Any, expected: Any) -> list[Difference]:
    """Every difference between the subject and the expected value (none without an expectation)."""
    if not has_expectation(expected):
        return []
    out: list[Difference] = []
    _walk(decode_structured(subject), decode_structured(expected), "$", out)
    return out


@dataclass(frozen=True)
class RowIssues:
    """What is wrong with one row: the metrics it failed and its differences from Expected."""

    index: int
    record_id: str | None
    failed_metrics: tuple[str, ...]
    differences: tuple[Difference, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "recordID": self.record_id,
            "failedMetrics": list(self.failed_metrics),
            "differences": [difference.to_dict() for difference in self.differences],
        }


def row_issues(row: Row) -> RowIssues | None:
    """The row's issues, or ``None`` when it failed nothing and matches its expectation."""
    subject = row.response.value_raw if row.response is not None else None
    found = differences(subject, row.expected)
    failed = tuple(metric.name for metric in row.failed_metrics)
    if not failed and not found:
        return None
    return RowIssues(row.index, row.record_id, failed, tuple(found))


def evaluation_issues(evaluation: Evaluation) -> list[RowIssues]:
    """Every row with an issue, in row order."""
    return [issues for row in evaluation.rows if (issues := row_issues(row)) is not None]
