"""Comparisons that say what they compare (publishing rules §5).

A comparison takes a baseline side and a candidate side (see
:mod:`fmbench.selection`), refuses what must never be compared, labels what
it compares from what differs, lists every differing condition and every
caveat, and reports per scenario: task success, completed prompt pass, mean
constraint score, median and p90 TTFT, median and p90 output tokens/s and
peak memory, each with its delta, relative delta, interval, the direction
that is better, and a verdict.

Choices this module makes, stated once:

- **Labels**, by precedence: the route differs → *Execution comparison*;
  else the hardware model differs → *Device comparison*; else the OS build
  differs → *OS comparison*; else both sides are PCC with the same reasoning
  level and fallback mode → *Longitudinal PCC comparison*; else something in
  the configuration, fixtures or commit differs → *Configuration
  comparison*; else *Repeat comparison*. What the label's row in the rules
  holds equal but differs anyway is a caveat.
- **Execution comparisons** compare quality figures; latency, throughput and
  memory are reported per side with no delta, interval or verdict ("not
  compared: PCC is a service benchmark": it includes the network and the
  server), so PCC and on-device speed never share one ranking.
- **Refused** (:class:`ComparisonRefused`): a run judged invalid on either
  side; the same run on both sides; a pooled side that mixes session modes
  (cold and warm are never pooled), routes, hardware models or OS builds;
  sides of different session modes (cold against warm) or different suites.
- **Token counts**: tokens/s between a side whose token counts are counted
  (session usage, system tokenizer) and one estimated from characters (or
  mixed) gets no verdict; output characters per second is compared in its
  place. A differing token count source is a listed difference.
- **PCC sides** take latency, throughput and memory from the PCC-executed
  trials only (quality counts every trial) and say how many fell back;
  differing or unrecorded network conditions (the sidecar's connection and
  location) are listed and marked.
- **Two run files** with no database are compared in an in-memory one
  (:func:`compare_files`).
- **Caveats** (compared, but marked): exploratory runs, different or unknown
  suite revisions, superseded revisions, different fixture corpora, OS
  generations that differ outside strict mode, variation inside a pooled side.
- **Strict OS mode** keeps only the workloads both sides ran and never the
  OS 27-only visual workload, and lists what it dropped.
- **Figures** are the compared entries of :data:`fmbench.figure_catalog.CATALOG`
  (the definitions of :mod:`fmbench.figures`), recomputed from the trials'
  stored columns (so a pooled side is one set of trials): task success =
  task-passed trials / (trials + measured failures); completed prompt pass =
  task-passed trials / trials; mean constraint score over graded trials;
  nearest-rank quantiles (median, p90) at each figure's own ``q``; peak memory
  is the maximum of the trials' peak resident memory.
- **Uncertainty** is in :mod:`fmbench.stats`. A verdict is ``better`` or
  ``worse`` only when the interval excludes zero, read with the figure's
  stated better direction; otherwise ``no detectable change``.
- **Many figures, one comparison**: a comparison tests up to seven figures
  per scenario, so at 95 % each, identical distributions would still show
  about one "change" in twenty. By default (``multiplicity="bonferroni"``)
  each interval is computed at ``1 − 0.05 / m`` for the ``m`` figures tested,
  which keeps the chance of *any* noise verdict in the whole comparison
  below 5 % (family-wise). ``multiplicity="none"`` gives plain per-figure
  95 % intervals; the level used is stated in every output.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any, Literal

import duckdb

from fmbench import configuration, stats
from fmbench import display as d
from fmbench import figure_catalog as fc
from fmbench import tolerance as tol
from fmbench import vocabulary as vocab
from fmbench.caches import Caches
from fmbench.db import apply_migration, connect, migrations
from fmbench.errors import FmbenchError
from fmbench.figures import token_counting
from fmbench.queries import scenario_order
from fmbench.revisions import Registry, load_registry
from fmbench.selection import (
    RULE_DESCRIPTIONS,
    AttemptRule,
    RunInfo,
    Side,
    SideSpec,
    select_side,
)

Better = Literal["higher", "lower"]
Multiplicity = Literal["none", "bonferroni"]
FigureVerdict = Literal[
    "better",
    "worse",
    "no detectable change",
    "within tolerance",
    "not recorded",
    "not comparable",
    "too few trials",
    "not tested",
    "no measured trial",
]

NOT_COMPARABLE_NOTE = "not compared: PCC is a service benchmark"
NO_MEASURED_TRIAL = "no measured trial"
ESTIMATED_TOKENS_NOTE = "not compared: {why}; characters per second is compared instead"
SPEED_NOTE = (
    "Execution comparison: latency, throughput and memory are shown per side without a delta or a "
    "verdict, because PCC includes the network and the server (and its model's memory is not on the "
    "device); PCC and on-device speed never share one ranking."
)


class ComparisonRefused(FmbenchError):
    """A comparison the publishing rules forbid. ``code`` names the rule; the message says why."""

    def __init__(self, code: str, message: str) -> None:
        self.code = code
        self.reason = message
        super().__init__(f"comparison refused: {message}")


# --- conditions ----------------------------------------------------------------------

Condition = configuration.Field
"""A condition of a run: one field of :mod:`fmbench.configuration`."""
CONDITIONS: tuple[Condition, ...] = configuration.FIELDS
_CONDITION = configuration.FIELD
CONFIGURATION_KEYS = configuration.CONFIGURATION_KEYS


def _values(condition: Condition, runs: Sequence[RunInfo]) -> tuple[Any, ...]:
    seen: list[Any] = []
    for r in runs:
        v = condition.value(r)
        if v not in seen:
            seen.append(v)
    return tuple(seen)


def _show(condition: Condition, values: tuple[Any, ...]) -> str:
    return " / ".join(condition.unrecorded if v is None else str(v) for v in values)


@dataclass(frozen=True)
class Difference:
    """A condition whose value differs between the sides."""

    key: str
    label: str
    group: str
    baseline: str
    candidate: str

    def __str__(self) -> str:
        return f"{self.label}: {self.baseline} → {self.candidate}"

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "label": self.label, "group": self.group,
                "baseline": self.baseline, "candidate": self.candidate}


@dataclass(frozen=True)
class Caveat:
    code: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


# --- labels ----------------------------------------------------------------------------

Kind = Literal["execution", "device", "os", "longitudinal-pcc", "configuration", "repeat"]
LABELS: dict[str, str] = {
    "execution": "Execution comparison",
    "device": "Device comparison",
    "os": "OS comparison",
    "longitudinal-pcc": "Longitudinal PCC comparison",
    "configuration": "Configuration comparison",
    "repeat": "Repeat comparison",
}
MUST_BE_EQUAL = configuration.MUST_BE_EQUAL
REQUIREMENT_TEXT: dict[str, str] = {
    "os": "the hardware model, suite revision, fixtures and configuration",
    "device": "the OS generation, suite revision, fixtures and configuration",
    "execution": "the fixtures",
    "longitudinal-pcc": "the client setup (hardware model, OS build), reasoning level and fallback mode",
}


def _kind(differing: set[str], baseline: Side, candidate: Side) -> Kind:
    if configuration.ROUTE.key in differing:
        return "execution"
    if configuration.HARDWARE_MODEL.key in differing:
        return "device"
    if configuration.OS_BUILD.key in differing:
        return "os"
    routes = {r.route for r in (*baseline.runs, *candidate.runs)}
    if routes == {"privateCloudCompute"} and not differing & set(MUST_BE_EQUAL["longitudinal-pcc"]):
        return "longitudinal-pcc"
    if differing - {f.key for f in CONDITIONS if f.group == "thermal"}:
        return "configuration"
    return "repeat"


# --- figures ---------------------------------------------------------------------------

FigureDef = fc.Figure
"""A figure ``compare`` reports: an entry of :data:`fmbench.figure_catalog.CATALOG`."""


def figures(*, for_tokens: bool = False) -> tuple[FigureDef, ...]:
    """The figures compared per scenario (:meth:`fmbench.figure_catalog.Catalog.compared`)."""
    return fc.CATALOG.compared(for_tokens=for_tokens)


@dataclass
class _Trials:
    """One side's trials of one scenario, as stored columns."""

    trials: int = 0
    failures: int = 0
    values: dict[str, list[float]] = field(default_factory=dict)
    """Each compared figure's recorded values by :attr:`~fmbench.figure_catalog.Figure.series`, in trial order
    (a rate over attempts: a failed attempt a 0, after the trials; speed: the PCC-executed trials' on a PCC side)."""
    token_sources: list[str | None] = field(default_factory=list)
    fell_back: int = 0
    """PCC trials that ran on the device instead (their speed is left out on a PCC side)."""
    clusters: dict[str, dict[str, dict[str, list[float]]]] = field(default_factory=dict)
    """The same values by series, run and sample: the cluster bootstrap's input."""

    def add_clustered(self, series: str, run_id: str, sample_id: str, value: float) -> None:
        self.clusters.setdefault(series, {}).setdefault(run_id, {}).setdefault(sample_id, []).append(value)

    def clustered(self, f: FigureDef) -> list[list[list[float]]]:
        runs = self.clusters.get(f.series, {})
        return [list(samples.values()) for samples in runs.values()]

    @property
    def run_count(self) -> int:
        return len({run for runs in self.clusters.values() for run in runs})

    @property
    def attempts(self) -> int:
        return self.trials + self.failures

    @property
    def present(self) -> bool:
        return self.attempts > 0

    def samples(self, f: FigureDef) -> list[float]:
        return self.values.get(f.series, [])

    def value(self, f: FigureDef) -> float | None:
        return f.of(self.samples(f))

    def counts(self, f: FigureDef) -> tuple[int, int]:
        """(successes, n) of a rate figure."""
        found = self.samples(f)
        return int(sum(found)), len(found)


