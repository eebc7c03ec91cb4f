"""The command line's tables (rich lays them out): columns aligned on screen, wide characters counted as two, no
cell read as markup, wrapped or cut, a newline in a cell escaped."""

from __future__ import annotations

from rich.cells import cell_len

from fmbench.terminal import text_table


def test_columns_line_up_on_screen_with_wide_characters() -> None:
    lines = text_table(["device", "run"], [("設備", "a"), ("iPhone", "b")]).splitlines()
    assert lines[0].startswith("device") and set(lines[1]) <= {"-", " "}
    starts = {cell_len(line[: line.index(run)]) for line, run in zip(lines[2:], "ab", strict=True)}
    assert starts == {cell_len(lines[0][: lines[0].index("run")])}


def test_a_cell_is_never_markup_never_wrapped_and_a_newline_in_it_is_escaped() -> None:
    long = "x" * 300 + ".json"
    lines = text_table(["file", "detail"], [(long, "[bold]bad\nline[/bold]"), (None, "ok")]).splitlines()
    assert len(lines) == 4
    assert long in lines[2] and lines[2].endswith("[bold]bad\\nline[/bold]")
    assert lines[3].strip() == "ok"


def test_an_empty_table_is_its_headers() -> None:
    assert text_table(["a", "b"], []).splitlines()[0] == "a  b"
