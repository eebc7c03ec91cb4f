"""A run's trials and failures as its pages and data files show them, read once for all of them (:func:`run_trials`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import duckdb

from fmbench import urls
from fmbench.analysis import display as d
from fmbench.analysis import figure_catalog as fc
from fmbench.errors import NotFoundError
from fmbench.runfile import vocabulary as vocab
from fmbench.views import distributions as dist
from fmbench.views import run_queries as q
from fmbench.views.common import (
    arguments_text,
    rows,
    typed_text,
)
from fmbench.views.site import SiteContext


def failure_rows(
    con: duckdb.DuckDBPyConnection, run_id: str, scenario_id: str | None = None, *, tool_calls: bool = True,
    final_state: bool = True,
) -> list[dict[str, Any]]:
    """A run's failures (of one scenario, when given) in file order, each with the tool calls it made
    and the final state it left (``tool_calls``, ``final_state``; empty when the file records none; not asked
    for when ``tool_calls`` or ``final_state`` says the run has none)."""
    where = " AND scenario_id = ?" if scenario_id is not None else ""
    params = [run_id] if scenario_id is None else [run_id, scenario_id]
    found = rows(
        con,
        "SELECT ordinal, failure_id, scenario_id, sample_id, iteration, kind, message, is_warmup FROM failures "
        f"WHERE run_id = ?{where} ORDER BY ordinal",
        params,
    )
    if not found:
        return found
    calls: dict[int, list[ToolCallDetail]] = {}
    for o, name, args in con.execute(
        "SELECT owner_ordinal, name, arguments_json FROM tool_calls WHERE run_id = ? AND owner = 'failure' "
        "ORDER BY owner_ordinal, ordinal",
        [run_id],
    ).fetchall() if tool_calls else ():
        calls.setdefault(o, []).append(ToolCallDetail(name, arguments_text(args)))
    state: dict[int, list[tuple[str, str]]] = {}
    for o, key, value in con.execute(
        "SELECT owner_ordinal, key, value_json FROM final_state WHERE run_id = ? AND owner = 'failure' "
        "ORDER BY owner_ordinal, key",
        [run_id],
    ).fetchall() if final_state else ():
        state.setdefault(o, []).append((key, typed_text(value)))
    for f in found:
        f["tool_calls"] = calls.get(f["ordinal"], [])
        f["final_state"] = state.get(f["ordinal"], [])
    return found


def failure_json(f: dict[str, Any]) -> dict[str, Any]:
    """A failure for a data file: where, what, and the tool calls and final state it left."""
    return {
        "ordinal": f["ordinal"],
        "failure_id": f["failure_id"],
        "scenario_id": f["scenario_id"],
        "sample_id": f["sample_id"],
        "iteration": f["iteration"],
        "kind": f["kind"],
        "message": f["message"],
        "is_warmup": f["is_warmup"],
        "tool_calls": [{"name": t.name, "arguments": dict(t.arguments)} for t in f.get("tool_calls", [])],
        "final_state": [{"key": k, "value": v} for k, v in f.get("final_state", [])],
    }


@dataclass
class CheckDetail:
    label: str
    passed: bool
    detail: str | None


@dataclass
class ToolCallDetail:
    name: str
    arguments: list[tuple[str, str]]


@dataclass
class TrialDetail:
    """A trial as its pages and data show it; not to be changed once made.

    Not a frozen dataclass, as the site's other contexts are: a build makes one for every trial of every run, and
    a frozen dataclass sets each of its 20 fields through ``object.__setattr__`` (about half its making).
    """

    ordinal: int
    trial_id: str
    iteration: int
    sample_id: str
    prompt: str
    instructions: str | None
    response: str
    requested_model: str
    executed_model: str
    fallback: str | None
    safety: str | None
    verdict: str
    checks: list[CheckDetail]
    tool_calls: list[ToolCallDetail]
    final_state: list[tuple[str, str]]
    metrics: tuple[str | None, ...]
    """The trial's values of :data:`METRIC_LABELS`, in that order (``None``: not recorded)."""
    thermal: str | None
    offline_success: str | None = None
    """yes / no; ``None`` where the file does not record it (the legacy generation)."""
    visual_fixture: str | None = None
    environment: tuple[str | None, ...] = ()
    """The trial's own environment snapshot (:data:`ENVIRONMENT_LABELS`: Low Power Mode, thermal state, when it
    was taken)."""

    def to_json(self) -> dict[str, Any]:
        """The fields in order, as plain JSON values (what ``dataclasses.asdict`` gave, without its deep copies)."""
        return {
            "ordinal": self.ordinal,
            "trial_id": self.trial_id,
            "iteration": self.iteration,
            "sample_id": self.sample_id,
            "prompt": self.prompt,
            "instructions": self.instructions,
            "response": self.response,
            "requested_model": self.requested_model,
            "executed_model": self.executed_model,
            "fallback": self.fallback,
            "safety": self.safety,
            "verdict": self.verdict,
            "checks": [{"label": c.label, "passed": c.passed, "detail": c.detail} for c in self.checks],
            "tool_calls": [{"name": t.name, "arguments": dict(t.arguments)} for t in self.tool_calls],
            "final_state": [{"key": k, "value": v} for k, v in self.final_state],
            "metrics": dict(zip(METRIC_LABELS, self.metrics, strict=True)),
            "thermal": self.thermal,
            "offline_success": self.offline_success,
            "visual_fixture": self.visual_fixture,
            "environment": dict(zip(ENVIRONMENT_LABELS, self.environment, strict=True)),
        }


