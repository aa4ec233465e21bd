"""The issue-17 codemods that move code, in the editor: TC313's hoist (safe: a quick fix and part
of "fix all") and TC104's move of a `print` to the eager caller (unsafe: a quick fix when unsafe
fixes are on, never in "fix all"), each turning the rule's example into its pinned ``fixed``."""

from __future__ import annotations

import pytest
from lsprotocol import types
from tclint.rules import registry

from tests.helpers.lsputil import apply_edits, diagnostics, edits_of, open_doc

pytestmark = pytest.mark.timeout(180)


def _params(uri: str, diag: types.Diagnostic, only: list[str] | None = None) -> types.CodeActionParams:
    return types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=diag.range,
        context=types.CodeActionContext(diagnostics=[diag], only=only),
    )


async def test_hoist_quick_fix_and_fix_all(start, project):
    example = registry.get("TC313").invalid[0]
    path = project / "pkg" / "loop.py"
    path.write_text(example.code)
    client = await start("vscode", project)
    uri = open_doc(client, path)
    diags = await diagnostics(client, uri, lambda d: any(x.code == "TC313" for x in d))
    found = next(d for d in diags if d.code == "TC313")
    actions = await client.text_document_code_action_async(_params(uri, found))
    quick = [a for a in actions if a.title.startswith("Compile once before the loop and reuse the wrapper")]
    assert quick and quick[0].is_preferred, [a.title for a in actions]
    assert apply_edits(example.code, edits_of(quick[0], uri)) == example.fixed
    fix_all = await client.text_document_code_action_async(_params(uri, found, only=["source.fixAll"]))
    assert apply_edits(example.code, edits_of(fix_all[0], uri)) == example.fixed


async def test_print_moved_to_the_caller_is_a_quick_fix_not_in_fix_all(start, project):
    example = next(ex for ex in registry.get("TC104").invalid if "out = model(" in (ex.fixed or ""))
    path = project / "pkg" / "block.py"
    path.write_text(example.code)
    client = await start("vscode", project, init_options={"settings": {"unsafeFixes": True}})
    uri = open_doc(client, path)
    diags = await diagnostics(client, uri, lambda d: any(x.code == "TC104" for x in d))
    found = next(d for d in diags if d.code == "TC104")
    actions = await client.text_document_code_action_async(_params(uri, found))
    titles = [a.title for a in actions if a.kind == types.CodeActionKind.QuickFix]
    assert titles[0].startswith("Move the `print` to the eager caller, after the compiled call"), titles
    move = next(a for a in actions if a.title == titles[0])
    assert apply_edits(example.code, edits_of(move, uri)) == example.fixed
    fix_all = await client.text_document_code_action_async(_params(uri, found, only=["source.fixAll"]))
    assert all("print" not in "".join(e.new_text for e in edits_of(a, uri)) for a in fix_all)


async def test_hoist_in_a_notebook_cell(start, tmp_path):
    """In a notebook, TC313's hoist (computed on the cells' module) is a quick fix of the loop's
    cell, in that cell's own lines; TC104's move to the caller is not offered: the caller is in
    another cell."""
    from pytest_lsp import client_capabilities

    from tests.helpers.lsputil import write_project
    from tests.server.test_notebooks import _open

    cells = [
        (types.NotebookCellKind.Code, "import torch\nimport torch.nn as nn\n", "python"),
        (
            types.NotebookCellKind.Code,
            "%time\nmodel = nn.Linear(8, 8)\nfor batch in [torch.randn(2, 8)] * 3:\n    torch.compile(model)(batch)\n",
            "python",
        ),
    ]
    root = write_project(tmp_path / "proj")
    caps = client_capabilities("visual-studio-code")
    caps.notebook_document = types.NotebookDocumentClientCapabilities(
        synchronization=types.NotebookDocumentSyncClientCapabilities(
            dynamic_registration=True, execution_summary_support=True
        )
    )
    client = await start("vscode", root, capabilities=caps)
    _nb, uris = _open(client, root, cells)
    diags = await diagnostics(client, uris[1], lambda d: any(x.code == "TC313" for x in d))
    found = next(d for d in diags if d.code == "TC313")
    actions = await client.text_document_code_action_async(_params(uris[1], found))
    quick = [a for a in actions if a.title.startswith("Compile once before the loop")]
    assert quick, [a.title for a in actions]
    assert apply_edits(cells[1][1], edits_of(quick[0], uris[1])) == (
        "%time\nmodel = nn.Linear(8, 8)\ncompiled_model = torch.compile(model)\n"
        "for batch in [torch.randn(2, 8)] * 3:\n    compiled_model(batch)\n"
    )
