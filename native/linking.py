"""Tie stored Evaluations rows to the trials they replay, and say what the replay shows.

A row is linked when the ``recordID`` inside its decoded ``Input`` equals the
id of exactly one ingested trial (``trials.trial_id``) or measured failure
(``failures.failure_id``; warmup failures are never replayed). Ids can repeat
across runs (an edited copy of a run keeps its trial ids), so when the
artifact's ``evaluationInfo`` names a ``Source SHA-256`` and that run is in
the database, its rows link only into that run. A recordID that matches
nothing, or more than one trial or failure, stays unlinked.

:func:`relink` recomputes the links with one bound-parameter ``UPDATE``; it is
run inside each artifact's ingest transaction (for that artifact) and after
every run ingest (for all artifacts), so the order of the two never matters.

:func:`replay_for_run` reads what the run page shows: the artifacts linked to
a run (deterministic first, model-judge ones flagged as secondary evidence),
per-metric profiles over the linked rows, and, for every linked trial or
failure, the replay's Execution Success, Prompt Pass, Constraint Score and
Safety Pass beside fmbench's own recomputation stored with the run.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from .differences import RowIssues, evaluation_issues
from .document import parse_response
from .model import Evaluation, MetricValue, Row, SummaryMetric
from .profiles import MetricProfile, profile_metrics
from .replay import CONSTRAINT_SCORE, EXECUTION_SUCCESS, PREFIX, PROMPT_PASS, SAFETY_PASS

if TYPE_CHECKING:
    import duckdb

Owner = Literal["trial", "failure"]

COMPARED_FIGURES = (EXECUTION_SUCCESS, PROMPT_PASS, CONSTRAINT_SCORE, SAFETY_PASS)
"""The replay's metric columns that fmbench recomputes itself, in display order."""

_SCORE_FIGURES = frozenset({CONSTRAINT_SCORE})
_TOLERANCE = 1e-9

# --- linking ---------------------------------------------------------------------------

_RELINK = """
UPDATE evaluation_rows AS target
SET linked_run_id = wanted.run_id,
    linked_owner = wanted.owner,
    linked_ordinal = wanted.ordinal
FROM (
    WITH scope AS (
        SELECT r.evaluation_key, r.row_index, r.record_id, e.source_run_sha256,
               EXISTS (
                   SELECT 1 FROM runs AS s WHERE s.source_sha256 = e.source_run_sha256
               ) AS source_present
        FROM evaluation_rows AS r
        JOIN evaluations AS e USING (evaluation_key)
        WHERE (CAST($key AS VARCHAR) IS NULL OR r.evaluation_key = $key)
    ),
    candidates AS (
        SELECT scope.evaluation_key, scope.row_index, t.run_id,
               'trial' AS owner, t.ordinal
        FROM scope
        JOIN trials AS t ON t.trial_id = scope.record_id
        JOIN runs AS u ON u.run_id = t.run_id
        WHERE NOT scope.source_present OR u.source_sha256 = scope.source_run_sha256
        UNION ALL
        SELECT scope.evaluation_key, scope.row_index, f.run_id,
               'failure' AS owner, f.ordinal
        FROM scope
        JOIN failures AS f ON f.failure_id = scope.record_id AND NOT f.is_warmup
        JOIN runs AS u ON u.run_id = f.run_id
        WHERE NOT scope.source_present OR u.source_sha256 = scope.source_run_sha256
    ),
    unique_links AS (
        SELECT evaluation_key, row_index,
               any_value(run_id) AS run_id, any_value(owner) AS owner,
               any_value(ordinal) AS ordinal
        FROM candidates
        GROUP BY evaluation_key, row_index
        HAVING count(*) = 1
    )
    SELECT scope.evaluation_key, scope.row_index,
           unique_links.run_id, unique_links.owner, unique_links.ordinal
    FROM scope
    LEFT JOIN unique_links USING (evaluation_key, row_index)
) AS wanted
WHERE target.evaluation_key = wanted.evaluation_key
  AND target.row_index = wanted.row_index
  AND (target.linked_run_id IS DISTINCT FROM wanted.run_id
       OR target.linked_owner IS DISTINCT FROM wanted.owner
       OR target.linked_ordinal IS DISTINCT FROM wanted.ordinal)
"""


def relink(con: duckdb.DuckDBPyConnection, evaluation_key: str | None = None) -> int:
    """Recompute row links (of one artifact, or of all); return how many rows changed.

    Cheap when nothing is stored: one count, no join. Runs in the caller's
    transaction when there is one; on its own it is a single atomic statement.
    """
    stored = con.execute(
        "SELECT count(*) FROM evaluation_rows "
        "WHERE CAST($key AS VARCHAR) IS NULL OR evaluation_key = $key",
        {"key": evaluation_key},
    ).fetchone()
    if not stored or not stored[0]:
        return 0
    changed = con.execute(_RELINK, {"key": evaluation_key}).fetchone()
    return int(changed[0]) if changed else 0


