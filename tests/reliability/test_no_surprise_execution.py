"""Linting never imports or executes the linted code.  The project below writes a marker file from
every place Python could run it: module top levels, package `__init__`/`__main__`, setup.py,
conftest.py, sitecustomize/usercustomize, a notebook cell, a fake `torch`, and modules named like
the standard-library modules tclint imports lazily (a `json.py` in the project runs if the project
folder lands on sys.path).  Every way of linting -- the CLI with every mode, the pre-commit entries,
the library, the language server -- must leave the marker folder empty."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import textwrap

import pytest
import yaml

from tests.helpers.relutil import BIN, ROOT, LspSession, run, tclint

# lazily imported by the CLI, the engine, the report writers, the server (pygls, asyncio) ...
SHADOWED = (
    "json",
    "argparse",
    "logging",
    "typing",
    "tokenize",
    "difflib",
    "tempfile",
    "pickle",
    "fnmatch",
    "hashlib",
    "tomllib",
    "enum",
    "dataclasses",
    "ast",
    "textwrap",
    "inspect",
    "concurrent",
    "asyncio",
    "threading",
    "pathlib",
    "shutil",
    "copy",
    "uuid",
    "platform",
    "queue",
    "selectors",
    "socket",
    "traceback",
    "importlib_metadata",
    "yaml",
    "libcst",
    "pygls",
    "lsprotocol",
    "cattrs",
    "attrs",
    "torch",
    "numpy",
    "tclint_marker_probe",
)


def _marker(markers: str, name: str) -> str:
    return f"open({os.path.join(markers, name)!r}, 'w').close()\n"


def make_project(root: str, markers: str) -> None:
    os.makedirs(markers, exist_ok=True)
    files = {
        "pyproject.toml": "[project]\nname = 'zz-surprise'\n\n[tool.tclint]\nmin-confidence = 'medium'\n",
        "setup.py": _marker(markers, "setup.py") + "from setuptools import setup\nsetup()\n",
        "conftest.py": _marker(markers, "conftest.py"),
        "noxfile.py": _marker(markers, "noxfile.py"),
        "sitecustomize.py": _marker(markers, "sitecustomize"),
        "usercustomize.py": _marker(markers, "usercustomize"),
        "zz_surprise/__init__.py": _marker(markers, "package __init__"),
        "zz_surprise/__main__.py": _marker(markers, "package __main__"),
        "zz_surprise/model.py": _marker(markers, "model.py")
        + textwrap.dedent("""\
            import torch

            from zz_surprise import helpers


            @torch.compile
            def step(x):
                y = x * 2  # noqa: TC101
                print(y)
                return helpers.scale(y).item()


            if __name__ == "__main__":
                step(torch.ones(3))
            """),
        "zz_surprise/helpers.py": _marker(markers, "helpers.py") + "def scale(x):\n    return x * 3\n",
        "scripts/train.py": _marker(markers, "scripts/train.py") + "import zz_surprise.model\n",
        "tests/test_model.py": _marker(markers, "tests/test_model.py") + "def test_x():\n    pass\n",
    }
    for name in SHADOWED:
        files[f"{name}.py"] = _marker(markers, f"shadowed {name}")
        files[f"zz_surprise/{name}.py"] = _marker(markers, f"shadowed zz_surprise/{name}")
    files["torch/__init__.py"] = _marker(markers, "fake torch package")
    notebook = {
        "cells": [
            {
                "cell_type": "code",
                "metadata": {},
                "outputs": [],
                "execution_count": None,
                "source": [
                    _marker(markers, "notebook cell"),
                    "import torch\n",
                    "@torch.compile\n",
                    "def f(x):\n",
                    "    print(x)\n",
                    "    return x\n",
                ],
            }
        ],
        "metadata": {"kernelspec": {"language": "python", "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    files["zz_surprise/explore.ipynb"] = json.dumps(notebook, indent=1)
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)
    os.makedirs(os.path.join(root, ".git"))  # a repository root: config discovery stops here


@pytest.fixture
def project(tmp_path) -> tuple[str, str]:
    root, markers = str(tmp_path / "project"), str(tmp_path / "markers")
    make_project(root, markers)
    return root, markers


def written(markers: str) -> list[str]:
    return sorted(os.listdir(markers))


def test_the_markers_work(project):
    """The trap is real: running the project's code does write markers."""
    root, markers = project
    proc = run([sys.executable, "-c", "import zz_surprise.model"], cwd=root)
    assert "package __init__" in written(markers) and "model.py" in written(markers), proc.stderr


def test_cli_in_every_mode(project):
    root, markers = project
    runs = [
        ["."],
        [".", "--output-format", "json"],
        [".", "--output-format", "sarif"],
        [".", "--output-format", "full"],
        [".", "--statistics"],
        [".", "--diff", "--unsafe-fixes"],
        ["regions", "."],
        ["zz_surprise/model.py"],
        ["--no-project-index", "zz_surprise/model.py"],
    ]
    for args in runs:
        proc = tclint(*args, cwd=root)
        assert proc.returncode in (0, 1), (args, proc.stderr)
    with open(os.path.join(root, "zz_surprise", "model.py"), "rb") as fh:
        source = fh.read()
    tclint("-", "--stdin-filename", "zz_surprise/model.py", cwd=root, stdin=source)
    tclint(".", "--fix", "--unsafe-fixes", cwd=root)
    tclint(".", "--add-noqa", cwd=root)
    tclint("clean", cwd=root)
    assert written(markers) == []


