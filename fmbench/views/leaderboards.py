"""Leaderboards: per scenario and configuration, the devices in order of median TTFT, each on its newest OS build.

A board is one scenario, one configuration (:func:`fmbench.analysis.configuration.config_key`: route, suite, the
runner's choices, the file generation) and one suite revision, as a device comparison holds them equal. On it
each device stands on its newest OS build with a publishable run of that configuration, and there on the run the
one attempt rule of every page takes (:data:`fmbench.comparison.evidence.RULE`: the newest), the run its comparison
pages and home show (the cluster bootstrap resamples its samples, each with its trials as measured). The devices
are ranked by
median TTFT; two neighbours whose difference's interval holds zero are tied
(:func:`fmbench.analysis.ranking.rank`). Every figure of the catalog's ``leaderboard`` table is shown with its
interval, the percentile interval of the same resamples the comparisons draw. Exploratory runs of the board's
devices are listed under it, unranked. Private Cloud Compute boards stand apart: their speed is the service's.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, ClassVar

from fmbench import urls
from fmbench.analysis import figure_catalog as fc
from fmbench.analysis import ranking, stats
from fmbench.analysis.configuration import REVISION_ID, config_key, config_label
from fmbench.comparison.evidence import RULE, configuration_of
from fmbench.comparison.load import Trials, side_trials
from fmbench.comparison.selection import RunInfo, Side, SideSpec, apply_rule
from fmbench.errors import NotFoundError
from fmbench.runfile import vocabulary as vocab
from fmbench.views import charts
from fmbench.views import leaderboard_queries as q
from fmbench.views.blocks import Cell, Chart, Column, Row, Table
from fmbench.views.common import (
    figure_cells,
    figure_columns,
    figure_keys,
    os_label,
    run_link,
    verdict_cell,
)
from fmbench.views.filters import Filters, run_attrs
from fmbench.views.page import Page
from fmbench.views.pcc_figures import pcc_speed, with_pcc_speed
from fmbench.views.site import SiteContext

SPEED = "ttft_median"
"""The speed axis of a board's quality × speed chart (the catalog's key): latency, lower is better, as the Pareto
front reads it. A board ranks by its workload's headline figure (:meth:`~fmbench.analysis.figure_catalog.Catalog.headline`);
its table can be sorted by every other."""
QUALITY = "task_success"
"""The quality axis of a board's chart, against :data:`SPEED`."""
CONFIDENCE = stats.DEFAULT_CONFIDENCE
PCC = "privateCloudCompute"


def _lower(label: str) -> str:
    """A label inside a sentence (``Median TTFT`` -> ``median TTFT``)."""
    return label[:1].lower() + label[1:]


def _figures() -> tuple[fc.Figure, ...]:
    return tuple(fc.CATALOG.column(k) for k in figure_keys("leaderboard"))


# --- one board ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Board:
    anchor: str
    scenario_id: str
    scenario_title: str
    configuration: str
    """The configuration and suite revision in words."""
    service: bool
    """A Private Cloud Compute board: its speed is the service's (network and server included)."""
    ranked: Table
    ranked_by: str
    """The figure the board ranks by, in words (its workload's headline figure)."""
    ties: list[str]
    """Each pair of neighbours said to be tied, in words."""
    exploratory: Table
    chart: Chart | None
    notes: list[str]
    placed: list[ranking.Ranked[BoardEntry]]
    """The devices in their places (the rows of :attr:`ranked`), best first: home's answers read them."""
    by: fc.Figure
    """The figure the devices are placed by."""

    @property
    def has_ranked(self) -> bool:
        """Some device has a place on the board (else it is listed with the exploratory-only configurations)."""
        return any(p.rank is not None for p in self.placed)


