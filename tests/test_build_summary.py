"""One bad file never stops the site, and the build ends by telling the publisher what matters.

A project made by ``fmbench init`` holding the benchmark's real published run (with its Markdown), the June
baseline's PCC run, a current-format run whose benchmark commit no revision of the registry holds, and one run
file cut off in the middle of a string: a real DuckDB file, real files, the real command.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from fmbench.cli import main
from fmbench.ingest import ingest_paths
from fmbench.publish.summary import BuildSummary, RefusedFile, SkippedFile, summarize_build
from fmbench.scaffold import init_project

from testdata import DATA, RUNS

EXAMPLES = DATA / "examples"
EXAMPLE = "macbook-pro-m5-macos27-26A5353q-on-device-quick-2026-06-12"
JUNE = DATA / "june" / "macbook-pro-m5-macos27-26A5353q-pcc-quick-2026-06-12.json"
UNKNOWN_COMMIT = "c5e90f3"
"""The benchmark commit ``purpose-current.json`` records: in no revision of the registry ``fmbench init`` seeds."""

TRUNCATED_MESSAGE = (
    "runs/truncated.json: line 204, column 17: invalid JSON: Unterminated string starting at: line 204 column 17 "
    "(char 6328); EOF while parsing a string at line 204 column 20"
)
"""The reader's whole message for the example run cut 6,332 bytes in, inside the string that starts at 6,328."""

NOT_ON_GITHUB = {"GITHUB_ACTIONS": None, "GITHUB_STEP_SUMMARY": None}


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    root = tmp_path / "results"
    init_project(root, title="Ada's runs", site_url="https://ada.github.io/results/")
    runs = root / "runs"
    for suffix in (".json", ".md"):
        shutil.copy(EXAMPLES / f"{EXAMPLE}{suffix}", runs)
        shutil.copy(JUNE.with_suffix(suffix), runs)
    shutil.copy(RUNS / "purpose-current.json", runs)
    whole = (EXAMPLES / f"{EXAMPLE}.json").read_bytes()
    (runs / "truncated.json").write_bytes(whole[:6332])  # cut inside the string "Gro…"
    return root


def build(project: Path, *args: str, env: dict[str, str | None] | None = None) -> Result:
    return CliRunner(env={**NOT_ON_GITHUB, **(env or {})}).invoke(
        main, ["--project", str(project), "build", "--jobs", "1", *args], catch_exceptions=False
    )


def _published(project: Path) -> dict[str, str]:
    runs = json.loads((project / "_site" / "data" / "runs.json").read_text(encoding="utf-8"))["runs"]
    return {r["file_name"]: r["verdict"] for r in runs}


def test_a_truncated_file_is_named_in_full_and_every_readable_run_publishes(project: Path) -> None:
    done = build(project)
    assert done.exit_code == 0, done.output
    assert _published(project) == {
        f"{EXAMPLE}.json": "exploratory", JUNE.name: "exploratory", "purpose-current.json": "exploratory",
    }
    lines = done.output.splitlines()
    assert f"  {TRUNCATED_MESSAGE}" in lines  # the whole message, on one line
    assert "summary: 3 runs on the site: 0 publishable, 3 exploratory, 0 invalid" in lines
    assert "refused: 1 file could not be read and is not on the site" in lines
    assert (
        f"unknown revision: benchmark commit {UNKNOWN_COMMIT} (runs/purpose-current.json) is in no revision of "
        f'revisions.yaml: add "{UNKNOWN_COMMIT}" to the benchmark_commits list of the revision it was measured on '
        "(the current one, id 2026.07, if the benchmark's task set has not changed since), or add a revision for it"
    ) in lines
    assert (
        'warning: methodology.md still holds the template text fmbench init wrote (section "How these runs were '
        "made\"); the site leaves it out and shows fmbench's methodology alone until you replace it with your own notes"
    ) in lines
    assert lines[-1].startswith("warning: methodology.md")  # the summary is what the build ends with
    assert not any(line.startswith("::") for line in lines)  # no workflow commands outside GitHub Actions


def test_the_example_runs_commit_is_in_the_seeded_registry_and_is_not_reported(project: Path) -> None:
    done = build(project)
    assert "1d8d492" not in done.output  # both June files record it: revision 2026.06 holds it


def test_strict_fails_the_build_after_building_the_site(project: Path) -> None:
    done = build(project, "--strict")
    assert done.exit_code == 1
    assert "refused: 1 file could not be read and is not on the site (--strict: the build fails)" in done.output
    assert f"  {TRUNCATED_MESSAGE}\n" in done.output
    assert len(_published(project)) == 3  # built all the same

    settings = project / "fmbench.toml"
    settings.write_text(
        settings.read_text(encoding="utf-8").replace("strict = false\n", "strict = true\n"),
        encoding="utf-8",
    )
    assert build(project).exit_code == 1
    (project / "runs" / "truncated.json").unlink()
    fixed = build(project)
    assert fixed.exit_code == 0, fixed.output
    assert "refused:" not in fixed.output


def test_a_strict_setting_that_is_not_true_or_false_is_refused(project: Path) -> None:
    settings = project / "fmbench.toml"
    settings.write_text(
        settings.read_text(encoding="utf-8").replace("strict = false\n", 'strict = "yes"\n'),
        encoding="utf-8",
    )
    done = build(project)
    assert done.exit_code == 1
    assert "publishing.strict: expected true or false, got text 'yes'" in done.output


