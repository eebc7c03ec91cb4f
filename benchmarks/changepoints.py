"""Changes over a build history: the false-discovery rate and the power of the list, by simulation.

Each replication is one list as a site would make it: ``--series`` series of one figure over 5 OS builds,
25 samples each, of which ``--steps`` carry a step at a build drawn at random (builds 2 to 5) and the rest
are flat. A cell is one sample's figure on one build:

- latency: each sample its own typical median TTFT (log-normal, about 0.45 s with an SD of 30 % between
  samples) times 5 % noise a build (the spread of a median of 20 trials and of the build's run), and from the
  step on, every sample ``step`` slower;
- task success: each sample's pass rate over 20 trials, its pass probability from a Beta(8, 2) (about 80 %),
  and from the step on that probability lowered by ``step`` points (not below 0).

The list goes through ``fmbench.analysis.changepoints.changes_over_history`` at a 5 % false-discovery level.
A kept change point is true when its series has a step and it sits at the step's build. Any other is false,
of two kinds: noise (kept in a flat series: what the procedure controls, every test there being of a true
"no change") and misdated (kept in a series with a step, at another build: a real change put one build off,
or a second boundary around it). A list's false-discovery proportion is false / kept (0 when nothing is
kept); its mean over the replications is the false-discovery rate, given for noise alone and for both kinds.
Power is the share of planted steps found at their build.

    .venv/bin/python benchmarks/changepoints.py [--replications 200] [--series 10] [--steps 2] [--seed 37]
        [--null-only] [--json]
"""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

import numpy as np

from fmbench.analysis.changepoints import DEFAULT_LEVEL, Series, changes_over_history

SAMPLES = 25
BUILDS = ("26A5353q", "26A5378f", "26B5012a", "26B5013b", "26C5001a")
TRIALS = 20
LATENCY_STEPS = (0.0, 0.02, 0.05, 0.10)
RATE_STEPS = (0.0, 0.05, 0.10, 0.20)


def latency_history(rng: np.random.Generator, step_at: int | None, step: float) -> np.ndarray:
    level = np.exp(rng.normal(np.log(0.45), 0.3, SAMPLES))[:, None]
    values = level * np.exp(rng.normal(0.0, 0.05, (SAMPLES, len(BUILDS))))
    if step_at is not None:
        values[:, step_at:] *= 1 + step
    return values


def rate_history(rng: np.random.Generator, step_at: int | None, step: float) -> np.ndarray:
    probability = np.repeat(rng.beta(8.0, 2.0, SAMPLES)[:, None], len(BUILDS), axis=1)
    if step_at is not None:
        probability[:, step_at:] = np.maximum(probability[:, step_at:] - step, 0.0)
    return rng.binomial(TRIALS, probability) / TRIALS


def one_list(rng: np.random.Generator, kind: str, step: float, series: int, steps: int, tag: int) -> dict[str, int]:
    """One simulated list: how many change points it kept, how many of them were false, and the steps found."""
    planted: dict[str, int] = {}
    listed = []
    for i in range(series):
        name = f"list {tag} series {i}"
        step_at = int(rng.integers(1, len(BUILDS))) if i < steps and step > 0 else None
        if step_at is not None:
            planted[name] = step_at
        values = latency_history(rng, step_at, step) if kind == "latency" else rate_history(rng, step_at, step)
        listed.append(Series((name,), BUILDS, values, "median" if kind == "latency" else "mean"))
    history = changes_over_history(listed, level=DEFAULT_LEVEL)
    kept = history.change_points
    true = sum(1 for d in kept if planted.get(d.subject.key[0]) == BUILDS.index(d.subject.build))
    noise = sum(1 for d in kept if d.subject.key[0] not in planted)
    return {"kept": len(kept), "noise": noise, "false": len(kept) - true, "found": true, "planted": len(planted),
            "tests": len(history.decisions)}


def measure(replications: int, series: int, steps: int, seed: int = 37, *, null_only: bool = False) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    rows = []
    for kind, sizes in (("latency", LATENCY_STEPS), ("task success", RATE_STEPS)):
        for step in sizes[:1] if null_only else sizes:
            started = time.perf_counter()
            lists = [one_list(rng, kind, step, series, steps, r) for r in range(replications)]
            noise = [x["noise"] / x["kept"] if x["kept"] else 0.0 for x in lists]
            false = [x["false"] / x["kept"] if x["kept"] else 0.0 for x in lists]
            planted = sum(x["planted"] for x in lists)
            rows.append({
                "figure": kind,
                "step": step,
                "replications": replications,
                "false_discovery_rate": float(np.mean(noise)),
                "fdr_standard_error": float(np.std(noise, ddof=1) / np.sqrt(replications)),
                "false_or_misdated_rate": float(np.mean(false)),
                "lists_with_noise": sum(1 for x in lists if x["noise"]),
                "misdated": sum(x["false"] - x["noise"] for x in lists),
                "power": sum(x["found"] for x in lists) / planted if planted else None,
                "planted": planted,
                "tests_per_list": float(np.mean([x["tests"] for x in lists])),
                "seconds": time.perf_counter() - started,
            })
    return {"level": DEFAULT_LEVEL, "series": series, "steps": steps, "samples": SAMPLES, "builds": len(BUILDS),
            "seed": seed, "rows": rows}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replications", type=int, default=200, help="simulated lists a step size (default 200)")
    parser.add_argument("--series", type=int, default=10, help="series a list (default 10)")
    parser.add_argument("--steps", type=int, default=2, help="series of a list that carry a step (default 2)")
    parser.add_argument("--seed", type=int, default=37, help="the simulation's seed (default 37)")
    parser.add_argument("--null-only", action="store_true", help="only the lists without a step")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args()
    found = measure(args.replications, args.series, args.steps, args.seed, null_only=args.null_only)
    if args.json:
        print(json.dumps(found, indent=2))
        return
    print(f"{args.series} series a list ({args.steps} with a step unless the step is 0), {SAMPLES} samples x "
          f"{len(BUILDS)} builds, false-discovery level {found['level']:.0%}")
    print("| figure | step | lists | false-discovery rate (noise) | lists with noise kept | noise or misdated | "
          "misdated changes | power at the step's build | seconds |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for row in found["rows"]:
        size = f"{row['step']:+.0%}" if row["figure"] == "latency" else f"−{row['step'] * 100:.0f} points"
        power = "—" if row["power"] is None else f"{row['power']:.0%} of {row['planted']}"
        print(f"| {row['figure']} | {size if row['step'] else 'none'} | {row['replications']} | "
              f"{row['false_discovery_rate']:.3f} ± {row['fdr_standard_error']:.3f} | {row['lists_with_noise']} | "
              f"{row['false_or_misdated_rate']:.3f} | {row['misdated']} | {power} | {row['seconds']:.0f} |")


if __name__ == "__main__":
    main()
