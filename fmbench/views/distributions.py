"""Distributions where readers look: per scenario, the full distribution of each per-trial figure, as a table,
and the trials themselves as a chart of every trial with its median and p90.

The figures are the metrics of :data:`fmbench.analysis.figure_catalog.CATALOG`, summarized by
:func:`fmbench.analysis.figures.distribution`; a value that was not recorded is not a
value, so it is left out of the count, never entered as 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import duckdb

from fmbench.analysis import display as d
from fmbench.analysis import figure_catalog as fc
from fmbench.analysis.figure_catalog import Metric
from fmbench.analysis.figures import SplitPassRates, distribution, split_pass_rates
from fmbench.views import charts
from fmbench.views.blocks import Cell, Chart, Column, Row, Table

Values = dict[str, dict[str, list[float]]]
"""Scenario id -> figure key -> the recorded values of its trials, in trial order."""


def trial_values(found: Iterable[Sequence[Any]]) -> Values:
    """Per scenario, the recorded values of each distribution figure: from trials in order, each its scenario id
    and then its value of each of :attr:`fmbench.analysis.figure_catalog.Catalog.metrics`."""
    keys = [f.key for f in fc.CATALOG.metrics]
    out: Values = {}
    for row in found:
        per = out.setdefault(row[0], {k: [] for k in keys})
        for key, value in zip(keys, row[1:], strict=True):
            if value is not None:
                per[key].append(float(value))
    return out


def scenario_trial_values(con: duckdb.DuckDBPyConnection, scenario_id: str, run_ids: Sequence[str]) -> Values:
    """Every distribution figure's recorded values of one scenario, per run (keyed by run id), in one query."""
    if not run_ids:
        return {}
    keys = [f.key for f in fc.CATALOG.metrics]
    found: Values = {run_id: {k: [] for k in keys} for run_id in run_ids}
    marks = ", ".join("?" for _ in run_ids)
    for row in con.execute(
        f"SELECT run_id, {', '.join(keys)} FROM trials WHERE scenario_id = ? AND run_id IN ({marks}) "
        "ORDER BY run_id, ordinal",
        [scenario_id, *run_ids],
    ).fetchall():
        per = found[row[0]]
        for key, value in zip(keys, row[1:], strict=True):
            if value is not None:
                per[key].append(float(value))
    return {run_id: per for run_id, per in found.items() if any(per.values())}


def _fmt(unit: str, value: float | None) -> str | None:
    if unit == "seconds":
        return d.seconds(value)
    if unit == "bytes":
        return d.mebibytes(value)
    return d.rate(value)


_STATS = (
    ("count", "Count"),
    ("minimum", "Min"),
    ("median", "Median"),
    ("mean", "Mean"),
    ("p90", "p90"),
    ("maximum", "Max"),
    ("standard_deviation", "Std dev"),
)


def distribution_table(
    table_id: str, titles: dict[str, str], values: Values, *, per: str = "Scenario", caption: str | None = None
) -> Table | None:
    """One row per scenario (or run) and figure: count, minimum, median, mean, p90, maximum, standard deviation."""
    if not values:
        return None
    columns = [Column(per.lower(), per), Column("figure", "Figure")]
    columns += [Column(key, label, True) for key, label in _STATS]
    out = []
    for sid, per in values.items():
        for f in fc.CATALOG.metrics:
            dist = distribution(per.get(f.key, []))
            cells: list[Any] = [titles.get(sid, sid), f.label, d.count(dist.count)]
            for key, _label in _STATS[1:]:
                cells.append(Cell(_fmt(f.unit, getattr(dist, key)), reason="no trial of this scenario recorded it"))
            out.append(Row(cells))
    return Table(
        table_id,
        caption or "Distributions per scenario (nearest-rank median and p90, population standard deviation)",
        columns,
        out,
    )


