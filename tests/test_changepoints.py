"""Changes over a build history: E-divisive change points, the paired permutation test and the list's
false-discovery control (fmbench.analysis.changepoints)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from fmbench.analysis.changepoints import (
    DEFAULT_LEVEL,
    FIGURES,
    SAMPLES,
    Hypothesis,
    Series,
    Settings,
    changes_over_history,
    control_false_discoveries,
    find_change_points,
    method_statement,
    permutation_cap,
    series_from_cells,
)
from fmbench.analysis.os_builds import in_version_order

BUILDS = ("26A5353q", "26A5378f", "26B5012a", "26B5013b", "26C5001a")


def history(seed: int, builds: int = 5, step_at: int | None = None, step: float = 0.3, samples: int = 25) -> np.ndarray:
    """Per-sample medians of a latency-like figure: each sample its own level (spread far wider than the noise
    between builds), 10% noise a build, and from build ``step_at`` on every sample ``step`` slower."""
    rng = np.random.default_rng(seed)
    level = np.exp(rng.normal(0.0, 0.5, samples))[:, None]
    values = level * np.exp(rng.normal(0.0, 0.1, (samples, builds)))
    if step_at is not None:
        values[:, step_at:] *= 1 + step
    return values


def series(values: np.ndarray, key: str = "mac", statistic: str = "median") -> Series:
    return Series((key, "on-device", "2026.07", "task-capture", "ttft_median"), BUILDS[: values.shape[1]], values, statistic)  # type: ignore[arg-type]


@pytest.mark.parametrize("planted", [1, 2, 3, 4])
def test_the_change_point_is_found_at_the_planted_build(planted: int) -> None:
    result = find_change_points(series(history(planted, step_at=planted)))
    (point,) = [c for c in result.change_points if c.p_value <= 0.01]
    assert point.build == BUILDS[planted] and point.previous_build == BUILDS[planted - 1]
    assert point.before == BUILDS[:planted] and point.after == BUILDS[planted : planted + len(point.after)]
    assert point.samples == 25 and point.statistic == "median"
    assert point.relative is not None and 0.15 < point.relative < 0.45  # the planted 30%
    assert point.interval is not None and point.interval[0] > 0 and point.delta is not None
    assert point.interval[0] < point.delta < point.interval[1]


def test_a_flat_history_has_no_change_point() -> None:
    found = [find_change_points(series(history(100 + i))).change_points for i in range(10)]
    assert sum(len(f) for f in found) <= 1  # at the 5% split level, ten flat histories give about 0.5
    assert find_change_points(series(history(7))).change_points == ()


def test_two_builds_are_enough_to_find_a_step() -> None:
    result = find_change_points(series(history(3, builds=2, step_at=1, step=0.15)))
    assert [c.build for c in result.change_points] == [BUILDS[1]]


def test_the_test_keeps_each_sample_with_itself() -> None:
    # A 10% step is a tenth of the spread between samples: pooled without pairing it would be lost.
    values = history(11, step_at=2, step=0.1)
    assert np.median(values[:, 2:]) / np.median(values[:, :2]) < 1.5
    result = find_change_points(series(values))
    assert result.tests[0].build == BUILDS[2] and result.tests[0].p_value < 0.01


def test_missing_cells_leave_the_change_point_where_it_is() -> None:
    values = history(5, step_at=3)
    values[np.random.default_rng(0).random(values.shape) < 0.2] = np.nan
    result = find_change_points(series(values))
    assert [c.build for c in result.change_points if c.p_value <= 0.01] == [BUILDS[3]]
    assert 0 < result.tests[0].samples <= 25


def test_a_rate_figure_is_summarised_by_its_mean() -> None:
    rng = np.random.default_rng(4)
    passed = rng.binomial(20, 0.9, (25, 4)) / 20
    passed[:8, 2:] = 0.0  # eight samples now fail every trial
    point = find_change_points(series(passed, statistic="mean")).tests[0]
    assert point.build == BUILDS[2] and point.p_value <= 0.01
    assert point.before_value == pytest.approx(passed[:, :2].mean())  # equal cells a sample: the mean of means
    assert point.delta == pytest.approx(passed[:, 2:].mean() - passed[:, :2].mean())


def test_the_same_history_gives_the_same_answer_whatever_else_is_in_the_list() -> None:
    values = history(9, step_at=2, step=0.08)
    alone = find_change_points(series(values))
    again = find_change_points(series(values.copy()))
    assert alone.tests == again.tests
    listed = changes_over_history([series(history(1), "other"), series(values)])
    assert listed.results[1].tests[0].p_value == pytest.approx(
        find_change_points(series(values), permutations=listed.permutations).tests[0].p_value
    )


def test_a_flat_stretch_costs_a_few_shuffles_and_a_real_change_no_more_than_the_cap() -> None:
    flat = find_change_points(series(history(21)))
    assert flat.tests[0].permutations < 200
    real = find_change_points(series(history(22, step_at=2)), permutations=2_000)
    assert real.tests[0].permutations <= 2_000 and real.tests[0].p_value == pytest.approx(1 / 2_000)


def test_builds_are_placed_in_version_order_not_the_order_they_were_measured() -> None:
    values = history(13, builds=4, step_at=2)
    builds = ["25B78", "26A5353q", "26A5378f", "26B5012a"]
    measured_order = [3, 0, 2, 1]  # the day each build was first measured: 26B5012a first
    cells = {(f"s{i:02}", builds[j]): float(values[i, j]) for j in measured_order for i in range(25)}
    built = series_from_cells(("mac", "ttft"), cells)
    assert built.builds == tuple(builds)
    assert [c.build for c in find_change_points(built).change_points if c.p_value <= 0.01] == ["26A5378f"]


def test_series_from_cells_leaves_unmeasured_cells_empty() -> None:
    built = series_from_cells(("k",), {("a", "26A2"): 1.0, ("b", "26A1"): 2.0, ("b", "26A2"): None})
    assert built.builds == ("26A1", "26A2") and built.samples == ("a", "b")
    assert np.isnan(built.values[0, 0]) and np.isnan(built.values[1, 1]) and built.values[0, 1] == 1.0


def test_a_series_of_the_wrong_shape_is_refused() -> None:
    with pytest.raises(ValueError, match="samples × builds"):
        Series(("k",), ("26A1", "26A2"), np.zeros((3, 3)))


def test_benjamini_hochberg_keeps_what_its_step_up_rule_keeps() -> None:
    # Sorted p-values against 5% · rank / 4: 0.0125, 0.025, 0.0375, 0.05. The third passes, so the first three
    # are kept, the second although it passes its own threshold only through the third.
    p = [0.5, 0.03, 0.001, 0.026]
    decisions = control_false_discoveries([Hypothesis(i, v) for i, v in enumerate(p)], level=0.05)
    assert [d.kept for d in decisions] == [False, True, True, True]
    assert decisions[2].adjusted == pytest.approx(0.004) and decisions[1].adjusted == pytest.approx(0.04)
    assert [d.kept for d in control_false_discoveries([Hypothesis(i, v) for i, v in enumerate(p)], 0.01)] == [
        False, False, True, False,
    ]


def test_sample_level_changes_are_corrected_as_a_family_of_their_own() -> None:
    figures = [Hypothesis(f"figure {i}", 0.5, FIGURES) for i in range(99)]
    sample = Hypothesis("sample s07", 0.02, SAMPLES)
    decisions = control_false_discoveries([*figures, sample])
    assert decisions[-1].kept and decisions[-1].adjusted == pytest.approx(0.02)
    pooled = control_false_discoveries([*figures, Hypothesis("sample s07", 0.02, FIGURES)])
    assert not pooled[-1].kept  # among a hundred tests of one family, 0.02 is not enough
    listed = changes_over_history([series(history(31))], samples=[Hypothesis("sample s07", 0.02)])
    assert [d.subject for d in listed.sample_changes] == ["sample s07"] and listed.sample_changes[0].family == SAMPLES


def test_a_list_of_many_flat_series_and_one_step_keeps_the_step_and_few_of_the_rest() -> None:
    flat = [series(history(1000 + i), f"flat {i}") for i in range(80)]
    real = series(history(999, step_at=3, step=0.2), "real")
    listed = changes_over_history([*flat, real], level=0.05)
    assert listed.level == 0.05 and listed.permutations == permutation_cap(81, 0.05)
    kept = listed.change_points
    assert [(d.subject.key[0], d.subject.build) for d in kept if d.subject.key[0] == "real"] == [("real", BUILDS[3])]
    false = [d for d in kept if d.subject.key[0] != "real"]
    assert len(false) <= 2  # the list's false-discovery rate is 5%: about 0.05 false a list
    # Each flat series' first test is a fair test: about 5% of them fall at or below 0.05 before correction.
    first = np.array([r.tests[0].p_value for r in listed.results[:80]])
    assert 0 <= (first <= 0.05).mean() <= 0.125 and 0.3 <= (first <= 0.5).mean() <= 0.7


def test_a_level_outside_zero_and_one_is_refused() -> None:
    with pytest.raises(ValueError, match="between 0 and 1"):
        control_false_discoveries([Hypothesis("x", 0.1)], level=5)


def test_the_method_statement_names_its_level() -> None:
    assert "5%" in method_statement() and "10%" in method_statement(0.1)
    assert "Benjamini–Hochberg" in method_statement()


def test_settings_bound_the_number_of_change_points() -> None:
    steps = history(41, builds=5)
    steps[:, 1:] *= 1.5
    steps[:, 3:] *= 1.5
    bounded = find_change_points(series(steps), Settings(max_change_points=1))
    assert len(bounded.change_points) == 1
    both = find_change_points(series(steps))
    assert [c.build for c in both.change_points if c.p_value <= 0.01] == [BUILDS[1], BUILDS[3]]


def test_each_change_of_a_history_with_two_is_sized_between_its_neighbours() -> None:
    steps = history(43, builds=5)
    steps[:, 2:] *= 1.5
    steps[:, 4:] *= 2.0
    first, second = (c for c in find_change_points(series(steps)).change_points if c.p_value <= 0.01)
    assert (first.before, first.after) == (BUILDS[:2], BUILDS[2:4])
    assert (second.before, second.after) == (BUILDS[2:4], BUILDS[4:])
    # Sizes of the workload's median over 25 samples (planted: +50%, then +100%), each with its own spread.
    assert first.relative is not None and 0.2 < first.relative < 0.8
    assert second.relative is not None and 0.6 < second.relative < 1.5
    assert first.after_value == second.before_value  # the builds between the two changes, measured once


def test_the_methodology_page_states_the_method_its_level_and_the_build_order() -> None:
    text = (Path(__file__).resolve().parents[1] / "site" / "methodology.md").read_text(encoding="utf-8")
    section = text.split("## Changes over a build history {#changepoints}", 1)[1].split("\n## ", 1)[0]
    assert "E-divisive" in section and "Benjamini–Hochberg" in section and "permutation" in section
    assert f"at most {DEFAULT_LEVEL:.0%}" in section and "family of their own" in section
    assert "the beta `24A5264n` comes before the release\n`24A335`" in section
    assert in_version_order(["24A335", "24A5264n"]) == ["24A5264n", "24A335"]


def test_the_statistic_is_the_energy_distance_worked_out_pair_by_pair() -> None:
    rng = np.random.default_rng(8)
    values = rng.normal(0.0, 1.0, (6, 5))
    values[rng.random(values.shape) < 0.2] = np.nan
    residuals = values - np.nanmean(values, axis=1, keepdims=True)

    def energy(boundary: int) -> float:
        x, y = residuals[:, :boundary], residuals[:, boundary:]
        x, y = x[~np.isnan(x)], y[~np.isnan(y)]
        n, m = len(x), len(y)
        e = 2 * np.abs(x[:, None] - y).mean() - np.abs(x[:, None] - x).mean() - np.abs(y[:, None] - y).mean()
        return float(e * n * m / (n + m))

    by_boundary = [energy(t) for t in range(1, 5)]
    first = find_change_points(series(values)).tests[0]
    assert first.energy == pytest.approx(max(by_boundary), rel=1e-12)
    assert first.build == BUILDS[1 + int(np.argmax(by_boundary))]


def test_a_list_writes_its_level_and_change_points_as_json() -> None:
    listed = changes_over_history([series(history(51, step_at=2), "real"), series(history(52), "flat")])
    payload = json.loads(json.dumps(listed.to_json()))
    assert payload["level"] == 0.05 and "5%" in payload["statement"] and payload["tests"] == len(listed.decisions)
    assert len(payload["change_points"]) == len(listed.change_points)
    point = next(p for p in payload["change_points"] if p["key"][0] == "real")
    assert point["build"] == BUILDS[2] and point["previous_build"] == BUILDS[1]
    assert point["adjusted_p_value"] <= 0.05 and point["interval"][0] < point["delta"] < point["interval"][1]
