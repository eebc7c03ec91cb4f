"""Charts that cannot mislead: nothing drawn without data (a sentence says so), a single point on a readable
axis, speed and rate axes from zero, the catalog's reading of the marks on every chart, and a page that has
nothing to draw loading no chart code."""

from __future__ import annotations

from fmbench.analysis import display as d
from fmbench.analysis import figure_catalog as fc
from fmbench.views import charts
from fmbench.views.page import draws_a_chart
from fmbench.views.render import Renderer

TTFT = fc.CATALOG.chart("ttft")


def _ttft(medians: list[float | None], p90s: list[float | None]) -> charts.Chart:
    labels = [f"scenario {i}" for i in range(len(medians))]
    return charts.median_p90("ttft-x", "Time to first token by scenario", labels,
                             [charts.Series("", medians, p90s)], value_title=TTFT.axis, label_title="Scenario",
                             fmt=d.seconds, what=TTFT.what, spec=TTFT)


def test_a_chart_without_any_value_is_a_sentence_not_empty_axes() -> None:
    chart = _ttft([None, None], [None, None])
    assert not chart.drawn and chart.figure_json == {}
    assert chart.empty == "TTFT was not recorded for these scenarios, so there is nothing to chart."
    html = Renderer().env.from_string('{% import "_macros.html" as m %}{{ m.chart(c) }}').render(c=chart)
    assert "data-chart" not in html and "application/json" not in html and chart.empty in html
    assert "<figure" not in html  # a line of text, not a card
    assert not draws_a_chart([chart])  # a page holding only this chart loads no chart code


def test_a_chart_without_any_value_gets_no_card_and_its_title_is_named_once_beside_the_charts_drawn() -> None:
    drawn = _ttft([0.8, 0.9], [1.1, 1.2])
    one = charts.median_p90("one", "Output tokens/s by scenario", ["scenario 0", "scenario 1"],
                            [charts.Series("", [41.0, None], [44.0, None])], value_title="tokens/s",
                            label_title="Scenario", fmt=lambda v: None if v is None else f"{v:.0f}")
    blank = [charts.median_p90(f"blank-{i}", title, ["scenario 0"], [charts.Series("", [None], [None])],
                               value_title="s", label_title="Scenario", fmt=d.seconds, what="TTFT")
             for i, title in enumerate(("Time to first token, Quick", "Time to first token, Full"))]
    assert [c.blank for c in (drawn, one, *blank)] == [False, False, True, True]
    assert one.value_said and not one.drawn  # one value is said as a number, in its card
    html = Renderer().env.from_string('{% import "_macros.html" as m %}{{ m.charts(cs) }}').render(
        cs=[blank[0], drawn, one, blank[1]])
    assert html.count("<figure") == 2 and html.count("data-chart=") == 1
    assert "nothing to chart" not in html and "blank-0" not in html and "blank-1" not in html
    assert html.count("No value recorded, so not charted") == 1
    assert "not charted: Time to first token, Quick; Time to first token, Full." in html
    assert "median 41, p90 44" in html
    nothing = Renderer().env.from_string('{% import "_macros.html" as m %}{{ m.charts(cs) }}').render(cs=blank)
    assert "<figure" not in nothing and 'class="grid"' not in nothing
    assert nothing.count("No value recorded, so not charted") == 1


def test_a_drawn_chart_says_what_its_marks_mean_and_starts_at_zero() -> None:
    chart = _ttft([0.8, 0.9, None], [1.1, 1.2, None])  # two values: one alone is said, not drawn
    assert chart.drawn and chart.marks == TTFT.marks
    assert chart.figure_json["layout"]["xaxis"]["rangemode"] == "tozero"
    assert "not recorded for scenario 2" in (chart.note or "")
    html = Renderer().env.from_string('{% import "_macros.html" as m %}{{ m.chart(c) }}').render(c=chart)
    assert '<p class="chart-marks">Dot: median; whisker: to the p90.' in html
    assert draws_a_chart({"sections": [(chart,)]})


def test_one_run_over_time_is_a_point_on_a_category_axis_and_a_rate_axis_runs_from_0_to_100_percent() -> None:
    chart = charts.time_series("pcc-availability", "PCC execution success", [("iPhone", ["2026-11-06T08:39:03"], [1.0])],
                               value_title="Execution success", fmt=d.percent, rate=True)
    layout = chart.figure_json["layout"]
    assert layout["xaxis"]["type"] == "category"  # not a date axis ticking in fractions of a millisecond
    assert chart.figure_json["data"][0]["x"] == ["2026-11-06 08:39:03 UTC"]
    assert layout["yaxis"]["range"] == [0, 1.05] and layout["yaxis"]["tickformat"] == ".0%"
    two = charts.time_series("t", "t", [("a", ["2026-11-06T08:39:03", "2026-11-07T08:39:03"], [1.0, 0.5])],
                             value_title="v", fmt=d.percent, rate=True)
    assert two.figure_json["layout"]["xaxis"]["type"] == "date"


