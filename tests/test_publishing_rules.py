"""Publishing rule 4, completed: each rule proven on a run file written for it."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_regressions import rb

from fmbench.analysis.policy import host_name_reason
from fmbench.analysis.run import analyze_file
from fmbench.views.methodology import fmbench_methodology

SYNTHETIC = rb.SYNTHETIC  # the catalog holds one sample; these runs hold two
PCC = rb.RunSpec(route="privateCloudCompute", scenarios=(SYNTHETIC,), suite="performance")
NETWORK = "connection: wifi\nlocation: Lisbon, Portugal\n"


def _judge(tmp_path: Path, spec: object, name: str = "run", sidecar: str | None = None) -> tuple[str, dict[str, str]]:
    path = rb.write_run(spec, tmp_path, name)
    if sidecar is not None:
        (tmp_path / f"{name}.meta.yaml").write_text(sidecar, encoding="utf-8")
    verdict = analyze_file(path).verdict
    return verdict.level, {r.code: r.message for r in verdict.reasons}


def test_a_pcc_run_with_its_network_recorded_meets_the_bar(tmp_path: Path) -> None:
    assert _judge(tmp_path, PCC, sidecar=NETWORK) == ("publishable", {})


def test_a_pcc_run_on_os_26_is_invalid_because_pcc_requires_os_27(tmp_path: Path) -> None:
    spec = PCC.but(version="26.1", build="23B85")
    level, reasons = _judge(tmp_path, spec, sidecar=NETWORK)
    assert level == "invalid"
    assert "PCC requires OS 27" in reasons["pcc-os26"]
    on_device = spec.but(route="onDevice")
    assert _judge(tmp_path, on_device, "on-device")[0] == "publishable"


def test_a_pcc_run_without_connection_and_location_is_not_publishable(tmp_path: Path) -> None:
    level, reasons = _judge(tmp_path, PCC)
    assert level == "exploratory"
    assert reasons["pcc-network"].startswith("Network conditions not recorded")
    assert "connection type and approximate location" in reasons["pcc-network"]
    level, reasons = _judge(tmp_path, PCC, "half", sidecar="connection: ethernet\n")
    assert level == "exploratory" and "approximate location" in reasons["pcc-network"]
    assert "connection type" not in reasons["pcc-network"]


@pytest.mark.parametrize(
    "name", ["Janes-MacBook-Air.local", "Jane's MacBook Pro", "Jane’s iPhone", "Janes-MacBook-Pro", "studio.local"]
)
def test_a_device_named_like_a_host_or_a_person_is_not_publishable_with_the_reason(tmp_path: Path, name: str) -> None:
    level, reasons = _judge(tmp_path, rb.RunSpec(device=name, scenarios=(SYNTHETIC,)))
    assert level == "exploratory"
    assert f"“{name}”" in reasons["host-name"] and "sidecar correction" in reasons["host-name"]


@pytest.mark.parametrize("name", ["iPhone 17 Pro", "MacBook Pro M5", "iPhone18,1", "Mac17,2", "Lab iPad 2"])
def test_generic_names_and_the_runners_default_model_id_are_fine(name: str) -> None:
    assert host_name_reason(name, "iPhone18,1") is None


def test_a_sidecar_correction_of_the_device_name_clears_the_host_name_rule(tmp_path: Path) -> None:
    spec = rb.RunSpec(device="Janes-MacBook-Air.local", scenarios=(SYNTHETIC,))
    fixed = "corrections:\n  - field: environment.deviceName\n    value: MacBook Air M4\n    reason: host name\n"
    assert _judge(tmp_path, spec, sidecar=fixed) == ("publishable", {})
    still = "corrections:\n  - field: deviceName\n    value: Jane's Air\n    reason: renamed\n"
    level, reasons = _judge(tmp_path, spec, "still", sidecar=still)
    assert level == "exploratory" and "corrected device name “Jane's Air”" in reasons["host-name"]


def test_an_agentic_run_cut_to_5_of_its_25_samples_is_not_publishable(tmp_path: Path) -> None:
    organizer = rb.Scenario("personal-organizer", "Contact-grounded reminder", "agenticToolUse", samples=5)
    level, reasons = _judge(tmp_path, rb.RunSpec(suite="agentic", scenarios=(organizer,)))
    assert level == "exploratory"
    assert "personal-organizer: 5 of 25" in reasons["partial-samples"]
    full = organizer.__class__(**{**organizer.__dict__, "samples": 25})
    assert _judge(tmp_path, rb.RunSpec(suite="agentic", scenarios=(full,)), "full")[0] == "publishable"


def test_a_sample_limit_makes_any_suite_exploratory(tmp_path: Path) -> None:
    level, reasons = _judge(tmp_path, rb.RunSpec(suite="performance", scenarios=(SYNTHETIC,), sample_limit=1))
    assert level == "exploratory" and "Sample limit 1" in reasons["sample-limit"]


def test_a_fixed_order_is_not_publishable(tmp_path: Path) -> None:
    level, reasons = _judge(tmp_path, rb.RunSpec(scenarios=(SYNTHETIC,), randomized=False))
    assert level == "exploratory"
    assert reasons["fixed-order"].startswith("The workload order was not randomized")


def test_a_run_without_a_seed_is_not_publishable(tmp_path: Path) -> None:
    path = rb.write_run(rb.RunSpec(scenarios=(SYNTHETIC,)), tmp_path, "seedless")
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace('  "randomSeed" : 42,\n', ""), encoding="utf-8")
    verdict = analyze_file(path).verdict
    assert verdict.level == "exploratory"
    assert [r.code for r in verdict.reasons] == ["no-seed"]


def test_a_run_whose_suite_revision_is_unknown_is_exploratory_naming_its_benchmark_commit(tmp_path: Path) -> None:
    level, reasons = _judge(tmp_path, rb.RunSpec(scenarios=(SYNTHETIC,), commit="0abc123"))
    assert level == "exploratory"
    assert "benchmark commit 0abc123 is in no revision of revisions.yaml" in reasons["revision-unknown"]
    assert _judge(tmp_path, rb.RunSpec(scenarios=(SYNTHETIC,)), "known")[0] == "publishable"


def test_the_methodology_page_says_an_unknown_revision_makes_a_run_exploratory() -> None:
    text = " ".join(fmbench_methodology().split())
    assert "A run whose revision is unknown is exploratory" in text
    assert "is in no revision of revisions.yaml" in text