def _clock(value: float | None) -> str | None:
    """Seconds between two wall-clock readings; a negative one says it is a clock step (kept as recorded)."""
    text = d.seconds(value)
    return f"{text} (negative: a wall-clock step, kept as recorded)" if value is not None and value < 0 else text


def _token_source(value: str | None) -> str | None:
    return vocab.label("tokenCountSource", value)


def _thermal_state(value: str | None) -> str | None:
    return vocab.label("thermalState", value)


def _low_power(value: bool | None) -> str | None:
    return d.yes_no(value, "on", "off")


_METRICS: tuple[tuple[str, str, Callable[[Any], str | None]], ...] = (
    ("Duration", "duration", _clock),
    ("Time to first token", "time_to_first_token", _clock),
    ("Decode duration", "decode_duration", d.seconds),
    ("Output tokens per second", "output_tokens_per_second", d.rate),
    ("Output characters per second", "output_chars_per_second", d.rate),
    ("Input tokens", "input_token_count", d.count),
    ("Output tokens", "output_token_count", d.count),
    ("Tokens in first snapshot", "first_update_token_count", d.count),
    ("Token count source", "token_count_source", _token_source),
    ("Stream updates", "stream_update_count", d.count),
    ("Largest stream update gap", "maximum_stream_update_gap", _clock),
    ("Reasoning tokens", "reasoning_token_count", d.count),
    ("Context size", "context_size", d.count),
    ("Context utilization", "context_utilization", d.percent),
    ("Resident memory at start", "starting_memory_bytes", d.mebibytes),
    ("Peak resident memory sampled", "peak_memory_bytes", d.mebibytes),
    ("Resident memory at end", "ending_memory_bytes", d.mebibytes),
)


"""A trial's metrics as its page shows them: label, trials column, formatter."""


_ENVIRONMENT: tuple[tuple[str, str, Callable[[Any], str | None]], ...] = (
    ("Low Power Mode", "environment_low_power_mode", _low_power),
    ("Thermal state", "environment_thermal_state", _thermal_state),
    ("Snapshot taken (UTC)", "environment_timestamp", d.iso),
)


"""The trial's own environment snapshot, as :data:`_METRICS`."""


METRIC_LABELS = tuple(label for label, _, _ in _METRICS)


ENVIRONMENT_LABELS = tuple(label for label, _, _ in _ENVIRONMENT)


def _formatted(column: Sequence[Any], fmt: Callable[[Any], str | None]) -> list[str | None]:
    """A column of values formatted, each distinct value once (a run repeats most of its counts and labels).

    A column that holds floats is formatted value by value: they seldom repeat, and ``0.0`` and ``-0.0`` are one
    key of a dict; so is one that mixes types (``1`` and ``True`` are one key) or holds unhashable values.
    """
    kinds = set(map(type, column))
    kinds.discard(type(None))
    if len(kinds) > 1 or float in kinds:
        return list(map(fmt, column))
    try:
        texts = {value: fmt(value) for value in set(column)}
    except TypeError:
        return list(map(fmt, column))
    return list(map(texts.__getitem__, column))


def _formatted_rows(
    specs: tuple[tuple[str, str, Callable[[Any], str | None]], ...], columns: dict[str, Sequence[Any]]
) -> list[tuple[str | None, ...]]:
    """Each trial's texts of ``specs``, formatted column by column."""
    return list(zip(*[_formatted(columns[name], fmt) for _, name, fmt in specs], strict=True))


