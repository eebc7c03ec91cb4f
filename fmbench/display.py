"""How a figure reads: one formatter per kind of number, shared by every output.

``None`` means "not recorded" and is never rendered as 0; callers decide how
absence looks (the site shows a "not recorded" marker, Markdown the words).
"""

from __future__ import annotations

from datetime import datetime

NOT_RECORDED = "not recorded"


def percent(value: float | None, digits: int = 1) -> str | None:
    return None if value is None else f"{value * 100:.{digits}f}%"


def seconds(value: float | None, digits: int = 3, space: bool = True) -> str | None:
    return None if value is None else f"{value:.{digits}f}{' ' if space else ''}s"


def rate(value: float | None, digits: int = 2) -> str | None:
    """Tokens (or characters) per second."""
    return None if value is None else f"{value:.{digits}f}"


def mebibytes(value: float | None) -> str | None:
    return None if value is None else f"{value / 2**20:,.0f} MiB"


def gigabytes(value: int | None) -> str | None:
    return None if value is None else f"{value / 2**30:.0f} GB"


def count(value: int | None) -> str | None:
    return None if value is None else f"{value:,}"


def iso(value: datetime | None) -> str | None:
    return None if value is None else value.strftime("%Y-%m-%dT%H:%M:%SZ")


def yes_no(value: bool | None, yes: str = "yes", no: str = "no") -> str | None:
    return None if value is None else (yes if value else no)


def or_not_recorded(text: str | None) -> str:
    return NOT_RECORDED if text is None else text
