"""What makes two sides comparable, and what a comparison says about them (publishing rules §5).

The refusals, the label a comparison gets from what differs, the differences listed and the caveats
marked, as :mod:`fmbench.comparison.compare` (which composes a comparison) states them in its docstring. Every
condition is a field of :mod:`fmbench.analysis.configuration`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from fmbench.analysis import configuration
from fmbench.analysis import display as d
from fmbench.comparison.selection import RunInfo, Side, ids_text
from fmbench.errors import FmbenchError

NOT_COMPARABLE_NOTE = "not compared: PCC is a service benchmark"
NO_MEASURED_TRIAL = "no measured trial"
ESTIMATED_TOKENS_NOTE = "not compared: {why}; characters per second is compared instead"
SPEED_NOTE = (
    "Execution comparison: latency, throughput and memory are shown per side without a delta or a "
    "verdict, because PCC includes the network and the server (and its model's memory is not on the "
    "device); PCC and on-device speed never share one ranking."
)


class ComparisonRefused(FmbenchError):
    """A comparison the publishing rules forbid. ``code`` names the rule; the message says why."""

    def __init__(self, code: str, message: str) -> None:
        self.code = code
        self.reason = message
        super().__init__(f"comparison refused: {message}")


# --- conditions ----------------------------------------------------------------------

Condition = configuration.Field
"""A condition of a run: one field of :mod:`fmbench.analysis.configuration`."""
CONDITIONS: tuple[Condition, ...] = configuration.FIELDS
_CONDITION = configuration.FIELD
CONFIGURATION_KEYS = configuration.CONFIGURATION_KEYS
EXPECTED: tuple[Condition, ...] = configuration.EXPECTED_TO_DIFFER
"""Conditions any two runs differ in: listed apart as expected differences, never a caveat."""


def condition_values(condition: Condition, runs: Sequence[RunInfo]) -> tuple[Any, ...]:
    seen: list[Any] = []
    for r in runs:
        v = condition.value(r)
        if v not in seen:
            seen.append(v)
    return tuple(seen)


def shown(condition: Condition, values: tuple[Any, ...]) -> str:
    return " / ".join(condition.unrecorded if v is None else str(v) for v in values)


@dataclass(frozen=True)
class Difference:
    """A condition whose value differs between the sides."""

    key: str
    label: str
    group: str
    baseline: str
    candidate: str

    def __str__(self) -> str:
        return f"{self.label}: {self.baseline} → {self.candidate}"

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "label": self.label, "group": self.group,
                "baseline": self.baseline, "candidate": self.candidate}


@dataclass(frozen=True)
class Caveat:
    code: str
    message: str

    def to_json(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


# --- labels ----------------------------------------------------------------------------

Kind = Literal["execution", "device", "os", "longitudinal-pcc", "configuration", "repeat"]
LABELS: dict[str, str] = {
    "execution": "Execution comparison",
    "device": "Device comparison",
    "os": "OS comparison",
    "longitudinal-pcc": "Longitudinal PCC comparison",
    "configuration": "Configuration comparison",
    "repeat": "Repeat comparison",
}
MUST_BE_EQUAL = configuration.MUST_BE_EQUAL
REQUIREMENT_TEXT: dict[str, str] = {
    "os": "the hardware model, suite revision, fixtures and configuration",
    "device": "the OS generation, suite revision, fixtures and configuration",
    "execution": "the fixtures",
    "longitudinal-pcc": "the client setup (hardware model, OS build), reasoning level and fallback mode",
}


def kind(differing: set[str], baseline: Side, candidate: Side) -> Kind:
    if configuration.ROUTE.key in differing:
        return "execution"
    if configuration.HARDWARE_MODEL.key in differing:
        return "device"
    if configuration.OS_BUILD.key in differing:
        return "os"
    routes = {r.route for r in (*baseline.runs, *candidate.runs)}
    if routes == {"privateCloudCompute"} and not differing & set(MUST_BE_EQUAL["longitudinal-pcc"]):
        return "longitudinal-pcc"
    if differing - {f.key for f in CONDITIONS if f.group == "thermal"}:
        return "configuration"
    return "repeat"


def refuse_invalid(name: str, side: Side) -> None:
    bad = [r for r in side.runs if r.verdict == "invalid"]
    if not bad:
        return
    r = bad[0]
    why = next((m for lv, _c, m in r.reasons if lv == "invalid"), "judged invalid as evidence")
    raise ComparisonRefused(
        "invalid-run",
        f"the {name} run {r.run_id} ({r.file_name}) is invalid as evidence and is never compared: {why}",
    )


def refuse_mixed_pool(name: str, side: Side) -> None:
    if len(side.runs) < 2:
        return
    for refusal in configuration.NEVER_POOLED:
        values = {getattr(r, refusal.field.key) for r in side.runs}
        if len(values) > 1:
            shown = ", ".join(sorted(str(v) for v in values))
            raise ComparisonRefused(
                refusal.code,
                f"the {name} side would pool runs of different {refusal.what} ({shown}){refusal.note}; "
                f"narrow it with a filter word such as {refusal.field.filter_key}=…",
            )


def refuse_unlike_configuration(baseline: Side, candidate: Side) -> None:
    """Cold sessions are never compared with warm ones, nor one suite with another (their figures
    measure different things); every run on a side shares these (pools that mix them are refused)."""
    for refusal in configuration.NEVER_ACROSS_SIDES:
        f = refusal.field
        vb = {getattr(r, f.key) for r in baseline.runs} - {None}
        vc = {getattr(r, f.key) for r in candidate.runs} - {None}
        if vb and vc and vb != vc:
            shown_b = ", ".join(sorted(f.show(v) or v for v in vb))
            shown_c = ", ".join(sorted(f.show(v) or v for v in vc))
            raise ComparisonRefused(
                refusal.code, f"the sides differ in {refusal.what} ({shown_b} against {shown_c}): {refusal.note}; "
                f"pick sides of one {refusal.what} with a filter word such as {f.filter_key}=…",
            )


def _differing(conditions: Sequence[Condition], baseline: Side, candidate: Side) -> list[Difference]:
    out: list[Difference] = []
    for c in conditions:
        vb, vc = condition_values(c, baseline.runs), condition_values(c, candidate.runs)
        if set(map(repr, vb)) != set(map(repr, vc)):
            out.append(Difference(c.key, c.label, c.group, shown(c, vb), shown(c, vc)))
    return out


def differences(baseline: Side, candidate: Side) -> tuple[list[Difference], set[str]]:
    """The conditions that differ and can explain a change (the OS build and version, the device, the route, the
    suite revision, the configuration...), and their keys; never one of :data:`EXPECTED`."""
    out = _differing([c for c in CONDITIONS if c not in EXPECTED], baseline, candidate)
    return out, {x.key for x in out}


def expected_differences(baseline: Side, candidate: Side) -> list[Difference]:
    """What differs between any two runs, listed apart from the :func:`differences`: the runs themselves, when
    they started, and the :data:`EXPECTED` conditions that differ (every run draws its own order seed)."""
    def ids(side: Side) -> str:
        return ", ".join(r.run_id for r in side.runs)

    def started(side: Side) -> str:
        return ", ".join(d.iso(r.started_at) or d.NOT_RECORDED for r in side.runs)

    return [
        Difference("run_id", "Run", "run", ids(baseline), ids(candidate)),
        Difference("started_at", "Started", "run", started(baseline), started(candidate)),
        *_differing(EXPECTED, baseline, candidate),
    ]


def caveats(kind: Kind, differing: set[str], baseline: Side, candidate: Side, strict_os: bool) -> list[Caveat]:
    caveats: list[Caveat] = []
    for name, side in (("baseline", baseline), ("candidate", candidate)):
        for r in side.runs:
            if r.verdict == "exploratory":
                why = "; ".join(m for lv, _c, m in r.reasons if lv == "exploratory") or "short of the publishing bar"
                caveats.append(
                    Caveat("exploratory", f"The {name} run {r.run_id} is exploratory, not a stable ranking: {why}")
                )
        if side.excluded_invalid:
            caveats.append(
                Caveat(
                    "invalid-excluded",
                    f"The {name} filter also matched {len(side.excluded_invalid)} run(s) invalid as evidence, "
                    f"left out: {ids_text(side.excluded_invalid)}.",
                )
            )
        if len(side.runs) > 1:
            varying = [c.label.lower() for c in CONDITIONS
                       if c not in EXPECTED and len(condition_values(c, side.runs)) > 1]
            if varying:
                caveats.append(
                    Caveat("pooled-variation", f"The {name} side pools runs that differ in {', '.join(varying)}.")
                )
    revisions = {r.revision_id for r in (*baseline.runs, *candidate.runs)}
    if None in revisions:
        unknown = [r.run_id for r in (*baseline.runs, *candidate.runs) if r.revision_id is None]
        caveats.append(
            Caveat(
                "revision-unknown",
                f"The suite revision of run(s) {', '.join(unknown)} cannot be determined: pass rates may be "
                "fractions of different task sets.",
            )
        )
    if configuration.REVISION_ID.key in differing:
        caveats.append(
            Caveat(
                "revision-differs",
                "The sides were measured on different suite revisions: a pass rate is a fraction of a "
                "particular set of tasks, so the quality figures are not like for like.",
            )
        )
    superseded = sorted(
        {r.revision_id for r in (*baseline.runs, *candidate.runs) if r.revision_status == "superseded" and r.revision_id}
    )
    if superseded:
        caveats.append(
            Caveat("revision-superseded", f"Superseded suite revision(s) in this comparison: {', '.join(superseded)}.")
        )
    if configuration.FIXTURE_FINGERPRINT.key in differing:
        caveats.append(
            Caveat(
                "fixtures-differ",
                "The fixture corpora differ (scenario, sample or check definitions): the sides were not "
                "graded against the same tasks.",
            )
        )
    required = MUST_BE_EQUAL.get(kind, ())
    broken = [_CONDITION[k].label.lower() for k in required if k in differing]
    if broken:
        caveats.append(
            Caveat(
                "label-requirements",
                f"{LABELS[kind]}s hold {REQUIREMENT_TEXT[kind]} equal; here {', '.join(broken)} "
                "differ as well, so a change has more than one possible cause.",
            )
        )
    if configuration.OS_GENERATION.key in differing and not strict_os:
        caveats.append(
            Caveat(
                "os-generations",
                "The sides run different OS generations: the visual workload exists only on OS 27. "
                "Use strict OS mode (--strict-os) to keep only the workloads both can run.",
            )
        )
    if kind == "execution":
        caveats.append(Caveat("execution-speed", SPEED_NOTE))
    caveats += network_caveats(differing, baseline, candidate)
    return caveats


def network_caveats(differing: set[str], baseline: Side, candidate: Side) -> list[Caveat]:
    """PCC figures include the network: say when the sides' network conditions differ or are unknown."""
    runs = (*baseline.runs, *candidate.runs)
    if not runs or any(r.route != "privateCloudCompute" for r in runs):
        return []
    out = []
    changed = [c.label for c in CONDITIONS if c.group == "network" and c.key in differing]
    if changed:
        out.append(
            Caveat(
                "pcc-network-differs",
                f"The PCC sides were measured over different networks ({', '.join(changed)} differ): "
                "their latency and throughput include the network, so a change may be the network's.",
            )
        )
    unknown = [r.run_id for r in runs if r.pcc_connection is None or r.pcc_location is None]
    if unknown:
        out.append(
            Caveat(
                "pcc-network-unrecorded",
                f"Network conditions not recorded for PCC run(s) {', '.join(unknown)} (no sidecar with the "
                "connection type and approximate location).",
            )
        )
    return out


def title(kind: Kind, differences: list[Difference], baseline: Side) -> str:
    by_key = {x.key: x for x in differences}
    main = {"execution": configuration.ROUTE, "device": configuration.HARDWARE_MODEL, "os": configuration.OS_BUILD}.get(kind)
    if kind == "os":
        hardware = shown(configuration.HARDWARE_MODEL, condition_values(configuration.HARDWARE_MODEL, baseline.runs))
        x = by_key[configuration.OS_BUILD.key]
        return f"{LABELS[kind]} on {hardware}: {x.baseline} → {x.candidate}"
    if main:
        x = by_key[main.key]
        return f"{LABELS[kind]}: {x.baseline} → {x.candidate}"
    if kind == "configuration":
        changed = [x.label.lower() for x in differences if x.group != "thermal"]
        return f"{LABELS[kind]}: {', '.join(changed)}"
    return LABELS[kind]

