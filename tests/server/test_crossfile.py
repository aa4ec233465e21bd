"""Cross-file awareness, configuration files, multi-root workspaces."""

from __future__ import annotations

import asyncio
import textwrap

import pytest
from lsprotocol import types

from tests.helpers.lsputil import MODEL, PYPROJECT, change_doc, codes, diagnostics, open_doc, write_project

pytestmark = pytest.mark.timeout(180)

UTILS = textwrap.dedent(
    """\
    import torch


    def scale(t: torch.Tensor) -> torch.Tensor:
        m = t.abs().max().item()
        return t / m
    """
)


def _watched(client, *changes: tuple[str, types.FileChangeType]) -> None:
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=uri, type=kind) for uri, kind in changes]
        )
    )


async def test_editing_one_file_reevaluates_files_that_depend_on_it(start, tmp_path):
    """Block.forward starts calling utils.scale: scale is now compiled, utils.py gets a finding."""
    root = write_project(tmp_path / "proj")
    (root / "pkg" / "utils.py").write_text(UTILS)
    client = await start("vscode", root)
    model_uri = open_doc(client, root / "pkg" / "model.py")
    utils_uri = open_doc(client, root / "pkg" / "utils.py")
    await diagnostics(client, model_uri, lambda d: len(d) == 2)
    assert await diagnostics(client, utils_uri, lambda d: d == []) == []
    new_model = MODEL.replace(
        "import torch.nn as nn\n", "import torch.nn as nn\n\nfrom pkg.utils import scale\n"
    ).replace("            return h * s", "            return scale(h) * s")
    new_model = new_model.replace("        return h * s", "        return scale(h) * s")
    change_doc(client, model_uri, 2, [types.TextDocumentContentChangeWholeDocument(text=new_model)])
    diags = await diagnostics(client, utils_uri, lambda d: len(d) == 1)
    assert codes(diags) == [("TC101", 5)]
    assert "Block.forward" in diags[0].related_information[-1].message or any(
        "scale" in r.message for r in diags[0].related_information
    )


async def test_unsaved_buffer_overrides_disk_and_watched_files_update_the_index(start, tmp_path):
    root = write_project(tmp_path / "proj")
    client = await start("vscode", root)
    model_uri = open_doc(client, root / "pkg" / "model.py")
    await diagnostics(client, model_uri, lambda d: len(d) == 2)
    # the compile site goes away in an unsaved buffer: model.py is no longer compiled
    train = root / "train.py"
    train_uri = open_doc(client, train)
    change_doc(
        client,
        train_uri,
        2,
        [
            types.TextDocumentContentChangeWholeDocument(
                text=train.read_text().replace("torch.compile(Model())", "Model()")
            )
        ],
    )
    await diagnostics(client, model_uri, lambda d: d == [])
    # closing the buffer falls back to the file on disk (which still compiles)
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=train_uri))
    )
    await diagnostics(client, model_uri, lambda d: len(d) == 2)
    # the file changes on disk: the watcher notification updates the index
    train.write_text(train.read_text().replace("torch.compile(Model())", "Model()"))
    _watched(client, (train_uri, types.FileChangeType.Changed))
    await diagnostics(client, model_uri, lambda d: d == [])
    # a new file on disk compiles it again
    other = root / "serve.py"
    other.write_text("import torch\nfrom pkg.model import Model\n\nfast = torch.compile(Model())\n")
    _watched(client, (other.as_uri(), types.FileChangeType.Created))
    await diagnostics(client, model_uri, lambda d: len(d) == 2)
    other.unlink()
    _watched(client, (other.as_uri(), types.FileChangeType.Deleted))
    await diagnostics(client, model_uri, lambda d: d == [])