@dataclass(frozen=True)
class FigureComparison:
    key: str
    label: str
    unit: str
    better: Better
    """The direction that is better: ``higher`` or ``lower``."""
    baseline: float | None
    candidate: float | None
    delta: float | None
    """candidate − baseline; ``None`` when a side has no value or the figure is not comparable."""
    relative_delta: float | None
    """delta / |baseline|; ``None`` when the baseline is 0 or missing."""
    interval: stats.Interval | None
    verdict: FigureVerdict
    note: str | None = None
    baseline_absent: str = d.NOT_RECORDED
    """What the baseline's value reads when it has none: ``not recorded``, or ``no measured trial``."""
    candidate_absent: str = d.NOT_RECORDED

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "label": self.label,
            "unit": self.unit,
            "better": self.better,
            "baseline": self.baseline,
            "candidate": self.candidate,
            "delta": self.delta,
            "relative_delta": self.relative_delta,
            "interval": self.interval.to_json() if self.interval else None,
            "verdict": self.verdict,
            "note": self.note,
            "baseline_absent": None if self.baseline is not None else self.baseline_absent,
            "candidate_absent": None if self.candidate is not None else self.candidate_absent,
        }


@dataclass(frozen=True)
class ScenarioComparison:
    scenario_id: str
    title: str
    category: str | None
    baseline_trials: int
    baseline_attempts: int
    candidate_trials: int
    candidate_attempts: int
    figures: tuple[FigureComparison, ...]
    note: str | None = None

    def figure(self, key: str) -> FigureComparison:
        return next(f for f in self.figures if f.key == key)

    def to_json(self) -> dict[str, Any]:
        return {
            "scenario_id": self.scenario_id,
            "title": self.title,
            "category": self.category,
            "baseline": {"trials": self.baseline_trials, "attempts": self.baseline_attempts},
            "candidate": {"trials": self.candidate_trials, "attempts": self.candidate_attempts},
            "note": self.note,
            "figures": [f.to_json() for f in self.figures],
        }


@dataclass(frozen=True)
class DroppedScenario:
    scenario_id: str
    title: str
    reason: str

    def to_json(self) -> dict[str, str]:
        return {"scenario_id": self.scenario_id, "title": self.title, "reason": self.reason}


@dataclass(frozen=True)
class Comparison:
    kind: Kind
    label: str
    title: str
    rule: AttemptRule
    baseline: Side
    candidate: Side
    differences: tuple[Difference, ...]
    caveats: tuple[Caveat, ...]
    scenarios: tuple[ScenarioComparison, ...]
    dropped: tuple[DroppedScenario, ...]
    strict_os: bool
    speed_comparable: bool
    confidence: float
    """The confidence the caller asked for (per figure, or family-wise under Bonferroni)."""
    figure_confidence: float
    """The level each interval was computed at."""
    multiplicity: Multiplicity
    tested_figures: int
    tolerance: tol.Tolerance = tol.DEFAULT_TOLERANCE
    """The practical threshold a change must pass to be better or worse."""

    @property
    def rule_description(self) -> str:
        return RULE_DESCRIPTIONS[self.rule]

    def scenario(self, scenario_id: str) -> ScenarioComparison:
        return next(s for s in self.scenarios if s.scenario_id == scenario_id)

    def changes(self) -> list[tuple[ScenarioComparison, FigureComparison]]:
        """Every figure whose interval excludes zero."""
        return [(s, f) for s in self.scenarios for f in s.figures if f.verdict in ("better", "worse")]

    @property
    def method_notes(self) -> tuple[str, ...]:
        level = f"{confidence_text(self.figure_confidence)}"
        notes = [
            f"Intervals are {level} intervals on candidate − baseline"
            + (
                f" (Bonferroni: a family-wise {confidence_text(self.confidence)} over {self.tested_figures} tested figures)"
                if self.multiplicity == "bonferroni"
                else ""
            )
            + ".",
            f"Medians and p90s: {stats.CLUSTER_METHOD}.",
            f"Task success and completed prompt pass: {stats.CLUSTER_RATE_METHOD}.",
            f"Mean constraint score: {stats.CLUSTER_MEAN_METHOD}.",
            "Peak memory is a maximum: its change is shown, not tested.",
            "A verdict is better or worse only when the interval excludes zero and the change exceeds the "
            f"practical threshold ({self.tolerance.describe('seconds')} for latency, "
            f"{self.tolerance.describe('tokens/s')} for throughput, {self.tolerance.describe('bytes')} for memory, "
            f"{self.tolerance.describe('rate')} for rates); a detectable change below it is within tolerance.",
        ]
        if len(self.baseline.run_ids) == 1 and len(self.candidate.run_ids) == 1:
            notes.append(
                "One run per side: run-to-run variation was not measured, so the intervals cover the samples "
                "and trials of these two runs only, not how a repeat of either run would differ."
            )
        return tuple(notes)

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "label": self.label,
            "title": self.title,
            "rule": self.rule,
            "rule_description": self.rule_description,
            "strict_os": self.strict_os,
            "speed_comparable": self.speed_comparable,
            "speed_note": None if self.speed_comparable else SPEED_NOTE,
            "confidence": self.confidence,
            "figure_confidence": self.figure_confidence,
            "multiplicity": self.multiplicity,
            "tested_figures": self.tested_figures,
            "methods": list(self.method_notes),
            "baseline": self.baseline.to_json(),
            "candidate": self.candidate.to_json(),
            "differences": [x.to_json() for x in self.differences],
            "caveats": [c.to_json() for c in self.caveats],
            "dropped": [x.to_json() for x in self.dropped],
            "scenarios": [s.to_json() for s in self.scenarios],
        }

    def to_markdown(self) -> str:
        return _markdown(self)

    def to_text(self) -> str:
        return _text(self)


