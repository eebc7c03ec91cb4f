"""One side of a comparison: which ingested runs it means, and which of them it uses.

A side is written as one of:

- a **run id**: the first 12 hex digits of the run file's SHA-256 (``runs.run_id``);
  a longer prefix of the SHA-256 (up to the whole 64 digits) works too, a
  shorter one (at least 6 digits) if it names one run only;
- a **run file**: its SHA-256 is computed and the run with those bytes must
  already be in the database (nothing is ingested or analyzed on the side:
  a comparison reads one database, so every figure, verdict and revision
  comes from the same ingest);
- a **filter expression**: ``key=value`` words, all of which must hold, such as
  ``device=Mac17,2 os_build=26A5353q route=onDevice session=cold``. Values
  with spaces are quoted (``device="Mac17,2"``). Keys are listed in
  :data:`FILTER_KEYS`.

Runs judged invalid as evidence are never compared: a run id or file that
names one is refused by the comparison; a filter leaves such runs out and
says which.

When a side matches several runs, the **attempt rule** picks what is used:
``latest`` (the run that started last), ``first`` (the run that started
first) or ``pooled`` (every matching run's trials together).
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import duckdb

from fmbench.analysis import configuration
from fmbench.errors import FilterError, NotFoundError
from fmbench.runfile.record import run_id_for
from fmbench.runfile.user_files import UnreadableFile, is_regular_file, sha256_of
from fmbench.storage.queries import named_rows, token_sources

AttemptRule = Literal["latest", "first", "pooled"]
ATTEMPT_RULES: tuple[AttemptRule, ...] = ("latest", "first", "pooled")
RULE_DESCRIPTIONS: dict[str, str] = {
    "latest": "latest: when several runs match a side, the one that started last is used",
    "first": "first: when several runs match a side, the one that started first is used",
    "pooled": "pooled: every run that matches a side is used, its trials and failures together",
}

FILTER_KEYS: dict[str, str] = {**configuration.FILTER_KEYS, "run": "run_id"}
"""Filter keys and the ``runs`` column each one matches (equality)."""

_HEX = re.compile(r"^[0-9a-fA-F]{6,64}$")
_WORD = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)=(.*)$", re.DOTALL)

SideKind = Literal["run", "file", "filter"]


@dataclass(frozen=True)
class SideSpec:
    """A side as the user wrote it, parsed."""

    text: str
    kind: SideKind
    run_id: str | None = None
    """For ``run``: the hex prefix given; for ``file``: the file's run id."""
    filters: tuple[tuple[str, str], ...] = ()
    """For ``filter``: ``(key, value)`` pairs in the order written."""
    path: str | None = None
    """For ``file``: the path as given."""

    def describe(self) -> str:
        if self.kind == "run":
            return f"run {self.run_id}"
        if self.kind == "file":
            return f"file {Path(self.path or self.text).name} (run {self.run_id})"
        return " ".join(f"{k}={_quote(v)}" for k, v in self.filters)

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "kind": self.kind,
            "run_id": self.run_id,
            "filters": dict(self.filters),
            "description": self.describe(),
        }


def _quote(value: str) -> str:
    return shlex.quote(value) if value and re.fullmatch(r"[A-Za-z0-9_.,:+-]+", value) is None else value


def accepted_keys() -> str:
    return ", ".join(FILTER_KEYS)


def parse_filter(expression: str) -> tuple[tuple[str, str], ...]:
    """``key=value`` words into pairs; raises :class:`FilterError` naming what is wrong."""
    try:
        words = shlex.split(expression)
    except ValueError as exc:
        raise FilterError(f"filter {expression!r} cannot be read ({exc}); write key=value words") from None
    if not words:
        raise FilterError(f"an empty filter selects nothing; write key=value words with keys {accepted_keys()}")
    pairs: list[tuple[str, str]] = []
    seen: set[str] = set()
    for word in words:
        match = _WORD.match(word)
        if match is None:
            raise FilterError(
                f"filter word {word!r} is not key=value; accepted keys: {accepted_keys()}"
            )
        key, value = match.group(1), match.group(2)
        if key not in FILTER_KEYS:
            raise FilterError(f"unknown filter key {key!r}; accepted keys: {accepted_keys()}")
        if not value:
            raise FilterError(f"filter key {key!r} has no value; write {key}=VALUE")
        if key in seen:
            raise FilterError(f"filter key {key!r} is given twice; a side matches one value per key")
        seen.add(key)
        pairs.append((key, value))
    return tuple(pairs)


