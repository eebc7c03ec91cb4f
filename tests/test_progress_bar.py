"""The ingest's progress bar fits an 80-column terminal: the count is never squeezed, the file name is cut with an
ellipsis, and a name is never read as markup."""

from __future__ import annotations

import io

from rich.console import Console

from fmbench.terminal import progress_bar

NAME = "iphone-17-pro-ios27-24a5264n-on-device-performance-2026-11-03.json"


def drawn(width: int, name: str = NAME, done: int = 41, total: int = 1000) -> str:
    out = io.StringIO()
    console = Console(file=out, width=width, force_terminal=True, color_system=None)
    bar = progress_bar("ingesting", console)
    task = bar.add_task("", total=None)
    bar.update(task, completed=done, total=total, description=name)
    console.print(bar.make_tasks_table(bar.tasks))
    return out.getvalue().rstrip("\n")


def test_at_80_columns_the_bar_shows_the_whole_count_and_cuts_the_name_with_an_ellipsis() -> None:
    line = drawn(80)
    assert "\n" not in line and len(line) <= 80
    assert line.startswith("ingesting ")
    assert " 41/1000 " in line
    assert line.endswith("…") and NAME[:20] in line


def test_a_short_name_is_shown_whole_and_a_long_one_in_32_columns_whatever_the_width() -> None:
    assert drawn(200, name="a-run.json").endswith(" a-run.json")
    assert drawn(200).endswith(f" {NAME[:31]}…")


def test_a_file_name_is_never_read_as_markup() -> None:
    assert "[bold]x.json" in drawn(120, name="[bold]x.json")
