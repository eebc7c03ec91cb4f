"""Read a run file's bytes into a model of its generation, or say exactly what is wrong.

Errors name the file and the place: a JSON path such as
``trials[3].metrics.duration: expected a number``, or the line and column of
JSON that does not parse.
"""

from __future__ import annotations

import gc
import json
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import TypeAdapter, ValidationError

from fmbench.errors import Problem, RunFileError
from fmbench.runfile.models import (
    COUNT_MAX,
    MEASUREMENT_MAX,
    UINT64_MAX,
    CurrentRun,
    LegacyRun,
    RunDocument,
)
from fmbench.runfile.shape import (
    COUNTED_ARRAYS,
    ArrayExtent,
    TooMany,
    may_hold_more,
    top_level_arrays,
    values_over_allowance,
)

Generation = Literal["current", "legacy"]

DEFAULT_MAX_BYTES = 24 * 1024 * 1024
"""The largest run file an ingest takes by default: about 6,000 trials.

Ingesting one run file peaks at about 150 MiB + 6 times its size (the models
of its trials, its rows, DuckDB's copies of the stored file), which stays
within the promised 5 times its size + 200 MiB up to about 30 MiB; measured,
a 23.5 MiB file peaked at 293 to 306 MiB of its 317 MiB bound and a 39 MiB one at
its bound. ``--max-bytes`` raises the limit for a machine with memory to spare.
"""

DEFAULT_MAX_TRIALS = 10_000
"""The most trials (and, apart, failures and summaries) a run file may hold by default: twice a full run.

The byte limit bounds a run of realistic trials (about 4 KiB each); this one bounds a run of tiny ones,
which cost about 5 KiB of memory each whatever their size in the file: 10,000 trials of 218 bytes
peaked at 189 MiB, within 5 times their 2.2 MB + 200 MiB, and 100,000 at 641 MiB, twice theirs.
It is checked before pydantic builds anything (:func:`may_hold_more`), so a file of a million empty
trials is refused at once. ``--max-trials`` raises it for a machine with memory to spare.
"""
MAX_PROBLEMS = 200
"""The most problems listed for one file; the rest are counted (``RunFileError.more``)."""
ELEMENTS_PER_SLICE = 1_000
"""A top-level array longer than this is validated this many elements (at most :data:`CHUNK_BYTES`) at a time."""

_TOP_LEVEL_KEYS = ("suite", "model", "environment", "trials")

_MESSAGES = {
    "float_type": "expected a number",
    "float_parsing": "expected a number",
    "finite_number": "expected a finite number (NaN and Infinity are not measurements)",
    "int_type": "expected an integer",
    "int_parsing": "expected an integer",
    "int_from_float": "expected an integer",
    "string_type": "expected a string",
    "bool_type": "expected true or false",
    "bool_parsing": "expected true or false",
    "list_type": "expected an array",
    "dict_type": "expected an object",
    "model_type": "expected an object",
    "model_attributes_type": "expected an object",
    "missing": "required field is missing",
    "datetime_type": "expected an ISO-8601 date such as 2026-06-12T08:39:03Z",
    "datetime_parsing": "expected an ISO-8601 date such as 2026-06-12T08:39:03Z",
    "datetime_from_date_parsing": "expected an ISO-8601 date such as 2026-06-12T08:39:03Z",
}


@dataclass(frozen=True)
class ParsedRun:
    generation: Generation
    document: RunDocument