def test_under_github_actions_each_refused_file_is_an_annotation_and_the_summary_goes_to_the_step_summary(
    project: Path, tmp_path: Path
) -> None:
    step_summary = tmp_path / "step-summary.md"
    step_summary.write_text("## an earlier step\n\n", encoding="utf-8")
    done = build(project, env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(step_summary)})
    assert done.exit_code == 0, done.output
    lines = done.output.splitlines()
    message = TRUNCATED_MESSAGE.removeprefix("runs/truncated.json: ")
    assert f"::error file=runs/truncated.json,line=204,col=17,title=Run file not published::{message}" in lines
    assert any(
        line.startswith("::warning file=runs/purpose-current.json,title=Revision unknown::benchmark commit c5e90f3 ")
        for line in lines
    )
    assert any(line.startswith("::warning file=methodology.md,title=Template methodology notes::") for line in lines)

    written = step_summary.read_text(encoding="utf-8")
    assert written.startswith("## an earlier step\n\n## fmbench build\n")  # appended, as GitHub asks
    assert "| 3 | 0 | 3 | 0 |" in written
    assert "### Refused: 1 file(s) not on the site" in written
    assert r"- runs/truncated\.json: line 204, column 17\: invalid JSON\: Unterminated string starting at\: " in written
    assert f"### Commits in no revision\n\n- benchmark commit {UNKNOWN_COMMIT} " in written
    assert r"methodology\.md still holds the template text" in written


def test_a_file_name_and_message_are_escaped_for_the_terminal_the_annotation_and_the_markdown() -> None:
    summary = BuildSummary(
        exploratory=1,
        refused=[RefusedFile("runs/a,b:c\n::error::x.json", "100% broken\r\nat <b>*here*</b>", 3, 4)],
        skipped=[SkippedFile("runs/[x](javascript:y).json", "the same bytes as runs/a.json")],
    )
    lines = summary.lines()
    assert "  runs/a,b:c\\n::error::x.json: 100% broken\\r\\nat <b>*here*</b>" in lines
    assert all("\n" not in line and "\r" not in line for line in lines)
    commands = summary.workflow_commands()
    assert commands[0] == (
        "::error file=runs/a%2Cb%3Ac%0A%3A%3Aerror%3A%3Ax.json,line=3,col=4,title=Run file not published"
        "::100%25 broken%0D%0Aat <b>*here*</b>"
    )
    assert all("\n" not in c and "\r" not in c for c in commands)
    markdown = summary.markdown()
    # the line breaks are shown as \n and \r, their backslashes escaped too
    assert r"- runs/a,b\:c\\n\:\:error\:\:x\.json: 100% broken\\r\\nat \<b\>\*here\*\</b\>" in markdown
    assert r"- runs/\[x\]\(javascript\:y\)\.json: the same bytes as runs/a\.json" in markdown
    assert "<b>" not in markdown


def test_a_file_holding_the_same_bytes_as_another_is_reported_as_left_out(project: Path) -> None:
    shutil.copy(project / "runs" / "purpose-current.json", project / "runs" / "a-copy.json")
    done = build(project)
    assert done.exit_code == 0, done.output
    assert "skipped: runs/purpose-current.json: the same bytes as runs/a-copy.json, published once" in done.output


def test_the_template_methodology_text_is_not_published_as_the_publishers_words(project: Path) -> None:
    assert build(project).exit_code == 0
    page = (project / "_site" / "methodology" / "index.html").read_text(encoding="utf-8")
    assert "How these runs were made" not in page and "Describe your devices" not in page
    assert "Notes of this site" not in page

    notes = project / "methodology.md"
    notes.write_text(
        notes.read_text(encoding="utf-8") + "\n## Our lab {#lab}\n\nTwo MacBook Pros on mains power.\n",
        encoding="utf-8",
    )
    kept = build(project)
    page = (project / "_site" / "methodology" / "index.html").read_text(encoding="utf-8")
    assert "Two MacBook Pros on mains power." in page and "Describe your devices" not in page
    assert "warning: methodology.md still holds the template text" in kept.output  # its placeholder is still there

    notes.write_text(
        notes.read_text(encoding="utf-8").replace("Describe your devices,", "We describe our devices,"),
        encoding="utf-8",
    )
    own = build(project)
    page = (project / "_site" / "methodology" / "index.html").read_text(encoding="utf-8")
    assert "We describe our devices," in page
    assert "methodology.md" not in own.output


def test_a_build_from_a_database_alone_ends_with_the_summary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "runs.duckdb"
    assert ingest_paths([EXAMPLES / f"{EXAMPLE}.json", RUNS / "purpose-current.json"], db).ok
    monkeypatch.chdir(tmp_path)
    done = CliRunner(env=NOT_ON_GITHUB).invoke(main, ["build", "--db", str(db), "--out", str(tmp_path / "site")])
    assert done.exit_code == 0, done.output
    assert "summary: 2 runs on the site: 0 publishable, 2 exploratory, 0 invalid" in done.output
    assert (
        f"unknown revision: benchmark commit {UNKNOWN_COMMIT} (purpose-current.json) is in no revision of fmbench's "
        f'own registry: in a project (fmbench init), add "{UNKNOWN_COMMIT}" to the benchmark_commits list of the '
        "revision it was measured on (the current one, id 2026.07, if the benchmark's task set has not changed "
        "since) in its revisions.yaml, or add a revision for it"
    ) in done.output
    summary = summarize_build(db)
    assert (summary.publishable, summary.exploratory, summary.invalid) == (0, 2, 0)
    assert [(u.commit, u.files) for u in summary.unknown_commits] == [(UNKNOWN_COMMIT, ("purpose-current.json",))]
    assert not summary.failed and summary.refused == []
