"""Pull diagnostics: ``textDocument/diagnostic`` and ``workspace/diagnostic``.

Registered only for clients that support pulling (see ``server``).  A document request answers
for the document's current version, linting it first if needed (pulling skips the debounce: the
client decides when it wants results).  ``resultId`` identifies a result, so a client asking again
with the same id gets an "unchanged" report.  The workspace request reports the project's files on
disk (open documents as their buffers) once the project is indexed.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from tclint.server.convert import path_to_uri
from tclint.server.documents import uri_to_path
from tclint.server.protocol import RawResult
from tclint.server.scheduler import NORMAL

if TYPE_CHECKING:
    from tclint.server.server import TclintServer

WORKSPACE_WAIT = 30.0  # seconds to wait for the index before answering with what is there


def register(ls: TclintServer) -> None:
    options = types.DiagnosticOptions(
        identifier="tclint", inter_file_dependencies=True, workspace_diagnostics=True
    )

    @ls.feature(types.TEXT_DOCUMENT_DIAGNOSTIC, options)
    async def document_diagnostic(ls: TclintServer, params: types.DocumentDiagnosticParams) -> Any:
        uri = params.text_document.uri
        doc = ls.docs.get(uri)
        if doc is not None:
            pub = await ls.current(uri)
            if pub is None:
                return {"kind": "full", "items": []}
        else:
            path = uri_to_path(uri)
            if (
                path is None
                or is_notebook(path)
                or not os.path.isfile(path)
                or not ls.editor_for_path(path).enable
            ):
                return {"kind": "full", "items": []}
            pub = await disk_report(ls, path, uri)
        # JSON text: hundreds of diagnostics through lsprotocol objects cost more than the lint
        if params.previous_result_id == pub.result_id:
            return {"kind": "unchanged", "resultId": pub.result_id}
        return RawResult(
            '{"kind":"full","resultId":' + json.dumps(pub.result_id) + ',"items":' + pub.body + "}"
        )

    @ls.feature(types.WORKSPACE_DIAGNOSTIC)
    async def workspace_diagnostic(ls: TclintServer, params: types.WorkspaceDiagnosticParams) -> Any:
        previous = {p.uri: p.value for p in params.previous_result_ids or []}
        deadline = asyncio.get_running_loop().time() + WORKSPACE_WAIT
        ls.wake_indexer()
        while await ls.run_job(ls.ws.index_pending, NORMAL):
            if asyncio.get_running_loop().time() > deadline:
                break
            await asyncio.sleep(0.1)
        paths = await ls.run_job(
            lambda: sorted({p for root in ls.ws.roots.values() for p in root.disk}), NORMAL
        )
        items: list[Any] = []
        open_paths = {d.path: d for d in ls.docs if d.path}
        for path in paths:
            if not ls.editor_for_path(path).enable or is_notebook(path):
                continue
            doc = open_paths.get(path)
            if doc is not None:
                pub = await ls.current(doc.uri)
                if pub is None:
                    continue
                uri, version = doc.uri, pub.version
            else:
                uri = path_to_uri(path)
                pub = await disk_report(ls, path, uri)
                version = None
            if not pub.lsp and uri not in previous:
                continue
            head = (
                '{"uri":'
                + json.dumps(uri)
                + ',"version":'
                + json.dumps(version)
                + ',"resultId":'
                + json.dumps(pub.result_id)
            )
            if previous.get(uri) == pub.result_id:
                items.append(head + ',"kind":"unchanged"}')
            else:
                items.append(head + ',"kind":"full","items":' + pub.body + "}")
        return RawResult('{"items":[' + ",".join(items) + "]}")


def is_notebook(path: str) -> bool:
    """A notebook's findings are positioned in its cells: they reach the cells of an open notebook
    (notebookDocument/*, per cell URI), never the lines of the .ipynb file's JSON text."""
    return path.endswith(".ipynb")


async def disk_report(ls: TclintServer, path: str, uri: str) -> Any:
    """Diagnostics of a file that is not open, converted (on the lint thread)."""
    ctx = ls.convert_context(ls.editor_for_path(path))

    def job() -> Any:
        out = ls.ws.disk_diagnostics(path)
        return ls.build_published(uri, out, ctx)

    return await ls.run_job(job, NORMAL)
