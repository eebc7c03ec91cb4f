"""Shared test fixtures: fresh databases, the example run, a headless Chromium."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from testdata import EXAMPLE_NAME, EXAMPLES


@pytest.fixture
def example_run() -> Path:
    """The real published legacy run (tests/data/examples)."""
    return EXAMPLES / f"{EXAMPLE_NAME}.json"


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "test.duckdb"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's Chromium, headless, driven by Playwright (browsers are never downloaded): one per test module."""
    from playwright.sync_api import sync_playwright

    from browser_support import CHROMIUM_ARGS, chromium_path

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=chromium_path(), args=CHROMIUM_ARGS, headless=True)
        yield b
        b.close()


REPORTED: list[str] = []
"""Figures tests measured and want shown at the end of the run (such as page sizes)."""


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if REPORTED:
        terminalreporter.section("fmbench figures")
        for line in REPORTED:
            terminalreporter.write_line(line)
