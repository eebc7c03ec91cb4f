"""A device's trend across OS builds: builds in version order, not run date (it reads from the oldest OS to the
newest even where an older OS's update was measured after a newer OS's seed), and an exploratory run's point drawn
apart from a publishable run's."""

from __future__ import annotations

from datetime import datetime

from fmbench.analysis import figure_catalog as fc
from fmbench.analysis.os_builds import build_sort_key
from fmbench.views import catalog, charts, device_charts


def test_build_ids_sort_by_os_version_seeds_before_their_release() -> None:
    ids = ["26A5378f", "26A362", "25B78", "26A5353q", "25A354", "24A5264n", "24A5256a", "not-a-build"]
    assert sorted(ids, key=build_sort_key) == [
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


def test_an_exploratory_runs_point_is_an_open_dot_and_the_caption_says_so() -> None:
    series = [charts.Series("Task capture", [0.4, 0.5, 0.45], [0.6, 0.7, 0.65], [False, True, False])]
    chart = charts.median_p90("c", "TTFT across OS builds", ["25B78", "26A5353q", "26A5378f"], series,
                              value_title="s", label_title="OS build", fmt=str, horizontal=False)
    assert chart.figure_json["data"][0]["marker"]["symbol"] == ["circle", "circle-open", "circle"]
    assert chart.marks is not None and chart.marks.endswith("open dot: an exploratory run, never ranked.")
    plain = charts.median_p90("p", "TTFT", ["25B78", "26A5353q"], [charts.Series("", [0.4, 0.5], [0.6, 0.7])],
                              value_title="s", label_title="OS build", fmt=str, horizontal=False)
    assert "symbol" not in plain.figure_json["data"][0]["marker"] and "open dot" not in (plain.marks or "")


def test_a_single_value_is_said_as_a_number_and_not_drawn() -> None:
    one = charts.median_p90("one", "TTFT per device", ["iPhone 17 Pro", "iPad Pro M5"],
                            [charts.Series("", [0.412, None], [0.61, None])], value_title="s",
                            label_title="Device", fmt=lambda v: None if v is None else f"{v:.3f} s")
    assert not one.drawn and one.figure_json == {}
    assert one.empty == "One value, said rather than drawn: iPhone 17 Pro: median 0.412 s, p90 0.610 s."
    two = charts.median_p90("two", "TTFT per device", ["iPhone 17 Pro", "iPad Pro M5"],
                            [charts.Series("", [0.412, 0.5], [0.61, 0.7])], value_title="s", label_title="Device",
                            fmt=str)
    assert two.drawn


def _trend(name: str, builds: list[str], ttft: list[float | None], *, service: bool = False,
           exploratory: frozenset[str] = frozenset(), more: int = 0) -> device_charts.Trend:
    values = {b: (t, None if t is None else t * 2) for b, t in zip(builds, ttft, strict=True)}
    workloads = {c.id: [device_charts.Workload("Task capture", values)] for c in fc.CATALOG.charts}
    return device_charts.Trend(name, service, builds, exploratory, workloads, more)


def test_a_devices_configurations_are_traces_of_one_chart_a_figure_and_route_pcc_on_its_own() -> None:
    found = device_charts.device_charts([
        _trend("Quick", ["26A5378f", "25B78"], [0.4, 0.5], exploratory=frozenset({"25B78"})),
        _trend("Full", ["26A5353q", "26A5378f"], [1.0, None]),
        _trend("Quick", ["25B78", "26A5378f"], [3.0, 9.0], service=True, more=2),
    ])
    assert [c.id for c in found] == [f"{c.id}-{route}" for c in fc.CATALOG.charts for route in ("on-device", "pcc")]
    on_device, pcc = found[0], found[1]
    assert [t["name"] for t in on_device.figure_json["data"]] == ["Quick · Task capture", "Full · Task capture"]
    # every trace over the union of the route's builds, in OS version order (never the run date's)
    builds = ["25B78", "26A5353q", "26A5378f"]
    assert on_device.figure_json["layout"]["xaxis"]["categoryarray"] == builds
    assert all(t["x"] == builds for t in on_device.figure_json["data"])
    assert on_device.figure_json["data"][0]["marker"]["symbol"] == ["circle-open", "circle", "circle"]
    assert on_device.marks is not None and "open dot: an exploratory run" in on_device.marks
    assert "A trace: one workload of one configuration, its dots beside the other traces' at each OS build." in on_device.marks
    assert on_device.figure_json["layout"]["scattermode"] == "group"  # side by side in a build's column
    # a gap said only where the configuration ran; an unmeasured build said once, never "not recorded"
    assert on_device.note == ("TTFT not recorded for Full · Task capture on 26A5378f: left as a gap, not plotted as "
                              "0. A configuration has no point on an OS build it was not measured on.")
    assert [r.cells[:2] for r in on_device.table.rows] == [
        ["Quick · Task capture", "26A5378f"], ["Quick · Task capture", "25B78"],
        ["Full · Task capture", "26A5353q"], ["Full · Task capture", "26A5378f"]]
    # PCC: a chart of its own, never an on-device axis, and its caption says why
    assert pcc.title.startswith("Time to first token across OS builds, PCC: Quick · Task capture")
    assert "network and server included" in pcc.title and pcc.marks is not None
    assert pcc.marks.endswith(device_charts.PCC_MARKS) and device_charts.PCC_MARKS not in (on_device.marks or "")
    assert [t["name"] for t in pcc.figure_json["data"]] == ["Task capture"]
    assert pcc.note == "Quick: its first 8 workloads drawn, 2 more in its section's table."  # what is left out, said


def test_a_devices_chart_of_one_value_says_it_as_a_number() -> None:
    (ttft, *_) = device_charts.device_charts([_trend("Quick", ["25B78", "26A5378f"], [0.4, None])])
    assert not ttft.drawn and ttft.value_said
    assert ttft.empty is not None and ttft.empty.startswith("One value, said rather than drawn: Task capture, 25B78")


def test_a_device_chart_of_one_configuration_names_it_in_its_title_and_each_workload_in_the_legend() -> None:
    two = {b: (0.4, 0.6) for b in ("25B78", "26A5378f")}
    trend = device_charts.Trend("Quick · Cold session", False, ["25B78", "26A5378f"], frozenset(),
                                {c.id: [device_charts.Workload("Task capture", two), device_charts.Workload("Summary", two)]
                                 for c in fc.CATALOG.charts})
    (ttft, *_) = device_charts.device_charts([trend])
    assert ttft.title == "Time to first token across OS builds, on-device: Quick · Cold session"
    assert [t["name"] for t in ttft.figure_json["data"]] == ["Task capture", "Summary"]
    assert ttft.marks is not None and ttft.marks.endswith(" A trace: one workload, its dots beside the other traces' "
                                                          "at each OS build.")
    assert ttft.note is None  # every build of it measured, every value recorded: nothing to say
