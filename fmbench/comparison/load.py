"""A comparison side's trials, read from the database and grouped per scenario.

:func:`load_side` reads a side's trials as stored columns (one query, as Arrow) and groups them with numpy
into :class:`Trials` per scenario: the counts, each compared figure's values in trial order, and the same
values clustered by run and sample for the cluster bootstrap (:mod:`fmbench.analysis.stats`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import pairwise
from typing import Any

import duckdb
import numpy as np

from fmbench.analysis import figure_catalog as fc
from fmbench.comparison.caches import Caches
from fmbench.comparison.selection import Side
from fmbench.storage.queries import scenario_order

# --- figures ---------------------------------------------------------------------------

FigureDef = fc.Figure
"""A figure ``compare`` reports: an entry of :data:`fmbench.analysis.figure_catalog.CATALOG`."""


def figures(*, for_tokens: bool = False) -> tuple[FigureDef, ...]:
    """The figures compared per scenario (:meth:`fmbench.analysis.figure_catalog.Catalog.compared`)."""
    return fc.CATALOG.compared(for_tokens=for_tokens)


@dataclass
class Trials:
    """One side's trials of one scenario, as stored columns."""

    trials: int = 0
    failures: int = 0
    values: dict[str, list[float]] = field(default_factory=dict)
    """Each compared figure's recorded values by :attr:`~fmbench.analysis.figure_catalog.Figure.series`, in trial order
    (a rate over attempts: a failed attempt a 0, after the trials; speed: the PCC-executed trials' on a PCC side)."""
    token_sources: list[str | None] = field(default_factory=list)
    fell_back: int = 0
    """PCC trials that ran on the device instead (their speed is left out on a PCC side)."""
    clusters: dict[str, dict[str, dict[str, list[float]]]] = field(default_factory=dict)
    """The same values by series, run and sample: the cluster bootstrap's input."""

    def add_clustered(self, series: str, run_id: str, sample_id: str, value: float) -> None:
        self.clusters.setdefault(series, {}).setdefault(run_id, {}).setdefault(sample_id, []).append(value)

    def clustered(self, f: FigureDef) -> list[list[list[float]]]:
        runs = self.clusters.get(f.series, {})
        return [list(samples.values()) for samples in runs.values()]

    def sample_ids(self, f: FigureDef) -> list[list[str]]:
        """The sample ids of :meth:`clustered`, run by run in the same order (what pairs two sides by sample)."""
        runs = self.clusters.get(f.series, {})
        return [list(samples) for samples in runs.values()]

    @property
    def run_count(self) -> int:
        return len({run for runs in self.clusters.values() for run in runs})

    @property
    def attempts(self) -> int:
        return self.trials + self.failures

    @property
    def present(self) -> bool:
        return self.attempts > 0

    def samples(self, f: FigureDef) -> list[float]:
        return self.values.get(f.series, [])

    def value(self, f: FigureDef) -> float | None:
        return f.of(self.samples(f))

    def counts(self, f: FigureDef) -> tuple[int, int]:
        """(successes, n) of a rate figure."""
        found = self.samples(f)
        return int(sum(found)), len(found)


