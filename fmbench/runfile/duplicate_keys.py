"""Keys a run file repeats within one object: pydantic keeps the last one without a word.

The runner never writes a key twice, so a repeated one points at a hand edit. Finding them costs
little on the way every file takes: the keys the file spells (counted in C) are compared with the
keys the validated document holds (counted over its objects); only when the two differ is the text
walked token by token to name each repeated key's JSON path, in memory bounded by the nesting.
"""

from __future__ import annotations

import functools
import json
import re
from datetime import datetime
from types import UnionType
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel

from fmbench.errors import Problem

MAX_NAMED = 20
"""The most repeated keys named one by one; the rest are counted in one note."""

_TOKEN = re.compile(rb'("[^"\\]*+(?:\\.[^"\\]*+)*+")([ \t\r\n]*+:)?|[\[\]{},]')
"""A string (a key when a colon follows it) or a bracket or comma; the text between them is skipped."""


def keys_in_text(data: bytes) -> int:
    """How many keys ``data`` spells: colons right after a closing quote (or after one space, as the runner
    writes) that is not itself escaped. A quote inside a string is escaped, so ``\\":`` is text, not a key.

    Other whitespace before a colon, or a key ending in an escaped backslash, is missed: the count is then
    lower than the document's and the walk of :func:`repeated_keys` decides.
    """
    import numpy as np  # slow to import; an ingest and validate have it loaded already (through pyarrow)

    text = np.frombuffer(data, dtype=np.uint8)
    colons = np.flatnonzero(text[3:] == ord(":")) + 3  # a key is at least two quotes before its colon
    quote = np.where(text[colons - 1] == ord(" "), colons - 2, colons - 1)
    keys = (text[quote] == ord('"')) & (text[quote - 1] != ord("\\"))
    return int(np.count_nonzero(keys))


_SCALARS = (str, int, float, bool, datetime, type(None))


def _holds_objects(annotation: Any) -> bool:
    """Whether a field of this type can hold an object or an array (not only numbers, strings and dates)."""
    if get_origin(annotation) is Annotated:
        return _holds_objects(get_args(annotation)[0])
    arguments = get_args(annotation)
    if arguments and get_origin(annotation) in (Union, UnionType):
        return any(_holds_objects(a) for a in arguments)
    return not (isinstance(annotation, type) and issubclass(annotation, _SCALARS))


@functools.cache
def _nested_fields(model: type[BaseModel]) -> tuple[str, ...]:
    return tuple(name for name, info in model.model_fields.items() if _holds_objects(info.annotation))


def keys_in_document(document: BaseModel) -> int:
    """How many keys the validated ``document`` holds: every model's fields given in the file (its extra
    keys among them) and the keys of every object kept as data. Only fields that can hold an object are
    walked into, and a model with none (a check's result, say) is counted where it is met."""
    count = 0
    stack: list[Any] = [document]
    nested = (BaseModel, list, dict)
    while stack:
        value = stack.pop()
        if isinstance(value, BaseModel):
            count += len(value.model_fields_set)
            fields = value.__dict__
            for name in _nested_fields(type(value)):
                member = fields[name]
                if isinstance(member, BaseModel) and not member.__pydantic_extra__ and not _nested_fields(type(member)):
                    count += len(member.model_fields_set)
                elif isinstance(member, nested):
                    stack.append(member)
            extra = value.__pydantic_extra__
            if extra:
                stack += [v for v in extra.values() if isinstance(v, nested)]
        elif isinstance(value, dict):
            count += len(value)
            stack += [v for v in value.values() if isinstance(v, nested)]
        else:
            for member in value:
                if isinstance(member, BaseModel) and not member.__pydantic_extra__ and not _nested_fields(type(member)):
                    count += len(member.model_fields_set)
                elif isinstance(member, nested):
                    stack.append(member)
    return count


def _path(parts: list[str | int]) -> str:
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out or "(top level)"


def repeated_keys(data: bytes) -> list[str]:
    """The JSON path of every key that repeats a key of its object, in the file's order."""
    found: list[str] = []
    frames: list[list[Any]] = []  # per open object: [its keys so far, the current key]; per array: [None, index]
    for token in _TOKEN.finditer(data):
        first = token.group()[:1]
        if token.group(2) is not None:
            if not frames or frames[-1][0] is None:
                return found  # a key outside an object: not JSON, which the reader has refused already
            raw = token.group(1)
            try:
                key = json.loads(raw) if b"\\" in raw else raw[1:-1].decode("utf-8")
            except ValueError:
                return found
            if key in frames[-1][0]:
                found.append(_path([frame[1] for frame in frames[:-1]] + [key]))
            frames[-1][0].add(key)
            frames[-1][1] = key
        elif first == b"{":
            frames.append([set(), None])
        elif first == b"[":
            frames.append([None, 0])
        elif first in (b"}", b"]"):
            if frames:
                frames.pop()
        elif first == b"," and frames and frames[-1][0] is None:
            frames[-1][1] += 1
    return found


def duplicate_key_notes(data: bytes, document: BaseModel) -> list[Problem]:
    """A note for each key of ``data`` that repeats one of its object (the last one was kept)."""
    if keys_in_text(data) == keys_in_document(document):
        return []
    paths = repeated_keys(data)
    notes = [
        Problem(where, "key repeated in its object; the last one was read (the runner writes each key once: a hand edit?)")
        for where in paths[:MAX_NAMED]
    ]
    if len(paths) > MAX_NAMED:
        notes.append(Problem("(file)", f"{len(paths) - MAX_NAMED:,} more repeated keys"))
    return notes
