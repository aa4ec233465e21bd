"""Codemod fixes (libcst, computed when the editor is sent the finding) in VS Code and Neovim: the
quick fix and "fix all" turn TC310's example into its pinned ``fixed`` source."""

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


@pytest.mark.parametrize("profile", ["vscode", "neovim-0.11"])
async def test_compile_in_place_quick_fix_and_fix_all(start, project, profile):
    example = registry.get("TC310").invalid[0]
    path = project / "pkg" / "wrapped.py"
    path.write_text(example.code)
    client = await start(profile, project)
    uri = open_doc(client, path)
    diags = await diagnostics(client, uri, lambda d: any(x.code == "TC310" for x in d))
    found = next(d for d in diags if d.code == "TC310")
    actions = await client.text_document_code_action_async(_params(uri, found))
    quick = [
        a
        for a in actions
        if a.kind == types.CodeActionKind.QuickFix and a.title.startswith("Compile the module in place")
    ]
    assert quick, [a.title for a in actions]
    assert apply_edits(example.code, edits_of(quick[0], uri)) == example.fixed
    fix_all = await client.text_document_code_action_async(_params(uri, found, only=["source.fixAll"]))
    assert [a.kind for a in fix_all] == ["source.fixAll.tclint"]
    assert apply_edits(example.code, edits_of(fix_all[0], uri)) == example.fixed


@pytest.mark.parametrize("profile", ["vscode", "neovim-0.7"])
async def test_each_alternative_is_its_own_quick_fix(start, project, profile):
    """A finding with several fixes (TC104: register `print` as reorderable, guard it with
    `is_compiling()`, remove it) gets one quick fix per alternative, in the rule's order, each
    editing the text its own way; the first one is the pinned ``fixed`` source (the example's
    trailing comment taken away: a removal would delete it, so it is offered only without one).  None is safe, so
    none is marked preferred and "fix all" leaves the print alone."""
    example = registry.get("TC104").invalid[0]
    code, fixed = (text.replace("  # expect: TC104", "") for text in (example.code, example.fixed))
    path = project / "pkg" / "printing.py"
    path.write_text(code)
    client = await start(profile, project, init_options={"settings": {"unsafeFixes": True}})
    uri = open_doc(client, path)
    diags = await diagnostics(client, uri, lambda d: any(x.code == "TC104" for x in d))
    found = next(d for d in diags if d.code == "TC104")
    actions = await client.text_document_code_action_async(_params(uri, found))
    quick = [
        a for a in actions if a.kind == types.CodeActionKind.QuickFix and not a.title.startswith("Disable")
    ]
    assert [a.title.split(" (")[0] for a in quick] == [
        "Register `print` in torch._dynamo.config.reorderable_logging_functions",
        "Print only in eager runs",
        "Remove the `print` call",
    ], [a.title for a in quick]
    assert all(a.title.endswith("— unsafe") and not a.is_preferred for a in quick)
    texts = [apply_edits(code, edits_of(a, uri)) for a in quick]
    assert texts[0] == fixed
    guarded = '    if not torch.compiler.is_compiling():\n        print("activations:", y.shape)\n'
    assert guarded in texts[1]
    assert "print(" not in texts[2] and "y = x.relu()\n    return y * 2" in texts[2]
    fix_all = await client.text_document_code_action_async(_params(uri, found, only=["source.fixAll"]))
    assert not fix_all or apply_edits(code, edits_of(fix_all[0], uri)) == code


async def test_notebook_cell_quick_fixes_edit_the_cell(start, tmp_path):
    """In a notebook cell, the fixes whose edits stay in the cell are quick fixes on that cell's
    document, in its own lines; the codemod (config registration after the imports) is not."""
    from pytest_lsp import client_capabilities

    from tests.helpers.lsputil import write_project
    from tests.server.test_notebooks import CELLS, _open

    root = write_project(tmp_path / "proj")
    caps = client_capabilities("visual-studio-code")
    caps.notebook_document = types.NotebookDocumentClientCapabilities(
        synchronization=types.NotebookDocumentSyncClientCapabilities(
            dynamic_registration=True, execution_summary_support=True
        )
    )
    client = await start("vscode", root, capabilities=caps, init_options={"settings": {"unsafeFixes": True}})
    _nb, cells = _open(client, root, CELLS)
    (found,) = await diagnostics(client, cells[3], lambda d: len(d) == 1)
    actions = await client.text_document_code_action_async(_params(cells[3], found))
    quick = [
        a for a in actions if a.kind == types.CodeActionKind.QuickFix and not a.title.startswith("Disable")
    ]
    assert [a.title.split(" (")[0] for a in quick] == [
        "Print only in eager runs",
        "Remove the `print` call",
    ], [a.title for a in quick]
    text = CELLS[3][1]
    assert apply_edits(text, edits_of(quick[0], cells[3])) == text.replace(
        "    print(x.shape)\n", "    if not torch.compiler.is_compiling():\n        print(x.shape)\n"
    )
    assert apply_edits(text, edits_of(quick[1], cells[3])) == text.replace("    print(x.shape)\n", "")
