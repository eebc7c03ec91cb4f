"""Reading run files: exact where data is data, tolerant where the format grows, precise when wrong."""

from __future__ import annotations

from pathlib import Path

import pytest

from fmbench.analysis.run import analyze_file
from fmbench.errors import RunFileError
from fmbench.runfile.reader import detect_generation, parse_run
from fmbench.runfile.record import parse_os_build, parse_os_generation

from testdata import BAD, FIXTURES, RUNS


def test_a_64_bit_seed_is_kept_exactly() -> None:
    record = analyze_file(RUNS / "purpose-current.json").record
    assert record.random_seed == 18446744073709551615
    assert isinstance(record.random_seed, int)


def test_unknown_keys_and_an_unknown_category_are_kept_and_flagged() -> None:
    record = analyze_file(RUNS / "purpose-current.json").record
    assert record.extra == {"runnerBuildFlavor": "beta"}
    spatial = next(t for t in record.trials if t.scenario_id == "spatial-puzzle")
    assert spatial.category == "spatialReasoning"
    assert spatial.extra == {"energyImpact": {"score": 3}}
    flagged = {str(p) for p in record.flags}
    assert "runnerBuildFlavor: unknown key kept" in flagged
    assert any("spatialReasoning" in f for f in flagged)


def test_the_ios_build_is_parsed_out_of_the_version_string() -> None:
    record = analyze_file(RUNS / "purpose-current.json").record
    assert record.environment.systemBuild == "Version 27.0 (Build 24A5264n)"
    assert record.os_build == "24A5264n"
    assert record.os_generation == 27
    assert parse_os_build("26A5353q") == "26A5353q"
    assert parse_os_build(None) is None
    assert parse_os_generation("26.1.0") == 26


def test_generations_are_detected_per_file(example_run: Path) -> None:
    assert detect_generation(example_run.read_bytes()) == "legacy"
    assert detect_generation((RUNS / "purpose-current.json").read_bytes()) == "current"
    assert analyze_file(example_run).record.generation == "legacy"


@pytest.mark.parametrize(
    ("name", "where", "message"),
    [
        ("truncated.json", "line 424, column 27", "invalid JSON"),
        ("wrong-type.json", "trials[3].metrics.duration", "expected a number"),
        ("missing-field.json", "trials[1].response", "required field is missing"),
        ("not-a-run.json", "(top level)", "not a FoundationModelsBench run"),
        ("empty.json", "(file)", "empty file"),
    ],
)
def test_bad_files_get_an_error_naming_the_file_and_the_place(name: str, where: str, message: str) -> None:
    with pytest.raises(RunFileError) as caught:
        analyze_file(BAD / name)
    text = str(caught.value)
    assert text.startswith(f"{name}: {where}: ")
    assert message in text


def test_broken_json_is_described_with_each_parsers_whole_message_and_its_line_and_column() -> None:
    with pytest.raises(RunFileError) as caught:
        analyze_file(BAD / "truncated.json")
    assert str(caught.value) == (
        "truncated.json: line 424, column 27: invalid JSON: Unterminated string starting at: line 424 column 27 "
        "(char 12140); EOF while parsing a string at line 424 column 27"
    )
    assert caught.value.position == (424, 27)


@pytest.mark.parametrize(
    ("mutation", "where"),
    [
        (b'"decodeDuration" : 0.6,', "metrics.decodeDuration"),
        (b'"randomSeed" : 18446744073709551615', "randomSeed"),
    ],
)
def test_numbers_outside_what_a_run_can_hold_are_rejected(mutation: bytes, where: str) -> None:
    data = (RUNS / "purpose-current.json").read_bytes()
    replaced = {
        b'"decodeDuration" : 0.6,': b'"decodeDuration" : -0.6,',
        b'"randomSeed" : 18446744073709551615': b'"randomSeed" : 18446744073709551616',
    }[mutation]
    assert mutation in data
    with pytest.raises(RunFileError) as caught:
        parse_run(data.replace(mutation, replaced, 1), "edge.json")
    assert where in str(caught.value)


def test_nan_is_not_a_measurement() -> None:
    data = (RUNS / "purpose-current.json").read_bytes().replace(b'"duration" : 1.0,', b'"duration" : NaN,', 1)
    with pytest.raises(RunFileError, match="finite number"):
        parse_run(data, "nan.json")


def test_a_file_over_the_size_limit_is_refused_with_a_message_that_says_so() -> None:
    with pytest.raises(RunFileError, match="larger than the 100-byte limit"):
        analyze_file(RUNS / "purpose-current.json", max_bytes=100)


