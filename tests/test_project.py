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

from sitebuild import broken_links
from testdata import EXAMPLE_NAME, EXAMPLES, FIXTURES
from workflow_audit import workflow_findings

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
    example = EXAMPLES / f"{EXAMPLE_NAME}.json"
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

    from fmbench.runfile.record import run_id_for

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
    assert project.config.publishing.originals is None
    assert project.originals() == "gzip"  # no repository named: the originals are carried gzipped
    change = project.config.publishing.practical_change
    assert (change.latency, change.throughput, change.memory, change.rates) == (0.05, 0.05, 0.05, 5.0)
    toml = (root / PROJECT_FILE).read_text(encoding="utf-8")
    assert re.search(r'^# originals = "link"$', toml, re.M) and '"link" (links into the repository' in toml
    ignored = (root / ".gitignore").read_text(encoding="utf-8")
    assert "/fmbench.duckdb" in ignored and "/fmbench.duckdb.resamples/" in ignored and "/_site/" in ignored


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


def test_the_generated_workflow_passes_the_schema_and_zizmor_with_no_finding_of_medium_severity_or_above(
    tmp_path: Path,
) -> None:
    code, out = invoke("init", str(tmp_path / "p"))
    assert code == 0, out
    schema, findings = workflow_findings(tmp_path / "p" / ".github" / "workflows" / "publish.yml")
    assert schema == ""
    assert findings == []


def test_the_generated_workflow_grants_each_job_only_what_it_needs_and_pins_every_action_to_a_commit(
    tmp_path: Path,
) -> None:
    from fmbench.scaffold import ACTIONS

    invoke("init", str(tmp_path / "p"))
    text = (tmp_path / "p" / ".github" / "workflows" / "publish.yml").read_text(encoding="utf-8")
    doc = yaml.safe_load(text)
    assert doc[True]["push"]["branches"] == ["main"]  # YAML 1.1 reads the key `on` as true
    assert doc["permissions"] == {}
    assert doc["jobs"]["build"]["permissions"] == {"contents": "read"}
    assert doc["jobs"]["deploy"]["permissions"] == {"pages": "write", "id-token": "write"}
    assert doc["concurrency"]["group"] == "pages"
    assert doc["jobs"]["deploy"]["environment"]["name"] == "github-pages"
    steps = [*doc["jobs"]["build"]["steps"], *doc["jobs"]["deploy"]["steps"]]
    uses = [s["uses"] for s in steps if "uses" in s]
    assert sorted(u.split("@")[0] for u in uses) == sorted(ACTIONS)
    for action, (commit, release) in ACTIONS.items():
        assert re.fullmatch(r"[0-9a-f]{40}", commit) and re.fullmatch(r"v\d+\.\d+\.\d+", release)
        assert f"uses: {action}@{commit} # {release}\n" in text, action
    checkout = next(s for s in steps if s.get("uses", "").startswith("actions/checkout@"))
    assert checkout["with"]["persist-credentials"] is False
    for step in steps:  # nothing GitHub fills in is ever pasted into a shell script
        assert "${{" not in step.get("run", ""), step


def test_the_generated_workflow_caches_on_every_input_of_the_site_and_the_fmbench_version(tmp_path: Path) -> None:
    invoke("init", str(tmp_path / "p"))
    doc = yaml.safe_load((tmp_path / "p" / ".github" / "workflows" / "publish.yml").read_text(encoding="utf-8"))
    steps = doc["jobs"]["build"]["steps"]
    install = next(s for s in steps if s.get("name") == "Install fmbench")
    assert install["id"] == "fmbench" and '>> "$GITHUB_OUTPUT"' in install["run"] and "fmbench.__version__" in install["run"]
    restore = next(s for s in steps if s.get("uses", "").startswith("actions/cache/restore@"))
    version = "${{ steps.fmbench.outputs.version }}"
    assert restore["with"]["key"] == (
        f"fmbench-{version}-${{{{ hashFiles('runs/**', 'fmbench.toml', 'revisions.yaml', 'methodology.md') }}}}"
    )
    assert restore["with"]["restore-keys"].strip() == f"fmbench-{version}-"
    assert restore["with"]["path"].split() == ["fmbench.duckdb", "fmbench.duckdb.resamples", "fmbench.duckdb.builds", "_site"]
    save = next(s for s in steps if s.get("uses", "").startswith("actions/cache/save@"))
    assert save["if"] == "steps.restore.outputs.cache-hit != 'true'"
    assert save["with"]["key"] == "${{ steps.restore.outputs.cache-primary-key }}"
    assert "fmbench build" in [s.get("run", "") for s in steps]