# --- what the run page shows -------------------------------------------------------------


@dataclass(frozen=True)
class LinkedArtifact:
    """An ingested result document with at least one row linked to the run."""

    evaluation_key: str
    file_name: str
    line: int | None
    sha256: str
    evaluation_id: str | None
    result_id: str | None
    start_time: str | None
    end_time: str | None
    duration_ms: float | None
    info: dict[str, str]
    test_identifier: str | None
    attachment_name: str | None
    is_judge: bool
    source_matches_run: bool
    """The artifact's "Source SHA-256" is this run's file: it says it replays this very run."""
    row_count: int
    linked_row_count: int
    """Rows linked to this run."""
    unlinked_row_count: int
    """Rows whose recordID names no ingested trial or failure (or more than one)."""
    other_run_row_count: int
    """Rows linked to a trial of another run."""
    profiles: tuple[MetricProfile, ...]
    """Per metric column, over the rows linked to this run only, as xceval computes them."""
    issues: tuple[RowIssues, ...]
    """Linked rows that failed a metric or differ from their Expected (an empty Expected is none)."""
    summary: tuple[SummaryMetric, ...]
    """The artifact's own summary entries, as written (over all its rows)."""

    @property
    def evidence(self) -> Literal["primary", "secondary"]:
        """A model judge's subjective scores are secondary evidence, always shown apart."""
        return "secondary" if self.is_judge else "primary"

    @property
    def location(self) -> str:
        return self.file_name if self.line is None else f"{self.file_name} line {self.line}"


@dataclass(frozen=True)
class FigureCheck:
    """One figure of one row: the replay's value beside fmbench's recomputation."""

    metric: str
    """The replay's column, such as ``FoundationModelsBench Prompt Pass``."""
    replay_kind: str | None
    """``pass``, ``fail``, ``score``, ``ignore`` …; ``None`` when the column is absent."""
    replay: bool | float | None
    """The replay's verdict: a pass/fail, a score, or ``None`` when ignored or absent."""
    replay_rationale: str | None
    fmbench: bool | float | None
    """fmbench's figure for the trial or failure; ``None`` where it does not apply."""
    compared: bool
    """False when the replay has no (or an unknown kind of) column for this figure."""
    agrees: bool

    @property
    def figure(self) -> str:
        """The short name: ``Prompt Pass``."""
        return self.metric.removeprefix(PREFIX).strip()


@dataclass(frozen=True)
class TrialAgreement:
    """One linked row of a deterministic artifact and the trial (or failure) it replays."""

    evaluation_key: str
    file_name: str
    row_index: int
    record_id: str
    owner: Owner
    ordinal: int
    scenario_id: str
    sample_id: str | None
    figures: tuple[FigureCheck, ...]
    disagreements: tuple[str, ...]

    @property
    def agrees(self) -> bool:
        return not self.disagreements

    def figure(self, metric: str) -> FigureCheck | None:
        """The check of one replay column (full name or short, e.g. ``Prompt Pass``)."""
        for check in self.figures:
            if metric in (check.metric, check.figure):
                return check
        return None


@dataclass(frozen=True)
class Disagreement:
    """One figure on which a replay row and fmbench's recomputation differ."""

    evaluation_key: str
    file_name: str
    row_index: int
    record_id: str
    owner: Owner
    ordinal: int
    metric: str
    replay: bool | float | None
    fmbench: bool | float | None
    message: str
    """``row 12 (trial 3F2A9C10…): replay says Prompt Pass fails (…); fmbench's
    recomputation passes it``."""


@dataclass(frozen=True)
class RunReplay:
    """Everything the run page shows about the Evaluations artifacts of one run."""

    run_id: str
    artifacts: tuple[LinkedArtifact, ...]
    """Deterministic artifacts first, then model-judge ones (``is_judge``, secondary evidence)."""
    agreements: tuple[TrialAgreement, ...]
    """Per linked row of the deterministic artifacts, in artifact then row order."""
    disagreements: tuple[Disagreement, ...]
    unlinked_row_count: int
    """Rows of these artifacts that link to no trial or failure at all."""

    @property
    def judge(self) -> tuple[LinkedArtifact, ...]:
        return tuple(a for a in self.artifacts if a.is_judge)

    @property
    def agrees(self) -> bool:
        return not self.disagreements

    @property
    def compared_count(self) -> int:
        """Linked trials and failures whose figures were compared."""
        return len(self.agreements)


