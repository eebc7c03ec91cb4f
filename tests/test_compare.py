"""Comparisons: labels from what differs, every difference named, refusals, intervals and verdicts."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import math
import random
import sys
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType

import duckdb
import pytest
from click.testing import CliRunner

from fmbench.analysis import stats
from fmbench.analysis.figures import nearest_rank
from fmbench.analysis.revisions import fixtures_registry
from fmbench.cli import main
from fmbench.comparison.compare import Comparison, ComparisonRefused, compare_runs, compare_sides
from fmbench.comparison.selection import FILTER_KEYS, parse_filter, parse_side
from fmbench.comparison.text import NAMED_CHANGES, past_threshold
from fmbench.errors import FilterError, NotFoundError
from fmbench.ingest import ingest_paths
from fmbench.storage.db import connect

from testdata import DATA


def _load_builder() -> ModuleType:
    name = "fmbench_compare_runbuilder"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, DATA / "compare" / "runbuilder.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


rb = _load_builder()
BASE = rb.RunSpec(commit="c5e90f3")  # the fixture corpus's commit: the lab assigns revisions with its registry
LATER = datetime(2026, 11, 10, 9, 0, tzinfo=UTC)


class Lab:
    """Run files written to a folder, ingested into one database, addressed by name."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.db = folder / "lab.duckdb"
        self.paths: dict[str, Path] = {}
        self.ids: dict[str, str] = {}

    def add(self, name: str, spec: object, *, hand_edited: bool = False) -> Lab:
        self.paths[name] = rb.write_run(spec, self.folder / "runs", name, hand_edited=hand_edited)
        return self

    def ingest(self) -> Lab:
        # the run builder writes the fixture corpus's fictional commits: assign them with its registry
        report = ingest_paths([self.folder / "runs"], self.db, registry=fixtures_registry())
        assert report.ok, [o.message for o in report.outcomes]
        for o in report.outcomes:
            assert o.run_id is not None
            self.ids[Path(o.path).stem] = o.run_id
        return self

    def compare(self, baseline: str, candidate: str, **options: object) -> Comparison:
        b = self.ids.get(baseline, baseline)
        c = self.ids.get(candidate, candidate)
        return compare_runs(b, c, self.db, **options)  # type: ignore[arg-type]


@pytest.fixture
def lab(tmp_path: Path) -> Lab:
    return Lab(tmp_path)


def verdicts(c: Comparison, key: str) -> dict[str, str]:
    return {s.scenario_id: s.figure(key).verdict for s in c.scenarios}


# --- labels ------------------------------------------------------------------------------


def test_another_os_build_on_the_same_hardware_is_an_os_comparison_that_names_the_builds(lab: Lab) -> None:
    lab.add("a", BASE).add("b", BASE.but(build="24A5270a", started=LATER, noise_seed=2)).ingest()
    c = lab.compare("a", "b")
    assert c.kind == "os" and c.label == "OS comparison"
    assert c.title == "OS comparison on iPhone18,1: 24A5264n → 24A5270a"
    assert [(x.key, x.baseline, x.candidate) for x in c.differences] == [("os_build", "24A5264n", "24A5270a")]
    assert c.caveats == ()


def test_other_hardware_is_a_device_comparison(lab: Lab) -> None:
    mac = BASE.but(hardware="Mac17,2", device="MacBook Pro M5", system="macOS", version="27.0", build="26A5353q",
                   started=LATER)
    lab.add("phone", BASE).add("mac", mac).ingest()
    c = lab.compare("phone", "mac")
    assert c.label == "Device comparison"
    assert c.title == "Device comparison: iPhone18,1 → Mac17,2"
    assert {"hardware_model", "os_build"} <= {x.key for x in c.differences}
    assert not any(x.code == "label-requirements" for x in c.caveats)


def test_on_device_against_pcc_compares_quality_but_never_ranks_speed(lab: Lab) -> None:
    pcc = BASE.but(route="privateCloudCompute", started=LATER, ttft_offset=0.5, noise_seed=2)
    lab.add("device", BASE).add("pcc", pcc).ingest()
    c = lab.compare("device", "pcc")
    assert c.label == "Execution comparison"
    assert not c.speed_comparable
    assert any(x.code == "execution-speed" for x in c.caveats)
    for s in c.scenarios:
        for key in ("ttft_median", "ttft_p90", "tps_median", "tps_p90", "peak_memory"):
            f = s.figure(key)
            assert f.verdict == "not comparable"
            assert f.delta is None and f.interval is None and f.relative_delta is None
            assert f.note == "not compared: PCC is a service benchmark"
            assert f.baseline is not None and f.candidate is not None  # each side still reported
        assert s.figure("task_success").interval is not None
    assert "not compared: PCC is a service benchmark" in c.to_markdown()


def test_two_pcc_runs_with_one_client_setup_on_different_dates_are_a_longitudinal_pcc_comparison(lab: Lab) -> None:
    pcc = BASE.but(route="privateCloudCompute")
    lab.add("june", pcc).add("july", pcc.but(started=LATER, noise_seed=2)).ingest()
    c = lab.compare("june", "july")
    assert c.label == "Longitudinal PCC comparison"
    assert c.differences == ()


