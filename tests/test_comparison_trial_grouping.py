"""A comparison side's trials, grouped per scenario by columns, are exactly what a walk over them trial by trial
gives: the same values in the same order (flat lists and the cluster bootstrap's run and sample clusters, whose
order seeds the resamples), the same counts, PCC fallbacks and failed attempts, bit for bit."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import duckdb
import pytest

from fmbench.analysis import figure_catalog as fc
from fmbench.analysis.revisions import fixtures_registry
from fmbench.comparison.load import Trials, load_side, side_scenario_order
from fmbench.comparison.selection import Side, fetch_runs, parse_side
from fmbench.ingest import ingest_paths
from fmbench.storage.queries import ordered_scenarios, scenario_order

from testdata import FIXTURES


@pytest.fixture(scope="module")
def con(tmp_path_factory: pytest.TempPathFactory) -> Iterator[duckdb.DuckDBPyConnection]:
    path = tmp_path_factory.mktemp("grouping") / "corpus.duckdb"
    assert ingest_paths([FIXTURES], path, registry=fixtures_registry()).ok
    connection = duckdb.connect(str(path), read_only=True)
    yield connection
    connection.close()


def _walked(con: duckdb.DuckDBPyConnection, side: Side) -> dict[str, Trials]:
    """The reference: the scenarios with figures in the side's run order, then every trial in (run, ordinal)
    order added one value at a time, then each non-warmup failure a 0 in task success's outcomes by (scenario, run,
    sample)."""
    ids = list(side.run_ids)
    marks = ", ".join("?" for _ in ids)
    pcc = all(r.route == "privateCloudCompute" for r in side.runs)
    figures = con.execute(
        f"SELECT scenario_id FROM scenario_figures WHERE run_id IN ({marks}) ORDER BY list_position(?, run_id), ordinal",
        [*ids, ids],
    ).fetchall()
    data: dict[str, Trials] = {sid: Trials() for (sid,) in figures}
    # The series of the compared figures, in catalog order (task success's outcomes over attempts, prompt pass's
    # over trials, the constraint scores, then the speed values: PCC-executed trials only on a PCC side), each
    # read as its first figure of the catalog says.
    by_series: dict[str, fc.Figure] = {}
    for f in fc.CATALOG.compared(for_tokens=True):
        by_series.setdefault(f.series, f)
    sources = list(dict.fromkeys(f.source for f in by_series.values()))
    for sid, run, sample, source, executed, *values in con.execute(
        f"SELECT scenario_id, run_id, sample_id, token_count_source, executed_model, {', '.join(sources)} "
        f"FROM trials WHERE run_id IN ({marks}) ORDER BY run_id, ordinal",
        ids,
    ).fetchall():
        recorded = dict(zip(sources, values, strict=True))
        t = data.setdefault(sid, Trials())
        for series in by_series:
            t.values.setdefault(series, [])
        t.trials += 1
        fell_back = pcc and executed != "privateCloudCompute"
        if fell_back:
            t.fell_back += 1
        else:
            t.token_sources.append(source)
        for series, f in by_series.items():
            value = recorded[f.source]
            if value is None or (f.speed and fell_back):
                continue
            value = float(value) if f.statistic == "rate" else value
            t.values[series].append(value)
            if f.statistic != "maximum":  # a maximum: shown, never resampled
                t.add_clustered(series, run, sample, value)
    for sid, run, sample, n in con.execute(
        "SELECT scenario_id, run_id, coalesce(sample_id, ''), count(*) FROM failures "
        f"WHERE run_id IN ({marks}) AND NOT is_warmup GROUP BY scenario_id, run_id, sample_id "
        "ORDER BY scenario_id, run_id, sample_id",
        ids,
    ).fetchall():
        t = data.setdefault(sid, Trials())
        t.failures += n
        for series in (series for series, f in by_series.items() if f.attempts):
            t.values.setdefault(series, []).extend([0.0] * n)
            for _ in range(n):
                t.add_clustered(series, run, sample, 0.0)
    return data


def _exact(value: Any) -> Any:
    """``value`` with every float as its eight bytes and every dict as its items in order: equal only when the
    values, their order and every bit of every float are."""
    if isinstance(value, float):
        return ("float", struct.pack("<d", value))
    if isinstance(value, dict):
        return [(_exact(k), _exact(v)) for k, v in value.items()]
    if isinstance(value, list | tuple):
        return [_exact(v) for v in value]
    if isinstance(value, Trials):
        return [(name, _exact(getattr(value, name))) for name in value.__dataclass_fields__]
    return (type(value).__name__, value)


def _sides(con: duckdb.DuckDBPyConnection) -> list[Side]:
    """Every run alone, and every run of one device, OS build and route pooled."""
    runs = fetch_runs(con, "TRUE", [])
    pools: dict[tuple[Any, ...], list[Any]] = {}
    for run in runs:
        pools.setdefault((run.hardware_model, run.os_build, run.route), []).append(run)
    groups = [(run,) for run in runs] + [tuple(pool) for pool in pools.values() if len(pool) > 1]
    return [Side(parse_side(group[0].run_id), "pooled", group, group) for group in groups]


def test_a_sides_trials_grouped_by_columns_are_bit_for_bit_the_trial_by_trial_walk(con: Any) -> None:
    sides = _sides(con)
    assert any(len(side.runs) > 1 for side in sides)
    with_fallbacks = with_failures = 0
    for side in sides:
        data, titles, _ = load_side(con, side)
        walked = _walked(con, side)
        assert _exact(data) == _exact(walked), side.run_ids
        assert list(titles) == list(data)
        with_fallbacks += any(t.fell_back for t in data.values())
        with_failures += any(t.failures for t in data.values())
    # The corpus exercises both: PCC trials that ran on the device, and failed attempts.
    assert with_fallbacks and with_failures


def _ordered_in_sql(con: Any, run_ids: list[str]) -> list[str]:
    found = con.execute(
        "SELECT f.scenario_id FROM scenario_figures f JOIN runs r ON r.run_id = f.run_id "
        "WHERE list_contains(?, f.run_id) ORDER BY r.started_at DESC, r.run_id, f.ordinal",
        [run_ids],
    ).fetchall()
    return list(dict.fromkeys(sid for (sid,) in found))


def test_the_scenario_order_from_the_rows_read_is_the_order_sql_gives(con: Any) -> None:
    # A comparison orders its scenarios from the rows its sides' loads read, without another query: the newest
    # run's order first, then what it lacks from the next newest (a tie in start time by run id).
    sides = _sides(con)
    loaded = {side.run_ids: load_side(con, side)[2] for side in sides}
    pairs = [(a, b) for a in sides for b in sides if not set(a.run_ids) & set(b.run_ids)][:400]
    assert len(pairs) > 100
    for a, b in pairs:
        expected = _ordered_in_sql(con, [*a.run_ids, *b.run_ids])
        assert side_scenario_order((a, b), loaded[a.run_ids] + loaded[b.run_ids]) == expected, (a.run_ids, b.run_ids)
        assert ordered_scenarios(con, [*a.run_ids, *b.run_ids]) == expected


def test_runs_that_started_together_give_their_scenarios_in_run_id_order() -> None:
    at = datetime(2026, 10, 1, tzinfo=UTC)
    listed = [("b", 0, "s2"), ("a", 1, "s3"), ("a", 0, "s1"), ("c", 0, "s4"), ("b", 1, "s1")]
    started = {"a": at, "b": at, "c": at - timedelta(days=1)}
    assert scenario_order(listed, started) == ["s1", "s3", "s2", "s4"]
