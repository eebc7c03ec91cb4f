"""Home's answers: per workload, the fastest publishable device(s) on-device, with ties said, and the Private Cloud
Compute figures apart.

The answers are read off the leaderboards (:mod:`fmbench.views.leaderboards`), so home and a board never disagree:
the same evidence (:mod:`fmbench.comparison.evidence`), the same ranking figure (the workload's headline figure of
the catalog) and the same ties (:func:`fmbench.analysis.ranking.rank`). Of a workload's on-device boards with a
ranked device, home names the one with the most ranked devices (the first in the leaderboard's order among equals)
and says how many other configurations have a board. PCC's figures are listed per device in name order, never
ranked and never beside the on-device ones in one list: the service's figures include the network and the server.
The PCC page's two routes (:mod:`fmbench.views.pcc_routes`) read the same boards and cells
(:func:`workload_boards`, :func:`board_cell`, :func:`in_name_order`).
"""

from __future__ import annotations

from dataclasses import dataclass

from fmbench.views import leaderboards
from fmbench.views.blocks import Cell
from fmbench.views.site import SiteContext


@dataclass(frozen=True)
class Answer:
    """One workload's answer."""

    workload: Cell
    """The workload's name, linking to its leaderboard."""
    by: str
    """The figure the devices are ranked by, in words (``median TTFT``)."""
    fastest: list[Cell]
    """The device(s) in first place on-device, each with its value, linking to its device page; more than one:
    tied (the runs cannot tell them apart). Empty: no on-device board ranks a device."""
    board: Cell | None
    """The configuration of the board the fastest are read from, linking to that board."""
    others: int
    """How many other on-device configurations of the workload have a ranked device (on the leaderboard)."""
    pcc: list[Cell]
    """Each device's figure through Private Cloud Compute, in name order (never ranked), linking to its device."""
    pcc_board: Cell | None
    """The PCC board those figures are read from, linking to it (``None``: no PCC board ranks a device)."""

    @property
    def tied(self) -> bool:
        return len(self.fastest) > 1


def main_board(boards: list[leaderboards.Board]) -> tuple[leaderboards.Board | None, int]:
    """The board with the most ranked devices (the first among equals), and how many other boards rank one."""
    ranked = [b for b in boards if b.has_ranked]
    if not ranked:
        return None, 0
    best = max(ranked, key=lambda b: sum(p.rank is not None for p in b.placed))
    return best, len(ranked) - 1


@dataclass(frozen=True)
class WorkloadBoards:
    """One workload's main board of each route (:func:`main_board`), with at least one of them."""

    scenario_id: str
    title: str
    """The workload's one name on every page."""
    on_device: leaderboards.Board | None
    others: int
    """How many other on-device boards of the workload rank a device."""
    pcc: leaderboards.Board | None

    @property
    def shown(self) -> leaderboards.Board:
        """The board the workload is named after: the on-device one, else PCC's."""
        board = self.on_device or self.pcc
        assert board is not None
        return board

    def cell(self, site: SiteContext) -> Cell:
        """The workload's name, linking to its leaderboard."""
        return Cell(self.title, href=site.url(site.paths.leaderboard(self.scenario_id)), title=self.scenario_id)


def workload_boards(site: SiteContext) -> list[WorkloadBoards]:
    """Every workload with a ranked device on-device or through PCC, in the leaderboards' order, with each route's
    main board."""
    on_device, pcc = leaderboards.every_board(site)
    out = []
    for scenario_id in dict.fromkeys(b.scenario_id for b in (*on_device, *pcc)):
        local, others = main_board([b for b in on_device if b.scenario_id == scenario_id])
        service, _ = main_board([b for b in pcc if b.scenario_id == scenario_id])
        shown = local or service
        if shown is None:
            continue
        title = site.scenario_title(scenario_id, shown.scenario_title)
        out.append(WorkloadBoards(scenario_id, title, local, others, service))
    return out


def board_cell(site: SiteContext, board: leaderboards.Board) -> Cell:
    """The board's configuration, linking to the board on its leaderboard."""
    return Cell(board.configuration, href=site.url(site.paths.leaderboard(board.scenario_id)) + f"#{board.anchor}")


def in_name_order(board: leaderboards.Board | None) -> list[leaderboards.BoardEntry]:
    """The board's ranked devices in name order (never ranked across routes); none without a board."""
    if board is None:
        return []
    return sorted((p.item for p in board.placed if p.rank is not None), key=lambda e: e.label)


def _value(board: leaderboards.Board, entry: leaderboards.BoardEntry) -> str:
    """The entry's ranking figure as its board shows it, a rate with its unit (``40.02 tokens/s``)."""
    shown = board.by.format(entry.values[board.by.key])
    if shown is None:
        return "not recorded"
    return f"{shown} {board.by.unit}" if board.by.unit in ("tokens/s", "chars/s") else shown


def _device(site: SiteContext, board: leaderboards.Board, entry: leaderboards.BoardEntry) -> Cell:
    return Cell(f"{entry.label}: {_value(board, entry)}", href=site.url(site.paths.device(entry.key)))


def answers(site: SiteContext) -> list[Answer]:
    """Every workload with a ranked device on-device or through PCC, in the leaderboards' order."""
    out = []
    for w in workload_boards(site):
        local, service = w.on_device, w.pcc
        out.append(Answer(
            workload=w.cell(site),
            by=w.shown.ranked_by,
            fastest=[_device(site, local, p.item) for p in local.placed if p.rank == 1] if local else [],
            board=board_cell(site, local) if local else None,
            others=w.others,
            pcc=[_device(site, service, e) for e in in_name_order(service)] if service else [],
            pcc_board=board_cell(site, service) if service else None,
        ))
    return out