def test_pcc_runs_at_different_reasoning_levels_are_a_configuration_comparison_naming_the_level(lab: Lab) -> None:
    pcc = BASE.but(route="privateCloudCompute")
    lab.add("none", pcc).add("deep", pcc.but(reasoning="deep", started=LATER)).ingest()
    c = lab.compare("none", "deep")
    assert c.label == "Configuration comparison"
    assert [(x.label, x.baseline, x.candidate) for x in c.differences] == [("Reasoning level", "Default", "Deep")]


def test_an_os_comparison_that_also_changes_the_configuration_says_the_change_has_more_than_one_cause(
    lab: Lab,
) -> None:
    lab.add("a", BASE).add("b", BASE.but(build="24A5270a", warmups=10, started=LATER)).ingest()
    c = lab.compare("a", "b")
    assert c.label == "OS comparison"
    caveat = next(x for x in c.caveats if x.code == "label-requirements")
    assert "warmups" in caveat.message and "more than one possible cause" in caveat.message


# --- every difference is named -----------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "label", "baseline", "candidate"),
    [
        ({"warmups": 8}, "Warmups", "5", "8"),
        ({"repetitions": 25}, "Repetitions", "20", "25"),
        ({"connectivity": "offline"}, "Connectivity", "Normal", "Offline (verified no network path)"),
        ({"randomized": False}, "Randomized order", "yes", "no"),
        ({"sample_limit": 1}, "Sample selection (samples per scenario)", "all", "1 per scenario"),
        ({"context": 8192}, "Context size", "4096", "8192"),
        ({"thermal": "fair"}, "Thermal state at start", "Nominal", "Fair"),
    ],
)
def test_each_changed_condition_is_named_with_both_values(
    lab: Lab, change: dict[str, object], label: str, baseline: str, candidate: str
) -> None:
    lab.add("a", BASE).add("b", BASE.but(started=LATER, **change)).ingest()
    c = lab.compare("a", "b")
    named = {x.label: (x.baseline, x.candidate) for x in c.differences}
    assert named[label] == (baseline, candidate)
    assert c.label == ("Repeat comparison" if label.startswith("Thermal") else "Configuration comparison")
    assert f"| {label} | {baseline} | {candidate} |" in c.to_markdown()


def test_a_different_order_seed_is_an_expected_difference_never_a_caveat_or_a_configuration_change(lab: Lab) -> None:
    lab.add("a", BASE).add("b", BASE.but(build="24A5270a", random_seed=7, started=LATER)).ingest()
    c = lab.compare("a", "b")
    assert c.label == "OS comparison"
    assert "random_seed" not in {x.key for x in c.differences}
    expected = {x.label: (x.baseline, x.candidate) for x in c.expected_differences}
    assert expected == {
        "Run": (lab.ids["a"], lab.ids["b"]),
        "Started": ("2026-11-03T09:00:00Z", "2026-11-10T09:00:00Z"),
        "Seed": ("42", "7"),
    }
    assert not any("seed" in x.message.lower() for x in c.caveats)
    assert not any(x.code == "label-requirements" for x in c.caveats)
    md = c.to_markdown()
    assert "## Expected differences" in md and "| Seed | 42 | 7 |" in md
    assert md.index("| Seed | 42 | 7 |") > md.index("## Expected differences")
    assert "expected differences (any two runs differ in these):\n" in c.to_text()
    assert c.to_json()["expected_differences"][2] == {
        "key": "random_seed", "label": "Seed", "group": "configuration", "baseline": "42", "candidate": "7"
    }
    # two repeats of one configuration that drew their own seeds: a repeat comparison
    lab2 = Lab(lab.folder / "repeat")
    lab2.add("a", BASE).add("b", BASE.but(random_seed=7, started=LATER)).ingest()
    assert lab2.compare("a", "b").label == "Repeat comparison"


def test_the_os_version_change_is_listed_beside_the_build_change(lab: Lab) -> None:
    lab.add("a", BASE).add("b", BASE.but(build="24A5270a", version="27.1", started=LATER)).ingest()
    c = lab.compare("a", "b")
    assert [(x.label, x.baseline, x.candidate) for x in c.differences] == [
        ("OS build", "24A5264n", "24A5270a"), ("OS version", "27.0", "27.1"),
    ]
    assert c.caveats == ()  # the OS build and its version are what an OS comparison compares
    assert "  - OS version: 27.0 → 27.1" in c.to_text()


