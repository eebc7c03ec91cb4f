"""Reading bounds its work by the file's size and shape.

Each test writes a real file, made in ``tmp_path`` from a fixture run file, and
runs the real command or library function on it.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fmbench.cli import main
from fmbench.runfile.reader import DEFAULT_MAX_TRIALS, MAX_PROBLEMS
from fmbench.runfile.shape import value_allowance
from fmbench.storage.db import connect

from testdata import FIXTURES

RUN = FIXTURES / "iphone-17-pro-ios27-24a5264n-on-device-quick-2026-11-11.json"
MiB = 2**20


def _run() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(RUN.read_bytes())
    return document


def _write(path: Path, document: dict[str, Any], *, indent: int | None = 2) -> Path:
    path.write_text(json.dumps(document, indent=indent), encoding="utf-8")
    return path


def test_a_64_mib_response_is_ingested_with_the_limit_raised(tmp_path: Path) -> None:
    document = _run()
    document["trials"][0]["response"] = "x" * (64 * MiB)
    run = _write(tmp_path / "long-response.json", document)
    db = tmp_path / "runs.duckdb"
    result = CliRunner().invoke(main, ["ingest", "--db", str(db), "--max-bytes", str(200 * MiB), str(run)])
    assert result.exit_code == 0, result.output
    assert "1 ingested, 0 updated, 0 skipped as duplicates, 0 errored" in result.output
    with connect(db, read_only=True) as con:
        assert con.execute("SELECT max(length(response)) FROM trials").fetchone() == (64 * MiB,)


@pytest.mark.parametrize(
    ("started", "ended", "why"),
    [
        ("0001-01-01T00:00:00Z", "0001-01-01T00:10:00Z", "no run can predate the Foundation Models framework"),
        ("9999-12-31T23:00:00Z", "9999-12-31T23:50:00Z", "it is dated after the moment it was judged"),
        ("2026-11-11T10:00:00Z", "2026-11-11T09:00:00Z", "it ends before it starts"),
    ],
)
def test_a_run_with_an_implausible_clock_is_invalid_with_the_reason_named(
    tmp_path: Path, started: str, ended: str, why: str
) -> None:
    document = _run()
    document["startedAt"], document["endedAt"] = started, ended
    run = _write(tmp_path / "clock.json", document)
    result = CliRunner().invoke(main, ["validate", "--json", str(run)])
    assert result.exit_code == 0, result.output
    (judged,) = json.loads(result.output)
    assert judged["verdict"] == "invalid"
    (clock,) = [r for r in judged["reasons"] if r["code"] == "implausible-clock"]
    assert clock["level"] == "invalid"
    assert why in clock["message"]
    assert started in clock["message"].replace("+00:00", "Z")

    shown = CliRunner().invoke(main, ["validate", str(run)])
    assert "invalid as evidence" in shown.output.splitlines()[0].lower()
    assert any(line.strip().startswith("invalid") and why in line for line in shown.output.splitlines())


NATIVE_RESULT = FIXTURES.parents[1] / "tests" / "native" / "data" / "baseline.xcevalresult"
DEEP = "[" * 200_000 + "]" * 200_000


@pytest.mark.parametrize("inside_input", [False, True], ids=["whole-file", "inside-Input"])
@pytest.mark.parametrize("command", ["ingest", "validate", "inspect", "report", "list", "samples"])
def test_a_result_file_nested_200000_deep_is_one_line_naming_the_file_and_place(
    tmp_path: Path, command: str, inside_input: bool
) -> None:
    path = tmp_path / "deep.xcevalresult"
    if inside_input:
        document = json.loads(NATIVE_RESULT.read_bytes())
        document["results"][0]["Input"] = DEEP
        path.write_text(json.dumps(document), encoding="utf-8")
    else:
        path.write_text(DEEP, encoding="utf-8")
    args = ["native", command, str(path)]
    if command == "ingest":
        args += ["--db", str(tmp_path / "native.duckdb")]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output and "RecursionError" not in result.output
    where = f"{path}: results[0].Input: " if inside_input else f"{path}: "
    message = where + "not JSON (nested more than 256 levels deep at line 1 column 257)"
    lines = [line for line in result.output.splitlines() if message in line]
    assert len(lines) == 1, result.output


def _empty_trials(path: Path, count: int) -> Path:
    """The fixture run with ``count`` trials that are each ``{}``, written compactly (4 bytes a trial)."""
    document = _run()
    document["trials"] = [{}] * count
    return _write(path, document, indent=None)


_PEAK_OF_CHILD = """
import resource, subprocess, sys
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
sys.stdout.write(done.stdout)
print(done.returncode)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * (1 if sys.platform == "darwin" else 1024))  # macOS: bytes
"""
"""Runs a command and prints its output, exit code and peak resident memory (``ru_maxrss`` of the child;
this small parent's own memory is counted in it too, so the figure errs high)."""


def _peak_of_ingest(*args: str) -> tuple[str, int, int]:
    done = subprocess.run(
        [sys.executable, "-c", _PEAK_OF_CHILD, sys.executable, "-P", "-m", "fmbench", "ingest", *args],
        capture_output=True, text=True, check=True,
    )
    *output, code, peak = done.stdout.splitlines()
    return "\n".join(output), int(code), int(peak)


def test_a_million_empty_trials_are_refused_by_the_trial_limit_within_the_memory_bound(tmp_path: Path) -> None:
    run = _empty_trials(tmp_path / "empty-trials.json", 1_000_000)
    size = run.stat().st_size
    db = tmp_path / "runs.duckdb"
    output, code, peak = _peak_of_ingest("--db", str(db), str(run))
    assert code == 1, output
    assert (
        f"{run.name}: trials: more than {DEFAULT_MAX_TRIALS:,} elements, the limit for a run file; "
        "raise it with --max-trials if this really is one run"
    ) in output
    assert "Traceback" not in output
    assert peak <= 5 * size + 200 * MiB, f"peaked at {peak / MiB:.0f} MiB for a {size / MiB:.1f} MiB file"
    with connect(db, read_only=True) as con:
        assert con.execute("SELECT count(*) FROM runs").fetchone() == (0,)


def test_a_million_empty_trials_with_the_limit_raised_are_refused_as_too_dense_within_the_memory_bound(
    tmp_path: Path,
) -> None:
    run = _empty_trials(tmp_path / "empty-trials.json", 1_000_000)
    size = run.stat().st_size
    output, code, peak = _peak_of_ingest("--db", str(tmp_path / "runs.duckdb"), "--max-trials", "1000000", str(run))
    assert code == 1, output
    allowance = value_allowance(size)
    assert f"{run.name}: (file): more than {allowance:,} JSON values in {size:,} bytes (a value every 7 bytes or less)" in output
    assert peak <= 5 * size + 200 * MiB, f"peaked at {peak / MiB:.0f} MiB for a {size / MiB:.1f} MiB file"


@pytest.mark.parametrize("shape", ["five million bad checks", "two million bad tool arguments"])
def test_a_trial_holding_millions_of_members_is_refused_within_the_memory_bound(tmp_path: Path, shape: str) -> None:
    document = _run()
    if shape == "five million bad checks":
        document["trials"][0]["grade"]["checks"] = [1] * 5_000_000
    else:
        document["trials"][0]["toolCalls"] = [{"name": "x", "arguments": {f"k{i}": 1 for i in range(2_000_000)}}]
    run = _write(tmp_path / "dense.json", document, indent=None)
    size = run.stat().st_size
    output, code, peak = _peak_of_ingest("--db", str(tmp_path / "runs.duckdb"), "--max-bytes", str(64 * MiB), str(run))
    assert code == 1, output
    assert f"{run.name}: (file): more than {value_allowance(size):,} JSON values in {size:,} bytes" in output
    assert peak <= 5 * size + 200 * MiB, f"peaked at {peak / MiB:.0f} MiB for a {size / MiB:.1f} MiB file"


def test_a_trial_with_many_bad_checks_under_the_value_allowance_is_one_problem_a_list(tmp_path: Path) -> None:
    document = _run()
    document["trials"][0]["grade"]["checks"] = [1] * 1000
    document["trials"][1]["toolCalls"] = [{"name": "x", "arguments": {f"k{i}": 1 for i in range(1000)}}]
    result = CliRunner().invoke(main, ["validate", str(_write(tmp_path / "bad-members.json", document))])
    assert result.exit_code == 1
    assert result.output.splitlines()[1:] == [
        "  error  trials[0].grade.checks[0]: expected an object",
        "  error  trials[1].toolCalls[0].arguments.k0: expected an object",
    ]


def test_validate_lists_200_errors_of_a_file_and_counts_the_rest(tmp_path: Path) -> None:
    run = _empty_trials(tmp_path / "empty-trials.json", 100_000)
    result = CliRunner().invoke(main, ["validate", "--max-trials", "100000", str(run)])
    assert result.exit_code == 1, result.output
    lines = result.output.splitlines()
    assert lines[0] == f"{run.name}: unreadable"
    assert [line for line in lines if line.startswith("  error  ")] == lines[1 : 1 + MAX_PROBLEMS]
    assert lines[1] == "  error  trials[0].id: required field is missing"
    assert lines[1 + MAX_PROBLEMS :] == ["  … and 1,099,800 more errors"]

    as_json = CliRunner().invoke(main, ["validate", "--json", "--max-trials", "100000", str(run)])
    (checked,) = json.loads(as_json.output)
    assert len(checked["errors"]) == MAX_PROBLEMS and checked["moreErrors"] == 1_099_800


def test_the_trial_limit_takes_a_run_of_exactly_its_size_and_refuses_one_more(tmp_path: Path) -> None:
    trials = len(_run()["trials"])
    ok = CliRunner().invoke(main, ["validate", "--max-trials", str(trials), str(RUN)])
    assert ok.exit_code == 0, ok.output
    refused = CliRunner().invoke(main, ["ingest", "--db", str(tmp_path / "runs.duckdb"), "--max-trials", str(trials - 1), str(RUN)])
    assert refused.exit_code == 1
    assert (
        f"{RUN.name}: trials: more than {trials - 1:,} elements, the limit for a run file; "
        "raise it with --max-trials if this really is one run"
    ) in refused.output


def test_a_repeated_key_is_a_note_naming_its_json_path_in_validate_and_the_database(tmp_path: Path) -> None:
    text = RUN.read_text(encoding="utf-8")
    device = '\n    "deviceName" : "iPhone 17 Pro",'
    assert text.count(device) == 1  # the run's environment (a trial's is indented further)
    text = text.replace(device, device + '\n    "deviceName" : "Hand Edited",')
    duration = '"duration" : '
    at = text.index(duration, text.index('"trials" : ['))
    text = text[:at] + '"duration" : 9.5,\n        ' + text[at:]
    run = tmp_path / "repeated-keys.json"
    run.write_text(text, encoding="utf-8")
    note = "key repeated in its object; the last one was read (the runner writes each key once: a hand edit?)"

    result = CliRunner().invoke(main, ["validate", str(run)])
    assert result.exit_code == 0, result.output
    assert f"  note        environment.deviceName: {note}" in result.output.splitlines()
    assert f"  note        trials[0].metrics.duration: {note}" in result.output.splitlines()

    db = tmp_path / "runs.duckdb"
    ingested = CliRunner().invoke(main, ["ingest", "--db", str(db), str(run)])
    assert ingested.exit_code == 0, ingested.output
    with connect(db, read_only=True) as con:
        flags = con.execute("SELECT location, message FROM run_flags WHERE message = ? ORDER BY ordinal", [note]).fetchall()
        assert flags == [("environment.deviceName", note), ("trials[0].metrics.duration", note)]
        assert con.execute("SELECT device_name FROM runs").fetchone() == ("Hand Edited",)


def test_a_run_without_repeated_keys_has_no_such_note(tmp_path: Path) -> None:
    for path in sorted(FIXTURES.glob("*.json")):
        result = CliRunner().invoke(main, ["validate", "--json", str(path)])
        (checked,) = json.loads(result.output)
        assert not [f for f in checked["flags"] if "key repeated" in f["message"]], path.name


def _trial_limit_message(name: str, limit: int) -> str:
    return (
        f"{name}: trials: more than {limit:,} elements, the limit for a run file; "
        "raise it with --max-trials if this really is one run"
    )


def test_a_project_build_and_native_replay_take_max_trials_as_ingest_does(tmp_path: Path) -> None:
    from fmbench.scaffold import init_project

    trials = len(_run()["trials"])
    project = init_project(tmp_path / "results", title="Trial limit").root
    shutil.copy(RUN, project / "runs" / RUN.name)
    refused = CliRunner().invoke(
        main, ["build", "--project", str(project), "--max-trials", str(trials - 1), "--strict"]
    )
    assert refused.exit_code == 1, refused.output  # the site of the others is built; --strict fails the job
    assert f"  runs/{_trial_limit_message(RUN.name, trials - 1)}" in refused.output.splitlines()
    built = CliRunner().invoke(main, ["build", "--project", str(project), "--max-trials", str(trials)])
    assert built.exit_code == 0, built.output
    assert f"ingested {RUN.name} (run " in built.output

    out = tmp_path / "replay"
    replay = CliRunner().invoke(main, ["native", "replay", str(RUN), "--output", str(out), "--max-trials", str(trials - 1)])
    assert replay.exit_code == 1
    assert replay.output.strip().splitlines() == [f"Error: {_trial_limit_message(str(RUN), trials - 1)}"]
    assert not out.exists() or list(out.iterdir()) == []
