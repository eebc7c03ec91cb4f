"""The release: one version, a wheel and an sdist that hold everything, installed as a user would, and the workflow
that publishes them.

The tests marked ``packaging`` build the distributions (``python -m build``: the sdist, then the wheel from the
sdist) and install the wheel into a fresh venv; they are slow and need the package index for the build backend and
the dependencies (pip's cache makes a second run quick).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest
import yaml

from fmbench import DISTRIBUTION, __version__
from fmbench.scaffold import ACTIONS

from testdata import EXAMPLE_NAME, EXAMPLES, REPO
from workflow_audit import workflow_findings

WHEEL_NAME = f"{DISTRIBUTION.replace('-', '_')}-{__version__}-py3-none-any.whl"
SDIST_NAME = f"{DISTRIBUTION.replace('-', '_')}-{__version__}.tar.gz"

PACKAGE_DATA = {
    # A folder of the repository, the files of it the package needs at run time, and where the wheel holds them.
    "templates": ("**/*.html", "fmbench/templates"),
    "site": ("assets/*", "fmbench/site"),
    "fmbench/data": ("*.yaml", "fmbench/data"),
    "ingest/schema": ("*.sql", "fmbench/ingest/schema"),
    "fixtures/runs": ("*.json", "fmbench/fixtures/runs"),
}


def run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, check=False, env=env)


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist and the wheel ``python -m build`` makes of this checkout (the wheel built from the sdist)."""
    out = tmp_path_factory.mktemp("dist")
    done = run(sys.executable, "-m", "build", "--outdir", out, REPO, cwd=out)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert sorted(p.name for p in out.iterdir()) == [WHEEL_NAME, SDIST_NAME]
    return out


# --- one version --------------------------------------------------------------------------------


def test_the_version_is_defined_once_in_the_package_and_everything_reads_it(tmp_path: Path) -> None:
    from fmbench.project import DEFAULT_INSTALL
    from fmbench.scaffold import project_toml

    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in pyproject["project"] and pyproject["project"]["dynamic"] == ["version"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "fmbench.__version__"}
    assert re.fullmatch(r"\d+\.\d+\.\d+", __version__)
    assert re.findall(r"__version__ = .*", (REPO / "fmbench" / "__init__.py").read_text(encoding="utf-8")) == [
        f'__version__ = "{__version__}"'
    ]
    assert f"{DISTRIBUTION}=={__version__}" == DEFAULT_INSTALL
    assert f'install = "{DISTRIBUTION}=={__version__}"' in project_toml("t", "", "")
    for extra in ("build", "twine", "zizmor", "check-jsonschema"):
        assert any(re.match(rf"{extra}\b", dep) for dep in pyproject["project"]["optional-dependencies"]["test"]), extra


# --- the distributions --------------------------------------------------------------------------


@pytest.mark.packaging
def test_the_wheel_and_the_sdist_hold_the_templates_assets_data_and_schema_and_pass_twine_check(dist: Path) -> None:
    wheel = set(zipfile.ZipFile(dist / WHEEL_NAME).namelist())
    with tarfile.open(dist / SDIST_NAME) as sdist:
        top = SDIST_NAME.removesuffix(".tar.gz")
        source = {name.removeprefix(f"{top}/") for name in sdist.getnames()}
    for folder, (pattern, packaged) in PACKAGE_DATA.items():
        files = sorted(p.relative_to(REPO / folder).as_posix() for p in (REPO / folder).glob(pattern) if p.is_file())
        assert files, folder
        for name in files:
            assert f"{packaged}/{name}" in wheel, f"{packaged}/{name} is not in the wheel"
            assert f"{folder}/{name}" in source, f"{folder}/{name} is not in the sdist"
    for name in ("fmbench/templates/base.html", "fmbench/site/assets/style.css", "fmbench/site/methodology.md",
                 "fmbench/data/revisions.yaml", "fmbench/ingest/schema/0001_initial.sql", "fmbench/cli.py",
                 f"{WHEEL_NAME.split('-py3')[0]}.dist-info/licenses/LICENSE"):
        assert name in wheel, name
    for name in ("pyproject.toml", "README.md", "LICENSE", "MANIFEST.in", f"tests/data/examples/{EXAMPLE_NAME}.json",
                 "tests/data/examples/LICENSE-FoundationModelsBench", "tests/conftest.py"):
        assert name in source, name
    assert not [n for n in wheel | source if "__pycache__" in n or n.endswith(".pyc")]
    metadata = zipfile.ZipFile(dist / WHEEL_NAME).read(f"{WHEEL_NAME.split('-py3')[0]}.dist-info/METADATA").decode()
    assert f"\nVersion: {__version__}\n" in metadata and f"Name: {DISTRIBUTION}\n" in metadata
    twine = run(sys.executable, "-m", "twine", "check", "--strict", *sorted(dist.iterdir()), cwd=dist)
    assert twine.returncode == 0, twine.stdout + twine.stderr
    assert twine.stdout.count("PASSED") == 2