@dataclass
class BoardEntry:
    """One device on a board: its newest build with a publishable run, the runs it stands on there (by
    :data:`~fmbench.comparison.evidence.RULE`), their trials."""

    key: str
    name: str
    build: str | None
    runs: list[RunInfo]
    trials: Trials
    values: dict[str, float | None]
    others: int
    """The build's other publishable runs of the configuration, which the attempt rule did not take."""
    intervals: dict[str, tuple[float, float] | None]

    @property
    def label(self) -> str:
        return f"{self.name} ({self.key})" if self.name != self.key else self.key


def _interval(f: fc.Figure, t: Trials, kept: Any) -> tuple[float, float] | None:
    """The figure's own interval: the percentile interval of its cluster-bootstrap resamples (``None``: fewer
    than :data:`fmbench.analysis.stats.MIN_BOOTSTRAP_VALUES` values)."""
    clustered = t.clustered(f)
    if sum(len(s) for run in clustered for s in run) < stats.MIN_BOOTSTRAP_VALUES:
        return None
    if f.statistic in ("rate", "mean"):
        resampled = stats.resampled_means(clustered, kept)
    else:
        qs = fc.CATALOG.quantiles(f.source)
        qs = qs if f.q in qs else (f.q or 0.5,)
        resampled = stats.resampled_quantiles(clustered, qs, kept)[qs.index(f.q or 0.5)]
    return ranking.percentile_bounds(resampled.tolist(), CONFIDENCE)


def _difference(f: fc.Figure, above: BoardEntry, below: BoardEntry, kept: Any) -> stats.Interval | None:
    """The interval on ``below`` − ``above`` of the ranking figure (``None``: too few values to tell), paired by
    sample where the two ran the same samples, as a comparison's is."""
    samples = (above.trials.sample_ids(f), below.trials.sample_ids(f))
    if f.statistic in ("rate", "mean"):
        return stats.cluster_bootstrap_mean_difference(
            above.trials.clustered(f), below.trials.clustered(f), confidence=CONFIDENCE, kept=kept, samples=samples)
    return stats.cluster_bootstrap_quantile_difference(
        above.trials.clustered(f), below.trials.clustered(f), f.q or 0.5, confidence=CONFIDENCE,
        together=fc.CATALOG.quantiles(f.source), kept=kept, samples=samples)


def _value_cell(f: fc.Figure, e: BoardEntry) -> Cell:
    value = e.values[f.key]
    if value is None:
        return Cell(None, reason="not recorded by these runs' trials")
    interval = e.intervals[f.key]
    shown = f.format(value) or ""
    if interval is not None:
        shown += f" ({f.format(interval[0])} to {f.format(interval[1])})"
    return Cell(shown, sort=value, title=None if interval else "too few values for an interval")


def _runs_cell(site: SiteContext, e: BoardEntry) -> Cell:
    if len(e.runs) == 1:
        (run,) = e.runs
        title = run.file_name
        if e.others:
            title += (f" (the newest of this build's {e.others + 1} publishable runs of the configuration: the run its "
                      "comparisons and home show too)")
        return Cell(run.run_id, href=site.url(urls.run(run.run_id)), title=title, sort=1)
    return Cell(f"{len(e.runs)} runs pooled", title=", ".join(r.run_id for r in e.runs), sort=len(e.runs),
                href=site.url(site.paths.device(e.key)))


