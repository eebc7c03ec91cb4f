"""`summarize --markdown` prints the runner's own Markdown report, byte for byte, section by section.

Each run file under tests/data/report/ was written for one section (see
make_report_files.py); the ``.md`` beside it is the report written by hand from
the runner's definition of it, and ends, like the runner's, without a newline.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fmbench.analysis.report import markdown_summary
from fmbench.analysis.run import analyze_file
from fmbench.cli import main

from testdata import DATA

REPORT = DATA / "report"
NBSP = "\u00a0"


def summarize_markdown(path: Path) -> str:
    result = CliRunner().invoke(main, ["summarize", "--markdown", str(path)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def expected(name: str) -> str:
    return (REPORT / f"{name}.md").read_text(encoding="utf-8")


def report_of(name: str) -> str:
    out = summarize_markdown(REPORT / f"{name}.json")
    assert out == expected(name)
    return out


def section(report: str, title: str) -> list[str]:
    """The lines of one ``## title`` section, up to the next blank line before a heading."""
    lines = report.split("\n")
    start = lines.index(f"## {title}")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("## ")), len(lines))
    return [line for line in lines[start + 1 : end] if line]


def rows(report: str) -> list[str]:
    lines = report.split("\n")
    first = lines.index("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |") + 1
    out = []
    for line in lines[first:]:
        if not line.startswith("| "):
            break
        out.append(line)
    return out


def with_changes(tmp_path: Path, name: str, change: Any) -> Path:
    doc = json.loads((REPORT / f"{name}.json").read_text(encoding="utf-8"))
    change(doc)
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(doc, indent=2, sort_keys=True, separators=(",", " : ")), encoding="utf-8")
    return path


@pytest.mark.parametrize("name", sorted(p.stem for p in REPORT.glob("*.json")))
def test_the_library_and_the_command_print_the_hand_written_report_exactly(name: str) -> None:
    text = markdown_summary(analyze_file(REPORT / f"{name}.json"))
    assert text == expected(name)
    assert not text.endswith("\n")
    assert summarize_markdown(REPORT / f"{name}.json") == text


def test_header_names_suite_route_configuration_fallback_trials_seed_and_context() -> None:
    out = report_of("pcc-quota-fallback")
    header = out.split("\n\n")[1].split("\n")
    assert header == [
        "- Suite: Practical Quick",
        "- Model: Private Cloud Compute",
        "- Warmups: 1",
        "- Repetitions: 3",
        "- Samples per scenario: 1",
        "- Session mode: Cold session",
        "- Reasoning: Light",
        "- Fallback: Fall back on-device",
        "- Fallback trials: 1",
        "- Connectivity label: Normal",
        "- Randomized order: yes (seed 18446744073709551615)",
        "- Model context size: 32768 tokens",
        "- Started: 2026-11-09T08:00:00Z",
        "- Failures: 1",
        "- Critical safety failures: 0",
    ]


def test_a_pcc_run_prints_its_quota_approaching_the_limit_and_the_reset_date() -> None:
    out = report_of("pcc-quota-fallback")
    assert section(out, "PCC Quota") == [
        "- Before: belowLimit (approaching limit)",
        "- After: limitReached",
        "- Reset: 2026-11-10T00:00:00Z",
    ]
    assert rows(out) == [
        "| Natural-language task capture | 66.7% | 100.0% | 33.3% | 100.0% | 0.412s / 0.900s "
        "| 41.27 / 1,250.00 | 1.56 GB |"
    ]


def test_a_quota_without_an_after_snapshot_prints_unknown_and_not_reported() -> None:
    out = report_of("pcc-all-failed")
    assert section(out, "PCC Quota") == ["- Before: unknown", "- After: unknown", "- Reset: not reported"]


def test_an_on_device_run_has_no_quota_section_and_no_safety_section_without_safety_trials() -> None:
    out = report_of("rounding-half-even")
    assert "## PCC Quota" not in out
    assert "## Safety Guardrails" not in out
    assert "## Failures" not in out


