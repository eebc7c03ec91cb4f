"""Comparisons that say what they compare (publishing rules §5).

A comparison takes a baseline side and a candidate side (see
:mod:`fmbench.comparison.selection`), refuses what must never be compared, labels what
it compares from what differs, lists every differing condition and every
caveat, and reports per scenario: task success, completed prompt pass, mean
constraint score, median and p90 TTFT, median and p90 output tokens/s and
peak memory, each with its delta, relative delta, interval, the direction
that is better, and a verdict.

Choices this module makes, stated once:

- **Labels**, by precedence: the route differs → *Execution comparison*;
  else the hardware model differs → *Device comparison*; else the OS build
  differs → *OS comparison*; else both sides are PCC with the same reasoning
  level and fallback mode → *Longitudinal PCC comparison*; else something in
  the configuration, fixtures or commit differs → *Configuration
  comparison*; else *Repeat comparison*. What the label's row in the rules
  holds equal but differs anyway is a caveat.
- **Execution comparisons** compare quality figures; latency, throughput and
  memory are reported per side with no delta, interval or verdict ("not
  compared: PCC is a service benchmark": it includes the network and the
  server), so PCC and on-device speed never share one ranking.
- **Refused** (:class:`ComparisonRefused`): a run judged invalid on either
  side; the same run on both sides; a pooled side that mixes session modes
  (cold and warm are never pooled), routes, hardware models or OS builds;
  sides of different session modes (cold against warm) or different suites.
- **Token counts**: tokens/s between a side whose token counts are counted
  (session usage, system tokenizer) and one estimated from characters (or
  mixed) gets no verdict; output characters per second is compared in its
  place. A differing token count source is a listed difference.
- **PCC sides** take latency, throughput and memory from the PCC-executed
  trials only (quality counts every trial) and say how many fell back;
  differing or unrecorded network conditions (the sidecar's connection and
  location) are listed and marked.
- **Two run files** with no database are compared in an in-memory one
  (:func:`compare_files`).
- **Caveats** (compared, but marked): exploratory runs, different or unknown
  suite revisions, superseded revisions, different fixture corpora, OS
  generations that differ outside strict mode, variation inside a pooled side.
- **Strict OS mode** keeps only the workloads both sides ran and never the
  OS 27-only visual workload, and lists what it dropped.
- **Figures** are the compared entries of :data:`fmbench.analysis.figure_catalog.CATALOG`
  (the definitions of :mod:`fmbench.analysis.figures`), recomputed from the trials'
  stored columns (so a pooled side is one set of trials): task success =
  task-passed trials / (trials + measured failures); completed prompt pass =
  task-passed trials / trials; mean constraint score over graded trials;
  nearest-rank quantiles (median, p90) at each figure's own ``q``; peak memory
  is the maximum of the trials' peak resident memory.
- **Uncertainty** is in :mod:`fmbench.analysis.stats`. A verdict is ``better`` or
  ``worse`` only when the interval excludes zero and the change passes the
  practical threshold, read with the figure's stated better direction;
  ``within tolerance`` only when the whole interval lies inside the
  threshold; otherwise ``inconclusive`` (:mod:`fmbench.analysis.tolerance`). Where both
  sides ran the same samples, each figure's interval is paired by sample
  (:mod:`fmbench.analysis.pairing`); where they did not, it is not, and
  the interval, the workload and the comparison say so.
- **Many figures, one comparison**: a comparison tests every compared figure
  of the catalog (``CATALOG.compared()``) in every scenario, so at 95 % each,
  identical distributions would still show about one "change" in twenty. By
  default (``multiplicity="bonferroni"``) each interval is computed at
  ``1 − 0.05 / m`` for the ``m`` figures tested across the scenarios
  (``Comparison.tested_figures``, stated in every output), which keeps the
  chance of *any* noise verdict in the whole comparison below 5 %
  (family-wise); a compared figure added to the catalog makes ``m`` larger
  and so every other figure's interval wider. ``multiplicity="none"`` gives plain per-figure
  95 % intervals; the level used is stated in every output.
- **Smallest detectable change**: every figure with an interval states the change it would detect 80% of the
  time (:mod:`fmbench.analysis.detectable`); an inconclusive figure whose smallest detectable change is above the
  practical threshold says the runs were too few to tell, and which data (repetitions or samples) would do.
- **Samples whose outcome changed** (:mod:`fmbench.comparison.sample_changes`): each sample both sides attempted,
  by Fisher's exact test with Holm's correction over the samples tested, at the caller's confidence (family-wise
  over the samples, apart from the figures' Bonferroni level).
"""


