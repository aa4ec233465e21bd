"""The install paths the README gives (issue 19 item 1), each run as a user would, offline: the
wheel `make dist` builds, a checkout (editable), and a git URL pinned to a commit, each into a
fresh virtual environment that then lints the examples; and `make dist` itself (the wheel plus a
.vsix that carries it, for the VS Code extension's Install prompt).

No package index is reached: tclint is installed with ``--no-deps`` and its dependencies come
from this test environment (pygls and its requirements, and setuptools to build from source,
linked into a folder the fresh venv sees through a ``.pth`` file) -- the static linter itself
needs none of them on Python 3.11."""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
import zipfile

import pytest

from tests.helpers.editorutil import ROOT

pytestmark = pytest.mark.slow

README = os.path.join(ROOT, "README.md")
# what the server extra brings (pygls and its requirements), and what a build from source needs
# (setuptools: pip's build isolation would fetch it from the index), taken from this environment
SERVER_DEPS = ("pygls", "lsprotocol", "cattrs", "attrs", "attr", "typing_extensions.py")
BUILD_DEPS = ("setuptools", "_distutils_hack", "pkg_resources", "distutils-precedence.pth")


def readme_install_block() -> str:
    with open(README, encoding="utf-8") as fh:
        text = fh.read()
    section = text.split("## Install", 1)[1].split("\n## ", 1)[0]
    return re.search(r"```sh\n(.*?)```", section, re.S).group(1)


def fresh_venv(tmp_path, name: str) -> str:
    """A new venv (no tclint, no torch) that also sees the server extra's dependencies."""
    venv = tmp_path / name
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True
    )
    python = str(venv / "bin" / "python")
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    deps = tmp_path / f"{name}-deps"
    deps.mkdir()
    here = os.path.dirname(os.path.dirname(__import__("pygls").__file__))
    # setuptools finds its commands through its metadata's entry points: the dist-info goes too
    found = [
        *SERVER_DEPS,
        *BUILD_DEPS,
        *(os.path.basename(p) for p in glob.glob(os.path.join(here, "setuptools-*.dist-info"))),
    ]
    for dep in found:
        if os.path.exists(os.path.join(here, dep)):
            os.symlink(os.path.join(here, dep), deps / dep)
    with open(os.path.join(site, "server-extra-deps.pth"), "w", encoding="utf-8") as fh:
        # a site folder, so that setuptools' own .pth (its distutils) is processed too
        fh.write(f"import site; site.addsitedir({str(deps)!r})\n")
    return python


def pip_install(python: str, *args: str) -> None:
    """pip (this environment's, aimed at ``python``), offline: --no-index, --no-deps."""
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            python,
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-index",
            "--no-deps",
            "--no-build-isolation",
            *args,
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def check_install(python: str, tmp_path, *, editable: bool) -> None:
    bindir = os.path.dirname(python)
    ws = tmp_path / "examples-copy"
    if not ws.exists():
        shutil.copytree(
            os.path.join(ROOT, "examples"), ws, ignore=shutil.ignore_patterns(".tclint_cache", "__pycache__")
        )
    where = subprocess.run(
        [python, "-c", "import tclint.rules.cli as c; print(c.__file__)"],
        capture_output=True,
        text=True,
        check=True,
        cwd=str(tmp_path),
    ).stdout.strip()
    assert where.startswith(ROOT) == editable, (
        where
    )  # a wheel / git install is a copy, a checkout install links
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PRE_COMMIT")}
    proc = subprocess.run(
        [os.path.join(bindir, "tclint"), ".", "--no-cache"],
        cwd=str(ws),
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1 and "tinylm/model.py:43:16: TC102" in proc.stdout, proc.stdout + proc.stderr
    assert "Found 11 problems." in proc.stdout, proc.stdout
    # the [server] extra: the language server imports and answers --help
    server = subprocess.run(
        [python, "-m", "tclint.server", "--help"], env=env, capture_output=True, text=True, timeout=60
    )
    assert server.returncode == 0 and "--tcp" in server.stdout, server.stdout + server.stderr
    assert (
        subprocess.run([python, "-c", "import tclint.server.server"], env=env, capture_output=True).returncode
        == 0
    )
    # never torch
    assert subprocess.run([python, "-c", "import torch"], env=env, capture_output=True).returncode != 0


def test_the_readme_gives_the_three_install_paths():
    block = readme_install_block()
    assert 'python -m pip install -e "./tclint[server]"' in block
    assert 'python -m pip install "tclint-torch[server] @ git+' in block
    assert 'python -m pip install "dist/tclint_torch-0.1.0-py3-none-any.whl[server]"' in block


def test_install_from_the_wheel(tmp_path):
    out = tmp_path / "dist"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "--no-index",
            "-q",
            "-w",
            str(out),
            ROOT,
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=600,
    )
    (wheel,) = glob.glob(str(out / "tclint_torch-*-py3-none-any.whl"))
    assert os.path.basename(wheel) in readme_install_block()  # the name the README writes
    python = fresh_venv(tmp_path, "wheel-venv")
    pip_install(python, f"{wheel}[server]")
    check_install(python, tmp_path, editable=False)