def install_script(project: Path) -> str:
    """The shell script of the generated workflow's step that installs fmbench."""
    doc = yaml.safe_load((project / ".github" / "workflows" / "publish.yml").read_text(encoding="utf-8"))
    return next(s for s in doc["jobs"]["build"]["steps"] if s.get("name") == "Install fmbench")["run"]


def test_the_generated_workflow_installs_exactly_what_publishing_install_names(tmp_path: Path) -> None:
    invoke("init", str(tmp_path / "p"))
    project = tmp_path / "p"
    toml = project / PROJECT_FILE
    assert re.search(rf'^install = "{re.escape(DISTRIBUTION)}=={re.escape(__version__)}"$', toml.read_text(encoding="utf-8"), re.M)
    assert load_project(project).config.publishing.install == f"{DISTRIBUTION}=={__version__}"
    # The step's first line finds what to install; the rest installs it. Run that line as the runner would.
    finding = install_script(project).splitlines()[0]
    assert finding.startswith('install="$(python ') and "\n" not in finding

    def named() -> str:
        done = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", f'{finding}\nprintf "%s" "$install"'],
            cwd=project, capture_output=True, text=True, check=False,
            env={"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin"},
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert named() == f"{DISTRIBUTION}=={__version__}"
    git = f"{DISTRIBUTION} @ git+https://github.com/ada/fmbench@v{__version__}"
    text = toml.read_text(encoding="utf-8")
    toml.write_text(text.replace(f'install = "{DISTRIBUTION}=={__version__}"', f'install = "{git}"'), encoding="utf-8")
    assert load_project(project).config.publishing.install == git
    assert named() == git
    assert install_script(project).splitlines()[1] == 'python -m pip install "$install"'
    toml.write_text(text.replace(f'install = "{DISTRIBUTION}=={__version__}"\n', ""), encoding="utf-8")
    assert named() == f"{DISTRIBUTION}=={__version__}"  # no key: the version that wrote the workflow


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
        if found[0] not in PAGES:
            continue  # a data file in HTML: a scenario's trials, the fragment a run page loads in place
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
    # every kind but a category's own leaderboard page (each category of these runs holds one workload, whose
    # leaderboard is the category's board: tests/test_leaderboards.py builds one of two workloads)
    assert kinds == {k.name for k in PAGES} - {"leaderboard_category"}, "a page kind is missing from the site"
    assert broken_links(out, "/results/") == []
    assert "assets/favicon.svg" in files

    feed = (out / "regressions" / "feed.xml").read_text(encoding="utf-8")
    assert "<title>Ada's Foundation Models Lab: OS-build regressions</title>" in feed
    assert 'href="https://ada.github.io/results/regressions/feed.xml"' in feed
    # Entries are the change points of /regressions/ (none in this corpus's two-build histories of few samples);
    # every link the feed holds is under the site's URL.
    assert all(h.startswith("https://ada.github.io/results/") for h in re.findall(r'href="([^"]*)"', feed))

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


