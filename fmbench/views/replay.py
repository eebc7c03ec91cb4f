"""The run page's section about attached Evaluations replays: their metrics beside the trial figures."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import duckdb

from fmbench.analysis import display as d
from fmbench.native.linking import replay_for_run
from fmbench.views.blocks import Cell, Column, Row, Table
from fmbench.views.common import Url


@dataclass(frozen=True)
class ReplayArtifact:
    title: str
    evidence: str
    details: list[tuple[str, str | None]]
    profiles: Table
    issues: Table


JUDGE_CAVEAT = (
    "A model judge's scores are not calibrated against human ratings: no study here measures how closely "
    "they agree with what people would score, so read them as one model's opinion, not as a measurement."
)


def _recorded(info: dict[str, str], word: str) -> str | None:
    """The value of the first ``evaluationInfo`` entry whose name mentions ``word`` (any case), if recorded."""
    for key, value in info.items():
        if word in key.lower() and str(value).strip():
            return str(value)
    return None


def judge_details(info: dict[str, str]) -> list[tuple[str, str | None]]:
    """The judge and the rubric version a judge artifact records in its ``evaluationInfo``
    (``None``: not recorded)."""
    judge = next(
        (str(v) for k, v in info.items() if "judge" in k.lower() and "rubric" not in k.lower() and str(v).strip()),
        None,
    )
    return [("Judge", judge), ("Rubric version", _recorded(info, "rubric"))]


@dataclass(frozen=True)
class ReplaySection:
    deterministic: list[ReplayArtifact]
    judges: list[ReplayArtifact]
    compared: int
    disagreements: Table
    agrees: bool
    unlinked: int
    judge_caveat: str = JUDGE_CAVEAT


def _number(v: float | None) -> str | None:
    return None if v is None else f"{v:.4g}"


def _profiles(key: str, profiles: Any) -> Table:
    return Table(
        f"replay-{key}",
        "Metric profiles over the rows linked to this run, as xceval computes them (Booleans are not"
        " numeric; even-count median averages the two middle values; sample standard deviation)",
        [
            Column("metric", "Metric"),
            Column("count", "Rows", True),
            Column("pass", "Pass", True),
            Column("fail", "Fail", True),
            Column("ignore", "Ignored", True),
            Column("passrate", "Pass rate", True),
            Column("mean", "Mean", True),
            Column("median", "Median", True),
            Column("sd", "Std. dev.", True),
            Column("rationales", "Rationales"),
        ],
        [
            Row(
                [
                    p.name,
                    d.count(p.count),
                    d.count(p.passed),
                    d.count(p.failed),
                    d.count(p.ignored),
                    Cell(None if p.pass_rate is None else f"{p.pass_rate:.1%}", reason="not a pass/fail metric"),
                    Cell(_number(p.mean), reason="no numeric value"),
                    Cell(_number(p.median), reason="no numeric value"),
                    Cell(_number(p.standard_deviation), reason="no numeric value"),
                    "; ".join(f"{r.rationale} ({r.count})" for r in p.rationales[:3]) or "none",
                ]
            )
            for p in profiles
        ],
    )


def _issues(key: str, issues: Any) -> Table:
    return Table(
        f"replay-issues-{key}",
        "Issues: linked rows that failed a metric, and differences between the response and Expected"
        " at JSON paths (an empty Expected is no expectation; xceval would report it as a mismatch)",
        [
            Column("row", "Row", True),
            Column("record", "Record"),
            Column("failed", "Failed metrics"),
            Column("differences", "Differences from Expected"),
        ],
        [
            Row(
                [
                    str(issue.index),
                    issue.record_id or "not recorded",
                    ", ".join(name.removeprefix("FoundationModelsBench ") for name in issue.failed_metrics)
                    or "none",
                    "; ".join(difference.to_text() for difference in issue.differences) or "none",
                ]
            )
            for issue in issues
        ],
        "No linked row failed a metric or differs from its Expected.",
    )


def _artifact(i: int, a: Any) -> ReplayArtifact:
    return ReplayArtifact(
        title=a.location,
        evidence="secondary evidence: subjective scores from a model judge" if a.is_judge else "deterministic replay",
        details=[
            *(judge_details(a.info) if a.is_judge else []),
            ("Evaluation id", a.evaluation_id),
            ("Result id", a.result_id),
            ("Started", a.start_time),
            ("SHA-256", a.sha256),
            ("Replays this very run file", "yes" if a.source_matches_run else "no (linked by record id)"),
            ("Rows linked to this run", f"{a.linked_row_count} of {a.row_count}"),
            ("Test", a.test_identifier),
        ],
        profiles=_profiles(f"a{i}", a.profiles),
        issues=_issues(f"a{i}", a.issues),
    )


def replay_section(con: duckdb.DuckDBPyConnection, url: Url, run_id: str) -> ReplaySection | None:
    """The linked replay artifacts of a run (``None`` when there are none)."""
    tables = {name for (name,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    if "evaluation_rows" not in tables:
        return None

    replay = replay_for_run(con, run_id)
    if replay is None:
        return None
    artifacts = [_artifact(i, a) for i, a in enumerate(replay.artifacts)]
    return ReplaySection(
        deterministic=[x for x, a in zip(artifacts, replay.artifacts, strict=True) if not a.is_judge],
        judges=[x for x, a in zip(artifacts, replay.artifacts, strict=True) if a.is_judge],
        compared=replay.compared_count,
        disagreements=Table(
            "replay-disagreements",
            "Where the replay and fmbench's recomputation disagree",
            [Column("row", "Row", True), Column("record", "Trial or failure"), Column("metric", "Metric"), Column("message", "What differs")],
            [
                Row([str(x.row_index), f"{x.owner} {x.record_id}", x.metric.removeprefix("FoundationModelsBench "), x.message])
                for x in replay.disagreements
            ],
            "The replay agrees with fmbench on every linked row.",
        ),
        agrees=replay.agrees,
        unlinked=replay.unlinked_row_count,
    )