def load_side(
    con: duckdb.DuckDBPyConnection, side: Side
) -> tuple[dict[str, Trials], dict[str, tuple[str, str | None]], list[tuple[str, int, str]]]:
    """A side's trials per scenario, as :class:`Trials`, the scenarios' titles, and each run's scenarios as
    ``(run id, ordinal, scenario id)`` (see :func:`side_scenario_order`).

    The trials are read as Arrow columns in one query, then put in (run, ordinal) order and grouped with numpy
    (see :func:`_group_trials`); the result is the one a walk over them trial by trial in that order gives,
    value for value and in the same order, so the seeded bootstrap draws the same resamples."""
    # slow to import (pyarrow): only reading a side's trials as columns needs it
    import pyarrow as pa

    ids = list(side.run_ids)
    marks = ", ".join("?" for _ in ids)
    order = {run_id: i for i, run_id in enumerate(ids)}
    titles: dict[str, tuple[str, str | None]] = {}
    rows = con.execute(
        f"SELECT run_id, scenario_id, title, category, ordinal FROM scenario_figures WHERE run_id IN ({marks})",
        ids,
    ).fetchall()
    for _run, sid, title, category, _ord in sorted(rows, key=lambda r: (order[r[0]], r[4])):
        titles.setdefault(sid, (title, category))
    data: dict[str, Trials] = {sid: Trials() for sid in titles}
    pcc = bool(side.runs) and all(r.route == "privateCloudCompute" for r in side.runs)
    sources = ", ".join(dict.fromkeys(f.source for f in figures(for_tokens=True)))
    table: pa.Table = con.sql(
        f"SELECT ordinal, scenario_id, run_id, sample_id, {sources}, token_count_source, "
        # A PCC side's speed and memory are the PCC-executed trials' only; the fallbacks are counted.
        "? AND executed_model <> 'privateCloudCompute' AS fell_back "
        f"FROM trials WHERE run_id IN ({marks})",
        params=[pcc, *ids],
    ).to_arrow_table()
    if table.num_rows:
        _group_trials(table, data)
    over_attempts = list(dict.fromkeys(f.series for f in figures(for_tokens=True) if f.attempts))
    failed: dict[tuple[str, str, str | None], int] = {}
    for failure in con.execute(
        f"SELECT scenario_id, run_id, sample_id FROM failures WHERE run_id IN ({marks}) AND NOT is_warmup", ids
    ).fetchall():
        failed[failure] = failed.get(failure, 0) + 1
    # By scenario, run and sample (a failure without a sample after those with one, as SQL orders NULLs).
    for (sid, run_id, sample_id), n in sorted(failed.items(), key=lambda f: (*f[0][:2], f[0][2] is None, f[0][2])):
        t = data.setdefault(sid, Trials())
        t.failures += n
        for series in over_attempts:  # a failed attempt counts against a rate over attempts (task success)
            t.values.setdefault(series, []).extend([0.0] * n)
            for _ in range(n):
                t.add_clustered(series, run_id, sample_id or "", 0.0)
    for sid in data:
        titles.setdefault(sid, (sid, None))
    return data, titles, [(run_id, ordinal, sid) for run_id, sid, _, _, ordinal in rows]


def side_trials(
    con: duckdb.DuckDBPyConnection, side: Side, caches: Caches | None
) -> tuple[dict[str, Trials], dict[str, tuple[str, str | None]], list[tuple[str, int, str]]]:
    """:func:`load_side` of a side, read once per static build however many comparisons the side is in (nothing
    changes what :func:`load_side` gives after it: it is only read)."""
    cache = None if caches is None else caches.comparisons
    if cache is None:
        return load_side(con, side)
    return cache.side_trials(side.run_ids, lambda: load_side(con, side))


def side_scenario_order(sides: tuple[Side, ...], listed: list[tuple[str, int, str]]) -> list[str]:
    """The scenarios of the sides' runs in :func:`fmbench.storage.queries.scenario_order`, from the rows :func:`load_side`
    read already."""
    return scenario_order(listed, {r.run_id: r.started_at for side in sides for r in side.runs})


def _group_trials(table: Any, data: dict[str, Trials]) -> None:
    """Fill ``data`` from a side's trials (an Arrow table of :func:`load_side`'s columns, in no particular order).

    The trials are put in (run id, ordinal) order, the order of ``ORDER BY run_id, ordinal`` (run ids compare as
    their UTF-8 bytes do, which is Python's order of strings). Per scenario: the counts, the flat value lists in
    that order and, per metric, the values clustered by run and sample. Scenarios, runs and samples are
    numbered in order of first appearance; the trials are then put scenario by scenario (a stable sort keeps
    their order within one), so a metric's clusters, its (scenario, run, sample) groups ordered by their first
    value with that metric, come scenario by scenario with runs in run order and a run's samples in the order
    their first value came."""
    ordered = _order_trials(table)
    fell_back = _column(table, "fell_back").to_numpy(zero_copy_only=False)[ordered.trial_order]
    selections = _series_selections(table, ordered, ~fell_back)
    ours = [data.setdefault(sid, Trials()) for sid in ordered.scenarios]
    _fill_values(ours, table, ordered, selections, fell_back)
    _fill_clusters(ours, ordered, selections)


