"""Each figure's history over OS builds, read from the database: the series change points are searched in.

For every device, configuration and suite revision (a regression :class:`~fmbench.analysis.configuration.Group`,
as the build-to-build comparisons group runs), every workload and every figure ``compare`` reports, the OS
builds the group measured are the columns, in version order (:mod:`fmbench.analysis.os_builds`), and the
workload's samples the rows. A cell is the figure (:meth:`fmbench.analysis.figure_catalog.Figure.of`) of that
sample's values on that build, from the runs that stand for the build (:mod:`fmbench.comparison.evidence`: the
one selection of evidence, by the attempt rule, ``latest`` by default, as the build-to-build comparisons pick
them), read as a comparison side reads them
(:func:`fmbench.comparison.load.side_trials`): a failed attempt counts against a rate over attempts, a PCC
side's speed is its PCC-executed trials'. A figure that is a maximum (peak memory) has no per-sample values
there and no series. :func:`fmbench.analysis.changepoints.changes_over_history` then takes the series.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import duckdb

from fmbench.analysis.changepoints import Series, Statistic, series_from_cells
from fmbench.analysis.configuration import Group
from fmbench.analysis.figure_catalog import Figure
from fmbench.analysis.os_builds import build_sort_key
from fmbench.comparison.caches import Caches
from fmbench.comparison.evidence import Configuration, Evidence, EvidenceIndex, evidence_of
from fmbench.comparison.load import figures, side_trials
from fmbench.comparison.selection import AttemptRule, fetch_runs


@dataclass(frozen=True)
class BuildHistory:
    """One figure of one workload over one group's OS builds."""

    group: Group
    device_name: str
    scenario_id: str
    figure: Figure
    runs: tuple[tuple[str, tuple[str, ...]], ...]
    """Each build of the series (in its order) and the runs that stand for it."""
    series: Series
    configuration: Configuration = ()
    """The configuration the group's evidence is of (:func:`fmbench.comparison.evidence.configuration_of`)."""

    def runs_of(self, builds: Sequence[str]) -> tuple[str, ...]:
        """The runs behind ``builds`` (a change point's ``before`` or ``after``), in build order."""
        wanted = set(builds)
        return tuple(run for build, runs in self.runs if build in wanted for run in runs)


def statistic_of(figure: Figure) -> Statistic:
    """How a side of a change in ``figure`` is summarised: the mean for a rate or a mean, else the median."""
    return "mean" if figure.statistic in ("rate", "mean") else "median"


def _group_order(group: Group) -> tuple[str, ...]:
    return tuple("" if v is None else str(v) for v in group.to_json().values())


def read_histories(
    con: duckdb.DuckDBPyConnection,
    *,
    rule: AttemptRule = "latest",
    hardware_model: str | None = None,
    caches: Caches | None = None,
    index: EvidenceIndex | None = None,
) -> list[BuildHistory]:
    """Every series of the database (of one device, if given): groups in the build-to-build comparisons'
    order, workloads as first read, figures in catalog order. Each build stands on its evidence
    (:mod:`fmbench.comparison.evidence`, ``index`` if the caller has one), the same runs the build-to-build
    comparisons and their pages read. A group measured on one build only has nothing to search and gives no
    series."""
    if index is None:
        where = "verdict <> 'invalid' AND os_build IS NOT NULL AND hardware_model IS NOT NULL"
        params: list[str] = []
        if hardware_model is not None:
            where += " AND hardware_model = ?"
            params.append(hardware_model)
        index = evidence_of(fetch_runs(con, where, params))
    groups: dict[tuple[Group, Configuration], list[Evidence]] = {}
    for device in index.devices():
        if hardware_model is not None and device != hardware_model:
            continue
        for found in index.device_cells(device, rule):
            groups.setdefault((Group.of(found.runs[-1]), found.configuration), []).append(found)
    compared = [f for f in figures() if f.statistic != "maximum"]
    found_histories: list[BuildHistory] = []
    for key in sorted(groups, key=lambda k: (_group_order(k[0]), str(k[1]))):
        group, configuration = key
        ordered = sorted(groups[key], key=lambda e: build_sort_key(e.os_build))
        if len(ordered) < 2:  # one build: nothing to search, and no need to read its trials
            continue
        cells: dict[tuple[str, str], dict[tuple[str, str], float | None]] = {}
        used: list[tuple[str, tuple[str, ...]]] = []
        for evidence in ordered:
            build = evidence.os_build
            used.append((build, evidence.run_ids))
            data, _titles, _listed = side_trials(con, evidence.side, caches)
            for scenario_id, trials in data.items():
                for figure in compared:
                    samples: dict[str, list[float]] = {}
                    for by_sample in trials.clusters.get(figure.series, {}).values():
                        for sample, values in by_sample.items():
                            samples.setdefault(sample, []).extend(values)
                    into = cells.setdefault((scenario_id, figure.key), {})
                    for sample, values in samples.items():
                        into[(sample, build)] = figure.of(values)
        device_name = ordered[-1].device_name
        revision = group.revision_id or ""
        for (scenario_id, figure_key), series_cells in cells.items():
            figure = next(f for f in compared if f.key == figure_key)
            if not series_cells:
                continue
            series = series_from_cells(
                (group.hardware_model, group.slug, revision, scenario_id, figure_key), series_cells,
                statistic_of(figure),
            )
            runs = tuple((b, ids) for b, ids in used if b in series.builds)
            found_histories.append(
                BuildHistory(group, device_name, scenario_id, figure, runs, series, configuration)
            )
    return found_histories