def _standing(site: SiteContext, runs: list[RunInfo]) -> dict[str, tuple[list[RunInfo], int]]:
    """Per device, the runs it stands on and how many other publishable runs its build has: the evidence
    (:mod:`fmbench.comparison.evidence`, by its one :data:`~fmbench.comparison.evidence.RULE`) of its newest OS build
    whose evidence is publishable runs of the board's suite revision; a run without a hardware model or OS build,
    which stands for no cell, by the same rule over its own publishable runs on its newest build."""
    index = site.evidence()
    revision = runs[0].revision_id
    configuration = configuration_of(runs[0])
    out: dict[str, tuple[list[RunInfo], int]] = {}
    loose: dict[str, list[RunInfo]] = {}
    for r in sorted(runs, key=lambda r: (r.started_at, r.run_id)):
        if r.verdict != "publishable":
            continue
        if r.hardware_model is None or r.os_build is None:
            loose.setdefault(r.hardware_model or r.device_name, []).append(r)
        elif r.hardware_model not in out:
            found = [
                e for b in index.builds(r.hardware_model)
                if (e := index.cell(r.hardware_model, b, configuration, RULE)) is not None
                and not e.exploratory and e.revision_id == revision
            ]
            if found:
                side = found[-1].side
                publishable = [m for m in side.matched if m.verdict == "publishable" and m.revision_id == revision]
                out[r.hardware_model] = (list(side.runs), len(publishable) - len(side.runs))
    for key, mine in loose.items():
        same_build = [r for r in mine if r.os_build == mine[-1].os_build]
        used = apply_rule(SideSpec(key, "filter"), same_build, RULE).runs
        out.setdefault(key, (list(used), len(same_build) - len(used)))
    return out


def _entries(site: SiteContext, scenario_id: str, runs: list[RunInfo]) -> list[BoardEntry]:
    """Per device, the publishable runs it stands on (on its newest OS build with one, by the one attempt rule)."""
    out = []
    kept = site.caches.resamples
    for key, (used, others) in sorted(_standing(site, runs).items()):
        build = used[-1].os_build
        filters = (("device", key),) + ((("os_build", build),) if build is not None else ())
        side = Side(SideSpec(" ".join(f"{k}={v}" for k, v in filters), "filter", filters=filters), RULE,
                    tuple(used), tuple(used))
        data, _titles, _listed = side_trials(site.con, side, site.caches)
        t = data.get(scenario_id, Trials())
        values = {f.key: t.value(f) for f in _figures()}
        intervals = {f.key: _interval(f, t, kept) if values[f.key] is not None else None for f in _figures()}
        out.append(BoardEntry(key, used[-1].device_name, build, used, t, values, others, intervals))
    return out


def _words(f: fc.Figure, a: BoardEntry, b: BoardEntry, interval: stats.Interval | None) -> str:
    if interval is None:
        return (f"{a.label} and {b.label} are tied on {_lower(f.label)}: too few trials to tell them apart.")
    paired = " (paired by sample)" if interval.paired else ""
    return (f"{a.label} and {b.label} are tied on {_lower(f.label)}: the {CONFIDENCE:.0%} interval on their "
            f"difference{paired}, {fc.format_change(f.unit, interval.low)} to "
            f"{fc.format_change(f.unit, interval.high)}, holds zero.")


def _board(
    site: SiteContext, anchor: str, scenario_id: str, title: str, label: str, runs: list[RunInfo],
    rows: list[dict[str, Any]],
) -> Board:
    """One board from the configuration's runs of the scenario (``rows``: their ``scenario_figures`` rows), ranked
    by the workload's headline figure."""
    figures = _figures()
    by = fc.CATALOG.headline(rows[0].get("category"))
    service = runs[0].route == PCC
    entries = _entries(site, scenario_id, runs)
    kept = site.caches.resamples
    differences: dict[tuple[str, str], stats.Interval | None] = {}

    def tied(a: BoardEntry, b: BoardEntry) -> bool:
        interval = differences[(a.key, b.key)] = _difference(by, a, b, kept)
        return interval is None or not interval.excludes_zero

    placed = ranking.rank(entries, lambda e: e.values[by.key], by.better, tied)
    ties = [
        _words(by, above.item, below.item, differences[(above.item.key, below.item.key)])
        for above, below in itertools.pairwise(placed) if below.tied_above
    ]
    ranked = _ranked_table(site, anchor, label, by, placed, figures)
    exploratory = _exploratory(site, anchor, label, runs, rows, service)
    chart = _quality_speed_chart(anchor, label, placed, service) if entries else None
    notes = _board_notes(entries, service)
    return Board(anchor, scenario_id, title, label, service, ranked, _lower(by.label), ties, exploratory, chart, notes,
                 placed, by)


