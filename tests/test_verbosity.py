"""-q and -v on every command: quiet drops the progress and informational lines, verbose adds detail, errors are
printed whatever is chosen; and ``export --json`` says what was written."""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from fmbench.cli import main
from fmbench.ingest import ingest_paths
from fmbench.reference import commands

from testdata import BAD, RUNS

RUN = RUNS / "purpose-current.json"


def invoke(*args: str | Path) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, [str(a) for a in args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "x.duckdb"
    assert ingest_paths([RUN], path).ok
    return path


def test_every_command_takes_quiet_and_verbose() -> None:
    for name, command in [("fmbench", main), *commands()]:
        flags = {opt for p in command.params if isinstance(p, click.Option) for opt in p.opts}
        assert {"-q", "--quiet", "-v", "--verbose"} <= flags, name


def test_quiet_with_verbose_is_a_usage_error_on_a_command_and_across_the_group(db: Path) -> None:
    for args in (("runs", "-q", "-v"), ("-q", "runs", "--verbose"), ("native", "-v", "list", "-q", ".")):
        code, _, err = invoke(*args, "--db", db) if args[0] != "native" else invoke(*args)
        assert code == 2, args
        assert "give --quiet or --verbose, not both" in err


def test_init_quiet_prints_nothing_and_still_writes_the_project(tmp_path: Path) -> None:
    code, out, err = invoke("init", tmp_path / "p", "-q")
    assert code == 0 and out == "" and "wrote" not in err
    assert (tmp_path / "p" / "fmbench.toml").is_file()
    code, out, _ = invoke("init", tmp_path / "q")
    assert code == 0 and "wrote fmbench.toml" in out and "project ready in" in out


def test_runs_quiet_prints_the_table_without_its_count(db: Path) -> None:
    code, out, _ = invoke("runs", "--db", db)
    assert code == 0 and "1 run(s)" in out
    code, out, _ = invoke("runs", "--db", db, "-q")
    assert code == 0 and "1 run(s)" not in out and "24A5264n" in out


def test_the_group_quiet_applies_to_the_command(db: Path) -> None:
    code, out, _ = invoke("-q", "runs", "--db", db)
    assert code == 0 and "run(s)" not in out and "24A5264n" in out


def test_an_error_is_printed_whatever_quiet_says(tmp_path: Path) -> None:
    code, _, err = invoke("runs", "-q", "--db", tmp_path / "none.duckdb")
    assert code == 1 and "Error: " in err and "no such database" in err


def test_ingest_verbose_names_each_file_by_its_whole_path(tmp_path: Path) -> None:
    code, out, _ = invoke("ingest", "-v", RUN, "--db", tmp_path / "v.duckdb")
    assert code == 0 and str(RUN) in out
    code, out, _ = invoke("ingest", RUN, "--db", tmp_path / "n.duckdb")
    assert code == 0 and str(RUN) not in out and RUN.name in out


def test_validate_quiet_prints_only_the_file_that_cannot_be_read() -> None:
    bad = BAD / "wrong-type.json"
    code, out, _ = invoke("validate", "-q", RUN, bad)
    assert code == 1
    assert "wrong-type.json" in out and RUN.name not in out


def test_migrate_quiet_prints_nothing_and_verbose_lists_every_migration(db: Path) -> None:
    code, out, err = invoke("migrate", "--db", db, "-q")
    assert code == 0 and out == "" and err == ""
    code, out, _ = invoke("migrate", "--db", db, "-v")
    assert code == 0 and "nothing to migrate" in out and "0001_" in out
    code, out, _ = invoke("migrate", "--db", db)
    assert code == 0 and "0001_" not in out


def test_export_quiet_prints_nothing_and_verbose_names_every_file(db: Path, tmp_path: Path) -> None:
    code, out, _ = invoke("export", "--db", db, "--originals", tmp_path / "q", "-q")
    assert code == 0 and out == ""
    assert (tmp_path / "q" / RUN.name).is_file()
    code, out, _ = invoke("export", "--db", db, "--originals", tmp_path / "v", "--trials-csv", tmp_path / "csv", "-v")
    assert code == 0
    assert "1 original file(s) written to" in out and f"  {RUN.name}" in out
    assert "1 trials CSV file(s) written to" in out and ".trials.csv" in out


def test_export_json_is_one_object_of_every_folder_and_file_written(db: Path, tmp_path: Path) -> None:
    code, out, _ = invoke("export", "--db", db, "--originals", tmp_path / "o", "--trials-csv", tmp_path / "c",
                          "--parquet", tmp_path / "pq", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["originals"] == {"folder": str(tmp_path / "o"), "count": 1, "files": [RUN.name]}
    assert data["trials_csv"]["count"] == 1 and data["trials_csv"]["files"][0].endswith(".trials.csv")
    assert (tmp_path / "c" / data["trials_csv"]["files"][0]).is_file()
    parquet = data["parquet"]
    assert parquet["location"] == str(tmp_path / "pq") and parquet["tables"]["runs"] == 1
    assert parquet["rows"] == sum(parquet["tables"].values()) and isinstance(parquet["schema_version"], int)


def test_export_json_failing_is_a_one_line_error_and_no_json(tmp_path: Path) -> None:
    code, out, err = invoke("export", "--db", tmp_path / "none.duckdb", "--originals", tmp_path / "o", "--json")
    assert code == 1 and out == "" and "no such database" in err
