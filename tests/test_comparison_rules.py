"""The methodology's rules in comparisons and summaries, each proved on run files written for it:
token count sources, trials split by executed model, configurations never pooled, PCC network
conditions, sides with no measured trial, and comparing two files with no database."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_compare import BASE, LATER, Lab, rb

from fmbench.analysis.report import summary_json
from fmbench.analysis.run import analyze_file
from fmbench.cli import main
from fmbench.comparison.compare import ComparisonRefused, compare_runs

PCC = BASE.but(route="privateCloudCompute", fallback="onDevice")


@pytest.fixture
def lab(tmp_path: Path) -> Lab:
    return Lab(tmp_path)


# --- token count source ---------------------------------------------------------------------


def test_tokens_per_second_between_a_counted_and_an_estimated_side_gets_no_verdict_but_characters_per_second_does(
    lab: Lab,
) -> None:
    # The same trials; the candidate's token counts estimated from characters read 20% lower.
    lab.add("counted", BASE)
    lab.add("estimated", BASE.but(started=LATER, token_source="characterEstimate", tps_offset=-8.0)).ingest()
    c = lab.compare("counted", "estimated")
    named = {x.key: (x.baseline, x.candidate) for x in c.differences}
    assert named["token_count_source"] == ("System tokenizer", "Character estimate")
    for s in c.scenarios:
        for key in ("tps_median", "tps_p90"):
            f = s.figure(key)
            assert f.verdict == "not comparable" and f.interval is None
            assert f.note is not None and "estimated from characters on the candidate" in f.note
        cps = s.figure("cps_median")
        assert cps.interval is not None
        assert cps.verdict == "within tolerance"  # characters per second did not change: its interval is inside ±5 %
        assert cps.baseline == pytest.approx(cps.candidate)
    assert not any(f.verdict in ("better", "worse") for _, f in c.changes() if f.key.startswith("tps"))
    text = c.to_markdown()
    assert "Median output characters/s" in text and "estimated from characters" in text


def test_two_counted_sources_of_different_kinds_are_a_listed_difference_and_tokens_per_second_is_still_tested(
    lab: Lab,
) -> None:
    lab.add("tokenizer", BASE).add("usage", BASE.but(started=LATER, token_source="sessionUsage")).ingest()
    c = lab.compare("tokenizer", "usage")
    named = {x.label: (x.baseline, x.candidate) for x in c.differences}
    assert "Token count source" in named and named["Token count source"][1] != named["Token count source"][0]
    s = c.scenario("synthetic-throughput")
    assert s.figure("tps_median").verdict == "within tolerance"
    assert s.figure("tps_median").interval is not None
    assert not any(f.key.startswith("cps") for f in s.figures)


def _rewrite(path: Path, change: object) -> None:
    doc = json.loads(path.read_text())
    change(doc)  # type: ignore[operator]
    path.write_text(json.dumps(doc, indent=2, sort_keys=True, separators=(",", " : ")) + "\n")


def test_summarize_json_gives_the_token_count_source_of_the_run_and_of_each_scenario_mixed_where_it_is(
    tmp_path: Path,
) -> None:
    path = rb.write_run(BASE, tmp_path, "mixed")

    def estimate_first_trial(doc: dict) -> None:  # type: ignore[type-arg]
        doc["trials"][0]["metrics"]["tokenCountSource"] = "characterEstimate"

    _rewrite(path, estimate_first_trial)
    result = CliRunner().invoke(main, ["summarize", "--json", str(path)])
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert doc["run"]["tokenCountSource"] == "mixed"
    sources = {s["id"]: s["tokenCountSource"] for s in doc["scenarios"]}
    assert sources == {"synthetic-throughput": "mixed", "task-capture": "systemTokenizer"}


# --- split by executed model ----------------------------------------------------------------


def test_a_pcc_run_with_fallback_trials_has_its_speed_and_memory_per_executed_model(tmp_path: Path) -> None:
    path = rb.write_run(PCC.but(fallback_every=4), tmp_path, "fallback")
    a = analyze_file(path)
    assert a.verdict.level != "invalid"  # the stored, pooled summaries still match
    doc = summary_json(a)
    for s in doc["scenarios"]:
        split = s["byExecutedModel"]
        assert set(split) == {"privateCloudCompute", "onDevice"}
        pcc_trials, fallbacks = split["privateCloudCompute"]["trialCount"], split["onDevice"]["trialCount"]
        assert fallbacks * 4 == pcc_trials + fallbacks == s["trialCount"]  # every fourth trial fell back
        pcc_peak = split["privateCloudCompute"]["peakObservedResidentMemoryBytes"]["maximum"]
        assert pcc_peak < 1_600_000_000 < split["onDevice"]["peakObservedResidentMemoryBytes"]["maximum"]
        assert split["onDevice"]["outputTokensPerSecond"]["median"] == 25.0
        # The pooled figure is the stored one: the fallback's memory is its maximum.
        assert s["peakObservedResidentMemoryBytes"]["maximum"] == 2_200_000_000
        assert set(split["onDevice"]) == {
            "trialCount", "duration", "timeToFirstToken", "outputTokensPerSecond", "peakObservedResidentMemoryBytes"
        }


def test_by_executed_model_is_absent_where_every_trial_ran_on_one_model(tmp_path: Path) -> None:
    doc = summary_json(analyze_file(rb.write_run(PCC, tmp_path, "pcc")))
    assert all("byExecutedModel" not in s for s in doc["scenarios"])


def test_a_pcc_comparison_uses_pcc_executed_trials_only_and_says_how_many_fell_back(lab: Lab) -> None:
    lab.add("june", PCC).add("july", PCC.but(started=LATER, fallback_every=4)).ingest()
    c = lab.compare("june", "july")
    assert c.label == "Longitudinal PCC comparison"
    s = c.scenario("synthetic-throughput")
    assert s.figure("peak_memory").candidate is not None
    assert s.figure("peak_memory").candidate < 1_600_000_000  # not the fallback trials' 2.2 GB
    assert s.figure("tps_median").candidate > 30  # not pulled down by the fallbacks' 25 tokens/s
    assert s.candidate_trials == 40  # quality still counts every trial
    caveat = next(x for x in c.caveats if x.code == "pcc-fallback")
    assert "135 of the candidate's 540 trial(s) fell back" in caveat.message


# --- no pooling of configurations -----------------------------------------------------------


def test_fmbench_compare_refuses_cold_against_warm_with_exit_1_and_the_reason_in_one_line(lab: Lab) -> None:
    lab.add("cold", BASE).add("warm", BASE.but(session="warm", started=LATER)).ingest()
    with pytest.raises(ComparisonRefused) as caught:
        lab.compare("cold", "warm")
    assert caught.value.code == "session-modes"
    result = CliRunner().invoke(main, ["compare", "--db", str(lab.db), lab.ids["cold"], lab.ids["warm"]])
    assert result.exit_code == 1
    assert result.output.strip().count("\n") == 0
    assert "cold and warm sessions are never compared" in result.output
    assert "Traceback" not in result.output


def test_fmbench_compare_refuses_different_suites(lab: Lab) -> None:
    lab.add("performance", BASE).add("full", BASE.but(suite="full", started=LATER)).ingest()
    result = CliRunner().invoke(main, ["compare", "--db", str(lab.db), lab.ids["performance"], lab.ids["full"]])
    assert result.exit_code == 1
    assert "differ in suite (Synthetic Performance against Practical Full)" in result.output
    assert result.output.strip().count("\n") == 0


# --- PCC network conditions -----------------------------------------------------------------


def test_two_pcc_runs_measured_over_different_networks_list_the_connection_and_location(lab: Lab) -> None:
    lab.add("home", PCC).add("office", PCC.but(started=LATER, noise_seed=2))
    rb.write_sidecar(lab.paths["home"], "wifi", "Berlin, DE")
    rb.write_sidecar(lab.paths["office"], "cellular 5G", "Munich, DE")
    lab.ingest()
    c = lab.compare("home", "office")
    named = {x.key: (x.baseline, x.candidate) for x in c.differences}
    assert named["pcc_connection"] == ("wifi", "cellular 5G")
    assert named["pcc_location"] == ("Berlin, DE", "Munich, DE")
    assert any(x.code == "pcc-network-differs" for x in c.caveats)
    text = c.to_markdown()
    assert "| PCC connection (sidecar) | wifi | cellular 5G |" in text
    assert "Caveats\n\nNone." not in text


def test_a_pcc_run_without_a_sidecar_says_its_network_conditions_were_not_recorded(lab: Lab) -> None:
    lab.add("june", PCC).add("july", PCC.but(started=LATER, noise_seed=2)).ingest()
    c = lab.compare("june", "july")
    caveat = next(x for x in c.caveats if x.code == "pcc-network-unrecorded")
    assert "Network conditions not recorded" in caveat.message


# --- a side with no measured trial ----------------------------------------------------------


def test_a_side_whose_every_request_failed_shows_no_measured_trial_not_not_recorded(lab: Lab) -> None:
    failing = rb.Scenario("task-capture", "Natural-language task capture", "taskParsing", samples=2, failures=40)
    lab.add("a", BASE).add("b", BASE.but(started=LATER, scenarios=(rb.SYNTHETIC, failing))).ingest()
    c = lab.compare("a", "b")
    s = c.scenario("task-capture")
    assert s.candidate_trials == 0 and s.candidate_attempts == 40
    ttft = s.figure("ttft_median")
    assert ttft.verdict == "no measured trial" and ttft.note == "no measured trial on the candidate"
    assert "| Natural-language task capture | Median TTFT | lower | " in c.to_markdown()
    assert "no measured trial" in c.to_text()
    assert s.figure("task_success").candidate == 0.0  # attempts were made: success is 0 of 40, a figure


# --- no database ----------------------------------------------------------------------------


def test_fmbench_compare_of_two_run_files_needs_no_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a = rb.write_run(BASE, tmp_path / "runs", "a")
    b = rb.write_run(BASE.but(build="24A5270a", started=LATER, noise_seed=2), tmp_path / "runs", "b")
    missing = tmp_path / "nowhere" / "fmbench.duckdb"
    monkeypatch.setenv("FMBENCH_DB", str(missing))
    monkeypatch.chdir(tmp_path)
    c = compare_runs(str(a), str(b))
    assert c.label == "OS comparison"
    result = CliRunner().invoke(main, ["compare", "--json", str(a), str(b)])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["label"] == "OS comparison"
    assert not missing.exists() and not missing.parent.exists()


def test_fmbench_compare_of_a_file_that_is_not_a_run_names_the_file(tmp_path: Path) -> None:
    good = rb.write_run(BASE, tmp_path, "good")
    bad = tmp_path / "bad.json"
    bad.write_text('{"suite": "performance"}')
    result = CliRunner().invoke(main, ["compare", str(good), str(bad)])
    assert result.exit_code == 1
    assert "bad.json" in result.output and "Traceback" not in result.output


def test_the_api_and_data_files_give_token_count_source_per_run_and_scenario(lab: Lab) -> None:
    from fmbench.serving.serve import create_app

    lab.add("estimated", BASE.but(token_source="characterEstimate")).ingest()
    run_id = lab.ids["estimated"]
    client = create_app(lab.db, host="127.0.0.1", port=8000).test_client()
    headers = {"Host": "127.0.0.1:8000"}
    listing = client.get("/api/runs", headers=headers).get_json()
    assert [r["token_count_source"] for r in listing["runs"]] == ["characterEstimate"]
    one = client.get(f"/api/runs/{run_id}", headers=headers).get_json()
    assert one["run"]["token_count_source"] == "characterEstimate"
    assert {s["token_count_source"] for s in one["scenarios"]} == {"characterEstimate"}
    page = client.get(f"/runs/{run_id}/", headers=headers).get_data(as_text=True)
    assert "Character estimate (estimated from characters)" in page


def test_regressions_and_the_feed_list_no_tokens_per_second_change_between_counted_and_estimated_builds(
    tmp_path: Path,
) -> None:
    from fmbench.comparison.regressions import atom_feed, detect_regressions
    from fmbench.ingest import ingest_paths

    folder = tmp_path / "runs"
    rb.write_run(BASE.but(build="24A100a"), folder, "a")
    rb.write_run(BASE.but(build="24A200b", started=LATER, token_source="characterEstimate", tps_offset=-8.0), folder, "b")
    assert ingest_paths([folder], tmp_path / "db.duckdb").ok
    report = detect_regressions(tmp_path / "db.duckdb")
    assert len(report.steps) == 1
    assert not [c for c in report.changes if c.figure.key.startswith("tps")]
    step = report.steps[0]
    assert step.comparison is not None
    tps = step.comparison.scenario("synthetic-throughput").figure("tps_median")
    assert tps.verdict == "not comparable" and tps.delta is not None and tps.delta < 0
    feed = atom_feed(report.regressions, site_url="https://example.org/fmbench/",
                     generated_at=datetime(2026, 11, 20, tzinfo=UTC))
    assert "tokens/s" not in feed


def test_a_side_that_records_no_token_count_source_gets_no_tokens_per_second_verdict_against_a_counted_one(
    lab: Lab,
) -> None:
    lab.add("unrecorded", BASE).add("counted", BASE.but(build="24A5270a", started=LATER, tps_offset=-8.0))

    def drop_sources(doc: dict) -> None:  # type: ignore[type-arg]
        for t in doc["trials"]:
            del t["metrics"]["tokenCountSource"]

    _rewrite(lab.paths["unrecorded"], drop_sources)
    lab.ingest()
    c = lab.compare("unrecorded", "counted")
    f = c.scenario("synthetic-throughput").figure("tps_median")
    assert f.verdict == "not comparable"
    assert f.note == ("not compared: the token count source is not recorded on the baseline; characters per "
                      "second is compared instead")
    assert c.scenario("synthetic-throughput").figure("cps_median").verdict == "within tolerance"