def test_real_files_ingested_and_built_outside_a_project_show_none_of_the_fixtures_fictional_revisions(
    tmp_path: Path,
) -> None:
    loose = tmp_path / "loose"  # no fmbench.toml here or above: the benchmark's public history applies
    loose.mkdir()
    copy_run(CANDIDATE, loose)
    copy_run(JUNE, loose)
    example = EXAMPLES / f"{EXAMPLE_NAME}.json"
    shutil.copyfile(example, loose / example.name)
    ingested = fmbench(tmp_path, "ingest", "loose", "--db", "real.duckdb")
    assert ingested.returncode == 0, ingested.stdout + ingested.stderr
    built = fmbench(tmp_path, "build", "--db", "real.duckdb", "--out", "site")
    assert built.returncode == 0, built.stderr
    con = duckdb.connect(str(tmp_path / "real.duckdb"), read_only=True)
    try:
        revision = dict(con.execute("SELECT file_name, revision_id FROM runs").fetchall())
    finally:
        con.close()
    assert revision[CANDIDATE] == "2026.07" and revision[JUNE] == "2026.06"
    assert revision[example.name] == "2026.06"
    revisions = (tmp_path / "site" / "revisions" / "index.html").read_text(encoding="utf-8")
    assert "2026.06: June 2026 baseline (AppBench)" in revisions and "2026.07: Foundation Models Bench" in revisions
    for file in (tmp_path / "site").rglob("*"):
        if file.is_file():
            data = file.read_bytes()
            for commit in FICTIONAL:
                assert commit.encode() not in data, f"{commit} in {file.relative_to(tmp_path)}"
    for command in (("validate", "loose"), ("summarize", f"loose/{CANDIDATE}")):
        done = fmbench(tmp_path, *command)
        assert done.returncode == 0, done.stderr
        assert "revision 2026.07 (current" in done.stdout
        assert not any(c in done.stdout for c in FICTIONAL)


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


def test_a_run_file_that_cannot_be_read_is_named_and_the_rest_publish(project: Path) -> None:
    (project / "runs" / "broken.json").write_text("{", encoding="utf-8")
    done = fmbench(project, "build")
    assert done.returncode == 0, done.stderr
    assert "\n  runs/broken.json: line 1, column 2: invalid JSON: Expecting property name" in done.stdout
    assert (project / "_site" / "index.html").is_file()
    strict = fmbench(project, "build", "--strict")
    assert strict.returncode == 1 and "runs/broken.json: line 1, column 2" in strict.stdout


# --- settings and their mistakes ----------------------------------------------------------


def test_a_project_that_names_its_repository_links_the_originals_unless_it_sets_a_policy(tmp_path: Path) -> None:
    code, out = invoke("init", str(tmp_path / "p"), "--title", TITLE)
    assert code == 0, out
    toml_file = tmp_path / "p" / PROJECT_FILE
    text = toml_file.read_text(encoding="utf-8")
    named = re.sub(r'^url = ".*"$', 'url = "https://github.com/ada/bench"', text, count=1, flags=re.M)
    toml_file.write_text(named, encoding="utf-8")
    assert load_project(tmp_path / "p").originals() == "link"
    toml_file.write_text(named.replace('# originals = "link"', 'originals = "gzip"'), encoding="utf-8")
    assert load_project(tmp_path / "p").originals() == "gzip"


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda t: t.replace("[site]\n", "[site]\ntitel = \"x\"\n"), "fmbench.toml: site.titel: unknown key"),
        (lambda t: t.replace('branch = "main"', "branch = 3"), "fmbench.toml: repository.branch: expected text, got int 3"),
        (lambda t: t.replace('# originals = "link"', 'originals = "zip"'), "fmbench.toml: publishing.originals: input should be 'gzip', 'link' or 'copy'"),
        (lambda t: t.replace("rates = 5.0", 'rates = "5"'), "fmbench.toml: publishing.practical_change.rates: expected a number"),
        (lambda t: t.replace("[paths]", "[paths"), "fmbench.toml: not valid TOML: "),
        (lambda t: t.replace('site_url = "', 'site_url = "ada.github.io/'), "fmbench.toml: site.site_url: expected an absolute http(s) URL"),
        (lambda t: re.sub(r'^install = ".*"$', 'install = ""', t, flags=re.M), "fmbench.toml: publishing.install: string should have at least 1 character"),
        (lambda t: re.sub(r'^install = ".*"$', 'install = "--index-url=https://example.org/simple"', t, flags=re.M),
         "fmbench.toml: publishing.install: expected a requirement, wheel file or git URL for pip, not a pip option"),
        (lambda t: re.sub(r'^install = ".*"$', lambda _: r'install = "fmbench-publish\nrich"', t, flags=re.M),
         "fmbench.toml: publishing.install: expected one requirement, wheel file or git URL for pip on one line"),
    ],
    ids=["unknown-key", "wrong-type", "not-a-choice", "not-a-number", "toml-syntax", "relative-site-url", "empty-install",
         "install-option", "install-two-lines"],
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