def _trial_parts(
    con: duckdb.DuckDBPyConnection, run_id: str, lo: int, hi: int, *, tool_calls: bool = True, final_state: bool = True
) -> tuple[dict[int, list[CheckDetail]], dict[int, list[ToolCallDetail]], dict[int, list[tuple[str, str]]]]:
    """Checks, tool calls and final state of the run's trials with ordinals from ``lo`` to ``hi`` (tool calls and
    final state not asked for when ``tool_calls`` or ``final_state`` says the run has none).

    The same JSON text (a tool call's arguments, a final-state value) is read once, and the same check (label,
    outcome and detail) made once: a run repeats them (a run of 1,000 trials: about 2,200 checks, 80 distinct).
    """
    checks: dict[int, list[CheckDetail]] = {}
    made: dict[tuple[str, bool, str | None], CheckDetail] = {}
    for o, label, passed, detail in con.execute(
        "SELECT trial_ordinal, label, passed, detail FROM check_results WHERE run_id = ? "
        "AND trial_ordinal BETWEEN ? AND ? ORDER BY trial_ordinal, ordinal",
        [run_id, lo, hi],
    ).fetchall():
        check = made.get((label, passed, detail))
        if check is None:
            check = made[(label, passed, detail)] = CheckDetail(label, passed, detail)
        checks.setdefault(o, []).append(check)
    calls: dict[int, list[ToolCallDetail]] = {}
    arguments: dict[str, list[tuple[str, str]]] = {}
    for o, name, args in con.execute(
        "SELECT owner_ordinal, name, arguments_json FROM tool_calls WHERE run_id = ? AND owner = 'trial' "
        "AND owner_ordinal BETWEEN ? AND ? ORDER BY owner_ordinal, ordinal",
        [run_id, lo, hi],
    ).fetchall() if tool_calls else ():
        if args not in arguments:
            arguments[args] = arguments_text(args)
        calls.setdefault(o, []).append(ToolCallDetail(name, list(arguments[args])))
    state: dict[int, list[tuple[str, str]]] = {}
    texts: dict[str, str] = {}
    for o, key, value in con.execute(
        "SELECT owner_ordinal, key, value_json FROM final_state WHERE run_id = ? AND owner = 'trial' "
        "AND owner_ordinal BETWEEN ? AND ? ORDER BY owner_ordinal, key",
        [run_id, lo, hi],
    ).fetchall() if final_state else ():
        if value not in texts:
            texts[value] = typed_text(value)
        state.setdefault(o, []).append((key, texts[value]))
    return checks, calls, state


def _safety_text(expectation: str | None, outcome: str | None, passed: bool | None, detail: str | None) -> str | None:
    """A trial's safety expectation, outcome and verdict, or its outcome alone, and the detail."""
    safety = None
    if expectation:
        outcome_text = vocab.label("safetyOutcome", outcome) or "not recorded"
        verdict = "passed" if passed else "CRITICAL safety failure"
        safety = f"{vocab.label('safetyExpectation', expectation)}: {outcome_text} ({verdict})"
    elif outcome and outcome != "notApplicable":
        safety = vocab.label("safetyOutcome", outcome)
    if detail:
        safety = f"{safety or ''} — {detail}".strip(" —")
    return safety


def _thermal_text(starting: str | None, ending: str | None, worst: str | None, environment: str | None) -> str | None:
    """A trial's thermal states: from start to end (else the environment's), and the worst seen."""
    thermal = " → ".join(s for s in (starting, ending) if s) or environment
    if worst:
        thermal = f"{thermal or ''} (worst {worst})".strip()
    return thermal


def _combined(fmt: Callable[..., str | None], *columns: Sequence[Any]) -> list[str | None]:
    """``fmt`` of each trial's values of ``columns``, each distinct combination once."""
    seen: dict[tuple[Any, ...], str | None] = {}
    out = []
    for key in zip(*columns, strict=True):
        try:
            text = seen[key]
        except KeyError:
            text = seen[key] = fmt(*key)
        out.append(text)
    return out


def _route_label(value: str) -> str:
    return vocab.label("route", value) or value


