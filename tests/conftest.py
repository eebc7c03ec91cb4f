"""Shared test fixtures: fresh databases, the example run."""

from __future__ import annotations

from pathlib import Path

import pytest

from testdata import EXAMPLE_NAME, SHARED_EXAMPLES


@pytest.fixture
def example_run() -> Path:
    """The real published legacy run beside the project (shared/examples)."""
    path = SHARED_EXAMPLES / f"{EXAMPLE_NAME}.json"
    if not path.exists():
        pytest.skip("shared/examples is not beside this checkout")
    return path


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "test.duckdb"


REPORTED: list[str] = []
"""Figures tests measured and want shown at the end of the run (such as page sizes)."""


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if REPORTED:
        terminalreporter.section("fmbench figures")
        for line in REPORTED:
            terminalreporter.write_line(line)
