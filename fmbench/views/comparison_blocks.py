"""The parts of a comparison page section that the OS-build comparisons and the device comparisons share: the
configuration a run is compared within, the side that selects it, and a comparison's figure table and charts."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar

import duckdb

from fmbench.analysis import display as d
from fmbench.analysis import figure_catalog as fc
from fmbench.comparison.results import Comparison
from fmbench.comparison.rules import ComparisonRefused
from fmbench.comparison.text import verdict_sentence
from fmbench.views import charts
from fmbench.views.blocks import Cell, Chart, Column, Row, Table
from fmbench.views.common import run_link
from fmbench.views.sample_changes import SampleChangesBlock, sample_changes_block
from fmbench.views.site import SiteContext

J = TypeVar("J")
R = TypeVar("R")


def each_section(
    site: SiteContext, work: Callable[[duckdb.DuckDBPyConnection, J], R], jobs: Sequence[J]
) -> list[R]:
    """``work(con, job)`` of every section of a comparison page, in order.

    Each section's comparison is mostly resampling (numpy, which lets go of the GIL), so the sections are worked
    out on a thread per core, each reading with a cursor of its own: in ``serve``, and in a static build's own
    process, which works out every comparison while its workers render the runs (and is the last to finish). A
    build's worker process works one section after the other: its siblings have the other cores.
    """
    threads = min(len(jobs), os.cpu_count() or 1)
    if threads < 2 or (site.renderer.mode != "serve" and multiprocessing.parent_process() is not None):
        return [work(site.con, job) for job in jobs]

    site.run_catalog()  # read here, once, for the threads to share
    site.scenario_title("")  # the workloads' one names too (SiteContext.once would make the threads wait for them)
    # Each job's cursor is made here, before the threads start: a connection serves one call at a time.
    cursors = [site.con.cursor() for _ in jobs]
    try:
        with ThreadPoolExecutor(max_workers=threads) as pool:
            return list(pool.map(work, cursors, jobs))
    finally:
        for cursor in cursors:
            cursor.close()

def _fmt(unit: str) -> Any:
    return {
        "rate": d.percent,
        "score": d.percent,
        "seconds": d.seconds,
        "tokens/s": d.rate,
        "bytes": d.mebibytes,
    }.get(unit, lambda v: None if v is None else f"{v:g}")


def delta_format(unit: str) -> Any:
    if unit in ("rate", "score"):
        return lambda v: None if v is None else f"{fc.signed(v * 100, '+.1f')} pts"
    if unit == "seconds":
        return lambda v: None if v is None else f"{fc.signed(v, '+.3f')} s"
    if unit == "bytes":
        return lambda v: None if v is None else f"{fc.signed(v / 2**20, '+,.0f')} MiB"
    return lambda v: None if v is None else fc.signed(v, "+.2f")


_UNTESTED = {"not tested": "not tested", "too few trials": "not tested", "not comparable": "not compared"}
"""What an interval cell says where nothing was tested (never "not recorded": the values may be there)."""
VERDICT_TONE = {"better": "better", "worse": "worse", "within tolerance": "nochange", "inconclusive": "neutral"}
"""An inconclusive figure is never drawn as unchanged: only an interval inside the threshold is."""


def relative_text(v: float | None) -> str | None:
    return None if v is None else f"{fc.signed(v * 100, '+.1f')}%"


def _absent(text: str) -> str | None:
    """A side's missing value: ``None`` (shown as not recorded) unless it is something else, such as
    no measured trial."""
    return None if text == d.NOT_RECORDED else text


def figure_table(cmp: Comparison, table_id: str, heading: str) -> Table:
    """``heading``: the configuration, which names the table apart from the page's other sections' tables."""
    columns = [
        Column("scenario", "Scenario"),
        Column("figure", "Figure"),
        Column("better", "Better is", help="The direction that counts as an improvement, stated per figure"),
        Column("baseline", "Baseline", True),
        Column("candidate", "Candidate", True),
        Column("delta", "Delta", True, "candidate − baseline"),
        Column("relative", "Relative", True),
        Column("interval", "Interval", True),
        Column("verdict", "Verdict"),
    ]
    out = []
    for s in cmp.scenarios:
        for f in s.figures:
            fmt, dfmt = _fmt(f.unit), delta_format(f.unit)
            interval = f"{dfmt(f.interval.low)} to {dfmt(f.interval.high)}" if f.interval else None
            out.append(
                Row(
                    [
                        s.title,
                        f.label,
                        f.better,
                        Cell(fmt(f.baseline) if f.baseline is not None else _absent(f.baseline_absent),
                             reason="not recorded on the baseline"),
                        Cell(fmt(f.candidate) if f.candidate is not None else _absent(f.candidate_absent),
                             reason="not recorded on the candidate"),
                        Cell(dfmt(f.delta), reason=f.note or "no delta"),
                        Cell(relative_text(f.relative_delta), reason="no relative delta (a side is missing or the baseline is 0)"),
                        Cell(interval, reason=f.note or ("a maximum is shown, not tested" if f.unit == "bytes" else "no interval"))
                        if interval is not None or f.verdict not in _UNTESTED
                        else Cell(_UNTESTED[f.verdict], title=f.note),
                        Cell(f"{f.verdict} ({f.note})" if f.verdict == "within tolerance"
                             else f"{f.verdict} (too few to tell)" if f.too_few_to_tell else f.verdict,
                             # how many runs would tell is said once, in the page's list of the figures too
                             # few to tell (templates/_sample_changes.html), not again in each verdict's title
                             tone=VERDICT_TONE.get(f.verdict, "neutral"), title=f.note),
                    ]
                )
            )
    return Table(table_id, f"{heading}: per scenario, baseline, candidate, change and its interval", columns, out,
                 cards=True)


def delta_charts(cmp: Comparison, key: str) -> list[Chart]:
    if not cmp.speed_comparable or not cmp.scenarios:
        return []
    out = []
    for chart in fc.CATALOG.delta_charts:
        fig_key = chart.figure
        figs = [s.figure(fig_key) for s in cmp.scenarios]
        scale = 100.0 if fc.CATALOG[fig_key].unit in ("rate", "score") else 1.0  # percentage points
        out.append(
            charts.deltas_with_intervals(
                f"{fig_key}-{key}",
                chart.title,
                [s.title for s in cmp.scenarios],
                # a change that is not compared (tokens counted on one side, estimated on the other) is not drawn
                [None if f.delta is None or f.verdict == "not comparable" else f.delta * scale for f in figs],
                [None if f.interval is None else f.interval.low * scale for f in figs],
                [None if f.interval is None else f.interval.high * scale for f in figs],
                value_title=chart.axis,
                fmt=(lambda v: None if v is None else fc.signed(v, "+.3f")),
                verdicts=[f.verdict for f in figs],
                spec=chart,
            )
        )
    return out


def interval_lines(cmp: Comparison) -> list[str]:
    """The lines a section states under its table about what its intervals drew on (see :class:`ComparisonSection`)."""
    return [n for n in (cmp.pairing_note, cmp.run_variation_note) if n]


@dataclass(frozen=True)
class ComparisonSection:
    """One configuration of a comparison page, in the order it is laid out: its verdicts (the sentence and the
    table), its caveats in one box (what differs and can explain a change, and what the rules mark), the
    differences any two runs have (listed apart), its runs, then its charts."""

    heading: str
    label: str
    title: str
    rule: str
    baseline_runs: list[Cell]
    candidate_runs: list[Cell]
    differences: Table
    """The conditions that differ and can explain a change (OS build and version, device, route, suite revision,
    the configuration): part of the caveats."""
    caveats: list[str]
    """What the rules mark (exploratory runs, revisions, conditions that break the label's requirements...)."""
    expected: Table
    """What differs between any two runs (the runs, their start times, the order seed): never a caveat."""
    dropped: list[str]
    table: Table | None
    charts: list[Chart]
    methods: list[str]
    refused: str | None = None
    samples: SampleChangesBlock | None = None
    """The samples whose outcome changed, under the verdicts (``_sample_changes.html``)."""
    verdict: str = ""
    """This configuration's verdicts in one sentence."""
    comparison: Comparison | None = field(default=None, compare=False, repr=False)
    """What the section was made from (for the page's sentence over all its sections); not laid out."""
    configuration: str = ""
    """The configuration in a few words: what the page's sentence names a change by when it has several."""
    intervals: list[str] = field(default_factory=list)
    """What the intervals drew on, one line each: paired by sample or not, run-to-run variation measured."""
    anchor: str = ""
    """The section's id, which every listed change of its configuration links to
    (:func:`fmbench.urls.configuration_anchor`)."""
    change_points: list[str] = field(default_factory=list)
    """The change points of the site's change list dated to this section's two builds, each in the words (and
    numbers) home, `/regressions/` and the feed list it with."""
    change_statement: str = ""
    """The change list's method and false-discovery level, shown with :attr:`change_points`."""


def refused_section(heading: str, rule: str, key: str, refused: ComparisonRefused, configuration: str) -> ComparisonSection:
    """A section whose comparison the publishing rules refuse: it says why, and nothing else."""
    empty = Table(f"diff-{key}", "", [], [])
    return ComparisonSection(heading, "Refused", heading, rule, [], [], empty, [], Table(f"expected-{key}", "", [], []),
                             [], None, [], [], refused=str(refused),
                             verdict=f"Not compared: {refused.reason.rstrip('.')}.", configuration=configuration,
                             anchor=key)


def compared_section(
    site: SiteContext, cmp: Comparison, heading: str, configuration: str, key: str,
    sides: tuple[str, str] = ("Baseline", "Candidate"),
) -> ComparisonSection:
    """A compared configuration's section; ``sides``: what its tables call the baseline and the candidate."""
    def links(runs: Sequence[Any]) -> list[Cell]:
        return [run_link({"run_id": r.run_id, "file_name": r.run_id}, site.url, f"{r.run_id} ({r.verdict})") for r in runs]

    condition_columns = [Column("condition", "Condition"), Column("baseline", sides[0]), Column("candidate", sides[1])]
    return ComparisonSection(
        heading=heading,
        label=cmp.label,
        title=cmp.title,
        rule=cmp.rule_description,
        baseline_runs=links(cmp.baseline.runs),
        candidate_runs=links(cmp.candidate.runs),
        differences=Table(
            f"diff-{key}",
            f"{heading}: the conditions that differ between the sides (each can explain a change)",
            condition_columns,
            [Row([x.label, x.baseline, x.candidate]) for x in cmp.differences],
            "No condition differs.",
            cards=True,
        ),
        caveats=[c.message for c in cmp.caveats],
        expected=Table(
            f"expected-{key}",
            f"{heading}: expected differences (any two runs differ in these; they do not explain a change)",
            condition_columns,
            [Row([x.label, x.baseline, x.candidate]) for x in cmp.expected_differences],
            cards=True,
        ),
        dropped=[f"{x.title}: {x.reason}" for x in cmp.dropped],
        table=figure_table(cmp, f"figures-{key}", heading),
        charts=delta_charts(cmp, key),
        methods=list(cmp.method_notes),
        samples=sample_changes_block(cmp, key, site.url, sides),
        intervals=interval_lines(cmp),
        verdict=cmp.verdict_sentence,
        comparison=cmp,
        configuration=configuration,
        anchor=key,
    )


def page_verdict(sections: Sequence[ComparisonSection]) -> str:
    """A comparison page's verdicts in one sentence, over every configuration it compares (each change named by
    its configuration when there are several)."""
    compared = [s for s in sections if s.comparison is not None]
    if not compared and sections:
        return sections[0].verdict if len(sections) == 1 else f"Not compared: all {len(sections)} comparisons were refused."
    several = len(sections) > 1
    return verdict_sentence(
        [(s.configuration if several else None, s.comparison) for s in compared if s.comparison is not None],
        refused=len(sections) - len(compared),
    )
