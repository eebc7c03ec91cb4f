"""Which runs stand for a device, a configuration and an OS build: the one selection of evidence every page asks.

A **cell** is one device (hardware model), one configuration (:func:`configuration_of`: the route, the suite, the
runner's choices and the file generation, as :func:`fmbench.analysis.configuration.config_key` holds them) and one
OS build. Its evidence is chosen once, here, and the regression detector (and through it home's latest changes,
``/regressions/``, its feed and the OS build pages), the OS-build and device comparison pages, the leaderboards and
``serve`` all take it from here (publishing rules §11):

- runs judged invalid never stand for anything;
- the publishable runs of the cell, if it has any; the exploratory ones only where it has no publishable run,
  and then :attr:`Evidence.exploratory` says so (and every headline built on it);
- of one suite revision: the revision of the run the attempt rule names first (``latest``: the newest run;
  ``first``: the oldest; ``pooled``: the newest), and of that revision's runs the attempt rule takes one, or all of
  them for ``pooled``.

Every page takes a cell's runs by one rule, :data:`RULE` (``latest``): a build with two publishable runs of a
configuration stands on the newer one on its comparison pages, its build steps and history, home, the device
comparisons and the leaderboards alike, so each shows that run's own numbers (the ones its run page shows) and
never a pool of it with another run beside them. The other rules are a reader's explicit choice (``fmbench
compare --rule``, a comparison page's ``?rule=`` under ``serve``).

A device comparison stands each device on its newest OS build with a publishable run of the configuration
(:meth:`EvidenceIndex.newest`), the build a leaderboard ranks it on; a device with none stands on its newest
exploratory build, said as such.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from fmbench.analysis.configuration import GENERATION, GROUPING, REVISION_ID
from fmbench.comparison.selection import (
    AttemptRule,
    RunCatalog,
    RunInfo,
    Side,
    SideSpec,
    apply_rule,
)

RULE: AttemptRule = "latest"
"""The attempt rule every page takes a cell's runs by (see the module's text)."""

Configuration = tuple[Any, ...]
"""A configuration's values: those of :data:`fmbench.analysis.configuration.GROUPING`, then the file generation."""


def configuration_of(run: RunInfo) -> Configuration:
    """The configuration a run is compared within (equal to ``config_key`` of its ``runs`` row)."""
    return (*(getattr(run, f.key) for f in GROUPING), getattr(run, GENERATION.key))


def configuration_values(configuration: Configuration) -> dict[str, Any]:
    """A configuration as the ``runs`` columns it holds (what ``config_label`` and ``config_key`` read)."""
    return {f.key: v for f, v in zip((*GROUPING, GENERATION), configuration, strict=True)}


def side_spec(device: str, build: str, configuration: Configuration, revision_id: str | None) -> SideSpec:
    """The filter words of a cell's evidence: its device, build, configuration and suite revision."""
    values = configuration_values(configuration)
    filters = [("device", device), ("os_build", build)]
    filters += [(f.filter_key, values[f.key]) for f in GROUPING if f.filter_key and values[f.key] is not None]
    if revision_id is not None and REVISION_ID.filter_key is not None:
        filters.append((REVISION_ID.filter_key, revision_id))
    return SideSpec(text=" ".join(f"{k}={v}" for k, v in filters), kind="filter", filters=tuple(filters))


@dataclass(frozen=True)
class Evidence:
    """The runs that stand for one device, configuration and OS build."""

    hardware_model: str
    os_build: str
    configuration: Configuration
    revision_id: str | None
    exploratory: bool
    """No publishable run of the configuration was measured on this build: exploratory runs stand for it."""
    side: Side
    """The side a comparison reads: the runs used, and every valid run of the cell as its matches."""
    first_seen: Any
    """When the first valid run of the cell started (the build's place in the device's order)."""

    @property
    def runs(self) -> tuple[RunInfo, ...]:
        return self.side.runs

    @property
    def run_ids(self) -> tuple[str, ...]:
        return self.side.run_ids

    @property
    def device_name(self) -> str:
        return self.side.runs[-1].device_name

    @property
    def os_generation(self) -> int | None:
        return self.side.runs[-1].os_generation


def _ordered(runs: Iterable[RunInfo]) -> list[RunInfo]:
    return sorted(runs, key=lambda r: (r.started_at, r.run_id))