@dataclass(frozen=True)
class _Ordered:
    """A side's trials scenario by scenario, in (run id, ordinal) order within one, as :func:`_order_trials` puts
    them: scenarios, runs and samples each numbered in order of first appearance."""

    trial_order: Any
    """Each trial's row of the table, in this order."""
    scenario: Any
    """Each trial's scenario number."""
    key: Any
    """Each trial's (scenario, run, sample) as one number: what a cluster is."""
    bounds: Any
    """Where each scenario's trials start, and where the last ends."""
    scenarios: list[str]
    runs: list[str]
    samples: list[str]


_Series = tuple[str, Any, Any]
"""A figure's series: its name, its source's values in :class:`_Ordered`'s order, and which trials give one."""

_Clusters = tuple[Any, list[tuple[int, int]], list[str], list[tuple[int, int, list[tuple[str, int, int]]]]]
"""What :func:`_clusters_of` gives."""


def _column(table: Any, name: str) -> Any:
    """One column of the Arrow table, as one array."""
    return table.column(name).combine_chunks()


def _encoded(table: Any, name: str) -> tuple[Any, list[str]]:
    """A column dictionary-encoded: each row's code (a numpy array) and the names the codes stand for."""

    found = _column(table, name).dictionary_encode()
    return found.indices.to_numpy().astype(np.int64), found.dictionary.to_pylist()


def _first_appearance_codes(found: Any, names: list[str], in_order: Any) -> tuple[Any, list[str]]:
    """Encoded values in trial order (``in_order``), numbered in order of first appearance, and their names."""

    found = found[in_order]
    _, first = np.unique(found, return_index=True)
    appearance = np.argsort(first)
    renumbered = np.empty_like(appearance)
    renumbered[appearance] = np.arange(appearance.size)
    return renumbered[found], [names[i] for i in appearance.tolist()]


def _order_trials(table: Any) -> _Ordered:
    """The table's trials in (run id, ordinal) order, then put scenario by scenario by a stable sort."""

    run_ids = _encoded(table, "run_id")
    rank = np.empty(len(run_ids[1]), dtype=np.int64)
    rank[sorted(range(len(run_ids[1])), key=run_ids[1].__getitem__)] = np.arange(len(run_ids[1]))
    in_order = np.lexsort((_column(table, "ordinal").to_numpy(zero_copy_only=False), rank[run_ids[0]]))
    scenario, scenarios = _first_appearance_codes(*_encoded(table, "scenario_id"), in_order)
    run, runs = _first_appearance_codes(*run_ids, in_order)
    sample, samples = _first_appearance_codes(*_encoded(table, "sample_id"), in_order)
    together = np.argsort(scenario, kind="stable")
    scenario, run, sample = scenario[together], run[together], sample[together]
    return _Ordered(
        trial_order=in_order[together],
        scenario=scenario,
        key=(scenario * len(runs) + run) * len(samples) + sample,
        bounds=np.searchsorted(scenario, np.arange(len(scenarios) + 1)),
        scenarios=scenarios,
        runs=runs,
        samples=samples,
    )


def _values(table: Any, name: str, ordered: _Ordered) -> tuple[Any, Any]:
    """A column's values (0 where null) and where it is not null, scenario by scenario in trial order."""
    read = _column(table, name)
    return (
        read.fill_null(False if str(read.type) == "bool" else 0).to_numpy(zero_copy_only=False)[ordered.trial_order],
        read.is_valid().to_numpy(zero_copy_only=False)[ordered.trial_order],
    )


def _per_scenario(read: Any, selected: Any, ordered: _Ordered) -> list[list[Any]]:
    """Each scenario's selected values, in trial order."""

    at = np.flatnonzero(selected)
    cuts = np.searchsorted(at, ordered.bounds).tolist()
    flat = read[at].tolist()
    return [flat[a:b] for a, b in pairwise(cuts)]


def _series_selections(table: Any, ordered: _Ordered, kept: Any) -> list[_Series]:
    """Each figure's series once: its source's values (a 0/1 outcome as a float) and which trials give one.

    A rate counts every trial; a speed figure's values are the ``kept`` (PCC-executed, on a PCC side) trials' only."""

    everything = np.ones(ordered.scenario.size, dtype=bool)
    selections: list[_Series] = []
    for f in figures(for_tokens=True):
        if f.series in (name for name, _v, _s in selections):
            continue
        read, valid = _values(table, f.source, ordered)
        selected = everything if f.statistic == "rate" else valid
        selections.append((f.series, read.astype(np.float64) if f.statistic == "rate" else read,
                           kept & selected if f.speed else selected))
    return selections