@dataclass(frozen=True)
class _Recomputed:
    """fmbench's own figures for one trial or failure, read from the run's tables."""

    owner: Owner
    ordinal: int
    record_id: str
    scenario_id: str
    sample_id: str | None
    figures: dict[str, bool | float | None]
    reasons: dict[str, str]
    """Why a figure is ``None`` (or why it fails, for a failure), keyed by metric."""


def _loads(text: str | None, default: Any) -> Any:
    return default if text is None else json.loads(text)


def _recomputed(con: duckdb.DuckDBPyConnection, run_id: str) -> dict[tuple[str, int], _Recomputed]:
    found: dict[tuple[str, int], _Recomputed] = {}
    trials = con.execute(
        "SELECT ordinal, trial_id, scenario_id, sample_id, check_count, prompt_pass, "
        "constraint_score, safety_pass, safety_expectation FROM trials WHERE run_id = ?",
        [run_id],
    ).fetchall()
    for ordinal, trial_id, scenario, sample, checks, passed, score, safety, expectation in trials:
        reasons: dict[str, str] = {}
        if not checks:
            reasons[CONSTRAINT_SCORE] = "the trial has no checks"
        if expectation is None:
            reasons[SAFETY_PASS] = "the sample has no safety expectation"
        found["trial", ordinal] = _Recomputed(
            owner="trial",
            ordinal=ordinal,
            record_id=trial_id,
            scenario_id=scenario,
            sample_id=sample,
            figures={
                EXECUTION_SUCCESS: True,
                PROMPT_PASS: bool(passed),
                CONSTRAINT_SCORE: score,
                SAFETY_PASS: safety,
            },
            reasons=reasons,
        )
    failures = con.execute(
        "SELECT ordinal, failure_id, scenario_id, sample_id, kind, message FROM failures "
        "WHERE run_id = ? AND NOT is_warmup",
        [run_id],
    ).fetchall()
    for ordinal, failure_id, scenario, sample, kind, message in failures:
        cause = ": ".join(part for part in (kind, message) if part) or "execution failure"
        no_response = f"the request failed ({cause})"
        found["failure", ordinal] = _Recomputed(
            owner="failure",
            ordinal=ordinal,
            record_id=failure_id,
            scenario_id=scenario,
            sample_id=sample,
            figures={
                EXECUTION_SUCCESS: False,
                PROMPT_PASS: None,
                CONSTRAINT_SCORE: None,
                SAFETY_PASS: None,
            },
            reasons={
                EXECUTION_SUCCESS: no_response,
                PROMPT_PASS: no_response,
                CONSTRAINT_SCORE: no_response,
                SAFETY_PASS: no_response,
            },
        )
    return found


def _replay_value(metric: MetricValue) -> tuple[bool | float | None, bool]:
    """(the replay's verdict, whether the kind is one that can be compared)."""
    if metric.kind in ("pass", "fail"):
        return (not metric.fails), True
    if metric.kind == "score":
        return metric.numeric, True
    if metric.kind == "ignore":
        return None, True
    return None, False


def _same(replay: bool | float | None, mine: bool | float | None) -> bool:
    if replay is None or mine is None:
        return replay is None and mine is None
    if isinstance(replay, bool) or isinstance(mine, bool):
        return isinstance(replay, bool) and isinstance(mine, bool) and replay == mine
    return math.isclose(float(replay), float(mine), rel_tol=_TOLERANCE, abs_tol=_TOLERANCE)


def _number(value: float) -> str:
    return f"{value:.4g}"


def _replay_says(metric: str, value: bool | float | None, rationale: str | None) -> str:
    figure = metric.removeprefix(PREFIX).strip()
    if value is None:
        text = f"{figure} does not apply"
    elif isinstance(value, bool):
        text = f"{figure} {'passes' if value else 'fails'}"
    else:
        text = f"{figure} is {_number(value)}"
    if rationale:
        text += f" ({rationale})"
    return text


def _fmbench_says(metric: str, value: bool | float | None, reason: str | None) -> str:
    figure = metric.removeprefix(PREFIX).strip()
    if value is None:
        return f"has no {figure} for it" + (f" ({reason})" if reason else "")
    if isinstance(value, bool):
        text = "passes it" if value else "fails it"
        return text + (f" ({reason})" if reason and not value else "")
    return f"gives {_number(value)}"


def _short(record_id: str) -> str:
    return record_id if len(record_id) <= 8 else f"{record_id[:8]}…"