# --- building a comparison -------------------------------------------------------------


def confidence_text(confidence: float) -> str:
    """``95%``, ``99.95%``: a confidence level as a reader sees it."""
    text = f"{confidence * 100:.4f}".rstrip("0").rstrip(".")
    return f"{text}%"


def _ids(runs: Sequence[RunInfo]) -> str:
    return ", ".join(r.run_id for r in runs)


def _refuse_invalid(name: str, side: Side) -> None:
    bad = [r for r in side.runs if r.verdict == "invalid"]
    if not bad:
        return
    r = bad[0]
    why = next((m for lv, _c, m in r.reasons if lv == "invalid"), "judged invalid as evidence")
    raise ComparisonRefused(
        "invalid-run",
        f"the {name} run {r.run_id} ({r.file_name}) is invalid as evidence and is never compared: {why}",
    )


def _refuse_mixed_pool(name: str, side: Side) -> None:
    if len(side.runs) < 2:
        return
    for refusal in configuration.NEVER_POOLED:
        values = {getattr(r, refusal.field.key) for r in side.runs}
        if len(values) > 1:
            shown = ", ".join(sorted(str(v) for v in values))
            raise ComparisonRefused(
                refusal.code,
                f"the {name} side would pool runs of different {refusal.what} ({shown}){refusal.note}; "
                f"narrow it with a filter word such as {refusal.field.filter_key}=…",
            )


def _refuse_unlike_configuration(baseline: Side, candidate: Side) -> None:
    """Cold sessions are never compared with warm ones, nor one suite with another (their figures
    measure different things); every run on a side shares these (pools that mix them are refused)."""
    for refusal in configuration.NEVER_ACROSS_SIDES:
        f = refusal.field
        vb = {getattr(r, f.key) for r in baseline.runs} - {None}
        vc = {getattr(r, f.key) for r in candidate.runs} - {None}
        if vb and vc and vb != vc:
            shown_b = ", ".join(sorted(f.show(v) or v for v in vb))
            shown_c = ", ".join(sorted(f.show(v) or v for v in vc))
            raise ComparisonRefused(
                refusal.code, f"the sides differ in {refusal.what} ({shown_b} against {shown_c}): {refusal.note}; "
                f"pick sides of one {refusal.what} with a filter word such as {f.filter_key}=…",
            )


def _fallback_caveats(sides: Sequence[tuple[str, dict[str, _Trials]]]) -> list[Caveat]:
    out = []
    for name, data in sides:
        fell_back = sum(t.fell_back for t in data.values())
        if fell_back:
            trials = sum(t.trials for t in data.values())
            out.append(
                Caveat(
                    "pcc-fallback",
                    f"{fell_back} of the {name}'s {trials} trial(s) fell back to the on-device model: its "
                    "latency, throughput and memory are those of the PCC-executed trials only; its quality "
                    "figures count every trial.",
                )
            )
    return out


def _differences(baseline: Side, candidate: Side) -> tuple[list[Difference], set[str]]:
    out: list[Difference] = []
    keys: set[str] = set()
    for c in CONDITIONS:
        vb, vc = _values(c, baseline.runs), _values(c, candidate.runs)
        if set(map(repr, vb)) != set(map(repr, vc)):
            out.append(Difference(c.key, c.label, c.group, _show(c, vb), _show(c, vc)))
            keys.add(c.key)
    return out, keys


def _caveats(kind: Kind, differing: set[str], baseline: Side, candidate: Side, strict_os: bool) -> list[Caveat]:
    caveats: list[Caveat] = []
    for name, side in (("baseline", baseline), ("candidate", candidate)):
        for r in side.runs:
            if r.verdict == "exploratory":
                why = "; ".join(m for lv, _c, m in r.reasons if lv == "exploratory") or "short of the publishing bar"
                caveats.append(
                    Caveat("exploratory", f"The {name} run {r.run_id} is exploratory, not a stable ranking: {why}")
                )
        if side.excluded_invalid:
            caveats.append(
                Caveat(
                    "invalid-excluded",
                    f"The {name} filter also matched {len(side.excluded_invalid)} run(s) invalid as evidence, "
                    f"left out: {_ids(side.excluded_invalid)}.",
                )
            )
        if len(side.runs) > 1:
            varying = [c.label.lower() for c in CONDITIONS if len(_values(c, side.runs)) > 1]
            if varying:
                caveats.append(
                    Caveat("pooled-variation", f"The {name} side pools runs that differ in {', '.join(varying)}.")
                )
    revisions = {r.revision_id for r in (*baseline.runs, *candidate.runs)}
    if None in revisions:
        unknown = [r.run_id for r in (*baseline.runs, *candidate.runs) if r.revision_id is None]
        caveats.append(
            Caveat(
                "revision-unknown",
                f"The suite revision of run(s) {', '.join(unknown)} cannot be determined: pass rates may be "
                "fractions of different task sets.",
            )
        )
    if configuration.REVISION_ID.key in differing:
        caveats.append(
            Caveat(
                "revision-differs",
                "The sides were measured on different suite revisions: a pass rate is a fraction of a "
                "particular set of tasks, so the quality figures are not like for like.",
            )
        )
    superseded = sorted(
        {r.revision_id for r in (*baseline.runs, *candidate.runs) if r.revision_status == "superseded" and r.revision_id}
    )
    if superseded:
        caveats.append(
            Caveat("revision-superseded", f"Superseded suite revision(s) in this comparison: {', '.join(superseded)}.")
        )
    if configuration.FIXTURE_FINGERPRINT.key in differing:
        caveats.append(
            Caveat(
                "fixtures-differ",
                "The fixture corpora differ (scenario, sample or check definitions): the sides were not "
                "graded against the same tasks.",
            )
        )
    required = MUST_BE_EQUAL.get(kind, ())
    broken = [_CONDITION[k].label.lower() for k in required if k in differing]
    if broken:
        caveats.append(
            Caveat(
                "label-requirements",
                f"{LABELS[kind]}s hold {REQUIREMENT_TEXT[kind]} equal; here {', '.join(broken)} "
                "differ as well, so a change has more than one possible cause.",
            )
        )
    if configuration.OS_GENERATION.key in differing and not strict_os:
        caveats.append(
            Caveat(
                "os-generations",
                "The sides run different OS generations: the visual workload exists only on OS 27. "
                "Use strict OS mode (--strict-os) to keep only the workloads both can run.",
            )
        )
    if kind == "execution":
        caveats.append(Caveat("execution-speed", SPEED_NOTE))
    caveats += _network_caveats(differing, baseline, candidate)
    return caveats


