"""Samples whose outcome changed between a comparison's two sides.

Every sample both sides attempted is tested on its own passed and failed trials
(:mod:`fmbench.analysis.sample_tests`: Fisher's exact test, two-sided, then Holm's correction for the number of
samples tested, at the comparison's confidence). A sample's trials are its attempts as task success counts them: its
task-passed trials pass; its other trials and its measured attempts that failed (a request with no response) fail.
The samples whose change is beyond chance are listed newly failing first, then newly passing, each by the size of
its change in pass rate; each with the checks that failed on each side and one response from each side: on the side
that passed more, its first passing trial's; on the other, its first failing trial's (the runs in run-id order, a
run's trials in its file's order).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import duckdb

from fmbench.analysis import sample_tests
from fmbench.comparison.selection import Side

Direction = Literal["newly failing", "newly passing"]


@dataclass(frozen=True)
class FailingCheck:
    label: str
    failed: int
    """How many of the side's trials of the sample failed this check."""

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "failed": self.failed}


@dataclass(frozen=True)
class SampleSide:
    """One side's trials of one sample."""

    passed: int
    trials: int
    """Attempts: completed trials and measured attempts that failed (which count as failed, as in task success)."""
    failed_requests: int
    failing_checks: tuple[FailingCheck, ...]
    response: str | None
    """One trial's response (see the module); ``None`` when the side has no trial of the outcome shown (every
    failed attempt was a failed request)."""
    response_passed: bool | None
    """Whether the trial whose response is shown passed."""
    response_run: str | None

    @property
    def rate(self) -> float:
        return self.passed / self.trials if self.trials else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "trials": self.trials,
            "pass_rate": self.rate,
            "failed_requests": self.failed_requests,
            "failing_checks": [c.to_json() for c in self.failing_checks],
            "response": self.response,
            "response_passed": self.response_passed,
            "response_run": self.response_run,
        }


@dataclass(frozen=True)
class SampleChange:
    scenario_id: str
    title: str
    sample_id: str
    direction: Direction
    change: float
    """candidate − baseline pass rate (negative: newly failing)."""
    p_value: float
    """Fisher's exact two-sided p-value of the sample's table."""
    adjusted_p_value: float
    """Holm-adjusted over the samples tested."""
    baseline: SampleSide
    candidate: SampleSide

    def to_json(self) -> dict[str, Any]:
        return {
            "scenario_id": self.scenario_id,
            "title": self.title,
            "sample_id": self.sample_id,
            "direction": self.direction,
            "change": self.change,
            "p_value": self.p_value,
            "adjusted_p_value": self.adjusted_p_value,
            "baseline": self.baseline.to_json(),
            "candidate": self.candidate.to_json(),
        }


@dataclass(frozen=True)
class SampleChanges:
    tested: int
    """Samples attempted on both sides: the number Holm's correction is for."""
    confidence: float
    """Family-wise over the samples tested."""
    changes: tuple[SampleChange, ...]

    @property
    def method(self) -> str:
        return f"{sample_tests.FISHER_METHOD}; {sample_tests.HOLM_METHOD}"

    def to_json(self) -> dict[str, Any]:
        return {
            "tested": self.tested,
            "confidence": self.confidence,
            "method": self.method,
            "changes": [c.to_json() for c in self.changes],
        }


_Key = tuple[str, str]


def _marks(values: Sequence[Any]) -> str:
    return ", ".join("?" for _ in values)


def _counts(con: duckdb.DuckDBPyConnection, side: Side) -> dict[_Key, tuple[int, int, int]]:
    """(passed, attempts, failed requests) per (scenario, sample) of a side."""
    ids = list(side.run_ids)
    if not ids:
        return {}
    out: dict[_Key, tuple[int, int, int]] = {}
    for sid, sample, passed, trials in con.execute(
        f"SELECT scenario_id, sample_id, count_if(task_passed), count(*) FROM trials WHERE run_id IN ({_marks(ids)}) "
        "GROUP BY scenario_id, sample_id",
        ids,
    ).fetchall():
        out[(sid, sample)] = (int(passed), int(trials), 0)
    for sid, sample, failed in con.execute(
        f"SELECT scenario_id, sample_id, count(*) FROM failures WHERE run_id IN ({_marks(ids)}) AND NOT is_warmup "
        "AND sample_id IS NOT NULL GROUP BY scenario_id, sample_id",
        ids,
    ).fetchall():
        passed, trials, _ = out.get((sid, sample), (0, 0, 0))
        out[(sid, sample)] = (passed, trials + int(failed), int(failed))
    return out


def _which(keys: Sequence[_Key]) -> tuple[str, list[str]]:
    """A condition on ``t.scenario_id`` and ``t.sample_id`` matching ``keys``, with its bound parameters."""
    return " OR ".join("(t.scenario_id = ? AND t.sample_id = ?)" for _ in keys), [x for k in keys for x in k]


