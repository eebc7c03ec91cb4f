"""Shared locations for the ``fmbench.native`` tests."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent / "data"
"""Artifacts written for these tests (see data/README.md)."""

EXAMPLES = Path(__file__).resolve().parents[2] / ".." / "shared" / "examples"
"""The real run files shared beside the repository, when present."""


@pytest.fixture
def data() -> Path:
    return DATA


@pytest.fixture
def example_run() -> Path:
    runs = sorted(EXAMPLES.glob("*.json")) if EXAMPLES.is_dir() else []
    if not runs:
        pytest.skip("no example run file beside the repository (../shared/examples)")
    return runs[0]
