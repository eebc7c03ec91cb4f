"""How much pairing by sample narrows a comparison's intervals: widths before and after, through the library.

Two runs of one device drawn from the same distributions: 25 samples of different difficulty (each its own pass
probability and its own typical time to first token), 20 trials each. Each pair of runs is compared twice with
the cluster bootstrap of ``fmbench.analysis.stats``: each side's samples resampled alone (unpaired, as before), and
the sample ids drawn once per resample for both sides (paired, what a comparison of sides that ran the same
samples now does). Widths are of the 95 % interval, averaged over ``--pairs`` independent pairs of runs.

    .venv/bin/python benchmarks/pairing.py [--pairs 20] [--json]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from typing import Any

from fmbench.analysis import stats

SAMPLES = 25
TRIALS = 20
Side = list[list[list[float]]]


def difficulty(rng: random.Random) -> tuple[list[float], list[float]]:
    """Each sample's pass probability and typical TTFT (seconds): what both runs draw from."""
    passing = [rng.betavariate(8.0, 2.0) for _ in range(SAMPLES)]  # about 80 % on average, SD about 12 points
    ttft = [rng.lognormvariate(-0.8, 0.04) for _ in range(SAMPLES)]  # about 0.45 s, SD about 4 %
    return passing, ttft


def run(rng: random.Random, passing: list[float], ttft: list[float]) -> tuple[Side, Side]:
    """One run: each sample's 0/1 outcomes and TTFTs (one run per side)."""
    outcomes = [[[1.0 if rng.random() < p else 0.0 for _ in range(TRIALS)] for p in passing]]
    latency = [[[t * rng.lognormvariate(0.0, 0.08) for _ in range(TRIALS)] for t in ttft]]  # trials: SD about 8 %
    return outcomes, latency


def _width(interval: stats.Interval | None) -> float:
    assert interval is not None
    return interval.high - interval.low


def measure(pairs: int, seed: int = 30) -> dict[str, Any]:
    rng = random.Random(seed)
    ids = [[f"sample-{i:03d}" for i in range(SAMPLES)]]
    widths: dict[str, list[float]] = {k: [] for k in ("rate_unpaired", "rate_paired", "ttft_unpaired", "ttft_paired")}
    started = time.perf_counter()
    for _ in range(pairs):
        passing, ttft = difficulty(rng)
        (a_pass, a_ttft), (b_pass, b_ttft) = run(rng, passing, ttft), run(rng, passing, ttft)
        widths["rate_unpaired"].append(_width(stats.cluster_bootstrap_mean_difference(
            a_pass, b_pass, method=stats.CLUSTER_RATE_METHOD)))
        paired = stats.cluster_bootstrap_mean_difference(a_pass, b_pass, method=stats.CLUSTER_RATE_METHOD,
                                                         samples=(ids, ids))
        assert paired is not None and paired.paired
        widths["rate_paired"].append(_width(paired))
        widths["ttft_unpaired"].append(_width(stats.cluster_bootstrap_quantile_difference(a_ttft, b_ttft, 0.5)))
        widths["ttft_paired"].append(_width(stats.cluster_bootstrap_quantile_difference(
            a_ttft, b_ttft, 0.5, samples=(ids, ids))))
    means = {k: statistics.fmean(v) for k, v in widths.items()}
    return {
        "pairs": pairs,
        "samples": SAMPLES,
        "trials": TRIALS,
        "confidence": stats.DEFAULT_CONFIDENCE,
        "task_success_width": {"unpaired": means["rate_unpaired"], "paired": means["rate_paired"]},
        "ttft_median_width_s": {"unpaired": means["ttft_unpaired"], "paired": means["ttft_paired"]},
        "paired_narrower_in": {
            "task_success": sum(p < u for p, u in zip(widths["rate_paired"], widths["rate_unpaired"], strict=True)),
            "ttft_median": sum(p < u for p, u in zip(widths["ttft_paired"], widths["ttft_unpaired"], strict=True)),
        },
        "seconds": time.perf_counter() - started,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=20, help="independent pairs of runs (default 20)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    found = measure(args.pairs)
    if args.json:
        print(json.dumps(found, indent=2))
        return
    rate, ttft = found["task_success_width"], found["ttft_median_width_s"]
    narrower = found["paired_narrower_in"]
    print(f"{found['pairs']} pairs of runs, {SAMPLES} samples x {TRIALS} trials, 95% intervals ({found['seconds']:.1f} s)")
    print(f"task success   unpaired {rate['unpaired']:.3f}  paired {rate['paired']:.3f}  "
          f"({rate['paired'] / rate['unpaired'] - 1:+.0%}; narrower in {narrower['task_success']} of {found['pairs']})")
    print(f"median TTFT    unpaired {ttft['unpaired']:.4f} s  paired {ttft['paired']:.4f} s  "
          f"({ttft['paired'] / ttft['unpaired'] - 1:+.0%}; narrower in {narrower['ttft_median']} of {found['pairs']})")


if __name__ == "__main__":
    main()
