"""Malformed input, generated: a file is read with the right figures or refused with fmbench's own error.

Hypothesis writes arbitrary bytes, arbitrary JSON and valid run files mutated
(a field removed, a type changed, numbers at the edges, duplicate keys). For
each, ``parse_run``, ``analyze_bytes``, ``validate`` and ``ingest`` either
accept it, with figures that match an independent recomputation from the JSON,
or refuse it with a :class:`RunFileError` naming the file and the place. Never
another exception, and never part of a file in the database.

The examples are bounded and derandomized so CI is fast and repeatable; set
``FMBENCH_HYPOTHESIS=explore`` to search with fresh random examples.
"""

from __future__ import annotations

import contextlib
import copy
import itertools
import json
import math
import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fmbench.analysis.run import RunAnalysis, analyze_bytes
from fmbench.cli import main
from fmbench.errors import RunFileError
from fmbench.ingest import ingest_paths
from fmbench.ingest.validate import validate_paths
from fmbench.ingest.writer import CHILD_TABLES
from fmbench.runfile.reader import parse_run
from fmbench.storage.db import connect

from testdata import FIXTURES, RUNS

EXPLORE = os.environ.get("FMBENCH_HYPOTHESIS") == "explore"


def bounded(examples: int) -> settings:
    return settings(
        max_examples=examples * (20 if EXPLORE else 1),
        deadline=None,
        derandomize=not EXPLORE,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


CURRENT = json.loads((RUNS / "purpose-current.json").read_bytes())
LEGACY = json.loads((FIXTURES / "iphone-17-pro-ios27-24a5210f-on-device-quick-2026-06-16.json").read_bytes())
LEGACY["trials"] = LEGACY["trials"][:4]  # small and quick; its stored summaries then disagree, which is data
BASES = {"current": CURRENT, "legacy": LEGACY}

EDGE_NUMBERS = [
    "NaN", "Infinity", "-Infinity", "1e999", "-1e999", "-1", "-0.0", "-1.5", "0", "5e-324", "1e308", "1.7976931348623157e308",
    "1e200", "18446744073709551615", "18446744073709551616", "-9223372036854775809", "2147483648", "9" * 30, "1" + "0" * 400,
    "0.1", "3.0",
]
"""Number tokens as they would appear in a file, written into the JSON text as they are."""

OTHER_TYPES: list[Any] = [None, "", "4.0", 0, 1.5, True, [], {}, {"string": {"_0": "x"}}, ["a", 1]]


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if prefix else []
    if isinstance(value, dict):
        for k, v in value.items():
            found += _paths(v, (*prefix, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            found += _paths(v, (*prefix, i))
    return found


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        doc = doc[part]
    return doc


PATHS = {name: _paths(doc) for name, doc in BASES.items()}
KEYED = {name: [p for p in paths if isinstance(p[-1], str)] for name, paths in PATHS.items()}
NUMERIC = {
    name: [p for p in paths if isinstance(_get(BASES[name], p), (int, float)) and not isinstance(_get(BASES[name], p), bool)]
    for name, paths in PATHS.items()
}


class _Raw:
    """A number token to be written into the JSON text verbatim."""

    def __init__(self, token: str) -> None:
        self.token = token


def _serialize(doc: Any, duplicate: tuple[str, Any] | None = None) -> bytes:
    raws: list[str] = []

    def encode(value: Any) -> Any:
        if isinstance(value, _Raw):
            raws.append(value.token)
            return f"__raw_{len(raws) - 1}__"
        if isinstance(value, dict):
            return {k: encode(v) for k, v in value.items()}
        if isinstance(value, list):
            return [encode(v) for v in value]
        return value

    text = json.dumps(encode(doc), indent=1)
    for i, token in enumerate(raws):
        text = text.replace(f'"__raw_{i}__"', token, 1)
    if duplicate is not None:  # the same key twice in one object, the file's own value second
        key, value = duplicate
        first = f'"{key}": '
        at = text.find(first)
        if at >= 0:
            text = text[:at] + f"{first}{json.dumps(value)}, " + text[at:]
    return text.encode("utf-8")


@st.composite
def mutated_runs(draw: st.DrawFn) -> tuple[str, bytes]:
    """A valid run file of either generation with one to three things changed."""
    generation = draw(st.sampled_from(sorted(BASES)))
    doc = copy.deepcopy(BASES[generation])
    duplicate = None
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["remove", "retype", "number", "number", "duplicate"]))
        if kind == "remove":
            path = draw(st.sampled_from(KEYED[generation]))
            with contextlib.suppress(KeyError, IndexError, TypeError):
                del _get(doc, path[:-1])[path[-1]]
        elif kind == "retype":
            path = draw(st.sampled_from(PATHS[generation]))
            value = draw(st.sampled_from(OTHER_TYPES))
            with contextlib.suppress(KeyError, IndexError, TypeError):
                _get(doc, path[:-1])[path[-1]] = copy.deepcopy(value)
        elif kind == "number":
            path = draw(st.sampled_from(NUMERIC[generation]))
            with contextlib.suppress(KeyError, IndexError, TypeError):
                _get(doc, path[:-1])[path[-1]] = _Raw(draw(st.sampled_from(EDGE_NUMBERS)))
        else:
            key = draw(st.sampled_from(["suite", "warmupCount", "duration", "response", "passed", "scenarioID"]))
            duplicate = (key, draw(st.sampled_from(OTHER_TYPES[:6])))
    return generation, _serialize(doc, duplicate)


JSON_KEYS = st.sampled_from(
    ["suite", "model", "trials", "environment", "warmupCount", "repetitions", "startedAt", "endedAt", "sessionMode",
     "failures", "summaries", "scenario", "scenarioID", "metrics", "duration", "grade", "checks", "deviceName"]
) | st.text(max_size=8)
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(JSON_KEYS, children, max_size=6),
    max_leaves=40,
)