async def test_configuration_file_is_reloaded_and_wins_over_the_editor(start, tmp_path):
    root = write_project(tmp_path / "proj")
    client = await start(
        "vscode", root, init_options={"settings": {"select": ["TC101", "TC104"], "ignore": []}}
    )
    uri = open_doc(client, root / "pkg" / "model.py")
    await diagnostics(client, uri, lambda d: len(d) == 2)
    (root / "pyproject.toml").write_text(PYPROJECT + 'ignore = ["TC104"]\n')
    _watched(client, ((root / "pyproject.toml").as_uri(), types.FileChangeType.Changed))
    diags = await diagnostics(client, uri, lambda d: codes(d) == [("TC101", 13)])
    assert codes(diags) == [("TC101", 13)]
    # the file says select = TC104 only: it wins over the editor's select (filesystemFirst)
    (root / "pyproject.toml").write_text(PYPROJECT + 'select = ["TC104"]\n')
    _watched(client, ((root / "pyproject.toml").as_uri(), types.FileChangeType.Changed))
    await diagnostics(client, uri, lambda d: codes(d) == [("TC104", 12)])


async def test_editor_first_and_editor_only(start, tmp_path):
    root = write_project(tmp_path / "proj")
    (root / "pyproject.toml").write_text(PYPROJECT + 'ignore = ["TC104"]\n')
    client = await start("vscode", root, init_options={"settings": {"configurationPreference": "editorOnly"}})
    uri = open_doc(client, root / "pkg" / "model.py")
    await diagnostics(client, uri, lambda d: codes(d) == [("TC101", 13), ("TC104", 12)])
    # editorFirst: where both set a key (here `select`), the editor wins
    other = write_project(tmp_path / "other")
    (other / "pyproject.toml").write_text(PYPROJECT + 'select = ["TC101"]\n')
    client2 = await start(
        "vscode",
        other,
        init_options={"settings": {"configurationPreference": "editorFirst", "select": ["TC104"]}},
    )
    uri2 = open_doc(client2, other / "pkg" / "model.py")
    await diagnostics(client2, uri2, lambda d: codes(d) == [("TC104", 12)])


async def test_config_error_is_a_visible_warning_naming_file_and_key(start, tmp_path):
    root = write_project(tmp_path / "proj")
    (root / "pyproject.toml").write_text(PYPROJECT + 'ignroe = ["TC104"]\n')
    client = await start("vscode", root)
    shown = client.protocol.wait_for_notification_async(types.WINDOW_SHOW_MESSAGE)
    uri = open_doc(client, root / "pkg" / "model.py")
    await asyncio.wait_for(shown, 30)
    message = client.messages[-1]
    assert message.type == types.MessageType.Warning
    assert "pyproject.toml" in message.message and "ignroe" in message.message, message.message
    # the server goes on, with the defaults
    assert len(await diagnostics(client, uri, lambda d: len(d) == 2)) == 2
    # bad editor settings are named too
    shown = client.protocol.wait_for_notification_async(types.WINDOW_SHOW_MESSAGE)
    bad = {"select": ["TC9x"], "lintDebounce": "soon"}
    client.set_configuration(bad, section="tclint")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings={"tclint": bad}))
    await asyncio.wait_for(shown, 30)
    await asyncio.sleep(0.5)
    text = " ".join(m.message for m in client.messages)
    assert "tclint.select" in text and "tclint.lintDebounce" in text, text
    assert text.count("ignroe") == 1, text  # each problem is shown once


async def test_multi_root_workspace_folders_have_their_own_configuration(start, tmp_path):
    a = write_project(tmp_path / "a")
    b = write_project(tmp_path / "b")
    (a / "pyproject.toml").write_text(PYPROJECT + 'ignore = ["TC104"]\n')
    client = await start("vscode", tmp_path, folders=[a, b])
    uri_a = open_doc(client, a / "pkg" / "model.py")
    uri_b = open_doc(client, b / "pkg" / "model.py")
    assert codes(await diagnostics(client, uri_a, lambda d: len(d) == 1)) == [("TC101", 13)]
    assert codes(await diagnostics(client, uri_b, lambda d: len(d) == 2)) == [("TC101", 13), ("TC104", 12)]
    # a's compile site does not compile b's model: remove b's and b goes quiet, a does not
    train_b = b / "train.py"
    train_b.write_text(train_b.read_text().replace("torch.compile(Model())", "Model()"))
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=train_b.as_uri(), type=types.FileChangeType.Changed)]
        )
    )
    await diagnostics(client, uri_b, lambda d: d == [])
    await asyncio.sleep(0.5)
    assert codes(client.diagnostics[uri_a]) == [("TC101", 13)]