from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import duckdb

from fmbench.analysis import detectable, stats
from fmbench.analysis import display as d
from fmbench.analysis import figure_catalog as fc
from fmbench.analysis import tolerance as tol
from fmbench.analysis.figures import token_counting
from fmbench.analysis.revisions import Registry, load_registry
from fmbench.comparison import rules
from fmbench.comparison.caches import Caches
from fmbench.comparison.load import FigureDef, Trials, figures, side_scenario_order, side_trials
from fmbench.comparison.results import Comparison, Multiplicity
from fmbench.comparison.rules import (
    ESTIMATED_TOKENS_NOTE,
    LABELS,
    NO_MEASURED_TRIAL,
    NOT_COMPARABLE_NOTE,
    Caveat,
    ComparisonRefused,
)
from fmbench.comparison.sample_changes import sample_changes
from fmbench.comparison.scenario_results import (
    DroppedScenario,
    FigureComparison,
    FigureVerdict,
    ScenarioComparison,
)
from fmbench.comparison.selection import AttemptRule, Side, SideSpec, select_side
from fmbench.errors import FmbenchError
from fmbench.ingest import ingest_file
from fmbench.runfile import vocabulary as vocab
from fmbench.runfile.user_files import is_regular_file
from fmbench.storage.db import apply_migration, connect, migrations, open_duckdb

__all__ = ["Comparison", "ComparisonRefused", "compare_files", "compare_runs", "compare_selected", "compare_sides",
           "sides_are_files"]


def _fallback_caveats(sides: Sequence[tuple[str, dict[str, Trials]]]) -> list[Caveat]:
    out = []
    for name, data in sides:
        fell_back = sum(t.fell_back for t in data.values())
        if fell_back:
            trials = sum(t.trials for t in data.values())
            out.append(
                Caveat(
                    "pcc-fallback",
                    f"{fell_back} of the {name}'s {trials} trial(s) fell back to the on-device model: its "
                    "latency, throughput and memory are those of the PCC-executed trials only; its quality "
                    "figures count every trial.",
                )
            )
    return out


_LIKE_TOKENS = {("counted", "counted"), ("estimated", "estimated"), (None, None)}
"""Token counting on both sides that makes tokens/s like for like (two legacy files record no source)."""


def _tokens_unlike(b: Trials, c: Trials) -> bool:
    """One side's token counts estimated (or mixed, or of an unrecorded source) and the other's counted:
    tokens/s is not like for like."""
    def counted(t: Trials) -> bool:
        return bool(t.token_sources) or any(t.samples(f) for f in figures() if f.tokens)

    if not counted(b) or not counted(c):
        return False  # a side without trials: nothing to compare either way
    return (token_counting(b.token_sources), token_counting(c.token_sources)) not in _LIKE_TOKENS


def _estimated_sides(b: Trials, c: Trials) -> str:
    parts = []
    for name, t in (("the baseline", b), ("the candidate", c)):
        kind = token_counting(t.token_sources)
        if kind == "estimated":
            parts.append(f"token counts were estimated from characters on {name}")
        elif kind == "mixed":
            parts.append(f"token counts were partly estimated from characters on {name}")
        elif kind is None:
            parts.append(f"the token count source is not recorded on {name}")
    return " and ".join(parts)


def _scenario_figures(b: Trials, c: Trials, speed_comparable: bool) -> tuple[FigureDef, ...]:
    """The figures a scenario compares: characters per second follow tokens/s where the token counts
    are not like for like."""
    return figures(for_tokens=speed_comparable and _tokens_unlike(b, c))


