"""Device names that differ only where a reader cannot see are one device, or shown and flagged as different.

The runs are real files: a fixture run written again under five device names
(a plain one, one with a zero-width space, one with a Cyrillic look-alike, one
in decomposed form (NFD) beside its composed twin, one with a right-to-left
override) and no hardware model, so the name is the device's key. They are
ingested, listed by ``fmbench runs`` and built by ``fmbench build``.
"""

from __future__ import annotations

import json
import re
import unicodedata
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner

from fmbench import urls
from fmbench.cli import main
from fmbench.runfile.names import from_visible, name_findings, normalized, visible

from testdata import FIXTURES

SOURCE = FIXTURES / "macbook-pro-m5-macos27-26a5378f-on-device-performance-2026-11-04.json"
NAMES = {
    "plain": "MacBook Pro M5",
    "zero-width": "MacBook Pro\u200b M5",
    "cyrillic": "MacBook \u0420ro M5",  # CYRILLIC CAPITAL LETTER ER for the P
    "composed": "Café Mac",
    "decomposed": unicodedata.normalize("NFD", "Café Mac"),
    "override": "MacBook Pro M5\u202e",
}


def _page_text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).replace("&lt;", "<").replace("&gt;", ">")


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, str]:
    """The five names' runs ingested into a database, and the site built from it (with the build's output)."""
    root = tmp_path_factory.mktemp("names")
    runs = root / "runs"
    runs.mkdir()
    document = json.loads(SOURCE.read_bytes())
    del document["environment"]["hardwareModel"]
    for key, name in NAMES.items():
        document["environment"]["deviceName"] = name
        (runs / f"{key}.json").write_text(json.dumps(document, indent=2, ensure_ascii=False), encoding="utf-8")
    db = root / "names.duckdb"
    ingested = CliRunner().invoke(main, ["ingest", "--db", str(db), str(runs)])
    assert ingested.exit_code == 0, ingested.output
    assert "6 ingested" in ingested.output
    built = CliRunner().invoke(main, ["build", "--db", str(db), "--out", str(root / "site")])
    assert built.exit_code == 0, built.output
    return db, root / "site", built.output


def test_a_decomposed_name_is_stored_composed_and_names_one_device(project: tuple[Path, Path, str]) -> None:
    with duckdb.connect(str(project[0]), read_only=True) as con:
        rows = con.execute("SELECT file_name, device_name FROM runs ORDER BY file_name").fetchall()
        devices = con.execute("SELECT count(DISTINCT coalesce(hardware_model, device_name)) FROM runs").fetchone()
        notes = con.execute(
            "SELECT r.file_name, f.message FROM run_flags f JOIN runs r USING (run_id) "
            "WHERE f.location = 'environment.deviceName' AND f.message LIKE 'not in composed form%'"
        ).fetchall()
    stored = dict(rows)
    assert stored["decomposed.json"] == stored["composed.json"] == "Café Mac"
    assert unicodedata.is_normalized("NFC", stored["decomposed.json"])
    assert devices == (5,)
    assert [file for file, _ in notes] == ["decomposed.json"]  # the one written decomposed says so
    assert stored["zero-width.json"] == "MacBook Pro<U+200B> M5"
    assert stored["override.json"] == "MacBook Pro M5<U+202E>"


def test_fmbench_runs_shows_invisible_characters_as_code_points(project: tuple[Path, Path, str]) -> None:
    for args in ([], ["--json"]):
        result = CliRunner().invoke(main, ["runs", "--db", str(project[0]), *args])
        assert result.exit_code == 0, result.output
        assert "\u200b" not in result.output and "\u202e" not in result.output
        assert "MacBook Pro<U+200B> M5" in result.output
        assert "MacBook Pro M5<U+202E>" in result.output


def test_the_devices_index_labels_every_device_differently(project: tuple[Path, Path, str]) -> None:
    html = (project[1] / urls.devices().lstrip("/") / "index.html").read_text(encoding="utf-8")
    assert "\u200b" not in html and "\u202e" not in html
    text = _page_text(html)
    for shown in ("MacBook Pro<U+200B> M5", "MacBook Pro M5<U+202E>", "MacBook \u0420ro M5", "Café Mac"):
        assert shown in text
    assert unicodedata.normalize("NFD", "Café Mac") not in html


