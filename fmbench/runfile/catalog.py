"""How many samples each workload of the benchmark's catalog holds.

Read from the benchmark's scenario catalogs (FoundationModelsBench,
``FoundationModelsBenchScenarioCatalog``): each practical workload expands
five base prompts into five prompt variants (25 samples); the visual workload
does the same over one image; the agentic workload has 25 fixed samples; each
guardrail workload expands five base prompts into five variants (25); the
synthetic-throughput and context-limit workloads are one prompt each.

A run that measured fewer samples of a workload than its catalog holds did
not run the full sample set (publishing rules §4). A workload not listed here
has no fixed catalog and is not judged by its sample count.
"""

from __future__ import annotations

CATALOG_SAMPLE_COUNTS: dict[str, int] = {
    "task-capture": 25,
    "workout-plan": 25,
    "journal-summary": 25,
    "habit-classification": 25,
    "grounded-explanation": 25,
    "exercise-substitution": 25,
    "document-question-answering": 25,
    "citation-extraction": 25,
    "creative-writing": 25,
    "visual-recommendation": 25,
    "personal-organizer": 25,
    "guardrail-expected-response": 25,
    "guardrail-expected-protection": 25,
    "synthetic-throughput": 1,
    "context-limit": 1,
}


def catalog_sample_count(scenario_id: str) -> int | None:
    """The number of samples the catalog holds for a workload; ``None`` when the catalog does not fix it."""
    return CATALOG_SAMPLE_COUNTS.get(scenario_id)
