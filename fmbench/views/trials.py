"""A scenario's trials of one run: one page per run and scenario, and which trial pages a run has.

The page's HTML holds what a reader lands on first: how many trials passed and failed, the measured failures
counted by kind and listed, and the failing trials with their checks. Every trial's detail (prompt, response,
checks, tool calls, final state, metrics) is held once in the site, in the scenario's gzipped trial data
(:func:`fmbench.views.data.trials_json`), which ``site/assets/trials.js`` lays out in the reader's browser, a
page of trials at a time.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, ClassVar

import duckdb

from fmbench import urls
from fmbench.analysis import display as d
from fmbench.analysis.os_builds import build_sort_key, in_version_order
from fmbench.comparison.evidence import configuration_of
from fmbench.errors import NotFoundError
from fmbench.runfile import vocabulary as vocab
from fmbench.views.blocks import Cell, Column, Row, Table
from fmbench.views.common import run_title
from fmbench.views.filters import Filters
from fmbench.views.page import Page
from fmbench.views.site import SiteContext
from fmbench.views.trial_details import CheckDetail, TrialDetail, run_trials

FAILING_SHOWN = 50
"""At most this many failing trials are linked in a trials page's HTML (their samples' groups say how many more);
the rest are in its trial list (the data), which the reader can filter to failed trials."""
SAMPLES_SHOWN = 50
"""At most this many failing samples are listed in a trials page's HTML."""
RESPONSE_SHOWN = 1_000
"""A failing sample's response is shown up to this many characters (the trial list holds it whole)."""


@dataclass(frozen=True)
class FailingTrial:
    """A trial whose task failed, as the page lists it: its number in the scenario and the checks it failed (its
    passed checks are counted; the trial list shows them)."""

    number: int
    """Its place among the scenario's trials, from 1 (the order they ran), as the trial list numbers it."""
    ordinal: int
    sample_id: str
    iteration: int
    checks: list[CheckDetail]
    """The checks it failed."""
    passed: int
    """How many of its checks passed."""


@dataclass(frozen=True)
class FailingSample:
    """A sample with failing trials, as the page groups them: how many of its trials failed, the checks they
    failed, one response, and its failing trials."""

    sample_id: str
    failed: int
    trials: int
    """Its trials in this scenario of the run."""
    checks: list[tuple[str, int]]
    """``(check, failing trials)`` of the checks its trials failed, most first."""
    response: str | None
    """The response of its first failing trial (cut to :data:`RESPONSE_SHOWN` characters; ``None``: none)."""
    response_trial: int
    """That trial's number."""
    failing: list[FailingTrial]
    """Its failing trials linked (the page links :data:`FAILING_SHOWN` in all)."""
    more: int
    """Its failing trials not linked."""
    before: tuple[int, int] | None = None
    """``(failed, trials)`` of this sample on the previous OS build (the device's evidence of the run's configuration
    there); ``None``: no previous build measured it."""

    @property
    def changed(self) -> bool:
        """Its share of failing trials differs from the previous build's (a sample that passed every trial there
        and fails here, say)."""
        return self.before is not None and self.before[0] * self.trials != self.failed * self.before[1]


@dataclass(frozen=True)
class TrialsPage(Page):
    template: ClassVar[str] = "trials.html"
    nav_active: ClassVar[str] = "runs"
    run_id: str
    run_href: str
    scenario_id: str
    scenario_title: str
    total: int
    shown: str
    """How many trials the scenario has and how they are numbered (in the order they ran), in words: the trial
    list (trials.js) says which of them it shows ("Trials 1–50 of 1,000")."""
    summary: str
    """How many of them passed and failed, and the scenario's measured failures, in words."""
    failures_by_kind: list[tuple[str, int]]
    """``(kind, failures)`` of the scenario's measured failures, most first."""
    failures: Table | None
    """The measured failures grouped by kind and message (a run repeats a failure's message many times; each one
    is in the run page's failures table and in the trial data)."""
    failing_samples: list[FailingSample]
    """The samples with failing trials: those whose outcome changed against the previous OS build first, then those
    that failed every trial, then by how many failed."""
    previous_build: str | None
    """The OS build the samples are set against (the device's previous build measured with the run's
    configuration); ``None``: none."""
    samples_more: int
    """Samples with failing trials not listed (past :data:`SAMPLES_SHOWN`): the trial list shows them."""
    data_href: str
    """The scenario's trials as gzipped JSON: what ``trials.js`` lays out, and the fallback without scripts."""
    per_page: int = urls.TRIALS_PER_PAGE
    extra: dict[str, Any] = field(default_factory=dict)