def test_the_verdict_sentence_names_each_change_with_its_workload_and_size_and_counts_the_rest(lab: Lab) -> None:
    lab.add("a", BASE).add("b", BASE.but(build="24A5270a", started=LATER, ttft_offset=0.1)).ingest()
    c = lab.compare("a", "b")
    worse = [(s, f) for s, f in c.changes() if f.verdict == "worse"]
    assert {f.key for _s, f in worse} == {"ttft_median", "ttft_p90"} and len(worse) == 4
    within = sum(f.verdict == "within tolerance" for s in c.scenarios for f in s.figures)
    inconclusive = sum(f.verdict == "inconclusive" for s in c.scenarios for f in s.figures)
    untested = sum(len(s.figures) for s in c.scenarios) - len(worse) - within - inconclusive
    s0, f0 = max(worse, key=lambda x: past_threshold(x[1], c.tolerance))  # the biggest change is named first
    size = f"{abs(f0.relative_delta) * 100:.0f}%"
    assert c.verdict_sentence.startswith(f"{f0.label} of {s0.title} got {size} worse (")
    # the first NAMED_CHANGES changes named with their sizes, the others counted
    assert NAMED_CHANGES == 3 and c.verdict_sentence.count(" worse (") == 3
    assert "; 1 other figure got worse; " in c.verdict_sentence
    assert (f"; {within} other figures stayed within tolerance; {inconclusive} were inconclusive; {untested} were not "
            "tested.") in c.verdict_sentence
    assert "did not change" not in c.verdict_sentence
    # the sentence is the first thing after the title in the text and the Markdown, and in the JSON
    assert c.to_text().splitlines()[1] == c.verdict_sentence
    assert c.to_markdown().splitlines()[2] == f"**{c.verdict_sentence}**"
    assert c.to_json()["verdict"] == c.verdict_sentence


def test_the_headline_names_the_biggest_change_first_whatever_its_kind_or_direction(lab: Lab) -> None:
    lab.add("a", BASE).add("b", BASE.but(build="24A5270a", started=LATER, ttft_offset=0.1)).ingest()
    c = lab.compare("a", "b")
    ttft = sorted((past_threshold(f, c.tolerance), s.title, f.label) for s, f in c.changes())
    biggest_ttft = ttft[-1][0]
    assert 1 < biggest_ttft < 10 and [f for _s, f in c.changes() if f.key != "ttft_median" and f.key != "ttft_p90"] == []

    # Task success of the second workload 50 points worse (10 thresholds), tokens/s of the first 6% better (1.2):
    # the quality change is named first, then the latency ones by size, then the throughput one is counted.
    def changed(f: object, **values: object) -> object:
        return dataclasses.replace(f, **values)  # type: ignore[call-overload]

    first, second = c.scenarios[0], c.scenarios[1]
    success = second.figure("task_success")
    tps = first.figure("tps_median")
    scenarios = (
        dataclasses.replace(first, figures=tuple(
            changed(f, verdict="better", delta=f.baseline * 0.06, relative_delta=0.06, candidate=f.baseline * 1.06)
            if f is tps else f for f in first.figures)),
        dataclasses.replace(second, figures=tuple(
            changed(f, verdict="worse", delta=-0.5, relative_delta=-0.5, candidate=0.5, baseline=1.0)
            if f is success else f for f in second.figures)),
        *c.scenarios[2:],
    )
    mixed = dataclasses.replace(c, scenarios=scenarios)
    sentence = mixed.verdict_sentence
    assert sentence.startswith(f"{success.label} of {second.title} got 50.0 points worse (100.0% → 50.0%); "), sentence
    named = [f"{label} of {title} got" for _size, title, label in sorted(ttft, reverse=True)[:NAMED_CHANGES - 1]]
    positions = [sentence.index(n) for n in named]
    assert positions == sorted(positions)  # the latency changes after it, biggest first
    assert sentence.count(" → ") == NAMED_CHANGES  # three named with their values, the rest counted
    assert "; 1 other figure got better" in sentence and f"{tps.label} of" not in sentence  # 1.2 thresholds: last
    assert "did not change" not in sentence and "unchanged" not in sentence


def test_a_comparison_without_a_change_counts_the_figures_within_tolerance_apart_from_the_inconclusive(
    lab: Lab,
) -> None:
    lab.add("a", BASE).add("b", BASE.but(build="24A5270a", started=LATER)).ingest()
    c = lab.compare("a", "b")
    assert not c.changes()
    within = sum(f.verdict == "within tolerance" for s in c.scenarios for f in s.figures)
    inconclusive = sum(f.verdict == "inconclusive" for s in c.scenarios for f in s.figures)
    assert within and inconclusive
    assert c.verdict_sentence.startswith(
        f"No figure got worse or better beyond the practical threshold: {within} figures stayed within tolerance, "
        f"{inconclusive} figures were inconclusive; "
    )


def test_a_changed_fixture_corpus_is_named_and_marked(lab: Lab) -> None:
    edited = rb.Scenario("synthetic-throughput", "Synthetic throughput", "syntheticThroughput",
                         prompt="Do the other thing.")
    lab.add("a", BASE).add("b", BASE.but(scenarios=(edited, rb.TASK_CAPTURE), started=LATER)).ingest()
    c = lab.compare("a", "b")
    assert [x.label for x in c.differences] == ["Fixture corpus (scenario, sample and check definitions)"]
    assert any(x.code == "fixtures-differ" for x in c.caveats)


