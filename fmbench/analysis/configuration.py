"""What makes two runs comparable, stated once.

A run's configuration is the set of fields below (:data:`FIELDS`): where it ran
(route, hardware model, OS build, version and generation), what it ran (suite, sample
selection, seed, order, warmups, repetitions), the runner's choices recorded at
the run file's top level (session mode, reasoning level, fallback mode,
connectivity), the fixtures, suite revision and commit it was measured with,
its thermal state, context size, file generation, token counting and network.

Each :class:`Field` says what it is called (its ``key``: the :class:`RunInfo`
attribute and, when ``column`` is set, the ``runs`` column), its label, its
group of conditions, how its value is shown and the filter word that selects
it. Everything else is derived from them:

- a comparison's listed conditions are :data:`FIELDS`, in order; the label
  rules hold :data:`MUST_BE_EQUAL` equal; the refusals are :data:`NEVER_POOLED`
  and :data:`NEVER_ACROSS_SIDES`;
- a side's filter words are :data:`FILTER_KEYS`;
- a device's configurations on the site are :data:`GROUPING` (with the file
  generation): :func:`config_key` and :func:`config_label`;
- a regression group is :class:`Group`, one value per field of :data:`GROUP_FIELDS`;
- queries name the columns with :func:`columns` (column names of this constant
  spec, never data: values are always bound).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from fmbench.analysis import display as d
from fmbench.runfile import vocabulary as vocab


@dataclass(frozen=True)
class Field:
    """One configuration field."""

    key: str
    """The attribute of a run (:class:`fmbench.comparison.selection.RunInfo`) and, when ``column``, its ``runs`` column."""
    label: str
    group: str
    """Which kind of condition it is: ``route``, ``hardware``, ``os``, ``configuration`` (the suite and the
    runner's settings, which the OS and device labels hold equal), ``fixtures``, ``revision``, ``commit``,
    ``thermal``, ``context``, ``format``, ``tokens`` or ``network``."""
    vocabulary: str | None = None
    """The vocabulary its values are shown through (also the run file's name of the field, where it has one)."""
    shown: Callable[[Any], Any] | None = None
    """How a value is shown when it has no vocabulary."""
    unrecorded: str = d.NOT_RECORDED
    column: bool = True
    """A ``runs`` column of the same name (else it is derived from the run's trials, sidecar or other fields)."""
    filter_key: str | None = None
    """The filter word that selects runs by it (``key=value``); ``None`` when it is not a filter."""
    runner_label: str | None = None
    """Its name in the runner's own report (:mod:`fmbench.analysis.report`), where that differs from ``label``."""

    def show(self, raw: Any) -> Any:
        """A stored value as shown (``None`` stays ``None``: not recorded)."""
        if self.vocabulary is not None:
            return vocab.label(self.vocabulary, raw)
        return self.shown(raw) if self.shown is not None else raw

    def value(self, run: Any) -> Any:
        """This field of a run (any object with the field as an attribute), as shown."""
        return self.show(getattr(run, self.key))


ROUTE = Field("route", "Route", "route", "route", filter_key="route")
HARDWARE_MODEL = Field("hardware_model", "Hardware model", "hardware", filter_key="device")
OS_BUILD = Field("os_build", "OS build", "os", filter_key="os_build")
OS_VERSION = Field("system_version", "OS version", "os")
OS_GENERATION = Field("os_generation", "OS generation", "os")
SUITE = Field("suite", "Suite", "configuration", "suite", filter_key="suite")
SAMPLE_SELECTION = Field("sample_selection", "Sample selection (samples per scenario)", "configuration", column=False)
RANDOM_SEED = Field("random_seed", "Seed", "configuration")
RANDOMIZED_ORDER = Field("randomized_order", "Randomized order", "configuration", shown=d.yes_no)
WARMUP_COUNT = Field("warmup_count", "Warmups", "configuration")
REPETITIONS = Field("repetitions", "Repetitions", "configuration")
SESSION_MODE = Field("session_mode", "Session mode", "configuration", "sessionMode", filter_key="session")
REASONING_LEVEL = Field("reasoning_level", "Reasoning level", "configuration", "reasoningLevel",
                        filter_key="reasoning", runner_label="Reasoning")
FALLBACK_MODE = Field("fallback_mode", "Fallback mode", "configuration", "fallbackMode",
                      filter_key="fallback", runner_label="Fallback")
CONNECTIVITY = Field("connectivity", "Connectivity", "configuration", "connectivity",
                     filter_key="connectivity", runner_label="Connectivity label")
FIXTURE_FINGERPRINT = Field("fixture_fingerprint", "Fixture corpus (scenario, sample and check definitions)",
                            "fixtures")
REVISION_ID = Field("revision_id", "Suite revision", "revision", unrecorded="unknown", filter_key="revision")
BENCHMARK_COMMIT = Field("benchmark_commit", "Benchmark commit", "commit")
THERMAL_STATE = Field("thermal_state", "Thermal state at start", "thermal", "thermalState")
WORST_THERMAL_STATE = Field("worst_thermal_state", "Worst thermal state", "thermal", "thermalState")
MODEL_CONTEXT_SIZE = Field("model_context_size", "Context size", "context")
GENERATION = Field("generation", "Run file generation", "format")
TOKEN_COUNT_SOURCE = Field("token_count_source", "Token count source", "tokens", "tokenCountSource", column=False)
PCC_CONNECTION = Field("pcc_connection", "PCC connection (sidecar)", "network", column=False)
PCC_LOCATION = Field("pcc_location", "PCC location (sidecar)", "network", column=False)

FIELDS: tuple[Field, ...] = (
    ROUTE, HARDWARE_MODEL, OS_BUILD, OS_VERSION, OS_GENERATION, SUITE, SAMPLE_SELECTION, RANDOM_SEED, RANDOMIZED_ORDER,
    WARMUP_COUNT, REPETITIONS, SESSION_MODE, REASONING_LEVEL, FALLBACK_MODE, CONNECTIVITY, FIXTURE_FINGERPRINT,
    REVISION_ID, BENCHMARK_COMMIT, THERMAL_STATE, WORST_THERMAL_STATE, MODEL_CONTEXT_SIZE, GENERATION,
    TOKEN_COUNT_SOURCE, PCC_CONNECTION, PCC_LOCATION,
)
"""Every field, in the order a comparison lists its conditions."""
FIELD: dict[str, Field] = {f.key: f for f in FIELDS}
CONFIGURATION_KEYS: tuple[str, ...] = tuple(f.key for f in FIELDS if f.group == "configuration")

CHOICES: tuple[Field, ...] = (SESSION_MODE, REASONING_LEVEL, FALLBACK_MODE, CONNECTIVITY)
"""The runner's choices, recorded at the run file's top level (the legacy generation records none)."""
GROUPING: tuple[Field, ...] = (ROUTE, SUITE, *CHOICES)
"""A device's configuration on the site: its runs are grouped (and compared) by these and the file generation."""
LISTING_ORDER: tuple[Field, ...] = (ROUTE, SUITE, SESSION_MODE)
"""What a list of a device's configurations is sorted by, before the run id."""
FILTERS: tuple[Field, ...] = (HARDWARE_MODEL, OS_BUILD, ROUTE, SUITE, *CHOICES, REVISION_ID)
FILTER_KEYS: dict[str, str] = {f.filter_key: f.key for f in FILTERS if f.filter_key is not None}
"""Filter words of a side and the ``runs`` column each one matches (equality)."""
GROUP_FIELDS: tuple[Field, ...] = (HARDWARE_MODEL, OS_GENERATION, SUITE, ROUTE, *CHOICES, REVISION_ID)
"""What a regression group holds equal: a device, an OS generation, a configuration and a suite revision."""

MUST_BE_EQUAL: dict[str, tuple[str, ...]] = {
    "os": (HARDWARE_MODEL.key, REVISION_ID.key, FIXTURE_FINGERPRINT.key, *CONFIGURATION_KEYS),
    "device": (OS_GENERATION.key, REVISION_ID.key, FIXTURE_FINGERPRINT.key, *CONFIGURATION_KEYS),
    "execution": (FIXTURE_FINGERPRINT.key,),
    "longitudinal-pcc": (HARDWARE_MODEL.key, OS_BUILD.key, REASONING_LEVEL.key, FALLBACK_MODE.key),
}
"""Publishing rules §5: what each comparison label holds equal (anything else may differ and is listed)."""
EXPECTED_TO_DIFFER: tuple[Field, ...] = (RANDOM_SEED,)
"""Fields that differ between any two runs (every run draws its own order seed): a comparison lists them apart,
as expected differences, never as a condition that can explain a change."""


@dataclass(frozen=True)
class Refusal:
    """A field whose values a comparison never mixes: ``code`` names the refusal, ``what`` the values
    (plural) and ``note`` says why."""

    field: Field
    code: str
    what: str
    note: str = ""


NEVER_POOLED: tuple[Refusal, ...] = (
    Refusal(SESSION_MODE, "pooled-session-modes", "session modes", " (cold and warm sessions are never pooled)"),
    Refusal(ROUTE, "pooled-routes", "routes"),
    Refusal(HARDWARE_MODEL, "pooled-hardware", "hardware models"),
    Refusal(OS_BUILD, "pooled-os-builds", "OS builds"),
)
"""One side never pools runs that differ in these, checked in this order."""
NEVER_ACROSS_SIDES: tuple[Refusal, ...] = (
    Refusal(SESSION_MODE, "session-modes", "session mode", "cold and warm sessions are never compared"),
    Refusal(SUITE, "suites", "suite", "different suites measure different workloads and are never compared"),
)
"""The two sides of a comparison never differ in these (their figures measure different things)."""


def columns(spec: Sequence[Field], prefix: str = "") -> str:
    """The fields' ``runs`` columns as SQL text (``prefix`` is a table alias with its dot): names from this
    constant spec, never data."""
    return ", ".join(prefix + f.key for f in spec if f.column)


def config_key(r: Mapping[str, Any]) -> tuple[Any, ...]:
    """What two runs on a device must share to be compared side by side: their configuration and file generation."""
    return (*(r.get(f.key) for f in GROUPING), r.get(GENERATION.key))


def config_label(r: Mapping[str, Any]) -> str:
    """A configuration in a few words (route, suite, session; reasoning and fallback on PCC; offline; the older
    run-file format), in a reader's words, never the file's."""
    route, suite = r[ROUTE.key], r[SUITE.key]
    parts = [ROUTE.show(route) or route, SUITE.show(suite) or suite]
    if r.get(SESSION_MODE.key):
        parts.append(SESSION_MODE.show(r[SESSION_MODE.key]) or r[SESSION_MODE.key])
    if route == "privateCloudCompute":
        if r.get(REASONING_LEVEL.key):
            parts.append(f"reasoning {REASONING_LEVEL.show(r[REASONING_LEVEL.key])}")
        if r.get(FALLBACK_MODE.key):
            parts.append(_FALLBACK_WORDS.get(r[FALLBACK_MODE.key]) or f"fallback {FALLBACK_MODE.show(r[FALLBACK_MODE.key])}")
    if r.get(CONNECTIVITY.key) == "offline":
        parts.append("offline")
    if r.get(GENERATION.key) == "legacy":
        parts.append(OLDER_FORMAT)
    return " · ".join(parts)


OLDER_FORMAT = "older run-file format"
"""The legacy generation of run files (June 2026) in a reader's words."""
_FALLBACK_WORDS = {"onDevice": "falls back on-device", "disabled": "no fallback"}
"""A PCC run's fallback mode in a configuration's few words."""


def pcc_setup_label(r: Mapping[str, Any]) -> str:
    """A PCC run's fallback mode and reasoning level in words."""
    fallback = r[FALLBACK_MODE.key]
    shown = "fallback enabled" if fallback == "onDevice" else (
        "fallback disabled" if fallback == "disabled" else "fallback not recorded"
    )
    reasoning = REASONING_LEVEL.show(r[REASONING_LEVEL.key]) or d.NOT_RECORDED
    return f"{shown} · reasoning {reasoning}"


@dataclass(frozen=True)
class Group:
    """A device, an OS generation and a configuration: the runs whose builds are put in order. Its fields are
    those of :data:`GROUP_FIELDS`, in order (a test holds them to it)."""

    hardware_model: str
    os_generation: int | None
    suite: str
    route: str
    session_mode: str | None
    reasoning_level: str | None
    fallback_mode: str | None
    connectivity: str | None
    revision_id: str | None

    @classmethod
    def of(cls, run: Any) -> Group:
        assert run.hardware_model is not None
        return cls(*(getattr(run, f.key) for f in GROUP_FIELDS))

    def filters(self, os_build: str) -> tuple[tuple[str, str], ...]:
        """The side of one OS build as a filter expression (keys whose value is not recorded are left out)."""
        pairs = ((f.filter_key, os_build if f is OS_BUILD else getattr(self, f.key)) for f in FILTERS)
        return tuple((k, v) for k, v in pairs if k is not None and v is not None)

    @property
    def slug(self) -> str:
        parts = (None if v is None else str(v) for f, v in self._items() if f is not HARDWARE_MODEL)
        return "/".join(quote(p if p is not None else "-", safe="") for p in parts)

    def describe(self) -> str:
        generation = f"OS {self.os_generation}" if self.os_generation is not None else "OS generation not recorded"
        rest = ", ".join(f"{f.filter_key} {v or f.unrecorded}" for f, v in self._items() if f in (*CHOICES, REVISION_ID))
        return f"{generation}, {self.suite} suite, {self.route}, {rest}"

    def label(self) -> str:
        """The group's configuration in a reader's words (as :func:`config_label` says a run's), with its OS
        generation and suite revision: "OS 27 · On-device · Safety Guardrails · Cold session · suite revision 2026.11"."""
        generation = f"OS {self.os_generation}" if self.os_generation is not None else "OS generation not recorded"
        revision = f"suite revision {self.revision_id}" if self.revision_id else "suite revision unknown"
        return f"{generation} · {config_label({f.key: v for f, v in self._items()})} · {revision}"

    def to_json(self) -> dict[str, Any]:
        return {f.key: v for f, v in self._items()}

    def _items(self) -> tuple[tuple[Field, Any], ...]:
        return tuple((f, getattr(self, f.key)) for f in GROUP_FIELDS)
