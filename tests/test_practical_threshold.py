"""The practical threshold and the verdict vocabulary at its edges: better or worse only with the interval beyond zero
and the point past the threshold (5 % or 5 points by default); within tolerance only with the whole interval inside
it; inconclusive otherwise. The regressions page and feed list neither of the last two."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from test_regressions import rb

from fmbench.analysis.stats import Interval
from fmbench.analysis.tolerance import DEFAULT_TOLERANCE, Tolerance, judge
from fmbench.comparison.compare import compare_runs
from fmbench.comparison.regressions import atom_feed, detect_regressions
from fmbench.ingest import ingest_paths

# Large runs: one practical workload, its full 25 samples, 20 repetitions each (500 trials a run).
WORKLOAD = rb.TASK_CAPTURE  # median TTFT about 0.45 s
LARGE = rb.RunSpec(scenarios=(WORKLOAD,))


def day(n: int) -> datetime:
    return datetime(2026, 11, n, 9, 0, tzinfo=UTC)


def _interval(low: float, high: float) -> Interval:
    return Interval(low, high, 0.95, "test")


def test_a_detectable_change_whose_interval_lies_inside_the_threshold_is_within_tolerance() -> None:
    # +3 % in a latency of 0.45 s: the interval (+1.1 % to +4.4 %) excludes zero and lies inside ±5 %.
    assert judge(_interval(0.005, 0.02), 0.0135, 0.03, "seconds", "lower", baseline=0.45) == "within tolerance"
    assert judge(_interval(0.05, 0.15), 0.11, 0.25, "seconds", "lower", baseline=0.44) == "worse"
    assert judge(_interval(-0.15, -0.05), -0.11, -0.25, "seconds", "lower", baseline=0.44) == "better"
    assert judge(_interval(-0.01, 0.05), 0.02, 0.045, "seconds", "lower", baseline=0.44) == "inconclusive"


def test_rates_are_judged_in_percentage_points_and_relative_figures_by_their_ratio() -> None:
    # A pass rate from 90 % to 94 %: 4 points, within tolerance though its relative change is 4.4 %.
    assert judge(_interval(0.01, 0.045), 0.04, 0.044, "rate", "higher") == "within tolerance"
    assert judge(_interval(0.03, 0.09), 0.06, 0.066, "rate", "higher") == "better"
    assert judge(_interval(2.0, 9.0), 6.0, 0.06, "tokens/s", "higher", baseline=100.0) == "better"
    assert judge(_interval(2.0, 4.5), 4.0, 0.04, "tokens/s", "higher", baseline=100.0) == "within tolerance"
    assert DEFAULT_TOLERANCE.describe("seconds") == "±5%" and DEFAULT_TOLERANCE.describe("rate") == "±5 points"


def test_within_tolerance_takes_the_whole_interval_inside_the_threshold_its_bounds_included() -> None:
    # Points: ±5 exactly is inside; a hair past either bound is not, and the figure is then inconclusive.
    assert judge(_interval(-0.05, 0.05), 0.0, 0.0, "rate", "higher") == "within tolerance"
    assert judge(_interval(-0.05, 0.0500001), 0.0, 0.0, "rate", "higher") == "inconclusive"
    assert judge(_interval(-0.0500001, 0.05), 0.0, 0.0, "rate", "higher") == "inconclusive"
    # Relative: a baseline of 2 s makes ±0.1 s exactly ±5 %.
    assert judge(_interval(-0.1, 0.1), 0.0, 0.0, "seconds", "lower", baseline=2.0) == "within tolerance"
    assert judge(_interval(-0.1, 0.1000001), 0.0, 0.0, "seconds", "lower", baseline=2.0) == "inconclusive"
    # A point estimate inside the threshold is not enough: at a true +5 % the interval reaches past it.
    assert judge(_interval(-0.01, 0.12), 0.04, 0.02, "seconds", "lower", baseline=2.0) == "inconclusive"


def test_better_or_worse_takes_an_interval_beyond_zero_and_a_point_beyond_the_threshold() -> None:
    # The point exactly on the threshold is not beyond it; its interval reaches past it, so: inconclusive.
    assert judge(_interval(0.01, 0.09), 0.05, 0.05, "rate", "higher") == "inconclusive"
    assert judge(_interval(0.01, 0.09), 0.0500001, 0.05, "rate", "higher") == "better"
    assert judge(_interval(0.01, 0.09), 0.0500001, 0.05, "rate", "lower") == "worse"
    # A bound exactly on zero does not lie beyond it, however far the point is.
    assert judge(_interval(0.0, 0.2), 0.1, 0.1, "rate", "higher") == "inconclusive"
    assert judge(_interval(-0.2, 0.0), -0.1, -0.1, "rate", "higher") == "inconclusive"
    # Beyond zero and beyond the threshold: a small lower bound does not stop it.
    assert judge(_interval(0.001, 0.2), 0.1, 0.1, "rate", "higher") == "better"


def test_a_relative_threshold_without_a_baseline_never_calls_a_figure_within_tolerance() -> None:
    assert judge(_interval(-0.001, 0.001), 0.0, None, "seconds", "lower") == "inconclusive"
    assert judge(_interval(-0.001, 0.001), 0.0, None, "seconds", "lower", baseline=0.0) == "inconclusive"
    assert judge(_interval(0.001, 0.002), 0.0015, None, "seconds", "lower") == "worse"


def test_the_project_setting_moves_the_threshold() -> None:
    strict = Tolerance(latency=0.01, throughput=0.01, memory=0.01, rates=1.0)
    assert judge(_interval(0.005, 0.02), 0.0135, 0.03, "seconds", "lower", strict, baseline=0.45) == "worse"
    from fmbench.project import PracticalChange

    assert Tolerance.of(PracticalChange()) == DEFAULT_TOLERANCE


@pytest.fixture(scope="module")
def consecutive_builds(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("threshold")
    runs = folder / "runs"
    shift = WORKLOAD.ttft
    rb.write_run(LARGE.but(build="24A100a", started=day(1), noise_seed=11), runs, "a")
    # A 3 % run-level TTFT shift: what two sessions on one device may differ by with nothing changed.
    rb.write_run(LARGE.but(build="24A200b", started=day(2), noise_seed=12, ttft_offset=0.03 * shift), runs, "b")
    # A 25 % slowdown on top of it: a regression.
    rb.write_run(LARGE.but(build="24A300c", started=day(3), noise_seed=13, ttft_offset=0.28 * shift), runs, "c")
    assert ingest_paths([runs], folder / "db.duckdb").ok
    return folder / "db.duckdb"


def test_a_three_percent_run_level_shift_is_within_tolerance_and_not_a_regression(consecutive_builds: Path) -> None:
    report = detect_regressions(consecutive_builds)
    first = [s for s in report.steps if s.candidate_build == "24A200b"]
    assert len(first) == 1 and first[0].comparison is not None
    ttft = first[0].comparison.scenario(WORKLOAD.id).figure("ttft_median")
    assert ttft.relative_delta == pytest.approx(0.03, abs=0.01)
    assert ttft.interval is not None and ttft.interval.excludes_zero  # detectable, with 500 trials a side
    assert ttft.verdict == "within tolerance" and ttft.note == "±5%"
    assert "| within tolerance (±5%) |" in first[0].comparison.to_markdown()
    assert [c for c in report.changes if c.candidate_build == "24A200b"] == []


def test_a_twenty_five_percent_shift_is_a_regression_on_the_page_and_in_the_feed(consecutive_builds: Path) -> None:
    report = detect_regressions(consecutive_builds)
    found = {(c.candidate_build, c.figure.key): c for c in report.regressions}
    change = found[("24A300c", "ttft_median")]
    assert change.figure.relative_delta == pytest.approx(0.25, abs=0.02)
    assert change.verdict == "worse"
    assert all(c.candidate_build == "24A300c" for c in report.regressions)
    feed = atom_feed(report.regressions, site_url="https://example.org/bench/", generated_at=day(4))
    assert "24A200b..24A300c" in feed and "24A100a..24A200b" not in feed


def test_one_run_per_side_says_run_to_run_variation_was_not_measured(consecutive_builds: Path) -> None:
    import duckdb

    con = duckdb.connect(str(consecutive_builds), read_only=True)
    try:
        ids = dict(con.execute("SELECT os_build, run_id FROM runs").fetchall())
    finally:
        con.close()
    comparison = compare_runs(ids["24A100a"], ids["24A200b"], consecutive_builds)
    notes = " ".join(comparison.method_notes)
    assert "run-to-run variation was not measured" in notes
    assert "cluster bootstrap" in notes and "within tolerance" in notes


def test_a_projects_threshold_reaches_the_site_s_comparisons_and_regressions(tmp_path: Path) -> None:
    from fmbench.analysis.revisions import fixtures_registry
    from fmbench.project import parse_config
    from fmbench.storage.db import connect
    from fmbench.views import comparisons, site_context
    from fmbench.views.render import Renderer

    from testdata import FIXTURES

    config = parse_config("format = 1\n[publishing.practical_change]\nlatency = 0.5\nthroughput = 0.5\n", "fmbench.toml")
    lenient = Tolerance.of(config.publishing.practical_change)
    assert lenient == Tolerance(latency=0.5, throughput=0.5)
    names = ["iphone-17-pro-ios27-24a5256a-on-device-performance-2026-10-29.json",
             "iphone-17-pro-ios27-24a5264n-on-device-performance-2026-11-03.json"]
    registry = fixtures_registry()
    assert ingest_paths([FIXTURES / n for n in names], tmp_path / "db.duckdb", registry=registry).ok
    with connect(tmp_path / "db.duckdb", read_only=True) as con:
        default = site_context(con, Renderer(), registry)
        planted = {(c.scenario.scenario_id, c.figure.key) for c in comparisons.regression_report(default).regressions}
        assert ("synthetic-throughput", "ttft_median") in planted  # +26 %: past 5 %
        site = site_context(con, Renderer(), registry)
        site.tolerance = lenient
        assert comparisons.regression_report(site).regressions == ()  # +26 % is under a 50 % threshold
        step = comparisons.regression_report(site).steps[0]
        assert step.comparison is not None
        assert step.comparison.scenario("synthetic-throughput").figure("ttft_median").verdict == "within tolerance"


def test_fmbench_compare_inside_a_project_uses_its_practical_threshold(tmp_path: Path) -> None:
    import json

    from click.testing import CliRunner

    from fmbench.cli import main

    from testdata import FIXTURES

    runner = CliRunner()
    project = tmp_path / "results"
    assert runner.invoke(main, ["init", str(project), "--title", "Results"]).exit_code == 0
    settings = project / "fmbench.toml"
    text = settings.read_text(encoding="utf-8")
    assert "latency = 0.05 " in text
    settings.write_text(text.replace("latency = 0.05 ", "latency = 0.50 "), encoding="utf-8")
    a, b = (str(FIXTURES / n) for n in (
        "iphone-17-pro-ios27-24a5256a-on-device-performance-2026-10-29.json",
        "iphone-17-pro-ios27-24a5264n-on-device-performance-2026-11-03.json",
    ))

    def ttft(*args: str) -> dict[str, object]:
        result = runner.invoke(main, [*args, "compare", a, b, "--json"])
        assert result.exit_code == 0, result.output
        scenario = next(s for s in json.loads(result.output)["scenarios"] if s["scenario_id"] == "synthetic-throughput")
        return next(f for f in scenario["figures"] if f["key"] == "ttft_median")

    outside = ttft()  # no project: the default 5 %
    assert outside["verdict"] == "worse"
    inside = ttft("--project", str(project))  # the project's 50 %: +26 % is under it
    assert inside["verdict"] == "within tolerance" and inside["note"] == "±50%"
    assert inside["relative_delta"] == outside["relative_delta"]
    markdown = runner.invoke(main, ["--project", str(project), "compare", a, b, "--markdown"])
    assert markdown.exit_code == 0 and "±50% for latency" in markdown.output


def test_a_change_of_exactly_the_threshold_is_never_called_within_tolerance(tmp_path: Path) -> None:
    # A 5 % run-level TTFT shift, the threshold itself: the case, where judging the point estimate called
    # about half such figures within tolerance. Each figure's verdict is the one its interval, point and threshold
    # allow, and a latency figure whose interval reaches past +5 % is not within tolerance.
    runs = tmp_path / "runs"
    shift = WORKLOAD.ttft
    rb.write_run(LARGE.but(build="24A100a", started=day(1), noise_seed=21), runs, "a")
    rb.write_run(LARGE.but(build="24A200b", started=day(2), noise_seed=22, ttft_offset=0.05 * shift), runs, "b")
    db = tmp_path / "db.duckdb"
    assert ingest_paths([runs], db).ok
    report = detect_regressions(db)
    [step] = report.steps
    assert step.comparison is not None
    figures = [f for f in step.comparison.scenario(WORKLOAD.id).figures if f.interval is not None]
    assert figures
    for f in figures:
        assert f.delta is not None
        assert f.verdict == judge(f.interval, f.delta, f.relative_delta, f.unit, f.better, baseline=f.baseline)
    for key in ("ttft_median", "ttft_p90"):
        ttft = step.comparison.scenario(WORKLOAD.id).figure(key)
        assert ttft.relative_delta == pytest.approx(0.05, abs=0.02) and ttft.interval is not None
        assert ttft.baseline is not None and ttft.interval.high > 0.05 * ttft.baseline  # reaches past the threshold
        assert ttft.verdict in ("worse", "inconclusive")
    # Here p90's point lies inside the threshold (+3.6 %), where a point-estimate verdict said within tolerance.
    p90 = step.comparison.scenario(WORKLOAD.id).figure("ttft_p90")
    assert p90.relative_delta is not None and p90.relative_delta < 0.05 and p90.verdict == "inconclusive"
