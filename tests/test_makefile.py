"""The README's two commands: ``make demo`` installs the runtime alone; ``make test`` adds the test extras."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from testdata import REPO


def dry_run(target: str) -> list[str]:
    """The commands ``make TARGET`` would run in a checkout with no venv yet (``make -n`` runs none of them)."""
    # run under `make test` too: a make inherited through MAKEFLAGS and MAKELEVEL would print its directories
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    done = subprocess.run(["make", "-n", "-B", "--no-print-directory", target, "VENV=.venv-dry-run"], cwd=REPO,
                          capture_output=True, text=True, check=False, timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_demo_installs_the_runtime_dependencies_and_no_test_extras() -> None:
    commands = dry_run("demo")
    installs = [c for c in commands if " install " in c and "--upgrade pip" not in c]
    assert installs == [".venv-dry-run/bin/pip install --quiet ."]
    assert commands[-1] == ".venv-dry-run/bin/fmbench demo --port 8000"


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_test_adds_the_test_extras_then_runs_ruff_and_the_suite() -> None:
    commands = dry_run("test")
    assert ".venv-dry-run/bin/pip install --quiet '.[test]'" in commands
    assert commands.index(".venv-dry-run/bin/pip install --quiet .") < commands.index(
        ".venv-dry-run/bin/pip install --quiet '.[test]'")
    assert commands[-2:] == [".venv-dry-run/bin/ruff check .", ".venv-dry-run/bin/pytest"]
