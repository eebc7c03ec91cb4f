"""Are a comparison's intervals, smallest detectable changes and advice what they claim? A coverage study.

Simulated pairs of runs with a known change, compared through the library (``fmbench.analysis.stats`` for the
intervals, ``fmbench.analysis.detectable`` for the smallest detectable change and the advice), at 95 %:

- **Samples** differ (each its own pass probability, typical TTFT and typical tokens/s), and each sample's trials
  scatter around its own (``SAMPLES`` samples of ``TRIALS`` trials a side, one run a side).
- **Paired**: both sides ran the same samples (the suite's), so the truth is the change on those samples: the
  mixture of their trial distributions, shifted. **Unpaired**: each side ran samples of its own, drawn from the
  same population, so the truth is the population's change.
- Task success shifts by ``RATE_SHIFT`` points; TTFT by ``+SHIFT`` (relative) and tokens/s by ``−SHIFT``.

It reports, per figure and pairing: the **coverage** (share of intervals that hold the true change), the **mean
width** against the **empirical spread** (``2 × 1.96 ×`` the standard deviation of the estimate around the truth,
the width a calibrated interval has), the **power at the stated smallest detectable change** (a second set of
pairs whose true change is the mean smallest detectable change the first set stated: the share detected, beyond
zero in the right direction), and whether **following the advice** of a "too few to tell" narrows the smallest
detectable change to the practical threshold as promised (a design of few repetitions, where it names
repetitions, and one whose samples differ much, where it names samples).

    .venv/bin/python benchmarks/coverage.py [--reps 400] [--power-reps 300] [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Callable
from statistics import NormalDist
from typing import Any

import numpy as np

from fmbench.analysis import detectable, stats
from fmbench.analysis.tolerance import DEFAULT_TOLERANCE

SAMPLES = 25
TRIALS = 20
CONFIDENCE = 0.95
RATE_SHIFT = 0.03
SHIFT = 0.04
TTFT = (math.log(0.45), 0.15, 0.10)  # log-median, sample spread, trial spread (log scale)
TPS = (40.0, 3.0, 2.0)  # mean, sample spread, trial spread (tokens/s)
FIGURES = ("task_success", "ttft_median", "ttft_p90", "tps_median", "tps_p90")
Side = list[list[list[float]]]


def _phi(x: Any) -> Any:
    return 0.5 * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))


def _mixture_quantile(cdf: Callable[[float], float], q: float, lo: float, hi: float) -> float:
    """The ``q`` quantile of a continuous distribution function, by bisection."""
    for _ in range(60):
        mid = (lo + hi) / 2
        if cdf(mid) < q:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


class Design:
    """One design of a simulated comparison: its samples, trials and how much the samples differ."""

    def __init__(self, samples: int = SAMPLES, trials: int = TRIALS, ttft: tuple[float, float, float] = TTFT,
                 rate_spread: float = 0.6) -> None:
        self.samples, self.trials, self.ttft, self.rate_spread = samples, trials, ttft, rate_spread

    def sample_effects(self, rng: np.random.Generator) -> dict[str, Any]:
        middle = 0.5 - self.rate_spread / 2
        return {
            "pass": middle + self.rate_spread * rng.beta(2.0, 2.0, self.samples),
            "ttft": np.exp(self.ttft[0] + self.ttft[1] * rng.standard_normal(self.samples)),
            "tps": TPS[0] + TPS[1] * rng.standard_normal(self.samples),
        }

    def side(self, rng: np.random.Generator, effects: dict[str, Any], rate_shift: float, ttft_factor: float,
             tps_factor: float) -> dict[str, Side]:
        shape = (self.samples, self.trials)
        passed = (rng.random(shape) < (effects["pass"] + rate_shift)[:, None]).astype(float)
        ttft = effects["ttft"][:, None] * np.exp(self.ttft[2] * rng.standard_normal(shape)) * ttft_factor
        tps = (effects["tps"][:, None] + TPS[2] * rng.standard_normal(shape)) * tps_factor
        return {"task_success": [passed.tolist()], "ttft": [ttft.tolist()], "tps": [tps.tolist()]}

    def truth_quantiles(self, effects: dict[str, Any] | None) -> dict[str, float]:
        """The baseline's true quantiles: of the mixture of ``effects``' samples (paired), else of the population."""
        out: dict[str, float] = {}
        z = NormalDist()
        for q, name in ((0.5, "median"), (0.9, "p90")):
            if effects is None:
                spread = math.hypot(self.ttft[1], self.ttft[2])
                out[f"ttft_{name}"] = math.exp(self.ttft[0] + spread * z.inv_cdf(q))
                out[f"tps_{name}"] = TPS[0] + math.hypot(TPS[1], TPS[2]) * z.inv_cdf(q)
                continue
            logs, means = np.log(effects["ttft"]), effects["tps"]
            out[f"ttft_{name}"] = _mixture_quantile(
                lambda x, logs=logs: float(np.mean(_phi((math.log(x) - logs) / self.ttft[2]))), q, 0.01, 20.0)
            out[f"tps_{name}"] = _mixture_quantile(
                lambda x, means=means: float(np.mean(_phi((x - means) / TPS[2]))), q, 0.0, 200.0)
        return out


def one_pair(design: Design, rng: np.random.Generator, paired: bool, rate_shift: float, ttft_shift: float,
             tps_shift: float, only: tuple[str, ...] = FIGURES) -> dict[str, dict[str, float]]:
    """One simulated comparison: per figure, the estimate, the truth, the interval and its smallest detectable
    change (as a share of the baseline's truth for TTFT and tokens/s), and the advice's inputs."""
    effects_b = design.sample_effects(rng)
    effects_c = effects_b if paired else design.sample_effects(rng)
    base = design.side(rng, effects_b, 0.0, 1.0, 1.0)
    cand = design.side(rng, effects_c, rate_shift, 1.0 + ttft_shift, 1.0 - tps_shift)
    ids_b = [[f"s{i:03d}" for i in range(design.samples)]]
    ids_c = ids_b if paired else [[f"t{i:03d}" for i in range(design.samples)]]
    truth_q = design.truth_quantiles(effects_b if paired else None)
    out: dict[str, dict[str, float]] = {}
    for key in only:
        if key == "task_success":
            interval = stats.cluster_bootstrap_mean_difference(base[key], cand[key], confidence=CONFIDENCE,
                                                               samples=(ids_b, ids_c), on_shared_samples=True)
            est = float(np.mean(cand[key]) - np.mean(base[key]))
            truth, scale, at = rate_shift, 1.0, None
        else:
            source, name = key.split("_")
            q = 0.5 if name == "median" else 0.9
            interval = stats.cluster_bootstrap_quantile_difference(
                base[source], cand[source], q, confidence=CONFIDENCE, together=(0.5, 0.9), samples=(ids_b, ids_c),
                on_shared_samples=True)
            vb = stats.nearest_rank(sorted(np.ravel(base[source]).tolist()), q)
            vc = stats.nearest_rank(sorted(np.ravel(cand[source]).tolist()), q)
            est, scale, at = vc - vb, truth_q[key], (vb, vc)
            truth = truth_q[key] * (ttft_shift if source == "ttft" else -tps_shift)
        assert interval is not None
        sdc = detectable.smallest_detectable_change(interval)
        assert sdc is not None
        pair = ("task_success" if key == "task_success" else key.split("_")[0])
        share = detectable.variance_split(base[pair], cand[pair], samples=(ids_b, ids_c), paired=interval.paired,
                                          at=at)
        out[key] = {"estimate": est, "truth": truth, "low": interval.low, "high": interval.high,
                    "scale": scale, "sdc": sdc / scale, "share": -1.0 if share is None else share}
    return out


def _summary(rows: list[dict[str, float]]) -> dict[str, float]:
    errors = np.array([r["estimate"] - r["truth"] for r in rows])
    widths = np.array([r["high"] - r["low"] for r in rows])
    covered = np.mean([r["low"] <= r["truth"] <= r["high"] for r in rows])
    spread = 2 * NormalDist().inv_cdf(1 - (1 - CONFIDENCE) / 2) * float(np.std(errors, ddof=1))
    return {"coverage": float(covered), "mean_width": float(widths.mean()), "empirical_spread": spread,
            "width_ratio": float(widths.mean() / spread), "mean_sdc": float(np.mean([r["sdc"] for r in rows]))}


def coverage(reps: int, seed: int) -> dict[str, dict[str, dict[str, float]]]:
    out: dict[str, dict[str, dict[str, float]]] = {}
    for paired in (True, False):
        rng = np.random.default_rng(seed + paired)
        rows: dict[str, list[dict[str, float]]] = {k: [] for k in FIGURES}
        for _ in range(reps):
            for key, row in one_pair(Design(), rng, paired, RATE_SHIFT, SHIFT, SHIFT).items():
                rows[key].append(row)
        out["paired" if paired else "unpaired"] = {k: _summary(v) for k, v in rows.items()}
    return out


def power(reps: int, seed: int, stated: dict[str, dict[str, dict[str, float]]]) -> dict[str, dict[str, float]]:
    """Pairs whose true change is the mean smallest detectable change the coverage pairs stated: how often found."""
    out: dict[str, dict[str, float]] = {}
    for mode, figures in stated.items():
        out[mode] = {}
        for key in FIGURES:
            size = figures[key]["mean_sdc"]
            rng = np.random.default_rng(seed + 7 + (mode == "paired"))
            rate, ttft, tps = (size, 0.0, 0.0) if key == "task_success" else (
                (0.0, size, 0.0) if key.startswith("ttft") else (0.0, 0.0, size))
            found = 0
            for _ in range(reps):
                row = one_pair(Design(), rng, mode == "paired", rate, ttft, tps, only=(key,))[key]
                # A true rise of TTFT is a rise of the difference; a true fall of tokens/s a fall.
                found += row["high"] < 0 if key.startswith("tps") else row["low"] > 0
            out[mode][key] = found / reps
    return out


def _advice_case(name: str, design: Design, key: str, paired: bool, reps: int, seed: int) -> dict[str, Any]:
    """The advice a design gets for ``key``, and the smallest detectable change once it is followed."""
    threshold = DEFAULT_TOLERANCE.for_unit("rate" if key == "task_success" else "seconds")[0]
    rng = np.random.default_rng(seed)
    rows = [one_pair(design, rng, paired, 0.0, 0.0, 0.0, only=(key,))[key] for _ in range(reps)]
    sdc = float(np.mean([r["sdc"] for r in rows]))
    share = float(np.mean([r["share"] for r in rows]))
    advice = detectable.advise((sdc / threshold) ** 2, share)
    if advice.repetitions is not None:
        followed = Design(design.samples, math.ceil(design.trials * advice.repetitions), design.ttft,
                          design.rate_spread)
        said = f"{followed.trials} trials of each sample (now {design.trials})"
    else:
        followed = Design(math.ceil(design.samples * advice.samples), design.trials, design.ttft, design.rate_spread)
        said = f"{followed.samples} samples (now {design.samples})"
    rng = np.random.default_rng(seed + 1)
    after = float(np.mean([one_pair(followed, rng, paired, 0.0, 0.0, 0.0, only=(key,))[key]["sdc"]
                           for _ in range(reps)]))
    return {"case": name, "figure": key, "paired": paired, "threshold": threshold, "sdc_before": sdc,
            "noise_share": share, "lever": advice.lever, "advice": said, "sdc_after": after,
            "after_over_threshold": after / threshold}


def advice(reps: int, seed: int) -> list[dict[str, Any]]:
    return [
        # Samples nearly alike, trials noisy and few: repetitions reach the threshold.
        _advice_case("trial noise", Design(trials=4, ttft=(math.log(0.45), 0.02, 0.30)), "ttft_median", True,
                     reps, seed),
        # Samples far apart, on unpaired sides: only more samples narrow it.
        _advice_case("sample differences", Design(samples=10, trials=20, rate_spread=0.9), "task_success", False,
                     reps, seed + 3),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=400, help="simulated pairs per pairing (coverage)")
    parser.add_argument("--power-reps", type=int, default=300, help="simulated pairs per figure (power)")
    parser.add_argument("--advice-reps", type=int, default=100, help="simulated pairs per advice case")
    parser.add_argument("--seed", type=int, default=37)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    started = time.perf_counter()
    found = coverage(args.reps, args.seed)
    powers = power(args.power_reps, args.seed, found)
    advised = advice(args.advice_reps, args.seed)
    report = {"reps": args.reps, "power_reps": args.power_reps, "samples": SAMPLES, "trials": TRIALS,
              "confidence": CONFIDENCE, "coverage": found, "power": powers, "advice": advised,
              "seconds": round(time.perf_counter() - started, 1)}
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"{args.reps} pairs per pairing, {SAMPLES} samples x {TRIALS} trials a side, {CONFIDENCE:.0%} intervals")
    print("| pairing | figure | coverage | mean width / empirical spread | stated smallest detectable | power at it |")
    print("| --- | --- | --- | --- | --- | --- |")
    for mode, figures in found.items():
        for key, row in figures.items():
            unit = "pp" if key == "task_success" else "% of baseline"
            print(f"| {mode} | {key} | {row['coverage']:.1%} | {row['width_ratio']:.3f} | "
                  f"{row['mean_sdc'] * 100:.2f} {unit} | {powers[mode][key]:.1%} |")
    for a in advised:
        print(f"advice, {a['case']} ({a['figure']}, {'paired' if a['paired'] else 'unpaired'}): smallest detectable "
              f"{a['sdc_before']:.4f} against a threshold of {a['threshold']:.2f}, trial noise "
              f"{a['noise_share']:.0%} of the variance; {a['lever']}: {a['advice']}; after: {a['sdc_after']:.4f} "
              f"({a['after_over_threshold']:.2f} x the threshold)")
    print(f"{report['seconds']} s")


if __name__ == "__main__":
    main()