def _testable(f: FigureDef, b: Trials, c: Trials, speed_comparable: bool) -> bool:
    if f.statistic == "maximum" or (f.speed and not speed_comparable):
        return False
    if f.tokens and _tokens_unlike(b, c):
        return False
    if b.value(f) is None or c.value(f) is None:
        return False
    return min(len(b.samples(f)), len(c.samples(f))) >= stats.MIN_BOOTSTRAP_VALUES


def _figure(
    f: FigureDef,
    b: Trials,
    c: Trials,
    *,
    speed_comparable: bool,
    confidence: float,
    tolerance: tol.Tolerance = tol.DEFAULT_TOLERANCE,
    caches: Caches | None = None,
) -> FigureComparison:
    vb, vc = b.value(f), c.value(f)
    common: dict[str, Any] = {
        "key": f.key, "label": f.label, "unit": f.unit, "better": f.better, "baseline": vb, "candidate": vc,
        "baseline_absent": NO_MEASURED_TRIAL if b.present and not b.trials else d.NOT_RECORDED,
        "candidate_absent": NO_MEASURED_TRIAL if c.present and not c.trials else d.NOT_RECORDED,
    }
    if f.speed and not speed_comparable:
        return FigureComparison(**common, delta=None, relative_delta=None, interval=None,
                                verdict="not comparable", note=NOT_COMPARABLE_NOTE)
    # A side that attempted the scenario but whose every request failed: no trial to take a figure from.
    unmeasured_b = vb is None and b.present and not b.trials
    unmeasured_c = vc is None and c.present and not c.trials
    if unmeasured_b or unmeasured_c:
        side = "either side" if unmeasured_b and unmeasured_c else ("the baseline" if unmeasured_b else "the candidate")
        return FigureComparison(**common, delta=None, relative_delta=None, interval=None,
                                verdict="no measured trial", note=f"{NO_MEASURED_TRIAL} on {side}")
    if f.tokens and _tokens_unlike(b, c) and vb is not None and vc is not None:
        delta = vc - vb
        return FigureComparison(**common, delta=delta, relative_delta=delta / abs(vb) if vb else None,
                                interval=None, verdict="not comparable",
                                note=ESTIMATED_TOKENS_NOTE.format(why=_estimated_sides(b, c)))
    if vb is None or vc is None:
        side = "either side" if vb is None and vc is None else ("the baseline" if vb is None else "the candidate")
        return FigureComparison(**common, delta=None, relative_delta=None, interval=None,
                                verdict="not recorded", note=f"not recorded on {side}")
    delta = vc - vb
    relative = delta / abs(vb) if vb else None
    interval: stats.Interval | None = None
    kept = None if caches is None else caches.resamples
    # Sides that ran the same samples are paired by sample; the interval is on the change on those samples.
    samples = (b.sample_ids(f), c.sample_ids(f))
    if f.statistic in ("rate", "mean"):
        interval = stats.cluster_bootstrap_mean_difference(
            b.clustered(f), c.clustered(f), confidence=confidence,
            method=stats.CLUSTER_RATE_METHOD if f.statistic == "rate" else stats.CLUSTER_MEAN_METHOD, kept=kept,
            samples=samples, on_shared_samples=True,
        )
    elif f.q is not None:
        # The source's other compared quantiles are resampled with it (one draw gives the median and the p90).
        interval = stats.cluster_bootstrap_quantile_difference(
            b.clustered(f), c.clustered(f), f.q, confidence=confidence, together=fc.CATALOG.quantiles(f.source),
            kept=kept, samples=samples, on_shared_samples=True,
        )
    if f.statistic == "maximum":
        return FigureComparison(**common, delta=delta, relative_delta=relative, interval=None,
                                verdict="not tested", note="a maximum has no interval: the change is shown, not tested")
    if interval is None:
        return FigureComparison(**common, delta=delta, relative_delta=relative, interval=None,
                                verdict="too few trials",
                                note=f"fewer than {stats.MIN_BOOTSTRAP_VALUES} values on a side: no interval")
    verdict: FigureVerdict = tol.judge(interval, delta, relative, f.unit, f.better, tolerance, baseline=vb)
    note = tolerance.describe(f.unit) if verdict == "within tolerance" else None
    return FigureComparison(**common, delta=delta, relative_delta=relative, interval=interval, verdict=verdict,
                            note=note)


