"""The bundled fixture corpus: it is what the generator writes, it looks like the runner's output,
it ingests whole, and each planted situation is judged as planted."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from fmbench.analysis.revisions import fixtures_registry
from fmbench.cli import main
from fmbench.fixtures import generate
from fmbench.ingest import ingest_paths

from testdata import FIXTURES

SIMULATOR = "iphone18-1-ios27-24a5264n-on-device-quick-2026-11-01.json"
HAND_EDITED = "ipad-pro-m5-ipados26-23b85-on-device-performance-2026-10-28.json"
RULES_A = "macbook-pro-m5-macos27-26a5353q-on-device-guardrails-2026-07-03.json"
RULES_C = "iphone-17-pro-ios27-24a5210f-on-device-guardrails-2026-07-09.json"
SAMPLE_IDS = "iphone-17-pro-ios27-24a5264n-on-device-full-2026-11-12.json"
ALL_FAILED = "macbook-pro-m5-macos27-26a5378f-pcc-quick-2026-11-13.json"
LEGACY_ALL_FAILED = "macbook-pro-m5-macos27-26a5353q-pcc-quick-2026-06-19.json"

# file -> (verdict, a reason code it must carry, or None); fixtures/README.md gives the reasons.
PLANTED = {
    SIMULATOR: ("invalid", "simulator"),  # evidence: iPhone18,1 with 12 cores and 32 GiB
    "ipad-pro-m5-ipados27-on-device-quick-2026-10-22.json": ("invalid", "no-os-build"),
    HAND_EDITED: ("invalid", "summary-mismatch"),
    "macbook-pro-m5-macos26-25a362-on-device-guardrails-2026-09-15.json": ("invalid", "missing-repetitions"),
    "iphone-17-pro-ios27-24a5264n-pcc-quick-2026-10-21.json": ("invalid", "pcc-entitlement"),
    "iphone-17-pro-ios27-24a5264n-on-device-performance-2026-11-03.json": ("publishable", None),
    # Stored under older scoring rules: explained by their rule set, so not hand-edited (no summary-mismatch);
    # its guardrail workloads hold 6 samples, short of the catalog's 25.
    RULES_A: ("exploratory", "partial-samples"),
    "iphone-17-pro-ios27-24a5264n-on-device-guardrails-2026-11-04.json": ("exploratory", "partial-samples"),
    # PCC requires OS 27: a PCC run on OS 26 is not a PCC measurement.
    "macbook-pro-m5-macos26-25b78-pcc-quick-2026-10-02.json": ("invalid", "pcc-os26"),
    # The June files record no seed and no randomized order.
    "iphone-17-pro-ios27-24a5210f-on-device-quick-2026-06-16.json": ("exploratory", "no-seed"),
    RULES_C: ("exploratory", "few-repetitions"),
    # Limited to four sample ids: its empty summaries are honest, not a mismatch.
    SAMPLE_IDS: ("exploratory", "sample-limit"),
    # Every request failed: no measured trial, which makes a run exploratory, not invalid.
    ALL_FAILED: ("exploratory", "no-measured-trial"),
    LEGACY_ALL_FAILED: ("exploratory", "no-measured-trial"),
}


def _load(name: str) -> dict:
    return json.loads((FIXTURES / name).read_bytes())


def _runs() -> dict[str, dict]:
    return {p.name: json.loads(p.read_bytes()) for p in sorted(FIXTURES.glob("*.json"))}


def test_the_committed_corpus_is_exactly_what_the_generator_writes(tmp_path: Path) -> None:
    written = generate.generate_corpus(tmp_path / "corpus")
    committed = sorted(p for p in FIXTURES.iterdir() if p.name.endswith((".json", ".meta.yaml")))
    assert [p.name for p in written] == [p.name for p in committed]
    stale = [p.name for p in written if p.read_bytes() != (FIXTURES / p.name).read_bytes()]
    assert stale == [], "regenerate with: python fixtures/generate.py fixtures/runs --clean"


def test_iphone_and_ipad_environments_are_written_as_the_runners_ios_build_writes_them() -> None:
    for name, run in _runs().items():
        envs = [run["environment"], *(t["environment"] for t in run["trials"])]
        for env in envs:
            assert re.fullmatch(r"\d+\.\d+\.\d+", env["systemVersion"]), name
            if env["systemName"] == "macOS":
                assert env["cpuModel"] == env["gpuModel"] == "Apple M5", name
                assert "systemBuild" not in env or re.fullmatch(r"\d\d[A-Z]\d+[a-z]?", env["systemBuild"]), name
                continue
            assert env["systemName"] == "iOS", name  # never iPadOS, on an iPad too
            assert (env["cpuModel"], env["gpuModel"]) == ("Apple A-series", "Apple GPU"), name
            assert "systemBuild" not in env or re.fullmatch(
                r"Version \d+\.\d+(\.[1-9]\d*)? \(Build \w+\)", env["systemBuild"]
            ), name
            assert "simulator" not in json.dumps(env).lower(), name


def test_the_simulator_run_names_the_simulated_model_with_the_host_macs_cores_and_memory() -> None:
    env = _load(SIMULATOR)["environment"]
    assert env["hardwareModel"] == env["deviceName"] == "iPhone18,1"
    assert (env["cpuCores"], env["totalMemory"]) == (12, 32 * 2**30)
    device = _load("iphone-17-pro-ios27-24a5264n-on-device-performance-2026-11-03.json")["environment"]
    assert device["hardwareModel"] == "iPhone18,1"
    assert device["cpuCores"] == 6 and device["totalMemory"] < 12 * 10**9


def test_no_file_writes_null_and_every_one_keeps_the_runners_encoding() -> None:
    for path in sorted(FIXTURES.glob("*.json")):
        text = path.read_text(encoding="utf-8")
        # Re-encoding as Swift's sorted-keys pretty printer ("key" : value, no final newline)
        # gives the same text; the encoder refuses None, so no optional is written as null.
        assert generate.swift_json(json.loads(text)) == text, path.name


def test_files_from_before_july_2026_name_the_commit_app_bench_commit() -> None:
    for name, run in _runs().items():
        envs = [run["environment"], *(t["environment"] for t in run["trials"])]
        before = run["startedAt"] < "2026-07-02"
        for env in envs:
            assert ("appBenchCommit" in env) == before, name
            assert ("foundationModelsBenchCommit" in env) == (not before), name


def test_stored_summaries_follow_the_scoring_rules_of_the_runs_commit() -> None:
    rule_sets = list(generate.SCORING_RULES)
    for name, run in _runs().items():
        if name == HAND_EDITED:
            assert generate.compute_summaries(run) != run["summaries"]
            continue
        commit = run["environment"].get("foundationModelsBenchCommit") or run["environment"].get("appBenchCommit")
        rules = generate.RULE_COMMITS.get(commit, "D")
        assert generate.compute_summaries(run, rules=rules) == run["summaries"], name
    # The two runs under older rules hold trials without checks, so each rule set gives other figures.
    for name, rules in ((RULES_A, "A"), (RULES_C, "C")):
        run = _load(name)
        assert run["environment"]["foundationModelsBenchCommit"] in {c for c, r in generate.RULE_COMMITS.items() if r == rules}
        assert any(not t["grade"]["checks"] for t in run["trials"])
        others = [r for r in rule_sets if r != rules]
        assert all(generate.compute_summaries(run, rules=r) != run["summaries"] for r in others), name


def test_summaries_follow_the_catalog_order_of_the_suite_not_the_shuffled_trials() -> None:
    catalog = [row[0] for row in generate._SCENARIO_TABLE]
    shuffled = 0
    for name, run in _runs().items():
        if "sessionMode" not in run:
            continue
        ids = [s["id"] for s in run["summaries"]]
        assert ids == sorted(ids, key=catalog.index), name
        first_seen = list(dict.fromkeys(t["scenarioID"] for t in run["trials"]))
        shuffled += first_seen != [i for i in ids if i in first_seen]
    assert shuffled  # some runs ran their workloads in another order than they report them


def test_a_run_limited_to_sample_ids_stores_an_honest_summary_for_every_configured_scenario() -> None:
    run = _load(SAMPLE_IDS)
    selected = {t["sample"]["id"] for t in run["trials"]} | {f["sampleID"] for f in run["failures"]}
    assert run["sampleLimit"] == len(selected) == 4
    assert [s["id"] for s in run["summaries"]] == generate.PRACTICAL
    empty = [s for s in run["summaries"] if s["trialCount"] == 0 and s["failureCount"] == 0]
    assert len(empty) == 6
    for s in empty:
        assert s["promptPassRate"] == s["failureRate"] == s["meanConstraintScore"] == 0
        assert "safetyPassRate" not in s and s["safetyTrialCount"] == 0
        for dist in ("duration", "timeToFirstToken", "outputTokensPerSecond", "peakObservedResidentMemoryBytes"):
            assert s[dist] == {"count": 0}


def test_the_all_failed_attempts_hold_no_trial_and_only_failures_in_both_generations() -> None:
    current, legacy = _load(ALL_FAILED), _load(LEGACY_ALL_FAILED)
    for run in (current, legacy):
        assert run["trials"] == [] and run["failures"] and run["model"] == "privateCloudCompute"
        assert all(s["trialCount"] == 0 and s["duration"] == {"count": 0} for s in run["summaries"])
    assert "sessionMode" in current and all(s["failureRate"] == 1 for s in current["summaries"])
    assert {f["kind"] for f in current["failures"]} == {"network", "availability"}
    assert not any(k in legacy for k in ("sessionMode", "reasoningLevel", "fallbackMode", "connectivity", "randomSeed"))
    assert all(set(f) == {"id", "iteration", "message", "scenarioID"} for f in legacy["failures"])


@pytest.fixture(scope="module")
def corpus_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = tmp_path_factory.mktemp("corpus") / "corpus.duckdb"
    report = ingest_paths([FIXTURES], db, registry=fixtures_registry())
    assert report.ok, [o.message for o in report.outcomes if o.status == "error"]
    assert report.count("ingested") == len(list(FIXTURES.glob("*.json")))
    return db


def test_fmbench_runs_lists_the_whole_corpus_with_verdicts_and_revisions(corpus_db: Path) -> None:
    result = CliRunner().invoke(main, ["runs", "--db", str(corpus_db), "--json"])
    assert result.exit_code == 0
    runs = {r["file_name"]: r for r in json.loads(result.output)}
    assert len(runs) == len(list(FIXTURES.glob("*.json")))
    assert {r["verdict"] for r in runs.values()} == {"publishable", "exploratory", "invalid"}
    assert {r["revision_id"] for r in runs.values()} == {"2026.06", "2026.09", "2026.11", None}
    legacy = [r for r in runs.values() if r["generation"] == "legacy"]
    assert legacy and all(r["revision_status"] == "superseded" for r in legacy)
    text = CliRunner().invoke(main, ["runs", "--db", str(corpus_db)])
    assert text.exit_code == 0 and f"{len(runs)} run(s)" in text.output


@pytest.mark.parametrize(("name", "expected"), sorted(PLANTED.items()))
def test_each_planted_file_is_judged_as_planted(corpus_db: Path, name: str, expected: tuple[str, str | None]) -> None:
    import duckdb

    con = duckdb.connect(str(corpus_db), read_only=True)
    try:
        verdict = con.execute("SELECT run_id, verdict FROM runs WHERE file_name = ?", [name]).fetchone()
        assert verdict is not None
        codes = [c for (c,) in con.execute("SELECT code FROM verdict_reasons WHERE run_id = ?", [verdict[0]]).fetchall()]
    finally:
        con.close()
    level, code = expected
    assert verdict[1] == level
    if code:
        assert code in codes
    if name in (RULES_A, RULES_C):
        assert "summary-mismatch" not in codes
