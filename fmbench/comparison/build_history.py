"""Each figure's history over OS builds, read from the database: the series change points are searched in.

For every device, configuration and suite revision (a regression :class:`~fmbench.analysis.configuration.Group`,
as the build-to-build comparisons group runs), every workload and every figure ``compare`` reports, the OS
builds the group measured are the columns, in version order (:mod:`fmbench.analysis.os_builds`), and the
workload's samples the rows. A cell is the figure (:meth:`fmbench.analysis.figure_catalog.Figure.of`) of that
sample's values on that build, from the runs the attempt rule picks for the build (``latest`` by default, as
the build-to-build comparisons pick them), read as a comparison side reads them
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
from fmbench.comparison.load import figures, side_trials
from fmbench.comparison.selection import AttemptRule, RunInfo, SideSpec, apply_rule, fetch_runs


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
) -> list[BuildHistory]:
    """Every series of the database (of one device, if given): groups in the build-to-build comparisons'
    order, workloads as first read, figures in catalog order. Invalid runs and runs without a device or an OS
    build take no part; a group measured on one build only has a one-column series (nothing to search)."""
    where = "verdict <> 'invalid' AND os_build IS NOT NULL AND hardware_model IS NOT NULL"
    params: list[str] = []
    if hardware_model is not None:
        where += " AND hardware_model = ?"
        params.append(hardware_model)
    groups: dict[Group, dict[str, list[RunInfo]]] = {}
    for run in fetch_runs(con, where, params):
        assert run.os_build is not None
        groups.setdefault(Group.of(run), {}).setdefault(run.os_build, []).append(run)
    compared = [f for f in figures() if f.statistic != "maximum"]
    found: list[BuildHistory] = []
    for group in sorted(groups, key=_group_order):
        by_build = groups[group]
        builds = sorted(by_build, key=build_sort_key)
        cells: dict[tuple[str, str], dict[tuple[str, str], float | None]] = {}
        used: list[tuple[str, tuple[str, ...]]] = []
        for build in builds:
            filters = group.filters(build)
            spec = SideSpec(text=" ".join(f"{k}={v}" for k, v in filters), kind="filter", filters=filters)
            side = apply_rule(spec, by_build[build], rule)
            used.append((build, side.run_ids))
            data, _titles, _listed = side_trials(con, side, caches)
            for scenario_id, trials in data.items():
                for figure in compared:
                    samples: dict[str, list[float]] = {}
                    for by_sample in trials.clusters.get(figure.series, {}).values():
                        for sample, values in by_sample.items():
                            samples.setdefault(sample, []).extend(values)
                    into = cells.setdefault((scenario_id, figure.key), {})
                    for sample, values in samples.items():
                        into[(sample, build)] = figure.of(values)
        device_name = by_build[builds[-1]][-1].device_name
        revision = group.revision_id or ""
        for (scenario_id, key), series_cells in cells.items():
            figure = next(f for f in compared if f.key == key)
            if not series_cells:
                continue
            series = series_from_cells(
                (group.hardware_model, group.slug, revision, scenario_id, key), series_cells, statistic_of(figure)
            )
            runs = tuple((b, ids) for b, ids in used if b in series.builds)
            found.append(BuildHistory(group, device_name, scenario_id, figure, runs, series))
    return found