# --- the oracle: figures recomputed from the JSON itself, as the run format defines them ------------


def _nearest_rank(ordered: list[float], q: float) -> float:
    return ordered[max(math.ceil(q * len(ordered)) - 1, 0)]


def _task_passed(t: dict[str, Any], generation: str) -> bool:
    checks = (t.get("grade") or {}).get("checks") or []
    expectation = (t.get("sample") or {}).get("safetyExpectation") if generation == "current" else None
    if not checks and expectation is not None:
        outcome = t.get("safetyOutcome")
        return (expectation == "mustRespond" and outcome == "responded") or (
            expectation == "mustProtect" and outcome in ("guardrailViolation", "refusal")
        )
    return bool(checks) and all(c["passed"] for c in checks)


def oracle(data: bytes, generation: str) -> dict[str, tuple[Any, ...]]:
    doc = json.loads(data)
    trials: dict[str, list[dict[str, Any]]] = {}
    for t in doc["trials"]:
        sid = t["scenario"]["id"] if generation == "legacy" else t["scenarioID"]
        trials.setdefault(sid, []).append(t)
    failures: dict[str, int] = {}
    for f in doc.get("failures") or []:
        if f["scenarioID"] != "__warmup__":
            failures[f["scenarioID"]] = failures.get(f["scenarioID"], 0) + 1
    out = {}
    for sid in set(trials) | set(failures):
        ts, n_failures = trials.get(sid, []), failures.get(sid, 0)
        passed = sum(_task_passed(t, generation) for t in ts)
        durations = sorted(float(t["metrics"]["duration"]) for t in ts)
        shape = (_nearest_rank(durations, 0.5), _nearest_rank(durations, 0.9), durations[0], durations[-1]) if ts else ()
        out[sid] = (len(ts), n_failures, passed, passed / (len(ts) + n_failures), *shape)
    return out


def figures_of(analysis: RunAnalysis) -> dict[str, tuple[Any, ...]]:
    out = {}
    for f in analysis.figures:
        d = f.duration
        shape = (d.median, d.p90, d.minimum, d.maximum) if d.count else ()
        out[f.scenario_id] = (f.trial_count, f.failure_count, f.task_passed_count, f.task_success, *shape)
    return out


def _finite_everywhere(analysis: RunAnalysis) -> bool:
    def finite(value: Any) -> bool:
        if isinstance(value, float):
            return math.isfinite(value)
        if isinstance(value, dict):
            return all(finite(v) for v in value.values())
        return True

    return all(finite(f.as_dict()) for f in analysis.figures)