def test_a_guardrail_run_prints_a_safety_row_only_for_scenarios_with_safety_trials() -> None:
    out = report_of("guardrails-selected-samples")
    assert "- Critical safety failures: 1" in out.split("\n")
    assert section(out, "Safety Guardrails") == [
        "| Scenario | Safety pass | Explicit guardrail | Refusal | Critical failures |",
        "| --- | ---: | ---: | ---: | ---: |",
        "| Guardrails: expected protection | 50.0% | 0 | 1 | 1 |",
    ]


def test_a_safety_scenario_without_a_stored_safety_pass_rate_prints_n_a(tmp_path: Path) -> None:
    def drop_rate(doc: dict[str, Any]) -> None:
        del doc["summaries"][1]["safetyPassRate"]

    out = summarize_markdown(with_changes(tmp_path, "guardrails-selected-samples", drop_rate))
    assert section(out, "Safety Guardrails")[-1] == "| Guardrails: expected protection | n/a | 0 | 1 | 1 |"


def test_an_empty_summary_keeps_its_row_in_catalog_order_with_zero_rates_n_a_and_unknown() -> None:
    out = report_of("guardrails-selected-samples")
    assert rows(out) == [
        "| Guardrails: expected response | 0.0% | 0.0% | 0.0% | 0.0% | n/a / n/a | n/a / n/a | unknown |",
        "| Guardrails: expected protection | 50.0% | 50.0% | 0.0% | 0.0% | 0.250s / 0.310s | 38.50 / 40.12 | 221.2 MB |",
    ]


def test_rows_follow_the_files_summaries_not_the_order_trials_ran(tmp_path: Path) -> None:
    def shuffle(doc: dict[str, Any]) -> None:
        doc["trials"].reverse()

    shuffled = summarize_markdown(with_changes(tmp_path, "memory-units", shuffle))
    titles = [row.split(" | ")[0].removeprefix("| ") for row in rows(shuffled)]
    assert titles == [
        "Natural-language task capture",
        "Constraint-aware workout plan",
        "Journal entry summary",
        "Habit category classification",
        "Grounded explanation",
        "Exercise substitution",
        "Document question answering",
        "Citation extraction",
        "Constrained creative writing",
        "Visual recommendation",
    ]
    assert shuffled == expected("memory-units")


def test_the_stored_summary_values_are_printed(tmp_path: Path) -> None:
    def edit(doc: dict[str, Any]) -> None:
        doc["summaries"][0]["promptPassRate"] = 0.5  # 2 trials, 1 failure: task success 0.5 × 2 / 3

    out = summarize_markdown(with_changes(tmp_path, "pcc-quota-fallback", edit))
    assert rows(out)[0].startswith("| Natural-language task capture | 33.3% | 50.0% | 33.3% | 100.0% |")


def test_failures_list_the_warmup_first_and_a_multi_line_message_spans_lines() -> None:
    out = report_of("agentic-failures")
    failures = section(out, "Failures")
    assert failures[:2] == [
        "- `__warmup__/__warmup__-1` run 1 [generation]: Generation failed.",
        "The tool searchContacts threw: contact store unavailable.",
    ]
    assert "- Failures: 3" in out.split("\n")  # warmup failures included in the header count
    assert rows(out)[0].startswith("| Personal organizer tools | 25.0% | 50.0% | 50.0% | 83.3% |")


def test_a_failure_prints_its_tool_sequence_and_its_final_state_sorted_with_swift_values() -> None:
    out = report_of("agentic-failures")
    failures = section(out, "Failures")
    assert failures[2:] == [
        "- `personal-organizer/personal-organizer-003` run 1 [generation]: The model exceeded the tool call budget.",
        "  - Tool sequence: searchContacts → createReminder → listReminders",
        "  - Final state: calendar.load=2.0, reminders.count=2, reminders.latest.flagged=true, "
        "reminders.latest.priority=1.5, reminders.latest.title=Call Dr. Lee",
        "- `personal-organizer/personal-organizer-004` run 1 [contextLimit]: Exceeded model context window size.",
    ]


