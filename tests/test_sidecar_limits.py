"""A hostile sidecar (``<run>.meta.yaml``) is refused in one line naming it, cheaply, and the batch goes on.

``serve --watch`` ingests whatever lands in a folder, sidecars included, so a
sidecar is as untrusted as a run file: aliases (which expand a few hundred
bytes into gigabytes), deep nesting, unknown tags and sheer size are refused.
"""

from __future__ import annotations

import json
import shutil
import tracemalloc
from pathlib import Path

import pytest
from click.testing import CliRunner

from fmbench.cli import main
from fmbench.errors import AnnotationError
from fmbench.runfile.annotations import (
    MAX_SIDECAR_BYTES,
    MAX_SIDECAR_DEPTH,
    parse_annotations,
    read_sidecar,
)

from testdata import BAD_SIDECARS, RUNS

LAUGHS = BAD_SIDECARS / "billion-laughs.meta.yaml"


def _refusal(data: bytes, name: str) -> str:
    with pytest.raises(AnnotationError) as caught:
        parse_annotations(data, name, "0" * 64)
    return str(caught.value)


def test_the_billion_laughs_sidecar_is_refused_at_its_first_alias_without_expanding_it() -> None:
    data = LAUGHS.read_bytes()
    assert len(data) == 272  # seven levels of nine: 9**7 = 4,782,969 strings if it were expanded

    tracemalloc.start()
    try:
        message = _refusal(data, LAUGHS.name)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert message == (
        "billion-laughs.meta.yaml: line 2, column 8: YAML aliases (*a) are not accepted in a sidecar "
        "(write each value out); fix the sidecar or remove it"
    )
    assert peak < 2 * 2**20, f"refusing it took {peak:,} bytes"


def test_ingest_names_the_hostile_sidecar_in_one_line_and_lands_its_run_without_it(tmp_path: Path) -> None:
    batch = tmp_path / "batch"
    batch.mkdir()
    shutil.copy(RUNS / "purpose-current.json", batch / "a-laughs.json")
    shutil.copy(LAUGHS, batch / "a-laughs.meta.yaml")
    shutil.copy(RUNS / "purpose-hand-edited.json", batch / "b-fine.json")

    result = CliRunner().invoke(main, ["ingest", str(batch), "--db", str(tmp_path / "db.duckdb"), "--json"])

    assert result.exit_code == 0
    outcomes = {Path(o["path"]).name: o for o in json.loads(result.stdout)["outcomes"]}
    assert outcomes["a-laughs.json"]["status"] == "ingested"  # published, its sidecar's fields not recorded
    (warning,) = outcomes["a-laughs.json"]["warnings"]
    assert warning.startswith("a-laughs.meta.yaml: line 2, column 8: YAML aliases (*a)")
    assert warning.endswith("(the run is published with its sidecar's fields not recorded)")
    assert outcomes["b-fine.json"]["status"] == "ingested"


def test_an_unknown_tag_in_a_sidecar_stays_refused() -> None:
    data = (BAD_SIDECARS / "unknown-tag.meta.yaml").read_bytes()
    assert _refusal(data, "unknown-tag.meta.yaml") == (
        "unknown-tag.meta.yaml: not valid YAML at line 2, column 7; fix the sidecar or remove it"
    )


def test_a_sidecar_nested_past_the_limit_is_refused_with_its_place() -> None:
    deep = b"note: " + b"[" * 5000 + b"]" * 5000 + b"\n"
    message = _refusal(deep, "deep.meta.yaml")
    assert message.startswith("deep.meta.yaml: line 1, column ")
    assert f"nested more than {MAX_SIDECAR_DEPTH} levels deep; fix the sidecar or remove it" in message
    shallow = b"corrections:\n  - field: environment.deviceName\n    value: lab unit\n    reason: default name\n"
    assert parse_annotations(shallow, "ok.meta.yaml", "0" * 64).corrections[0].value == "lab unit"


def test_a_sidecar_over_the_size_limit_is_refused_with_the_limit_and_not_read_whole(tmp_path: Path) -> None:
    big = tmp_path / "run.meta.yaml"
    big.write_bytes(b"note: " + b"x" * (4 * MAX_SIDECAR_BYTES) + b"\n")
    expected = (
        f"run.meta.yaml: {big.stat().st_size:,} bytes is larger than the {MAX_SIDECAR_BYTES:,}-byte limit "
        "for a sidecar; shorten it (a sidecar holds a few annotations)"
    )
    with pytest.raises(AnnotationError) as caught:
        read_sidecar(big)
    assert str(caught.value) == expected
    assert _refusal(big.read_bytes(), "run.meta.yaml") == expected
    fits = b"note: " + b"x" * (MAX_SIDECAR_BYTES - 7) + b"\n"
    assert len(fits) == MAX_SIDECAR_BYTES
    assert parse_annotations(fits, "fits.meta.yaml", "0" * 64).note == "x" * (MAX_SIDECAR_BYTES - 7)
