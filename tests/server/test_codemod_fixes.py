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
    quick = [a for a in actions if a.kind == types.CodeActionKind.QuickFix and a.title.startswith("Compile the module in place")]
    assert quick, [a.title for a in actions]
    assert apply_edits(example.code, edits_of(quick[0], uri)) == example.fixed
    fix_all = await client.text_document_code_action_async(_params(uri, found, only=["source.fixAll"]))
    assert [a.kind for a in fix_all] == ["source.fixAll.tclint"]
    assert apply_edits(example.code, edits_of(fix_all[0], uri)) == example.fixed