def _details(
    con: duckdb.DuckDBPyConnection, run_id: str, columns: dict[str, list[Any]], data: q.RunData | None = None
) -> list[TrialDetail]:
    """Each trial of ``columns`` (:data:`TRIAL_COLUMNS`, a list each) in detail, formatted column by column, each
    distinct value (or combination) once (``data``: which runs have tool calls and final state at all)."""
    ordinals = columns["ordinal"]
    if not ordinals:
        return []
    checks, calls, state = _trial_parts(
        con, run_id, min(ordinals), max(ordinals),
        tool_calls=data is None or data.has("trial tool calls", run_id),
        final_state=data is None or data.has("trial final state", run_id),
    )
    c = columns
    return list(
        map(
            TrialDetail,
            ordinals,
            c["trial_id"],
            c["iteration"],
            c["sample_id"],
            c["prompt"],
            c["instructions"],
            c["response"],
            _formatted(c["requested_model"], _route_label),
            _formatted(c["executed_model"], _route_label),
            [(reason or "fell back on-device") if used else None
             for used, reason in zip(c["used_fallback"], c["fallback_reason"], strict=True)],
            _combined(_safety_text, c["safety_expectation"], c["safety_outcome"], c["safety_pass"], c["safety_detail"]),
            ["task passed" if passed else "task failed" for passed in c["task_passed"]],
            [checks.get(o) or [] for o in ordinals],
            [calls.get(o) or [] for o in ordinals],
            [state.get(o) or [] for o in ordinals],
            _formatted_rows(_METRICS, c),
            _combined(
                _thermal_text, c["starting_thermal_state"], c["ending_thermal_state"], c["worst_thermal_state"],
                c["environment_thermal_state"],
            ),
            _formatted(c["offline_success"], d.yes_no),
            c["visual_fixture"],
            _formatted_rows(_ENVIRONMENT, c),
        )
    )


CSV_COLUMNS = (
    "ordinal", "trial_id", "scenario_id", "sample_id", "iteration", "requested_model", "executed_model",
    "used_fallback", "fallback_reason", "offline_success", "visual_fixture", "safety_expectation", "safety_outcome",
    "check_count", "checks_passed",
    "constraint_score", "prompt_pass", "safety_pass", "task_passed", "duration", "time_to_first_token",
    "decode_duration", "input_token_count", "output_token_count", "first_update_token_count",
    "token_count_source", "output_tokens_per_second", "output_chars_per_second", "stream_update_count",
    "maximum_stream_update_gap", "reasoning_token_count", "context_size", "context_utilization",
    "starting_memory_bytes", "peak_memory_bytes", "ending_memory_bytes", "starting_thermal_state",
    "ending_thermal_state", "worst_thermal_state", "environment_thermal_state", "environment_low_power_mode",
    "environment_timestamp", "started_at", "ended_at", "response",
)


"""The trials CSV's columns, in its order (the site's documented download)."""


TRIAL_COLUMNS = (*CSV_COLUMNS, "prompt", "instructions", "safety_detail")


"""What a trial's detail and the trials CSV read of a trial: the CSV's columns first, so a row read with these
columns starts with the CSV's row."""


_TRIAL_SELECT = f"SELECT {', '.join(TRIAL_COLUMNS)} FROM trials"


def trial_details(
    con: duckdb.DuckDBPyConnection, run_id: str, scenario_id: str, *, offset: int = 0, limit: int | None = None
) -> list[TrialDetail]:
    page_sql = " LIMIT ? OFFSET ?" if limit is not None else ""
    params: list[Any] = [run_id, scenario_id] + ([limit, offset] if limit is not None else [])
    found = trial_columns(con, f"{_TRIAL_SELECT} WHERE run_id = ? AND scenario_id = ? ORDER BY ordinal{page_sql}", params)
    return _details(con, run_id, found)


_AS_FETCHED = frozenset(
    ("BOOLEAN", "TINYINT", "SMALLINT", "INTEGER", "BIGINT", "UTINYINT", "USMALLINT", "UINTEGER", "UBIGINT", "DOUBLE",
     "VARCHAR", "TIMESTAMP")
)


"""DuckDB's types whose numpy arrays' ``tolist`` gives the values ``fetchall`` gives (booleans, integers, floats,
strings and naive timestamps, NULL as ``None``); not so, for one: a time zone's timestamps (naive ones), a date
(a datetime), a decimal (a float)."""


def trial_columns(con: duckdb.DuckDBPyConnection, sql: str, params: Sequence[Any]) -> dict[str, list[Any]]:
    """The columns of a query of :data:`TRIAL_COLUMNS`, each a list of the Python values ``fetchall`` gives.

    Read as numpy arrays, each turned into a list at once: about 7 ms for a run of 1,000 trials, against 9 to 10
    for ``fetchall`` and 1 more to turn its rows into columns. Should a column be of a type not in
    :data:`_AS_FETCHED` (a database of another schema), every column is read with ``fetchall``.
    """
    cursor = con.execute(sql, list(params))
    if all(str(c[1]) in _AS_FETCHED for c in cursor.description or []):
        found = cursor.fetchnumpy()
        return {name: found[name].tolist() for name in TRIAL_COLUMNS}
    read = cursor.fetchall()
    if not read:
        return {name: [] for name in TRIAL_COLUMNS}
    return {name: list(values) for name, values in zip(TRIAL_COLUMNS, zip(*read, strict=True), strict=True)}


