"""Helpers for driving the server with pytest-lsp."""

from __future__ import annotations

import asyncio
import os
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any, Union

from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

ROOT = Path(__file__).resolve().parents[2]
PROFILES = {
    "vscode": "visual-studio-code",
    "neovim-0.7": "neovim@0.7.0",
    "neovim-0.11": "neovim@0.11.0",
    "emacs": "emacs",
}
PULL_PROFILES = {"neovim-0.11"}

MODEL = textwrap.dedent(
    """\
    import torch
    import torch.nn as nn


    class Block(nn.Module):
        def __init__(self, dim: int = 8):
            super().__init__()
            self.lin = nn.Linear(dim, dim)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            h = self.lin(x)
            print("block", h.shape)
            s = h.mean().item()
            return h * s


    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.block = Block()

        def forward(self, x):
            return self.block(x)
    """
)
TRAIN = textwrap.dedent(
    """\
    import torch

    from pkg.model import Model

    model = torch.compile(Model())


    def main():
        x = torch.randn(2, 8)
        return model(x)
    """
)
PYPROJECT = '[project]\nname = "proj"\n\n[tool.tclint]\n'


def write_project(root: Path, files: dict[str, str] | None = None) -> Path:
    files = files or {
        "pkg/__init__.py": "",
        "pkg/model.py": MODEL,
        "train.py": TRAIN,
        "pyproject.toml": PYPROJECT,
    }
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def fix_client_decoder(client: LanguageClient) -> None:
    """lsprotocol 2025.0.0 decodes any object with a "command" key as a Command, losing a
    CodeAction's edit (recipes README, gotcha A): decide by the type of "command"."""
    conv = client.protocol._converter

    def _cmd_or_action(obj: Any, _: Any) -> Any:
        if isinstance(obj.get("command"), str):
            return conv.structure(obj, types.Command)
        return conv.structure(obj, types.CodeAction)

    conv.register_structure_hook(Union[types.Command, types.CodeAction], _cmd_or_action)  # noqa: UP007 - the exact hook key


async def start_client(
    profile: str,
    root: Path | str,
    init_options: Any = None,
    configuration: dict[str, Any] | None = None,
    folders: list[Path] | None = None,
    env: dict[str, str] | None = None,
    server_command: list[str] | None = None,
    capabilities: types.ClientCapabilities | None = None,
) -> LanguageClient:
    config = ClientServerConfig(
        server_command=server_command or [sys.executable, "-m", "tclint.server"],
        server_env={**os.environ, **(env or {})},
    )
    client = await config.start()
    fix_client_decoder(client)
    if configuration is not None:
        for scope, value in configuration.items():
            client.set_configuration(value, scope_uri=scope or None)
    root = Path(root)
    folders = folders or [root]
    client.init_result = await asyncio.wait_for(  # type: ignore[attr-defined]
        client.initialize_session(
            types.InitializeParams(
                capabilities=capabilities or client_capabilities(PROFILES.get(profile, profile)),
                root_uri=root.as_uri(),
                workspace_folders=[types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in folders],
                initialization_options=init_options,
            )
        ),
        60,
    )
    client._tclint_profile = profile  # type: ignore[attr-defined]
    return client


def open_doc(client: LanguageClient, path: Path, text: str | None = None, version: int = 1) -> str:
    uri = path.as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri,
                language_id="python",
                version=version,
                text=path.read_text() if text is None else text,
            )
        )
    )
    return uri


def change_doc(client: LanguageClient, uri: str, version: int, changes: list[Any]) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=changes,
        )
    )


def replace_range(sl: int, sc: int, el: int, ec: int, text: str) -> types.TextDocumentContentChangePartial:
    return types.TextDocumentContentChangePartial(
        range=types.Range(
            start=types.Position(line=sl, character=sc), end=types.Position(line=el, character=ec)
        ),
        text=text,
    )


def is_pull(client: LanguageClient) -> bool:
    return getattr(client, "_tclint_profile", "") in PULL_PROFILES


async def diagnostics(
    client: LanguageClient,
    uri: str,
    until: Callable[[list[types.Diagnostic]], bool] = lambda d: True,
    timeout: float = 30.0,
) -> list[types.Diagnostic]:
    """The diagnostics of ``uri`` once ``until`` holds: pulled for pull clients, else waited for."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    last: list[types.Diagnostic] = []
    while True:
        if is_pull(client):
            report = await asyncio.wait_for(
                client.text_document_diagnostic_async(
                    types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
                ),
                max(1.0, deadline - loop.time()),
            )
            last = list(getattr(report, "items", []) or [])
            if until(last):
                return last
            await asyncio.sleep(0.1)
        else:
            # register the waiter before looking (recipes README, gotcha B); never cancel it:
            # pytest-lsp would then fail setting its result
            waiter = asyncio.ensure_future(
                client.protocol.wait_for_notification_async(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
            )
            if uri in client.diagnostics:
                last = list(client.diagnostics[uri])
                if until(last):
                    return last
            await asyncio.wait({waiter}, timeout=max(0.05, deadline - loop.time()))
        if loop.time() > deadline:
            raise AssertionError(
                f"timed out waiting for diagnostics of {uri}; last: {[(d.code, d.range.start.line) for d in last]}"
            )


def codes(diags: list[types.Diagnostic]) -> list[tuple[str, int]]:
    return sorted((str(d.code), d.range.start.line + 1) for d in diags)


def apply_edits(text: str, edits: list[types.TextEdit]) -> str:
    """Apply LSP text edits (UTF-16 positions) to ``text``."""
    from tclint.server.positions import Lines

    lines = Lines.of(text)
    spans = []
    for e in edits:
        spans.append(
            (lines.lsp_offset(e.range.start, "utf-16"), lines.lsp_offset(e.range.end, "utf-16"), e.new_text)
        )
    for start, end, new in sorted(spans, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def edits_of(action: types.CodeAction, uri: str) -> list[types.TextEdit]:
    edit = action.edit
    assert edit is not None, action
    if edit.document_changes:
        out = []
        for change in edit.document_changes:
            if getattr(change, "text_document", None) is not None and change.text_document.uri == uri:
                out.extend(change.edits)
        return out
    return list((edit.changes or {}).get(uri, []))