def _repetitions(side: list[list[list[float]]]) -> int:
    """A side's trials of one sample: the most common count of trials a sample holds in a run."""
    counts = [len(sample) for run in side for sample in run if sample]
    return max(set(counts), key=lambda n: (counts.count(n), n)) if counts else 0


def _with_detectability(compared: FigureComparison, f: FigureDef, b: Trials, c: Trials,
                        tolerance: tol.Tolerance) -> FigureComparison:
    """The figure with the "too few to tell" sentence its verdict carries, if any (:mod:`fmbench.analysis.detectable`)."""
    if compared.verdict != "inconclusive" or compared.interval is None:
        return compared
    cb, cc = b.clustered(f), c.clustered(f)
    ids = (b.sample_ids(f), c.sample_ids(f))
    at = None
    if f.statistic not in ("rate", "mean") and compared.baseline is not None and compared.candidate is not None:
        at = (compared.baseline, compared.candidate)
    share = detectable.variance_split(cb, cc, samples=ids, paired=compared.interval.paired, at=at)
    distinct = (len({i for run in ids[0] for i in run}), len({i for run in ids[1] for i in run}))
    sentence = detectable.too_few_to_tell(
        compared.verdict, compared.smallest_detectable_change, compared.baseline, compared.unit, tolerance,
        runs=(b.run_count, c.run_count), samples=distinct, repetitions=(_repetitions(cb), _repetitions(cc)),
        noise_share=share,
    )
    return compared if sentence is None else replace(compared, too_few_to_tell=sentence)


def compare_selected(
    con: duckdb.DuckDBPyConnection,
    baseline: Side,
    candidate: Side,
    *,
    strict_os: bool = False,
    confidence: float = stats.DEFAULT_CONFIDENCE,
    multiplicity: Multiplicity = "bonferroni",
    tolerance: tol.Tolerance = tol.DEFAULT_TOLERANCE,
    caches: Caches | None = None,
) -> Comparison:
    """Compare two resolved sides (see :func:`fmbench.comparison.selection.select_side`).

    ``caches``: the caller's (:class:`fmbench.comparison.caches.Caches`): the sides resampled already, and in a static build
    the comparisons the previous build made from the same runs, taken from there instead of worked out again.
    ``None``: everything is worked out.
    """
    cache = None if caches is None else caches.comparisons
    if cache is None:
        return _compare_selected(con, baseline, candidate, strict_os=strict_os, confidence=confidence,
                                 multiplicity=multiplicity, tolerance=tolerance, caches=caches)
    key = cache.key(baseline, candidate, strict_os=strict_os, confidence=confidence, multiplicity=multiplicity,
                    tolerance=tolerance)
    found = None if key is None else cache.get(key, baseline, candidate)
    if found is not None:
        return found
    made = _compare_selected(con, baseline, candidate, strict_os=strict_os, confidence=confidence,
                             multiplicity=multiplicity, tolerance=tolerance, caches=caches)
    if key is None:
        return made
    cache.put(key, made)
    # What the cache gives back, as it will next time: the same value, and the same stored JSON wherever the
    # build keeps a comparison (a regression step) whether it was worked out now or taken from the cache.
    return cache.get(key, baseline, candidate, made=True) or made


