"""The server's bounds: ``max-file-size`` for open buffers (one TC011, as the CLI reports a file
on disk), and no indexing of the file system's root, the home folder or above, or of a tree too
large to list in ``DISCOVERY_BUDGET``."""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path

import pytest
from tclint.rules.reading import read_source
from tclint.server import workspace as workspace_mod
from tclint.server.workspace import Workspace, buffer_too_large, unindexable

from tests.helpers.lsputil import MODEL, PYPROJECT, write_project
from tests.helpers.rawlsp import RawClient

pytestmark = pytest.mark.timeout(120)
LIMIT = 20_000
BIG = MODEL + "x = 1\n" * 5_000  # ~30 KB, over LIMIT
SCRIPT = MODEL + "\n\nfast = torch.compile(Model())\n"  # compiled in the file itself: TC101 alone


def _publication(client: RawClient, uri: str, version: int) -> asyncio.Future:
    return client.expect(
        lambda m: (
            m.get("method") == "textDocument/publishDiagnostics"
            and m["params"]["uri"] == uri
            and m["params"].get("version") == version
        )
    )


async def test_a_buffer_over_max_file_size_gets_the_clis_tc011_only(tmp_path):
    root = write_project(tmp_path / "p")
    (root / "pyproject.toml").write_text(PYPROJECT + f"max-file-size = {LIMIT}\n")
    path = root / "pkg" / "model.py"
    uri = path.as_uri()
    client = await RawClient.start()
    try:
        await client.initialize(str(root), {"textDocument": {"publishDiagnostics": {}}})
        first = _publication(client, uri, 1)
        client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": BIG}},
        )
        diags = (await asyncio.wait_for(first, 30))["params"]["diagnostics"]
        expected = read_source(str(path), BIG.encode(), LIMIT).error  # the CLI's message for such a file
        assert [(d["code"], d["message"], d["range"]["start"]) for d in diags] == [
            ("TC011", expected, {"line": 0, "character": 0})
        ]
        small = _publication(client, uri, 2)
        client.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": MODEL}]},
        )
        codes = {d["code"] for d in (await asyncio.wait_for(small, 30))["params"]["diagnostics"]}
        assert "TC011" not in codes and "TC101" in codes, codes
        again = _publication(client, uri, 3)
        client.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": 3}, "contentChanges": [{"text": BIG}]},
        )
        assert [d["code"] for d in (await asyncio.wait_for(again, 30))["params"]["diagnostics"]] == ["TC011"]
    finally:
        await client.shutdown()


def test_an_oversized_buffer_keeps_nothing_derived_from_its_text(tmp_path):
    root = write_project(tmp_path / "p")
    (root / "pyproject.toml").write_text(PYPROJECT + f"max-file-size = {LIMIT}\n")
    path = str(root / "pkg" / "model.py")
    ws = Workspace()
    ws.set_folders([str(root)])
    assert not ws.lint(path, MODEL, 1).too_large
    state = ws.docs[path]
    assert state.analyzer.snapshot is not None and state.last_good_text is not None
    out = ws.lint(path, BIG, 2)
    assert out.too_large and [d.code for d in out.diagnostics] == ["TC011"]
    assert state.analyzer.snapshot is None and state.last_good_text is None and not state.last_good
    assert root.joinpath("train.py").exists()
    facts = state.root.current_facts(path)
    assert facts is not None and facts.error is not None  # the project sees an unreadable file


def test_buffer_size_is_counted_in_utf8_bytes():
    assert (
        buffer_too_large("é" * 6_000, 10_000)
        == "file is too large to lint (12,000 bytes; max-file-size is 10,000)"
    )
    assert buffer_too_large("é" * 4_000, 10_000) is None
    assert buffer_too_large("a" * 10_000, 10_000) is None
    assert buffer_too_large("a" * 10_001, 10_000) is not None
    assert buffer_too_large("\U0001f600" * 2_501, 10_000) is not None  # 4 bytes each