# --- methodology notes ----------------------------------------------------------------------


def test_publisher_sections_are_added_replace_fmbench_ones_and_only_add_to_the_verdict_and_comparison_rules() -> None:
    from fmbench.views.methodology import fmbench_methodology, merge_methodology, split_sections

    notes = (
        "# Our notes\n\nRead this first.\n\n"
        "## Known limitations\n\nOur lab is at 30 °C.\n\n"
        "## Publishable, exploratory, invalid\n\nWe also re-run a run that was exploratory.\n\n"
        "## Comparison rules {#comparisons}\n\nWe compare only betas.\n\n"
        "## Our devices\n\nThree iPhones.\n\n```\n## not a heading\n```\n"
    )
    merged = merge_methodology(fmbench_methodology(), notes)
    sections = {s.anchor or s.key: s.text() for s in split_sections(merged)[1:]}
    assert "Our lab is at 30 °C." in sections["limitations"]
    assert "Memory is sampled" not in sections["limitations"]  # replaced
    assert "its OS build is recorded" in sections["verdicts"]  # kept, and added to
    assert sections["verdicts"].index("its OS build is recorded") < sections["verdicts"].index("We also re-run")
    assert "When several runs match one side" in sections["comparisons"]
    assert sections["comparisons"].endswith("We compare only betas.")
    assert sections["our devices"].startswith("## Our devices") and "## not a heading" in sections["our devices"]
    assert merged.index("Read this first.") < merged.index("## What is measured")
    assert "# Our notes" not in merged
    own_sections = len(split_sections(fmbench_methodology())) - 1
    assert len(sections) == own_sections + 1  # one section added; the others replaced or added to


def test_the_publishers_methodology_is_sanitized(project: Path) -> None:
    from fmbench.project import load_project
    from fmbench.views import site_context
    from fmbench.views.home import methodology_page
    from fmbench.views.render import Renderer

    (project / "methodology.md").write_text(
        "## Our devices\n\n<script>alert(1)</script> [x](javascript:alert(1)) <img src=x onerror=alert(1)> kept\n",
        encoding="utf-8",
    )
    loaded = load_project(project)
    con = duckdb.connect()
    site = site_context(con, Renderer(), loaded.registry(), loaded.methodology())
    html = str(methodology_page(site, None).markdown_html)  # type: ignore[arg-type]
    assert "kept" in html and "<script" not in html and "javascript:" not in html and "onerror" not in html


# --- serve -----------------------------------------------------------------------------------


def test_serve_shows_the_project_and_picks_up_edits_to_its_notes_and_registry(project: Path) -> None:
    from fmbench.ingest.mirror import mirror_runs
    from fmbench.serving.serve import create_app

    loaded = load_project(project)
    mirror_runs(loaded.require_runs_dir(), loaded.database, loaded.registry())
    client = create_app(loaded.database, host="127.0.0.1", port=8000, project=loaded).test_client()

    def page(path: str) -> str:
        response = client.get(path, headers={"Host": "127.0.0.1:8000"})
        assert response.status_code == 200, path
        return response.get_data(as_text=True)

    home = page("/")
    assert "· Ada&#39;s Foundation Models Lab</title>" in home and "assets/favicon.svg" in home
    assert client.get("/assets/favicon.svg", headers={"Host": "127.0.0.1:8000"}).content_type.startswith("image/svg+xml")
    assert "Three Macs." not in page("/methodology/")
    notes = project / "methodology.md"
    notes.write_text(notes.read_text(encoding="utf-8") + "\n## Our devices\n\nThree Macs.\n", encoding="utf-8")
    assert "Three Macs." in page("/methodology/")

    candidate = next(r for r, n in stored_runs(loaded.database).items() if n == CANDIDATE)
    assert "2026.07 (current)" in page(f"/runs/{candidate}/")
    registry = project / "revisions.yaml"
    registry.write_text(registry.read_text(encoding="utf-8").replace('      - "a70b856"\n', ""), encoding="utf-8")
    assert "Suite revision unknown" in page(f"/runs/{candidate}/")
    assert "a70b856" not in page("/revisions/").split("Revision unknown")[0]