def _compare_selected(
    con: duckdb.DuckDBPyConnection,
    baseline: Side,
    candidate: Side,
    *,
    strict_os: bool,
    confidence: float,
    multiplicity: Multiplicity,
    tolerance: tol.Tolerance,
    caches: Caches | None,
) -> Comparison:
    """:func:`compare_selected` worked out: the refusals, the label, the caveats, each kept scenario's figures at
    the confidence the multiplicity rule gives them, and the samples whose outcome changed."""
    _refuse_uncomparable(baseline, candidate)
    differences, differing = rules.differences(baseline, candidate)
    rules.refuse_unlike_configuration(baseline, candidate)
    kind = rules.kind(differing, baseline, candidate)
    speed_comparable = kind != "execution"
    caveats = rules.caveats(kind, differing, baseline, candidate, strict_os)

    data_b, titles_b, listed_b = side_trials(con, baseline, caches)
    data_c, titles_c, listed_c = side_trials(con, candidate, caches)
    caveats += _fallback_caveats((("baseline", data_b), ("candidate", data_c)))
    # The newest run's scenario order (its file's summaries order), then what it lacks.
    order = list(dict.fromkeys([*side_scenario_order((baseline, candidate), listed_b + listed_c), *titles_b, *titles_c]))
    titles = {**titles_c, **titles_b}
    kept, dropped = _kept_scenarios(order, data_b, data_c, titles, strict_os)
    tested = sum(
        _testable(f, data_b.get(sid, Trials()), data_c.get(sid, Trials()), speed_comparable)
        for sid in kept
        for f in _scenario_figures(data_b.get(sid, Trials()), data_c.get(sid, Trials()), speed_comparable)
    )
    figure_confidence = confidence
    if multiplicity == "bonferroni" and tested > 1:
        figure_confidence = 1 - (1 - confidence) / tested
    scenarios = [
        _compare_scenario(sid, titles[sid], data_b.get(sid, Trials()), data_c.get(sid, Trials()),
                          speed_comparable=speed_comparable, confidence=figure_confidence, tolerance=tolerance,
                          caches=caches)
        for sid in kept
    ]
    changed = sample_changes(con, baseline, candidate, [(s.scenario_id, s.title) for s in scenarios], confidence)
    return Comparison(
        kind=kind,
        label=LABELS[kind],
        title=rules.title(kind, differences, baseline),
        rule=baseline.rule,
        baseline=baseline,
        candidate=candidate,
        differences=tuple(differences),
        expected_differences=tuple(rules.expected_differences(baseline, candidate)),
        caveats=tuple(caveats),
        scenarios=tuple(scenarios),
        dropped=tuple(dropped),
        strict_os=strict_os,
        speed_comparable=speed_comparable,
        confidence=confidence,
        figure_confidence=figure_confidence,
        multiplicity=multiplicity,
        tested_figures=tested,
        tolerance=tolerance,
        sample_changes=changed,
    )


def _refuse_uncomparable(baseline: Side, candidate: Side) -> None:
    """Raise :class:`ComparisonRefused` for an invalid run or a mixed pool on either side, or a run on both sides."""
    if baseline.rule != candidate.rule:
        raise ValueError("both sides of a comparison use one attempt rule")
    for name, side in (("baseline", baseline), ("candidate", candidate)):
        rules.refuse_invalid(name, side)
        rules.refuse_mixed_pool(name, side)
    shared = set(baseline.run_ids) & set(candidate.run_ids)
    if shared:
        raise ComparisonRefused(
            "same-runs", f"run(s) {', '.join(sorted(shared))} would be on both sides; a run is not compared with itself"
        )


def _kept_scenarios(
    order: list[str],
    data_b: dict[str, Trials],
    data_c: dict[str, Trials],
    titles: dict[str, tuple[str, str | None]],
    strict_os: bool,
) -> tuple[list[str], list[DroppedScenario]]:
    """The scenarios compared, in ``order``, and those strict OS mode drops (OS 27-only, or not run on a side)."""
    dropped: list[DroppedScenario] = []
    kept: list[str] = []
    for sid in order:
        b, c = data_b.get(sid, Trials()), data_c.get(sid, Trials())
        title = titles[sid][0]
        if strict_os and sid in vocab.OS27_ONLY_SCENARIOS:
            dropped.append(DroppedScenario(sid, title, "runs on OS 27 only (strict OS 26 vs OS 27 mode)"))
        elif strict_os and not (b.present and c.present):
            missing = "the baseline" if not b.present else "the candidate"
            dropped.append(DroppedScenario(sid, title, f"not run on {missing} (strict mode keeps shared workloads)"))
        else:
            kept.append(sid)
    return kept, dropped