def _ranked_table(
    site: SiteContext, anchor: str, label: str, by: fc.Figure, placed: list[ranking.Ranked[BoardEntry]],
    figures: tuple[fc.Figure, ...],
) -> Table:
    """The board's devices in their ranked order: rank (or why not ranked), device, OS build, runs and every
    leaderboard figure with its interval."""
    table_rows = []
    for p in placed:
        e = p.item
        rank_text = "not ranked" if p.rank is None else f"{p.rank} (tied)" if p.tied else str(p.rank)
        build = Cell(e.build, href=site.url(site.paths.build(e.build))) if e.build else Cell(
            None, reason="the OS build is not recorded")
        table_rows.append(Row(
            [
                Cell(rank_text, sort=p.rank if p.rank is not None else len(placed) + 1,
                     title=f"{_lower(by.label)} not recorded: not ranked" if p.rank is None else None),
                Cell(e.label, href=site.url(site.paths.device(e.key))),
                build,
                _runs_cell(site, e),
                *(_value_cell(f, e) for f in figures),
            ],
            {"device": e.key, "os_build": e.build},
        ))
    return Table(
        f"{anchor}-ranked",
        f"{label}: devices ranked by {_lower(by.label)}, each on its newest OS build with a publishable run "
        f"(each figure with its {CONFIDENCE:.0%} interval)",
        [
            Column("rank", f"Rank (by {_lower(by.label)})", True, "Neighbours whose difference's interval holds zero "
                   "share a rank and are said to be tied"),
            Column("device", "Device"),
            Column("build", "OS build"),
            Column("runs", "Runs"),
            *(Column(c.key, f"{c.label} ({CONFIDENCE:.0%} interval)", True, c.help) for c in figure_columns(
                figure_keys("leaderboard"))),
        ],
        table_rows,
        "No device has a publishable run of this configuration yet: see the exploratory runs below.",
    )


def _quality_speed_chart(anchor: str, label: str, placed: list[ranking.Ranked[BoardEntry]], service: bool) -> Chart:
    """The board's devices in ranked order, quality (:data:`QUALITY`) against speed (:data:`SPEED`), the Pareto front
    marked."""
    quality = fc.CATALOG[QUALITY]
    speed = fc.CATALOG[SPEED]
    in_order = [p.item for p in placed]
    points = [(e.values[speed.key], e.values[quality.key]) for e in in_order]
    front = ranking.pareto_front(points)
    return charts.quality_speed(
        f"{anchor}-quality-speed",
        f"{quality.label} against {_lower(speed.label)}: {label}" + (" (PCC service: network and server included)"
                                                                    if service else ""),
        [charts.Point(e.label, x, y, on) for e, (x, y), on in zip(in_order, points, front, strict=True)],
        latency_title=f"{speed.label} (s, lower is faster)",
        quality_title=f"{quality.label} (higher is better)",
        latency_fmt=speed.format,
        quality_fmt=quality.format,
        what=f"{speed.label} or {_lower(quality.label)}",
    )


def _board_notes(entries: list[BoardEntry], service: bool) -> list[str]:
    """What a reader must know to read the board's speed: token counts from different sources, or PCC's speed
    being the service's."""
    notes = []
    sources = sorted({s for e in entries for s in e.trials.token_sources if s is not None})
    if len(sources) > 1:
        shown = ", ".join(vocab.label("tokenCountSource", s) or s for s in sources)
        notes.append(f"Output tokens/s on this board are counted by different token count sources ({shown}): "
                     "not like for like between the devices.")
    if service:
        notes.append("Private Cloud Compute: latency and throughput are the service's (network and server "
                     "included), over the trials PCC answered; never beside on-device speed.")
    return notes


