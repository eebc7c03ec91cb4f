"""Where every page lives, relative to the site root. The static build and ``serve`` share these.

A device, OS build or scenario is named by data, so its name becomes a path
segment in one place, :class:`Segments`, for the whole site: every segment is
made of ``A-Za-z0-9,._-`` only, is at most :data:`SEGMENT_BYTES` long, is unique
within its kind even when compared without case (macOS, Windows checkouts and
some CDNs keep one of two paths that differ only by case), and maps back to
exactly one name. :class:`SitePaths` holds the segments of every kind, read
once per site from the database; the static build writes pages at its paths
and ``serve`` resolves a request path back to the name through it.

A name that is already a safe segment keeps itself as its segment (so existing
paths stay as they were). Any other name (with a character a path cannot keep,
longer than the bound, a name Windows reserves) is cut to its safe characters
and given ``-`` and the first 8 hex digits of the SHA-256 of the raw name. When
two safe names differ only by case, the first in code-point order keeps itself
and the others get the digest too. The module-level functions below give the
path a name has when no other name of its kind collides with it; views link
through :attr:`fmbench.views.site.SiteContext.paths`.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from fmbench.errors import NotFoundError

if TYPE_CHECKING:
    import duckdb

_UNSAFE = re.compile(r"[^A-Za-z0-9,._-]+")
_DOTS = re.compile(r"\.{2,}")
"""``..`` separates the two builds of a comparison's segment, so a segment never holds it."""
_RESERVED = frozenset(
    ["con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)), *(f"lpt{i}" for i in range(10))]
)
"""Names Windows cannot give a file or folder (with any extension)."""

SEGMENT_BYTES = 100
"""The longest path segment a name becomes (a comparison's segment holds two, well within 255)."""
DIGEST_HEX = 8

TRIALS_PER_PAGE = 50


def slug(key: str) -> str:
    """The safe characters of a name: each run of others becomes ``-`` (keys are data: never trusted as paths).

    Not unique and not bounded: :func:`segment` (one name) and :class:`Segments` (a kind's names) are."""
    cleaned = _DOTS.sub(".", _UNSAFE.sub("-", key)).strip("-.")
    return cleaned or "unnamed"


def _digest(name: str, length: int = DIGEST_HEX) -> str:
    return hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:length]


def is_plain(name: str) -> bool:
    """True when a name is its own segment: safe characters only, within the bound, not a reserved name."""
    return (
        slug(name) == name and len(name) <= SEGMENT_BYTES and name.split(".", 1)[0].casefold() not in _RESERVED
    )


def _suffixed(name: str, length: int = DIGEST_HEX, *, keep: str = "", limit: int = SEGMENT_BYTES) -> str:
    """The name's safe characters cut to the bound, ``-`` and a digest of the raw name (``keep``: an ending kept
    after the digest, such as a file's extension)."""
    digest = _digest(name, length)
    room = limit - len(digest) - 1 - len(keep)
    base = slug(name[: len(name) - len(keep)] if keep and name.endswith(keep) else name)[:room].rstrip("-.")
    return f"{base or 'unnamed'}-{digest}{keep}"


def segment(name: str) -> str:
    """The segment of a name that no other name of its kind collides with."""
    return name if is_plain(name) else _suffixed(name)


class Segments:
    """The segments of every name of one kind (devices, OS builds or scenarios): unique without case."""

    def __init__(self, names: Iterable[str]) -> None:
        unique = sorted(set(names))
        claimed: dict[str, str] = {}
        self.by_name: dict[str, str] = {}
        rest = []
        for name in unique:  # a safe name keeps itself unless a name before it (in code-point order) took it
            if is_plain(name) and name.casefold() not in claimed:
                claimed[name.casefold()] = name
                self.by_name[name] = name
            else:
                rest.append(name)
        for name in rest:
            for length in (DIGEST_HEX, 16, 64):
                candidate = _suffixed(name, length)
                if candidate.casefold() not in claimed:
                    break
            else:  # 64 hex digits of two different names' digests agreeing: SHA-256 is broken
                raise ValueError(f"no unique path segment for {name!r}")
            claimed[candidate.casefold()] = name
            self.by_name[name] = candidate
        self.by_segment = {s: n for n, s in self.by_name.items()}

    def __len__(self) -> int:
        return len(self.by_name)

    def of(self, name: str) -> str:
        """The name's segment (a name the site does not hold: its segment alone)."""
        found = self.by_name.get(name)
        return found if found is not None else segment(name)

    def name(self, seg: str) -> str | None:
        """The name a segment stands for, or ``None``."""
        return self.by_segment.get(seg)

    def named(self, seg: str, noun: str) -> str:
        """The name a request path's segment stands for; :class:`~fmbench.errors.NotFoundError` naming the ``noun``
        when none does."""
        found = self.by_segment.get(seg)
        if found is None:
            raise NotFoundError(f"no {noun} {seg!r}")
        return found

    def displaced(self) -> dict[str, str]:
        """The names whose segment is not the one they have alone (a collision moved them)."""
        return {n: s for n, s in self.by_name.items() if s != segment(n)}