# --- identity -----------------------------------------------------------------------------


def test_footer_links_repository_and_icon_come_from_the_project(project: Path) -> None:
    toml = project / PROJECT_FILE
    (project / "icon.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    text = toml.read_text(encoding="utf-8")
    text = text.replace('favicon = ""', 'favicon = "icon.png"')
    text += '\n[[site.footer_links]]\nlabel = "About & contact"\nurl = "https://ada.example/about"\n'
    toml.write_text(text, encoding="utf-8")
    assert load_project(project).config.site.footer_links[0].label == "About & contact"
    assert fmbench(project, "build").returncode == 0
    html = (project / "_site" / "index.html").read_text(encoding="utf-8")
    assert '<li><a href="https://ada.example/about">About &amp; contact</a></li>' in html
    assert '<li><a href="https://github.com/ada/results/tree/main/runs">The run files</a></li>' in html
    assert re.search(r'<link rel="icon" href="/results/assets/favicon\.png\?v=\w+">', html)
    assert (project / "_site" / "assets" / "favicon.png").read_bytes() == b"\x89PNG\r\n\x1a\n"
    assert not (project / "_site" / "assets" / "favicon.svg").exists()
    candidate = next(r for r, n in stored_runs(project / "fmbench.duckdb").items() if n == CANDIDATE)
    page = (project / "_site" / "runs" / candidate / "index.html").read_text(encoding="utf-8")
    assert f'<a href="https://github.com/ada/results/blob/main/runs/{CANDIDATE}">' in page
    # Moved into a sub-folder: same run, new link, and only its page is rendered again.
    (project / "runs" / "iphone").mkdir()
    for name in (CANDIDATE, CANDIDATE.replace(".json", ".meta.yaml")):
        (project / "runs" / name).rename(project / "runs" / "iphone" / name)
    done = fmbench(project, "build")
    assert done.returncode == 0 and " 1 rendered, 1 changed, 0 removed" in done.stdout, done.stdout
    page = (project / "_site" / "runs" / candidate / "index.html").read_text(encoding="utf-8")
    assert f'<a href="https://github.com/ada/results/blob/main/runs/iphone/{CANDIDATE}">' in page


def test_a_footer_link_that_is_not_a_web_link_is_refused(tmp_path: Path) -> None:
    from fmbench.project import parse_config

    with pytest.raises(ProjectError, match=r"^fmbench.toml: site.footer_links\[0\].url: expected an http\(s\) or mailto: link"):
        parse_config('[[site.footer_links]]\nlabel = "x"\nurl = "javascript:alert(1)"\n', "fmbench.toml")


# --- the README's steps -------------------------------------------------------------------


def _readme_steps() -> list[str]:
    from testdata import REPO

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Publish your results", 1)[1]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    return [line for line in block.splitlines() if line.strip()]


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_readme_steps_publish_a_site(tmp_path: Path) -> None:
    """Each line of "Publish your results", run as written (the run files copied from the test data, the
    server started and asked for its home page, the push checked but not made)."""
    import shlex
    import time
    import tomllib
    import urllib.request

    from testdata import REPO

    steps = _readme_steps()
    cwd = tmp_path
    git_env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GIT_AUTHOR_NAME": "Ada", "GIT_AUTHOR_EMAIL": "ada@example.org",
               "GIT_COMMITTER_NAME": "Ada", "GIT_COMMITTER_EMAIL": "ada@example.org"}
    seen = []
    for step in steps:
        words = shlex.split(step)
        if words[:2] == ["pip", "install"]:
            assert words[2] == DISTRIBUTION
            assert tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["name"] == DISTRIBUTION
        elif words[0] == "cd":
            cwd = cwd / words[1]
        elif words[0] == "cp":
            assert words[-1] == "runs/"
            for name in (BASELINE, CANDIDATE):
                copy_run(name, cwd / "runs")
        elif words[:2] == ["fmbench", "serve"]:
            port = _free_port()
            server = subprocess.Popen(
                [sys.executable, "-P", "-m", "fmbench", *words[1:], "--port", str(port)], cwd=cwd,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )
            try:
                deadline = time.monotonic() + 30
                while True:
                    try:
                        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as response:
                            assert "· My Foundation Models results</title>" in response.read().decode("utf-8")
                            break
                    except OSError:
                        assert time.monotonic() < deadline, "fmbench serve did not answer"
                        time.sleep(0.2)
            finally:
                server.terminate()
                server.wait(timeout=10)
        elif words[0] == "fmbench":
            done = fmbench(cwd, *words[1:])
            assert done.returncode == 0, f"{step}: {done.stdout}{done.stderr}"
        elif "git push" in step:
            remote = words[words.index("origin") + 1]
            owner, repo = re.fullmatch(r"git@github\.com:(\w+)/([\w-]+)\.git", remote).groups()  # type: ignore[union-attr]
            site_url = load_project(cwd).config.site.site_url
            assert site_url == f"https://{owner}.github.io/{repo}/"
            assert repo == cwd.name
        elif words[0] == "git":
            done = subprocess.run(["bash", "-c", step], cwd=cwd, env=git_env, capture_output=True, text=True, check=False)
            assert done.returncode == 0, done.stderr
            tracked = subprocess.run(["git", "ls-files"], cwd=cwd, env=git_env, capture_output=True, text=True, check=True).stdout.split()
            assert ".github/workflows/publish.yml" in tracked and f"runs/{CANDIDATE}" in tracked
            assert not any(t.startswith(("_site/", "fmbench.duckdb")) for t in tracked)
        else:
            raise AssertionError(f"the README has a step this test does not follow: {step}")
        seen.append(words[0] if words[0] != "fmbench" else f"fmbench {words[1]}")
    assert seen == ["pip", "fmbench init", "cd", "cp", "fmbench build", "fmbench serve", "git", "git"]
    html = (cwd / "_site" / "index.html").read_text(encoding="utf-8")
    assert 'class="site-title" href="/my-results/"' in html


