"""Figures no real run can record: one check per figure of the run record.

A runner measures each trial with one clock and one model, so some figures bound
others: a decode is part of its request, a trial ends after it starts, a prompt
fits the context window it is measured against (utilization = input tokens /
context size), no answer is longer than the whole window, and every trial has an
id of its own. A file that breaks one of these was not written by a runner that
measured it (edited by hand, or written by faulty code): each broken bound is a
reason, naming the field (``trials[3].metrics.decodeDuration``), that makes the
run invalid as evidence (publishing rules §4), as an implausible clock does.

A clock step is not implausible: the run format says a step can turn a
duration, a TTFT or a stream gap negative, and such a trial is kept and flagged
(:func:`fmbench.runfile.record.clock_step_flags`). So the timing checks leave out
a trial whose own readings show the step (a negative duration or TTFT).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from fmbench.runfile.record import RunRecord, TrialRecord

DECODE_LEEWAY = 0.001
"""Seconds a decode may exceed its request's duration by: far above float rounding, far below any real request."""


@dataclass(frozen=True)
class Implausible:
    """One broken bound: its reason code and the sentence that names the field."""

    code: str
    message: str


def _first_and_count(trials: list[TrialRecord], broken: Callable[[TrialRecord], bool]) -> tuple[TrialRecord | None, int]:
    first, count = None, 0
    for t in trials:
        if broken(t):
            count += 1
            first = first or t
    return first, count


def _how_many(count: int, total: int) -> str:
    if count == total and total > 1:
        return f"every one of the {total:,} trials"
    return "1 trial" if count == 1 else f"{count:,} of {total:,} trials"


def _short(text: str, limit: int = 64) -> str:
    """An id from the file cut to ``limit`` characters: a message names it, and a file may hold any string."""
    return text if len(text) <= limit else text[:limit] + "…"


def _clock_stepped(t: TrialRecord) -> bool:
    m = t.metrics
    return m.duration < 0 or (m.timeToFirstToken is not None and m.timeToFirstToken < 0)


def _decode_longer(t: TrialRecord) -> bool:
    m = t.metrics
    return m.decodeDuration is not None and m.decodeDuration > m.duration + DECODE_LEEWAY and not _clock_stepped(t)


def _ends_before_start(t: TrialRecord) -> bool:
    m = t.metrics
    return m.startedAt is not None and m.endedAt is not None and m.endedAt < m.startedAt


def _over_full(t: TrialRecord) -> bool:
    u = t.metrics.contextUtilization
    return u is not None and u > 1


def _window(run: RunRecord, t: TrialRecord) -> tuple[int | None, str]:
    """The context window a trial ran in, and the field that records it (the trial's own first)."""
    if t.metrics.contextSize:
        return t.metrics.contextSize, f"trials[{t.ordinal}].metrics.contextSize"
    return run.model_context_size or None, "modelContextSize"  # a window of 0 tokens is no window: not recorded


def implausible_figures(run: RunRecord) -> list[Implausible]:
    """Every bound the run's figures break, one reason a figure (the first trial named, and how many)."""
    return list(_checks(run))


def _checks(run: RunRecord) -> Iterator[Implausible]:
    trials = run.trials
    total = len(trials)
    t, n = _first_and_count(trials, _decode_longer)
    if t is not None:
        m = t.metrics
        yield Implausible(
            "implausible-decode",
            f"trials[{t.ordinal}].metrics.decodeDuration is {m.decodeDuration:g} s, longer than the whole request "
            f"(trials[{t.ordinal}].metrics.duration {m.duration:g} s), in {_how_many(n, total)}: a decode is part "
            "of its request, so these timings were not measured.",
        )
    t, n = _first_and_count(trials, _ends_before_start)
    stepped = sum(1 for s in trials if _ends_before_start(s) and _clock_stepped(s))
    if t is not None and ((n == total and total > 1) or n > stepped):
        # A trial whose duration is negative too is a clock step (kept and flagged); one whose duration is not, or
        # a run whose every trial ends before it starts, contradicts itself.
        m = t.metrics
        assert m.startedAt is not None and m.endedAt is not None
        yield Implausible(
            "implausible-trial-clock",
            f"trials[{t.ordinal}].metrics.endedAt ({m.endedAt.isoformat()}) is before its startedAt "
            f"({m.startedAt.isoformat()}), in {_how_many(n, total)}: a trial ends after it starts, so these "
            "times were not measured.",
        )
    t, n = _first_and_count(trials, _over_full)
    if t is not None:
        u = t.metrics.contextUtilization
        assert u is not None
        yield Implausible(
            "implausible-context-use",
            f"trials[{t.ordinal}].metrics.contextUtilization is {u:,.1%} of the context window, in "
            f"{_how_many(n, total)}: the prompt must fit the window it is measured against, so at most 100%.",
        )
    over = []
    for s in trials:
        window, where = _window(run, s)
        if window is not None and s.metrics.outputTokenCount is not None and s.metrics.outputTokenCount > window:
            over.append((s, window, where))
    if over:
        t, window, where = over[0]
        yield Implausible(
            "implausible-output-tokens",
            f"trials[{t.ordinal}].metrics.outputTokenCount is {t.metrics.outputTokenCount:,} tokens, beyond the "
            f"{window:,}-token context window ({where}), in {_how_many(len(over), total)}: an answer is generated "
            "inside the window, so these counts were not measured.",
        )
    first: dict[str, int] = {}
    repeated: dict[str, int] = {}
    for s in trials:
        if s.id in first:
            repeated[s.id] = repeated.get(s.id, 1) + 1
        else:
            first[s.id] = s.ordinal
    if repeated:
        trial_id, times = max(repeated.items(), key=lambda item: (item[1], -first[item[0]]))
        others = f" ({len(repeated) - 1:,} other id(s) repeat too)" if len(repeated) > 1 else ""
        yield Implausible(
            "duplicate-trial-id",
            f"trials[{first[trial_id]}].id {_short(trial_id)!r} is the id of {times:,} trials{others}: every trial has an "
            "id of its own, so these are copies, not separate measurements.",
        )
