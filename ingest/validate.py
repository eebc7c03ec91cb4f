"""Check run files without a database: can they be read, and what would they be judged."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from fmbench.analysis.display import terminal_value
from fmbench.analysis.revisions import Registry, load_registry
from fmbench.analysis.run import RunAnalysis, analyze_file
from fmbench.errors import AnnotationError, Problem, RunFileError
from fmbench.ingest import collect_run_files
from fmbench.runfile.reader import DEFAULT_MAX_BYTES, DEFAULT_MAX_TRIALS


@dataclass
class FileValidation:
    file: str
    generation: str | None = None
    problems: list[Problem] = field(default_factory=list)
    more_problems: int = 0
    """Problems found beyond those listed (the reader lists at most a few hundred)."""
    analysis: RunAnalysis | None = None

    @property
    def readable(self) -> bool:
        return self.analysis is not None

    @property
    def sidecar_problems(self) -> tuple[str, ...]:
        """What its sidecar has to say: it cannot be read (the run is judged without it), or a key is unknown."""
        a = self.analysis
        return a.annotations.problems if a is not None and a.annotations is not None else ()

    @property
    def sidecar_unreadable(self) -> bool:
        a = self.analysis
        return a is not None and a.annotations is not None and a.annotations.unreadable

    def to_json(self) -> dict[str, Any]:
        a = self.analysis
        return {
            "file": self.file,
            "readable": self.readable,
            "generation": self.generation,
            "errors": [{"where": p.where, "message": p.message} for p in self.problems],
            "sidecarProblems": list(self.sidecar_problems),
            "moreErrors": self.more_problems,
            "verdict": a.verdict.level if a else None,
            "reasons": [{"level": r.level, "code": r.code, "message": r.message} for r in a.verdict.reasons]
            if a
            else [],
            "summaryMismatches": [
                {"scenario": m.scenario_id, "field": m.field, "stored": m.stored, "recomputed": m.recomputed}
                for m in a.mismatches
            ]
            if a
            else [],
            "flags": [{"where": p.where, "message": p.message} for p in a.flags] if a else [],
            "scoringRules": a.scoring.explained_by.name if a and a.scoring and a.scoring.explained_by else None,
            "scoringRulesStatement": a.scoring.statement if a and a.scoring else None,
            "simulator": a.simulator.is_simulator if a and a.simulator else None,
            "simulatorEvidence": a.simulator.evidence if a and a.simulator else None,
            "fixtureFingerprint": a.fingerprint if a else None,
            "revision": a.revision.revision_id if a else None,
            "revisionStatus": a.revision.status if a else None,
        }

    def describe(self) -> str:
        t = terminal_value  # a value from the file on the line it belongs to
        name = t(Path(self.file).name)
        if not self.readable:
            lines = [f"{name}: unreadable"]
            lines += [f"  error  {t(p)}" for p in self.problems]
            if self.more_problems:
                lines.append(f"  … and {self.more_problems:,} more error{'s' if self.more_problems > 1 else ''}")
            return "\n".join(lines)
        a = self.analysis
        assert a is not None
        lines = [
            f"{name}: {self.generation} generation, {a.verdict.label.lower()}, "
            f"revision {t(a.revision.revision_id or 'unknown')} ({a.revision.status})"
        ]
        if a.scoring and a.scoring.statement:
            lines.append(f"  summaries   {t(a.scoring.statement)}")
        lines += [f"  {r.level:<11} {t(r.message)}" for r in a.verdict.reasons]
        lines += [f"  mismatch    {t(m)}" for m in a.mismatches]
        lines += [f"  note        {t(p)}" for p in a.flags]
        lines += [f"  sidecar     {t(p)}" for p in self.sidecar_problems]
        return "\n".join(lines)


def validate_paths(
    paths: list[Path],
    *,
    max_bytes: int = DEFAULT_MAX_BYTES,
    registry: Registry | None = None,
    max_trials: int | None = DEFAULT_MAX_TRIALS,
) -> list[FileValidation]:
    """``registry``: the suite revisions runs are assigned to (default: the one fmbench ships)."""
    files, missing = collect_run_files(paths)
    results = [FileValidation(o.path, problems=[Problem("", o.message)]) for o in missing]
    registry = registry or load_registry()
    for path in files:
        result = FileValidation(str(path))
        try:
            result.analysis = analyze_file(path, registry=registry, max_bytes=max_bytes, max_trials=max_trials)
            result.generation = result.analysis.record.generation
        except RunFileError as exc:
            result.problems, result.more_problems = exc.problems, exc.more
        except AnnotationError as exc:
            result.problems = [Problem("(sidecar)", str(exc))]
        except OSError as exc:
            result.problems = [Problem("(file)", f"cannot be read: {exc.strerror}")]
        results.append(result)
    return results