def _network_caveats(differing: set[str], baseline: Side, candidate: Side) -> list[Caveat]:
    """PCC figures include the network: say when the sides' network conditions differ or are unknown."""
    runs = (*baseline.runs, *candidate.runs)
    if not runs or any(r.route != "privateCloudCompute" for r in runs):
        return []
    out = []
    changed = [c.label for c in CONDITIONS if c.group == "network" and c.key in differing]
    if changed:
        out.append(
            Caveat(
                "pcc-network-differs",
                f"The PCC sides were measured over different networks ({', '.join(changed)} differ): "
                "their latency and throughput include the network, so a change may be the network's.",
            )
        )
    unknown = [r.run_id for r in runs if r.pcc_connection is None or r.pcc_location is None]
    if unknown:
        out.append(
            Caveat(
                "pcc-network-unrecorded",
                f"Network conditions not recorded for PCC run(s) {', '.join(unknown)} (no sidecar with the "
                "connection type and approximate location).",
            )
        )
    return out


def _load(
    con: duckdb.DuckDBPyConnection, side: Side
) -> tuple[dict[str, _Trials], dict[str, tuple[str, str | None]], list[tuple[str, int, str]]]:
    """A side's trials per scenario, as :class:`_Trials`, the scenarios' titles, and each run's scenarios as
    ``(run id, ordinal, scenario id)`` (see :func:`_scenario_order`).

    The trials are read as Arrow columns in one query, then put in (run, ordinal) order and grouped with numpy
    (see :func:`_group_trials`); the result is the one a walk over them trial by trial in that order gives,
    value for value and in the same order, so the seeded bootstrap draws the same resamples."""
    import pyarrow as pa

    ids = list(side.run_ids)
    marks = ", ".join("?" for _ in ids)
    order = {run_id: i for i, run_id in enumerate(ids)}
    titles: dict[str, tuple[str, str | None]] = {}
    rows = con.execute(
        f"SELECT run_id, scenario_id, title, category, ordinal FROM scenario_figures WHERE run_id IN ({marks})",
        ids,
    ).fetchall()
    for _run, sid, title, category, _ord in sorted(rows, key=lambda r: (order[r[0]], r[4])):
        titles.setdefault(sid, (title, category))
    data: dict[str, _Trials] = {sid: _Trials() for sid in titles}
    pcc = bool(side.runs) and all(r.route == "privateCloudCompute" for r in side.runs)
    sources = ", ".join(dict.fromkeys(f.source for f in figures(for_tokens=True)))
    table: pa.Table = con.sql(
        f"SELECT ordinal, scenario_id, run_id, sample_id, {sources}, token_count_source, "
        # A PCC side's speed and memory are the PCC-executed trials' only; the fallbacks are counted.
        "? AND executed_model <> 'privateCloudCompute' AS fell_back "
        f"FROM trials WHERE run_id IN ({marks})",
        params=[pcc, *ids],
    ).to_arrow_table()
    if table.num_rows:
        _group_trials(table, data)
    over_attempts = list(dict.fromkeys(f.series for f in figures(for_tokens=True) if f.attempts))
    failed: dict[tuple[str, str, str | None], int] = {}
    for failure in con.execute(
        f"SELECT scenario_id, run_id, sample_id FROM failures WHERE run_id IN ({marks}) AND NOT is_warmup", ids
    ).fetchall():
        failed[failure] = failed.get(failure, 0) + 1
    # By scenario, run and sample (a failure without a sample after those with one, as SQL orders NULLs).
    for (sid, run_id, sample_id), n in sorted(failed.items(), key=lambda f: (*f[0][:2], f[0][2] is None, f[0][2])):
        t = data.setdefault(sid, _Trials())
        t.failures += n
        for series in over_attempts:  # a failed attempt counts against a rate over attempts (task success)
            t.values.setdefault(series, []).extend([0.0] * n)
            for _ in range(n):
                t.add_clustered(series, run_id, sample_id or "", 0.0)
    for sid in data:
        titles.setdefault(sid, (sid, None))
    return data, titles, [(run_id, ordinal, sid) for run_id, sid, _, _, ordinal in rows]


def _side_trials(
    con: duckdb.DuckDBPyConnection, side: Side, caches: Caches | None
) -> tuple[dict[str, _Trials], dict[str, tuple[str, str | None]], list[tuple[str, int, str]]]:
    """:func:`_load` of a side, read once per static build however many comparisons the side is in (nothing
    changes what :func:`_load` gives after it: it is only read)."""
    cache = None if caches is None else caches.comparisons
    if cache is None:
        return _load(con, side)
    return cache.side_trials(side.run_ids, lambda: _load(con, side))


def _scenario_order(sides: tuple[Side, ...], listed: list[tuple[str, int, str]]) -> list[str]:
    """The scenarios of the sides' runs in :func:`fmbench.queries.scenario_order`, from the rows :func:`_load`
    read already."""
    return scenario_order(listed, {r.run_id: r.started_at for side in sides for r in side.runs})