_NAMES = {
    "devices": "SELECT DISTINCT coalesce(hardware_model, device_name) FROM runs "
               "WHERE coalesce(hardware_model, device_name) IS NOT NULL",
    "builds": "SELECT DISTINCT os_build FROM runs WHERE os_build IS NOT NULL",
    "scenarios": "SELECT DISTINCT scenario_id FROM scenario_figures",
    "categories": "SELECT DISTINCT category FROM scenario_figures WHERE category IS NOT NULL",
}
"""Every name of each kind the database holds (a device key is the hardware model, else the device name)."""


def names_of(con: duckdb.DuckDBPyConnection, kind: str) -> list[str]:
    return [name for (name,) in con.execute(_NAMES[kind]).fetchall()]


def segments_of(con: duckdb.DuckDBPyConnection, kind: str) -> Segments:
    """The segments of every name of ``kind`` (``devices``, ``builds``, ``scenarios`` or ``categories``) the database
    holds."""
    return Segments(names_of(con, kind))


class SitePaths:
    """The segments of the site's devices, OS builds and scenarios, and the paths made of them.

    Each kind is read when a path first needs it (a page about runs reads no scenario), once.
    """

    def __init__(self, segments: Callable[[str], Segments]) -> None:
        self._load = segments
        self._held: dict[str, Segments] = {}

    def _kind(self, kind: str) -> Segments:
        if kind not in self._held:
            self._held[kind] = self._load(kind)
        return self._held[kind]

    @property
    def devices(self) -> Segments:
        return self._kind("devices")

    @property
    def builds(self) -> Segments:
        return self._kind("builds")

    @property
    def scenarios(self) -> Segments:
        return self._kind("scenarios")

    @property
    def categories(self) -> Segments:
        """The scenarios' categories (a leaderboard per category)."""
        return self._kind("categories")

    @classmethod
    def of(cls, devices: Iterable[str] = (), builds: Iterable[str] = (), scenarios: Iterable[str] = ()) -> SitePaths:
        given = {"devices": list(devices), "builds": list(builds), "scenarios": list(scenarios), "categories": []}
        return cls(lambda kind: Segments(given[kind]))

    @classmethod
    def read(cls, con: duckdb.DuckDBPyConnection) -> SitePaths:
        """The database's names, each kind read from ``con`` when first needed (``con`` must stay open till then)."""
        return cls(lambda kind: segments_of(con, kind))

    def fingerprint(self) -> str:
        """What of the mapping a page cannot see from its own runs: the names a collision moved ("" when none)."""
        moved = [sorted(k.displaced().items()) for k in (self.devices, self.builds, self.scenarios, self.categories)]
        if not any(moved):
            return ""
        return hashlib.sha256(repr(moved).encode("utf-8", "surrogatepass")).hexdigest()

    def device(self, device: str) -> str:
        return f"devices/{self.devices.of(device)}/"

    def build(self, build: str) -> str:
        return f"builds/{self.builds.of(build)}/"

    def scenario(self, scenario: str) -> str:
        return f"scenarios/{self.scenarios.of(scenario)}/"

    def leaderboard(self, scenario: str) -> str:
        return f"leaderboards/{self.scenarios.of(scenario)}/"

    def leaderboard_category(self, category: str) -> str:
        return f"leaderboards/category/{self.categories.of(category)}/"

    def trials(self, run_id: str, scenario: str) -> str:
        """A scenario's trials page: one a run and scenario (its trials are laid out from their data, page by
        page, in the reader's browser)."""
        return f"runs/{run_id}/trials/{self.scenarios.of(scenario)}/"

    def data_trials_json(self, run_id: str, scenario: str) -> str:
        """A scenario's trials as data: compact JSON, gzipped (a browser reads it with ``DecompressionStream``)."""
        return f"data/runs/{run_id}/trials/{self.scenarios.of(scenario)}.json.gz"

    def comparison(self, device: str, baseline: str, candidate: str, anchor: str = "") -> str:
        """A device's comparison of two OS builds; ``anchor``: one configuration's section of it
        (:func:`configuration_anchor`)."""
        page = f"compare/{self.devices.of(device)}/{self.builds.of(baseline)}..{self.builds.of(candidate)}/"
        return f"{page}#{anchor}" if anchor else page

    def device_comparison(self, device_a: str, device_b: str, generation: int | str) -> str:
        return f"compare/devices/{self.devices.of(device_a)}..{self.devices.of(device_b)}/{generation}/"


