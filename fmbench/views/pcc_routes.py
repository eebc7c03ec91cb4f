"""On-device and Private Cloud Compute side by side, per workload: the two routes' figures in two columns.

Each column is read off the workload's leaderboards (:mod:`fmbench.views.leaderboards`): of each route, the board with
the most ranked devices (:func:`fmbench.views.home_answers.workload_boards`), its devices' median TTFT and median output
tokens/s as the board shows them. The columns are never merged: no shared axis, ranking or "fastest" across routes,
since PCC's figures include the network and the server. Within a column the devices are in name order, not ranked.
"""

from __future__ import annotations

from dataclasses import dataclass

from fmbench.analysis import figure_catalog as fc
from fmbench.views import leaderboards
from fmbench.views.blocks import Cell, Column, Row, Table
from fmbench.views.home_answers import board_cell, in_name_order, workload_boards
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
            for e in in_name_order(board)
        ],
        "No publishable run of this workload on this route yet.",
    )
    return RouteColumn(route, board_cell(site, board) if board else None, table)


def route_pairs(site: SiteContext) -> list[RoutePair]:
    """Every workload with a ranked device on some route, in the leaderboards' order, its two columns."""
    out = []
    for w in workload_boards(site):
        anchor = f"routes-{site.paths.scenarios.of(w.scenario_id)}"
        out.append(RoutePair(
            w.cell(site),
            anchor,
            _column(site, w.title, "On-device", f"{anchor}-on-device", w.on_device),
            _column(site, w.title, "Private Cloud Compute", f"{anchor}-pcc", w.pcc),
        ))
    return out