def _compare_row(
    key: str, file_name: str, row: Row, mine: _Recomputed
) -> tuple[TrialAgreement, list[Disagreement]]:
    checks: list[FigureCheck] = []
    found: list[Disagreement] = []
    for metric_name in COMPARED_FIGURES:
        theirs = row.metric(metric_name)
        fmbench = mine.figures[metric_name]
        if theirs is None:
            checks.append(FigureCheck(metric_name, None, None, None, fmbench, False, True))
            continue
        replay, comparable = _replay_value(theirs)
        agrees = not comparable or _same(replay, fmbench)
        checks.append(
            FigureCheck(
                metric_name, theirs.kind, replay, theirs.rationale, fmbench, comparable, agrees
            )
        )
        if agrees:
            continue
        message = (
            f"row {row.index} ({mine.owner} {_short(mine.record_id)}): replay says "
            f"{_replay_says(metric_name, replay, theirs.rationale)}; "
            f"fmbench's recomputation {_fmbench_says(metric_name, fmbench, mine.reasons.get(metric_name))}"
        )
        found.append(
            Disagreement(
                evaluation_key=key,
                file_name=file_name,
                row_index=row.index,
                record_id=mine.record_id,
                owner=mine.owner,
                ordinal=mine.ordinal,
                metric=metric_name,
                replay=replay,
                fmbench=fmbench,
                message=message,
            )
        )
    agreement = TrialAgreement(
        evaluation_key=key,
        file_name=file_name,
        row_index=row.index,
        record_id=mine.record_id,
        owner=mine.owner,
        ordinal=mine.ordinal,
        scenario_id=mine.scenario_id,
        sample_id=mine.sample_id,
        figures=tuple(checks),
        disagreements=tuple(d.message for d in found),
    )
    return agreement, found


def _linked_rows(
    con: duckdb.DuckDBPyConnection, key: str, run_id: str
) -> list[tuple[Row, Owner, int]]:
    rows: dict[int, tuple[Row, Owner, int]] = {}
    for index, input_json, record_id, response_json, expected_json, owner, ordinal in con.execute(
        "SELECT row_index, input_json, record_id, response_json, expected_json, linked_owner, linked_ordinal "
        "FROM evaluation_rows WHERE evaluation_key = ? AND linked_run_id = ? ORDER BY row_index",
        [key, run_id],
    ).fetchall():
        decoded = _loads(input_json, None)
        row = Row(
            index=index,
            input_raw=input_json,
            input=decoded,
            record_id=record_id,
            response=parse_response(_loads(response_json, None)) if response_json is not None else None,
            expected=_loads(expected_json, None),
            metrics=[],
        )
        rows[index] = (row, owner, ordinal)
    for index, name, evaluator, kind, flag, number, rationale in con.execute(
        "SELECT m.row_index, m.metric, m.evaluator_kind, m.kind, m.value_bool, m.value_number, "
        "m.rationale FROM evaluation_metric_values AS m "
        "JOIN evaluation_rows AS r USING (evaluation_key, row_index) "
        "WHERE m.evaluation_key = ? AND r.linked_run_id = ? ORDER BY m.row_index, m.ordinal",
        [key, run_id],
    ).fetchall():
        value: bool | float | None = flag if flag is not None else number
        rows[index][0].metrics.append(
            MetricValue(
                name=name, kind=kind, value=value, evaluator_kind=evaluator, rationale=rationale
            )
        )
    return list(rows.values())


def _summary(con: duckdb.DuckDBPyConnection, key: str) -> tuple[SummaryMetric, ...]:
    return tuple(
        SummaryMetric(
            name=name,
            group=group,
            operation_type=operation,
            source_metric=source,
            occurrence=occurrence,
            value=value,
        )
        for name, group, operation, source, occurrence, value in con.execute(
            "SELECT name, group_name, operation_type, source_metric, occurrence, value "
            "FROM evaluation_summary_metrics WHERE evaluation_key = ? ORDER BY ordinal",
            [key],
        ).fetchall()
    )


_ARTIFACTS = """
SELECT e.evaluation_key, e.file_name, e.line, e.sha256, e.evaluation_id, e.result_id,
       e.start_time, e.end_time, e.duration_ms, e.info_json, e.report_metadata_json,
       e.test_identifier, e.attachment_name, e.is_judge,
       e.source_run_sha256 IS NOT DISTINCT FROM $sha AS source_matches,
       count(*) AS row_count,
       count(*) FILTER (WHERE r.linked_run_id = $run) AS linked,
       count(*) FILTER (WHERE r.linked_run_id IS NULL) AS unlinked
FROM evaluations AS e
JOIN evaluation_rows AS r USING (evaluation_key)
WHERE e.evaluation_key IN (
    SELECT evaluation_key FROM evaluation_rows WHERE linked_run_id = $run
)
GROUP BY ALL
ORDER BY e.is_judge, source_matches DESC, e.file_name, e.line NULLS FIRST, e.evaluation_key
"""