@pytest.mark.packaging
def test_the_wheel_installed_in_a_fresh_venv_inits_and_builds_a_project_of_the_example_files(
    dist: Path, tmp_path: Path
) -> None:
    venv = tmp_path / "venv"
    made = run(sys.executable, "-m", "venv", venv, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    bin_dir = venv / "bin"
    installed = run(bin_dir / "python", "-m", "pip", "install", "--quiet", dist / WHEEL_NAME, cwd=tmp_path)
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]
    env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(tmp_path)}
    where = run(bin_dir / "python", "-c", "import fmbench; print(fmbench.__file__)", cwd=tmp_path, env=env)
    assert Path(where.stdout.strip()).is_relative_to(venv), where.stdout  # the installed copy, not this checkout

    init = run(bin_dir / "fmbench", "init", "results", "--title", "Example results", cwd=tmp_path, env=env)
    assert init.returncode == 0, init.stdout + init.stderr
    assert "wrote .github/workflows/publish.yml" in init.stdout
    project = tmp_path / "results"
    for name in (f"{EXAMPLE_NAME}.json", f"{EXAMPLE_NAME}.md"):
        shutil.copyfile(EXAMPLES / name, project / "runs" / name)

    # The workflow installs what [publishing] install names: point it at the wheel, take the installed copy away,
    # and let the workflow's own install step put it back, as it does on GitHub.
    toml = project / "fmbench.toml"
    text = toml.read_text(encoding="utf-8")
    assert f'install = "{DISTRIBUTION}=={__version__}"' in text
    toml.write_text(text.replace(f'install = "{DISTRIBUTION}=={__version__}"', f"install = {json.dumps(str(dist / WHEEL_NAME))}"),
                    encoding="utf-8")
    removed = run(bin_dir / "python", "-m", "pip", "uninstall", "--yes", DISTRIBUTION, cwd=tmp_path, env=env)
    assert removed.returncode == 0 and not (bin_dir / "fmbench").exists(), removed.stderr
    workflow = yaml.safe_load((project / ".github" / "workflows" / "publish.yml").read_text(encoding="utf-8"))
    step = next(s for s in workflow["jobs"]["build"]["steps"] if s.get("name") == "Install fmbench")
    outputs = tmp_path / "github-output"
    outputs.touch()
    stepped = run("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"], cwd=project,
                  env={**env, "GITHUB_OUTPUT": str(outputs)})
    assert stepped.returncode == 0, stepped.stdout[-3000:] + stepped.stderr[-3000:]
    assert outputs.read_text(encoding="utf-8") == f"version={__version__}\n"

    built = run(bin_dir / "fmbench", "build", cwd=project, env=env)
    assert built.returncode == 0, built.stdout + built.stderr
    assert f"ingested {EXAMPLE_NAME}.json (run " in built.stdout
    site = project / "_site"
    assert (site / "index.html").is_file()
    assert "Example results" in (site / "index.html").read_text(encoding="utf-8")
    assert (site / "assets" / "style.css").is_file()
    assert len([p for p in (site / "runs").iterdir() if p.is_dir()]) == 1