def _compare_scenario(
    sid: str,
    title: tuple[str, str | None],
    b: Trials,
    c: Trials,
    *,
    speed_comparable: bool,
    confidence: float,
    tolerance: tol.Tolerance,
    caches: Caches | None,
) -> ScenarioComparison:
    """One scenario's figures compared at ``confidence`` (each with its "too few to tell" sentence, if any), and
    a note when a side did not run it."""
    note = None
    if not b.present or not c.present:
        note = f"not run on {'the baseline' if not b.present else 'the candidate'}"
    figures = tuple(
        _with_detectability(
            _figure(f, b, c, speed_comparable=speed_comparable, confidence=confidence, tolerance=tolerance,
                    caches=caches),
            f, b, c, tolerance,
        )
        for f in _scenario_figures(b, c, speed_comparable)
    )
    return ScenarioComparison(sid, title[0], title[1], b.trials, b.attempts, c.trials, c.attempts, figures, note)


def compare_sides(
    con: duckdb.DuckDBPyConnection,
    baseline: str | SideSpec,
    candidate: str | SideSpec,
    *,
    rule: AttemptRule = "latest",
    strict_os: bool = False,
    confidence: float = stats.DEFAULT_CONFIDENCE,
    multiplicity: Multiplicity = "bonferroni",
    tolerance: tol.Tolerance = tol.DEFAULT_TOLERANCE,
    caches: Caches | None = None,
) -> Comparison:
    """Compare two sides, each a run id, a run file or a filter expression, on an open database."""
    b = select_side(con, baseline, rule)
    c = select_side(con, candidate, rule)
    return compare_selected(con, b, c, strict_os=strict_os, confidence=confidence, multiplicity=multiplicity,
                            tolerance=tolerance, caches=caches)


def compare_runs(
    baseline: str,
    candidate: str,
    db: str | os.PathLike[str] | None = None,
    *,
    rule: AttemptRule = "latest",
    strict_os: bool = False,
    confidence: float = stats.DEFAULT_CONFIDENCE,
    multiplicity: Multiplicity = "bonferroni",
    registry: Registry | None = None,
    tolerance: tol.Tolerance = tol.DEFAULT_TOLERANCE,
) -> Comparison:
    """Open the database read-only and compare (what ``fmbench compare`` calls).

    Two run files and no database given: the files are read into an in-memory database (see
    :func:`compare_files`), so no database is needed. ``tolerance`` is the practical threshold (a
    project's ``[publishing.practical_change]``). A database's sides are resampled once: what a build, a
    server or an earlier comparison stored beside it (:mod:`fmbench.comparison.resample_store`) is read, not drawn again,
    with caches of this comparison's own (:meth:`fmbench.comparison.caches.Caches.beside`).
    """
    if db is None and sides_are_files(baseline, candidate):
        return compare_files(baseline, candidate, registry=registry, rule=rule, strict_os=strict_os,
                             confidence=confidence, multiplicity=multiplicity, tolerance=tolerance)
    with connect(db, read_only=True) as con:
        return compare_sides(
            con, baseline, candidate, rule=rule, strict_os=strict_os, confidence=confidence,
            multiplicity=multiplicity, tolerance=tolerance, caches=Caches.beside(db),
        )


def sides_are_files(baseline: str, candidate: str) -> bool:
    """Both sides name existing run files."""
    return all(is_regular_file(x.strip()) for x in (baseline, candidate) if x.strip()) and bool(
        baseline.strip() and candidate.strip()
    )


def compare_files(
    baseline: str,
    candidate: str,
    *,
    registry: Registry | None = None,
    rule: AttemptRule = "latest",
    strict_os: bool = False,
    confidence: float = stats.DEFAULT_CONFIDENCE,
    multiplicity: Multiplicity = "bonferroni",
    tolerance: tol.Tolerance = tol.DEFAULT_TOLERANCE,
) -> Comparison:
    """Compare two run files with no database: each is read, judged and stored (with its sidecar) in an
    in-memory DuckDB that is gone when the comparison is made. A file that cannot be read is an error
    naming it."""

    registry = registry or load_registry()
    con = open_duckdb()
    try:
        for m in migrations():
            apply_migration(con, m)
        for text in dict.fromkeys((baseline.strip(), candidate.strip())):
            outcome = ingest_file(con, Path(text), registry=registry)
            if outcome.status == "error":
                raise FmbenchError(outcome.message or f"{Path(text).name}: cannot be read")
        return compare_sides(con, baseline, candidate, rule=rule, strict_os=strict_os, confidence=confidence,
                             multiplicity=multiplicity, tolerance=tolerance)
    finally:
        con.close()