def test_a_removed_sidecar_judges_its_run_again_without_it(project: Path) -> None:
    sidecar = project / "runs" / CANDIDATE.replace(".json", ".meta.yaml")
    assert sidecar.exists(), "the candidate fixture run has a sidecar"
    assert fmbench(project, "build").returncode == 0
    sidecar.unlink()
    done = fmbench(project, "build")
    assert done.returncode == 0, done.stderr
    run_id = next(r for r, n in stored_runs(project / "fmbench.duckdb").items() if n == CANDIDATE)
    assert f"re-annotated {CANDIDATE} (run {run_id}): its sidecar changed" in done.stdout
    con = duckdb.connect(str(project / "fmbench.duckdb"), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM annotations WHERE run_id = ?", [run_id]).fetchone() == (0,)
    finally:
        con.close()


def test_commands_in_a_project_assign_runs_with_its_registry(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    registry = project / "revisions.yaml"  # the publisher names the current revision their own way
    registry.write_text(registry.read_text(encoding="utf-8").replace('id: "2026.07"', 'id: "lab-2026.07"'), encoding="utf-8")
    run_file = project / "runs" / CANDIDATE
    code, out = invoke("validate", str(run_file))
    # outside the project: the benchmark's public history, never the project's file
    assert code == 0 and "revision 2026.07 (current)" in out and "lab-2026.07" not in out
    code, out = invoke("validate", "--project", str(project), str(run_file))
    assert code == 0 and "revision lab-2026.07 (current)" in out
    monkeypatch.chdir(project / "runs")
    code, out = invoke("summarize", CANDIDATE)
    assert code == 0 and "revision lab-2026.07 (current" in out
