"""What the command line prints from a run: a terminal shows its control characters, never acts on them."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from fmbench.analysis.display import terminal_text, terminal_value
from fmbench.cli import main
from fmbench.runfile.names import visible

from testdata import RUNS

CLIPBOARD_WRITE = "\x1b]52;c;ZWNobyBwd25lZA==\x07"
"""OSC 52: a terminal that honours it puts the base64 text on the clipboard."""
FORGED_ROW = "\nforged-run  iPhone  iPhone18,1  24A5264n  onDevice  quick  2026-01-01 00:00  r1 (exact)  publishable"
HOSTILE_DEVICE = f"iPhone {CLIPBOARD_WRITE}\x9b31m\u202eorp 71\u2066[bold red]markup[/]\x7f{FORGED_ROW}"

RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
"""Characters a terminal would act on (line breaks and tabs apart)."""


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.output


@pytest.fixture
def hostile_run(tmp_path: Path) -> Path:
    data = json.loads((RUNS / "purpose-current.json").read_text(encoding="utf-8"))
    data["environment"]["deviceName"] = HOSTILE_DEVICE
    path = tmp_path / "hostile-device.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_a_value_is_shown_on_one_line_with_every_control_character_escaped() -> None:
    shown = terminal_value(HOSTILE_DEVICE)
    assert RAW.findall(shown) == [] and "\n" not in shown and "\t" not in terminal_value("a\tb")
    assert "\\u001b]52;c;ZWNobyBwd25lZA==\\u0007" in shown
    assert "\\u009b31m<U+202E>orp 71<U+2066>" in shown and "\\u007f\\nforged-run" in shown
    # The escapes are JSON's: escaped text inside a JSON string reads back as the same value.
    assert json.loads(terminal_text(json.dumps({"d": HOSTILE_DEVICE}, ensure_ascii=False)))["d"] == HOSTILE_DEVICE


def test_runs_prints_a_hostile_device_name_escaped_on_its_own_row(hostile_run: Path, tmp_path: Path) -> None:
    db = tmp_path / "x.duckdb"
    assert invoke("ingest", str(hostile_run), "--db", str(db))[0] == 0
    code, out = invoke("runs", "--db", str(db))
    assert code == 0
    assert RAW.findall(out) == []
    lines = out.splitlines()
    assert len(lines) == 4, lines  # header, rule, the one run, the count
    # the database holds the name as shown (fmbench.runfile.names.visible): every hidden character as <U+XXXX>
    assert lines[-1] == "1 run(s)" and "<U+000A>forged-run" in lines[2] and lines[2].rstrip().endswith("exploratory")
    assert "[bold red]markup[/]" in lines[2]  # shown as written, never read as markup
    code, listed = invoke("runs", "--db", str(db), "--json")
    assert code == 0 and RAW.findall(listed) == []
    assert json.loads(listed)[0]["device_name"] == visible(HOSTILE_DEVICE)


def test_summarize_validate_and_verify_print_a_hostile_device_name_escaped(hostile_run: Path, tmp_path: Path) -> None:
    code, out = invoke("summarize", str(hostile_run))
    assert code == 0 and RAW.findall(out) == []
    assert not [line for line in out.splitlines() if line.startswith("forged-run")]
    device_line = out.splitlines()[1]
    assert "\\u001b]52" in device_line and "\\nforged-run" in device_line
    code, out = invoke("summarize", str(hostile_run), "--json")
    assert code == 0 and RAW.findall(out) == []
    assert json.loads(out)["run"]["deviceName"] == HOSTILE_DEVICE
    code, out = invoke("validate", str(hostile_run))
    assert code == 0 and RAW.findall(out) == []
    db = tmp_path / "x.duckdb"
    assert invoke("ingest", str(hostile_run), "--db", str(db))[0] == 0
    code, out = invoke("verify", "--db", str(db))
    assert code == 0 and RAW.findall(out) == []


def test_compare_prints_a_hostile_device_name_escaped_on_its_side_line(hostile_run: Path, tmp_path: Path) -> None:
    other = tmp_path / "candidate.json"  # the same run, one second later: another run of the same device
    data = json.loads(hostile_run.read_text(encoding="utf-8"))
    data["startedAt"] = data["startedAt"].replace(":00Z", ":01Z") if data["startedAt"].endswith(":00Z") else data["startedAt"]
    other.write_text(json.dumps(data, indent=1), encoding="utf-8")
    for fmt in ((), ("--markdown",)):
        code, out = invoke("compare", str(hostile_run), str(other), *fmt)
        assert code == 0, out
        assert RAW.findall(out) == []
        assert not [line for line in out.splitlines() if line.startswith("forged-run")]
        assert "U+001B>]52" in out and "U+000A>forged-run" in out  # as the database shows it (Markdown: &lt;U+...)


def test_a_project_build_names_a_run_file_with_a_line_break_on_one_line(hostile_run: Path, tmp_path: Path) -> None:
    from fmbench.scaffold import init_project

    project = init_project(tmp_path / "results", title="Odd names").root
    (project / "runs" / "run\ningested forged.json").write_bytes(hostile_run.read_bytes())
    code, out = invoke("build", "--project", str(project))
    assert code == 0, out
    assert RAW.findall(out) == []
    assert not [line for line in out.splitlines() if line.startswith("ingested forged.json")]
    assert "ingested run\\ningested forged.json" in out


def test_an_error_naming_a_hostile_file_name_is_one_escaped_line(tmp_path: Path) -> None:
    path = tmp_path / f"run {CLIPBOARD_WRITE}\u202e\nError: forged.json"
    path.write_text("{ not json", encoding="utf-8")
    code, out = invoke("summarize", str(path))
    assert code == 1
    assert RAW.findall(out) == [] and len(out.strip().splitlines()) == 1, out
    assert out.startswith("Error: ") and "\\u001b]52;c;" in out and "\\nError: forged.json" in out
    code, out = invoke("validate", str(path))
    assert code == 1 and RAW.findall(out) == []
    assert not [line for line in out.splitlines() if line.startswith("Error: forged")]


def test_the_progress_bar_on_a_terminal_shows_a_file_name_as_text_never_as_markup_or_escapes(tmp_path: Path) -> None:
    """``fmbench ingest`` with its stderr on a real pseudo-terminal, where rich draws its progress bar."""
    pty = pytest.importorskip("pty")
    import os
    import select
    import subprocess
    import sys

    runs = tmp_path / "runs"
    runs.mkdir()
    name = f"[bold red]x{CLIPBOARD_WRITE}.json"
    (runs / name).write_bytes((RUNS / "purpose-current.json").read_bytes())
    leader, follower = pty.openpty()
    exe = str(Path(sys.executable).parent / "fmbench")
    with subprocess.Popen(
        [exe, "ingest", str(runs), "--db", str(tmp_path / "x.duckdb")],
        stdout=subprocess.PIPE, stderr=follower, env={**os.environ, "COLUMNS": "200"},
    ) as process:
        os.close(follower)
        shown = b""
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if select.select([leader], [], [], 0.2)[0]:
                try:
                    chunk = os.read(leader, 65536)
                except OSError:  # the process closed the terminal
                    break
                if not chunk:
                    break
                shown += chunk
            elif process.poll() is not None:
                break
        assert process.stdout is not None
        printed = process.stdout.read().decode("utf-8")
    os.close(leader)
    assert process.returncode == 0
    bar = shown.decode("utf-8", "replace")
    assert "ingesting" in bar  # the bar was drawn (with rich's own colours)
    assert "[bold red]x\\u001b]52;c;" in bar and "\x1b]52" not in bar and "\x07" not in bar
    assert "[bold red]x\\u001b]52;c;" in printed and RAW.findall(printed) == []


def test_the_native_commands_print_hostile_artifact_text_escaped_one_row_per_sample(tmp_path: Path) -> None:
    from testdata import REPO

    doc = json.loads((REPO / "tests" / "native" / "data" / "baseline.xcevalresult").read_text(encoding="utf-8"))
    first = json.loads(doc["results"][0]["Input"])
    first["recordID"] = f"T-1 {CLIPBOARD_WRITE}\u202e\nbaseline.xcevalresult #9 FORGED"
    doc["results"][0]["Input"] = json.dumps(first)
    doc["evaluationInfo"]["Model"] = f"onDevice{CLIPBOARD_WRITE}\n  info         Forged: yes"
    path = tmp_path / "hostile.xcevalresult"
    path.write_text(json.dumps(doc), encoding="utf-8")
    code, out = invoke("native", "samples", str(path))
    assert code == 0 and RAW.findall(out) == []
    assert len(out.splitlines()) == len(doc["results"]) and "FORGED" in out.splitlines()[0]
    for command in ("inspect", "report"):
        code, out = invoke("native", command, str(path))
        assert code == 0 and RAW.findall(out) == [], command
        assert not [line for line in out.splitlines() if "Forged: yes" in line and "\\n" not in line], command
        assert not [line for line in out.splitlines() if line.startswith("baseline.xcevalresult #9")], command


INVISIBLE = "\u200b\u202e\u2066\u00a0\ufeff\U000e0041"
"""A zero-width space, a right-to-left override, an isolate, a no-break space, a byte order mark, a tag letter."""


def test_a_value_shows_invisible_and_bidi_characters_as_code_points_and_text_as_json_escapes() -> None:
    assert terminal_value(f"Mac{INVISIBLE}Book") == "Mac<U+200B><U+202E><U+2066><U+00A0><U+FEFF><U+E0041>Book"
    assert terminal_value("Café 東京 😀") == "Café 東京 😀"  # what shows stays as it is
    text = terminal_text(json.dumps({"d": f"a{INVISIBLE}b"}, ensure_ascii=False))
    # composed output keeps a no-break space (locales put one in numbers: "66,7\u00a0%"), escapes the rest
    assert json.loads(text)["d"] == f"a{INVISIBLE}b" and not set(text) & (set(INVISIBLE) - {"\u00a0"})
    assert terminal_text("66,7\u00a0% · 1\u202f250") == "66,7\u00a0% · 1\u202f250"
    assert terminal_text("été\n") == "été\n"


def test_summarize_and_an_error_show_invisible_characters_from_a_file_as_code_points(tmp_path: Path) -> None:
    data = json.loads((RUNS / "purpose-current.json").read_text(encoding="utf-8"))
    text = json.dumps(data).replace('"task-capture"', '"task\\u200b-capture\\u202e"')
    path = tmp_path / "invisible.json"
    path.write_text(text, encoding="utf-8")
    code, out = invoke("summarize", str(path))
    assert code == 0, out
    assert "task<U+200B>-capture<U+202E>" in out
    assert not set(out) & set(INVISIBLE), out
    bad = tmp_path / "run\u200b\u202e.json"
    bad.write_text("{ not json", encoding="utf-8")
    code, out = invoke("summarize", str(bad))
    assert code == 1 and "run<U+200B><U+202E>.json" in out and not set(out) & set(INVISIBLE), out
