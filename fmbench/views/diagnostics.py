"""Pages only the live server has: watcher diagnostics and error pages."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from fmbench.views.blocks import Column, Row, Table
from fmbench.views.page import Page


@dataclass(frozen=True)
class DiagnosticsPage(Page):
    template: ClassVar[str] = "diagnostics.html"
    watching: str | None
    events: Table


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
class ErrorPage(Page):
    template: ClassVar[str] = "error.html"
    status: int
    message: str


def error_page(status: int, title: str, message: str) -> ErrorPage:
    return ErrorPage(title, status, message)