def _fill_values(ours: list[Trials], table: Any, ordered: _Ordered, selections: list[_Series], fell_back: Any) -> None:
    """Each scenario's counts (trials, fallbacks), the kept trials' token count sources and its series' values."""

    kept = ~fell_back
    sources = _column(table, "token_count_source").to_numpy(zero_copy_only=False)[ordered.trial_order]
    trials = np.diff(ordered.bounds).tolist()
    fallbacks = np.bincount(ordered.scenario[fell_back], minlength=len(ordered.scenarios)).tolist()
    flat = {series: _per_scenario(read, selected, ordered) for series, read, selected in selections}
    kept_sources = _per_scenario(sources, kept, ordered)
    for code, t in enumerate(ours):
        t.trials, t.fell_back, t.token_sources = trials[code], fallbacks[code], kept_sources[code]
        t.values = {series: by_scenario[code] for series, by_scenario in flat.items()}


def _clusters_of(ordered: _Ordered, selected: Any) -> _Clusters:
    """The selected trials in cluster order, each cluster's slice of them and sample, and per scenario its
    first trial and its runs' ranges of clusters."""

    runs, samples = ordered.runs, ordered.samples
    at = np.flatnonzero(selected)
    keys, first, inverse = np.unique(ordered.key[at], return_index=True, return_inverse=True)
    by_first = np.argsort(first)
    position = np.empty_like(by_first)
    position[by_first] = np.arange(by_first.size)
    cluster_of = position[inverse.reshape(-1)]
    keys = keys[by_first]
    ends = np.cumsum(np.bincount(cluster_of, minlength=by_first.size)).tolist()
    scenario_run = keys // len(samples)
    cuts = [0, *(np.flatnonzero(np.diff(scenario_run)) + 1).tolist(), keys.size]
    scenario_runs = scenario_run[cuts[:-1]].tolist()
    firsts = at[first[by_first]][cuts[:-1]].tolist()
    segments: list[tuple[int, int, list[tuple[str, int, int]]]] = []
    for pair, first_trial, lo, hi in zip(scenario_runs, firsts, cuts, cuts[1:], strict=False):
        code, run_code = divmod(pair, len(runs))
        if not segments or segments[-1][0] != code:
            segments.append((code, first_trial, []))
        segments[-1][2].append((runs[run_code], lo, hi))
    return (
        at[np.argsort(cluster_of, kind="stable")],
        list(zip([0, *ends[:-1]], ends, strict=True)),
        [samples[i] for i in (keys % len(samples)).tolist()],
        segments,
    )


def _fill_clusters(ours: list[Trials], ordered: _Ordered, selections: list[_Series]) -> None:
    """Each scenario's bootstrapped series clustered by run and sample (trials selected alike share one grouping).

    A scenario's series come in the order its trials first gave each a value (in catalog order within one
    trial), as adding the values trial by trial orders them."""

    metrics_of: list[list[tuple[int, int, str, dict[str, dict[str, list[float]]]]]] = [[] for _ in ordered.scenarios]
    grouped: list[tuple[Any, _Clusters]] = []
    bootstrapped = {f.series for f in figures(for_tokens=True) if f.statistic != "maximum"}
    for rank, (metric, metric_values, selected) in enumerate(selections):
        if metric not in bootstrapped or not selected.any():
            continue
        clusters = next((c for s, c in grouped if np.array_equal(s, selected)), None)
        if clusters is None:
            clusters = _clusters_of(ordered, selected)
            grouped.append((selected, clusters))
        order, slices, names, segments = clusters
        in_order = metric_values[order].tolist()
        pieces = [in_order[a:b] for a, b in slices]
        for code, first_trial, run_ranges in segments:
            by_run = {run_id: dict(zip(names[lo:hi], pieces[lo:hi], strict=True)) for run_id, lo, hi in run_ranges}
            metrics_of[code].append((first_trial, rank, metric, by_run))
    for t, metrics in zip(ours, metrics_of, strict=True):
        t.clusters = {metric: by_run for _first, _rank, metric, by_run in sorted(metrics, key=lambda m: m[:2])}