def _run_page(project: tuple[Path, Path, str], file_name: str) -> str:
    with duckdb.connect(str(project[0]), read_only=True) as con:
        row = con.execute("SELECT run_id FROM runs WHERE file_name = ?", [file_name]).fetchone()
    assert row is not None
    return _page_text((project[1] / urls.run(row[0]).lstrip("/") / "index.html").read_text(encoding="utf-8"))


def test_a_look_alike_name_is_flagged_on_its_run_page(project: tuple[Path, Path, str]) -> None:
    page = _run_page(project, "cyrillic.json")
    assert ("environment.deviceName: the name “MacBook \u0420ro M5” mixes Latin and Cyrillic letters, and "
            "“\u0420” (Cyrillic) looks like Latin “P”") in page
    hidden = _run_page(project, "zero-width.json")
    assert "environment.deviceName: the name “MacBook Pro<U+200B> M5” holds an invisible or bidirectional " \
           "character (U+200B ZERO WIDTH SPACE)" in hidden
    assert "environment.deviceName" not in _run_page(project, "plain.json")


def test_the_build_summary_names_each_look_alike_and_its_file(project: tuple[Path, Path, str]) -> None:
    lines = [line for line in project[2].splitlines() if line.startswith("look-alike name: ")]
    assert len(lines) == 3, project[2]
    assert any("cyrillic.json: device name: the name “MacBook \u0420ro M5” mixes Latin and Cyrillic" in line
               for line in lines)
    assert any("zero-width.json: device name: the name “MacBook Pro<U+200B> M5” holds" in line for line in lines)
    assert any("override.json: device name: the name “MacBook Pro M5<U+202E>” holds" in line for line in lines)
    assert "\u202e" not in project[2] and "\u200b" not in project[2]


@pytest.mark.parametrize(
    "name",
    ["MacBook Pro M5", "iPhone 17 Pro", "Mac17,2", "山田のiPhone", "홍길동의 iPad", "Мой Мак", "Ωmega Mac", "Café Mac"],
)
def test_a_plain_name_in_any_script_is_not_flagged(name: str) -> None:
    assert name_findings(normalized(name)) == []
    assert visible(name) == name


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("Mac\u200bBook", "Mac<U+200B>Book"),
        ("Mac\u2060Book", "Mac<U+2060>Book"),
        ("MacBook\u00a0Pro", "MacBook<U+00A0>Pro"),
        ("\ufeffMacBook", "<U+FEFF>MacBook"),
        ("Mac\u2067Book\u2069", "Mac<U+2067>Book<U+2069>"),
        ("Mac\u3164Book", "Mac<U+3164>Book"),
        ("Mac\U000e0041Book", "Mac<U+E0041>Book"),
    ],
)
def test_each_invisible_character_is_shown_as_its_code_point_and_read_back(name: str, shown: str) -> None:
    assert visible(name) == shown
    assert from_visible(shown) == name
    assert len(name_findings(name)) == 1


def test_a_name_written_wholly_in_look_alike_letters_is_flagged() -> None:
    (finding,) = name_findings("\u041c\u0430\u0441\u0412\u043e\u043e\u043a")  # МасВоок, all Cyrillic
    assert "is written in Cyrillic letters that each look like a Latin one" in finding


def test_summarize_shows_a_files_hidden_characters(tmp_path: Path) -> None:
    document = json.loads(SOURCE.read_bytes())
    document["environment"]["deviceName"] = NAMES["zero-width"]
    run = tmp_path / "zero-width.json"
    run.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    for command in ("summarize", "validate"):
        result = CliRunner().invoke(main, [command, str(run)])
        assert result.exit_code == 0, result.output
        assert "\u200b" not in result.output and "MacBook Pro<U+200B> M5" in result.output


def test_a_host_name_reason_shows_the_names_hidden_characters(tmp_path: Path) -> None:
    document = json.loads(SOURCE.read_bytes())
    document["environment"]["deviceName"] = "Jane's\u200b MacBook"
    run = tmp_path / "janes.json"
    run.write_text(json.dumps(document, ensure_ascii=False), encoding="utf-8")
    result = CliRunner().invoke(main, ["validate", "--json", str(run)])
    assert result.exit_code == 0, result.output
    (judged,) = json.loads(result.output)
    (reason,) = [r for r in judged["reasons"] if r["code"] == "host-name"]
    assert "“Jane's<U+200B> MacBook”" in reason["message"] and "\u200b" not in reason["message"]