# --- the release workflow -----------------------------------------------------------------------


RELEASE = REPO / ".github" / "workflows" / "release.yml"


def test_the_projects_own_workflows_pass_the_schema_and_zizmor_with_no_finding_of_medium_severity_or_above() -> None:
    workflows = sorted((REPO / ".github" / "workflows").glob("*.yml"))
    assert RELEASE in workflows
    schema, findings = workflow_findings(*workflows)
    assert schema == ""
    assert findings == []


def test_the_release_workflow_publishes_a_tag_with_trusted_publishing_after_building_and_testing() -> None:
    text = RELEASE.read_text(encoding="utf-8")
    doc = yaml.safe_load(text)
    assert doc[True] == {"push": {"tags": ["v*"]}}  # YAML 1.1 reads the key `on` as true
    assert doc["permissions"] == {}
    jobs = doc["jobs"]
    assert jobs["build"]["permissions"] == jobs["test"]["permissions"] == {"contents": "read"}
    assert jobs["publish"]["permissions"] == {"id-token": "write"}
    assert jobs["publish"]["environment"]["name"] == "pypi"
    assert sorted(jobs["publish"]["needs"]) == ["build", "test"]
    build_runs = "\n".join(s.get("run", "") for s in jobs["build"]["steps"])
    assert "python -m build" in build_runs and "twine check --strict dist/*" in build_runs
    assert [s.get("run") for s in jobs["test"]["steps"] if "run" in s] == [".ci/run"]
    publish = jobs["publish"]["steps"][-1]
    assert publish["uses"].startswith("pypa/gh-action-pypi-publish@") and "with" not in publish  # no token, no password
    assert not re.search(r"secrets\.|password|api[-_]token", text, re.I)
    for job in jobs.values():
        for step in job["steps"]:
            assert "${{" not in step.get("run", ""), step
            if step.get("uses", "").startswith("actions/checkout@"):
                assert step["with"]["persist-credentials"] is False
    # Every action the release shares with the generated workflow is pinned to the same release; the rest to a
    # full commit too, but for the publish action, whose newest release could not be confirmed (said beside it).
    for line in re.findall(r"uses: (\S+@\S+)(.*)", text):
        action, ref = line[0].split("@")
        if action in ACTIONS:
            assert line == (f"{action}@{ACTIONS[action][0]}", f" # {ACTIONS[action][1]}"), action
        elif action == "pypa/gh-action-pypi-publish":
            assert ref == "release/v1" and "could not be confirmed" in text
        else:
            assert re.fullmatch(r"[0-9a-f]{40}", ref) and re.fullmatch(r" # v\d+\.\d+\.\d+", line[1]), action


@pytest.mark.parametrize(("tag", "passes"), [(f"v{__version__}", True), ("v99.0.0", False), (__version__, False)])
def test_the_release_stops_when_the_tag_is_not_the_packages_version(tag: str, passes: bool) -> None:
    steps = yaml.safe_load(RELEASE.read_text(encoding="utf-8"))["jobs"]["build"]["steps"]
    check = next(s for s in steps if s.get("name", "").startswith("Check that the tag"))
    assert check["env"] == {"TAG": "${{ github.ref_name }}"}
    done = run("bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", check["run"], cwd=REPO,
               env={"PATH": f"{Path(sys.executable).parent}:/usr/bin:/bin", "TAG": tag})
    assert (done.returncode == 0) is passes, done.stdout + done.stderr
    if not passes:
        assert done.stdout == (
            f"::error file=fmbench/__init__.py::the tag is {tag} but fmbench/__init__.py defines {__version__}: "
            f"tag v{__version__}, or change __version__\n"
        )
