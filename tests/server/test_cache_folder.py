"""The language server reads the CLI's cache only from a folder tclint created, and never writes
into one it did not (issue 18 item 3); a cache it may use still serves indexed files."""

from __future__ import annotations

import logging
import os
import subprocess
import sys

from tclint.rules import sealed
from tclint.server.workspace import Workspace

from tests.helpers.lsputil import MODEL, write_project


def _snapshot(folder) -> dict[str, bytes]:
    return {
        os.path.relpath(os.path.join(b, n), folder): open(os.path.join(b, n), "rb").read()
        for b, _d, names in os.walk(folder)
        for n in names
    }


def _index(root, path: str):
    ws = Workspace()
    ws.set_folders([str(root)])
    ws.lint(path, MODEL, 1)
    state = ws.docs[path].root
    while state.index_step(5.0):
        pass
    return state


def test_the_server_uses_a_cache_the_cli_made(tmp_path, monkeypatch):
    monkeypatch.setenv(sealed.KEY_ENV, str(tmp_path / "key"))
    root = write_project(tmp_path / "p")
    subprocess.run(
        [sys.executable, "-m", "tclint.rules", "."], cwd=root, capture_output=True, timeout=120, check=False
    )
    assert (root / ".tclint_cache" / "CACHEDIR.TAG").exists()
    state = _index(root, str(root / "pkg" / "model.py"))
    cache = state.cache()
    assert cache is not None and cache.hits >= 1


def test_the_server_ignores_a_foreign_cache_folder(tmp_path, monkeypatch, caplog):
    monkeypatch.setenv(sealed.KEY_ENV, str(tmp_path / "key"))
    root = write_project(tmp_path / "p")
    (root / "pyproject.toml").write_text((root / "pyproject.toml").read_text() + 'cache-dir = "pkg"\n')
    before = _snapshot(root / "pkg")
    caplog.set_level(logging.WARNING, "tclint.server")
    state = _index(root, str(root / "pkg" / "model.py"))
    assert state.cache() is None and "cache not used" in caplog.text and "did not create" in caplog.text
    assert _snapshot(root / "pkg") == before
