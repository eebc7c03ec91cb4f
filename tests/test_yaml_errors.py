"""A YAML syntax error in a project's revisions.yaml is shown as a compiler shows one: a line naming the file, the
place and the problem, then the lines at the place with a caret under the column; never a literal ``\\n``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from fmbench.analysis.revisions import parse_registry
from fmbench.errors import RegistryError, source_excerpt


def test_an_excerpt_numbers_each_line_and_puts_a_caret_under_the_column() -> None:
    text = "a: 1\nb: [2\nc: 3\n"
    assert source_excerpt(text, [(1, 3), (9, 0)]).splitlines() == [
        "   2 | b: [2", "     |    ^", "  10 | ", "     | ^",
    ]


def test_a_registry_that_is_not_yaml_names_the_place_and_keeps_the_lines_as_its_excerpt() -> None:
    with pytest.raises(RegistryError) as caught:
        parse_registry('format: 1\nrevisions:\n  - id: "x\n    date: [\n', "revisions.yaml")
    assert str(caught.value) == (
        "revisions.yaml: not valid YAML at line 5, column 1: found unexpected end of stream "
        "(while scanning a quoted scalar at line 3, column 9)"
    )
    assert caught.value.excerpt.splitlines()[:2] == ['  3 |   - id: "x', "    |         ^"]


def test_build_prints_the_error_then_the_lines_with_a_caret(tmp_path: Path) -> None:
    def fmbench(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-P", "-m", "fmbench", *args], cwd=tmp_path / "p", capture_output=True,
                              text=True, check=False, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}, timeout=300)

    (tmp_path / "p").mkdir()
    assert fmbench("init", ".").returncode == 0
    (tmp_path / "p" / "revisions.yaml").write_text("format: 1\nrevisions:\n  - id: \x1b[31mx: [\n", encoding="utf-8")
    done = fmbench("build")
    assert done.returncode == 1
    lines = [line for line in done.stderr.splitlines() if not line.startswith("warning: ")]
    assert lines[0].startswith(f"Error: {tmp_path / 'p' / 'revisions.yaml'}: not valid YAML at line ")
    assert "\\n" not in done.stderr
    assert "\x1b" not in done.stderr  # the file's escape sequence is shown escaped, never acted on
    assert lines[1] == "  3 |   - id: \\u001b[31mx: [", lines
    assert lines[2] == "    |         ^", lines
