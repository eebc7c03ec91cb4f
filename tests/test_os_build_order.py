"""OS builds in version order, not run date: a device's trend across builds reads from the oldest OS to the newest
even where an older OS's update was measured after a newer OS's seed."""

from __future__ import annotations

from datetime import datetime

from fmbench.analysis.os_builds import version_key
from fmbench.views import catalog


def test_build_ids_sort_by_os_version_seeds_before_their_release() -> None:
    ids = ["26A5378f", "26A362", "25B78", "26A5353q", "25A354", "24A5264n", "24A5256a", "not-a-build"]
    assert sorted(ids, key=version_key) == [
        "24A5256a", "24A5264n", "25A354", "25B78", "26A5353q", "26A5378f", "26A362", "not-a-build",
    ]


def test_a_devices_builds_are_in_os_version_order_not_run_date_a_build_not_recorded_last() -> None:
    # the order the issue saw on a device's trend chart: a macOS 27 seed, macOS 26.1, a later macOS 27 seed
    runs = [
        {"os_build": "26A5353q", "started_at": datetime(2026, 6, 19)},
        {"os_build": None, "started_at": datetime(2026, 7, 1)},
        {"os_build": "25B78", "started_at": datetime(2026, 11, 2)},
        {"os_build": "26A5378f", "started_at": datetime(2026, 11, 12)},
        {"os_build": "25B78", "started_at": datetime(2026, 11, 13)},
    ]
    assert catalog._build_order(runs) == ["25B78", "26A5353q", "26A5378f", "not recorded"]