def test_a_different_benchmark_commit_on_another_suite_revision_is_named_and_marked(lab: Lab) -> None:
    lab.add("a", BASE).add("b", BASE.but(commit="7a41c9e", started=LATER)).ingest()
    c = lab.compare("a", "b")
    named = {x.key: (x.baseline, x.candidate) for x in c.differences}
    assert named["benchmark_commit"] == ("c5e90f3", "7a41c9e")
    assert named["revision_id"] == ("2026.11", "2026.09")
    codes = {x.code for x in c.caveats}
    assert {"revision-differs", "revision-superseded"} <= codes


def test_a_run_whose_revision_is_unknown_is_compared_with_that_caveat(lab: Lab) -> None:
    lab.add("a", BASE).add("b", BASE.but(commit="0000000", started=LATER)).ingest()
    c = lab.compare("a", "b")
    assert {x.key: x.candidate for x in c.differences}["revision_id"] == "unknown"
    assert any(x.code == "revision-unknown" for x in c.caveats)


# --- refusals and caveats ------------------------------------------------------------------


def test_an_invalid_run_on_either_side_is_refused(lab: Lab) -> None:
    lab.add("good", BASE).add("edited", BASE.but(build="24A5270a", started=LATER), hand_edited=True).ingest()
    for baseline, candidate in (("good", "edited"), ("edited", "good")):
        with pytest.raises(ComparisonRefused) as caught:
            lab.compare(baseline, candidate)
        assert caught.value.code == "invalid-run"
        assert lab.ids["edited"] in str(caught.value)
        assert "stored summaries disagree" in str(caught.value)


def test_a_filter_leaves_invalid_runs_out_and_says_so_and_refuses_when_only_invalid_runs_match(lab: Lab) -> None:
    lab.add("good", BASE).add("edited", BASE.but(started=LATER), hand_edited=True)
    lab.add("other", BASE.but(build="24A5270a", started=LATER)).ingest()
    c = lab.compare("os_build=24A5264n", "os_build=24A5270a")
    assert c.baseline.run_ids == (lab.ids["good"],)  # latest would be the invalid run: it is left out
    assert [r.run_id for r in c.baseline.excluded_invalid] == [lab.ids["edited"]]
    assert any(x.code == "invalid-excluded" for x in c.caveats)
    with pytest.raises(ComparisonRefused, match="invalid as evidence"):
        lab.compare(f"run={lab.ids['edited']}", "os_build=24A5270a")


def test_cold_and_warm_sessions_are_never_pooled(lab: Lab) -> None:
    lab.add("cold", BASE).add("warm", BASE.but(session="warm", started=LATER))
    lab.add("next", BASE.but(build="24A5270a", started=LATER)).ingest()
    with pytest.raises(ComparisonRefused) as caught:
        lab.compare("os_build=24A5264n", "os_build=24A5270a", rule="pooled")
    assert caught.value.code == "pooled-session-modes"
    assert "never pooled" in str(caught.value)
    # Not pooled, the rule picks the warm run, and a warm run is not compared with a cold one either.
    with pytest.raises(ComparisonRefused) as caught:
        lab.compare("os_build=24A5264n", "os_build=24A5270a")
    assert caught.value.code == "session-modes"
    assert lab.compare("os_build=24A5264n session=cold", "os_build=24A5270a").baseline.run_ids == (lab.ids["cold"],)


def test_a_run_is_not_compared_with_itself(lab: Lab) -> None:
    lab.add("a", BASE).ingest()
    with pytest.raises(ComparisonRefused) as caught:
        lab.compare("a", "device=iPhone18,1")
    assert caught.value.code == "same-runs"


def test_an_exploratory_run_is_compared_with_a_caveat_that_says_why(lab: Lab) -> None:
    lab.add("a", BASE).add("b", BASE.but(build="24A5270a", warmups=1, started=LATER)).ingest()
    c = lab.compare("a", "b")
    caveat = next(x for x in c.caveats if x.code == "exploratory")
    assert lab.ids["b"] in caveat.message and "1 warmup request(s)" in caveat.message


# --- strict OS 26 vs OS 27 ------------------------------------------------------------------


