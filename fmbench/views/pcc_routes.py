"""On-device and Private Cloud Compute side by side, per workload: the two routes' figures in two columns.

Each column is read off the workload's leaderboards (:mod:`fmbench.views.leaderboards`): of each route, the board with
the most ranked devices (:func:`fmbench.views.home_answers.main_board`), its devices' median TTFT and median output
tokens/s as the board shows them. The columns are never merged: no shared axis, ranking or "fastest" across routes,
since PCC's figures include the network and the server. Within a column the devices are in name order, not ranked.
"""

from __future__ import annotations

from dataclasses import dataclass

from fmbench.analysis import figure_catalog as fc
from fmbench.views import leaderboards
from fmbench.views.blocks import Cell, Column, Row, Table
from fmbench.views.home_answers import main_board
from fmbench.views.site import SiteContext

SHOWN = ("ttft_median", "tps_median")
"""The figures of each column: the speed a reader weighs between the routes."""
CAVEAT = ("Private Cloud Compute's figures include the network and the server, on-device ones the device alone: "
          "read the two columns apart, never as one ranking or one fastest.")


@dataclass(frozen=True)
class RouteColumn:
    route: str
    """``On-device`` or ``Private Cloud Compute``."""
    board: Cell | None
    """The configuration the column is read from, linking to its board (``None``: no publishable run ranks a device)."""
    figures: Table


@dataclass(frozen=True)
class RoutePair:
    """One workload's two routes."""

    workload: Cell
    anchor: str
    on_device: RouteColumn
    pcc: RouteColumn


def _column(site: SiteContext, title: str, route: str, anchor: str, board: leaderboards.Board | None) -> RouteColumn:
    figures = [fc.CATALOG[k] for k in SHOWN]
    entries = sorted((p.item for p in board.placed if p.rank is not None), key=lambda e: e.label) if board else []
    table = Table(
        anchor,
        f"{title}, {route}: devices in name order, not ranked",
        [Column("device", "Device"), *(Column(f.key, f.label, True) for f in figures)],
        [
            Row([
                Cell(e.label, href=site.url(site.paths.device(e.key))),
                *(Cell(f.format(e.values[f.key]), sort=e.values[f.key], reason="not recorded by these runs' trials")
                  for f in figures),
            ])
            for e in entries
        ],
        "No publishable run of this workload on this route yet.",
    )
    link = Cell(board.configuration, href=site.url(site.paths.leaderboard(board.scenario_id)) + f"#{board.anchor}") \
        if board else None
    return RouteColumn(route, link, table)


def route_pairs(site: SiteContext) -> list[RoutePair]:
    """Every workload with a ranked device on some route, in the leaderboards' order, its two columns."""
    on_device, pcc = leaderboards.every_board(site)
    out = []
    for scenario_id in dict.fromkeys(b.scenario_id for b in (*on_device, *pcc)):
        local, _ = main_board([b for b in on_device if b.scenario_id == scenario_id])
        service, _ = main_board([b for b in pcc if b.scenario_id == scenario_id])
        if local is None and service is None:
            continue
        shown = local or service
        assert shown is not None
        anchor = f"routes-{site.paths.scenarios.of(scenario_id)}"
        title = site.scenario_title(scenario_id, shown.scenario_title)
        out.append(RoutePair(
            Cell(title, href=site.url(site.paths.leaderboard(scenario_id)), title=scenario_id),
            anchor,
            _column(site, title, "On-device", f"{anchor}-on-device", local),
            _column(site, title, "Private Cloud Compute", f"{anchor}-pcc", service),
        ))
    return out