def _reordered(value: object) -> object:
    """``value`` with every object's keys in reverse order (JSON objects are unordered)."""
    if isinstance(value, dict):
        return {k: _reordered(value[k]) for k in reversed(list(value))}
    if isinstance(value, list):
        return [_reordered(v) for v in value]
    return value


def _layouts(data: bytes) -> dict[str, bytes]:
    import json

    document = json.loads(data)
    return {
        "minified": json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode(),
        "indented by 4": json.dumps(document, indent=4, ensure_ascii=False).encode(),
        "keys reordered": json.dumps(_reordered(document), indent=2, ensure_ascii=False).encode(),
    }


def test_a_run_minified_reindented_or_with_its_keys_reordered_reads_to_the_same_records(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from fmbench.analysis.run import analyze_bytes
    from fmbench.runfile import reader

    monkeypatch.setattr(reader, "CHUNK_BYTES", 1500)  # were the file sliced anywhere, a test file has many slices
    files = [*sorted(FIXTURES.glob("*.json")), RUNS / "purpose-current.json", RUNS / "hostile-text.json"]
    for path in files:
        data = path.read_bytes()
        original = parse_run(data, path.name)
        analysis = analyze_bytes(data, path.name)
        for layout, text in _layouts(data).items():
            read = parse_run(text, path.name)
            assert (read.generation, read.document) == (original.generation, original.document), (path.name, layout)
            assert read.document.model_extra == original.document.model_extra, (path.name, layout)
            again = analyze_bytes(text, path.name)
            assert again.record.trials == analysis.record.trials, (path.name, layout)
            assert (again.figures, again.trial_figures, again.verdict) == (
                analysis.figures, analysis.trial_figures, analysis.verdict
            ), (path.name, layout)


def test_a_bad_last_trial_is_located_by_its_place_in_the_whole_file(monkeypatch: pytest.MonkeyPatch) -> None:
    from fmbench.runfile import reader

    data = (RUNS / "purpose-current.json").read_bytes()
    at = data.rindex(b'"duration" : ')
    bad = data[:at] + b'"duration" : "slow", "x" : ' + data[at + len(b'"duration" : '):]
    monkeypatch.setattr(reader, "CHUNK_BYTES", 1500)
    with pytest.raises(RunFileError) as caught:
        parse_run(bad, "bad.json")
    trials = len(parse_run(data, "good.json").document.trials)
    assert f"trials[{trials - 1}].metrics.duration: expected a number" in str(caught.value)


def test_of_two_trials_keys_the_last_one_counts() -> None:
    data = (RUNS / "purpose-current.json").read_bytes()
    doubled = data.replace(b'\n  "suite" : ', b'\n  "trials" : [],\n  "suite" : ', 1)
    assert doubled != data
    assert len(parse_run(doubled, "doubled.json").document.trials) == len(parse_run(data, "good.json").document.trials)


def test_an_array_after_the_trials_is_kept_beside_every_trial() -> None:
    data = (RUNS / "purpose-current.json").read_bytes()
    later = data.replace(b'\n  "warmupCount" : ', b'\n  "zLater" : [\n    {\n      "id" : "x"\n    }\n  ],\n  "warmupCount" : ', 1)
    assert later != data
    document = parse_run(later, "later.json").document
    assert len(document.trials) == len(parse_run(data, "good.json").document.trials)
    assert (document.model_extra or {})["zLater"] == [{"id": "x"}]


def test_a_fault_outside_the_trials_is_located_in_the_file_as_it_is(monkeypatch: pytest.MonkeyPatch) -> None:
    from fmbench.runfile import reader

    data = (RUNS / "purpose-current.json").read_bytes()
    bad = data.replace(b'"warmupCount" : ', b'"warmupCount" : "two", "x" : ', 1)
    assert bad != data
    monkeypatch.setattr(reader, "CHUNK_BYTES", 1500)
    with pytest.raises(RunFileError) as caught:
        parse_run(bad, "bad.json")
    assert "warmupCount: expected an integer" in str(caught.value)
    broken = data[:-3] + b"," + data[-3:]
    with pytest.raises(RunFileError) as caught:
        parse_run(broken, "broken.json")
    whole = json_error_place(broken)
    assert whole in str(caught.value)


def json_error_place(data: bytes) -> str:
    import json

    try:
        json.loads(data)
    except json.JSONDecodeError as exc:
        return f"line {exc.lineno}, column {exc.colno}"
    raise AssertionError("expected broken JSON")