_ALONE = SitePaths.of()
"""The paths of names that nothing collides with (the module-level functions)."""


def home() -> str:
    return ""


def runs() -> str:
    return "runs/"


def run(run_id: str) -> str:
    return f"runs/{run_id}/"


def trials(run_id: str, scenario: str) -> str:
    return _ALONE.trials(run_id, scenario)


def devices() -> str:
    return "devices/"


def device(device: str) -> str:
    return _ALONE.device(device)


def scenarios() -> str:
    return "scenarios/"


def scenario(scenario: str) -> str:
    return _ALONE.scenario(scenario)


def leaderboards() -> str:
    return "leaderboards/"


def leaderboard(scenario: str) -> str:
    return _ALONE.leaderboard(scenario)


def leaderboard_category(category: str) -> str:
    return _ALONE.leaderboard_category(category)


def coverage() -> str:
    return "coverage/"


def pcc() -> str:
    return "pcc/"


def compare_index() -> str:
    return "compare/"


def comparison(device: str, baseline: str, candidate: str, anchor: str = "") -> str:
    return _ALONE.comparison(device, baseline, candidate, anchor)


_NOT_ANCHOR = re.compile(r"[^A-Za-z0-9]+")


def configuration_anchor(configuration: Iterable[object]) -> str:
    """The id of a configuration's section on a comparison page, made of the configuration's values (route, suite,
    the runner's choices, the file generation): the same on every build of the site, so a link to it stays."""
    parts = ("none" if v is None else _NOT_ANCHOR.sub("_", str(v)) or "_" for v in configuration)
    return "cfg-" + "-".join(parts)


def regressions() -> str:
    return "regressions/"


def regressions_feed() -> str:
    return "regressions/feed.xml"


def revisions() -> str:
    return "revisions/"


def methodology(anchor: str = "") -> str:
    return "methodology/" + (f"#{anchor}" if anchor else "")


def data() -> str:
    return "data/"


def data_runs_index() -> str:
    return "data/runs.json"


_RUN_DATA = frozenset(["figures.json", "trials.csv.gz", "trials"])
"""What a run's data folder holds besides its original file (``trials.csv.gz``: what it held before the trials
CSV became ``fmbench export --trials-csv``'s, kept so an original's name in the site does not change)."""


def source_segment(file_name: str) -> str:
    """The original run file's name in its run's data folder: safe, bounded with room for ``.gz``, and never one of
    the folder's other files (compared without case)."""
    if is_plain(file_name) and len(file_name) <= SEGMENT_BYTES - 3 and not (
        {file_name.casefold(), f"{file_name}.gz".casefold()} & _RUN_DATA
    ):
        return file_name
    ext = re.search(r"\.[A-Za-z0-9]{1,10}$", file_name)
    return _suffixed(file_name, keep=ext.group(0) if ext else "", limit=SEGMENT_BYTES - 3)


def data_source(run_id: str, file_name: str) -> str:
    return f"data/runs/{run_id}/{source_segment(file_name)}"


def data_source_gzip(run_id: str, file_name: str) -> str:
    """The original run file gzipped (the ``gzip`` originals policy)."""
    return data_source(run_id, file_name) + ".gz"


def data_figures(run_id: str) -> str:
    return f"data/runs/{run_id}/figures.json"


def data_trials_json(run_id: str, scenario: str) -> str:
    return _ALONE.data_trials_json(run_id, scenario)


def builds() -> str:
    return "builds/"


def build(build: str) -> str:
    return _ALONE.build(build)


def device_comparison(device_a: str, device_b: str, generation: int | str) -> str:
    return _ALONE.device_comparison(device_a, device_b, generation)


def search() -> str:
    return "search/"


def data_search_index() -> str:
    """The search page's index, written at build time."""
    return "data/search.json"
