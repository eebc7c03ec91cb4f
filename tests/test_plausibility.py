"""Figures no runner can record make a run invalid as evidence, each reason naming its field.

Each test writes a real run file (a fixture run, or the benchmark's published
example of the legacy generation, with one figure made impossible) and judges it
through ``fmbench validate --json``, as a publisher would.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pytest
from click.testing import CliRunner

from fmbench.analysis.run import ANALYSIS_VERSION
from fmbench.cli import main

from testdata import DATA, EXAMPLE_NAME, EXAMPLES, FIXTURES

READING = DATA / "reading"

CURRENT = FIXTURES / "iphone-17-pro-ios27-24a5264n-on-device-performance-2026-11-03.json"
"""A publishable run of the current generation: 60 trials on a 4,096-token context window."""
LEGACY = EXAMPLES / f"{EXAMPLE_NAME}.json"
"""The benchmark's own published June 2026 run (legacy generation: no context fields)."""

Document = dict[str, Any]


def _judge(tmp_path: Path, source: Path, edit: Callable[[Document], None] | None = None) -> dict[str, Any]:
    document: Document = json.loads(source.read_bytes())
    if edit is not None:
        edit(document)
    run = tmp_path / source.name
    run.write_text(json.dumps(document, indent=2), encoding="utf-8")
    result = CliRunner().invoke(main, ["validate", "--json", str(run)])
    assert result.exit_code == 0, result.output
    (judged,) = json.loads(result.output)
    assert isinstance(judged, dict)
    return judged


def _decode_longer(document: Document) -> None:
    document["trials"][7]["metrics"]["decodeDuration"] = document["trials"][7]["metrics"]["duration"] + 30


def _ends_before_start(document: Document) -> None:
    for trial in document["trials"]:
        m = trial["metrics"]
        m["startedAt"], m["endedAt"] = "2026-11-03T10:00:09Z", "2026-11-03T10:00:01Z"


def _context_500_percent(document: Document) -> None:
    document["trials"][3]["metrics"]["contextUtilization"] = 5.0


def _a_billion_output_tokens(document: Document) -> None:
    document["trials"][0]["metrics"]["outputTokenCount"] = 10**9


def _one_id_sixty_times(document: Document) -> None:
    for trial in document["trials"]:
        trial["id"] = document["trials"][0]["id"]


CASES = [
    (_decode_longer, "implausible-decode", "trials[7].metrics.decodeDuration", "1 trial"),
    (_ends_before_start, "implausible-trial-clock", "trials[0].metrics.endedAt", "every one of the 60 trials"),
    (_context_500_percent, "implausible-context-use", "trials[3].metrics.contextUtilization is 500.0%", "1 trial"),
    (_a_billion_output_tokens, "implausible-output-tokens",
     "trials[0].metrics.outputTokenCount is 1,000,000,000 tokens, beyond the 4,096-token context window "
     "(trials[0].metrics.contextSize)", "1 trial"),
    (_one_id_sixty_times, "duplicate-trial-id", "trials[0].id", "is the id of 60 trials"),
]


def test_the_unedited_runs_are_not_invalid() -> None:
    """The files the cases below edit are evidence as they are (so the reason is the edit's alone)."""
    for source in (CURRENT, LEGACY):
        judged = _judge_in_memory(source)
        assert judged["verdict"] != "invalid", judged["reasons"]


def _judge_in_memory(source: Path) -> dict[str, Any]:
    result = CliRunner().invoke(main, ["validate", "--json", str(source)])
    assert result.exit_code == 0, result.output
    (judged,) = json.loads(result.output)
    assert isinstance(judged, dict)
    return judged


@pytest.mark.parametrize(("edit", "code", "field", "how_many"), CASES, ids=[c[1] for c in CASES])
def test_an_impossible_figure_makes_the_run_invalid_with_its_field_named(
    tmp_path: Path, edit: Callable[[Document], None], code: str, field: str, how_many: str
) -> None:
    judged = _judge(tmp_path, CURRENT, edit)
    assert judged["verdict"] == "invalid"
    (reason,) = [r for r in judged["reasons"] if r["code"] == code]
    assert reason["level"] == "invalid"
    assert field in reason["message"] and how_many in reason["message"]
    # the one impossible figure is the only reason the run is not evidence
    assert [r["code"] for r in judged["reasons"] if r["level"] == "invalid"] == [code]


def test_the_run_page_and_the_terminal_name_the_reason(tmp_path: Path) -> None:
    judged_file = tmp_path / "copies.json"
    document: Document = json.loads(CURRENT.read_bytes())
    _one_id_sixty_times(document)
    judged_file.write_text(json.dumps(document), encoding="utf-8")
    shown = CliRunner().invoke(main, ["validate", str(judged_file)])
    assert shown.exit_code == 0, shown.output
    assert "invalid as evidence" in shown.output.splitlines()[0].lower()
    assert any(line.strip().startswith("invalid") and "trials[0].id" in line for line in shown.output.splitlines())


