"""Speed and memory of PCC runs from the trials PCC itself answered.

A PCC run whose fallback mode is on may have trials that ran on the device
instead; its stored figures pool them (that is what the runner's summaries
hold and what the stored-summary check compares). Pages that show a PCC run's
latency, throughput or memory replace those figures with the PCC-executed
trials' own (:func:`fmbench.analysis.figures.distribution`, as everywhere) and say how
many trials fell back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import duckdb

from fmbench.analysis import figure_catalog as fc


@dataclass(frozen=True)
class PccSpeed:
    fell_back: int
    """Trials of the scenario that ran on the device instead."""
    figures: dict[str, float | None]
    """The catalog's stored speed figures (latency, throughput, memory: ``Catalog.stored_speed``) over the
    PCC-executed trials, by their ``scenario_figures`` column."""


def pcc_speed(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str]) -> dict[tuple[str, str], PccSpeed]:
    """(run id, scenario id) -> its speed and memory over PCC-executed trials, for every scenario of these runs
    where some trial fell back (the others' stored figures are already PCC's own)."""
    if not run_ids:
        return {}
    speed = fc.CATALOG.stored_speed()
    sources = list(dict.fromkeys(f.source for f in speed))
    values: dict[tuple[str, str], tuple[dict[str, list[float]], list[int]]] = {}
    for run_id, sid, executed, *read in con.execute(
        f"SELECT run_id, scenario_id, executed_model, {', '.join(sources)} FROM trials WHERE list_contains(?, run_id) "
        "AND (run_id, scenario_id) IN (SELECT (run_id, scenario_id) FROM trials WHERE list_contains(?, run_id) "
        "AND executed_model <> 'privateCloudCompute') ORDER BY run_id, ordinal",
        [list(run_ids), list(run_ids)],
    ).fetchall():
        recorded, fell = values.setdefault((run_id, sid), ({s: [] for s in sources}, [0]))
        if executed != "privateCloudCompute":
            fell[0] += 1
            continue
        for source, value in zip(sources, read, strict=True):
            if value is not None:
                recorded[source].append(value)
    return {
        key: PccSpeed(fell[0], {f.stored: f.of(recorded[f.source]) for f in speed if f.stored})
        for key, (recorded, fell) in values.items()
    }


def with_pcc_speed(row: dict[str, Any], speed: PccSpeed | None) -> dict[str, Any]:
    """A PCC run's scenario row with its speed and memory from PCC-executed trials, and the fallback count."""
    if speed is None:
        return {**row, "pcc_fell_back": 0}
    return {**row, **speed.figures, "pcc_fell_back": speed.fell_back}


def by_executed_model(con: duckdb.DuckDBPyConnection, run_id: str) -> list[dict[str, Any]]:
    """Per scenario whose trials ran on more than one executed model: each model's trial count and the catalog's
    figures of the executed-model table (latency, throughput and peak memory; :func:`fmbench.analysis.figures.model_figures`,
    as ``summarize --json`` gives them), by their stored columns."""
    shown = [fc.CATALOG.column(k) for k in fc.CATALOG.columns("executed-model")]
    sources = list(dict.fromkeys(f.source for f in shown))
    grouped: dict[tuple[str, str], tuple[dict[str, list[float]], list[int]]] = {}
    titles: dict[str, str] = {}
    for sid, title, executed, *read in con.execute(
        f"SELECT scenario_id, scenario_title, executed_model, {', '.join(sources)} FROM trials WHERE run_id = ? "
        "AND scenario_id IN (SELECT scenario_id FROM trials WHERE run_id = ? GROUP BY scenario_id "
        "HAVING count(DISTINCT executed_model) > 1) ORDER BY ordinal",
        [run_id, run_id],
    ).fetchall():
        titles.setdefault(sid, title)
        recorded, trials = grouped.setdefault((sid, executed), ({s: [] for s in sources}, [0]))
        trials[0] += 1
        for source, value in zip(sources, read, strict=True):
            if value is not None:
                recorded[source].append(value)
    return [
        {
            "scenario_id": sid,
            "title": titles[sid],
            "executed_model": executed,
            "trial_count": trials[0],
            **{f.stored or f.key: f.of(recorded[f.source]) for f in shown},
        }
        for (sid, executed), (recorded, trials) in grouped.items()
    ]