def _exploratory(
    site: SiteContext, anchor: str, label: str, runs: list[RunInfo], rows: list[dict[str, Any]], service: bool,
) -> Table:
    """The exploratory runs of the board on each device's newest OS build measured in it: listed, never ranked."""
    newest: dict[str, str | None] = {}
    for r in sorted(runs, key=lambda r: (r.started_at, r.run_id)):
        newest[r.hardware_model or r.device_name] = r.os_build
    chosen = [r for r in rows if r["verdict"] == "exploratory"
              and r["os_build"] == newest.get(r["hardware_model"] or r["device_name"])]
    if service:
        speeds = pcc_speed(site.con, [r["run_id"] for r in chosen])
        chosen = [with_pcc_speed(r, speeds.get((r["run_id"], r["scenario_id"]))) for r in chosen]
    keys = figure_keys("leaderboard")
    return Table(
        f"{anchor}-exploratory",
        f"{label}: exploratory runs (unranked: they miss a publishing rule; the verdict links to the rules)",
        [Column("device", "Device"), Column("os", "OS (build)"), Column("run", "Run"), Column("verdict", "Verdict"),
         *figure_columns(keys)],
        [
            Row([
                Cell(r["device_name"], href=site.url(site.paths.device(r["hardware_model"] or r["device_name"]))),
                os_label(r),
                run_link(r, site.url, f"{r['started_at']:%Y-%m-%d}"),
                verdict_cell(r["verdict"], site.url),
                *figure_cells(r, keys),
            ], run_attrs(r))
            for r in chosen
        ],
        "No exploratory run on these devices' newest builds.",
    )


def _boards(site: SiteContext, scenario_ids: list[str]) -> tuple[list[Board], list[Board]]:
    """Every board of the scenarios: on-device ones, then the Private Cloud Compute ones. A board's anchor is its
    workload's and its place among that workload's boards, the same on every page that shows it."""
    found = q.scenario_rows(site.con, scenario_ids)
    catalog = {r.run_id: r for r in site.run_catalog().runs}
    groups: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for r in found:
        groups.setdefault((r["scenario_id"], *config_key(r), r["revision_id"]), []).append(r)
    on_device: list[Board] = []
    service: list[Board] = []
    order = {s: i for i, s in enumerate(scenario_ids)}
    ordered = sorted(groups.items(), key=lambda kv: (order[kv[0][0]], config_label(kv[1][0]), str(kv[0][-1])))
    places: dict[str, int] = {}
    for _key, members in ordered:
        first = members[0]
        place = places[first["scenario_id"]] = places.get(first["scenario_id"], 0) + 1
        revision = REVISION_ID.show(first["revision_id"]) or REVISION_ID.unrecorded
        label = f"{config_label(first)} · suite revision {revision}"
        runs = [catalog[r["run_id"]] for r in members]
        board = _board(site, f"board-{site.paths.scenarios.of(first['scenario_id'])}-{place}", first["scenario_id"], first["title"], label, runs, members)
        (service if board.service else on_device).append(board)
    return on_device, service


def every_board(site: SiteContext) -> tuple[list[Board], list[Board]]:
    """Every workload's boards (on-device ones, then PCC ones), in the leaderboards' order: home's answers."""
    found: tuple[list[Board], list[Board]] = site.once(
        "every_board", lambda: _boards(site, q.ranked_scenarios(site.con)))
    return found


# --- the pages ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class LeaderboardPage(Page):
    template: ClassVar[str] = "leaderboard.html"
    nav_active: ClassVar[str] = "leaderboards"
    scenario_id: str | None
    """The board's scenario (``None`` on a category's page)."""
    category: str | None
    on_device: list[Board]
    """The on-device boards with a ranked device."""
    pcc: list[Board]
    """The Private Cloud Compute boards with a ranked device."""
    unranked: Table
    """The configurations measured by exploratory runs only, a row each (never an empty board)."""
    method: str
    links: list[Cell]
    """The scenario's (or category's) other pages: the scenario page, every leaderboard, coverage."""


