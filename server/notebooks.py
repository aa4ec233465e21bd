"""Jupyter notebooks (``notebookDocument/*``): lint the code cells as one module, as the CLI does.

Cells run top to bottom in one namespace, so a notebook is analysed as the concatenation of its
code cells (``tclint.rules.notebook``: IPython magics blanked, line numbers kept) under the
notebook's own path (configuration, module name, project index).  Diagnostics are mapped back to
(cell, cell-relative line) and published per cell URI -- every code cell, so a cell that became
clean is cleared.  Notebook diagnostics are always pushed: pull requests name a text document, and
a cell is not one the client pulls for.  "Disable for this line" works in cells, and so do the
fixes whose edits stay in the finding's cell (``CellMap.map_fix``; codemods too, computed on the
cells' module, when all their edits stay in the cell: ``CellMap.resolve_codemod``).  Hover works on cells; code lenses and the probe
are for files on disk.

pygls keeps the notebook and its cells' texts (its workspace); we read them when linting.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

from lsprotocol import types
from tclint.server.convert import Converter
from tclint.server.documents import uri_to_path
from tclint.server.positions import Lines
from tclint.server.scheduler import NORMAL, URGENT

if TYPE_CHECKING:
    from tclint.server.server import TclintServer

log = logging.getLogger("tclint.server")

# Every cell, not only the Python ones: the server numbers cells as Jupyter and the CLI do (over
# all cells, markdown included), which it can only do when the client sends them all; VS Code's
# client honours "*".  Only Python code cells are linted (``cells_of``'s ``is_code``).
SYNC = types.NotebookDocumentSyncOptions(
    notebook_selector=[
        types.NotebookDocumentFilterWithCells(
            notebook="jupyter-notebook",
            cells=[types.NotebookCellLanguage(language="*")],
        )
    ],
    save=True,
)


def cells_of(ls: TclintServer, uri: str) -> tuple[int, list[tuple[str, str, bool]]] | None:
    """(notebook version, [(cell URI, text, is code)]) from pygls' workspace."""
    notebook = ls.workspace.get_notebook_document(notebook_uri=uri)
    if notebook is None:
        return None
    cells = []
    docs = ls.workspace.text_documents
    for cell in notebook.cells:
        # pygls keys documents by the unquoted URI; VS Code's cell URIs are percent-encoded
        # (`vscode-notebook-cell://host/nb.ipynb#W2sZmlsZQ%3D%3D`): look up both ways
        doc = docs.get(cell.document) or docs.get(unquote(cell.document))
        text = doc.source if doc is not None else ""
        is_code = cell.kind == types.NotebookCellKind.Code and (
            doc is None or (doc.language_id or "python") == "python"
        )
        cells.append((cell.document, text, is_code))
    return notebook.version, cells


