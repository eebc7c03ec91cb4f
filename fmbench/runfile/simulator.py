"""Was a run measured on the device it names, or in the iOS Simulator?

A Simulator run does not say so: the runner writes the *simulated* model as
``hardwareModel`` with the host Mac's cores and memory. The evidence is a core
count or a memory size the named model does not have, checked against the
table of iPhone and iPad models shipped with fmbench
(``fmbench/data/hardware_models.yaml``). The operator's sidecar may state it
either way (``simulator: true|false`` with ``evidence:``), and then decides.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Literal

import yaml

from fmbench.runfile.annotations import Annotations
from fmbench.runfile.models import Environment

GIB = 2**30


@dataclass(frozen=True)
class HardwareModel:
    identifier: str
    name: str
    chip: str
    cores: tuple[int, ...]
    memory_gb: tuple[int, ...]

    @property
    def installed_bytes(self) -> int:
        """The largest RAM any configuration of the model has installed."""
        return max(self.memory_gb) * GIB

    def cores_text(self) -> str:
        return " or ".join(str(c) for c in self.cores)


@cache
def hardware_models() -> dict[str, HardwareModel]:
    """The iPhone and iPad models fmbench knows, by hardware model identifier."""
    text = resources.files("fmbench").joinpath("data", "hardware_models.yaml").read_text(encoding="utf-8")
    table = yaml.safe_load(text)
    return {
        ident: HardwareModel(ident, str(e["name"]), str(e["chip"]), tuple(e["cores"]), tuple(e["memory_gb"]))
        for ident, e in table.items()
    }


Basis = Literal["sidecar", "hardware", "unchecked", "not-applicable"]


@dataclass(frozen=True)
class SimulatorJudgement:
    is_simulator: bool
    basis: Basis
    """``sidecar`` (the operator said), ``hardware`` (checked against the table), ``unchecked``
    (an iPhone or iPad model fmbench does not know) or ``not-applicable`` (a Mac)."""
    evidence: str
    """What decided it, in a sentence ("iPhone18,1 has 6 cores; this run reports 12")."""


def _is_mobile(env: Environment) -> bool:
    model = env.hardwareModel or ""
    return env.systemName != "macOS" or model.startswith(("iPhone", "iPad"))


def judge_simulator(env: Environment, annotations: Annotations | None = None) -> SimulatorJudgement:
    """Whether the run environment is a Simulator's, and on what evidence."""
    if annotations is not None and annotations.simulator is not None:
        said = "a Simulator" if annotations.simulator else "a device, not a Simulator"
        return SimulatorJudgement(
            annotations.simulator,
            "sidecar",
            f"the operator's sidecar {annotations.file_name} says {said}: {annotations.simulator_evidence}",
        )
    if not _is_mobile(env):
        return SimulatorJudgement(False, "not-applicable", "a Mac runs on itself: there is no Mac Simulator")
    model = env.hardwareModel
    known = hardware_models().get(model or "")
    if known is None:
        named = f"hardware model {model}" if model else "no hardware model"
        return SimulatorJudgement(
            False,
            "unchecked",
            f"{named} is not in fmbench's table of iPhone and iPad models, so whether this run was measured "
            "in a Simulator cannot be checked; a sidecar can say (simulator: true|false with evidence:)",
        )
    found: list[str] = []
    if env.cpuCores is not None and env.cpuCores not in known.cores:
        found.append(f"{known.identifier} has {known.cores_text()} cores; this run reports {env.cpuCores}")
    if env.totalMemory is not None and env.totalMemory > known.installed_bytes:
        found.append(
            f"{known.identifier} has at most {max(known.memory_gb)} GB installed; this run reports "
            f"{env.totalMemory / GIB:.1f} GB"
        )
    if found:
        return SimulatorJudgement(True, "hardware", "; ".join(found))
    return SimulatorJudgement(
        False, "hardware", f"cores and memory fit {known.identifier} ({known.name})"
    )
