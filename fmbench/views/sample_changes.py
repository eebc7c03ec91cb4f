"""A comparison section's samples whose outcome changed, and what its figures could not tell: the context of
``templates/_sample_changes.html``, under the section's verdicts."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from fmbench import urls
from fmbench.analysis import detectable
from fmbench.analysis import figure_catalog as fc
from fmbench.comparison import text as comparison_text
from fmbench.comparison.results import Comparison
from fmbench.comparison.sample_changes import SampleChange, SampleSide
from fmbench.views.blocks import Column, Row, Table


@dataclass(frozen=True)
class SampleSideView:
    """One side of a changed sample, as the page shows it."""

    name: str
    """``Baseline`` or ``Candidate`` (the section's own names for its sides)."""
    passed: str
    """``20/20 passed``."""
    checks: list[str]
    """The checks that failed, each with how many trials it failed (empty: none failed)."""
    response: str | None
    """One response (untrusted text, escaped where it is printed); ``None``: the side has no such trial."""
    response_label: str
    """What the response is: a passing or a failing trial's."""
    run: str | None
    """The run the response is from, and its page."""
    run_href: str | None


@dataclass(frozen=True)
class SampleChangeView:
    direction: str
    """``newly failing`` or ``newly passing``."""
    tone: str
    workload: str
    scenario_id: str
    sample_id: str
    change: str
    """The change in pass rate, in points."""
    adjusted_p: str
    sides: list[SampleSideView]


@dataclass(frozen=True)
class SampleChangesBlock:
    """What the partial lays out: the samples that changed, how many were tested, and the inconclusive figures
    the runs were too few to tell, with what would narrow them."""

    id: str
    summary: str
    changes: list[SampleChangeView]
    empty_text: str
    too_few: list[str]
    """"Workload, figure: too few to tell …" per figure that says so."""
    detectable: Table
    """Every compared figure's smallest detectable change beside its practical threshold."""


def _detectable_table(cmp: Comparison, key: str) -> Table:
    rows = []
    for s in cmp.scenarios:
        for f in s.figures:
            text = detectable.detectable_text(f.unit, f.smallest_detectable_change)
            if text is None:
                continue
            rows.append(Row([s.title, f.label, text, cmp.tolerance.describe(f.unit),
                             "inconclusive (too few to tell)" if f.too_few_to_tell else f.verdict]))
    return Table(
        f"detectable-{key}",
        "The smallest change each compared figure could detect (the true change its interval would tell from none "
        "80% of the time at this comparison's confidence)",
        [Column("scenario", "Scenario"), Column("figure", "Figure"),
         Column("detectable", "Smallest detectable", True,
                "The true change detected 80% of the time at this comparison's confidence; a smaller change may go "
                "unseen"),
         Column("threshold", "Practical threshold", True), Column("verdict", "Verdict")],
        rows,
        "No figure was tested.",
    )


def _side(name: str, side: SampleSide, url: Callable[[str], str]) -> SampleSideView:
    checks = [f"{c.label}: failed {c.failed} of {side.trials}" for c in side.failing_checks]
    if side.failed_requests:
        checks.append(f"{side.failed_requests} of {side.trials} request(s) failed with no response")
    if side.response is None:
        label = "No trial to show: every failed attempt was a request that failed"
    else:
        label = f"A {'passing' if side.response_passed else 'failing'} trial's response"
    run = side.response_run
    return SampleSideView(name, comparison_text.passed_text(side), checks, side.response, label, run,
                          None if run is None else url(urls.run(run)))


def _change(x: SampleChange, names: tuple[str, str], url: Callable[[str], str]) -> SampleChangeView:
    return SampleChangeView(
        direction=x.direction,
        tone="worse" if x.direction == "newly failing" else "better",
        workload=x.title,
        scenario_id=x.scenario_id,
        sample_id=x.sample_id,
        change=f"{fc.signed(x.change * 100, '+.0f')} points",
        adjusted_p=f"{x.adjusted_p_value:.2g}",
        sides=[_side(names[0], x.baseline, url), _side(names[1], x.candidate, url)],
    )


def sample_changes_block(
    cmp: Comparison, key: str, url: Callable[[str], str], names: tuple[str, str] = ("Baseline", "Candidate")
) -> SampleChangesBlock:
    """``key``: the section's, which keeps the block's id apart from the page's other sections'; ``url``: the
    site's (a path to its address)."""
    found = cmp.sample_changes
    return SampleChangesBlock(
        id=f"samples-{key}",
        summary=comparison_text.sample_changes_summary(cmp),
        changes=[_change(x, names, url) for x in (found.changes if found else ())],
        empty_text="No sample's outcome changed beyond chance.",
        too_few=[f"{s.title}, {f.label}: {f.too_few_to_tell}" for s in cmp.scenarios for f in s.figures
                 if f.too_few_to_tell],
        detectable=_detectable_table(cmp, key),
    )