def test_pre_commit_entries(project):
    """Each hook's entry as pre-commit runs it: the entry, the hook's args, then the file names,
    with PRE_COMMIT=1, from the repository root."""
    root, markers = project
    with open(os.path.join(ROOT, ".pre-commit-hooks.yaml"), encoding="utf-8") as fh:
        hooks = yaml.safe_load(fh)
    files = [
        os.path.relpath(os.path.join(base, n), root)
        for base, _d, names in os.walk(root)
        if ".git" not in base
        for n in names
        if n.endswith((".py", ".ipynb"))
    ]
    assert len(hooks) >= 2
    for hook in hooks:
        cmd = [*hook["entry"].split(), *hook.get("args", []), *sorted(files)]
        cmd[0] = os.path.join(BIN, cmd[0])
        proc = run(cmd, cwd=root, PRE_COMMIT="1")
        assert proc.returncode in (0, 1), (hook["id"], proc.stderr)
    assert written(markers) == []


def test_library_never_imports_the_linted_modules(project, monkeypatch):
    from tclint.rules.config import ConfigResolver
    from tclint.rules.engine import Linter

    root, markers = project
    monkeypatch.chdir(root)
    before = set(sys.modules)
    result = Linter(ConfigResolver()).lint_paths(["."])
    assert {d.code for d in result.diagnostics} >= {"TC104", "TC012"}
    new = set(sys.modules) - before
    from_project = sorted(
        name for name in new if (getattr(sys.modules[name], "__file__", None) or "").startswith(root)
    )
    assert from_project == []
    assert "zz_surprise" not in sys.modules and "torch" not in new
    assert written(markers) == []


def _server_session(cmd: list[str], root: str) -> list[dict]:
    session = LspSession(cmd, cwd=root)
    try:
        return session.lint(root, os.path.join(root, "zz_surprise", "model.py"))
    finally:
        session.close()


@pytest.mark.slow
def test_language_server_lint_path(project, tmp_path):
    """The server started as `tclint server` lints the workspace without running any of it."""
    pytest.importorskip("pygls")
    root, markers = project
    diags = _server_session([os.path.join(BIN, "tclint"), "server"], root)
    assert {d.get("code") for d in diags} >= {"TC104"}
    assert written(markers) == []


def _shadow_tclint(root: str, markers: str) -> None:
    """A `tclint` package of the workspace's own (with `tclint.server` and `tclint.rules`)."""
    for rel in (
        "tclint/__init__.py",
        "tclint/server/__init__.py",
        "tclint/server/__main__.py",
        "tclint/rules/__init__.py",
        "tclint/rules/__main__.py",
    ):
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(_marker(markers, "shadowed " + rel.replace("/", ".")))


def _editor_bootstrap() -> str:
    """What the editors run with `<python> -c` when they start the server from an interpreter
    (VS Code always; Neovim, Emacs, Zed when the environment has no `tclint` console script)."""
    with open(os.path.join(ROOT, "editors", "vscode", "src", "launch.ts"), encoding="utf-8") as fh:
        return re.search(r'SERVER_BOOTSTRAP =\s*"([^"]*)"', fh.read()).group(1)


@pytest.mark.slow
def test_language_server_launched_as_editors_do(project):
    """The bundled editor configurations start `<env>/bin/tclint server` or `<python> -c
    <bootstrap>` with the workspace as working folder (tests/editors/test_editor_launch.py checks
    each configuration builds exactly these).  Neither imports the workspace's `json.py`,
    `logging.py`, ... nor a `tclint/` package of its own, which `python -m tclint.server` (what
    they used to run) imports in place of the server."""
    pytest.importorskip("pygls")
    root, markers = project
    _shadow_tclint(root, markers)
    try:
        for cmd in ([os.path.join(BIN, "tclint"), "server"], [sys.executable, "-c", _editor_bootstrap()]):
            diags = _server_session(cmd, root)
            assert {d.get("code") for d in diags} >= {"TC104"}, cmd
    finally:
        assert written(markers) == []
    run([sys.executable, "-m", "tclint.server", "--version"], cwd=root)
    assert "shadowed tclint.__init__.py" in written(markers)  # the trap is real


def test_module_entry_point(project):
    """`python -m tclint.rules` (used in tests and scripts) with the project as working folder."""
    root, markers = project
    run([sys.executable, "-m", "tclint.rules", "."], cwd=root)
    assert written(markers) == []


def test_fix_writes_only_the_linted_files(project):
    """--fix and --add-noqa touch the files with findings and nothing else (no stray temp files)."""
    root, _markers = project
    shutil.rmtree(os.path.join(root, ".git"))
    os.makedirs(os.path.join(root, ".git"))

    def snapshot() -> dict[str, bytes]:
        out = {}
        for base, _d, names in os.walk(root):
            if ".tclint_cache" in base:
                continue
            for n in names:
                with open(os.path.join(base, n), "rb") as fh:
                    out[os.path.relpath(os.path.join(base, n), root)] = fh.read()
        return out

    before = snapshot()
    tclint(".", "--fix", "--unsafe-fixes", "--no-cache", cwd=root)
    after = snapshot()
    assert set(after) == set(before)
    # The notebook's compiled cell prints: its cell gets a fix too (and stays a valid notebook).
    assert {k for k in before if before[k] != after[k]} == {
        "zz_surprise/model.py",
        "zz_surprise/explore.ipynb",
    }
    assert json.loads(after["zz_surprise/explore.ipynb"])["cells"][0]["cell_type"] == "code"