def as_ipynb(cells: list[tuple[str, str, bool]]) -> bytes:
    """The notebook's JSON as the CLI reads it from disk."""
    nb = {
        "cells": [
            {"cell_type": "code" if code else "markdown", "source": text, "metadata": {}}
            for _uri, text, code in cells
        ],
        "metadata": {"kernelspec": {"language": "python", "name": "python3", "display_name": "Python 3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(nb).encode()


def schedule(ls: TclintServer, uri: str, delay: float) -> None:
    key = "nb:" + uri
    handle = ls.timers.pop(key, None)
    if handle is not None:
        handle.cancel()
    loop = asyncio.get_running_loop()

    def start() -> None:
        ls.timers.pop(key, None)
        loop.create_task(lint(ls, uri)).add_done_callback(_log_error)

    if delay <= 0:
        loop.call_soon(start)
    else:
        ls.timers[key] = loop.call_later(delay, start)


def _log_error(task: asyncio.Task[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("linting a notebook failed: %s", task.exception(), exc_info=task.exception())


async def lint(ls: TclintServer, uri: str) -> None:
    found = cells_of(ls, uri)
    path = uri_to_path(uri)
    if found is None or path is None:
        return
    version, cells = found
    editor = ls.editor_for_path(path)
    ctx = ls.convert_context(editor)
    data = as_ipynb(cells)
    started = time.perf_counter()

    def job() -> list[tuple[str, str, Any]]:
        from tclint.server.server import Published

        out = ls.ws.lint_notebook(path, data, version) if editor.enable else None
        by_cell: dict[int, list[Any]] = {}
        for d in _cell_codemods(out.diagnostics, data) if out is not None else []:
            by_cell.setdefault(d.cell or 1, []).append(d)
        results = []
        for number, (cell_uri, text, is_code) in enumerate(cells, start=1):
            if not is_code:
                continue
            lines = Lines.of(text)
            conv = Converter(
                lines,
                ctx["encoding"],
                ctx["editor"],
                out.settings if out else None,
                ctx["features"],
                ls.others,
                ctx["open_texts"],
                base=ls.ws.folder_of(path),
            )
            diags = by_cell.get(number, [])
            body = conv.convert_all(diags, path)
            pub = Published(
                cell_uri,
                version,
                path,
                text,
                diags,
                body,
                f"nb{version}-{hash(body)}",
                out.settings if out else None,
                lines=lines,
                notebook=uri,
            )
            results.append((cell_uri, body, pub))
        return results

    try:
        results = await ls.run_job(job, URGENT, key=("notebook", uri))
    except asyncio.CancelledError:
        return
    current = cells_of(ls, uri)
    if current is None or current[0] != version:
        return  # the notebook changed meanwhile: its next analysis publishes
    for cell_uri, body, pub in results:
        ls.published[cell_uri] = pub
        ls.publish(cell_uri, None, body)
    log.debug("notebook %s linted in %.0f ms", uri, (time.perf_counter() - started) * 1000)


def _cell_codemods(diags: list[Any], data: bytes) -> list[Any]:
    """``diags`` with their cells' codemod fixes computed on the notebook's module text
    (``CellMap.resolve_codemod``: kept when every edit stays in the finding's cell), as the CLI
    computes them; libcst is imported only for a notebook that has one."""
    from tclint.rules.fixes import offered

    if not any(f.codemod for d in diags for f in offered(d)):
        return diags
    from tclint.rules.fixes import resolve_fixes
    from tclint.rules.notebook import load_notebook

    text, cells, _error = load_notebook(data)
    if text is None or cells is None:
        return diags
    return resolve_fixes(diags, lambda _path: text, lambda _path: cells)


def register(ls: TclintServer) -> None:
    @ls.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def did_open(ls: TclintServer, params: types.DidOpenNotebookDocumentParams) -> None:
        schedule(ls, params.notebook_document.uri, 0)

    @ls.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def did_change(ls: TclintServer, params: types.DidChangeNotebookDocumentParams) -> None:
        uri = params.notebook_document.uri
        editor = ls.editor_for_path(uri_to_path(uri))
        if editor.lint_on_change:
            schedule(ls, uri, editor.debounce_ms / 1000)

    @ls.feature(types.NOTEBOOK_DOCUMENT_DID_SAVE)
    def did_save(ls: TclintServer, params: types.DidSaveNotebookDocumentParams) -> None:
        schedule(ls, params.notebook_document.uri, 0)

    @ls.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    async def did_close(ls: TclintServer, params: types.DidCloseNotebookDocumentParams) -> None:
        uri = params.notebook_document.uri
        handle = ls.timers.pop("nb:" + uri, None)
        if handle is not None:
            handle.cancel()
        for cell in params.cell_text_documents or []:
            ls.published.pop(cell.uri, None)
            ls.publish(cell.uri, None, "[]")
        path = uri_to_path(uri)
        if path is not None:
            root_path = await ls.run_job(lambda: ls.ws.close_doc(path), NORMAL)
            if root_path:
                ls.schedule_cross_file(root_path, 0.0)