def file_run_id(path: str | os.PathLike[str]) -> str:
    """The run id of a run file: the first 12 hex digits of its SHA-256."""

    return run_id_for(sha256_of(path))


def parse_side(text: str) -> SideSpec:
    """A run file (if the path exists), else a filter (if it holds ``=``), else a run id."""
    stripped = text.strip()
    if not stripped:
        raise FilterError("an empty side selects nothing: give a run id, a run file or a filter expression")
    path = Path(stripped)
    if is_regular_file(path):  # a filter's text may be no possible file name (too long): never an OSError
        try:
            run_id = file_run_id(path)
        except (OSError, UnreadableFile) as exc:
            reason = exc.reason if isinstance(exc, UnreadableFile) else f"cannot be read: {exc.strerror}"
            raise NotFoundError(f"{path.name}: {reason}") from None
        return SideSpec(text=text, kind="file", run_id=run_id, path=stripped)
    if "=" in stripped:
        return SideSpec(text=text, kind="filter", filters=parse_filter(stripped))
    if _HEX.match(stripped):
        return SideSpec(text=text, kind="run", run_id=stripped.lower())
    if stripped.endswith(".json") or os.sep in stripped:
        raise NotFoundError(f"{stripped}: no such run file")
    raise FilterError(
        f"{stripped!r} is not a run id (12 hex digits), an existing run file or a filter expression "
        f"(key=value words; accepted keys: {accepted_keys()})"
    )


# --- the runs a side names -------------------------------------------------------------

@dataclass(frozen=True)
class RunInfo:
    """One ingested run: what a comparison needs to know about its conditions."""

    run_id: str
    file_name: str
    started_at: datetime
    ended_at: datetime
    verdict: str
    generation: str
    device_name: str
    hardware_model: str | None
    system_name: str
    system_version: str
    os_build: str | None
    os_generation: int | None
    route: str
    suite: str
    sample_limit: int | None
    random_seed: int | None
    randomized_order: bool | None
    warmup_count: int
    repetitions: int
    session_mode: str | None
    reasoning_level: str | None
    fallback_mode: str | None
    connectivity: str | None
    fixture_fingerprint: str | None
    revision_id: str | None
    revision_status: str
    benchmark_commit: str | None
    thermal_state: str | None
    worst_thermal_state: str | None
    model_context_size: int | None
    trial_count: int
    failure_count: int
    reasons: tuple[tuple[str, str, str], ...] = field(default=())
    """The verdict's reasons: ``(level, code, message)``."""
    token_count_source: str | None = None
    """The one token count source of the run's trials, ``mixed``, or ``None`` (not recorded)."""
    pcc_connection: str | None = None
    """The connection type its sidecar records (PCC network conditions); ``None`` without one."""
    pcc_location: str | None = None
    """The approximate location its sidecar records."""

    @property
    def sample_selection(self) -> str | None:
        """``all`` or ``N per scenario``; not recorded for the legacy generation."""
        if self.sample_limit is not None:
            return f"{self.sample_limit} per scenario"
        return "all" if self.generation == "current" else None

    def to_json(self) -> dict[str, Any]:
        out = {name: getattr(self, name) for name in _RUN_COLUMNS}
        out["started_at"] = self.started_at.strftime("%Y-%m-%dT%H:%M:%SZ")
        out["ended_at"] = self.ended_at.strftime("%Y-%m-%dT%H:%M:%SZ")
        # An unsigned 64-bit seed as text: a JSON reader that uses doubles would round it above 2^53.
        out["random_seed"] = None if self.random_seed is None else str(self.random_seed)
        out["reasons"] = [{"level": lv, "code": c, "message": m} for lv, c, m in self.reasons]
        for name in _DERIVED:
            out[name] = getattr(self, name)
        return out


