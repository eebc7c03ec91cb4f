"""A run read and judged: its figures, summary mismatches, verdict and revision.

Everything that shows a run (validate, summarize, ingest, verify, the site)
goes through :func:`analyze`, so a figure or a verdict has one definition.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from fmbench.analysis.figures import (
    ScenarioFigures,
    SummaryMismatch,
    TrialFigures,
    scenario_figures,
    trial_figures,
)
from fmbench.analysis.policy import Verdict, assess
from fmbench.analysis.revisions import Assignment, Registry, load_registry
from fmbench.analysis.scoring import StoredCheck, check_stored
from fmbench.errors import Problem, RunFileError
from fmbench.runfile.annotations import Annotations, parse_annotations, read_sidecar, sidecar_for
from fmbench.runfile.names import device_name_notes
from fmbench.runfile.reader import DEFAULT_MAX_BYTES, DEFAULT_MAX_TRIALS, parse_run
from fmbench.runfile.record import RunRecord, fixture_fingerprint, to_record
from fmbench.runfile.simulator import SimulatorJudgement, judge_simulator

ANALYSIS_VERSION = 4
"""The version of the rules that derive a run's figures, verdict and rule set from its file.

Stored with each run. When it changes, opening an older database re-derives
every run analysed by an older version from its stored original bytes (a data
migration), so stored verdicts always follow the current rules.
Version 1: the first rules. Version 2: Simulator evidence from the hardware
table and the sidecar; stored summaries checked against every scoring rule set. Version 3: figures no
runner can record (a decode longer than its request, a trial ending before it starts, context use over 100%,
more output tokens than the context window, a repeated trial id) make a run invalid; device names NFC-normalised.
Version 4: a run whose suite revision is unknown is exploratory.
"""


@dataclass(frozen=True)
class RunAnalysis:
    record: RunRecord
    figures: list[ScenarioFigures]
    mismatches: list[SummaryMismatch]
    verdict: Verdict
    fingerprint: str | None
    revision: Assignment
    annotations: Annotations | None
    trial_figures: tuple[TrialFigures, ...] = ()
    """Each trial's own figures, in trial order (computed once for the scenario figures and the rows)."""
    scoring: StoredCheck | None = None
    """Which scoring rule set explains the stored summaries."""
    simulator: SimulatorJudgement | None = None
    """Whether the run was measured in a Simulator, and on what evidence."""
    notes: tuple[Problem, ...] = ()
    """What judging found worth saying that decides nothing (shown with the reader's flags)."""

    @property
    def flags(self) -> list[Problem]:
        """The reader's flags and the judgement's notes."""
        return [*self.record.flags, *self.notes]


def analyze(
    record: RunRecord,
    registry: Registry | None = None,
    annotations: Annotations | None = None,
) -> RunAnalysis:
    registry = registry or load_registry()
    per_trial = tuple(trial_figures(t) for t in record.trials)
    figures = scenario_figures(record, per_trial)
    scoring = check_stored(record, figures)
    simulator = judge_simulator(record.environment, annotations)
    notes: list[Problem] = []
    if simulator.basis == "unchecked":
        notes.append(Problem("environment.hardwareModel", simulator.evidence))
    if scoring.commit_flag:
        notes.append(Problem("environment.foundationModelsBenchCommit", scoring.commit_flag))
    notes += device_name_notes(record.environment)
    fingerprint = fixture_fingerprint(record.trials)
    revision = registry.assign(record.environment.foundationModelsBenchCommit, fingerprint)
    return RunAnalysis(
        record=record,
        figures=figures,
        mismatches=scoring.mismatches,
        verdict=assess(record, scoring.mismatches, annotations, simulator, revision, Path(registry.source).name),
        fingerprint=fingerprint,
        revision=revision,
        annotations=annotations,
        trial_figures=per_trial,
        scoring=scoring,
        simulator=simulator,
        notes=tuple(notes),
    )


def read_annotations_for(path: Path) -> tuple[Annotations | None, bytes | None]:
    sidecar = sidecar_for(path)
    if sidecar is None:
        return None, None
    data = read_sidecar(sidecar)
    return parse_annotations(data, sidecar.name, hashlib.sha256(data).hexdigest()), data


def analyze_bytes(
    data: bytes,
    file_name: str,
    *,
    registry: Registry | None = None,
    annotations: Annotations | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    sha256: str | None = None,
    max_trials: int | None = DEFAULT_MAX_TRIALS,
) -> RunAnalysis:
    record = to_record(parse_run(data, file_name, max_bytes=max_bytes, max_trials=max_trials), file_name, data, sha256)
    return analyze(record, registry, annotations)


def analyze_file(
    path: Path,
    *,
    registry: Registry | None = None,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_trials: int | None = DEFAULT_MAX_TRIALS,
) -> RunAnalysis:
    """Read a run file and its sidecar (if any) and judge it."""

    try:
        size = path.stat().st_size
    except OSError as exc:
        raise RunFileError(path.name, [Problem("(file)", f"cannot be read: {exc.strerror}")]) from None
    if size > max_bytes:
        raise RunFileError(
            path.name,
            [Problem("(file)", f"{size:,} bytes is larger than the {max_bytes:,}-byte limit for a run file; raise it with --max-bytes if this really is one run")],
        )
    annotations, _ = read_annotations_for(path)
    return analyze_bytes(
        path.read_bytes(), path.name, registry=registry, annotations=annotations, max_bytes=max_bytes,
        max_trials=max_trials,
    )