def trials_page(site: SiteContext, filters: Filters, run_id: str, scenario: str) -> TrialsPage:
    """A scenario's trials: the summary and failing trials here, every trial's detail from its data file."""
    url, paths = site.url, site.paths
    bundle = run_trials(site, run_id)
    scenario_id, own_title, total = bundle.scenario_at(paths, scenario)
    title = site.scenario_title(scenario_id, own_title)
    details = bundle.details.get(scenario_id, [])
    failures = bundle.failures.get(scenario_id, [])
    failing = _failing(details)
    previous = _previous_build(site, run_id)
    before = _outcomes(site, previous[1], scenario_id) if previous else {}
    samples = _failing_samples(details, failing, before)
    kinds = Counter(vocab.label("failureKind", f["kind"]) or "kind not recorded" for f in failures)
    return TrialsPage(
        title=f"{title}: trials of {run_title(bundle.run)}",
        run_id=run_id,
        run_href=url(urls.run(run_id)),
        scenario_id=scenario_id,
        scenario_title=title,
        total=total,
        shown=shown_text(total, 1, total),
        summary=summary_text(total, len(failing), len(failures)),
        failures_by_kind=sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0])),
        failures=_failure_groups(failures) if failures else None,
        failing_samples=samples[:SAMPLES_SHOWN],
        previous_build=previous[0] if previous else None,
        samples_more=max(0, len(samples) - SAMPLES_SHOWN),
        data_href=url(paths.data_trials_json(run_id, scenario_id)),
    )


def _failure_groups(failures: list[dict[str, Any]]) -> Table:
    """One row per kind and message of the scenario's measured failures: how many, and on which samples."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for f in failures:
        kind = vocab.label("failureKind", f["kind"]) or "kind not recorded"
        groups.setdefault((kind, f["message"] or ""), []).append(f)
    ordered = sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    return Table(
        "scenario-failures",
        "Measured failures of this scenario, by kind and message",
        [Column("kind", "Kind"), Column("message", "Message"), Column("count", "Failures", True),
         Column("samples", "Samples")],
        [
            Row([kind, Cell(message or None, reason="no message recorded"), f"{len(found):,}",
                 Cell(", ".join(sorted({f["sample_id"] for f in found if f["sample_id"]})) or None,
                      reason="the legacy format records no sample for a failure")])
            for (kind, message), found in ordered
        ],
        "",
    )


def _failing(details: list[TrialDetail]) -> list[FailingTrial]:
    return [
        FailingTrial(n, t.ordinal, t.sample_id, t.iteration, [c for c in t.checks if not c.passed],
                     sum(1 for c in t.checks if c.passed))
        for n, t in enumerate(details, start=1)
        if t.verdict == "task failed"
    ]


def _previous_build(site: SiteContext, run_id: str) -> tuple[str, tuple[str, ...]] | None:
    """The OS build before the run's, in version order, on which its device was measured with its configuration,
    and the runs that stand for it there (:meth:`SiteContext.evidence`); ``None``: no such build."""
    run = next((r for r in site.run_catalog().runs if r.run_id == run_id), None)
    if run is None or run.hardware_model is None or run.os_build is None:
        return None
    evidence = site.evidence()
    configuration = configuration_of(run)
    earlier = [b for b in in_version_order(evidence.builds(run.hardware_model))
               if b is not None and build_sort_key(b) < build_sort_key(run.os_build)]
    for build in reversed(earlier):
        found = evidence.cell(run.hardware_model, build, configuration)
        if found is not None:
            return build, found.run_ids
    return None


def _outcomes(site: SiteContext, run_ids: tuple[str, ...], scenario_id: str) -> dict[str, tuple[int, int]]:
    """Per sample of the scenario, ``(failed, trials)`` over the runs' trials."""
    if not run_ids:
        return {}
    marks = ", ".join("?" for _ in run_ids)
    found = site.con.execute(
        f"SELECT sample_id, count(*) FILTER (WHERE NOT task_passed), count(*) FROM trials "
        f"WHERE run_id IN ({marks}) AND scenario_id = ? GROUP BY sample_id",
        [*run_ids, scenario_id],
    ).fetchall()
    return {sample: (int(failed), int(total)) for sample, failed, total in found}


