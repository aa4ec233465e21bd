"""Notebooks (notebookDocument/*): code cells linted as one module, diagnostics per cell."""

from __future__ import annotations

import pytest
from lsprotocol import types
from lsputil import diagnostics, edits_of, write_project
from pytest_lsp import client_capabilities

pytestmark = pytest.mark.timeout(120)

CELLS = [
    (types.NotebookCellKind.Markup, "# A notebook\n", "markdown"),
    (types.NotebookCellKind.Code, "import torch\n%matplotlib inline\n", "python"),
    (types.NotebookCellKind.Markup, "Compile a function:\n", "markdown"),
    (types.NotebookCellKind.Code, "@torch.compile\ndef f(x: torch.Tensor) -> torch.Tensor:\n    print(x.shape)\n    return x.sin()\n", "python"),
    (types.NotebookCellKind.Code, "f(torch.randn(3))\n", "python"),
]


def _open(client, root, cells):
    nb_uri = (root / "explore.ipynb").as_uri()
    cell_uris = [f"vscode-notebook-cell:{(root / 'explore.ipynb').as_posix()}#cell{i}" for i in range(len(cells))]
    client.notebook_document_did_open(
        types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(
                uri=nb_uri, notebook_type="jupyter-notebook", version=1,
                cells=[types.NotebookCell(kind=kind, document=uri) for (kind, _t, _l), uri in zip(cells, cell_uris, strict=True)],
            ),
            cell_text_documents=[
                types.TextDocumentItem(uri=uri, language_id=lang, version=1, text=text)
                for (_k, text, lang), uri in zip(cells, cell_uris, strict=True)
            ],
        )
    )
    return nb_uri, cell_uris


async def test_notebook_cells_get_their_own_diagnostics(start, tmp_path):
    root = write_project(tmp_path / "proj")
    caps = client_capabilities("visual-studio-code")  # a VS Code recent enough to sync notebooks
    caps.notebook_document = types.NotebookDocumentClientCapabilities(
        synchronization=types.NotebookDocumentSyncClientCapabilities(dynamic_registration=True, execution_summary_support=True)
    )
    client = await start("vscode", root, capabilities=caps)
    sync = client.init_result.capabilities.notebook_document_sync
    assert sync is not None and sync.notebook_selector[0].notebook == "jupyter-notebook"
    nb_uri, cells = _open(client, root, CELLS)
    diags = await diagnostics(client, cells[3], lambda d: len(d) == 1)
    assert diags[0].code == "TC104"
    assert (diags[0].range.start.line, diags[0].range.start.character) == (2, 4)  # cell-relative
    assert list(client.diagnostics.get(cells[1], [])) == [] and list(client.diagnostics.get(cells[4], [])) == []
    assert cells[0] not in client.diagnostics  # markdown cells get nothing
    # "disable for this line" works in a cell
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=cells[3]),
            range=diags[0].range,
            context=types.CodeActionContext(diagnostics=[diags[0]]),
        )
    )
    noqa = next(a for a in actions if a.title == "Disable TC104 for this line")
    (edit,) = edits_of(noqa, cells[3])
    assert edit.new_text.endswith("# noqa: TC104") and edit.range.start.line == 2
    # editing the cell: the finding goes (the notebook is re-linted as a whole)
    client.notebook_document_did_change(
        types.DidChangeNotebookDocumentParams(
            notebook_document=types.VersionedNotebookDocumentIdentifier(uri=nb_uri, version=2),
            change=types.NotebookDocumentChangeEvent(
                cells=types.NotebookDocumentCellChanges(
                    text_content=[
                        types.NotebookDocumentCellContentChanges(
                            document=types.VersionedTextDocumentIdentifier(uri=cells[3], version=2),
                            changes=[types.TextDocumentContentChangePartial(
                                range=types.Range(start=types.Position(line=2, character=4), end=types.Position(line=2, character=18)),
                                text="pass")],
                        )
                    ]
                )
            ),
        )
    )
    await diagnostics(client, cells[3], lambda d: d == [])
    client.notebook_document_did_close(
        types.DidCloseNotebookDocumentParams(
            notebook_document=types.NotebookDocumentIdentifier(uri=nb_uri),
            cell_text_documents=[types.TextDocumentIdentifier(uri=u) for u in cells],
        )
    )
    await diagnostics(client, cells[1], lambda d: d == [])  # cleared on close