def test_strict_os_mode_keeps_only_shared_workloads_and_says_which_were_dropped(lab: Lab) -> None:
    journal = rb.Scenario("journal-summary", "Journal summary", "summarization")
    os26 = BASE.but(version="26.1", build="23B85", scenarios=(rb.SYNTHETIC, rb.TASK_CAPTURE, journal))
    os27 = BASE.but(started=LATER, scenarios=(rb.SYNTHETIC, rb.TASK_CAPTURE, rb.VISUAL))
    lab.add("os26", os26).add("os27", os27).ingest()

    loose = lab.compare("os26", "os27")
    # The newest run's scenario order, then the scenario it lacks.
    assert [s.scenario_id for s in loose.scenarios] == [
        "synthetic-throughput", "task-capture", "visual-recommendation", "journal-summary"
    ]
    visual = loose.scenario("visual-recommendation")
    assert visual.note == "not run on the baseline"
    assert visual.figure("task_success").baseline is None
    assert visual.figure("task_success").verdict == "not recorded"
    assert any(x.code == "os-generations" for x in loose.caveats)

    strict = lab.compare("os26", "os27", strict_os=True)
    assert strict.strict_os
    assert [s.scenario_id for s in strict.scenarios] == ["synthetic-throughput", "task-capture"]
    assert {d.scenario_id: d.reason for d in strict.dropped} == {
        "journal-summary": "not run on the candidate (strict mode keeps shared workloads)",
        "visual-recommendation": "runs on OS 27 only (strict OS 26 vs OS 27 mode)",
    }
    assert not any(x.code == "os-generations" for x in strict.caveats)
    text = strict.to_text()
    assert "visual-recommendation: runs on OS 27 only" in text
    assert "Visual recommendation (`visual-recommendation`): runs on OS 27 only" in strict.to_markdown()


# --- figures, intervals and verdicts ----------------------------------------------------------


def test_a_known_ttft_shift_is_detected_as_worse_with_the_right_sign_and_size(lab: Lab) -> None:
    lab.add("a", BASE).add("b", BASE.but(build="24A5270a", started=LATER, ttft_offset=0.1)).ingest()
    c = lab.compare("a", "b")
    for s in c.scenarios:
        f = s.figure("ttft_median")
        assert f.delta == pytest.approx(0.1)
        assert f.interval is not None and f.interval.low > 0
        assert f.better == "lower" and f.verdict == "worse"
        assert s.figure("ttft_p90").verdict == "worse"
        # The same noise, shifted: throughput is exactly unchanged, and its interval lies inside ±5 %.
        assert s.figure("tps_median").delta == 0
        assert s.figure("tps_median").verdict == "within tolerance"


def test_a_throughput_drop_is_worse_and_a_ttft_drop_is_better(lab: Lab) -> None:
    lab.add("a", BASE).add("b", BASE.but(build="24A5270a", started=LATER, tps_offset=-6.0, ttft_offset=-0.1))
    lab.ingest()
    c = lab.compare("a", "b")
    assert set(verdicts(c, "tps_median").values()) == {"worse"}
    assert set(verdicts(c, "ttft_median").values()) == {"better"}
    tps = c.scenario("synthetic-throughput").figure("tps_median")
    assert tps.better == "higher" and tps.interval is not None and tps.interval.high < 0
    assert tps.relative_delta == pytest.approx(tps.delta / tps.baseline)


def test_a_drop_in_task_success_is_worse_and_failures_count_in_its_denominator(lab: Lab) -> None:
    # Every attempt of the first 15 of 25 samples fails: enough samples for the cluster bootstrap to see it.
    failing = dataclasses.replace(rb.TASK_CAPTURE, failures=300)
    lab.add("a", BASE).add("b", BASE.but(build="24A5270a", started=LATER, scenarios=(rb.SYNTHETIC, failing)))
    lab.ingest()
    s = lab.compare("a", "b").scenario("task-capture")
    assert (s.candidate_trials, s.candidate_attempts) == (200, 500)
    task, prompt = s.figure("task_success"), s.figure("prompt_pass")
    assert task.candidate is not None and prompt.candidate is not None
    assert task.candidate * 500 == pytest.approx(prompt.candidate * 200)  # same passes, failures in the denominator
    assert task.verdict == "worse"
    assert prompt.verdict == "inconclusive"


def test_failures_confined_to_one_of_two_samples_are_inconclusive(lab: Lab) -> None:
    # 24 of 40 attempts fail, but all in the first of two samples: with two samples, the cluster
    # bootstrap cannot tell a worse build from a harder sample.
    failing = rb.Scenario("synthetic-throughput", "Synthetic throughput", "syntheticThroughput", failures=24)
    lab.add("a", BASE).add("b", BASE.but(build="24A5270a", started=LATER, scenarios=(failing, rb.TASK_CAPTURE)))
    lab.ingest()
    task = lab.compare("a", "b").scenario("synthetic-throughput").figure("task_success")
    assert task.delta is not None and task.delta < -0.4
    assert task.interval is not None and task.interval.method == stats.CLUSTER_RATE_METHOD
    assert task.verdict == "inconclusive"


def test_two_runs_from_one_distribution_are_never_called_better_or_worse(lab: Lab) -> None:
    lab.add("a", BASE).add("b", BASE.but(build="24A5270a", started=LATER, noise_seed=99)).ingest()
    c = lab.compare("a", "b")
    assert c.multiplicity == "bonferroni"
    assert c.changes() == []
    found = Counter(f.verdict for s in c.scenarios for f in s.figures)
    assert set(found) == {"inconclusive", "within tolerance", "not tested"}
    # the two-sample workload cannot tell a change of the threshold's size: none of it is called within tolerance
    assert {f.verdict for f in c.scenario("synthetic-throughput").figures} == {"inconclusive", "not tested"}