def test_a_change_chart_keeps_zero_in_view_and_takes_its_short_axis_and_marks_from_the_catalog() -> None:
    spec = fc.CATALOG.delta_charts[0]
    chart = charts.deltas_with_intervals("d", spec.title, ["a"], [0.2], [0.1], [0.3], value_title="ignored",
                                         fmt=lambda v: None if v is None else f"{v:+.3f}", verdicts=["worse"], spec=spec)
    assert chart.figure_json["layout"]["xaxis"]["title"]["text"] == spec.axis
    assert chart.figure_json["layout"]["xaxis"]["rangemode"] == "tozero" and chart.marks == spec.marks
    nothing = charts.deltas_with_intervals("d", spec.title, ["a"], [None], [None], [None], value_title="v",
                                           fmt=lambda v: None, verdicts=["not comparable"], spec=spec)
    assert not nothing.drawn and nothing.empty


def test_a_trend_chart_says_not_recorded_only_for_the_series_and_builds_it_does_not_draw() -> None:
    drawn = charts.median_p90(
        "ttft-trend", "Time to first token across OS builds", ["26A5353q", "26B5012a", "26B5013b"],
        [charts.Series("Task capture", [0.4, 0.5, 0.45], [0.6, 0.7, 0.65]),
         charts.Series("Journal summary", [None, 0.8, None], [None, 0.9, None])],
        value_title="seconds", label_title="OS build", fmt=lambda v: None if v is None else f"{v:.3f} s",
        horizontal=False, what="Time to first token",
    )
    assert drawn.note == ("Time to first token not recorded for Journal summary on 26A5353q, 26B5013b: "
                          "left as a gap, not plotted as 0.")
    every = charts.median_p90(
        "ttft-all", "Time to first token across OS builds", ["26A5353q", "26B5012a"],
        [charts.Series("Task capture", [0.4, 0.5], [0.6, 0.7])],
        value_title="seconds", label_title="OS build", fmt=lambda v: None if v is None else f"{v:.3f} s",
        horizontal=False, what="Time to first token",
    )
    assert every.note is None


def test_a_chart_of_runs_draws_each_configuration_as_a_trace_on_one_axis_exploratory_runs_open() -> None:
    ttft = fc.CATALOG.chart("ttft")
    groups = [
        charts.Group("Practical Quick · Cold session", ["Mac · 25B78 · a", "Mac · 26A5 · b"], [0.4, None], [0.5, None],
                     [False, False]),
        charts.Group("Practical Full · Cold session", ["iPad · 24A · c"], [0.9], [1.2], [True]),
    ]
    chart = charts.runs_by_configuration("ttft-on-device", "TTFT", groups, fmt=str, what="TTFT", spec=ttft)
    traces = chart.figure_json["data"]
    assert [t["name"] for t in traces] == [g.name for g in groups]  # one chart, a trace a configuration
    assert traces[1]["marker"]["symbol"] == ["circle-open"] and "open dot: an exploratory run" in (chart.marks or "")
    assert chart.note is not None and "Mac · 26A5 · b" in chart.note and "not plotted as 0" in chart.note
    one = charts.runs_by_configuration("x", "TTFT", groups[1:], fmt=str, what="TTFT", spec=ttft)
    assert one.figure_json == {} and one.value_said and "median 0.9" in (one.empty or "")


def test_an_exploratory_run_over_time_is_an_open_dot_apart_from_a_publishable_ones_filled_dot() -> None:
    series = [("a", ["2026-11-06T08:39:03", "2026-11-07T08:39:03"], [1.0, 0.5]), ("b", ["2026-11-08T08:39:03"], [0.9])]
    chart = charts.time_series("t", "t", series, value_title="v", fmt=d.percent, rate=True,
                               exploratory=[[False, True], [False]])
    a, b = chart.figure_json["data"]
    assert a["marker"]["symbol"] == ["circle", "circle-open"] and "symbol" not in b["marker"]
    assert "open dot: an exploratory run" in (chart.marks or "")
    plain = charts.time_series("t", "t", series, value_title="v", fmt=d.percent, rate=True)
    assert "exploratory" not in (plain.marks or "")