def ids_text(runs: Sequence[RunInfo]) -> str:
    """Run ids, comma-separated."""
    return ", ".join(r.run_id for r in runs)


_DERIVED = ("token_count_source", "pcc_connection", "pcc_location")
"""Fields read from the run's trials and sidecar rather than its ``runs`` row."""
_RUN_COLUMNS = tuple(f.name for f in fields(RunInfo) if f.name not in ("reasons", *_DERIVED))
"""The ``runs`` columns a :class:`RunInfo` is read from: its fields (a new field is a new column read, by its name)."""


def fetch_runs(con: duckdb.DuckDBPyConnection, where: str, params: list[Any]) -> list[RunInfo]:
    """Runs satisfying ``where`` (SQL written by fmbench, values bound as ``params``), by start time."""
    columns = ", ".join(_RUN_COLUMNS)
    rows = named_rows(con.execute(f"SELECT {columns} FROM runs WHERE {where} ORDER BY started_at, run_id", params))
    if not rows:
        return []
    ids = [r["run_id"] for r in rows]
    marks = ", ".join("?" for _ in ids)
    reasons: dict[str, list[tuple[str, str, str]]] = {}
    for run_id, level, code, message in con.execute(
        f"SELECT run_id, level, code, message FROM verdict_reasons WHERE run_id IN ({marks}) "
        "ORDER BY run_id, ordinal",
        ids,
    ).fetchall():
        reasons.setdefault(run_id, []).append((level, code, message))
    sources = token_sources(con, ids)
    network = {
        run_id: (connection, location)
        for run_id, connection, location in con.execute(
            f"SELECT run_id, connection, location FROM annotations WHERE run_id IN ({marks})", ids
        ).fetchall()
    }
    return [
        RunInfo(
            **row,
            reasons=tuple(reasons.get(row["run_id"], ())),
            token_count_source=sources.run(row["run_id"]),
            pcc_connection=network.get(row["run_id"], (None, None))[0],
            pcc_location=network.get(row["run_id"], (None, None))[1],
        )
        for row in rows
    ]


class RunCatalog:
    """Every ingested run, read once (in a few queries): a static build matches its many sides against it in
    memory, as :func:`matching_runs` would in SQL, instead of querying the database for each."""

    def __init__(self, runs: list[RunInfo]) -> None:
        self.runs = runs

    @classmethod
    def read(cls, con: duckdb.DuckDBPyConnection) -> RunCatalog:
        return cls(fetch_runs(con, "TRUE", []))

    def matching(self, filters: tuple[tuple[str, str], ...]) -> list[RunInfo]:
        """The runs whose column of each filter key equals its value (an unrecorded column equals nothing, as in
        SQL), by start time then run id."""
        columns = [(FILTER_KEYS[key], value) for key, value in filters]
        return [r for r in self.runs if all((v := getattr(r, c)) is not None and v == value for c, value in columns)]


def matching_runs(con: duckdb.DuckDBPyConnection, spec: SideSpec, catalog: RunCatalog | None = None) -> list[RunInfo]:
    """Every run the side names, invalid ones included, ordered by start time then run id (from ``catalog`` when
    given, for a side of filters).

    Raises :class:`NotFoundError` when nothing matches, saying why.
    """
    if spec.kind in ("run", "file"):
        prefix = spec.run_id or ""
        runs = fetch_runs(con, "starts_with(source_sha256, ?)", [prefix])
        if not runs:
            if spec.kind == "file":
                raise NotFoundError(
                    f"{Path(spec.path or spec.text).name} (run {prefix}) is not in the database; "
                    f"ingest it first with `fmbench ingest {spec.path or spec.text}`"
                )
            raise NotFoundError(f"no ingested run has the id {prefix}; `fmbench runs` lists them")
        if len(runs) > 1:
            shown = ", ".join(r.run_id for r in runs[:5])
            raise NotFoundError(f"run id prefix {prefix} names {len(runs)} runs ({shown}); give more digits")
        return runs
    if catalog is not None:
        runs = catalog.matching(spec.filters)
    else:
        where = " AND ".join(f"{FILTER_KEYS[key]} = ?" for key, _ in spec.filters)
        runs = fetch_runs(con, where, [value for _, value in spec.filters])
    if not runs:
        raise NotFoundError(f"no ingested run matches {spec.describe()}{_hint(con, spec)}")
    return runs


