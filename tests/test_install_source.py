"""The install line a new project's workflow gets: what the publisher's fmbench was installed from (PEP 610).

The fast tests read ``direct_url.json`` documents as pip writes them; the tests marked ``packaging`` install this
checkout for real (a git repository by ``git+file://``, a wheel, an editable checkout) into fresh venvs with
``--no-deps`` and run that install's own ``fmbench init`` and ``fmbench build``; the dependencies come from the venv
running the tests, through a ``.pth`` file, so nothing but fmbench is installed.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from pathlib import Path

import pytest

from fmbench import DISTRIBUTION, __version__
from fmbench.install_source import install_warning, source_of
from fmbench.scaffold import init_project

from testdata import EXAMPLE_NAME, EXAMPLES, REPO

RELEASE = f"{DISTRIBUTION}=={__version__}"
COMMIT = "0123456789abcdef0123456789abcdef01234567"


def install_setting(project: Path) -> str:
    return tomllib.loads((project / "fmbench.toml").read_text(encoding="utf-8"))["publishing"]["install"]


# --- what each kind of install pins -------------------------------------------------------------


def test_a_release_from_an_index_pins_its_version() -> None:
    source = source_of(None, "1.2.3")
    assert source.kind == "release" and source.requirement == f"{DISTRIBUTION}==1.2.3"
    assert source.advice() == "" and install_warning(source.requirement, source) == ""


def test_a_vcs_install_pins_its_url_at_the_commit_it_resolved_to() -> None:
    source = source_of({"url": "https://github.com/ada/fmbench.git",
                        "vcs_info": {"vcs": "git", "requested_revision": "main", "commit_id": COMMIT}})
    assert source.kind == "vcs"
    assert source.requirement == f"{DISTRIBUTION} @ git+https://github.com/ada/fmbench.git@{COMMIT}"
    assert install_warning(source.requirement, source) == ""


def test_a_vcs_install_from_a_subdirectory_keeps_it() -> None:
    source = source_of({"url": "https://example.org/r.git", "subdirectory": "py",
                        "vcs_info": {"vcs": "git", "commit_id": COMMIT}})
    assert source.requirement == f"{DISTRIBUTION} @ git+https://example.org/r.git@{COMMIT}#subdirectory=py"


def test_an_archive_by_https_url_is_named_by_that_url() -> None:
    url = "https://example.org/fmbench_publish-0.1.0-py3-none-any.whl"
    source = source_of({"url": url, "archive_info": {"hashes": {"sha256": "00"}}})
    assert source.kind == "archive" and source.requirement == f"{DISTRIBUTION} @ {url}"


@pytest.mark.parametrize(("direct_url", "kind", "said"), [
    ({"url": "file:///home/ada/dist/fmbench_publish-0.1.0-py3-none-any.whl", "archive_info": {}},
     "local archive", "from a file on this machine (/home/ada/dist/fmbench_publish-0.1.0-py3-none-any.whl)"),
    ({"url": "file:///home/ada/fmbench", "dir_info": {}}, "folder", "from a folder on this machine (/home/ada/fmbench)"),
    ({"url": "file:///home/ada/fmbench", "dir_info": {"editable": True}}, "editable",
     "as an editable checkout (/home/ada/fmbench)"),
])
def test_a_local_wheel_folder_or_editable_checkout_has_no_requirement_and_one_line_of_advice(
    direct_url: dict[str, object], kind: str, said: str
) -> None:
    source = source_of(direct_url)
    assert source.kind == kind and source.requirement is None
    line = install_warning(RELEASE, source)
    assert "\n" not in line
    assert line.startswith(f"fmbench {__version__} was installed {said}, which .github/workflows/publish.yml "
                           "cannot install: set [publishing] install in fmbench.toml to a git URL")
    assert "a wheel file committed to the project" in line


def test_the_advice_stops_once_the_publisher_sets_the_install() -> None:
    source = source_of({"url": "file:///home/ada/fmbench", "dir_info": {"editable": True}})
    assert install_warning("wheels/fmbench_publish-0.1.0-py3-none-any.whl", source) == ""
    assert install_warning(f"{DISTRIBUTION} @ git+https://github.com/ada/fmbench@{COMMIT}", source) == ""


def test_a_repository_on_this_machine_is_pinned_and_said_to_be_out_of_the_workflows_reach() -> None:
    source = source_of({"url": "file:///home/ada/fmbench", "vcs_info": {"vcs": "git", "commit_id": COMMIT}})
    assert source.requirement == f"{DISTRIBUTION} @ git+file:///home/ada/fmbench@{COMMIT}"
    assert install_warning(source.requirement, source).startswith(
        f"fmbench {__version__} was installed from a git repository on this machine (file:///home/ada/fmbench)")


def test_init_writes_the_pinned_requirement_and_says_nothing_for_an_installable_source(tmp_path: Path) -> None:
    source = source_of({"url": "https://github.com/ada/fmbench", "vcs_info": {"vcs": "git", "commit_id": COMMIT}})
    report = init_project(tmp_path / "p", source=source)
    assert install_setting(tmp_path / "p") == f"{DISTRIBUTION} @ git+https://github.com/ada/fmbench@{COMMIT}"
    assert report.install_warning == ""


def test_init_keeps_the_release_pin_and_warns_for_an_editable_checkout(tmp_path: Path) -> None:
    source = source_of({"url": "file:///home/ada/fmbench", "dir_info": {"editable": True}})
    report = init_project(tmp_path / "p", source=source)
    assert install_setting(tmp_path / "p") == RELEASE
    assert report.install_warning == install_warning(RELEASE, source)
    assert report.install_warning.endswith(f'or "{DISTRIBUTION}==VERSION" for a release on PyPI')


# --- real installs ------------------------------------------------------------------------------


def run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in args], cwd=cwd, capture_output=True, text=True, check=False, env=env,
                          timeout=600)


@pytest.fixture(scope="module")
def checkout(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A git repository of this checkout's files (tracked and new, as they are now) and its one commit."""
    root = tmp_path_factory.mktemp("checkout") / "fmbench"
    listed = run("git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=REPO)
    assert listed.returncode == 0, listed.stderr
    for name in filter(None, listed.stdout.split("\0")):
        source = REPO / name
        if source.is_file():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, root / name)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(root.parent), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    for step in (("git", "init", "-q", "-b", "main"), ("git", "add", "-A"), ("git", "commit", "-q", "-m", "checkout")):
        done = run(*step, cwd=root, env=env)
        assert done.returncode == 0, done.stderr
    commit = run("git", "rev-parse", "HEAD", cwd=root).stdout.strip()
    return root, commit