def json_path(loc: Sequence[int | str]) -> str:
    """``('trials', 3, 'metrics', 'duration')`` -> ``trials[3].metrics.duration``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or "(top level)"


def _clean_loc(loc: Sequence[int | str]) -> list[int | str]:
    # Annotated validators add a segment naming the validator (e.g. 'function-after[...]').
    return [p for p in loc if not (isinstance(p, str) and ("[" in p and "]" in p))]


_LIMITS = {
    UINT64_MAX: " (an unsigned 64-bit value)",
    COUNT_MAX: " (a signed 64-bit count)",
    MEASUREMENT_MAX: " (no real duration or rate is that large)",
}


def _shown(value: Any) -> str:
    """A found value for a message: short, and never a failure itself (Python will not print huge integers)."""
    try:
        text = repr(value)
    except ValueError:
        return "a number too long to show"
    return text if len(text) <= 40 else text[:37] + "..."


def _describe(error: Any) -> str:
    kind = error["type"]
    if kind in ("greater_than_equal", "less_than_equal"):
        ctx = error.get("ctx", {})
        found = _shown(error.get("input"))
        if "ge" in ctx:
            return f"must be at least {ctx['ge']}, found {found}"
        limit = ctx["le"]
        shown = f"{limit:.0e}" if isinstance(limit, float) else str(limit)
        return f"must be at most {shown}{_LIMITS.get(limit, '')}, found {found}"
    if kind == "value_error":
        return str(error["msg"]).removeprefix("Value error, ")
    message = _MESSAGES.get(kind, str(error["msg"]).rstrip("."))
    if kind in ("float_type", "int_type", "string_type", "bool_type") and "input" in error:
        found = error["input"]
        shown = repr(found) if not isinstance(found, (dict, list)) else type(found).__name__
        if len(shown) > 40:
            shown = shown[:37] + "..."
        message = f"{message}, found {shown}"
    return message


def _json_problem(data: bytes, parser_says: str = "") -> Problem:
    """Locate broken JSON by line and column, the way an editor would."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return Problem(f"byte {exc.start}", "not UTF-8 text; a run file is UTF-8 JSON")
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        # The whole of both parsers' words: Python's message names where the broken part starts (its own ``msg``
        # ends in "starting at" without the place), the validator's where it gave up (the end of a truncated file).
        said = f"invalid JSON: {exc}"
        if parser_says and parser_says not in said:
            said += f"; {parser_says}"
        return Problem(f"line {exc.lineno}, column {exc.colno}", said, exc.lineno, exc.colno)
    except RecursionError:
        return Problem("(top level)", "invalid JSON: nested too deeply")
    except ValueError:  # a number too long for Python to convert; the validator's own words say where
        pass
    found = re.search(r"^(.*) at line (\d+) column (\d+)$", parser_says)
    if found:
        line, column = int(found.group(2)), int(found.group(3))
        return Problem(f"line {line}, column {column}", f"invalid JSON: {found.group(1)}", line, column)
    return Problem("(top level)", "invalid JSON")


_CURRENT_TOP_LEVEL = (b"sessionMode", b"reasoningLevel", b"fallbackMode", b"connectivity", b"randomSeed")
"""Top-level keys only the current generation writes; a legacy file has none of them."""

_QUOTED = tuple(b'"' + name + b'"' for name in _CURRENT_TOP_LEVEL)
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\]]')
"""A JSON string (whole, escapes included) or a bracket: enough to know the nesting depth."""
_KEY_END = re.compile(rb"\s*:")


def detect_generation(data: bytes) -> Generation:
    """Legacy unless the top-level object holds one of the keys only the current generation writes.

    The trials never decide: a run whose every request failed has ``trials: []``
    in either generation. Only keys at depth 1 count (a tool argument or a
    final-state key of the same name does not). A quoted name outside a string
    is always a whole token (a quote inside a string is escaped), so the depth
    is counted only up to each place such a name occurs; for the runner's
    sorted keys the first is ``connectivity``, near the top.
    """
    depth = 0
    scanned = 0
    while True:
        found = [(at, len(q)) for q in _QUOTED if (at := data.find(q, scanned)) >= 0]
        if not found:
            return "legacy"
        at, length = min(found)
        for token in _TOKEN.finditer(data, scanned, at):
            first = token.group()[:1]
            if first in (b"{", b"["):
                depth += 1
            elif first in (b"}", b"]"):
                depth -= 1
        if depth == 1 and _KEY_END.match(data, at + length):
            return "current"
        scanned = at + length


@contextmanager
def gc_paused() -> Iterator[None]:
    """Validation and row building allocate millions of small objects, freed by reference count:
    the cycle collector only slows them."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


CHUNK_BYTES = 2 * 2**20
"""At most about this much of a refused file's array is validated at a time (see :func:`_validate_by_elements`)."""