def _hint(con: duckdb.DuckDBPyConnection, spec: SideSpec) -> str:
    """Name the first filter word no run satisfies, with the values that are recorded."""
    for key, value in spec.filters:
        column = FILTER_KEYS[key]
        found = con.execute(f"SELECT count(*) FROM runs WHERE {column} = ?", [value]).fetchone()
        if found and found[0]:
            continue
        values = [
            str(r[0])
            for r in con.execute(
                f"SELECT DISTINCT {column} FROM runs WHERE {column} IS NOT NULL ORDER BY 1 LIMIT 12"
            ).fetchall()
        ]
        recorded = ", ".join(values) if values else "none"
        return f" (no run has {key}={value}; recorded values: {recorded})"
    return " (each word matches some run, but no run matches them all)"


@dataclass(frozen=True)
class Side:
    """A side resolved: the runs it matched and the runs the attempt rule uses."""

    spec: SideSpec
    rule: AttemptRule
    runs: tuple[RunInfo, ...]
    """The runs used (one for ``latest``/``first``; every valid match for ``pooled``)."""
    matched: tuple[RunInfo, ...]
    """Every run the side named, before the attempt rule (invalid ones included)."""

    @property
    def run_ids(self) -> tuple[str, ...]:
        return tuple(r.run_id for r in self.runs)

    @property
    def excluded_invalid(self) -> tuple[RunInfo, ...]:
        return tuple(r for r in self.matched if r.verdict == "invalid")

    @property
    def not_used(self) -> tuple[RunInfo, ...]:
        """Valid matches the attempt rule left out."""
        used = set(self.run_ids)
        return tuple(r for r in self.matched if r.verdict != "invalid" and r.run_id not in used)

    def to_json(self) -> dict[str, Any]:
        return {
            "selector": self.spec.to_json(),
            "rule": self.rule,
            "runs": [r.to_json() for r in self.runs],
            "matched_run_ids": [r.run_id for r in self.matched],
            "excluded_invalid_run_ids": [r.run_id for r in self.excluded_invalid],
            "not_used_run_ids": [r.run_id for r in self.not_used],
        }


def apply_rule(spec: SideSpec, matched: list[RunInfo], rule: AttemptRule) -> Side:
    """Pick the runs a side uses. Invalid runs are never picked; if only invalid ones match, they are
    kept so the comparison can refuse with their reason."""
    if rule not in ATTEMPT_RULES:
        raise FilterError(f"unknown attempt rule {rule!r}; use one of {', '.join(ATTEMPT_RULES)}")
    valid = [r for r in matched if r.verdict != "invalid"]
    pool = valid or list(matched)
    if rule == "pooled":
        used = pool
    elif rule == "first":
        used = pool[:1]
    else:
        used = pool[-1:]
    return Side(spec=spec, rule=rule, runs=tuple(used), matched=tuple(matched))


def select_side(
    con: duckdb.DuckDBPyConnection, side: str | SideSpec, rule: AttemptRule = "latest", catalog: RunCatalog | None = None
) -> Side:
    """Parse (if needed), match (against ``catalog`` when given) and apply the attempt rule."""
    spec = parse_side(side) if isinstance(side, str) else side
    return apply_rule(spec, matching_runs(con, spec, catalog), rule)