def fresh_venv(folder: Path, *pip_args: str | Path) -> Path:
    """A venv holding fmbench installed by ``pip install --no-deps PIP_ARGS``; its dependencies are this venv's."""
    made = run(sys.executable, "-m", "venv", "--without-pip", folder, cwd=folder.parent)
    assert made.returncode == 0, made.stderr
    python = folder / "bin" / "python"
    installed = run(sys.executable, "-m", "pip", "--python", python, "install", "--quiet", "--no-deps", *pip_args,
                    cwd=folder.parent)
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]
    purelib = run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=folder.parent)
    # This venv's dependencies, fmbench itself left out: under `make test` this venv holds fmbench installed (not
    # editable), and on the path it would be found before an editable install's finder in the new venv.
    dependencies = folder.parent / "dependencies"
    dependencies.mkdir(exist_ok=True)
    for entry in Path(sysconfig.get_paths()["purelib"]).iterdir():
        if not entry.name.startswith(("fmbench", "__editable__")) and not (dependencies / entry.name).exists():
            (dependencies / entry.name).symlink_to(entry)
    (Path(purelib.stdout.strip()) / "zz_test_dependencies.pth").write_text(f"{dependencies}\n", encoding="utf-8")
    return python


def init_and_build(python: Path, tmp_path: Path) -> tuple[Path, subprocess.CompletedProcess[str],
                                                          subprocess.CompletedProcess[str]]:
    env = {"PATH": f"{python.parent}:/usr/bin:/bin", "HOME": str(tmp_path)}
    where = run(python, "-P", "-c", "import fmbench; print(fmbench.__file__)", cwd=tmp_path, env=env)
    assert not Path(where.stdout.strip()).is_relative_to(REPO), where.stdout + where.stderr
    init = run(python, "-P", "-m", "fmbench", "init", "results", cwd=tmp_path, env=env)
    assert init.returncode == 0, init.stdout + init.stderr
    project = tmp_path / "results"
    shutil.copyfile(EXAMPLES / f"{EXAMPLE_NAME}.json", project / "runs" / f"{EXAMPLE_NAME}.json")
    build = run(python, "-P", "-m", "fmbench", "build", "-j", "1", cwd=project, env=env)
    assert build.returncode == 0, build.stdout + build.stderr
    return project, init, build


