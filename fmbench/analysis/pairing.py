"""Which samples both sides of a comparison share, and the sample draw they then take together.

Samples (the suite's prompts) differ in difficulty and latency far more than
the repetitions of one sample do. When both sides ran the same samples, the
cluster bootstrap of :mod:`fmbench.analysis.stats` draws the sample ids once
per resample for both sides (:func:`shared_draw`), so that shared difficulty
cancels in the difference instead of widening its interval; runs and trials
are still drawn per side. The sides share their samples when every run of
either side holds a value for exactly the same sample ids, each once
(:func:`pairings`); otherwise each side is resampled alone, as before.

The shared draw is seeded from a digest of the sorted sample ids alone, never
from a side: a side's paired resamples are then a function of its own values
and sample ids, kept (in memory and in the resample store) under a digest of
their own (:func:`paired_digest`) and reused by every comparison of a side
that ran the same samples.
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

Clusters = Sequence[Sequence[Sequence[float]]]
"""One side's values of one figure: its runs, each run's samples, each sample's trial values."""
SampleIds = Sequence[Sequence[str]]
"""One side's sample ids: per run, each sample's id, in the order of its :data:`Clusters`."""


@dataclass(frozen=True, slots=True)
class Pairing:
    """How one side's samples line up with the sample ids both sides share (see :func:`pairings`)."""

    shared: tuple[str, ...]
    """The sample ids both sides ran, sorted: the shared draw's seed and what its indices name."""
    positions: tuple[tuple[int, ...], ...]
    """Per run that holds a value (in order), where each shared id sits among the run's samples that hold one."""


def _held(side: Clusters, ids: SampleIds) -> list[list[str]]:
    """Per run that holds a value, the ids of its samples that hold one (the samples the bootstrap draws from)."""
    if len(ids) != len(side) or any(len(i) != len(run) for i, run in zip(ids, side, strict=True)):
        raise ValueError("a side's sample ids do not match its runs and samples")
    held = [[i for i, sample in zip(run_ids, run, strict=True) if len(sample)] for run_ids, run in zip(ids, side, strict=True)]
    return [run for run in held if run]


def pairings(
    baseline: Clusters, candidate: Clusters, baseline_ids: SampleIds, candidate_ids: SampleIds
) -> tuple[Pairing, Pairing] | None:
    """Each side's :class:`Pairing` when the sides share their sample ids: every run of either side holds a value
    for exactly the same samples, each once. ``None`` otherwise (a sample a run lacks, another suite): the sides
    are then resampled alone."""
    held_b, held_c = _held(baseline, baseline_ids), _held(candidate, candidate_ids)
    if not held_b or not held_c:
        return None
    shared = tuple(sorted(held_b[0]))
    if any(len(run) != len(set(run)) or tuple(sorted(run)) != shared for run in (*held_b, *held_c)):
        return None

    def pairing(held: list[list[str]]) -> Pairing:
        return Pairing(shared, tuple(tuple(run.index(s) for s in shared) for run in held))

    return pairing(held_b), pairing(held_c)


def _ids_digest(ids: tuple[str, ...]) -> bytes:
    h = hashlib.blake2b(digest_size=16, person=b"fmbench-samples")
    h.update(struct.pack("<I", len(ids)))
    for i in ids:
        raw = i.encode("utf-8", "surrogatepass")
        h.update(struct.pack("<I", len(raw)) + raw)
    return h.digest()


def paired_digest(side_digest: bytes, pairing: Pairing) -> bytes:
    """The digest a side's paired resamples are seeded (runs, trials) and kept by: the digest of its values
    (:func:`fmbench.analysis.stats._side_digest`), the shared ids and where each run holds them. Never the
    digest of an unpaired side's resamples."""
    h = hashlib.blake2b(digest_size=16, person=b"fmbench-paired")
    h.update(side_digest)
    h.update(_ids_digest(pairing.shared))
    for run in pairing.positions:
        h.update(struct.pack(f"<I{len(run)}I", len(run), *run))
    return h.digest()


def shared_draw(shared: tuple[str, ...], resamples: int) -> Any:
    """The sample draw both sides of a paired comparison take: ``(resamples, len(shared))`` indices into
    ``shared``, row ``i`` the samples resample ``i`` draws (with replacement), seeded from a digest of the sorted
    sample ids alone, so each side that shares them draws the same. Drawn afresh for each side: a side's resamples
    are kept by the owner's :class:`~fmbench.comparison.resample_store.Resamples`, not the draw."""
    # slow to import (numpy): only the resampling needs it
    import numpy as np

    rng = np.random.Generator(np.random.PCG64(int.from_bytes(_ids_digest(shared), "little")))
    return rng.integers(0, len(shared), size=(resamples, len(shared)))