@dataclass(frozen=True)
class RunTrials:
    """What the run's page, its trial pages and its trial files read of its trials and failures, read once."""

    run_id: str
    run: dict[str, Any]
    scenarios: list[tuple[str, str, int]]
    """``(scenario id, title, trial count)`` in the run's order."""
    failures: dict[str, list[dict[str, Any]]]
    columns: dict[str, list[Any]]
    """Every trial of the run in file order: each of :data:`TRIAL_COLUMNS`, a list of its values."""
    failure_list: list[dict[str, Any]]
    """Every failure of the run in file order: what :func:`failure_rows` gives (``failures`` by scenario)."""
    read_details: Callable[[], list[TrialDetail]] = field(repr=False, compare=False)
    """Every trial of :attr:`columns` in detail, in file order."""

    @cached_property
    def details(self) -> dict[str, list[TrialDetail]]:
        """Each scenario's trials in detail (what :func:`trial_details` gives for it), made when first asked for:
        the run's page and its trials CSV need none, so a request for one of them formats no trial."""
        out: dict[str, list[TrialDetail]] = {}
        for scenario_id, detail in zip(self.columns["scenario_id"], self.read_details(), strict=True):
            out.setdefault(scenario_id, []).append(detail)
        return out

    def column(self, name: str) -> list[Any]:
        """One of :data:`TRIAL_COLUMNS` of every trial, in file order."""
        return self.columns[name]

    def executed_models(self) -> list[tuple[str, int]]:
        """How many of the run's trials each model executed, in the order of the models' names (by code point),
        a model not recorded last."""
        counts = Counter(self.column("executed_model"))
        return sorted(counts.items(), key=lambda kv: (kv[0] is None, kv[0] or ""))

    def offline_counts(self) -> tuple[int, int]:
        """(trials that succeeded offline, trials that record offline success at all)."""
        recorded = [v for v in self.column("offline_success") if v is not None]
        return sum(1 for v in recorded if v), len(recorded)

    def trial_values(self) -> dist.Values:
        """Every distribution figure's recorded values per scenario of the run
        (:func:`~fmbench.views.distributions.trial_values`)."""
        names = ("scenario_id", *(f.key for f in fc.CATALOG.metrics))
        return dist.trial_values(zip(*[self.columns[name] for name in names], strict=True))

    def scenario_at(self, paths: urls.SitePaths, segment: str) -> tuple[str, str, int]:
        """``(scenario id, title, trials)`` of the run's scenario at a path segment of the site."""
        scenario_id = paths.scenarios.name(segment)
        for found in self.scenarios:
            if found[0] == scenario_id:
                return found
        raise NotFoundError(f"run {self.run_id} has no scenario {segment!r}")


def run_trials(site: SiteContext, run_id: str) -> RunTrials:
    """What every page and data file of the run reads of its trials and failures, read once and kept while the
    same run is asked for (a build renders all of a run's files one after the other; a request, one of them)."""
    kept: RunTrials = site.kept("run trials", run_id, lambda: read_run_trials(site.con, run_id, site.run_data))
    return kept


def read_run_trials(con: duckdb.DuckDBPyConnection, run_id: str, data: q.RunData) -> RunTrials:
    """Every trial and failure of the run, in detail (``data``: the per-run tables, and which of the large ones
    the run has rows in)."""
    run = data.run(run_id)
    scenarios = [(f["scenario_id"], f["title"], f["trial_count"]) for f in data.figures([run_id])[run_id]]
    read = trial_columns(con, f"{_TRIAL_SELECT} WHERE run_id = ? ORDER BY ordinal", [run_id])
    failures: dict[str, list[dict[str, Any]]] = {}
    failure_list = failure_rows(
        con, run_id,
        tool_calls=data.has("failure tool calls", run_id),
        final_state=data.has("failure final state", run_id),
    )
    for f in failure_list:
        failures.setdefault(f["scenario_id"], []).append(f)
    return RunTrials(run_id, run, scenarios, failures, read, failure_list, lambda: _details(con, run_id, read, data))
