"""Where the ``fmbench.native`` tests find their artifacts.

Kept out of ``conftest.py`` on purpose: the core tests import their own
``conftest`` module by name, and a second ``conftest`` here would shadow it.
"""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
"""Artifacts written for these tests (see data/README.md)."""

EXAMPLES = Path(__file__).resolve().parents[1] / "data" / "examples"
"""The benchmark's own published example run (tests/data/examples)."""


def example_run_file() -> Path:
    """The first real example run file."""
    runs = sorted(EXAMPLES.glob("*.json"))
    assert runs, f"no example run file in {EXAMPLES.name}/"
    return runs[0]