_trial_lists: dict[Any, TypeAdapter[Any]] = {}


def _bracketed(data: bytes, start: int, end: int) -> bytearray:
    """``[`` + ``data[start:end]`` + ``]``, the slice copied once (slicing and joining bytes copied it twice)."""
    out = bytearray(b"[")
    out += memoryview(data)[start:end]
    out += b"]"
    return out


class _Problems:
    """Problems found a slice at a time: the first :data:`MAX_PROBLEMS` listed, the rest counted."""

    def __init__(self) -> None:
        self.listed: list[Problem] = []
        self.total = 0
        self.invalid_json = False

    def add(self, exc: ValidationError, key: str | None = None, offset: int = 0) -> None:
        self.total += exc.error_count()
        room = MAX_PROBLEMS - len(self.listed)
        if room <= 0 and not self.invalid_json:
            return
        for error in exc.errors(include_url=False):
            if error["type"] == "json_invalid":
                self.invalid_json = True
                return
            if room <= 0:
                continue
            loc = list(error["loc"])
            if key is not None:
                loc = [key, int(loc[0]) + offset, *loc[1:]]
            self.listed.append(Problem(json_path(_clean_loc(loc)), _describe(error)))
            room -= 1


def _validate_by_elements(
    model: type[CurrentRun] | type[LegacyRun], data: bytes, arrays: list[ArrayExtent], file: str
) -> RunDocument:
    """The document validated without its long arrays, then each of them a slice of elements at a time.

    What is held at once is one slice's parsed JSON and errors beside the models kept so far; once a
    problem is found no model is kept, and past :data:`MAX_PROBLEMS` the problems are only counted.
    """
    outside = bytearray()
    last = 0
    for elements in sorted(arrays, key=lambda a: a.start):
        outside += memoryview(data)[last : elements.start]
        outside += b"[]"
        last = elements.end
    outside += memoryview(data)[last:]
    problems = _Problems()
    document: RunDocument | None = None
    try:
        document = model.model_validate_json(outside)
    except ValidationError as exc:
        if any(e["type"] == "json_invalid" for e in exc.errors(include_url=False)):
            raise RunFileError(file, [_json_problem(data)]) from None
        errors = _problems(exc, bytes(outside))
        if any(p.where == "(top level)" for p in errors):
            raise RunFileError(file, errors) from None
        problems.add(exc)
    del outside
    latest = {elements.key: elements for elements in arrays}  # a repeated key: the last one counts, as for pydantic
    for key, elements in sorted(latest.items(), key=lambda item: COUNTED_ARRAYS.index(item[0])):  # the model's order
        adapter = _trial_lists.get((model, key))
        if adapter is None:
            adapter = _trial_lists[(model, key)] = TypeAdapter(model.model_fields[key].annotation)
        validated: list[Any] = []
        first, count = 0, len(elements.starts)
        while first < count and not problems.invalid_json:
            stop = first + 1
            while stop < count and stop - first < ELEMENTS_PER_SLICE and elements.ends[stop] - elements.starts[first] <= CHUNK_BYTES:
                stop += 1
            try:
                piece = adapter.validate_json(_bracketed(data, elements.starts[first], elements.ends[stop - 1]))
            except ValidationError as exc:
                problems.add(exc, key, first)
                validated = []
            else:
                if not problems.total:
                    validated += piece
            first = stop
        if document is not None and not problems.total:
            setattr(document, key, validated)
    if problems.invalid_json:
        raise RunFileError(file, [_json_problem(data)])
    if problems.total or document is None:
        raise RunFileError(file, problems.listed, more=problems.total - len(problems.listed))
    return document


