"""A device's trend across OS builds: builds in version order, not run date (it reads from the oldest OS to the
newest even where an older OS's update was measured after a newer OS's seed), and an exploratory run's point drawn
apart from a publishable run's."""

from __future__ import annotations

from datetime import datetime

from fmbench.analysis import figure_catalog as fc
from fmbench.analysis.os_builds import build_sort_key
from fmbench.views import catalog, charts
from fmbench.views.blocks import Table


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


def _trend(key: str, top: float) -> charts.Chart:
    ttft = fc.CATALOG.chart("ttft")
    return charts.median_p90(f"{ttft.id}-{key}", "TTFT", ["25B78", "26A5378f"],
                             [charts.Series("Task capture", [top / 2, top / 3], [top, top / 2])],
                             value_title=ttft.axis, label_title="OS build", fmt=str, horizontal=False, spec=ttft)


def test_a_devices_configurations_charts_of_one_figure_share_one_value_axis_pcc_apart() -> None:
    table = Table("t", "t", [], [])
    sections = [
        catalog.ConfigSection("On-device · Quick", [], table, [_trend("c0", 0.4)], False, "c0"),
        catalog.ConfigSection("On-device · Full", [], table, [_trend("c1", 1.0)], False, "c1"),
        catalog.ConfigSection("PCC · Quick", [], table, [_trend("c2", 9.0)], True, "c2"),
    ]
    shared = catalog._on_shared_axes(sections)
    ranges = [s.charts[0].figure_json["layout"]["yaxis"].get("range") for s in shared]
    assert ranges[0] == ranges[1] == [0, 1.0 * 1.08]  # small multiples: the on-device charts on one axis
    assert ranges[2] is None  # the only PCC chart keeps its own axis, never the on-device one
    assert "every on-device configuration's chart" in (shared[0].charts[0].marks or "")