def select(runs: Sequence[RunInfo], rule: AttemptRule = RULE) -> Evidence | None:
    """The evidence of one cell from its runs (one device, configuration and build; invalid ones are left out):
    ``None`` when none is valid."""
    valid = _ordered(r for r in runs if r.verdict != "invalid")
    if not valid:
        return None
    publishable = [r for r in valid if r.verdict == "publishable"]
    tier = publishable or valid
    named = tier[0] if rule == "first" else tier[-1]
    same_revision = [r for r in tier if r.revision_id == named.revision_id]
    first = valid[0]
    assert first.hardware_model is not None and first.os_build is not None
    spec = side_spec(first.hardware_model, first.os_build, configuration_of(first), named.revision_id)
    side = apply_rule(spec, same_revision, rule)
    side = Side(spec=spec, rule=side.rule, runs=side.runs, matched=tuple(valid))
    return Evidence(
        hardware_model=first.hardware_model,
        os_build=first.os_build,
        configuration=configuration_of(first),
        revision_id=named.revision_id,
        exploratory=not publishable,
        side=side,
        first_seen=first.started_at,
    )


class EvidenceIndex:
    """Every cell's runs (from a :class:`RunCatalog`, read once), and the evidence each stands on by attempt rule.

    Only runs with a hardware model and an OS build are placed in a cell: without them a run stands for no device
    and build.
    """

    def __init__(self, runs: Iterable[RunInfo]) -> None:
        self._cells: dict[tuple[str, str, Configuration], list[RunInfo]] = {}
        self._builds: dict[str, list[str]] = {}
        for r in _ordered(runs):
            if r.verdict == "invalid" or r.hardware_model is None or r.os_build is None:
                continue
            self._cells.setdefault((r.hardware_model, r.os_build, configuration_of(r)), []).append(r)
            order = self._builds.setdefault(r.hardware_model, [])
            if r.os_build not in order:
                order.append(r.os_build)
        self._chosen: dict[tuple[str, str, Configuration, AttemptRule], Evidence | None] = {}

    @classmethod
    def of(cls, catalog: RunCatalog) -> EvidenceIndex:
        return cls(catalog.runs)

    def devices(self) -> list[str]:
        return sorted(self._builds)

    def builds(self, device: str) -> list[str]:
        """A device's OS builds in the order they were first measured."""
        return list(self._builds.get(device, ()))

    def configurations(self, device: str, build: str) -> list[Configuration]:
        return [c for (d, b, c) in self._cells if d == device and b == build]

    def shared(self, device: str, baseline: str, candidate: str) -> list[Configuration]:
        """The configurations a device was measured with on both builds."""
        theirs = set(self.configurations(device, candidate))
        return [c for c in self.configurations(device, baseline) if c in theirs]

    def cell(self, device: str, build: str, configuration: Configuration, rule: AttemptRule = RULE) -> Evidence | None:
        """The evidence of one cell (``None``: the device has no valid run of it on that build)."""
        key = (device, build, configuration, rule)
        if key not in self._chosen:
            self._chosen[key] = select(self._cells.get((device, build, configuration), ()), rule)
        return self._chosen[key]

    def device_cells(self, device: str, rule: AttemptRule = RULE) -> list[Evidence]:
        """Every cell of a device, in the order of its builds' first run."""
        out = []
        for build in self.builds(device):
            for configuration in self.configurations(device, build):
                found = self.cell(device, build, configuration, rule)
                if found is not None:
                    out.append(found)
        return out

    def newest(self, device: str, configuration: Configuration, generation: int | None,
               rule: AttemptRule = RULE) -> Evidence | None:
        """The device's evidence of a configuration on one OS generation for a device comparison: on its newest
        build with a publishable run of it, else on its newest build (exploratory, and said)."""
        found = [
            e for b in self.builds(device)
            if (e := self.cell(device, b, configuration, rule)) is not None and e.os_generation == generation
        ]
        publishable = [e for e in found if not e.exploratory]
        chosen = publishable or found
        return chosen[-1] if chosen else None


def evidence_of(runs: Iterable[RunInfo]) -> EvidenceIndex:
    """An index of the runs given (one device's, say)."""
    return EvidenceIndex(runs)
