"""Speed and memory of PCC runs from the trials PCC itself answered.

A PCC run whose fallback mode is on may have trials that ran on the device
instead; its stored figures pool them (that is what the runner's summaries
hold and what the stored-summary check compares). Pages that show a PCC run's
latency, throughput or memory replace those figures with the PCC-executed
trials' own (:func:`fmbench.figures.distribution`, as everywhere) and say how
many trials fell back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import duckdb

from fmbench.figures import distribution

SPEED_KEYS = ("ttft_median", "ttft_p90", "tps_median", "tps_p90", "memory_max")
"""The ``scenario_figures`` columns a PCC page takes from PCC-executed trials only."""


@dataclass(frozen=True)
class PccSpeed:
    fell_back: int
    """Trials of the scenario that ran on the device instead."""
    figures: dict[str, float | None]
    """:data:`SPEED_KEYS` over the PCC-executed trials."""


def pcc_speed(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str]) -> dict[tuple[str, str], PccSpeed]:
    """(run id, scenario id) -> its speed and memory over PCC-executed trials, for every scenario of these runs
    where some trial fell back (the others' stored figures are already PCC's own)."""
    values: dict[tuple[str, str], tuple[list[float], list[float], list[float], int]] = {}
    if not run_ids:
        return {}
    for run_id, sid, executed, ttft, tps, memory in con.execute(
        "SELECT run_id, scenario_id, executed_model, time_to_first_token, output_tokens_per_second, "
        "peak_memory_bytes FROM trials WHERE list_contains(?, run_id) AND (run_id, scenario_id) IN "
        "(SELECT (run_id, scenario_id) FROM trials WHERE list_contains(?, run_id) "
        "AND executed_model <> 'privateCloudCompute') ORDER BY run_id, ordinal",
        [list(run_ids), list(run_ids)],
    ).fetchall():
        ttfts, tpss, memories, fell = values.setdefault((run_id, sid), ([], [], [], 0))
        if executed != "privateCloudCompute":
            values[(run_id, sid)] = (ttfts, tpss, memories, fell + 1)
            continue
        if ttft is not None:
            ttfts.append(ttft)
        if tps is not None:
            tpss.append(tps)
        if memory is not None:
            memories.append(int(memory))
    out = {}
    for key, (ttfts, tpss, memories, fell) in values.items():
        t, s, m = distribution(ttfts), distribution(tpss), distribution(memories)
        out[key] = PccSpeed(
            fell,
            {"ttft_median": t.median, "ttft_p90": t.p90, "tps_median": s.median, "tps_p90": s.p90,
             "memory_max": m.maximum},
        )
    return out


def with_pcc_speed(row: dict[str, Any], speed: PccSpeed | None) -> dict[str, Any]:
    """A PCC run's scenario row with its speed and memory from PCC-executed trials, and the fallback count."""
    if speed is None:
        return {**row, "pcc_fell_back": 0}
    return {**row, **speed.figures, "pcc_fell_back": speed.fell_back}


def by_executed_model(con: duckdb.DuckDBPyConnection, run_id: str) -> list[dict[str, Any]]:
    """Per scenario whose trials ran on more than one executed model: each model's trial count, latency,
    throughput and peak memory (:func:`fmbench.figures.model_figures`, as ``summarize --json`` gives them)."""
    grouped: dict[tuple[str, str], dict[str, list[float]]] = {}
    titles: dict[str, str] = {}
    for sid, title, executed, duration, ttft, tps, memory in con.execute(
        "SELECT scenario_id, scenario_title, executed_model, duration, time_to_first_token, output_tokens_per_second, "
        "peak_memory_bytes FROM trials WHERE run_id = ? AND scenario_id IN (SELECT scenario_id FROM trials "
        "WHERE run_id = ? GROUP BY scenario_id HAVING count(DISTINCT executed_model) > 1) ORDER BY ordinal",
        [run_id, run_id],
    ).fetchall():
        titles.setdefault(sid, title)
        values = grouped.setdefault((sid, executed), {"duration": [], "ttft": [], "tps": [], "memory": []})
        for key, value in (("duration", duration), ("ttft", ttft), ("tps", tps), ("memory", memory)):
            if value is not None:
                values[key].append(value)
    out = []
    for (sid, executed), values in grouped.items():
        ttft, tps = distribution(values["ttft"]), distribution(values["tps"])
        out.append(
            {
                "scenario_id": sid,
                "title": titles[sid],
                "executed_model": executed,
                "trial_count": len(values["duration"]),
                "duration_median": distribution(values["duration"]).median,
                "ttft_median": ttft.median,
                "ttft_p90": ttft.p90,
                "tps_median": tps.median,
                "tps_p90": tps.p90,
                "memory_max": distribution(values["memory"]).maximum,
            }
        )
    return out
