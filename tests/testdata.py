"""Where the committed test data lives."""

from __future__ import annotations

import importlib.util
import shutil
import sys
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
RUNS = DATA / "runs"
BAD = DATA / "bad"
JUDGING = DATA / "judging"
FIXTURES = REPO / "fixtures" / "runs"
EXAMPLES = DATA / "examples"
"""The benchmark's own published example run and its Markdown summary (MIT, licence beside them)."""
EXAMPLE_NAME = "macbook-pro-m5-macos27-26A5353q-on-device-quick-2026-06-12"
BAD_SIDECARS = DATA / "bad-sidecars"


def iphone_runs_with_one_held_back(root: Path, held_back: str) -> tuple[Path, Path]:
    """The fixture corpus's iPhone runs copied into ``root/base``, but for the one whose name starts with
    ``held_back``, copied alone into ``root/later``: a corpus to build, and a run to add to it."""
    base, later = root / "base", root / "later"
    base.mkdir()
    later.mkdir()
    for path in sorted(FIXTURES.glob("iphone-17-pro-*")):
        shutil.copy(path, (later if path.name.startswith(held_back) else base) / path.name)
    return base, later


def methodology_sections() -> int:
    """How many sections (``## `` headings) the bundled methodology page has."""
    text = (REPO / "site" / "methodology.md").read_text(encoding="utf-8")
    return sum(1 for line in text.splitlines() if line.startswith("## "))


def compare_runbuilder() -> ModuleType:
    """tests/data/compare/runbuilder.py, loaded once (it writes run files of chosen shapes for a test)."""
    name = "fmbench_compare_runbuilder"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, DATA / "compare" / "runbuilder.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]
