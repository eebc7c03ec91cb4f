"""fmbench.toml's footer links and icon: a link is judged as a browser reads it, the icon is a file of the project."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from fmbench.cli import main
from fmbench.project import PROJECT_FILE, ProjectError, parse_config

REFUSED_LINK = r"^fmbench.toml: site.footer_links\[0\].url: "


def _footer(url: str) -> str:
    escaped = "".join(f"\\u{ord(c):04x}" if ord(c) < 0x20 or c in '"\\\x7f' else c for c in url)  # TOML's escapes
    return f'[[site.footer_links]]\nlabel = "x"\nurl = "{escaped}"\n'


@pytest.mark.parametrize(
    "url",
    [
        " javascript:alert(1)",
        "javascript:alert(1) ",
        "\tjavascript:alert(1)",
        "\x00\x1f javascript:alert(1)",
        "java\tscript:alert(1)",
        "java\nscr\ript:alert(1)",
        "JaVaScRiPt:alert(1)",
        "vbscript:msgbox(1)",
        " data:text/html,<script>alert(1)</script>",
        "ms-its:evil.chm::/x.htm",
        "view-source:https://ada.example/",
        "https://ada.example/\x1b]52;c;eA==\x07",
        " ",
    ],
)
def test_a_footer_link_a_browser_would_run_or_cannot_follow_is_refused_naming_the_key(url: str) -> None:
    with pytest.raises(ProjectError, match=REFUSED_LINK):
        parse_config(_footer(url), "fmbench.toml")


@pytest.mark.parametrize(
    ("url", "kept"),
    [
        (" https://ada.example/about ", "https://ada.example/about"),
        ("https://ada.example/a\tb", "https://ada.example/ab"),
        ("mailto:ada@example.org", "mailto:ada@example.org"),
        ("about/", "about/"),
        ("/results/about/", "/results/about/"),
    ],
)
def test_a_web_link_or_a_path_is_kept_as_a_browser_reads_it(url: str, kept: str) -> None:
    assert parse_config(_footer(url), "fmbench.toml").site.footer_links[0].url == kept


def _project(tmp_path: Path) -> Path:
    folder = tmp_path / "results"
    result = CliRunner().invoke(main, ["init", str(folder), "--site-url", "https://ada.example/results/"])
    assert result.exit_code == 0, result.output
    return folder


def _set(folder: Path, old: str, new: str) -> None:
    toml = folder / PROJECT_FILE
    text = toml.read_text(encoding="utf-8")
    assert old in text
    toml.write_text(text.replace(old, new), encoding="utf-8")


def _build(folder: Path) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["--project", str(folder), "build", "-j", "1"], catch_exceptions=False)
    return result.exit_code, result.output


def test_a_footer_link_with_a_leading_space_stops_the_build_in_one_line(tmp_path: Path) -> None:
    folder = _project(tmp_path)
    toml = folder / PROJECT_FILE
    toml.write_text(toml.read_text(encoding="utf-8") + "\n" + _footer(" javascript:alert(document.domain)"), encoding="utf-8")
    code, out = _build(folder)
    assert code == 1 and "Traceback" not in out and len(out.strip().splitlines()) == 1, out
    assert out.startswith("Error: ") and "site.footer_links[0].url: expected an http(s) or mailto: link" in out
    assert not (folder / "_site").exists()


@pytest.mark.parametrize("how", ["relative", "absolute", "symlink"])
def test_a_favicon_outside_the_project_is_refused_and_never_copied(tmp_path: Path, how: str) -> None:
    folder = _project(tmp_path)
    outside = tmp_path / "secret.svg"
    outside.write_text("<svg xmlns='http://www.w3.org/2000/svg'><!-- not the project's --></svg>", encoding="utf-8")
    if how == "relative":
        named = "../secret.svg"
    elif how == "absolute":
        named = str(outside)
    else:
        os.symlink(outside, folder / "icon.svg")
        named = "icon.svg"
    _set(folder, 'favicon = ""', f'favicon = "{named}"')
    code, out = _build(folder)
    assert code == 1 and "Traceback" not in out and len(out.strip().splitlines()) == 1, out
    assert out.startswith("Error: ") and "site.favicon: " in out and "is outside the project folder" in out
    copied = [p for p in folder.rglob("*") if p.is_file() and not p.is_symlink() and "not the project's" in p.read_text("utf-8", "replace")]
    assert copied == [] and not (folder / "_site").exists()


def test_a_favicon_inside_the_project_still_builds(tmp_path: Path) -> None:
    folder = _project(tmp_path)
    (folder / "art").mkdir()
    (folder / "art" / "icon.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'/>", encoding="utf-8")
    os.symlink(folder / "art" / "icon.svg", folder / "icon.svg")  # a link that stays inside is fine
    _set(folder, 'favicon = ""', 'favicon = "icon.svg"')
    code, out = _build(folder)
    assert code == 0, out
    assert (folder / "_site" / "assets" / "favicon.svg").read_text(encoding="utf-8").startswith("<svg")
