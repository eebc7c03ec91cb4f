"""A sidecar that cannot be read never unpublishes its run, and a misspelt key is named with the key it is near.

Both are one line of the build's summary naming the sidecar (and a GitHub annotation under Actions); the run is on
the site with the sidecar's fields not recorded; ``--strict`` (or ``[publishing] strict``) fails the build on either.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from fmbench.publish.summary import BuildSummary, SidecarProblem
from fmbench.runfile.annotations import annotations_from, parse_annotations, unknown_key

from testdata import FIXTURES

PCC = "ipad-pro-m5-ipados27-24a5264n-pcc-full-2026-11-10"
"""A PCC run with a sidecar (connection, location, entitlement, note)."""
PLAIN = "iphone-17-pro-ios27-24a5256a-on-device-performance-2026-10-29"
OTHER = "iphone-17-pro-ios27-24a5264n-on-device-performance-2026-11-03"


def fmbench(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-P", "-m", "fmbench", *args], cwd=cwd, capture_output=True, text=True, check=False,
        env={"PATH": "/usr/bin:/bin", "HOME": str(cwd)}, timeout=600,
    )


def test_an_unknown_key_names_the_nearest_known_key() -> None:
    assert unknown_key("conection", "a.meta.yaml") == "a.meta.yaml: unknown key 'conection', ignored (did you mean 'connection'?)"
    assert unknown_key("entitlment", "a.meta.yaml").endswith("(did you mean 'entitlement'?)")
    far = unknown_key("weather", "a.meta.yaml")
    assert far.startswith("a.meta.yaml: unknown key 'weather', ignored (the known keys are connection, location,")


def test_a_misspelt_key_is_a_problem_and_the_rest_of_the_sidecar_counts() -> None:
    a = parse_annotations(b"conection: wifi\nnote: fine\n", "a.meta.yaml", "0" * 64)
    assert a.note == "fine" and a.connection is None and not a.unreadable
    assert a.problems == ("a.meta.yaml: unknown key 'conection', ignored (did you mean 'connection'?)",)
    assert parse_annotations(b"connection: wifi\n", "a.meta.yaml", "0" * 64).problems == ()


def test_a_sidecar_that_cannot_be_read_records_nothing_and_says_so_in_one_line() -> None:
    a = annotations_from(b"note: [unclosed\n", "a.meta.yaml", "0" * 64)
    assert a.unreadable and (a.connection, a.location, a.entitlement, a.note) == (None, None, None, None)
    (line,) = a.problems
    assert "\n" not in line
    assert line == ("a.meta.yaml: not valid YAML at line 2, column 1; fix the sidecar or remove it "
                    "(the run is published with its sidecar's fields not recorded)")


@pytest.mark.parametrize(("strict", "command"), [(False, "warning"), (True, "error")])
def test_a_sidecar_problem_is_a_github_annotation_naming_the_file(strict: bool, command: str) -> None:
    summary = BuildSummary(strict=strict, sidecars=[SidecarProblem("runs/a.meta.yaml", "unknown key 'x', ignored")])
    assert summary.failed is strict
    assert f"::{command} file=runs/a.meta.yaml,title=Sidecar::unknown key 'x', ignored" in summary.workflow_commands()
    assert "### Sidecars" in summary.markdown()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    done = fmbench(tmp_path, "init", "results")
    assert done.returncode == 0, done.stderr
    runs = tmp_path / "results" / "runs"
    for name in (PCC, PLAIN, OTHER):
        shutil.copyfile(FIXTURES / f"{name}.json", runs / f"{name}.json")
    (runs / f"{PCC}.meta.yaml").write_bytes(b"connection: wifi\nnote: [unclosed\n")
    (runs / f"{PLAIN}.meta.yaml").write_bytes(b"conection: wifi\n")
    return tmp_path / "results"


def test_a_broken_sidecar_keeps_its_run_on_the_site_and_each_problem_is_one_line_naming_the_sidecar(
    project: Path,
) -> None:
    built = fmbench(project, "build", "-j", "1")
    assert built.returncode == 0, built.stdout + built.stderr
    lines = built.stdout.splitlines()
    assert "summary: 3 runs on the site: " in built.stdout  # none dropped
    assert (f"sidecar: runs/{PCC}.meta.yaml: not valid YAML at line 3, column 1; fix the sidecar or remove it "
            "(the run is published with its sidecar's fields not recorded)") in lines
    assert f"sidecar: runs/{PLAIN}.meta.yaml: unknown key 'conection', ignored (did you mean 'connection'?)" in lines
    con = duckdb.connect(str(project / "fmbench.duckdb"), read_only=True)
    try:
        stored = con.execute(
            "SELECT r.file_name, a.connection, a.note FROM runs r JOIN annotations a USING (run_id) ORDER BY 1"
        ).fetchall()
    finally:
        con.close()
    assert stored == [(f"{PCC}.json", None, None), (f"{PLAIN}.json", None, None)]
    # The next build says it again, though nothing changed.
    again = fmbench(project, "build", "-j", "1")
    assert again.returncode == 0 and f"sidecar: runs/{PCC}.meta.yaml: not valid YAML" in again.stdout


def test_strict_fails_the_build_on_a_sidecar_problem_after_building_the_site(project: Path) -> None:
    (project / "runs" / f"{PCC}.meta.yaml").unlink()
    built = fmbench(project, "build", "-j", "1", "--strict")
    assert built.returncode == 1, built.stdout + built.stderr
    assert (f"sidecar: runs/{PLAIN}.meta.yaml: unknown key 'conection', ignored (did you mean 'connection'?) "
            "(--strict: the build fails)") in built.stdout.splitlines()
    assert (project / "_site" / "index.html").is_file()
    (project / "runs" / f"{PLAIN}.meta.yaml").write_bytes(b"connection: wifi\n")
    assert fmbench(project, "build", "-j", "1", "--strict").returncode == 0