def trials_chart(
    chart_id: str,
    figure: Metric,
    titles: dict[str, str],
    values: Values,
    order: Sequence[str],
    *,
    per: str = "scenario",
    suffix: str = "",
) -> Chart | None:
    """The trials of one figure per scenario: every trial as a small dot (spread sideways so none hides another),
    and the median as a large dot with a whisker to the p90, on an axis from zero (one chart style: the
    median-and-p90 of :mod:`fmbench.views.charts`, with its trials)."""
    present = [sid for sid in order if values.get(sid, {}).get(figure.key)]
    if not present:
        return None
    scale = 2**20 if figure.unit == "bytes" else 1
    axis = {"seconds": "Seconds", "bytes": "MiB", "tokens/s": "Tokens/s", "chars/s": "Characters/s"}
    ys: list[float] = []
    spread: list[int] = []
    medians: list[float | None] = []
    whiskers: list[float | None] = []
    for sid in present:
        recorded = values[sid][figure.key]
        ys += [float(f"{v / scale:.4g}") for v in recorded]  # a dot's place: four digits are finer than a pixel
        spread.append(len(recorded))
        dist = distribution(recorded)
        median = None if dist.median is None else float(f"{dist.median / scale:.5g}")
        p90 = None if dist.p90 is None else float(f"{dist.p90 / scale:.5g}")
        medians.append(median)
        whiskers.append(None if median is None or p90 is None else round(p90 - median, 6))
    labels = [titles.get(sid, sid) for sid in present]
    traces = [
        # No x and no label a point (a run of 1,000 trials would carry 1,000 of each): ``spread`` counts the
        # trials of each column in ``y``'s order, and site/assets/charts.js places them side by side in their
        # column, the same way on every page; a trial's scenario is the tick under its column.
        {"type": "scatter", "mode": "markers", "name": "trial", "y": ys, "spread": spread,
         "hoverinfo": "y+name", "marker": {"size": 5, "opacity": 0.45}, "showlegend": False},
        {"type": "scatter", "mode": "markers", "name": "median (whisker to p90)", "x": list(range(len(present))),
         "y": medians, "text": labels, "hoverinfo": "y+text+name", "marker": {"size": 11, "symbol": "diamond"},
         "error_y": {"type": "data", "array": whiskers, "arrayminus": [0] * len(whiskers), "symmetric": False,
                     "visible": True},
         "showlegend": False},
    ]
    layout = charts.layout(
        {**charts.axis(per.capitalize()), "tickmode": "array", "tickvals": list(range(len(present))),
         "ticktext": labels, "range": [-0.6, len(present) - 0.4], "zeroline": False, "showgrid": False},
        charts.axis(axis[figure.unit], from_zero=True),
        height=360,
    )
    layout["xaxis"].pop("nticks", None)
    rows = []
    for sid in present:
        dist = distribution(values[sid][figure.key])
        rows.append(Row([titles.get(sid, sid), d.count(dist.count), _fmt(figure.unit, dist.median),
                         _fmt(figure.unit, dist.p90)]))
    missing = [titles.get(sid, sid) for sid in order if sid not in present]
    note = (
        f"{figure.label} not recorded for {', '.join(missing)}: nothing drawn for it, nothing plotted as 0."
        if missing else None
    )
    title = f"{figure.label}: every trial, by {per}{suffix}"
    return Chart(
        id=chart_id,
        title=title,
        figure_json={"data": traces, "layout": layout},
        table=Table(f"{chart_id}-table", title,
                    [Column(per, per.capitalize()), Column("count", "Trials", True),
                     Column("median", "Median", True), Column("p90", "p90", True)], rows),
        note=note,
        alt=f"{title}: each trial as a point, with the median and p90 per {per}",
        marks=charts.TRIALS_MARKS,
    )


def agentic_split(con: duckdb.DuckDBPyConnection, run_id: str) -> dict[str, SplitPassRates]:
    """Per agentic scenario of one run: its state and trajectory pass counts (one query)."""
    trials: dict[str, dict[int, list[tuple[str | None, bool]]]] = {}
    for sid, ordinal, case, passed in con.execute(
        "SELECT t.scenario_id, c.trial_ordinal, c.check_case, c.passed FROM check_results c "
        "JOIN trials t ON t.run_id = c.run_id AND t.ordinal = c.trial_ordinal "
        "WHERE c.run_id = ? AND t.category = 'agenticToolUse' ORDER BY c.trial_ordinal, c.ordinal",
        [run_id],
    ).fetchall():
        trials.setdefault(sid, {}).setdefault(ordinal, []).append((case, bool(passed)))
    return {sid: split_pass_rates(per.values()) for sid, per in trials.items()}


def agentic_table(table_id: str, titles: dict[str, str], split: dict[str, SplitPassRates]) -> Table | None:
    """State and trajectory pass rates of each agentic scenario, side by side, never combined."""
    if not split:
        return None
    columns = [
        Column("scenario", "Scenario"),
        Column("state", "Final state pass", True, "Trials whose every state check passed, of those with one"),
        Column("trajectory", "Tool trajectory pass", True,
               "Trials whose every tool check (calls, arguments, order) passed, of those with one"),
    ]
    out = []
    for sid, s in split.items():
        out.append(Row([
            titles.get(sid, sid),
            Cell(None if s.state_rate is None else f"{d.percent(s.state_rate)} ({s.state_passed}/{s.state_trials})",
                 reason="no trial has a state check"),
            Cell(None if s.trajectory_rate is None
                 else f"{d.percent(s.trajectory_rate)} ({s.trajectory_passed}/{s.trajectory_trials})",
                 reason="no trial has a tool check"),
        ]))
    return Table(table_id, "Agentic checks: the final state and the tool trajectory, apart", columns, out)
