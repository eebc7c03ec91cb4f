"""Each figure's history over OS builds read from a real database, and its change point found at the build a
planted change starts (fmbench.comparison.build_history)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest

from fmbench.analysis.changepoints import changes_over_history
from fmbench.comparison.build_history import read_histories
from fmbench.ingest import ingest_paths
from fmbench.storage.db import connect

from testdata import compare_runbuilder

rb = compare_runbuilder()
BASE = rb.RunSpec(scenarios=(rb.TASK_CAPTURE,))
VERSION_ORDER = ("24A5264n", "24A5301a", "24A335", "24B5010b")
# Measured in another order than their versions: the release 24A335 first, a beta last.
MEASURED = {"24A335": 1, "24B5010b": 2, "24A5301a": 3, "24A5264n": 4}


@pytest.fixture(scope="module")
def database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("history")
    for build, day in MEASURED.items():
        slower = 0.1 if VERSION_ORDER.index(build) >= 2 else 0.0  # from the release 24A335 on
        spec = BASE.but(build=build, started=datetime(2026, 11, day, 9, 0, tzinfo=UTC), noise_seed=day,
                        ttft_offset=slower)
        rb.write_run(spec, root / "runs", build)
    report = ingest_paths([root / "runs"], root / "db.duckdb")
    assert report.ok
    return root / "db.duckdb"


def test_a_series_holds_every_sample_of_every_build_in_version_order(database: Path) -> None:
    with connect(database, read_only=True) as con:
        histories = read_histories(con)
    ttft = next(h for h in histories if h.figure.key == "ttft_median")
    assert ttft.scenario_id == "task-capture" and ttft.group.hardware_model == "iPhone18,1"
    assert ttft.series.builds == VERSION_ORDER
    assert ttft.series.values.shape == (25, 4) and not np.isnan(ttft.series.values).any()
    assert ttft.series.statistic == "median"
    assert [b for b, _ in ttft.runs] == list(VERSION_ORDER) and all(len(ids) == 1 for _, ids in ttft.runs)
    success = next(h for h in histories if h.figure.key == "task_success")
    assert success.series.statistic == "mean" and ((success.series.values >= 0) & (success.series.values <= 1)).all()
    assert "peak_memory" not in {h.figure.key for h in histories}


def test_the_change_point_of_a_real_history_is_the_build_the_change_started(database: Path) -> None:
    with connect(database, read_only=True) as con:
        histories = read_histories(con)
    listed = changes_over_history([h.series for h in histories])
    moved = {(d.subject.key[3], d.subject.key[4]): d.subject for d in listed.change_points}
    point = moved[("task-capture", "ttft_median")]
    assert (point.previous_build, point.build) == ("24A5301a", "24A335")
    assert point.delta == pytest.approx(0.1, abs=0.03)
    ttft = next(h for h in histories if h.figure.key == "ttft_median")
    assert ttft.runs_of(point.after) == tuple(ids[0] for b, ids in ttft.runs if b in ("24A335", "24B5010b"))
    assert ("task-capture", "task_success") not in moved  # its pass rate never moved


def test_one_device_only_when_asked(database: Path) -> None:
    with connect(database, read_only=True) as con:
        assert read_histories(con, hardware_model="Mac16,12") == []
        assert read_histories(con, hardware_model="iPhone18,1")