def _group_trials(table: Any, data: dict[str, _Trials]) -> None:
    """Fill ``data`` from a side's trials (an Arrow table of :func:`_load`'s columns, in no particular order).

    The trials are put in (run id, ordinal) order, the order of ``ORDER BY run_id, ordinal`` (run ids compare as
    their UTF-8 bytes do, which is Python's order of strings). Per scenario: the counts, the flat value lists in
    that order and, per metric, the values clustered by run and sample. Scenarios, runs and samples are
    numbered in order of first appearance; the trials are then put scenario by scenario (a stable sort keeps
    their order within one), so a metric's clusters, its (scenario, run, sample) groups ordered by their first
    value with that metric, come scenario by scenario with runs in run order and a run's samples in the order
    their first value came."""
    import numpy as np

    def column(name: str) -> Any:
        return table.column(name).combine_chunks()

    def encoded(name: str) -> tuple[Any, list[str]]:
        found = column(name).dictionary_encode()
        return found.indices.to_numpy().astype(np.int64), found.dictionary.to_pylist()

    run_ids = encoded("run_id")
    rank = np.empty(len(run_ids[1]), dtype=np.int64)
    rank[sorted(range(len(run_ids[1])), key=run_ids[1].__getitem__)] = np.arange(len(run_ids[1]))
    in_order = np.lexsort((column("ordinal").to_numpy(zero_copy_only=False), rank[run_ids[0]]))

    def codes(found: Any, names: list[str]) -> tuple[Any, list[str]]:
        """Encoded values in trial order, numbered in order of first appearance, and their names."""
        found = found[in_order]
        _, first = np.unique(found, return_index=True)
        appearance = np.argsort(first)
        renumbered = np.empty_like(appearance)
        renumbered[appearance] = np.arange(appearance.size)
        return renumbered[found], [names[i] for i in appearance.tolist()]

    scenario, scenarios = codes(*encoded("scenario_id"))
    run, runs = codes(*run_ids)
    sample, samples = codes(*encoded("sample_id"))
    together = np.argsort(scenario, kind="stable")
    scenario, run, sample = scenario[together], run[together], sample[together]
    trial_order = in_order[together]

    def values(name: str) -> tuple[Any, Any]:
        """A column's values (0 where null) and where it is not null, scenario by scenario in trial order."""
        read = column(name)
        return (
            read.fill_null(False if str(read.type) == "bool" else 0).to_numpy(zero_copy_only=False)[trial_order],
            read.is_valid().to_numpy(zero_copy_only=False)[trial_order],
        )

    key = (scenario * len(runs) + run) * len(samples) + sample
    sources = column("token_count_source").to_numpy(zero_copy_only=False)[trial_order]
    fell_back = column("fell_back").to_numpy(zero_copy_only=False)[trial_order]
    everything = np.ones(scenario.size, dtype=bool)
    kept = ~fell_back
    bounds = np.searchsorted(scenario, np.arange(len(scenarios) + 1))

    def per_scenario(read: Any, selected: Any) -> list[list[Any]]:
        """Each scenario's selected values, in trial order."""
        at = np.flatnonzero(selected)
        cuts = np.searchsorted(at, bounds).tolist()
        flat = read[at].tolist()
        return [flat[a:b] for a, b in pairwise(cuts)]

    # Each figure's series: its source's values (a 0/1 outcome as a float) and which trials give one. A rate
    # counts every trial; a speed figure's values are the kept (PCC-executed, on a PCC side) trials' only.
    selections: list[tuple[str, Any, Any]] = []
    for f in figures(for_tokens=True):
        if f.series in (name for name, _v, _s in selections):
            continue
        read, valid = values(f.source)
        selected = everything if f.statistic == "rate" else valid
        selections.append((f.series, read.astype(np.float64) if f.statistic == "rate" else read,
                           kept & selected if f.speed else selected))
    trials = np.diff(bounds).tolist()
    fallbacks = np.bincount(scenario[fell_back], minlength=len(scenarios)).tolist()
    flat = {series: per_scenario(read, selected) for series, read, selected in selections}
    kept_sources = per_scenario(sources, kept)
    ours = [data.setdefault(sid, _Trials()) for sid in scenarios]
    for code, t in enumerate(ours):
        t.trials, t.fell_back, t.token_sources = trials[code], fallbacks[code], kept_sources[code]
        t.values = {series: by_scenario[code] for series, by_scenario in flat.items()}

    Clusters = tuple[Any, list[tuple[int, int]], list[str], list[tuple[int, int, list[tuple[str, int, int]]]]]

    def clusters_of(selected: Any) -> Clusters:
        """The selected trials in cluster order, each cluster's slice of them and sample, and per scenario its
        first trial and its runs' ranges of clusters."""
        at = np.flatnonzero(selected)
        keys, first, inverse = np.unique(key[at], return_index=True, return_inverse=True)
        by_first = np.argsort(first)
        position = np.empty_like(by_first)
        position[by_first] = np.arange(by_first.size)
        cluster_of = position[inverse.reshape(-1)]
        keys = keys[by_first]
        ends = np.cumsum(np.bincount(cluster_of, minlength=by_first.size)).tolist()
        scenario_run = keys // len(samples)
        cuts = [0, *(np.flatnonzero(np.diff(scenario_run)) + 1).tolist(), keys.size]
        scenario_runs = scenario_run[cuts[:-1]].tolist()
        firsts = at[first[by_first]][cuts[:-1]].tolist()
        segments: list[tuple[int, int, list[tuple[str, int, int]]]] = []
        for pair, first_trial, lo, hi in zip(scenario_runs, firsts, cuts, cuts[1:], strict=False):
            code, run_code = divmod(pair, len(runs))
            if not segments or segments[-1][0] != code:
                segments.append((code, first_trial, []))
            segments[-1][2].append((runs[run_code], lo, hi))
        return (
            at[np.argsort(cluster_of, kind="stable")],
            list(zip([0, *ends[:-1]], ends, strict=True)),
            [samples[i] for i in (keys % len(samples)).tolist()],
            segments,
        )

    metrics_of: list[list[tuple[int, int, str, dict[str, dict[str, list[float]]]]]] = [[] for _ in scenarios]
    grouped: list[tuple[Any, Clusters]] = []
    bootstrapped = {f.series for f in figures(for_tokens=True) if f.statistic != "maximum"}
    for rank, (metric, metric_values, selected) in enumerate(selections):
        if metric not in bootstrapped or not selected.any():
            continue
        clusters = next((c for s, c in grouped if np.array_equal(s, selected)), None)
        if clusters is None:
            clusters = clusters_of(selected)
            grouped.append((selected, clusters))
        order, slices, names, segments = clusters
        in_order = metric_values[order].tolist()
        pieces = [in_order[a:b] for a, b in slices]
        for code, first_trial, run_ranges in segments:
            by_run = {run_id: dict(zip(names[lo:hi], pieces[lo:hi], strict=True)) for run_id, lo, hi in run_ranges}
            metrics_of[code].append((first_trial, rank, metric, by_run))
    # A scenario's series in the order its trials first gave each a value (in catalog order within one trial),
    # as adding the values trial by trial orders them.
    for t, metrics in zip(ours, metrics_of, strict=True):
        t.clusters = {metric: by_run for _first, _rank, metric, by_run in sorted(metrics, key=lambda m: m[:2])}


_LIKE_TOKENS = {("counted", "counted"), ("estimated", "estimated"), (None, None)}
"""Token counting on both sides that makes tokens/s like for like (two legacy files record no source)."""


def _tokens_unlike(b: _Trials, c: _Trials) -> bool:
    """One side's token counts estimated (or mixed, or of an unrecorded source) and the other's counted:
    tokens/s is not like for like."""
    def counted(t: _Trials) -> bool:
        return bool(t.token_sources) or any(t.samples(f) for f in figures() if f.tokens)

    if not counted(b) or not counted(c):
        return False  # a side without trials: nothing to compare either way
    return (token_counting(b.token_sources), token_counting(c.token_sources)) not in _LIKE_TOKENS


