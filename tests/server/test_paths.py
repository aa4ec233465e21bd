"""Paths in what the editor shows (messages, related locations, the region chain, hovers) are
written relative to the workspace folder, as the CLI writes them relative to where it runs
(issue 19 item 3): never "compiled via ... at /home/me/proj/train.py:5"."""

from __future__ import annotations

import pytest
from lsprotocol import types
from tclint.server.convert import workspace_relative

from tests.helpers.lsputil import diagnostics, open_doc

pytestmark = pytest.mark.timeout(180)


def test_workspace_relative_rewrites_only_paths_below_the_folder():
    text = "compiled via `torch.compile(m)` at /w/proj/train.py:5 → Model.forward (called from Block.forward at /w/proj/pkg/model.py:46)"
    assert workspace_relative(text, "/w/proj") == (
        "compiled via `torch.compile(m)` at train.py:5 → Model.forward (called from Block.forward at pkg/model.py:46)"
    )
    assert workspace_relative(text, "/w/proj/") == workspace_relative(text, "/w/proj")
    # elsewhere, a sibling folder with the same prefix, or a path that merely contains it: unchanged
    for other in ("at /w/other/a.py:1", "at /w/project2/a.py:1", "at /x/w/proj/a.py:1", "at ~/w/proj/a.py:1"):
        assert workspace_relative(other, "/w/proj") == other
    assert workspace_relative(text, None) == text


async def test_messages_region_related_and_hover_are_workspace_relative(start, project):
    client = await start("vscode", project)
    model = project / "pkg" / "model.py"
    uri = open_doc(client, model)
    diags = await diagnostics(client, uri, lambda d: len(d) >= 2)
    absolute = str(project) + "/"
    item = next(d for d in diags if d.code == "TC101")
    region = item.data["region"]
    assert "at train.py:" in region and absolute not in region, region
    shown = [d.message for d in diags] + [r.message for d in diags for r in d.related_information or []]
    assert shown and not [m for m in shown if absolute in m], shown
    # the related locations still link to the files themselves
    assert item.related_information[0].location.uri == (project / "train.py").as_uri()
    hover = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=uri), position=item.range.start)
    )
    assert hover is not None and "train.py:" in hover.contents.value and absolute not in hover.contents.value
    # the hover on the compiled function itself (its chain to the compile site)
    fn_hover = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(line=9, character=9)
        )
    )
    assert fn_hover is not None and "**Compiled**" in fn_hover.contents.value, fn_hover
    assert "train.py:" in fn_hover.contents.value and absolute not in fn_hover.contents.value, (
        fn_hover.contents.value
    )