def parse_run(
    data: bytes, file: str, *, max_bytes: int = DEFAULT_MAX_BYTES, max_trials: int | None = DEFAULT_MAX_TRIALS
) -> ParsedRun:
    """Validate ``data`` as a run file named ``file``; raise :class:`RunFileError` if it is not.

    ``max_trials``: the most elements the trials, failures or summaries array may hold (``None``: no limit).
    """
    if len(data) > max_bytes:
        raise RunFileError(
            file,
            [
                Problem(
                    "(file)",
                    f"{len(data):,} bytes is larger than the {max_bytes:,}-byte limit for a run "
                    "file; raise the limit with --max-bytes if this really is one run",
                )
            ],
        )
    if not data.strip():
        raise RunFileError(file, [Problem("(file)", "empty file; expected a JSON run document")])
    if max_trials is not None and (counted := may_hold_more(data, max_trials)):
        try:
            top_level_arrays(data, max_trials, counted)
        except TooMany as many:
            raise _too_many(file, many.key, max_trials) from None
    values = values_over_allowance(data)
    if values is not None:
        if max_trials is not None:  # a dense file of many trials (empty ones, say) is told of the trial limit
            try:
                top_level_arrays(data, max_trials)
            except TooMany as many:
                raise _too_many(file, many.key, max_trials) from None
        raise RunFileError(
            file,
            [
                Problem(
                    "(file)",
                    f"more than {values:,} JSON values in {len(data):,} bytes (a value every "
                    f"{len(data) / values:.0f} bytes or less): more than reading a file of this size may hold in "
                    "memory, and no run is written this densely",
                )
            ],
        )
    generation = detect_generation(data)
    model = CurrentRun if generation == "current" else LegacyRun
    try:
        with gc_paused():
            document = model.model_validate_json(data)
    except ValidationError as exc:
        raise _refusal(exc, model, data, file, max_trials) from None
    except RecursionError:
        raise RunFileError(file, [Problem("(top level)", "nested too deeply to be a run")]) from None
    return ParsedRun(generation, document)


def _too_many(file: str, key: str, limit: int) -> RunFileError:
    return RunFileError(
        file,
        [
            Problem(
                key,
                f"more than {limit:,} elements, the limit for a run file; "
                "raise it with --max-trials if this really is one run",
            )
        ],
    )


def _refusal(
    exc: ValidationError, model: type[CurrentRun] | type[LegacyRun], data: bytes, file: str, limit: int | None
) -> RunFileError:
    """The error for a document that failed validation, naming up to :data:`MAX_PROBLEMS` problems.

    The failed validation stopped at the first invalid trial; the problems are collected again a slice
    of elements at a time from the file's own structure (found without building anything), so their
    number is bounded by the slice, not by the file. A file the structure pass cannot follow is
    described from the first validation's errors.
    """
    errors = exc.errors(include_url=False)
    arrays = None
    if not any(e["type"] == "json_invalid" for e in errors):
        try:
            arrays = top_level_arrays(data, limit)
        except TooMany as many:
            assert limit is not None
            return _too_many(file, many.key, limit)
    if arrays is not None:
        try:
            _validate_by_elements(model, data, arrays, file)
        except RunFileError as refused:
            return refused
    problems = _problems(exc, data)
    return RunFileError(file, problems, more=exc.error_count() - len(problems) if len(problems) == MAX_PROBLEMS else 0)


def _problems(exc: ValidationError, data: bytes) -> list[Problem]:
    errors = exc.errors(include_url=False)
    invalid = [e for e in errors if e["type"] == "json_invalid"]
    if invalid:
        return [_json_problem(data, str((invalid[0].get("ctx") or {}).get("error", "")))]
    root_type = [e for e in errors if not e["loc"] and e["type"] in ("model_type", "model_attributes_type")]
    missing_top = {e["loc"][0] for e in errors if e["type"] == "missing" and len(e["loc"]) == 1}
    if root_type or len(missing_top.intersection(_TOP_LEVEL_KEYS)) >= 3:
        return [
            Problem(
                "(top level)",
                "not a FoundationModelsBench run: expected an object with "
                + ", ".join(_TOP_LEVEL_KEYS)
                + " and the other run fields",
            )
        ]
    problems = []
    for error in errors[:MAX_PROBLEMS]:
        loc = _clean_loc(error["loc"])
        problems.append(Problem(json_path(loc), _describe(error)))
    return problems