@pytest.mark.parametrize(
    ("edit", "code", "field"),
    [
        (_decode_longer, "implausible-decode", "trials[7].metrics.decodeDuration"),
        (_ends_before_start, "implausible-trial-clock", "trials[0].metrics.endedAt"),
        (_one_id_sixty_times, "duplicate-trial-id", "trials[0].id"),
    ],
    ids=["decode", "trial-clock", "duplicate-id"],
)
def test_the_legacy_generation_is_held_to_the_same_bounds(
    tmp_path: Path, edit: Callable[[Document], None], code: str, field: str
) -> None:
    judged = _judge(tmp_path, LEGACY, edit)
    assert judged["verdict"] == "invalid"
    (reason,) = [r for r in judged["reasons"] if r["code"] == code]
    assert field in reason["message"]


def test_a_legacy_run_records_no_window_so_its_token_counts_are_not_bounded(tmp_path: Path) -> None:
    judged = _judge(tmp_path, LEGACY, _a_billion_output_tokens)
    assert "implausible-output-tokens" not in [r["code"] for r in judged["reasons"]]


def test_the_window_the_run_declares_bounds_a_trial_that_records_none(tmp_path: Path) -> None:
    def edit(document: Document) -> None:
        for trial in document["trials"]:
            del trial["metrics"]["contextSize"]
        document["trials"][5]["metrics"]["outputTokenCount"] = 5000

    judged = _judge(tmp_path, CURRENT, edit)
    (reason,) = [r for r in judged["reasons"] if r["code"] == "implausible-output-tokens"]
    assert "trials[5].metrics.outputTokenCount is 5,000 tokens, beyond the 4,096-token context window " \
           "(modelContextSize)" in reason["message"]


def test_a_clock_step_is_still_kept_and_flagged_not_invalid() -> None:
    """The run format's clock step (a negative duration and TTFT, so a decode longer than the duration) is not
    an impossible figure: the file stays what it was, flagged."""
    judged = _judge_in_memory(READING / "clock-step.json")
    assert judged["verdict"] != "invalid"
    assert not [r for r in judged["reasons"] if r["code"].startswith("implausible")]


def test_a_trial_ending_before_it_starts_with_a_negative_duration_is_a_clock_step(tmp_path: Path) -> None:
    def edit(document: Document) -> None:
        m = document["trials"][2]["metrics"]
        m["startedAt"], m["endedAt"], m["duration"], m["timeToFirstToken"] = (
            "2026-11-03T10:00:09Z", "2026-11-03T10:00:07Z", -2.0, -2.4)

    judged = _judge(tmp_path, CURRENT, edit)
    assert "implausible-trial-clock" not in [r["code"] for r in judged["reasons"]]
    assert "trials[2].metrics.duration" in [f["where"] for f in judged["flags"]]


def test_a_database_judged_by_the_rules_before_rederives_its_copies_as_invalid(tmp_path: Path) -> None:
    """A run stored under analysis version 2 (no bound on the figures, the name stored raw) is judged again by
    ``fmbench migrate``: the copied trials make it invalid, and its name is stored as shown."""
    document: Document = json.loads(CURRENT.read_bytes())
    _one_id_sixty_times(document)
    document["environment"]["deviceName"] = "iPhone\u200b 17 Pro"
    run = tmp_path / "copies.json"
    run.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    db = tmp_path / "old.duckdb"
    assert CliRunner().invoke(main, ["ingest", "--db", str(db), str(run)]).exit_code == 0
    with duckdb.connect(str(db)) as con:  # as version 2 left it
        con.execute("UPDATE runs SET analysis_version = 2, verdict = 'publishable', device_name = ?",
                    [document["environment"]["deviceName"]])
        con.execute("DELETE FROM verdict_reasons")
    assert "pending" in CliRunner().invoke(main, ["migrate", "--db", str(db), "--list"]).output
    migrated = CliRunner().invoke(main, ["migrate", "--db", str(db)])
    assert migrated.exit_code == 0, migrated.output
    assert "(1 run(s) re-derived)" in migrated.output
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT verdict, device_name, analysis_version FROM runs").fetchone() == (
            "invalid", "iPhone<U+200B> 17 Pro", ANALYSIS_VERSION)
        codes = [c for (c,) in con.execute("SELECT code FROM verdict_reasons WHERE level = 'invalid'").fetchall()]
    assert codes == ["duplicate-trial-id"]
