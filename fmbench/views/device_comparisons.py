"""Device comparisons (publishing rules §5): two devices on one OS generation, configuration by configuration."""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, ClassVar

import duckdb

from fmbench import urls
from fmbench.analysis.configuration import config_key, config_label
from fmbench.comparison.compare import ComparisonRefused, compare_selected
from fmbench.comparison.evidence import RULE, Configuration, configuration_values
from fmbench.errors import NotFoundError
from fmbench.views import comparison_queries as q
from fmbench.views.blocks import Cell, Column, Row, Table
from fmbench.views.common import retitled
from fmbench.views.comparison_blocks import (
    ComparisonSection,
    compared_section,
    each_section,
    page_verdict,
    refused_section,
)
from fmbench.views.filters import Filters
from fmbench.views.page import Page
from fmbench.views.site import SiteContext


def _by_generation(site: SiteContext) -> dict[int, dict[tuple[Any, ...], dict[str, list[dict[str, Any]]]]]:
    """OS generation -> configuration -> device -> its runs that are evidence, oldest first."""
    def compute() -> dict[int, dict[tuple[Any, ...], dict[str, list[dict[str, Any]]]]]:
        out: dict[int, dict[tuple[Any, ...], dict[str, list[dict[str, Any]]]]] = {}
        for r in q.comparable_runs(site.con):
            if r["os_generation"] is None:
                continue
            out.setdefault(r["os_generation"], {}).setdefault(config_key(r), {}).setdefault(r["hardware_model"], []).append(r)
        return out

    return site.once("device_comparisons", compute)


def device_pairs(site: SiteContext) -> list[tuple[str, str, int]]:
    """(device A, device B, OS generation) for every two devices measured on one generation with one configuration;
    A is the first by hardware model."""
    pairs: list[tuple[str, str, int]] = []
    for generation, configs in sorted(_by_generation(site).items()):
        for devices in configs.values():
            for a, b in itertools.combinations(sorted(devices), 2):
                if (a, b, generation) not in pairs:
                    pairs.append((a, b, generation))
    return sorted(pairs)


def device_comparison_instances(site: SiteContext) -> list[dict[str, Any]]:
    of = site.paths.devices.of
    return [{"device_a": of(a), "device_b": of(b), "generation": str(g)} for a, b, g in device_pairs(site)]


@dataclass(frozen=True)
class DeviceComparisonPage(Page):
    template: ClassVar[str] = "device_comparison.html"
    nav_active: ClassVar[str] = "compare_index"
    device_a: str
    device_b: str
    generation: int
    rule: str
    verdict: str
    """The page's answer, laid out before anything else: its verdicts in one sentence."""
    sections: list[ComparisonSection]


def _section(
    site: SiteContext, config: Configuration, a: str, b: str, generation: int, con: duckdb.DuckDBPyConnection,
) -> ComparisonSection:
    """One configuration, each device on its evidence for a device comparison (its newest build with a publishable
    run of it, :meth:`fmbench.comparison.evidence.EvidenceIndex.newest`); ``con``: the connection to read with (a
    thread's own cursor, see :func:`each_section`)."""
    label = config_label(configuration_values(config))
    key = urls.configuration_anchor(config)
    index = site.evidence()
    side_a, side_b = index.newest(a, config, generation, RULE), index.newest(b, config, generation, RULE)
    assert side_a is not None and side_b is not None
    heading = f"{label}: {a} on {side_a.os_build}, {b} on {side_b.os_build}"
    try:
        cmp = retitled(compare_selected(con, side_a.side, side_b.side, multiplicity="bonferroni",
                                        tolerance=site.tolerance, caches=site.caches), site.scenario_title)
    except ComparisonRefused as exc:
        return refused_section(heading, RULE, key, exc, label)
    return compared_section(site, cmp, heading, label, key, sides=("Device A", "Device B"))


def device_comparison_page(site: SiteContext, filters: Filters, device_a: str, device_b: str, generation: str) -> DeviceComparisonPage:
    a, b = site.paths.devices.named(device_a, "device"), site.paths.devices.named(device_b, "device")
    try:
        gen = int(generation)
    except ValueError:
        raise NotFoundError(f"no OS generation {generation!r}") from None
    configs = _by_generation(site).get(gen, {})
    shared = [(cfg, devices) for cfg, devices in configs.items() if a in devices and b in devices]
    if a == b or not shared:
        raise NotFoundError(f"{a} and {b} were not measured with one configuration on OS {gen}")
    shared.sort(key=lambda item: config_label(item[1][a][0]))
    sections = each_section(
        site, lambda con, cfg: _section(site, cfg, a, b, gen, con), [cfg for cfg, _ in shared]
    )
    name_a, name_b = shared[0][1][a][0]["device_name"], shared[0][1][b][0]["device_name"]
    return DeviceComparisonPage(
        title=f"{name_a} ({a}) and {name_b} ({b}) on OS {gen}",
        device_a=a,
        device_b=b,
        generation=gen,
        rule=RULE,
        verdict=page_verdict(sections),
        sections=sections,
    )


def device_comparisons_table(site: SiteContext) -> Table:
    """The compare index's list of device comparisons."""
    names = {r["hardware_model"]: r["device_name"] for r in q.comparable_runs(site.con)}
    rows = []
    for a, b, g in device_pairs(site):
        configs = [config_label(devices[a][0]) for devices in _by_generation(site)[g].values() if a in devices and b in devices]
        rows.append(Row([
            Cell(f"{names[a]} ({a}) and {names[b]} ({b})", href=site.url(site.paths.device_comparison(a, b, g))),
            f"OS {g}",
            "; ".join(sorted(configs)),
        ], {"device": a}))
    return Table(
        "device-comparisons",
        "Two devices on one OS generation, for every configuration both were measured with (each on its newest build with a publishable run of it)",
        [Column("devices", "Devices"), Column("generation", "OS"), Column("configs", "Configurations")],
        rows,
        "No two devices were measured with one configuration on one OS generation yet.",
    )
