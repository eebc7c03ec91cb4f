"""Where the ``fmbench.native`` tests find their artifacts.

Kept out of ``conftest.py`` on purpose: the core tests import their own
``conftest`` module by name, and a second ``conftest`` here would shadow it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parent / "data"
"""Artifacts written for these tests (see data/README.md)."""

EXAMPLES = Path(__file__).resolve().parents[2] / ".." / "shared" / "examples"
"""The real run files shared beside the repository, when present."""


def example_run_file() -> Path:
    """The first real example run file, or skip the test when there is none."""
    runs = sorted(EXAMPLES.glob("*.json")) if EXAMPLES.is_dir() else []
    if not runs:
        pytest.skip("no example run file beside the repository (../shared/examples)")
    return runs[0]