def _estimated_sides(b: _Trials, c: _Trials) -> str:
    parts = []
    for name, t in (("the baseline", b), ("the candidate", c)):
        kind = token_counting(t.token_sources)
        if kind == "estimated":
            parts.append(f"token counts were estimated from characters on {name}")
        elif kind == "mixed":
            parts.append(f"token counts were partly estimated from characters on {name}")
        elif kind is None:
            parts.append(f"the token count source is not recorded on {name}")
    return " and ".join(parts)


def _scenario_figures(b: _Trials, c: _Trials, speed_comparable: bool) -> tuple[FigureDef, ...]:
    """The figures a scenario compares: characters per second follow tokens/s where the token counts
    are not like for like."""
    return figures(for_tokens=speed_comparable and _tokens_unlike(b, c))


def _testable(f: FigureDef, b: _Trials, c: _Trials, speed_comparable: bool) -> bool:
    if f.statistic == "maximum" or (f.speed and not speed_comparable):
        return False
    if f.tokens and _tokens_unlike(b, c):
        return False
    if b.value(f) is None or c.value(f) is None:
        return False
    return min(len(b.samples(f)), len(c.samples(f))) >= stats.MIN_BOOTSTRAP_VALUES


def _figure(
    f: FigureDef,
    b: _Trials,
    c: _Trials,
    *,
    speed_comparable: bool,
    confidence: float,
    tolerance: tol.Tolerance = tol.DEFAULT_TOLERANCE,
    caches: Caches | None = None,
) -> FigureComparison:
    vb, vc = b.value(f), c.value(f)
    common: dict[str, Any] = {
        "key": f.key, "label": f.label, "unit": f.unit, "better": f.better, "baseline": vb, "candidate": vc,
        "baseline_absent": NO_MEASURED_TRIAL if b.present and not b.trials else d.NOT_RECORDED,
        "candidate_absent": NO_MEASURED_TRIAL if c.present and not c.trials else d.NOT_RECORDED,
    }
    if f.speed and not speed_comparable:
        return FigureComparison(**common, delta=None, relative_delta=None, interval=None,
                                verdict="not comparable", note=NOT_COMPARABLE_NOTE)
    # A side that attempted the scenario but whose every request failed: no trial to take a figure from.
    unmeasured_b = vb is None and b.present and not b.trials
    unmeasured_c = vc is None and c.present and not c.trials
    if unmeasured_b or unmeasured_c:
        side = "either side" if unmeasured_b and unmeasured_c else ("the baseline" if unmeasured_b else "the candidate")
        return FigureComparison(**common, delta=None, relative_delta=None, interval=None,
                                verdict="no measured trial", note=f"{NO_MEASURED_TRIAL} on {side}")
    if f.tokens and _tokens_unlike(b, c) and vb is not None and vc is not None:
        delta = vc - vb
        return FigureComparison(**common, delta=delta, relative_delta=delta / abs(vb) if vb else None,
                                interval=None, verdict="not comparable",
                                note=ESTIMATED_TOKENS_NOTE.format(why=_estimated_sides(b, c)))
    if vb is None or vc is None:
        side = "either side" if vb is None and vc is None else ("the baseline" if vb is None else "the candidate")
        return FigureComparison(**common, delta=None, relative_delta=None, interval=None,
                                verdict="not recorded", note=f"not recorded on {side}")
    delta = vc - vb
    relative = delta / abs(vb) if vb else None
    interval: stats.Interval | None = None
    kept = None if caches is None else caches.resamples
    if f.statistic in ("rate", "mean"):
        interval = stats.cluster_bootstrap_mean_difference(
            b.clustered(f), c.clustered(f), confidence=confidence,
            method=stats.CLUSTER_RATE_METHOD if f.statistic == "rate" else stats.CLUSTER_MEAN_METHOD, kept=kept,
        )
    elif f.q is not None:
        # The source's other compared quantiles are resampled with it (one draw gives the median and the p90).
        interval = stats.cluster_bootstrap_quantile_difference(
            b.clustered(f), c.clustered(f), f.q, confidence=confidence, together=fc.CATALOG.quantiles(f.source),
            kept=kept,
        )
    if f.statistic == "maximum":
        return FigureComparison(**common, delta=delta, relative_delta=relative, interval=None,
                                verdict="not tested", note="a maximum has no interval: the change is shown, not tested")
    if interval is None:
        return FigureComparison(**common, delta=delta, relative_delta=relative, interval=None,
                                verdict="too few trials",
                                note=f"fewer than {stats.MIN_BOOTSTRAP_VALUES} values on a side: no interval")
    verdict: FigureVerdict = tol.judge(interval, delta, relative, f.unit, f.better, tolerance)
    note = tolerance.describe(f.unit) if verdict == "within tolerance" else None
    return FigureComparison(**common, delta=delta, relative_delta=relative, interval=interval, verdict=verdict,
                            note=note)


def _title(kind: Kind, differences: list[Difference], baseline: Side) -> str:
    by_key = {x.key: x for x in differences}
    main = {"execution": configuration.ROUTE, "device": configuration.HARDWARE_MODEL, "os": configuration.OS_BUILD}.get(kind)
    if kind == "os":
        hardware = _show(configuration.HARDWARE_MODEL, _values(configuration.HARDWARE_MODEL, baseline.runs))
        x = by_key[configuration.OS_BUILD.key]
        return f"{LABELS[kind]} on {hardware}: {x.baseline} → {x.candidate}"
    if main:
        x = by_key[main.key]
        return f"{LABELS[kind]}: {x.baseline} → {x.candidate}"
    if kind == "configuration":
        changed = [x.label.lower() for x in differences if x.group != "thermal"]
        return f"{LABELS[kind]}: {', '.join(changed)}"
    return LABELS[kind]


def compare_selected(
    con: duckdb.DuckDBPyConnection,
    baseline: Side,
    candidate: Side,
    *,
    strict_os: bool = False,
    confidence: float = stats.DEFAULT_CONFIDENCE,
    multiplicity: Multiplicity = "bonferroni",
    tolerance: tol.Tolerance = tol.DEFAULT_TOLERANCE,
    caches: Caches | None = None,
) -> Comparison:
    """Compare two resolved sides (see :func:`fmbench.selection.select_side`).

    ``caches``: the caller's (:class:`fmbench.caches.Caches`): the sides resampled already, and in a static build
    the comparisons the previous build made from the same runs, taken from there instead of worked out again.
    ``None``: everything is worked out.
    """
    cache = None if caches is None else caches.comparisons
    if cache is None:
        return _compare_selected(con, baseline, candidate, strict_os=strict_os, confidence=confidence,
                                 multiplicity=multiplicity, tolerance=tolerance, caches=caches)
    key = cache.key(baseline, candidate, strict_os=strict_os, confidence=confidence, multiplicity=multiplicity,
                    tolerance=tolerance)
    found = None if key is None else cache.get(key, baseline, candidate)
    if found is not None:
        return found
    made = _compare_selected(con, baseline, candidate, strict_os=strict_os, confidence=confidence,
                             multiplicity=multiplicity, tolerance=tolerance, caches=caches)
    if key is None:
        return made
    cache.put(key, made)
    # What the cache gives back, as it will next time: the same value, and the same stored JSON wherever the
    # build keeps a comparison (a regression step) whether it was worked out now or taken from the cache.
    return cache.get(key, baseline, candidate, made=True) or made