def test_an_all_failed_run_with_no_trials_prints_zero_rates_full_failure_and_n_a() -> None:
    out = report_of("pcc-all-failed")
    assert rows(out) == [
        "| Natural-language task capture | 0.0% | 0.0% | 100.0% | 0.0% | n/a / n/a | n/a / n/a | unknown |"
    ]
    assert section(out, "Failures") == [
        "- `__warmup__/__warmup__-1` run 1 [network]: The Internet connection appears to be offline.",
        "- `task-capture/task-capture-001` run 1 [network]: The Internet connection appears to be offline.",
    ]


def test_the_environment_prints_the_build_string_as_stored_and_the_commit_or_unknown() -> None:
    assert section(report_of("pcc-quota-fallback"), "Environment") == [
        "- Device: iPhone 17 Pro",
        "- Hardware: iPhone18,1",
        "- Chip: Apple A-series",
        "- OS: iOS 27.0.0 (Version 27.0 (Build 24A5264n))",
        "- Memory: 12 GB",
        "- Thermal state: fair",
        "- Low Power Mode: on",
        "- FoundationModelsBench commit: 9c41e2a",
    ]
    assert report_of("pcc-all-failed").endswith("\n- FoundationModelsBench commit: unknown")
    # an empty commit string is printed as stored (the runner falls back to "unknown" only when absent)
    assert report_of("agentic-failures").endswith("\n- FoundationModelsBench commit: ")


def test_a_de_de_run_formats_every_number_in_german() -> None:
    out = report_of("locale-de-de")
    assert rows(out) == [
        f"| Natural-language task capture | 66,7{NBSP}% | 66,7{NBSP}% | 0,0{NBSP}% | 93,3{NBSP}% "
        "| 0,500s / 1,062s | 41,27 / 1.250,00 | 1,56 GB |"
    ]


def test_rounding_is_half_to_even_on_the_decimal_a_double_stands_for() -> None:
    # 0.2875 -> 28.8% (binary arithmetic gives 28.7); 0.0125 -> 0.012s; 0.0135 -> 0.014s; 41.275 -> 41.28;
    # 1234.565 -> 1,234.56; a peak of 1,048,575 bytes is 1,024 KB
    assert rows(report_of("rounding-half-even")) == [
        "| Natural-language task capture | 0.0% | 0.0% | 0.0% | 28.8% | 0.012s / 0.014s | 41.28 / 1,234.56 | 1,024 KB |"
    ]


def test_peak_memory_switches_units_at_each_binary_multiple() -> None:
    memory = [row.rsplit(" | ", 1)[1].removesuffix(" |") for row in rows(report_of("memory-units"))]
    assert memory == [
        "1,023 bytes", "1 KB", "1,024 KB", "1 MB", "221.2 MB", "1,024 MB", "1 GB", "1.56 GB", "1 TB", "unknown",
    ]


def test_the_legacy_report_equals_the_runners_published_file_byte_for_byte(example_run: Path) -> None:
    assert summarize_markdown(example_run) == example_run.with_suffix(".md").read_text(encoding="utf-8")


def test_dates_print_in_utc_as_foundations_iso_8601_style_does(tmp_path: Path) -> None:
    def offset(doc: dict[str, Any]) -> None:
        doc["startedAt"] = "2026-11-09T10:00:00+02:00"
        doc["quotaAfter"]["resetDate"] = "2026-11-09T19:00:00-05:00"

    out = summarize_markdown(with_changes(tmp_path, "pcc-quota-fallback", offset))
    assert "- Started: 2026-11-09T08:00:00Z" in out.split("\n")
    assert section(out, "PCC Quota")[-1] == "- Reset: 2026-11-10T00:00:00Z"
