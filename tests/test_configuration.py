"""The configuration (what makes two runs comparable) is stated once, in fmbench.analysis.configuration."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

from fmbench.analysis import configuration
from fmbench.analysis.configuration import CHOICES, FIELDS, GROUP_FIELDS, Group
from fmbench.comparison import rules as comparison_rules
from fmbench.comparison import selection
from fmbench.ingest import writable

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("fmbench", "ingest", "native")

ALLOWED = {
    "fmbench/analysis/configuration.py": "the spec itself",
    "fmbench/runfile/models.py": "the run file's models: the fields as the file names them",
    "fmbench/runfile/reader.py": "reads the run file's top level",
    "fmbench/runfile/record.py": "the run record read from the file",
    "fmbench/comparison/selection.py": "RunInfo: a runs row as a comparison reads it",
    "fmbench/storage/queries.py": "RunListing: a runs row as `fmbench runs` lists it",
    "ingest/rows.py": "the ingest rows that store the fields",
}
"""Product modules that may name a configuration field (the schema's .sql migrations may too)."""


def _named_fields(text: str) -> set[str]:
    # A vocabulary that shares its field's name ("connectivity") is a vocabulary, not the field.
    for f in CHOICES:
        if f.vocabulary is not None:
            text = text.replace(f'"{f.vocabulary}"', "").replace(f"'{f.vocabulary}'", "")
    return {f.key for f in CHOICES if re.search(rf"\b{f.key}\b", text)}


def test_the_configuration_fields_are_named_only_in_the_spec_the_schema_and_the_record_models() -> None:
    offenders = {}
    for package in PRODUCT:
        for path in sorted((ROOT / package).rglob("*.py")):
            name = path.relative_to(ROOT).as_posix()
            if name in ALLOWED:
                continue
            found = _named_fields(path.read_text(encoding="utf-8"))
            if found:
                offenders[name] = sorted(found)
    assert offenders == {}, f"these modules restate the configuration (use fmbench.analysis.configuration): {offenders}"


def test_the_guard_finds_a_module_that_restates_a_field() -> None:
    assert _named_fields('sql = "SELECT reasoning_level FROM runs"') == {"reasoning_level"}
    assert _named_fields("label = r.connectivity") == {"connectivity"}
    assert _named_fields('vocab.label("connectivity", value)') == set()


def test_every_column_of_the_spec_is_a_runs_column(tmp_path: Path) -> None:
    with writable(tmp_path / "db.duckdb") as con:
        stored = {name for (name,) in con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'runs'"
        ).fetchall()}
    spec_columns = {f.key for f in FIELDS if f.column}
    assert spec_columns <= stored, spec_columns - stored
    assert set(selection.FILTER_KEYS.values()) <= stored
    assert configuration.columns(CHOICES, "r.") == ", ".join(f"r.{f.key}" for f in CHOICES)


def test_a_regression_group_holds_the_spec_fields_in_order() -> None:
    assert tuple(f.name for f in fields(Group)) == tuple(f.key for f in GROUP_FIELDS)


def test_comparisons_list_the_spec_fields_as_their_conditions_and_hold_its_requirements() -> None:
    assert comparison_rules.CONDITIONS == FIELDS
    assert comparison_rules.MUST_BE_EQUAL is configuration.MUST_BE_EQUAL
    for keys in configuration.MUST_BE_EQUAL.values():
        assert set(keys) <= set(configuration.FIELD)
    for refusal in (*configuration.NEVER_POOLED, *configuration.NEVER_ACROSS_SIDES):
        assert refusal.field.filter_key in selection.FILTER_KEYS, "a refusal names the filter word that narrows a side"