def _compare_selected(
    con: duckdb.DuckDBPyConnection,
    baseline: Side,
    candidate: Side,
    *,
    strict_os: bool,
    confidence: float,
    multiplicity: Multiplicity,
    tolerance: tol.Tolerance,
    caches: Caches | None,
) -> Comparison:
    if baseline.rule != candidate.rule:
        raise ValueError("both sides of a comparison use one attempt rule")
    for name, side in (("baseline", baseline), ("candidate", candidate)):
        _refuse_invalid(name, side)
        _refuse_mixed_pool(name, side)
    shared = set(baseline.run_ids) & set(candidate.run_ids)
    if shared:
        raise ComparisonRefused(
            "same-runs", f"run(s) {', '.join(sorted(shared))} would be on both sides; a run is not compared with itself"
        )
    differences, differing = _differences(baseline, candidate)
    _refuse_unlike_configuration(baseline, candidate)
    kind = _kind(differing, baseline, candidate)
    speed_comparable = kind != "execution"
    caveats = _caveats(kind, differing, baseline, candidate, strict_os)

    data_b, titles_b, listed_b = _side_trials(con, baseline, caches)
    data_c, titles_c, listed_c = _side_trials(con, candidate, caches)
    caveats += _fallback_caveats((("baseline", data_b), ("candidate", data_c)))
    # The newest run's scenario order (its file's summaries order), then what it lacks.
    order = list(dict.fromkeys([*_scenario_order((baseline, candidate), listed_b + listed_c), *titles_b, *titles_c]))
    titles = {**titles_c, **titles_b}
    dropped: list[DroppedScenario] = []
    kept: list[str] = []
    for sid in order:
        b, c = data_b.get(sid, _Trials()), data_c.get(sid, _Trials())
        title = titles[sid][0]
        if strict_os and sid in vocab.OS27_ONLY_SCENARIOS:
            dropped.append(DroppedScenario(sid, title, "runs on OS 27 only (strict OS 26 vs OS 27 mode)"))
        elif strict_os and not (b.present and c.present):
            missing = "the baseline" if not b.present else "the candidate"
            dropped.append(DroppedScenario(sid, title, f"not run on {missing} (strict mode keeps shared workloads)"))
        else:
            kept.append(sid)

    tested = sum(
        _testable(f, data_b.get(sid, _Trials()), data_c.get(sid, _Trials()), speed_comparable)
        for sid in kept
        for f in _scenario_figures(data_b.get(sid, _Trials()), data_c.get(sid, _Trials()), speed_comparable)
    )
    figure_confidence = confidence
    if multiplicity == "bonferroni" and tested > 1:
        figure_confidence = 1 - (1 - confidence) / tested
    scenarios = []
    for sid in kept:
        b, c = data_b.get(sid, _Trials()), data_c.get(sid, _Trials())
        note = None
        if not b.present or not c.present:
            note = f"not run on {'the baseline' if not b.present else 'the candidate'}"
        figures = tuple(
            _figure(f, b, c, speed_comparable=speed_comparable, confidence=figure_confidence, tolerance=tolerance,
                    caches=caches)
            for f in _scenario_figures(b, c, speed_comparable)
        )
        scenarios.append(
            ScenarioComparison(sid, titles[sid][0], titles[sid][1], b.trials, b.attempts, c.trials, c.attempts,
                               figures, note)
        )
    return Comparison(
        kind=kind,
        label=LABELS[kind],
        title=_title(kind, differences, baseline),
        rule=baseline.rule,
        baseline=baseline,
        candidate=candidate,
        differences=tuple(differences),
        caveats=tuple(caveats),
        scenarios=tuple(scenarios),
        dropped=tuple(dropped),
        strict_os=strict_os,
        speed_comparable=speed_comparable,
        confidence=confidence,
        figure_confidence=figure_confidence,
        multiplicity=multiplicity,
        tested_figures=tested,
        tolerance=tolerance,
    )


def compare_sides(
    con: duckdb.DuckDBPyConnection,
    baseline: str | SideSpec,
    candidate: str | SideSpec,
    *,
    rule: AttemptRule = "latest",
    strict_os: bool = False,
    confidence: float = stats.DEFAULT_CONFIDENCE,
    multiplicity: Multiplicity = "bonferroni",
    tolerance: tol.Tolerance = tol.DEFAULT_TOLERANCE,
    caches: Caches | None = None,
) -> Comparison:
    """Compare two sides, each a run id, a run file or a filter expression, on an open database."""
    b = select_side(con, baseline, rule)
    c = select_side(con, candidate, rule)
    return compare_selected(con, b, c, strict_os=strict_os, confidence=confidence, multiplicity=multiplicity,
                            tolerance=tolerance, caches=caches)


def compare_runs(
    baseline: str,
    candidate: str,
    db: str | os.PathLike[str] | None = None,
    *,
    rule: AttemptRule = "latest",
    strict_os: bool = False,
    confidence: float = stats.DEFAULT_CONFIDENCE,
    multiplicity: Multiplicity = "bonferroni",
    registry: Registry | None = None,
    tolerance: tol.Tolerance = tol.DEFAULT_TOLERANCE,
) -> Comparison:
    """Open the database read-only and compare (what ``fmbench compare`` calls).

    Two run files and no database given: the files are read into an in-memory database (see
    :func:`compare_files`), so no database is needed. ``tolerance`` is the practical threshold (a
    project's ``[publishing.practical_change]``). A database's sides are resampled once: what a build, a
    server or an earlier comparison stored beside it (:mod:`fmbench.resample_store`) is read, not drawn again,
    with caches of this comparison's own (:meth:`fmbench.caches.Caches.beside`).
    """
    if db is None and sides_are_files(baseline, candidate):
        return compare_files(baseline, candidate, registry=registry, rule=rule, strict_os=strict_os,
                             confidence=confidence, multiplicity=multiplicity, tolerance=tolerance)
    with connect(db, read_only=True) as con:
        return compare_sides(
            con, baseline, candidate, rule=rule, strict_os=strict_os, confidence=confidence,
            multiplicity=multiplicity, tolerance=tolerance, caches=Caches.beside(db),
        )


def sides_are_files(baseline: str, candidate: str) -> bool:
    """Both sides name existing run files."""
    return all(Path(x.strip()).is_file() for x in (baseline, candidate) if x.strip()) and bool(
        baseline.strip() and candidate.strip()
    )