def replay_for_run(con: duckdb.DuckDBPyConnection, run_id: str) -> RunReplay | None:
    """The Evaluations artifacts linked to ``run_id`` and how they agree with fmbench.

    ``None`` when the run is not in the database or no artifact row links to it.
    Agreement is checked on the deterministic artifacts only; a model judge's
    scores are shown apart and never compared.
    """
    run = con.execute("SELECT source_sha256 FROM runs WHERE run_id = ?", [run_id]).fetchone()
    if run is None:
        return None
    found = con.execute(_ARTIFACTS, {"run": run_id, "sha": run[0]}).fetchall()
    if not found:
        return None
    recomputed = _recomputed(con, run_id)
    artifacts: list[LinkedArtifact] = []
    agreements: list[TrialAgreement] = []
    disagreements: list[Disagreement] = []
    unlinked = 0
    for artifact_row in found:
        artifact, linked = _linked_artifact(con, run_id, artifact_row)
        artifacts.append(artifact)
        unlinked += artifact.unlinked_row_count
        if artifact.is_judge:
            continue
        agreed, differences = _row_agreements(artifact.evaluation_key, artifact.file_name, linked, recomputed)
        agreements.extend(agreed)
        disagreements.extend(differences)
    return RunReplay(
        run_id=run_id,
        artifacts=tuple(artifacts),
        agreements=tuple(agreements),
        disagreements=tuple(disagreements),
        unlinked_row_count=unlinked,
    )


def _linked_artifact(
    con: duckdb.DuckDBPyConnection, run_id: str, found: tuple[Any, ...]
) -> tuple[LinkedArtifact, list[tuple[Row, Owner, int]]]:
    """One artifact of :data:`_ARTIFACTS` as the run page shows it (its profiles and issues over the rows linked
    to ``run_id``), and those rows with the trial or failure each is linked to."""
    (
        key,
        file_name,
        line,
        sha256,
        evaluation_id,
        result_id,
        start_time,
        end_time,
        duration_ms,
        info_json,
        metadata_json,
        test_identifier,
        attachment_name,
        is_judge,
        source_matches,
        row_count,
        linked_count,
        unlinked_count,
    ) = found
    linked = _linked_rows(con, key, run_id)
    info = _loads(info_json, {})
    summary = _summary(con, key)
    evaluation = Evaluation(
        path=Path(file_name),
        sha256=sha256,
        evaluation_id=evaluation_id,
        result_id=result_id,
        start_time=start_time,
        end_time=end_time,
        duration_ms=duration_ms,
        info=info,
        report_metadata=_loads(metadata_json, {}),
        rows=[row for row, _, _ in linked],
        summary=list(summary),
        line=line,
        is_judge=is_judge,
    )
    artifact = LinkedArtifact(
        evaluation_key=key,
        file_name=file_name,
        line=line,
        sha256=sha256,
        evaluation_id=evaluation_id,
        result_id=result_id,
        start_time=start_time,
        end_time=end_time,
        duration_ms=duration_ms,
        info=info,
        test_identifier=test_identifier,
        attachment_name=attachment_name,
        is_judge=is_judge,
        source_matches_run=bool(source_matches),
        row_count=row_count,
        linked_row_count=linked_count,
        unlinked_row_count=unlinked_count,
        other_run_row_count=row_count - linked_count - unlinked_count,
        profiles=tuple(profile_metrics(evaluation)),
        issues=tuple(evaluation_issues(evaluation)),
        summary=summary,
    )
    return artifact, linked


def _row_agreements(
    key: str, file_name: str, linked: list[tuple[Row, Owner, int]], recomputed: dict[tuple[str, int], _Recomputed]
) -> tuple[list[TrialAgreement], list[Disagreement]]:
    """Each linked row's replay beside fmbench's recomputation of its trial or failure, and where they differ.

    A row whose trial or failure is no longer stored (the run changed under the link) is left out."""
    agreements: list[TrialAgreement] = []
    disagreements: list[Disagreement] = []
    for row, owner, ordinal in linked:
        mine = recomputed.get((owner, ordinal))
        if mine is None:  # the run changed under the link; relink fixes it
            continue
        agreement, differences = _compare_row(key, file_name, row, mine)
        agreements.append(agreement)
        disagreements.extend(differences)
    return agreements, disagreements