def _unranked(site: SiteContext, boards: list[Board], named: bool) -> Table:
    """The boards without a ranked device, listed compactly: the configuration, its devices and exploratory runs."""
    columns = [Column("configuration", "Configuration"), Column("devices", "Devices"),
               Column("runs", "Exploratory runs", True)]
    if named:
        columns.insert(0, Column("scenario", "Workload"))
    out = []
    for b in boards:
        devices = sorted({str(r.cells[0].text) for r in b.exploratory.rows if isinstance(r.cells[0], Cell)})
        cells: list[Cell | str] = [
            Cell(b.configuration),
            ", ".join(devices) if devices else Cell(None, reason="no exploratory run on a device's newest build"),
            Cell(str(len(b.exploratory.rows)), sort=len(b.exploratory.rows),
                 href=site.url(urls.runs()) + "?verdict=exploratory"),
        ]
        if named:
            cells.insert(0, Cell(b.scenario_title, href=site.url(site.paths.leaderboard(b.scenario_id))))
        out.append(Row(cells))
    return Table("unranked", "Configurations measured by exploratory runs only (no device ranked: they miss a "
                 "publishing rule)", columns, out, "Every configuration measured has a ranked device.")


def _split(site: SiteContext, on_device: list[Board], pcc: list[Board], named: bool) -> dict[str, Any]:
    """The page's fields: the boards with a ranked device, and the others listed compactly below."""
    return {
        "on_device": [b for b in on_device if b.has_ranked],
        "pcc": [b for b in pcc if b.has_ranked],
        "unranked": _unranked(site, [b for b in (*on_device, *pcc) if not b.has_ranked], named),
    }


def _method() -> str:
    return (
        f"Each figure's interval is the {CONFIDENCE:.0%} percentile interval of {stats.RESAMPLES:,} cluster-bootstrap "
        "resamples of the run each device stands on (the newest publishable run of its newest build, the run its "
        "comparisons and home show): its samples, each drawn with its trials as measured, as the comparisons draw "
        "them. "
        f"Neighbours are tied when the {CONFIDENCE:.0%} interval on their difference in "
        "the board's ranking figure (paired by sample where both ran the same samples) holds zero (or too "
        "few trials give none): they share a rank. A board ranks by its workload's headline figure (median output "
        "tokens/s for a throughput workload, median TTFT for the others); sort its table by any other figure."
    )


def leaderboard_page(site: SiteContext, filters: Filters, scenario: str) -> LeaderboardPage:
    scenario_id = site.paths.scenarios.named(scenario, "scenario")
    on_device, pcc = _boards(site, [scenario_id])
    title = next((b.scenario_title for b in (*on_device, *pcc)), scenario_id)
    category = q.category_of(site.con, scenario_id)
    links = [Cell(f"{title}: every run", href=site.url(site.paths.scenario(scenario_id)))]
    if category is not None and len(_workloads(site).get(category, [])) >= q.CATEGORY_PAGE_FROM:
        links.append(Cell(f"Every {vocab.label('category', category)} leaderboard",
                          href=site.url(site.paths.leaderboard_category(category))))
    links += [Cell("All leaderboards", href=site.url(urls.leaderboards())),
              Cell("Coverage: what is measured where", href=site.url(urls.coverage()))]
    return LeaderboardPage(
        title=f"Leaderboard: {title} ({scenario_id})",
        scenario_id=scenario_id,
        category=vocab.label("category", category) if category else None,
        **_split(site, on_device, pcc, named=False), method=_method(), links=links,
    )


def leaderboard_instances(site: SiteContext) -> list[dict[str, Any]]:
    """Every scenario's (one whose every run is invalid says it has no board, so every scenario page links one)."""
    return [{"scenario": site.paths.scenarios.of(s)} for s in q.scenarios(site.con)]


def _workloads(site: SiteContext) -> dict[str, list[str]]:
    """Every category's workloads, read once for the build or request."""
    found: dict[str, list[str]] = site.once("category_workloads", lambda: q.category_workloads(site.con))
    return found