def _failing_samples(
    details: list[TrialDetail], failing: list[FailingTrial], before: dict[str, tuple[int, int]] | None = None,
) -> list[FailingSample]:
    """The failing trials grouped by sample: the samples whose outcome changed against the previous build
    (``before``: each sample's failed and measured trials there) first, then those that failed every trial, then
    the most failing trials, then by id; the first :data:`FAILING_SHOWN` trials of that order are linked."""
    before = before or {}
    trials = Counter(t.sample_id for t in details)
    by_sample: dict[str, list[FailingTrial]] = {}
    for t in failing:
        by_sample.setdefault(t.sample_id, []).append(t)
    response = {t.ordinal: t.response for t in details}
    def changed(s: str) -> bool:
        was = before.get(s)
        return was is not None and was[0] * trials[s] != len(by_sample[s]) * was[1]

    order = sorted(by_sample, key=lambda s: (not changed(s), -len(by_sample[s]) / trials[s], -len(by_sample[s]), s))
    out: list[FailingSample] = []
    budget = FAILING_SHOWN
    for sample in order:
        its = by_sample[sample]
        checks = Counter(c.label for t in its for c in t.checks)
        first = its[0]
        text = response.get(first.ordinal)
        if text is not None and len(text) > RESPONSE_SHOWN:
            text = text[:RESPONSE_SHOWN].rstrip() + "…"
        linked = its[:budget]
        budget -= len(linked)
        out.append(FailingSample(
            sample, len(its), trials[sample], sorted(checks.items(), key=lambda kv: (-kv[1], kv[0])), text,
            first.number, linked, len(its) - len(linked), before.get(sample),
        ))
    return out


def shown_text(total: int, first: int, last: int) -> str:
    """``12 trials in this scenario, numbered 1–12 in the order they ran.`` (``first``–``last``: the trials shown,
    named when they are not all of them)."""
    if total == 0:
        return "No trial in this scenario: every measured request of it failed (see its failures)."
    if total == 1:
        return "1 trial in this scenario."
    if first == 1 and last == total:
        return f"{d.plural(total, 'trial')} in this scenario, numbered 1–{total:,} in the order they ran."
    only = f"trial {first:,}" if first == last else f"trials {first:,}–{last:,}"
    return f"{d.plural(total, 'trial')} in this scenario, numbered in the order they ran; this page shows {only}."


def summary_text(total: int, failed: int, failures: int) -> str:
    """``870 passed, 130 failed; 4 measured failures (requests that returned no response).``"""
    failed_requests = (
        f"{d.plural(failures, 'measured failure')} (requests that returned no response)" if failures else ""
    )
    if total == 0:
        return f"{failed_requests}." if failures else ""
    passed = f"{total - failed:,} passed, {failed:,} failed"
    return f"{passed}; {failed_requests}." if failures else f"{passed}."


def scenario_at(site: SiteContext, run_id: str, segment: str) -> tuple[str, str, int]:
    """``(scenario id, title, trials)`` of the run's scenario at a path segment of the site."""
    scenario_id = site.paths.scenarios.name(segment)
    found = site.con.execute(
        "SELECT scenario_id, title, trial_count FROM scenario_figures WHERE run_id = ? AND scenario_id = ?",
        [run_id, scenario_id],
    ).fetchone() if scenario_id is not None else None
    if found is None:
        raise NotFoundError(f"run {run_id} has no scenario {segment!r}")
    return found[0], found[1], found[2]


def trial_pages(con: duckdb.DuckDBPyConnection, run_id: str, paths: urls.SitePaths | None = None) -> list[str]:
    """The scenario path segment of each of a run's trials pages (one a scenario; ``paths``: the site's, else
    read)."""
    paths = paths if paths is not None else urls.SitePaths.read(con)
    return [
        paths.scenarios.of(sid)
        for (sid,) in con.execute(
            "SELECT scenario_id FROM scenario_figures WHERE run_id = ? ORDER BY ordinal", [run_id]
        ).fetchall()
    ]
