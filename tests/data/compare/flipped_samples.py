"""Writes two runs of one Mac, on a baseline and a candidate OS build, in which a few samples flip.

Both runs hold two workloads of 25 samples × 20 repetitions each, drawn from the same latency and throughput
distributions (another noise seed on each side), where every sample passes every trial but:

- two samples of task capture (:data:`NEWLY_FAILING`) pass all 20 trials on the baseline and fail all 20 on
  the candidate: their response changed, and names the person the check excludes. One of the new responses
  holds markup and a script (:data:`HOSTILE_RESPONSE`), which every page must show as text;
- one sample of journal summary (:data:`NEWLY_PASSING`) fails every trial on the baseline and passes every trial
  on the candidate.

So task capture's success goes from 100 % to 92 % and journal summary's from 96 % to 100 %: changes a
workload-level interval over 25 samples cannot tell from none at the practical threshold (5 points), while each
flipped sample, 20 of 20 against 0 of 20, is far beyond chance. The runs are written with :mod:`runbuilder`'s
encoder and stored summaries, so they are judged publishable.
"""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

from fmbench.analysis.run import analyze_bytes


def _runbuilder() -> ModuleType:
    name = "fmbench_compare_runbuilder"  # the name the comparison tests load it under: one module for both
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name("runbuilder.py"))
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


rb = _runbuilder()

TASK_CAPTURE = rb.Scenario("task-capture", "Natural-language task capture", "taskParsing", samples=25,
                           pass_rate=1.0, ttft=0.45, tps=35.0)
JOURNAL = rb.Scenario("journal-summary", "Journal summary", "summarization", samples=25, pass_rate=1.0,
                      ttft=0.80, tps=28.0, prompt="Summarize the journal entry.")

DEVICE = "Mac17,2"
BASELINE_BUILD = "26A5353q"
CANDIDATE_BUILD = "26A5378f"
BASE = rb.RunSpec(hardware=DEVICE, device="MacBook Pro M5", system="macOS", version="27.0", build=BASELINE_BUILD,
                  scenarios=(TASK_CAPTURE, JOURNAL), repetitions=20, noise_seed=11,
                  started=datetime(2026, 11, 3, 9, 0, tzinfo=UTC))
CANDIDATE = BASE.but(build=CANDIDATE_BUILD, noise_seed=12, started=datetime(2026, 11, 10, 9, 0, tzinfo=UTC))

NEWLY_FAILING = ("task-capture-007", "task-capture-019")
NEWLY_PASSING = ("journal-summary-011",)
FLIPPED = (*NEWLY_FAILING, *NEWLY_PASSING)

PASSING_RESPONSE = "Call Dr. Lee"
FAILING_RESPONSE = "Call Dr. Lee and Mr. Smith"
HOSTILE_RESPONSE = "<script>alert('flipped')</script><b>Call Mr. Smith</b> & Dr. Lee"
"""The candidate's response to the first newly failing sample: markup a page must escape."""


@dataclass(frozen=True)
class Corpus:
    baseline: Path
    candidate: Path


def _outcome(trial: dict[str, Any], passed: bool, response: str) -> None:
    """Make a built trial pass or fail its excluding check, with ``response``."""
    contains, excludes = trial["grade"]["checks"]
    trial["grade"]["checks"] = [contains, {"label": excludes["label"], "passed": passed}
                                | ({} if passed else {"detail": "Found “Smith”"})]
    trial["response"] = response


def build(spec: Any, *, candidate: bool) -> dict[str, Any]:
    """A run document of ``spec`` with the flipped samples' outcomes of its side."""
    doc: dict[str, Any] = rb.build_run(spec)
    for trial in doc["trials"]:
        sample = trial["sample"]["id"]
        if sample in NEWLY_FAILING and candidate:
            _outcome(trial, False, HOSTILE_RESPONSE if sample == NEWLY_FAILING[0] else FAILING_RESPONSE)
        elif sample in NEWLY_PASSING and not candidate:
            _outcome(trial, False, FAILING_RESPONSE)
    return doc


def _write(doc: dict[str, Any], folder: Path, name: str) -> Path:
    encoded = rb._encode(doc)
    analysis = analyze_bytes(encoded, f"{name}.json")
    doc["summaries"] = [rb._runner_summary(f.to_summary()) for f in analysis.figures]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.json"
    path.write_bytes(rb._encode(doc))
    return path


def write_corpus(folder: Path) -> Corpus:
    """Write the baseline and candidate runs into ``folder``."""
    return Corpus(
        baseline=_write(build(BASE, candidate=False), folder, "mac-baseline"),
        candidate=_write(build(CANDIDATE, candidate=True), folder, "mac-candidate"),
    )


if __name__ == "__main__":
    written = write_corpus(Path(sys.argv[1]))
    print(written.baseline, written.candidate, sep="\n")