def test_values_not_recorded_on_a_side_are_none_and_never_zero(lab: Lab) -> None:
    no_memory = rb.Scenario("synthetic-throughput", "Synthetic throughput", "syntheticThroughput", memory=None)
    lab.add("a", BASE).add("b", BASE.but(build="24A5270a", started=LATER, scenarios=(no_memory,))).ingest()
    f = lab.compare("a", "b").scenario("synthetic-throughput").figure("peak_memory")
    assert f.baseline is not None and f.candidate is None
    assert f.delta is None and f.verdict == "not recorded"
    assert f.note == "not recorded on the candidate"


def test_a_single_run_side_reports_the_figures_stored_at_ingest(lab: Lab) -> None:
    lab.add("a", BASE.but(scenarios=(rb.Scenario("x", "X", "taskParsing", failures=3), rb.SYNTHETIC)))
    lab.add("b", BASE.but(build="24A5270a", started=LATER)).ingest()
    c = lab.compare("a", "b")
    with connect(lab.db, read_only=True) as con:
        rows = con.execute(
            "SELECT scenario_id, task_success, prompt_pass_rate, mean_constraint_score, ttft_median, ttft_p90, "
            "tps_median, tps_p90, memory_max FROM scenario_figures WHERE run_id = ?",
            [lab.ids["a"]],
        ).fetchall()
    keys = ("task_success", "prompt_pass", "constraint_score", "ttft_median", "ttft_p90", "tps_median", "tps_p90",
            "peak_memory")
    for sid, *stored in rows:
        mine = [c.scenario(sid).figure(k).baseline for k in keys]
        assert mine == pytest.approx(stored)


# --- attempt rules -------------------------------------------------------------------------------


def test_attempt_rules_change_which_runs_are_used_and_every_output_states_the_rule(lab: Lab) -> None:
    days = [datetime(2026, 11, d, 9, 0, tzinfo=UTC) for d in (1, 2, 3)]
    for i, day in enumerate(days):
        lab.add(f"old{i}", BASE.but(started=day, noise_seed=10 + i, ttft_offset=0.1 * i))
    lab.add("new", BASE.but(build="24A5270a", started=LATER)).ingest()
    sides = ("os_build=24A5264n", "os_build=24A5270a")
    used = {rule: lab.compare(*sides, rule=rule) for rule in ("latest", "first", "pooled")}
    assert used["latest"].baseline.run_ids == (lab.ids["old2"],)
    assert used["first"].baseline.run_ids == (lab.ids["old0"],)
    assert used["pooled"].baseline.run_ids == tuple(lab.ids[f"old{i}"] for i in range(3))
    assert used["pooled"].scenarios[0].baseline_trials == 3 * used["latest"].scenarios[0].baseline_trials
    assert [r.run_id for r in used["latest"].baseline.not_used] == [lab.ids["old0"], lab.ids["old1"]]
    medians = {rule: c.scenarios[0].figure("ttft_median").baseline for rule, c in used.items()}
    assert medians["first"] < medians["pooled"] < medians["latest"]
    for rule, c in used.items():
        assert c.rule == rule
        assert f"Attempt rule: {rule}:" in c.to_markdown()
        assert f"attempt rule: {rule}:" in c.to_text()
        payload = c.to_json()
        assert payload["rule"] == rule and payload["rule_description"].startswith(f"{rule}:")
        json.dumps(payload)


# --- sides and filters ----------------------------------------------------------------------------


def test_a_side_is_a_run_id_a_run_file_or_a_filter_expression(lab: Lab) -> None:
    lab.add("a", BASE).add("b", BASE.but(build="24A5270a", started=LATER)).ingest()
    by_file = compare_runs(str(lab.paths["a"]), str(lab.paths["b"]), lab.db)
    by_id = compare_runs(lab.ids["a"], lab.ids["b"], lab.db)
    by_filter = compare_runs("device=iPhone18,1 os_build=24A5264n", "os_build=24A5270a route=onDevice", lab.db)
    assert by_file.baseline.run_ids == by_id.baseline.run_ids == by_filter.baseline.run_ids == (lab.ids["a"],)
    assert by_file.baseline.spec.kind == "file" and by_id.baseline.spec.kind == "run"
    assert by_filter.baseline.spec.filters == (("device", "iPhone18,1"), ("os_build", "24A5264n"))


def test_a_run_file_that_was_not_ingested_is_named_with_the_command_to_ingest_it(lab: Lab, tmp_path: Path) -> None:
    lab.add("a", BASE).ingest()
    loose = rb.write_run(BASE.but(started=LATER), tmp_path / "elsewhere", "loose")
    with pytest.raises(NotFoundError, match=r"loose\.json \(run [0-9a-f]{12}\) is not in the database; ingest it"):
        compare_runs(str(loose), lab.ids["a"], lab.db)


