"""End to end: the real server, driven with the capabilities of real clients."""

from __future__ import annotations

import pytest
from lsprotocol import types
from lsputil import apply_edits, codes, diagnostics, edits_of, open_doc

pytestmark = pytest.mark.timeout(120)

CLIENTS = ["vscode", "neovim-0.7", "neovim-0.11", "emacs"]


@pytest.mark.parametrize("profile", CLIENTS)
async def test_diagnostics_actions_hover(start, project, profile):
    client = await start(profile, project)
    model = project / "pkg" / "model.py"
    uri = open_doc(client, model)
    diags = await diagnostics(client, uri, lambda d: len(d) >= 2)
    assert ("TC104", 12) in codes(diags) and ("TC101", 13) in codes(diags), codes(diags)
    printed = next(d for d in diags if d.code == "TC104")
    assert printed.source == "tclint"
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=uri),
            range=printed.range,
            context=types.CodeActionContext(diagnostics=[printed]),
        )
    )
    titles = [a.title for a in actions]
    assert "Disable TC104 for this line" in titles, titles
    noqa = next(a for a in actions if a.title == "Disable TC104 for this line")
    new_text = apply_edits(model.read_text(), edits_of(noqa, uri))
    assert 'print("block", h.shape)  # noqa: TC104' in new_text
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=printed.range.start)
    )
    assert hover is not None and "TC104" in hover.contents.value