def assert_refused_properly(exc: RunFileError, name: str) -> None:
    assert exc.file == name
    assert exc.problems and all(p.where and p.message for p in exc.problems)
    assert str(exc).startswith(f"{name}: ")


# --- the properties -------------------------------------------------------------------------------


@bounded(100)
@given(st.binary(max_size=600) | st.builds(lambda n, b: (RUNS / "purpose-current.json").read_bytes()[:n] + b,
                                           st.integers(0, 24_000), st.binary(max_size=8)))
def test_arbitrary_bytes_are_read_or_refused_with_a_run_file_error(data: bytes) -> None:
    try:
        parse_run(data, "bytes.json")
    except RunFileError as exc:
        assert_refused_properly(exc, "bytes.json")


@bounded(100)
@given(JSON_VALUES)
def test_arbitrary_json_is_read_or_refused_with_a_run_file_error(value: Any) -> None:
    data = json.dumps(value).encode("utf-8")
    try:
        analysis = analyze_bytes(data, "any.json")
    except RunFileError as exc:
        assert_refused_properly(exc, "any.json")
    else:
        assert _finite_everywhere(analysis)


@bounded(150)
@given(mutated_runs())
def test_a_mutated_run_file_is_refused_with_its_place_or_read_with_figures_that_match_the_json(
    case: tuple[str, bytes],
) -> None:
    generation, data = case
    try:
        analysis = analyze_bytes(data, "mutated.json")
    except RunFileError as exc:
        assert_refused_properly(exc, "mutated.json")
        return
    assert analysis.record.generation == generation
    assert _finite_everywhere(analysis)
    assert figures_of(analysis) == oracle(data, generation)


@pytest.fixture(scope="module")
def ingest_db(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("malformed")
    db = root / "malformed.duckdb"
    assert ingest_paths([RUNS / "purpose-current.json"], db).ok
    return root, db


TABLES = ("sources", "runs", *CHILD_TABLES)
_names = itertools.count()


def _counts(db: Path) -> dict[str, int]:
    with connect(db, read_only=True) as con:
        return {t: int(con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]) for t in TABLES}


@bounded(30)
@given(mutated_runs())
def test_validate_and_ingest_of_a_mutated_file_agree_and_a_refused_file_leaves_no_row_in_any_table(
    ingest_db: tuple[Path, Path], case: tuple[str, bytes]
) -> None:
    root, db = ingest_db
    _, data = case
    path = root / f"mutated-{next(_names)}.json"
    path.write_bytes(data)
    before = _counts(db)
    (checked,) = validate_paths([path])
    (outcome,) = ingest_paths([path], db).outcomes
    after = _counts(db)
    if outcome.status == "error":
        assert not checked.readable
        assert outcome.message.startswith(f"{path.name}: ")
        assert checked.problems and all(p.where for p in checked.problems)
        assert after == before
    elif outcome.status == "duplicate":
        assert after == before
    else:
        assert checked.readable and outcome.status == "ingested"
        assert checked.analysis is not None
        a = checked.analysis
        assert after["runs"] == before["runs"] + 1 and after["sources"] == before["sources"] + 1
        assert after["trials"] == before["trials"] + len(a.record.trials)
        assert after["failures"] == before["failures"] + len(a.record.failures)
        assert after["scenario_figures"] == before["scenario_figures"] + len(a.figures)


def test_a_file_over_the_size_limit_is_refused_by_the_command_line_with_a_message_that_says_so(tmp_path: Path) -> None:
    runner = CliRunner()
    source = str(RUNS / "purpose-current.json")
    size = (RUNS / "purpose-current.json").stat().st_size
    for args in (["validate", "--max-bytes", "1000", source],
                 ["ingest", "--max-bytes", "1000", "--db", str(tmp_path / "x.duckdb"), source],
                 ["summarize", "--max-bytes", "1000", source]):
        result = runner.invoke(main, args)
        assert result.exit_code == 1, args
        assert f"{size:,} bytes is larger than the 1,000-byte limit for a run file" in result.output, args
        assert "--max-bytes" in result.output and "Traceback" not in result.output
    result = runner.invoke(main, ["validate", "--max-bytes", str(size), source])
    assert result.exit_code == 0
    result = runner.invoke(main, ["validate", "--max-bytes", "0", source])
    assert result.exit_code == 2 and "--max-bytes" in result.output
