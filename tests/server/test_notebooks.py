"""Notebooks (notebookDocument/*): code cells linted as one module, diagnostics per cell."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pytest_lsp import client_capabilities

from tests.helpers.lsputil import diagnostics, edits_of, write_project

pytestmark = pytest.mark.timeout(120)

CELLS = [
    (types.NotebookCellKind.Markup, "# A notebook\n", "markdown"),
    (types.NotebookCellKind.Code, "import torch\n%matplotlib inline\n", "python"),
    (types.NotebookCellKind.Markup, "Compile a function:\n", "markdown"),
    (
        types.NotebookCellKind.Code,
        "@torch.compile\ndef f(x: torch.Tensor) -> torch.Tensor:\n    print(x.shape)\n    return x.sin()\n",
        "python",
    ),
    (types.NotebookCellKind.Code, "f(torch.randn(3))\n", "python"),
]


def _open(client, root, cells):
    nb_uri = (root / "explore.ipynb").as_uri()
    cell_uris = [
        f"vscode-notebook-cell:{(root / 'explore.ipynb').as_posix()}#cell{i}" for i in range(len(cells))
    ]
    client.notebook_document_did_open(
        types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(
                uri=nb_uri,
                notebook_type="jupyter-notebook",
                version=1,
                cells=[
                    types.NotebookCell(kind=kind, document=uri)
                    for (kind, _t, _l), uri in zip(cells, cell_uris, strict=True)
                ],
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
        synchronization=types.NotebookDocumentSyncClientCapabilities(
            dynamic_registration=True, execution_summary_support=True
        )
    )
    client = await start("vscode", root, capabilities=caps)
    sync = client.init_result.capabilities.notebook_document_sync
    assert sync is not None and sync.notebook_selector[0].notebook == "jupyter-notebook"
    nb_uri, cells = _open(client, root, CELLS)
    diags = await diagnostics(client, cells[3], lambda d: len(d) == 1)
    assert diags[0].code == "TC104"
    assert (diags[0].range.start.line, diags[0].range.start.character) == (2, 4)  # cell-relative
    assert (
        list(client.diagnostics.get(cells[1], [])) == [] and list(client.diagnostics.get(cells[4], [])) == []
    )
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
                            changes=[
                                types.TextDocumentContentChangePartial(
                                    range=types.Range(
                                        start=types.Position(line=2, character=4),
                                        end=types.Position(line=2, character=18),
                                    ),
                                    text="pass",
                                )
                            ],
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


async def test_cells_with_vscode_percent_encoded_uris(start, tmp_path):
    """VS Code (code-server: with an authority) sends only the code cells, under URIs whose
    fragment is percent-encoded (`#W2sZmlsZQ%3D%3D`); pygls stores them unquoted.  The cells are
    found all the same, and the findings land on them (issue 19 item 2)."""
    root = write_project(tmp_path / "proj")
    caps = client_capabilities("visual-studio-code")
    caps.notebook_document = types.NotebookDocumentClientCapabilities(
        synchronization=types.NotebookDocumentSyncClientCapabilities(
            dynamic_registration=True, execution_summary_support=True
        )
    )
    client = await start("vscode", root, capabilities=caps)
    code_cells = [c for c in CELLS if c[0] == types.NotebookCellKind.Code]
    nb_uri = (root / "explore.ipynb").as_uri()
    cell_uris = [
        f"vscode-notebook-cell://127.0.0.1:34005{(root / 'explore.ipynb').as_posix()}#W{i}sZmlsZQ%3D%3D"
        for i in range(len(code_cells))
    ]
    client.notebook_document_did_open(
        types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(
                uri=nb_uri,
                notebook_type="jupyter-notebook",
                version=0,
                cells=[
                    types.NotebookCell(kind=k, document=u)
                    for (k, _t, _l), u in zip(code_cells, cell_uris, strict=True)
                ],
            ),
            cell_text_documents=[
                types.TextDocumentItem(uri=u, language_id=lang, version=1, text=text)
                for (_k, text, lang), u in zip(code_cells, cell_uris, strict=True)
            ],
        )
    )
    diags = await diagnostics(client, cell_uris[1], lambda d: len(d) == 1)
    assert diags[0].code == "TC104" and (diags[0].range.start.line, diags[0].range.start.character) == (2, 4)


async def test_pulled_reports_leave_the_notebook_file_alone(start, tmp_path):
    """Pull diagnostics of a notebook on disk would put cell-relative positions on the lines of
    its JSON (a squiggle under `"metadata"`): the notebook's findings go to its cells only."""
    import json as _json

    root = write_project(tmp_path / "proj")
    cells = [
        {"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None, "source": text}
        for kind, text, _lang in CELLS
        if kind == types.NotebookCellKind.Code
    ]
    (root / "explore.ipynb").write_text(
        _json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    )
    client = await start("neovim-0.11", root)  # a pull client
    report = await client.workspace_diagnostic_async(types.WorkspaceDiagnosticParams(previous_result_ids=[]))
    uris = {item.uri for item in report.items}
    assert (root / "pkg" / "model.py").as_uri() in uris, uris  # the project's findings are reported
    assert not any(u.endswith(".ipynb") for u in uris), uris
    doc = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(
            text_document=types.TextDocumentIdentifier(uri=(root / "explore.ipynb").as_uri())
        )
    )
    assert list(doc.items) == []


async def test_cells_are_numbered_as_jupyter_numbers_them(start, tmp_path):
    """The server asks for every cell ("*"), so that the cell numbers in what it shows ("compiled
    via `@torch.compile` at explore.ipynb:cell 4:1") are the CLI's, markdown cells counted."""
    root = write_project(tmp_path / "proj")
    caps = client_capabilities("visual-studio-code")
    caps.notebook_document = types.NotebookDocumentClientCapabilities(
        synchronization=types.NotebookDocumentSyncClientCapabilities(
            dynamic_registration=True, execution_summary_support=True
        )
    )
    client = await start("vscode", root, capabilities=caps)
    selector = client.init_result.capabilities.notebook_document_sync.notebook_selector[0]
    assert [c.language for c in selector.cells] == ["*"]
    _nb, cells = _open(client, root, CELLS)
    (diag,) = await diagnostics(client, cells[3], lambda d: len(d) == 1)
    assert "explore.ipynb:cell 4:1" in diag.data["region"], diag.data["region"]