@pytest.mark.packaging
def test_an_install_by_git_url_gets_a_workflow_install_pinned_at_its_commit_that_pip_download_resolves(
    checkout: tuple[Path, str], tmp_path: Path
) -> None:
    repo, commit = checkout
    url = f"git+{repo.as_uri()}"
    python = fresh_venv(tmp_path / "venv", f"{DISTRIBUTION} @ {url}")
    project, init, build = init_and_build(python, tmp_path)
    pinned = install_setting(project)
    assert pinned == f"{DISTRIBUTION} @ {url}@{commit}"
    # The repository is on this machine: pinned, and said once to be out of a runner's reach.
    assert init.stderr.count("warning: ") == 1 and "from a git repository on this machine" in init.stderr
    assert "warning: " in build.stderr
    downloaded = run(sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--dest", tmp_path / "dl",
                     pinned, cwd=tmp_path)
    assert downloaded.returncode == 0, downloaded.stdout[-3000:] + downloaded.stderr[-3000:]


@pytest.mark.packaging
def test_an_install_from_a_wheel_file_says_in_one_line_at_init_and_each_build_how_to_set_the_install(
    checkout: tuple[Path, str], tmp_path: Path
) -> None:
    repo, _ = checkout
    wheels = tmp_path / "wheels"
    made = run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", wheels, repo, cwd=tmp_path)
    assert made.returncode == 0, made.stdout[-3000:] + made.stderr[-3000:]
    (wheel,) = wheels.glob("*.whl")
    python = fresh_venv(tmp_path / "venv", wheel)
    project, init, build = init_and_build(python, tmp_path)
    assert install_setting(project) == RELEASE
    for said in (init.stderr, build.stderr):
        (line,) = [x for x in said.splitlines() if x.startswith("warning: ")]
        assert line.startswith(f"warning: fmbench {__version__} was installed from a file on this machine ({wheel})"), line
        assert "set [publishing] install in" in line
    # Once set, the builds say nothing more.
    toml = project / "fmbench.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace(json.dumps(RELEASE), json.dumps(f"wheels/{wheel.name}")),
                    encoding="utf-8")
    again = run(python, "-P", "-m", "fmbench", "build", "-j", "1", cwd=project,
                env={"PATH": f"{python.parent}:/usr/bin:/bin", "HOME": str(tmp_path)})
    assert again.returncode == 0 and "warning: " not in again.stderr, again.stderr


@pytest.mark.packaging
def test_an_editable_checkout_says_the_workflow_cannot_install_it(checkout: tuple[Path, str], tmp_path: Path) -> None:
    repo, _ = checkout
    python = fresh_venv(tmp_path / "venv", "--editable", repo)
    project, init, build = init_and_build(python, tmp_path)
    assert install_setting(project) == RELEASE
    for said in (init.stderr, build.stderr):
        assert f"warning: fmbench {__version__} was installed as an editable checkout ({repo})" in said


def test_the_advice_for_a_checkout_with_an_origin_names_that_origin_at_its_commit(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GIT_CONFIG_NOSYSTEM": "1", "GIT_AUTHOR_NAME": "t",
           "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    checkout = tmp_path / "fmbench"
    checkout.mkdir()
    (checkout / "README").write_text("x\n", encoding="utf-8")
    for step in (("git", "init", "-q", "-b", "main"), ("git", "add", "-A"), ("git", "commit", "-q", "-m", "x"),
                 ("git", "remote", "add", "origin", "git@github.com:ada/fmbench.git")):
        assert run(*step, cwd=checkout, env=env).returncode == 0
    commit = run("git", "rev-parse", "HEAD", cwd=checkout, env=env).stdout.strip()
    source = source_of({"url": checkout.as_uri(), "dir_info": {"editable": True}})
    assert (f'to a git URL ("{DISTRIBUTION} @ git+https://github.com/ada/fmbench.git@{commit}": this checkout\'s '
            "origin at its commit, once that commit is pushed)") in install_warning(RELEASE, source)
