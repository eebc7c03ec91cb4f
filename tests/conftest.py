"""Shared test fixtures: paths to committed data, fresh databases, the example run."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
RUNS = DATA / "runs"
BAD = DATA / "bad"
FIXTURES = REPO / "fixtures" / "runs"
SHARED_EXAMPLES = REPO.parent / "shared" / "examples"
EXAMPLE_NAME = "macbook-pro-m5-macos27-26A5353q-on-device-quick-2026-06-12"


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