def category_href(site: SiteContext, category: str) -> str | None:
    """Where a category's boards are: its page, or the leaderboard of its one workload (``None``: no workload)."""
    workloads = _workloads(site).get(category, [])
    if len(workloads) >= q.CATEGORY_PAGE_FROM:
        return site.url(site.paths.leaderboard_category(category))
    return site.url(site.paths.leaderboard(workloads[0])) if workloads else None


def category_page(site: SiteContext, filters: Filters, category: str) -> LeaderboardPage:
    name = site.paths.categories.named(category, "category")
    scenario_ids = q.scenarios_of_category(site.con, name)
    if len(scenario_ids) < q.CATEGORY_PAGE_FROM:
        raise NotFoundError(f"category {name!r} holds one workload: its boards are {scenario_ids[0]}'s leaderboard")
    on_device, pcc = _boards(site, scenario_ids)
    shown = vocab.label("category", name) or name
    return LeaderboardPage(
        title=f"Leaderboards: {shown}",
        scenario_id=None,
        category=shown,
        **_split(site, on_device, pcc, named=True), method=_method(),
        links=[Cell("All leaderboards", href=site.url(urls.leaderboards())),
               Cell("Coverage: what is measured where", href=site.url(urls.coverage()))],
    )


def category_instances(site: SiteContext) -> list[dict[str, Any]]:
    """Every category with a page of its own (:func:`~fmbench.views.leaderboard_queries.paged_categories`)."""
    return [{"category": site.paths.categories.of(c)} for c in q.paged_categories(site.con)]


@dataclass(frozen=True)
class LeaderboardsPage(Page):
    template: ClassVar[str] = "leaderboards.html"
    nav_active: ClassVar[str] = "leaderboards"
    scenarios: Table
    categories: Table
    coverage: str


def leaderboards_page(site: SiteContext, filters: Filters) -> LeaderboardsPage:
    found = q.scenario_rows(site.con, q.ranked_scenarios(site.con))
    per: dict[str, dict[str, Any]] = {}
    for r in found:
        s = per.setdefault(r["scenario_id"], {"title": r["title"], "category": r["category"], "boards": set(),
                                                "ranked": set(), "pcc": False})
        s["boards"].add((*config_key(r), r["revision_id"]))
        s["pcc"] = s["pcc"] or r["route"] == PCC
        if r["verdict"] == "publishable":
            s["ranked"].add(r["hardware_model"] or r["device_name"])

    def category_link(category: str | None) -> Cell | None:
        if category is None:
            return None
        return Cell(vocab.label("category", category), href=category_href(site, category))

    scenarios = Table(
        "leaderboards",
        "Every workload's leaderboards (one per configuration and suite revision)",
        [Column("scenario", "Scenario"), Column("title", "Title"), Column("category", "Category"),
         Column("boards", "Boards", True), Column("devices", "Devices with a publishable run", True),
         Column("pcc", "PCC boards")],
        [
            Row([
                Cell(sid, href=site.url(site.paths.leaderboard(sid))),
                s["title"],
                category_link(s["category"]) or Cell(None, reason="the run file records no category"),
                Cell(str(len(s["boards"])), sort=len(s["boards"])),
                Cell(str(len(s["ranked"])), sort=len(s["ranked"])),
                "yes, on boards of their own" if s["pcc"] else "no",
            ])
            for sid, s in per.items()
        ],
        "No run that is not invalid yet: nothing to rank.",
    )
    categories: dict[str, list[str]] = {}
    for sid, s in per.items():
        if s["category"] is not None:
            categories.setdefault(s["category"], []).append(sid)
    return LeaderboardsPage(
        title="Leaderboards",
        scenarios=scenarios,
        categories=Table(
            "leaderboard-categories",
            "Leaderboards by category (every board of the category's workloads on one page; a category of one "
            "workload links its leaderboard)",
            [Column("category", "Category"), Column("scenarios", "Scenarios")],
            [Row([category_link(c), ", ".join(sids)]) for c, sids in sorted(categories.items())],
            "No scenario records a category.",
        ),
        coverage=site.url(urls.coverage()),
    )
