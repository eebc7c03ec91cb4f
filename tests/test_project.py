"""A publisher's own project: init, its settings, the database mirroring its runs folder, its site, its workflow."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
import yaml
from click.testing import CliRunner

from fmbench import DISTRIBUTION, __version__
from fmbench.cli import main
from fmbench.project import PROJECT_FILE, ProjectError, load_project
from fmbench.views import PAGES, resolve

from testdata import FIXTURES, SHARED_EXAMPLES

TITLE = "Ada's Foundation Models Lab"
FICTIONAL = ("3f0c2a1", "7a41c9e", "81d2b07", "c5e90f3", "d13a6b8", "ffff000")
"""The fixture corpus's invented revisions' commits: never in a publisher's site."""
CURRENT_COMMIT = "a70b856"
"""A public commit of the benchmark's current generation."""

# Two builds of one device (a comparison and a regressions entry) and a June 2026 baseline run.
BASELINE = "iphone-17-pro-ios27-24a5256a-on-device-performance-2026-10-29.json"
CANDIDATE = "iphone-17-pro-ios27-24a5264n-on-device-performance-2026-11-03.json"
JUNE = "iphone-17-pro-ios27-24a5210f-on-device-quick-2026-06-16.json"


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.output


def fmbench(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The installed command, run in a folder as a publisher would."""
    return subprocess.run(
        [sys.executable, "-P", "-m", "fmbench", *args], cwd=cwd, capture_output=True, text=True, check=False,
        env={"PATH": "/usr/bin:/bin", "HOME": str(cwd)},
    )


def copy_run(name: str, runs: Path, as_name: str | None = None) -> Path:
    """A fixture run file as a publisher would have it: the benchmark commit it records is a public one."""
    text = (FIXTURES / name).read_text(encoding="utf-8")
    for commit in FICTIONAL:
        text = text.replace(f'"{commit}"', f'"{CURRENT_COMMIT}"')
    assert not any(c in text for c in FICTIONAL)
    target = runs / (as_name or name)
    target.write_text(text, encoding="utf-8")
    sidecar = FIXTURES / name.replace(".json", ".meta.yaml")
    if sidecar.exists():
        shutil.copyfile(sidecar, target.with_name(target.name.replace(".json", ".meta.yaml")))
    return target


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "results"
    done = fmbench(tmp_path, "init", "results", "--title", TITLE, "--site-url", "https://ada.github.io/results/")
    assert done.returncode == 0, done.stderr
    runs = root / "runs"
    for name in (BASELINE, CANDIDATE):
        copy_run(name, runs)
    shutil.copyfile(FIXTURES / JUNE, runs / JUNE)
    example = SHARED_EXAMPLES / "macbook-pro-m5-macos27-26A5353q-on-device-quick-2026-06-12.json"
    if example.exists():
        shutil.copyfile(example, runs / example.name)
    return root


def site_files(out: Path) -> dict[str, Path]:
    return {p.relative_to(out).as_posix(): p for p in sorted(out.rglob("*")) if p.is_file()}


def stored_runs(db: Path) -> dict[str, str]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return dict(con.execute("SELECT run_id, file_name FROM runs").fetchall())
    finally:
        con.close()


def folder_run_ids(runs: Path) -> set[str]:
    import hashlib

    from fmbench.record import run_id_for

    return {run_id_for(hashlib.sha256(p.read_bytes()).hexdigest()) for p in runs.rglob("*.json")}


# --- init -------------------------------------------------------------------------------------


def test_init_writes_every_file_of_a_project_and_the_settings_read_back(tmp_path: Path) -> None:
    code, out = invoke("init", str(tmp_path / "p"), "--title", TITLE)
    assert code == 0, out
    root = tmp_path / "p"
    for name in (PROJECT_FILE, "revisions.yaml", "methodology.md", "runs/README.md",
                 ".github/workflows/publish.yml", ".gitignore"):
        assert (root / name).is_file(), name
        assert f"wrote {name}" in out
    project = load_project(root)
    assert project.config.site.title == TITLE
    assert project.config.publishing.originals == "gzip"
    change = project.config.publishing.practical_change
    assert (change.latency, change.throughput, change.memory, change.rates) == (0.05, 0.05, 0.05, 5.0)
    toml = (root / PROJECT_FILE).read_text(encoding="utf-8")
    assert re.search(r'^originals = "gzip"$', toml, re.M) and "Reserved" in toml
    ignored = (root / ".gitignore").read_text(encoding="utf-8")
    assert "/fmbench.duckdb" in ignored and "/_site/" in ignored


def test_init_seeds_the_registry_with_the_benchmarks_public_history_only(tmp_path: Path) -> None:
    invoke("init", str(tmp_path / "p"))
    registry = load_project(tmp_path / "p").registry()
    june, current = sorted(registry.revisions, key=lambda r: r.date)
    assert {"1d8d492", "43d5a02"} <= set(june.benchmark_commits) and not june.current
    assert current.current and current.benchmark_commits[0] == "cf13743"
    assert set(current.benchmark_commits) == {
        "cf13743", "abaeb8d", "2f605e4", "e776a8c", "05e6d54", "c1b6298", "60b596e", "1c58cff",
        "4e9fa34", "7bb8e7d", "65e7e9b", "a70b856",
    }
    text = (tmp_path / "p" / "revisions.yaml").read_text(encoding="utf-8")
    assert not any(c in text for c in FICTIONAL)
    assert "fixture_fingerprints" not in text
    assert "add an entry for the new one" in text


def test_init_refuses_a_folder_that_holds_a_project_and_names_it(tmp_path: Path) -> None:
    assert invoke("init", str(tmp_path / "p"))[0] == 0
    before = (tmp_path / "p" / PROJECT_FILE).read_bytes()
    for folder in (tmp_path / "p", tmp_path / "p" / "runs"):
        code, out = invoke("init", str(folder), "--title", "Other")
        assert code == 1
        assert out.count("\n") == 1 and out.startswith("Error: ")
        assert str(tmp_path / "p" / PROJECT_FILE) in out and "already belongs to this fmbench project" in out
    assert (tmp_path / "p" / PROJECT_FILE).read_bytes() == before


def test_init_refuses_to_overwrite_a_file_and_leaves_nothing_half_written(tmp_path: Path) -> None:
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / ".gitignore").write_text("mine\n", encoding="utf-8")
    code, out = invoke("init", str(tmp_path / "p"))
    assert code == 1 and out.count("\n") == 1
    assert ".gitignore: already exists" in out
    assert sorted(p.name for p in (tmp_path / "p").iterdir()) == [".gitignore"]
    (tmp_path / "f").write_text("", encoding="utf-8")
    code, out = invoke("init", str(tmp_path / "f"))
    assert code == 1 and "is a file, not a folder" in out and out.count("\n") == 1


def test_init_takes_the_pages_address_from_a_github_remote() -> None:
    from fmbench.scaffold import github_urls

    assert github_urls("git@github.com:Ada/fm-results.git") == (
        "https://ada.github.io/fm-results/", "https://github.com/Ada/fm-results",
    )
    assert github_urls("https://github.com/ada/ada.github.io") == ("https://ada.github.io/", "https://github.com/ada/ada.github.io")
    assert github_urls("https://gitlab.com/ada/results.git") == ("", "")


# --- the workflow ---------------------------------------------------------------------------


def test_the_generated_workflow_is_valid_and_builds_and_deploys_with_the_pinned_version(tmp_path: Path) -> None:
    invoke("init", str(tmp_path / "p"))
    workflow = tmp_path / "p" / ".github" / "workflows" / "publish.yml"
    checker = Path(sys.executable).parent / "check-jsonschema"
    assert checker.exists(), "check-jsonschema is missing: install the test extra"
    checked = subprocess.run(
        [str(checker), "--builtin-schema", "vendor.github-workflows", str(workflow)],
        capture_output=True, text=True, check=False,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    doc = yaml.safe_load(workflow.read_text(encoding="utf-8"))
    assert doc[True]["push"]["branches"] == ["main"]  # YAML 1.1 reads the key `on` as true
    assert doc["permissions"] == {"contents": "read", "pages": "write", "id-token": "write"}
    assert doc["concurrency"]["group"] == "pages"
    steps = doc["jobs"]["build"]["steps"]
    uses = [s.get("uses", "") for s in [*steps, *doc["jobs"]["deploy"]["steps"]]]
    for action in ("actions/checkout", "actions/setup-python", "actions/cache/restore", "actions/cache/save",
                   "actions/upload-pages-artifact", "actions/deploy-pages"):
        assert any(u.startswith(action + "@") for u in uses), action
    runs = [s.get("run", "") for s in steps]
    assert f'python -m pip install "{DISTRIBUTION}=={__version__}"' in runs
    assert "fmbench build" in runs
    restore = next(s for s in steps if s.get("uses", "").startswith("actions/cache/restore"))
    assert restore["with"]["key"] == f"fmbench-{__version__}-${{{{ hashFiles('runs/**') }}}}"
    assert restore["with"]["restore-keys"].strip() == f"fmbench-{__version__}-"
    assert restore["with"]["path"].split() == ["fmbench.duckdb", "_site"]
    assert doc["jobs"]["deploy"]["environment"]["name"] == "github-pages"


# --- the site -----------------------------------------------------------------------------


def test_a_project_builds_a_site_with_its_title_everywhere_and_its_own_registry(project: Path) -> None:
    done = fmbench(project, "build")
    assert done.returncode == 0, done.stderr
    for name in (BASELINE, CANDIDATE, JUNE):
        assert f"ingested {name} (run " in done.stdout
    out = project / "_site"
    files = site_files(out)
    kinds: set[str] = set()
    for path, file in files.items():
        if not path.endswith(".html"):
            continue
        found = resolve(path.removesuffix("index.html"))
        assert found is not None, path
        kinds.add(found[0].name)
        html = file.read_text(encoding="utf-8")
        assert re.search(r"<title>[^<]* · Ada&#39;s Foundation Models Lab</title>", html), path
        assert 'class="site-title" href="/results/"' in html and ">Ada&#39;s Foundation Models Lab</a>" in html, path
        assert '<meta property="og:site_name" content="Ada&#39;s Foundation Models Lab">' in html, path
        assert '<meta name="description" content="Ada&#39;s Foundation Models Lab: ' in html, path
        assert '<meta property="og:url" content="https://ada.github.io/results/">' in html, path
        assert re.search(r'<link rel="icon" href="/results/assets/favicon\.svg\?v=\w+">', html), path
        assert '<p><a href="/results/">Ada&#39;s Foundation Models Lab</a>.' in html, path  # the footer
        assert not re.search(r'(href|src)="/(?!results/)', html), path
    assert kinds == {k.name for k in PAGES}, "a page kind is missing from the site"
    assert "assets/favicon.svg" in files

    feed = (out / "regressions" / "feed.xml").read_text(encoding="utf-8")
    assert "<title>Ada's Foundation Models Lab: OS-build regressions</title>" in feed
    assert 'href="https://ada.github.io/results/regressions/feed.xml"' in feed
    assert "<entry>" in feed

    revisions = (out / "revisions" / "index.html").read_text(encoding="utf-8")
    for text in ("2026.06: June 2026 baseline (AppBench)", "2026.07: Foundation Models Bench", "1d8d492", "43d5a02",
                 "cf13743", "a70b856"):
        assert text in revisions
    assert "2026.09" not in revisions and "2026.11" not in revisions
    for path, file in files.items():
        data = file.read_bytes()
        for commit in FICTIONAL:
            assert commit.encode() not in data, f"{commit} in {path}"

    listed = {r["run_id"]: r for r in json.loads((out / "data" / "runs.json").read_text(encoding="utf-8"))["runs"]}
    revision = {r["file_name"]: r["revision_id"] for r in listed.values()}
    assert revision[BASELINE] == revision[CANDIDATE] == "2026.07"
    assert revision[JUNE] == "2026.06"


def test_a_changed_and_a_deleted_run_file_leave_exactly_the_folders_runs(project: Path) -> None:
    assert fmbench(project, "build").returncode == 0
    runs = project / "runs"
    db, out = project / "fmbench.duckdb", project / "_site"
    gone = stored_runs(db)
    old_candidate = next(r for r, n in gone.items() if n == CANDIDATE)
    old_june = next(r for r, n in gone.items() if n == JUNE)
    (runs / JUNE).unlink()
    # The operator re-exported the candidate: other bytes under the same name.
    text = (runs / CANDIDATE).read_text(encoding="utf-8")
    (runs / CANDIDATE).write_text(text.replace(f'"{CURRENT_COMMIT}"', '"4e9fa34"'), encoding="utf-8")
    done = fmbench(project, "build")
    assert done.returncode == 0, done.stderr
    stored = stored_runs(db)
    new_candidate = next(r for r, n in stored.items() if n == CANDIDATE)
    assert f"replaced {CANDIDATE}: its file changed (now run {new_candidate})" in done.stdout
    assert f"dropped {JUNE} (run {old_june}): its file is gone from the runs folder" in done.stdout
    assert set(stored) == folder_run_ids(runs)
    run_pages = {p.name for p in (out / "runs").iterdir() if p.is_dir()}
    data_runs = {p.name for p in (out / "data" / "runs").iterdir() if p.is_dir()}
    assert run_pages == data_runs == set(stored)
    listed = json.loads((out / "data" / "runs.json").read_text(encoding="utf-8"))["runs"]
    assert {r["run_id"] for r in listed} == set(stored)
    for file in site_files(out).values():
        if file.suffix in (".html", ".json", ".xml", ".csv"):
            text = file.read_text(encoding="utf-8")
            assert old_candidate not in text and old_june not in text, file
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM sources").fetchone() == (len(stored),)
    finally:
        con.close()


def test_a_build_with_no_new_files_writes_nothing(project: Path) -> None:
    assert fmbench(project, "build").returncode == 0
    out, db = project / "_site", project / "fmbench.duckdb"

    def state() -> dict[str, tuple[int, int, int]]:
        files = {**site_files(out), "(database)": db}
        return {k: (p.stat().st_mtime_ns, p.stat().st_size, p.stat().st_ino) for k, p in files.items()}

    before = state()
    done = fmbench(project, "build")
    assert done.returncode == 0
    assert "0 rendered, 0 changed, 0 removed" in done.stdout
    assert not re.search(r"^(ingested|replaced|dropped|re-annotated) ", done.stdout, re.M)
    assert state() == before
    assert sorted(p.name for p in project.iterdir() if p.name.startswith(".") and p.name != ".github") == [".gitignore"]


def test_editing_the_registry_reassigns_the_runs_at_the_next_build(project: Path) -> None:
    assert fmbench(project, "build").returncode == 0
    registry = project / "revisions.yaml"
    registry.write_text(registry.read_text(encoding="utf-8").replace('      - "a70b856"\n', ""), encoding="utf-8")
    done = fmbench(project, "build")
    assert done.returncode == 0, done.stderr
    assert "run(s) assigned another suite revision from the registry" in done.stdout
    listed = json.loads((project / "_site" / "data" / "runs.json").read_text(encoding="utf-8"))["runs"]
    assert {r["file_name"]: r["revision_id"] for r in listed}[CANDIDATE] is None


def test_a_run_file_that_cannot_be_read_is_named_and_the_build_fails(project: Path) -> None:
    (project / "runs" / "broken.json").write_text("{", encoding="utf-8")
    done = fmbench(project, "build")
    assert done.returncode == 1
    assert "error broken.json" in done.stdout


# --- settings and their mistakes ----------------------------------------------------------


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda t: t.replace("[site]\n", "[site]\ntitel = \"x\"\n"), "fmbench.toml: site.titel: unknown key"),
        (lambda t: t.replace('branch = "main"', "branch = 3"), "fmbench.toml: repository.branch: expected text, got int 3"),
        (lambda t: t.replace('originals = "gzip"', 'originals = "zip"'), "fmbench.toml: publishing.originals: input should be 'gzip', 'link' or 'copy'"),
        (lambda t: t.replace("rates = 5.0", 'rates = "5"'), "fmbench.toml: publishing.practical_change.rates: expected a number"),
        (lambda t: t.replace("[paths]", "[paths"), "fmbench.toml: not valid TOML: "),
        (lambda t: t.replace('site_url = "', 'site_url = "ada.github.io/'), "fmbench.toml: site.site_url: expected an absolute http(s) URL"),
    ],
    ids=["unknown-key", "wrong-type", "not-a-choice", "not-a-number", "toml-syntax", "relative-site-url"],
)
def test_a_broken_project_file_is_one_line_naming_the_file_and_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edit, expected: str
) -> None:
    invoke("init", str(tmp_path / "p"))
    toml = tmp_path / "p" / PROJECT_FILE
    toml.write_text(edit(toml.read_text(encoding="utf-8")), encoding="utf-8")
    monkeypatch.chdir(tmp_path / "p" / "runs")  # found from a folder below the project
    for command in (["build"], ["runs"], ["ingest", "."]):
        code, out = invoke(*command)
        assert code == 1, command
        assert out.startswith("Error: ") and str(toml) in out and expected.split(": ", 1)[1] in out, out
        assert out.count("\n") == 1 and "Traceback" not in out
    if "TOML" in expected:
        assert re.search(r"\(at line \d+, column \d+\)", out)


def test_a_missing_runs_folder_is_named(tmp_path: Path) -> None:
    invoke("init", str(tmp_path / "p"))
    shutil.rmtree(tmp_path / "p" / "runs")
    code, out = invoke("--project", str(tmp_path / "p"), "build")
    assert code == 1 and out.count("\n") == 1
    assert f"{tmp_path / 'p' / 'runs'}: the runs folder of {tmp_path / 'p' / PROJECT_FILE} (paths.runs = 'runs') does not exist" in out


def test_project_flag_on_a_folder_without_a_project_is_one_line(tmp_path: Path) -> None:
    code, out = invoke("build", "--project", str(tmp_path))
    assert code == 1 and out.count("\n") == 1
    assert f"{tmp_path}: holds no fmbench.toml; run `fmbench init" in out


def test_the_database_comes_from_the_flag_then_the_environment_then_the_project(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    toml = project / PROJECT_FILE
    toml.write_text(toml.read_text(encoding="utf-8").replace('database = "fmbench.duckdb"', 'database = "data/results.duckdb"'), encoding="utf-8")
    (project / "data").mkdir()
    monkeypatch.chdir(project)
    assert invoke("build")[0] == 0
    assert (project / "data" / "results.duckdb").exists() and not (project / "fmbench.duckdb").exists()
    code, out = invoke("runs", "--json")
    assert code == 0 and len(json.loads(out)) == len(list((project / "runs").glob("*.json")))
    monkeypatch.setenv("FMBENCH_DB", str(tmp_path / "env.duckdb"))
    code, out = invoke("runs")
    assert code == 1 and f"{tmp_path / 'env.duckdb'}: no such database" in out
    code, out = invoke("runs", "--db", str(project / "data" / "results.duckdb"))
    assert code == 0 and "run(s)" in out


def test_the_demo_never_touches_a_project(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project)
    code, out = invoke("demo", "--no-serve")
    assert code == 1 and out.count("\n") == 1
    assert f"{project / PROJECT_FILE}: the demo's database fmbench.duckdb would be inside this project" in out
    assert not (project / "fmbench.duckdb").exists() and not (project / "_site").exists()


def test_load_project_errors_are_project_errors(tmp_path: Path) -> None:
    (tmp_path / PROJECT_FILE).write_bytes(b"\xff\xfe")
    with pytest.raises(ProjectError, match="cannot be read"):
        load_project(tmp_path)