def compare_files(
    baseline: str,
    candidate: str,
    *,
    registry: Registry | None = None,
    rule: AttemptRule = "latest",
    strict_os: bool = False,
    confidence: float = stats.DEFAULT_CONFIDENCE,
    multiplicity: Multiplicity = "bonferroni",
    tolerance: tol.Tolerance = tol.DEFAULT_TOLERANCE,
) -> Comparison:
    """Compare two run files with no database: each is read, judged and stored (with its sidecar) in an
    in-memory DuckDB that is gone when the comparison is made. A file that cannot be read is an error
    naming it."""
    from fmbench.ingest import ingest_file

    registry = registry or load_registry()
    con = duckdb.connect(":memory:")
    try:
        for m in migrations():
            apply_migration(con, m)
        for text in dict.fromkeys((baseline.strip(), candidate.strip())):
            outcome = ingest_file(con, Path(text), registry=registry)
            if outcome.status == "error":
                raise FmbenchError(outcome.message or f"{Path(text).name}: cannot be read")
        return compare_sides(con, baseline, candidate, rule=rule, strict_os=strict_os, confidence=confidence,
                             multiplicity=multiplicity, tolerance=tolerance)
    finally:
        con.close()


# --- output ----------------------------------------------------------------------------


def _value(unit: str, value: float | None) -> str:
    if value is None:
        return d.NOT_RECORDED
    return fc.format_value(unit, value) or ""


_signed = fc.format_change


def delta_text(f: FigureComparison) -> str:
    return "—" if f.delta is None else _signed(f.unit, f.delta)


def relative_text(f: FigureComparison) -> str:
    return "—" if f.relative_delta is None else f"{f.relative_delta * 100:+.1f}%"


def interval_text(f: FigureComparison) -> str:
    if f.interval is None:
        return "—"
    return f"[{_signed(f.unit, f.interval.low)}, {_signed(f.unit, f.interval.high)}]"


def value_text(f: FigureComparison, side: Literal["baseline", "candidate"]) -> str:
    value = f.baseline if side == "baseline" else f.candidate
    if value is None:
        return f.baseline_absent if side == "baseline" else f.candidate_absent
    return _value(f.unit, value)


def _cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").replace("<", "&lt;")


def _run_line(r: RunInfo) -> str:
    return (
        f"{r.run_id} · {r.file_name} · {r.device_name} ({r.hardware_model or d.NOT_RECORDED}) · "
        f"{r.system_name} {r.system_version} build {r.os_build or d.NOT_RECORDED} · "
        f"{configuration.ROUTE.value(r)} · {configuration.SUITE.value(r)} · "
        f"{configuration.SESSION_MODE.value(r) or 'session ' + d.NOT_RECORDED} · "
        f"tokens {_token_source_text(r.token_count_source)} · "
        f"started {d.iso(r.started_at)} · {r.verdict}"
    )


def _token_source_text(source: str | None) -> str:
    if source is None:
        return d.NOT_RECORDED
    if source == "mixed":
        return "mixed"
    kind = "estimated" if token_counting([source]) == "estimated" else "counted"
    return f"{kind} ({vocab.label('tokenCountSource', source)})"


def _side_lines(name: str, side: Side) -> list[str]:
    lines = [f"{name}: {side.spec.describe()} — {len(side.runs)} run(s) used of {len(side.matched)} matched"]
    lines += [f"  - {_run_line(r)}" for r in side.runs]
    if side.not_used:
        lines.append(f"  - not used under the attempt rule: {_ids(side.not_used)}")
    if side.excluded_invalid:
        lines.append(f"  - left out as invalid evidence: {_ids(side.excluded_invalid)}")
    return lines


def _markdown(c: Comparison) -> str:
    lines = [f"# {_cell(c.title)}", "", f"**{c.label}.** Attempt rule: {c.rule_description}."]
    if c.strict_os:
        lines.append("Strict OS 26 vs OS 27 mode: only the workloads both sides can run.")
    lines += ["", "## Runs", ""]
    for name, side in (("Baseline", c.baseline), ("Candidate", c.candidate)):
        first, *rest = _side_lines(name, side)
        lines.append(f"- {_cell(first)}")
        lines += [f"  {_cell(x)}" for x in rest]
    lines += ["", "## What differs", ""]
    if c.differences:
        lines += ["| Condition | Baseline | Candidate |", "| --- | --- | --- |"]
        lines += [f"| {_cell(x.label)} | {_cell(x.baseline)} | {_cell(x.candidate)} |" for x in c.differences]
    else:
        lines.append("Nothing but the runs themselves: every recorded condition is equal.")
    lines += ["", "## Caveats", ""]
    lines += [f"- {_cell(x.message)}" for x in c.caveats] or ["None."]
    if c.dropped:
        lines += ["", "## Workloads left out", ""]
        lines += [f"- {_cell(x.title)} (`{x.scenario_id}`): {x.reason}" for x in c.dropped]
    lines += ["", "## Figures", ""]
    lines += [f"- {x}" for x in c.method_notes]
    lines += [
        "",
        "| Scenario | Figure | Better | Baseline | Candidate | Delta | Relative | Interval | Verdict |",
        "| --- | --- | --- | ---: | ---: | ---: | ---: | --- | --- |",
    ]
    for s in c.scenarios:
        for f in s.figures:
            verdict = f.verdict if f.note is None or f.verdict in ("better", "worse") else f"{f.verdict} ({f.note})"
            lines.append(
                f"| {_cell(s.title)} | {f.label} | {f.better} | {value_text(f, 'baseline')} "
                f"| {value_text(f, 'candidate')} | {delta_text(f)} | {relative_text(f)} | {interval_text(f)} "
                f"| {_cell(verdict)} |"
            )
    return "\n".join(lines) + "\n"


def _text(c: Comparison) -> str:
    lines = [c.title, f"attempt rule: {c.rule_description}"]
    if c.strict_os:
        lines.append("strict OS 26 vs OS 27 mode: only the workloads both sides can run")
    lines.append("")
    for name, side in (("baseline", c.baseline), ("candidate", c.candidate)):
        lines += _side_lines(name, side)
    lines += ["", "differs:"]
    lines += [f"  - {x}" for x in c.differences] or ["  nothing but the runs themselves"]
    if c.caveats:
        lines += ["", "caveats:"]
        lines += [f"  ! {x.message}" for x in c.caveats]
    if c.dropped:
        lines += ["", "left out:"]
        lines += [f"  - {x.scenario_id}: {x.reason}" for x in c.dropped]
    lines += [""]
    lines += [f"  {x}" for x in c.method_notes]
    lines.append("")
    header = ("scenario", "figure", "better", "baseline", "candidate", "delta", "relative", "interval", "verdict")
    rows = [
        (s.scenario_id, f.label, f.better, value_text(f, "baseline"), value_text(f, "candidate"), delta_text(f),
         relative_text(f), interval_text(f), f.verdict)
        for s in c.scenarios
        for f in s.figures
    ]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(header)]
    lines.append("  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True)).rstrip())
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join(lines)