def test_filter_expressions_accept_the_documented_keys_and_name_an_unknown_one() -> None:
    assert parse_filter("device=Mac17,2 os_build=26A5353q session=cold") == (
        ("device", "Mac17,2"), ("os_build", "26A5353q"), ("session", "cold")
    )
    assert parse_filter('device="Mac17,2"') == (("device", "Mac17,2"),)
    assert set(FILTER_KEYS) == {"device", "os_build", "route", "suite", "session", "reasoning", "fallback",
                                "connectivity", "revision", "run"}
    with pytest.raises(FilterError) as caught:
        parse_filter("device=Mac17,2 chip=M5")
    assert str(caught.value) == (
        "unknown filter key 'chip'; accepted keys: device, os_build, route, suite, session, reasoning, fallback, "
        "connectivity, revision, run"
    )
    for bad, message in (
        ("device", "is not key=value"),
        ("device=", "has no value"),
        ("device=a device=b", "given twice"),
        ('device="Mac', "cannot be read"),
        ("", "selects nothing"),
    ):
        with pytest.raises(FilterError, match=message):
            parse_side(bad) if bad == "" else parse_filter(bad)
    with pytest.raises(FilterError, match="not a run id"):
        parse_side("latest-mac")


def test_filter_values_are_bound_parameters_never_sql(lab: Lab) -> None:
    lab.add("a", BASE).ingest()
    hostile = "device=\"x' OR '1'='1\""
    with pytest.raises(NotFoundError, match="no ingested run matches"):
        compare_runs(hostile, lab.ids["a"], lab.db)
    with duckdb.connect(str(lab.db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM runs").fetchone() == (1,)


def test_compare_sides_works_on_an_open_connection(lab: Lab) -> None:
    lab.add("a", BASE).add("b", BASE.but(build="24A5270a", started=LATER)).ingest()
    with connect(lab.db, read_only=True) as con:
        c = compare_sides(con, lab.ids["a"], "os_build=24A5270a", multiplicity="none")
    assert c.figure_confidence == 0.95 and c.confidence == 0.95


# --- outputs ------------------------------------------------------------------------------------------


def test_markdown_json_and_text_state_the_label_rule_runs_differences_caveats_and_the_table(lab: Lab) -> None:
    lab.add("a", BASE).add("b", BASE.but(build="24A5270a", warmups=2, started=LATER, ttft_offset=0.1)).ingest()
    c = lab.compare("a", "b")
    md = c.to_markdown()
    assert md.startswith("# OS comparison on iPhone18,1: 24A5264n → 24A5270a\n")
    for part in ("**OS comparison.** Attempt rule: latest:", "## Runs", lab.ids["a"], lab.ids["b"],
                 "## What differs", "| OS build | 24A5264n | 24A5270a |", "| Warmups | 5 | 2 |", "## Caveats",
                 "exploratory", "| Scenario | Figure | Better | Baseline | Candidate | Delta | Relative | Interval | Smallest detectable "
                 "| Verdict |",
                 "| Synthetic throughput | Median TTFT | lower |", "Bonferroni"):
        assert part in md, part
    text = c.to_text()
    assert text.splitlines()[0] == "OS comparison on iPhone18,1: 24A5264n → 24A5270a"
    assert "  - Warmups: 5 → 2" in text and "worse" in text
    payload = json.loads(json.dumps(c.to_json()))
    assert payload["label"] == "OS comparison" and payload["rule"] == "latest"
    assert payload["baseline"]["runs"][0]["run_id"] == lab.ids["a"]
    figure = payload["scenarios"][0]["figures"][3]
    assert figure["key"] == "ttft_median" and figure["better"] == "lower" and figure["verdict"] == "worse"
    assert set(figure["interval"]) == {"low", "high", "confidence", "method", "paired"}
    assert figure["interval"]["paired"] is True and payload["scenarios"][0]["paired"] is True  # the same samples


def test_run_supplied_text_cannot_break_the_markdown_table(lab: Lab) -> None:
    odd = rb.Scenario("odd", "A | B <script>", "taskParsing")
    lab.add("a", BASE.but(scenarios=(odd,))).add("b", BASE.but(build="24A5270a", scenarios=(odd,), started=LATER))
    lab.ingest()
    md = lab.compare("a", "b").to_markdown()
    assert "| A \\| B &lt;script> |" in md and "<script>" not in md


# --- the command ---------------------------------------------------------------------------------------


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def test_the_compare_command_prints_the_label_differences_and_table(lab: Lab) -> None:
    lab.add("a", BASE).add("b", BASE.but(build="24A5270a", started=LATER, ttft_offset=0.1)).ingest()
    code, out = invoke("compare", lab.ids["a"], "device=iPhone18,1 os_build=24A5270a", "--db", str(lab.db))
    assert code == 0
    assert out.startswith("OS comparison on iPhone18,1: 24A5264n → 24A5270a\n")
    assert "OS build: 24A5264n → 24A5270a" in out and "Median TTFT" in out
    code, out = invoke("compare", lab.ids["a"], lab.ids["b"], "--db", str(lab.db), "--json", "--rule", "first")
    assert code == 0 and json.loads(out)["rule"] == "first"
    code, out = invoke("compare", lab.ids["a"], lab.ids["b"], "--db", str(lab.db), "--markdown", "--strict-os")
    assert code == 0 and out.startswith("# OS comparison") and "Strict OS 26 vs OS 27 mode" in out


def test_the_compare_command_exits_1_with_one_line_when_refused_or_given_a_bad_filter(lab: Lab) -> None:
    lab.add("a", BASE).add("bad", BASE.but(started=LATER), hand_edited=True).ingest()
    code, out = invoke("compare", lab.ids["a"], lab.ids["bad"], "--db", str(lab.db))
    assert code == 1
    assert out.startswith("Error: comparison refused: the candidate run ") and out.count("\n") == 1
    code, out = invoke("compare", "devise=Mac17,2", lab.ids["a"], "--db", str(lab.db))
    assert code == 1
    assert out == (
        "Error: unknown filter key 'devise'; accepted keys: device, os_build, route, suite, session, reasoning, "
        "fallback, connectivity, revision, run\n"
    )


# --- the statistics ---------------------------------------------------------------------------------------


def test_the_bootstrap_distribution_of_a_rank_is_the_binomial_one_resampling_produces() -> None:
    n, k, draws = 9, 5, 40_000
    first, probabilities = stats.rank_distribution(n, k)
    exact = dict(enumerate(probabilities, start=first))

    def at_least_k(p: float) -> float:
        return sum(math.comb(n, i) * p**i * (1 - p) ** (n - i) for i in range(k, n + 1))

    rng = random.Random(5)
    brute = Counter(sorted(rng.choices(range(n), k=n))[k - 1] for _ in range(draws))
    for j in range(n):
        # P(the rank-k value of a resample is x[j]) = P(Bin(n, (j+1)/n) >= k) - P(Bin(n, j/n) >= k)
        assert exact.get(j, 0.0) == pytest.approx(at_least_k((j + 1) / n) - at_least_k(j / n), abs=1e-12)
        assert brute[j] / draws == pytest.approx(exact.get(j, 0.0), abs=0.01)
    assert sum(probabilities) == pytest.approx(1.0, abs=1e-12)


def test_the_exact_bootstrap_interval_is_what_many_resamples_converge_to() -> None:
    rng = random.Random(3)
    a = [round(rng.gauss(1.0, 0.2), 3) for _ in range(12)]
    b = [round(rng.gauss(1.1, 0.2), 3) for _ in range(12)]
    sampler = random.Random(1)
    for q in (0.5, 0.9):
        interval = stats.bootstrap_quantile_difference(a, b, q, confidence=0.8)
        assert interval is not None
        resampled = [
            nearest_rank(sorted(sampler.choices(b, k=12)), q) - nearest_rank(sorted(sampler.choices(a, k=12)), q)
            for _ in range(50_000)
        ]
        # The bounds are where the resampled differences' distribution crosses 10 % and 90 %.
        below_low = sum(d < interval.low for d in resampled) / len(resampled)
        upto_low = sum(d <= interval.low for d in resampled) / len(resampled)
        below_high = sum(d < interval.high for d in resampled) / len(resampled)
        upto_high = sum(d <= interval.high for d in resampled) / len(resampled)
        assert below_low < 0.1 + 0.005 and upto_low > 0.1 - 0.005
        assert below_high < 0.9 + 0.005 and upto_high > 0.9 - 0.005


def test_the_median_interval_calls_noise_a_change_about_as_often_as_its_level_allows() -> None:
    rng = random.Random(2026)
    pairs = 400
    false_alarms = 0
    for _ in range(pairs):
        a = [rng.gauss(0.3, 0.05) for _ in range(40)]
        b = [rng.gauss(0.3, 0.05) for _ in range(40)]
        interval = stats.bootstrap_quantile_difference(a, b, 0.5)
        assert interval is not None
        false_alarms += interval.excludes_zero
    assert 0.01 <= false_alarms / pairs <= 0.09


def test_the_newcombe_interval_matches_newcombes_published_examples() -> None:
    # Newcombe (1998), Statistics in Medicine 17:873-890, table II, method 10.
    one = stats.newcombe_difference(48, 80, 56, 70)
    two = stats.newcombe_difference(3, 10, 9, 10)
    assert one is not None and two is not None
    assert (round(one.low, 4), round(one.high, 4)) == (0.0524, 0.3339)
    assert (round(two.low, 4), round(two.high, 4)) == (0.1705, 0.8090)
    assert stats.newcombe_difference(0, 10, 0, 0) is None


def test_too_few_values_give_no_interval_rather_than_a_point() -> None:
    assert stats.bootstrap_quantile_difference([1.0] * 4, [2.0] * 40, 0.5) is None
    assert stats.mean_difference([1.0] * 40, [1.0] * 3) is None
    identical = stats.bootstrap_quantile_difference([1.0] * 10, [1.0] * 10, 0.5)
    assert identical is not None and not identical.excludes_zero
