"""Where the committed test data lives."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
RUNS = DATA / "runs"
BAD = DATA / "bad"
JUDGING = DATA / "judging"
FIXTURES = REPO / "fixtures" / "runs"
SHARED_EXAMPLES = REPO.parent / "shared" / "examples"
EXAMPLE_NAME = "macbook-pro-m5-macos27-26A5353q-on-device-quick-2026-06-12"
BAD_SIDECARS = DATA / "bad-sidecars"
