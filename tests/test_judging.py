"""Judging real files: Simulator evidence from the hardware table or the sidecar, and stored
summaries checked against every scoring rule set the benchmark has used."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from fmbench.analysis.run import analyze_file
from fmbench.cli import main
from fmbench.runfile.models import Environment
from fmbench.runfile.rulesets import rule_book
from fmbench.runfile.simulator import hardware_models, judge_simulator

from testdata import EXAMPLE_NAME, EXAMPLES, FIXTURES, JUDGING, RUNS

SIMULATOR = JUDGING / "purpose-simulator.json"
DECLARED_DEVICE = JUDGING / "purpose-simulator-declared-device.json"
RULES_A = JUDGING / "purpose-rules-a.json"
RULES_B = JUDGING / "purpose-rules-b-no-commit.json"
RULES_C_COMMIT_OF_B = JUDGING / "purpose-rules-c-commit-of-b.json"
HAND_EDITED = RUNS / "purpose-hand-edited.json"


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def _reason(path: Path, code: str) -> str:
    analysis = analyze_file(path)
    return next(r.message for r in analysis.verdict.reasons if r.code == code)


# --- Simulator ---------------------------------------------------------------------------------


def test_the_hardware_table_knows_the_models_the_fixtures_and_recent_devices_name() -> None:
    table = hardware_models()
    for model in ("iPhone16,1", "iPhone17,1", "iPhone18,1", "iPad16,1", "iPad16,3", "iPad15,3", "iPad17,3"):
        assert model in table
    assert table["iPhone18,1"].cores == (6,) and table["iPhone18,1"].installed_bytes == 12 * 2**30


def test_a_run_reporting_the_host_macs_cores_and_memory_is_invalid_with_the_evidence_named() -> None:
    analysis = analyze_file(SIMULATOR)
    assert analysis.verdict.level == "invalid"
    message = _reason(SIMULATOR, "simulator")
    assert "iPhone18,1 has 6 cores; this run reports 12" in message
    assert "iPhone18,1 has at most 12 GB installed; this run reports 32.0 GB" in message
    assert analysis.simulator is not None and analysis.simulator.basis == "hardware"


def test_memory_alone_above_the_installed_ram_is_evidence_and_reported_memory_below_it_is_not() -> None:
    base = {"deviceName": "iPhone 17 Pro", "systemName": "iOS", "systemVersion": "27.0.0", "cpuCores": 6,
            "localeIdentifier": "en_US", "hardwareModel": "iPhone18,1", "cpuModel": "Apple A-series",
            "gpuModel": "Apple GPU", "thermalState": "nominal", "lowPowerModeEnabled": False,
            "timestamp": "2026-11-03T09:00:00Z"}
    device = judge_simulator(Environment.model_validate_json(json.dumps({**base, "totalMemory": 11_900_000_000})))
    assert device.is_simulator is False
    host = judge_simulator(Environment.model_validate_json(json.dumps({**base, "totalMemory": 16 * 2**30})))
    assert host.is_simulator is True
    assert host.evidence == "iPhone18,1 has at most 12 GB installed; this run reports 16.0 GB"


def test_a_model_not_in_the_table_is_a_note_not_a_verdict() -> None:
    analysis = analyze_file(JUDGING / "purpose-unknown-model.json")
    assert analysis.verdict.level != "invalid"
    assert "simulator" not in [r.code for r in analysis.verdict.reasons]
    notes = [str(p) for p in analysis.flags if p.where == "environment.hardwareModel"]
    assert len(notes) == 1 and "iPhone99,9 is not in fmbench's table" in notes[0]


def test_a_mac_is_never_a_simulator() -> None:
    analysis = analyze_file(FIXTURES / "macbook-pro-m5-macos27-26a5378f-on-device-quick-2026-11-12.json")
    assert analysis.simulator is not None and analysis.simulator.basis == "not-applicable"
    assert not analysis.simulator.is_simulator


def test_the_sidecar_decides_against_the_hardware_evidence_and_its_evidence_is_shown() -> None:
    analysis = analyze_file(DECLARED_DEVICE)
    assert analysis.simulator is not None
    assert analysis.simulator.basis == "sidecar" and analysis.simulator.is_simulator is False
    assert "simulator" not in [r.code for r in analysis.verdict.reasons]
    assert "lab unit 2" in analysis.simulator.evidence
    code, out = invoke("summarize", str(DECLARED_DEVICE), "--json")
    run = json.loads(out)["run"]
    assert code == 0 and run["isSimulator"] is False and "lab unit 2" in run["simulatorEvidence"]


def test_a_sidecar_saying_simulator_true_makes_a_device_shaped_run_invalid(tmp_path: Path) -> None:
    run = tmp_path / "device.json"
    shutil.copyfile(RUNS / "purpose-current.json", run)
    (tmp_path / "device.meta.yaml").write_text(
        "simulator: true\nevidence: run from Xcode on the iPhone 17 Pro simulator\n", encoding="utf-8"
    )
    analysis = analyze_file(run)
    assert analysis.verdict.level == "invalid"
    assert "device.meta.yaml says a Simulator: run from Xcode" in _reason(run, "simulator")


def test_a_sidecar_stating_simulator_without_evidence_is_one_line_and_the_run_is_judged_without_it(
    tmp_path: Path,
) -> None:
    run = tmp_path / "device.json"
    shutil.copyfile(SIMULATOR, run)
    shutil.copyfile(JUDGING / "simulator-without-evidence.meta.yaml", tmp_path / "device.meta.yaml")
    analysis = analyze_file(run)
    assert analysis.annotations is not None and analysis.annotations.unreadable
    assert analysis.annotations.simulator is None
    (problem,) = analysis.annotations.problems
    assert problem.startswith("device.meta.yaml: simulator: true needs evidence: beside it")
    result = CliRunner().invoke(main, ["summarize", str(run)])
    assert result.exit_code == 0
    (warning,) = result.stderr.strip().splitlines()
    assert warning.startswith("warning: device.meta.yaml: simulator: true needs evidence:")
    code, out = invoke("validate", str(run))
    assert code == 1 and "sidecar     device.meta.yaml: simulator: true needs evidence:" in out


def test_an_ingested_simulator_run_shows_its_evidence_on_the_run_page(tmp_path: Path) -> None:
    from fmbench.ingest import ingest_paths
    from fmbench.storage.db import connect
    from fmbench.views import site_context
    from fmbench.views.filters import Filters
    from fmbench.views.render import Renderer
    from fmbench.views.run_page import run_page

    db = tmp_path / "sim.duckdb"
    assert ingest_paths([SIMULATOR, RULES_B], db).ok
    with connect(db, read_only=True) as con:
        site = site_context(con, Renderer())
        page = run_page(site, Filters(), analyze_file(SIMULATOR).record.run_id)
        conditions = {c.label: c.value for c in page.conditions}
        assert conditions["Simulator"].startswith("yes: iPhone18,1 has 6 cores; this run reports 12")
        rules_page = run_page(site, Filters(), analyze_file(RULES_B).record.run_id)
        rules = {c.label: c.value for c in rules_page.conditions}
        assert rules["Scoring rules of the stored summaries"] == "stored under rules B, before 60b596e"


# --- scoring rules by history --------------------------------------------------------------------


def test_the_commit_table_matches_recorded_commits_by_prefix_either_way() -> None:
    book = rule_book()
    assert book.for_commit("cf13743").name == "A"  # type: ignore[union-attr]
    assert book.for_commit("cf13743a9b2").name == "A"  # type: ignore[union-attr]
    assert book.for_commit("60b5").name == "C"  # type: ignore[union-attr]
    assert book.for_commit("") is None and book.for_commit(None) is None
    assert book.for_commit("deadbee") is None
    assert book.current.name == "D"


def test_a_run_under_rules_a_with_its_commit_is_not_invalid_and_names_its_rules() -> None:
    analysis = analyze_file(RULES_A)
    assert analysis.verdict.level != "invalid" and analysis.mismatches == []
    assert analysis.scoring is not None and analysis.scoring.statement == "stored under rules A, before abaeb8d"
    code, out = invoke("validate", str(RULES_A))
    assert code == 0 and "summaries   stored under rules A, before abaeb8d" in out


def test_a_run_under_rules_b_without_a_commit_is_not_invalid_and_names_its_rules() -> None:
    analysis = analyze_file(RULES_B)
    assert analysis.verdict.level != "invalid" and analysis.mismatches == []
    code, out = invoke("summarize", str(RULES_B), "--json")
    run = json.loads(out)["run"]
    assert code == 0
    assert run["scoringRules"] == "B"
    assert run["scoringRulesStatement"] == "stored under rules B, before 60b596e"
    code, out = invoke("validate", str(RULES_B), "--json")
    assert json.loads(out)[0]["scoringRulesStatement"] == "stored under rules B, before 60b596e"


def test_figures_shown_are_under_the_current_rules_whatever_the_stored_rules() -> None:
    a, b, d = (analyze_file(p) for p in (RULES_A, RULES_B, RUNS / "purpose-current.json"))
    for other in (a, b):
        assert [f.to_summary() for f in other.figures] == [f.to_summary() for f in d.figures]
    capture = next(f for f in d.figures if f.scenario_id == "task-capture")
    assert capture.prompt_pass_rate == 0.5 and capture.mean_constraint_score == pytest.approx(5 / 6)


def test_a_commit_whose_rules_do_not_explain_the_run_while_another_set_does_is_a_flag() -> None:
    analysis = analyze_file(RULES_C_COMMIT_OF_B)
    assert analysis.verdict.level != "invalid"
    assert analysis.scoring is not None and analysis.scoring.explained_by is not None
    assert analysis.scoring.explained_by.name == "C"
    flags = [p.message for p in analysis.flags if p.where == "environment.foundationModelsBenchCommit"]
    assert flags == [
        "the recorded commit scores under rules B (before 60b596e), but the stored summaries match "
        "rules C (before 4e9fa34) and not rules B"
    ]


def test_a_hand_edit_that_no_rule_set_explains_is_still_invalid() -> None:
    analysis = analyze_file(HAND_EDITED)
    assert analysis.verdict.level == "invalid"
    assert analysis.scoring is not None and analysis.scoring.explained_by is None
    assert [str(m) for m in analysis.mismatches] == ["task-capture.promptPassRate: stored 1.0, recomputed 0.5"]
    assert "under every scoring rule set" in _reason(HAND_EDITED, "summary-mismatch")
    code, out = invoke("summarize", str(HAND_EDITED), "--json")
    assert code == 0 and json.loads(out)["run"]["scoringRules"] is None


def test_the_published_june_file_names_the_legacy_rules_of_its_commit() -> None:
    path = EXAMPLES / f"{EXAMPLE_NAME}.json"
    analysis = analyze_file(path)
    assert analysis.verdict.level != "invalid"
    assert analysis.scoring is not None
    assert analysis.scoring.statement == "stored under the legacy rules (AppBench era), before cf13743"