def test_install_from_a_checkout(tmp_path):
    python = fresh_venv(tmp_path, "checkout-venv")
    pip_install(python, "-e", f"{ROOT}[server]")
    check_install(python, tmp_path, editable=True)


def test_install_from_a_git_url_at_a_commit(tmp_path):
    rev = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    python = fresh_venv(tmp_path, "git-venv")
    # the README's `git+<URL>` with this checkout as the URL (PEP 508 wants a host: localhost)
    pip_install(python, f"tclint-torch[server] @ git+file://localhost{ROOT}@{rev}")
    check_install(python, tmp_path, editable=False)


@pytest.mark.editor
def test_make_dist_builds_the_wheel_and_a_vsix_that_carries_it():
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "PRE_COMMIT")}
    proc = subprocess.run(
        ["make", "dist", f"VENV={os.path.dirname(os.path.dirname(sys.executable))}"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    wheels = glob.glob(os.path.join(ROOT, "dist", "tclint_torch-*-py3-none-any.whl"))
    assert len(wheels) == 1, os.listdir(os.path.join(ROOT, "dist"))
    with zipfile.ZipFile(os.path.join(ROOT, "dist", "tclint.vsix")) as zf:
        names = zf.namelist()
        carried = [n for n in names if n.startswith("extension/wheel/")]
        assert carried == [f"extension/wheel/{os.path.basename(wheels[0])}"], names
        with zipfile.ZipFile(wheels[0]) as whl, zf.open(carried[0]) as inner:
            assert inner.read() == open(wheels[0], "rb").read()
            assert "tclint/rules/cli.py" in whl.namelist()


# -- pre-commit: the README's two snippets, as a user's .pre-commit-config.yaml ----------------


def readme_pre_commit_snippets() -> list[str]:
    with open(README, encoding="utf-8") as fh:
        text = fh.read()
    section = text.split("### pre-commit", 1)[1].split("\n### ", 1)[0]
    return re.findall(r"```yaml\n(.*?)```", section, re.S)


def user_repo(tmp_path, config: str, clean_files: int = 0) -> str:
    from tests.helpers.editorutil import PROJECT

    repo = tmp_path / "user"
    shutil.copytree(PROJECT, repo)
    (repo / "good.py").write_text("import torch\n\n\n@torch.compile\ndef f(x):\n    return x * 2\n")
    for i in range(clean_files):
        (repo / f"clean_{i:02d}.py").write_text(f"def helper_{i}(x):\n    return x + {i}\n")
    (repo / ".pre-commit-config.yaml").write_text(config)
    for args in (["init", "-q"], ["add", "."]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)
    return str(repo)


def pre_commit(
    tools_bin: str, repo: str, tmp_path, *args: str, path_first: str | None = None
) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "PRE_COMMIT")}
    env.update(PRE_COMMIT_HOME=str(tmp_path / "pre-commit-home"))
    if path_first:
        env["PATH"] = path_first + os.pathsep + env.get("PATH", "")
    return subprocess.run(
        [os.path.join(tools_bin, "pre-commit"), "run", *args, "--color", "never"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


@pytest.mark.editor
def test_readme_local_hook_as_written(tools_bin, tmp_path):
    """`repo: local` runs the tclint of the activated project environment.  With enough files
    pre-commit splits the run into batches: one summary for the run, and it is pre-commit's."""
    local, _ = readme_pre_commit_snippets()
    assert "repo: local" in local and "language: system" in local
    repo = user_repo(tmp_path, local, clean_files=12)
    proc = pre_commit(tools_bin, repo, tmp_path, "--all-files", path_first=os.path.dirname(sys.executable))
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1, out
    assert "model.py:10:13: TC101" in out and "explore.ipynb:cell 3:4:5: TC104" in out, out
    assert "tclint" in out and "Failed" in out, out
    assert "All checks passed!" not in out and "Found " not in out, out  # no batch speaks for the run
    clean = pre_commit(
        tools_bin,
        repo,
        tmp_path,
        "--files",
        "good.py",
        "clean_00.py",
        path_first=os.path.dirname(sys.executable),
    )
    assert clean.returncode == 0 and "Passed" in clean.stdout, clean.stdout + clean.stderr


@pytest.mark.editor
def test_readme_commit_rev_snippet_as_written(tools_bin, tmp_path):
    """The clone at a commit: pre-commit builds the hook's own venv from this repository."""
    _, pinned = readme_pre_commit_snippets()
    rev = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.strip()
    config = re.sub(r"repo: <[^>\n]*>", f"repo: {ROOT}", pinned)
    config = re.sub(r"rev: <[^\n]*>", f"rev: {rev}", config)
    assert config != pinned and "<" not in config, config
    repo = user_repo(tmp_path, config)
    proc = pre_commit(tools_bin, repo, tmp_path, "--files", "model.py", "good.py")
    out = proc.stdout + proc.stderr
    assert proc.returncode == 1 and "model.py:10:13: TC101" in out, out
    assert "tclint (fix)" in out, out
