"""Pages only the live server has: watcher diagnostics and error pages."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fmbench.blocks import Column, Row, Table


@dataclass(frozen=True)
class DiagnosticsPage:
    title: str
    watching: str | None
    events: Table
    nav_active: str = ""
    uses_charts: bool = False


def diagnostics_page(url: Any, diagnostics: Any, watching: str | None) -> DiagnosticsPage:
    events = diagnostics.snapshot()
    return DiagnosticsPage(
        "Diagnostics",
        watching,
        Table(
            "watch-events",
            "What the folder watcher ingested or could not, newest first",
            [Column("time", "Time"), Column("status", "Status"), Column("file", "File"), Column("message", "Message")],
            [Row([e["time"], e["status"], e["file"], e["message"]]) for e in events],
            "Nothing yet." if watching else "No folder is watched (start with --watch DIR).",
        ),
    )


@dataclass(frozen=True)
class ErrorPage:
    title: str
    status: int
    message: str
    nav_active: str = ""
    uses_charts: bool = False


def error_page(status: int, title: str, message: str) -> ErrorPage:
    return ErrorPage(title, status, message)