def test_the_file_system_root_and_the_home_folder_are_not_indexable(tmp_path, monkeypatch):
    home = tmp_path / "home" / "me"
    home.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    assert unindexable(os.sep) is not None
    assert unindexable(str(home)) == "it is your home folder"
    assert unindexable(str(home.parent)) == "it holds your home folder"
    assert unindexable(str(home / "project")) is None
    assert unindexable(str(tmp_path / "elsewhere")) is None


def test_a_workspace_folder_of_the_home_folder_is_not_indexed(tmp_path, monkeypatch, caplog):
    home = tmp_path / "me"
    (home / ".git").mkdir(parents=True)  # a dotfiles repository makes home a project root
    (home / "lib").mkdir()
    (home / "lib" / "a.py").write_text("import torch\n")
    monkeypatch.setenv("HOME", str(home))
    caplog.set_level(logging.WARNING, "tclint.server")
    ws = Workspace()
    ws.set_folders([str(home)])
    out = ws.lint(str(home / "notes.py"), SCRIPT, 1)
    root = ws.docs[str(home / "notes.py")].root
    assert root.path == str(home) and not root.index and not root.disk
    assert "TC101" in {d.code for d in out.diagnostics}  # the open file is still linted
    assert f"not indexing {home} (it is your home folder)" in caplog.text


def test_listing_stops_at_the_budget(tmp_path, monkeypatch, caplog):
    root = write_project(
        tmp_path / "p", {"pyproject.toml": PYPROJECT, **{f"m{i}/x.py": "x = 1\n" for i in range(30)}}
    )
    caplog.set_level(logging.WARNING, "tclint.server")
    ws = Workspace()
    ws.set_folders([str(root)])
    monkeypatch.setattr(workspace_mod, "MAX_INDEXED_FILES", 7)
    r = ws.root_for(str(root))
    r.discover()
    assert len(r.pending) == 7 and "holds more than 7 files" in caplog.text
    monkeypatch.setattr(workspace_mod, "MAX_INDEXED_FILES", 20_000)
    monkeypatch.setattr(workspace_mod, "DISCOVERY_BUDGET", 0.0)
    ws.reset_configuration()
    r.discover()
    assert len(r.pending) <= 1 and f"listing {root} took over 0 s" in caplog.text


async def test_a_workspace_folder_of_the_file_system_root_is_not_indexed(tmp_path):
    """A session opened on `/`: the server answers at once, lints the open file alone and says
    why in the log (it used to list and analyse up to 20,000 files of the whole disk first)."""
    folder = tmp_path / "loose"
    folder.mkdir()
    path = folder / "script.py"
    path.write_text(SCRIPT)
    from tclint.rules.config import project_root

    if project_root([str(path)]) is not None:
        pytest.skip("the temporary folder lies inside a project")
    client = await RawClient.start()
    try:
        await client.initialize(os.sep, {"textDocument": {"publishDiagnostics": {}}})
        published = _publication(client, path.as_uri(), 1)
        client.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": path.as_uri(), "languageId": "python", "version": 1, "text": SCRIPT}},
        )
        diags = (await asyncio.wait_for(published, 20))["params"]["diagnostics"]
        assert "TC101" in {d["code"] for d in diags}
        logs = [m["params"]["message"] for _t, m in client.received if m.get("method") == "window/logMessage"]
        assert any(f"not indexing {os.sep} (it is the root of the file system)" in m for m in logs), logs
    finally:
        await client.shutdown()


def test_the_project_path_is_unaffected(tmp_path):
    """A workspace folder that is a project is indexed as before."""
    root = write_project(tmp_path / "p")
    ws = Workspace()
    ws.set_folders([str(root)])
    r = ws.root_for(str(root / "pkg" / "model.py"))
    assert r.index
    r.discover()
    assert {Path(p).name for p in r.pending} >= {"model.py", "train.py"}


def test_the_log_says_what_is_indexed(tmp_path, caplog):
    root = write_project(tmp_path / "p")
    caplog.set_level(logging.INFO, "tclint.server")
    ws = Workspace()
    ws.set_folders([str(root)])
    r = ws.root_for(str(root))
    r.discover()
    assert f"indexing 3 files of {root} in the background" in caplog.text
    while r.index_step(1.0):
        pass
    assert f"indexed 3 files of {root} in " in caplog.text