def _details(
    con: duckdb.DuckDBPyConnection, side: Side, keys: Sequence[_Key]
) -> tuple[dict[_Key, list[FailingCheck]], dict[tuple[str, str, bool], tuple[str, str]]]:
    """For the samples ``keys`` of a side: the checks that failed (with how many trials each), and per outcome
    (passed or not) its first trial's response and run."""
    ids = list(side.run_ids)
    if not ids or not keys:
        return {}, {}
    which, params = _which(keys)
    checks: dict[_Key, list[FailingCheck]] = {}
    for sid, sample, label, failed in con.execute(
        "SELECT t.scenario_id, t.sample_id, c.label, count(DISTINCT (t.run_id, t.ordinal)) FROM check_results c "
        "JOIN trials t ON t.run_id = c.run_id AND t.ordinal = c.trial_ordinal "
        f"WHERE t.run_id IN ({_marks(ids)}) AND NOT c.passed AND ({which}) "
        "GROUP BY t.scenario_id, t.sample_id, c.label ORDER BY t.scenario_id, t.sample_id, 4 DESC, c.label",
        [*ids, *params],
    ).fetchall():
        checks.setdefault((sid, sample), []).append(FailingCheck(label, int(failed)))
    responses: dict[tuple[str, str, bool], tuple[str, str]] = {}
    for sid, sample, passed, response, run_id in con.execute(
        "SELECT t.scenario_id, t.sample_id, t.task_passed, t.response, t.run_id FROM trials t "
        f"WHERE t.run_id IN ({_marks(ids)}) AND ({which}) "
        "QUALIFY row_number() OVER (PARTITION BY t.scenario_id, t.sample_id, t.task_passed "
        "ORDER BY t.run_id, t.ordinal) = 1",
        [*ids, *params],
    ).fetchall():
        responses[(sid, sample, bool(passed))] = (response, run_id)
    return checks, responses


def sample_changes(
    con: duckdb.DuckDBPyConnection,
    baseline: Side,
    candidate: Side,
    scenarios: Sequence[tuple[str, str]],
    confidence: float,
) -> SampleChanges:
    """The samples of ``scenarios`` (``(scenario id, title)``, in the comparison's order) whose pass rate changed
    beyond chance between ``baseline`` and ``candidate``, at family-wise ``confidence`` over the samples tested."""
    counts_b, counts_c = _counts(con, baseline), _counts(con, candidate)
    rank = {sid: i for i, (sid, _title) in enumerate(scenarios)}
    titles = dict(scenarios)
    tested = sorted(
        (k for k in counts_b.keys() & counts_c.keys() if k[0] in rank and counts_b[k][1] and counts_c[k][1]),
        key=lambda k: (rank[k[0]], k[1]),
    )
    p_values = []
    for k in tested:
        (pb, nb, _), (pc, nc, _) = counts_b[k], counts_c[k]
        p_values.append(sample_tests.fisher_exact(pb, nb - pb, pc, nc - pc))
    found = sample_tests.holm(p_values, 1 - confidence) if tested else sample_tests.HolmResult((), ())
    flagged = [(k, p, adj) for k, p, adj, hit in zip(tested, p_values, found.adjusted, found.rejected, strict=True)
               if hit]
    keys = [k for k, _p, _adj in flagged]
    checks_b, responses_b = _details(con, baseline, keys)
    checks_c, responses_c = _details(con, candidate, keys)

    def side(k: _Key, counts: dict[_Key, tuple[int, int, int]], checks: dict[_Key, list[FailingCheck]],
             responses: dict[tuple[str, str, bool], tuple[str, str]], better: bool) -> SampleSide:
        passed, trials, failed = counts[k]
        shown = responses.get((*k, better))
        return SampleSide(passed, trials, failed, tuple(checks.get(k, ())),
                          None if shown is None else shown[0], None if shown is None else better,
                          None if shown is None else shown[1])

    changes = []
    for k, p, adj in flagged:
        (pb, nb, _), (pc, nc, _) = counts_b[k], counts_c[k]
        change = pc / nc - pb / nb
        failing = change < 0
        changes.append(
            SampleChange(
                scenario_id=k[0], title=titles[k[0]], sample_id=k[1],
                direction="newly failing" if failing else "newly passing", change=change,
                p_value=float(p), adjusted_p_value=adj,
                baseline=side(k, counts_b, checks_b, responses_b, better=failing),
                candidate=side(k, counts_c, checks_c, responses_c, better=not failing),
            )
        )
    changes.sort(key=lambda x: (x.direction != "newly failing", -abs(x.change), rank[x.scenario_id], x.sample_id))
    return SampleChanges(tested=len(tested), confidence=confidence, changes=tuple(changes))


@dataclass(frozen=True)
class SampleHeadline:
    """Samples of one workload whose outcome changed the same way, as a headline names them."""

    scenario_id: str
    title: str
    outcome: str
    """``now fail every trial``, ``fail more often``, ``now pass every trial`` or ``pass more often``."""
    samples: int
    size: float
    """The sum of their changes in pass rate, unsigned: what orders the headline (biggest first)."""

    @property
    def worse(self) -> bool:
        return "fail" in self.outcome

    def text(self, label: str | None = None) -> str:
        where = f"{self.title} ({label})" if label else self.title
        noun = "sample" if self.samples == 1 else "samples"
        verb = self.outcome if self.samples != 1 else {
            "now fail every trial": "now fails every trial", "fail more often": "fails more often",
            "now pass every trial": "now passes every trial", "pass more often": "passes more often",
        }[self.outcome]
        return f"{self.samples} {noun} of {where} {verb}"


def headline_groups(found: SampleChanges | None) -> list[SampleHeadline]:
    """The samples whose outcome changed, grouped by workload and how (every trial now failing, or passing, apart
    from a change in how often), the biggest group first."""
    if found is None:
        return []
    groups: dict[tuple[str, str, str], list[SampleChange]] = {}
    for c in found.changes:
        if c.direction == "newly failing":
            outcome = "now fail every trial" if c.candidate.passed == 0 else "fail more often"
        else:
            outcome = "now pass every trial" if c.candidate.passed == c.candidate.trials else "pass more often"
        groups.setdefault((c.scenario_id, c.title, outcome), []).append(c)
    out = [SampleHeadline(sid, title, outcome, len(cs), sum(abs(c.change) for c in cs))
           for (sid, title, outcome), cs in groups.items()]
    return sorted(out, key=lambda g: (-g.size, g.title, g.outcome))
