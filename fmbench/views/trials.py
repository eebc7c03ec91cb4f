"""A scenario's trials of one run, page by page, and which trial pages a run has."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import duckdb

from fmbench import urls
from fmbench.analysis import display as d
from fmbench.errors import NotFoundError
from fmbench.views.blocks import (
    Pager,
    Table,
)
from fmbench.views.common import (
    run_title,
)
from fmbench.views.filters import Filters
from fmbench.views.page import Page
from fmbench.views.run_page import failure_table
from fmbench.views.site import SiteContext
from fmbench.views.trial_details import ENVIRONMENT_LABELS, METRIC_LABELS, TrialDetail, run_trials


@dataclass(frozen=True)
class TrialMetricsTable:
    """One table per trials page: a row per trial (linked to and from its article), a column per metric.

    The rows are the page's trials themselves (their ``metrics`` and ``environment`` values); the labels are
    written once, in the header, instead of beside every value of every trial.
    """

    id: str
    caption: str
    metric_columns: tuple[str, ...]
    """The labels of :attr:`TrialDetail.metrics`, in its order (:data:`METRIC_LABELS`)."""
    environment_columns: tuple[str, ...]
    """The labels of :attr:`TrialDetail.environment`, in its order (:data:`ENVIRONMENT_LABELS`)."""


@dataclass(frozen=True)
class TrialsPage(Page):
    template: ClassVar[str] = "trials.html"
    nav_active: ClassVar[str] = "runs"
    run_id: str
    run_href: str
    scenario_id: str
    scenario_title: str
    trials: list[TrialDetail]
    failures: Table | None
    pager: Pager
    total: int
    first_ordinal: int
    """The number of the page's first trial among the scenario's trials (from 1): the page numbers its trials so."""
    shown: str
    """How many trials the scenario has and which of them the page shows, in words."""
    metrics_table: TrialMetricsTable | None = None
    """The page's trials' metrics and environment (``None`` when the page has no trial)."""
    extra: dict[str, Any] = field(default_factory=dict)


def trials_page(site: SiteContext, filters: Filters, run_id: str, scenario: str, page: int = 1) -> TrialsPage:
    """One page of a scenario's trials (from the run's :func:`run_trials`)."""
    url, paths = site.url, site.paths
    bundle = run_trials(site, run_id)
    run = bundle.run
    scenario_id, own_title, total = bundle.scenario_at(paths, scenario)
    title = site.scenario_title(scenario_id, own_title)
    pages = max(1, math.ceil(total / urls.TRIALS_PER_PAGE))
    if page < 1 or page > pages:
        raise NotFoundError(f"no page {page} of trials for {scenario_id} (there are {pages})")
    offset = (page - 1) * urls.TRIALS_PER_PAGE
    details = bundle.details.get(scenario_id, [])[offset : offset + urls.TRIALS_PER_PAGE]
    failures = bundle.failures.get(scenario_id, [])
    return TrialsPage(
        title=f"{title}: trials of {run_title(run)}",
        run_id=run_id,
        run_href=url(urls.run(run_id)),
        scenario_id=scenario_id,
        scenario_title=title,
        trials=details,
        failures=failure_table(failures, "scenario-failures", "Measured failures of this scenario", "")
        if failures and page == 1
        else None,
        pager=Pager(
            page,
            pages,
            url(paths.trials(run_id, scenario_id, page - 1)) if page > 1 else None,
            url(paths.trials(run_id, scenario_id, page + 1)) if page < pages else None,
        ),
        total=total,
        first_ordinal=offset + 1,
        shown=shown_text(total, offset + 1, offset + len(details)),
        metrics_table=_metrics_table(scenario_id, title, details),
    )


def shown_text(total: int, first: int, last: int) -> str:
    """``12 trials in this scenario; this page shows trials 1–10.`` (numbered in the scenario's own order)."""
    if total == 0:
        return "No trial in this scenario: every measured request of it failed (see its failures)."
    if total == 1:
        return "1 trial in this scenario."
    if first == 1 and last == total:
        return f"{d.plural(total, 'trial')} in this scenario, numbered 1–{total:,} in the order they ran."
    only = f"trial {first:,}" if first == last else f"trials {first:,}–{last:,}"
    return f"{d.plural(total, 'trial')} in this scenario, numbered in the order they ran; this page shows {only}."


def _metrics_table(scenario_id: str, title: str, details: list[TrialDetail]) -> TrialMetricsTable | None:
    """The header of a trials page's metrics table: every trial has the same metrics and environment labels."""
    if not details:
        return None
    return TrialMetricsTable(
        id=f"trial-metrics-{urls.slug(scenario_id)}",
        caption=f"Metrics and environment of each trial: {title}",
        metric_columns=METRIC_LABELS,
        environment_columns=ENVIRONMENT_LABELS,
    )


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


def trial_pages(
    con: duckdb.DuckDBPyConnection, run_id: str, paths: urls.SitePaths | None = None
) -> list[tuple[str, int]]:
    """Every (scenario path segment, page number) of a run's trial pages (``paths``: the site's, else read)."""
    paths = paths if paths is not None else urls.SitePaths.read(con)
    out = []
    for sid, n in con.execute(
        "SELECT scenario_id, trial_count FROM scenario_figures WHERE run_id = ? ORDER BY ordinal", [run_id]
    ).fetchall():
        out += _scenario_pages(paths.scenarios.of(sid), n)
    return out


def every_trial_page(con: duckdb.DuckDBPyConnection, paths: urls.SitePaths) -> list[tuple[str, str, int]]:
    """Every (run id, scenario path segment, page number) of every run's trial pages, by run id: one query for the
    site."""
    return [
        (run_id, segment, page)
        for run_id, sid, n in con.execute(
            "SELECT run_id, scenario_id, trial_count FROM scenario_figures ORDER BY run_id, ordinal"
        ).fetchall()
        for segment, page in _scenario_pages(paths.scenarios.of(sid), n)
    ]


def _scenario_pages(segment: str, trials: int) -> list[tuple[str, int]]:
    pages = max(1, math.ceil(trials / urls.TRIALS_PER_PAGE))
    return [(segment, p) for p in range(1, pages + 1)]
